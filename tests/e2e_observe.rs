//! End to end for `android_observe` (issue 20 §3): real binary, real WebSocket, simulated phone
//! over the direct transport. One observation carries the tree, a screenshot and the display
//! geometry under one id that gestures take as `screenshot_id` and as `snapshot_id`; `since`
//! answers only what changed, or `unchanged: true`; an unknown `since` is `stale_snapshot`.

mod common;

use serde_json::{json, Value};

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claimed_channel;
use common::xagent::{http_get, XAgent};

fn ok(ack: &Value) -> Value {
    assert!(ack.get("error").is_none(), "{ack}");
    ack["payload"]["result"].clone()
}

async fn observe(x: &mut XAgent, ch: &str, args: Value) -> Value {
    ok(&x.tool(ch, "android_observe", args).await)
}

fn element<'a>(obs: &'a Value, text: &str) -> &'a Value {
    obs["tree"]["elements"]
        .as_array()
        .expect("elements")
        .iter()
        .find(|e| e["text"] == text)
        .unwrap_or_else(|| panic!("no element {text:?} in {obs}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_observation_serves_gestures_and_diffs() {
    let sim = SimPhone::start_with_control("SIMOBSERVE0001", &[]);
    let dir = TempDir::new("observe");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;

    // Tree, screenshot and geometry under one id.
    let obs = observe(
        &mut x,
        &ch,
        json!({"format": "jpeg", "max_dimension": 1200}),
    )
    .await;
    let id = obs["observation_id"]
        .as_str()
        .expect("observation_id")
        .to_string();
    assert_eq!(obs["tree"]["snapshot_id"], id.as_str(), "{obs}");
    assert_eq!(obs["screenshot"]["screenshot_id"], id.as_str(), "{obs}");
    assert_eq!(obs["settled"], true, "{obs}");
    assert_eq!(obs["takes"], 1, "{obs}");
    assert_eq!(
        (
            obs["display"]["width"].as_u64(),
            obs["display"]["height"].as_u64()
        ),
        (Some(1080), Some(2400)),
        "{obs}"
    );
    assert_eq!(obs["screenshot"]["mime_type"], "image/jpeg");
    assert_eq!(obs["screenshot"]["height"], 1200);
    let (status, _, body) = http_get(
        &format!(
            "{}{}",
            conn.base,
            obs["screenshot"]["download_url"].as_str().unwrap()
        ),
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(&body[..2], &[0xff, 0xd8], "a JPEG");
    // The screenshot and the tree came from one moment: each read the phone once.
    assert_eq!(sim.count_runs(&["screencap"]), 1);
    assert_eq!(sim.count_runs(&["uiautomator", "dump", "/dev/tty"]), 1);

    // Nothing happened: unchanged.
    let again = observe(
        &mut x,
        &ch,
        json!({"since": id, "max_dimension": 600, "format": "jpeg"}),
    )
    .await;
    assert_eq!(again["unchanged"], true, "{again}");
    assert_eq!(again["since"], id.as_str());
    assert!(
        again.get("tree").is_none() && again.get("changes").is_none(),
        "{again}"
    );
    assert!(again["element_count"].as_u64().unwrap() > 0, "{again}");

    // A gesture takes the observation id as screenshot_id: the Notes icon's center in the
    // screenshot's pixels (half the display's), scaled back to the display.
    let notes = element(&obs, "Notes").clone();
    let scale = obs["screenshot"]["scale"]["x"].as_f64().unwrap();
    assert_eq!(scale, 2.0);
    let (cx, cy) = (
        notes["center"][0].as_i64().unwrap(),
        notes["center"][1].as_i64().unwrap(),
    );
    let tap = ok(&x
        .tool(
            &ch,
            "android_tap",
            json!({"x": cx / 2, "y": cy / 2, "screenshot_id": id}),
        )
        .await);
    assert_eq!(tap["tapped"]["x"], (cx / 2) * 2, "{tap}");
    assert_eq!(tap["tapped"]["y"], (cy / 2) * 2, "{tap}");
    assert_eq!(sim.state()["foreground"], "com.example.notes");

    // In Notes: an observation, then its element ids with the observation as snapshot_id.
    let in_notes = observe(&mut x, &ch, json!({})).await;
    let nid = in_notes["observation_id"].as_str().unwrap().to_string();
    let field = in_notes["tree"]["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["resource_id"] == "com.example.notes:id/note_text")
        .expect("note field")
        .clone();
    ok(&x
        .tool(
            &ch,
            "android_tap",
            json!({"element_id": field["element_id"], "snapshot_id": nid}),
        )
        .await);
    let focused = observe(&mut x, &ch, json!({"since": nid})).await;
    let changed = focused["changes"]["changed"]
        .as_array()
        .expect("changed")
        .clone();
    assert_eq!(changed.len(), 1, "only the field changed: {focused}");
    assert!(
        changed[0]["key"]
            .as_str()
            .unwrap()
            .ends_with("com.example.notes:id/note_text"),
        "{focused}"
    );
    assert_eq!(changed[0]["focused"], true, "{focused}");
    assert!(
        focused["changes"]["added"].as_array().unwrap().is_empty(),
        "{focused}"
    );
    assert!(
        focused["changes"]["removed"].as_array().unwrap().is_empty(),
        "{focused}"
    );
    let fid = focused["observation_id"].as_str().unwrap().to_string();

    // Typing changes the field's text, one element again.
    ok(&x
        .tool(&ch, "android_input_text", json!({"text": "hi"}))
        .await);
    let typed = observe(&mut x, &ch, json!({"since": fid})).await;
    let changed = typed["changes"]["changed"].as_array().expect("changed");
    assert_eq!(changed.len(), 1, "{typed}");
    assert_eq!(changed[0]["text"], "hi", "{typed}");

    // Home: the Notes screen's elements are gone, the launcher's are back, by key.
    ok(&x
        .tool(&ch, "android_press_key", json!({"key": "home"}))
        .await);
    let home = observe(&mut x, &ch, json!({"since": typed["observation_id"]})).await;
    let removed = home["changes"]["removed"].as_array().unwrap();
    let added = home["changes"]["added"].as_array().unwrap();
    assert!(
        removed
            .iter()
            .any(|r| r["key"].as_str().unwrap().ends_with("note_text")),
        "{home}"
    );
    assert!(
        added
            .iter()
            .any(|a| a["text"] == "Notes" && a["key"].is_string()),
        "{home}"
    );

    // An id this channel never made, or one expired: stale_snapshot, nothing read.
    let dumps = sim.count_runs(&["uiautomator", "dump", "/dev/tty"]);
    let unknown = x
        .tool(&ch, "android_observe", json!({"since": "obs_0000"}))
        .await;
    assert_eq!(unknown["error"]["code"], "stale_snapshot", "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("without since"),
        "{unknown}"
    );
    assert_eq!(sim.count_runs(&["uiautomator", "dump", "/dev/tty"]), dumps);
    for _ in 0..8 {
        observe(&mut x, &ch, json!({"max_dimension": 200, "format": "jpeg"})).await;
    }
    let expired = x.tool(&ch, "android_observe", json!({"since": id})).await;
    assert_eq!(expired["error"]["code"], "stale_snapshot", "{expired}");
}
