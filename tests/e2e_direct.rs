//! End to end through the direct transport (no adb binary): simulated phone ← connector's own
//! host side of the adbd wire ← xAgent client over WebSocket.

mod common;

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walking_skeleton_through_direct_transport() {
    let sim = SimPhone::start("SIMDIRECT00042");
    let dir = TempDir::new("e2e-direct");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let t = common::scenario::walking_skeleton(&conn.addr, &sim.serial).await;
    println!(
        "direct: screenshot round trip {:.1} ms, tap round trip {:.1} ms",
        t.screenshot_ms, t.tap_ms
    );
}

/// `GET` a control API path of `sim` as JSON.
fn control_get(sim: &SimPhone, path: &str) -> serde_json::Value {
    let url = format!("{}{path}", sim.control.as_ref().expect("control API"));
    let (status, _, body) = common::xagent::http_get(&url, None);
    assert_eq!(status, 200);
    serde_json::from_slice(&body).expect("control json")
}

/// The words of a fix for a phone behind an adb server, which a phone the connector dials
/// itself must never be told.
const ADB_SERVER_FIXES: [&str; 5] = [
    "adb reconnect",
    "adb connect",
    "adb disconnect",
    "adb server",
    "replug",
];

/// A direct phone (`--device tcp:…`, no adb server) that stops accepting the connector's key
/// (the user revokes USB debugging authorisations: adbd drops the connection, and answers the
/// next one with `AUTH` it does not accept) is `device_unauthorized` with the phone-side fix —
/// never `device_offline` "address closed or refused": the descriptor goes straight from
/// `connected` to `revoked`, and the log says `device` → `unauthorized`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_phone_that_refuses_the_key_is_device_unauthorized() {
    let sim = SimPhone::start_with_control("SIMDIRKEY0001", &["--require-auth"]);
    let dir = TempDir::new("e2e-direct-key");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    // The connector offers its key; the user accepts the prompt.
    let mut offered = false;
    for _ in 0..100 {
        if control_get(&sim, "/v1/auth")["pending"] == 1 {
            offered = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(offered, "the connector never offered its key");
    assert_eq!(
        sim.control_post("/v1/auth", serde_json::json!({"action": "accept"})),
        200
    );
    let (mut x, ch) = common::scenario::claimed_channel(&conn.addr, &sim.serial).await;
    let ok = x
        .tool(&ch, "android_device_status", serde_json::json!({}))
        .await;
    assert!(ok.get("error").is_none(), "{ok}");

    assert_eq!(
        sim.control_post("/v1/auth", serde_json::json!({"action": "revoke"})),
        200
    );
    let push = x
        .wait_push("connection.descriptor.push", 10)
        .await
        .expect("a descriptor push after the key was revoked");
    assert_eq!(
        push["payload"]["connection_descriptor"]["connection"]["status"], "revoked",
        "{push}"
    );
    let ack = x
        .tool(&ch, "android_device_status", serde_json::json!({}))
        .await;
    assert_eq!(ack["error"]["code"], "device_unauthorized", "{ack}");
    let message = ack["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("accept") && message.contains("prompt"),
        "{message}"
    );
    for box_side in ADB_SERVER_FIXES.iter().chain(&["closed or refused"]) {
        assert!(!message.contains(box_side), "{box_side}: {message}");
    }
    let logs = conn.logs();
    assert!(
        logs.contains(r#"from="device" to="unauthorized""#),
        "{logs}"
    );
    assert!(!logs.contains(r#"to="offline""#), "{logs}");
}
