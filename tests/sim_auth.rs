//! ADB RSA authentication of a `--require-auth` sim with real adb servers (Google adb 34,
//! Debian adb 29), each with a fresh HOME and so its own `~/.android/adbkey`: the host shows
//! `unauthorized` until the key is accepted through `POST /v1/auth`, then `device`; a restarted sim
//! with the same `state_dir` still knows the key; `revoke` drops the connection.
//! Source: research notes §3.3, §5.3; AOSP `daemon/auth.cpp`.

#[path = "sim_rig.rs"]
mod sim_rig;

use std::path::{Path, PathBuf};

use serde_json::json;
use sim_rig::adb_server::{AdbFlavor, AdbServer};
use xagent_adb_sim::SimOptions;

fn secure_sim(serial: &str, state_dir: &Path) -> sim_rig::Sim {
    sim_rig::start(SimOptions {
        serial: serial.into(),
        require_auth: true,
        state_dir: Some(state_dir.to_path_buf()),
        ..SimOptions::default()
    })
}

fn state_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sim-auth-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// `adb connect` (exit 0 even when it fails to authenticate) and wait for `want`.
fn connect_until(adb: &AdbServer, target: &str, want: &str) {
    let out = adb.run(&["connect", target]);
    assert!(
        sim_rig::wait_state(adb, target, want),
        "{target} never became {want}: connect said {:?}, devices: {:?}",
        String::from_utf8_lossy(&out.stdout),
        sim_rig::device_state(adb, target)
    );
}

fn accept_then_restart(flavor: AdbFlavor, tag: &str) {
    let dir = state_dir(tag);
    let adb = AdbServer::start(flavor);
    let sim = secure_sim(tag, &dir);
    connect_until(&adb, &sim.target, "unauthorized");
    let shell = sim_rig::adb_s(&adb, &sim.target, &["shell", "echo", "hi"]);
    assert!(!shell.status.success(), "shell ran while unauthorized");
    let auth = sim.get("/v1/auth");
    assert_eq!(auth["required"], true);
    assert_eq!(
        auth["pending"], 1,
        "the host offered its public key: {auth}"
    );
    let auth = sim.post("/v1/auth", json!({"action": "accept"}));
    assert_eq!(
        (auth["accepted"].as_u64(), auth["pending"].as_u64()),
        (Some(1), Some(0))
    );
    assert!(sim_rig::wait_state(&adb, &sim.target, "device"));
    let out = sim_rig::adb_s(&adb, &sim.target, &["shell", "getprop", "ro.serialno"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), tag);
    let keys = std::fs::read_to_string(dir.join("adb_keys")).unwrap();
    assert_eq!(keys.lines().count(), 1, "{keys}");
    assert!(
        keys.trim_end().contains(' '),
        "base64 then user@host: {keys}"
    );
    let _ = adb.run(&["disconnect", &sim.target]);
    drop(sim);

    // Same state_dir, new process-equivalent: the key is still accepted, no prompt.
    let again = secure_sim(tag, &dir);
    connect_until(&adb, &again.target, "device");
    assert_eq!(again.get("/v1/auth")["pending"], 0);

    // Revoke: keys forgotten, the connection dropped; a reconnect is unauthorized again.
    again.post("/v1/auth", json!({"action": "revoke"}));
    assert_eq!(std::fs::read_to_string(dir.join("adb_keys")).unwrap(), "");
    let _ = adb.run(&["disconnect", &again.target]);
    connect_until(&adb, &again.target, "unauthorized");
    let _ = adb.run(&["disconnect", &again.target]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn google_adb34_unauthorized_until_accepted_and_key_persists() {
    accept_then_restart(AdbFlavor::Google34, "AUTH34");
}

#[test]
fn debian_adb29_unauthorized_until_accepted_and_key_persists() {
    accept_then_restart(AdbFlavor::Debian29, "AUTH29");
}

#[test]
fn control_api_rejects_unknown_auth_action() {
    let sim = sim_rig::start(SimOptions::default());
    let err = ureq::post(format!("{}/v1/auth", sim.control))
        .content_type("application/json")
        .send(json!({"action": "maybe"}).to_string());
    assert!(err.is_err());
    assert_eq!(sim.get("/v1/auth")["required"], false);
}
