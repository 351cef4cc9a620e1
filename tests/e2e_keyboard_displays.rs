//! Issue 20 §7, through the WebSocket, the connector and an adb server (Google adb 34) to the
//! simulated phone: `android_device_status` says whether the soft keyboard shows
//! (`keyboard_shown`), `android_hide_keyboard` closes it (BACK only when it shows), and
//! `android_displays` lists the logical displays (`dumpsys display`'s `Logical Displays:`
//! section; a virtual display added through the control API, a rotation applied).

mod common;

use serde_json::{json, Value};

use common::scenario::{adb_bench, focus_note};

fn ok(ack: &Value) -> &Value {
    assert!(ack.get("error").is_none(), "{ack}");
    &ack["payload"]["result"]
}

/// `r` without the `timing` and `backend` every result carries (asserted present here).
fn without_report(r: &Value) -> Value {
    let mut r = r.clone();
    let obj = r.as_object_mut().expect("an object");
    assert!(
        obj.remove("timing").is_some_and(|t| t.is_object()),
        "timing"
    );
    assert_eq!(obj.remove("backend"), Some(json!("input_keyevent")));
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keyboard_is_reported_and_hidden_only_when_it_shows() {
    let mut b = adb_bench("SIMKEYBOARD001", &[]).await;
    let st = ok(&b.x.tool(&b.ch, "android_device_status", json!({})).await).clone();
    assert_eq!(st["keyboard_shown"], false, "{st}");
    // Nothing shows: nothing is pressed (a BACK here would leave the app).
    let r = without_report(ok(&b
        .x
        .tool(&b.ch, "android_hide_keyboard", json!({}))
        .await));
    assert_eq!(
        r,
        json!({"was_shown": false, "keyboard_shown": false, "key": null})
    );

    focus_note(&mut b.x, &b.ch).await;
    let st = ok(&b.x.tool(&b.ch, "android_device_status", json!({})).await).clone();
    assert_eq!(st["keyboard_shown"], true, "{st}");
    assert_eq!(st["foreground_package"], "com.example.notes", "{st}");
    let r = without_report(ok(&b
        .x
        .tool(&b.ch, "android_hide_keyboard", json!({}))
        .await));
    assert_eq!(
        r,
        json!({"was_shown": true, "keyboard_shown": false, "key": "back"})
    );
    // The BACK was the keyboard's: the app is still in front.
    let st = ok(&b.x.tool(&b.ch, "android_device_status", json!({})).await).clone();
    assert_eq!(st["keyboard_shown"], false, "{st}");
    assert_eq!(st["foreground_package"], "com.example.notes", "{st}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dump_that_does_not_say_is_unknown_never_a_guess() {
    let mut b = adb_bench("SIMKEYBOARD002", &[]).await;
    // A build whose input_method dump prints neither key (an OEM IME service).
    let body = json!({"command_regex": "^dumpsys input_method$", "stdout": "Input method service state:\n  mCurMethodId=com.oem.ime/.Ime\n"});
    assert_eq!(b.sim.control_post("/v1/script", body), 200);
    let st = ok(&b.x.tool(&b.ch, "android_device_status", json!({})).await).clone();
    assert_eq!(st["keyboard_shown"], Value::Null, "{st}");
    assert!(
        st["unavailable"]
            .as_array()
            .unwrap()
            .contains(&json!("keyboard_shown")),
        "{st}"
    );
    let ack = b.x.tool(&b.ch, "android_hide_keyboard", json!({})).await;
    assert_eq!(ack["error"]["code"], "device_command_failed", "{ack}");
    assert!(
        ack["error"]["message"]
            .as_str()
            .unwrap()
            .contains("mInputShown"),
        "{ack}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn displays_are_listed_with_the_default_one_marked() {
    let mut b = adb_bench("SIMDISPLAYS001", &[]).await;
    let r = ok(&b.x.tool(&b.ch, "android_displays", json!({})).await).clone();
    let displays = r["displays"].as_array().unwrap().clone();
    assert_eq!(displays.len(), 1, "{r}");
    let d = &displays[0];
    assert_eq!(d["id"], 0);
    assert_eq!(d["default"], true);
    assert_eq!(d["type"], "INTERNAL");
    assert_eq!(d["state"], "ON");
    assert!(
        d["unique_id"].as_str().unwrap().starts_with("local:"),
        "{r}"
    );
    let (w, h) = (d["width"].as_u64().unwrap(), d["height"].as_u64().unwrap());
    assert!(h > w, "portrait: {r}");

    // Rotated, with a virtual display (a cast) added: both listed, the size as apps see it.
    let patch =
        json!({"rotation": 1, "extra_displays": [{"id": 62, "width": 1280, "height": 720}]});
    assert_eq!(b.sim.control_post("/v1/state", patch), 200);
    let r = ok(&b.x.tool(&b.ch, "android_displays", json!({})).await).clone();
    let displays = r["displays"].as_array().unwrap();
    let ids: Vec<u64> = displays.iter().map(|d| d["id"].as_u64().unwrap()).collect();
    assert_eq!(ids, [0, 62], "{r}");
    assert_eq!(displays[0]["width"].as_u64(), Some(h), "{r}");
    assert_eq!(displays[0]["rotation"], 1, "{r}");
    assert_eq!(displays[1]["default"], false, "{r}");
    assert_eq!(displays[1]["type"], "VIRTUAL", "{r}");
    assert_eq!(displays[1]["width"], 1280, "{r}");

    // The screen off: the panel's power state says so.
    assert_eq!(
        b.sim.control_post("/v1/state", json!({"screen_on": false})),
        200
    );
    let r = ok(&b.x.tool(&b.ch, "android_displays", json!({})).await).clone();
    assert_eq!(r["displays"][0]["state"], "OFF", "{r}");
}
