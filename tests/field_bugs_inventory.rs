//! Field bugs of round 3 about the inventory's identity of phones (`docs/field-bugs.md`, rows
//! 50 and 51), through the real path: WebSocket → connector binary → adb server → simulated
//! phones. Row 50 (two phones, one serial): behind Google adb 34 directly where adb can show
//! it (TCP phones are named `HOST:PORT`, so two phones reporting one `ro.serialno` are two
//! transports), and for the USB naming (adb lists both under the one serial) through a
//! stand-in server in front of adb 34 that renames the transports as a USB host shows them
//! (`tests/common/usb_listing.rs`). Row 51 (adb server restarted, `adb connect` phones
//! forgotten): adb 34 `kill-server` then `start-server`, no one running `adb connect` again
//! but the connector.

mod common;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{devices_json, ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::{claim_when_visible, connector_behind, sims_behind_adb34};
use common::usb_listing::{self, Renames};
use common::xagent::{connect, XAgent};

/// The serial cheap tablets report when the vendor left it unset (pbreault/adb-idea#100,
/// Swind/pure-python-adb#61).
const SHARED: &str = "0123456789ABCDEF";

/// Claim policy `open`, as `ConnectorProc::start` runs it.
const OPEN: &[&str] = &["--claim-policy", "open"];

fn error_message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

fn ack_message(ack: &Value) -> String {
    ack["payload"]["message"].as_str().unwrap_or("").to_string()
}

/// `auth.start` of `adb_device_claim` with a claim code.
async fn claim_with_code(x: &mut XAgent, ch: &str, serial: &str, code: &str) -> Value {
    x.request(
        "auth.start",
        Some(ch),
        json!({"flow_id": "adb_device_claim", "input": {"serial": serial, "claim_code": code}}),
    )
    .await
}

/// Claims `serial` on a new channel, retrying while the connector has not seen enough
/// phones (≤ 15 s); asserts `authenticated`. The channel and the ack.
async fn claim_new(x: &mut XAgent, serial: &str) -> (String, Value) {
    let (ch, _) = x.open(None).await;
    let ack = claim_when_visible(x, &ch, serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    (ch, ack)
}

/// Taps `(n, n)` on `ch` (`tool_call_id` `tap-n`: unique per test, whichever client sends
/// it); the index in `sims` of the phone that ran it (asserted: exactly one).
async fn tapped(x: &mut XAgent, ch: &str, n: u32, sims: &[&SimPhone]) -> usize {
    let ack = x
        .request(
            "tool.invoke",
            Some(ch),
            json!({"tool_id": "android_tap", "arguments": {"x": n, "y": n, "connector_channel_id": ch},
                   "context": {"session_id": "s1", "tool_call_id": format!("tap-{n}")}}),
        )
        .await;
    assert!(ack.get("error").is_none(), "{ack}");
    let s = n.to_string();
    let hit: Vec<usize> = (0..sims.len())
        .filter(|&i| sims[i].count_runs(&["input", "tap", &s, &s]) == 1)
        .collect();
    assert_eq!(hit.len(), 1, "exactly one phone ran tap {n}: {hit:?}");
    hit[0]
}

/// The connection descriptor of `ch` now.
async fn descriptor(x: &mut XAgent, ch: &str) -> Value {
    let d = x
        .request("connection.descriptor.get", Some(ch), json!({}))
        .await;
    d["payload"]["connection_descriptor"].clone()
}

/// `devices --json` of the connector's data dir against `adb_server`: its rows.
fn devices(dir: &TempDir, adb_server: &str) -> Vec<Value> {
    devices_json(dir.path().to_str().unwrap(), &["--adb-server", adb_server])
}

/// The rows of `rows` reporting `serialno`, their names sorted.
fn names_of(rows: &[Value], serialno: &str) -> Vec<String> {
    let mut names: Vec<String> = rows
        .iter()
        .filter(|r| r["serialno"] == serialno)
        .map(|r| r["serial"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

/// `n` simulated phones all reporting `serial`, connected to one Google adb 34 (each listed
/// there as `127.0.0.1:PORT`).
fn phones_on_adb(serial: &str, n: usize) -> (Vec<SimPhone>, AdbServer) {
    sims_behind_adb34(&vec![serial; n])
}

/// The stand-in in front of `adb` listing every sim of `sims` as `shown[i]`.
async fn renamed(adb: &AdbServer, sims: &[SimPhone], shown: &[&str]) -> String {
    let renames = Renames::default();
    for (s, name) in sims.iter().zip(shown) {
        renames.add(&s.addr, name);
    }
    usb_listing::start(adb.addr(), renames).await
}

// ---- row 50: two phones, one serial ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_50_two_tablets_with_one_usb_serial_are_two_claimable_phones() {
    let (sims, adb) = phones_on_adb(SHARED, 2);
    let usb = renamed(&adb, &sims, &[SHARED, SHARED]).await;
    let (dir, conn, mut x) = connector_behind("fb50", &usb, OPEN).await;
    // Claiming the serial twice binds the two tablets.
    let (ch1, _) = claim_new(&mut x, SHARED).await;
    let (ch2, second) = claim_new(&mut x, SHARED).await;
    let warning = ack_message(&second);
    assert!(
        warning.contains("not unique") && warning.contains("2 phones"),
        "{warning}"
    );
    assert!(warning.contains("followed by `#2`"), "{warning}");
    assert!(
        !warning.contains(SHARED),
        "never the whole serial: {warning}"
    );
    // Each channel reaches its own tablet (services by transport id: the stand-in, as adb,
    // refuses `host:transport:0123456789ABCDEF`).
    let sims_ref: Vec<&SimPhone> = sims.iter().collect();
    let a = tapped(&mut x, &ch1, 11, &sims_ref).await;
    let b = tapped(&mut x, &ch2, 22, &sims_ref).await;
    assert_ne!(a, b, "two phones");
    for ch in [&ch1, &ch2] {
        let d = descriptor(&mut x, ch).await;
        assert_eq!(d["connection"]["status"], "connected", "{d}");
        let w = d["target"]["warning"].as_str().unwrap_or("");
        assert!(w.contains("not unique") && !w.contains(SHARED), "{d}");
        let status = x.tool(ch, "android_device_status", json!({})).await;
        assert!(status.get("error").is_none(), "{status}");
    }
    // A third claim: both taken, said so.
    let (ch3, _) = x.open(None).await;
    let third = x.claim(&ch3, SHARED).await;
    assert_eq!(third["error"]["code"], "auth_failed", "{third}");
    assert!(error_message(&third).contains("all 2 phones"), "{third}");
    // `devices` lists both, each with its transport id and the warning.
    let rows = devices(&dir, &usb);
    assert_eq!(
        names_of(&rows, SHARED),
        [SHARED.to_string(), format!("{SHARED}#2")],
        "{rows:?}"
    );
    let ids: Vec<&Value> = rows.iter().map(|r| &r["transport_id"]).collect();
    assert!(
        ids.iter().all(|id| id.is_u64()) && ids[0] != ids[1],
        "{rows:?}"
    );
    assert!(
        rows.iter().all(|r| r["warning"]
            .as_str()
            .is_some_and(|w| w.contains("not unique"))),
        "{rows:?}"
    );
    assert!(
        rows.iter().all(|r| r["connector_channel_id"].is_string()),
        "{rows:?}"
    );
    let logs = conn.logs();
    assert!(logs.contains("the serial is not unique"), "{logs}");
    assert!(
        !logs.contains(SHARED),
        "the log never carries the whole serial"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_50_variants_three_phones_with_one_serial_behind_adb34() {
    let serial = "SIMFB50SHARED";
    let (sims, adb) = phones_on_adb(serial, 3);
    let (dir, _conn, mut x) = connector_behind("fb50v3", &adb.addr(), OPEN).await;
    let sims_ref: Vec<&SimPhone> = sims.iter().collect();
    let mut channels = Vec::new();
    let mut reached = Vec::new();
    for n in 0..3u32 {
        let (ch, _) = claim_new(&mut x, serial).await;
        reached.push(tapped(&mut x, &ch, 30 + n, &sims_ref).await);
        channels.push(ch);
    }
    reached.sort();
    assert_eq!(reached, [0, 1, 2], "three channels, three phones");
    let (ch4, _) = x.open(None).await;
    let fourth = x.claim(&ch4, serial).await;
    assert!(error_message(&fourth).contains("all 3 phones"), "{fourth}");
    // A name claimed explicitly is that phone: taken, it is refused, not another phone.
    let named = x.claim(&ch4, &format!("{serial}#3")).await;
    assert_eq!(named["error"]["code"], "auth_failed", "{named}");
    assert!(error_message(&named).contains("already bound"), "{named}");
    // Released, the bare serial binds the freed phone on another channel.
    let freed = tapped(&mut x, &channels[1], 40, &sims_ref).await;
    let out = x
        .request("auth.logout", Some(&channels[1]), json!({}))
        .await;
    assert!(out.get("error").is_none(), "{out}");
    // The tap is handed back first (`[release]` go_home): `device_releasing` until then.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let again = loop {
        let ack = x.claim(&ch4, serial).await;
        if ack["error"]["code"] != "device_releasing" || std::time::Instant::now() > deadline {
            break ack;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(again["payload"]["status"], "authenticated", "{again}");
    assert_eq!(tapped(&mut x, &ch4, 41, &sims_ref).await, freed);
    let rows = devices(&dir, &adb.addr());
    assert_eq!(
        names_of(&rows, serial),
        [
            serial.to_string(),
            format!("{serial}#2"),
            format!("{serial}#3")
        ],
        "{rows:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_50_variants_an_unplugged_tablet_comes_back_under_its_name() {
    let (sims, adb) = phones_on_adb(SHARED, 2);
    let usb = renamed(&adb, &sims, &[SHARED, SHARED]).await;
    let dir = TempDir::new("fb50replug");
    let mut conn = ConnectorProc::start(dir.path(), Phones::AdbServer(usb.clone()));
    let mut x = connect(&conn.addr).await;
    let id = x.hello_fresh().await;
    let sims_ref: Vec<&SimPhone> = sims.iter().collect();
    let (ch1, _) = claim_new(&mut x, SHARED).await;
    let (ch2, _) = claim_new(&mut x, &format!("{SHARED}#2")).await;
    let first = tapped(&mut x, &ch1, 11, &sims_ref).await;
    let second = tapped(&mut x, &ch2, 12, &sims_ref).await;
    assert_ne!(first, second);
    // Unplugged: its transport goes away; the other tablet carries on.
    let gone = &sims[second];
    let _ = adb.run(&["disconnect", &gone.addr]);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let ack = x.tool(&ch2, "android_device_status", json!({})).await;
        if ack["error"]["code"] == "device_offline" {
            break;
        }
        assert!(Instant::now() < deadline, "never offline: {ack}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(tapped(&mut x, &ch1, 13, &sims_ref).await, first);
    // Re-plugged: a new transport id; the channel reaches the same tablet again.
    adb.connect(&gone.addr);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let ack = x.tool(&ch2, "android_device_status", json!({})).await;
        if ack.get("error").is_none() {
            break;
        }
        assert!(Instant::now() < deadline, "not back: {ack}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(tapped(&mut x, &ch2, 14, &sims_ref).await, second);
    assert_eq!(tapped(&mut x, &ch1, 15, &sims_ref).await, first);
    // The connector restarts: the names are stored, each binding reaches its own tablet.
    drop(x);
    conn.restart();
    let mut y = connect(&conn.addr).await;
    y.hello(&id).await;
    for (ch, sim, n) in [(&ch1, first, 16), (&ch2, second, 17)] {
        y.open(Some(ch)).await;
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let ack = y.tool(ch, "android_device_status", json!({})).await;
            if ack.get("error").is_none() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "not back after the restart: {ack}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(tapped(&mut y, ch, n, &sims_ref).await, sim);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_50_variants_two_emulators_of_one_image() {
    // Emulators of one system image all report the image's ro.serialno; adb names them by
    // console port.
    let serial = "EMULATOR34X1X1X0";
    let (sims, adb) = phones_on_adb(serial, 2);
    let listing = renamed(&adb, &sims, &["emulator-5554", "emulator-5556"]).await;
    let (dir, conn, mut x) = connector_behind("fb50emu", &listing, OPEN).await;
    let sims_ref: Vec<&SimPhone> = sims.iter().collect();
    let (ch1, _) = claim_new(&mut x, serial).await;
    let (ch2, _) = claim_new(&mut x, serial).await;
    let a = tapped(&mut x, &ch1, 21, &sims_ref).await;
    let b = tapped(&mut x, &ch2, 22, &sims_ref).await;
    assert_ne!(a, b);
    let rows = devices(&dir, &listing);
    let mut transports: Vec<&str> = rows
        .iter()
        .filter_map(|r| r["transport"].as_str())
        .collect();
    transports.sort();
    assert_eq!(transports, ["emulator-5554", "emulator-5556"], "{rows:?}");
    assert_eq!(names_of(&rows, serial).len(), 2, "{rows:?}");
    drop(conn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_50_variants_one_phone_on_two_transports_stays_one_phone() {
    // One phone `adb connect`ed under two addresses: one Android ID, so one phone with a
    // fallback route — never a second claimable phone.
    let sim = SimPhone::start_with_control("SIMFB50ONE0001", &[]);
    let adb = AdbServer::start(AdbFlavor::Google34);
    let port = sim.addr.rsplit_once(':').unwrap().1.to_string();
    adb.connect(&format!("127.0.0.1:{port}"));
    adb.connect(&format!("localhost:{port}"));
    let (dir, conn, mut x) = connector_behind("fb50one", &adb.addr(), OPEN).await;
    let deadline = Instant::now() + Duration::from_secs(15);
    while !conn.logs().contains("reachable through two routes") {
        assert!(Instant::now() < deadline, "both routes never seen");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (_, first) = claim_new(&mut x, &sim.serial).await;
    assert!(!ack_message(&first).contains("not unique"), "{first}");
    let (ch2, _) = x.open(None).await;
    let second = x.claim(&ch2, &sim.serial).await;
    assert_eq!(second["error"]["code"], "auth_failed", "{second}");
    assert!(error_message(&second).contains("already bound"), "{second}");
    assert!(!conn.logs().contains("the serial is not unique"));
    let rows = devices(&dir, &adb.addr());
    assert!(
        rows.iter()
            .all(|r| r["serial"] == sim.serial && r["warning"].is_null()),
        "{rows:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_50_variants_claim_codes_of_a_shared_serial() {
    let serial = "SIMFB50CODES";
    let (sims, adb) = phones_on_adb(serial, 2);
    // One code for the serial, and the second phone its own.
    let codes = std::env::temp_dir().join(format!("xagent-fb50-codes-{}.toml", std::process::id()));
    std::fs::write(
        &codes,
        format!("[claim_codes]\n{serial} = \"code-one\"\n\"{serial}#2\" = \"code-two\"\n"),
    )
    .unwrap();
    let codes_flag = codes.to_str().unwrap().to_string();
    let (dir, _conn, mut x) = connector_behind(
        "fb50codes",
        &adb.addr(),
        &["--claim-policy", "code", "--config", &codes_flag],
    )
    .await;
    let sims_ref: Vec<&SimPhone> = sims.iter().collect();
    // Wait for both phones (the second name).
    let deadline = Instant::now() + Duration::from_secs(15);
    while !names_of(&devices(&dir, &adb.addr()), serial).contains(&format!("{serial}#2")) {
        assert!(Instant::now() < deadline, "second phone never named");
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // The second phone's own code, with the bare serial, binds that phone.
    let (ch1, _) = x.open(None).await;
    let ack = claim_with_code(&mut x, &ch1, serial, "code-two").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    assert!(ack_message(&ack).contains("followed by `#2`"), "{ack}");
    let second = tapped(&mut x, &ch1, 51, &sims_ref).await;
    // The serial's code does not open the phone that has its own.
    let (ch2, _) = x.open(None).await;
    let wrong = claim_with_code(&mut x, &ch2, &format!("{serial}#2"), "code-one").await;
    assert_eq!(wrong["error"]["code"], "auth_failed", "{wrong}");
    assert!(error_message(&wrong).contains("does not match"), "{wrong}");
    // It opens the first phone.
    let ack = claim_with_code(&mut x, &ch2, serial, "code-one").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    assert_ne!(tapped(&mut x, &ch2, 52, &sims_ref).await, second);
    let _ = std::fs::remove_file(&codes);
}

// ---- row 51: the adb server restarted and forgot the `adb connect` phones ----

/// A phone `adb connect`ed to its own Google adb 34, a connector through that server, and the
/// phone claimed on a fresh channel.
struct RestartBench {
    sims: Vec<SimPhone>,
    adb: AdbServer,
    conn: ConnectorProc,
    x: XAgent,
    channels: Vec<String>,
    _dir: TempDir,
}

async fn restart_bench(serials: &[&str]) -> RestartBench {
    let (sims, adb) = sims_behind_adb34(serials);
    let (dir, conn, mut x) = connector_behind("fb51", &adb.addr(), OPEN).await;
    let mut channels = Vec::new();
    for s in serials {
        channels.push(claim_new(&mut x, s).await.0);
    }
    RestartBench {
        sims,
        adb,
        conn,
        x,
        channels,
        _dir: dir,
    }
}

impl RestartBench {
    /// `adb kill-server; adb start-server`, as another tool's adb does.
    fn restart_server(&self) {
        let _ = self.adb.run(&["kill-server"]);
        let out = self.adb.run(&["start-server"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `android_device_status` on channel `i` until it succeeds (≤ 40 s); every error code seen.
    async fn until_back(&mut self, i: usize) -> Vec<String> {
        let ch = self.channels[i].clone();
        let deadline = Instant::now() + Duration::from_secs(40);
        let mut codes = Vec::new();
        loop {
            let ack = self.x.tool(&ch, "android_device_status", json!({})).await;
            match ack["error"]["code"].as_str() {
                None => return codes,
                Some(code) => codes.push(code.to_string()),
            }
            assert!(
                Instant::now() < deadline,
                "the channel never came back: {ack}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_51_an_adb_connect_phone_comes_back_after_the_server_restarts() {
    let mut b = restart_bench(&["SIMFB51000001"]).await;
    let ack =
        b.x.tool(&b.channels[0], "android_device_status", json!({}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
    b.restart_server();
    b.until_back(0).await;
    let ch = b.channels[0].clone();
    let ack = b.x.tool(&ch, "android_tap", json!({"x": 7, "y": 8})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(b.sims[0].count_runs(&["input", "tap", "7", "8"]), 1);
    let logs = b.conn.logs();
    assert!(
        logs.contains("connecting them again") && logs.contains(&b.sims[0].addr),
        "{logs}"
    );
    assert!(logs.contains("connected the phone again"), "{logs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_51_variants_the_server_restarted_twice() {
    let mut b = restart_bench(&["SIMFB51TWICE1"]).await;
    for round in 1..=2 {
        b.restart_server();
        b.until_back(0).await;
        let n = (60 + round).to_string();
        let ch = b.channels[0].clone();
        let ack =
            b.x.tool(
                &ch,
                "android_tap",
                json!({"x": 60 + round, "y": 60 + round}),
            )
            .await;
        assert!(ack.get("error").is_none(), "round {round}: {ack}");
        assert_eq!(b.sims[0].count_runs(&["input", "tap", &n, &n]), 1);
    }
    assert_eq!(
        b.conn.logs().matches("connected the phone again").count(),
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_51_variants_a_phone_gone_for_good_is_offline_with_the_fix() {
    let mut b = restart_bench(&["SIMFB51GONE01"]).await;
    let sim = b.sims.remove(0);
    let addr = sim.addr.clone();
    let _ = sim.unplug();
    b.restart_server();
    // Tried again with back-off, then given up: `device_offline` naming the address and the fix.
    let ch = b.channels[0].clone();
    let deadline = Instant::now() + Duration::from_secs(60);
    let last = loop {
        let ack = b.x.tool(&ch, "android_device_status", json!({})).await;
        let m = error_message(&ack);
        if m.contains("every attempt failed") {
            break ack;
        }
        assert!(Instant::now() < deadline, "never gave up: {ack}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(last["error"]["code"], "device_offline", "{last}");
    let m = error_message(&last);
    assert!(
        m.contains(&addr) && m.contains("adb connect"),
        "names the address and the fix: {m}"
    );
    assert!(b.conn.logs().contains("does not answer `adb connect`"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_51_variants_an_operator_disconnect_is_not_undone() {
    let mut b = restart_bench(&["SIMFB51KEEP01", "SIMFB51DROP01"]).await;
    let dropped = b.sims[1].addr.clone();
    // The operator disconnects the second phone while the server runs.
    let _ = b.adb.run(&["disconnect", &dropped]);
    let ch = b.channels[1].clone();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let ack = b.x.tool(&ch, "android_device_status", json!({})).await;
        if ack["error"]["code"] == "device_offline" {
            break;
        }
        assert!(Instant::now() < deadline, "{ack}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    b.restart_server();
    b.until_back(0).await;
    // Only the phone the operator left connected was asked for again.
    let logs = b.conn.logs();
    let line = logs
        .lines()
        .find(|l| l.contains("connecting them again"))
        .unwrap_or_else(|| panic!("{logs}"));
    assert!(
        line.contains(&b.sims[0].addr) && !line.contains(&dropped),
        "{line}"
    );
    let listed = String::from_utf8_lossy(&b.adb.run(&["devices"]).stdout).to_string();
    assert!(!listed.contains(&dropped), "{listed}");
}
