//! Field bugs of round 3 about the phone's state (`docs/field-bugs.md`, rows 48, 49, 52, 53):
//! the lock screen, a system service that is not up, and several displays. Each row replays
//! the phone's behaviour on the simulated phone (`POST /v1/state`, scripts) and drives the
//! connector's tools over the WebSocket, behind Google adb 34 or over the direct transport;
//! the variants replay the same kind with other Android releases, lock types and layouts.

mod common;

use serde_json::{json, Value};

use common::procs::SimPhone;
use common::scenario::{adb_bench, claimed_sim};
use common::xagent::XAgent;

/// `sim_flags` for a persona (its own model name reported).
fn persona(name: &str) -> [&str; 4] {
    ["--persona", name, "--model", ""]
}

fn code(ack: &Value) -> &str {
    ack["error"]["code"].as_str().unwrap_or("")
}

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

fn result(ack: &Value) -> &Value {
    &ack["payload"]["result"]
}

/// Asserts the call succeeded; its result.
fn ok(ack: &Value) -> &Value {
    assert!(ack.get("error").is_none(), "{ack}");
    result(ack)
}

/// The sentence every `device_locked` answer opens with (docs/protocol.md).
const LOCKED: &str =
    "the lock screen is showing: wake and unlock the phone, or swipe up on a swipe lock";

/// The argv of every program run since the command log's entry `from`.
fn runs_since(sim: &SimPhone, from: usize) -> Vec<Vec<String>> {
    sim.state()["command_log"].as_array().unwrap()[from..]
        .iter()
        .map(|e| {
            e["argv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap_or("").to_string())
                .collect()
        })
        .collect()
}

/// Whether `argv` acts on the screen: injects input, starts or stops activities.
fn acts(argv: &[String]) -> bool {
    let prog = argv.first().map_or("", String::as_str);
    let service = argv.get(1).map_or("", String::as_str);
    matches!(prog, "input" | "am" | "monkey")
        || (prog == "cmd" && matches!(service, "input" | "activity"))
}

fn log_len(sim: &SimPhone) -> usize {
    sim.state()["command_log"].as_array().map_or(0, Vec::len)
}

/// `POST /v1/state` that must be accepted.
fn set_state(sim: &SimPhone, patch: Value) {
    assert_eq!(sim.control_post("/v1/state", patch.clone()), 200, "{patch}");
}

/// Asserts `ack` is `device_locked` opening with [`LOCKED`] and that nothing but reads ran on
/// the phone since `from` (no `input`, `am`, `cmd input|activity` acting on the lock screen).
fn assert_refused_locked(sim: &SimPhone, from: usize, ack: &Value) {
    assert_eq!(code(ack), "device_locked", "{ack}");
    assert!(message(ack).starts_with(LOCKED), "{ack}");
    let ran = runs_since(sim, from);
    assert!(!ran.iter().any(|a| acts(a)), "only reads ran: {ran:?}");
}

/// `android_tap` at (`px`, `py`), display px; the ack.
async fn tap_at(x: &mut XAgent, ch: &str, px: u32, py: u32) -> Value {
    x.tool(ch, "android_tap", json!({"x": px, "y": py})).await
}

/// `android_app_launch` of the sim's Notes app; the ack.
async fn launch_notes(x: &mut XAgent, ch: &str) -> Value {
    x.tool(
        ch,
        "android_app_launch",
        json!({"package": "com.example.notes"}),
    )
    .await
}

/// `android_device_status`; the ack.
async fn device_status(x: &mut XAgent, ch: &str) -> Value {
    x.tool(ch, "android_device_status", json!({})).await
}

/// Swipes from near the bottom to near the top of a 1080x2400 display: what dismisses a
/// swipe lock.
async fn swipe_up(x: &mut XAgent, ch: &str) -> Value {
    x.tool(
        ch,
        "android_swipe",
        json!({"x1": 540, "y1": 2100, "x2": 540, "y2": 500}),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_48_lock_screen_is_reported_and_acting_tools_refuse() {
    let mut b = adb_bench("SIMFB48000001", &[]).await;
    set_state(&b.sim, json!({"locked": true, "screen_on": true}));
    let status = device_status(&mut b.x, &b.ch).await;
    let r = ok(&status);
    assert_eq!(r["locked"], true, "{r}");
    assert_eq!(r["lock_secure"], false, "a swipe lock: {r}");
    assert_eq!(r["screen_on"], true, "{r}");

    let from = log_len(&b.sim);
    let tap = tap_at(&mut b.x, &b.ch, 540, 1200).await;
    assert_refused_locked(&b.sim, from, &tap);
    assert!(message(&tap).contains("swipe lock (no PIN)"), "{tap}");
    let from = log_len(&b.sim);
    let launch = launch_notes(&mut b.x, &b.ch).await;
    assert!(
        launch["payload"]["result"]["verified"].is_null(),
        "{launch}"
    );
    assert_refused_locked(&b.sim, from, &launch);
    assert_ne!(b.sim.state()["foreground"], "com.example.notes");

    // What the message says unlocks it: wake, then a swipe up (the swipe runs on the lock
    // screen and says so).
    ok(&b
        .x
        .tool(&b.ch, "android_press_key", json!({"key": "wake"}))
        .await);
    let swipe = swipe_up(&mut b.x, &b.ch).await;
    assert_eq!(ok(&swipe)["lock_screen"], true, "{swipe}");
    assert_eq!(b.sim.state()["locked"], false);
    let status = device_status(&mut b.x, &b.ch).await;
    assert_eq!(ok(&status)["locked"], false);
    let tap = tap_at(&mut b.x, &b.ch, 540, 1200).await;
    ok(&tap);
    assert_eq!(b.sim.count_runs(&["input", "tap", "540", "1200"]), 1);
    let launch = launch_notes(&mut b.x, &b.ch).await;
    assert_eq!(ok(&launch)["verified"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_48_variants_every_acting_tool_refuses_and_observers_run() {
    let mut b = claimed_sim("SIMFB48V00001", &[]).await;
    set_state(&b.sim, json!({"locked": true}));
    let refused = [
        ("android_tap", json!({"x": 100, "y": 100})),
        ("android_long_press", json!({"x": 100, "y": 100})),
        ("android_double_tap", json!({"x": 100, "y": 100})),
        ("android_scroll", json!({"direction": "down"})),
        ("android_input_text", json!({"text": "hello"})),
        (
            "android_app_launch",
            json!({"package": "com.example.notes"}),
        ),
        ("android_open_url", json!({"url": "https://example.com/"})),
    ];
    for (tool, args) in refused {
        let from = log_len(&b.sim);
        let ack = b.x.tool(&b.ch, tool, args).await;
        assert_refused_locked(&b.sim, from, &ack);
    }
    // Observing, waking and the unlock gesture still work on the lock screen.
    for (tool, args) in [
        ("android_device_status", json!({})),
        ("android_screenshot", json!({})),
        ("android_ui_tree", json!({})),
        ("android_press_key", json!({"key": "wake"})),
    ] {
        let ack = b.x.tool(&b.ch, tool, args).await;
        assert!(
            ack.get("error").is_none(),
            "{tool} on the lock screen: {ack}"
        );
    }
    assert_eq!(b.sim.count_runs(&["input", "text", "hello"]), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_48_variants_pin_lock_on_android15_and_the_descriptor() {
    let mut b = claimed_sim("SIMFB48V00002", &persona("emulator-android15")).await;
    // Android 15 prints no `secure=` in its policy dump: while unlocked the lock type is not
    // readable, and is not guessed.
    set_state(&b.sim, json!({"lock_secure": true}));
    let status = device_status(&mut b.x, &b.ch).await;
    let r = ok(&status);
    assert_eq!(
        (r["locked"].clone(), r["lock_secure"].clone()),
        (json!(false), Value::Null),
        "{r}"
    );
    assert!(r["unavailable"]
        .as_array()
        .unwrap()
        .contains(&json!("lock_secure")));

    set_state(&b.sim, json!({"locked": true}));
    let status = device_status(&mut b.x, &b.ch).await;
    let r = ok(&status);
    assert_eq!(r["locked"], true, "{r}");
    assert_eq!(r["lock_secure"], true, "dumpsys trust deviceLocked=1: {r}");
    // The descriptor follows: the acting tools are unavailable, the unlock path is not.
    let push =
        b.x.wait_push("connection.descriptor.push", 10)
            .await
            .expect("a descriptor push when the lock screen came up");
    let d = &push["payload"]["connection_descriptor"];
    assert_eq!(d["connection"]["status"], "degraded", "{d}");
    let tool = |id: &str| {
        d["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["tool_id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} in {d}"))
    };
    for id in ["android_tap", "android_input_text", "android_app_launch"] {
        let t = tool(id);
        assert_eq!(t["status"], "unavailable", "{t}");
        assert!(t["reason"].as_str().unwrap().starts_with(LOCKED), "{t}");
    }
    for id in ["android_press_key", "android_swipe", "android_screenshot"] {
        assert_eq!(tool(id)["status"], "available", "{id}");
    }

    let from = log_len(&b.sim);
    let tap = tap_at(&mut b.x, &b.ch, 100, 100).await;
    assert_refused_locked(&b.sim, from, &tap);
    assert!(message(&tap).contains("PIN, pattern or password"), "{tap}");
    // A swipe up only brings up the PIN pad: still locked.
    let swipe = swipe_up(&mut b.x, &b.ch).await;
    assert_eq!(ok(&swipe)["lock_screen"], true);
    assert_eq!(b.sim.state()["locked"], true);
    // The user unlocks it; the next reading brings the tools back.
    set_state(&b.sim, json!({"locked": false}));
    ok(&b.x.tool(&b.ch, "android_screenshot", json!({})).await);
    let push =
        b.x.wait_push("connection.descriptor.push", 10)
            .await
            .expect("a descriptor push when the lock screen went");
    assert_eq!(
        push["payload"]["connection_descriptor"]["connection"]["status"],
        "connected"
    );
    ok(&tap_at(&mut b.x, &b.ch, 100, 100).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_48_variants_android6_policy_dump_and_samsung_android13() {
    // Android 6 has no DisplayPolicy in its display dump: the keyguard is read from the
    // policy section (`mShowingLockscreen`, `KeyguardServiceDelegate`), in the same round trip.
    let mut b = adb_bench("SIMFB48V00003", &persona("legacy-android6")).await;
    set_state(&b.sim, json!({"locked": true}));
    let status = device_status(&mut b.x, &b.ch).await;
    assert_eq!(ok(&status)["locked"], true, "{status}");
    let from = log_len(&b.sim);
    let tap = tap_at(&mut b.x, &b.ch, 100, 100).await;
    assert_refused_locked(&b.sim, from, &tap);
    set_state(&b.sim, json!({"locked": false}));
    ok(&tap_at(&mut b.x, &b.ch, 100, 100).await);
    assert_eq!(b.sim.count_runs(&["input", "tap", "100", "100"]), 1);

    let mut s = claimed_sim("SIMFB48V00004", &persona("samsung-android13")).await;
    set_state(&s.sim, json!({"locked": true, "lock_secure": true}));
    let status = device_status(&mut s.x, &s.ch).await;
    let r = ok(&status);
    assert_eq!(
        (r["locked"].clone(), r["lock_secure"].clone()),
        (json!(true), json!(true)),
        "{r}"
    );
    let from = log_len(&s.sim);
    let ack =
        s.x.tool(&s.ch, "android_scroll", json!({"direction": "down"}))
            .await;
    assert_refused_locked(&s.sim, from, &ack);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_48_variants_screen_off_and_locked() {
    let mut b = claimed_sim("SIMFB48V00005", &[]).await;
    set_state(&b.sim, json!({"locked": true, "screen_on": false}));
    let status = device_status(&mut b.x, &b.ch).await;
    let r = ok(&status);
    assert_eq!(
        (r["screen_on"].clone(), r["locked"].clone()),
        (json!(false), json!(true))
    );
    let from = log_len(&b.sim);
    let tap = tap_at(&mut b.x, &b.ch, 100, 100).await;
    assert_refused_locked(&b.sim, from, &tap);
    let m = message(&tap);
    assert!(
        m.contains("the screen is off") && m.contains("\"wake\""),
        "{m}"
    );
    // A dark screen without a lock is refused too, and says only to wake it.
    set_state(&b.sim, json!({"locked": false}));
    let tap = tap_at(&mut b.x, &b.ch, 100, 100).await;
    assert_eq!(code(&tap), "device_locked", "{tap}");
    assert!(message(&tap).starts_with("the screen is off"), "{tap}");
    ok(&b
        .x
        .tool(&b.ch, "android_press_key", json!({"key": "wake"}))
        .await);
    ok(&tap_at(&mut b.x, &b.ch, 100, 100).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_48_variants_a_launch_is_never_verified_behind_the_lock_screen() {
    let mut b = claimed_sim("SIMFB48V00006", &[]).await;
    // A reading that found the phone unlocked, then the lock screen comes up: whether the
    // launch is refused before `am start` (reading too old) or seen behind the lock while
    // verifying, it is device_locked, never verified.
    ok(&device_status(&mut b.x, &b.ch).await);
    set_state(&b.sim, json!({"locked": true}));
    let launch = launch_notes(&mut b.x, &b.ch).await;
    assert_eq!(code(&launch), "device_locked", "{launch}");
    assert!(launch["payload"]["result"].is_null(), "{launch}");
}

/// The services of row 49's phone that are not up.
fn services_down(sim: &SimPhone, names: &[&str]) {
    set_state(sim, json!({"services_down": names}));
}

/// Asserts `device_booting` naming `service`, never a readiness condition that holds already.
fn assert_booting(ack: &Value, service: &str) {
    assert_eq!(code(ack), "device_booting", "{ack}");
    let m = message(ack);
    assert!(m.contains(&format!("`{service}`")), "names {service}: {m}");
    assert!(!m.contains("boot_completed"), "{m}");
    assert!(!m.contains("could not read the display size"), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_49_a_service_not_up_is_device_booting_naming_it() {
    let mut b = adb_bench("SIMFB49000001", &[]).await;
    services_down(&b.sim, &["window", "input"]);
    let status = device_status(&mut b.x, &b.ch).await;
    assert_booting(&status, "window");
    let tap = tap_at(&mut b.x, &b.ch, 540, 1200).await;
    assert_booting(&tap, "window");
    for tool in ["android_screenshot", "android_ui_tree"] {
        let ack = b.x.tool(&b.ch, tool, json!({})).await;
        assert_booting(&ack, "window");
    }
    // The window service came up, input not yet: the tap names input.
    services_down(&b.sim, &["input"]);
    let tap = tap_at(&mut b.x, &b.ch, 540, 1200).await;
    assert_booting(&tap, "input");
    services_down(&b.sim, &[]);
    ok(&device_status(&mut b.x, &b.ch).await);
    ok(&tap_at(&mut b.x, &b.ch, 540, 1200).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_49_variants_other_services_and_the_readiness_they_name() {
    let mut b = claimed_sim("SIMFB49V00001", &[]).await;
    for (down, tool, args) in [
        ("power", "android_device_status", json!({})),
        (
            "activity",
            "android_app_launch",
            json!({"package": "com.example.notes"}),
        ),
        (
            "package",
            "android_app_launch",
            json!({"package": "com.example.notes"}),
        ),
        (
            "window",
            "android_swipe",
            json!({"x1": 1, "y1": 1, "x2": 2, "y2": 2}),
        ),
        ("window", "android_input_text", json!({"text": "hi"})),
    ] {
        services_down(&b.sim, &[down]);
        let ack = b.x.tool(&b.ch, tool, args).await;
        assert_booting(&ack, down);
        // The readiness named is the service's own, which does not hold yet on the phone.
        let check = b.sim.control_json("/v1/state", json!({}));
        assert_eq!(check["services_down"], json!([down]));
        assert!(
            message(&ack).contains(&format!("`service check {down}`")),
            "{ack}"
        );
    }
    // A service the status only adds to (trust: lock_secure) is optional.
    services_down(&b.sim, &["trust"]);
    let status = device_status(&mut b.x, &b.ch).await;
    assert_eq!(ok(&status)["locked"], false);
}

/// A `dumpsys window displays` block in Android 12+'s layout (AOSP `DisplayContent.dump`).
fn display_block(id: u32, size: &str, focus: &str) -> String {
    format!(
        "  Display: mDisplayId={id} rootTasks=1\n    init={size} 420dpi cur={size} app={size} rng=1x1-1x1\n\n  mCurrentFocus={focus}\n  mFocusedApp=null\n\n  DisplayPolicy\n    mAwake=true mScreenOnEarly=true mScreenOnFully=true\n    isKeyguardShowing=false\n\n  DisplayRotation\n    mRotation=0 mDeferredRotationPauseCount=0\n\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_52_another_display_listed_before_display_0() {
    let mut b = adb_bench("SIMFB52000001", &[]).await;
    set_state(
        &b.sim,
        json!({"extra_displays": [{"id": 62, "width": 1080, "height": 1920, "listed_first": true}]}),
    );
    let tap = tap_at(&mut b.x, &b.ch, 540, 2200).await;
    let r = ok(&tap);
    assert_eq!(r["display"], json!({"width": 1080, "height": 2400}), "{r}");
    assert_eq!(b.sim.count_runs(&["input", "tap", "540", "2200"]), 1);
    let status = device_status(&mut b.x, &b.ch).await;
    assert_eq!(ok(&status)["display"]["height"], 2400);
    let shot = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert_eq!(ok(&shot)["display"]["height"], 2400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_52_variants_many_displays_rotation_and_old_layouts() {
    let mut b = claimed_sim("SIMFB52V00001", &[]).await;
    set_state(
        &b.sim,
        json!({"extra_displays": [
            {"id": 2, "width": 800, "height": 600, "listed_first": true},
            {"id": 62, "width": 1080, "height": 1920, "listed_first": true},
            {"id": 5, "width": 640, "height": 480}
        ], "rotation": 1}),
    );
    // Display 0 rotated: 2400x1080, whatever the others say.
    ok(&tap_at(&mut b.x, &b.ch, 2300, 1000).await);
    let out = tap_at(&mut b.x, &b.ch, 100, 1100).await;
    assert_eq!(code(&out), "out_of_bounds", "{out}");
    assert!(message(&out).contains("y in 0..=1079"), "{out}");
    let swipe =
        b.x.tool(
            &b.ch,
            "android_swipe",
            json!({"x1": 2300, "y1": 500, "x2": 100, "y2": 500}),
        )
        .await;
    ok(&swipe);
    // A scripted dump as another build lays it out: display 62 first, display 0 last.
    set_state(&b.sim, json!({"rotation": 0, "extra_displays": []}));
    let dump = format!(
        "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n{}{}",
        display_block(62, "1080x1920", "null"),
        display_block(
            0,
            "1080x2400",
            "Window{1 u0 com.example.notes/com.example.notes.MainActivity}"
        )
    );
    assert_eq!(
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^dumpsys window displays$", "stdout": dump})
        ),
        200
    );
    ok(&tap_at(&mut b.x, &b.ch, 540, 2200).await);
    assert_eq!(b.sim.count_runs(&["input", "tap", "540", "2200"]), 1);

    // Android 6's blocks (no rootTasks, no policy) with a display before display 0.
    let mut old = claimed_sim("SIMFB52V00002", &persona("legacy-android6")).await;
    set_state(
        &old.sim,
        json!({"extra_displays": [{"id": 3, "width": 480, "height": 320, "listed_first": true}]}),
    );
    let tap = tap_at(&mut old.x, &old.ch, 10, 900).await;
    assert!(
        ok(&tap)["display"]["height"].as_u64().unwrap() > 320,
        "{tap}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_53_the_default_displays_focus_whatever_block_comes_first() {
    let mut b = adb_bench("SIMFB53000001", &persona("foldable-android14")).await;
    // The row as reported: no mTopFocusedDisplayId, display 1's block (SubHomeActivity) first.
    let dump = format!(
        "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n{}{}",
        display_block(
            1,
            "1080x2092",
            "Window{a1 u0 com.android.systemui/com.android.systemui.SubHomeActivity}"
        ),
        display_block(
            0,
            "1840x2208",
            "Window{b2 u0 jp.naver.line.android/jp.naver.line.android.activity.SplashActivity}"
        )
    );
    assert_eq!(
        b.sim.control_post(
            "/v1/script",
            json!({"command_regex": "^dumpsys window$", "stdout": dump, "times": 1})
        ),
        200
    );
    let status = device_status(&mut b.x, &b.ch).await;
    let r = ok(&status);
    assert_eq!(r["foreground_package"], "jp.naver.line.android", "{r}");
    assert_eq!(r["display"]["width"], 1840, "{r}");
    // The sim's own dump with display 1 focused on its sub-home, listed first.
    set_state(
        &b.sim,
        json!({"foreground": "com.example.notes", "extra_displays": [{"id": 1, "width": 1080, "height": 2092, "focus": "com.android.systemui/.SubHomeActivity", "listed_first": true}]}),
    );
    let status = device_status(&mut b.x, &b.ch).await;
    assert_eq!(ok(&status)["foreground_package"], "com.example.notes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_53_variants_top_focus_elsewhere_and_launch_verification() {
    let mut b = claimed_sim("SIMFB53V00001", &[]).await;
    // Display 2 first, with the top focus: display 0's app still answers.
    let dump = format!(
        "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n{}{}  mTopFocusedDisplayId=2\n",
        display_block(
            2,
            "1920x1080",
            "Window{c3 u0 com.example.cast/com.example.cast.Presenter}"
        ),
        display_block(
            0,
            "1080x2400",
            "Window{d4 u0 com.android.settings/com.android.settings.Settings}"
        )
    );
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^dumpsys window$", "stdout": dump, "times": 1}),
    );
    let status = device_status(&mut b.x, &b.ch).await;
    assert_eq!(ok(&status)["foreground_package"], "com.android.settings");
    // Display 0 with a null focus: its focused app, not display 2's window.
    let dump = format!(
        "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n{}  Display: mDisplayId=0 rootTasks=1\n    init=1080x2400 420dpi cur=1080x2400 app=1080x2400\n  mCurrentFocus=null\n  mFocusedApp=ActivityRecord{{e5 u0 com.example.notes/.MainActivity t11}}\n",
        display_block(2, "1920x1080", "Window{c3 u0 com.example.cast/com.example.cast.Presenter}")
    );
    b.sim.control_post(
        "/v1/script",
        json!({"command_regex": "^dumpsys window$", "stdout": dump, "times": 1}),
    );
    let status = device_status(&mut b.x, &b.ch).await;
    assert_eq!(ok(&status)["foreground_package"], "com.example.notes");
    // A launch is verified on display 0 while another display's sub-home is listed first.
    set_state(
        &b.sim,
        json!({"extra_displays": [{"id": 1, "width": 1080, "height": 2092, "focus": "com.android.systemui/.SubHomeActivity", "listed_first": true}]}),
    );
    let launch = launch_notes(&mut b.x, &b.ch).await;
    assert_eq!(ok(&launch)["foreground_package"], "com.example.notes");
}
