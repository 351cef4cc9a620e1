//! Wireless debugging of the simulated phone (`--wireless`), proven by implementations nobody
//! here wrote and by our own host side:
//! - Google adb 34 `adb pair` with a pairing code: a wrong code fails with "Wrong password", the
//!   right one pairs; `adb connect` to the connect port then runs `getprop ro.serialno` over TLS;
//!   a host that never paired cannot connect.
//! - `xagent_adb_pairing::pair_as_host` against the sim's pairing server: right password → the
//!   GUID; a phone with another password → `WrongPassword`; a phone that leaves → `PeerClosed`;
//!   a slow phone → `Timeout`. The host's TLS client config then passes the `STLS` upgrade,
//!   also after the phone restarts with the same state (GUID and paired key kept).
//! - Passwords never show in the control API's answers.
//!
//! Source: research notes §2, §3.4, §5.4; AOSP `pairing_connection/`, `daemon/auth.cpp`.

#[path = "sim_rig.rs"]
mod sim_rig;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};
use sim_rig::adb_server::{AdbFlavor, AdbServer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::Instant;
use xagent_adb_pairing::{pair_as_host, tls, AdbKey, PairingError, QrPairing, Stage};
use xagent_adb_sim::SimOptions;
use xagent_adb_wire::wire::{Message, A_CNXN, A_STLS, A_STLS_VERSION, A_VERSION, MAX_PAYLOAD};

fn state_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-wireless-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn wireless_sim(serial: &str, dir: &Path) -> sim_rig::Sim {
    sim_rig::start(SimOptions {
        serial: serial.into(),
        wireless: true,
        state_dir: Some(dir.to_path_buf()),
        ..SimOptions::default()
    })
}

fn port(v: &Value, field: &str) -> u16 {
    v[field]
        .as_u64()
        .unwrap_or_else(|| panic!("{field} in {v}")) as u16
}

/// The sim's state once it holds `keys` paired keys (up to 5 s). Both pairing sides send their
/// PeerInfo before reading the other's (AOSP `pairing_connection.cpp`), so the host may report
/// success a moment before the phone has stored the host's key.
fn state_with_paired_keys(sim: &sim_rig::Sim, keys: u64) -> Value {
    let until = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let state = sim.get("/v1/state");
        if state["wireless"]["paired_keys"] == keys || std::time::Instant::now() > until {
            return state;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stdout(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn google_adb34_pairs_with_a_code_and_connects_over_tls() {
    let dir = state_dir("adb34");
    let sim = wireless_sim("SIMWIFI01", &dir);
    let adb = AdbServer::start(AdbFlavor::Google34);
    let ports = sim.post("/v1/pair", json!({"code": "123456"}));
    let (pairing, connect) = (port(&ports, "pairing_port"), port(&ports, "connect_port"));
    let guid = ports["guid"].as_str().unwrap().to_string();
    assert!(
        guid.starts_with("adb-SIMWIFI01-") && guid.len() == 20,
        "{guid}"
    );
    assert!(!ports.to_string().contains("123456"));
    assert_eq!(sim.get("/v1/state")["wireless"]["pairing_open"], true);

    let target = format!("127.0.0.1:{pairing}");
    let wrong = stdout(&adb.run(&["pair", &target, "654321"]));
    assert!(wrong.contains("Failed: Wrong password"), "{wrong}");
    let right = stdout(&adb.run(&["pair", &target, "123456"]));
    assert!(
        right.contains("Successfully paired") && right.contains(&guid),
        "{right}"
    );
    let state = state_with_paired_keys(&sim, 1);
    assert_eq!(state["wireless"]["paired_keys"], 1, "{state}");
    assert_eq!(state["wireless"]["pairing_open"], false);
    assert!(!state.to_string().contains("123456"));
    let saved = std::fs::read_to_string(dir.join("adb_wifi_keys")).unwrap();
    assert_eq!(saved.lines().count(), 1);

    // One `adb connect`, no retry: adb's host sends its `STLS` answer and the TLS ClientHello
    // in either order, and the simulated phone takes both (first-connect failure fixed).
    let tls_target = format!("127.0.0.1:{connect}");
    let out = adb.run(&["connect", &tls_target]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        text.contains("connected to") && !text.contains("failed"),
        "first adb connect after pairing: {text}"
    );
    let mut state = String::new();
    for _ in 0..100 {
        state = String::from_utf8_lossy(&sim_rig::adb_s(&adb, &tls_target, &["get-state"]).stdout)
            .trim()
            .to_string();
        if state == "device" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(state, "device", "the TLS transport comes up");
    let serial = sim_rig::adb_s(&adb, &tls_target, &["shell", "getprop", "ro.serialno"]);
    assert_eq!(String::from_utf8_lossy(&serial.stdout).trim(), "SIMWIFI01");

    // A host with its own, never paired key is refused at the TLS handshake.
    let stranger = AdbServer::start(AdbFlavor::Google34);
    let out = stdout(&stranger.run(&["connect", &tls_target]));
    std::thread::sleep(Duration::from_millis(500));
    let listed = sim_rig::device_state(&stranger, &tls_target);
    assert!(
        !out.contains("connected to") || out.contains("failed"),
        "{out}"
    );
    assert_ne!(listed.as_deref(), Some("device"), "{out}");
    drop(stranger);
    let _ = adb.run(&["disconnect", &tls_target]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// One `pair_as_host` run against a fresh pairing server opened with `body`.
fn pair_once(
    sim: &sim_rig::Sim,
    key: &AdbKey,
    body: Value,
    password: &str,
    within: Duration,
) -> Result<String, PairingError> {
    let ports = sim.post("/v1/pair", body);
    let addr = format!("127.0.0.1:{}", port(&ports, "pairing_port"));
    sim.rt.block_on(async {
        let stream = TcpStream::connect(&addr).await.unwrap();
        pair_as_host(stream, password.as_bytes(), key, Instant::now() + within)
            .await
            .map(|g| g.0)
    })
}

#[test]
fn our_host_side_pairs_and_names_each_failure() {
    let dir = state_dir("host");
    let sim = wireless_sim("SIMWIFI02", &dir);
    let key = AdbKey::generate("xagent@test").unwrap();
    let guid = sim.get("/v1/state")["wireless"]["guid"]
        .as_str()
        .unwrap()
        .to_string();
    let ten = Duration::from_secs(10);

    let err = pair_once(
        &sim,
        &key,
        json!({"code": "424242", "wrong_password": true}),
        "424242",
        ten,
    )
    .unwrap_err();
    assert!(matches!(err, PairingError::WrongPassword), "{err}");
    assert!(err.to_string().contains("wrong pairing code"), "{err}");

    let err = pair_once(
        &sim,
        &key,
        json!({"code": "424242", "leave_after": "tls"}),
        "424242",
        ten,
    )
    .unwrap_err();
    assert!(
        matches!(err, PairingError::PeerClosed(Stage::Spake2)),
        "{err}"
    );
    assert!(err.to_string().contains("closed the connection"), "{err}");

    let err = pair_once(
        &sim,
        &key,
        json!({"code": "424242", "leave_after": "spake2"}),
        "424242",
        ten,
    )
    .unwrap_err();
    assert!(
        matches!(err, PairingError::PeerClosed(Stage::PeerInfo)),
        "{err}"
    );

    let err = pair_once(
        &sim,
        &key,
        json!({"code": "424242", "delay_ms": 3000}),
        "424242",
        Duration::from_millis(500),
    )
    .unwrap_err();
    assert!(matches!(err, PairingError::Timeout(Stage::Tls)), "{err}");
    assert!(err.to_string().contains("in time"), "{err}");
    assert_eq!(sim.get("/v1/state")["wireless"]["paired_keys"], 0);

    let qr = QrPairing::generate();
    let body = json!({"qr_code_text": *qr.text()});
    let got = pair_once(&sim, &key, body, qr.password(), ten).unwrap();
    assert_eq!(got, guid);
    let state = state_with_paired_keys(&sim, 1);
    assert_eq!(state["wireless"]["paired_keys"], 1);
    assert!(!state.to_string().contains(qr.password()));

    // The same key then passes the STLS upgrade with the host TLS config.
    let connect = port(&state["wireless"], "connect_port");
    let banner = sim.rt.block_on(stls_banner(connect, &key)).unwrap();
    assert!(banner.starts_with("device::"), "{banner}");
    let stranger = AdbKey::generate("stranger@test").unwrap();
    assert!(sim.rt.block_on(stls_banner(connect, &stranger)).is_err());

    // A restarted phone with the same state keeps its GUID and the paired key.
    drop(sim);
    let again = wireless_sim("SIMWIFI02", &dir);
    let state = again.get("/v1/state");
    assert_eq!(state["wireless"]["guid"], guid.as_str());
    assert_eq!(state["wireless"]["paired_keys"], 1);
    let connect = port(&state["wireless"], "connect_port");
    assert!(again.rt.block_on(stls_banner(connect, &key)).is_ok());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Host side of `STLS` (notes §3.4): plain CNXN → device STLS → host STLS → TLS 1.3 with the
/// adb key's certificate → the device's CNXN (its banner) over TLS.
async fn stls_banner(port: u16, key: &AdbKey) -> Result<String, String> {
    let mut sock = TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    let hello = Message::new(
        A_CNXN,
        A_VERSION,
        MAX_PAYLOAD,
        b"host::features=shell_v2".to_vec(),
    );
    hello.write_to(&mut sock).await.map_err(|e| e.to_string())?;
    let stls = Message::read_from(&mut sock, MAX_PAYLOAD)
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!((stls.command, stls.arg0), (A_STLS, A_STLS_VERSION));
    Message::new(A_STLS, A_STLS_VERSION, 0, Vec::new())
        .write_to(&mut sock)
        .await
        .map_err(|e| e.to_string())?;
    let config = tls::host_client_config(key).map_err(|e| e.to_string())?;
    let mut tls = tls::connect_as_host(sock, config)
        .await
        .map_err(|e| e.to_string())?;
    let cnxn = tokio::time::timeout(
        Duration::from_secs(5),
        Message::read_from(&mut tls, MAX_PAYLOAD),
    )
    .await
    .map_err(|_| "no CNXN".to_string())?
    .map_err(|e| e.to_string())?;
    let _ = tls.shutdown().await;
    assert_eq!(cnxn.command, A_CNXN);
    Ok(String::from_utf8_lossy(&cnxn.payload).to_string())
}

#[test]
fn pairing_needs_wireless_and_a_sound_body() {
    let plain = sim_rig::start(SimOptions::default());
    assert_eq!(plain.get("/v1/state")["wireless"], Value::Null);
    let dir = state_dir("body");
    let sim = wireless_sim("SIMWIFI03", &dir);
    for body in [
        json!({}),
        json!({"code": "1", "qr_code_text": "WIFI:T:ADB;S:a;P:b;;"}),
        json!({"qr_code_text": "WIFI:T:WPA;S:a;P:secretpw;;"}),
        json!({"code": "12 34"}),
        json!({"code": "654321", "qr_code_text": "WIFI:T:ADB;S:a;P:b;;"}),
    ] {
        let resp = ureq::post(format!("{}/v1/pair", sim.control))
            .content_type("application/json")
            .send(body.to_string());
        let Err(ureq::Error::StatusCode(code)) = resp else {
            panic!("{body} was accepted");
        };
        assert_eq!(code, 400, "{body}");
    }
    // Android's pairing code is 6 decimal digits (AOSP AdbDebuggingManager,
    // PAIRING_CODE_LENGTH): anything else is a clear 400 that never repeats the code.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    for code in ["12345", "1234567", "12345a", "abcdef", "\u{663}23456", ""] {
        let mut resp = agent
            .post(format!("{}/v1/pair", sim.control))
            .content_type("application/json")
            .send(json!({ "code": code }).to_string())
            .unwrap();
        assert_eq!(resp.status().as_u16(), 400, "{code:?}");
        let body = resp.body_mut().read_to_string().unwrap();
        let error: Value = serde_json::from_str(&body).unwrap();
        let text = error["error"].as_str().unwrap();
        assert!(text.contains("6 digits"), "{text}");
        assert!(code.is_empty() || !text.contains(code), "{text}");
    }
    assert_eq!(sim.get("/v1/state")["wireless"]["pairing_open"], false);
    let resp = ureq::post(format!("{}/v1/pair", plain.control))
        .content_type("application/json")
        .send(json!({"code": "123456"}).to_string());
    assert!(matches!(resp, Err(ureq::Error::StatusCode(400))));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `POST /v1/wireless/move` takes no body, `{}`, or `conflict_suffix` (2–999: `<GUID> (N)`)
/// and `keep_stale`; anything else is a 400 naming what is wrong, and the phone stays where it
/// was. Each move closes the old connect port and opens a new one (announced only with
/// `--mdns-interface`, so `instance` is `null` here).
#[test]
fn a_move_takes_an_optional_conflict_suffix_and_keep_stale() {
    let dir = state_dir("move");
    let sim = wireless_sim("SIMWIFI04", &dir);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let url = format!("{}/v1/wireless/move", sim.control);
    let mut before = port(&sim.get("/v1/state")["wireless"], "connect_port");
    let empty = agent.post(&url).send_empty().unwrap();
    assert_eq!(empty.status().as_u16(), 200);
    for body in [
        json!({}),
        json!({"conflict_suffix": 2}),
        json!({"conflict_suffix": 3, "keep_stale": true}),
    ] {
        let moved = sim.post("/v1/wireless/move", body.clone());
        let now = port(&moved, "connect_port");
        assert_ne!(now, before, "{body}: {moved}");
        assert_eq!(moved["instance"], Value::Null, "{moved}");
        assert_eq!(port(&sim.get("/v1/state")["wireless"], "connect_port"), now);
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", before)).is_err(),
            "the old connect port is closed"
        );
        before = now;
    }
    for (body, says) in [
        (json!({"conflict_suffix": 1}), "from 2 to 999"),
        (json!({"conflict_suffix": 1000}), "from 2 to 999"),
        (json!({"conflict_suffix": "2"}), "conflict_suffix"),
        (json!({"suffix": 2}), "suffix"),
    ] {
        let mut resp = agent
            .post(&url)
            .content_type("application/json")
            .send(body.to_string())
            .unwrap();
        assert_eq!(resp.status().as_u16(), 400, "{body}");
        let text = resp.body_mut().read_to_string().unwrap();
        assert!(text.contains(says), "{body}: {text}");
        assert_eq!(
            port(&sim.get("/v1/state")["wireless"], "connect_port"),
            before
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
