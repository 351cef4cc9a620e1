//! Issue 11 (hardened unit): the systemd units in `systemd/` as systemd itself reads them —
//! `systemd-analyze security --offline=true` scores each one's exposure (≤ 2.5, printed), and
//! `systemd-analyze verify` loads both with no warning at all (an unknown key or a bad value is
//! only a warning to systemd, so any stderr line fails here). Nothing is started or booted.
//! systemd-analyze comes with Debian's `systemd` package (on the machine; systemd ≥ 250 for
//! `--offline`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::procs::{bin, TempDir};

const UNITS: [&str; 2] = ["xagent-adb-connector.service", "xagent-adb-server.service"];

fn unit_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("systemd")
        .join(name)
}

/// `systemd-analyze` when installed; the reason it is not, otherwise.
fn systemd_analyze() -> Result<&'static str, String> {
    match Command::new("systemd-analyze").arg("--version").output() {
        Ok(out) if out.status.success() => Ok("systemd-analyze"),
        Ok(out) => Err(format!("systemd-analyze --version failed: {out:?}")),
        Err(e) => Err(format!("systemd-analyze not installed ({e})")),
    }
}

/// The overall exposure figure of `systemd-analyze security --offline=true UNIT`.
fn exposure(unit: &Path) -> f64 {
    let out = Command::new("systemd-analyze")
        .args(["security", "--offline=true", "--no-pager"])
        .arg(unit)
        .output()
        .expect("run systemd-analyze security");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "security failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // "→ Overall exposure level for NAME.service: 1.2 OK 🙂"
    let line = text
        .lines()
        .find(|l| l.contains("Overall exposure level"))
        .unwrap_or_else(|| panic!("no exposure line in: {text}"));
    line.rsplit_once(": ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unparsable exposure line {line:?}"))
}

#[test]
fn exposure_of_each_unit_is_at_most_2_5() {
    if let Err(reason) = systemd_analyze() {
        println!("SKIP: {reason}");
        return;
    }
    for name in UNITS {
        let score = exposure(&unit_path(name));
        println!("systemd-analyze security exposure of {name}: {score}");
        assert!(score <= 2.5, "{name}: exposure {score} > 2.5");
    }
}

#[test]
fn verify_loads_both_units_without_a_warning() {
    if let Err(reason) = systemd_analyze() {
        println!("SKIP: {reason}");
        return;
    }
    // verify checks that ExecStart= names an executable: the unit's /usr/bin path points at
    // the binary under test here (the .deb puts it at /usr/bin, tests/package_deb.rs). adb is
    // Debian's /usr/bin/adb, as on the box.
    let dir = TempDir::new("units");
    let mut paths = Vec::new();
    for name in UNITS {
        let text = std::fs::read_to_string(unit_path(name)).unwrap();
        let text = text.replace("/usr/bin/xagent-adb-connector", bin());
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        paths.push(path);
    }
    let out = Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .args(&paths)
        .output()
        .expect("run systemd-analyze verify");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "verify failed: {stderr}");
    assert!(stderr.trim().is_empty(), "verify warned: {stderr}");
}

#[test]
fn units_keep_their_contract() {
    // What the package, the README and the notify code rely on.
    let conn = std::fs::read_to_string(unit_path(UNITS[0])).unwrap();
    for line in [
        "Type=notify",
        "WatchdogSec=30",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "User=xagent-adb-connector",
        "StateDirectory=xagent-adb-connector",
        "ConfigurationDirectory=xagent-adb-connector",
        "ProtectSystem=strict",
        "PrivateDevices=yes",
        "CapabilityBoundingSet=",
        "Wants=network-online.target xagent-adb-server.service",
    ] {
        assert!(
            conn.lines().any(|l| l == line),
            "connector unit lacks {line:?}"
        );
    }
    assert!(!conn.contains("DynamicUser"), "the package makes a user");
    let adb = std::fs::read_to_string(unit_path(UNITS[1])).unwrap();
    for line in [
        "ExecStart=/usr/bin/adb -L tcp:localhost:5037 server nodaemon",
        "User=xagent-adb-connector",
        "Environment=HOME=/var/lib/xagent-adb-connector",
        "DeviceAllow=char-usb_device rw",
    ] {
        assert!(
            adb.lines().any(|l| l == line),
            "adb server unit lacks {line:?}"
        );
    }
}
