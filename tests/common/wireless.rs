//! Phones with wireless debugging (`sim --wireless`) and the pairing flows, shared by the
//! wireless tests: the sim with its pairing state and (inside a test-made network namespace,
//! [`super::netns`]) its mDNS on `lo`, the `adb_pair_code` input and ack, and the descriptor
//! and tool readings the tests wait on.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use super::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use super::xagent::{connect, XAgent};

/// A simulated phone with wireless debugging, its pairing state in `state` and its control API
/// on; with `mdns` it announces on `lo` (only inside a network namespace the test made).
pub fn wireless_sim(serial: &str, state: &Path, mdns: bool) -> SimPhone {
    std::fs::create_dir_all(state).unwrap();
    let mut flags = vec!["--wireless", "--state-dir", state.to_str().unwrap()];
    if mdns {
        flags.extend_from_slice(&["--mdns-interface", "lo"]);
    }
    SimPhone::start_with_control(serial, &flags)
}

/// The `adb_pair_code` input for the dialog at `ports` (a `POST /v1/pair` answer) on
/// 127.0.0.1 with `code`, and `connect_port` when given (any JSON: a number or a string).
pub fn pair_code_input(ports: &Value, code: &str, connect_port: Option<Value>) -> Value {
    let mut input = json!({"host": "127.0.0.1", "port": ports["pairing_port"], "code": code});
    if let Some(p) = connect_port {
        input["connect_port"] = p;
    }
    input
}

/// `auth.start` of `adb_pair_code` on `ch` with `input`: the ack.
pub async fn start_pair_code(x: &mut XAgent, ch: &str, input: Value) -> Value {
    x.request(
        "auth.start",
        Some(ch),
        json!({"flow_id": "adb_pair_code", "input": input}),
    )
    .await
}

/// The `connection.status` of channel `ch`'s descriptor now.
pub async fn descriptor_status(x: &mut XAgent, ch: &str) -> String {
    let d = x
        .request("connection.descriptor.get", Some(ch), json!({}))
        .await;
    d["payload"]["connection_descriptor"]["connection"]["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The status of the descriptor pushes, read until one says `want` (for at most `secs`): the
/// last one read.
pub async fn pushed_status(x: &mut XAgent, want: &str, secs: u64) -> String {
    let mut status = String::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        let Some(push) = x.wait_push("connection.descriptor.push", 10).await else {
            continue;
        };
        status = push["payload"]["connection_descriptor"]["connection"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if status == want {
            break;
        }
    }
    status
}

/// `android_device_status` on `ch`, again every 500 ms while it answers an error, for at most
/// `secs`: the last ack (the caller asserts it).
pub async fn status_once_reachable(x: &mut XAgent, ch: &str, secs: u64) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let ack = x.tool(ch, "android_device_status", json!({})).await;
        if ack.get("error").is_none() || std::time::Instant::now() >= deadline {
            return ack;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// A wireless phone served over the connector's own transport, and a client on it: the sim
/// (state in `DIR/sim-state`), the connector (data dir `DIR`, which `conn.restart()` keeps; no
/// adb server; mDNS on `lo`, then the extra flags), the client after `hello` (the connector id
/// it answered) with one new channel.
pub struct WirelessPhone {
    pub sim: SimPhone,
    pub conn: ConnectorProc,
    pub x: XAgent,
    pub id: String,
    pub ch: String,
    pub dir: TempDir,
}

impl WirelessPhone {
    /// Starts phone `serial` (announcing itself over mDNS on `lo` with `mdns`: only inside a
    /// test-made namespace) and the connector with `extra` flags, logging at `rust_log`.
    pub async fn start(serial: &str, mdns: bool, extra: &[&str], rust_log: &str) -> Self {
        let dir = TempDir::new(&format!("pair-{}", serial.to_lowercase()));
        let sim = wireless_sim(serial, &dir.path().join("sim-state"), mdns);
        let mut flags = vec!["--mdns-interface", "lo"];
        flags.extend_from_slice(extra);
        let conn =
            ConnectorProc::start_logging(dir.path(), Phones::Direct(vec![]), &flags, rust_log);
        let mut x = connect(&conn.addr).await;
        let id = x.hello_fresh().await;
        let (ch, _) = x.open(None).await;
        WirelessPhone {
            sim,
            conn,
            x,
            id,
            ch,
            dir,
        }
    }
}
