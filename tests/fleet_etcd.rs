//! Issue 22: many boxes, one etcd — through the real path: real etcd servers (Debian's
//! `etcd-server`, a single node and a three-member cluster, `tests/common/etcd.rs`), connector
//! processes as boxes (`--box A/B/C`, `--fleet-ttl-secs 2` so leases expire quickly), simulated
//! phones on the direct transport — one Wi-Fi phone reachable from two boxes — and xAgent
//! clients over the WebSocket. Every wait is a poll with a bound, never a timed assertion.

mod common;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::etcd::{Etcd, TlsFiles};
use common::procs::{run_cli, ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claim_when_visible;
use common::xagent::{connect, XAgent};

/// Lease TTL of the boxes in these tests (seconds): the smallest `--fleet-ttl-secs` allows.
const TTL: &str = "2";
/// Bound of every poll (seconds): many TTLs, so a slow machine passes and a hang fails.
const BOUND: u64 = 60;

/// A connector as box `name` of the fleet at `urls`, reaching `phones` directly (claim policy
/// open), with `extra` flags.
fn start_box(
    dir: &TempDir,
    name: &str,
    urls: &[String],
    phones: &[&SimPhone],
    extra: &[&str],
) -> ConnectorProc {
    let mut flags: Vec<&str> = vec!["--claim-policy", "open", "--box", name];
    // `extra` may set its own TTL.
    if !extra.contains(&"--fleet-ttl-secs") {
        flags.extend(["--fleet-ttl-secs", TTL]);
    }
    for url in urls {
        flags.extend(["--fleet-etcd", url.as_str()]);
    }
    flags.extend_from_slice(extra);
    let addrs = phones.iter().map(|p| p.addr.clone()).collect();
    ConnectorProc::start_with(dir.path(), Phones::Direct(addrs), &flags)
}

/// A client on `conn` after its hello, with one channel open.
async fn client(conn: &ConnectorProc) -> (XAgent, String) {
    let mut x = connect(&conn.addr).await;
    x.hello_fresh().await;
    let (ch, _) = x.open(None).await;
    (x, ch)
}

fn code(ack: &Value) -> &str {
    ack["error"]["code"].as_str().unwrap_or("")
}

/// Claims `serial` on `ch` until the answer's error code is `want` ("" = authenticated);
/// panics with the last answer after [`BOUND`] seconds.
async fn claim_until(x: &mut XAgent, ch: &str, serial: &str, want: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(BOUND);
    loop {
        let ack = x.claim(ch, serial).await;
        let got = if ack.get("error").is_none() && ack["payload"]["status"] == "authenticated" {
            ""
        } else {
            code(&ack)
        };
        if got == want {
            return ack;
        }
        assert!(
            Instant::now() < deadline,
            "claim never answered {want:?}: {ack}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `devices --fleet --json` against `url`: the fleet view, or `None` when the command failed
/// (etcd not reachable).
fn fleet_view(url: &str) -> Option<Vec<Value>> {
    let (status, out, _) = run_cli(&[
        "devices",
        "--config",
        "/dev/null",
        "--fleet",
        "--json",
        "--fleet-etcd",
        url,
    ]);
    if status != Some(0) {
        return None;
    }
    serde_json::from_str::<Value>(&out)
        .ok()
        .and_then(|v| v.as_array().cloned())
}

/// Polls the fleet view at `url` until `ok` holds (≤ [`BOUND`] s); returns that view.
fn view_until(url: &str, what: &str, ok: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(BOUND);
    loop {
        let view = fleet_view(url).unwrap_or_default();
        if ok(&view) {
            return view;
        }
        assert!(
            Instant::now() < deadline,
            "fleet view never showed {what}: {view:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The rows of `serial` in a fleet view.
fn rows<'a>(view: &'a [Value], serial: &str) -> Vec<&'a Value> {
    view.iter().filter(|p| p["serial"] == serial).collect()
}

/// A side-effecting call (a tap): its ack.
async fn tap(x: &mut XAgent, ch: &str) -> Value {
    x.tool(ch, "android_tap", json!({"x": 10, "y": 10})).await
}

/// Taps until the error code is `want` ("" = success); panics after [`BOUND`] s.
async fn tap_until(x: &mut XAgent, ch: &str, want: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(BOUND);
    loop {
        let ack = tap(x, ch).await;
        if code(&ack) == want {
            return ack;
        }
        assert!(
            Instant::now() < deadline,
            "tap never answered {want:?}: {ack}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn descriptor(x: &mut XAgent, ch: &str) -> Value {
    let d = x
        .request("connection.descriptor.get", Some(ch), json!({}))
        .await;
    d["payload"]["connection_descriptor"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_phone_claimed_on_a_is_refused_on_b_naming_a_and_free_after_logout() {
    let etcd = Etcd::single();
    let url = etcd.url(0);
    let phone = SimPhone::start_with_control("FLEETWIFI01", &[]);
    let (da, db) = (TempDir::new("fleet-a"), TempDir::new("fleet-b"));
    let a = start_box(&da, "A", std::slice::from_ref(&url), &[&phone], &[]);
    let b = start_box(&db, "B", std::slice::from_ref(&url), &[&phone], &[]);
    let (mut xa, cha) = client(&a).await;
    let ack = claim_until(&mut xa, &cha, &phone.serial, "").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");

    // The same Wi-Fi phone, seen by box B: refused, naming A.
    let (mut xb, chb) = client(&b).await;
    let refused = claim_until(&mut xb, &chb, &phone.serial, "phone_bound_elsewhere").await;
    let message = refused["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("box A"), "{refused}");
    assert!(
        !message.contains(&phone.serial),
        "no full serial: {message}"
    );

    // The descriptor names the box; the binding works on A.
    let d = descriptor(&mut xa, &cha).await;
    assert_eq!(d["target"]["location"], "A", "{d}");
    let ack = tap(&mut xa, &cha).await;
    assert!(ack.get("error").is_none(), "{ack}");

    // The fleet view: the phone on both boxes, bound on A.
    let view = view_until(&url, "the phone on A and B, bound on A", |v| {
        let r = rows(v, &phone.serial);
        r.len() == 2 && r.iter().all(|p| p["bound_on"] == "A")
    });
    let boxes: Vec<&str> = rows(&view, &phone.serial)
        .iter()
        .map(|p| p["box"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(boxes, ["A", "B"], "{view:?}");
    assert!(rows(&view, &phone.serial).iter().all(|p| p["base_url"]
        .as_str()
        .is_some_and(|u| u.starts_with("http://127.0.0.1:"))));
    let (status, table, _) = run_cli(&[
        "devices",
        "--config",
        "/dev/null",
        "--fleet",
        "--fleet-etcd",
        &url,
    ]);
    assert_eq!(status, Some(0), "{table}");
    assert!(
        table.starts_with("BOX") && table.contains("FLEETWIFI01"),
        "{table}"
    );

    // Released on A: B may claim it.
    let out = xa.request("auth.logout", Some(&cha), json!({})).await;
    assert!(out.get("error").is_none(), "{out}");
    let ack = claim_until(&mut xb, &chb, &phone.serial, "").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let again = claim_until(&mut xa, &cha, &phone.serial, "phone_bound_elsewhere").await;
    assert!(
        again["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("box B"),
        "{again}"
    );
    view_until(&url, "the phone bound on B", |v| {
        rows(v, &phone.serial).iter().all(|p| p["bound_on"] == "B")
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_a_box_frees_its_phones_within_the_ttl() {
    let etcd = Etcd::single();
    let url = etcd.url(0);
    let shared = SimPhone::start_with_control("FLEETWIFI02", &[]);
    let own = SimPhone::start_with_control("FLEETUSBA02", &[]);
    let (da, db) = (TempDir::new("fleet-a"), TempDir::new("fleet-b"));
    let mut a = start_box(&da, "A", std::slice::from_ref(&url), &[&shared, &own], &[]);
    let b = start_box(&db, "B", std::slice::from_ref(&url), &[&shared], &[]);
    let (mut xa, cha) = client(&a).await;
    claim_until(&mut xa, &cha, &shared.serial, "").await;
    let (mut xb, chb) = client(&b).await;
    claim_until(&mut xb, &chb, &shared.serial, "phone_bound_elsewhere").await;
    view_until(&url, "A's two phones", |v| {
        v.iter().filter(|p| p["box"] == "A").count() == 2
    });

    a.kill();
    // A's lease expires: its phones and its binding leave the view.
    let view = view_until(&url, "no phone of A and no binding of A", |v| {
        v.iter().all(|p| p["box"] != "A" && p["bound_on"] != "A")
    });
    assert_eq!(rows(&view, &shared.serial).len(), 1, "{view:?}");
    let ack = claim_until(&mut xb, &chb, &shared.serial, "").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let ack = tap(&mut xb, &chb).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_etcd_down_bindings_keep_working_new_claims_wait_or_bind_locally_and_all_recovers() {
    let mut etcd = Etcd::single();
    let url = etcd.url(0);
    let p1 = SimPhone::start_with_control("FLEETDOWN01", &[]);
    let p2 = SimPhone::start_with_control("FLEETDOWN02", &[]);
    let p3 = SimPhone::start_with_control("FLEETDOWN03", &[]);
    let (da, dc) = (TempDir::new("fleet-a"), TempDir::new("fleet-c"));
    let a = start_box(&da, "A", std::slice::from_ref(&url), &[&p1, &p2], &[]);
    let c = start_box(
        &dc,
        "C",
        std::slice::from_ref(&url),
        &[&p3],
        &["--fleet-claims", "local"],
    );
    let (mut xa, ch1) = client(&a).await;
    claim_until(&mut xa, &ch1, &p1.serial, "").await;
    let (ch2, _) = xa.open(None).await;
    let (mut xc, chc) = client(&c).await;
    view_until(&url, "both boxes' phones", |v| {
        v.iter().any(|p| p["box"] == "C") && v.iter().filter(|p| p["box"] == "A").count() == 2
    });

    etcd.members[0].kill();
    // New claims: refused and retryable on A; bound locally on C (`--fleet-claims local`).
    // A was registered: the message says so, since when etcd has not answered, the last
    // etcd error, and what still works.
    let refused = claim_until(&mut xa, &ch2, &p2.serial, "fleet_unavailable").await;
    let message = refused["error"]["message"].as_str().unwrap_or("");
    for part in [
        "retry",
        "box A registered in the fleet at 20",
        "etcd has not answered since 20",
        "last etcd error: etcd is not reachable",
        "Still working: the phones already bound on this box",
        "auth.logout",
    ] {
        assert!(message.contains(part), "{part:?}: {refused}");
    }
    assert!(!message.contains("not registered"), "{refused}");
    let ack = claim_when_visible(&mut xc, &chc, &p3.serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    // The binding made before keeps working (its phone is local), and so does C's.
    let ack = tap(&mut xa, &ch1).await;
    assert!(ack.get("error").is_none(), "{ack}");
    let ack = tap(&mut xc, &chc).await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert!(
        fleet_view(&url).is_none(),
        "etcd is down: devices --fleet fails"
    );

    etcd.members[0].restart();
    etcd.wait_answers(0);
    // Re-registration is automatic; C's local binding is taken fleet-wide; A claims again.
    let ack = claim_until(&mut xa, &ch2, &p2.serial, "").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    // ... and logged at INFO with the box's name and the etcd endpoint that answered (the
    // same lease if etcd kept it alive, else a new one); never a key.
    let back = |logs: &str| {
        logs.lines().any(|l| {
            l.contains(" INFO ")
                && (l.contains("registered in the fleet again") || l.contains("back in the fleet"))
                && l.contains("box_name=A")
                && l.contains(&format!("etcd={url}"))
        })
    };
    let deadline = Instant::now() + Duration::from_secs(BOUND);
    while !back(&a.logs()) {
        assert!(
            Instant::now() < deadline,
            "no re-registration logged:\n{}",
            a.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!a.logs().contains("/xagent-adb/v1/"), "a key in the log");
    view_until(&url, "every binding in the store", |v| {
        rows(v, &p1.serial).iter().all(|p| p["bound_on"] == "A")
            && rows(v, &p2.serial).iter().all(|p| p["bound_on"] == "A")
            && rows(v, &p3.serial).iter().any(|p| p["bound_on"] == "C")
    });
    let ack = tap(&mut xa, &ch1).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_claims_of_one_phone_on_two_boxes_go_to_the_earlier_revision_on_return() {
    let mut etcd = Etcd::single();
    let url = etcd.url(0);
    let phone = SimPhone::start_with_control("FLEETBOTH01", &[]);
    let (da, db) = (TempDir::new("fleet-a"), TempDir::new("fleet-b"));
    let local = ["--fleet-claims", "local"];
    let a = start_box(&da, "A", std::slice::from_ref(&url), &[&phone], &local);
    let b = start_box(&db, "B", std::slice::from_ref(&url), &[&phone], &local);
    let (mut xa, cha) = client(&a).await;
    let (mut xb, chb) = client(&b).await;
    view_until(&url, "the phone on both boxes", |v| {
        rows(v, &phone.serial).len() == 2
    });

    etcd.members[0].kill();
    claim_until(&mut xa, &cha, &phone.serial, "").await;
    claim_until(&mut xb, &chb, &phone.serial, "").await;
    etcd.members[0].restart();
    etcd.wait_answers(0);

    // One box's binding reaches etcd first (the earlier revision) and wins; the other's
    // channel is told through its descriptor and its side effects are fenced.
    let view = view_until(&url, "the phone bound on one box", |v| {
        let r = rows(v, &phone.serial);
        r.len() == 2
            && r.iter()
                .all(|p| p["bound_on"] == "A" || p["bound_on"] == "B")
    });
    let winner = rows(&view, &phone.serial)[0]["bound_on"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let (loser_x, loser_ch, winner_x, winner_ch) = if winner == "A" {
        (&mut xb, &chb, &mut xa, &cha)
    } else {
        (&mut xa, &cha, &mut xb, &chb)
    };
    let fenced = tap_until(loser_x, loser_ch, "fleet_binding_lost").await;
    assert!(
        fenced["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains(&format!("box {winner}")),
        "{fenced}"
    );
    let d = descriptor(loser_x, loser_ch).await;
    assert!(
        d["target"]["warning"]
            .as_str()
            .unwrap_or("")
            .contains("fleet_binding_lost"),
        "{d}"
    );
    let tree = loser_x.tool(loser_ch, "android_ui_tree", json!({})).await;
    assert_eq!(code(&tree), "fleet_binding_lost", "{tree}");
    let ack = tap(winner_x, winner_ch).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_cut_off_from_a_three_node_cluster_past_its_lease_is_fenced() {
    let etcd = Etcd::cluster(3);
    let phone = SimPhone::start_with_control("FLEETPART01", &[]);
    let (da, db) = (TempDir::new("fleet-a"), TempDir::new("fleet-b"));
    // A talks to member 0 only; B to members 1 and 2 (the majority side of the partition).
    let a = start_box(&da, "A", &[etcd.url(0)], &[&phone], &[]);
    let b = start_box(&db, "B", &[etcd.url(1), etcd.url(2)], &[&phone], &[]);
    let (mut xa, cha) = client(&a).await;
    claim_until(&mut xa, &cha, &phone.serial, "").await;
    let (mut xb, chb) = client(&b).await;
    claim_until(&mut xb, &chb, &phone.serial, "phone_bound_elsewhere").await;

    // Member 0 is cut off: A's lease is no longer kept alive, expires in the majority, and
    // B takes the phone.
    etcd.members[0].freeze();
    let ack = claim_until(&mut xb, &chb, &phone.serial, "").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");

    // When A reaches the cluster again, its binding is fenced: no more side effects.
    etcd.members[0].thaw();
    let fenced = tap_until(&mut xa, &cha, "fleet_binding_lost").await;
    assert!(
        fenced["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("box B"),
        "{fenced}"
    );
    let d = descriptor(&mut xa, &cha).await;
    let warning = d["target"]["warning"].as_str().unwrap_or("");
    assert!(
        warning.contains("fleet_binding_lost") && warning.contains("box B"),
        "{d}"
    );
    let tap_tool = d["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["tool_id"] == "android_tap"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(tap_tool["status"], "unavailable", "{d}");
    // Its observations too: the phone is B's user's now.
    let shot = xa.tool(&cha, "android_screenshot", json!({})).await;
    assert_eq!(code(&shot), "fleet_binding_lost", "{shot}");
    let ack = tap(&mut xb, &chb).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

/// `devices --fleet --json` with `flags` (the store's URL and TLS files): (exit status, stdout,
/// stderr).
fn fleet_cli(flags: &[&str]) -> (Option<i32>, String, String) {
    let mut args = vec!["devices", "--config", "/dev/null", "--fleet", "--json"];
    args.extend_from_slice(flags);
    run_cli(&args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_with_a_client_certificate_a_box_registers_and_claims_and_a_wrong_ca_is_refused_in_words(
) {
    let pki_dir = TempDir::new("fleet-pki");
    let pki = TlsFiles::issue(pki_dir.path());
    let etcd = Etcd::single_tls(&pki);
    let url = etcd.url(0);
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let path = |p: &std::path::Path| p.to_str().unwrap().to_string();
    let (ca, cert, key, wrong_ca) = (
        path(&pki.ca),
        path(&pki.client_cert),
        path(&pki.client_key),
        path(&pki.wrong_ca),
    );
    let tls_flags = [
        "--fleet-etcd-ca",
        ca.as_str(),
        "--fleet-etcd-cert",
        cert.as_str(),
        "--fleet-etcd-key",
        key.as_str(),
    ];
    let phone = SimPhone::start_with_control("FLEETTLS01", &[]);
    let (da, dw) = (TempDir::new("fleet-a"), TempDir::new("fleet-w"));
    let a = start_box(&da, "A", std::slice::from_ref(&url), &[&phone], &tls_flags);
    let (mut xa, cha) = client(&a).await;
    let ack = claim_until(&mut xa, &cha, &phone.serial, "").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let ack = tap(&mut xa, &cha).await;
    assert!(ack.get("error").is_none(), "{ack}");

    // The fleet view over the same TLS client options: A's phone, bound on A.
    let mut view_flags = vec!["--fleet-etcd", url.as_str()];
    view_flags.extend_from_slice(&tls_flags);
    let deadline = Instant::now() + Duration::from_secs(BOUND);
    loop {
        let (status, out, err) = fleet_cli(&view_flags);
        let view: Vec<Value> = serde_json::from_str(&out).unwrap_or_default();
        let r = rows(&view, &phone.serial);
        if status == Some(0) && r.len() == 1 && r[0]["box"] == "A" && r[0]["bound_on"] == "A" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no TLS fleet view of A's bound phone: {status:?} {out} {err}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // etcd asks for a client certificate (--client-cert-auth): without one, no view.
    let (status, out, err) =
        fleet_cli(&["--fleet-etcd", url.as_str(), "--fleet-etcd-ca", ca.as_str()]);
    assert_ne!(status, Some(0), "{out}");
    assert!(
        err.contains("TLS connection failed") && err.contains("--fleet-etcd-cert"),
        "{err}"
    );

    // A CA that did not sign etcd's certificate: the CLI fails naming the handshake and the
    // flag to check ...
    let wrong_view = [
        "--fleet-etcd",
        url.as_str(),
        "--fleet-etcd-ca",
        wrong_ca.as_str(),
        "--fleet-etcd-cert",
        cert.as_str(),
        "--fleet-etcd-key",
        key.as_str(),
    ];
    let (status, out, err) = fleet_cli(&wrong_view);
    assert_ne!(status, Some(0), "{out}");
    assert!(
        err.contains("TLS handshake failed") && err.contains("--fleet-etcd-ca"),
        "{err}"
    );
    // ... and a box with it never joins: its claims answer fleet_unavailable with the reason.
    let wrong_flags = [
        "--fleet-etcd-ca",
        wrong_ca.as_str(),
        "--fleet-etcd-cert",
        cert.as_str(),
        "--fleet-etcd-key",
        key.as_str(),
    ];
    let phone_w = SimPhone::start_with_control("FLEETTLS02", &[]);
    let w = start_box(
        &dw,
        "W",
        std::slice::from_ref(&url),
        &[&phone_w],
        &wrong_flags,
    );
    let (mut xw, chw) = client(&w).await;
    let deadline = Instant::now() + Duration::from_secs(BOUND);
    loop {
        let ack = claim_until(&mut xw, &chw, &phone_w.serial, "fleet_unavailable").await;
        let message = ack["error"]["message"].as_str().unwrap_or("");
        if message.contains("TLS handshake failed") {
            assert!(message.contains("--fleet-etcd-ca"), "{ack}");
            break;
        }
        assert!(Instant::now() < deadline, "no TLS reason: {ack}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (_, out, _) = fleet_cli(&view_flags);
    let view: Vec<Value> = serde_json::from_str(&out).unwrap_or_default();
    assert!(view.iter().all(|p| p["box"] != "W"), "{view:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_connector_with_the_same_box_name_takes_nothing_over_and_says_so() {
    let etcd = Etcd::single();
    let url = etcd.url(0);
    let p1 = SimPhone::start_with_control("FLEETDUP001", &[]);
    let p2 = SimPhone::start_with_control("FLEETDUP002", &[]);
    let (d1, d2) = (TempDir::new("fleet-a1"), TempDir::new("fleet-a2"));
    let mut first = start_box(&d1, "A", std::slice::from_ref(&url), &[&p1], &[]);
    let (mut x1, ch1) = client(&first).await;
    claim_until(&mut x1, &ch1, &p1.serial, "").await;
    view_until(&url, "the first A's phone, bound on A", |v| {
        rows(v, &p1.serial).iter().any(|p| p["bound_on"] == "A")
    });

    // The second "A" (even with --fleet-claims local) is refused fleet claims, naming the
    // first's URL, and writes no presence.
    let second = start_box(
        &d2,
        "A",
        std::slice::from_ref(&url),
        &[&p2],
        &["--fleet-claims", "local"],
    );
    let (mut x2, ch2) = client(&second).await;
    let refused = claim_until(&mut x2, &ch2, &p2.serial, "fleet_box_name_taken").await;
    let message = refused["error"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("box name A") && message.contains(&first.base),
        "{refused}"
    );
    let tools = x2.tool(&ch2, "android_tap", json!({"x": 1, "y": 1})).await;
    assert!(tools.get("error").is_some(), "not bound: {tools}");
    let view = fleet_view(&url).expect("fleet view");
    assert!(rows(&view, &p2.serial).is_empty(), "{view:?}");
    let r = rows(&view, &p1.serial);
    assert_eq!(r.len(), 1, "{view:?}");
    assert_eq!(r[0]["base_url"], first.base.as_str(), "{view:?}");
    // The first A's binding goes on, unfenced.
    let ack = tap(&mut x1, &ch1).await;
    assert!(ack.get("error").is_none(), "{ack}");

    // The first A stops (its lease revoked): the second registers by itself and may claim.
    first.terminate();
    assert!(first.wait_exit(Duration::from_secs(BOUND)).is_some());
    let ack = claim_until(&mut x2, &ch2, &p2.serial, "").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let view = view_until(&url, "the second A's phone, bound on A", |v| {
        rows(v, &p2.serial).iter().any(|p| p["bound_on"] == "A")
    });
    assert_eq!(rows(&view, &p2.serial)[0]["base_url"], second.base.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_box_killed_and_restarted_within_its_ttl_takes_its_own_name_and_bindings_back() {
    let etcd = Etcd::single();
    let url = etcd.url(0);
    let shared = SimPhone::start_with_control("FLEETRST001", &[]);
    let own = SimPhone::start_with_control("FLEETRST002", &[]);
    let (da, db) = (TempDir::new("fleet-a"), TempDir::new("fleet-b"));
    // A long TTL: the killed process's keys outlive the restart.
    let mut a = start_box(
        &da,
        "A",
        std::slice::from_ref(&url),
        &[&shared, &own],
        &["--fleet-ttl-secs", "60"],
    );
    let b = start_box(&db, "B", std::slice::from_ref(&url), &[&shared], &[]);
    let (mut xa, cha) = client(&a).await;
    claim_until(&mut xa, &cha, &shared.serial, "").await;
    drop(xa);

    a.restart();
    // The restarted A (same data dir) is no stranger to its own box key: its first answer
    // once it has talked to etcd is a claim, never fleet_box_name_taken.
    let (mut xa, cha2) = client(&a).await;
    let deadline = Instant::now() + Duration::from_secs(BOUND);
    loop {
        let ack = xa.claim(&cha2, &own.serial).await;
        if code(&ack) != "fleet_unavailable" {
            assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
            break;
        }
        assert!(Instant::now() < deadline, "A never joined: {ack}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Its restored binding kept the phone: B is still refused, naming A.
    let (mut xb, chb) = client(&b).await;
    let refused = claim_until(&mut xb, &chb, &shared.serial, "phone_bound_elsewhere").await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("box A"),
        "{refused}"
    );
    view_until(&url, "both of A's phones bound on A", |v| {
        [&shared.serial, &own.serial].iter().all(|s| {
            rows(v, s)
                .iter()
                .any(|p| p["box"] == "A" && p["bound_on"] == "A")
        })
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binding_whose_key_another_box_took_refuses_every_tool_observations_too() {
    let etcd = Etcd::single();
    let url = etcd.url(0);
    let phone = SimPhone::start_with_control("FLEETPRIV01", &[]);
    let (da, db) = (TempDir::new("fleet-a"), TempDir::new("fleet-b"));
    let a = start_box(&da, "A", std::slice::from_ref(&url), &[&phone], &[]);
    let b = start_box(&db, "B", std::slice::from_ref(&url), &[&phone], &[]);
    let (mut xa, cha) = client(&a).await;
    claim_until(&mut xa, &cha, &phone.serial, "").await;
    let (mut xb, chb) = client(&b).await;
    claim_until(&mut xb, &chb, &phone.serial, "phone_bound_elsewhere").await;
    let shot = xa.tool(&cha, "android_screenshot", json!({})).await;
    assert!(shot.get("error").is_none(), "{shot}");

    // The binding's key goes (an operator's `etcdctl del`), and box B takes the phone. A
    // makes no side-effecting call: it learns it from its own presence rounds.
    let key = format!(
        "/xagent-adb/v1/bindings/{}",
        phone
            .serial
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    assert_eq!(etcd.delete_key(&key), 1, "A's binding key was in etcd");
    let ack = claim_until(&mut xb, &chb, &phone.serial, "").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");

    // A's observations are refused like its side effects, with the lost-binding code.
    let deadline = Instant::now() + Duration::from_secs(BOUND);
    let refused = loop {
        let ack = xa.tool(&cha, "android_screenshot", json!({})).await;
        if code(&ack) == "fleet_binding_lost" {
            break ack;
        }
        assert!(
            ack.get("error").is_none(),
            "a screenshot either works or is refused as lost: {ack}"
        );
        assert!(Instant::now() < deadline, "screenshot never refused: {ack}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let message = refused["error"]["message"].as_str().unwrap_or("");
    // Gone, or already B's, depending on which A's round read first.
    assert!(
        message.starts_with("fleet_binding_lost:")
            && (message.contains("box B holds this phone") || message.contains("is gone")),
        "{refused}"
    );
    assert!(
        !message.contains(&phone.serial),
        "no full serial: {message}"
    );
    let tree = xa.tool(&cha, "android_ui_tree", json!({})).await;
    assert_eq!(code(&tree), "fleet_binding_lost", "{tree}");
    let tapped = tap(&mut xa, &cha).await;
    assert_eq!(code(&tapped), "fleet_binding_lost", "{tapped}");
    // The descriptor says every tool is unavailable.
    let d = descriptor(&mut xa, &cha).await;
    let tools = d["tools"].as_array().cloned().unwrap_or_default();
    assert!(!tools.is_empty(), "{d}");
    for t in &tools {
        assert_eq!(t["status"], "unavailable", "{t}");
    }
    assert_eq!(d["connection"]["status"], "degraded", "{d}");
    // The log names the channel and the masked serial, never the serial.
    let logs = a.logs();
    let line = logs
        .lines()
        .find(|l| l.contains("fleet binding lost"))
        .unwrap_or_default();
    let hint = xagent_adb_connector::protocol::descriptor::mask_serial(&phone.serial);
    assert!(
        line.contains(&format!("serial_hint={hint}")) && line.contains(&format!("channel={cha}")),
        "{logs}"
    );
    assert!(!line.contains(&phone.serial), "{line}");
    // B's binding works, observations included.
    let shot = xb.tool(&chb, "android_screenshot", json!({})).await;
    assert!(shot.get("error").is_none(), "{shot}");
    let ack = tap(&mut xb, &chb).await;
    assert!(ack.get("error").is_none(), "{ack}");
    // auth.logout still works on A, and A may claim again once B releases the phone.
    let out = xa.request("auth.logout", Some(&cha), json!({})).await;
    assert!(out.get("error").is_none(), "{out}");
    let out = xb.request("auth.logout", Some(&chb), json!({})).await;
    assert!(out.get("error").is_none(), "{out}");
    claim_until(&mut xa, &cha, &phone.serial, "").await;
    let shot = xa.tool(&cha, "android_screenshot", json!({})).await;
    assert!(shot.get("error").is_none(), "{shot}");
}

/// Whether the phone was sent `input keyevent KEYCODE_HOME` after log entry `since` (run, or
/// answered by a script: the log then holds the raw line, docs/sim.md).
fn home_pressed_since(phone: &SimPhone, since: usize) -> bool {
    let log = phone.state()["command_log"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    log.iter()
        .skip(since)
        .any(|e| e["argv"].to_string().contains("KEYCODE_HOME"))
}

fn log_len(phone: &SimPhone) -> usize {
    phone.state()["command_log"].as_array().map_or(0, Vec::len)
}

/// The hand-back (`[release]`) and the fleet: a binding found lost hands nothing back on the
/// phone another box's user now holds, and a phone being handed back stays bound in the fleet
/// (other boxes refuse it) until its release ends, then is free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_binding_hands_nothing_back_and_a_phone_being_handed_back_stays_bound() {
    let etcd = Etcd::single();
    let url = etcd.url(0);
    let phone = SimPhone::start_with_control("FLEETREL01", &[]);
    let (da, db) = (TempDir::new("fleet-rel-a"), TempDir::new("fleet-rel-b"));
    let a = start_box(&da, "A", std::slice::from_ref(&url), &[&phone], &[]);
    let b = start_box(&db, "B", std::slice::from_ref(&url), &[&phone], &[]);
    let (mut xa, cha) = client(&a).await;
    claim_until(&mut xa, &cha, &phone.serial, "").await;
    let ack = tap(&mut xa, &cha).await;
    assert!(
        ack.get("error").is_none(),
        "a side effect to hand back: {ack}"
    );
    // A's key goes, B takes the phone and acts on it.
    let key = format!(
        "/xagent-adb/v1/bindings/{}",
        phone
            .serial
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    assert_eq!(etcd.delete_key(&key), 1, "A's binding key was in etcd");
    let (mut xb, chb) = client(&b).await;
    claim_until(&mut xb, &chb, &phone.serial, "").await;
    tap_until(&mut xa, &cha, "fleet_binding_lost").await;
    let ack = tap(&mut xb, &chb).await;
    assert!(ack.get("error").is_none(), "{ack}");
    // A's operator sees it: `check` calls it a problem with the fix, `devices` warns.
    let data_dir = da.path().display().to_string();
    let key_dir = TempDir::new("fleet-rel-key");
    let key_file = key_dir.path().join("api_key.txt");
    std::fs::write(&key_file, format!("{}\n", common::API_KEY)).unwrap();
    let key_file = key_file.display().to_string();
    let device = format!("tcp:{}", phone.addr);
    let masked = xagent_adb_connector::protocol::descriptor::mask_serial(&phone.serial);
    let (status, out, _) = run_cli(&[
        "check",
        "--config",
        "/dev/null",
        "--data-dir",
        &data_dir,
        "--api-key-file",
        &key_file,
        "--adb-server",
        "",
        "--device",
        &device,
        "--listen",
        &a.addr,
    ]);
    assert_eq!(status, Some(1), "{out}");
    assert!(
        out.contains(&format!(
            "PROBLEM  phone {masked} bound to channel {cha}: binding lost in the fleet"
        )) && out.contains(&format!("fix: auth.logout on channel {cha}")),
        "{out}"
    );
    let (_, _, err) = run_cli(&[
        "devices",
        "--config",
        "/dev/null",
        "--data-dir",
        &data_dir,
        "--adb-server",
        "",
        "--device",
        &device,
    ]);
    assert!(err.contains("a binding is lost in the fleet"), "{err}");
    // The listing names the phones (the operator's own); the log line is masked.
    assert!(!err.contains(&phone.serial), "masked in the log: {err}");
    // A's user leaves: nothing of A's hand-back may land in B's user's session.
    let since = log_len(&phone);
    let out = xa.request("auth.logout", Some(&cha), json!({})).await;
    assert!(out.get("error").is_none(), "{out}");
    let deadline = Instant::now() + Duration::from_secs(BOUND);
    while !a.logs().contains("release skipped") {
        assert!(
            Instant::now() < deadline,
            "A skipped its release: {}",
            a.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        !home_pressed_since(&phone, since),
        "A pressed HOME on B's phone"
    );
    let ack = tap(&mut xb, &chb).await;
    assert!(
        ack.get("error").is_none(),
        "B's binding is untouched: {ack}"
    );

    // B hands the phone back slowly (its HOME takes 3 s): meanwhile A is refused as
    // bound elsewhere, never bound before the hand-back ran.
    assert_eq!(
        phone.control_post(
            "/v1/script",
            json!({"command_regex": "keyevent", "delay_ms": 3000, "times": 1})
        ),
        200
    );
    let since = log_len(&phone);
    let out = xb.request("auth.logout", Some(&chb), json!({})).await;
    assert!(out.get("error").is_none(), "{out}");
    let early = xa.claim(&cha, &phone.serial).await;
    assert_eq!(code(&early), "phone_bound_elsewhere", "{early}");
    assert!(
        early["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("box B"),
        "{early}"
    );
    claim_until(&mut xa, &cha, &phone.serial, "").await;
    assert!(
        home_pressed_since(&phone, since),
        "B's hand-back ran before A got the phone: {}",
        b.logs()
            .lines()
            .filter(|l| l.contains("release") || l.contains("logout"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
