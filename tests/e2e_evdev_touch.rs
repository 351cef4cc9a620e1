//! End to end for touch through the phone's touchscreen input device (issue 20 §1, §2): real
//! binary, real WebSocket, simulated phone over the direct transport whose input devices are a
//! real `getevent -lp` capture (`sim --touchscreen`). The witness is the sim's touchscreen
//! reader (`touches` in `GET /v1/state`: what the kernel's protocol B and Android's
//! `TouchInputMapper` make of the written records) and its command log (no `input` ran).

mod common;

use std::time::Duration;

use serde_json::{json, Value};

use common::scenario::{claimed_sim, elements, find_text};

fn ok(ack: &Value) -> &Value {
    assert!(ack.get("error").is_none(), "{ack}");
    &ack["payload"]["result"]
}

fn touches(sim: &common::procs::SimPhone) -> Vec<Value> {
    sim.state()["touches"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The sim's touches once there are `n`: adbd acknowledges a write when it takes the bytes,
/// before `cat` has passed them on, so the reader may be a moment behind the tool's answer.
/// Gives up after ~10 s and returns what there is (the caller's assertion then says what).
async fn touches_when(sim: &common::procs::SimPhone, n: usize) -> Vec<Value> {
    for _ in 0..200 {
        let t = touches(sim);
        if t.len() >= n {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    touches(sim)
}

fn ran(sim: &common::procs::SimPhone, program: &str) -> usize {
    sim.state()["command_log"]
        .as_array()
        .map(|l| l.iter().filter(|e| e["argv"][0] == program).count())
        .unwrap_or(0)
}

fn assert_timing(r: &Value) {
    for k in ["phone_ms", "transfer_ms", "connector_ms"] {
        assert!(r["timing"][k].as_f64().is_some_and(|v| v >= 0.0), "{r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gestures_land_on_the_ui_as_touches_through_evdev() {
    // Red Magic 6's panel: 0..1080 x 0..2400 on the 1080x2400 display of the default persona.
    let mut b = claimed_sim("SIMEVDEV00001", &["--touchscreen", "redmagic6"]).await;
    // A tap on the launcher's Notes icon opens Notes: the tap reached the UI.
    let tree = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    let notes = find_text(&elements(&tree), "Notes").expect("launcher shows Notes");
    let r = ok(&b
        .x
        .tool(
            &b.ch,
            "android_tap",
            json!({"element_id": notes["element_id"]}),
        )
        .await)
    .clone();
    assert_eq!(r["backend"], "evdev", "{r}");
    assert_timing(&r);
    let t = touches_when(&b.sim, 1).await;
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(t[0]["kind"], "tap");
    assert_eq!(t[0]["from"], json!([r["tapped"]["x"], r["tapped"]["y"]]));
    assert_eq!(t[0]["node"], "/dev/input/event3");
    assert_eq!(b.sim.state()["foreground"], "com.example.notes");
    b.sim.control_json(
        "/v1/state",
        json!({"foreground": "com.google.android.apps.nexuslauncher", "clear_touches": true}),
    );

    let r = ok(&b
        .x
        .tool(
            &b.ch,
            "android_swipe",
            json!({"x1": 500, "y1": 1800, "x2": 500, "y2": 600}),
        )
        .await)
    .clone();
    assert_eq!(r["backend"], "evdev");
    let r = ok(&b
        .x
        .tool(
            &b.ch,
            "android_long_press",
            json!({"x": 100, "y": 200, "duration_ms": 700}),
        )
        .await)
    .clone();
    assert_eq!(r["backend"], "evdev");
    ok(&b
        .x
        .tool(&b.ch, "android_double_tap", json!({"x": 30, "y": 40}))
        .await);
    ok(&b
        .x
        .tool(&b.ch, "android_scroll", json!({"direction": "down"}))
        .await);
    let r = ok(&b
        .x
        .tool(
            &b.ch,
            "android_pinch",
            json!({"x": 540, "y": 1200, "scale": 2.0, "duration_ms": 200}),
        )
        .await)
    .clone();
    assert_eq!(r["backend"], "evdev");
    assert_timing(&r);
    let t = touches_when(&b.sim, 6).await;
    let kinds: Vec<&str> = t.iter().map(|t| t["kind"].as_str().unwrap_or("")).collect();
    assert_eq!(
        kinds,
        ["swipe", "long_press", "tap", "tap", "swipe", "pinch"],
        "{t:?}"
    );
    assert_eq!(
        (t[0]["from"].clone(), t[0]["to"].clone()),
        (json!([500, 1800]), json!([500, 600]))
    );
    assert_eq!(t[1]["from"], json!([100, 200]));
    assert_eq!(
        (t[2]["from"].clone(), t[3]["from"].clone()),
        (json!([30, 40]), json!([30, 40]))
    );
    // Scroll down mid-screen: the finger moves up through the middle.
    assert_eq!(t[4]["from"], json!([540, 1800]));
    assert_eq!(t[4]["to"], json!([540, 600]));
    assert_eq!(t[5]["fingers"], 2);
    let scale = t[5]["scale"].as_f64().expect("pinch scale");
    assert!((scale - 2.0).abs() < 0.02, "{scale}");
    assert_eq!(r["from"][0], json!([540 - 216, 1200]));
    assert_eq!(ran(&b.sim, "input"), 0, "no `input` ran");

    // Rotated a quarter turn: display px map through the rotation to the panel and back.
    b.sim
        .control_json("/v1/state", json!({"rotation": 1, "clear_touches": true}));
    let r = ok(&b
        .x
        .tool(&b.ch, "android_tap", json!({"x": 2000, "y": 500}))
        .await)
    .clone();
    assert_eq!(r["display"], json!({"width": 2400, "height": 1080}));
    b.sim.control_json("/v1/state", json!({"rotation": 3}));
    ok(&b
        .x
        .tool(&b.ch, "android_tap", json!({"x": 7, "y": 1000}))
        .await);
    b.sim.control_json("/v1/state", json!({"rotation": 2}));
    ok(&b
        .x
        .tool(&b.ch, "android_tap", json!({"x": 1000, "y": 9}))
        .await);
    let t = touches_when(&b.sim, 3).await;
    let at: Vec<Value> = t.iter().map(|t| t["from"].clone()).collect();
    assert_eq!(at, [json!([2000, 500]), json!([7, 1000]), json!([1000, 9])]);
    // One stream for all of it: `cat` is still running (it logs when it ends).
    assert_eq!(ran(&b.sim, "cat"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_32_bit_phone_takes_16_byte_records_and_a_coarse_panel_is_scaled() {
    // Galaxy S5: armeabi-v7a userland, a 0..4095 panel on a 1080x1920 display (legacy adbd).
    let mut b = claimed_sim(
        "SIMEVDEV00002",
        &["--touchscreen", "galaxy-s5", "--persona", "legacy-android6"],
    )
    .await;
    let r = ok(&b
        .x
        .tool(&b.ch, "android_tap", json!({"x": 540, "y": 960}))
        .await)
    .clone();
    assert_eq!(r["backend"], "evdev", "{r}");
    let r = ok(&b
        .x
        .tool(&b.ch, "android_tap", json!({"x": 1079, "y": 3}))
        .await)
    .clone();
    assert_eq!(r["backend"], "evdev", "{r}");
    let at: Vec<Value> = touches_when(&b.sim, 2)
        .await
        .iter()
        .map(|t| t["from"].clone())
        .collect();
    assert_eq!(at, [json!([540, 960]), json!([1079, 3])]);
    assert_eq!(ran(&b.sim, "input"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_touchscreen_is_found_among_seven_devices() {
    // Mi Mix 2: fingerprint, keys and jacks besides the touchscreen on event1; panel
    // 1080x2160 under a 1080x2400 display, so a point lands within a pixel.
    let mut b = claimed_sim("SIMEVDEV00003", &["--touchscreen", "mimix2"]).await;
    let r = ok(&b
        .x
        .tool(&b.ch, "android_tap", json!({"x": 300, "y": 700}))
        .await)
    .clone();
    assert_eq!(r["backend"], "evdev", "{r}");
    let t = touches_when(&b.sim, 1).await;
    assert_eq!(t[0]["node"], "/dev/input/event1");
    let (x, y) = (
        t[0]["from"][0].as_i64().unwrap(),
        t[0]["from"][1].as_i64().unwrap(),
    );
    assert!((x - 300).abs() <= 1 && (y - 700).abs() <= 1, "{t:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_writable_touchscreen_gestures_fall_back_and_pinch_is_unsupported() {
    let mut b = claimed_sim("SIMEVDEV00004", &["--touchscreen", "mimix2"]).await;
    b.sim
        .control_json("/v1/state", json!({"input_writable": false}));
    let r = ok(&b
        .x
        .tool(&b.ch, "android_tap", json!({"x": 5, "y": 6}))
        .await)
    .clone();
    // Android 14: `input` is `cmd input "$@"`.
    assert_eq!(r["backend"], "cmd_input", "{r}");
    assert_timing(&r);
    assert_eq!(b.sim.count_runs(&["input", "tap", "5", "6"]), 1);
    let ack =
        b.x.tool(
            &b.ch,
            "android_pinch",
            json!({"x": 540, "y": 1200, "scale": 0.5}),
        )
        .await;
    assert_eq!(ack["error"]["code"], "unsupported", "{ack}");
    let m = ack["error"]["message"].as_str().unwrap_or_default();
    assert!(m.contains("may not write /dev/input/event1"), "{m}");
    // Remembered for the phone: made writable, it stays on `input` (one probe per phone).
    b.sim
        .control_json("/v1/state", json!({"input_writable": true}));
    let r = ok(&b
        .x
        .tool(
            &b.ch,
            "android_swipe",
            json!({"x1": 5, "y1": 900, "x2": 5, "y2": 100}),
        )
        .await)
    .clone();
    assert_eq!(r["backend"], "cmd_input");
    assert_eq!(ran(&b.sim, "getevent"), 1);
    assert!(touches(&b.sim).is_empty());
    // Bad arguments are refused before anything runs.
    for args in [
        json!({"x": 540, "y": 1200, "scale": 9.0}),
        json!({"x": 540, "y": 1200, "scale": 1.5, "duration_ms": 10}),
        json!({"x": 540, "scale": 1.5}),
    ] {
        let ack = b.x.tool(&b.ch, "android_pinch", args).await;
        assert_eq!(ack["error"]["code"], "invalid_arguments", "{ack}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_without_input_devices_uses_input_and_says_which() {
    let mut b = claimed_sim("SIMEVDEV00005", &["--persona", "legacy-android6"]).await;
    let r = ok(&b
        .x
        .tool(&b.ch, "android_tap", json!({"x": 7, "y": 8}))
        .await)
    .clone();
    // Android 6: `input` starts app_process.
    assert_eq!(r["backend"], "input", "{r}");
    assert_eq!(b.sim.count_runs(&["input", "tap", "7", "8"]), 1);
    let ack =
        b.x.tool(
            &b.ch,
            "android_pinch",
            json!({"x": 540, "y": 900, "scale": 2.0}),
        )
        .await;
    assert_eq!(ack["error"]["code"], "unsupported", "{ack}");
    let m = ack["error"]["message"].as_str().unwrap_or_default();
    assert!(m.contains("no touchscreen"), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_phone_keeps_the_deadline_and_the_next_call_reopens_the_stream() {
    let mut b = claimed_sim("SIMEVDEV00006", &["--touchscreen", "redmagic6"]).await;
    ok(&b
        .x
        .tool(&b.ch, "android_tap", json!({"x": 10, "y": 10}))
        .await);
    touches_when(&b.sim, 1).await;
    // Frozen: connections stay open and nothing is answered. The call ends by its deadline.
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "frozen"})),
        200
    );
    let ack = tokio::time::timeout(
        Duration::from_secs(60),
        b.x.tool(&b.ch, "android_tap", json!({"x": 11, "y": 11})),
    )
    .await
    .expect("the tap answers within its deadline");
    assert!(ack.get("error").is_some(), "{ack}");
    // Unplugged and back: the stream died; the next tap opens a new one and lands.
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "unplugged"})),
        200
    );
    assert_eq!(
        b.sim
            .control_post("/v1/transport", json!({"state": "online"})),
        200
    );
    let mut landed = None;
    for _ in 0..40 {
        let ack =
            b.x.tool(&b.ch, "android_tap", json!({"x": 12, "y": 12}))
                .await;
        if ack.get("error").is_none() {
            landed = Some(ack);
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let ack = landed.expect("a tap lands once the phone is back");
    assert_eq!(ack["payload"]["result"]["backend"], "evdev", "{ack}");
    // The frozen call's records may still have reached the phone once it thawed (a write
    // that timed out is not known to have been lost): the new stream's tap comes after them.
    let mut last = None;
    for _ in 0..200 {
        last = touches(&b.sim).last().cloned();
        if last.as_ref().is_some_and(|t| t["from"] == json!([12, 12])) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        last.expect("a touch")["from"],
        json!([12, 12]),
        "{:?} {:?}",
        touches(&b.sim),
        b.sim.state()["command_log"]
    );
}
