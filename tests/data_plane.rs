//! Data plane over a real WebSocket against the real binary (spec §6–8): hello gate and refusals,
//! routing errors, bad input keeps the socket usable, reconnect and restart restore the channel,
//! file refs are signed and channel-bound, secrets never reach logs.

mod common;

use serde_json::{json, Value};

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::{claim_when_visible, code_gated_sim};
use common::xagent::{connect, http_get};
use common::API_KEY;

fn code(p: &Value) -> &str {
    p["error"]["code"].as_str().unwrap_or("")
}

#[tokio::test]
async fn hello_gate_and_refusals() {
    let dir = TempDir::new("hello");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    // First packet must be hello.
    let e = x.request("ping", None, json!({})).await;
    assert_eq!(
        (e["type"].as_str(), code(&e)),
        (Some("error"), "hello_required")
    );
    let e = x.request("channel.open", None, json!({})).await;
    assert_eq!(code(&e), "hello_required");
    // Wrong card id, missing/old version, missing profiles: refused, socket stays open.
    let bad = [
        (
            json!({"connector_card_id": "im.wechat", "protocol_version": "3.0", "supported_profiles": ["xagent.device.v1"]}),
            "connector_card_id_mismatch",
        ),
        (
            json!({"connector_card_id": "device.adb", "supported_profiles": ["xagent.device.v1"]}),
            "unsupported_protocol_version",
        ),
        (
            json!({"connector_card_id": "device.adb", "protocol_version": "2.9", "supported_profiles": ["xagent.device.v1"]}),
            "unsupported_protocol_version",
        ),
        (
            json!({"connector_card_id": "device.adb", "protocol_version": 3.0, "supported_profiles": ["xagent.device.v1"]}),
            "unsupported_protocol_version",
        ),
        (
            json!({"connector_card_id": "device.adb", "protocol_version": "3.0"}),
            "unsupported_profile",
        ),
        (
            json!({"connector_card_id": "device.adb", "protocol_version": "3.0", "supported_profiles": ["xagent.im.v2"]}),
            "unsupported_profile",
        ),
    ];
    for (payload, want) in bad {
        let e = x.request("connector.hello", None, payload).await;
        assert_eq!(e["type"], "error");
        assert_eq!(code(&e), want, "{e}");
    }
    let e = x.request("connector.hello", None, Value::Null).await;
    assert_eq!(code(&e), "invalid_packet", "hello without payload: {e}");
    let ack = x.hello("").await;
    let id = ack["payload"]["connector_id"].as_str().unwrap().to_string();
    assert_eq!(ack["payload"]["connector_card_id"], "device.adb");
    assert_eq!(ack["payload"]["protocol_version"], "3.0");
    let pong = x.request("ping", None, json!({})).await;
    assert_eq!(pong["type"], "pong");
    // The id is stable for a new socket.
    let mut y = connect(&conn.addr).await;
    assert_eq!(y.hello(&id).await["payload"]["connector_id"], json!(id));
}

#[tokio::test]
async fn bad_input_gets_documented_errors_and_the_socket_stays_usable() {
    let dir = TempDir::new("badinput");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    for garbage in [
        "{",
        "[]",
        "null",
        "{\"schema\":\"nope\",\"packet_id\":\"p\",\"type\":\"ping\"}",
        "{\"schema\":\"xagent.connector.packet/v1\",\"packet_id\":\"\",\"type\":\"ping\"}",
        "{\"schema\":\"xagent.connector.packet/v1\",\"packet_id\":1,\"type\":\"ping\"}",
    ] {
        x.send_text(garbage).await;
        let e = x.recv_within(5).await.expect("an error packet");
        assert_eq!(
            (e["type"].as_str(), code(&e)),
            (Some("error"), "invalid_packet"),
            "{garbage}: {e}"
        );
    }
    // A readable packet_id / request_id is echoed so the client can match the error.
    x.send_text("{\"schema\":\"bogus\",\"packet_id\":\"pkt_x2\",\"request_id\":\"req_x2\",\"type\":\"ping\",\"payload\":{}}").await;
    let e = x.recv_within(5).await.expect("an error packet");
    assert_eq!(code(&e), "invalid_packet");
    assert_eq!(
        (e["reply_to"].as_str(), e["request_id"].as_str()),
        (Some("pkt_x2"), Some("req_x2")),
        "{e}"
    );
    let e = x.request("message.push", None, json!({})).await;
    assert_eq!(code(&e), "unsupported_packet");
    let e = x
        .request("connection.descriptor.get", None, json!({}))
        .await;
    assert_eq!(code(&e), "connector_channel_id_required");
    let e = x
        .request("connection.descriptor.get", Some("cch_not_mine"), json!({}))
        .await;
    assert_eq!(code(&e), "connector_channel_not_owned");
    let (ch, _) = x.open(None).await;
    let d = x
        .request("connection.descriptor.get", Some(&ch), json!({}))
        .await;
    assert_eq!(d["type"], "connection.descriptor.get.ack");
    assert_eq!(
        d["payload"]["connection_descriptor"]["connection"]["status"],
        "created"
    );
    // Tool before claim.
    let ack = x.tool(&ch, "android_screenshot", json!({})).await;
    assert_eq!(code(&ack), "connection_not_authenticated");
    // Unknown tool; wrong argument types.
    let ack = x.tool(&ch, "android_teleport", json!({})).await;
    assert_eq!(code(&ack), "tool_not_found");
    // A channel opened on another socket is not open here.
    let mut y = connect(&conn.addr).await;
    y.hello("").await;
    let e = y
        .request("connection.descriptor.get", Some(&ch), json!({}))
        .await;
    assert_eq!(code(&e), "channel_not_open");
    let pong = x.request("ping", None, json!({})).await;
    assert_eq!(pong["type"], "pong", "socket still usable");
}

/// A caller's value is never repeated in an error (it may carry a secret): malformed envelope
/// fields, payloads of the wrong shape, an unknown packet type or tool, a pairing host that
/// cannot be reached. Each answer names the field and the expected shape instead (fresh-user
/// finding: serde's "invalid type: string \"…\"" and the unknown type were quoted).
#[tokio::test]
async fn errors_never_echo_the_callers_value() {
    const MARK: &str = "mark7f3a";
    /// A loopback address (Linux routes all of 127.0.0.0/8 to `lo`) with nothing on port 9.
    const UNREACHABLE_HOST: &str = "127.31.41.59";
    let dir = TempDir::new("noecho");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let answers = [
        // Envelope: `time` must be an integer.
        {
            x.send_text(&format!(
                r#"{{"schema":"xagent.connector.packet/v1","packet_id":"pkt_e1","type":"ping","time":"{MARK}"}}"#
            ))
            .await;
            let e = x.recv_within(5).await.expect("an error packet");
            assert_eq!(code(&e), "invalid_packet", "{e}");
            assert!(
                e["error"]["message"].as_str().unwrap().contains("time"),
                "{e}"
            );
            e
        },
        {
            let e = x.request(&format!("{MARK}.push"), None, json!({})).await;
            assert_eq!(code(&e), "unsupported_packet", "{e}");
            e
        },
        {
            let e = x
                .request(
                    "connector.hello",
                    None,
                    json!({"connector_card_id": "device.adb", "protocol_version": "3.0", "supported_profiles": MARK}),
                )
                .await;
            assert_eq!(code(&e), "invalid_packet", "{e}");
            assert!(
                e["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("supported_profiles"),
                "{e}"
            );
            e
        },
        {
            let e = x
                .request(
                    "auth.start",
                    Some(&ch),
                    json!({"flow_id": "adb_device_claim", "input": MARK}),
                )
                .await;
            assert_eq!(code(&e), "invalid_packet", "{e}");
            assert!(
                e["error"]["message"].as_str().unwrap().contains("input"),
                "{e}"
            );
            e
        },
        {
            let e = x
                .request(
                    "tool.invoke",
                    Some(&ch),
                    json!({"tool_id": "android_tap", "arguments": {"connector_channel_id": ch}, "context": MARK}),
                )
                .await;
            assert_eq!(code(&e), "invalid_packet", "{e}");
            assert!(
                e["error"]["message"].as_str().unwrap().contains("context"),
                "{e}"
            );
            e
        },
        {
            let e = x
                .request(
                    "tool.invoke",
                    Some(&ch),
                    json!({"tool_id": "android_tap", "arguments": {"connector_channel_id": ch}, "context": {"tool_call_id": ["x"], "session_id": MARK}}),
                )
                .await;
            assert_eq!(code(&e), "invalid_packet", "{e}");
            e
        },
        x.tool(&ch, MARK, json!({})).await,
        x.request(
            "auth.status",
            Some(&ch),
            json!({"auth_session_id": "as_1", "refresh": MARK}),
        )
        .await,
        {
            // Passes the host check and then cannot be reached: a loopback address where
            // nothing listens (no name to resolve, nothing leaves the machine).
            let e = x
                .request(
                    "auth.start",
                    Some(&ch),
                    json!({"flow_id": "adb_pair_code", "input": {"host": UNREACHABLE_HOST, "port": 9, "code": "123456"}}),
                )
                .await;
            assert_eq!(code(&e), "auth_failed", "{e}");
            let message = e["error"]["message"].as_str().unwrap();
            assert!(message.contains("`host`"), "{e}");
            assert!(
                !message.contains(UNREACHABLE_HOST),
                "the host is echoed: {e}"
            );
            e
        },
    ];
    for e in answers {
        assert!(!code(&e).is_empty(), "an error: {e}");
        assert!(
            !e["error"].to_string().contains(MARK),
            "the value is echoed: {e}"
        );
        assert!(
            !e["payload"].to_string().contains(MARK),
            "the value is echoed: {e}"
        );
    }
    assert!(!conn.logs().contains(MARK), "nor logged");
    let pong = x.request("ping", None, json!({})).await;
    assert_eq!(pong["type"], "pong", "socket still usable");
}

#[tokio::test]
async fn http_auth_and_card_rules() {
    let dir = TempDir::new("http");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    assert_eq!(http_get(&format!("{}/health", conn.base), None).0, 401);
    // A plain GET of /ws: 401 without the key, a JSON error with it.
    assert_eq!(http_get(&format!("{}/ws", conn.base), None).0, 401);
    let (st, _, body) = http_get(&format!("{}/ws", conn.base), Some(API_KEY));
    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    assert_eq!(
        (st, v["error"]["code"].as_str()),
        (400, Some("websocket_upgrade_required")),
        "{v}"
    );
    assert_eq!(
        http_get(
            &format!("{}/health", conn.base),
            Some("wrong-key-wrong-key")
        )
        .0,
        401
    );
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let lower = agent
        .get(&format!("{}/health", conn.base))
        .header("Authorization", &format!("bearer {API_KEY}"))
        .call()
        .unwrap();
    assert_eq!(
        lower.status().as_u16(),
        200,
        "the scheme is case-insensitive"
    );
    let (st, _, body) = http_get(&format!("{}/health", conn.base), Some(API_KEY));
    assert_eq!(st, 200);
    let health: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(health["connector_card_id"], "device.adb");
    assert_eq!(health["protocol_version"], "3.0");
    let (_, _, card) = http_get(&format!("{}/connector-card.json", conn.base), None);
    let card: Value = serde_json::from_slice(&card).unwrap();
    common::schemas::assert_card(&card);
    assert_eq!(health["build"], card["build"]);
    assert_eq!(
        health["connector_card_version"],
        card["connector"]["version"]
    );
    assert_eq!(card["supports"]["user_channel_mode"], "multiple");
    assert_eq!(card["supports"]["targets"][0]["provider"], "adb");
    for t in card["tools"].as_array().unwrap() {
        assert_eq!(
            t["input_schema"]["properties"]["connector_channel_id"]["type"],
            "string"
        );
        assert_eq!(t["input_schema"]["required"][0], "connector_channel_id");
        assert_eq!(t["related_skill_ids"], json!(["connector-device-adb"]));
    }
    let flow = &card["auth_flows"][0];
    assert_eq!(flow["id"], "adb_device_claim");
    assert_eq!(flow["fields"][1]["secret"], true);
    assert!(!card.to_string().contains(API_KEY));
    // WebSocket upgrade without the key is refused.
    let req = tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
        format!("ws://{}/ws", conn.addr),
    )
    .unwrap();
    assert!(tokio_tungstenite::connect_async(req).await.is_err());
}

/// One raw HTTP/1.1 request (the path sent as is, no client normalization); returns the
/// status, the lower-cased headers and the body.
fn raw_http(addr: &str, method: &str, path: &str, bearer: Option<&str>) -> (u16, String, String) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let auth = bearer
        .map(|k| format!("Authorization: Bearer {k}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).expect("read");
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_string())
}

/// Unknown paths and wrong methods answer the documented JSON error body with a stable code
/// (they had an empty body and no content type); the routes' own key check is unchanged.
#[tokio::test]
async fn unknown_routes_and_wrong_methods_get_json_errors() {
    let dir = TempDir::new("http-fallback");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let cases = [
        ("GET", "/nope", 404, "endpoint_not_found"),
        (
            "GET",
            "/files/refs/../../etc/passwd",
            404,
            "endpoint_not_found",
        ),
        ("GET", "/files/refs/a/b", 404, "endpoint_not_found"),
        ("POST", "/health", 405, "method_not_allowed"),
        ("DELETE", "/connector-card.json", 405, "method_not_allowed"),
        ("GET", "/files/uploads", 405, "method_not_allowed"),
    ];
    for bearer in [None, Some(API_KEY)] {
        for (method, path, status, code) in cases {
            let (st, head, body) = raw_http(&conn.addr, method, path, bearer);
            let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            assert_eq!(
                (st, v["error"]["code"].as_str()),
                (status, Some(code)),
                "{method} {path}: {head}\n{body}"
            );
            assert!(
                head.contains("content-type: application/json"),
                "{method} {path}: {head}"
            );
            let message = v["error"]["message"].as_str().unwrap_or("");
            assert!(!message.is_empty(), "{body}");
            assert!(
                !message.contains("passwd"),
                "the path is not echoed: {body}"
            );
            if status == 405 {
                assert!(message.starts_with(method), "{body}");
                assert!(head.contains("\r\nallow: "), "{method} {path}: {head}");
            }
        }
    }
    // The routes themselves are unchanged: the key is still checked first where it was.
    assert_eq!(raw_http(&conn.addr, "GET", "/health", None).0, 401);
    assert_eq!(raw_http(&conn.addr, "GET", "/health", Some(API_KEY)).0, 200);
    assert_eq!(
        raw_http(&conn.addr, "GET", "/connector-card.json", None).0,
        200
    );
    let (st, _, body) = raw_http(&conn.addr, "GET", "/files/refs/nosuch.ref", Some(API_KEY));
    assert_eq!(st, 404, "{body}");
    assert!(body.contains("file_not_found"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reconnect_and_restart_restore_the_bound_channel() {
    let sim = SimPhone::start("SIMRESTORE0007");
    let dir = TempDir::new("restore");
    let mut conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let mut x = connect(&conn.addr).await;
    let id = x.hello_fresh().await;
    let (ch, _) = x.open(None).await;
    let ack = claim_when_visible(&mut x, &ch, &sim.serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let shot = x.tool(&ch, "android_screenshot", json!({})).await;
    let file_url = format!(
        "{}{}",
        conn.base,
        shot["payload"]["result"]["download_url"].as_str().unwrap()
    );
    x.close().await;

    // New socket, same connector id and channel: same channel, still connected, tools work.
    let mut y = connect(&conn.addr).await;
    assert_eq!(y.hello(&id).await["payload"]["connector_id"], json!(id));
    let (ch2, open) = y.open(Some(&ch)).await;
    assert_eq!(ch2, ch);
    assert_eq!(open["payload"]["restored"], true);
    assert_eq!(
        open["payload"]["connection_descriptor"]["connection"]["status"],
        "connected"
    );
    assert!(y
        .tool(&ch, "android_device_status", json!({}))
        .await
        .get("error")
        .is_none());
    y.close().await;

    // kill -9 and restart on the same data dir.
    conn.restart();
    let mut z = connect(&conn.addr).await;
    assert_eq!(
        z.hello(&id).await["payload"]["connector_id"],
        json!(id),
        "connector id persisted"
    );
    let (ch3, _) = z.open(Some(&ch)).await;
    assert_eq!(ch3, ch, "channel persisted");
    // Connected once the phone is verified reachable again.
    let mut status = String::new();
    for _ in 0..50 {
        let d = z
            .request("connection.descriptor.get", Some(&ch), json!({}))
            .await;
        status = d["payload"]["connection_descriptor"]["connection"]["status"]
            .as_str()
            .unwrap()
            .to_string();
        if status == "connected" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(status, "connected");
    let st = z.tool(&ch, "android_device_status", json!({})).await;
    assert!(st.get("error").is_none(), "{st}");
    assert_eq!(
        http_get(&file_url, None).0,
        200,
        "file refs survive a restart"
    );
    // A second channel cannot claim the same phone.
    let (other, _) = z.open(None).await;
    let e = z.claim(&other, &sim.serial).await;
    assert_eq!(code(&e), "auth_failed", "{e}");
    assert!(e["error"]["message"]
        .as_str()
        .unwrap()
        .contains("already bound"));
    // Unknown old channel id gets a fresh one.
    let (fresh, ack) = z.open(Some("cch_unknown_old")).await;
    assert_ne!(fresh, "cch_unknown_old");
    assert_eq!(ack["payload"]["restored"], false, "a fresh channel says so");
    // One process per data dir: a second one refuses to start.
    let second = std::process::Command::new(common::procs::bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--adb-server", ""])
        .arg("--data-dir")
        .arg(&conn.data_dir)
        .arg("--api-key-file")
        .arg(conn.data_dir.join("api_key.txt"))
        .output()
        .unwrap();
    assert!(!second.status.success());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(stderr.contains("in use"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_refs_are_signed_and_bound_to_their_channel() {
    let sim = SimPhone::start("SIMFILEREF0009");
    let dir = TempDir::new("fileref");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    claim_when_visible(&mut x, &ch, &sim.serial).await;
    let shot = x.tool(&ch, "android_screenshot", json!({})).await;
    let r = &shot["payload"]["result"];
    let file_ref = r["file_ref"].as_str().unwrap();
    assert!(r["expires_at"].as_i64().unwrap() > 1_700_000_000_000);
    let url = format!("{}/files/refs/{file_ref}", conn.base);
    assert_eq!(http_get(&url, None).0, 200);
    // Tampered signature → 403; unknown id → 404; garbage → 404.
    let (id, sig) = file_ref.split_once('.').unwrap();
    let mut bad_sig: Vec<char> = sig.chars().collect();
    bad_sig[0] = if bad_sig[0] == 'A' { 'B' } else { 'A' };
    let tampered = format!(
        "{}/files/refs/{id}.{}",
        conn.base,
        bad_sig.iter().collect::<String>()
    );
    assert_eq!(http_get(&tampered, None).0, 403);
    let unknown = format!("{}/files/refs/{}.{sig}", conn.base, "0".repeat(32));
    assert_eq!(http_get(&unknown, None).0, 404);
    assert_eq!(
        http_get(&format!("{}/files/refs/nonsense", conn.base), None).0,
        404
    );
    // Another channel's header → 403.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let resp = agent
        .get(&url)
        .header("X-XAgent-Connector-Channel-ID", "cch_other")
        .call()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 403);
    let resp = agent
        .get(&url)
        .header("X-XAgent-Connector-Channel-ID", ch.as_str())
        .call()
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_reach_logs_cards_or_errors() {
    let claim_code = "claim-CODE-493817";
    let mut phone = code_gated_sim("SIMSECRET00011", claim_code).await;
    // Wrong code refused without echoing it; right code binds.
    let wrong = "guess-000000";
    let mut e = Value::Null;
    for _ in 0..50 {
        e = phone.x.request("auth.start", Some(&phone.ch), json!({"flow_id": "adb_device_claim", "input": {"serial": phone.sim.serial, "claim_code": wrong}})).await;
        if code(&e) == "auth_failed" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(code(&e), "auth_failed", "{e}");
    assert!(!e.to_string().contains(wrong));
    // The code is checked before the phone is looked up, so retry while the phone is not yet
    // visible to the connector.
    let mut ok = Value::Null;
    for _ in 0..75 {
        ok = phone.x.request("auth.start", Some(&phone.ch), json!({"flow_id": "adb_device_claim", "input": {"serial": phone.sim.serial, "claim_code": claim_code}})).await;
        if ok["payload"]["status"] == "authenticated" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
    assert!(!ok.to_string().contains(claim_code));
    let logs = phone.conn.logs();
    assert!(logs.contains("phone bound"), "the log is captured");
    for secret in [API_KEY, claim_code, wrong, phone.sim.serial.as_str()] {
        assert!(!logs.contains(secret), "log leaks a secret: {secret}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_code_guessing_is_throttled() {
    let mut phone = code_gated_sim("SIMGUESS00031", "right-code-123").await;
    let claim = |code: &'static str| json!({"flow_id": "adb_device_claim", "input": {"serial": phone.sim.serial, "claim_code": code}});
    // A missing code is named as missing and is not counted as a guess.
    for _ in 0..6 {
        let e = phone
            .x
            .request(
                "auth.start",
                Some(&phone.ch),
                json!({"flow_id": "adb_device_claim", "input": {"serial": phone.sim.serial}}),
            )
            .await;
        assert_eq!(code(&e), "auth_failed", "{e}");
        let message = e["error"]["message"].as_str().unwrap();
        assert!(message.contains("`claim_code` is required"), "{e}");
        assert!(
            message.contains("requires an admin-issued claim code for this phone"),
            "{e}"
        );
        assert!(!message.contains("right-code-123"), "{e}");
    }
    for _ in 0..5 {
        let e = phone
            .x
            .request("auth.start", Some(&phone.ch), claim("guess-00000"))
            .await;
        assert_eq!(code(&e), "auth_failed", "{e}");
    }
    let e = phone
        .x
        .request("auth.start", Some(&phone.ch), claim("guess-00000"))
        .await;
    assert_eq!(code(&e), "rate_limited", "{e}");
    let e = phone
        .x
        .request("auth.start", Some(&phone.ch), claim("right-code-123"))
        .await;
    assert_eq!(
        code(&e),
        "rate_limited",
        "paused even for the right code: {e}"
    );
}

/// `GET /metrics` needs the key and counts what the sockets dispatched: session-answered packets
/// (ping) under `control`, tool calls under `tool`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_dispatched_packets() {
    let sim = SimPhone::start("SIMMETRICS0001");
    let dir = TempDir::new("metrics");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let url = format!("{}/metrics?format=json", conn.base);
    assert_eq!(http_get(&url, None).0, 401);
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    for _ in 0..5 {
        assert_eq!(x.request("ping", None, json!({})).await["type"], "pong");
    }
    let (ch, _) = x.open(None).await;
    claim_when_visible(&mut x, &ch, &sim.serial).await;
    let ack = x.tool(&ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    let (st, _, body) = http_get(&url, Some(API_KEY));
    assert_eq!(st, 200);
    let m: Value = serde_json::from_slice(&body).unwrap();
    let control = &m["dispatch"]["control"];
    assert!(control["count"].as_u64().unwrap() >= 5, "{m}");
    let (p50, p99, max) = (
        control["p50_us"].as_u64().unwrap(),
        control["p99_us"].as_u64().unwrap(),
        control["max_us"].as_u64().unwrap(),
    );
    assert!(p50 >= 1 && p50 <= p99 && p99 <= max, "{m}");
    assert!(m["dispatch"]["tool"]["count"].as_u64().unwrap() >= 1, "{m}");
}

/// `GET /metrics` takes `format=json` or no `format` (OpenMetrics text); another format is 400
/// `invalid_query` with the JSON error body, naming the formats it serves (fresh-user finding:
/// `?format=xml` answered the text silently). The key is still checked first; other query
/// parameters are ignored, as every endpoint ignores them.
#[tokio::test]
async fn metrics_refuses_an_unknown_format() {
    let dir = TempDir::new("metrics-format");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    for query in [
        "?format=xml",
        "?format=",
        "?format=JSON",
        "?format=json&format=xml",
    ] {
        let url = format!("{}/metrics{query}", conn.base);
        assert_eq!(http_get(&url, None).0, 401, "{query}: the key first");
        let (st, ctype, body) = http_get(&url, Some(API_KEY));
        let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        assert_eq!(
            (st, v["error"]["code"].as_str()),
            (400, Some("invalid_query")),
            "{query}: {}",
            String::from_utf8_lossy(&body)
        );
        assert!(ctype.starts_with("application/json"), "{query}: {ctype}");
        let m = v["error"]["message"].as_str().unwrap();
        assert!(m.contains("`format`") && m.contains("json"), "{m}");
        assert!(!m.contains("xml"), "the value is not echoed: {m}");
    }
    let (st, ctype, _) = http_get(&format!("{}/metrics", conn.base), Some(API_KEY));
    assert_eq!(st, 200);
    assert!(ctype.starts_with("application/openmetrics-text"), "{ctype}");
    let (st, ctype, _) = http_get(&format!("{}/metrics?format=json", conn.base), Some(API_KEY));
    assert_eq!(st, 200);
    assert!(ctype.starts_with("application/json"), "{ctype}");
    let (st, _, _) = http_get(&format!("{}/metrics?x=1", conn.base), Some(API_KEY));
    assert_eq!(st, 200, "other parameters are ignored");
}

/// A text frame whose payload is not UTF-8 closes the socket with 1007 (RFC 6455 §7.4.1,
/// invalid frame payload data) and a reason; the connector serves the next socket. Before: a
/// close frame without a code (the client saw 1005).
#[tokio::test]
async fn a_text_frame_that_is_not_utf8_closes_1007() {
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    let dir = TempDir::new("utf8");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    let id = x.hello_fresh().await;
    // `{"a":"` + a lone continuation byte and an invalid lead byte + `"}`.
    let payload: Vec<u8> = [&b"{\"a\":\""[..], &[0x80, 0xff], &b"\"}"[..]].concat();
    assert!(std::str::from_utf8(&payload).is_err());
    x.send_frame(Frame::message(payload, OpCode::Data(Data::Text), true))
        .await;
    assert_eq!(
        x.close_code_within(5).await,
        Some(1007),
        "closed: invalid frame payload data"
    );
    let mut y = connect(&conn.addr).await;
    assert_eq!(y.hello(&id).await["payload"]["connector_id"], json!(id));
    assert_eq!(
        http_get(&format!("{}/health", conn.base), Some(API_KEY)).0,
        200
    );
}
