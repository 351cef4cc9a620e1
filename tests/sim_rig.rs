//! Shared helpers for the sim tests (included with `#[path = "sim_rig.rs"] mod sim_rig;`): one
//! simulated phone with its control API in its own tokio runtime, optionally behind a private
//! real adb server. Compiled alone it is an empty test target.
#![allow(dead_code)]

#[path = "common/adb_server.rs"]
pub mod adb_server;

use std::time::{Duration, Instant};

use adb_server::{AdbFlavor, AdbServer};
use tokio_util::sync::CancellationToken;
use xagent_adb_sim::{self as sim, SimOptions};

/// One running sim (and its runtime).
pub struct Sim {
    pub rt: tokio::runtime::Runtime,
    pub shutdown: CancellationToken,
    /// `127.0.0.1:port` of the ADB transport.
    pub target: String,
    /// `http://127.0.0.1:port` of the control API.
    pub control: String,
    pub phone: sim::Phone,
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Starts a sim with a control API; `opts.control` is filled in.
pub fn start(mut opts: SimOptions) -> Sim {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let shutdown = CancellationToken::new();
    opts.control = Some("127.0.0.1:0".parse().unwrap());
    let (handle, phone) = rt
        .block_on(sim::start_with_phone(opts, shutdown.clone()))
        .unwrap();
    Sim {
        rt,
        shutdown,
        target: handle.adb_addr.to_string(),
        control: format!("http://{}", handle.control_addr.unwrap()),
        phone,
    }
}

/// A sim with the given persona and serial.
pub fn persona(persona: &str, serial: &str) -> Sim {
    start(SimOptions {
        serial: serial.into(),
        persona: persona.into(),
        ..SimOptions::default()
    })
}

impl Sim {
    /// `POST` JSON to the control API; panics on a non-2xx answer.
    pub fn post(&self, path: &str, body: serde_json::Value) -> serde_json::Value {
        let mut resp = ureq::post(format!("{}{path}", self.control))
            .content_type("application/json")
            .send(body.to_string())
            .unwrap();
        let text = resp.body_mut().read_to_string().unwrap();
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
    }

    /// `GET` JSON from the control API.
    pub fn get(&self, path: &str) -> serde_json::Value {
        let mut resp = ureq::get(format!("{}{path}", self.control)).call().unwrap();
        serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap()
    }

    /// Adds a scripted answer.
    pub fn script(&self, body: serde_json::Value) {
        self.post("/v1/script", body);
    }
}

/// A private adb server with a sim connected (`adb connect`, waited until `device`).
pub struct Attached {
    pub adb: AdbServer,
    pub sim: Sim,
}

impl Drop for Attached {
    fn drop(&mut self) {
        let _ = self.adb.run(&["disconnect", &self.sim.target]);
    }
}

/// Starts `sim` behind a fresh adb server of `flavor` and connects it.
pub fn attach(sim: Sim, flavor: AdbFlavor) -> Attached {
    let adb = AdbServer::start(flavor);
    adb.connect(&sim.target);
    Attached { adb, sim }
}

impl Attached {
    /// `adb -s <sim> ARGS…`.
    pub fn adb(&self, args: &[&str]) -> std::process::Output {
        adb_s(&self.adb, &self.sim.target, args)
    }

    /// stdout of `adb -s <sim> ARGS…`, lossy UTF-8.
    pub fn stdout(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&self.adb(args).stdout).to_string()
    }
}

/// `adb -s target ARGS…` on `server`.
pub fn adb_s(server: &AdbServer, target: &str, args: &[&str]) -> std::process::Output {
    let mut full = vec!["-s", target];
    full.extend_from_slice(args);
    server.run(&full)
}

/// The state column of `target` in `adb devices`, if listed.
pub fn device_state(server: &AdbServer, target: &str) -> Option<String> {
    let list = String::from_utf8_lossy(&server.run(&["devices"]).stdout).to_string();
    list.lines()
        .find(|l| l.starts_with(target))
        .and_then(|l| l.split('\t').nth(1))
        .map(str::to_string)
}

/// Polls `adb devices` until `target` shows `want` (10 s bound).
pub fn wait_state(server: &AdbServer, target: &str, want: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if device_state(server, target).as_deref() == Some(want) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    false
}
