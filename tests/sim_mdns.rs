//! mDNS of the simulated phone seen by Google adb 34 (`adb mdns services`, Openscreen backend),
//! over real multicast confined to two network namespaces this test creates and always deletes:
//! the phone's (`sim --wireless --mdns-interface <veth>`) and the host's (the adb server), joined
//! by a veth pair that exists only inside them. adb's Openscreen backend ignores loopback
//! interfaces, hence the veth pair rather than `lo`. Nothing touches the machine's own
//! interfaces. After a move with a conflict rename (`POST /v1/wireless/move
//! {"conflict_suffix":2}`) adb lists `<GUID> (2)` at the new port. The QR password never reaches the sim's log (`RUST_LOG=debug`) or its answers.
//! Needs root (CI runs as root); skipped with a message otherwise.
//!
//! The adb server starts before the phone: mdns-sd answers PTR queries but not Openscreen's
//! `ANY` query for a service type, so adb learns of services from their announcements.
//! Source: research notes §1.2; AOSP `adb_mdns.h`, `client/transport_mdns.cpp`.

#[path = "common/adb_server.rs"]
mod adb_server;
#[path = "common/netns.rs"]
#[allow(dead_code)]
mod netns;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use adb_server::AdbFlavor;
use netns::{ip, post_inside};

/// The namespaces, the processes inside them and the adb server, removed in that order on drop
/// (also when an assertion panics).
struct Rig {
    namespaces: Vec<String>,
    sim: Option<Child>,
    adb: Option<(String, String, u16)>,
    home: std::path::PathBuf,
}

impl Rig {
    fn adb(&self, args: &[&str]) -> Output {
        let (ns, bin, port) = self.adb.as_ref().expect("adb server");
        Command::new("ip")
            .args(["netns", "exec", ns, "env"])
            .arg(format!("HOME={}", self.home.display()))
            .args([
                "ADB_MDNS_OPENSCREEN=1",
                "ADB_MDNS_AUTO_CONNECT=0",
                bin,
                "-P",
            ])
            .arg(port.to_string())
            .args(args)
            .env_remove("ADB_MDNS")
            .env_remove("ANDROID_SERIAL")
            .output()
            .expect("run adb")
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        if self.adb.is_some() {
            let _ = self.adb(&["kill-server"]);
        }
        if let Some(mut child) = self.sim.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        for ns in &self.namespaces {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
        let _ = std::fs::remove_dir_all(&self.home);
    }
}

#[test]
fn google_adb34_sees_the_sims_mdns_advertisements() {
    if !Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
    {
        eprintln!("skipped: creating network namespaces needs root");
        return;
    }
    let id = std::process::id();
    let (phone_ns, host_ns) = (format!("xagent-mdns-p{id}"), format!("xagent-mdns-h{id}"));
    let (va, vb) = (format!("xva{id}"), format!("xvb{id}"));
    let mut rig = Rig {
        namespaces: Vec::new(),
        sim: None,
        adb: None,
        home: std::env::temp_dir().join(format!("xagent-mdns-home-{id}")),
    };
    std::fs::create_dir_all(&rig.home).unwrap();
    for ns in [&phone_ns, &host_ns] {
        ip(&["netns", "add", ns]);
        rig.namespaces.push(ns.clone());
        ip(&["-n", ns, "link", "set", "lo", "up"]);
    }
    ip(&[
        "link", "add", &va, "netns", &phone_ns, "type", "veth", "peer", "name", &vb, "netns",
        &host_ns,
    ]);
    for (ns, dev, addr) in [
        (&phone_ns, &va, "198.18.0.1/24"),
        (&host_ns, &vb, "198.18.0.2/24"),
    ] {
        ip(&["-n", ns, "addr", "add", addr, "dev", dev]);
        ip(&["-n", ns, "link", "set", dev, "up", "multicast", "on"]);
        ip(&["-n", ns, "route", "add", "224.0.0.0/4", "dev", dev]);
    }

    let adb_bin = AdbFlavor::Google34.binary().display().to_string();
    rig.adb = Some((host_ns.clone(), adb_bin, 5037));
    let started = rig.adb(&["start-server"]);
    assert!(started.status.success(), "{started:?}");
    // Discovery must be listening before the phone announces itself (see the top).
    let ready = Instant::now() + Duration::from_secs(10);
    while !String::from_utf8_lossy(&rig.adb(&["mdns", "check"]).stdout)
        .contains("mdns daemon version")
    {
        assert!(Instant::now() < ready, "adb's mDNS discovery did not start");
        std::thread::sleep(Duration::from_millis(200));
    }

    let mut sim = Command::new("ip")
        .args([
            "netns",
            "exec",
            &phone_ns,
            env!("CARGO_BIN_EXE_xagent-adb-connector"),
        ])
        .args(["sim", "--listen", "198.18.0.1:0", "--serial", "SIMMDNS1"])
        .args([
            "--control",
            "127.0.0.1:0",
            "--wireless",
            "--mdns-interface",
            &va,
        ])
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(rig.home.join("sim.log")).unwrap())
        .spawn()
        .expect("spawn sim");
    let lines = BufReader::new(sim.stdout.take().unwrap());
    rig.sim = Some(sim);
    let (mut connect, mut control) = (String::new(), String::new());
    for line in lines.lines().map_while(Result::ok) {
        if let Some(rest) = line.strip_prefix("wireless debugging connect port on tcp:") {
            connect = rest.trim().to_string();
        }
        if let Some(rest) = line.strip_prefix("control API on http://") {
            control = rest.trim().to_string();
            break;
        }
    }
    assert!(
        !connect.is_empty() && !control.is_empty(),
        "sim did not start"
    );
    let answer = post_inside(
        &phone_ns,
        &control,
        "/v1/pair",
        r#"{"qr_code_text":"WIFI:T:ADB;S:xagent-MdnsTest01;P:pw0123456789ab;;"}"#,
    );
    assert!(answer.contains("pairing_port"), "{answer}");
    assert!(!answer.contains("pw0123456789ab"), "{answer}");
    let pairing_port = answer
        .split("\"pairing_port\":")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap()
        .to_string();

    let want_connect = format!("_adb-tls-connect._tcp\t{connect}");
    // adb prints the address it has resolved so far: `0.0.0.0` until the A record of a
    // freshly announced service arrives, which a loaded machine can stretch past the deadline.
    // The instance name and port prove the advertisement.
    let pairing_prefix = "xagent-MdnsTest01\t_adb-tls-pairing._tcp\t";
    let pairing_suffix = format!(":{pairing_port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut listed;
    loop {
        listed = String::from_utf8_lossy(&rig.adb(&["mdns", "services"]).stdout).to_string();
        let connect_line = listed
            .lines()
            .any(|l| l.starts_with("adb-SIMMDNS1-") && l.contains(&want_connect));
        let pairing_line = listed.lines().any(|l| {
            l.starts_with(pairing_prefix)
                && l.ends_with(&pairing_suffix)
                && (l.contains("198.18.0.1:") || l.contains("0.0.0.0:"))
        });
        if connect_line && pairing_line {
            let log = std::fs::read_to_string(rig.home.join("sim.log")).unwrap();
            assert!(
                !log.contains("pw0123456789ab"),
                "the password reached the log"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "adb mdns services never listed both services:\n{listed}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }

    // The phone moves and its responder renames the service after a name conflict
    // (`POST /v1/wireless/move {"conflict_suffix":2}`): adb lists `<GUID> (2)` at the new port.
    let answer = post_inside(
        &phone_ns,
        &control,
        "/v1/wireless/move",
        r#"{"conflict_suffix":2}"#,
    );
    let new_port = answer
        .split("\"connect_port\":")
        .nth(1)
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .unwrap_or_else(|| panic!("{answer}"))
        .to_string();
    assert!(answer.contains(" (2)\""), "{answer}");
    let renamed = format!(" (2)\t_adb-tls-connect._tcp\t198.18.0.1:{new_port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        listed = String::from_utf8_lossy(&rig.adb(&["mdns", "services"]).stdout).to_string();
        if listed
            .lines()
            .any(|l| l.starts_with("adb-SIMMDNS1-") && l.ends_with(&renamed))
        {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "adb never listed the renamed instance at port {new_port}:\n{listed}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}
