//! Field bugs, round 3, wireless kind (rows 35–38 of `field-bugs-3.md`) and hardening L8,
//! through the real path: an xAgent client over WebSocket → the connector binary → its own
//! wireless transport (`STLS`, TLS 1.3) → the simulated phone (`sim --wireless`). Every test
//! runs inside a network namespace it creates ([`common::netns`]): the phone announces over
//! real mDNS on that namespace's `lo`, the connector browses there, and no multicast leaves it.
//! "The user opened Pair device with pairing code" is the sim's `POST /v1/pair`; a Wi-Fi toggle
//! is `POST /v1/wireless/move` (with `conflict_suffix` the phone re-announces as
//! `<GUID> (N)`, with `keep_stale` its earlier record stays at the dead port); revoking the
//! debugging authorisations is `POST /v1/auth {"action":"revoke"}`. Needs root.

mod common;

use serde_json::{json, Value};

use common::netns::{inside, post_inside, Netns};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::schemas::assert_packet;
use common::wireless::{
    descriptor_status, pair_code_input, pushed_status, start_pair_code, status_once_reachable,
    wireless_sim, WirelessPhone,
};
use common::xagent::{connect, XAgent};
use common::API_KEY;

/// One phone with wireless debugging, the connector (mDNS on `lo`, no adb server) and a client
/// with one channel, all inside the caller's namespace.
type Rig = WirelessPhone;

/// A [`Rig`] for phone `serial`; `mdns`: the phone announces itself (else mDNS is "blocked":
/// nothing announces); the connector logs at `rust_log`.
async fn rig(serial: &str, mdns: bool, rust_log: &str) -> Rig {
    WirelessPhone::start(serial, mdns, &[], rust_log).await
}

/// Runs `body` inside a new network namespace named after `tag`.
fn in_netns<F, Fut>(tag: &str, body: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let ns = Netns::create(tag);
    inside(&ns, body);
}

/// Opens the phone's pairing dialog with `code`: its ports (`pairing_port`, `connect_port`,
/// `guid`).
fn open_dialog(sim: &SimPhone, code: &str) -> Value {
    sim.control_json("/v1/pair", json!({ "code": code }))
}

/// Asserts `ack` bound the channel (`authenticated`, `connected`) and a tool then runs on the
/// phone over TLS.
async fn assert_bound(x: &mut XAgent, ch: &str, ack: &Value) {
    assert_packet(ack);
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    assert_eq!(
        ack["payload"]["connection_descriptor"]["connection"]["status"], "connected",
        "{ack}"
    );
    let status = x.tool(ch, "android_device_status", json!({})).await;
    assert!(status.get("error").is_none(), "{status}");
}

/// Pairs `rig`'s phone on its channel with `code`, `connect_port` as the dialog shows it: the
/// dialog's ports.
async fn pair_bound(rig: &mut Rig, code: &str) -> Value {
    let ports = open_dialog(&rig.sim, code);
    let input = pair_code_input(&ports, code, Some(ports["connect_port"].clone()));
    let ack = start_pair_code(&mut rig.x, &rig.ch, input).await;
    assert_bound(&mut rig.x, &rig.ch, &ack).await;
    ports
}

/// The sim's pairing state: keys paired and whether a pairing dialog is open.
fn pairing_state(sim: &SimPhone) -> (u64, bool) {
    let w = &sim.state()["wireless"];
    (
        w["paired_keys"].as_u64().unwrap_or_default(),
        w["pairing_open"].as_bool().unwrap_or_default(),
    )
}

/// Asserts no secret (codes, API key, the connector's adb key) is in the connector's log.
async fn assert_no_secrets(rig: &Rig, codes: &[&str]) {
    let logs = rig.conn.logs();
    let (public, private) = common::scenario::adb_key_secrets(rig.dir.path()).await;
    for secret in codes.iter().copied().chain([API_KEY, &public, &private]) {
        assert!(!logs.contains(secret), "the log leaks a secret");
    }
}

// ---- Row 35: the connect port moved after pairing -------------------------------------------

/// Row 35 (kil0bit-kb/scrcpy-gui#58): the phone pairs, then its connect port moves (the port
/// the user read is closed; the phone re-announces `_adb-tls-connect._tcp` under its GUID on a
/// new port). `auth.start` with the old `connect_port` is `authenticated`: the connector found
/// the phone by the GUID the pairing gave, one code only.
#[test]
fn field_bug_35_connect_port_moved_after_pairing_is_found_by_guid() {
    in_netns("fb35", || async {
        let mut r = rig("SIMFB35MOVE01", true, "debug").await;
        let ports = open_dialog(&r.sim, "271828");
        let moved = r.sim.control_json("/v1/wireless/move", json!({}));
        assert_ne!(moved["connect_port"], ports["connect_port"], "{moved}");
        let input = pair_code_input(&ports, "271828", Some(ports["connect_port"].clone()));
        let ack = start_pair_code(&mut r.x, &r.ch, input).await;
        assert_bound(&mut r.x, &r.ch, &ack).await;
        assert_eq!(
            pairing_state(&r.sim),
            (1, false),
            "one pairing, no new dialog"
        );
        assert!(!ack.to_string().contains("271828"));
        assert_no_secrets(&r, &["271828"]).await;
    });
}

/// Row 35, variant: the port moved twice, the last time with a conflict rename that left the
/// first move's record at its dead port (`<GUID>` at a closed port, `<GUID> (2)` live): the
/// stale record never masks the live one.
#[test]
fn field_bug_35_variant_moved_twice_with_a_stale_record_left() {
    in_netns("fb35b", || async {
        let mut r = rig("SIMFB35TWICE1", true, "debug").await;
        let ports = open_dialog(&r.sim, "314159");
        r.sim.control_json("/v1/wireless/move", json!({}));
        let moved = r.sim.control_json(
            "/v1/wireless/move",
            json!({"conflict_suffix": 2, "keep_stale": true}),
        );
        let instance = moved["instance"].as_str().unwrap_or_default();
        assert!(instance.ends_with(" (2)"), "{moved}");
        let input = pair_code_input(
            &ports,
            "314159",
            Some(json!(ports["connect_port"].to_string())),
        );
        let ack = start_pair_code(&mut r.x, &r.ch, input).await;
        assert_bound(&mut r.x, &r.ch, &ack).await;
    });
}

/// Row 35, variant: mDNS blocked (the phone announces nothing) and the port moved: within a
/// few seconds `auth_failed` naming both causes (the port changed; mDNS blocked) and saying the
/// pairing is kept; the same input with the port read again (same spent dialog and code) then
/// connects with that pairing — no second dialog or code.
#[test]
fn field_bug_35_variant_mdns_blocked_names_both_causes_and_keeps_the_pairing() {
    in_netns("fb35c", || async {
        let mut r = rig("SIMFB35QUIET1", false, "debug").await;
        let ports = open_dialog(&r.sim, "161803");
        let moved = r.sim.control_json("/v1/wireless/move", json!({}));
        let input = pair_code_input(&ports, "161803", Some(ports["connect_port"].clone()));
        let e = start_pair_code(&mut r.x, &r.ch, input).await;
        assert_packet(&e);
        assert_eq!(e["error"]["code"], "auth_failed", "{e}");
        let message = e["error"]["message"].as_str().unwrap_or_default();
        for cause in ["the port changed", "mDNS is blocked", "pairing is kept"] {
            assert!(message.contains(cause), "{cause}: {message}");
        }
        assert!(!message.contains("161803"), "{message}");
        assert_eq!(
            pairing_state(&r.sim),
            (1, false),
            "paired once, dialog spent"
        );

        let retry = pair_code_input(&ports, "161803", Some(moved["connect_port"].clone()));
        let ack = start_pair_code(&mut r.x, &r.ch, retry).await;
        assert_bound(&mut r.x, &r.ch, &ack).await;
        assert_eq!(pairing_state(&r.sim), (1, false), "no second pairing");
        assert!(r
            .conn
            .logs()
            .contains("connecting with the pairing made earlier on this channel"));
    });
}

/// Google adb 34 with its mDNS discovery (Openscreen, which ignores loopback) inside the
/// caller's namespace, on that namespace's own port 5037 and a temporary HOME; killed on drop.
struct MdnsAdb {
    home: std::path::PathBuf,
}

impl MdnsAdb {
    fn run(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new(common::adb_server::AdbFlavor::Google34.binary())
            .args(["-P", "5037"])
            .args(args)
            .env("HOME", &self.home)
            .env("ADB_MDNS_OPENSCREEN", "1")
            .env("ADB_MDNS_AUTO_CONNECT", "0")
            .env_remove("ADB_MDNS")
            .env_remove("ANDROID_SERIAL")
            .env_remove("ADB_SERVER_SOCKET")
            .output()
            .expect("run adb")
    }

    /// Starts the server and waits (≤ 10 s) until its discovery runs: it learns of services
    /// from announcements made after that (`tests/sim_mdns.rs`).
    fn start(dir: &TempDir) -> MdnsAdb {
        let adb = MdnsAdb {
            home: dir.path().join("adb-home"),
        };
        std::fs::create_dir_all(&adb.home).unwrap();
        assert!(adb.run(&["start-server"]).status.success());
        let ready = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !String::from_utf8_lossy(&adb.run(&["mdns", "check"]).stdout)
            .contains("mdns daemon version")
        {
            assert!(
                std::time::Instant::now() < ready,
                "adb's mDNS discovery did not start"
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        adb
    }
}

impl Drop for MdnsAdb {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// A simulated phone in namespace `ns` listening on `ip` and announcing on `dev`: the process
/// (killed on drop) and its control API address (that namespace's loopback).
struct PhoneInNs {
    child: std::process::Child,
    control: String,
    ns: String,
}

impl PhoneInNs {
    fn start(ns: &str, serial: &str, ip: &str, dev: &str, state: &std::path::Path) -> PhoneInNs {
        use std::io::BufRead;
        std::fs::create_dir_all(state).unwrap();
        let mut child = std::process::Command::new("ip")
            .args(["netns", "exec", ns, common::procs::bin()])
            .args(["sim", "--listen", &format!("{ip}:0"), "--serial", serial])
            .args([
                "--control",
                "127.0.0.1:0",
                "--wireless",
                "--mdns-interface",
                dev,
            ])
            .arg("--state-dir")
            .arg(state)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn sim");
        let lines = std::io::BufReader::new(child.stdout.take().unwrap());
        let control = lines
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("control API on http://").map(str::to_string))
            .expect("the sim's control API");
        PhoneInNs {
            child,
            control: control.trim().to_string(),
            ns: ns.to_string(),
        }
    }

    /// `POST` to the control API: the JSON answer.
    fn post(&self, path: &str, body: Value) -> Value {
        let raw = post_inside(&self.ns, &self.control, path, &body.to_string());
        let json = raw.split("\r\n\r\n").nth(1).unwrap_or_default();
        serde_json::from_str(json).unwrap_or_else(|_| panic!("control answer: {raw}"))
    }
}

impl Drop for PhoneInNs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Row 35, variant: the connector's own mDNS sees nothing (it browses an interface the phone
/// does not announce on) but the adb server's discovery saw the phone re-announce its moved
/// port: `host:mdns:services` finds it, `authenticated`. Two namespaces (the phone's, the
/// box's) joined by a veth pair that exists only inside them.
#[test]
fn field_bug_35_variant_found_through_the_adb_servers_mdns_list() {
    let phone_ns = Netns::create("fb35p");
    let box_ns = Netns::create("fb35h");
    let id = std::process::id() % 1_000_000;
    let (va, vb) = (format!("xfa{id}"), format!("xfb{id}"));
    common::netns::veth(
        &phone_ns,
        &va,
        "198.18.0.1/24",
        &box_ns,
        &vb,
        "198.18.0.2/24",
    );
    let phone_ns_name = phone_ns.0.clone();
    inside(&box_ns, move || async move {
        let serial = "SIMFB35ADBMD1";
        let dir = TempDir::new("fb35-adb");
        let adb = MdnsAdb::start(&dir);
        let sim = PhoneInNs::start(
            &phone_ns_name,
            serial,
            "198.18.0.1",
            &va,
            &dir.path().join("sim"),
        );
        let ports = sim.post("/v1/pair", json!({"code": "271828"}));
        let moved = sim.post("/v1/wireless/move", json!({}));
        let listed_line = format!(
            "_adb-tls-connect._tcp\t198.18.0.1:{}",
            moved["connect_port"]
        );
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !String::from_utf8_lossy(&adb.run(&["mdns", "services"]).stdout)
            .contains(&listed_line)
        {
            assert!(
                std::time::Instant::now() < until,
                "adb never saw the moved port"
            );
            std::thread::sleep(std::time::Duration::from_millis(300));
        }
        let conn = ConnectorProc::start_with(
            dir.path(),
            Phones::AdbServer("127.0.0.1:5037".into()),
            &["--mdns-interface", "lo"],
        );
        let mut x = connect(&conn.addr).await;
        x.hello_fresh().await;
        let (ch, _) = x.open(None).await;
        let input = json!({"host": "198.18.0.1", "port": ports["pairing_port"], "code": "271828",
                           "connect_port": ports["connect_port"]});
        let ack = start_pair_code(&mut x, &ch, input).await;
        assert_bound(&mut x, &ch, &ack).await;
        drop(adb);
    });
    drop(phone_ns);
}

// ---- Row 36: connect_port left out, or the pairing port given as it -------------------------

/// Row 36 (MuntashirAkon/libadb-android#4, AppManager#562): `adb_pair_code` without
/// `connect_port` is `authenticated` (found by GUID), and the card no longer requires it.
#[test]
fn field_bug_36_connect_port_left_out_is_found_by_guid() {
    in_netns("fb36", || async {
        let mut r = rig("SIMFB36NOPORT", true, "debug").await;
        let (_, _, card) =
            common::xagent::http_get(&format!("{}/connector-card.json", r.conn.base), None);
        let card: Value = serde_json::from_slice(&card).unwrap();
        let field = card["auth_flows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "adb_pair_code")
            .and_then(|f| f["fields"].as_array())
            .and_then(|fields| fields.iter().find(|f| f["name"] == "connect_port"))
            .cloned()
            .expect("connect_port field kept in the card");
        assert_eq!(field["required"], false, "{field}");
        let ports = open_dialog(&r.sim, "577215");
        let ack = start_pair_code(&mut r.x, &r.ch, pair_code_input(&ports, "577215", None)).await;
        assert_bound(&mut r.x, &r.ch, &ack).await;
    });
}

/// Row 36, variant: `connect_port` given as the pairing port (one phone) and as 5555 (another,
/// as a string): neither can be the connect port; both phones are found by GUID and bound.
#[test]
fn field_bug_36_variant_pairing_port_or_5555_as_the_connect_port() {
    in_netns("fb36b", || async {
        let mut r = rig("SIMFB36SAME01", true, "debug").await;
        let ports = open_dialog(&r.sim, "141421");
        let as_pairing = pair_code_input(&ports, "141421", Some(ports["pairing_port"].clone()));
        let ack = start_pair_code(&mut r.x, &r.ch, as_pairing).await;
        assert_bound(&mut r.x, &r.ch, &ack).await;

        let other = wireless_sim("SIMFB36TCPIP1", &r.dir.path().join("sim-2"), true);
        let (ch2, _) = r.x.open(None).await;
        let ports = open_dialog(&other, "173205");
        let as_tcpip = pair_code_input(&ports, "173205", Some(json!("5555")));
        let ack = start_pair_code(&mut r.x, &ch2, as_tcpip).await;
        assert_bound(&mut r.x, &ch2, &ack).await;
        let d =
            r.x.request("connection.descriptor.get", Some(&ch2), json!({}))
                .await;
        assert!(
            d.to_string().contains("SIM…PIP1"),
            "the second phone is bound there: {d}"
        );
    });
}

/// Row 36, variant: a pairing is never wasted. With mDNS blocked and no `connect_port`, the
/// pairing succeeds but cannot connect (`auth_failed` naming both causes); the next attempt on
/// the channel gives only `host` and `connect_port` — no code, no port — and connects with the
/// key already paired.
#[test]
fn field_bug_36_variant_the_next_attempt_connects_without_a_code() {
    in_netns("fb36c", || async {
        let mut r = rig("SIMFB36KEEP01", false, "debug").await;
        let ports = open_dialog(&r.sim, "223606");
        let e = start_pair_code(&mut r.x, &r.ch, pair_code_input(&ports, "223606", None)).await;
        assert_eq!(e["error"]["code"], "auth_failed", "{e}");
        let message = e["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("`connect_port` was not given"),
            "{message}"
        );
        assert!(message.contains("mDNS is blocked"), "{message}");
        // Another channel has no such pairing: a code is needed there.
        let (other, _) = r.x.open(None).await;
        let bare = json!({"host": "127.0.0.1", "connect_port": ports["connect_port"]});
        let refused = start_pair_code(&mut r.x, &other, bare.clone()).await;
        assert_eq!(refused["error"]["code"], "auth_failed", "{refused}");
        assert!(
            refused.to_string().contains("field `port` is required"),
            "{refused}"
        );

        let ack = start_pair_code(&mut r.x, &r.ch, bare).await;
        assert_bound(&mut r.x, &r.ch, &ack).await;
        assert_eq!(pairing_state(&r.sim), (1, false), "paired once");
        assert_no_secrets(&r, &["223606"]).await;
    });
}

// ---- Row 37: the mDNS instance renamed after a name conflict --------------------------------

/// Pairs `r`'s phone (code flow, `connect_port` as shown), then moves it with `body`
/// (`/v1/wireless/move`) and waits until `android_device_status` answers again: that ack.
async fn move_and_wait(r: &mut Rig, body: Value) -> Value {
    let moved = r.sim.control_json("/v1/wireless/move", body);
    assert!(moved["connect_port"].as_u64().is_some(), "{moved}");
    status_once_reachable(&mut r.x, &r.ch, 90).await
}

/// Row 37 (pizi-0/flutter-scrcpygui#31): a bound, Wi-Fi-paired phone moves and re-announces as
/// `<GUID> (2)._adb-tls-connect._tcp.local.`: the follower matches it by GUID with the conflict
/// suffix ignored; `android_device_status` answers again and the descriptor reads `connected`.
#[test]
fn field_bug_37_renamed_instance_is_followed_by_guid() {
    in_netns("fb37", || async {
        let mut r = rig("SIMFB37RENAME", true, "debug").await;
        pair_bound(&mut r, "271828").await;
        let ack = move_and_wait(&mut r, json!({"conflict_suffix": 2})).await;
        assert!(ack.get("error").is_none(), "log:\n{}\n{ack}", r.conn.logs());
        assert_eq!(descriptor_status(&mut r.x, &r.ch).await, "connected");
        assert!(r
            .conn
            .logs()
            .contains("wireless phone found at a new address"));
    });
}

/// Row 37, variant: two stale records and one live. The phone moves as `<GUID> (2)` leaving
/// `<GUID>` at its dead port, then as `<GUID> (3)` leaving `(2)` dead too; each time the live
/// record is found (every announced record is tried, freshest first, and checked to be this
/// phone).
#[test]
fn field_bug_37_variant_stale_records_never_mask_the_live_one() {
    in_netns("fb37b", || async {
        let mut r = rig("SIMFB37STALE1", true, "debug").await;
        pair_bound(&mut r, "314159").await;
        for n in [2, 3] {
            let body = json!({"conflict_suffix": n, "keep_stale": true});
            let ack = move_and_wait(&mut r, body).await;
            assert!(ack.get("error").is_none(), "suffix ({n}): {ack}");
        }
        let port = r.sim.state()["wireless"]["connect_port"].clone();
        let data = r.dir.path().display().to_string();
        let (_, out, _) =
            common::procs::run_cli(&["devices", "--json", "--data-dir", &data, "--adb-server", ""]);
        assert!(out.contains(&format!("tcp:127.0.0.1:{port}")), "{out}");
    });
}

/// Row 37, variant: the phone is renamed `<GUID> (4)` while the connector is down; the
/// restarted connector finds it at its stored address no more (dead) and follows it by GUID
/// through the answer to its own query (no announcement since it started).
#[test]
fn field_bug_37_variant_renamed_while_the_connector_was_down() {
    in_netns("fb37c", || async {
        let mut r = rig("SIMFB37DOWN01", true, "debug").await;
        pair_bound(&mut r, "161803").await;
        r.conn.kill();
        r.sim
            .control_json("/v1/wireless/move", json!({"conflict_suffix": 4}));
        r.conn.restart();
        let mut z = connect(&r.conn.addr).await;
        z.hello(&r.id).await;
        z.open(Some(&r.ch)).await;
        let ack = status_once_reachable(&mut z, &r.ch, 90).await;
        assert!(ack.get("error").is_none(), "{ack}");
    });
}

// ---- Row 38: re-pair right after the phone forgot the key -----------------------------------

/// Row 38 (appdevforall/CodeOnTheGo PR #419): the phone revokes the connector's key and the
/// user pairs again at once, on the bound channel, before the connector saw the refusal: the
/// same phone re-pairing on its own channel is accepted (`authenticated`, tools run).
#[test]
fn field_bug_38_re_pair_right_after_a_revoke_is_accepted() {
    in_netns("fb38", || async {
        let mut r = rig("SIMFB38AGAIN1", true, "debug").await;
        pair_bound(&mut r, "271828").await;
        let revoked = r.sim.control_json("/v1/auth", json!({"action": "revoke"}));
        assert_eq!(revoked["accepted"], 0, "{revoked}");
        let ports = open_dialog(&r.sim, "828459");
        let input = pair_code_input(&ports, "828459", Some(ports["connect_port"].clone()));
        let ack = start_pair_code(&mut r.x, &r.ch, input).await;
        assert_bound(&mut r.x, &r.ch, &ack).await;
        assert_no_secrets(&r, &["271828", "828459"]).await;
    });
}

/// Row 38, variant: after the revoke the descriptor turns `revoked` (the spec's status for an
/// unauthorized phone) as soon as the phone refuses the key, tools say "pair it again"; pairing
/// again then brings `connected` back.
#[test]
fn field_bug_38_variant_descriptor_revoked_then_pair_again() {
    in_netns("fb38b", || async {
        let mut r = rig("SIMFB38SEEN01", true, "debug").await;
        pair_bound(&mut r, "314159").await;
        r.sim.control_json("/v1/auth", json!({"action": "revoke"}));
        assert_eq!(pushed_status(&mut r.x, "revoked", 60).await, "revoked");
        let tool = r.x.tool(&r.ch, "android_device_status", json!({})).await;
        assert_eq!(tool["error"]["code"], "device_unauthorized", "{tool}");
        assert!(tool.to_string().contains("pair it again"), "{tool}");
        pair_bound(&mut r, "141421").await;
        assert_eq!(descriptor_status(&mut r.x, &r.ch).await, "connected");
    });
}

/// Row 38, variant: re-pairing through the QR flow on the bound channel right after a revoke is
/// accepted too.
#[test]
fn field_bug_38_variant_re_pair_by_qr_on_the_bound_channel() {
    in_netns("fb38c", || async {
        let mut r = rig("SIMFB38QRCODE", true, "debug").await;
        pair_bound(&mut r, "161803").await;
        r.sim.control_json("/v1/auth", json!({"action": "revoke"}));
        let start =
            r.x.request("auth.start", Some(&r.ch), json!({"flow_id": "adb_qr_pair"}))
                .await;
        assert_eq!(start["payload"]["status"], "pending", "{start}");
        let qr = start["payload"]["qr_code_text"]
            .as_str()
            .unwrap()
            .to_string();
        let session = start["payload"]["auth_session_id"]
            .as_str()
            .unwrap()
            .to_string();
        r.sim
            .control_json("/v1/pair", json!({ "qr_code_text": qr }));
        let mut last = Value::Null;
        for _ in 0..200 {
            last =
                r.x.request(
                    "auth.status",
                    Some(&r.ch),
                    json!({"flow_id": "adb_qr_pair", "auth_session_id": session}),
                )
                .await;
            if !matches!(
                last["payload"]["status"].as_str(),
                Some("pending" | "scanned")
            ) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
        assert_eq!(
            last["payload"]["status"],
            "authenticated",
            "{last}\nconnector log:\n{}",
            r.conn.logs()
        );
        let ack = status_once_reachable(&mut r.x, &r.ch, 30).await;
        assert!(ack.get("error").is_none(), "{ack}");
    });
}

/// Row 38, variant: re-pairing the phone while it is still connected is accepted; another phone
/// paired on that bound channel is refused at the bind ("already bound to another phone"), and
/// its pairing is kept: after `auth.logout`, `auth.start` with no code binds it.
#[test]
fn field_bug_38_variant_connected_re_pair_and_a_stranger_on_the_channel() {
    in_netns("fb38d", || async {
        let mut r = rig("SIMFB38BOUND1", true, "debug").await;
        pair_bound(&mut r, "577215").await;
        pair_bound(&mut r, "223606").await;
        let stranger = wireless_sim("SIMFB38OTHER1", &r.dir.path().join("sim-2"), true);
        let ports = open_dialog(&stranger, "173205");
        let input = pair_code_input(&ports, "173205", Some(ports["connect_port"].clone()));
        let taken = start_pair_code(&mut r.x, &r.ch, input).await;
        assert_eq!(taken["error"]["code"], "auth_failed", "{taken}");
        assert!(
            taken.to_string().contains("already bound to another phone"),
            "{taken}"
        );
        let out = r.x.request("auth.logout", Some(&r.ch), json!({})).await;
        assert!(out.get("error").is_none(), "{out}");
        let bare = json!({"host": "127.0.0.1", "connect_port": ports["connect_port"]});
        let ack = start_pair_code(&mut r.x, &r.ch, bare).await;
        assert_bound(&mut r.x, &r.ch, &ack).await;
        let d =
            r.x.request("connection.descriptor.get", Some(&r.ch), json!({}))
                .await;
        assert!(
            d.to_string().contains("SIM…HER1"),
            "the stranger is bound now: {d}"
        );
    });
}

// ---- L8: the serial inside the GUID never reaches the log -----------------------------------

/// Hardening L8: with `RUST_LOG=trace` the whole log — pairing, the mDNS lookups and events of
/// a phone moving and renamed, the follower — never carries the full serial, which the GUID
/// (`adb-<serial>-…`) holds.
#[test]
fn l8_trace_log_never_carries_the_full_serial() {
    in_netns("l8", || async {
        let serial = "SIMFBL8TRACE7";
        let mut r = rig(serial, true, "trace").await;
        let ports = open_dialog(&r.sim, "271828");
        let guid = ports["guid"].as_str().unwrap().to_string();
        assert!(guid.contains(serial), "{guid}");
        let ack = start_pair_code(&mut r.x, &r.ch, pair_code_input(&ports, "271828", None)).await;
        assert_bound(&mut r.x, &r.ch, &ack).await;
        let ack = move_and_wait(&mut r, json!({"conflict_suffix": 2, "keep_stale": true})).await;
        assert!(ack.get("error").is_none(), "{ack}");
        let logs = r.conn.logs();
        assert!(logs.contains(" TRACE "), "the log is at trace");
        assert!(
            logs.contains("mDNS record resolved"),
            "mDNS events are logged"
        );
        for line in logs.lines() {
            assert!(!line.contains(serial), "full serial logged: {line}");
        }
        assert_no_secrets(&r, &["271828"]).await;
    });
}
