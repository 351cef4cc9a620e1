//! Issue 21 §1, through the real binary against a real adb server (Google adb 34) and a
//! simulated phone: `devices` needs no data dir (the bound-channel column is then `unknown`),
//! `check` surveys the phones whatever the config lacks, and on the box both run with no flags
//! because they read the packaged `/etc/xagent-adb-connector/config.toml` by default — played
//! in a private mount namespace whose `/etc` is an overlay holding that file, so the machine's
//! own `/etc` is never touched.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{bin, run_cli as run, ConnectorProc, Phones, SimPhone, TempDir};
use common::API_KEY;

const SERIAL: &str = "SIMNOFLAGS0001";

/// The phone's row in `devices --json` output.
fn row_of(json_out: &str) -> Value {
    let rows: Vec<Value> = serde_json::from_str(json_out).expect("devices --json");
    rows.into_iter()
        .find(|r| r["serial"] == SERIAL)
        .unwrap_or_else(|| panic!("{SERIAL} not listed: {json_out}"))
}

#[test]
fn devices_and_check_need_no_data_dir() {
    let adb = AdbServer::start(AdbFlavor::Google34);
    let phone = SimPhone::start(SERIAL);
    adb.connect(&phone.addr);
    let server = adb.addr();
    // `--config /dev/null`: no settings, whatever this machine has under /etc.
    let (code, out, err) = run(&[
        "devices",
        "--json",
        "--config",
        "/dev/null",
        "--adb-server",
        &server,
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let row = row_of(&out);
    assert_eq!(row["state"], "device", "{out}");
    assert_eq!(row["connector_channel_id"], Value::Null, "{out}");
    assert_eq!(row["connector_channel_known"], false, "{out}");
    assert!(err.contains("no data dir configured"), "{err}");

    let (code, table, _) = run(&["devices", "--config", "/dev/null", "--adb-server", &server]);
    assert_eq!(code, Some(0), "{table}");
    let line = table.lines().find(|l| l.starts_with(SERIAL)).unwrap();
    assert!(line.split_whitespace().any(|c| c == "unknown"), "{table}");

    // `check` with neither key nor data dir: the survey ran, then both problems are named.
    let (code, out, _) = run(&["check", "--config", "/dev/null", "--adb-server", &server]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains(&format!("ok       adb server {server} reachable")),
        "{out}"
    );
    assert!(out.contains(&format!("ok       phone {SERIAL}")), "{out}");
    assert!(
        out.contains("PROBLEM  config: --api-key-file is required"),
        "{out}"
    );
    assert!(
        out.contains("PROBLEM  config: --data-dir is required"),
        "{out}"
    );
}

/// Runs the binary with `args` in a private mount namespace whose `/etc` is an overlay of the
/// machine's with `upper` on top (`upper/xagent-adb-connector/config.toml`), every
/// `XAGENT_ADB_*` variable removed.
fn run_with_packaged_config(
    upper: &Path,
    work: &Path,
    args: &[&str],
) -> (Option<i32>, String, String) {
    let mount = format!(
        "mount -t overlay overlay -o lowerdir=/etc,upperdir={},workdir={} /etc && exec \"$0\" \"$@\"",
        upper.display(),
        work.display()
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["--mount", "--propagation", "private", "sh", "-c", &mount])
        .arg(bin())
        .args(args);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
        cmd.env_remove(k);
    }
    let out = cmd.output().expect("unshare");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn on_the_box_check_and_devices_run_with_no_flags() {
    let adb = AdbServer::start(AdbFlavor::Google34);
    let phone = SimPhone::start(SERIAL);
    adb.connect(&phone.addr);
    let dir = TempDir::new("noflags");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let key = dir.path().join("api_key");
    std::fs::write(&key, format!("{API_KEY}\n")).unwrap();
    let upper = dir.path().join("upper");
    let work = dir.path().join("work");
    std::fs::create_dir_all(upper.join("xagent-adb-connector")).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    // The packaged file's shape (`print-default-config`: data dir and key path set), with this
    // test's paths and adb server.
    // A box where claims need no code (`check` calls policy `code` without `[claim_codes]` a
    // problem).
    let config = format!(
        "data_dir = {:?}\napi_key_file = {:?}\nadb_server = {:?}\nclaim_policy = \"open\"\n\
         listen = \"127.0.0.1:{}\"\n",
        data.display().to_string(),
        key.display().to_string(),
        adb.addr(),
        common::adb_server::free_port()
    );
    std::fs::write(upper.join("xagent-adb-connector/config.toml"), config).unwrap();

    // The service is not running yet: `check` says so, with the command that starts it.
    let (code, out, err) = run_with_packaged_config(&upper, &work, &["check"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.starts_with("ok       config valid"), "{out}");
    assert!(out.contains(&format!("ok       phone {SERIAL}")), "{out}");
    assert!(
        out.contains("PROBLEM  connector not running")
            && out.contains("systemctl start xagent-adb-connector"),
        "{out}"
    );
    assert_eq!(out.matches("PROBLEM").count(), 1, "{out}");

    // Running (on the packaged data dir): all is well.
    let _conn = ConnectorProc::start(&data, Phones::AdbServer(adb.addr()));
    let (code, out, err) = run_with_packaged_config(&upper, &work, &["check"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("ok       connector running"), "{out}");
    assert!(out.contains(&format!("ok       phone {SERIAL}")), "{out}");

    let (code, out, err) = run_with_packaged_config(&upper, &work, &["devices", "--json"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let row = row_of(&out);
    assert_eq!(row["connector_channel_known"], true, "{out}");
    assert_eq!(row["adb_server"], adb.addr().as_str(), "{out}");

    // `--config` still wins: a file naming no adb server lists nothing of that server.
    let other = dir.path().join("other.toml");
    std::fs::write(&other, "adb_server = \"\"\n").unwrap();
    let (code, out, err) = run_with_packaged_config(
        &upper,
        &work,
        &["devices", "--json", "--config", other.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(!out.contains(SERIAL), "{out}");
}

/// `devices --data-dir` naming a directory that does not exist (a typo, a box never set up):
/// the bound channels are unknown — `unknown` in the table, `connector_channel_known: false` —
/// and stderr says why, as without a data dir; `-` would say "bound to no channel".
#[test]
fn devices_with_a_data_dir_that_does_not_exist_says_the_channel_is_unknown() {
    let adb = AdbServer::start(AdbFlavor::Google34);
    let phone = SimPhone::start(SERIAL);
    adb.connect(&phone.addr);
    let server = adb.addr();
    let dir = TempDir::new("nodatadir");
    let missing = dir.path().join("not-there");
    let missing = missing.to_str().unwrap();
    let (code, out, err) = run(&[
        "devices",
        "--json",
        "--config",
        "/dev/null",
        "--adb-server",
        &server,
        "--data-dir",
        missing,
    ]);
    assert_eq!(code, Some(0), "{out}{err}");
    let row = row_of(&out);
    assert_eq!(row["state"], "device", "{out}");
    assert_eq!(row["connector_channel_known"], false, "{out}");
    assert_eq!(row["connector_channel_id"], Value::Null, "{out}");
    assert!(
        err.contains(&format!("the data dir {missing} does not exist")),
        "{err}"
    );
    let (code, table, err) = run(&[
        "devices",
        "--config",
        "/dev/null",
        "--adb-server",
        &server,
        "--data-dir",
        missing,
    ]);
    assert_eq!(code, Some(0), "{table}{err}");
    let line = table.lines().find(|l| l.starts_with(SERIAL)).unwrap();
    assert!(line.split_whitespace().any(|c| c == "unknown"), "{table}");
    assert!(err.contains("bound channels are unknown"), "{err}");
    assert!(
        !missing.is_empty() && !Path::new(missing).exists(),
        "devices made no dir"
    );
}

/// `check` names every config problem in one run — the missing API key file, a configured
/// operator key file that is not there, one that is too short, a bad lease grace, a TTL out of
/// range, half a TLS pair — after surveying the phones, never stopping at the first.
#[test]
fn check_names_every_config_problem_in_one_run() {
    let adb = AdbServer::start(AdbFlavor::Google34);
    let phone = SimPhone::start(SERIAL);
    adb.connect(&phone.addr);
    let server = adb.addr();
    let dir = TempDir::new("allproblems");
    let data = dir.path().display().to_string();
    let no_operator_key = dir.path().join("operator_key_missing");
    let (code, out, err) = run(&[
        "check",
        "--config",
        "/dev/null",
        "--adb-server",
        &server,
        "--data-dir",
        &data,
        "--operator-key-file",
        no_operator_key.to_str().unwrap(),
        "--lease-grace",
        "soon",
        "--qr-ttl-secs",
        "0",
        "--tls-cert",
        "/nonexistent/cert.pem",
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains(&format!("ok       phone {SERIAL}")), "{out}");
    let problems: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("PROBLEM  config:"))
        .collect();
    for must in [
        "--api-key-file is required",
        &format!(
            "cannot read --operator-key-file {}",
            no_operator_key.display()
        ),
        "--lease-grace",
        "--qr-ttl-secs",
        "--tls-cert and --tls-key go together",
    ] {
        assert!(
            problems.iter().any(|l| l.contains(must)),
            "{must} not named:\n{out}"
        );
    }
    assert_eq!(problems.len(), 5, "each problem once:\n{out}");

    // An operator key file that is there but too short is named as such, the key never shown.
    let short = dir.path().join("operator_key_short");
    std::fs::write(&short, "tiny-key\n").unwrap();
    let api_key = dir.path().join("api_key.txt");
    std::fs::write(&api_key, format!("{API_KEY}\n")).unwrap();
    let (code, out, err) = run(&[
        "check",
        "--config",
        "/dev/null",
        "--adb-server",
        &server,
        "--data-dir",
        &data,
        "--api-key-file",
        api_key.to_str().unwrap(),
        "--operator-key-file",
        short.to_str().unwrap(),
        "--qr-ttl-secs",
        "0",
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains(&format!(
            "the operator key in {} (--operator-key-file) must be at least 16 characters",
            short.display()
        )),
        "{out}"
    );
    assert!(out.contains("--qr-ttl-secs"), "{out}");
    assert!(
        !out.contains("tiny-key") && !err.contains("tiny-key"),
        "{out}{err}"
    );
}

/// `adb_server = []` in the config file is a config error naming the choices (left out: the
/// default server; `""`: none), for `check`, `devices` and `serve` alike, never silently the
/// default server.
#[test]
fn an_empty_adb_server_list_is_a_config_error() {
    let dir = TempDir::new("emptyservers");
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "adb_server = []\n").unwrap();
    let config = config.to_str().unwrap();
    for args in [
        vec!["check", "--config", config],
        vec!["devices", "--config", config],
        vec!["serve", "--config", config],
    ] {
        let (code, out, err) = run(&args);
        assert_eq!(code, Some(1), "{args:?}: {out}{err}");
        let text = format!("{out}{err}");
        assert!(
            text.contains("adb_server = [] names no adb server")
                && text.contains("leave adb_server out for the default"),
            "{args:?}: {text}"
        );
    }
    // A list with servers, and `""`, still read.
    std::fs::write(dir.path().join("config.toml"), "adb_server = \"\"\n").unwrap();
    let (code, out, err) = run(&["devices", "--json", "--config", config]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_eq!(out.trim(), "[]", "{out}");
}
