//! Limits and bad input (issue: protocol rules): time to the first packet, maximum packet size,
//! per-channel tool-call rate. Each breach gets its documented error or close, never a crash, and
//! persisted state survives.

mod common;

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use common::procs::{half_sent_heads, open_fds, ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claim_when_visible;
use common::xagent::{connect, http_get};
use common::API_KEY;

/// A socket with no `connector.hello` is closed at the 10 s deadline with 1008 (policy
/// violation) and a reason naming the hello (fresh-user finding: a bare close, seen as 1005).
#[tokio::test]
async fn limit_no_first_packet_closes_after_10_s() {
    let dir = TempDir::new("first");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut req = format!("ws://{}/ws", conn.addr)
        .into_client_request()
        .unwrap();
    req.headers_mut().insert(
        "Authorization",
        format!("Bearer {API_KEY}").parse().unwrap(),
    );
    req.headers_mut().insert(
        "Sec-WebSocket-Protocol",
        "xagent.connector.packet.v1".parse().unwrap(),
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    let t = std::time::Instant::now();
    let end = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(Ok(m)) = ws.next().await {
            if let Message::Close(frame) = m {
                return frame.map(|f| (u16::from(f.code), f.reason.to_string()));
            }
        }
        None
    })
    .await;
    assert!(
        t.elapsed() >= Duration::from_secs(9),
        "not before the 10 s limit"
    );
    // A close frame with a code and a reason, not a bare close (the client saw 1005).
    let (code, reason) = end
        .expect("socket closed by the server")
        .expect("a close frame with a code");
    assert_eq!(code, 1008, "policy violation: {reason}");
    assert!(reason.contains("connector.hello"), "{reason}");
}

#[tokio::test]
async fn limit_oversized_packet_closes_the_socket_and_state_survives() {
    let dir = TempDir::new("big");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    let id = x.hello_fresh().await;
    let (ch, _) = x.open(None).await;
    let huge = format!(
        "{{\"schema\":\"xagent.connector.packet/v1\",\"packet_id\":\"p\",\"type\":\"ping\",\"payload\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(2 * 1024 * 1024)
    );
    // The server may reset the connection while the frame is still being
    // written; either way the socket must end without an answer.
    let _sent_whole = x.try_send_text(&huge).await;
    assert!(x.closed_within(5).await, "the socket is closed");
    // Just above the limit, the frame is read whole: the close says why (1009, too big).
    let mut z = connect(&conn.addr).await;
    z.hello(&id).await;
    let above = format!(
        "{{\"schema\":\"xagent.connector.packet/v1\",\"packet_id\":\"p\",\"type\":\"ping\",\"payload\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(1024 * 1024)
    );
    assert!(z.try_send_text(&above).await, "the frame is written");
    assert_eq!(
        z.close_code_within(5).await,
        Some(1009),
        "closed: message too big"
    );
    // The server is alive and nothing persisted was lost.
    assert_eq!(
        http_get(&format!("{}/health", conn.base), Some(API_KEY)).0,
        200
    );
    let mut y = connect(&conn.addr).await;
    assert_eq!(y.hello(&id).await["payload"]["connector_id"], json!(id));
    assert_eq!(y.open(Some(&ch)).await.0, ch);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_tool_call_rate_per_channel() {
    let sim = SimPhone::start("SIMRATE000023");
    let dir = TempDir::new("rate");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    claim_when_visible(&mut x, &ch, &sim.serial).await;
    // Fire 60 calls without waiting: past the 30-call burst some are refused.
    for n in 0..60 {
        let p = common::xagent::packet(
            "tool.invoke",
            Some(&ch),
            json!({"tool_id": "android_press_key", "arguments": {"connector_channel_id": ch, "key": "home"}}),
            10_000 + n,
        );
        x.send_text(&p.to_string()).await;
    }
    let mut limited = 0;
    let mut ok = 0;
    for _ in 0..60 {
        let ack = x.recv_within(30).await.expect("every call is answered");
        match ack["error"]["code"].as_str() {
            Some("rate_limited") => limited += 1,
            None => ok += 1,
            Some(other) => panic!("unexpected {other}: {ack}"),
        }
    }
    assert!(ok >= 30, "the burst passes ({ok})");
    assert!(limited >= 1, "calls past the rate are refused ({limited})");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ack = x.tool(&ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "the channel recovers: {ack}");
}

/// Slow-headers clients: a connection that never completes its request head is closed after the
/// header-read deadline (10 s), and past 256 open HTTP connections the connector stops accepting
/// instead of spending a descriptor per socket; the API answers again once slots free up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_slow_headers_are_cut_and_connections_capped() {
    use std::io::Read;
    let dir = TempDir::new("slowloris");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let baseline = open_fds(conn.pid());
    let addr = conn.addr.clone();
    let held = tokio::task::spawn_blocking(move || half_sent_heads(&addr, 400))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = open_fds(conn.pid());
    assert!(
        during <= baseline + 256 + 4,
        "accepted connections are capped: {during} fds (baseline {baseline})"
    );
    // The server closes the stalled connections itself (EOF on our side) within the deadline.
    let mut first = held.into_iter().next().unwrap();
    first
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let t = std::time::Instant::now();
    let mut buf = [0u8; 512];
    let n = first.read(&mut buf).unwrap_or(0);
    assert!(
        n == 0 || String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 408"),
        "closed, not answered: {:?}",
        String::from_utf8_lossy(&buf[..n])
    );
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "closed by the deadline"
    );
    // Once slots free up, an honest client is served again.
    let base = conn.base.clone();
    let st =
        tokio::task::spawn_blocking(move || http_get(&format!("{base}/health"), Some(API_KEY)).0)
            .await
            .unwrap();
    assert_eq!(st, 200);
}

/// Channel cap (4096 per connector): issuing one more forgets the oldest channel that has no
/// binding and no open socket; restoring it then gives a fresh id (`restored: false`, §8.3),
/// while a bound channel survives and keeps working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_channel_cap_forgets_the_oldest_idle_channel() {
    let sim = SimPhone::start("SIMCHANCAP0001");
    let dir = TempDir::new("chancap");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let mut a = connect(&conn.addr).await;
    a.validate = false; // 4096 acks; the schema checks live in the other tests
    a.hello("").await;
    let (bound, _) = a.open(None).await;
    claim_when_visible(&mut a, &bound, &sim.serial).await;
    let (idle, _) = a.open(None).await;
    let (spare, _) = a.open(None).await;
    for _ in 3..4096 {
        a.open(None).await;
    }
    // `idle` leaves this socket (acknowledged, so the route is gone); every other channel stays
    // open here and is never a candidate.
    let ack = a.request("channel.close", Some(&idle), json!({})).await;
    assert_eq!(ack["type"], "channel.close.ack", "{ack}");
    let (fresh, ack) = a.open(None).await;
    assert_eq!(ack["payload"]["restored"], json!(false));
    // Room for one more (all 4096 are open or bound again): `spare` leaves too.
    let ack = a.request("channel.close", Some(&spare), json!({})).await;
    assert_eq!(ack["type"], "channel.close.ack", "{ack}");
    let (again, ack) = a.open(Some(&idle)).await;
    assert_ne!(again, idle, "the idle channel was forgotten");
    assert_ne!(again, fresh);
    assert_eq!(ack["payload"]["restored"], json!(false));
    let (same, ack) = a.open(Some(&bound)).await;
    assert_eq!(
        (same.as_str(), &ack["payload"]["restored"]),
        (bound.as_str(), &json!(true))
    );
    let status = a.tool(&bound, "android_device_status", json!({})).await;
    assert!(
        status.get("error").is_none(),
        "the bound channel works: {status}"
    );
}

/// The channel cap holds for open channels too (fresh-user finding: one socket opened more than
/// 4096): with 4096 channels open and none idle, opening one more is refused with
/// `too_many_channels` in the `channel.open.ack` and nothing is issued; restoring an open
/// channel still works, and once one is closed (idle, so forgettable) a new one opens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_channels_open_on_a_socket_are_capped() {
    let dir = TempDir::new("chanopen");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut a = connect(&conn.addr).await;
    a.validate = false; // 4096 acks; the schema checks live in the other tests
    a.hello("").await;
    let (first, _) = a.open(None).await;
    for _ in 1..4096 {
        a.open(None).await;
    }
    a.validate = true;
    let refused = a.request("channel.open", None, json!({})).await;
    assert_eq!(
        (refused["type"].as_str(), refused["error"]["code"].as_str()),
        (Some("channel.open.ack"), Some("too_many_channels")),
        "{refused}"
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("4096")),
        "the message names the limit: {refused}"
    );
    assert!(refused.get("payload").is_none(), "{refused}");
    // A channel already open is restored (no new channel), the socket stays usable.
    let (same, ack) = a.open(Some(&first)).await;
    assert_eq!(
        (same.as_str(), &ack["payload"]["restored"]),
        (first.as_str(), &json!(true))
    );
    let ack = a.request("channel.close", Some(&first), json!({})).await;
    assert_eq!(ack["type"], "channel.close.ack", "{ack}");
    let (fresh, ack) = a.open(None).await;
    assert_ne!(fresh, first);
    assert_eq!(ack["payload"]["restored"], json!(false));
    let again = a.request("channel.open", None, json!({})).await;
    assert_eq!(again["error"]["code"], "too_many_channels", "{again}");
    // A client looping on the full table does not flood the log: one warning a minute.
    for _ in 0..20 {
        let more = a.request("channel.open", None, json!({})).await;
        assert_eq!(more["error"]["code"], "too_many_channels", "{more}");
    }
    let logs = conn.logs();
    let warnings = logs
        .lines()
        .filter(|l| l.contains(" WARN ") && l.contains("channel.open refused"))
        .count();
    assert_eq!(warnings, 1, "one warning for 22 refusals: {logs}");
}
