//! Issue 11 (hardened unit, `Type=notify`): `serve` speaks systemd's notification protocol
//! (sd_notify(3)) the way systemd reads it — datagrams on the unix socket named by
//! `NOTIFY_SOCKET`. This test plays systemd: it binds that socket, starts the real binary with
//! `NOTIFY_SOCKET` and `WATCHDOG_USEC` set, and reads `READY=1` (only once the listener answers),
//! `WATCHDOG=1` at about half the watchdog period, and `STOPPING=1` after SIGTERM, then exit 0.
//! No datagram carries the API key.

mod common;

use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::procs::{bin, spawn_and_wait, TempDir};
use common::xagent::http_get;
use common::API_KEY;

/// The next datagram, as text, or `None` after `limit`.
fn recv(sock: &UnixDatagram, limit: Duration) -> Option<String> {
    sock.set_read_timeout(Some(limit)).expect("timeout");
    let mut buf = [0u8; 4096];
    let n = sock.recv(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf[..n]).into_owned())
}

/// Datagrams until one has a line equal to `line` (all of them, that one last); panics after 10 s.
fn until_line(sock: &UnixDatagram, line: &str, seen: &mut Vec<String>) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let msg = recv(sock, left.max(Duration::from_millis(1)))
            .unwrap_or_else(|| panic!("no {line:?} within 10 s; got {seen:?}"));
        seen.push(msg.clone());
        if msg.lines().any(|l| l == line) {
            return msg;
        }
    }
}

#[test]
fn ready_after_bind_watchdog_at_half_period_stopping_on_sigterm() {
    let dir = TempDir::new("notify");
    let sock_path = dir.path().join("notify.sock");
    let sock = UnixDatagram::bind(&sock_path).expect("bind notify socket");
    let key_file = dir.path().join("api_key");
    std::fs::write(&key_file, format!("{API_KEY}\n")).unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--adb-server", ""])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--api-key-file")
        .arg(&key_file)
        .env("NOTIFY_SOCKET", &sock_path)
        // 400 ms: pings every ~200 ms (systemd would use WatchdogSec=30 → every 15 s).
        .env("WATCHDOG_USEC", "400000")
        .env_remove("WATCHDOG_PID")
        .stderr(Stdio::null());
    let (mut child, addr) = spawn_and_wait(cmd, "listening on http://");

    let mut seen = Vec::new();
    let ready = until_line(&sock, "READY=1", &mut seen);
    assert!(
        ready.contains(&format!("STATUS=listening on {addr}")),
        "{ready:?}"
    );
    // Ready means serving: the card answers right away.
    let (status, _, _) = http_get(&format!("http://{addr}/connector-card.json"), None);
    assert_eq!(status, 200);

    // Watchdog: at least three pings, spaced near half of WATCHDOG_USEC.
    let mut stamps = Vec::new();
    while stamps.len() < 3 {
        until_line(&sock, "WATCHDOG=1", &mut seen);
        stamps.push(Instant::now());
    }
    let gaps: Vec<Duration> = stamps.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.iter().all(|g| *g >= Duration::from_millis(100)),
        "pings far faster than every 200 ms: {gaps:?}"
    );

    let term = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(term.success());
    let stopping = until_line(&sock, "STOPPING=1", &mut seen);
    assert!(stopping.contains("STATUS=draining"), "{stopping:?}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(Instant::now() < deadline, "no exit within 20 s of SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status {status:?}");
    for msg in &seen {
        assert!(
            !msg.contains(API_KEY),
            "the API key reached systemd: {msg:?}"
        );
    }
    println!(
        "notify datagrams: {} (READY, {} watchdog pings seen, STOPPING); ping gaps {gaps:?}",
        seen.len(),
        seen.iter().filter(|m| m.contains("WATCHDOG=1")).count()
    );
}

#[test]
fn without_notify_socket_nothing_is_sent_and_serve_runs() {
    // Outside systemd the same binary serves normally (no socket, no error in the log).
    let dir = TempDir::new("nonotify");
    let key_file = dir.path().join("api_key");
    std::fs::write(&key_file, format!("{API_KEY}\n")).unwrap();
    let log = dir.path().join("log");
    let mut cmd = Command::new(bin());
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--adb-server", ""])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--api-key-file")
        .arg(&key_file)
        .env_remove("NOTIFY_SOCKET")
        .env("WATCHDOG_USEC", "400000")
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
    let (mut child, addr) = spawn_and_wait(cmd, "listening on http://");
    let (status, _, _) = http_get(&format!("http://{addr}/connector-card.json"), None);
    assert_eq!(status, 200);
    std::thread::sleep(Duration::from_millis(500));
    let _ = child.kill();
    let _ = child.wait();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("notification"), "{text}");
}
