//! Mined field rows about the UI tree and typing (issue 19 §2; `docs/field-bugs.md`, "Mined
//! rows"): a `uiautomator dump` killed while it wrote the tree (62), `input text` crashing on
//! the phone's key map (63). Each row replays what the phone printed (the fixtures under
//! `tests/fixtures/`, as sim scripts) and drives the connector's tools over the WebSocket
//! through the direct transport to the simulated phone; the variants replay the same kind with
//! another signal, Android release or place in the flow.

mod common;

use serde_json::{json, Value};

use common::procs::SimPhone;
use common::scenario::claimed_sim;

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

fn log_len(sim: &SimPhone) -> usize {
    sim.state()["command_log"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0)
}

/// Programs run since `from` but the geometry reads beside a dump (which are no retries).
fn dumps_since(sim: &SimPhone, from: usize) -> usize {
    sim.state()["command_log"].as_array().unwrap()[from..]
        .iter()
        .filter(|e| {
            let program = e["argv"][0].as_str().unwrap_or("");
            program != "dumpsys" && program != "wm"
        })
        .count()
}

fn delete_scripts(sim: &SimPhone) {
    let url = format!("{}/v1/script", sim.control.clone().expect("control"));
    ureq::delete(&url).call().expect("delete scripts");
}

/// A script that must be accepted.
fn script(sim: &SimPhone, body: Value) {
    assert_eq!(sim.control_post("/v1/script", body.clone()), 200, "{body}");
}

/// Row 62 (dtmilano/AndroidViewClient#140, Sony Z1, Android 5.0.2): the dump is cut off in
/// the middle of a node and the shell reports `Killed` (exit 137). The kill is the cause: the
/// answer is `reason: killed` naming exit 137, not retried, never a malformed-XML parse error.
const CUT_OFF: &str = include_str!("fixtures/uiautomator/sony-z1-lollipop-dump-cut-off-killed.txt");

/// The fixture's XML part (what went to stdout before the kill).
fn cut_off_xml() -> &'static str {
    CUT_OFF
        .strip_suffix("Killed\n")
        .expect("fixture ends with Killed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_62_dump_killed_mid_tree_is_killed_not_malformed() {
    let mut b = claimed_sim("SIMFB62000001", &[]).await;
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump( |$)", "stdout": cut_off_xml(), "stderr": "Killed\n", "exit_code": 137, "times": 4}),
    );
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("reason: killed") && m.contains("exit 137"),
        "{m}"
    );
    assert!(!m.contains("malformed"), "{m}");
    assert!(m.contains("Killed"), "the shell's word is quoted: {m}");
    assert_eq!(dumps_since(&b.sim, from), 1, "not retried: {m}");
    delete_scripts(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(
        ack.get("error").is_none(),
        "the next call works again: {ack}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_62_variants_other_signals_and_streams() {
    let mut b = claimed_sim("SIMFB62V00001", &[]).await;
    let xml = cut_off_xml();
    // Cut at another place (inside the prolog's hierarchy, after a whole node).
    let after_first_node = &xml[..xml.find("<node index=\"1\"").unwrap()];
    for (stdout, stderr, exit_code) in [
        // `Killed` merged into stdout after the cut (legacy shell / pty).
        (format!("{xml}\nKilled\n"), String::new(), 137),
        // SIGTERM (an OEM watchdog), no message.
        (after_first_node.to_string(), String::new(), 143),
        // Crashed dumper: SIGSEGV mid-tree.
        (
            xml[..200].to_string(),
            "Segmentation fault\n".to_string(),
            139,
        ),
    ] {
        script(
            &b.sim,
            json!({"command_regex": "^uiautomator dump( |$)", "stdout": stdout, "stderr": stderr, "exit_code": exit_code, "times": 4}),
        );
        let from = log_len(&b.sim);
        let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
        assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
        let m = message(&ack);
        assert!(m.contains("reason: killed"), "{exit_code}: {m}");
        assert!(m.contains(&format!("exit {exit_code}")), "{exit_code}: {m}");
        assert!(
            !m.contains("<node"),
            "{exit_code}: no XML in the message: {m}"
        );
        assert_eq!(
            dumps_since(&b.sim, from),
            1,
            "{exit_code}: not retried: {m}"
        );
        delete_scripts(&b.sim);
    }
    // A cut-off tree with no kill (exit 0) is still a transient malformed answer: retried.
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump( |$)", "stdout": xml, "times": 1}),
    );
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(
        ack.get("error").is_none(),
        "retried after one cut-off dump: {ack}"
    );
    assert_eq!(dumps_since(&b.sim, from), 2);
}

// ---- row 63: `input text` crashes on the phone's key map ----

/// What `input text "app agent test"` printed on an emulator (TencentQQGYLab/AppAgent#34).
const INPUT_TEXT_NPE: &str = include_str!("fixtures/input/emulator-input-text-npe-null-array.txt");

fn set_state(sim: &SimPhone, patch: Value) {
    assert_eq!(sim.control_post("/v1/state", patch.clone()), 200, "{patch}");
}

/// Whether any ADBKeyboard broadcast ran since `from`.
fn broadcasts_since(sim: &SimPhone, from: usize) -> usize {
    sim.state()["command_log"].as_array().unwrap()[from..]
        .iter()
        .filter(|e| e["argv"][0] == "am" && e["argv"][1] == "broadcast")
        .count()
}

/// A sim with the Notes field focused, ADBKeyboard installed or not.
async fn notes(serial: &str, keyboard: bool) -> common::scenario::DirectSim {
    let mut b = claimed_sim(serial, &[]).await;
    set_state(&b.sim, json!({"adb_keyboard": keyboard}));
    common::scenario::focus_note(&mut b.x, &b.ch).await;
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_63_input_text_keymap_crash_falls_back_to_the_ime() {
    let mut b = notes("SIMFB63000001", true).await;
    // The first `input text` crashes as on the emulator; nothing of it was typed.
    script(
        &b.sim,
        json!({"command_regex": "^input text( |$)", "stderr": INPUT_TEXT_NPE, "exit_code": 255, "times": 1}),
    );
    let from = log_len(&b.sim);
    let ack =
        b.x.tool(
            &b.ch,
            "android_input_text",
            json!({"text": "app agent test"}),
        )
        .await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(ack["payload"]["result"]["verified"], true, "{ack}");
    assert_eq!(b.sim.state()["note_text"], "app agent test");
    assert!(broadcasts_since(&b.sim, from) > 0, "typed through the IME");
    let ime = b.sim.state()["input_method"].clone();
    assert_ne!(ime, "com.android.adbkeyboard/.AdbIME", "restored: {ime}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_63_variants_no_keyboard_older_input_and_a_later_piece() {
    // No ADBKeyboard: a typed error naming the crash and the fix, never device_command_failed.
    let mut b = notes("SIMFB63V00001", false).await;
    script(
        &b.sim,
        json!({"command_regex": "^input text( |$)", "stderr": INPUT_TEXT_NPE, "exit_code": 255, "times": 1}),
    );
    let ack =
        b.x.tool(
            &b.ch,
            "android_input_text",
            json!({"text": "app agent test"}),
        )
        .await;
    assert_eq!(ack["error"]["code"], "unsupported_text", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("NullPointerException") && m.contains("Install ADBKeyboard"),
        "{m}"
    );
    assert!(!m.contains("device policy"), "{m}");
    assert_eq!(b.sim.state()["note_text"], "");
    delete_scripts(&b.sim);

    // The older `input` (app_process `com.android.commands.input.Input`, Android ≤ 9): a bare
    // NPE in `sendText`, exit 0 *(reconstructed from AOSP `cmds/input/.../Input.java`)*.
    set_state(&b.sim, json!({"adb_keyboard": true}));
    script(
        &b.sim,
        json!({"command_regex": "^input text( |$)", "stderr": "Exception in thread \"main\" java.lang.NullPointerException\n\tat com.android.commands.input.Input.sendText(Input.java:174)\n\tat com.android.commands.input.Input.run(Input.java:93)\n\tat com.android.commands.input.Input.main(Input.java:71)\n", "times": 1}),
    );
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "hello"}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(b.sim.state()["note_text"], "hello");
    delete_scripts(&b.sim);

    // The crash on a later piece (`%s` is typed in two pieces, the first already typed): not retyped (nothing doubled), a
    // typed error saying part was typed.
    script(
        &b.sim,
        json!({"command_regex": "^input text .*second", "stderr": INPUT_TEXT_NPE, "exit_code": 255, "times": 1}),
    );
    let from = log_len(&b.sim);
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "50%second"}))
            .await;
    assert_eq!(ack["error"]["code"], "unsupported_text", "{ack}");
    assert!(message(&ack).contains("part of the text"), "{ack}");
    assert_eq!(broadcasts_since(&b.sim, from), 0, "not retyped");
}
