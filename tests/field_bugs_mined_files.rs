//! Mined field rows about files, installs and OEM builds (issue 19 §2; `docs/field-bugs.md`,
//! "Mined rows"): a push or pull whose path names a directory (69), ColorOS refusing adb's IME
//! listing (70), a maker's build refusing adb's settings writes (71). Each row replays what the
//! phone printed (fixtures under `tests/fixtures/{files,oem}/`, listed in `SOURCES.tsv`) through
//! the connector's tools over the WebSocket, behind Google adb 34 or the direct transport, to
//! the simulated phone; the variants replay the same kind elsewhere in the flow.

mod common;
#[path = "tools_support/mod.rs"]
mod tools_support;

use serde_json::{json, Value};

use common::procs::SimPhone;
use common::scenario::{adb_bench, claimed_sim, focus_note};
use common::xagent::XAgent;
use tools_support::{argvs, code, ok, upload};

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

fn set_state(sim: &SimPhone, patch: Value) {
    assert_eq!(sim.control_post("/v1/state", patch.clone()), 200, "{patch}");
}

/// A script that must be accepted: `command_regex` answers `stderr` with exit 255, `times`
/// times (a Java exception of a shell command, as the threads show).
fn refuse(sim: &SimPhone, command_regex: &str, stderr: &str, times: u32) {
    let body =
        json!({"command_regex": command_regex, "stderr": stderr, "exit_code": 255, "times": times});
    assert_eq!(sim.control_post("/v1/script", body), 200);
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

/// The pulled bytes of `path` (through the file's download URL).
async fn pulled(x: &mut XAgent, ch: &str, base: &str, path: &str) -> Vec<u8> {
    let ack = pull(x, ch, path).await;
    let url = ok(&ack)["download_url"].as_str().unwrap().to_string();
    let mut resp = tools_support::agent()
        .get(&format!("{base}{url}"))
        .call()
        .expect("download");
    resp.body_mut().read_to_vec().unwrap()
}

// ---- 69: a push or pull whose path names a directory ------------------------------------

/// adbd's line in the thread (`remote ` is adb's prefix), the fixture's one line.
const ONTO_DIRECTORY: &str =
    include_str!("fixtures/files/scrcpy-4876-adb-push-onto-directory-EXCERPT.txt");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_69_push_onto_a_directory_is_invalid_arguments() {
    let adbd = ONTO_DIRECTORY
        .split("remote ")
        .nth(1)
        .unwrap()
        .trim()
        .to_string();
    assert_eq!(adbd, "couldn't create file: Is a directory");
    let mut b = adb_bench("SIMFB69000001", &[]).await;
    let name = "书源校  验工具-v1.0.0 - 副本.zip";
    let r = upload(&b.conn, &b.ch, name, b"PK\x03\x04 zip bytes");
    let file = format!("/sdcard/Download/sub/{name}");
    ok(&push(&mut b.x, &b.ch, &r, &file).await);
    // The reported form: the directory itself, written `DIR/.` as adb did, or `DIR/`: refused
    // before anything is sent, never a file named after the directory.
    for path in [
        "/storage/emulated/0/Download/sub/.",
        "/sdcard/Download/sub/",
    ] {
        let ack = push(&mut b.x, &b.ch, &r, path).await;
        assert_eq!(code(&ack), "invalid_arguments", "{path}: {ack}");
        assert!(message(&ack).contains("full path of the file"), "{ack}");
    }
    // The directory's own name: the phone answers the thread's line; the caller's to fix.
    let ack = push(&mut b.x, &b.ch, &r, "/sdcard/Download/sub").await;
    assert_eq!(code(&ack), "invalid_arguments", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains(&adbd) && m.contains("/sdcard/Download/sub/NAME"),
        "{m}"
    );
    assert!(!m.contains("removed the partial file"), "{m}");
    // The file in it is untouched.
    let base = b.conn.base.clone();
    assert_eq!(
        pulled(&mut b.x, &b.ch, &base, &file).await,
        b"PK\x03\x04 zip bytes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_69_variants_pull_of_a_directory_and_a_file_as_a_parent() {
    let mut b = claimed_sim("SIMFB69V00001", &[]).await;
    let r = upload(&b.conn, &b.ch, "a.txt", b"alpha");
    ok(&push(&mut b.x, &b.ch, &r, "/sdcard/Download/box/a.txt").await);
    // A pull of the directory: adbd opens it and its read fails (`read failed: Is a
    // directory`), not a missing file.
    let ack = pull(&mut b.x, &b.ch, "/sdcard/Download/box").await;
    assert_eq!(code(&ack), "invalid_arguments", "{ack}");
    assert!(
        message(&ack).contains("read failed: Is a directory"),
        "{ack}"
    );
    let ack = pull(&mut b.x, &b.ch, "/sdcard/Download/box/").await;
    assert_eq!(code(&ack), "invalid_arguments", "{ack}");
    // A file used as a parent directory: ENOTDIR.
    let ack = push(&mut b.x, &b.ch, &r, "/sdcard/Download/box/a.txt/b.txt").await;
    assert_eq!(code(&ack), "invalid_arguments", "{ack}");
    assert!(message(&ack).contains("Not a directory"), "{ack}");
    // A missing file is still file_not_found.
    let ack = pull(&mut b.x, &b.ch, "/sdcard/Download/box/none.txt").await;
    assert_eq!(code(&ack), "file_not_found", "{ack}");
}

// ---- 70: ColorOS refuses adb's IME listing ----------------------------------------------

const COLOROS_IME: &str =
    include_str!("fixtures/oem/coloros-ime-list-securityexception-EXCERPT.txt");

/// A sim with ADBKeyboard installed and receiving, the Notes field focused.
async fn notes_with_keyboard(serial: &str) -> common::scenario::DirectSim {
    let mut b = claimed_sim(serial, &[]).await;
    set_state(
        &b.sim,
        json!({"adb_keyboard": true, "adb_keyboard_receives": true}),
    );
    focus_note(&mut b.x, &b.ch).await;
    b
}

fn assert_makers_switch(ack: &Value, permission: &str) {
    assert_eq!(code(ack), "device_permission_denied", "{ack}");
    let m = message(ack);
    assert!(m.contains(permission), "{m}");
    assert!(m.contains("Disable permission monitoring"), "{m}");
    assert!(m.contains("USB debugging (Security settings)"), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_70_coloros_ime_refusal_is_not_a_missing_keyboard() {
    let mut b = notes_with_keyboard("SIMFB70000001").await;
    refuse(&b.sim, "^ime list -a -s$", COLOROS_IME, 1);
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "バスケ"}))
            .await;
    assert_makers_switch(&ack, "WRITE_SECURE_SETTINGS");
    assert!(!message(&ack).contains("Install ADBKeyboard"), "{ack}");
    assert_eq!(b.sim.state()["note_text"], "");
    // The switch turned on (the refusal gone): the same call types.
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "バスケ"}))
            .await;
    ok(&ack);
    assert_eq!(b.sim.state()["note_text"], "バスケ");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_70_variants_enable_step_and_input_injection() {
    let mut b = notes_with_keyboard("SIMFB70V00001").await;
    // The same refusal on the enable step (the listing passes): nothing typed, keyboard kept.
    let ime_before = b.sim.state()["input_method"].clone();
    refuse(
        &b.sim,
        "^ime enable com.android.adbkeyboard/.AdbIME$",
        &COLOROS_IME.replace("executing 'ime'", "executing 'enable'"),
        1,
    );
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "バスケ"}))
            .await;
    assert_makers_switch(&ack, "WRITE_SECURE_SETTINGS");
    assert_eq!(b.sim.state()["note_text"], "");
    assert_eq!(b.sim.state()["input_method"], ime_before);
    // Input injection withheld (vivo OriginOS 4 / Android 14 wording, kkevsekk1/AutoX#1216;
    // OPPO and Honor print it too): every maker's switch, not only Xiaomi's.
    refuse(
        &b.sim,
        "^input tap ",
        "\nException occurred while executing 'tap':\njava.lang.SecurityException: Injecting input events requires the caller (or the source of the instrumentation, if any) to have the INJECT_EVENTS permission.\n\tat com.android.server.input.InputManagerService.injectInputEventToTarget(InputManagerService.java:1060)\n",
        1,
    );
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 100, "y": 200}))
            .await;
    assert_makers_switch(&ack, "INJECT_EVENTS");
    let taps = argvs(&b.sim)
        .iter()
        .filter(|a| a.join(" ") == "input tap 100 200")
        .count();
    assert_eq!(taps, 1, "one try, no retry loop");
}

// ---- 71: the maker's build refuses adb's settings writes --------------------------------

const SETTINGS_PUT: &str = include_str!("fixtures/oem/settings-put-securityexception-EXCERPT.txt");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_71_settings_write_refused_names_the_makers_switch() {
    let mut b = adb_bench("SIMFB71000001", &[]).await;
    refuse(
        &b.sim,
        "^settings put system accelerometer_rotation ",
        SETTINGS_PUT,
        1,
    );
    let ack =
        b.x.tool(
            &b.ch,
            "android_set_orientation",
            json!({"orientation": "landscape"}),
        )
        .await;
    assert_makers_switch(&ack, "WRITE_SECURE_SETTINGS");
    // Nothing after the refused step ran (`a && b`).
    assert!(
        !argvs(&b.sim)
            .iter()
            .any(|a| a.len() > 3 && a[0] == "settings" && a[1] == "put" && a[3] == "user_rotation"),
        "user_rotation was written after the refusal"
    );
    // With the switch on, the same call rotates.
    let ack =
        b.x.tool(
            &b.ch,
            "android_set_orientation",
            json!({"orientation": "landscape"}),
        )
        .await;
    assert_eq!(ok(&ack)["user_rotation"], 1, "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_71_variants_second_step_and_other_refusals() {
    let mut b = claimed_sim("SIMFB71V00001", &[]).await;
    // The second write refused (WRITE_SETTINGS, the system table's permission).
    refuse(
        &b.sim,
        "^settings put system user_rotation ",
        &SETTINGS_PUT.replace("WRITE_SECURE_SETTINGS", "WRITE_SETTINGS"),
        1,
    );
    let ack =
        b.x.tool(
            &b.ch,
            "android_set_orientation",
            json!({"orientation": "portrait"}),
        )
        .await;
    assert_makers_switch(&ack, "WRITE_SETTINGS");
    // A refusal naming no permission adb's shell holds is not blamed on the maker's switch.
    refuse(
        &b.sim,
        "^settings put system accelerometer_rotation ",
        "Exception occurred while executing 'put':\njava.lang.SecurityException: Not allowed to change the rotation while a device policy locks it\n",
        1,
    );
    let ack =
        b.x.tool(
            &b.ch,
            "android_set_orientation",
            json!({"orientation": "auto"}),
        )
        .await;
    assert_eq!(code(&ack), "device_permission_denied", "{ack}");
    assert!(
        !message(&ack).contains("Disable permission monitoring"),
        "{ack}"
    );
}
