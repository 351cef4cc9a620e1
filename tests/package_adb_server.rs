//! Issue 11 (USB phones through the package's adb server): Debian's adb 29 run the way
//! `systemd/xagent-adb-server.service` runs it — `adb -L tcp:localhost:PORT server nodaemon` in
//! the foreground — dies (SIGKILL: a crash, or `systemctl restart`) and is started again on the
//! same port, as `Restart=always` does. The bound channel's descriptor goes away from
//! `connected` while the server is gone and is pushed `connected` again once the new server
//! reports the phone, with no action on the connector; the binding survives and tools work.
//! (field_bugs.rs #34 covers the same through `adb kill-server` on Google's adb 34.)

mod common;

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use common::adb_server::{free_port, AdbFlavor};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claimed_channel;
use common::xagent::XAgent;

/// The unit's ExecStart with a private port and HOME; waits until it accepts.
fn start_unit_style_server(port: u16, home: &Path) -> Child {
    let child = Command::new(AdbFlavor::Debian29.binary())
        .args(["-L", &format!("tcp:localhost:{port}"), "server", "nodaemon"])
        .env("HOME", home)
        .env("ADB_MDNS", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start adb server");
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "adb server did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// `adb -P PORT connect ADDR` until the transport is `device` (what USB discovery does by
/// itself for a plugged phone).
fn attach(port: u16, home: &Path, target: &str) {
    let adb = |args: &[&str]| {
        let out = Command::new(AdbFlavor::Debian29.binary())
            .args(["-P", &port.to_string()])
            .args(args)
            .env("HOME", home)
            .env("ADB_MDNS", "0")
            .output()
            .expect("run adb");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let said = adb(&["connect", target]);
        if said.contains("connected to") && adb(&["-s", target, "get-state"]) == "device" {
            return;
        }
        assert!(Instant::now() < deadline, "adb connect {target}: {said}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Descriptor pushes until one's connection status satisfies `want` (≤ `secs`).
async fn push_until(x: &mut XAgent, secs: u64, want: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let left = deadline.saturating_duration_since(Instant::now()).as_secs();
        let push = x
            .wait_push("connection.descriptor.push", left.max(1))
            .await
            .unwrap_or_else(|| panic!("no matching descriptor push within {secs} s"));
        let status = push["payload"]["connection_descriptor"]["connection"]["status"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if want(&status) {
            return status;
        }
        assert!(Instant::now() < deadline, "last status {status}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adb_server_killed_and_restarted_on_its_port_brings_the_descriptor_back() {
    let sim = SimPhone::start("SIMUNIT000029");
    let dir = TempDir::new("adb-unit");
    let home = dir.path().join("adb-home");
    std::fs::create_dir_all(&home).unwrap();
    let port = free_port();
    let mut server = start_unit_style_server(port, &home);
    attach(port, &home, &sim.addr);
    let conn_dir = dir.path().join("connector");
    std::fs::create_dir_all(&conn_dir).unwrap();
    let conn = ConnectorProc::start(&conn_dir, Phones::AdbServer(format!("127.0.0.1:{port}")));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;

    // The server dies.
    server.kill().expect("kill adb server");
    server.wait().expect("reap adb server");
    let gone = push_until(&mut x, 10, |s| s != "connected").await;
    println!("adb server killed: descriptor {gone}");
    let ack = x.tool(&ch, "android_device_status", json!({})).await;
    assert_eq!(ack["error"]["code"], "adb_server_unavailable", "{ack}");

    // systemd starts it again on the same port; the phone shows up on it.
    let mut server = start_unit_style_server(port, &home);
    attach(port, &home, &sim.addr);
    push_until(&mut x, 20, |s| s == "connected").await;
    let ack = x.tool(&ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "binding survived: {ack}");
    let _ = server.kill();
    let _ = server.wait();
}
