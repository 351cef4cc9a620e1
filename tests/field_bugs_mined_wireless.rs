//! Mined field rows about wireless debugging (issue 19 §2; `docs/field-bugs.md`, "Mined
//! rows"): a pairing attempt at a port that does not serve pairing (58). The row replays a
//! simulated phone with wireless debugging (`sim --wireless`: its pairing dialog, its `STLS`
//! connect port, its plain adbd port) through the connector's `adb_pair_code` flow over the
//! WebSocket; the variants replay the same kind at the other ports a user may give, and a real
//! pairing server that drops the connection.

mod common;

use serde_json::{json, Value};

use common::wireless::{start_pair_code, WirelessPhone};

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

/// The `adb_pair_code` input: `port` as the pairing port, `code`, on 127.0.0.1.
fn input(port: &Value, code: &str) -> Value {
    json!({"host": "127.0.0.1", "port": port, "code": code})
}

/// The ack is `auth_failed` and echoes neither the code, nor the address, nor the serial.
fn refused(ack: &Value, code: &str, serial: &str) -> String {
    assert_eq!(ack["error"]["code"], "auth_failed", "{ack}");
    let text = ack.to_string();
    for secret in [code, "127.0.0.1", serial] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    message(ack)
}

/// Row 58: the user gives the connect port ("IP address & Port" of the Wireless debugging
/// screen) where the pairing dialog's port belongs (sameerasw/airsync-android#7,
/// MuntashirAkon/AppManager#562). The connector's TLS ClientHello reaches adbd, which closes
/// the connection: the answer was "the phone closed the pairing connection (was its pairing
/// dialog closed?)", sending the user to a dialog that was open. Now the port is probed (adbd
/// answers a `CNXN` with `STLS`) and the answer names the two ports; the dialog's port pairs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_58_connect_port_given_as_the_pairing_port_is_named() {
    // The connector and its data dir are kept to the end (dropping them stops it).
    let WirelessPhone {
        sim,
        mut x,
        ch,
        conn: _conn,
        dir: _dir,
        ..
    } = WirelessPhone::start("SIMFB58000001", false, &[], "debug").await;
    let code = "314159";
    let ports = sim.control_json("/v1/pair", json!({ "code": code }));
    let ack = start_pair_code(&mut x, &ch, input(&ports["connect_port"], code)).await;
    let m = refused(&ack, code, &sim.serial);
    assert!(
        m.starts_with("the `port` given is the phone's wireless-debugging connect port")
            && m.contains("tap \"Pair device with pairing code\"")
            && m.contains("can go in `connect_port`"),
        "{m}"
    );
    // Done as the answer says: the dialog's port as `port`, the one given as `connect_port`;
    // the dialog stayed open (nothing was spent on it).
    let mut retry = input(&ports["pairing_port"], code);
    retry["connect_port"] = ports["connect_port"].clone();
    let ack = start_pair_code(&mut x, &ch, retry).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
}

/// Variants of row 58: adbd's plain TCP port (`adb tcpip`, which takes no pairing code); a
/// port where nothing listens (LADB#46 "Failed: Unable to start pairing" at once: the dialog
/// had closed, and its port with it); and a real pairing server that drops the connection
/// right after TLS, which keeps the pairing answer (it is not taken for an adbd port).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_58_variants_tcpip_port_closed_dialog_and_a_dropping_pairing_server() {
    // The connector and its data dir are kept to the end (dropping them stops it).
    let WirelessPhone {
        sim,
        mut x,
        ch,
        conn: _conn,
        dir: _dir,
        ..
    } = WirelessPhone::start("SIMFB58V00001", false, &[], "debug").await;
    let code = "271828";
    let tcpip: u16 = sim.addr.rsplit(':').next().unwrap().parse().unwrap();
    let ack = start_pair_code(&mut x, &ch, input(&json!(tcpip), code)).await;
    let m = refused(&ack, code, &sim.serial);
    assert!(
        m.starts_with("the `port` given is adbd's plain TCP port (as after `adb tcpip 5555`)")
            && m.contains("adb_device_claim"),
        "{m}"
    );

    // The dialog closed: its port is gone.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let ack = start_pair_code(&mut x, &ch, input(&json!(closed), code)).await;
    let m = refused(&ack, code, &sim.serial);
    assert!(
        m.starts_with("cannot reach the phone's pairing port: nothing listens")
            && m.contains("open the dialog again"),
        "{m}"
    );
    // adb's answer to the same refused connect names no cause (LADB#46).
    let adb_said = include_str!("fixtures/pairing/ladb-46-failed-unable-to-start-pairing.txt");
    assert!(adb_said.contains("Failed: Unable to start pairing client"));
    assert!(!m.contains("Unable to start pairing"), "{m}");

    // A pairing server that drops the connection after TLS: still the pairing answer.
    let ports = sim.control_json("/v1/pair", json!({"code": code, "leave_after": "tls"}));
    let ack = start_pair_code(&mut x, &ch, input(&ports["pairing_port"], code)).await;
    let m = refused(&ack, code, &sim.serial);
    assert!(!m.contains("adbd") && !m.contains("connect port"), "{m}");
    assert!(m.contains("pairing"), "{m}");
}
