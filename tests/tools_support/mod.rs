//! Helpers of the device-tool tests: a bound channel, `POST /files/uploads`, a sim APK, the
//! phone's command log, and a device-profiles directory.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{json, Value};

use crate::common::procs::{ConnectorProc, SimPhone, TempDir};
use crate::common::scenario::claimed_channel;
use crate::common::xagent::{upload_answer, XAgent};

/// A socket with one channel bound to `sim`.
pub async fn bound(sim: &SimPhone, conn: &ConnectorProc) -> (XAgent, String) {
    claimed_channel(&conn.addr, &sim.serial).await
}

/// An HTTP client for the tests: statuses are answers, not errors; 30 s for a whole request.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// `POST /files/uploads` on `channel`; returns the file_ref (the upload asserted `200`).
pub fn upload(conn: &ConnectorProc, channel: &str, filename: &str, data: &[u8]) -> String {
    let (status, v) = upload_answer(&conn.base, channel, filename, data);
    assert_eq!(status, 200, "{v}");
    v["file_ref"].as_str().unwrap().to_string()
}

/// A simulated APK: ZIP signature + manifest text (the sim reads `package=`/`versionName=`).
pub fn sim_apk(package: &str, version: &str) -> Vec<u8> {
    let mut b = b"PK\x03\x04\x14\x00\x00\x00".to_vec();
    b.extend_from_slice(format!("<manifest package=\"{package}\" android:versionName=\"{version}\"><application><activity><intent-filter><category android:name=\"android.intent.category.LAUNCHER\"/></intent-filter></activity></application></manifest>").as_bytes());
    b.extend((0..4096u32).map(|i| (i % 253) as u8));
    b
}

/// A connector on `sim`'s direct transport whose default device profile has `edits` applied
/// ([`profiles_dir`]), claims open; and a bound channel.
pub async fn direct_with_profile(
    sim: &SimPhone,
    dir: &TempDir,
    edits: &[(&str, &str)],
) -> (ConnectorProc, XAgent, String) {
    let profiles = profiles_dir(dir, edits);
    let conn = ConnectorProc::start_with(
        dir.path(),
        crate::common::procs::Phones::Direct(vec![sim.addr.clone()]),
        &[
            "--claim-policy",
            "open",
            "--device-profiles",
            profiles.to_str().unwrap(),
        ],
    );
    let (x, ch) = bound(sim, &conn).await;
    (conn, x, ch)
}

/// Every argv of the phone's command log.
pub fn argvs(sim: &SimPhone) -> Vec<Vec<String>> {
    sim.state()["command_log"]
        .as_array()
        .map(|log| {
            log.iter()
                .map(|e| {
                    e["argv"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .map(|s| s.as_str().unwrap_or("").to_string())
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A `--device-profiles` dir whose default.toml is the built-in one with `edits` applied
/// (`(from, to)` text replacements).
pub fn profiles_dir(tmp: &TempDir, edits: &[(&str, &str)]) -> PathBuf {
    let dir = tmp.path().join("profiles");
    std::fs::create_dir_all(&dir).unwrap();
    let mut text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("device-profiles/default.toml"),
    )
    .unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    std::fs::write(dir.join("default.toml"), text).unwrap();
    dir
}

/// The error code of an ack (`""` when it succeeded).
pub fn code(ack: &Value) -> String {
    ack["error"]["code"].as_str().unwrap_or("").to_string()
}

/// The result of a successful ack (panics with the ack otherwise).
pub fn ok(ack: &Value) -> Value {
    assert!(ack.get("error").is_none(), "{ack}");
    ack["payload"]["result"].clone()
}

/// Arguments with no fields.
pub fn none() -> Value {
    json!({})
}
