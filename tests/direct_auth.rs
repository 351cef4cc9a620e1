//! The direct transport with the connector's adb key (AOSP host `adb.cpp`/`auth.cpp`):
//! - a `--require-auth` phone: the signature of an unknown key is refused, the key is offered
//!   (`RSAPUBLICKEY`, pending on the phone) and the connect reports `unauthorized`; once the user
//!   accepts, the next connect signs its way in; a keyless host stays unauthorized;
//! - a wireless-debugging phone (`--wireless`): its connect port answers `STLS`; after pairing the
//!   key, the transport upgrades to TLS 1.3 and runs `getprop ro.serialno`; a key the phone never
//!   paired gets [`AdbError::NotPaired`], a keyless host [`AdbError::Refused`];
//! - the key file: generated once at 0600, the same key on the next load.

#[path = "sim_rig.rs"]
mod sim_rig;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use tokio::net::TcpStream;
use tokio::time::Instant;
use xagent_adb_connector::adb::direct::DirectConnection;
use xagent_adb_connector::adb::{AdbError, DeviceLink, HostKeyFile};
use xagent_adb_pairing::pair_as_host;
use xagent_adb_sim::SimOptions;

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("direct-auth-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn key_file_is_made_once_private_and_reloaded() {
    let dir = temp_dir("keyfile");
    let path = dir.join("adbkey");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let first = rt.block_on(HostKeyFile::new(&path).get()).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let again = rt.block_on(HostKeyFile::new(&path).get()).unwrap();
    assert_eq!(first.key().public_key_line(), again.key().public_key_line());
    assert!(!format!("{first:?}").contains("PRIVATE"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn auth_signs_offers_the_key_and_connects_once_accepted() {
    let dir = temp_dir("auth");
    let sim = sim_rig::start(SimOptions {
        serial: "DIRAUTH01".into(),
        require_auth: true,
        state_dir: Some(dir.join("sim")),
        ..SimOptions::default()
    });
    let keys = HostKeyFile::new(dir.join("adbkey"));
    // Made before the first connect, so its seconds of CPU do not count against the deadline.
    sim.rt.block_on(keys.get()).unwrap();

    let keyless = sim.rt.block_on(DirectConnection::connect(&sim.target));
    assert!(
        matches!(keyless, Err(AdbError::DeviceUnauthorized)),
        "{keyless:?}"
    );
    let first = sim
        .rt
        .block_on(DirectConnection::connect_with(&sim.target, Some(&keys)));
    assert!(
        matches!(first, Err(AdbError::DeviceUnauthorized)),
        "{first:?}"
    );
    assert_eq!(sim.get("/v1/auth")["pending"], 1);
    sim.post("/v1/auth", json!({"action": "accept"}));

    let link = DeviceLink::direct_with_key(sim.target.clone(), keys.clone());
    let out = sim
        .rt
        .block_on(link.shell("getprop ro.serialno", Duration::from_secs(5), 1024))
        .unwrap();
    assert_eq!(out.stdout_text().trim(), "DIRAUTH01");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn stls_upgrades_after_pairing_and_refuses_a_stranger() {
    let dir = temp_dir("stls");
    let sim = sim_rig::start(SimOptions {
        serial: "DIRTLS01".into(),
        wireless: true,
        state_dir: Some(dir.join("sim")),
        ..SimOptions::default()
    });
    let keys = HostKeyFile::new(dir.join("adbkey"));
    let key = sim.rt.block_on(keys.get()).unwrap();
    let ports = sim.post("/v1/pair", json!({"code": "314159"}));
    let pairing = format!("127.0.0.1:{}", ports["pairing_port"]);
    let connect = format!("127.0.0.1:{}", ports["connect_port"]);

    // Before pairing: the key is unknown to the TLS port.
    let before = sim
        .rt
        .block_on(DirectConnection::connect_with(&connect, Some(&keys)));
    assert!(matches!(before, Err(AdbError::NotPaired)), "{before:?}");
    let keyless = sim.rt.block_on(DirectConnection::connect(&connect));
    assert!(matches!(keyless, Err(AdbError::Refused(_))), "{keyless:?}");

    let guid = sim
        .rt
        .block_on(async {
            let stream = TcpStream::connect(&pairing).await.unwrap();
            pair_as_host(
                stream,
                b"314159",
                key.key(),
                Instant::now() + Duration::from_secs(10),
            )
            .await
        })
        .unwrap();
    assert_eq!(guid.0, ports["guid"].as_str().unwrap());

    let link = DeviceLink::direct_with_key(connect.clone(), keys.clone());
    // The phone records the key just after its last pairing message, so the host's first
    // connect may come before it: given the same grace the connector gives it (a flake: once
    // `NotPaired` in a CI run).
    let out = sim
        .rt
        .block_on(
            xagent_adb_connector::adb::host_key::retry_until_key_recorded(|| {
                link.shell("getprop ro.serialno", Duration::from_secs(5), 1024)
            }),
        )
        .unwrap();
    assert_eq!(out.stdout_text().trim(), "DIRTLS01");

    let stranger_dir = temp_dir("stranger");
    let stranger = HostKeyFile::new(stranger_dir.join("adbkey"));
    let refused = sim
        .rt
        .block_on(DirectConnection::connect_with(&connect, Some(&stranger)));
    assert!(matches!(refused, Err(AdbError::NotPaired)), "{refused:?}");
    assert!(AdbError::NotPaired.to_string().contains("pair it again"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&stranger_dir);
}
