//! Issue 21, a fresh user's pass over the operator commands, through the real binary against a
//! real adb server (Google adb 34), simulated phones and a running connector: `check` asks the
//! running connector, names a config where no phone can be claimed, lists a bound phone gone
//! from adb as `missing`, keeps what the binding knows of an offline phone, says a state is
//! unknown when the connector's key cannot be used, prints reachable console URLs; `devices`
//! exits 1 when no adb server answered; `sim` and `pair` name the address that failed; a claim
//! of an unknown serial is never a counted wrong code, and a serial typed in another case
//! finds its phone.

mod common;

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use common::adb_server::{free_port, AdbFlavor, AdbServer};
use common::procs::{
    bin, run_cli as run, spawn_and_wait, ConnectorProc, Phones, SimPhone, TempDir,
};
use common::scenario::claimed_channel;
use common::xagent::connect;
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

/// Runs `cmd` with `flags` then `extra`.
fn with(cmd: &str, flags: &[String], extra: &[&str]) -> (Option<i32>, String, String) {
    let mut a: Vec<&str> = vec![cmd];
    a.extend(flags.iter().map(String::as_str));
    a.extend(extra);
    run(&a)
}

/// The row of `serial` in `devices --json` output.
fn row_of(json_out: &str, serial: &str) -> Value {
    let rows: Vec<Value> = serde_json::from_str(json_out).expect("devices --json");
    rows.into_iter()
        .find(|r| r["serial"] == serial)
        .unwrap_or_else(|| panic!("{serial} not listed: {json_out}"))
}

/// `check` asks the running connector: PROBLEM with the service's start command while nothing
/// answers; ok once `serve` runs, through its operator socket, or through `/health` at the
/// listen address when the socket is not at hand (another data dir).
#[test]
fn check_says_whether_the_connector_runs() {
    let adb = AdbServer::start(AdbFlavor::Google34);
    let phone = SimPhone::start("SIMRUNNING0001");
    adb.connect(&phone.addr);
    let dir = TempDir::new("fresh-running");
    let mut flags = base_flags(dir.path());
    let idle = format!("127.0.0.1:{}", free_port());
    flags.extend([
        "--adb-server".into(),
        adb.addr(),
        "--claim-policy".into(),
        "open".into(),
    ]);

    let (code, out, err) = with("check", &flags, &["--listen", &idle]);
    assert_eq!(code, Some(1), "{out}{err}");
    let line = out
        .lines()
        .skip_while(|l| !l.starts_with("PROBLEM  connector not running"))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(line.contains(&format!("http://{idle}/health")), "{out}");
    assert!(line.contains("operator.sock"), "{out}");
    assert!(
        line.contains("fix: start the service: `systemctl start xagent-adb-connector`"),
        "{out}"
    );
    // Everything else is fine: that is the only problem.
    assert_eq!(out.matches("PROBLEM").count(), 1, "{out}");

    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (code, out, err) = with("check", &flags, &["--listen", &conn.addr]);
    assert_eq!(code, Some(0), "{out}{err}");
    let socket = dir.path().join("operator.sock");
    assert!(
        out.contains(&format!(
            "ok       connector running (its operator socket {} answers)",
            socket.display()
        )),
        "{out}"
    );

    // Another data dir (no socket there): the listen address answers.
    let other = TempDir::new("fresh-running-other");
    let other_flags = base_flags(other.path());
    let (code, out, err) = with(
        "check",
        &other_flags,
        &[
            "--adb-server",
            "",
            "--claim-policy",
            "open",
            "--listen",
            &conn.addr,
        ],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains(&format!(
            "ok       connector running (http://{}/health answers)",
            conn.addr
        )),
        "{out}"
    );
}

/// Policy `code` (the default) with no `[claim_codes]`: `check` calls it a problem with the
/// fix, `serve` starts and warns; with a code, neither says it.
#[test]
fn claim_policy_code_without_claim_codes_is_named() {
    let dir = TempDir::new("fresh-codes");
    let flags = base_flags(dir.path());
    let idle = format!("127.0.0.1:{}", free_port());
    let (code, out, _) = with("check", &flags, &["--adb-server", "", "--listen", &idle]);
    assert_eq!(code, Some(1), "{out}");
    let line = out
        .lines()
        .skip_while(|l| !l.contains("[claim_codes] is empty"))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        line.starts_with("PROBLEM  config: claim_policy is \"code\" (the default)"),
        "{out}"
    );
    assert!(line.contains("no phone can be claimed"), "{out}");
    assert!(line.contains("hash-claim-code") && line.contains("claim_policy = \"open\""));

    let codes = dir.path().join("codes.toml");
    std::fs::write(&codes, "[claim_codes]\nSIMCODES0001 = \"code-123456\"\n").unwrap();
    let (_, out, _) = with(
        "check",
        &flags,
        &[
            "--adb-server",
            "",
            "--listen",
            &idle,
            "--config",
            codes.to_str().unwrap(),
        ],
    );
    assert!(!out.contains("[claim_codes] is empty"), "{out}");

    let serving = TempDir::new("fresh-codes-serve");
    let conn = ConnectorProc::start_with(serving.path(), Phones::Direct(vec![]), &[]);
    let logs = conn.logs();
    let warning = logs
        .lines()
        .find(|l| l.contains("WARN") && l.contains("no phone can be claimed"))
        .unwrap_or_else(|| panic!("no warning: {logs}"));
    assert!(warning.contains("hash-claim-code"), "{warning}");
}

/// A bound phone adb no longer lists (`adb disconnect`, an unplugged cable) stays in
/// `devices` as `missing` with its channel and model, and `check` names it (channel, masked
/// serial) — from the running connector and, once it is stopped, from its store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_phone_gone_from_adb_is_listed_missing() {
    const SERIAL: &str = "SIMMISSING0001";
    let adb = AdbServer::start(AdbFlavor::Google34);
    let phone = SimPhone::start(SERIAL);
    adb.connect(&phone.addr);
    let dir = TempDir::new("fresh-missing");
    let mut flags = base_flags(dir.path());
    flags.extend([
        "--adb-server".into(),
        adb.addr(),
        "--claim-policy".into(),
        "open".into(),
    ]);
    let mut conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (_x, ch) = claimed_channel(&conn.addr, SERIAL).await;
    let _ = adb.run(&["disconnect", &phone.addr]);

    let masked = format!("SIM…{}", &SERIAL[SERIAL.len() - 4..]);
    for running in [true, false] {
        let (code, out, err) = with("devices", &flags, &["--json"]);
        assert_eq!(code, Some(0), "{out}{err}");
        let row = row_of(&out, SERIAL);
        assert_eq!(row["state"], "missing", "{out}");
        assert_eq!(row["connector_channel_id"], ch.as_str(), "{out}");
        assert_eq!(row["model"], "Pixel 8", "{out}");
        if running {
            // The running connector's last reading: where it was.
            assert_eq!(row["transport"], phone.addr.as_str(), "{out}");
            assert_eq!(row["adb_server"], adb.addr().as_str(), "{out}");
        }
        assert!(err.contains("a bound phone is missing"), "{err}");
        assert!(
            !err.contains(SERIAL),
            "a log carries the masked serial: {err}"
        );

        let (code, table, _) = with("devices", &flags, &[]);
        assert_eq!(code, Some(0), "{table}");
        let line = table.lines().find(|l| l.starts_with(SERIAL)).unwrap();
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert!(
            cells.contains(&"missing") && cells.contains(&ch.as_str()),
            "{table}"
        );

        let listen = if running {
            conn.addr.clone()
        } else {
            format!("127.0.0.1:{}", free_port())
        };
        let (code, out, _) = with("check", &flags, &["--listen", &listen]);
        assert_eq!(code, Some(1), "{out}");
        let line = out
            .lines()
            .skip_while(|l| {
                !l.starts_with(&format!(
                    "PROBLEM  phone {masked} bound to channel {ch}: missing"
                ))
            })
            .take(2)
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            line.contains("fix: ") && line.contains("auth.logout"),
            "{out}"
        );
        assert!(
            !out.contains(SERIAL),
            "check masks the missing phone's serial: {out}"
        );
        conn.kill();
    }
}

/// A fake adb server on 127.0.0.1 (host protocol smart sockets, AOSP `docs/dev/protocol.md`):
/// answers `host:version` with 41 and `host:devices-l` with `list`. Returns its `host:port`.
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

/// A bound phone an adb server lists `offline` (no model: adb has none for it) keeps what its
/// binding knows: the model seen at the claim and its channel, in the table and the JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offline_bound_phone_keeps_its_model_and_channel() {
    const SERIAL: &str = "SIMOFFBOUND001";
    let phone = SimPhone::start(SERIAL);
    let dir = TempDir::new("fresh-offline");
    let mut conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![phone.addr.clone()]));
    let (_x, ch) = claimed_channel(&conn.addr, SERIAL).await;
    conn.kill();
    // The same phone over USB now, listed offline (a cable that lost the handshake).
    let fake = fake_adb_server("SIMOFFBOUND001         offline usb:1-1 transport_id:7\n");
    let flags = base_flags(dir.path());
    let (code, out, err) = with("devices", &flags, &["--json", "--adb-server", &fake]);
    assert_eq!(code, Some(0), "{out}{err}");
    let row = row_of(&out, SERIAL);
    assert_eq!(row["state"], "offline", "{out}");
    assert_eq!(row["model"], "Pixel 8", "{out}");
    assert_eq!(row["connector_channel_id"], ch.as_str(), "{out}");
    assert_eq!(row["transport"], SERIAL, "{out}");
    let (code, table, err) = with("devices", &flags, &["--adb-server", &fake]);
    assert_eq!(code, Some(0), "{table}{err}");
    let line = table.lines().find(|l| l.starts_with(SERIAL)).unwrap();
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cells[1..3], ["Pixel", "8"], "{table}");
    assert!(cells.contains(&ch.as_str()), "{table}");
}

/// A direct phone that trusts the connector's key refuses `check`'s throwaway key when the
/// data dir (where the key is) is not given: its state is unknown, said so with that reason,
/// never `unauthorized` with the RSA prompt's fix; with the data dir it is `device`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_data_dir_a_trusted_phone_is_unknown_not_unauthorized() {
    let sim = SimPhone::start_with_control("SIMTRUSTED0001", &["--require-auth"]);
    let dir = TempDir::new("fresh-trusted");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    common::scenario::wait_key_offered(&sim).await;
    assert_eq!(
        sim.control_post("/v1/auth", json!({"action": "accept"})),
        200
    );
    let (_x, _ch) = claimed_channel(&conn.addr, &sim.serial).await;
    let device = format!("tcp:{}", sim.addr);
    let (code, out, err) = run(&[
        "check",
        "--config",
        "/dev/null",
        "--adb-server",
        "",
        "--device",
        &device,
    ]);
    assert_eq!(
        code,
        Some(1),
        "the data dir is a config problem: {out}{err}"
    );
    let line = out
        .lines()
        .skip_while(|l| !l.contains(&device))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        line.starts_with(&format!(
            "note     phone {device}: state unknown (no data dir configured"
        )),
        "{out}"
    );
    assert!(line.contains("--data-dir"), "{out}");
    assert!(
        !out.contains("RSA key prompt") && !out.contains("unauthorized"),
        "{out}"
    );
    let (code, out, err) = run(&[
        "devices",
        "--json",
        "--config",
        "/dev/null",
        "--adb-server",
        "",
        "--device",
        &device,
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let rows: Vec<Value> = serde_json::from_str(&out).unwrap();
    assert_eq!(rows.len(), 1, "{out}");
    assert_eq!(rows[0]["state"], "unknown", "{out}");

    // A data dir this user cannot read (the service's is 0700): unknown too, saying why.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = Command::new("setpriv")
        .args([
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            bin(),
        ])
        .args([
            "check",
            "--config",
            "/dev/null",
            "--adb-server",
            "",
            "--device",
            &device,
        ])
        .arg("--data-dir")
        .arg(dir.path())
        .output()
        .expect("setpriv");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .skip_while(|l| !l.contains(&device))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        line.starts_with(&format!(
            "note     phone {device}: state unknown (the connector's adb key"
        )),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        line.contains("cannot be read") && line.contains("service user or root"),
        "{text}"
    );
    assert!(!text.contains("RSA key prompt"), "{text}");

    // With the data dir, the connector's key: the phone answers.
    let flags = base_flags(dir.path());
    let (_, out, err) = with(
        "check",
        &flags,
        &[
            "--adb-server",
            "",
            "--device",
            &device,
            "--listen",
            &conn.addr,
        ],
    );
    assert!(
        out.contains(&format!("ok       phone {} ", sim.serial)),
        "{out}{err}"
    );
}

/// `devices` with no adb server answering prints what it has and exits 1 with the reason.
#[test]
fn devices_exits_1_when_no_adb_server_answered() {
    let nothing = format!("127.0.0.1:{}", free_port());
    let (code, out, err) = run(&["devices", "--config", "/dev/null", "--adb-server", &nothing]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.starts_with("SERIAL"),
        "the (empty) table is printed: {out}"
    );
    assert!(err.contains("no adb server answered"), "{err}");
    assert!(err.contains(&nothing), "{err}");
}

/// `sim --listen` on a port in use names the address; `pair --code` naming an address where
/// nothing listens names it.
#[test]
fn sim_and_pair_name_the_address_that_failed() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = Command::new(bin())
        .args(["sim", "--listen", &addr, "--serial", "SIMTAKEN00001"])
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!("cannot listen on {addr} (--listen)")),
        "{err}"
    );

    let dir = TempDir::new("fresh-pair");
    let nothing = format!("127.0.0.1:{}", free_port());
    let (code, out, err) = run(&[
        "pair",
        "--code",
        &nothing,
        "123456",
        "--data-dir",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        err.contains(&format!("pairing with {nothing} failed")),
        "{err}"
    );
    assert!(!err.contains("123456"), "never the code: {err}");
}

/// A wildcard listen address: `check` prints the console at addresses a browser opens (the
/// box's, loopback last), never `0.0.0.0`; `serve`'s plain-HTTP warning names the console's
/// password.
#[test]
fn the_console_url_is_reachable_and_the_plain_http_warning_names_its_password() {
    let dir = TempDir::new("fresh-console");
    let flags = base_flags(dir.path());
    let operator_key = dir.path().join("operator_key");
    std::fs::write(&operator_key, "operator-key-FRESH-0001\n").unwrap();
    let port = free_port();
    let listen = format!("0.0.0.0:{port}");
    let (_, out, _) = with(
        "check",
        &flags,
        &[
            "--adb-server",
            "",
            "--listen",
            &listen,
            "--operator-key-file",
            operator_key.to_str().unwrap(),
        ],
    );
    let line = out
        .lines()
        .find(|l| l.contains("operator console at"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(!line.contains("0.0.0.0"), "{line}");
    assert!(
        line.contains(&format!("http://127.0.0.1:{port}/console (user operator")),
        "{line}"
    );

    let log = dir.path().join("serve.log");
    let mut cmd = Command::new(bin());
    cmd.args(["serve", "--listen", &listen])
        .args(&flags)
        .args([
            "--adb-server",
            "",
            "--claim-policy",
            "open",
            "--operator-key-file",
            operator_key.to_str().unwrap(),
        ])
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
    let (mut child, _) = spawn_and_wait(cmd, "listening on http://");
    let _ = child.kill();
    let _ = child.wait();
    let logs = std::fs::read_to_string(&log).unwrap();
    let warning = logs
        .lines()
        .find(|l| l.contains("plain HTTP on a non-loopback address"))
        .unwrap_or_else(|| panic!("{logs}"));
    assert!(
        warning.contains("the operator console's password (HTTP Basic auth on /console)"),
        "{warning}"
    );
    assert!(
        !logs.contains("operator-key-FRESH-0001"),
        "never the key: {logs}"
    );
}

/// Under policy `code`, a claim of a serial no phone has is refused as such ("no attached
/// phone has this serial", `auth_failed`, whatever the code) and never counted: many of them
/// leave the serial claimable; the serial typed in lower case finds its phone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_serials_are_not_wrong_codes_and_case_finds_the_phone() {
    let sim = SimPhone::start("SIMCASECLAIM01");
    let dir = TempDir::new("fresh-claim");
    let claim_code = "claim-FRESH-481516";
    let conn = ConnectorProc::start_with_claim_code(
        dir.path(),
        Phones::Direct(vec![sim.addr.clone()]),
        &sim.serial,
        claim_code,
        &[],
    );
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let claim = |serial: &str, code: &str| json!({"flow_id": "adb_device_claim", "input": {"serial": serial, "claim_code": code}});
    // Typed in lower case, with its code: the phone once the connector sees it (before, "no
    // attached phone", never a counted wrong code, so the retries are no guesses).
    let lower = sim.serial.to_lowercase();
    let mut ok = Value::Null;
    for _ in 0..75 {
        ok = x
            .request("auth.start", Some(&ch), claim(&lower, claim_code))
            .await;
        if ok["payload"]["status"] == "authenticated" {
            break;
        }
        let message = ok["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("no attached phone has this serial"),
            "{ok}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
    let out = x.request("auth.logout", Some(&ch), json!({})).await;
    assert!(out.get("error").is_none(), "{out}");
    // Far past the five wrong codes a serial is allowed: an unknown serial is never paused,
    // and its refusal says nothing of codes.
    for _ in 0..8 {
        let e = x
            .request(
                "auth.start",
                Some(&ch),
                claim("NOSUCHPHONE001", "wrong-000000"),
            )
            .await;
        assert_eq!(e["error"]["code"], "auth_failed", "{e}");
        let message = e["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("no attached phone has this serial"), "{e}");
        assert!(!message.contains("code"), "no hint about codes: {e}");
    }
    assert!(
        !conn.logs().contains("wrong claim code"),
        "no claim was a wrong code: {}",
        conn.logs()
    );
}

/// The state `adb devices` lists for `addr` on `adb` (empty when not listed).
fn listed_state(adb: &AdbServer, addr: &str) -> String {
    let out = adb.run(&["devices"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix(addr).map(|r| r.trim().to_string()))
        .unwrap_or_default()
}

/// A bound `adb connect` phone its adb server lists `offline` (its connection lost: the sim's
/// transport `stalled`, adb's re-dial never answered) is listed under its name, with its model
/// and channel, from the running connector's last reading — not as a bare address with `-`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offline_phone_behind_an_adb_server_keeps_the_running_connectors_reading() {
    const SERIAL: &str = "SIMOFFSEEN0001";
    let adb = AdbServer::start(AdbFlavor::Google34);
    let sim = SimPhone::start_with_control(SERIAL, &[]);
    adb.connect(&sim.addr);
    let dir = TempDir::new("fresh-offline-seen");
    let mut flags = base_flags(dir.path());
    flags.extend(["--adb-server".into(), adb.addr()]);
    let _conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (_x, ch) = claimed_channel(&_conn.addr, SERIAL).await;
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "stalled"})),
        200
    );
    for _ in 0..300 {
        if listed_state(&adb, &sim.addr) == "offline" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(listed_state(&adb, &sim.addr), "offline");
    let (code, out, err) = with("devices", &flags, &["--json"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let row = row_of(&out, SERIAL);
    assert_eq!(row["state"], "offline", "{out}");
    assert_eq!(row["transport"], sim.addr.as_str(), "{out}");
    assert_eq!(row["model"], "Pixel 8", "{out}");
    assert_eq!(row["connector_channel_id"], ch.as_str(), "{out}");
    assert_eq!(row["adb_server"], adb.addr().as_str(), "{out}");
}

/// A `[claim_codes]` key typed in another case than the phone's serial is that phone's entry
/// (claims fold case the same way): the right code claims it, spelled either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_code_keyed_in_lower_case_opens_the_phone() {
    let sim = SimPhone::start("SIMCASEKEY01");
    let dir = TempDir::new("fresh-case-key");
    let claim_code = "claim-KEYED-271828";
    let conn = ConnectorProc::start_with_claim_code(
        dir.path(),
        Phones::Direct(vec![sim.addr.clone()]),
        &sim.serial.to_lowercase(),
        claim_code,
        &[],
    );
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    let claim = |serial: &str, code: &str| json!({"flow_id": "adb_device_claim", "input": {"serial": serial, "claim_code": code}});
    let mut ok = Value::Null;
    for _ in 0..75 {
        ok = x
            .request("auth.start", Some(&ch), claim(&sim.serial, claim_code))
            .await;
        if ok["payload"]["status"] == "authenticated" {
            break;
        }
        let message = ok["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("no attached phone has this serial"),
            "{ok}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
    let out = x.request("auth.logout", Some(&ch), json!({})).await;
    assert!(out.get("error").is_none(), "{out}");
    // A wrong code is still wrong.
    let e = x
        .request(
            "auth.start",
            Some(&ch),
            claim(&sim.serial, "claim-WRONG-000000"),
        )
        .await;
    assert_eq!(e["error"]["code"], "auth_failed", "{e}");
    let ok = x
        .request(
            "auth.start",
            Some(&ch),
            claim(&sim.serial.to_lowercase(), claim_code),
        )
        .await;
    assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
}

/// A bound phone whose adb server stopped is not gone: `devices` and `check` say its state is
/// unknown because its server did not answer, with the server's fix, never `missing` with
/// "end the binding".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_phone_behind_a_stopped_adb_server_is_unknown_not_missing() {
    const SERIAL: &str = "SIMSRVDOWN0001";
    let adb = AdbServer::start(AdbFlavor::Google34);
    let phone = SimPhone::start(SERIAL);
    adb.connect(&phone.addr);
    let dir = TempDir::new("fresh-server-down");
    let mut flags = base_flags(dir.path());
    flags.extend([
        "--adb-server".into(),
        adb.addr(),
        "--claim-policy".into(),
        "open".into(),
    ]);
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (_x, ch) = claimed_channel(&conn.addr, SERIAL).await;
    adb.stop();

    let (_, out, _) = with("devices", &flags, &["--json"]);
    let row = row_of(&out, SERIAL);
    assert_eq!(row["state"], "unknown", "{out}");
    assert_eq!(row["connector_channel_id"], ch.as_str(), "{out}");

    let (code, out, _) = with("check", &flags, &["--listen", &conn.addr]);
    assert_eq!(code, Some(1), "the adb server is a problem: {out}");
    let masked = format!("SIM…{}", &SERIAL[SERIAL.len() - 4..]);
    let note = out
        .lines()
        .skip_while(|l| !l.starts_with(&format!("note     bound phone {masked}: state unknown")))
        .take(2)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        note.contains(&format!("its adb server {} did not answer", adb.addr()))
            && note.contains("start-server"),
        "{out}"
    );
    assert!(!out.contains("missing"), "not gone: {out}");
    assert!(!out.contains("end the binding"), "{out}");
    assert!(!out.contains(SERIAL), "masked: {out}");
}
