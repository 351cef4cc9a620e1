//! Issue 11, the operator's side of the edge box, through the real binary: log formats without
//! secrets, `check` and `devices` against real adb servers and simulated phones, SIGHUP reload,
//! TLS, several adb servers, Prometheus `/metrics`.

mod common;

use std::io::{Read, Write};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{bin, run_cli as run, ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::{claim_when_visible, claimed_channel};
use common::xagent::{connect, http_get};
use common::API_KEY;

/// `--data-dir D --api-key-file D/api_key.txt` (the file the test connector also uses).
fn base_flags(dir: &std::path::Path) -> Vec<String> {
    let key = dir.join("api_key.txt");
    std::fs::write(&key, format!("{API_KEY}\n")).unwrap();
    vec![
        "--data-dir".into(),
        dir.display().to_string(),
        "--api-key-file".into(),
        key.display().to_string(),
    ]
}

/// `adb connect TARGET` (adb exits 0 whatever happens) and waits until `adb devices` shows
/// TARGET in `state`.
fn connect_until(adb: &AdbServer, target: &str, state: &str) {
    let _ = adb.run(&["connect", target]);
    for _ in 0..100 {
        let out = adb.run(&["devices"]);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if text
            .lines()
            .any(|l| l.starts_with(target) && l.split_whitespace().nth(1) == Some(state))
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{target} never became {state}");
}

/// A fake adb server on 127.0.0.1 (host protocol smart sockets, AOSP `docs/dev/protocol.md`):
/// answers `host:version` with 41 and `host:devices-l` with `list`; one thread per connection.
/// Returns its `host:port`.
fn fake_adb_server(list: &'static str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut s = stream;
                let mut len = [0u8; 4];
                if s.read_exact(&mut len).is_err() {
                    return;
                }
                let n = usize::from_str_radix(std::str::from_utf8(&len).unwrap_or("0"), 16)
                    .unwrap_or(0);
                let mut service = vec![0u8; n];
                if s.read_exact(&mut service).is_err() {
                    return;
                }
                let answer = match &service[..] {
                    b"host:version" => "0029".to_string(),
                    b"host:devices-l" | b"host:devices" => list.to_string(),
                    _ => {
                        let msg = "unknown host service";
                        let _ = write!(s, "FAIL{:04x}{msg}", msg.len());
                        return;
                    }
                };
                let _ = write!(s, "OKAY{:04x}{answer}", answer.len());
            });
        }
    });
    addr
}

fn code(p: &Value) -> &str {
    p["error"]["code"].as_str().unwrap_or("")
}

/// `--log-format json`: every stderr line is one JSON object; a claim with a code, a wrong key
/// and a wrong code leave neither the key nor a code in the log. `text` (the default) carries
/// no ANSI colour codes when stderr is a file (journald, log files).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_and_text_logs_carry_no_secrets() {
    let sim = SimPhone::start("SIMLOGFMT00011");
    for format in ["json", "text"] {
        let dir = TempDir::new("logfmt");
        let claim_code = "claim-LOGFMT-739201";
        let conn = ConnectorProc::start_with_claim_code(
            dir.path(),
            Phones::Direct(vec![sim.addr.clone()]),
            &sim.serial,
            claim_code,
            &["--log-format", format],
        );
        let wrong_key = "wrong-key-LOGFMT-5550001";
        let (st, _, _) = http_get(&format!("{}/health", conn.base), Some(wrong_key));
        assert_eq!(st, 401);
        let mut x = connect(&conn.addr).await;
        x.hello("").await;
        let (ch, _) = x.open(None).await;
        common::scenario::until_code_asked(&mut x, &ch, &sim.serial).await;
        let wrong = "guess-LOGFMT-000000";
        let e = x.request("auth.start", Some(&ch), json!({"flow_id": "adb_device_claim", "input": {"serial": sim.serial, "claim_code": wrong}})).await;
        assert_eq!(code(&e), "auth_failed", "{e}");
        let mut ok = Value::Null;
        for _ in 0..75 {
            ok = x.request("auth.start", Some(&ch), json!({"flow_id": "adb_device_claim", "input": {"serial": sim.serial, "claim_code": claim_code}})).await;
            if ok["payload"]["status"] == "authenticated" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
        let out = x.request("auth.logout", Some(&ch), json!({})).await;
        assert!(out.get("error").is_none(), "{out}");
        let logs = conn.logs();
        assert!(logs.contains("phone bound"), "the log is captured: {logs}");
        // The wrong code and the logout are each one line, with the serial masked.
        let masked = format!("SIM…{}", &sim.serial[sim.serial.len() - 4..]);
        let refused: Vec<&str> = logs
            .lines()
            .filter(|l| l.contains("claim refused: wrong claim code"))
            .collect();
        assert_eq!(refused.len(), 1, "{logs}");
        assert!(refused[0].contains(&masked), "{logs}");
        assert!(refused[0].contains(&ch), "{logs}");
        let released: Vec<&str> = logs
            .lines()
            .filter(|l| l.contains("auth.logout: phone released"))
            .collect();
        assert_eq!(released.len(), 1, "{logs}");
        assert!(released[0].contains(&masked), "{logs}");
        assert!(
            !logs.contains(&sim.serial),
            "the full serial is logged: {logs}"
        );
        for secret in [API_KEY, claim_code, wrong, wrong_key] {
            assert!(!logs.contains(secret), "{format} log leaks {secret}");
        }
        assert!(!logs.contains('\u{1b}'), "{format} log has escape codes");
        let lines: Vec<&str> = logs.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(lines.len() >= 2, "{logs}");
        for line in lines {
            let parsed = serde_json::from_str::<Value>(line);
            if format == "json" {
                let v = parsed.unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                assert!(v["level"].is_string() && v["fields"].is_object(), "{line}");
                // One field name for the masked serial, in every component's lines (STYLE.md
                // rule 10: `serial_hint`); the whole serial is never a field.
                assert!(v["fields"].get("serial").is_none(), "{line}");
                let message = v["fields"]["message"].as_str().unwrap_or_default();
                if [
                    "phone bound",
                    "claim refused",
                    "auth.logout: phone released",
                ]
                .iter()
                .any(|m| message.starts_with(m))
                {
                    assert_eq!(v["fields"]["serial_hint"], masked.as_str(), "{line}");
                }
            } else {
                assert!(parsed.is_err(), "text line is JSON: {line}");
            }
        }
    }
}

/// `check` and `devices` through the real binary against a real adb server (Google adb 34)
/// with simulated phones (`device`, then `unauthorized`), a fake adb server for the states a sim
/// cannot take (`no permissions`, `offline`), and the bound channel read from the running
/// connector and, once it is stopped, from its store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_and_devices_report_every_state_with_its_fix() {
    let adb = AdbServer::start(AdbFlavor::Google34);
    let ok_phone = SimPhone::start("SIMCHECK00001");
    adb.connect(&ok_phone.addr);
    let dir = TempDir::new("check");
    let mut flags = base_flags(dir.path());
    flags.extend([
        "--adb-server".into(),
        adb.addr(),
        "--claim-policy".into(),
        "open".into(),
    ]);
    let with = |cmd: &str, extra: &[&str]| {
        let mut a: Vec<&str> = vec![cmd];
        a.extend(flags.iter().map(String::as_str));
        a.extend(extra);
        run(&a)
    };

    // All fine (the connector running): exit 0, the server's protocol version and the phone.
    let running = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (code, out, err) = with("check", &[]);
    drop(running);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains(&format!(
            "adb server {} reachable, protocol version 41",
            adb.addr()
        )),
        "{out}"
    );
    assert!(out.contains("phone SIMCHECK00001 (Pixel 8)"), "{out}");
    assert!(!out.contains("PROBLEM"), "{out}");

    // A phone that has not accepted the key: exit 1 and the RSA prompt named.
    let locked = SimPhone::start_with_control("SIMCHECK00002", &["--require-auth"]);
    connect_until(&adb, &locked.addr, "unauthorized");
    let (code, out, _) = with("check", &[]);
    assert_eq!(code, Some(1), "{out}");
    let line = out
        .lines()
        .skip_while(|l| !l.contains(&locked.addr))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        line.starts_with("PROBLEM") && line.contains("unauthorized"),
        "{out}"
    );
    assert!(line.contains("RSA key prompt"), "{out}");

    // `devices`: table and JSON, serial (ro.serialno once online), model, state, transport.
    let (code, table, err) = with("devices", &[]);
    assert_eq!(code, Some(0), "{err}");
    let header = table.lines().next().unwrap_or("");
    for col in [
        "SERIAL",
        "MODEL",
        "STATE",
        "TRANSPORT",
        "ADB SERVER",
        "CHANNEL",
    ] {
        assert!(header.contains(col), "{table}");
    }
    let (_, json_out, _) = with("devices", &["--json"]);
    let rows: Vec<Value> = serde_json::from_str(&json_out).expect("devices --json");
    let row = |transport: &str| {
        rows.iter()
            .find(|r| r["transport"] == transport)
            .cloned()
            .unwrap_or_else(|| panic!("{transport} not listed: {json_out}"))
    };
    let online = row(&ok_phone.addr);
    assert_eq!(online["serial"], "SIMCHECK00001");
    assert_eq!(online["model"], "Pixel 8");
    assert_eq!(online["state"], "device");
    assert_eq!(online["adb_server"], json!(adb.addr()));
    assert_eq!(online["connector_channel_id"], Value::Null);
    assert_eq!(row(&locked.addr)["state"], "unauthorized");
    // The model of a phone that never authorized the key is unknown: null, as in the table's `-`.
    assert_eq!(row(&locked.addr)["model"], Value::Null, "{json_out}");

    // Bound channel: from the running connector (it holds the store), then from the store.
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (x, ch) = claimed_channel(&conn.addr, "SIMCHECK00001").await;
    let (code, json_out, err) = with("devices", &["--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        json_out.contains(&format!("\"connector_channel_id\": \"{ch}\"")),
        "{json_out}"
    );
    let (_, table, _) = with("devices", &[]);
    let line = table
        .lines()
        .find(|l| l.starts_with("SIMCHECK00001"))
        .unwrap_or("");
    assert!(line.contains(&ch) && line.contains("device"), "{table}");
    x.close().await;
    drop(conn);
    let (code, json_out, err) = with("devices", &["--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        json_out.contains(&format!("\"connector_channel_id\": \"{ch}\"")),
        "from the store: {json_out}"
    );

    // States a sim cannot take, from a fake adb server speaking the host protocol.
    let fake = fake_adb_server(
        "FAKEUSB0001            no permissions (missing udev rules? user is in the plugdev group); see [http://developer.android.com/tools/device.html] usb:1-1 transport_id:1\n\
         FAKEUSB0002            offline usb:1-2 transport_id:2\n\
         10.0.0.9:5555          offline transport_id:3\n",
    );
    let (code, out, _) = check_with_base_flags(dir.path(), &["--adb-server", &fake]);
    assert_eq!(code, Some(1), "{out}");
    let fix_of = |serial: &str| {
        out.lines()
            .skip_while(|l| !l.contains(serial))
            .nth(1)
            .unwrap_or("")
            .to_string()
    };
    assert!(
        out.contains("phone FAKEUSB0001") && out.contains("no permissions"),
        "{out}"
    );
    assert!(
        fix_of("FAKEUSB0001").contains("/lib/udev/rules.d/"),
        "{out}"
    );
    assert!(fix_of("FAKEUSB0002").contains("re-plug the cable"), "{out}");
    assert!(
        fix_of("10.0.0.9:5555").contains("wireless debugging"),
        "{out}"
    );

    // An unreachable adb server and an invalid config are problems too.
    let (code, out, _) = check_with_base_flags(dir.path(), &["--adb-server", "127.0.0.1:1"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("PROBLEM  adb server 127.0.0.1:1"), "{out}");
    for (flag, path) in [
        ("--api-key-file", "/nonexistent/key"),
        ("--config", "/nonexistent/conf"),
    ] {
        let (code, out, _) = run(&["check", "--data-dir", "/tmp", flag, path]);
        assert_eq!(code, Some(1), "{out}");
        assert!(
            out.starts_with(&format!("PROBLEM  config: cannot read {flag} {path}")),
            "{out}"
        );
    }
    // What is invalid, on one line, without a generic "invalid configuration" in front.
    let (code, out, _) =
        check_with_base_flags(dir.path(), &["--adb-server", "", "--upload-max-bytes", "0"]);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(
        out.lines().next(),
        Some("PROBLEM  config: --upload-max-bytes (upload_max_bytes) must be 1 to 68719476736 bytes, got 0"),
        "{out}"
    );
    assert!(!out.contains("invalid configuration"), "{out}");
}

/// `devices` and `check` need no API key: `devices` lists the phones without one; `check`
/// surveys the adb server and the phones and names the missing key as the problem `serve`
/// would hit. `serve` still refuses to start without it.
#[test]
fn devices_and_check_need_no_api_key() {
    let fake = fake_adb_server("FAKENOKEY001           offline usb:1-2 transport_id:2\n");
    let dir = TempDir::new("nokey");
    let data = dir.path().display().to_string();
    let (code, out, err) = run(&[
        "devices",
        "--json",
        "--data-dir",
        &data,
        "--adb-server",
        &fake,
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).expect("devices --json");
    assert_eq!(rows.len(), 1, "{out}");
    assert_eq!(rows[0]["serial"], "FAKENOKEY001");
    assert_eq!(rows[0]["state"], "offline");
    assert_eq!(rows[0]["paired_over_wifi"], false);
    let (code, out, _) = run(&["check", "--data-dir", &data, "--adb-server", &fake]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.starts_with("PROBLEM  config: --api-key-file is required"),
        "{out}"
    );
    assert!(
        out.contains(&format!("ok       adb server {fake} reachable")),
        "the survey ran: {out}"
    );
    assert!(
        out.contains("phone FAKENOKEY001") && out.contains("re-plug the cable"),
        "{out}"
    );
    let (_, out, _) = check_with_base_flags(dir.path(), &["--adb-server", &fake]);
    assert!(out.starts_with("ok       config valid"), "{out}");
    let (code, _, err) = run(&["serve", "--data-dir", &data, "--adb-server", ""]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("--api-key-file is required"), "{err}");
}

/// A top-level key appended after `[claim_codes]` (TOML puts it in that table) is refused by
/// `check` and `serve` on one line naming the key and the fix; the value is never printed.
#[test]
fn a_top_level_key_under_claim_codes_is_refused() {
    let dir = TempDir::new("strayhdr");
    let file = dir.path().join("stray.toml");
    let mut flags: Vec<String> = vec!["--adb-server".into(), "".into(), "--config".into()];
    flags.push(file.display().to_string());
    flags.extend(base_flags(dir.path()));
    // A long value (it would hash as a code) and a short one (it used to fail as a code
    // "at least 6 characters" long, naming a masked serial).
    for (stray, value) in [("listen", "127.0.0.1:18999"), ("claim_policy", "open")] {
        std::fs::write(
            &file,
            format!("[claim_codes]\nSIMSTRAY0001 = \"stray-CODE-778899\"\n{stray} = \"{value}\"\n"),
        )
        .unwrap();
        for command in ["check", "serve"] {
            let mut args = vec![command];
            args.extend(flags.iter().map(String::as_str));
            let (code, out, err) = run(&args);
            let text = format!("{out}{err}");
            assert_eq!(code, Some(1), "{command} {stray}: {text}");
            let line = text
                .lines()
                .find(|l| l.contains("is under [claim_codes]"))
                .unwrap_or_else(|| panic!("{command} {stray}: no refusal: {text}"));
            assert!(line.contains(&format!("`{stray}`")), "{line}");
            assert!(
                line.contains("top-level keys must come before any [table] header"),
                "{line}"
            );
            if command == "check" {
                assert!(line.starts_with("PROBLEM  config:"), "{text}");
            }
            for secret in [value, "stray-CODE-778899"] {
                assert!(!text.contains(secret), "{command} prints {secret}: {text}");
            }
        }
    }
    // The same keys above the header are valid.
    std::fs::write(
        &file,
        "listen = \"127.0.0.1:18999\"\nclaim_policy = \"open\"\n[claim_codes]\nSIMSTRAY0001 = \"stray-CODE-778899\"\n",
    )
    .unwrap();
    let mut args = vec!["check"];
    args.extend(flags.iter().map(String::as_str));
    let (_, out, err) = run(&args);
    assert!(out.starts_with("ok       config valid"), "{out}{err}");
}

/// A claim code written without quotes (a TOML integer or float) is refused by `check` and by
/// a SIGHUP reload on one line naming the setting and saying it must be a string; the code
/// itself is never printed or logged. Before: serde's message (`invalid type: integer
/// `987654321`, expected a string`) carried it to stdout and the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_code_written_as_a_number_is_refused_without_printing_it() {
    let dir = TempDir::new("numcode");
    let file = dir.path().join("codes.toml");
    let numbers = [
        ("987654321", "integer"),
        ("8675309.1357911", "floating point"),
    ];
    let flags = ["--adb-server", "", "--config", file.to_str().unwrap()];
    for (number, kind) in numbers {
        std::fs::write(&file, format!("[claim_codes]\nSIM0000000009 = {number}\n")).unwrap();
        let (code, out, err) = check_with_base_flags(dir.path(), &flags);
        let text = format!("{out}{err}");
        assert_eq!(code, Some(1), "{text}");
        let line = text
            .lines()
            .find(|l| l.starts_with("PROBLEM  config:"))
            .unwrap_or_else(|| panic!("no refusal: {text}"));
        assert!(
            line.contains("`claim_codes.SIM0000000009` must be a string"),
            "{line}"
        );
        assert!(line.contains(&format!("(found: {kind})")), "{line}");
        assert!(line.contains("line 2"), "{line}");
        for digits in number.split('.') {
            assert!(
                !text.contains(digits),
                "check prints the code {number}: {text}"
            );
        }
    }

    // A running connector keeps its configuration and logs the refusal without the code.
    std::fs::write(
        &file,
        "[claim_codes]\nSIM0000000009 = \"first-CODE-556677\"\n",
    )
    .unwrap();
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![]),
        &["--config", file.to_str().unwrap()],
    );
    for (n, (number, _)) in numbers.iter().enumerate() {
        std::fs::write(&file, format!("[claim_codes]\nSIM0000000009 = {number}\n")).unwrap();
        hang_up_and_wait_log(&conn, "keeping the running one", n + 1);
    }
    let logs = conn.logs();
    let refusals: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("keeping the running one"))
        .collect();
    assert_eq!(refusals.len(), 2, "{logs}");
    for line in refusals {
        assert!(
            line.contains("`claim_codes.SIM0000000009` must be a string"),
            "{line}"
        );
    }
    for (number, _) in numbers {
        for digits in number.split('.') {
            assert!(
                !logs.contains(digits),
                "the log leaks the code {number}: {logs}"
            );
        }
    }
    assert!(!logs.contains("first-CODE-556677"), "{logs}");
}

/// A `--device` address where nothing listens (connection refused) is `offline` — adb's word
/// for a transport without `CNXN`, kept — but `check` says the connection was refused and
/// gives the fix for that (adb over TCP/IP on, the port --device names), not the fix of a
/// phone that accepts and stays silent; an address that drops the connect says no answer came,
/// and one that accepts but never answers the adb handshake keeps the silent phone's fix.
/// `devices` warns the same on stderr, its `offline` rows unchanged. All three read `offline`
/// with the silent phone's fix before (fresh-user finding, session 9).
#[test]
fn a_direct_address_that_refuses_or_drops_the_connect_says_so() {
    let dir = TempDir::new("direct-refused");
    let flags = base_flags(dir.path());
    // Nothing listens: refused.
    let refused = format!("127.0.0.1:{}", common::adb_server::free_port());
    // Accepts, never answers CNXN: the sim's `offline`.
    let silent = SimPhone::start_with_control("SIMSILENT0001", &[]);
    assert_eq!(
        silent.control_post("/v1/transport", json!({"state": "offline"})),
        200
    );
    // Drops the connect: a listen backlog of 0, filled by one connection nobody accepts (the
    // kernel then drops further SYNs, as a firewall or an absent host does).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap();
    let full = rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        socket.listen(0).unwrap()
    });
    let dropping = full.local_addr().unwrap().to_string();
    let _filler = std::net::TcpStream::connect(&dropping).unwrap();

    let mut args: Vec<&str> = vec!["check"];
    args.extend(flags.iter().map(String::as_str));
    args.extend(["--adb-server", ""]);
    let devices = [
        format!("tcp:{refused}"),
        format!("tcp:{}", silent.addr),
        format!("tcp:{dropping}"),
    ];
    for d in &devices {
        args.extend(["--device", d.as_str()]);
    }
    let (code, out, err) = run(&args);
    assert_eq!(code, Some(1), "{out}{err}");
    let problem = |addr: &str| {
        let mut lines = out
            .lines()
            .skip_while(|l| !(l.starts_with("PROBLEM  phone") && l.contains(addr)));
        let line = lines.next().unwrap_or_else(|| panic!("{addr}: {out}"));
        let fix = lines.next().unwrap_or("").trim().to_string();
        (line.to_string(), fix)
    };
    let (line, fix) = problem(&refused);
    assert!(
        line.ends_with(&format!(
            ": offline (connection refused: nothing listens on {refused})"
        )),
        "{out}"
    );
    // Never identified: named by its transport, once.
    assert!(
        line.starts_with(&format!("PROBLEM  phone tcp:{refused}: offline")),
        "{out}"
    );
    assert!(fix.starts_with("fix: "), "{out}");
    for says in ["adb tcpip", "--device", "port"] {
        assert!(fix.contains(says), "{says}: {fix}");
    }
    let (line, silent_fix) = problem(&silent.addr);
    assert!(
        line.ends_with(": offline (accepts connections, but the adb handshake did not complete)"),
        "{out}"
    );
    assert!(silent_fix.contains("silent"), "{out}");
    let (line, dropped_fix) = problem(&dropping);
    assert!(
        line.contains(&format!(": offline (no answer: {dropping} did not answer")),
        "{out}"
    );
    assert!(dropped_fix.contains("IP address"), "{out}");
    assert!(
        fix != silent_fix && fix != dropped_fix && silent_fix != dropped_fix,
        "{out}"
    );

    // `devices`: the rows say `offline` (adb's state), stderr says why, with the fix.
    args[0] = "devices";
    args.push("--json");
    let (code, json_out, err) = run(&args);
    assert_eq!(code, Some(0), "{err}");
    let rows: Vec<Value> = serde_json::from_str(&json_out).expect("devices --json");
    assert_eq!(rows.len(), 3, "{json_out}");
    assert!(rows.iter().all(|r| r["state"] == "offline"), "{json_out}");
    let warning = |addr: &str| {
        err.lines()
            .find(|l| l.contains("WARN") && l.contains(&format!("tcp:{addr}")))
            .unwrap_or_else(|| panic!("no warning for {addr}: {err}"))
            .to_string()
    };
    assert!(
        warning(&refused).contains("connection refused: nothing listens on"),
        "{err}"
    );
    assert!(warning(&refused).contains("adb tcpip"), "{err}");
    assert!(warning(&dropping).contains("no answer"), "{err}");
    drop(full);
}

/// A `--device` or `--adb-server` address whose host is no address — `999.1.1.1` reads as an
/// IPv4 address but has a number over 255 — is refused by `check`, `devices` and `serve`, on
/// one line naming the setting (flag and file key), the form it must take (HOST:PORT) and the
/// value, from the flag and from the config file alike, as the other settings are refused.
/// It was accepted, and the phone listed `offline` with the fix of a silent phone (fresh-user
/// finding, session 9). Host names, IPv4 and `[IPv6]` addresses stay accepted.
#[test]
fn an_address_whose_host_is_no_address_is_refused_naming_the_setting() {
    let dir = TempDir::new("bad-host");
    let file = dir.path().join("devices.toml");
    std::fs::write(
        &file,
        "adb_server = \"\"\ndevices = [\"tcp:999.1.1.1:5555\"]\n",
    )
    .unwrap();
    let file = file.display().to_string();
    let flags = base_flags(dir.path());
    let device = "--device (devices) must be tcp:HOST:PORT";
    let server = "--adb-server (adb_server) must be HOST:PORT or NAME=HOST:PORT";
    let twice = "--device (devices) tcp:";
    let cases: [(&[&str], &str, &str); 8] = [
        (
            &["--adb-server", "", "--device", "tcp:999.1.1.1:5555"],
            device,
            "999.1.1.1 is not an IPv4 address",
        ),
        (
            &["--config", &file],
            device,
            "999.1.1.1 is not an IPv4 address",
        ),
        (
            &["--adb-server", "box=999.1.1.1:5037"],
            server,
            "999.1.1.1 is not an IPv4 address",
        ),
        (
            &["--adb-server", "", "--device", "tcp:[::1:5555"],
            device,
            "[::1 is not",
        ),
        (
            &["--adb-server", "", "--device", "tcp:phone one:5555"],
            device,
            "phone one is not a host name",
        ),
        (
            &["--adb-server", "", "--device", "tcp:127.0.0.1:0"],
            device,
            "port 0",
        ),
        // One phone named twice would be listed twice and dialled by two transports.
        (
            &[
                "--adb-server",
                "",
                "--device",
                "tcp:127.0.0.1:5555",
                "--device",
                "tcp:127.0.0.1:5555",
            ],
            twice,
            "tcp:127.0.0.1:5555 is listed twice",
        ),
        (
            &[
                "--adb-server",
                "",
                "--device",
                "tcp:localhost:5555",
                "--device",
                "tcp:LOCALHOST:5555",
            ],
            twice,
            "is listed twice",
        ),
    ];
    for (settings, setting, why) in cases {
        for command in ["check", "devices", "serve"] {
            let mut args = vec![command];
            args.extend(flags.iter().map(String::as_str));
            args.extend(settings);
            let (code, out, err) = run(&args);
            let text = format!("{out}{err}");
            assert_eq!(code, Some(1), "{command} {settings:?}: {text}");
            let line = text
                .lines()
                .find(|l| l.contains(setting))
                .unwrap_or_else(|| panic!("{command} {settings:?}: no refusal: {text}"));
            assert!(line.contains(why), "{command} {settings:?}: {line}");
            if command == "check" {
                assert!(line.starts_with("PROBLEM  config:"), "{text}");
                assert!(!text.contains("PROBLEM  phone"), "{text}");
            }
        }
    }
    // `check` needs no API key: without one it names the bad address besides the missing key.
    let data = dir.path().display().to_string();
    let (code, out, _) = run(&[
        "check",
        "--data-dir",
        &data,
        "--adb-server",
        "",
        "--device",
        "tcp:999.1.1.1:5555",
    ]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.starts_with("PROBLEM  config: --api-key-file is required"),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with(&format!("PROBLEM  config: {device}"))
                && l.contains("999.1.1.1 is not an IPv4 address")),
        "{out}"
    );
    // Good hosts of every kind still pass (none of them answers: `offline`).
    for good in ["tcp:127.0.0.1:1", "tcp:[::1]:1", "tcp:localhost:1"] {
        let mut args = vec!["check"];
        args.extend(flags.iter().map(String::as_str));
        args.extend(["--adb-server", "", "--device", good]);
        let (_, out, err) = run(&args);
        assert!(
            out.starts_with("ok       config valid"),
            "{good}: {out}{err}"
        );
    }
}

/// `hash-claim-code` prints one whole line (`sha256:` + 64 hex + newline), with or without a
/// newline after the code on stdin.
#[test]
fn hash_claim_code_prints_one_line() {
    for input in ["claim-CODE-123456\n", "claim-CODE-123456"] {
        let mut child = Command::new(bin())
            .arg("hash-claim-code")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{input:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let hex = text
            .strip_prefix("sha256:")
            .and_then(|t| t.strip_suffix('\n'))
            .unwrap_or_else(|| panic!("{text:?}"));
        assert!(
            hex.len() == 64 && hex.chars().all(|c| c.is_ascii_hexdigit()),
            "{text:?}"
        );
    }
}

/// A known phone going offline and coming back is one log line each (JSON lines here, parsed):
/// masked serial, the states before and after, and never the full serial.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn phone_state_changes_are_logged() {
    let sim = SimPhone::start("SIMSTATELOG01");
    let dir = TempDir::new("statelog");
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![sim.addr.clone()]),
        &["--claim-policy", "open", "--log-format", "json"],
    );
    let (_x, _ch) = claimed_channel(&conn.addr, "SIMSTATELOG01").await;
    let (serial, addr) = sim.unplug();
    wait_log(&conn, "phone state changed", 1);
    let _back = SimPhone::start_at(&serial, &addr);
    wait_log(&conn, "phone state changed", 2);
    let logs = conn.logs();
    for v in state_changes(&logs) {
        assert_eq!(v["fields"]["serial_hint"], "SIM…OG01", "{v}");
        assert_eq!(v["fields"]["server"], "direct", "{v}");
    }
    assert_eq!(state_moves(&logs), offline_and_back(), "{logs}");
    assert!(!logs.contains("SIMSTATELOG01"), "the full serial is logged");
}

/// `check` with [`base_flags`] for `dir`, then `extra`: its exit code, stdout and stderr.
fn check_with_base_flags(dir: &std::path::Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let base = base_flags(dir);
    let mut args = vec!["check"];
    args.extend(base.iter().map(String::as_str));
    args.extend(extra);
    run(&args)
}

/// The `phone state changed` lines of a JSON log.
fn state_changes(logs: &str) -> Vec<Value> {
    logs.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["fields"]["message"] == "phone state changed")
        .collect()
}

/// The (`from`, `to`) of each `phone state changed` line of a JSON log, in order.
fn state_moves(logs: &str) -> Vec<(String, String)> {
    state_changes(logs)
        .iter()
        .map(|v| {
            (
                v["fields"]["from"].as_str().unwrap_or("").to_string(),
                v["fields"]["to"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The [`state_moves`] of a phone that went away and came back: `device` → `offline`, then
/// `offline` → `device`.
fn offline_and_back() -> [(String, String); 2] {
    [
        ("device".to_string(), "offline".to_string()),
        ("offline".to_string(), "device".to_string()),
    ]
}

/// Sends SIGHUP to the connector (a reload of its configuration) and waits (≤ 10 s) until its
/// log holds `needle` `n` times ([`wait_log`]).
fn hang_up_and_wait_log(conn: &ConnectorProc, needle: &str, n: usize) {
    let status = Command::new("kill")
        .args(["-HUP", &conn.pid().to_string()])
        .status()
        .expect("run kill");
    assert!(status.success(), "kill -HUP failed");
    wait_log(conn, needle, n);
}

/// Waits (≤ 10 s) until the connector's log holds `needle` `n` times.
fn wait_log(conn: &ConnectorProc, needle: &str, n: usize) {
    for _ in 0..100 {
        if conn.logs().matches(needle).count() >= n {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("log never said {needle:?} {n} times:\n{}", conn.logs());
}

/// SIGHUP rotates the API key (old refused, new accepted, the open socket and its bound phone
/// untouched), replaces the claim codes and the device profiles; a bad new configuration is
/// refused as a whole, logged, and the running one stays. No key or code reaches the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_rotates_the_key_and_reloads_codes_and_profiles() {
    let bound = SimPhone::start("SIMHUP000001");
    let second = SimPhone::start("SIMHUP000002");
    let dir = TempDir::new("sighup");
    let profiles = dir.path().join("profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    let default_profile = include_str!("../device-profiles/default.toml");
    std::fs::write(profiles.join("default.toml"), default_profile).unwrap();
    let codes = dir.path().join("codes.toml");
    let (code_1, code_2) = ("first-CODE-112233", "second-CODE-445566");
    let write_codes = |text: String| std::fs::write(&codes, text).unwrap();
    write_codes(format!("[claim_codes]\n{} = \"{code_1}\"\n", bound.serial));
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![bound.addr.clone(), second.addr.clone()]),
        &[
            "--claim-policy",
            "code",
            "--config",
            codes.to_str().unwrap(),
            "--device-profiles",
            profiles.to_str().unwrap(),
        ],
    );
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let claim = |serial: &str, code: &str| json!({"flow_id": "adb_device_claim", "input": {"serial": serial, "claim_code": code}});
    let mut ack = Value::Null;
    for _ in 0..75 {
        ack = x
            .request("auth.start", Some(&ch), claim(&bound.serial, code_1))
            .await;
        if ack["payload"]["status"] == "authenticated" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let url = "https://example.com/hup";
    let opened = x.tool(&ch, "android_open_url", json!({"url": url})).await;
    assert!(opened.get("error").is_none(), "{opened}");
    let (ch2, _) = x.open(None).await;
    let e = x
        .request("auth.start", Some(&ch2), claim(&second.serial, code_2))
        .await;
    assert_eq!(
        code(&e),
        "auth_failed",
        "no code for the second phone yet: {e}"
    );

    // Rotate: new key file, a code for the second phone, a profile without https.
    let new_key = "rotated-key-0123456789abcdef";
    std::fs::write(dir.path().join("api_key.txt"), format!("{new_key}\n")).unwrap();
    write_codes(format!(
        "[claim_codes]\n{} = \"{code_1}\"\n{} = \"{code_2}\"\n",
        bound.serial, second.serial
    ));
    std::fs::write(
        profiles.join("default.toml"),
        default_profile.replace("schemes = [\"http\", \"https\"]", "schemes = [\"http\"]"),
    )
    .unwrap();
    hang_up_and_wait_log(&conn, "configuration reloaded", 1);
    let health = |key: &str| http_get(&format!("{}/health", conn.base), Some(key)).0;
    assert_eq!(health(API_KEY), 401, "the old key is refused");
    assert_eq!(health(new_key), 200, "the new key is accepted");
    // The socket opened with the old key and its bound phone carry on.
    let shot = x.tool(&ch, "android_screenshot", json!({})).await;
    assert!(shot.get("error").is_none(), "{shot}");
    let denied = x.tool(&ch, "android_open_url", json!({"url": url})).await;
    assert_eq!(
        code(&denied),
        "policy_denied",
        "new profile in force: {denied}"
    );
    let ok = x
        .request("auth.start", Some(&ch2), claim(&second.serial, code_2))
        .await;
    assert_eq!(
        ok["payload"]["status"], "authenticated",
        "new code in force: {ok}"
    );

    // A bad configuration (key too short) is refused whole: the running one stays.
    std::fs::write(dir.path().join("api_key.txt"), "short\n").unwrap();
    hang_up_and_wait_log(&conn, "keeping the running one", 1);
    assert_eq!(health(new_key), 200, "the running key stays");
    assert_eq!(health("short"), 401);
    // A file that is not TOML (broken on a claim code's line): refused on one log line that
    // names the place, without the source excerpt (it would show the plain code).
    write_codes(format!(
        "[claim_codes]\n{} = \"{code_1}\"\n{} = \"{code_2}\n",
        bound.serial, second.serial
    ));
    hang_up_and_wait_log(&conn, "keeping the running one", 2);
    assert_eq!(health(new_key), 200, "the running key stays");
    let logs = conn.logs();
    let refusal = logs
        .lines()
        .find(|l| l.contains("invalid config file"))
        .unwrap_or_else(|| panic!("no TOML refusal: {logs}"));
    assert!(refusal.contains("keeping the running one"), "{refusal}");
    assert!(refusal.contains("line 3"), "names the line: {refusal}");
    for line in logs.lines() {
        let excerpt = line
            .split_once('|')
            .is_some_and(|(before, _)| before.trim().chars().all(|c| c.is_ascii_digit()));
        assert!(!excerpt, "a multi-line error reached the log: {line}");
    }
    assert!(
        logs.contains("must be at least 16 characters"),
        "the log says why: {logs}"
    );
    // A top-level key appended after `[claim_codes]` is refused on reload too, by name.
    write_codes(format!(
        "[claim_codes]\n{} = \"{code_1}\"\nlisten = \"127.0.0.1:18999\"\n",
        bound.serial
    ));
    hang_up_and_wait_log(&conn, "keeping the running one", 3);
    assert_eq!(health(new_key), 200, "the running key stays");
    let logs = conn.logs();
    let stray = logs
        .lines()
        .find(|l| l.contains("`listen` is under [claim_codes]"))
        .unwrap_or_else(|| panic!("no refusal of the stray key: {logs}"));
    assert!(stray.contains("keeping the running one"), "{stray}");
    assert!(!logs.contains("127.0.0.1:18999"), "{logs}");
    for secret in [API_KEY, new_key, code_1, code_2] {
        assert!(!logs.contains(secret), "log leaks {secret}");
    }
}

/// SIGHUP applies `claim_policy` (raising `open` to `code` holds for the next claim: a claim
/// without the code is refused) and `qr_ttl_secs` (a QR code issued after it carries the new
/// validity); a changed setting SIGHUP does not apply (`lease_grace`) is named on one WARN
/// line; the reload line names the policy as the config does (`claim_policy=code`). Before: the
/// policy and the QR validity stayed as at start, with no word in the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_applies_the_claim_policy_and_qr_ttl_and_names_restart_only_changes() {
    let first = SimPhone::start("SIMHUPPOL001");
    let second = SimPhone::start("SIMHUPPOL002");
    let dir = TempDir::new("sighup-policy");
    let file = dir.path().join("connector.toml");
    std::fs::write(
        &file,
        "claim_policy = \"open\"\nqr_ttl_secs = 60\nlease_grace = \"30s\"\n",
    )
    .unwrap();
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![first.addr.clone(), second.addr.clone()]),
        &["--config", file.to_str().unwrap()],
    );
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let now_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    // `expires_at` of a fresh `adb_qr_pair` session (the connector read its clock between the
    // test's reads just before the request and just after the answer).
    async fn qr_expiry(x: &mut common::xagent::XAgent, ch: &str) -> u64 {
        let ack = x
            .request("auth.start", Some(ch), json!({"flow_id": "adb_qr_pair"}))
            .await;
        assert_eq!(ack["payload"]["status"], "pending", "{ack}");
        ack["payload"]["expires_at"].as_u64().unwrap()
    }
    let (qr_ch, _) = x.open(None).await;
    let expires = qr_expiry(&mut x, &qr_ch).await;
    let after = now_ms();
    assert!(
        expires <= after + 60_000,
        "60 s at start: {expires} vs {after}"
    );
    // Open: a claim needs no code.
    let (ch, _) = x.open(None).await;
    let ack = claim_when_visible(&mut x, &ch, &first.serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");

    let code_2 = "second-CODE-778899";
    std::fs::write(
        &file,
        format!(
            "claim_policy = \"code\"\nqr_ttl_secs = 120\nlease_grace = \"45s\"\n\
             [claim_codes]\n{} = \"{code_2}\"\n",
            second.serial
        ),
    )
    .unwrap();
    hang_up_and_wait_log(&conn, "configuration reloaded", 1);
    let (ch2, _) = x.open(None).await;
    let claim = |code: Option<&str>| {
        let mut input = json!({"serial": second.serial});
        if let Some(code) = code {
            input["claim_code"] = json!(code);
        }
        json!({"flow_id": "adb_device_claim", "input": input})
    };
    let e = x.request("auth.start", Some(&ch2), claim(None)).await;
    assert_eq!(code(&e), "auth_failed", "code policy in force: {e}");
    let ok = x
        .request("auth.start", Some(&ch2), claim(Some(code_2)))
        .await;
    assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
    let (qr_ch2, _) = x.open(None).await;
    let before = now_ms();
    let expires = qr_expiry(&mut x, &qr_ch2).await;
    assert!(
        expires >= before + 120_000,
        "120 s after SIGHUP: {expires} vs {before}"
    );

    let logs = conn.logs();
    let warned: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("apply only on a restart"))
        .collect();
    assert_eq!(warned.len(), 1, "{logs}");
    assert!(warned[0].contains("WARN"), "{}", warned[0]);
    assert!(warned[0].contains("lease_grace"), "{}", warned[0]);
    for applied in ["claim_policy", "qr_ttl_secs", "listen"] {
        assert!(
            !warned[0].contains(applied),
            "{applied} is not restart-only here: {}",
            warned[0]
        );
    }
    assert!(!logs.contains(code_2), "log leaks the claim code");
    // The reload line spells the policy as the config file and `--claim-policy` do (it read
    // `claim_policy=Code`, Rust's Debug spelling).
    let reloaded = logs
        .lines()
        .find(|l| l.contains("configuration reloaded"))
        .unwrap_or_else(|| panic!("no reload line: {logs}"));
    assert!(reloaded.contains("claim_policy=code "), "{reloaded}");
}

/// `demo --listen` on a busy address fails before it prints anything: no base URL, no phone
/// lines; the error names the address and `--listen`. Before: the URL and the simulated
/// phones were printed, then "Address already in use".
#[test]
fn demo_on_a_busy_address_prints_nothing_but_the_error() {
    let dir = TempDir::new("demo-busy");
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let data = dir.path().join("data");
    let (code, out, err) = run(&[
        "demo",
        "--listen",
        &addr,
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert_eq!(out, "", "nothing on stdout: {out}");
    assert!(
        err.contains(&format!("cannot listen on {addr} (--listen)")),
        "{err}"
    );
    assert!(err.contains("in use"), "{err}");
    drop(busy);
}

/// A test CA and a leaf certificate for `localhost` and 127.0.0.1 signed by it, written as
/// `cert.pem` / `key.pem` under `dir`; returns the CA certificate (DER) for the client.
fn issue_cert(dir: &std::path::Path, ca_name: &str) -> rustls::pki_types::CertificateDer<'static> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params
        .distinguished_name
        .push(DnType::CommonName, ca_name);
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let leaf_key = KeyPair::generate().unwrap();
    let mut leaf = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    leaf.subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    let leaf_cert = leaf.signed_by(&leaf_key, &issuer).unwrap();
    std::fs::write(dir.join("cert.pem"), leaf_cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), leaf_key.serialize_pem()).unwrap();
    ca_cert.der().clone()
}

/// A TLS client trusting only `ca` (rustls, ring), connected to `addr`.
async fn tls_connect(
    addr: &str,
    ca: &rustls::pki_types::CertificateDer<'static>,
) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone()).unwrap();
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(addr).await?;
    tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(
            rustls::pki_types::ServerName::try_from("localhost").unwrap(),
            tcp,
        )
        .await
}

/// `GET path` over a TLS stream (HTTP/1.1, `Connection: close`); (status, body).
async fn https_get(
    addr: &str,
    ca: &rustls::pki_types::CertificateDer<'static>,
    path: &str,
) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut tls = tls_connect(addr, ca).await.expect("TLS handshake");
    tls.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let mut raw = Vec::new();
    let _ = tls.read_to_end(&mut raw).await;
    let text = String::from_utf8_lossy(&raw).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// TLS on the listener: the card over https, the data plane over wss (claim, tool call),
/// plain HTTP refused on that port; SIGHUP swaps the certificate for new connections while
/// the open wss socket carries on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_listener_serves_https_and_wss_and_reloads_its_certificate() {
    use futures_util::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;

    let sim = SimPhone::start("SIMTLS000001");
    let dir = TempDir::new("tls");
    let tls_dir = dir.path().join("tls");
    std::fs::create_dir_all(&tls_dir).unwrap();
    let ca_1 = issue_cert(&tls_dir, "test CA one");
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let mut cmd = Command::new(bin());
    cmd.arg("serve")
        .args([
            "--listen",
            "127.0.0.1:0",
            "--adb-server",
            "",
            "--claim-policy",
            "open",
        ])
        .args(["--device", &format!("tcp:{}", sim.addr)])
        .args(base_flags(&dir.path().join("data")))
        .arg("--tls-cert")
        .arg(tls_dir.join("cert.pem"))
        .arg("--tls-key")
        .arg(tls_dir.join("key.pem"))
        .stderr(std::process::Stdio::from(
            std::fs::File::create(dir.path().join("log")).unwrap(),
        ));
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
        cmd.env_remove(k);
    }
    let (child, addr) = common::procs::spawn_and_wait(cmd, "listening on https://");
    let child = KillOnDrop(child);

    let (status, body) = https_get(&addr, &ca_1, "/connector-card.json").await;
    assert_eq!(status, 200, "{body}");
    let card: Value = serde_json::from_str(&body).expect("card JSON");
    assert_eq!(card["connector_card_id"], "device.adb", "{card}");

    // Plain HTTP to the TLS port gets no HTTP answer.
    let mut plain = std::net::TcpStream::connect(&addr).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    plain
        .write_all(b"GET /connector-card.json HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut answer = Vec::new();
    let _ = plain.read_to_end(&mut answer);
    assert!(
        !answer.starts_with(b"HTTP/"),
        "plain HTTP was served on the TLS port"
    );

    // The data plane over wss.
    let tls = tls_connect(&addr, &ca_1).await.expect("TLS handshake");
    let req = common::xagent::ws_request(&format!(
        "wss://localhost:{}/ws",
        addr.rsplit(':').next().unwrap()
    ));
    let (mut ws, _) = tokio_tungstenite::client_async(req, tls)
        .await
        .expect("wss upgrade");
    let mut n = 0;
    let mut ask = |kind: &str, channel: Option<&str>, payload: Value| {
        n += 1;
        common::xagent::packet(kind, channel, payload, n)
    };
    async fn reply<S>(ws: &mut tokio_tungstenite::WebSocketStream<S>, p: Value) -> Value
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    {
        ws.send(Message::Text(p.to_string().into())).await.unwrap();
        loop {
            let m = tokio::time::timeout(Duration::from_secs(20), ws.next())
                .await
                .expect("reply in time")
                .expect("socket open")
                .expect("frame");
            if let Message::Text(t) = m {
                let v: Value = serde_json::from_str(&t).unwrap();
                if v["request_id"] == p["request_id"] {
                    return v;
                }
            }
        }
    }
    let hello = reply(&mut ws, ask("connector.hello", None, json!({"connector_card_id": "device.adb", "connector_id": "", "protocol_version": "3.0", "supported_profiles": ["xagent.device.v1"]}))).await;
    assert_eq!(hello["type"], "connector.hello.ack", "{hello}");
    let open = reply(&mut ws, ask("channel.open", None, json!({}))).await;
    let ch = open["payload"]["connector_channel_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut claimed = Value::Null;
    for _ in 0..75 {
        claimed = reply(
            &mut ws,
            ask(
                "auth.start",
                Some(&ch),
                json!({"flow_id": "adb_device_claim", "input": {"serial": sim.serial}}),
            ),
        )
        .await;
        if claimed["payload"]["status"] == "authenticated" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(claimed["payload"]["status"], "authenticated", "{claimed}");
    let tap = |n: u64| {
        common::xagent::packet(
            "tool.invoke",
            Some(&ch),
            json!({"tool_id": "android_tap", "arguments": {"x": 10, "y": 20, "connector_channel_id": ch}, "context": {"session_id": "s", "tool_call_id": format!("tls_{n}")}}),
            100 + n,
        )
    };
    let ack = reply(&mut ws, tap(1)).await;
    assert_eq!(ack["type"], "tool.invoke.ack", "{ack}");
    assert!(ack.get("error").is_none(), "{ack}");

    // New certificate from another CA; SIGHUP.
    let ca_2 = issue_cert(&tls_dir, "test CA two");
    let status = Command::new("kill")
        .args(["-HUP", &child.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut reloaded = false;
    for _ in 0..100 {
        let log = std::fs::read_to_string(dir.path().join("log")).unwrap_or_default();
        if log.contains("configuration reloaded") {
            reloaded = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(reloaded, "no reload logged");
    assert!(
        tls_connect(&addr, &ca_1).await.is_err(),
        "new connections must get the new certificate"
    );
    let (status, _) = https_get(&addr, &ca_2, "/connector-card.json").await;
    assert_eq!(status, 200);
    let ack = reply(&mut ws, tap(2)).await;
    assert!(
        ack.get("error").is_none(),
        "the open wss socket carries on: {ack}"
    );
}

/// A child process killed when the test ends, passing or not.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The descriptor's `target` of `ch`.
async fn target_of(x: &mut common::xagent::XAgent, ch: &str) -> (String, Value) {
    let d = x
        .request("connection.descriptor.get", Some(ch), json!({}))
        .await;
    let desc = &d["payload"]["connection_descriptor"];
    (
        desc["connection"]["status"]
            .as_str()
            .unwrap_or("")
            .to_string(),
        desc["target"]["location"].clone(),
    )
}

/// Waits (≤ 20 s) until `ch`'s descriptor says `status` (and `location`, when given).
async fn wait_target(
    x: &mut common::xagent::XAgent,
    ch: &str,
    status: &str,
    location: Option<&str>,
) {
    let mut seen = (String::new(), Value::Null);
    for _ in 0..100 {
        seen = target_of(x, ch).await;
        if seen.0 == status && location.is_none_or(|l| seen.1 == l) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("{ch} never became {status} at {location:?}: {seen:?}");
}

/// Two adb servers (Google adb 34, Debian adb 29), one connector: every phone listed and
/// usable, descriptors name the box; one phone on both servers is served by the first listed
/// with the other as fallback; a killed server takes only its own phones offline, and they
/// come back with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_adb_servers_one_connector() {
    let box_a = AdbServer::start(AdbFlavor::Debian29);
    let box_b = AdbServer::start(AdbFlavor::Google34);
    let b_port = box_b.port;
    let both = SimPhone::start("SIMMULTI0001");
    let a_only = SimPhone::start("SIMMULTI0002");
    let b_1 = SimPhone::start("SIMMULTI0003");
    let b_2 = SimPhone::start("SIMMULTI0004");
    box_a.connect(&both.addr);
    box_a.connect(&a_only.addr);
    box_b.connect(&both.addr);
    box_b.connect(&b_1.addr);
    box_b.connect(&b_2.addr);
    let dir = TempDir::new("multi");
    let a_flag = format!("box-a={}", box_a.addr());
    let b_flag = format!("box-b={}", box_b.addr());
    // box-b is listed first, so it serves the phone both boxes see.
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::AdbServer(a_flag.clone()),
        &["--claim-policy", "open", "--adb-server", &b_flag],
    );
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let mut channels = Vec::new();
    for (sim, place) in [
        (&both, "box-b"),
        (&a_only, "box-a"),
        (&b_1, "box-b"),
        (&b_2, "box-b"),
    ] {
        let (ch, _) = x.open(None).await;
        let ack = claim_when_visible(&mut x, &ch, &sim.serial).await;
        assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
        wait_target(&mut x, &ch, "connected", Some(place)).await;
        let tap = x.tool(&ch, "android_tap", json!({"x": 5, "y": 5})).await;
        assert!(tap.get("error").is_none(), "{tap}");
        channels.push(ch);
    }
    wait_log(&conn, "reachable through two routes", 1);

    // `devices` with the same flags lists all four (five routes: one phone on both boxes).
    let mut args = vec![
        "devices",
        "--json",
        "--adb-server",
        &b_flag,
        "--adb-server",
        &a_flag,
    ];
    let flags = base_flags(dir.path());
    args.extend(flags.iter().map(String::as_str));
    let (status, out, err) = run(&args);
    assert_eq!(status, Some(0), "{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    for (serial, place) in [
        ("SIMMULTI0001", "box-a"),
        ("SIMMULTI0001", "box-b"),
        ("SIMMULTI0002", "box-a"),
        ("SIMMULTI0003", "box-b"),
        ("SIMMULTI0004", "box-b"),
    ] {
        assert!(
            rows.iter().any(|r| r["serial"] == serial
                && r["adb_server"] == place
                && r["state"] == "device"),
            "{serial} on {place}: {out}"
        );
    }

    // box-b goes away: its own phones go offline, the shared one falls back to box-a.
    drop(box_b);
    wait_target(&mut x, &channels[2], "offline", None).await;
    wait_target(&mut x, &channels[3], "offline", None).await;
    wait_target(&mut x, &channels[0], "connected", Some("box-a")).await;
    for ch in &channels[..2] {
        let tap = x.tool(ch, "android_tap", json!({"x": 6, "y": 6})).await;
        assert!(tap.get("error").is_none(), "{tap}");
    }
    let tap = x
        .tool(&channels[2], "android_tap", json!({"x": 6, "y": 6}))
        .await;
    assert_eq!(code(&tap), "adb_server_unavailable", "{tap}");

    // box-b back on its port: its phones return.
    let box_b = AdbServer::start_on(AdbFlavor::Google34, b_port);
    box_b.connect(&b_1.addr);
    box_b.connect(&b_2.addr);
    box_b.connect(&both.addr);
    for ch in &channels[2..] {
        wait_target(&mut x, ch, "connected", Some("box-b")).await;
        let tap = x.tool(ch, "android_tap", json!({"x": 7, "y": 7})).await;
        assert!(tap.get("error").is_none(), "{tap}");
    }
    wait_target(&mut x, &channels[0], "connected", Some("box-b")).await;
}

/// One adb server given under two names (`localhost:P` and `127.0.0.1:P`: both resolve to the
/// socket address 127.0.0.1:P) is asked once, under the name listed first: `devices` lists its
/// phone once and warns naming both, `check` has one server line, one phone line and a note
/// naming both, and `serve` follows it once and logs the same warning. Every phone was listed
/// twice before (fresh-user finding, session 9).
#[test]
fn one_adb_server_under_two_names_is_asked_once() {
    let adb = AdbServer::start(AdbFlavor::Google34);
    let sim = SimPhone::start("SIMSAMESRV001");
    adb.connect(&sim.addr);
    let by_ip = adb.addr();
    let by_name = format!("localhost:{}", adb.port);
    let dir = TempDir::new("same-server");
    let flags = base_flags(dir.path());
    let with = |cmd: &str, extra: &[&str]| {
        let mut a: Vec<&str> = vec![cmd];
        a.extend(flags.iter().map(String::as_str));
        a.extend(["--adb-server", &by_name, "--adb-server", &by_ip]);
        a.extend(extra);
        run(&a)
    };
    let names_both = |line: &str| line.contains(&by_name) && line.contains(&by_ip);

    let (code, out, err) = with("devices", &["--json"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).expect("devices --json");
    assert_eq!(rows.len(), 1, "{out}");
    assert_eq!(rows[0]["serial"], "SIMSAMESRV001");
    assert_eq!(rows[0]["adb_server"], json!(by_name), "{out}");
    let warning = err
        .lines()
        .find(|l| l.contains("WARN") && l.contains("same adb server"))
        .unwrap_or_else(|| panic!("no warning: {err}"));
    assert!(names_both(warning), "{warning}");

    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::AdbServer(by_ip.clone()),
        &["--claim-policy", "open", "--adb-server", &by_name],
    );
    wait_log(&conn, "same adb server", 1);
    let logs = conn.logs();
    let line = logs
        .lines()
        .find(|l| l.contains("same adb server"))
        .unwrap();
    assert!(names_both(line), "{line}");

    // `check` (the connector running, claims open): all fine, the server asked once.
    let (code, out, err) = with("check", &["--claim-policy", "open"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(out.matches("ok       adb server").count(), 1, "{out}");
    assert_eq!(out.matches("phone SIMSAMESRV001").count(), 1, "{out}");
    let note = out
        .lines()
        .find(|l| l.starts_with("note") && l.contains("same adb server"))
        .unwrap_or_else(|| panic!("no note: {out}"));
    assert!(names_both(note), "{note}");
}

/// One phone that one adb server reaches through two transports (`adb connect` to two
/// addresses of it): the "two routes" warning names both transports, which one is used and
/// which is the fallback — not the server's label twice — and never the whole serial.
#[test]
fn two_routes_through_one_adb_server_are_named_apart() {
    let adb = AdbServer::start(AdbFlavor::Debian29);
    let sim = SimPhone::start("SIMTWOROUTE01");
    let port = sim.addr.rsplit_once(':').unwrap().1.to_string();
    let by_ip = format!("127.0.0.1:{port}");
    let by_name = format!("localhost:{port}");
    adb.connect(&by_ip);
    adb.connect(&by_name);
    let dir = TempDir::new("two-routes");
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::AdbServer(format!("box={}", adb.addr())),
        &["--claim-policy", "open"],
    );
    wait_log(&conn, "reachable through two routes", 1);
    let logs = conn.logs();
    let line = logs
        .lines()
        .find(|l| l.contains("reachable through two routes"))
        .unwrap();
    // Same state, same server: the lower transport name is used (the order is stable).
    assert!(
        line.contains(&format!(
            "used=Wi-Fi {by_ip} via adb server box fallback=Wi-Fi {by_name} via adb server box"
        )),
        "{line}"
    );
    assert!(!line.contains("SIMTWOROUTE01"), "{line}");
}

/// One sample of the text exposition format: name, labels, value.
type Sample = (String, std::collections::BTreeMap<String, String>, f64);

/// Parses the Prometheus / OpenMetrics text format (samples only; `#` lines skipped): each
/// line `name{k="v",…} value` or `name value`. Panics on a malformed line.
fn parse_exposition(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (head, value) = line.rsplit_once(' ').expect("sample has a value");
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            v => v.parse().unwrap_or_else(|_| panic!("bad value in {line}")),
        };
        let (name, labels) = match head.split_once('{') {
            None => (head.to_string(), Default::default()),
            Some((name, rest)) => {
                let body = rest.strip_suffix('}').expect("closing brace");
                let mut labels = std::collections::BTreeMap::new();
                let mut chars = body.chars().peekable();
                while chars.peek().is_some() {
                    let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
                    assert_eq!(chars.next(), Some('"'), "quoted label in {line}");
                    let mut val = String::new();
                    while let Some(c) = chars.next() {
                        match c {
                            '\\' => val.push(chars.next().expect("escape")),
                            '"' => break,
                            c => val.push(c),
                        }
                    }
                    if chars.peek() == Some(&',') {
                        chars.next();
                    }
                    labels.insert(key.trim().to_string(), val);
                }
                (name.to_string(), labels)
            }
        };
        out.push((name, labels, value));
    }
    out
}

/// The value of `name` with exactly these labels (among possibly more).
fn sample(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    samples
        .iter()
        .find(|(n, l, _)| {
            n == name
                && labels
                    .iter()
                    .all(|(k, v)| l.get(*k).map(String::as_str) == Some(v))
        })
        .map(|s| s.2)
}

/// `GET /metrics`: the key is required; the text format carries phones by state, tool calls
/// by tool and outcome, latency histograms and the file cache size; `?format=json` keeps the
/// JSON summary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_in_the_prometheus_text_format() {
    let sim = SimPhone::start("SIMMETRIC001");
    let dir = TempDir::new("metrics");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    for _ in 0..2 {
        let ok = x.tool(&ch, "android_tap", json!({"x": 1, "y": 2})).await;
        assert!(ok.get("error").is_none(), "{ok}");
    }
    let bad = x.tool(&ch, "android_tap", json!({"x": "left"})).await;
    assert_eq!(code(&bad), "invalid_arguments", "{bad}");
    let shot = x.tool(&ch, "android_screenshot", json!({})).await;
    assert!(shot.get("error").is_none(), "{shot}");

    let url = format!("{}/metrics", conn.base);
    assert_eq!(http_get(&url, None).0, 401);
    assert_eq!(http_get(&url, Some("not-the-key-000000000")).0, 401);
    let (st, ctype, body) = http_get(&url, Some(API_KEY));
    assert_eq!(st, 200);
    assert!(ctype.starts_with("application/openmetrics-text"), "{ctype}");
    let text = String::from_utf8(body).unwrap();
    assert_eq!(text.lines().last(), Some("# EOF"), "{text}");
    let s = parse_exposition(&text);
    assert_eq!(
        sample(&s, "xagent_adb_phones", &[("state", "device")]),
        Some(1.0),
        "{text}"
    );
    assert_eq!(
        sample(&s, "xagent_adb_phones", &[("state", "offline")]),
        Some(0.0),
        "{text}"
    );
    let calls = |tool: &str, outcome: &str| {
        sample(
            &s,
            "xagent_adb_tool_calls_total",
            &[("tool", tool), ("outcome", outcome)],
        )
    };
    assert_eq!(calls("android_tap", "ok"), Some(2.0), "{text}");
    assert_eq!(
        calls("android_tap", "invalid_arguments"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(calls("android_screenshot", "ok"), Some(1.0), "{text}");
    let tap_count = sample(
        &s,
        "xagent_adb_tool_call_seconds_count",
        &[("tool", "android_tap")],
    );
    assert_eq!(tap_count, Some(3.0), "{text}");
    // Buckets are cumulative and end with +Inf = count.
    let buckets: Vec<f64> = s
        .iter()
        .filter(|(n, l, _)| {
            n == "xagent_adb_tool_call_seconds_bucket"
                && l.get("tool").map(String::as_str) == Some("android_tap")
        })
        .map(|x| x.2)
        .collect();
    assert!(buckets.len() > 5, "{text}");
    assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{buckets:?}");
    assert_eq!(buckets.last(), Some(&3.0));
    assert!(
        sample(
            &s,
            "xagent_adb_tool_call_seconds_sum",
            &[("tool", "android_tap")]
        )
        .unwrap()
            > 0.0
    );
    assert!(sample(&s, "xagent_adb_dispatch_seconds_count", &[("kind", "tool")]).unwrap() >= 4.0);
    assert!(
        sample(
            &s,
            "xagent_adb_dispatch_seconds_count",
            &[("kind", "control")]
        )
        .unwrap()
            >= 1.0
    );
    assert!(
        sample(&s, "xagent_adb_file_cache_bytes", &[]).unwrap() > 0.0,
        "the screenshot is cached: {text}"
    );
    assert_eq!(sample(&s, "xagent_adb_channels", &[]), Some(1.0));
    assert!(
        !text.contains(API_KEY) && !text.contains(&sim.serial),
        "{text}"
    );

    let (st, ctype, body) = http_get(&format!("{url}?format=json"), Some(API_KEY));
    assert_eq!(st, 200);
    assert!(ctype.starts_with("application/json"), "{ctype}");
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert!(v["dispatch"]["tool"]["count"].as_u64().unwrap() >= 4, "{v}");
}

/// A plain listener on a non-loopback address logs a warning (the API key would cross the
/// network in clear); on loopback it does not. The wildcard address is bound for a moment and
/// nothing connects to it.
#[test]
fn plain_listener_off_loopback_warns() {
    for (listen, warns) in [("0.0.0.0:0", true), ("127.0.0.1:0", false)] {
        let dir = TempDir::new("warn");
        let log = dir.path().join("log");
        let mut cmd = Command::new(bin());
        cmd.args(["serve", "--listen", listen, "--adb-server", ""])
            .args(base_flags(dir.path()))
            .stderr(std::process::Stdio::from(
                std::fs::File::create(&log).unwrap(),
            ));
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
            cmd.env_remove(k);
        }
        let (child, _) = common::procs::spawn_and_wait(cmd, "listening on http://");
        let child = KillOnDrop(child);
        // The warning follows the "connector listening" event in the same function: wait for
        // the warning where it is due, else for that event and a margin.
        let mut text = String::new();
        for _ in 0..100 {
            text = std::fs::read_to_string(&log).unwrap_or_default();
            if text.contains("plain HTTP on a non-loopback address") {
                break;
            }
            if !warns && text.contains("connector listening") {
                std::thread::sleep(Duration::from_millis(300));
                text = std::fs::read_to_string(&log).unwrap_or_default();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(child);
        assert_eq!(
            text.contains("plain HTTP on a non-loopback address"),
            warns,
            "{listen}: {text}"
        );
    }
}

/// `devices | head` and friends: a report command whose reader went away ends quietly (killed
/// by SIGPIPE, as `ls` is), never with Rust's "failed printing to stdout" panic (exit 134).
#[test]
fn a_report_into_a_closed_pipe_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let mut child = Command::new(bin())
        .arg("print-default-config")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(out.status.code(), Some(134), "{stderr}");
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "{:?} {stderr}",
        out.status
    );
}

/// A `--device` phone (direct transport, `--require-auth`) that accepted the connector's key
/// earlier is `device` with its serial to the one-shot `devices` and `check` (which connect
/// once, with the key file loaded on demand), and a `serve` started later signs in at once:
/// no "refuses this connector's key" warning, since the phone refused nothing. Before the fix
/// the handshake answered `unauthorized` whenever the key was not loaded yet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_shot_commands_see_a_direct_phone_that_accepted_the_key() {
    let state = TempDir::new("direct-accepted-state");
    let state_dir = state.path().display().to_string();
    let sim = SimPhone::start_with_control(
        "SIMDIRACC0001",
        &["--require-auth", "--state-dir", &state_dir],
    );
    let dir = TempDir::new("direct-accepted");
    {
        // The connector offers its key; the user accepts the prompt.
        let _first = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
        common::scenario::wait_key_offered(&sim).await;
        assert_eq!(
            sim.control_post("/v1/auth", json!({"action": "accept"})),
            200
        );
    }
    let data = dir.path().display().to_string();
    let target = format!("tcp:{}", sim.addr);
    let rows = common::procs::devices_json_direct(&data, &target);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["state"], "device", "{rows:?}");
    assert_eq!(rows[0]["serial"], "SIMDIRACC0001", "{rows:?}");
    assert_eq!(rows[0]["transport"], target, "{rows:?}");

    // No connector runs (the one problem): the phone is `device` to the one-shot check.
    let idle = format!("127.0.0.1:{}", common::adb_server::free_port());
    let (code, out, err) = check_with_base_flags(
        dir.path(),
        &[
            "--adb-server",
            "",
            "--device",
            &target,
            "--claim-policy",
            "open",
            "--listen",
            &idle,
        ],
    );
    assert_eq!(code, Some(1), "{out}{err}");
    assert_eq!(out.matches("PROBLEM").count(), 1, "{out}");
    assert!(out.contains("PROBLEM  connector not running"), "{out}");
    assert!(out.contains("ok       phone SIMDIRACC0001"), "{out}");
    assert!(!out.contains("unauthorized"), "{out}");

    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (_x, _ch) = claimed_channel(&conn.addr, "SIMDIRACC0001").await;
    let logs = conn.logs();
    assert!(!logs.contains("refuses this connector's key"), "{logs}");
    assert!(!logs.contains(r#"to="unauthorized""#), "{logs}");
}

/// A sim behind its own Google adb 34 server and a connector logging JSON (claims open), with
/// the phone claimed on a channel: where the log tests of adb-server phones start. Returns what
/// must stay alive for the test.
async fn claimed_behind_adb_server(
    serial: &str,
    tag: &str,
) -> (AdbServer, SimPhone, TempDir, ConnectorProc) {
    let adb = AdbServer::start(AdbFlavor::Google34);
    let sim = SimPhone::start_with_control(serial, &[]);
    adb.connect(&sim.addr);
    let dir = TempDir::new(tag);
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::AdbServer(adb.addr()),
        &["--claim-policy", "open", "--log-format", "json"],
    );
    let (_x, _ch) = claimed_channel(&conn.addr, serial).await;
    (adb, sim, dir, conn)
}

/// A phone behind an adb server that is unplugged (the sim drops its connections and refuses
/// new ones) gets a `phone state changed` line from `device` (masked serial, `from`, `to`), as
/// the README promises for each change; the log does not call it a frozen transport, which
/// is a phone that keeps its connection and falls silent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unplugged_adb_server_phone_logs_its_state_change() {
    let (_adb, sim, _dir, conn) = claimed_behind_adb_server("SIMUNPLUGLOG1", "unpluglog").await;
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "unplugged"})),
        200
    );
    wait_log(&conn, "phone state changed", 1);
    let logs = conn.logs();
    let down = state_changes(&logs);
    let first = &down[0]["fields"];
    assert_eq!(first["serial_hint"], "SIM…LOG1", "{logs}");
    assert_eq!(first["from"], "device", "{logs}");
    assert!(first["to"] == "offline" || first["to"] == "gone", "{logs}");
    assert!(!logs.contains("frozen transport"), "{logs}");
    assert!(!logs.contains("SIMUNPLUGLOG1"), "the full serial is logged");
}

/// A phone behind an adb server that freezes (adb keeps listing it `device`; the liveness
/// check finds it silent) gets the `phone state changed` line `device` → `offline` besides the
/// warning that says why, and `offline` → `device` when it answers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_adb_server_phone_logs_both_state_changes() {
    let (_adb, sim, _dir, conn) = claimed_behind_adb_server("SIMFROZENLOG1", "frozenlog").await;
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "frozen"})),
        200
    );
    wait_log(&conn, "frozen transport", 1);
    wait_log(&conn, "phone state changed", 1);
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "online"})),
        200
    );
    wait_log(&conn, "phone state changed", 2);
    let logs = conn.logs();
    for v in state_changes(&logs) {
        assert_eq!(v["fields"]["serial_hint"], "SIM…LOG1", "{v}");
    }
    let moves = state_moves(&logs);
    assert_eq!(moves[..2], offline_and_back(), "{logs}");
    assert!(!logs.contains("SIMFROZENLOG1"), "the full serial is logged");
}

/// A direct phone that freezes is `offline` (connected, silent), then, when the redial finds
/// its address dead, unreachable — which adb's word also calls `offline`: one change line
/// `device` → `offline`, no `offline` → `offline` line for the second step (there was one), and
/// `offline` → `device` when it answers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_then_unreachable_phone_logs_no_change_to_the_same_state() {
    let sim = SimPhone::start_with_control("SIMFROZOFF01", &[]);
    let dir = TempDir::new("frozoff");
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![sim.addr.clone()]),
        &["--claim-policy", "open", "--log-format", "json"],
    );
    let (mut x, ch) = claimed_channel(&conn.addr, "SIMFROZOFF01").await;
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "frozen"})),
        200
    );
    wait_log(&conn, "phone state changed", 1);
    // Wait until the connector holds the second state: a call is refused saying the address
    // is dead (the first state says "connected but does not answer").
    let mut refusal = Value::Null;
    for _ in 0..150 {
        refusal = x.tool(&ch, "android_device_status", json!({})).await;
        let message = refusal["error"]["message"].as_str().unwrap_or("");
        if message.contains("its address closed or refused the connection") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        refusal
            .to_string()
            .contains("its address closed or refused"),
        "never unreachable: {refusal}"
    );
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "online"})),
        200
    );
    wait_log(&conn, "phone state changed", 2);
    let logs = conn.logs();
    assert_eq!(state_moves(&logs), offline_and_back(), "{logs}");
}

/// A bound direct (Wi-Fi, `--device`) phone that is unplugged stays listed under its name with
/// its binding, as the console shows it: `devices` asks the running connector, which knows the
/// address's phone, instead of listing the address with no channel. With the connector
/// stopped, the store keeps the binding but no address: the row under the address says the
/// channel is `unknown`, never `-` (not bound).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unplugged_bound_direct_phone_keeps_its_binding_in_devices() {
    let sim = SimPhone::start_with_control("SIMUNPLUGDIR1", &[]);
    let dir = TempDir::new("unplugged-direct");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (_x, ch) = claimed_channel(&conn.addr, "SIMUNPLUGDIR1").await;
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "unplugged"})),
        200
    );
    let data = dir.path().display().to_string();
    let target = format!("tcp:{}", sim.addr);
    let rows = common::procs::devices_json_direct(&data, &target);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_ne!(rows[0]["state"], "device", "{rows:?}");
    assert_eq!(rows[0]["serial"], "SIMUNPLUGDIR1", "{rows:?}");
    assert_eq!(rows[0]["transport"], target, "{rows:?}");
    assert_eq!(rows[0]["connector_channel_id"], ch.as_str(), "{rows:?}");
    let (code, table, err) = run(&[
        "devices",
        "--data-dir",
        &data,
        "--adb-server",
        "",
        "--device",
        &target,
    ]);
    assert_eq!(code, Some(0), "{table}{err}");
    let line = table
        .lines()
        .find(|l| l.starts_with("SIMUNPLUGDIR1"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(line.split_whitespace().any(|c| c == ch), "{table}");

    drop(conn);
    // The store's binding names a phone no address is known for: listed `missing` with its
    // channel (issue 21), beside the address's row, which may be that phone.
    let rows = common::procs::devices_json_direct(&data, &target);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let at = rows
        .iter()
        .find(|r| r["serial"] == target.as_str())
        .unwrap();
    assert_eq!(at["connector_channel_known"], false, "{rows:?}");
    assert_eq!(at["connector_channel_id"], Value::Null, "{rows:?}");
    let bound = rows
        .iter()
        .find(|r| r["serial"] == "SIMUNPLUGDIR1")
        .unwrap();
    assert_eq!(bound["state"], "missing", "{rows:?}");
    assert_eq!(bound["connector_channel_id"], ch.as_str(), "{rows:?}");
    let (code, table, err) = run(&[
        "devices",
        "--data-dir",
        &data,
        "--adb-server",
        "",
        "--device",
        &target,
    ]);
    assert_eq!(code, Some(0), "{table}{err}");
    let line = table
        .lines()
        .find(|l| l.starts_with(&target))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(line.split_whitespace().any(|c| c == "unknown"), "{table}");
}
