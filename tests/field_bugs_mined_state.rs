//! Mined field rows about the phone's state (issue 19 §2; `docs/field-bugs.md`, "Mined rows"):
//! the foreground when the windows section has no focus line (61), a crash or ANR dialog
//! holding the focus after a launch (79), an unauthorized phone that cannot show the prompt
//! (80), lock task mode (81), battery values overridden from the shell (82). Each row replays
//! what the phone printed (the fixtures under `tests/fixtures/`, scripts, or sim behaviour with
//! its source in `docs/sim.md`) and drives the connector's tools over the WebSocket, behind
//! Google adb 34 or over the direct transport; the variants replay the same kind with another
//! release, build or place in the flow.

mod common;

use serde_json::{json, Value};

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::{adb_bench, claimed_sim, elements, find_text, DirectSim};
use common::xagent::{connect, XAgent};

fn code(ack: &Value) -> &str {
    ack["error"]["code"].as_str().unwrap_or("")
}

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

/// Asserts the call succeeded; its result.
fn ok(ack: &Value) -> &Value {
    assert!(ack.get("error").is_none(), "{ack}");
    &ack["payload"]["result"]
}

/// `POST /v1/state` that must be accepted.
fn set_state(sim: &SimPhone, patch: Value) {
    assert_eq!(sim.control_post("/v1/state", patch.clone()), 200, "{patch}");
}

/// A script that must be accepted: `command_regex` answers `stdout` (exit 0), `times` times.
fn script(sim: &SimPhone, command_regex: &str, stdout: &str, times: u32) {
    let body = json!({"command_regex": command_regex, "stdout": stdout, "times": times});
    assert_eq!(sim.control_post("/v1/script", body), 200);
}

async fn tool(x: &mut XAgent, ch: &str, id: &str, args: Value) -> Value {
    x.tool(ch, id, args).await
}

async fn status(x: &mut XAgent, ch: &str) -> Value {
    let ack = x.tool(ch, "android_device_status", json!({})).await;
    ok(&ack).clone()
}

async fn launch(x: &mut XAgent, ch: &str, package: &str) -> Value {
    x.tool(ch, "android_app_launch", json!({ "package": package }))
        .await
}

/// Taps the element whose text is `text` in a fresh UI tree (the dialog's buttons).
async fn tap_text(x: &mut XAgent, ch: &str, text: &str) {
    let tree = x.tool(ch, "android_ui_tree", json!({})).await;
    let el = find_text(&elements(&tree), text).unwrap_or_else(|| panic!("{text} in {tree}"));
    let ack = x
        .tool(
            ch,
            "android_tap",
            json!({"element_id": el["element_id"], "snapshot_id": tree["payload"]["result"]["snapshot_id"]}),
        )
        .await;
    ok(&ack);
}

const NOTES: &str = "com.example.notes";
/// `sim_flags` of the Android 6 persona (its own model name).
const ANDROID6: [&str; 4] = ["--persona", "legacy-android6", "--model", ""];

// ---- 61: the foreground when the windows section prints no focus line -------------------

/// The Android 11–13 captures of `dumpsys window windows` (no `mCurrentFocus` anywhere).
const A11_WINDOWS: &str =
    include_str!("fixtures/window/appium-android11-emulator-dumpsys-window-windows.txt");
const A13_WINDOWS: &str =
    include_str!("fixtures/window/appium-android13-emulator-dumpsys-window-windows.txt");
/// The row's own captures: the reported `Window #25` block (its view GONE) and the TCL TV's
/// grep line.
const BILI_BLOCK: &str = include_str!(
    "fixtures/window/android13-14-dumpsys-window-windows-window-block-no-mcurrentfocus-PARTIAL.txt"
);
const TCL_LINE: &str =
    include_str!("fixtures/window/tcl-androidtv11-grep-focus-empty-window1-line.txt");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_61_foreground_from_the_window_list_when_no_focus_line_is_printed() {
    let mut b = adb_bench("SIMFB61000001", &[]).await;
    // The phone's `dumpsys window` is only its windows section, as captured on Android 13.
    script(&b.sim, "^dumpsys window$", A13_WINDOWS, 1);
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(
        r["foreground_package"], "com.google.android.apps.nexuslauncher",
        "{r}"
    );
    // The reported block alone: a window whose view is GONE is not the foreground (nothing
    // is claimed); the same block under a shown one of the same app (reconstructed: the
    // reporter elided the windows above #25) answers with the shown one.
    script(&b.sim, "^dumpsys window$", BILI_BLOCK, 1);
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(r["foreground_package"], Value::Null, "{r}");
    assert!(r["unavailable"]
        .as_array()
        .unwrap()
        .contains(&json!("foreground_package")));
    let shown = BILI_BLOCK
        .replace("Window #25", "Window #24")
        .replace("c838dbe", "c838dbf")
        .replace("mViewVisibility=0x8", "mViewVisibility=0x0");
    script(
        &b.sim,
        "^dumpsys window$",
        &format!("WINDOW MANAGER WINDOWS (dumpsys window windows)\n{shown}{BILI_BLOCK}"),
        1,
    );
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(r["foreground_package"], "tv.danmaku.bili", "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_61_variants_launch_secure_window_tv_line_and_android6() {
    // The sim's Android 14 windows section has no focus line either (as the captures): a
    // launch verified from the window list alone (the activity dump says nothing here).
    let mut b = claimed_sim("SIMFB61V00001", &[]).await;
    script(
        &b.sim,
        "^dumpsys activity activities$",
        "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n",
        100,
    );
    let ack = launch(&mut b.x, &b.ch, NOTES).await;
    assert_eq!(ok(&ack)["verified"], true, "{ack}");
    // The same fault elsewhere: FLAG_SECURE of the focused window (field bug 8) is read from
    // the window list on Android 11+.
    set_state(&b.sim, json!({"secure_window": true}));
    let shot = tool(&mut b.x, &b.ch, "android_screenshot", json!({})).await;
    assert_eq!(ok(&shot)["secure_window"], true, "{shot}");
    // The TCL TV's grep line: a window list of one line names the foreground.
    script(&b.sim, "^dumpsys window$", TCL_LINE, 1);
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(
        r["foreground_package"], "com.google.android.youtube.tv",
        "{r}"
    );
    // Android 6 still prints the focus line in the windows section; the list agrees.
    let mut old = adb_bench("SIMFB61V00002", &ANDROID6).await;
    let ack = launch(&mut old.x, &old.ch, NOTES).await;
    assert_eq!(ok(&ack)["verified"], true, "{ack}");
    assert_eq!(
        status(&mut old.x, &old.ch).await["foreground_package"],
        NOTES
    );
}

// ---- 79: a crash or ANR dialog holds the focus after a launch -----------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_79_crash_dialog_after_a_launch_is_app_crashed() {
    let mut b = adb_bench("SIMFB79000001", &[]).await;
    set_state(&b.sim, json!({"app_faults": {NOTES: "crash"}}));
    let ack = launch(&mut b.x, &b.ch, NOTES).await;
    assert_eq!(code(&ack), "app_crashed", "{ack}");
    let m = message(&ack);
    assert!(
        m.starts_with("com.example.notes crashed")
            && m.contains("Application Error: com.example.notes")
            && m.contains("Close app")
            && m.contains("not verified"),
        "{m}"
    );
    // The status reports the dialog and the app under it (Notes died: the launcher).
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(
        r["app_dialog"],
        json!({"kind": "crash", "package": NOTES, "process": NOTES}),
        "{r}"
    );
    assert_eq!(r["foreground_package"], b.sim.state()["foreground"], "{r}");
    assert_ne!(r["foreground_package"], NOTES);
    // The message's way out: "Close app" on the dialog, then the screen is the app's again.
    tap_text(&mut b.x, &b.ch, "Close app").await;
    assert_eq!(b.sim.state()["app_dialog"], Value::Null);
    assert_eq!(status(&mut b.x, &b.ch).await["app_dialog"], Value::Null);
    set_state(&b.sim, json!({"app_faults": {}}));
    assert_eq!(ok(&launch(&mut b.x, &b.ch, NOTES).await)["verified"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_79_variants_anr_captures_another_process_and_android6() {
    // ANR: the activity stays resumed under the dialog; never verified.
    let mut b = claimed_sim("SIMFB79V00001", &[]).await;
    set_state(&b.sim, json!({"app_faults": {NOTES: "anr"}}));
    let ack = launch(&mut b.x, &b.ch, NOTES).await;
    assert_eq!(code(&ack), "app_not_responding", "{ack}");
    assert!(message(&ack).contains("\"Wait\""), "{ack}");
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(r["app_dialog"]["kind"], "not_responding", "{r}");
    assert_eq!(
        r["foreground_package"], NOTES,
        "the app under the dialog: {r}"
    );
    tap_text(&mut b.x, &b.ch, "Wait").await;
    assert_eq!(b.sim.state()["foreground"], NOTES, "Wait keeps the app");
    assert_eq!(status(&mut b.x, &b.ch).await["app_dialog"], Value::Null);
    // Another process's dialog (a secondary process) over the launched app.
    set_state(
        &b.sim,
        json!({"app_faults": {}, "app_dialog": {"kind": "anr", "process": "com.android.deskclock:alarm"}}),
    );
    let ack = launch(&mut b.x, &b.ch, "com.android.settings").await;
    assert_eq!(code(&ack), "app_not_responding", "{ack}");
    assert!(
        message(&ack).starts_with("com.android.deskclock:alarm (another app) is not responding"),
        "{ack}"
    );
    // The reported focus line, and the Android 11 capture's ANR dialog of System UI.
    script(
        &b.sim,
        "^dumpsys window$",
        include_str!("fixtures/install-launch/crash-dialog-focus-application-error.txt"),
        1,
    );
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(
        r["app_dialog"]["package"], "dev.jasonpearson.automobile.ctrlproxy",
        "{r}"
    );
    script(&b.sim, "^dumpsys window$", A11_WINDOWS, 1);
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(
        (&r["app_dialog"]["kind"], &r["app_dialog"]["package"]),
        (&json!("not_responding"), &json!("com.android.systemui")),
        "{r}"
    );
    assert_eq!(
        r["foreground_package"], "com.google.android.apps.nexuslauncher",
        "{r}"
    );
    // Android 6: the focus line of the windows section names the dialog.
    let mut old = adb_bench("SIMFB79V00002", &ANDROID6).await;
    set_state(&old.sim, json!({"app_faults": {NOTES: "crash"}}));
    assert_eq!(
        code(&launch(&mut old.x, &old.ch, NOTES).await),
        "app_crashed"
    );
    // Back dismisses the crash dialog (it is cancelable).
    let key = tool(
        &mut old.x,
        &old.ch,
        "android_press_key",
        json!({"key": "back"}),
    )
    .await;
    ok(&key);
    assert_eq!(old.sim.state()["app_dialog"], Value::Null);
}

// ---- 80: unauthorized, and the phone cannot show the prompt -----------------------------

/// The words every no-prompt remedy carries: the TV path and the kiosk path.
fn names_the_no_prompt_cases(m: &str) {
    assert!(
        m.contains("Network debugging is switched off and on")
            && m.contains("kiosk (lock task) mode"),
        "{m}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_80_unauthorized_network_phone_behind_adb_34_names_the_no_prompt_cases() {
    // A phone that never accepts the key over the network (no prompt: the Shield's case).
    let sim = SimPhone::start_with_control("SIMFB80000001", &[]);
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "unauthorized"})),
        200
    );
    let adb = AdbServer::start(AdbFlavor::Google34);
    // What the reporter's adb printed, from Google adb 34 against the sim.
    let first = adb.run(&["connect", &sim.addr]);
    let said = String::from_utf8_lossy(&first.stdout).to_string();
    assert!(
        said.contains(&format!("failed to authenticate to {}", sim.addr)),
        "{said}"
    );
    let listed = String::from_utf8_lossy(&adb.run(&["devices"]).stdout).to_string();
    assert!(
        listed.contains(&format!("{}\tunauthorized", sim.addr)),
        "{listed}"
    );
    let dir = TempDir::new("fb80");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let mut x = connect(&conn.addr).await;
    x.hello_fresh().await;
    let (ch, _) = x.open(None).await;
    let mut ack = Value::Null;
    for _ in 0..75 {
        ack = x.claim(&ch, &sim.addr).await;
        if code(&ack) == "device_unauthorized" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(code(&ack), "device_unauthorized", "{ack}");
    names_the_no_prompt_cases(&message(&ack));
    assert!(
        message(&ack).contains("Allow USB debugging?"),
        "the route's own fix stays: {ack}"
    );
}

/// A direct phone claimed while it answered, then refusing the key (unplugged, then AUTH never
/// accepted): the revoked push, then the tool call's `device_unauthorized`.
async fn refuse_key_after(b: &mut DirectSim) -> Value {
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "unplugged"})),
        200
    );
    b.x.wait_push("connection.descriptor.push", 10)
        .await
        .expect("offline push");
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "unauthorized"})),
        200
    );
    for _ in 0..30 {
        let push = b.x.wait_push("connection.descriptor.push", 20).await;
        let status = push
            .as_ref()
            .map(|p| p["payload"]["connection_descriptor"]["connection"]["status"].clone());
        if status == Some(json!("revoked")) {
            break;
        }
    }
    b.x.tool(&b.ch, "android_device_status", json!({})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_80_variants_a_known_tv_or_kiosk_leads_the_remedy() {
    // An Android TV build seen while it answered (ro.build.characteristics lists `tv`).
    let mut tv = claimed_sim("SIMFB80V00001", &[]).await;
    script(
        &tv.sim,
        "^getprop$",
        "[ro.build.characteristics]: [tv]\n[ro.product.manufacturer]: [NVIDIA]\n[ro.product.model]: [SHIELD Android TV]\n[ro.build.version.release]: [11]\n[ro.build.version.sdk]: [30]\n",
        1,
    );
    status(&mut tv.x, &tv.ch).await;
    let ack = refuse_key_after(&mut tv).await;
    assert_eq!(code(&ack), "device_unauthorized", "{ack}");
    let m = message(&ack);
    assert!(m.starts_with("this device is an Android TV build"), "{m}");
    assert!(
        !m.contains("adb connect"),
        "a direct phone: no box-side adb fix: {m}"
    );
    // A device seen in lock task mode (a kiosk): the prompt cannot show over it.
    let mut kiosk = claimed_sim("SIMFB80V00002", &[]).await;
    set_state(
        &kiosk.sim,
        json!({"lock_task": {"mode": "locked", "package": "com.android.settings"}}),
    );
    assert_eq!(status(&mut kiosk.x, &kiosk.ch).await["lock_task"], "locked");
    let ack = refuse_key_after(&mut kiosk).await;
    assert!(
        message(&ack).starts_with("this device was in lock task mode"),
        "{ack}"
    );
    // Nothing learned (a phone never read): the route's remedy alone, naming both cases.
    let mut plain = claimed_sim("SIMFB80V00003", &[]).await;
    let ack = refuse_key_after(&mut plain).await;
    assert_eq!(code(&ack), "device_unauthorized", "{ack}");
    let m = message(&ack);
    assert!(
        m.starts_with("the phone has not accepted this host's ADB key"),
        "{m}"
    );
    names_the_no_prompt_cases(&m);
}

// ---- 81: lock task mode ----------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_81_lock_task_mode_refuses_other_apps_with_device_lock_task() {
    let mut b = adb_bench("SIMFB81000001", &[]).await;
    set_state(
        &b.sim,
        json!({"lock_task": {"mode": "locked", "package": "com.android.settings"}}),
    );
    let ack = launch(&mut b.x, &b.ch, NOTES).await;
    assert_eq!(code(&ack), "device_lock_task", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("a kiosk keeps com.android.settings in front")
            && m.contains("com.example.notes/")
            && m.contains("was refused")
            && m.contains("leave kiosk mode"),
        "{m}"
    );
    assert_eq!(b.sim.state()["foreground"], "com.android.settings");
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(
        (&r["lock_task"], &r["lock_task_package"]),
        (&json!("locked"), &json!("com.android.settings")),
        "{r}"
    );
    // A link is another app too; the kiosk app itself still launches.
    let url = tool(
        &mut b.x,
        &b.ch,
        "android_open_url",
        json!({"url": "https://example.com/"}),
    )
    .await;
    assert_eq!(code(&url), "device_lock_task", "{url}");
    assert!(!message(&url).contains("example.com"), "{url}");
    let own = launch(&mut b.x, &b.ch, "com.android.settings").await;
    assert_eq!(ok(&own)["verified"], true, "{own}");
    set_state(&b.sim, json!({"lock_task": null}));
    assert_eq!(status(&mut b.x, &b.ch).await["lock_task"], "none");
    assert_eq!(ok(&launch(&mut b.x, &b.ch, NOTES).await)["verified"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_81_variants_pinning_on_android6_other_streams_and_codes() {
    // Screen pinning on Android 6: code 5 and the TaskRecord form.
    let mut old = adb_bench("SIMFB81V00001", &ANDROID6).await;
    set_state(
        &old.sim,
        json!({"lock_task": {"mode": "pinned", "package": NOTES}}),
    );
    let ack = launch(&mut old.x, &old.ch, "com.android.settings").await;
    assert_eq!(code(&ack), "device_lock_task", "{ack}");
    assert!(
        message(&ack).starts_with("the screen is pinned to com.example.notes (screen pinning)"),
        "{ack}"
    );
    let r = status(&mut old.x, &old.ch).await;
    assert_eq!(r["lock_task"], "pinned", "{r}");
    // Home does nothing while pinned (the sim keeps the app; the key itself is sent).
    ok(&tool(
        &mut old.x,
        &old.ch,
        "android_press_key",
        json!({"key": "home"}),
    )
    .await);
    assert_eq!(old.sim.state()["foreground"], NOTES);

    // The reported line on stdout with another exit status, the state not readable: 101 alone
    // says lock task on every release that prints it.
    let mut b = claimed_sim("SIMFB81V00002", &[]).await;
    let fixture = include_str!(
        "fixtures/device-state/lineageos11-echo-show5-lock-task-am-start-error-101.txt"
    );
    let line = fixture.lines().last().unwrap();
    let body = json!({"command_regex": "^am start", "stdout": format!("Starting: Intent {{ cmp=com.example.notes/.MainActivity }}\n{line}\n"), "exit_code": 255, "times": 1});
    assert_eq!(b.sim.control_post("/v1/script", body), 200);
    script(&b.sim, "^dumpsys activity activities$", "", 1);
    let ack = launch(&mut b.x, &b.ch, NOTES).await;
    assert_eq!(code(&ack), "device_lock_task", "{ack}");
    assert!(message(&ack).starts_with("the device is in lock task mode (kiosk or screen pinning)"));
    // Code 5 on a phone that reads NONE is not a lock task refusal: the phone's words.
    let body = json!({"command_regex": "^am start", "stderr": "Error: Activity not started, unknown error code 5\n", "times": 1});
    assert_eq!(b.sim.control_post("/v1/script", body), 200);
    let ack = launch(&mut b.x, &b.ch, NOTES).await;
    assert_eq!(code(&ack), "device_command_failed", "{ack}");
    assert!(message(&ack).contains("unknown error code 5"), "{ack}");
}

// ---- 82: battery values overridden from the shell ----------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_82_overridden_battery_level_is_flagged_never_capped() {
    let mut b = adb_bench("SIMFB82000001", &[]).await;
    let shell = |cmd: &str| {
        let out = b.adb.run(&["-s", &b.sim.addr, "shell", cmd]);
        assert!(out.status.success(), "{cmd}: {out:?}");
    };
    shell("dumpsys battery set level 999");
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(r["battery_percent"], Value::Null, "{r}");
    assert_eq!(r["battery_overridden"], true, "{r}");
    assert!(r["unavailable"]
        .as_array()
        .unwrap()
        .contains(&json!("battery_percent")));
    let note = r["notes"][0].as_str().unwrap_or("");
    assert!(
        note.contains("battery level 999 is outside 0..=100")
            && note.contains("dumpsys battery reset"),
        "{r}"
    );
    shell("dumpsys battery set level 15");
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(
        (&r["battery_percent"], &r["battery_overridden"]),
        (&json!(15), &json!(true))
    );
    shell("dumpsys battery reset");
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(
        (&r["battery_percent"], &r["battery_overridden"]),
        (&json!(80), &json!(false))
    );
    assert_eq!(r["notes"], json!([]), "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_82_variants_unplug_other_scale_and_android6() {
    let mut b = claimed_sim("SIMFB82V00001", &ANDROID6).await;
    // `unplug` overrides the power sources, not the level: flagged, level kept.
    script(
        &b.sim,
        "^dumpsys battery$",
        "Current Battery Service state:\n  (UPDATES STOPPED -- use 'reset' to restart)\n  AC powered: false\n  USB powered: false\n  Wireless powered: false\n  status: 3\n  health: 2\n  present: true\n  level: 64\n  scale: 100\n",
        1,
    );
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(
        (&r["battery_percent"], &r["battery_overridden"]),
        (&json!(64), &json!(true))
    );
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap_or("")
            .contains("UPDATES STOPPED"),
        "{r}"
    );
    // Another scale, the level above it, not overridden: null, never 100.
    script(
        &b.sim,
        "^dumpsys battery$",
        "Current Battery Service state:\n  AC powered: true\n  level: 250\n  scale: 200\n",
        1,
    );
    let r = status(&mut b.x, &b.ch).await;
    assert_eq!(
        (&r["battery_percent"], &r["battery_overridden"]),
        (&Value::Null, &json!(false))
    );
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap_or("")
            .contains("250 is outside 0..=200"),
        "{r}"
    );
}
