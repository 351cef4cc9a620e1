//! Spec §8.7–8.14: the `adb_device_claim` flow — auth only on an open channel, `auth.status`
//! (incl. `refresh`), `auth.cancel` (`ignored` with the descriptor, `not_found`),
//! `auth_session_not_found`, `auth.logout` releasing the phone with a `created` descriptor.

mod common;

use serde_json::json;

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claim_when_visible;
use common::xagent::connect;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_8_7_to_8_14_claim_status_cancel_logout() {
    let sim = SimPhone::start("SIMAUTH000021");
    let dir = TempDir::new("auth");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    // Auth on a channel that is not open here.
    let e = x
        .request(
            "auth.start",
            Some("cch_nope"),
            json!({"flow_id": "adb_device_claim", "input": {"serial": sim.serial}}),
        )
        .await;
    assert_eq!(e["error"]["code"], "connector_channel_not_owned");
    let (ch, _) = x.open(None).await;
    // Unknown flow, missing serial, unknown phone.
    let e = x
        .request(
            "auth.start",
            Some(&ch),
            json!({"flow_id": "qr", "input": {}}),
        )
        .await;
    assert_eq!(e["error"]["code"], "auth_flow_not_found", "{e}");
    let said = e["error"]["message"].as_str().unwrap_or_default();
    for flow in ["adb_device_claim", "adb_pair_code", "adb_qr_pair"] {
        assert!(
            said.contains(flow),
            "the refusal names every flow offered: {e}"
        );
    }
    let e = x
        .request(
            "auth.start",
            Some(&ch),
            json!({"flow_id": "adb_device_claim", "input": {}}),
        )
        .await;
    assert_eq!(e["error"]["code"], "auth_failed");
    assert_eq!(e["payload"]["status"], "failed");
    let e = x.claim(&ch, "NO-SUCH-PHONE").await;
    assert_eq!(e["error"]["code"], "auth_failed");

    let ack = claim_when_visible(&mut x, &ch, &sim.serial).await;
    let session = ack["payload"]["auth_session_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(ack["payload"]["flow_id"], "adb_device_claim");
    assert_eq!(ack["payload"]["connector_channel_id"], json!(ch));

    let st = x
        .request(
            "auth.status",
            Some(&ch),
            json!({"flow_id": "adb_device_claim", "auth_session_id": session, "refresh": true}),
        )
        .await;
    assert_eq!(st["type"], "auth.status.ack");
    assert_eq!(st["payload"]["status"], "authenticated");
    assert_eq!(
        st["payload"]["connection_descriptor"]["connection"]["status"],
        "connected"
    );
    let st = x
        .request(
            "auth.status",
            Some(&ch),
            json!({"auth_session_id": "auth_unknown"}),
        )
        .await;
    assert_eq!(st["error"]["code"], "auth_session_not_found");

    let c = x
        .request(
            "auth.cancel",
            Some(&ch),
            json!({"auth_session_id": session}),
        )
        .await;
    assert_eq!(c["type"], "auth.cancel.ack");
    assert_eq!(c["payload"]["status"], "ignored");
    assert_eq!(
        c["payload"]["connection_descriptor"]["connection"]["status"],
        "connected"
    );
    let c = x
        .request(
            "auth.cancel",
            Some(&ch),
            json!({"auth_session_id": "auth_unknown"}),
        )
        .await;
    assert_eq!(c["payload"]["status"], "not_found");

    let shot = x.tool(&ch, "android_screenshot", json!({})).await;
    let url = format!(
        "{}{}",
        conn.base,
        shot["payload"]["result"]["download_url"].as_str().unwrap()
    );
    assert_eq!(common::xagent::http_get(&url, None).0, 200);
    let out = x.request("auth.logout", Some(&ch), json!({})).await;
    assert_eq!(
        common::xagent::http_get(&url, None).0,
        404,
        "logout revokes the channel's files"
    );
    assert_eq!(out["type"], "auth.logout.ack");
    assert_eq!(out["payload"]["status"], "ok");
    let d = &out["payload"]["connection_descriptor"];
    assert_eq!(d["connection"]["status"], "created");
    assert!(d["tools"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["status"] == "unavailable"));
    let ack = x.tool(&ch, "android_device_status", json!({})).await;
    assert_eq!(ack["error"]["code"], "connection_not_authenticated");
    // The phone is free again: another channel can claim it.
    let (other, _) = x.open(None).await;
    let ack = x.claim(&other, &sim.serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    // channel.close keeps the binding.
    let closed = x.request("channel.close", Some(&other), json!({})).await;
    assert_eq!(closed["type"], "channel.close.ack");
    assert_eq!(closed["payload"]["status"], "ok");
    let e = x
        .request("connection.descriptor.get", Some(&other), json!({}))
        .await;
    assert_eq!(e["error"]["code"], "channel_not_open");
    let (again, open) = x.open(Some(&other)).await;
    assert_eq!(again, other);
    assert_eq!(
        open["payload"]["connection_descriptor"]["connection"]["status"],
        "connected"
    );
}
