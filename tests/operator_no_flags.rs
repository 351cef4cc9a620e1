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
use common::procs::{bin, run_cli as run, SimPhone, TempDir};
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
    let config = format!(
        "data_dir = {:?}\napi_key_file = {:?}\nadb_server = {:?}\n",
        data.display().to_string(),
        key.display().to_string(),
        adb.addr()
    );
    std::fs::write(upper.join("xagent-adb-connector/config.toml"), config).unwrap();

    let (code, out, err) = run_with_packaged_config(&upper, &work, &["check"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.starts_with("ok       config valid"), "{out}");
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
