//! Mined field rows about text and the IME (issue 19 §2; `docs/field-bugs.md`, "Mined rows"):
//! a word-start `#` or `~` in typed text, which the device shell reads as a comment or the
//! home directory when the text reaches it unquoted (67). Each row replays the thread's inputs
//! through the connector's tools over the WebSocket and the direct transport to the simulated
//! phone, whose shell (`src/sim/sh`) parses the command line as mksh does — a word-start `#`
//! opens a comment, a leading `~/` becomes `$HOME/` — so an unquoted word would show in the
//! field (or the command log) as the thread shows it.

mod common;

use serde_json::{json, Value};

use common::procs::SimPhone;
use common::scenario::{claimed_sim, DirectSim};

fn log_len(sim: &SimPhone) -> usize {
    sim.state()["command_log"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0)
}

/// Every program run since `from` (argv[0] of each logged command).
fn programs_since(sim: &SimPhone, from: usize) -> Vec<String> {
    sim.state()["command_log"].as_array().unwrap()[from..]
        .iter()
        .map(|e| e["argv"][0].as_str().unwrap_or("").to_string())
        .collect()
}

/// The `input text` arguments run since `from`, in order.
fn typed_args_since(sim: &SimPhone, from: usize) -> Vec<String> {
    sim.state()["command_log"].as_array().unwrap()[from..]
        .iter()
        .filter(|e| e["argv"][0] == "input" && e["argv"][1] == "text")
        .map(|e| e["argv"][2].as_str().unwrap_or("").to_string())
        .collect()
}

/// A sim with the Notes field focused.
async fn notes(serial: &str) -> DirectSim {
    let mut b = claimed_sim(serial, &[]).await;
    common::scenario::focus_note(&mut b.x, &b.ch).await;
    b
}

/// Types `text` (clearing the field first) and asserts it was verified, the field holds exactly
/// `text`, and only the typing programs (and the reads that verify it) ran.
async fn typed_exactly(b: &mut DirectSim, text: &str, allowed: &[&str]) -> usize {
    let from = log_len(&b.sim);
    let ack: Value =
        b.x.tool(
            &b.ch,
            "android_input_text",
            json!({"text": text, "clear_first": true}),
        )
        .await;
    assert!(ack.get("error").is_none(), "{text:?}: {ack}");
    assert_eq!(
        ack["payload"]["result"]["verified"], true,
        "{text:?}: {ack}"
    );
    assert_eq!(b.sim.state()["note_text"], text, "{text:?}");
    let progs = programs_since(&b.sim, from);
    assert!(
        progs.iter().all(|p| allowed.contains(&p.as_str())),
        "{text:?}: only typing ran: {progs:?}"
    );
    from
}

/// What typing and its read back may run on the plain path.
const INPUT_PATH: &[&str] = &["input", "uiautomator", "dumpsys", "wm"];

/// What the device shell makes of the thread's inputs sent unquoted (mobile-mcp#447's table).
const MEASURED: &str =
    include_str!("fixtures/input/mobile-mcp-447-word-start-hash-tilde-EXCERPT.txt");

/// Row 67 (mobile-next/mobile-mcp#447): `#general` unquoted is a comment (`input text` runs
/// with no text), `~/shared/notes` gets the home directory; mid-word `#` is kept either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_67_word_start_hash_and_tilde_are_typed_exactly() {
    let mut b = notes("SIMFB67000001").await;
    for text in ["#general", "~/shared/notes", "hashtag #travel", "*#06#"] {
        assert!(
            MEASURED.contains(&format!("| `{text}` |")),
            "{text}: the thread's input"
        );
        let from = typed_exactly(&mut b, text, INPUT_PATH).await;
        // One argument per piece, never an empty one (`input text` with no text).
        let args = typed_args_since(&b.sim, from);
        assert!(!args.is_empty(), "{text:?}: typed with `input text`");
        assert!(args.iter().all(|a| !a.is_empty()), "{text:?}: {args:?}");
        assert_eq!(args.concat(), text, "{text:?}: the argv is the text");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_67_variants_other_words_lines_and_the_ime() {
    let mut b = notes("SIMFB67V00001").await;
    // Other word-start characters mksh reads (`~` alone, `!`, `-` as an option to `input`),
    // and `#`/`~` after a blank, where an unquoted word starts again.
    for text in ["~", "!#$ ~/x #y", "-d 1 text", "a ~/b #c", "~root/x"] {
        typed_exactly(&mut b, text, INPUT_PATH).await;
    }
    // The same characters at the start of a line (a line is typed as its own piece after an
    // Enter key press): each line's `#`/`~` still reaches the field.
    typed_exactly(&mut b, "first\n#second\n~/third", INPUT_PATH).await;
    // Through the IME path (non-ASCII text goes to ADBKeyboard as a broadcast extra): the
    // word-start characters inside the extra are kept too.
    assert_eq!(
        b.sim
            .control_post("/v1/state", json!({"adb_keyboard": true})),
        200
    );
    typed_exactly(
        &mut b,
        "#café ~/ñ !x",
        &[
            "input",
            "uiautomator",
            "dumpsys",
            "wm",
            "am",
            "ime",
            "settings",
        ],
    )
    .await;
}
