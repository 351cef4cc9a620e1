//! One test per row of the field-bug list (`docs/field-bugs.md` maps rows to tests): the
//! simulated phone replays the real behaviour (its programs or its control API), the connector's
//! tools must behave as expected, and for injection rows the phone's command log shows that no
//! extra command ran.

mod common;

use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{run_cli, ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::{
    adb_bench, claim_when_visible, claimed_sim, elements, find_text, sims_behind_adb34, DirectSim,
};
use common::xagent::{connect, XAgent};

/// [`claimed_sim`] of a sim playing `persona` (`--persona`, with `--model ""` so the persona's own
/// model name is reported).
async fn claimed_sim_playing(serial: &str, persona: &str) -> DirectSim {
    claimed_sim(serial, &["--persona", persona, "--model", ""]).await
}

/// `tool_id` invoked with `{"package": "com.example.notes"}` (the sim's Notes app); the ack.
async fn tool_on_notes(b: &mut DirectSim, tool_id: &str) -> Value {
    b.x.tool(&b.ch, tool_id, json!({"package": "com.example.notes"}))
        .await
}

/// The captured frame's `(width, height)` in pixels from an `android_screenshot` result.
fn frame_size(result: &Value) -> (Option<u64>, Option<u64>) {
    (result["width"].as_u64(), result["height"].as_u64())
}

/// The chosen display's `(width, height)` in pixels from an `android_screenshot` result.
fn display_size(result: &Value) -> (Option<u64>, Option<u64>) {
    (
        result["display"]["width"].as_u64(),
        result["display"]["height"].as_u64(),
    )
}

/// Opens Notes and focuses its EditText through the tools.
async fn focus_note(b: &mut DirectSim) {
    common::scenario::focus_note(&mut b.x, &b.ch).await;
}

fn log_len(sim: &SimPhone) -> usize {
    sim.state()["command_log"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0)
}

/// Programs run since `from`.
fn programs_since(sim: &SimPhone, from: usize) -> Vec<String> {
    all_programs_since(sim, from)
        .into_iter()
        // The display geometry read alongside a UI dump (field bug 25) is not a retry, nor the
        // crash buffer read after a silent SIGKILL of the dump (field bug 66).
        .filter(|p| p != "dumpsys" && p != "wm" && p != "date" && p != "logcat")
        .collect()
}

/// Every program run since `from`, the geometry reads included.
fn all_programs_since(sim: &SimPhone, from: usize) -> Vec<String> {
    sim.state()["command_log"].as_array().unwrap()[from..]
        .iter()
        .map(|e| e["argv"][0].as_str().unwrap_or("").to_string())
        .collect()
}

/// `android_input_text` of `text` into the focused field (cleared first); the ack.
async fn type_and_read(b: &mut DirectSim, text: &str) -> Value {
    b.x.tool(
        &b.ch,
        "android_input_text",
        json!({"text": text, "clear_first": true}),
    )
    .await
}

/// Types `text` with [`type_and_read`] and asserts it succeeded, verified, and that the field
/// now holds exactly `text`.
async fn type_expecting_verified(b: &mut DirectSim, text: &str) {
    let ack = type_and_read(b, text).await;
    assert!(ack.get("error").is_none(), "{text:?}: {ack}");
    assert_eq!(
        ack["payload"]["result"]["verified"], true,
        "{text:?}: {ack}"
    );
    assert_eq!(b.sim.state()["note_text"], text, "{text:?}");
}

/// Asserts that since the command log's entry `from` the phone ran only `input` (and the UI
/// dumps that verify the typing) while `text` was typed: no part of it ran as a command.
fn assert_only_input_ran_since(sim: &SimPhone, from: usize, text: &str) {
    let progs = programs_since(sim, from);
    assert!(
        progs.iter().all(|p| p == "input" || p == "uiautomator"),
        "{text:?}: only input ran: {progs:?}"
    );
}

/// Types `typed` (not clearing) into a field that shows `present` while the phone drops the
/// text (a script the caller set): asserts the call succeeded but is not verified (the field
/// still shows `present`, which may already end in `typed`).
async fn type_expecting_unverified(b: &mut DirectSim, present: &str, typed: &str) {
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": typed}))
            .await;
    assert!(ack.get("error").is_none(), "{typed:?}: {ack}");
    assert_eq!(
        ack["payload"]["result"]["verified"], false,
        "{present:?}+{typed:?}: {ack}"
    );
    assert_eq!(b.sim.state()["note_text"], present);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_01_text_with_shell_metacharacters_is_typed_exactly() {
    let mut b = claimed_sim("SIMFB01000001", &[]).await;
    focus_note(&mut b).await;
    for text in [
        "a$a",
        "#",
        "x`id`y",
        "a;reboot",
        "it's \"q\" & r",
        "$(reboot) || id",
    ] {
        let before = log_len(&b.sim);
        type_expecting_verified(&mut b, text).await;
        assert_only_input_ran_since(&b.sim, before, text);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_02_percent_s_is_typed_literally() {
    let mut b = claimed_sim("SIMFB02000001", &[]).await;
    focus_note(&mut b).await;
    for text in ["Some%sText%s!", "100%sure", "%s", "%%s"] {
        type_expecting_verified(&mut b, text).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_03_newline_is_enter_never_a_command() {
    let mut b = claimed_sim("SIMFB03000001", &[]).await;
    focus_note(&mut b).await;
    for text in ["line1\nline2", "a\n;reboot"] {
        let before = log_len(&b.sim);
        let ack = type_and_read(&mut b, text).await;
        assert_eq!(ack["payload"]["result"]["verified"], true, "{ack}");
        assert_eq!(b.sim.state()["note_text"], text);
        assert!(!programs_since(&b.sim, before)
            .iter()
            .any(|p| p == "reboot" || p.starts_with(';')));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_04_non_ascii_goes_through_the_ime_or_fails_with_the_fix() {
    let mut b = claimed_sim("SIMFB04000001", &[]).await;
    focus_note(&mut b).await;
    let ack = type_and_read(&mut b, "שלום!").await;
    assert_eq!(ack["error"]["code"], "unsupported_text", "{ack}");
    assert!(ack["error"]["message"]
        .as_str()
        .unwrap()
        .contains("ADBKeyboard"));
    assert_eq!(
        b.sim
            .control_post("/v1/state", json!({"adb_keyboard": true})),
        200
    );
    let ime_before = b.sim.state()["input_method"].clone();
    for text in ["שלום!", "Тест", "😸 Cat"] {
        let ack = type_and_read(&mut b, text).await;
        assert!(ack.get("error").is_none(), "{ack}");
        assert_eq!(ack["payload"]["result"]["method"], "ime_broadcast");
        assert_eq!(ack["payload"]["result"]["verified"], true, "{ack}");
        assert_eq!(b.sim.state()["note_text"], text);
    }
    assert_eq!(
        b.sim.state()["input_method"],
        ime_before,
        "the previous IME is restored"
    );
}

/// Each reason `android_input_text` refuses text has its own message (fresh-user finding 7: a tab
/// or a NUL was refused as "printable ASCII only (non-ASCII …)", though both are ASCII): a control
/// character is named by code point, with the key that does it, IME or not, and nothing is typed;
/// non-ASCII without an IME names the first non-ASCII character.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_refusal_of_input_text_names_its_own_reason() {
    let mut b = claimed_sim("SIMFB07CTRL001", &[]).await;
    focus_note(&mut b).await;
    let typed = |sim: &SimPhone| {
        sim.state()["command_log"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["argv"][0] == "input" && e["argv"][1] == "text" || e["argv"][0] == "am")
            .count()
    };
    for ime in [false, true] {
        b.sim
            .control_post("/v1/state", json!({"adb_keyboard": ime}));
        let before = typed(&b.sim);
        for (text, named) in [
            ("tab\there", "U+0009 (tab)"),
            ("\u{0000}nul", "U+0000 (NUL)"),
            ("a\rb", "U+000D (carriage return)"),
            ("bell\u{7}", "U+0007"),
        ] {
            let ack = type_and_read(&mut b, text).await;
            assert_eq!(ack["error"]["code"], "unsupported_text", "{ack}");
            let m = ack["error"]["message"].as_str().unwrap();
            assert!(
                m.contains(&format!("control character {named}")) && !m.contains("non-ASCII"),
                "ime {ime}: {m}"
            );
        }
        let m = type_and_read(&mut b, "tab\there").await["error"]["message"].clone();
        assert!(
            m.as_str()
                .unwrap()
                .contains(r#"android_press_key {"key": "tab"}"#),
            "{m}"
        );
        assert_eq!(typed(&b.sim), before, "ime {ime}: something was typed");
    }
    b.sim
        .control_post("/v1/state", json!({"adb_keyboard": false}));
    let ack = type_and_read(&mut b, "café").await;
    assert_eq!(ack["error"]["code"], "unsupported_text", "{ack}");
    let m = ack["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("non-ASCII character U+00E9") && m.contains("ADBKeyboard"),
        "{m}"
    );
    // Line breaks are not control characters to refuse.
    let ack = type_and_read(&mut b, "one\r\ntwo").await;
    assert_eq!(ack["payload"]["result"]["verified"], true, "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_05_quotes_in_the_ime_payload() {
    let mut b = claimed_sim("SIMFB05000001", &[]).await;
    b.sim
        .control_post("/v1/state", json!({"adb_keyboard": true}));
    focus_note(&mut b).await;
    let text = "中文'输入\"test";
    let ack = type_and_read(&mut b, text).await;
    assert_eq!(ack["payload"]["result"]["verified"], true, "{ack}");
    assert_eq!(b.sim.state()["note_text"], text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_06_crlf_mangled_png_is_refused_not_stored() {
    let mut b = claimed_sim("SIMFB06000001", &[]).await;
    let png = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/screencap/phone-720x1612-files-app-srgb-sbit.png"
    ))
    .unwrap();
    let mut mangled = Vec::new();
    for byte in png {
        if byte == b'\n' {
            mangled.push(b'\r');
        }
        mangled.push(byte);
    }
    let b64 = base64::engine::general_purpose::STANDARD.encode(&mangled);
    assert_eq!(
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "screencap", "stdout_base64": b64})
        ),
        200
    );
    let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert_eq!(ack["error"]["code"], "invalid_screenshot", "{ack}");
    assert!(ack["payload"].get("result").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_08_flag_secure_frame_is_flagged() {
    let mut b = claimed_sim("SIMFB08000001", &[]).await;
    assert_eq!(
        b.sim
            .control_post("/v1/state", json!({"secure_window": true})),
        200
    );
    let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    let r = &ack["payload"]["result"];
    assert_eq!(r["blank"], true, "{ack}");
    assert_eq!(r["secure_window"], true, "{ack}");
    assert!(r["hint"].as_str().unwrap().contains("android_ui_tree"));
    b.sim
        .control_post("/v1/state", json!({"secure_window": false}));
    let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert_eq!(ack["payload"]["result"]["blank"], false);
    assert_eq!(ack["payload"]["result"]["secure_window"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_09_not_idle_is_a_typed_error_never_an_empty_tree() {
    let mut b = claimed_sim("SIMFB09000001", &[]).await;
    b.sim.control_post("/v1/script", json!({"command_regex": "uiautomator", "stdout": "ERROR: could not get idle state.\n", "exit_code": 0}));
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    assert!(ack["error"]["message"]
        .as_str()
        .unwrap()
        .contains("not_idle"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_10_null_root_three_times_then_success() {
    let mut b = claimed_sim("SIMFB10000001", &[]).await;
    b.sim.control_post("/v1/script", json!({"command_regex": "uiautomator", "stdout": "ERROR: null root node returned by UiTestAutomationBridge.\n", "times": 3}));
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert!(find_text(&elements(&ack), "Notes").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_11_two_phones_every_call_reaches_the_bound_one() {
    let a = SimPhone::start_with_control("SIMFB11AAAAA1", &[]);
    let bsim = SimPhone::start_with_control("SIMFB11BBBBB2", &[]);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&a.addr);
    adb.connect(&bsim.addr);
    let dir = TempDir::new("fb11");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let ack = claim_when_visible(&mut x, &ch, &bsim.serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let a_before = log_len(&a);
    for tool in [
        ("android_tap", json!({"x": 5, "y": 5})),
        ("android_press_key", json!({"key": "home"})),
        ("android_device_status", json!({})),
    ] {
        let ack = x.tool(&ch, tool.0, tool.1).await;
        assert!(ack.get("error").is_none(), "{ack}");
    }
    assert_eq!(bsim.count_runs(&["input", "tap", "5", "5"]), 1);
    let a_progs = all_programs_since(&a, a_before);
    assert!(
        !a_progs.iter().any(|p| p == "input"),
        "phone A untouched: {a_progs:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_14_tap_read_off_a_downscaled_screenshot_lands_right() {
    let mut b = claimed_sim("SIMFB14000001", &[]).await;
    let shot =
        b.x.tool(&b.ch, "android_screenshot", json!({"max_dimension": 1200}))
            .await;
    let r = &shot["payload"]["result"];
    assert_eq!(frame_size(r), (Some(540), Some(1200)), "{shot}");
    assert_eq!(r["display"]["width"], 1080);
    assert_eq!(r["scale"]["x"], 2.0);
    let ack = tap_in_screenshot(&mut b.x, &b.ch, (270, 600), &r["screenshot_id"]).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(b.sim.count_runs(&["input", "tap", "540", "1200"]), 1);
    let ack = tap_in_screenshot(&mut b.x, &b.ch, (600, 600), &r["screenshot_id"]).await;
    assert_eq!(ack["error"]["code"], "out_of_bounds", "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_15_override_size_is_the_input_space() {
    let mut b = claimed_sim("SIMFB15000001", &[]).await;
    assert_eq!(
        b.sim
            .control_post("/v1/state", json!({"override_size": "540x1170"})),
        200
    );
    let st = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    let d = &st["payload"]["result"]["display"];
    assert_eq!(
        (d["width"].as_u64(), d["height"].as_u64()),
        (Some(540), Some(1170)),
        "{st}"
    );
    assert_eq!(d["physical"]["width"], 1080);
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 600, "y": 100}))
            .await;
    assert_eq!(ack["error"]["code"], "out_of_bounds");
    assert!(ack["error"]["message"]
        .as_str()
        .unwrap()
        .contains("0..=539"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_18_battery_level_not_capacity_level() {
    let mut b = claimed_sim("SIMFB18000001", &[]).await;
    b.sim
        .control_post("/v1/state", json!({"battery_level": 80}));
    let st = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    assert_eq!(st["payload"]["result"]["battery_percent"], 80, "{st}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_19_exit_status_without_shell_v2_is_recovered() {
    let mut b = claimed_sim_playing("SIMFB19000001", "legacy-android6").await;
    // The adb layer recovers the status on a phone without shell_v2.
    let link = xagent_adb_connector::adb::DeviceLink::direct(b.sim.addr.clone());
    let t = Duration::from_secs(5);
    assert_eq!(
        link.shell("false", t, 1 << 16).await.unwrap().exit_code,
        Some(1)
    );
    let out = link.shell("nosuchprogram", t, 1 << 16).await.unwrap();
    assert_eq!(out.exit_code, Some(127));
    assert!(
        out.stdout_text().contains("inaccessible or not found"),
        "stderr merged: {:?}",
        out.stdout_text()
    );
    assert_eq!(
        link.shell("echo ok", t, 1 << 16)
            .await
            .unwrap()
            .stdout_text(),
        "ok\n"
    );
    // Through the tools: a failing input command is reported as a failure, not exit 0.
    b.sim.control_post("/v1/script", json!({"command_regex": "input.*tap.*'7' '8'", "stderr": "Error: could not inject\n", "exit_code": 1}));
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 7, "y": 8}))
            .await;
    assert_eq!(ack["error"]["code"], "device_command_failed", "{ack}");
    let ok =
        b.x.tool(&b.ch, "android_tap", json!({"x": 9, "y": 9}))
            .await;
    assert!(ok.get("error").is_none(), "{ok}");
    assert_eq!(b.sim.count_runs(&["input", "tap", "9", "9"]), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_07_multi_display_warning_picks_a_display_and_says_which() {
    let mut b = claimed_sim_playing("SIMFB07000001", "foldable-android14").await;
    let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    let r = &ack["payload"]["result"];
    let id = r["display"]["id"]
        .as_str()
        .expect("the captured display is reported")
        .to_string();
    assert!(
        ["display_on", "first_listed"].contains(&r["display"]["chosen_by"].as_str().unwrap()),
        "{r}"
    );
    assert_eq!(
        frame_size(r),
        (Some(1840), Some(2208)),
        "inner display: {r}"
    );
    let runs = b.sim.count_runs(&["screencap", "-p", "-d", &id]);
    assert_eq!(runs, 1, "captured again with -d {id}");
    // An explicit display_id is honoured.
    let ack =
        b.x.tool(&b.ch, "android_screenshot", json!({"display_id": id}))
            .await;
    assert_eq!(
        ack["payload"]["result"]["display"]["chosen_by"],
        "requested"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_09_screen_off_is_not_reported_as_an_empty_screen() {
    let mut b = claimed_sim("SIMFB09B00001", &[]).await;
    b.sim.control_post("/v1/state", json!({"screen_on": false}));
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    if ack.get("error").is_some() {
        assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    } else {
        assert!(
            !elements(&ack).is_empty(),
            "an empty tree must never be reported as a screen: {ack}"
        );
    }
    b.x.tool(&b.ch, "android_press_key", json!({"key": "wake"}))
        .await;
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_12_frozen_transport_goes_offline_fails_fast_and_comes_back() {
    let mut b = claimed_sim("SIMFB12000001", &[]).await;
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "offline"})),
        200
    );
    let push =
        b.x.wait_push("connection.descriptor.push", 10)
            .await
            .expect("offline push");
    assert_eq!(
        push["payload"]["connection_descriptor"]["connection"]["status"],
        "offline"
    );
    let t = std::time::Instant::now();
    let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    assert_eq!(ack["error"]["code"], "device_offline", "{ack}");
    assert!(t.elapsed() < Duration::from_secs(1), "fails fast");
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "online"})),
        200
    );
    let push =
        b.x.wait_push("connection.descriptor.push", 15)
            .await
            .expect("connected push");
    assert_eq!(
        push["payload"]["connection_descriptor"]["connection"]["status"],
        "connected"
    );
    let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "binding survived: {ack}");
}

/// Row 12 kind, asked before the liveness probe noticed: the call's own connect finds a
/// transport that never sends CNXN, which is `device_offline` (adb lists it `offline`), not a
/// `device_timeout` of a slow command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_12_a_call_right_after_the_phone_went_offline_is_device_offline() {
    let mut b = claimed_sim("SIMFB12000002", &[]).await;
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "offline"})),
        200
    );
    let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    assert_eq!(ack["error"]["code"], "device_offline", "{ack}");
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "online"})),
        200
    );
}

/// An unplugged direct phone (the sim drops its connections and refuses new ones): every call
/// right after is `device_offline` with the fix, never `device_command_failed` "adb i/o error:
/// early eof" (fresh-user finding: 16 of 16 such calls), whichever tool it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_12_calls_right_after_an_unplug_are_device_offline() {
    let mut b = claimed_sim("SIMFB12000003", &[]).await;
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "unplugged"})),
        200
    );
    for tool in [
        "android_device_status",
        "android_screenshot",
        "android_ui_tree",
        "android_device_status",
    ] {
        let ack = b.x.tool(&b.ch, tool, json!({})).await;
        assert_eq!(ack["error"]["code"], "device_offline", "{tool}: {ack}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_20_a_command_that_never_ends_hits_its_deadline() {
    let mut b = claimed_sim("SIMFB20000001", &[]).await;
    b.x.tool(&b.ch, "android_tap", json!({"x": 1, "y": 1}))
        .await;
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "input.*keyevent", "hang": true}),
    );
    let t = std::time::Instant::now();
    let ack =
        b.x.tool(&b.ch, "android_press_key", json!({"key": "back"}))
            .await;
    assert_eq!(ack["error"]["code"], "device_timeout", "{ack}");
    assert!(
        ack["error"]["message"]
            .as_str()
            .unwrap()
            .contains("shell: 'input'"),
        "names the step: {ack}"
    );
    assert!(t.elapsed() < Duration::from_secs(9));
    let ok =
        b.x.tool(&b.ch, "android_tap", json!({"x": 2, "y": 2}))
            .await;
    assert!(ok.get("error").is_none(), "the channel stays usable: {ok}");
}

// ---- field-bugs-2.md, rows 21–34 (per-command scripts make the phone misbehave) ----

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_23_ui_dump_busy_on_stderr_is_automation_busy() {
    let mut b = claimed_sim("SIMFB23000001", &[]).await;
    let trace = "java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@1234 already registered!\n\tat com.android.server.accessibility.UiAutomationManager.registerUiTestAutomationServiceLocked(UiAutomationManager.java:105)\n";
    for exit_code in [1, 0] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^uiautomator dump", "stderr": trace, "exit_code": exit_code, "times": 1}),
        );
        let from = log_len(&b.sim);
        let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
        assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
        let m = message(&ack);
        assert!(m.contains("reason: automation_busy"), "{m}");
        assert!(m.contains("already registered"), "quotes the line: {m}");
        assert!(
            m.contains("uiautomator2 or Appium"),
            "names the client: {m}"
        );
        let ran = programs_since(&b.sim, from);
        assert_eq!(ran.len(), 1, "one try, nothing killed: {ran:?}");
        assert!(ran[0].starts_with("uiautomator"), "{ran:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_24_killed_ui_dump_names_exit_137_and_is_not_retried() {
    let mut b = claimed_sim("SIMFB24000001", &[]).await;
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^uiautomator dump", "exit_code": 137, "times": 1}),
    );
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("reason: killed") && m.contains("exit 137"),
        "{m}"
    );
    let ran = programs_since(&b.sim, from);
    assert_eq!(ran.len(), 1, "not retried: {ran:?}");
    // The next call works again.
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_26_pm_usage_text_is_never_an_empty_list() {
    let mut b = claimed_sim_playing("SIMFB26000001", "legacy-android6").await;
    let usage = "usage: pm list packages [-f] [-d] [-e] [-s] [-3] [-i] [-u] [--user USER_ID] [FILTER]\n       pm list permission-groups\n";
    // The phone does not know `-3`: the connector falls back to `-f` and reads the paths.
    // (Field bug 26: fall back to flags the phone knows, down to none; never an empty list.)
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^pm list packages -3$", "stdout": usage}),
    );
    let ack = b.x.tool(&b.ch, "android_app_list", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    let r = &ack["payload"]["result"];
    assert!(r["count"].as_u64().unwrap() > 0, "{ack}");
    assert!(r["packages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["package"] == "com.example.notes"));
    assert!(r["packages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["system"] == false));
    // A phone whose `pm` knows no flag of `list packages` at all: the plain form lists every
    // package and `dumpsys package`'s SYSTEM flag tells the user apps — the real list.
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^pm list packages -", "stdout": usage}),
    );
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_app_list", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    let names: Vec<&str> = ack["payload"]["result"]["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["package"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"com.example.notes"), "{names:?}");
    assert!(
        !names.contains(&"com.android.settings"),
        "system apps stay out: {names:?}"
    );
    let plain = b.sim.state()["command_log"].as_array().unwrap()[from..]
        .iter()
        .filter(|e| e["argv"] == json!(["pm", "list", "packages"]))
        .count();
    assert_eq!(plain, 1, "asked once without flags");
    // With include_system the plain list is the answer, system apps marked.
    let ack =
        b.x.tool(&b.ch, "android_app_list", json!({"include_system": true}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
    let packages = ack["payload"]["result"]["packages"].as_array().unwrap();
    assert!(packages
        .iter()
        .any(|p| p["package"] == "com.android.settings" && p["system"] == true));
    assert!(packages
        .iter()
        .any(|p| p["package"] == "com.example.notes" && p["system"] == false));
    // A phone that answers every form, the plain one too, with its usage text: an error quoting
    // it, never count 0.
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^pm list packages", "stdout": usage}),
    );
    let ack = b.x.tool(&b.ch, "android_app_list", json!({})).await;
    assert_eq!(ack["error"]["code"], "device_command_failed", "{ack}");
    assert!(message(&ack).contains("usage: pm list packages"), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_27_package_service_not_up_is_device_booting_for_every_package_tool() {
    let mut b = claimed_sim("SIMFB27000001", &[]).await;
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^(pm|cmd package) ", "stderr": "cmd: Can't find service: package\n", "exit_code": 20}),
    );
    for (tool, args) in [
        ("android_app_list", json!({})),
        ("android_app_list", json!({"include_system": true})),
        (
            "android_app_launch",
            json!({"package": "com.android.settings"}),
        ),
    ] {
        let ack = b.x.tool(&b.ch, tool, args).await;
        assert_eq!(ack["error"]["code"], "device_booting", "{tool}: {ack}");
        let m = message(&ack);
        assert!(m.contains("still booting") && m.contains("retry"), "{m}");
        assert!(m.contains("Can't find service: package"), "{m}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_32_inject_events_refusal_quotes_the_line_and_names_the_fix() {
    let mut b = claimed_sim("SIMFB32000001", &[]).await;
    let trace = "\njava.lang.SecurityException: Injecting input events requires the caller (or the source of the instrumentation, if any) to have the INJECT_EVENTS permission.\n\tat android.os.Parcel.createExceptionOrNull(Parcel.java:3011)\n\tat android.hardware.input.InputManager.injectInputEvent(InputManager.java:1131)\n";
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^input ", "stderr": trace, "exit_code": 255}),
    );
    for (tool, args) in [
        ("android_tap", json!({"x": 540, "y": 1200})),
        ("android_press_key", json!({"key": "back"})),
    ] {
        let ack = b.x.tool(&b.ch, tool, args).await;
        assert_eq!(ack["error"]["code"], "device_permission_denied", "{ack}");
        let m = message(&ack);
        assert!(
            m.contains("java.lang.SecurityException: Injecting input events requires"),
            "{m}"
        );
        assert!(m.contains("USB debugging (Security settings)"), "{m}");
    }
}

/// The threadtime lines of a logcat result and their PID column.
fn log_pids(ack: &Value) -> Vec<String> {
    ack["payload"]["result"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            l.as_str()
                .unwrap()
                .split_whitespace()
                .nth(2)
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

/// Puts Notes in front (the sim's state) and reads its log with `android_logcat`, asserted to
/// succeed; the ack and the pid it names for Notes.
async fn logcat_of_notes_in_front(b: &mut DirectSim) -> (Value, u64) {
    b.sim
        .control_post("/v1/state", json!({"foreground": "com.example.notes"}));
    let ack = tool_on_notes(b, "android_logcat").await;
    assert!(ack.get("error").is_none(), "{ack}");
    let pid = ack["payload"]["result"]["pid"].as_u64().expect("pid");
    (ack, pid)
}

/// Asserts an `android_logcat` ack has lines and that every one is of process `pid`;
/// `context` names the case in the failure message.
fn assert_only_lines_of(ack: &Value, pid: u64, context: &str) {
    let pids = log_pids(ack);
    assert!(!pids.is_empty(), "{context}: no lines: {ack}");
    assert!(
        pids.iter().all(|p| *p == pid.to_string()),
        "{context}: lines of other processes than {pid}: {pids:?} {ack}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_30_logcat_pid_filter_by_sdk_host_side_on_android_6() {
    let mut b = claimed_sim_playing("SIMFB30000001", "legacy-android6").await;
    let from = log_len(&b.sim);
    let (ack, pid) = logcat_of_notes_in_front(&mut b).await;
    assert_only_lines_of(&ack, pid, "the app's lines");
    let log = b.sim.state()["command_log"].as_array().unwrap()[from..].to_vec();
    assert!(
        !log.iter().any(|e| e["argv"].to_string().contains("--pid")),
        "--pid never sent to Android 6: {log:?}"
    );
    // A phone of unknown SDK that rejects --pid is filtered on the host too.
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^getprop ro.build.version.sdk$", "stdout": "\n"}),
    );
    let ack = tool_on_notes(&mut b, "android_logcat").await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert!(log_pids(&ack).iter().all(|p| *p == pid.to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_31_pidof_that_lies_is_checked_against_the_process_table() {
    let mut b = claimed_sim("SIMFB31000001", &[]).await;
    let (truth, pid) = logcat_of_notes_in_front(&mut b).await;
    assert!(pid > 1, "{truth}");
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^pidof ", "stdout": "1 2 3\n"}),
    );
    let ack = tool_on_notes(&mut b, "android_logcat").await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(
        ack["payload"]["result"]["pid"], pid,
        "the table's pid, not init: {ack}"
    );
    assert!(log_pids(&ack).iter().all(|p| *p == pid.to_string()));
    // Not running: pidof's pids are other processes → no process, pid null, init's log not returned.
    b.sim
        .control_post("/v1/state", json!({"foreground": "com.android.settings"}));
    tool_on_notes(&mut b, "android_app_stop").await;
    let ack = tool_on_notes(&mut b, "android_logcat").await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(ack["payload"]["result"]["pid"], Value::Null, "{ack}");
    assert_eq!(ack["payload"]["result"]["count"], 0, "{ack}");
    // A process table that cannot be read: a typed error, no unverified pid used.
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^ps ", "stderr": "ps: Unknown option 'A'\n", "exit_code": 1}),
    );
    let ack = tool_on_notes(&mut b, "android_logcat").await;
    assert_eq!(ack["error"]["code"], "device_command_failed", "{ack}");
    assert!(message(&ack).contains("ps: Unknown option"), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_29_the_framework_chooser_is_not_the_apps_activity() {
    let mut b = claimed_sim("SIMFB29000001", &[]).await;
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^cmd package resolve-activity .*LAUNCHER com\\.example\\.notes$",
               "stdout": "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\nandroid/com.android.internal.app.ResolverActivity\n"}),
    );
    let from = log_len(&b.sim);
    let ack = tool_on_notes(&mut b, "android_app_launch").await;
    assert!(ack.get("error").is_none(), "{ack}");
    let r = &ack["payload"]["result"];
    assert!(
        r["component"]
            .as_str()
            .unwrap()
            .starts_with("com.example.notes/"),
        "{ack}"
    );
    assert_eq!(r["foreground_package"], "com.example.notes");
    assert_eq!(r["verified"], true);
    let log = b.sim.state()["command_log"].as_array().unwrap()[from..].to_vec();
    assert!(
        !log.iter()
            .any(|e| e["argv"].to_string().contains("ResolverActivity")),
        "the chooser is never started: {log:?}"
    );
}

/// A stand-in adb server that answers `host:version` and streams one fixed device list on
/// `host:track-devices` (a USB state the simulated phone, reached over TCP, cannot produce).
/// Returns its `host:port`; it serves until the test's runtime ends.
async fn fake_adb_server(list: &'static str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((mut tcp, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut len = [0u8; 4];
                if tcp.read_exact(&mut len).await.is_err() {
                    return;
                }
                let n = usize::from_str_radix(std::str::from_utf8(&len).unwrap_or("0"), 16)
                    .unwrap_or(0);
                let mut req = vec![0u8; n];
                if tcp.read_exact(&mut req).await.is_err() {
                    return;
                }
                let answer = |p: &str| format!("OKAY{:04x}{p}", p.len());
                match String::from_utf8_lossy(&req).as_ref() {
                    "host:version" => {
                        let _ = tcp.write_all(answer("0029").as_bytes()).await;
                    }
                    r if r.starts_with("host:track-devices") => {
                        let _ = tcp.write_all(answer(list).as_bytes()).await;
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    }
                    r if r.starts_with("host:devices") => {
                        let _ = tcp.write_all(answer(list).as_bytes()).await;
                    }
                    _ => {
                        let _ = tcp.write_all(b"FAIL0007unknown").await;
                    }
                }
            });
        }
    });
    addr
}

/// Claims `serial` until the connector has heard of it (the claim stops answering
/// `auth_failed` "no attached phone"), for up to 10 s; the last answer.
async fn claim_once_listed(x: &mut XAgent, ch: &str, serial: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let ack = x.claim(ch, serial).await;
        if ack["error"]["code"] != "auth_failed" || std::time::Instant::now() > deadline {
            return ack;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_28_no_usb_permission_is_told_at_claim_time() {
    let server = fake_adb_server("XXXXXXXX\tno permissions (missing udev rules? user is in the plugdev group); see [http://developer.android.com/tools/device.html]\n").await;
    let dir = TempDir::new("fb28");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(server));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let ack = claim_once_listed(&mut x, &ch, "XXXXXXXX").await;
    assert_eq!(ack["error"]["code"], "device_no_permissions", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("udev") && m.contains("plugdev"),
        "names the fix: {m}"
    );
    assert!(!m.contains("reconnect it"), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_33_a_serial_beginning_with_a_space_is_kept_byte_exact() {
    let sim = SimPhone::start_with_control(" GS000000000001", &[]);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&sim.addr);
    let dir = TempDir::new("fb33");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let ack = claim_when_visible(&mut x, &ch, " GS000000000001").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let ack = x.tool(&ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "the phone is usable: {ack}");
    let ack = x.tool(&ch, "android_tap", json!({"x": 3, "y": 4})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(sim.count_runs(&["input", "tap", "3", "4"]), 1);
    // Byte-exact: the trimmed serial names no phone (before, both were trimmed alike).
    let (ch2, _) = x.open(None).await;
    let ack = x.claim(&ch2, "GS000000000001").await;
    assert_eq!(ack["error"]["code"], "auth_failed", "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_34_adb_server_restart_is_adb_server_unavailable_then_resumes() {
    let mut b = adb_bench("SIMFB34000001", &[]).await;
    let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    b.adb.run(&["kill-server"]);
    let mut codes = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
        let code = ack["error"]["code"].as_str().unwrap_or("ok").to_string();
        codes.push(code.clone());
        if code == "adb_server_unavailable" || std::time::Instant::now() > deadline {
            assert_eq!(code, "adb_server_unavailable", "{ack}");
            assert!(
                message(&ack).contains("adb start-server") || message(&ack).contains("adb server"),
                "{ack}"
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        !codes.iter().any(|c| c == "device_offline"),
        "never blamed on the phone: {codes:?}"
    );
    // The server comes back (and is told about the phone again): tracking resumes by itself.
    let out = b.adb.run(&["start-server"]);
    assert!(out.status.success());
    b.adb.connect(&b.sim.addr);
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
        if ack.get("error").is_none() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "did not resume: {ack}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The operator reads both ends of the outage in the log, once each, in order.
    let logs = b.conn.logs();
    let lost = logs.find("adb server connection lost");
    let back = logs.find("adb server reachable again");
    assert!(
        matches!((lost, back), (Some(l), Some(b)) if l < b),
        "the log misses the outage: {logs}"
    );
    assert_eq!(
        logs.matches("adb server connection lost").count(),
        1,
        "{logs}"
    );
}

/// The `uniqueId` (after `local:`) of the foldable persona's inner display, 1840 x 2208.
const INNER_DISPLAY_ID: &str = "4619827551948147201";
/// The `uniqueId` (after `local:`) of the foldable persona's outer display, 1080 x 2092.
const OUTER_DISPLAY_ID: &str = "4619827551948147202";

/// The foldable persona's displays as `dumpsys display` (Android 14) lists them, one
/// `DisplayDeviceInfo` block each, `{S}` standing for the power state (`ON`, `OFF`, `DOZE` …):
/// the compact form gives it twice, as `state {S}` in the header and as `mState={S}`.
const INNER_DISPLAY: &str = "  DisplayDeviceInfo{\"Built-in Screen\": uniqueId=\"local:4619827551948147201\", 1840 x 2208, density 420, state {S}}\n    mState={S}\n";
/// [`INNER_DISPLAY`]'s outer twin.
const OUTER_DISPLAY: &str = "  DisplayDeviceInfo{\"Outer Screen\": uniqueId=\"local:4619827551948147202\", 1080 x 2092, density 420, state {S}}\n    mState={S}\n";
/// The inner display's block with its state only in the `mState` line (no `state X` in the
/// header, which names a `modeId` instead).
const INNER_DISPLAY_MSTATE_ONLY: &str = "  DisplayDeviceInfo{\"Built-in Screen\": uniqueId=\"local:4619827551948147201\", 1840 x 2208, modeId 1, density 420}\n    mAdapter=LocalDisplayAdapter\n    mState={S}\n";
/// [`INNER_DISPLAY_MSTATE_ONLY`]'s outer twin.
const OUTER_DISPLAY_MSTATE_ONLY: &str = "  DisplayDeviceInfo{\"Outer Screen\": uniqueId=\"local:4619827551948147202\", 1080 x 2092, modeId 2, density 420}\n    mAdapter=LocalDisplayAdapter\n    mState={S}\n";

/// A whole `dumpsys display` listing two displays, `first` then `second`, each given as
/// `(block, state)`: one of the block templates above and the state put in for its `{S}`.
fn foldable_display_dump(first: (&str, &str), second: (&str, &str)) -> String {
    format!(
        "DISPLAY MANAGER (dumpsys display)\nDisplay Devices: size=2\n{}{}",
        first.0.replace("{S}", first.1),
        second.0.replace("{S}", second.1)
    )
}

/// Scripts the sim's `dumpsys display` to print `dump` (until the scripts are deleted), then
/// calls `android_screenshot`; the ack.
async fn screenshot_under_display_dump(b: &mut DirectSim, dump: &str) -> Value {
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^dumpsys display$", "stdout": dump}),
    );
    b.x.tool(&b.ch, "android_screenshot", json!({})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_22_each_display_state_is_read_from_its_own_block() {
    let mut b = claimed_sim_playing("SIMFB22000001", "foldable-android14").await;
    // The compact form: the inner display OFF, the outer ON, each state in its own block.
    let dump = foldable_display_dump((INNER_DISPLAY, "OFF"), (OUTER_DISPLAY, "ON"));
    let ack = screenshot_under_display_dump(&mut b, &dump).await;
    assert!(ack.get("error").is_none(), "{ack}");
    let r = &ack["payload"]["result"];
    assert_eq!(r["display"]["chosen_by"], "display_on", "{r}");
    assert_eq!(r["display"]["id"], OUTER_DISPLAY_ID, "the ON display: {r}");
    assert_eq!(
        display_size(r),
        (Some(1080), Some(2092)),
        "the captured display's size: {r}"
    );
    assert_eq!(
        b.sim
            .count_runs(&["screencap", "-p", "-d", OUTER_DISPLAY_ID]),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_25_geometry_is_never_stale_across_a_rotation() {
    let mut b = claimed_sim("SIMFB25000001", &[]).await;
    let first = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert_eq!(
        first["payload"]["result"]["display"]["width"], 1080,
        "{first}"
    );
    b.sim.control_post("/v1/state", json!({"rotation": 1}));
    let second = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    let r = &second["payload"]["result"];
    assert_eq!(
        display_size(r),
        (Some(2400), Some(1080)),
        "the rotated display, not the cached one: {r}"
    );
    let ack = tap_in_screenshot(&mut b.x, &b.ch, (2000, 500), &r["screenshot_id"]).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(
        b.sim.count_runs(&["input", "tap", "2000", "500"]),
        1,
        "{ack}"
    );
    // A bare tap right after a rotation is checked against the new size, not refused by the old.
    b.sim.control_post("/v1/state", json!({"rotation": 0}));
    b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    b.sim.control_post("/v1/state", json!({"rotation": 1}));
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 2300, "y": 100}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_21_text_already_present_is_not_verified() {
    let mut b = claimed_sim("SIMFB21000001", &[]).await;
    focus_note(&mut b).await;
    b.sim.control_post("/v1/state", json!({"note_text": "abc"}));
    // The IME drops the text: `input text abc` succeeds and changes nothing.
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^input text abc$", "times": 1}),
    );
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "abc"}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
    let r = &ack["payload"]["result"];
    assert_eq!(r["verified"], false, "{r}");
    assert_eq!(r["field_text"], "abc", "{r}");
    // Typed for real, the field grows by the text: verified.
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "abc"}))
            .await;
    let r = &ack["payload"]["result"];
    assert_eq!(r["field_text"], "abcabc", "{r}");
    assert_eq!(r["verified"], true, "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_21_an_empty_field_showing_its_hint_is_verified_after_typing() {
    let mut b = claimed_sim("SIMFB21000002", &[]).await;
    focus_note(&mut b).await;
    b.sim.control_post("/v1/state", json!({"note_text": ""}));
    // Empty, the field's node text is its hint (what uiautomator dumps on Android 8+).
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(ack.to_string().contains("Write a note"), "{ack}");
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "hello"}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
    let r = &ack["payload"]["result"];
    assert_eq!(r["field_text"], "hello", "{r}");
    assert_eq!(r["verified"], true, "{r}");
    assert!(r.get("warning").is_none(), "{r}");
    assert_eq!(b.sim.state()["note_text"], "hello");
}

// ---- kind "geometry" (row 25), whole: nothing cached survives a rotation or a size change ----

/// `android_tap` at `(x, y)`, pixels in the frame of the screenshot `screenshot_id`; the ack.
async fn tap_in_screenshot(
    agent: &mut XAgent,
    ch: &str,
    (x, y): (u32, u32),
    screenshot_id: &Value,
) -> Value {
    agent
        .tool(
            ch,
            "android_tap",
            json!({"x": x, "y": y, "screenshot_id": screenshot_id}),
        )
        .await
}

/// `android_tap` on `element`, one element of an `android_ui_tree` result (by its
/// `element_id`); the ack.
async fn tap_element(agent: &mut XAgent, ch: &str, element: &Value) -> Value {
    agent
        .tool(
            ch,
            "android_tap",
            json!({"element_id": element["element_id"]}),
        )
        .await
}

/// `android_app_launch` of `package`; the ack.
async fn launch_app(agent: &mut XAgent, ch: &str, package: &str) -> Value {
    agent
        .tool(ch, "android_app_launch", json!({"package": package}))
        .await
}

/// Asserts `android_app_launch` refuses `com.example.nothere2` (not installed:
/// `app_not_installed`) and `no_launcher` (installed, no launcher activity:
/// `no_launcher_activity`), and that `monkey` never ran on the phone; `context` names the case
/// in the failure messages.
async fn assert_launch_refusals(
    agent: &mut XAgent,
    ch: &str,
    sim: &SimPhone,
    no_launcher: &str,
    context: &str,
) {
    for (package, code) in [
        ("com.example.nothere2", "app_not_installed"),
        (no_launcher, "no_launcher_activity"),
    ] {
        let ack = launch_app(agent, ch, package).await;
        assert_eq!(ack["error"]["code"], code, "{context}: {package}: {ack}");
    }
    assert_eq!(log_len_runs(sim, "monkey"), 0, "{context}");
}

/// Every coordinate tool aimed at one point, as `(tool_id, arguments)`.
fn every_coordinate_tool(x: i64, y: i64, extra: Value) -> Vec<(&'static str, Value)> {
    let with = |mut v: Value| {
        if let (Some(v), Value::Object(e)) = (v.as_object_mut(), extra.clone()) {
            v.extend(e);
        }
        v
    };
    vec![
        ("android_tap", with(json!({"x": x, "y": y}))),
        ("android_long_press", with(json!({"x": x, "y": y}))),
        ("android_double_tap", with(json!({"x": x, "y": y}))),
        (
            "android_swipe",
            with(json!({"x1": x, "y1": y, "x2": 10, "y2": 10})),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_25_coordinates_without_a_screenshot_follow_a_size_change_and_a_rotation() {
    let mut b = adb_bench("SIMFB25000002", &[]).await;
    // Seen at 1080x2400 (any size cache is warm now)...
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 1000, "y": 2300}))
            .await;
    assert_eq!(ack["payload"]["result"]["display"]["width"], 1080, "{ack}");
    // ...then `wm size 720x1600` (the control API's override): every coordinate tool checks
    // the new size at once, none is sent to the phone with the old one.
    b.sim
        .control_post("/v1/state", json!({"override_size": "720x1600"}));
    for (tool, args) in every_coordinate_tool(1000, 2300, json!({})) {
        let ack = b.x.tool(&b.ch, tool, args).await;
        assert_eq!(ack["error"]["code"], "out_of_bounds", "{tool}: {ack}");
        assert!(message(&ack).contains("0..=719"), "{tool}: {ack}");
    }
    assert_eq!(b.sim.count_runs(&["input", "tap", "1000", "2300"]), 1);
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 700, "y": 1500}))
            .await;
    let d = &ack["payload"]["result"]["display"];
    assert_eq!(
        (d["width"].as_u64(), d["height"].as_u64()),
        (Some(720), Some(1600)),
        "{ack}"
    );
    // A rotation right after: landscape bounds at once, both ways.
    b.sim.control_post(
        "/v1/state",
        json!({"override_size": "reset", "rotation": 1}),
    );
    for (tool, args) in every_coordinate_tool(100, 2300, json!({})) {
        let ack = b.x.tool(&b.ch, tool, args).await;
        assert_eq!(ack["error"]["code"], "out_of_bounds", "{tool}: {ack}");
        assert!(message(&ack).contains("y in 0..=1079"), "{tool}: {ack}");
    }
    for (tool, args) in every_coordinate_tool(2300, 1000, json!({})) {
        let ack = b.x.tool(&b.ch, tool, args).await;
        assert!(ack.get("error").is_none(), "{tool}: {ack}");
    }
    assert_eq!(b.sim.count_runs(&["input", "tap", "100", "2300"]), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_25_a_screenshot_from_before_a_rotation_or_size_change_is_refused() {
    let mut b = adb_bench("SIMFB25000003", &[]).await;
    let shot = |ack: &Value| ack["payload"]["result"]["screenshot_id"].clone();
    let before = shot(&b.x.tool(&b.ch, "android_screenshot", json!({})).await);
    assert!(before.is_string());
    let runs = || log_len_runs(&b.sim, "input");
    let inputs = runs();
    // Quarter turn (the size swaps) and half turn (the size stays; only the rotation tells).
    for rotation in [1, 2] {
        b.sim
            .control_post("/v1/state", json!({"rotation": rotation}));
        for (tool, args) in every_coordinate_tool(500, 500, json!({"screenshot_id": before})) {
            let ack = b.x.tool(&b.ch, tool, args).await;
            assert_eq!(
                ack["error"]["code"], "stale_snapshot",
                "{tool} r{rotation}: {ack}"
            );
            let m = message(&ack);
            assert!(m.contains("take a new screenshot"), "{m}");
            assert!(
                m.contains("1080x2400 rotation 0"),
                "names the old frame: {m}"
            );
        }
    }
    assert_eq!(runs(), inputs, "nothing was sent to the phone");
    // A screenshot of the new frame works; a size change then makes it stale in turn.
    let now = shot(&b.x.tool(&b.ch, "android_screenshot", json!({})).await);
    let ack = tap_in_screenshot(&mut b.x, &b.ch, (500, 500), &now).await;
    assert!(ack.get("error").is_none(), "{ack}");
    b.sim
        .control_post("/v1/state", json!({"override_size": "720x1600"}));
    let ack = tap_in_screenshot(&mut b.x, &b.ch, (500, 500), &now).await;
    assert_eq!(ack["error"]["code"], "stale_snapshot", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("taken at 1080x2400 rotation 2") && m.contains("now 720x1600"),
        "{m}"
    );
}

/// How many commands whose program is `program` the phone ran.
fn log_len_runs(sim: &SimPhone, program: &str) -> usize {
    sim.state()["command_log"]
        .as_array()
        .map(|log| log.iter().filter(|e| e["argv"][0] == program).count())
        .unwrap_or(0)
}

// ---- a frozen phone behind the adb server (adb keeps listing it `device`) ----

/// The next descriptor push whose connection status is `status`, within `secs`.
async fn wait_status(x: &mut XAgent, status: &str, secs: u64) -> Option<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        let push = x
            .wait_push("connection.descriptor.push", left.as_secs().max(1))
            .await?;
        if push["payload"]["connection_descriptor"]["connection"]["status"] == status {
            return Some(push);
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frozen_phone_behind_adb_goes_offline_fails_fast_and_comes_back() {
    let mut b = adb_bench("SIMFRZ0000001", &[]).await;
    let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "frozen"})),
        200
    );
    // adb still lists it `device`; the liveness check tells the truth.
    let push = wait_status(&mut b.x, "offline", 15)
        .await
        .expect("an offline descriptor push");
    assert_eq!(
        push["payload"]["connection_descriptor"]["connection"]["status"],
        "offline"
    );
    let listed = b.adb.run(&["devices"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("\tdevice"),
        "adb still says device: {listed:?}"
    );
    for tool in ["android_device_status", "android_tap"] {
        let t = std::time::Instant::now();
        let ack = b.x.tool(&b.ch, tool, json!({"x": 1, "y": 1})).await;
        assert_eq!(ack["error"]["code"], "device_offline", "{tool}: {ack}");
        assert!(
            message(&ack).contains("adb reconnect"),
            "names the fix: {ack}"
        );
        assert!(t.elapsed() < Duration::from_secs(1), "{tool} fails fast");
    }
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "online"})),
        200
    );
    wait_status(&mut b.x, "connected", 15)
        .await
        .expect("a connected descriptor push");
    let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "binding survived: {ack}");
}

// ---- a capture cut short by an unplug is the phone going away, not a malformed image ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_capture_cut_short_by_an_unplug_is_device_offline_a_malformed_one_invalid_screenshot() {
    let mut b = adb_bench("SIMSHORT00001", &[]).await;
    // The phone answers with a malformed image and stays: invalid_screenshot, as before.
    let png_head = base64::engine::general_purpose::STANDARD
        .encode(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x048\0\0\t`\x08\x06\0\0\0");
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^screencap", "stdout_base64": png_head, "times": 1}),
    );
    let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert_eq!(ack["error"]["code"], "invalid_screenshot", "{ack}");
    // The phone is unplugged while the capture runs: the stream ends short — the truth is
    // that the phone went away.
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^screencap", "stdout_base64": png_head, "delay_ms": 1500, "times": 1}),
    );
    let url = format!("{}/v1/transport", b.sim.control.clone().expect("control"));
    let unplug = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        ureq::post(&url)
            .header("Content-Type", "application/json")
            .send(json!({"state": "unplugged"}).to_string().as_bytes())
            .map(|r| r.status().as_u16())
            .unwrap_or(0)
    });
    let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert_eq!(unplug.join().unwrap(), 200);
    assert_eq!(ack["error"]["code"], "device_offline", "{ack}");
    let m = message(&ack);
    // The phone was reached over TCP through the adb server: the fix is Wi-Fi's, not a cable.
    assert!(
        m.contains("went away") && m.contains("Wireless debugging") && !m.contains("cable"),
        "{m}"
    );
}

// ---- the fix a message names follows how the phone is reached (fresh-user finding) ----

/// Calls `android_device_status` until it fails with a message containing `says` (the
/// inventory notices a change within its probe period); returns that answer, or the last one.
async fn status_until(x: &mut XAgent, ch: &str, says: &str) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let ack = x.tool(ch, "android_device_status", json!({})).await;
        if message(&ack).contains(says) || std::time::Instant::now() > deadline {
            return ack;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// What a direct-transport phone's error may never tell: commands for an adb server the
/// connector does not use, a cable, or a freeze for an unplugged phone.
const NOT_FOR_DIRECT: &[&str] = &[
    "adb reconnect",
    "adb connect",
    "adb disconnect",
    "replug",
    "frozen",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unplugged_direct_phone_is_unreachable_and_its_fix_names_no_adb_server() {
    let mut b = claimed_sim("SIMROUTE00001", &[]).await;
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "unplugged"})),
        200
    );
    let ack = status_until(&mut b.x, &b.ch, "not reachable").await;
    assert_eq!(ack["error"]["code"], "device_offline", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("not reachable") && m.contains("dials it again"),
        "{m}"
    );
    for wrong in NOT_FOR_DIRECT {
        assert!(!m.contains(wrong), "{wrong}: {m}");
    }
    // Frozen (connected, silent) is told as such, with the direct fix too.
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "online"})),
        200
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let back = loop {
        let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
        if ack.get("error").is_none() || std::time::Instant::now() > deadline {
            break ack;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(back.get("error").is_none(), "the phone came back: {back}");
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "frozen"})),
        200
    );
    let ack = status_until(&mut b.x, &b.ch, "does not answer").await;
    assert_eq!(ack["error"]["code"], "device_offline", "{ack}");
    let m = message(&ack);
    assert!(m.contains("connected but does not answer"), "{m}");
    for wrong in NOT_FOR_DIRECT {
        assert!(!m.contains(wrong), "{wrong}: {m}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wifi_phone_behind_the_adb_server_that_left_gets_the_wifi_fix() {
    let mut b = adb_bench("SIMROUTE00002", &[]).await;
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "unplugged"})),
        200
    );
    let ack = status_until(&mut b.x, &b.ch, "Wireless debugging").await;
    assert_eq!(ack["error"]["code"], "device_offline", "{ack}");
    let m = message(&ack);
    assert!(m.contains("Wireless debugging") && m.contains("adb"), "{m}");
    assert!(!m.contains("cable") && !m.contains("frozen"), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usb_phone_adb_lists_offline_gets_the_usb_fix_at_claim_time() {
    let server = fake_adb_server("R58N12ABCDEF\toffline\n").await;
    let dir = TempDir::new("routeusb");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(server));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let ack = claim_once_listed(&mut x, &ch, "R58N12ABCDEF").await;
    assert_eq!(ack["error"]["code"], "device_offline", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("attached but does not answer")
            && m.contains("USB cable")
            && m.contains("adb reconnect"),
        "{m}"
    );
    assert!(!m.contains("Wireless debugging"), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_25_an_element_id_from_before_a_rotation_is_refused() {
    let mut b = adb_bench("SIMFB25000004", &[]).await;
    let tree = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    let notes = find_text(&elements(&tree), "Notes").expect("Notes icon");
    b.sim.control_post("/v1/state", json!({"rotation": 1}));
    let inputs = log_len_runs(&b.sim, "input");
    for tool in ["android_tap", "android_long_press", "android_double_tap"] {
        let ack =
            b.x.tool(&b.ch, tool, json!({"element_id": notes["element_id"]}))
                .await;
        assert_eq!(ack["error"]["code"], "stale_snapshot", "{tool}: {ack}");
        assert!(message(&ack).contains("read the UI tree again"), "{ack}");
    }
    assert_eq!(log_len_runs(&b.sim, "input"), inputs, "nothing sent");
    // Read again in the new frame: usable.
    let tree = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    let notes = find_text(&elements(&tree), "Notes").expect("Notes icon");
    let ack = tap_element(&mut b.x, &b.ch, &notes).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

// ---- variants of each kind (session 8): inputs of the same kind the tests above do not use ----

fn fixture_png() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/screencap/phone-720x1612-files-app-srgb-sbit.png"
    ))
    .unwrap()
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_01_variants_other_metacharacters() {
    let mut b = claimed_sim("SIMFB01V00001", &[]).await;
    focus_note(&mut b).await;
    for text in [
        "a|b>c<d",
        "(x){y}[z]",
        "~/*?!^",
        "a\\b\\\\c",
        "$HOME ${IFS}x",
        "a && reboot",
        "'",
        "\"",
        "  lead and trail  ",
        "a  b",
    ] {
        let before = log_len(&b.sim);
        type_expecting_verified(&mut b, text).await;
        assert_only_input_ran_since(&b.sim, before, text);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_02_variants_other_percent_forms() {
    let mut b = claimed_sim("SIMFB02V00001", &[]).await;
    focus_note(&mut b).await;
    for text in ["%", "50% off", "%s%s%s", "a%sb%", "%1$s %d", "%S"] {
        type_expecting_verified(&mut b, text).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_03_variants_other_line_breaks() {
    let mut b = claimed_sim("SIMFB03V00001", &[]).await;
    focus_note(&mut b).await;
    for text in ["x\n", "\n\nq", "a\r\nreboot", "a\rb", "a\tb"] {
        let before = log_len(&b.sim);
        let ack = type_and_read(&mut b, text).await;
        if ack.get("error").is_some() {
            assert_eq!(ack["error"]["code"], "unsupported_text", "{text:?}: {ack}");
            assert!(!message(&ack).is_empty(), "{text:?}: {ack}");
        } else {
            assert_eq!(
                ack["payload"]["result"]["verified"], true,
                "{text:?}: {ack}"
            );
            // CRLF (a Windows client's line break) is one line break.
            assert_eq!(
                b.sim.state()["note_text"],
                text.replace("\r\n", "\n"),
                "{text:?}"
            );
        }
        let progs = programs_since(&b.sim, before);
        assert!(
            // `ime`: the connector looking for an IME for a text `input` cannot type.
            progs
                .iter()
                .all(|p| p == "input" || p == "uiautomator" || p == "ime"),
            "{text:?}: never a command: {progs:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_04_variants_other_scripts_and_latin1() {
    let mut b = claimed_sim("SIMFB04V00001", &[]).await;
    focus_note(&mut b).await;
    // No IME: every non-ASCII text (Latin-1 too) is refused with the fix, nothing typed.
    for text in ["café", "日本語", "👍", "a\u{00a0}b"] {
        b.sim
            .control_post("/v1/state", json!({"note_text": "keep"}));
        let ack = type_and_read(&mut b, text).await;
        assert_eq!(ack["error"]["code"], "unsupported_text", "{text:?}: {ack}");
        assert!(message(&ack).contains("ADBKeyboard"), "{text:?}: {ack}");
        assert_eq!(b.sim.state()["note_text"], "keep", "{text:?}");
    }
    b.sim
        .control_post("/v1/state", json!({"adb_keyboard": true}));
    for text in ["café", "مرحبا", "👨\u{200d}👩\u{200d}👧", "e\u{301}", "ß→∑"] {
        type_expecting_verified(&mut b, text).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_05_variants_shell_and_quote_mix_in_the_ime_payload() {
    let mut b = claimed_sim("SIMFB05V00001", &[]).await;
    b.sim
        .control_post("/v1/state", json!({"adb_keyboard": true}));
    focus_note(&mut b).await;
    for text in [
        "日本'$(reboot)\"\\",
        "ё`id`;reboot",
        "中%s文 & '",
        "文\nline2'",
    ] {
        let before = log_len(&b.sim);
        type_expecting_verified(&mut b, text).await;
        let progs = all_programs_since(&b.sim, before);
        assert!(
            !progs.iter().any(|p| p == "reboot" || p == "id"),
            "{text:?}: {progs:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_06_variants_other_corrupt_images() {
    let mut b = claimed_sim("SIMFB06V00001", &[]).await;
    let png = fixture_png();
    // CR dropped before LF (the reverse mangling).
    let mut unmangled = Vec::new();
    for (i, byte) in png.iter().enumerate() {
        if *byte == b'\r' && png.get(i + 1) == Some(&b'\n') {
            continue;
        }
        unmangled.push(*byte);
    }
    // Signature and IHDR intact, image data damaged.
    let mut damaged = png.clone();
    let mid = damaged.len() / 2;
    for byte in &mut damaged[mid..mid + 64] {
        *byte ^= 0x5a;
    }
    // Only the bytes after the header mangled (LF → CRLF in the body only).
    let mut body_mangled = png[..33].to_vec();
    for byte in &png[33..] {
        if *byte == b'\n' {
            body_mangled.push(b'\r');
        }
        body_mangled.push(*byte);
    }
    let jpeg =
        b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9".to_vec();
    for (name, bytes) in [
        ("cr dropped", unmangled),
        ("damaged data", damaged),
        ("body mangled", body_mangled),
        ("jpeg", jpeg),
    ] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^screencap", "stdout_base64": b64(&bytes), "times": 1}),
        );
        let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
        assert_eq!(ack["error"]["code"], "invalid_screenshot", "{name}: {ack}");
        assert!(!message(&ack).is_empty(), "{name}: {ack}");
    }
    // Nothing at all, exit 0: an error, never an image.
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^screencap", "times": 1}),
    );
    let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert!(ack.get("error").is_some(), "empty capture: {ack}");
    // The phone still captures afterwards.
    let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_07_variants_other_warning_texts() {
    let mut b = claimed_sim_playing("SIMFB07V00001", "foldable-android14").await;
    let png = fixture_png();
    for warning in [
        "[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first display found, however this default is not guaranteed to be consistent across captures. A display id should be specified.\n",
        "WARNING: linker: Warning: unable to normalize \"\"\n[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first display found.\n",
        "[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first display found.\r\n",
    ] {
        let mut out = warning.as_bytes().to_vec();
        out.extend_from_slice(&png);
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^screencap -p$", "stdout_base64": b64(&out), "times": 1}),
        );
        let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
        assert!(ack.get("error").is_none(), "{warning:?}: {ack}");
        let r = &ack["payload"]["result"];
        assert!(r["display"]["id"].is_string(), "{warning:?}: {r}");
    }
    // A display that does not exist: a clear error, not the default display.
    let ack =
        b.x.tool(&b.ch, "android_screenshot", json!({"display_id": "12345"}))
            .await;
    assert!(ack.get("error").is_some(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_08_variants_other_personas() {
    for (serial, persona) in [
        ("SIMFB08V00001", "legacy-android6"),
        ("SIMFB08V00002", "samsung-android13"),
        ("SIMFB08V00003", "foldable-android14"),
    ] {
        let mut b = claimed_sim_playing(serial, persona).await;
        b.sim
            .control_post("/v1/state", json!({"secure_window": true}));
        let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
        let r = &ack["payload"]["result"];
        assert_eq!(r["blank"], true, "{persona}: {ack}");
        assert_eq!(r["secure_window"], true, "{persona}: {ack}");
        assert!(
            r["hint"].as_str().unwrap_or("").contains("android_ui_tree"),
            "{persona}: {ack}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_09_variants_no_tree_is_never_an_empty_screen() {
    let mut b = claimed_sim("SIMFB09V00001", &[]).await;
    for (stdout, stderr, exit_code) in [
        ("", "ERROR: could not get idle state.\n", 1),
        ("UI hierchary dumped to: /dev/tty\n", "", 0),
        ("", "", 0),
        (
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>",
            "",
            0,
        ),
    ] {
        b.sim.control_post("/v1/script", json!({"command_regex": "^uiautomator dump", "stdout": stdout, "stderr": stderr, "exit_code": exit_code}));
        let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
        assert_eq!(
            ack["error"]["code"], "ui_dump_failed",
            "{stdout:?}/{stderr:?}: {ack}"
        );
        delete_scripts(&b.sim);
    }
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

/// `DELETE /v1/script`: the phone answers normally again.
fn delete_scripts(sim: &SimPhone) {
    let url = format!("{}/v1/script", sim.control.clone().expect("control"));
    ureq::delete(&url).call().expect("delete scripts");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_10_variants_other_null_root_forms() {
    let mut b = claimed_sim("SIMFB10V00001", &[]).await;
    // On stderr with exit 1, twice; then an empty hierarchy three times: both retried.
    b.sim.control_post("/v1/script", json!({"command_regex": "^uiautomator dump", "stderr": "ERROR: null root node returned by UiTestAutomationBridge.\n", "exit_code": 1, "times": 2}));
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    b.sim.control_post("/v1/script", json!({"command_regex": "^uiautomator dump", "stdout": "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\" />", "times": 3}));
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert!(find_text(&elements(&ack), "Notes").is_some(), "{ack}");
    // Forever: bounded, a typed error naming null_root.
    b.sim.control_post("/v1/script", json!({"command_regex": "^uiautomator dump", "stdout": "ERROR: null root node returned by UiTestAutomationBridge.\n"}));
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    assert!(message(&ack).contains("null_root"), "{ack}");
    let tries = programs_since(&b.sim, from).len();
    assert!((2..=4).contains(&tries), "bounded: {tries}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_11_variants_a_serial_that_prefixes_another_and_more_tools() {
    // A's serial is a prefix of B's; the channel is bound to A (listed first).
    let a = SimPhone::start_with_control("SIMFB11PRE", &[]);
    let bsim = SimPhone::start_with_control("SIMFB11PRE2", &[]);
    let c = SimPhone::start_with_control("SIMFB11PRE22", &[]);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&a.addr);
    adb.connect(&bsim.addr);
    adb.connect(&c.addr);
    let dir = TempDir::new("fb11v");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let ack = claim_when_visible(&mut x, &ch, &a.serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let (b_before, c_before) = (log_len(&bsim), log_len(&c));
    for tool in [
        ("android_screenshot", json!({})),
        ("android_ui_tree", json!({})),
        ("android_app_list", json!({})),
        ("android_swipe", json!({"x1": 5, "y1": 5, "x2": 9, "y2": 9})),
        ("android_input_text", json!({"text": "hi"})),
        ("android_logcat", json!({"lines": 5})),
    ] {
        let ack = x.tool(&ch, tool.0, tool.1).await;
        assert!(ack.get("error").is_none(), "{}: {ack}", tool.0);
    }
    let swiped = a.state()["command_log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["argv"].as_array().is_some_and(|v| {
                v.len() >= 6
                    && v[..6]
                        == [
                            json!("input"),
                            json!("swipe"),
                            json!("5"),
                            json!("5"),
                            json!("9"),
                            json!("9"),
                        ]
            })
        })
        .count();
    assert_eq!(swiped, 1, "the swipe reached A");
    assert!(
        all_programs_since(&bsim, b_before).is_empty(),
        "B untouched"
    );
    assert!(all_programs_since(&c, c_before).is_empty(), "C untouched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_12_variants_every_tool_fails_fast_while_offline() {
    let mut b = claimed_sim("SIMFB12V00001", &[]).await;
    for round in 0..2 {
        b.sim
            .control_post("/v1/transport", json!({"state": "offline"}));
        wait_status(&mut b.x, "offline", 15)
            .await
            .expect("offline push");
        for (tool, args) in [
            ("android_screenshot", json!({})),
            ("android_ui_tree", json!({})),
            ("android_input_text", json!({"text": "x"})),
            ("android_app_list", json!({})),
        ] {
            let t = std::time::Instant::now();
            let ack = b.x.tool(&b.ch, tool, args).await;
            assert_eq!(
                ack["error"]["code"], "device_offline",
                "{round} {tool}: {ack}"
            );
            assert!(t.elapsed() < Duration::from_secs(1), "{tool} fails fast");
        }
        b.sim
            .control_post("/v1/transport", json!({"state": "online"}));
        wait_status(&mut b.x, "connected", 15)
            .await
            .expect("connected push");
        let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
        assert!(ack.get("error").is_none(), "round {round}: {ack}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_13_and_28_variants_other_state_texts() {
    let server = fake_adb_server(
        "READY0000001\tdevice\n\
         UNAUTH000001\tunauthorized\n\
         NOPERM000001\tno permissions (user in plugdev group; are your udev rules wrong?); see [http://developer.android.com/tools/device.html]\n\
         NOPERM000002\tno permissions; see [http://developer.android.com/tools/device.html]\n\
         NOPERM000003\tno permissions (user alice is not in the plugdev group); see [http://developer.android.com/tools/device.html]\n\
         AUTHING00001\tauthorizing\n",
    )
    .await;
    let dir = TempDir::new("fb13v");
    let data = dir.path().to_str().unwrap().to_string();
    let server2 = server.clone();
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        run_cli(&[
            "devices",
            "--json",
            "--data-dir",
            &data,
            "--adb-server",
            &server2,
        ])
    })
    .await
    .unwrap();
    assert_eq!(code, Some(0), "{out}{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).expect("devices --json");
    let state = |s: &str| {
        rows.iter()
            .find(|r| r["serial"] == s)
            .map(|r| r["state"].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(rows.len(), 6, "every line listed: {out}");
    assert_eq!(state("READY0000001"), "device", "{out}");
    assert_eq!(state("UNAUTH000001"), "unauthorized", "{out}");
    for s in ["NOPERM000001", "NOPERM000002", "NOPERM000003"] {
        assert_eq!(state(s), "no permissions", "{s}: {out}");
    }
    assert_eq!(state("AUTHING00001"), "authorizing", "{out}");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(server));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let ack = claim_once_listed(&mut x, &ch, "UNAUTH000001").await;
    assert_eq!(ack["error"]["code"], "device_unauthorized", "{ack}");
    assert!(
        message(&ack).to_lowercase().contains("allow"),
        "names the prompt: {ack}"
    );
    for s in ["NOPERM000001", "NOPERM000002", "NOPERM000003"] {
        let ack = claim_once_listed(&mut x, &ch, s).await;
        assert_eq!(ack["error"]["code"], "device_no_permissions", "{s}: {ack}");
        let m = message(&ack);
        assert!(m.contains("udev") && m.contains("plugdev"), "{s}: {m}");
        assert!(!m.contains("reconnect it"), "{s}: {m}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_14_variants_other_scales_and_a_rotated_scaled_frame() {
    let mut b = claimed_sim("SIMFB14V00001", &[]).await;
    // 1080x2400 → 360x800 (scale 3).
    let shot =
        b.x.tool(&b.ch, "android_screenshot", json!({"max_dimension": 800}))
            .await;
    let r = &shot["payload"]["result"];
    assert_eq!(frame_size(r), (Some(360), Some(800)), "{shot}");
    let ack = tap_in_screenshot(&mut b.x, &b.ch, (180, 400), &r["screenshot_id"]).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(b.sim.count_runs(&["input", "tap", "540", "1200"]), 1);
    let ack =
        b.x.tool(&b.ch, "android_swipe", json!({"x1": 100, "y1": 700, "x2": 100, "y2": 100, "screenshot_id": r["screenshot_id"]}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert!(
        b.sim.state()["command_log"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| {
                let a: Vec<&str> = e["argv"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                a.len() >= 6 && a[..6] == ["input", "swipe", "300", "2100", "300", "300"]
            }),
        "swipe scaled ×3"
    );
    // A scale that is not an integer: 1080x2400 → 486x1080 (×2.222…); (243, 540) is the centre.
    let shot =
        b.x.tool(&b.ch, "android_screenshot", json!({"max_dimension": 1080}))
            .await;
    let r = &shot["payload"]["result"];
    let ack = tap_in_screenshot(&mut b.x, &b.ch, (243, 540), &r["screenshot_id"]).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(
        b.sim.count_runs(&["input", "tap", "540", "1200"]),
        2,
        "{shot}"
    );
    // Rotated 270° and scaled: 2400x1080 → 1200x540.
    b.sim.control_post("/v1/state", json!({"rotation": 3}));
    let shot =
        b.x.tool(&b.ch, "android_screenshot", json!({"max_dimension": 1200}))
            .await;
    let r = &shot["payload"]["result"];
    assert_eq!(frame_size(r), (Some(1200), Some(540)), "{shot}");
    let ack = tap_in_screenshot(&mut b.x, &b.ch, (1000, 250), &r["screenshot_id"]).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(b.sim.count_runs(&["input", "tap", "2000", "500"]), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_15_variants_other_overrides() {
    let mut b = claimed_sim("SIMFB15V00001", &[]).await;
    for (size, w, h) in [("720x1600", 720u64, 1600u64), ("1440x3200", 1440, 3200)] {
        b.sim
            .control_post("/v1/state", json!({"override_size": size}));
        let st = b.x.tool(&b.ch, "android_device_status", json!({})).await;
        let d = &st["payload"]["result"]["display"];
        assert_eq!(
            (d["width"].as_u64(), d["height"].as_u64()),
            (Some(w), Some(h)),
            "{size}: {st}"
        );
        assert_eq!(d["physical"]["width"], 1080, "{size}: {st}");
        let ack =
            b.x.tool(&b.ch, "android_tap", json!({"x": w - 1, "y": h - 1}))
                .await;
        assert!(ack.get("error").is_none(), "{size}: {ack}");
        let ack =
            b.x.tool(&b.ch, "android_tap", json!({"x": w, "y": 1}))
                .await;
        assert_eq!(ack["error"]["code"], "out_of_bounds", "{size}: {ack}");
    }
    // Override and a quarter turn: the overridden size, swapped.
    b.sim.control_post(
        "/v1/state",
        json!({"override_size": "720x1600", "rotation": 1}),
    );
    let st = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    let d = &st["payload"]["result"]["display"];
    assert_eq!(
        (d["width"].as_u64(), d["height"].as_u64()),
        (Some(1600), Some(720)),
        "{st}"
    );
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 1599, "y": 719}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_16_and_17_variants_other_personas_and_apps() {
    for (serial, persona) in [
        ("SIMFB16V00002", "samsung-android13"),
        ("SIMFB16V00003", "emulator-android15"),
    ] {
        let mut b = claimed_sim_playing(serial, persona).await;
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^monkey", "stdout": "** SYS_KEYS has no physical keys but with factor 2.0%.\n", "exit_code": 251}),
        );
        for package in ["com.android.settings", "com.example.notes"] {
            let ack = launch_app(&mut b.x, &b.ch, package).await;
            assert!(ack.get("error").is_none(), "{persona} {package}: {ack}");
            let r = &ack["payload"]["result"];
            assert_eq!(r["verified"], true, "{persona} {package}: {r}");
            assert_eq!(r["foreground_package"], package, "{persona}: {r}");
        }
        let ack =
            b.x.tool(
                &b.ch,
                "android_app_launch",
                json!({"package": "com.example.tv"}),
            )
            .await;
        assert_eq!(
            ack["payload"]["result"]["launcher_category"], "leanback",
            "{persona}: {ack}"
        );
        assert_launch_refusals(&mut b.x, &b.ch, &b.sim, "com.android.shell", persona).await;
    }
    // Android 6 has no `cmd` (so no resolve-activity): the launcher activity comes from the
    // Activity Resolver Table of `dumpsys package PKG`; never monkey.
    let mut b = claimed_sim_playing("SIMFB16V00001", "legacy-android6").await;
    for (package, component, category) in [
        (
            "com.android.settings",
            "com.android.settings/com.android.settings.Settings",
            "launcher",
        ),
        (
            "com.example.tv",
            "com.example.tv/com.example.tv.TvMainActivity",
            "leanback",
        ),
    ] {
        let ack = launch_app(&mut b.x, &b.ch, package).await;
        assert!(ack.get("error").is_none(), "{package}: {ack}");
        let r = &ack["payload"]["result"];
        assert_eq!(r["component"], component, "{r}");
        assert_eq!(r["launcher_category"], category, "{r}");
        assert_eq!(r["verified"], true, "{r}");
        assert_eq!(b.sim.state()["foreground"], package, "{package}");
    }
    assert_eq!(
        b.sim.count_runs(&["dumpsys", "package", "com.example.tv"]),
        1
    );
    assert_launch_refusals(&mut b.x, &b.ch, &b.sim, "com.android.shell", "Android 6").await;
}

/// Android 6 behind Google adb 34 (its legacy shell: no exit status, stderr merged): the
/// `dumpsys package` launch path works through the server too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_16_variants_android6_launch_behind_adb34() {
    let mut b = adb_bench(
        "SIMFB16V00004",
        &["--persona", "legacy-android6", "--model", ""],
    )
    .await;
    for (package, category) in [
        ("com.example.notes", "launcher"),
        ("com.example.tv", "leanback"),
    ] {
        let ack = launch_app(&mut b.x, &b.ch, package).await;
        assert!(ack.get("error").is_none(), "{package}: {ack}");
        assert_eq!(
            ack["payload"]["result"]["launcher_category"], category,
            "{ack}"
        );
        assert_eq!(b.sim.state()["foreground"], package, "{package}");
    }
    assert_launch_refusals(
        &mut b.x,
        &b.ch,
        &b.sim,
        "com.android.systemui",
        "Android 6 behind adb 34",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_18_variants_other_battery_outputs() {
    let mut b = claimed_sim("SIMFB18V00001", &[]).await;
    for (name, dump) in [
        ("capacity before level", "Current Battery Service state:\n  AC powered: false\n  USB powered: true\n  Capacity level: 3\n  status: 2\n  level: 80\n  scale: 100\n"),
        ("scale 200", "Current Battery Service state:\n  AC powered: false\n  status: 2\n  level: 160\n  scale: 200\n"),
        ("updates stopped", "Current Battery Service state:\n  (UPDATES STOPPED -- use 'reset' to restart)\n  AC powered: false\n  level: 80\n  scale: 100\n"),
        ("motorola mod level first", "Current Battery Service state:\n  mod level: 10\n  mod status: 1\n  level: 80\n  scale: 100\n"),
        ("battery level key", "Current Battery Service state:\n  present: true\n  level: 80\n  scale: 100\n  Battery level: 5\n  charge counter: 3000000\n"),
    ] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^dumpsys battery$", "stdout": dump}),
        );
        let st = b.x.tool(&b.ch, "android_device_status", json!({})).await;
        assert_eq!(st["payload"]["result"]["battery_percent"], 80, "{name}: {st}");
        delete_scripts(&b.sim);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_19_variants_other_exit_codes() {
    let mut b = claimed_sim_playing("SIMFB19V00001", "legacy-android6").await;
    let link = xagent_adb_connector::adb::DeviceLink::direct(b.sim.addr.clone());
    let t = Duration::from_secs(5);
    for (line, code) in [
        ("'sh' '-c' 'exit 2'", 2),
        ("'sh' '-c' 'exit 42'", 42),
        ("'sh' '-c' 'exit 255'", 255),
        ("'sh' '-c' 'echo out; echo err >&2; exit 3'", 3),
        ("true", 0),
        ("printf 'no newline'; false", 1),
        ("'ls' '/nonexistent'", 1),
    ] {
        let out = link.shell(line, t, 1 << 16).await.unwrap();
        assert_eq!(out.exit_code, Some(code), "{line}: {:?}", out.stdout_text());
    }
    let out = link.shell("printf 'no newline'", t, 1 << 16).await.unwrap();
    assert_eq!(
        out.stdout_text(),
        "no newline",
        "the marker is not in the output"
    );
    // Through the tools: other failing input commands, other exit codes.
    for (regex, tool, args, code) in [
        (
            "^input swipe",
            "android_swipe",
            json!({"x1": 1, "y1": 1, "x2": 2, "y2": 2}),
            255,
        ),
        (
            "^input keyevent",
            "android_press_key",
            json!({"key": "home"}),
            2,
        ),
        (
            "^input text",
            "android_input_text",
            json!({"text": "abc"}),
            1,
        ),
    ] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": regex, "stdout": "Error: injection failed\n", "exit_code": code, "times": 1}),
        );
        let ack = b.x.tool(&b.ch, tool, args).await;
        assert!(ack.get("error").is_some(), "{tool}: {ack}");
        assert!(
            message(&ack).contains(&format!("exit {code}")),
            "{tool}: the real status: {ack}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_20_variants_other_steps_that_never_end() {
    let mut b = claimed_sim("SIMFB20V00001", &[]).await;
    for (regex, tool, args, step) in [
        (
            "^input swipe",
            "android_swipe",
            json!({"x1": 1, "y1": 1, "x2": 2, "y2": 2}),
            "input",
        ),
        ("^pm list packages", "android_app_list", json!({}), "pm"),
        (
            "^am force-stop",
            "android_app_stop",
            json!({"package": "com.example.notes"}),
            "am",
        ),
    ] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": regex, "hang": true, "times": 1}),
        );
        let ack = b.x.tool(&b.ch, tool, args).await;
        assert_eq!(ack["error"]["code"], "device_timeout", "{tool}: {ack}");
        assert!(message(&ack).contains(step), "{tool} names the step: {ack}");
        let ok =
            b.x.tool(&b.ch, "android_tap", json!({"x": 2, "y": 2}))
                .await;
        assert!(
            ok.get("error").is_none(),
            "{tool}: the channel stays usable: {ok}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_21_variants_text_that_ends_the_field_already() {
    let mut b = claimed_sim("SIMFB21V00001", &[]).await;
    focus_note(&mut b).await;
    for (present, typed) in [
        ("hello world", "world"),
        ("ab", "b"),
        ("x y", " y"),
        ("1.0", "0"),
    ] {
        b.sim
            .control_post("/v1/state", json!({"note_text": present}));
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^input text ", "times": 1}),
        );
        type_expecting_unverified(&mut b, present, typed).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_22_variants_other_display_dump_forms() {
    let mut b = claimed_sim_playing("SIMFB22V00001", "foldable-android14").await;
    // (what the dump lists: first, then second; the id of the display that is on; its size)
    let cases = [
        (
            "ON listed first",
            [(OUTER_DISPLAY, "ON"), (INNER_DISPLAY, "OFF")],
            OUTER_DISPLAY_ID,
            (1080, 2092),
        ),
        (
            "DOZE and ON",
            [(INNER_DISPLAY, "DOZE"), (OUTER_DISPLAY, "ON")],
            OUTER_DISPLAY_ID,
            (1080, 2092),
        ),
        (
            "mState only",
            [
                (INNER_DISPLAY_MSTATE_ONLY, "OFF"),
                (OUTER_DISPLAY_MSTATE_ONLY, "ON"),
            ],
            OUTER_DISPLAY_ID,
            (1080, 2092),
        ),
        (
            "inner ON, outer OFF",
            [(INNER_DISPLAY, "ON"), (OUTER_DISPLAY, "OFF")],
            INNER_DISPLAY_ID,
            (1840, 2208),
        ),
    ];
    for (name, [first, second], on, size) in cases {
        let dump = foldable_display_dump(first, second);
        let ack = screenshot_under_display_dump(&mut b, &dump).await;
        assert!(ack.get("error").is_none(), "{name}: {ack}");
        let r = &ack["payload"]["result"];
        assert_eq!(r["display"]["id"], on, "{name}: {r}");
        assert_eq!(display_size(r), (Some(size.0), Some(size.1)), "{name}: {r}");
        delete_scripts(&b.sim);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_23_variants_other_busy_texts() {
    let mut b = claimed_sim("SIMFB23V00001", &[]).await;
    for (stdout, stderr, exit_code) in [
        ("", "java.lang.RuntimeException: Error while connecting UiAutomation@4c6f3b1[id=-1, flags=0]\n\tat android.app.UiAutomation.connect(UiAutomation.java:259)\n", 1),
        ("Error: java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@9f2 already registered!\n", "", 255),
        ("", "Exception in thread \"main\" java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@77 already registered!\n", 0),
    ] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^uiautomator dump", "stdout": stdout, "stderr": stderr, "exit_code": exit_code, "times": 4}),
        );
        let from = log_len(&b.sim);
        let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
        assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
        let m = message(&ack);
        assert!(m.contains("reason: automation_busy"), "{stderr:?}{stdout:?}: {m}");
        assert!(m.contains("uiautomator2 or Appium"), "{m}");
        assert_eq!(programs_since(&b.sim, from).len(), 1, "one try: {m}");
        delete_scripts(&b.sim);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_24_variants_other_signals() {
    let mut b = claimed_sim("SIMFB24V00001", &[]).await;
    for (exit_code, stderr) in [
        (143, ""),
        (137, "Killed\n"),
        (139, "Segmentation fault\n"),
        (134, "Aborted\n"),
    ] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^uiautomator dump", "stderr": stderr, "exit_code": exit_code, "times": 4}),
        );
        let from = log_len(&b.sim);
        let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
        assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
        let m = message(&ack);
        assert!(m.contains("reason: killed"), "{exit_code}: {m}");
        assert!(m.contains(&format!("exit {exit_code}")), "{exit_code}: {m}");
        assert_eq!(
            programs_since(&b.sim, from).len(),
            1,
            "{exit_code}: not retried: {m}"
        );
        delete_scripts(&b.sim);
    }
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_25_variants_rotations_two_and_three() {
    let mut b = adb_bench("SIMFB25V00001", &[]).await;
    // Rotation 3 (270°): the screenshot's own frame is the tap's.
    b.sim.control_post("/v1/state", json!({"rotation": 3}));
    let shot = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    let r = &shot["payload"]["result"];
    assert_eq!(display_size(r), (Some(2400), Some(1080)), "{r}");
    let ack = tap_in_screenshot(&mut b.x, &b.ch, (2000, 500), &r["screenshot_id"]).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(b.sim.count_runs(&["input", "tap", "2000", "500"]), 1);
    // 3 → 1 (a half turn, same size): the rotation-3 screenshot is stale.
    b.sim.control_post("/v1/state", json!({"rotation": 1}));
    let ack = tap_in_screenshot(&mut b.x, &b.ch, (2000, 500), &r["screenshot_id"]).await;
    assert_eq!(ack["error"]["code"], "stale_snapshot", "{ack}");
    // A UI snapshot taken at rotation 2, used at 0.
    b.sim.control_post("/v1/state", json!({"rotation": 2}));
    let tree = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    let notes = find_text(&elements(&tree), "Notes").expect("Notes icon");
    b.sim.control_post("/v1/state", json!({"rotation": 0}));
    let ack = tap_element(&mut b.x, &b.ch, &notes).await;
    assert_eq!(ack["error"]["code"], "stale_snapshot", "{ack}");
    // A scroll with an old screenshot is refused too.
    let shot0 = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    b.sim.control_post("/v1/state", json!({"rotation": 3}));
    let ack = b.x.tool(&b.ch, "android_scroll", json!({"direction": "down", "x": 500, "y": 500, "screenshot_id": shot0["payload"]["result"]["screenshot_id"]})).await;
    assert_eq!(ack["error"]["code"], "stale_snapshot", "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_26_variants_other_usage_answers() {
    let mut b = claimed_sim_playing("SIMFB26V00001", "legacy-android6").await;
    let usage =
        "usage: pm list packages [-f] [-d] [-e] [-s] [-3] [-i] [-u] [--user USER_ID] [FILTER]\n";
    for (name, script) in [
        (
            "usage on stderr",
            json!({"command_regex": "^pm list packages -3$", "stderr": usage, "exit_code": 0}),
        ),
        (
            "unknown option then usage",
            json!({"command_regex": "^pm list packages -3$", "stdout": format!("Error: Unknown option: -3\n{usage}"), "exit_code": 0}),
        ),
        (
            "usage with exit 1",
            json!({"command_regex": "^pm list packages -3$", "stderr": usage, "exit_code": 1}),
        ),
        (
            "usage with a blank line first",
            json!({"command_regex": "^pm list packages -3$", "stdout": format!("\n{usage}"), "exit_code": 0}),
        ),
    ] {
        b.sim.control_post("/v1/script", script);
        let ack = b.x.tool(&b.ch, "android_app_list", json!({})).await;
        assert!(ack.get("error").is_none(), "{name}: {ack}");
        let packages = ack["payload"]["result"]["packages"]
            .as_array()
            .unwrap()
            .clone();
        assert!(
            packages.iter().any(|p| p["package"] == "com.example.notes"),
            "{name}: {ack}"
        );
        assert!(
            !packages
                .iter()
                .any(|p| p["package"] == "com.android.settings"),
            "{name}: {ack}"
        );
        delete_scripts(&b.sim);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_27_variants_other_not_up_texts_and_tools() {
    let mut b = claimed_sim("SIMFB27V00001", &[]).await;
    for (stdout, stderr, exit_code) in [
        (
            "Error: Could not access the Package Manager.  Is the system running?\n",
            "",
            0,
        ),
        (
            "",
            "cmd: Failure calling service package: Broken pipe (32)\n",
            255,
        ),
        ("", "Can't find service: package\n", 1),
    ] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^(pm|cmd package) ", "stdout": stdout, "stderr": stderr, "exit_code": exit_code}),
        );
        for (tool, args) in [
            ("android_app_list", json!({})),
            (
                "android_app_launch",
                json!({"package": "com.android.settings"}),
            ),
            ("android_app_stop", json!({"package": "com.example.notes"})),
        ] {
            let ack = b.x.tool(&b.ch, tool, args).await;
            assert_eq!(
                ack["error"]["code"], "device_booting",
                "{tool} {stdout:?}{stderr:?}: {ack}"
            );
            assert!(message(&ack).contains("retry"), "{ack}");
        }
        delete_scripts(&b.sim);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_29_variants_other_choosers() {
    let mut b = claimed_sim("SIMFB29V00001", &[]).await;
    for answer in [
        "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\ncom.huawei.android.internal.app/.HwResolverActivity\n",
        "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\nandroid/com.android.internal.app.ChooserActivity\n",
        "No activity found\n",
        "  ActivityInfo:\n    name=com.android.internal.app.ResolverActivity\n    packageName=android\n",
    ] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^cmd package resolve-activity .*com\\.example\\.notes$", "stdout": answer}),
        );
        b.sim.control_post("/v1/state", json!({"foreground": "com.android.settings"}));
        let from = log_len(&b.sim);
        let ack =
            tool_on_notes(&mut b, "android_app_launch")
                .await;
        assert!(ack.get("error").is_none(), "{answer:?}: {ack}");
        let r = &ack["payload"]["result"];
        assert!(r["component"].as_str().unwrap_or("").starts_with("com.example.notes/"), "{answer:?}: {ack}");
        assert_eq!(r["verified"], true, "{answer:?}: {r}");
        let log = b.sim.state()["command_log"].as_array().unwrap()[from..].to_vec();
        assert!(
            !log.iter().any(|e| e["argv"].to_string().contains("ResolverActivity") || e["argv"].to_string().contains("ChooserActivity")),
            "{answer:?}: {log:?}"
        );
        delete_scripts(&b.sim);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_30_variants_other_sdks_and_refusals() {
    // Android 13 (SDK 33): --pid is used and filters.
    let mut b = claimed_sim_playing("SIMFB30V00001", "samsung-android13").await;
    let (ack, pid) = logcat_of_notes_in_front(&mut b).await;
    assert_only_lines_of(&ack, pid, "Android 13");
    // SDK 24+ that still refuses --pid with other texts: filtered on the host.
    for refusal in [
        "logcat: unrecognized option '--pid=1234'\nUsage: logcat [options] [filterspecs]\n",
        "logcat: invalid option -- -\n",
        "Unrecognized Option\n",
    ] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^logcat .*--pid", "stderr": refusal, "exit_code": 1}),
        );
        let ack = tool_on_notes(&mut b, "android_logcat").await;
        assert!(ack.get("error").is_none(), "{refusal:?}: {ack}");
        assert_only_lines_of(&ack, pid, refusal);
        delete_scripts(&b.sim);
    }
    // An Android 6 logcat on a phone that says SDK 24 (Android 7.0 boundary): its refusal of
    // --pid is read, the filter done on the host.
    let mut b = claimed_sim_playing("SIMFB30V00002", "legacy-android6").await;
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^getprop ro.build.version.sdk$", "stdout": "24\n"}),
    );
    let (ack, pid) = logcat_of_notes_in_front(&mut b).await;
    assert_only_lines_of(&ack, pid, "Android 6 saying SDK 24");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_31_variants_other_lies() {
    let mut b = claimed_sim("SIMFB31V00001", &[]).await;
    let (_, pid) = logcat_of_notes_in_front(&mut b).await;
    for (stdout, stderr, exit_code) in [
        ("999999\n", "", 0),
        ("", "", 1),
        ("", "/system/bin/sh: pidof: not found\n", 127),
        ("1\n", "", 0),
    ] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^pidof ", "stdout": stdout, "stderr": stderr, "exit_code": exit_code}),
        );
        let ack = tool_on_notes(&mut b, "android_logcat").await;
        assert!(ack.get("error").is_none(), "{stdout:?}{stderr:?}: {ack}");
        assert_eq!(
            ack["payload"]["result"]["pid"], pid,
            "{stdout:?}{stderr:?}: {ack}"
        );
        assert!(log_pids(&ack).iter().all(|p| *p == pid.to_string()));
        delete_scripts(&b.sim);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_32_variants_other_refusal_texts_and_tools() {
    let mut b = claimed_sim("SIMFB32V00001", &[]).await;
    focus_note(&mut b).await;
    for (stdout, stderr, exit_code, line) in [
        ("", "java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS permission\n\tat android.os.Parcel.readException(Parcel.java:1599)\n", 1, "Injecting to another application requires INJECT_EVENTS"),
        ("Error: java.lang.SecurityException: Injecting input events requires the caller (or the source of the instrumentation, if any) to have the INJECT_EVENTS permission.\n", "", 0, "Injecting input events requires"),
        ("\n\n", "Exception occurred while executing 'tap':\njava.lang.SecurityException: Injecting input events requires the caller (or the source of the instrumentation, if any) to have the INJECT_EVENTS permission.\n", 255, "java.lang.SecurityException"),
    ] {
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^input ", "stdout": stdout, "stderr": stderr, "exit_code": exit_code}),
        );
        for (tool, args) in [
            ("android_swipe", json!({"x1": 1, "y1": 1, "x2": 2, "y2": 2})),
            ("android_input_text", json!({"text": "abc"})),
            ("android_long_press", json!({"x": 5, "y": 5})),
        ] {
            let ack = b.x.tool(&b.ch, tool, args).await;
            assert_eq!(ack["error"]["code"], "device_permission_denied", "{tool}: {ack}");
            let m = message(&ack);
            assert!(m.contains(line), "{tool}: quotes the line: {m}");
            assert!(m.contains("USB debugging (Security settings)"), "{tool}: {m}");
        }
        delete_scripts(&b.sim);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_33_variants_other_serial_oddities() {
    let serials = [
        "GS000000000002 ",
        "  GS000000000003",
        "GS 0000000004",
        "gs-05.local_x",
    ];
    let (sims, adb) = sims_behind_adb34(&serials);
    let dir = TempDir::new("fb33v");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    for (i, sim) in sims.iter().enumerate() {
        let (ch, _) = x.open(None).await;
        let ack = claim_when_visible(&mut x, &ch, serials[i]).await;
        assert_eq!(
            ack["payload"]["status"], "authenticated",
            "{:?}: {ack}",
            serials[i]
        );
        let ack = x.tool(&ch, "android_device_status", json!({})).await;
        assert!(ack.get("error").is_none(), "{:?}: {ack}", serials[i]);
        let ack = x.tool(&ch, "android_screenshot", json!({})).await;
        assert!(ack.get("error").is_none(), "{:?}: {ack}", serials[i]);
        let y = (10 + i).to_string();
        let ack = x
            .tool(&ch, "android_tap", json!({"x": 3, "y": 10 + i}))
            .await;
        assert!(ack.get("error").is_none(), "{:?}: {ack}", serials[i]);
        assert_eq!(
            sim.count_runs(&["input", "tap", "3", &y]),
            1,
            "{:?}",
            serials[i]
        );
    }
    // Trimmed forms name no phone.
    let (ch, _) = x.open(None).await;
    for trimmed in ["GS000000000002", "GS000000000003"] {
        let ack = x.claim(&ch, trimmed).await;
        assert_eq!(ack["error"]["code"], "auth_failed", "{trimmed}: {ack}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_34_variants_every_tool_and_a_new_claim_while_the_server_is_gone() {
    let mut b = adb_bench("SIMFB34V00001", &[]).await;
    b.adb.run(&["kill-server"]);
    for (tool, args) in [
        ("android_tap", json!({"x": 1, "y": 1})),
        ("android_screenshot", json!({})),
        ("android_ui_tree", json!({})),
        ("android_app_list", json!({})),
    ] {
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        loop {
            let ack = b.x.tool(&b.ch, tool, args.clone()).await;
            let code = ack["error"]["code"].as_str().unwrap_or("ok").to_string();
            assert_ne!(code, "device_offline", "{tool}: {ack}");
            if code == "adb_server_unavailable" {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{tool}: {ack}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    // A claim made while the server is gone is told so, not "no attached phone".
    let (ch2, _) = b.x.open(None).await;
    let ack = b.x.claim(&ch2, "SIMFB34V00002").await;
    assert_eq!(ack["error"]["code"], "adb_server_unavailable", "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_reach_one_command_inside_pipelines_and_compound_lines() {
    let b = claimed_sim("SIMSCRV000001", &[]).await;
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^getprop ro.product.model$", "stdout": "Scripted Model\n", "exit_code": 3}),
    );
    let link = xagent_adb_connector::adb::DeviceLink::direct(b.sim.addr.clone());
    let t = Duration::from_secs(5);
    let run = |line: &'static str| {
        let link = link.clone();
        async move { link.shell(line, t, 1 << 16).await.unwrap() }
    };
    assert_eq!(
        run("'getprop' 'ro.product.model' | cat")
            .await
            .stdout_text(),
        "Scripted Model\n"
    );
    assert_eq!(
        run("'getprop' 'ro.product.model' | wc -c")
            .await
            .stdout_text()
            .trim(),
        "15"
    );
    assert_eq!(
        run("echo a && getprop ro.product.model; echo rc=$?")
            .await
            .stdout_text(),
        "a\nScripted Model\nrc=3\n"
    );
    assert_eq!(
        run("getprop ro.product.model && echo not-run || echo failed")
            .await
            .stdout_text(),
        "Scripted Model\nfailed\n"
    );
    assert_eq!(
        run("x=$(getprop ro.product.model); echo \"[$x]\"")
            .await
            .stdout_text(),
        "[Scripted Model]\n"
    );
    assert_eq!(
        run("getprop ro.product.model 2>&1 >/dev/null | wc -l")
            .await
            .stdout_text()
            .trim(),
        "0"
    );
    // Another command on the line is not answered by the script.
    let brand = run("getprop ro.product.brand").await.stdout_text();
    assert!(
        !brand.trim().is_empty() && !brand.contains("Scripted"),
        "{brand:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_20_variants_a_capture_that_never_ends() {
    let mut b = claimed_sim("SIMFB20V00002", &[]).await;
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^screencap", "hang": true, "times": 1}),
    );
    let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert_eq!(ack["error"]["code"], "device_timeout", "{ack}");
    assert!(message(&ack).contains("screencap"), "names the step: {ack}");
    let ok = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert!(ok.get("error").is_none(), "the channel stays usable: {ok}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_21_variants_the_ime_drops_the_text() {
    let mut b = claimed_sim("SIMFB21V00002", &[]).await;
    b.sim
        .control_post("/v1/state", json!({"adb_keyboard": true}));
    focus_note(&mut b).await;
    for (present, typed) in [("日本", "本"), ("Тест", "ст")] {
        b.sim
            .control_post("/v1/state", json!({"note_text": present}));
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^am broadcast -a ADB_INPUT_B64", "stdout": "Broadcasting: Intent { act=ADB_INPUT_B64 flg=0x400000 (has extras) }\nBroadcast completed: result=0\n", "times": 1}),
        );
        // The selected keyboard left the field as it was: since round 3 that is row 40's typed
        // error (decided from the read-back and the bound IME), never a success — the text
        // already present is still not taken for the typed one.
        let ack =
            b.x.tool(&b.ch, "android_input_text", json!({"text": typed}))
                .await;
        assert_eq!(
            ack["error"]["code"], "unsupported_text",
            "{present:?}+{typed:?}: {ack}"
        );
        assert!(message(&ack).contains("ADBKeyboard"), "{ack}");
        assert_eq!(b.sim.state()["note_text"], present);
        delete_scripts(&b.sim);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_29_variants_another_apps_activity_is_not_the_apps() {
    let mut b = claimed_sim("SIMFB29V00002", &[]).await;
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^cmd package resolve-activity .*LAUNCHER com\\.example\\.notes$",
               "stdout": "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\ncom.android.settings/.Settings\n"}),
    );
    let ack = tool_on_notes(&mut b, "android_app_launch").await;
    assert!(ack.get("error").is_none(), "{ack}");
    let r = &ack["payload"]["result"];
    assert!(
        r["component"]
            .as_str()
            .unwrap_or("")
            .starts_with("com.example.notes/"),
        "{ack}"
    );
    assert_eq!(r["foreground_package"], "com.example.notes", "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_12_variants_a_phone_that_revokes_the_key_mid_session() {
    let mut b = claimed_sim("SIMFB12V00002", &[]).await;
    b.sim
        .control_post("/v1/transport", json!({"state": "unauthorized"}));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let ack = loop {
        let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
        if ack["error"]["code"] == "device_unauthorized" || std::time::Instant::now() > deadline {
            break ack;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(ack["error"]["code"], "device_unauthorized", "{ack}");
    assert!(!message(&ack).is_empty(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_22_variants_no_display_on() {
    let mut b = claimed_sim_playing("SIMFB22V00002", "foldable-android14").await;
    let dump = foldable_display_dump((INNER_DISPLAY, "OFF"), (OUTER_DISPLAY, "OFF"));
    let ack = screenshot_under_display_dump(&mut b, &dump).await;
    assert!(ack.get("error").is_none(), "{ack}");
    let r = &ack["payload"]["result"];
    assert_eq!(r["display"]["chosen_by"], "first_listed", "{r}");
    assert!(r["display"]["id"].is_string(), "{r}");
}
