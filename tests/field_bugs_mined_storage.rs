//! Mined field rows about files and storage (issue 19 §2; `docs/field-bugs.md`, "Mined rows"):
//! shared storage not mounted yet, so `/sdcard` leads nowhere and adbd answers a push or a pull
//! with the words of a missing file (68); file names the device shell would read, and a path that
//! kept a line end (72). Row 68 replays the thread's state on the simulated
//! phone (`shared_storage` of the control API: `sm list-volumes` prints the volume's state and
//! `/storage/emulated/0` is gone while it is not mounted, as vold leaves it) behind Google
//! adb 34, through the connector's tools over the WebSocket; the variants replay the same kind
//! on Android 6's volume layout, elsewhere in the flow, and the states that must keep their own
//! answers. Row 72 pushes and pulls the threads' names through Google adb 34.

mod common;
#[path = "tools_support/mod.rs"]
mod tools_support;

use serde_json::{json, Value};

use common::procs::SimPhone;
use common::scenario::adb_bench;
use common::xagent::XAgent;
use tools_support::{code, ok, upload};

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

fn set_state(sim: &SimPhone, patch: Value) {
    assert_eq!(sim.control_post("/v1/state", patch.clone()), 200, "{patch}");
}

async fn push(x: &mut XAgent, ch: &str, file_ref: &str, path: &str) -> Value {
    x.tool(
        ch,
        "android_file_push",
        json!({"file_ref": file_ref, "path": path}),
    )
    .await
}

async fn pull(x: &mut XAgent, ch: &str, path: &str) -> Value {
    x.tool(ch, "android_file_pull", json!({"path": path})).await
}

/// The thread's line (ReactiveCircus/android-emulator-runner#102): what the phone's own tool
/// printed writing into shared storage while it was not there.
const NOT_THERE: &str =
    include_str!("fixtures/files/emulator-runner-102-storage-emulated-0-missing-EXCERPT.txt");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_68_unmounted_shared_storage_is_device_booting_not_a_missing_file() {
    assert!(NOT_THERE.contains("/storage/emulated/0/capture.mpg': No such file or directory"));
    let mut b = adb_bench("SIMFB68000001", &[]).await;
    let r = upload(&b.conn, &b.ch, "before.txt", b"kept while unmounted");
    ok(&push(&mut b.x, &b.ch, &r, "/sdcard/Download/before.txt").await);
    // The phone has just rebooted (or not been unlocked since): the volume is not mounted.
    set_state(&b.sim, json!({"shared_storage": "unmounted"}));
    // The phone's own tools see what the thread saw.
    let out = b.adb.run(&[
        "-s",
        &b.sim.addr,
        "shell",
        "screenrecord --time-limit 1 /storage/emulated/0/capture.mpg",
    ]);
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.contains("Unable to open '/storage/emulated/0/capture.mpg': No such file or directory"),
        "{out}"
    );
    let r = upload(&b.conn, &b.ch, "capture.mp4", b"\x00\x00\x00\x18ftypmp42");
    let ack = push(&mut b.x, &b.ch, &r, "/storage/emulated/0/DCIM/capture.mp4").await;
    assert_eq!(code(&ack), "device_booting", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("not mounted") && m.contains("emulated;0 unmounted"),
        "names the volume's state: {m}"
    );
    assert!(m.contains("unlock") && m.contains("retry"), "the fix: {m}");
    assert!(!m.contains("SIMFB68000001"), "no serial: {m}");
    // A pull of a file that is there once mounted: not `file_not_found`.
    let ack = pull(&mut b.x, &b.ch, "/sdcard/Download/before.txt").await;
    assert_eq!(code(&ack), "device_booting", "{ack}");
    assert!(message(&ack).contains("cannot be read yet"), "{ack}");
    // Mounted again: the same calls work, the file kept.
    set_state(&b.sim, json!({"shared_storage": "mounted"}));
    ok(&push(&mut b.x, &b.ch, &r, "/storage/emulated/0/DCIM/capture.mp4").await);
    let ack = pull(&mut b.x, &b.ch, "/sdcard/Download/before.txt").await;
    assert_eq!(ok(&ack)["byte_size"], 20, "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_68_variants_android6_layout_other_states_and_a_missing_file() {
    // Android 6–10's single `emulated` volume, `checking` while vold checks it.
    let mut b = adb_bench("SIMFB68V00001", &["--persona", "legacy-android6"]).await;
    set_state(&b.sim, json!({"shared_storage": "checking"}));
    let r = upload(&b.conn, &b.ch, "a.txt", b"a");
    let ack = push(&mut b.x, &b.ch, &r, "/mnt/sdcard/Download/a.txt").await;
    assert_eq!(code(&ack), "device_booting", "{ack}");
    assert!(message(&ack).contains("`emulated checking`"), "{ack}");
    // Mounted read-only is mounted: a missing file there stays a missing file.
    set_state(&b.sim, json!({"shared_storage": "mounted_ro"}));
    let ack = pull(&mut b.x, &b.ch, "/sdcard/Download/never-written.txt").await;
    assert_eq!(code(&ack), "file_not_found", "{ack}");
    drop(b);

    // Android 14, mounted: a missing file is `file_not_found`, a missing folder is created by
    // the push; after an `ejecting` (the volume going away) both refuse with the state named.
    let mut b = adb_bench("SIMFB68V00002", &[]).await;
    let ack = pull(&mut b.x, &b.ch, "/sdcard/Download/never-written.txt").await;
    assert_eq!(code(&ack), "file_not_found", "{ack}");
    let r = upload(&b.conn, &b.ch, "n.txt", b"new folder");
    ok(&push(&mut b.x, &b.ch, &r, "/sdcard/Download/new/folder/n.txt").await);
    set_state(&b.sim, json!({"shared_storage": "ejecting"}));
    let ack = pull(&mut b.x, &b.ch, "/sdcard/Download/new/folder/n.txt").await;
    assert_eq!(code(&ack), "device_booting", "{ack}");
    assert!(message(&ack).contains("`emulated;0 ejecting`"), "{ack}");
    // The phone cannot say (its `sm` refused): the refusal keeps its own answer.
    assert_eq!(
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^sm list-volumes", "stderr": "Error: java.lang.SecurityException\n", "exit_code": 1, "times": 1})
        ),
        200
    );
    let ack = pull(&mut b.x, &b.ch, "/sdcard/Download/new/folder/n.txt").await;
    assert_eq!(code(&ack), "file_not_found", "{ack}");
}

// ---- 72: file names the device shell would read, and a line end kept in a path ----------

/// What the device shell said of a hand-quoted `Rick's hair.hat` (Lauriethefish/QuestPatcher#31).
const NO_CLOSING_QUOTE: &str =
    include_str!("fixtures/files/questpatcher-31-apostrophe-name-no-closing-quote-EXCERPT.txt");
/// A pull of a path that kept its line end (quamotion/madb#211).
const LINE_END_KEPT: &str =
    include_str!("fixtures/files/madb-211-pull-path-with-line-end-EXCERPT.txt");

/// The device shell's complaints and programs that must never show after a file call.
fn shell_was_clean(sim: &SimPhone, from: usize) {
    let log = sim.state()["command_log"].as_array().unwrap()[from..].to_vec();
    for e in &log {
        let p = e["argv"][0].as_str().unwrap_or("");
        assert!(
            !["reboot", "id", "rm"].contains(&p),
            "a name ran as a command: {log:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_72_shell_special_file_names_round_trip() {
    assert!(NO_CLOSING_QUOTE.contains("/system/bin/sh: no closing quote"));
    let mut b = adb_bench("SIMFB72000001", &[]).await;
    let base = format!("http://{}", b.conn.addr);
    // The threads' names: an apostrophe (media indexed: a shell step with the path), a `$`,
    // a backtick, spaces and parentheses.
    for (path, bytes) in [
        ("/sdcard/Pictures/Rick's hair.png", &b"\x89PNG rick"[..]),
        ("/sdcard/Download/MyFile$.txt", b"dollar"),
        ("/sdcard/Download/E`kzamen", b"backtick"),
        ("/sdcard/Download/Check-in confirmation.pdf", b"%PDF-1.4 a"),
        ("/sdcard/Download/preview (1).pdf", b"%PDF-1.4 b"),
    ] {
        let from = b.sim.state()["command_log"].as_array().unwrap().len();
        let name = path.rsplit('/').next().unwrap();
        let r = upload(&b.conn, &b.ch, name, bytes);
        let ack = ok(&push(&mut b.x, &b.ch, &r, path).await);
        if path.contains("/Pictures/") {
            assert_eq!(ack["media_indexed"], true, "{path}: {ack}");
        }
        let pulled = ok(&pull(&mut b.x, &b.ch, path).await);
        let url = pulled["download_url"].as_str().unwrap().to_string();
        let mut resp = tools_support::agent()
            .get(&format!("{base}{url}"))
            .call()
            .expect("download");
        assert_eq!(resp.body_mut().read_to_vec().unwrap(), bytes, "{path}");
        shell_was_clean(&b.sim, from);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_72_variants_injection_names_and_line_ends() {
    let mut b = adb_bench("SIMFB72V00001", &[]).await;
    // Names that would run commands if any step read them unquoted, pushed into a media folder
    // (indexed through the shell) and pulled back.
    for path in [
        "/sdcard/Pictures/$(reboot).png",
        "/sdcard/DCIM/a\"b'c;id.jpg",
        "/sdcard/Pictures/`rm -r x` 100%s.png",
    ] {
        let from = b.sim.state()["command_log"].as_array().unwrap().len();
        let r = upload(&b.conn, &b.ch, "x.png", b"\x89PNG x");
        let ack = ok(&push(&mut b.x, &b.ch, &r, path).await);
        assert_eq!(ack["media_indexed"], true, "{path}: {ack}");
        assert_eq!(ok(&pull(&mut b.x, &b.ch, path).await)["byte_size"], 6);
        shell_was_clean(&b.sim, from);
    }
    // The thread's path with the line end it kept (and a CRLF): refused before anything is
    // sent, naming the line end and the fix — not the path, not a missing file.
    let kept = LINE_END_KEPT
        .split("Failed to pull '")
        .nth(1)
        .and_then(|r| r.split("'.").next())
        .unwrap();
    assert!(kept.ends_with('\n'), "{kept:?}");
    let name = kept.trim_end().rsplit('/').next().unwrap();
    for path in [
        format!("/sdcard/Download/{name}\n"),
        format!("/sdcard/Download/{name}\r\n"),
    ] {
        let ack = pull(&mut b.x, &b.ch, &path).await;
        assert_eq!(code(&ack), "policy_denied", "{ack}");
        let m = message(&ack);
        assert!(m.contains("line end") && m.contains("strip it"), "{m}");
        assert!(!m.contains("base.apk"), "never the path: {m}");
    }
    // A line feed inside a name is named with its place.
    let ack = pull(&mut b.x, &b.ch, "/sdcard/Download/a\nb.txt").await;
    assert_eq!(code(&ack), "policy_denied", "{ack}");
    assert!(
        message(&ack).contains("line feed (U+000A) at byte 18"),
        "{ack}"
    );
}
