//! End to end for the gesture, wait, orientation, recording and shell tools: real binary, real
//! WebSocket, simulated phone (direct transport), the phone's command log as the witness; and one
//! pass of each through a private Google adb 34 server.

mod common;

use std::time::Duration;

use serde_json::{json, Value};

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::{claimed_channel, elements, find_text};
use common::xagent::{http_get, XAgent};

fn ok(ack: &Value) -> &Value {
    assert!(ack.get("error").is_none(), "{ack}");
    &ack["payload"]["result"]
}

/// `android_wait_for` with `args` (condition, selector, `timeout_ms`, `interval_ms`), asserted to
/// succeed; its result (`satisfied`, `polls`, `elapsed_ms`, `element`).
async fn wait_for(x: &mut XAgent, ch: &str, args: Value) -> Value {
    ok(&x.tool(ch, "android_wait_for", args).await).clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gestures_wait_and_orientation_on_the_phone() {
    let sim = SimPhone::start_with_control("SIMGEST000001", &[]);
    let dir = TempDir::new("gest");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    ok(&x
        .tool(
            &ch,
            "android_long_press",
            json!({"x": 100, "y": 200, "duration_ms": 900}),
        )
        .await);
    assert_eq!(
        sim.count_runs(&["input", "swipe", "100", "200", "100", "200", "900"]),
        1
    );
    ok(&x
        .tool(&ch, "android_double_tap", json!({"x": 30, "y": 40}))
        .await);
    assert_eq!(sim.count_runs(&["input", "tap", "30", "40"]), 2);
    ok(&x
        .tool(
            &ch,
            "android_swipe",
            json!({"x1": 500, "y1": 1800, "x2": 500, "y2": 600}),
        )
        .await);
    assert_eq!(
        sim.count_runs(&["input", "swipe", "500", "1800", "500", "600", "300"]),
        1
    );
    let r = ok(&x
        .tool(&ch, "android_scroll", json!({"direction": "down"}))
        .await)
    .clone();
    assert!(
        r["from"][1].as_i64() > r["to"][1].as_i64(),
        "down = finger moves up: {r}"
    );
    // Element ids belong to their snapshot.
    let tree = x.tool(&ch, "android_ui_tree", json!({})).await;
    let snap = ok(&tree)["snapshot_id"].as_str().unwrap().to_string();
    let notes = find_text(&elements(&tree), "Notes").unwrap();
    x.tool(&ch, "android_ui_tree", json!({})).await;
    let stale = x
        .tool(
            &ch,
            "android_tap",
            json!({"element_id": notes["element_id"], "snapshot_id": snap}),
        )
        .await;
    assert_eq!(stale["error"]["code"], "stale_snapshot");
    let missing = x
        .tool(&ch, "android_tap", json!({"text": "No Such Button"}))
        .await;
    assert_eq!(missing["error"]["code"], "element_not_found");
    // wait_for: appears after a tap, stable, disappears after home.
    ok(&x.tool(&ch, "android_tap", json!({"text": "Notes"})).await);
    let w = wait_for(&mut x, &ch, json!({"condition": "appears", "resource_id": "com.example.notes:id/note_text", "timeout_ms": 3000})).await;
    assert_eq!(w["satisfied"], true, "{w}");
    let w = wait_for(
        &mut x,
        &ch,
        json!({"condition": "stable", "timeout_ms": 3000, "interval_ms": 100}),
    )
    .await;
    assert_eq!(w["satisfied"], true, "{w}");
    ok(&x
        .tool(&ch, "android_press_key", json!({"key": "home"}))
        .await);
    let w = wait_for(&mut x, &ch, json!({"condition": "disappears", "resource_id": "com.example.notes:id/note_text", "timeout_ms": 3000})).await;
    assert_eq!(w["satisfied"], true, "{w}");
    let w = wait_for(&mut x, &ch, json!({"condition": "appears", "text": "Never There", "timeout_ms": 600, "interval_ms": 200})).await;
    assert_eq!(w["satisfied"], false, "a timeout says what it saw: {w}");
    assert!(
        w["elapsed_ms"].as_u64().unwrap() >= 600,
        "polled up to the timeout: {w}"
    );
    // A timeout shorter than the interval still polls at the timeout, not only at the start
    // (fresh-user finding: `timeout_ms: 300` answered after one poll, `elapsed_ms: 0`).
    let w = wait_for(
        &mut x,
        &ch,
        json!({"condition": "appears", "text": "Never There", "timeout_ms": 300}),
    )
    .await;
    assert_eq!(w["polls"], 2, "{w}");
    assert!(w["elapsed_ms"].as_u64().unwrap() >= 300, "{w}");
    // Orientation: landscape swaps the input space.
    ok(&x
        .tool(
            &ch,
            "android_set_orientation",
            json!({"orientation": "landscape"}),
        )
        .await);
    let st = ok(&x.tool(&ch, "android_device_status", json!({})).await).clone();
    assert_eq!(
        (
            st["display"]["width"].as_u64(),
            st["display"]["height"].as_u64()
        ),
        (Some(2400), Some(1080)),
        "{st}"
    );
    let ack = x
        .tool(&ch, "android_tap", json!({"x": 2000, "y": 500}))
        .await;
    ok(&ack);
    ok(&x
        .tool(
            &ch,
            "android_set_orientation",
            json!({"orientation": "portrait"}),
        )
        .await);
}

/// Key names are read in any case, with or without `KEYCODE_`, Android's own names included;
/// an unknown or empty key is `invalid_arguments` listing every valid name (fresh-user findings).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn press_key_names_in_any_case_and_an_unknown_key_lists_the_valid_ones() {
    let sim = SimPhone::start_with_control("SIMKEYS000001", &[]);
    let dir = TempDir::new("keys");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    for (asked, name, code) in [
        ("HOME", "home", "3"),
        ("KEYCODE_BACK", "back", "4"),
        ("keycode_app_switch", "recents", "187"),
        ("Volume_Up", "volume_up", "24"),
    ] {
        let r = ok(&x
            .tool(&ch, "android_press_key", json!({"key": asked}))
            .await)
        .clone();
        assert_eq!(r["key"], name, "{asked}: {r}");
        assert_eq!(sim.count_runs(&["input", "keyevent", code]), 1, "{asked}");
    }
    let before = sim.state()["command_log"].as_array().unwrap().len();
    // An empty key too (fresh-user finding: the schema's "shorter than 1 character" named none).
    for asked in ["self_destruct", "KEYCODE_", "keycode_a", "", "  "] {
        let ack = x
            .tool(&ch, "android_press_key", json!({"key": asked}))
            .await;
        assert_eq!(ack["error"]["code"], "invalid_arguments", "{ack}");
        let m = ack["error"]["message"].as_str().unwrap();
        for valid in ["home", "back", "recents", "dpad_center", "select_all"] {
            assert!(m.contains(valid), "{m}");
        }
        assert!(m.contains("/key"), "names the field: {m}");
    }
    assert_eq!(
        sim.state()["command_log"].as_array().unwrap().len(),
        before,
        "nothing ran for an unknown key"
    );
}

/// A `display_id` the phone does not have is `invalid_arguments` naming the displays it has
/// (fresh-user finding: it read "screencap did not return a valid PNG"); argv stays one word, and
/// the id asked for is never repeated in the message (fresh-user finding 9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_display_id_names_the_displays_the_phone_has() {
    let sim = SimPhone::start_with_control("SIMDISP000001", &[]);
    let dir = TempDir::new("disp");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    for id in [json!(9), json!("0; touch /sdcard/pwned"), json!("x;reboot")] {
        let ack = x
            .tool(&ch, "android_screenshot", json!({"display_id": id}))
            .await;
        assert_eq!(ack["error"]["code"], "invalid_arguments", "{ack}");
        let m = ack["error"]["message"].as_str().unwrap();
        assert!(
            m.contains("/display_id") && m.contains("its displays"),
            "{m}"
        );
        if let Some(s) = id.as_str() {
            assert!(
                !m.contains(s) && !m.contains("reboot") && !m.contains("pwned"),
                "echoed: {m}"
            );
        }
    }
    assert_eq!(sim.count_runs(&["touch"]), 0);
    // An unknown element_id is not repeated either.
    ok(&x.tool(&ch, "android_ui_tree", json!({})).await);
    let ack = x
        .tool(&ch, "android_tap", json!({"element_id": "zz;reboot"}))
        .await;
    assert_eq!(ack["error"]["code"], "element_not_found", "{ack}");
    let m = ack["error"]["message"].as_str().unwrap();
    assert!(m.contains("element_id") && !m.contains("zz;reboot"), "{m}");
    let ok_shot = x.tool(&ch, "android_screenshot", json!({})).await;
    assert!(ok_shot["error"].is_null(), "{ok_shot}");
}

/// Keys an old phone's `input` ignores (exit 0, nothing pressed) are refused with the SDK they
/// need, before anything is sent (fresh-user finding: `select_all` "succeeded" on Android 6);
/// keys it has still work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_newer_than_the_phone_are_refused_with_the_sdk_they_need() {
    let sim = SimPhone::start_with_control("SIMKEYS000006", &["--persona", "legacy-android6"]);
    let dir = TempDir::new("keys6");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    for (asked, sdk) in [("select_all", "33"), ("paste", "24")] {
        let ack = x
            .tool(&ch, "android_press_key", json!({"key": asked}))
            .await;
        assert_eq!(ack["error"]["code"], "device_command_failed", "{ack}");
        let m = ack["error"]["message"].as_str().unwrap();
        assert!(m.contains(sdk) && m.contains("23"), "{m}");
    }
    assert_eq!(sim.count_runs(&["input", "keycombination"]), 0);
    assert_eq!(sim.count_runs(&["input", "keyevent", "279"]), 0);
    let r = ok(&x
        .tool(&ch, "android_press_key", json!({"key": "home"}))
        .await)
    .clone();
    assert_eq!(r["key"], "home");
    assert_eq!(sim.count_runs(&["input", "keyevent", "3"]), 1);
}

/// `wm size` without its `Physical size:` line (a phone that printed only the override):
/// `display.physical` is `null` and named in `unavailable` (fresh-user finding: it was null
/// without a word); the input-space size still comes from `dumpsys window`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn device_status_names_a_missing_physical_size() {
    let sim = SimPhone::start_with_control("SIMSTAT000002", &[]);
    let dir = TempDir::new("status-physical");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    let status = sim.control_post(
        "/v1/script",
        json!({"command_regex": "^wm size$", "stdout": "Override size: 720x1600\n"}),
    );
    assert_eq!(status, 200);
    let st = ok(&x.tool(&ch, "android_device_status", json!({})).await).clone();
    assert_eq!(st["display"]["physical"], Value::Null, "{st}");
    assert_eq!(st["display"]["override"]["width"], 720, "{st}");
    assert!(st["display"]["width"].is_u64(), "{st}");
    assert_eq!(st["unavailable"], json!(["display.physical"]), "{st}");
}

/// A status section the phone leaves empty or garbles gives `null` fields named in
/// `unavailable`, never empty strings; a phone that reports nothing at all is
/// `device_command_failed` (fresh-user finding). The sim's scripts empty one command each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn device_status_names_what_it_could_not_read_and_fails_when_nothing_was() {
    let sim = SimPhone::start_with_control("SIMSTAT000001", &[]);
    let dir = TempDir::new("status");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    let st = ok(&x.tool(&ch, "android_device_status", json!({})).await).clone();
    assert_eq!(st["unavailable"], json!([]), "{st}");
    assert_eq!(st["model"], "Pixel 8", "{st}");
    // `getprop` prints nothing: the four properties are null, the rest still read.
    let status = sim.control_post(
        "/v1/script",
        json!({"command_regex": "^getprop$", "stdout": ""}),
    );
    assert_eq!(status, 200);
    let st = ok(&x.tool(&ch, "android_device_status", json!({})).await).clone();
    for field in ["model", "manufacturer", "android_release", "sdk"] {
        assert_eq!(st[field], Value::Null, "{field}: {st}");
    }
    assert_eq!(
        st["unavailable"],
        json!(["model", "manufacturer", "android_release", "sdk"]),
        "{st}"
    );
    assert!(st["battery_percent"].is_u64(), "{st}");
    assert!(st["display"]["width"].is_u64(), "{st}");
    // A garbled `dumpsys battery` joins them (a battery service that is not running at all is
    // `device_booting` naming it: field bug 49, tests/field_bugs_state.rs).
    sim.control_post(
        "/v1/script",
        json!({"command_regex": "^dumpsys battery$", "stdout": "Current Battery Service state:\n  (no values)\n"}),
    );
    let st = ok(&x.tool(&ch, "android_device_status", json!({})).await).clone();
    assert_eq!(st["battery_percent"], Value::Null, "{st}");
    assert!(
        st["unavailable"]
            .as_array()
            .unwrap()
            .contains(&json!("battery_percent")),
        "{st}"
    );
    // Every section empty: nothing was read, which is an error, not a result of nulls.
    sim.control_post(
        "/v1/script",
        json!({"command_regex": "^(dumpsys .*|wm size)$", "stdout": ""}),
    );
    let ack = x.tool(&ch, "android_device_status", json!({})).await;
    assert_eq!(ack["error"]["code"], "device_command_failed", "{ack}");
    assert!(
        ack["error"]["message"]
            .as_str()
            .unwrap()
            .contains("reported none of its status"),
        "{ack}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screen_record_pushes_progress_and_returns_a_file() {
    let sim = SimPhone::start_with_control("SIMREC0000001", &[]);
    let dir = TempDir::new("rec");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    let ack = x
        .tool(&ch, "android_screen_record", json!({"duration_s": 3}))
        .await;
    let r = ok(&ack).clone();
    assert_eq!(r["mime_type"], "video/mp4");
    let progress = x
        .wait_push("tool.progress.push", 1)
        .await
        .expect("progress was pushed before the ack");
    assert_eq!(progress["payload"]["tool_id"], "android_screen_record");
    assert_eq!(progress["request_id"], ack["request_id"]);
    let (st, ctype, body) = http_get(
        &format!("{}{}", conn.base, r["download_url"].as_str().unwrap()),
        None,
    );
    assert_eq!((st, ctype.as_str()), (200, "video/mp4"));
    assert_eq!(&body[4..8], b"ftyp");
    let ls = sim.state()["command_log"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["argv"][0] == "rm");
    assert!(ls, "the recording was removed from the phone");
    let too_long = x
        .tool(&ch, "android_screen_record", json!({"duration_s": 181}))
        .await;
    assert_eq!(too_long["error"]["code"], "invalid_arguments");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_is_absent_by_default_and_argv_only_when_enabled() {
    let sim = SimPhone::start_with_control("SIMSHELL00001", &[]);
    let dir = TempDir::new("shell");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (_, _, card) = http_get(&format!("{}/connector-card.json", conn.base), None);
    let card: Value = serde_json::from_slice(&card).unwrap();
    assert!(!card["tools"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["tool_id"] == "android_shell"));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    let ack = x.tool(&ch, "android_shell", json!({"argv": ["id"]})).await;
    assert_eq!(ack["error"]["code"], "tool_not_found");
    drop(x);
    drop(conn);

    let profiles = TempDir::new("profiles");
    std::fs::write(
        profiles.path().join("default.toml"),
        include_str!("../device-profiles/default.toml")
            .replace("[shell]\nenabled = false", "[shell]\nenabled = true")
            + "\n[[shell.allow]]\nprogram = \"getprop\"\nargs = [\"[a-z0-9._]+\"]\n",
    )
    .unwrap();
    let dir2 = TempDir::new("shell2");
    let conn = ConnectorProc::start_with(
        dir2.path(),
        Phones::Direct(vec![sim.addr.clone()]),
        &[
            "--claim-policy",
            "open",
            "--device-profiles",
            profiles.path().to_str().unwrap(),
        ],
    );
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    let r = ok(&x
        .tool(
            &ch,
            "android_shell",
            json!({"argv": ["getprop", "ro.serialno"]}),
        )
        .await)
    .clone();
    assert_eq!(r["stdout"], format!("{}\n", sim.serial));
    assert_eq!(r["exit_code"], 0);
    let before = sim.state()["command_log"].as_array().unwrap().len();
    for argv in [
        json!(["getprop", "a;reboot"]),
        json!(["rm", "-rf", "/sdcard"]),
        json!(["getprop", "x", "y"]),
    ] {
        let e = x.tool(&ch, "android_shell", json!({"argv": argv})).await;
        assert_eq!(e["error"]["code"], "policy_denied", "{e}");
        let m = e["error"]["message"].as_str().unwrap();
        assert!(m.contains("shell"), "names the rule: {e}");
        assert!(!m.contains("reboot") && !m.contains("-rf"), "echoed: {m}");
    }
    // A program not allowed is named as argv[0], with what is allowed, never repeated.
    let e = x
        .tool(&ch, "android_shell", json!({"argv": ["pm-secret-tool"]}))
        .await;
    let m = e["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("argv[0]") && m.contains("allowed: getprop") && !m.contains("pm-secret-tool"),
        "{m}"
    );
    assert_eq!(
        sim.state()["command_log"].as_array().unwrap().len(),
        before,
        "refusals never reach the phone"
    );
    tokio::time::sleep(Duration::from_millis(10)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_gesture_tool_once_through_google_adb_34() {
    let sim = SimPhone::start_with_control("SIMGADB000034", &[]);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&sim.addr);
    let dir = TempDir::new("gest34");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    for (tool, args) in [
        ("android_long_press", json!({"x": 10, "y": 10})),
        ("android_double_tap", json!({"x": 10, "y": 10})),
        (
            "android_swipe",
            json!({"x1": 10, "y1": 900, "x2": 10, "y2": 300}),
        ),
        ("android_scroll", json!({"direction": "up"})),
        (
            "android_wait_for",
            json!({"condition": "appears", "text": "Notes", "timeout_ms": 2000}),
        ),
        (
            "android_set_orientation",
            json!({"orientation": "portrait"}),
        ),
        ("android_screen_record", json!({"duration_s": 1})),
        (
            "android_screenshot",
            json!({"format": "jpeg", "max_dimension": 800}),
        ),
    ] {
        let ack = x.tool(&ch, tool, args).await;
        ok(&ack);
    }
}

/// A gesture given two kinds of target at once (x/y and an element_id, or a selector besides)
/// is `invalid_arguments` naming both, and nothing is injected (fresh-user finding: `android_tap`
/// with x/y and element_id tapped x/y and returned `element_id: null`, silently). One kind works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_kinds_of_target_at_once_are_refused_before_anything_is_injected() {
    let sim = SimPhone::start_with_control("SIMTARGET0001", &[]);
    let dir = TempDir::new("two-targets");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    let injected = || {
        sim.state()["command_log"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["argv"][0] == "input")
            .count()
    };
    let before = injected();
    for (tool, args, named) in [
        (
            "android_tap",
            json!({"x": 10, "y": 10, "element_id": "e1"}),
            "x/y and element_id",
        ),
        (
            "android_long_press",
            json!({"element_id": "e1", "text": "OK"}),
            "element_id and a selector",
        ),
        (
            "android_tap",
            json!({"y": 10, "content_desc": "Back"}),
            "x/y and a selector",
        ),
    ] {
        let ack = x.tool(&ch, tool, args).await;
        assert_eq!(ack["error"]["code"], "invalid_arguments", "{ack}");
        let m = ack["error"]["message"].as_str().unwrap();
        assert!(m.contains(named) && m.contains("give one target"), "{m}");
    }
    assert_eq!(injected(), before, "something was injected");
    let tap = x.tool(&ch, "android_tap", json!({"x": 10, "y": 10})).await;
    assert!(tap["error"].is_null(), "{tap}");
    assert_eq!(injected(), before + 1);
}

/// An empty selector (no selector field, or every one an empty string) is refused the same way by
/// every tool that takes a selector, before any UI dump or input (fresh-user finding 3:
/// `android_wait_for {"condition":"appears"}` was satisfied by the launcher's root element and
/// `disappears` never was).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_selector_is_refused_by_every_tool_that_takes_one() {
    let sim = SimPhone::start_with_control("SIMEMPTYSEL01", &[]);
    let dir = TempDir::new("empty-selector");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    let ran = |program: &str| {
        sim.state()["command_log"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["argv"][0] == program)
            .count()
    };
    let (inputs, dumps) = (ran("input"), ran("uiautomator"));
    let empty = json!({"text": "", "resource_id": "", "content_desc": ""});
    let mut calls = vec![
        ("android_wait_for", json!({"condition": "appears"})),
        (
            "android_wait_for",
            json!({"condition": "appears", "text": ""}),
        ),
        (
            "android_wait_for",
            json!({"condition": "disappears", "timeout_ms": 600}),
        ),
        ("android_tap", json!({"text": ""})),
        (
            "android_scroll",
            json!({"direction": "down", "resource_id": ""}),
        ),
    ];
    for tool in ["android_tap", "android_long_press", "android_double_tap"] {
        calls.push((tool, empty.clone()));
    }
    let mut wait = empty.clone();
    wait["condition"] = json!("disappears");
    calls.push(("android_wait_for", wait));
    for (tool, args) in calls {
        let ack = x.tool(&ch, tool, args.clone()).await;
        assert_eq!(
            ack["error"]["code"], "invalid_arguments",
            "{tool} {args}: {ack}"
        );
        let m = ack["error"]["message"].as_str().unwrap();
        assert!(
            m.contains("a selector (text, resource_id, content_desc)") && m.contains("non-empty"),
            "{tool} {args}: {m}"
        );
    }
    assert_eq!(ran("input"), inputs, "something was injected");
    assert_eq!(
        ran("uiautomator"),
        dumps,
        "the UI was dumped for an empty selector"
    );
    // A real selector still works, and `stable` needs none.
    let w = wait_for(
        &mut x,
        &ch,
        json!({"condition": "appears", "text": "Notes", "timeout_ms": 2000}),
    )
    .await;
    assert_eq!(w["satisfied"], true, "{w}");
    assert_eq!(w["element"]["text"], "Notes", "{w}");
    let w = wait_for(
        &mut x,
        &ch,
        json!({"condition": "stable", "timeout_ms": 3000, "interval_ms": 100}),
    )
    .await;
    assert_eq!(w["satisfied"], true, "{w}");
}
