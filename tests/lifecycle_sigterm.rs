//! Issue 8 (graceful, bounded lifecycle): SIGTERM (`systemctl stop`) during a running tool call
//! lets the call finish, writes its `tool.invoke.ack` before the socket closes, flushes the store
//! and exits 0; a call still running at the drain deadline is abandoned and, after a restart, a
//! repeat of it is `tool_call_interrupted` (never run twice). The socket closes 1001 (going
//! away) either way, the abandoned call answered `tool_call_interrupted` first.

mod common;

use std::time::Duration;

use serde_json::{json, Value};

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claimed_channel;
use common::xagent::{connect, packet, XAgent};

/// How many `input tap` commands the phone ran.
fn taps(sim: &SimPhone) -> usize {
    sim.state()["command_log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["argv"][0] == "input" && e["argv"][1] == "tap")
        .count()
}

/// Sends a journaled `android_tap` at (`x`, `y`) without waiting for the ack.
async fn send_tap(x: &mut XAgent, ch: &str, at: (u32, u32), call_id: &str, n: u64) -> Value {
    let p = packet(
        "tool.invoke",
        Some(ch),
        json!({"tool_id": "android_tap",
               "arguments": {"connector_channel_id": ch, "x": at.0, "y": at.1},
               "context": {"tool_call_id": call_id}}),
        n,
    );
    x.send_text(&p.to_string()).await;
    p
}

/// Waits for the packet answering `request` (pushes are skipped).
async fn reply_to(x: &mut XAgent, request: &Value, secs: u64) -> Option<Value> {
    loop {
        let got = x.recv_within(secs).await?;
        if got["reply_to"] == request["packet_id"] {
            return Some(got);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_mid_call_writes_the_ack_then_closes_and_exits_0() {
    let sim = SimPhone::start_with_control("SIMTERM000001", &[]);
    let dir = TempDir::new("sigterm");
    let mut conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    let st = sim.control_post(
        "/v1/script",
        json!({"command_regex": "input.*tap.*'41' '42'", "stdout": "", "exit_code": 0, "delay_ms": 2500, "times": 1}),
    );
    assert_eq!(st, 200);
    let request = send_tap(&mut x, &ch, (41, 42), "call_term_1", 7001).await;
    tokio::time::sleep(Duration::from_millis(700)).await; // the tap is running on the phone
    conn.terminate();

    let ack = reply_to(&mut x, &request, 15)
        .await
        .expect("the ack arrives before the socket closes");
    assert_eq!(ack["type"], "tool.invoke.ack", "{ack}");
    assert!(ack.get("error").is_none(), "the call finished: {ack}");
    assert_eq!(ack["payload"]["tool_id"], "android_tap");
    assert_eq!(
        x.close_code_within(10).await,
        Some(1001),
        "the socket closes after the ack, going away"
    );
    let status = conn
        .wait_exit(Duration::from_secs(15))
        .expect("the connector exits after draining");
    assert!(status.success(), "exit status 0, got {status:?}");
    // A scripted command is answered by the script, not logged: count from here on.
    let taps_before = taps(&sim);

    // The outcome reached the database before exit: a repeat is answered from the journal.
    conn.restart();
    let mut y = connect(&conn.addr).await;
    y.hello("").await;
    let (ch2, _) = y.open(Some(&ch)).await;
    assert_eq!(ch2, ch, "channel and binding survive");
    let repeat = send_tap(&mut y, &ch, (41, 42), "call_term_1", 7002).await;
    let again = reply_to(&mut y, &repeat, 30).await.expect("repeat ack");
    assert_eq!(
        again["payload"], ack["payload"],
        "recorded outcome: {again}"
    );
    assert_eq!(taps(&sim), taps_before, "not run twice");
}

/// Sends a journaled `android_input_text` typing `text` without waiting for the ack.
async fn send_text_call(x: &mut XAgent, ch: &str, text: &str, call_id: &str, n: u64) -> Value {
    let p = packet(
        "tool.invoke",
        Some(ch),
        json!({"tool_id": "android_input_text",
               "arguments": {"connector_channel_id": ch, "text": text},
               "context": {"tool_call_id": call_id}}),
        n,
    );
    x.send_text(&p.to_string()).await;
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_past_the_drain_deadline_abandons_the_call_and_exits_0() {
    let sim = SimPhone::start_with_control("SIMTERM000002", &[]);
    let dir = TempDir::new("sigterm-late");
    let mut conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    // Typing has a 30 s device deadline, longer than the 10 s drain: the phone hangs.
    let st = sim.control_post(
        "/v1/script",
        json!({"command_regex": "input.*text.*drainword", "hang": true, "times": 1}),
    );
    assert_eq!(st, 200);
    let request = send_text_call(&mut x, &ch, "drainword", "call_term_2", 7101).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    conn.terminate();
    // At the drain deadline the running call is answered, then the socket closes 1001.
    let ack = reply_to(&mut x, &request, 20)
        .await
        .expect("the abandoned call gets its ack before the socket closes");
    assert_eq!(ack["type"], "tool.invoke.ack", "{ack}");
    assert_eq!(ack["error"]["code"], "tool_call_interrupted", "{ack}");
    assert_eq!(
        x.close_code_within(5).await,
        Some(1001),
        "closed going away"
    );
    let status = conn
        .wait_exit(Duration::from_secs(25))
        .expect("the connector exits after the drain deadline");
    assert!(status.success(), "exit status 0, got {status:?}");

    conn.restart();
    let mut y = connect(&conn.addr).await;
    y.hello("").await;
    y.open(Some(&ch)).await;
    let mut retry = Value::Null;
    for n in 0..50 {
        let repeat = send_text_call(&mut y, &ch, "drainword", "call_term_2", 7200 + n).await;
        retry = reply_to(&mut y, &repeat, 30).await.expect("repeat ack");
        if retry["error"]["code"] != "device_offline" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(retry["error"]["code"], "tool_call_interrupted", "{retry}");
}
