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
    common::scenario::wait_key_offered(&sim).await;
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

/// The count of phones in `state` in the connector's `GET /metrics` (Prometheus text).
fn phones_in_state(conn: &ConnectorProc, state: &str) -> Option<f64> {
    let url = format!("{}/metrics", conn.base);
    let (status, _, body) = common::xagent::http_get(&url, Some(common::API_KEY));
    assert_eq!(status, 200);
    let text = String::from_utf8(body).expect("metrics text");
    let series = format!("xagent_adb_phones{{state=\"{state}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&series))
        .and_then(|n| n.trim().parse().ok())
}

/// A direct phone that refuses the connector's key from its very first connection (the RSA
/// prompt not yet accepted) sends no `CNXN`, so its serial is unknown; the running connector
/// still lists it — `unauthorized`, under its address `tcp:HOST:PORT`, as `adb devices` lists
/// an unauthorized network phone — and a claim for it (by its serial, or by that address) is
/// `device_unauthorized` with the phone-side fix, not "no attached phone". Once the prompt is
/// accepted the same connector identifies it and the claim succeeds. The connector's key is
/// in no log line and no ack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_phone_that_never_accepted_the_key_is_listed_unauthorized() {
    let sim = SimPhone::start_with_control("SIMDIRKEY0002", &["--require-auth"]);
    let dir = TempDir::new("e2e-direct-first-key");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let transport = format!("tcp:{}", sim.addr);
    let mut x = common::xagent::connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let mut acks = Vec::new();

    // The connector offers its key (the prompt shows on the phone); nobody accepts it.
    common::scenario::wait_key_offered(&sim).await;
    // Claimed by its serial while the prompt waits: refused as unauthorized once the refusal
    // is recorded (an answer before that may be "no attached phone").
    let mut refused = serde_json::Value::Null;
    for _ in 0..100 {
        refused = x.claim(&ch, &sim.serial).await;
        acks.push(refused.to_string());
        if refused["error"]["code"] == "device_unauthorized" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    }
    assert_eq!(refused["error"]["code"], "device_unauthorized", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&transport), "{message}");
    assert!(
        message.contains("accept") && message.contains("prompt"),
        "{message}"
    );
    assert!(!message.contains(&sim.serial), "{message}");
    for box_side in ADB_SERVER_FIXES.iter().chain(&["no attached phone"]) {
        assert!(!message.contains(box_side), "{box_side}: {message}");
    }
    // Listed, by the address `devices` shows it under; a claim by that name says the same.
    assert_eq!(phones_in_state(&conn, "unauthorized"), Some(1.0));
    assert_eq!(phones_in_state(&conn, "device"), Some(0.0));
    let by_address = x.claim(&ch, &transport).await;
    acks.push(by_address.to_string());
    assert_eq!(
        by_address["error"]["code"], "device_unauthorized",
        "{by_address}"
    );
    let message = by_address["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("accept") && message.contains("prompt"),
        "{message}"
    );

    // The user accepts the prompt: the running connector identifies the phone.
    assert_eq!(
        sim.control_post("/v1/auth", serde_json::json!({"action": "accept"})),
        200
    );
    let ack = common::scenario::claim_when_visible(&mut x, &ch, &sim.serial).await;
    acks.push(ack.to_string());
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let ok = x
        .tool(&ch, "android_device_status", serde_json::json!({}))
        .await;
    assert!(ok.get("error").is_none(), "{ok}");
    assert_eq!(phones_in_state(&conn, "unauthorized"), Some(0.0));
    assert_eq!(phones_in_state(&conn, "device"), Some(1.0));

    let logs = conn.logs();
    assert!(
        logs.contains("direct phone refuses this connector's key"),
        "{logs}"
    );
    assert!(
        logs.contains("direct phone accepted this connector's key"),
        "{logs}"
    );
    // The key the connector offered (public half, and the private file's body) is nowhere.
    let (public, private) = common::scenario::adb_key_secrets(dir.path()).await;
    for text in acks.iter().chain([&logs]) {
        assert!(
            !text.contains(&public) && !text.contains(&private),
            "{text}"
        );
    }
}

/// The user's sequence for a `--device` phone that never accepted the key: the one-shot
/// `devices` lists it `unauthorized` under `tcp:HOST:PORT`, and a claim naming exactly that
/// transport on a `serve` with the same data dir is `device_unauthorized` (with the phone-side
/// fix), never `auth_failed` "no attached phone", once the connector has met the phone (the
/// claim is retried only while it has not: a phone not yet connected is unknown to it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_by_the_address_devices_lists_is_device_unauthorized() {
    let sim = SimPhone::start_with_control("SIMDIRKEY0003", &["--require-auth"]);
    let dir = TempDir::new("e2e-direct-claim-addr");
    let data = dir.path().display().to_string();
    let transport = format!("tcp:{}", sim.addr);
    let rows = common::procs::devices_json_direct(&data, &transport);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["serial"], transport.as_str(), "{rows:?}");
    assert_eq!(rows[0]["state"], "unauthorized", "{rows:?}");

    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let mut x = common::xagent::connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let mut ack = serde_json::Value::Null;
    for _ in 0..100 {
        ack = x.claim(&ch, &transport).await;
        let unknown = ack["error"]["code"] == "auth_failed"
            && ack["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("no attached phone"));
        if !unknown {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    }
    assert_eq!(ack["error"]["code"], "device_unauthorized", "{ack}");
    let message = ack["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("accept") && message.contains("prompt"),
        "{message}"
    );
}
