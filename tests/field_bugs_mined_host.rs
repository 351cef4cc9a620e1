//! Mined field rows about the adb host protocol and server (`docs/field-bugs.md`, "Mined rows
//! (issue 19 §2)", rows 54 to 57 and 65 — the last an `adb connect` transport adb 34 and 29
//! list `offline` for good, driven with the sim's `stalled` transport), through the real path: WebSocket → connector binary →
//! adb server → simulated phone. The phone is `adb connect`ed to Google adb 34; the connector
//! talks to a stand-in in front of it (below) that passes every byte through, except that,
//! while told to, it answers a device service request (`shell…`, `exec:…`, `sync:`, sent after
//! adb 34 accepted `host:transport-id:N`) with the `FAIL` adb sends in that situation — the
//! one thing a simulated phone cannot make adb 34 say on demand: a transport still
//! authorizing or connecting (AOSP `transport.cpp` `acquire_one_transport`), or adbd closing
//! the stream before it opened (`CLSE` for the `OPEN`, relayed as `closed`, AOSP
//! `sockets.cpp`). The texts are the fixtures' (`tests/fixtures/host-protocol/`): the line
//! adb's client printed, `error: TEXT`.

mod common;

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::Phones;
use common::procs::{ConnectorProc, SimPhone, TempDir};
use common::scenario::{
    adb_bench, claim_when_visible, claimed_channel, connector_behind, sims_behind_adb34,
};
use common::usb_listing::{self, Renames};
use common::xagent::XAgent;

/// What adb's client printed for a server `FAIL` (`error: TEXT`), read from a fixture's
/// lines: the server's text.
fn fail_text(fixture: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/host-protocol/{fixture}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or_else(|| panic!("{path} has no `error: ` line"))
        .to_string()
}

/// While `Some`, every device service request is answered `FAIL` with this text.
#[derive(Clone, Default)]
struct Refusal(Arc<Mutex<Option<String>>>);

impl Refusal {
    fn set(&self, text: Option<String>) {
        *self.0.lock().unwrap() = text;
    }
    fn get(&self) -> Option<String> {
        self.0.lock().unwrap().clone()
    }
}

async fn read_hex(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).await?;
    let n = usize::from_str_radix(std::str::from_utf8(&len).unwrap_or("x"), 16)
        .map_err(|_| std::io::Error::other("bad length"))?;
    let mut body = vec![0u8; n];
    s.read_exact(&mut body).await?;
    Ok(body)
}

fn hex(body: &[u8]) -> Vec<u8> {
    let mut out = format!("{:04x}", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// Starts the stand-in in front of the adb server at `upstream`; its `HOST:PORT`.
async fn start_stand_in(upstream: String, refusal: Refusal) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let (upstream, refusal) = (upstream.clone(), refusal.clone());
            tokio::spawn(async move {
                let _ = serve(client, &upstream, &refusal).await;
            });
        }
    });
    addr
}

async fn serve(mut client: TcpStream, upstream: &str, refusal: &Refusal) -> std::io::Result<()> {
    let first = read_hex(&mut client).await?;
    let mut up = TcpStream::connect(upstream).await?;
    up.write_all(&hex(&first)).await?;
    if first.starts_with(b"host:transport") {
        let mut status = [0u8; 4];
        up.read_exact(&mut status).await?;
        client.write_all(&status).await?;
        if &status == b"OKAY" {
            let service = read_hex(&mut client).await?;
            if let Some(text) = refusal.get() {
                client.write_all(b"FAIL").await?;
                return client.write_all(&hex(text.as_bytes())).await;
            }
            up.write_all(&hex(&service)).await?;
        }
    }
    tokio::io::copy_bidirectional(&mut client, &mut up).await?;
    Ok(())
}

/// One simulated phone behind adb 34 and the stand-in, a connector on the stand-in, and the
/// phone claimed on a new channel.
struct Bench {
    sim: SimPhone,
    _adb: AdbServer,
    _dir: TempDir,
    _conn: ConnectorProc,
    x: XAgent,
    ch: String,
    refusal: Refusal,
}

async fn bench(tag: &str, serial: &str) -> Bench {
    let (mut sims, adb) = sims_behind_adb34(&[serial]);
    let refusal = Refusal::default();
    let stand_in = start_stand_in(adb.addr(), refusal.clone()).await;
    let (dir, conn, mut x) = connector_behind(tag, &stand_in, &["--claim-policy", "open"]).await;
    let (ch, _) = x.open(None).await;
    let ack = claim_when_visible(&mut x, &ch, serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    Bench {
        sim: sims.remove(0),
        _adb: adb,
        _dir: dir,
        _conn: conn,
        x,
        ch,
        refusal,
    }
}

fn code(ack: &Value) -> &str {
    ack["error"]["code"].as_str().unwrap_or("")
}

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

/// Row 54 (openstf/adbkit#130, flutter/flutter#27456): the server refuses the service with
/// `device still authorizing` — the phone is listed, its key exchange not finished (the
/// prompt is showing). Before: `device_command_failed` "adb refused the request: device
/// still authorizing". Now `device_unauthorized` naming the prompt and the retry; once the
/// key is accepted the same call works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_54_device_still_authorizing_names_the_prompt_and_the_retry() {
    let mut b = bench("fb54", "FB54AUTH0001").await;
    b.refusal.set(Some(fail_text(
        "adb-server-fail-device-still-authorizing.txt",
    )));
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 5, "y": 6}))
            .await;
    assert_eq!(code(&ack), "device_unauthorized", "{ack}");
    let m = message(&ack);
    assert!(m.contains("device still authorizing"), "quotes adb: {m}");
    assert!(
        m.contains("Allow USB debugging?") && m.contains("retry"),
        "{m}"
    );
    assert!(!m.contains("adb refused the request"), "{m}");
    assert_eq!(b.sim.count_runs(&["input", "tap", "5", "6"]), 0);
    b.refusal.set(None);
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 5, "y": 6}))
            .await;
    assert!(ack.get("error").is_none(), "the retry works: {ack}");
    assert_eq!(b.sim.count_runs(&["input", "tap", "5", "6"]), 1);
}

/// Row 54 variants: the same passing state on other services (`exec:` of a screenshot, the
/// shell of the status tool), and its network twin `device still connecting` (an `adb
/// connect` transport not yet answered): `device_offline`, retry, never `device_command_failed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_54_variants_still_connecting_and_other_services() {
    let mut b = bench("fb54v", "FB54CONN0001").await;
    b.refusal.set(Some(fail_text(
        "adb-server-fail-device-still-authorizing.txt",
    )));
    let ack = b.x.tool(&b.ch, "android_screenshot", json!({})).await;
    assert_eq!(code(&ack), "device_unauthorized", "{ack}");
    assert!(message(&ack).contains("still authorizing"), "{ack}");
    b.refusal.set(Some("device still connecting".into()));
    for (tool, input) in [
        ("android_device_status", json!({})),
        ("android_screenshot", json!({})),
        ("android_press_key", json!({"key": "HOME"})),
    ] {
        let ack = b.x.tool(&b.ch, tool, input).await;
        assert_eq!(code(&ack), "device_offline", "{tool}: {ack}");
        let m = message(&ack);
        assert!(
            m.contains("device still connecting") && m.contains("retry"),
            "{tool}: {m}"
        );
    }
    b.refusal.set(None);
    let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

/// Row 55 (dwaan/homebridge-adb#84, Samsung SM-T235: `error: closed` while `adb connect`
/// said "already connected"; openatx/uiautomator2#1153 `AdbError: closed` over USB): adbd
/// closes the service before it opens. Before: `device_command_failed` "adb refused the
/// request: closed". Now `device_offline` naming the stale connection and its fixes (`adb
/// reconnect`, replug, toggle debugging) and the service's kind, never the command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_55_closed_by_adbd_is_a_stale_connection_with_its_fix() {
    let mut b = bench("fb55", "FB55CLSD0001").await;
    b.refusal.set(Some(fail_text("adb-server-fail-closed.txt")));
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 7, "y": 8}))
            .await;
    assert_eq!(code(&ack), "device_offline", "{ack}");
    let m = message(&ack);
    assert!(m.contains("closed the `shell` request"), "{m}");
    assert!(
        m.contains("adb reconnect") && m.contains("off and on"),
        "{m}"
    );
    assert!(
        !m.contains("tap") && !m.contains("input"),
        "never the command: {m}"
    );
    assert_eq!(b.sim.count_runs(&["input", "tap", "7", "8"]), 0);
    b.refusal.set(None);
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 7, "y": 8}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(b.sim.count_runs(&["input", "tap", "7", "8"]), 1);
}

/// Row 55 variants: `closed` for the other services (`sync:` of a file pull, the screenshot's
/// capture, the free shell tool): each names its own kind and the same fix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_55_variants_closed_on_sync_exec_and_shell_tools() {
    let mut b = bench("fb55v", "FB55CLSD0002").await;
    b.refusal.set(Some(fail_text("adb-server-fail-closed.txt")));
    for (tool, input) in [
        (
            "android_file_pull",
            json!({"path": "/sdcard/Download/a.txt"}),
        ),
        ("android_screenshot", json!({})),
        ("android_ui_tree", json!({})),
    ] {
        let ack = b.x.tool(&b.ch, tool, input).await;
        assert_eq!(code(&ack), "device_offline", "{tool}: {ack}");
        let m = message(&ack);
        assert!(
            m.contains("adbd closed the `") && m.contains("adb reconnect"),
            "{tool}: {m}"
        );
        assert!(!m.contains("/sdcard"), "{tool}: never the path: {m}");
    }
    b.refusal.set(None);
    let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

/// The fixture's `error: ` lines, in order.
fn fail_texts(fixture: &str) -> Vec<String> {
    let path = format!(
        "{}/tests/fixtures/host-protocol/{fixture}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("error: "))
        .map(str::to_string)
        .collect()
}

/// Row 56 (vidstige/jadb#152; LmeSzinc/AzurLaneAutoScript PR #997): a Wi-Fi (`adb connect`)
/// phone the connector still lists `device`, and the server answers the call `device
/// offline`. Before: `device_offline` "device offline", no fix. Now the route's fix, the same
/// as the inventory's `offline` state gives (`adb reconnect`, then Wireless debugging off and
/// on, `adb disconnect`/`adb connect`); the call works once the transport is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_56_device_offline_from_the_server_names_the_wifi_fix() {
    let mut b = bench("fb56", "FB56OFFL0001").await;
    let texts = fail_texts("adb-server-fail-device-offline-wifi.txt");
    b.refusal.set(Some(texts[0].clone()));
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 9, "y": 9}))
            .await;
    assert_eq!(code(&ack), "device_offline", "{ack}");
    let m = message(&ack);
    assert!(m.contains("`device offline`"), "quotes adb: {m}");
    assert!(
        m.contains("adb reconnect") && m.contains("Wireless debugging"),
        "names the Wi-Fi fix: {m}"
    );
    b.refusal.set(None);
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"x": 9, "y": 9}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(b.sim.count_runs(&["input", "tap", "9", "9"]), 1);
}

/// Row 56 variants: `device 'X' not found` (the server dropped the transport before its list
/// said so): the phone-gone fix for a Wi-Fi phone (`adb connect` again), never the serial;
/// and `device offline` on the screenshot's `exec:` and the status tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_56_variants_not_found_and_other_tools() {
    let mut b = bench("fb56v", "FB56OFFL0002").await;
    let texts = fail_texts("adb-server-fail-device-offline-wifi.txt");
    b.refusal.set(Some(texts[1].clone()));
    let ack =
        b.x.tool(&b.ch, "android_press_key", json!({"key": "HOME"}))
            .await;
    assert_eq!(code(&ack), "device_offline", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("no longer lists") && m.contains("adb connect"),
        "{m}"
    );
    assert!(
        !m.contains("192.0.2.7") && !m.contains("FB56OFFL0002"),
        "{m}"
    );
    b.refusal.set(Some(texts[0].clone()));
    for (tool, input) in [
        ("android_screenshot", json!({})),
        ("android_device_status", json!({})),
    ] {
        let ack = b.x.tool(&b.ch, tool, input).await;
        assert_eq!(code(&ack), "device_offline", "{tool}: {ack}");
        assert!(message(&ack).contains("adb reconnect"), "{tool}: {ack}");
    }
    b.refusal.set(None);
    let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

/// The mDNS transport names of fixture `devices/adb-mdns-conflict-renamed-serial-with-space-long.txt`
/// (defold/defold#12723: `adb-13e75597-Upleco (2)._adb-tls-connect._tcp`), for `serial`.
fn renamed_instance(serial: &str, suffix: &str) -> String {
    let fixture = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/devices/adb-mdns-conflict-renamed-serial-with-space-long.txt"
    ));
    let listed = fixture
        .lines()
        .find(|l| l.contains(" (2)._adb-tls-connect"))
        .and_then(|l| l.split("._adb-tls-connect").next())
        .expect("fixture line");
    assert!(listed.ends_with(" (2)"), "{listed}");
    format!("adb-{serial}-Upleco{suffix}._adb-tls-connect._tcp")
}

/// Row 57 (defold/defold#12723): adb lists a wireless-debugging phone by its mDNS instance,
/// renamed ` (2)` after a name conflict (the phone re-announced after a Wi-Fi reconnect), so
/// the serial holds a space in `host:track-devices-l`'s `%-22s` long form. Before: the serial
/// was cut at the space (`adb-…-Upleco`) and the state read as `(2)._adb-tls-connect._tcp
/// device`, an unknown state: the phone could not be claimed. Now the whole name is the
/// serial and the phone is claimed and used (sim behind adb 34, listed under that name by
/// the stand-in `tests/common/usb_listing.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_57_mdns_serial_with_a_conflict_suffix_is_one_serial() {
    let (sims, adb) = sims_behind_adb34(&["FB57MDNS0001"]);
    let renames = Renames::default();
    renames.add(&sims[0].addr, &renamed_instance("FB57MDNS0001", " (2)"));
    let listing = usb_listing::start(adb.addr(), renames).await;
    let (_dir, _conn, mut x) =
        connector_behind("fb57", &listing, &["--claim-policy", "open"]).await;
    let (ch, _) = x.open(None).await;
    let ack = claim_when_visible(&mut x, &ch, "FB57MDNS0001").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let ack = x.tool(&ch, "android_tap", json!({"x": 4, "y": 2})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(sims[0].count_runs(&["input", "tap", "4", "2"]), 1);
}

/// Row 57 variants: a second rename (` (3)`) next to an unrenamed instance of another phone,
/// both claimable on their own channels, each tap reaching its own phone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_57_variants_second_rename_next_to_a_plain_instance() {
    let (sims, adb) = sims_behind_adb34(&["FB57MDNS0002", "FB57MDNS0003"]);
    let renames = Renames::default();
    renames.add(&sims[0].addr, &renamed_instance("FB57MDNS0002", " (3)"));
    renames.add(&sims[1].addr, &renamed_instance("FB57MDNS0003", ""));
    let listing = usb_listing::start(adb.addr(), renames).await;
    let (_dir, _conn, mut x) =
        connector_behind("fb57v", &listing, &["--claim-policy", "open"]).await;
    for (i, serial) in ["FB57MDNS0002", "FB57MDNS0003"].iter().enumerate() {
        let (ch, _) = x.open(None).await;
        let ack = claim_when_visible(&mut x, &ch, serial).await;
        assert_eq!(ack["payload"]["status"], "authenticated", "{serial}: {ack}");
        let ack = x.tool(&ch, "android_tap", json!({"x": 6, "y": i})).await;
        assert!(ack.get("error").is_none(), "{serial}: {ack}");
        assert_eq!(
            sims[i].count_runs(&["input", "tap", "6", &i.to_string()]),
            1,
            "{serial}"
        );
    }
}

// ---- 65: an `adb connect` transport the server lists `offline` for good ---------------------

/// `POST /v1/transport` of the sim.
fn transport(sim: &SimPhone, state: &str) {
    assert_eq!(
        sim.control_post("/v1/transport", json!({ "state": state })),
        200
    );
}

/// The state `adb devices` lists for `addr` on `adb` (empty when not listed).
fn listed_state(adb: &AdbServer, addr: &str) -> String {
    let out = adb.run(&["devices"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix(addr).map(|r| r.trim().to_string()))
        .unwrap_or_default()
}

/// Polls `adb devices` until `addr` is listed `want` (≤ 30 s).
async fn until_listed(adb: &AdbServer, addr: &str, want: &str) {
    for _ in 0..300 {
        if listed_state(adb, addr) == want {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{addr} never listed {want}: {}", listed_state(adb, addr));
}

/// The sim's connection is dropped and adb's re-dial lands on a connection the phone lost
/// (`stalled`); the phone is fine again, and adb lists the transport `offline` with `adb
/// connect` answering `already connected` — the reported state (fixture lines).
async fn stuck_offline(adb: &AdbServer, sim: &SimPhone) {
    let before = sim.state()["lost_connections"].as_u64().unwrap();
    transport(sim, "stalled");
    until_listed(adb, &sim.addr, "offline").await;
    // adb's re-dial reached the phone and was lost (not one before the phone was back).
    for _ in 0..300 {
        if sim.state()["lost_connections"].as_u64().unwrap() > before {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(sim.state()["lost_connections"].as_u64().unwrap() > before);
    transport(sim, "online");
    let reported =
        include_str!("fixtures/host-protocol/superwirelessadb-3-wifi-transport-stuck-offline.txt");
    assert!(reported.contains("offline") && reported.contains("already connected to"));
    let out = adb.run(&["connect", &sim.addr]);
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(
        said.trim(),
        format!("already connected to {}", sim.addr),
        "{said}"
    );
    assert_eq!(listed_state(adb, &sim.addr), "offline");
}

/// Calls `android_device_status` until it succeeds (≤ 90 s), returning the codes of the
/// failed calls before.
async fn status_until_ok(x: &mut XAgent, ch: &str) -> Vec<String> {
    let mut failed = Vec::new();
    for _ in 0..180 {
        let ack = x.tool(ch, "android_device_status", json!({})).await;
        if ack.get("error").is_none() {
            assert!(ack["payload"]["result"].is_object(), "{ack}");
            return failed;
        }
        failed.push(ack["error"]["code"].as_str().unwrap_or("?").to_string());
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    panic!("status never answered: {failed:?}");
}

/// Row 65: an `adb connect` phone whose re-dial lost its handshake stays `offline` in Google
/// adb 34 for good (it has no handshake timeout; `adb connect` only says `already connected`,
/// rpuxa/SuperWirelessAdb#3); before, the connector waited with it (its calls `device_offline`
/// for as long as adb kept the transport). Now a `HOST:PORT` transport listed `offline` for
/// `STALE_AFTER` is disconnected and dialed afresh (`host:disconnect`, `host:connect`): the
/// channel comes back by itself, on a new connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_65_wifi_transport_stuck_offline_is_dialed_afresh() {
    let mut b = adb_bench("SIMFB65000001", &[]).await;
    assert!(status_until_ok(&mut b.x, &b.ch).await.is_empty());
    stuck_offline(&b.adb, &b.sim).await;
    let failed = status_until_ok(&mut b.x, &b.ch).await;
    assert!(
        !failed.is_empty() && failed.iter().all(|c| c == "device_offline"),
        "{failed:?}"
    );
    assert_eq!(listed_state(&b.adb, &b.sim.addr), "device");
    let logs = b.conn.logs();
    assert!(
        logs.contains("disconnecting it and dialing it again"),
        "{logs}"
    );
}

/// Variants of row 65: Debian's adb 29 server keeps the lost re-dial `offline` the same way and
/// is cured the same way; a phone away when the connector looks (its port refuses) is left to
/// adb (nothing disconnected, calls `device_offline`) and dialed afresh once it answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_65_variants_adb29_and_a_phone_away_is_left_to_adb() {
    let sim = SimPhone::start_with_control("SIMFB65V00001", &[]);
    let adb = AdbServer::start(AdbFlavor::Debian29);
    adb.connect(&sim.addr);
    let dir = TempDir::new("fb65v");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    stuck_offline(&adb, &sim).await;
    let failed = status_until_ok(&mut x, &ch).await;
    assert!(failed.iter().all(|c| c == "device_offline"), "{failed:?}");
    assert_eq!(listed_state(&adb, &sim.addr), "device");
    assert!(conn
        .logs()
        .contains("disconnecting it and dialing it again"));

    // Google adb 34: stuck, and the phone away (its port refuses) when the connector looks:
    // nothing is disconnected (adb's own re-dial would bring a phone back); once it answers,
    // it is dialed afresh.
    let mut b = adb_bench("SIMFB65V00002", &[]).await;
    stuck_offline(&b.adb, &b.sim).await;
    transport(&b.sim, "unplugged");
    const LEFT: &str = "left to the adb server's own re-dial";
    for _ in 0..600 {
        if b.conn.logs().contains(LEFT) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let logs = b.conn.logs();
    assert!(logs.contains(LEFT), "{logs}");
    assert!(
        !logs.contains("disconnecting it and dialing it again"),
        "{logs}"
    );
    assert_eq!(listed_state(&b.adb, &b.sim.addr), "offline");
    let ack = b.x.tool(&b.ch, "android_device_status", json!({})).await;
    assert_eq!(code(&ack), "device_offline", "{ack}");
    assert!(!message(&ack).contains(&b.sim.serial), "{ack}");
    transport(&b.sim, "online");
    status_until_ok(&mut b.x, &b.ch).await;
    assert_eq!(listed_state(&b.adb, &b.sim.addr), "device");
    assert!(b
        .conn
        .logs()
        .contains("disconnecting it and dialing it again"));
}
