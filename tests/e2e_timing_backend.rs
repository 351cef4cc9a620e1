//! Issue 20 §5 end to end: every tool result carries `timing {phone_ms, transfer_ms,
//! connector_ms}` and `backend`, through the real binary, the WebSocket and the simulated
//! phone's direct transport. One representative tool of each family; the three parts are
//! non-negative and together no more than the call's wall time as this test measures it
//! (from sending `tool.invoke` to reading its ack).

mod common;
#[path = "tools_support/mod.rs"]
mod tools_support;

use std::time::Instant;

use serde_json::{json, Value};

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::xagent::XAgent;
use tools_support::{bound, ok, upload};

/// Calls `tool` and checks its `timing` against the wall time of the call; returns the result.
async fn timed(x: &mut XAgent, ch: &str, tool: &str, args: Value) -> Value {
    let t = Instant::now();
    let ack = x.tool(ch, tool, args).await;
    let wall_ms = t.elapsed().as_secs_f64() * 1e3;
    let r = ok(&ack).clone();
    let timing = &r["timing"];
    let part = |k: &str| {
        let v = timing[k]
            .as_f64()
            .unwrap_or_else(|| panic!("{tool}: timing.{k} in {r}"));
        assert!(v >= 0.0, "{tool}: timing.{k} < 0 in {r}");
        v
    };
    let sum = part("phone_ms") + part("transfer_ms") + part("connector_ms");
    // Each part is rounded to 0.01 ms.
    assert!(
        sum <= wall_ms + 0.03,
        "{tool}: {sum} ms > {wall_ms} ms wall: {r}"
    );
    assert!(r["backend"].is_string(), "{tool}: {r}");
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_family_reports_its_timing_and_backend() {
    let sim = SimPhone::start_with_control("SIMTIMING0001", &["--touchscreen", "redmagic6"]);
    let dir = TempDir::new("timing");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = bound(&sim, &conn).await;

    let r = timed(&mut x, &ch, "android_device_status", json!({})).await;
    assert_eq!(r["backend"], "shell", "{r}");
    assert!(r["timing"]["phone_ms"].as_f64().unwrap() > 0.0, "{r}");

    // Re-encoded from the raw frame over this local link: bytes moved in bulk.
    let r = timed(&mut x, &ch, "android_screenshot", json!({"format": "jpeg"})).await;
    assert_eq!(r["backend"], "raw", "{r}");
    assert!(r["timing"]["transfer_ms"].as_f64().unwrap() > 0.0, "{r}");
    let r = timed(&mut x, &ch, "android_screenshot", json!({})).await;
    assert_eq!(r["backend"], "png", "{r}");

    let r = timed(&mut x, &ch, "android_ui_tree", json!({})).await;
    assert_eq!(r["backend"], "uiautomator_tty", "{r}");

    let r = timed(&mut x, &ch, "android_observe", json!({})).await;
    assert_eq!(r["backend"], "uiautomator_tty+png", "{r}");

    // The gestures keep their own split and backend.
    let r = timed(&mut x, &ch, "android_tap", json!({"x": 540, "y": 400})).await;
    assert_eq!(r["backend"], "evdev", "{r}");

    let r = timed(&mut x, &ch, "android_press_key", json!({"key": "back"})).await;
    assert_eq!(r["backend"], "input_keyevent", "{r}");

    let r = timed(
        &mut x,
        &ch,
        "android_app_launch",
        json!({"package": "com.example.notes"}),
    )
    .await;
    assert_eq!(r["backend"], "am_start", "{r}");
    timed(
        &mut x,
        &ch,
        "android_tap",
        json!({"resource_id": "com.example.notes:id/note_text"}),
    )
    .await;
    // Typing reports the way the text went, not the UI dumps that read the field around it.
    let r = timed(&mut x, &ch, "android_input_text", json!({"text": "abc"})).await;
    assert_eq!(r["backend"], "input_text", "{r}");

    let r = timed(&mut x, &ch, "android_app_list", json!({})).await;
    assert_eq!(r["backend"], "pm_list_packages", "{r}");

    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let file_ref = upload(&conn, &ch, "blob.bin", &data);
    let r = timed(
        &mut x,
        &ch,
        "android_file_push",
        json!({"file_ref": file_ref, "path": "/sdcard/Download/blob.bin"}),
    )
    .await;
    assert_eq!(r["backend"], "sync", "{r}");
    let r = timed(
        &mut x,
        &ch,
        "android_file_pull",
        json!({"path": "/sdcard/Download/blob.bin"}),
    )
    .await;
    assert_eq!(r["backend"], "sync", "{r}");
    assert!(r["timing"]["transfer_ms"].as_f64().unwrap() > 0.0, "{r}");

    let r = timed(&mut x, &ch, "android_logcat", json!({"lines": 5})).await;
    assert_eq!(r["backend"], "logcat", "{r}");
    let r = timed(&mut x, &ch, "android_displays", json!({})).await;
    assert_eq!(r["backend"], "dumpsys_display", "{r}");
    let r = timed(
        &mut x,
        &ch,
        "android_set_orientation",
        json!({"orientation": "portrait"}),
    )
    .await;
    assert_eq!(r["backend"], "settings", "{r}");
}
