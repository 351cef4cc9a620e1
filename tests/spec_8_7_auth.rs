//! Spec §8.7–8.14: the `adb_device_claim` flow — auth only on an open channel, `auth.status`
//! (incl. `refresh`), `auth.cancel` (`ignored` with the descriptor, `not_found`),
//! `auth_session_not_found`, `auth.logout` releasing the phone with a `created` descriptor.

mod common;

use serde_json::json;

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::{claim_when_visible, code_gated_sim};
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

/// The form flows tell a missing field, a field of the wrong JSON type and an invalid value apart,
/// never repeating the value (fresh-user finding 10: `host: "; reboot"` and `claim_code: 123456`
/// both read "field … is required"). A wrong-typed claim code is a form error, not a guess.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn form_fields_missing_wrong_type_and_invalid_get_their_own_answers() {
    let mut phone = code_gated_sim("SIMFORM000010", "right-code-123").await;
    let pair = |input: serde_json::Value| json!({"flow_id": "adb_pair_code", "input": input});
    let claim = |input: serde_json::Value| json!({"flow_id": "adb_device_claim", "input": input});
    let serial = phone.sim.serial.clone();
    let cases = [
        (
            pair(json!({"host": "; reboot", "port": 37000, "code": "123456"})),
            "field `host` is not an IP address or host name",
        ),
        (
            pair(json!({"host": 10, "port": 37000, "code": "123456"})),
            "field `host` must be a string",
        ),
        (
            pair(json!({"port": 37000, "code": "123456"})),
            "field `host` is required",
        ),
        (
            pair(json!({"host": "192.168.1.20", "port": true, "code": "123456"})),
            "field `port` must be a port number from 1 to 65535, not a boolean",
        ),
        (
            pair(json!({"host": "192.168.1.20", "port": 37000, "code": 123456})),
            "field `code` must be a string (the pairing code the phone shows, in quotes), not a number",
        ),
        (
            pair(json!({"host": "192.168.1.20", "port": 37000})),
            "field `code` is required",
        ),
        (claim(json!({"serial": 42})), "field `serial` must be a string"),
        (claim(json!({})), "field `serial` is required"),
        (
            claim(json!({"serial": "S".repeat(200)})),
            "field `serial` is too long",
        ),
        (
            claim(json!({"serial": serial, "claim_code": 123456})),
            "field `claim_code` must be a string (the admin-issued claim code, in quotes), not a number",
        ),
        (
            claim(json!({"serial": serial, "claim_code": ["right-code-123"]})),
            "field `claim_code` must be a string",
        ),
    ];
    // Eight wrong-typed claim codes: none counts toward the guessing pause.
    for round in 0..4 {
        for (payload, said) in &cases {
            let e = phone
                .x
                .request("auth.start", Some(&phone.ch), payload.clone())
                .await;
            assert_eq!(e["error"]["code"], "auth_failed", "{round} {payload}: {e}");
            let m = e["error"]["message"].as_str().unwrap();
            assert!(m.contains(said), "{payload}: {m}");
            for value in ["reboot", "123456", "right-code-123"] {
                assert!(!m.contains(value), "{payload} echoed: {m}");
            }
        }
    }
    // Not paused: the right code binds (once the phone is visible).
    let right = claim(json!({"serial": phone.sim.serial, "claim_code": "right-code-123"}));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    let ok = loop {
        let ack = phone
            .x
            .request("auth.start", Some(&phone.ch), right.clone())
            .await;
        if ack.get("error").is_none() || std::time::Instant::now() > deadline {
            break ack;
        }
        assert_ne!(ack["error"]["code"], "rate_limited", "{ack}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
}

/// A malformed `auth.status` or `auth.cancel` (no payload, `auth_session_id` missing or not a
/// string) is `invalid_packet` naming the field, as a malformed `auth.start` payload is; only a
/// well-formed id the channel does not know is `auth_session_not_found` (status) or `not_found`
/// (cancel) (fresh-user finding: every malformed payload read as an unknown session).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_auth_status_is_invalid_packet() {
    let dir = TempDir::new("status-shape");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    for payload in [
        serde_json::Value::Null,
        json!({}),
        json!({"auth_session_id": 7}),
        json!({"auth_session_id": {"id": "as_1"}}),
        json!({"auth_session_id": "as_1", "refresh": "yes"}),
    ] {
        let e = x.request("auth.status", Some(&ch), payload.clone()).await;
        assert_eq!(
            (e["type"].as_str(), e["error"]["code"].as_str()),
            (Some("auth.status.ack"), Some("invalid_packet")),
            "{payload}: {e}"
        );
        let m = e["error"]["message"].as_str().unwrap();
        assert!(
            m.contains("auth_session_id") || m.contains("refresh"),
            "names the field: {m}"
        );
    }
    for payload in [
        serde_json::Value::Null,
        json!({}),
        json!({"auth_session_id": 7}),
        json!({"auth_session_id": ["as_1"]}),
    ] {
        let e = x.request("auth.cancel", Some(&ch), payload.clone()).await;
        assert_eq!(
            (e["type"].as_str(), e["error"]["code"].as_str()),
            (Some("auth.cancel.ack"), Some("invalid_packet")),
            "{payload}: {e}"
        );
        let m = e["error"]["message"].as_str().unwrap();
        assert!(m.contains("auth_session_id"), "names the field: {m}");
    }
    let e = x
        .request(
            "auth.status",
            Some(&ch),
            json!({"auth_session_id": "as_nosuch"}),
        )
        .await;
    assert_eq!(e["error"]["code"], "auth_session_not_found", "{e}");
    // The malformed packet's start counterpart gets the same code.
    let e = x
        .request(
            "auth.start",
            Some(&ch),
            json!({"flow_id": "adb_device_claim", "input": 5}),
        )
        .await;
    assert_eq!(e["error"]["code"], "invalid_packet", "{e}");
}

/// Under claim policy `open` the claim code is not needed, but one of another JSON type (a
/// number, an object) is refused as every wrong-typed form field is (`auth_failed` "field
/// `claim_code` must be a string"), not silently accepted; absent or `null` it is fine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_policy_refuses_a_wrong_typed_claim_code() {
    let sim = SimPhone::start("SIMOPENCODE0004");
    let dir = TempDir::new("open-code");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    // The phone is visible first, so a refusal below is about the code alone.
    let ok = claim_when_visible(&mut x, &ch, &sim.serial).await;
    assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
    let ack = x.request("auth.logout", Some(&ch), json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    for code in [
        json!(123456),
        json!({"code": "x"}),
        json!(["x"]),
        json!(true),
    ] {
        let claim = json!({"flow_id": "adb_device_claim", "input": {"serial": sim.serial, "claim_code": code}});
        let e = x.request("auth.start", Some(&ch), claim).await;
        assert_eq!(e["error"]["code"], "auth_failed", "{code}: {e}");
        assert_eq!(e["payload"]["status"], "failed", "{code}: {e}");
        let m = e["error"]["message"].as_str().unwrap();
        assert!(
            m.contains("field `claim_code` must be a string"),
            "{code}: {m}"
        );
        assert!(!m.contains("123456"), "{m}");
    }
    let claim =
        json!({"flow_id": "adb_device_claim", "input": {"serial": sim.serial, "claim_code": null}});
    let ok = x.request("auth.start", Some(&ch), claim).await;
    assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
}
