//! Spec §8.17 / §9: when the bound phone goes away the connector pushes an `offline` descriptor
//! with tools unavailable, tool calls fail fast with `device_offline`, and when the phone is back
//! a `connected` descriptor is pushed — within 2 s of the transport event each time.

mod common;

use std::time::Instant;

use serde_json::json;

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claimed_channel;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_8_17_unplug_pushes_offline_and_replug_pushes_connected() {
    let sim = SimPhone::start("SIMPUSH000013");
    let dir = TempDir::new("push");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;

    let (serial, addr) = sim.unplug();
    let t0 = Instant::now();
    let push = x
        .wait_push("connection.descriptor.push", 5)
        .await
        .expect("offline push");
    let offline_ms = t0.elapsed().as_millis();
    assert_eq!(push["connector_channel_id"], json!(ch));
    let d = &push["payload"]["connection_descriptor"];
    assert_eq!(d["connection"]["status"], "offline");
    assert!(d["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["status"] == "unavailable"));
    assert!(offline_ms <= 2000, "offline pushed after {offline_ms} ms");
    let t = Instant::now();
    let ack = x.tool(&ch, "android_device_status", json!({})).await;
    assert_eq!(ack["error"]["code"], "device_offline", "{ack}");
    assert!(t.elapsed().as_millis() < 1000, "fails fast");

    let _back = SimPhone::start_at(&serial, &addr);
    let t0 = Instant::now();
    let push = x
        .wait_push("connection.descriptor.push", 5)
        .await
        .expect("connected push");
    let back_ms = t0.elapsed().as_millis();
    assert_eq!(
        push["payload"]["connection_descriptor"]["connection"]["status"],
        "connected"
    );
    assert!(back_ms <= 2000, "connected pushed after {back_ms} ms");
    let ack = x.tool(&ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "binding survived: {ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_9_unauthorized_is_revoked_with_tools_requiring_reauth() {
    let sim = SimPhone::start_with_control("SIMREVOKE0013", &[]);
    let dir = TempDir::new("revoked");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    // The phone drops the host and, on reconnect, asks for a key it does not accept.
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "unplugged"})),
        200
    );
    let push = x
        .wait_push("connection.descriptor.push", 5)
        .await
        .expect("offline push");
    assert_eq!(
        push["payload"]["connection_descriptor"]["connection"]["status"],
        "offline"
    );
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "unauthorized"})),
        200
    );
    // Telling a refused key takes a probe (1 s), the handshake's wait for the key (≤ 3 s) and
    // the redial grace (2 s): up to ~6 s before the push, more on a loaded machine.
    let push = x
        .wait_push("connection.descriptor.push", 20)
        .await
        .expect("revoked push");
    let d = &push["payload"]["connection_descriptor"];
    assert_eq!(d["connection"]["status"], "revoked");
    assert!(d["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["status"] == "requires_reauth"
            && t["target_permission_state"] == "requires_reauth"));
    let ack = x.tool(&ch, "android_device_status", json!({})).await;
    assert_eq!(ack["error"]["code"], "device_unauthorized", "{ack}");
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "online"})),
        200
    );
    let push = x
        .wait_push("connection.descriptor.push", 5)
        .await
        .expect("connected push");
    assert_eq!(
        push["payload"]["connection_descriptor"]["connection"]["status"],
        "connected"
    );
}
