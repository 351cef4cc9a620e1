//! Flow `adb_pair_code` end to end: a simulated phone with wireless debugging (`sim --wireless`,
//! its pairing dialog opened through the control API as "the user chose Pair device with
//! pairing code"), the connector binary, and an xAgent client over WebSocket. A wrong code is
//! `auth_failed` in words a person understands; the right code pairs, connects over `STLS`,
//! binds the channel (`connected` descriptor) and `android_device_status` runs over TLS. The
//! code never reaches the log, the acks or the card. A restart keeps the binding and watches the
//! phone again; the `pair --code` CLI pairs the same way.

mod common;

use std::path::Path;

use serde_json::{json, Value};

use common::procs::{run_cli, SimPhone, TempDir};
use common::schemas::assert_packet;
use common::wireless::WirelessPhone;
use common::xagent::{connect, http_get, XAgent};
use common::API_KEY;

fn pair_input(ports: &Value, code: &str) -> Value {
    json!({
        "host": "127.0.0.1",
        "port": ports["pairing_port"],
        "code": code,
        "connect_port": ports["connect_port"].to_string(),
    })
}

/// A simulated phone with wireless debugging (`sim --wireless`, no mDNS), its pairing state in
/// `state` and its control API on.
fn wireless_sim(serial: &str, state: &Path) -> SimPhone {
    common::wireless::wireless_sim(serial, state, false)
}

/// [`WirelessPhone::start`] without mDNS announcements (on 127.0.0.1), logging at `debug`.
async fn wireless_phone(serial: &str, extra: &[&str]) -> WirelessPhone {
    WirelessPhone::start(serial, false, extra, "debug").await
}

/// `auth.start` of flow `adb_pair_code` on channel `ch` for the pairing dialog at `ports`
/// (`POST /v1/pair` answer) with `code`: the ack.
async fn start_pair_code(x: &mut XAgent, ch: &str, ports: &Value, code: &str) -> Value {
    x.request(
        "auth.start",
        Some(ch),
        json!({"flow_id": "adb_pair_code", "input": pair_input(ports, code)}),
    )
    .await
}

/// Opens `sim`'s pairing dialog with `code` and pairs it on channel `ch` with that code: the
/// ack (asserted `authenticated`) and the dialog's ports.
async fn pair_with_code(x: &mut XAgent, ch: &str, sim: &SimPhone, code: &str) -> (Value, Value) {
    let ports = sim.control_json("/v1/pair", json!({ "code": code }));
    let ok = start_pair_code(x, ch, &ports, code).await;
    assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
    (ok, ports)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairing_code_binds_a_wireless_phone_and_tools_run_over_tls() {
    let WirelessPhone {
        sim,
        mut conn,
        mut x,
        id,
        ch,
        dir,
    } = wireless_phone("SIMPAIRCODE01", &[]).await;
    let (_, _, card) = http_get(&format!("{}/connector-card.json", conn.base), None);
    let card: Value = serde_json::from_slice(&card).unwrap();
    common::schemas::assert_card(&card);
    let flow = card["auth_flows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "adb_pair_code")
        .expect("adb_pair_code in the card")
        .clone();
    assert_eq!(flow["type"], "form");
    let code_field = flow["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == "code")
        .unwrap()
        .clone();
    assert_eq!(code_field["secret"], true);

    // Wrong code: the phone's dialog stays for the right one.
    let right = "271828";
    let wrong = "999111";
    let ports = sim.control_json("/v1/pair", json!({ "code": right }));
    let e = start_pair_code(&mut x, &ch, &ports, wrong).await;
    assert_packet(&e);
    assert_eq!(e["error"]["code"], "auth_failed", "{e}");
    assert!(e.to_string().contains("pairing code was wrong"), "{e}");
    assert!(!e.to_string().contains(wrong));

    // Nothing listens on this port: a reason, not a hang.
    let gone = x
        .request(
            "auth.start",
            Some(&ch),
            json!({"flow_id": "adb_pair_code", "input": {"host": "127.0.0.1", "port": 1, "code": right, "connect_port": 2}}),
        )
        .await;
    assert_eq!(gone["error"]["code"], "auth_failed", "{gone}");
    assert!(gone.to_string().contains("cannot reach"), "{gone}");

    let (ok, _) = pair_with_code(&mut x, &ch, &sim, right).await;
    assert_packet(&ok);
    assert_eq!(
        ok["payload"]["connection_descriptor"]["connection"]["status"], "connected",
        "{ok}"
    );
    assert!(!ok.to_string().contains(right));
    let session = ok["payload"]["auth_session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let st = x
        .request(
            "auth.status",
            Some(&ch),
            json!({"auth_session_id": session, "flow_id": "adb_pair_code"}),
        )
        .await;
    assert_packet(&st);
    assert_eq!(st["payload"]["status"], "authenticated", "{st}");

    let status = x.tool(&ch, "android_device_status", json!({})).await;
    assert_packet(&status);
    assert!(status.get("error").is_none(), "{status}");
    assert!(
        status.to_string().contains("SIMPAIRCODE01") || status["payload"].is_object(),
        "{status}"
    );

    // A second channel cannot take the phone by pairing again.
    let (other, _) = x.open(None).await;
    let ports = sim.control_json("/v1/pair", json!({ "code": right }));
    let taken = start_pair_code(&mut x, &other, &ports, right).await;
    assert_eq!(taken["error"]["code"], "auth_failed", "{taken}");
    assert!(taken.to_string().contains("already bound"), "{taken}");
    x.close().await;

    // kill -9 and restart: the binding is kept and the phone watched again over TLS.
    conn.restart();
    let mut z = connect(&conn.addr).await;
    z.hello(&id).await;
    let (again, _) = z.open(Some(&ch)).await;
    assert_eq!(again, ch);
    let mut status = String::new();
    for _ in 0..75 {
        let d = z
            .request("connection.descriptor.get", Some(&ch), json!({}))
            .await;
        status = d["payload"]["connection_descriptor"]["connection"]["status"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if status == "connected" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(status, "connected");
    let st = z.tool(&ch, "android_device_status", json!({})).await;
    assert!(st.get("error").is_none(), "{st}");

    let logs = conn.logs();
    assert!(logs.contains("phone paired"), "the log is captured");
    for secret in [right, wrong, API_KEY] {
        assert!(!logs.contains(secret), "log leaks a secret: {secret}");
    }
    let key = std::fs::read_to_string(dir.path().join("adbkey")).unwrap();
    let key_body = key.lines().nth(1).unwrap();
    assert!(!logs.contains(key_body), "log leaks the adb key");
}

#[test]
fn pair_cli_pairs_and_prints_the_serial() {
    let dir = TempDir::new("pair-cli");
    let sim = wireless_sim("SIMPAIRCLI01", &dir.path().join("sim-state"));
    let run = |ports: &Value, code: &str| {
        std::process::Command::new(common::procs::bin())
            .args([
                "pair",
                "--code",
                &format!("127.0.0.1:{}", ports["pairing_port"]),
                code,
                "--connect",
                &format!("127.0.0.1:{}", ports["connect_port"]),
                "--data-dir",
            ])
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let ports = sim.control_json("/v1/pair", json!({"code": "161803"}));
    let wrong = run(&ports, "000000");
    assert!(!wrong.status.success());
    let err = String::from_utf8_lossy(&wrong.stderr);
    assert!(err.contains("wrong pairing code"), "{err}");
    // The phone's dialog is gone after a failed attempt (Settings): say how to try again.
    assert!(
        err.contains("tap \"Pair device with pairing code\" again"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains("000000"), "{err}");

    let ports = sim.control_json("/v1/pair", json!({"code": "161803"}));
    let ok = run(&ports, "161803");
    let out = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{out} {}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(
        out.contains(&format!("paired with {}", ports["guid"].as_str().unwrap())),
        "{out}"
    );
    assert!(out.contains("serial SIMPAIRCLI01"), "{out}");
    assert!(!out.contains("161803"));
}

/// A phone paired over Wi-Fi (flow `adb_pair_code`; no adb server, no `--device`) is listed by
/// `devices` and `check` with its state: `device` and its bound channel while the connector runs
/// (read from its socket), then, with the connector stopped and the phone gone, `offline` under
/// its remembered serial (read from the store) with the Wi-Fi fix. Neither command is given
/// the API key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn devices_and_check_list_a_phone_paired_over_wifi() {
    let WirelessPhone {
        sim,
        mut conn,
        mut x,
        id: _,
        ch,
        dir,
    } = wireless_phone("SIMPAIRLIST01", &[]).await;
    let (_, ports) = pair_with_code(&mut x, &ch, &sim, "314159").await;
    let transport = format!("tcp:127.0.0.1:{}", ports["connect_port"]);
    let data = dir.path().display().to_string();
    let flags = ["--data-dir", data.as_str(), "--adb-server", ""];
    let devices = |flags: &[&str]| {
        let mut args = vec!["devices", "--json"];
        args.extend_from_slice(flags);
        let (code, out, _) = run_cli(&args);
        assert_eq!(code, Some(0), "{out}");
        let rows: Vec<Value> = serde_json::from_str(&out).expect("devices --json");
        rows
    };

    // Running connector: from its socket, probed at the paired address.
    let rows = devices(&flags);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["serial"], "SIMPAIRLIST01");
    assert_eq!(rows[0]["state"], "device");
    assert_eq!(rows[0]["transport"], transport.as_str());
    assert_eq!(rows[0]["paired_over_wifi"], true);
    assert_eq!(rows[0]["connector_channel_id"], ch.as_str());
    // The table marks it too (last column).
    let mut table_args = vec!["devices"];
    table_args.extend_from_slice(&flags);
    let (code, table, _) = run_cli(&table_args);
    assert_eq!(code, Some(0), "{table}");
    assert!(
        table.lines().next().unwrap_or("").ends_with("WI-FI PAIRED"),
        "{table}"
    );
    let line = table
        .lines()
        .find(|l| l.starts_with("SIMPAIRLIST01"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(line.ends_with("  yes"), "{table}");
    let mut args = vec!["check"];
    args.extend_from_slice(&flags);
    let (_, out, _) = run_cli(&args);
    assert!(
        out.contains(&format!(
            "ok       phone SIMPAIRLIST01 (Pixel 8) {transport} (paired over Wi-Fi): device"
        )),
        "{out}"
    );
    x.close().await;

    // Connector stopped, the phone no longer knows the box's key (here: the box has another
    // one, made by `pair` in another data dir): from the store, `unauthorized`, and the fix
    // is to pair again.
    conn.kill();
    let other = dir.path().join("other");
    let other_s = other.display().to_string();
    let (code, _, _) = run_cli(&[
        "pair",
        "--code",
        "127.0.0.1:1",
        "000000",
        "--data-dir",
        &other_s,
    ]);
    assert_eq!(code, Some(1), "nothing listens on port 1");
    std::fs::rename(dir.path().join("adbkey"), dir.path().join("adbkey.old")).unwrap();
    std::fs::copy(other.join("adbkey"), dir.path().join("adbkey")).unwrap();
    let rows = devices(&flags);
    assert_eq!(rows[0]["serial"], "SIMPAIRLIST01", "{rows:?}");
    assert_eq!(rows[0]["state"], "unauthorized", "{rows:?}");
    let (code, out, _) = run_cli(&args);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("pair it again"), "{out}");
    std::fs::rename(dir.path().join("adbkey.old"), dir.path().join("adbkey")).unwrap();

    // Phone gone: offline under its remembered serial, with the Wi-Fi fix.
    drop(sim);
    let rows = devices(&flags);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["serial"], "SIMPAIRLIST01");
    assert_eq!(rows[0]["state"], "offline");
    assert_eq!(rows[0]["paired_over_wifi"], true);
    assert_eq!(rows[0]["connector_channel_id"], ch.as_str());
    let (code, out, _) = run_cli(&args);
    assert_eq!(code, Some(1), "{out}");
    let problem = out
        .lines()
        .skip_while(|l| !l.contains("SIMPAIRLIST01"))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        problem.starts_with(&format!(
            "PROBLEM  phone SIMPAIRLIST01 {transport} (paired over Wi-Fi): offline"
        )),
        "{out}"
    );
    assert!(problem.contains("Wireless debugging on"), "{out}");
    assert!(!out.contains("314159") && !out.contains(API_KEY), "{out}");
}

/// A `wireless_phone` paired on its channel through `adb_pair_code`, with
/// `android_device_status` answering over TLS.
async fn paired_phone(serial: &str) -> WirelessPhone {
    let mut p = wireless_phone(serial, &[]).await;
    pair_with_code(&mut p.x, &p.ch, &p.sim, "577215").await;
    let status = p.x.tool(&p.ch, "android_device_status", json!({})).await;
    assert!(status.get("error").is_none(), "{status}");
    p
}

/// The status of the descriptor pushes, read until one says `want` (for at most 60 s): the
/// last one read. On a loaded machine the phone may pass through other states first (a redial
/// past its grace is `offline` before the refusal is read).
async fn pushed_status(x: &mut XAgent, want: &str) -> String {
    common::wireless::pushed_status(x, want, 60).await
}

/// A phone paired over Wi-Fi that stops accepting the connector's key (the user revoked the
/// debugging authorisations, which forgets wireless pairings too: the phone drops the TLS
/// connection and refuses the key on the next) is `device_unauthorized` and told to pair
/// again — not `device_offline` "address closed or refused".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paired_phone_that_refuses_the_key_is_device_unauthorized() {
    let mut p = paired_phone("SIMPAIRKEY01").await;
    let revoked = p.sim.control_json("/v1/auth", json!({"action": "revoke"}));
    assert_eq!(revoked["accepted"], 0, "{revoked}");
    let status = pushed_status(&mut p.x, "revoked").await;
    assert_eq!(status, "revoked", "connector log:\n{}", p.conn.logs());
    let ack = p.x.tool(&p.ch, "android_device_status", json!({})).await;
    assert_eq!(ack["error"]["code"], "device_unauthorized", "{ack}");
    let message = ack["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("pair"), "{message}");
    for box_side in [
        "adb reconnect",
        "adb connect",
        "adb server",
        "closed or refused",
    ] {
        assert!(!message.contains(box_side), "{box_side}: {message}");
    }
    assert!(p.conn.logs().contains(r#"to="unauthorized""#));
    // The same fix as `check` gives this phone.
    let fix = check_fix(&p.dir, "SIMPAIRKEY01");
    assert!(message.contains(&fix), "check: {fix}\ntool: {message}");
}

/// The `fix:` line `check` prints under the problem of phone `serial` (connector data dir
/// `dir`, no adb server).
fn check_fix(dir: &TempDir, serial: &str) -> String {
    let data = dir.path().display().to_string();
    let (code, out, _) = run_cli(&["check", "--data-dir", &data, "--adb-server", ""]);
    assert_eq!(code, Some(1), "{out}");
    out.lines()
        .skip_while(|l| !(l.starts_with("PROBLEM  phone") && l.contains(serial)))
        .nth(1)
        .and_then(|l| l.trim().strip_prefix("fix: "))
        .unwrap_or_else(|| panic!("no fix for {serial}: {out}"))
        .to_string()
}

/// A phone paired over Wi-Fi and served directly that stops answering (switched off: its
/// connect port refuses) gets, in tool errors, the Wi-Fi fix `check` gives it — turn Wireless
/// debugging on, the connector re-finds the phone by mDNS — never the `adb tcpip` fix of a
/// `--device` phone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paired_phone_out_of_reach_gets_the_wifi_fix_in_tool_errors() {
    let mut p = paired_phone("SIMPAIRGONE1").await;
    p.sim.unplug();
    let status = pushed_status(&mut p.x, "offline").await;
    assert_eq!(status, "offline", "connector log:\n{}", p.conn.logs());
    let ack = p.x.tool(&p.ch, "android_device_status", json!({})).await;
    assert_eq!(ack["error"]["code"], "device_offline", "{ack}");
    let message = ack["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("Wireless debugging on"), "{message}");
    assert_eq!(
        message.matches("does not answer").count(),
        1,
        "said once: {message}"
    );
    for wrong in ["adb tcpip", "adb connect", "cable"] {
        assert!(!message.contains(wrong), "{wrong}: {message}");
    }
    let fix = check_fix(&p.dir, "SIMPAIRGONE1");
    assert!(message.contains(&fix), "check: {fix}\ntool: {message}");
}

/// `pair --code` checks its values before making a key or dialling: HOST:PORT must be an
/// address with a port and the code exactly 6 digits. Each refusal is one stable `error:`
/// line that repeats neither value (swapped arguments would put the code in the address).
#[test]
fn pair_cli_checks_the_address_and_the_code_before_dialling() {
    let dir = TempDir::new("pair-cli-input");
    let data = dir.path().display().to_string();
    let address_error = "error: --code HOST:PORT CODE: the first value must be the HOST:PORT";
    let code_error = "error: --code HOST:PORT CODE: the pairing code must be 6 digits";
    for (addr, code, expected) in [
        ("127.0.0.1:37123", "27182", code_error),
        ("127.0.0.1:37123", "2718281", code_error),
        ("127.0.0.1:37123", "27a828", code_error),
        ("127.0.0.1:37123", " 271828", code_error),
        ("127.0.0.1", "271828", address_error),
        ("127.0.0.1:0", "271828", address_error),
        ("fe80::1:5555", "271828", address_error),
        // Swapped: the code where the address goes.
        ("271828", "127.0.0.1:37123", address_error),
    ] {
        let (status, out, err) = run_cli(&["pair", "--code", addr, code, "--data-dir", &data]);
        assert_eq!(status, Some(1), "{addr} {code}: {out}{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(expected), "{addr} {code}: {err}");
        for secret in [addr, code] {
            assert!(!err.contains(secret.trim()), "{err} repeats {secret}");
        }
        // Nothing was made or dialled: the key is made only right before dialling.
        assert!(!dir.path().join("adbkey").exists(), "{addr} {code}");
    }
    let (status, _, err) = run_cli(&[
        "pair",
        "--code",
        "[::1]:37123",
        "271828",
        "--connect",
        "somewhere",
        "--data-dir",
        &data,
    ]);
    assert_eq!(status, Some(1));
    assert!(
        err.starts_with("error: --connect must be HOST:PORT"),
        "{err}"
    );
}

/// Flow `adb_pair_code` with a code that is not 6 digits: `auth_failed` saying the code must
/// be 6 digits — not "the pairing code was wrong" — without dialling the phone (its pairing
/// dialog still takes the right code) and without repeating the code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairing_code_that_is_not_6_digits_is_refused_before_dialling() {
    let WirelessPhone {
        sim,
        conn: _conn,
        mut x,
        id: _,
        ch,
        dir: _dir,
    } = wireless_phone("SIMPAIRSHAPE1", &[]).await;
    let ports = sim.control_json("/v1/pair", json!({ "code": "141421" }));
    for bad in ["14142", "1414213", "14a421", "9z9"] {
        let e = start_pair_code(&mut x, &ch, &ports, bad).await;
        assert_packet(&e);
        assert_eq!(e["error"]["code"], "auth_failed", "{e}");
        let message = e["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("pairing code must be 6 digits"),
            "{bad}: {message}"
        );
        assert!(!message.contains("wrong"), "{bad}: {message}");
        assert!(!e.to_string().contains(bad), "{e}");
    }
    let ok = start_pair_code(&mut x, &ch, &ports, "141421").await;
    assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
}

/// A phone paired over Wi-Fi (`adb_pair_code`) whose pairing is revoked while the connector is
/// down (Revoke USB debugging authorisations forgets wireless pairings too) refuses the key
/// from the restarted connector's first connection. The running connector still lists it,
/// `unauthorized` under the serial of its pairing record (not under its address); a claim of
/// that serial and a tool call on its restored channel are `device_unauthorized` with the
/// Wi-Fi-paired fix `check` gives (pair it again), never an adb-server or `adb tcpip` fix.
/// Pairing again through `adb_pair_code` makes it usable with no restart. No pairing code,
/// adb key or API key in the log or the acks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paired_phone_revoked_while_the_connector_was_down_is_listed_unauthorized() {
    let serial = "SIMPAIRREV01";
    let WirelessPhone {
        sim,
        mut conn,
        mut x,
        id,
        ch,
        dir,
    } = wireless_phone(serial, &["--claim-policy", "open"]).await;
    let first = "161803";
    let (ok, ports) = pair_with_code(&mut x, &ch, &sim, first).await;
    let mut acks = vec![ok.to_string()];
    x.close().await;
    let transport = format!("tcp:127.0.0.1:{}", ports["connect_port"]);

    // Connector down; on the phone the authorisations are revoked; the connector comes back.
    conn.kill();
    let revoked = sim.control_json("/v1/auth", json!({"action": "revoke"}));
    assert_eq!(revoked["accepted"], 0, "{revoked}");
    conn.restart();
    let mut z = connect(&conn.addr).await;
    z.hello(&id).await;
    let (again, _) = z.open(Some(&ch)).await;
    assert_eq!(again, ch);
    let (other, _) = z.open(None).await;

    // Claimed by its serial from another channel: refused as unauthorized once the watch's
    // first connection is refused (an answer before that may be "no attached phone").
    let mut refused = Value::Null;
    for _ in 0..100 {
        refused = z.claim(&other, serial).await;
        acks.push(refused.to_string());
        if refused["error"]["code"] == "device_unauthorized" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    }
    assert_packet(&refused);
    assert_eq!(refused["error"]["code"], "device_unauthorized", "{refused}");
    let claim_message = refused["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let tool = z.tool(&ch, "android_device_status", json!({})).await;
    acks.push(tool.to_string());
    assert_eq!(tool["error"]["code"], "device_unauthorized", "{tool}");
    let tool_message = tool["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let fix = check_fix(&dir, serial);
    assert!(fix.contains("pair it again"), "{fix}");
    for message in [&claim_message, &tool_message] {
        assert!(message.contains(&fix), "check: {fix}\nerror: {message}");
        for box_side in [
            "adb reconnect",
            "adb connect",
            "adb disconnect",
            "adb server",
            "adb tcpip",
            "replug",
            "closed or refused",
            "no attached phone",
        ] {
            assert!(!message.contains(box_side), "{box_side}: {message}");
        }
    }

    // Listed by the running connector under its stored serial, with its address as transport.
    let data = dir.path().display().to_string();
    let devices = || {
        let (code, out, _) = run_cli(&[
            "devices",
            "--json",
            "--data-dir",
            data.as_str(),
            "--adb-server",
            "",
        ]);
        assert_eq!(code, Some(0), "{out}");
        serde_json::from_str::<Vec<Value>>(&out).expect("devices --json")
    };
    let rows = devices();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["serial"], serial, "{rows:?}");
    assert_eq!(rows[0]["state"], "unauthorized", "{rows:?}");
    assert_eq!(rows[0]["transport"], transport.as_str(), "{rows:?}");
    assert_eq!(rows[0]["paired_over_wifi"], true, "{rows:?}");

    // The flow runs on the channel of a phone that must pair again, but another phone paired
    // there is not bound to it.
    let stranger = wireless_sim("SIMPAIRREV02", &dir.path().join("sim-state-2"));
    let third = "271828";
    let ports = stranger.control_json("/v1/pair", json!({ "code": third }));
    let taken = start_pair_code(&mut z, &ch, &ports, third).await;
    acks.push(taken.to_string());
    assert_eq!(taken["error"]["code"], "auth_failed", "{taken}");
    assert!(
        taken.to_string().contains("already bound to another phone"),
        "{taken}"
    );

    // Paired again on the phone and through the flow: usable with no restart.
    let second = "141421";
    let (paired, _) = pair_with_code(&mut z, &ch, &sim, second).await;
    acks.push(paired.to_string());
    let status = z.tool(&ch, "android_device_status", json!({})).await;
    acks.push(status.to_string());
    assert!(status.get("error").is_none(), "{status}");
    let rows = devices();
    let row = rows
        .iter()
        .find(|r| r["serial"] == serial)
        .unwrap_or_else(|| panic!("{rows:?}"));
    assert_eq!(row["state"], "device", "{rows:?}");
    assert_eq!(row["connector_channel_id"], ch.as_str(), "{rows:?}");
    // The other phone is listed (watched), bound to no channel.
    let row = rows
        .iter()
        .find(|r| r["serial"] == "SIMPAIRREV02")
        .unwrap_or_else(|| panic!("{rows:?}"));
    assert!(row["connector_channel_id"].is_null(), "{rows:?}");
    z.close().await;

    let logs = conn.logs();
    let refusal = logs
        .lines()
        .find(|l| l.contains("phone paired over Wi-Fi refuses this connector's key"))
        .unwrap_or_else(|| panic!("no refusal logged: {logs}"));
    assert!(refusal.contains("pair it again"), "{refusal}");
    assert!(!refusal.contains(serial), "{refusal}");
    let (public, private) = common::scenario::adb_key_secrets(dir.path()).await;
    for text in acks.iter().chain([&logs]) {
        for secret in [first, second, third, API_KEY, &public, &private] {
            assert!(!text.contains(secret), "a secret leaks: {text}");
        }
    }
}

/// `auth.logout` answered while an `adb_pair_code` pairing still runs ends that pairing: its
/// `auth.start` ack is `auth_failed` naming the logout, and the channel stays unbound — the
/// client was told no phone is bound, so none may be bound behind its back (fresh-user finding:
/// the pairing bound the phone a second after the logout ack said `created`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logout_during_pairing_leaves_the_channel_unbound() {
    let mut p = wireless_phone("SIMPAIRLOGOUT01", &[]).await;
    // The phone answers the pairing connection 3 s late: the logout lands inside the flow.
    let ports = p
        .sim
        .control_json("/v1/pair", json!({"code": "161803", "delay_ms": 3000}));
    let start = common::xagent::packet(
        "auth.start",
        Some(&p.ch),
        json!({"flow_id": "adb_pair_code", "input": pair_input(&ports, "161803")}),
        9001,
    );
    p.x.send_text(&start.to_string()).await;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let out = p.x.request("auth.logout", Some(&p.ch), json!({})).await;
    assert!(out.get("error").is_none(), "{out}");
    let ack =
        p.x.wait_push("auth.start.ack", 60)
            .await
            .expect("the pairing's ack");
    assert_eq!(ack["request_id"], start["request_id"], "{ack}");
    assert_eq!(ack["error"]["code"], "auth_failed", "{ack}");
    let message = ack["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("auth.logout"), "{message}");
    assert!(!message.contains("161803"), "{message}");
    let d =
        p.x.request("connection.descriptor.get", Some(&p.ch), json!({}))
            .await;
    assert_eq!(
        d["payload"]["connection_descriptor"]["connection"]["status"], "created",
        "{d}"
    );
    let tool = p.x.tool(&p.ch, "android_device_status", json!({})).await;
    assert!(tool.get("error").is_some(), "nothing bound: {tool}");
    // Pairing again binds it: the logout ended one flow, not the channel.
    let again = p.sim.control_json("/v1/pair", json!({"code": "161804"}));
    let ok = start_pair_code(&mut p.x, &p.ch, &again, "161804").await;
    assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
}
