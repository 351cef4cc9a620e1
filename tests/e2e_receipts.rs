//! End to end for receipts (issue 20 §4): a side-effecting tool called with `receipt: true`
//! answers `receipt {screen_changed, foreground_changed, foreground_package, settled_ms}`,
//! measured on the simulated phone by `screencap | sha1sum` (the frame never crosses the link)
//! and the window read; without it, nothing is hashed.

mod common;

use serde_json::{json, Value};

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claimed_channel;
use common::xagent::http_get;

fn ok(ack: &Value) -> Value {
    assert!(ack.get("error").is_none(), "{ack}");
    ack["payload"]["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receipts_say_what_an_action_did() {
    let sim = SimPhone::start_with_control("SIMRECEIPT0001", &[]);
    let dir = TempDir::new("receipts");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;

    // Off by default: a tap hashes nothing and answers no receipt.
    let plain = ok(&x
        .tool(&ch, "android_tap", json!({"x": 540, "y": 400}))
        .await);
    assert!(plain.get("receipt").is_none(), "{plain}");
    assert_eq!(sim.count_runs(&["sha1sum"]), 0);

    // A tap on the launcher's empty workspace: nothing moved.
    let r = ok(&x
        .tool(
            &ch,
            "android_tap",
            json!({"x": 540, "y": 400, "receipt": true}),
        )
        .await);
    let receipt = &r["receipt"];
    assert_eq!(receipt["screen_changed"], false, "{r}");
    assert_eq!(receipt["foreground_changed"], false, "{r}");
    assert!(receipt["settled_ms"].is_u64(), "{r}");
    let launcher = receipt["foreground_package"]
        .as_str()
        .expect("a package")
        .to_string();
    // Hashed on the phone, before and after.
    assert!(sim.count_runs(&["sha1sum"]) >= 2);

    // A tap on the Notes icon opens Notes: the screen and the app in front changed.
    let r = ok(&x
        .tool(
            &ch,
            "android_tap",
            json!({"text": "Notes", "receipt": true}),
        )
        .await);
    assert_eq!(r["receipt"]["screen_changed"], true, "{r}");
    assert_eq!(r["receipt"]["foreground_changed"], true, "{r}");
    assert_eq!(
        r["receipt"]["foreground_package"], "com.example.notes",
        "{r}"
    );
    assert!(r["receipt"]["settled_ms"].is_u64(), "{r}");

    // Typing changes the screen, not the app.
    ok(&x
        .tool(
            &ch,
            "android_tap",
            json!({"resource_id": "com.example.notes:id/note_text"}),
        )
        .await);
    let r = ok(&x
        .tool(
            &ch,
            "android_input_text",
            json!({"text": "abc", "receipt": true}),
        )
        .await);
    assert_eq!(r["receipt"]["screen_changed"], true, "{r}");
    assert_eq!(r["receipt"]["foreground_changed"], false, "{r}");

    // A launch brings another app to the front.
    let r = ok(&x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.android.settings", "receipt": true}),
        )
        .await);
    assert_eq!(r["receipt"]["foreground_changed"], true, "{r}");
    assert_eq!(
        r["receipt"]["foreground_package"], "com.android.settings",
        "{r}"
    );
    assert_eq!(r["receipt"]["screen_changed"], true, "{r}");

    // A key: home goes back to the launcher.
    let r = ok(&x
        .tool(
            &ch,
            "android_press_key",
            json!({"key": "home", "receipt": true}),
        )
        .await);
    assert_eq!(r["receipt"]["foreground_package"], launcher.as_str(), "{r}");
    assert_eq!(r["receipt"]["foreground_changed"], true, "{r}");

    // A swipe on the launcher moves nothing there.
    let r = ok(&x
        .tool(
            &ch,
            "android_swipe",
            json!({"x1": 540, "y1": 1000, "x2": 540, "y2": 600, "receipt": true}),
        )
        .await);
    assert_eq!(r["receipt"]["screen_changed"], false, "{r}");

    // The card offers `receipt` on the acting tools only (and the card still validates).
    let (status, _, card) = http_get(&format!("{}/connector-card.json", conn.base), None);
    assert_eq!(status, 200);
    let card: Value = serde_json::from_slice(&card).unwrap();
    common::schemas::assert_card(&card);
    let tools = card["tools"].as_array().expect("tools");
    let has_receipt = |id: &str| {
        tools
            .iter()
            .find(|t| t["tool_id"] == id)
            .and_then(|t| t["input_schema"]["properties"].get("receipt"))
            .is_some()
    };
    for id in [
        "android_tap",
        "android_long_press",
        "android_double_tap",
        "android_swipe",
        "android_scroll",
        "android_input_text",
        "android_press_key",
        "android_app_launch",
        "android_hide_keyboard",
    ] {
        assert!(has_receipt(id), "{id} takes receipt");
    }
    for id in ["android_screenshot", "android_ui_tree", "android_observe"] {
        assert!(!has_receipt(id), "{id} takes no receipt");
    }
}
