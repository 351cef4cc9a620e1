//! The operator console (issue 21 §2) over real HTTP against the real binary: `GET /console`
//! and below answer 404 without `--operator-key-file`, 401 (`WWW-Authenticate: Basic`) without
//! the right credentials, and with them the farm — simulated phones behind a real adb server
//! (Google's adb 34) and a direct-transport phone that does not answer, — a PNG
//! thumbnail of a phone's screen, and the box's Wi-Fi pairing QR as an image that decodes to
//! the pairing offer, while no page carries the API key, a claim code or the pairing password.
//! Then Debian's headless Chromium loads the console (content from `--dump-dom`, a screenshot
//! of the page; `XAGENT_KEEP_CONSOLE_SCREENSHOT=1` keeps it as `docs/console.png`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine;
use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{devices_json, ConnectorProc, Phones, SimPhone, TempDir};
use common::xagent::connect;
use common::API_KEY;
use serde_json::json;

const OPERATOR_KEY: &str = "operator-key-0123456789abcdef";
const CLAIM_CODE: &str = "claim-code-424242";
const SERIAL: &str = "CONSOLE0001";

/// An HTTP GET with optional Basic credentials; (status, headers, body).
fn get(url: &str, basic: Option<(&str, &str)>) -> (u16, ureq::http::HeaderMap, Vec<u8>) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(40)))
        .build()
        .into();
    let mut req = agent.get(url);
    if let Some((user, password)) = basic {
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        req = req.header("Authorization", &format!("Basic {token}"));
    }
    let mut resp = req.call().expect("http get");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.body_mut().read_to_vec().expect("body");
    (status, headers, body)
}

fn operator() -> Option<(&'static str, &'static str)> {
    Some(("operator", OPERATOR_KEY))
}

/// Writes the operator key file in `dir`; its path.
fn operator_key_file(dir: &Path) -> PathBuf {
    let path = dir.join("operator_key");
    std::fs::write(&path, format!("{OPERATOR_KEY}\n")).unwrap();
    path
}

/// Decodes a grey or RGB(A) PNG; (width, height, grey pixel at x, y).
fn decode_png(bytes: &[u8]) -> (usize, usize, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes.to_vec()))
        .read_info()
        .expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    let (w, h) = (frame.width as usize, frame.height as usize);
    let channels = match frame.color_type {
        png::ColorType::Grayscale => 1,
        png::ColorType::GrayscaleAlpha => 2,
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("colour type {other:?}"),
    };
    let grey = (0..w * h).map(|i| buf[i * channels]).collect();
    (w, h, grey)
}

/// A farm: one simulated phone behind a real adb server, claimed on a channel with its
/// claim code, one screenshot taken and one call refused; a direct-transport phone nobody
/// answers for; the connector with the operator key (and `extra` flags).
struct Farm {
    _sim: SimPhone,
    adb: AdbServer,
    conn: ConnectorProc,
    channel: String,
    model: String,
    dir: TempDir,
    dead_port: u16,
}

async fn farm(tag: &str) -> Farm {
    let sim = SimPhone::start_with_control(SERIAL, &[]);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&sim.addr);
    let dir = TempDir::new(tag);
    // A port nothing listens on: the direct phone there reads `offline`, with a fix.
    let dead_port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let key = operator_key_file(dir.path());
    let dead = format!("tcp:127.0.0.1:{dead_port}");
    let conn = ConnectorProc::start_with_claim_code(
        dir.path(),
        Phones::AdbServer(format!("box-a={}", adb.addr())),
        SERIAL,
        CLAIM_CODE,
        &[
            "--operator-key-file",
            key.to_str().unwrap(),
            "--device",
            &dead,
            "--mdns-interface",
            "lo",
        ],
    );
    let mut x = connect(&conn.addr).await;
    x.hello_fresh().await;
    let (channel, _) = x.open(None).await;
    let claim = json!({"flow_id": "adb_device_claim", "input": {"serial": SERIAL, "claim_code": CLAIM_CODE}});
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let ack = x.request("auth.start", Some(&channel), claim.clone()).await;
        if ack["payload"]["status"] == "authenticated" {
            break;
        }
        assert!(Instant::now() < deadline, "claim never succeeded: {ack}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let shot = x.tool(&channel, "android_screenshot", json!({})).await;
    assert!(shot.get("error").is_none(), "{shot}");
    let refused = x
        .tool(&channel, "android_tap", json!({"x": -5, "y": "left"}))
        .await;
    assert_eq!(refused["error"]["code"], "invalid_arguments", "{refused}");
    let data = dir.path().to_str().unwrap().to_string();
    let rows = devices_json(&data, &["--adb-server", &format!("box-a={}", adb.addr())]);
    let row = rows
        .iter()
        .find(|r| r["serial"] == SERIAL)
        .unwrap_or_else(|| panic!("{rows:?}"));
    let model = row["model"].as_str().unwrap_or_default().to_string();
    assert!(!model.is_empty(), "{row}");
    Farm {
        _sim: sim,
        adb,
        conn,
        channel,
        model,
        dir,
        dead_port,
    }
}

/// Every console route answers 404 without an operator key, with credentials or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_an_operator_key_the_console_is_not_there() {
    let dir = TempDir::new("console-off");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    for path in [
        "/console",
        "/console/",
        "/console/pair",
        "/console/pair/new",
        "/console/pair/qr.png",
        "/console/phones/X/screen.png",
    ] {
        for creds in [None, operator()] {
            let (status, _, body) = get(&format!("{}{path}", conn.base), creds);
            assert_eq!(status, 404, "{path}: {}", String::from_utf8_lossy(&body));
            assert!(String::from_utf8_lossy(&body).contains("endpoint_not_found"));
        }
    }
}

/// Missing, wrong-user, wrong-password and Bearer credentials are 401 with a Basic challenge;
/// the right ones open the page. `check` says where the console is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_needs_the_operator_credentials() {
    let dir = TempDir::new("console-auth");
    let key = operator_key_file(dir.path());
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![]),
        &["--operator-key-file", key.to_str().unwrap()],
    );
    let url = format!("{}/console", conn.base);
    for creds in [
        None,
        Some(("operator", "operator-key-0123456789abcdeX")),
        Some(("admin", OPERATOR_KEY)),
        Some(("operator", API_KEY)),
    ] {
        let (status, headers, _) = get(&url, creds);
        assert_eq!(status, 401, "{creds:?}");
        let challenge = headers
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(challenge.starts_with("Basic realm="), "{challenge}");
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let bearer = agent
        .get(&url)
        .header("Authorization", &format!("Bearer {API_KEY}"))
        .call()
        .unwrap();
    assert_eq!(
        bearer.status().as_u16(),
        401,
        "the API key opens no console"
    );
    let (status, headers, body) = get(&url, operator());
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(headers["cache-control"], "no-store");
    let page = String::from_utf8(body).unwrap();
    assert!(page.contains("No phone attached yet"), "{page}");
    assert!(!page.contains(OPERATOR_KEY) && !page.contains(API_KEY));
    // `check` validates the key file and names the console.
    let (_, out, err) = common::procs::run_cli(&[
        "check",
        "--config",
        "/dev/null",
        "--adb-server",
        "",
        "--data-dir",
        dir.path().to_str().unwrap(),
        "--api-key-file",
        dir.path().join("api_key.txt").to_str().unwrap(),
        "--operator-key-file",
        key.to_str().unwrap(),
    ]);
    assert!(
        out.contains("ok       operator console at http://"),
        "{out}{err}"
    );
    assert!(!out.contains(OPERATOR_KEY) && !err.contains(OPERATOR_KEY));
    let short = dir.path().join("short_key");
    std::fs::write(&short, "short\n").unwrap();
    let (code, out, _) = common::procs::run_cli(&[
        "check",
        "--config",
        "/dev/null",
        "--adb-server",
        "",
        "--data-dir",
        dir.path().to_str().unwrap(),
        "--api-key-file",
        dir.path().join("api_key.txt").to_str().unwrap(),
        "--operator-key-file",
        short.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("operator key")
            && out.contains("--operator-key-file")
            && out.contains("at least 16"),
        "{out}"
    );
}

/// Wrong logins from one address: the first five are 401 (requests with no credentials, as a
/// browser's first, do not count); then the address is paused — every console request from
/// it, the right credentials too, is 429 `rate_limited` with `Retry-After` — and once the pause
/// has passed the right login opens the page and the count starts again; a further wrong
/// login right after a pause pauses it again (for longer: the doubling is
/// `login_throttle`'s unit test). The operator key is in no page and no log line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_console_logins_are_throttled_per_address() {
    let dir = TempDir::new("console-throttle");
    let key = operator_key_file(dir.path());
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![]),
        &["--operator-key-file", key.to_str().unwrap()],
    );
    let url = format!("{}/console", conn.base);
    let wrong = Some(("operator", "operator-key-0123456789abcdeX"));
    for _ in 0..3 {
        assert_eq!(get(&url, None).0, 401, "no credentials: not a failure");
    }
    for n in 1..=5 {
        let (status, _, body) = get(&url, wrong);
        assert_eq!(
            status,
            401,
            "wrong login {n}: {}",
            String::from_utf8_lossy(&body)
        );
    }
    // Paused: the right credentials are not even compared.
    let paused = |what: &str| {
        let (status, headers, body) = get(&url, operator());
        let body = String::from_utf8_lossy(&body).into_owned();
        assert_eq!(status, 429, "{what}: {body}");
        assert!(body.contains("rate_limited"), "{body}");
        assert!(!body.contains(OPERATOR_KEY), "{body}");
        headers["retry-after"]
            .to_str()
            .unwrap()
            .parse::<u64>()
            .expect("Retry-After in seconds")
    };
    let wait = paused("after five wrong logins");
    assert_eq!(wait, 1, "the first pause is 1 s");
    // Waits the pause out, as a client honouring Retry-After does.
    let after_pause = |wait: u64| {
        let mut wait = wait;
        for _ in 0..20 {
            std::thread::sleep(Duration::from_secs(wait));
            let (status, headers, body) = get(&url, operator());
            if status != 429 {
                return (status, body);
            }
            wait = headers["retry-after"].to_str().unwrap().parse().unwrap();
        }
        panic!("still paused");
    };
    let (status, body) = after_pause(wait);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    // The right login ended the count: four wrong ones are 401 again, then the page opens.
    for _ in 0..4 {
        assert_eq!(get(&url, wrong).0, 401);
    }
    assert_eq!(get(&url, operator()).0, 200, "four failures pause nothing");
    // Five more wrong logins pause again; one more right after the pause pauses at once.
    for _ in 0..5 {
        assert_eq!(get(&url, wrong).0, 401);
    }
    let wait = paused("five wrong logins again");
    std::thread::sleep(Duration::from_secs(wait));
    loop {
        let (status, _, _) = get(&url, wrong);
        if status == 401 {
            break;
        }
        assert_eq!(status, 429);
        std::thread::sleep(Duration::from_millis(200));
    }
    let wait = paused("a wrong login after the pause");
    assert!((1..=2).contains(&wait), "{wait}");
    let (status, body) = after_pause(wait);
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let page = String::from_utf8(body).unwrap();
    assert!(!page.contains(OPERATOR_KEY));
    let logs = conn.logs();
    assert!(
        logs.contains("too many failed logins from one address"),
        "{logs}"
    );
    assert!(!logs.contains(OPERATOR_KEY), "the operator key in the log");
}

/// The farm page shows the phones (behind the adb server: model, serial, state, transport,
/// server label, bound channel and since when, the last call), the server's reachability, the recent error and the call totals; the
/// thumbnail is a PNG of the phone's screen; the pairing page shows the box's QR as an image
/// that decodes to a pairing offer; no page holds the API key, the claim code, the operator
/// key or the pairing password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_shows_the_farm_the_screen_and_the_pairing_qr() {
    let f = farm("console-farm").await;
    let (status, _, body) = get(&format!("{}/console", f.conn.base), operator());
    assert_eq!(status, 200);
    let page = String::from_utf8(body).unwrap();
    for must in [
        SERIAL,
        f.model.as_str(),
        f.channel.as_str(),
        "box-a",
        "android_tap",
        "<b id=\"calls\">2</b>",
        "<b id=\"failures\">1</b>",
        "invalid_arguments",
        "http-equiv=\"refresh\"",
        "since ",
        "tool calls",
    ] {
        assert!(page.contains(must), "{must} missing from the page:\n{page}");
    }
    // The direct phone that never answered is not in the connector's inventory yet, so the
    // console does not list it (`check` and `devices` do, with the fix).
    assert!(!page.contains(&format!("tcp:127.0.0.1:{}", f.dead_port)));
    // The server is reachable; the phone row says `device`.
    assert!(
        page.contains("<td><code>box-a</code></td><td><span class=\"ok\">yes</span>"),
        "{page}"
    );
    assert!(page.contains("<span class=\"ok\">device</span>"), "{page}");
    for secret in [API_KEY, CLAIM_CODE, OPERATOR_KEY] {
        assert!(!page.contains(secret), "a secret in the page");
    }
    assert!(!page.contains("<script"), "no JavaScript needed");

    // The thumbnail.
    let (status, headers, shot) = get(
        &format!("{}/console/phones/{SERIAL}/screen.png", f.conn.base),
        operator(),
    );
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&shot));
    assert_eq!(headers["content-type"], "image/png");
    assert_eq!(&shot[..8], b"\x89PNG\r\n\x1a\n");
    let (w, h, _) = decode_png(&shot);
    assert!(w.max(h) <= 480 && w.min(h) > 50, "{w}x{h}");
    let (status, _, body) = get(
        &format!("{}/console/phones/NOPE/screen.png", f.conn.base),
        operator(),
    );
    assert_eq!(
        status, 404,
        "an unknown phone is not there, not unavailable"
    );
    assert!(String::from_utf8_lossy(&body).contains("phone_not_found"));

    // The pairing QR.
    let (status, _, body) = get(&format!("{}/console/pair", f.conn.base), operator());
    assert_eq!(status, 200);
    let pair_page = String::from_utf8(body).unwrap();
    assert!(pair_page.contains("pairing QR code"), "{pair_page}");
    assert!(pair_page.contains("pending"), "{pair_page}");
    let (status, headers, qr) = get(&format!("{}/console/pair/qr.png", f.conn.base), operator());
    assert_eq!(status, 200);
    assert_eq!(headers["content-type"], "image/png");
    let (w, h, grey) = decode_png(&qr);
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(w, h, |x, y| grey[y * w + x]);
    let grids = img.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code in the image");
    let text = grids[0].decode().expect("the QR decodes").1;
    let password = text
        .strip_prefix("WIFI:T:ADB;S:xagent-")
        .and_then(|r| r.strip_suffix(";;"))
        .and_then(|r| r.split_once(";P:"))
        .map(|(_, p)| p.to_string())
        .unwrap_or_else(|| panic!("QR text shape"));
    for page in [&pair_page, &page] {
        assert!(!page.contains(&password), "the pairing password in a page");
        assert!(!page.contains("WIFI:T:ADB"), "the QR text in a page");
    }
    // A new code replaces the old one.
    let (status, headers, _) = get(&format!("{}/console/pair/new", f.conn.base), operator());
    assert_eq!(status, 303);
    assert_eq!(headers["location"], "/console/pair");
    let (_, _, qr2) = get(&format!("{}/console/pair/qr.png", f.conn.base), operator());
    assert_ne!(qr, qr2, "a new QR code");
    let logs = f.conn.logs();
    for secret in [OPERATOR_KEY, password.as_str(), CLAIM_CODE] {
        assert!(!logs.contains(secret), "a secret in the log");
    }
    drop(f.adb);
}

/// Runs Debian's Chromium headless with `args` against `url`; its stdout. Panics with the fix
/// when it is not installed.
fn chromium(profile: &Path, args: &[&str], url: &str) -> String {
    let bin = Path::new("/usr/bin/chromium");
    assert!(
        bin.exists(),
        "/usr/bin/chromium missing: run .ci/install-test-deps (apt-get install chromium)"
    );
    let out = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A real browser: headless Chromium loads the console with the credentials in the URL; the
/// DOM it built holds the farm, and a screenshot of the page with the phones' screens is a
/// 1280x900 PNG (kept as `docs/console.png` with `XAGENT_KEEP_CONSOLE_SCREENSHOT=1`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_chromium_shows_the_console() {
    let f = farm("console-chromium").await;
    let profile = f.dir.path().join("chromium-profile");
    let authed = f
        .conn
        .base
        .replace("http://", &format!("http://operator:{OPERATOR_KEY}@"));
    let url = format!("{authed}/console");
    let dom = tokio::task::spawn_blocking({
        let profile = profile.clone();
        move || chromium(&profile, &["--dump-dom"], &url)
    })
    .await
    .unwrap();
    for must in [
        SERIAL,
        f.model.as_str(),
        f.channel.as_str(),
        "android_tap",
        "box-a",
    ] {
        assert!(dom.contains(must), "{must} missing from the DOM:\n{dom}");
    }
    assert!(!dom.contains(API_KEY) && !dom.contains(CLAIM_CODE));
    let wrong = f
        .conn
        .base
        .replace("http://", "http://operator:wrong-key-0000000000@");
    let refused = tokio::task::spawn_blocking({
        let profile = f.dir.path().join("chromium-profile-2");
        move || chromium(&profile, &["--dump-dom"], &format!("{wrong}/console"))
    })
    .await
    .unwrap();
    assert!(
        !refused.contains(SERIAL),
        "wrong credentials showed the farm"
    );

    let shot_path = f.dir.path().join("console.png");
    let url = format!("{authed}/console?screens=1");
    tokio::task::spawn_blocking({
        let shot = shot_path.clone();
        move || {
            chromium(
                &profile,
                &[
                    &format!("--screenshot={}", shot.display()),
                    "--window-size=1280,900",
                    "--virtual-time-budget=5000",
                ],
                &url,
            )
        }
    })
    .await
    .unwrap();
    let bytes = std::fs::read(&shot_path).expect("chromium wrote the screenshot");
    let (w, h, grey) = decode_png(&bytes);
    assert_eq!((w, h), (1280, 900));
    // Not a blank page: the header bar is dark, the page light.
    assert!(grey[5 * w + 5] < 80, "dark header");
    assert!(grey[(h - 5) * w + 5] > 200, "light page");
    if std::env::var_os("XAGENT_KEEP_CONSOLE_SCREENSHOT").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/console.png");
        std::fs::copy(&shot_path, docs).unwrap();
    }
}

/// The text of the `<section id="NAME">` of a console page ("" when missing).
fn section<'a>(page: &'a str, name: &str) -> &'a str {
    let open = format!("<section id=\"{name}\">");
    page.split_once(&open)
        .and_then(|(_, rest)| rest.split_once("</section>"))
        .map(|(inside, _)| inside)
        .unwrap_or("")
}

/// With `--fleet-etcd` the farm page shows the fleet from a real etcd: every box (name, URL,
/// version, alive) and its phones (masked serial, model, state, free or bound on which box).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_fleet_the_console_shows_every_box_and_its_phones() {
    let etcd = common::etcd::Etcd::single();
    let url = etcd.url(0);
    let shared = SimPhone::start_with_control("CONSOLEFLEET01", &[]);
    let own = SimPhone::start_with_control("CONSOLEFLEET02", &[]);
    let (da, db) = (
        TempDir::new("console-fleet-a"),
        TempDir::new("console-fleet-b"),
    );
    let key = operator_key_file(da.path());
    let fleet = |name: &'static str| {
        vec![
            "--claim-policy",
            "open",
            "--box",
            name,
            "--fleet-ttl-secs",
            "2",
            "--fleet-etcd",
            url.as_str(),
        ]
    };
    let mut flags_a = fleet("rack1-a");
    flags_a.extend(["--operator-key-file", key.to_str().unwrap()]);
    let a = ConnectorProc::start_with(
        da.path(),
        Phones::Direct(vec![shared.addr.clone(), own.addr.clone()]),
        &flags_a,
    );
    let b = ConnectorProc::start_with(
        db.path(),
        Phones::Direct(vec![shared.addr.clone()]),
        &fleet("rack2-b"),
    );
    // The shared phone is claimed on box B.
    let mut xb = connect(&b.addr).await;
    xb.hello_fresh().await;
    let (chb, _) = xb.open(None).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ack = xb.claim(&chb, &shared.serial).await;
        if ack["payload"]["status"] == "authenticated" {
            break;
        }
        assert!(Instant::now() < deadline, "claim on B: {ack}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let masked = |s: &str| format!("{}…{}", &s[..3], &s[s.len() - 4..]);
    let deadline = Instant::now() + Duration::from_secs(60);
    let page = loop {
        let (status, _, body) = get(&format!("{}/console", a.base), operator());
        assert_eq!(status, 200);
        let page = String::from_utf8_lossy(&body).to_string();
        let fleet = section(&page, "fleet");
        let phones = fleet.matches("<tr class=\"fleet-phone\">").count();
        if fleet.matches("<tr class=\"fleet-box\">").count() == 2
            && phones == 3
            && fleet.contains("bound on <b>rack2-b</b>")
        {
            break page;
        }
        assert!(
            Instant::now() < deadline,
            "no fleet of 2 boxes, 3 phones: {fleet}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let fleet = section(&page, "fleet");
    assert!(fleet.contains("this box: <b>rack1-a</b>"), "{fleet}");
    for (name, conn) in [("rack1-a", &a), ("rack2-b", &b)] {
        let row = fleet
            .split("<tr class=\"fleet-box\">")
            .find(|r| r.starts_with(&format!("<td><b>{name}</b>")))
            .unwrap_or_else(|| panic!("no row of {name}: {fleet}"));
        let row = row.split("</tr>").next().unwrap_or("");
        assert!(
            row.contains(&format!("<code>{}</code>", conn.base)),
            "{row}"
        );
        assert!(row.contains(env!("CARGO_PKG_VERSION")), "{row}");
        assert!(row.contains("<span class=\"ok\">yes</span>"), "{row}");
    }
    let phone_rows: Vec<&str> = fleet
        .split("<tr class=\"fleet-phone\">")
        .skip(1)
        .map(|r| r.split("</tr>").next().unwrap_or(""))
        .collect();
    let row_of = |box_name: &str, serial: &str| {
        phone_rows
            .iter()
            .find(|r| {
                r.starts_with(&format!("<td>{box_name}</td>"))
                    && r.contains(&format!("<code>{}</code>", masked(serial)))
            })
            .copied()
            .unwrap_or_else(|| panic!("no {box_name} row of {serial}: {fleet}"))
    };
    for box_name in ["rack1-a", "rack2-b"] {
        let row = row_of(box_name, &shared.serial);
        assert!(row.contains("bound on <b>rack2-b</b>"), "{row}");
        assert!(row.contains("<span class=\"ok\">device</span>"), "{row}");
    }
    let row = row_of("rack1-a", &own.serial);
    assert!(row.contains("<span class=\"muted\">free</span>"), "{row}");
    // The model as the phone reports it (`ro.product.model`), the same on every box.
    let model = devices_json_model(&a, &own);
    assert!(!model.is_empty());
    assert!(row.contains(&format!("<td>{model}</td>")), "{row}");
    // No full serial in the fleet section.
    for serial in [&shared.serial, &own.serial] {
        assert!(!fleet.contains(serial.as_str()), "{fleet}");
    }

    // B stops: it leaves the fleet on the console at once (its lease revoked).
    drop(xb);
    b.terminate();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, _, body) = get(&format!("{}/console", a.base), operator());
        let page = String::from_utf8_lossy(&body).to_string();
        let fleet = section(&page, "fleet");
        if fleet.matches("<tr class=\"fleet-box\">").count() == 1
            && !fleet.contains("rack2-b")
            && fleet.matches("<span class=\"muted\">free</span>").count() == 2
        {
            break;
        }
        assert!(Instant::now() < deadline, "B never left: {fleet}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The model the connector lists for `phone` (`devices --json` against its data dir).
fn devices_json_model(conn: &ConnectorProc, phone: &SimPhone) -> String {
    let data = conn.data_dir.to_str().unwrap().to_string();
    let rows = common::procs::devices_json_direct(&data, &format!("tcp:{}", phone.addr));
    rows.iter()
        .find(|r| r["serial"] == phone.serial)
        .and_then(|r| r["model"].as_str())
        .unwrap_or_default()
        .to_string()
}
