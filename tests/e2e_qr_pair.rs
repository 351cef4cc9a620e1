//! Flow `adb_qr_pair` end to end over real multicast, confined to a network namespace each test
//! creates (`ip netns add`, `lo` up with multicast on and a `224.0.0.0/4` route) and always
//! deletes: the simulated phone (`sim --wireless --mdns-interface lo`), the connector binary
//! (`--mdns-interface lo`, no phone configured) and the xAgent client all run inside it — the
//! test's own thread enters the namespace (`setns`), so every socket it opens and every process
//! it spawns lives there. Nothing touches the machine's interfaces. The phone is reached only
//! through mDNS; "the user scanned the QR code" is the sim's `POST /v1/pair` with the
//! `qr_code_text` the connector handed out. The QR password never reaches the connector's log
//! (`RUST_LOG=debug`), a later ack, or a descriptor. Needs root (CI runs as root). The last
//! test (USB preferred over Wi-Fi) needs no mDNS and runs on 127.0.0.1.

mod common;

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use common::netns::{inside, is_root, Netns};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::schemas::assert_packet;
use common::xagent::{connect, http_get, XAgent};
use common::API_KEY;

fn wireless_sim(serial: &str, dir: &TempDir) -> SimPhone {
    let state = dir.path().join(format!("sim-{serial}"));
    std::fs::create_dir_all(&state).unwrap();
    SimPhone::start_with_control(
        serial,
        &[
            "--wireless",
            "--state-dir",
            state.to_str().unwrap(),
            "--mdns-interface",
            "lo",
        ],
    )
}

fn qr_connector(dir: &TempDir, extra: &[&str]) -> ConnectorProc {
    let mut args = vec!["--mdns-interface", "lo"];
    args.extend_from_slice(extra);
    ConnectorProc::start_with(dir.path(), Phones::Direct(vec![]), &args)
}

/// `auth.start` of `adb_qr_pair`: the pending ack (checked) and its session id and QR text.
async fn start_qr(x: &mut XAgent, ch: &str) -> (String, String) {
    let ack = x
        .request("auth.start", Some(ch), json!({"flow_id": "adb_qr_pair"}))
        .await;
    assert_packet(&ack);
    let p = &ack["payload"];
    assert_eq!(p["status"], "pending", "{ack}");
    let text = p["qr_code_text"].as_str().unwrap().to_string();
    let (name, password) = text
        .strip_prefix("WIFI:T:ADB;S:")
        .and_then(|r| r.strip_suffix(";;"))
        .and_then(|r| r.split_once(";P:"))
        .unwrap_or_else(|| panic!("QR text shape: {text}"));
    let alnum = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric());
    let random = name.strip_prefix("xagent-").unwrap();
    assert!(random.len() == 10 && alnum(random), "{name}");
    assert!(password.len() >= 12 && alnum(password), "password shape");
    let image = p["qr_code_image"].as_str().unwrap();
    assert_eq!(scan_png_data_url(image), text, "the image is the text");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(p["expires_at"].as_u64().unwrap() > now, "{ack}");
    assert!(p["poll_interval_millis"].as_u64().unwrap() > 0);
    let session = p["auth_session_id"].as_str().unwrap().to_string();
    (session, text)
}

/// Decodes the one QR code in a grey image, as a phone's camera app would.
fn scan(width: usize, height: usize, grey: impl Fn(usize, usize) -> u8) -> String {
    let mut img = rqrr::PreparedImage::prepare_from_greyscale(width, height, grey);
    let grids = img.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code in the image");
    grids[0].decode().expect("QR decodes").1
}

/// `data:image/png;base64,…` → the QR's text.
fn scan_png_data_url(url: &str) -> String {
    use base64::Engine;
    let b64 = url
        .strip_prefix("data:image/png;base64,")
        .expect("PNG data URL");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let frame = reader.next_frame(&mut buf).unwrap();
    assert_eq!(frame.color_type, png::ColorType::Grayscale);
    let (w, h) = (frame.width as usize, frame.height as usize);
    assert!(w >= 200, "a scannable size: {w} px");
    scan(w, h, |x, y| buf[y * frame.line_size + x])
}

/// The `pair` CLI's terminal drawing (Unicode half blocks, light modules drawn) → the text.
fn scan_terminal(lines: &[String]) -> String {
    const PX: usize = 4;
    let rows: Vec<Vec<char>> = lines.iter().map(|l| l.chars().collect()).collect();
    // The drawing is square (quiet zone included): `width` modules each way, two a character
    // row; inverted for dark terminals (ink = light module).
    let width = rows.iter().map(Vec::len).max().unwrap();
    assert_eq!(rows.len(), width.div_ceil(2), "a square drawing");
    let light = |x: usize, y: usize| -> bool {
        let c = rows[y / 2].get(x).copied().unwrap_or(' ');
        matches!((c, y % 2), ('█', _) | ('▀', 0) | ('▄', 1))
    };
    let side = (width + 8) * PX;
    scan(side, side, |x, y| {
        let (mx, my) = (x / PX, y / PX);
        if mx < 4 || my < 4 || mx - 4 >= width || my - 4 >= width {
            return 255;
        }
        if light(mx - 4, my - 4) {
            255
        } else {
            0
        }
    })
}

fn password_of(qr: &str) -> String {
    qr.split(";P:")
        .nth(1)
        .unwrap()
        .trim_end_matches(";;")
        .to_string()
}

/// Polls `auth.status` (≤ `secs`) until the status is one of `until`; every ack is checked
/// against the schema and must not carry the QR password. Returns the last ack and every
/// status seen.
async fn poll(
    x: &mut XAgent,
    ch: &str,
    session: &str,
    password: &str,
    until: &[&str],
    secs: u64,
) -> (Value, Vec<String>) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    let mut seen: Vec<String> = Vec::new();
    loop {
        let st = x
            .request(
                "auth.status",
                Some(ch),
                json!({"flow_id": "adb_qr_pair", "auth_session_id": session}),
            )
            .await;
        assert_packet(&st);
        assert!(
            !st.to_string().contains(password),
            "status leaks the password"
        );
        let status = st["payload"]["status"].as_str().unwrap_or("").to_string();
        if seen.last() != Some(&status) {
            seen.push(status.clone());
        }
        if until.contains(&status.as_str()) {
            return (st, seen);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "auth.status never reached {until:?}; seen {seen:?}; last {st}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

async fn descriptor_status(x: &mut XAgent, ch: &str) -> String {
    let d = x
        .request("connection.descriptor.get", Some(ch), json!({}))
        .await;
    assert_packet(&d);
    d["payload"]["connection_descriptor"]["connection"]["status"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn qr_pairing_over_mdns_binds_the_phone_and_survives_a_restart() {
    if !is_root() {
        eprintln!("skipped: creating network namespaces needs root");
        return;
    }
    let ns = Netns::create("qr-ok");
    inside(&ns, || async {
        let dir = TempDir::new("qr-ok");
        let sim = wireless_sim("SIMQRPAIR001", &dir);
        let mut conn = qr_connector(&dir, &[]);
        let (_, _, card) = http_get(&format!("{}/connector-card.json", conn.base), None);
        let card: Value = serde_json::from_slice(&card).unwrap();
        common::schemas::assert_card(&card);
        let flow = card["auth_flows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["id"] == "adb_qr_pair")
            .expect("adb_qr_pair in the card")
            .clone();
        assert_eq!(flow["type"], "qr_login");
        assert_eq!(flow["target_type"], "device");

        let mut x = connect(&conn.addr).await;
        let id = x.hello_fresh().await;
        let (ch, _) = x.open(None).await;
        let (session, qr) = start_qr(&mut x, &ch).await;
        let password = password_of(&qr);
        assert!(!card.to_string().contains(&password));
        let (st, _) = poll(&mut x, &ch, &session, &password, &["pending"], 5).await;
        assert!(st["payload"].get("qr_code_text").is_none(), "{st}");

        // The user scans: the phone opens its pairing server and announces it over mDNS.
        let ports = sim.control_json("/v1/pair", json!({ "qr_code_text": qr }));
        assert!(ports["pairing_port"].as_u64().is_some(), "{ports}");
        let (done, seen) = poll(
            &mut x,
            &ch,
            &session,
            &password,
            &["authenticated", "failed", "expired"],
            90,
        )
        .await;
        assert_eq!(
            done["payload"]["status"], "authenticated",
            "{done} {seen:?}"
        );
        assert_eq!(
            done["payload"]["connection_descriptor"]["connection"]["status"], "connected",
            "{done}"
        );
        assert_eq!(descriptor_status(&mut x, &ch).await, "connected");
        assert!(sim.state()["wireless"]["paired_keys"].as_u64().unwrap() >= 1);

        // A screenshot over the TLS connection found by mDNS.
        let shot = x.tool(&ch, "android_screenshot", json!({})).await;
        assert_packet(&shot);
        assert!(shot.get("error").is_none(), "{shot}");

        // Finished: a cancel is ignored, with the descriptor.
        let c = x
            .request(
                "auth.cancel",
                Some(&ch),
                json!({"auth_session_id": session}),
            )
            .await;
        assert_packet(&c);
        assert_eq!(c["payload"]["status"], "ignored", "{c}");

        // A second channel scanning the same phone is refused: it is bound to the first.
        let (other, _) = x.open(None).await;
        let (s2, qr2) = start_qr(&mut x, &other).await;
        let pw2 = password_of(&qr2);
        sim.control_json("/v1/pair", json!({ "qr_code_text": qr2 }));
        let (taken, _) = poll(
            &mut x,
            &other,
            &s2,
            &pw2,
            &["authenticated", "failed", "expired"],
            90,
        )
        .await;
        assert_eq!(taken["payload"]["status"], "failed", "{taken}");
        assert!(
            taken["payload"]["message"]
                .as_str()
                .unwrap()
                .contains("already bound"),
            "{taken}"
        );
        assert_eq!(descriptor_status(&mut x, &ch).await, "connected");
        x.close().await;

        // kill -9 and restart: the binding is kept and the phone watched again.
        conn.restart();
        let mut z = connect(&conn.addr).await;
        z.hello(&id).await;
        let (again, _) = z.open(Some(&ch)).await;
        assert_eq!(again, ch);
        let mut status = String::new();
        for _ in 0..100 {
            status = descriptor_status(&mut z, &ch).await;
            if status == "connected" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(status, "connected");
        let st = z.tool(&ch, "android_device_status", json!({})).await;
        assert!(st.get("error").is_none(), "{st}");

        // The phone's Wi-Fi toggles: its connect port moves. The descriptor reads `offline`
        // until the connector finds the phone again by its GUID, then `connected`.
        let before = sim.state()["wireless"]["connect_port"].clone();
        let log_mark = conn.logs().len();
        let moved = sim.control_json("/v1/wireless/move", json!({}));
        assert_ne!(moved["connect_port"], before, "{moved}");
        let mut seen: Vec<String> = Vec::new();
        for _ in 0..150 {
            let status = descriptor_status(&mut z, &ch).await;
            if seen.last() != Some(&status) {
                seen.push(status.clone());
            }
            if status == "connected" && seen.len() > 1 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(
            seen,
            ["connected", "offline", "connected"],
            "descriptor path"
        );
        let st = z.tool(&ch, "android_device_status", json!({})).await;
        assert!(st.get("error").is_none(), "{st}");
        z.close().await;

        // The new address was stored: the next start reaches the phone there at once.
        assert!(conn
            .logs()
            .contains("wireless phone found at a new address"));
        // The log says the phone left and came back (fresh-user finding: only "left" was logged).
        let logs = conn.logs()[log_mark..].to_string();
        let back = logs.lines().any(|l| {
            l.contains("phone state changed")
                && (l.contains("to=device") || l.contains("to=\"device\""))
        });
        assert!(back, "{logs}");
        assert!(
            !conn.logs().contains("reachable through two routes"),
            "the address the phone left is forgotten, not kept as a fallback"
        );
        let mark = conn.logs().len();
        conn.restart();
        let mut z = connect(&conn.addr).await;
        z.hello(&id).await;
        z.open(Some(&ch)).await;
        let mut status = String::new();
        for _ in 0..100 {
            status = descriptor_status(&mut z, &ch).await;
            if status == "connected" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(status, "connected");
        let logs = conn.logs();
        assert!(
            !logs[mark..].contains("wireless phone found at a new address"),
            "found at the stored address, not by a lookup"
        );
        assert!(logs.contains("QR pairing offered"), "the log is captured");

        assert!(logs.contains("phone paired"), "{logs}");
        // The GUID is `adb-<serial>-<6>`: the serial never reaches the log whole through it.
        assert!(!logs.contains("SIMQRPAIR001"), "the full serial is logged");
        for secret in [password.as_str(), pw2.as_str(), API_KEY] {
            assert!(!logs.contains(secret), "log leaks a secret");
        }
    });
}

#[test]
fn qr_pairing_failures_expiry_refresh_and_cancel_are_named() {
    if !is_root() {
        eprintln!("skipped: creating network namespaces needs root");
        return;
    }
    let ns = Netns::create("qr-neg");
    inside(&ns, || async {
        let dir = TempDir::new("qr-neg");
        let sim = wireless_sim("SIMQRPAIR002", &dir);
        let conn = qr_connector(&dir, &["--qr-ttl-secs", "10"]);
        let mut x = connect(&conn.addr).await;
        x.hello("").await;
        let (ch, _) = x.open(None).await;
        let ends = ["authenticated", "failed", "expired", "unauthenticated"];
        let mut passwords = Vec::new();

        // The phone computes with another password: a failure a person understands.
        let (s, qr) = start_qr(&mut x, &ch).await;
        let pw = password_of(&qr);
        sim.control_json(
            "/v1/pair",
            json!({"qr_code_text": qr, "wrong_password": true}),
        );
        let (st, _) = poll(&mut x, &ch, &s, &pw, &ends, 60).await;
        assert_eq!(st["payload"]["status"], "failed", "{st}");
        let msg = st["payload"]["message"].as_str().unwrap().to_string();
        assert!(msg.contains("QR code"), "{msg}");
        passwords.push(pw);

        // The phone leaves mid-way (after TLS).
        let (s, qr) = start_qr(&mut x, &ch).await;
        let pw = password_of(&qr);
        sim.control_json(
            "/v1/pair",
            json!({"qr_code_text": qr, "leave_after": "tls"}),
        );
        let (st, _) = poll(&mut x, &ch, &s, &pw, &ends, 60).await;
        assert_eq!(st["payload"]["status"], "failed", "{st}");
        assert!(
            st["payload"]["message"]
                .as_str()
                .unwrap()
                .contains("closed the pairing connection"),
            "{st}"
        );
        passwords.push(pw);

        // mDNS stays silent (nobody scans): expired; a refresh issues a new code.
        let (s, qr) = start_qr(&mut x, &ch).await;
        let pw = password_of(&qr);
        let (st, _) = poll(&mut x, &ch, &s, &pw, &ends, 30).await;
        assert_eq!(st["payload"]["status"], "expired", "{st}");
        let said = st["payload"]["message"].as_str().unwrap_or_default();
        assert!(said.contains("expired") && said.contains("refresh"), "{st}");
        let fresh = x
            .request(
                "auth.status",
                Some(&ch),
                json!({"flow_id": "adb_qr_pair", "auth_session_id": s, "refresh": true}),
            )
            .await;
        assert_packet(&fresh);
        assert_eq!(fresh["payload"]["status"], "pending", "{fresh}");
        let qr2 = fresh["payload"]["qr_code_text"]
            .as_str()
            .unwrap()
            .to_string();
        assert_ne!(qr2, qr, "a refresh issues a new code");
        passwords.push(pw);
        passwords.push(password_of(&qr2));

        // Cancel mid-way: a slow phone is pairing (`scanned`) when xAgent cancels.
        sim.control_json("/v1/pair", json!({"qr_code_text": qr2, "delay_ms": 4000}));
        let pw2 = password_of(&qr2);
        let (st, _) = poll(&mut x, &ch, &s, &pw2, &["scanned"], 30).await;
        assert_eq!(st["payload"]["status"], "scanned");
        let c = x
            .request("auth.cancel", Some(&ch), json!({"auth_session_id": s}))
            .await;
        assert_packet(&c);
        assert_eq!(c["payload"]["status"], "canceled", "{c}");
        assert_eq!(c["payload"]["auth_status"], "unauthenticated", "{c}");
        let (st, _) = poll(&mut x, &ch, &s, &pw2, &ends, 5).await;
        assert_eq!(st["payload"]["status"], "unauthenticated", "{st}");
        assert_eq!(descriptor_status(&mut x, &ch).await, "created");
        let unknown = x
            .request(
                "auth.cancel",
                Some(&ch),
                json!({"auth_session_id": "auth_nope"}),
            )
            .await;
        assert_eq!(unknown["payload"]["status"], "not_found", "{unknown}");

        let logs = conn.logs();
        assert!(logs.contains("QR pairing failed"), "the log is captured");
        for secret in passwords.iter().map(String::as_str).chain([API_KEY]) {
            assert!(!logs.contains(secret), "log leaks a secret");
        }
        // Nothing was paired by any of these attempts.
        assert_eq!(sim.state()["wireless"]["paired_keys"], 0);
    });
}

/// A canceled QR session stays canceled: `refresh: true` issues no new code and says to start a
/// new session (fresh-user finding 13: it issued a new QR and went back to `pending`); a new
/// `auth.start` still offers one.
#[test]
fn a_canceled_qr_session_is_not_refreshed() {
    if !is_root() {
        eprintln!("skipped: creating network namespaces needs root");
        return;
    }
    let ns = Netns::create("qr-cxl");
    inside(&ns, || async {
        let dir = TempDir::new("qr-cancel");
        let conn = qr_connector(&dir, &[]);
        let mut x = connect(&conn.addr).await;
        x.hello("").await;
        let (ch, _) = x.open(None).await;
        let (s, qr) = start_qr(&mut x, &ch).await;
        let c = x
            .request("auth.cancel", Some(&ch), json!({"auth_session_id": s}))
            .await;
        assert_eq!(c["payload"]["status"], "canceled", "{c}");
        for _ in 0..2 {
            let st = x
                .request(
                    "auth.status",
                    Some(&ch),
                    json!({"flow_id": "adb_qr_pair", "auth_session_id": s, "refresh": true}),
                )
                .await;
            assert_packet(&st);
            assert!(st.get("error").is_none(), "{st}");
            let p = &st["payload"];
            assert_eq!(p["status"], "unauthenticated", "{st}");
            assert!(p.get("qr_code_text").is_none_or(Value::is_null), "{st}");
            let said = p["message"].as_str().unwrap();
            assert!(
                said.contains("canceled") && said.contains("auth.start"),
                "{said}"
            );
        }
        let (s2, qr2) = start_qr(&mut x, &ch).await;
        assert_ne!(s2, s);
        assert_ne!(qr2, qr);
    });
}

/// `auth.logout` while a phone is pairing (`scanned`) ends the QR attempt as `auth.cancel`
/// does: the session reads `unauthenticated`, the channel stays `created`, and the phone is not
/// bound seconds later (fresh-user finding: the logout ack said `created`, then the attempt
/// bound the phone about 1 s later).
#[test]
fn a_logout_while_a_qr_pairing_runs_leaves_the_channel_unbound() {
    if !is_root() {
        eprintln!("skipped: creating network namespaces needs root");
        return;
    }
    let ns = Netns::create("qr-qlo");
    inside(&ns, || async {
        let dir = TempDir::new("qr-logout");
        let sim = wireless_sim("SIMQRPAIR005", &dir);
        let conn = qr_connector(&dir, &[]);
        let mut x = connect(&conn.addr).await;
        x.hello("").await;
        let (ch, _) = x.open(None).await;
        let ends = ["authenticated", "failed", "expired", "unauthenticated"];
        let (s, qr) = start_qr(&mut x, &ch).await;
        let pw = password_of(&qr);
        sim.control_json("/v1/pair", json!({"qr_code_text": qr, "delay_ms": 3000}));
        let (st, _) = poll(&mut x, &ch, &s, &pw, &["scanned"], 30).await;
        assert_eq!(st["payload"]["status"], "scanned", "{st}");
        let out = x.request("auth.logout", Some(&ch), json!({})).await;
        assert!(out.get("error").is_none(), "{out}");
        let (st, _) = poll(&mut x, &ch, &s, &pw, &ends, 10).await;
        assert_eq!(st["payload"]["status"], "unauthenticated", "{st}");
        // Past the phone's delay: still nothing bound.
        tokio::time::sleep(std::time::Duration::from_secs(4)).await;
        assert_eq!(descriptor_status(&mut x, &ch).await, "created");
        assert!(
            conn.logs().contains("ended by auth.logout"),
            "{}",
            conn.logs()
        );
    });
}

/// A pseudo-terminal (posix_openpt(3)): the master side, which the test reads, and the
/// slave side, a real terminal to the child's `isatty`. The terminal turns `\n` into `\r\n`.
fn pty() -> (std::fs::File, std::fs::File) {
    use std::os::fd::FromRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    // SAFETY: plain libc calls on a descriptor we own; `name` is NUL-terminated by ptsname_r.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(
            master >= 0,
            "posix_openpt: {}",
            std::io::Error::last_os_error()
        );
        let master_file = std::fs::File::from_raw_fd(master);
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_str()
            .unwrap()
            .to_owned();
        let slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(path)
            .expect("open the pty's slave side");
        (master_file, slave)
    }
}

/// `pair` with stdout not a terminal (a pipe, as a file or journald would be): no QR drawing
/// and no QR text anywhere, a message naming the two ways on, exit status 1. Needs no mDNS: it
/// stops before browsing. `pair --help` says the same.
#[test]
fn pair_cli_without_a_terminal_draws_no_qr_and_says_why() {
    let dir = TempDir::new("qr-no-tty");
    let out = Command::new(common::procs::bin())
        .args(["pair", "--qr-ttl-secs", "5", "--data-dir"])
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("the pairing QR code is drawn only on a terminal"),
        "{stderr}"
    );
    assert!(
        stderr.contains("run `pair` on a terminal") && stderr.contains("--code HOST:PORT CODE"),
        "{stderr}"
    );
    for text in [&stdout, &stderr] {
        assert!(
            !text.contains("WIFI:T:ADB"),
            "a QR payload was written: {text}"
        );
        assert!(
            !text.contains(['█', '▀', '▄']),
            "a QR drawing was written: {text}"
        );
    }
    assert!(stdout.is_empty(), "{stdout}");
    let help = Command::new(common::procs::bin())
        .args(["pair", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("on a terminal only"), "{help}");
}

#[test]
fn pair_cli_draws_a_scannable_qr_and_prints_the_serial() {
    if !is_root() {
        eprintln!("skipped: creating network namespaces needs root");
        return;
    }
    let ns = Netns::create("qr-cli");
    inside(&ns, || async {
        use std::io::{BufRead, BufReader};
        let dir = TempDir::new("qr-cli");
        let sim = wireless_sim("SIMQRCLI0001", &dir);
        // The QR is drawn only on a terminal: stdout is a pseudo-terminal here.
        let (master, slave) = pty();
        let mut child = Command::new(common::procs::bin())
            .args(["pair", "--mdns-interface", "lo", "--qr-ttl-secs", "60"])
            .arg("--data-dir")
            .arg(dir.path())
            .stdout(slave)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The child holds the slave side now (our copy went into the Command, dropped above
        // with it): once the child exits, reading the master ends (EIO).
        let mut lines = BufReader::new(master)
            .lines()
            .map_while(Result::ok)
            .map(|l| l.trim_end_matches('\r').to_string());
        let mut drawing = Vec::new();
        for line in lines.by_ref() {
            if line.starts_with("On the phone:") {
                break;
            }
            drawing.push(line);
        }
        // The user points the phone's camera at the terminal.
        let qr = scan_terminal(&drawing);
        let password = password_of(&qr);
        sim.control_json("/v1/pair", json!({ "qr_code_text": qr }));
        let rest: Vec<String> = lines.collect();
        let status = child.wait().unwrap();
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        let out = rest.join("\n");
        assert!(status.success(), "{out}\n{err}");
        assert!(out.contains("paired with adb-SIMQRCLI0001-"), "{out}");
        assert!(out.contains("serial SIMQRCLI0001"), "{out}");
        assert!(out.contains("connect address tcp:127.0.0.1:"), "{out}");
        assert!(!out.contains(&password) && !err.contains(&password));
    });
}

/// USB first, Wi-Fi as the fallback: a phone paired over Wi-Fi (flow `adb_pair_code`, no mDNS
/// needed) that also comes online through the adb server (the stand-in for its USB cable,
/// `adb connect` to the simulated phone's plain port: same serial) is served through the adb
/// server and the Wi-Fi watch stops; when that transport goes, the Wi-Fi watch resumes and the
/// descriptor is `connected` again. Runs on 127.0.0.1 only (mDNS confined to `lo`).
#[test]
fn a_paired_phone_prefers_usb_and_falls_back_to_wifi() {
    use common::adb_server::{AdbFlavor, AdbServer};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = TempDir::new("qr-usb");
    let state = dir.path().join("sim-state");
    let sim = SimPhone::start_with_control(
        "SIMUSBWIFI01",
        &["--wireless", "--state-dir", state.to_str().unwrap()],
    );
    let adb = AdbServer::start(AdbFlavor::Debian29);
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::AdbServer(adb.addr()),
        &["--mdns-interface", "lo"],
    );
    let wait_log = |needle: &str, after: usize| {
        for _ in 0..150 {
            if conn.logs()[after..].contains(needle) {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("the connector never logged {needle:?}");
    };
    rt.block_on(async {
        let mut x = connect(&conn.addr).await;
        x.hello("").await;
        let (ch, _) = x.open(None).await;
        let ports = sim.control_json("/v1/pair", json!({"code": "314159"}));
        let ok = x
            .request(
                "auth.start",
                Some(&ch),
                json!({"flow_id": "adb_pair_code", "input": {
                    "host": "127.0.0.1", "port": ports["pairing_port"], "code": "314159",
                    "connect_port": ports["connect_port"]}}),
            )
            .await;
        assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
        wait_log("watching the wireless phone over Wi-Fi", 0);

        // The cable goes in: the adb server sees the same serial; the Wi-Fi watch stops.
        let mark = conn.logs().len();
        adb.connect(&sim.addr);
        wait_log("phone online over USB; Wi-Fi kept as fallback", mark);
        assert_eq!(descriptor_status(&mut x, &ch).await, "connected");
        let st = x.tool(&ch, "android_device_status", json!({})).await;
        assert!(st.get("error").is_none(), "{st}");

        // The cable comes out: Wi-Fi takes over again.
        let mark = conn.logs().len();
        let out = adb.run(&["disconnect", &sim.addr]);
        assert!(out.status.success());
        wait_log("watching the wireless phone over Wi-Fi", mark);
        let mut status = String::new();
        for _ in 0..100 {
            status = descriptor_status(&mut x, &ch).await;
            if status == "connected" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(status, "connected");
        let st = x.tool(&ch, "android_device_status", json!({})).await;
        assert!(st.get("error").is_none(), "{st}");
    });
}
