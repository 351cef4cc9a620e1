//! Hardening found by an attack run from outside (issue 19 §3), each through the real binary:
//! L1 the wrong-claim-code pause survives a restart; L3 a frame that fails to decode still has
//! its ids echoed; L5 half-sent request heads do not stall other clients; L6 storage errors
//! name their cause and path; L7 a database file that is empty or not SQLite refuses to start.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::procs::{
    bin, half_sent_heads, open_fds, run_cli, ConnectorProc, Phones, SimPhone, TempDir,
};
use common::scenario::{claimed_channel, code_gated_sim};
use common::xagent::{connect, connect_over, upload_answer};
use common::API_KEY;

fn code(p: &Value) -> &str {
    p["error"]["code"].as_str().unwrap_or("")
}

/// L3: a frame that fails to decode for any reason — a number out of range, nesting past the
/// parser's limit, a duplicate key, a wrong type elsewhere, trailing text, a frame cut short —
/// but whose `packet_id`/`request_id` can be read is answered `invalid_packet` with them echoed
/// (the attack run's `"time":1e400` came back without them).
#[tokio::test]
async fn l3_undecodable_frames_echo_their_ids() {
    let dir = TempDir::new("l3");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let head = |n: usize| {
        format!(
            r#""schema":"xagent.connector.packet/v1","packet_id":"pkt_l3_{n}","request_id":"req_l3_{n}""#
        )
    };
    let frames = [
        format!(r#"{{{},"type":"ping","time":1e400}}"#, head(0)),
        format!(r#"{{"time":-1e999999,{},"type":"ping"}}"#, head(1)),
        format!(
            r#"{{{},"type":"ping","payload":{{"a":{}1{}}}}}"#,
            head(2),
            "[".repeat(300),
            "]".repeat(300)
        ),
        format!(r#"{{{},"type":"ping","type":"pong"}}"#, head(3)),
        format!(r#"{{{},"type":"ping","time":"yesterday"}}"#, head(4)),
        format!(r#"{{{},"type":"ping","connector_channel_id":7}}"#, head(5)),
        format!(r#"{{{},"type":"ping"}} {{"more":1}}"#, head(6)),
        format!(r#"{{{},"type":"ping","payload":{{"text":"cut"#, head(7)),
        format!(
            r#"{{{},"type":"ping","payload":{{"s":"\ud800"}}}}"#,
            head(8)
        ),
    ];
    for (n, frame) in frames.iter().enumerate() {
        x.send_text(frame).await;
        let e = x.recv_within(5).await.expect("an error packet");
        assert_eq!(
            (e["type"].as_str(), code(&e)),
            (Some("error"), "invalid_packet"),
            "frame {n}: {e}"
        );
        assert_eq!(
            (e["reply_to"].as_str(), e["request_id"].as_str()),
            (
                Some(format!("pkt_l3_{n}").as_str()),
                Some(format!("req_l3_{n}").as_str())
            ),
            "frame {n} ({}…): {e}",
            &frame[..frame.len().min(120)]
        );
    }
    // Ids given twice with different values are no one request's: not echoed.
    x.send_text(r#"{"packet_id":"a","packet_id":"b","request_id":"req_l3_dup","time":1e400}"#)
        .await;
    let e = x.recv_within(5).await.expect("an error packet");
    assert_eq!(code(&e), "invalid_packet", "{e}");
    assert!(e.get("reply_to").is_none(), "{e}");
    assert_eq!(e["request_id"], json!("req_l3_dup"), "{e}");
    let pong = x.request("ping", None, json!({})).await;
    assert_eq!(pong["type"], "pong", "socket still usable");
}

// ---------------------------------------------------------------------------------------------
// Helpers: a `serve` that is expected to refuse, mounts made by the test (root), uploads.

/// Runs `serve` on `data_dir` (no phones; the test API key written there) and expects it to
/// refuse to start: returns (exit code, stderr). Panics if it starts listening instead.
fn serve_refused(data_dir: &Path) -> (Option<i32>, String) {
    let key = data_dir.join("api_key.txt");
    let _ = std::fs::write(&key, format!("{API_KEY}\n"));
    let mut child = Command::new(bin())
        .args(["serve", "--listen", "127.0.0.1:0", "--adb-server", ""])
        .arg("--data-dir")
        .arg(data_dir)
        .arg("--api-key-file")
        .arg(&key)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            let out = child.wait_with_output().expect("output");
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(!stdout.contains("listening on"), "it started: {stdout}");
            return (
                status.code(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            );
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("serve neither refused nor exited within 30 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A mount the test made (a tmpfs or a read-only bind mount), lazily unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    /// A tmpfs of `size` (e.g. `4m`) on `at` (created).
    fn tmpfs(at: &Path, size: &str) -> Mount {
        std::fs::create_dir_all(at).unwrap();
        run_ok(
            Command::new("mount")
                .args([
                    "-t",
                    "tmpfs",
                    "-o",
                    &format!("size={size},mode=0700"),
                    "tmpfs",
                ])
                .arg(at),
        );
        Mount(at.to_path_buf())
    }

    /// `src` bind-mounted read-only on `at` (created).
    fn read_only_bind(src: &Path, at: &Path) -> Mount {
        std::fs::create_dir_all(at).unwrap();
        run_ok(Command::new("mount").arg("--bind").arg(src).arg(at));
        let mount = Mount(at.to_path_buf());
        run_ok(
            Command::new("mount")
                .args(["-o", "remount,bind,ro"])
                .arg(at),
        );
        mount
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn run_ok(cmd: &mut Command) {
    let out = cmd.output().expect("run");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Fills the filesystem holding `dir` with one file until the kernel says ENOSPC; returns it.
fn fill_disk(dir: &Path) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler.bin");
    let mut f = std::fs::File::create(&path).unwrap();
    for chunk in [1 << 20, 4096, 1] {
        let block = vec![0x5au8; chunk];
        while f.write_all(&block).is_ok() {}
    }
    let _ = f.flush();
    path
}

/// A data dir a connector has run in once (a real database, then killed): its connector id.
async fn used_data_dir(dir: &Path) -> String {
    let mut conn = ConnectorProc::start(dir, Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    let id = x.hello_fresh().await;
    x.open(None).await;
    conn.kill();
    id
}

// ---------------------------------------------------------------------------------------------
// L7: a database file that exists but is empty or not SQLite refuses to start.

/// L7: an empty `connector.sqlite3` (and variants: bytes that are not SQLite, a cut-off
/// header, another program's SQLite database) refuses to start with a message naming the file
/// and the fix, leaves the file as it was, and `check` names it as a problem too. Before, an
/// empty file started silently as a fresh database: a new `connector_id`, every binding gone.
#[tokio::test]
async fn l7_an_empty_or_foreign_database_refuses_to_start() {
    let dir = TempDir::new("l7");
    used_data_dir(dir.path()).await;
    let db = dir.path().join("connector.sqlite3");
    let foreign = dir.path().join("foreign.sqlite3");
    run_ok(Command::new("sqlite3").arg(&foreign).arg(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine');",
    ));
    let variants: [(&str, Vec<u8>, &str); 4] = [
        ("empty", Vec::new(), "is empty (0 bytes)"),
        (
            "not sqlite",
            b"PK\x03\x04 backup.zip, restored here by mistake".to_vec(),
            "not an SQLite database",
        ),
        (
            "cut-off header",
            b"SQLite for".to_vec(),
            "not an SQLite database",
        ),
        (
            "another program's",
            std::fs::read(&foreign).unwrap(),
            "not this connector's",
        ),
    ];
    for (what, bytes, said) in variants {
        for suffix in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(dir.path().join(format!("connector.sqlite3{suffix}")));
        }
        std::fs::write(&db, &bytes).unwrap();
        let (code, stderr) = serve_refused(dir.path());
        assert_eq!(code, Some(1), "{what}: {stderr}");
        assert!(
            stderr.contains(&db.display().to_string()),
            "{what}: names the file: {stderr}"
        );
        assert!(stderr.contains(said), "{what}: {stderr}");
        assert!(
            stderr.contains("restore the file from a backup"),
            "{what}: {stderr}"
        );
        assert_eq!(
            std::fs::read(&db).unwrap(),
            bytes,
            "{what}: the file is left as it was"
        );
        if what != "another program's" {
            let data = dir.path().to_str().unwrap();
            let key = format!("{data}/api_key.txt");
            let (code, out, err) = run_cli(&[
                "check",
                "--data-dir",
                data,
                "--adb-server",
                "",
                "--api-key-file",
                &key,
            ]);
            assert_eq!(code, Some(1), "{what}: {out}{err}");
            let line = out
                .lines()
                .find(|l| l.starts_with("PROBLEM  database"))
                .unwrap_or_else(|| panic!("{what}: check names the database: {out}"));
            assert!(
                line.contains(&db.display().to_string()) && line.contains(said),
                "{line}"
            );
        }
    }
}

/// L7, the other side: a first start that died while making its database leaves no file that
/// a later start would refuse (the database is made under `-new` and renamed into place), and
/// a data dir whose database was made whole starts as before, with its `connector_id`.
#[tokio::test]
async fn l7_a_database_made_whole_starts_and_keeps_its_identity() {
    let dir = TempDir::new("l7-ok");
    let id = used_data_dir(dir.path()).await;
    // A leftover of a creation that died half-way is not the database and is replaced.
    std::fs::write(dir.path().join("connector.sqlite3-new"), b"").unwrap();
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    let ack = x.hello("").await;
    assert_eq!(ack["payload"]["connector_id"], json!(id), "{ack}");
    let fresh = TempDir::new("l7-fresh");
    std::fs::write(fresh.path().join("connector.sqlite3-new"), b"half").unwrap();
    let conn = ConnectorProc::start(fresh.path(), Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    x.hello_fresh().await;
    assert!(!fresh.path().join("connector.sqlite3-new").exists());
}

// ---------------------------------------------------------------------------------------------
// L6: storage errors name the cause (disk full, read-only, locked) and the path.

/// L6 at start: a database that cannot be written — immutable (`chattr +i`; it read "I/O error
/// in the advisory file locking layer"), on a read-only mount, or locked by another process
/// holding the SQLite lock — refuses to start with the cause and the path named.
#[tokio::test]
async fn l6_the_store_at_start_names_read_only_immutable_and_locked() {
    let dir = TempDir::new("l6-start");
    used_data_dir(dir.path()).await;
    let db = dir.path().join("connector.sqlite3");
    let shown = db.display().to_string();

    run_ok(Command::new("chattr").arg("+i").arg(&db));
    let (code, stderr) = serve_refused(dir.path());
    run_ok(Command::new("chattr").arg("-i").arg(&db));
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains(&shown), "names the file: {stderr}");
    assert!(stderr.contains("immutable"), "{stderr}");
    assert!(stderr.contains("chattr -i"), "the fix: {stderr}");
    assert!(!stderr.contains("advisory file locking"), "{stderr}");

    // The same data dir, read-only.
    let ro = TempDir::new("l6-ro");
    let at = ro.path().join("data");
    let mount = Mount::read_only_bind(dir.path(), &at);
    let (code, stderr) = serve_refused(&at);
    drop(mount);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("mounted read-only"), "{stderr}");
    assert!(
        stderr.contains(&at.display().to_string()),
        "names the path: {stderr}"
    );

    // Another process holds the SQLite lock (an `sqlite3` shell in an exclusive transaction).
    let mut holder = Command::new("sqlite3")
        .arg(&db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sqlite3");
    {
        use std::io::{BufRead, BufReader, Write};
        let stdin = holder.stdin.as_mut().unwrap();
        writeln!(
            stdin,
            "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; SELECT 'held';"
        )
        .unwrap();
        stdin.flush().unwrap();
        // The pragma prints `exclusive` first.
        let held = BufReader::new(holder.stdout.as_mut().unwrap())
            .lines()
            .map_while(Result::ok)
            .any(|l| l.trim() == "held");
        assert!(held, "sqlite3 holds the lock");
    }
    let (code, stderr) = serve_refused(dir.path());
    let _ = holder.kill();
    let _ = holder.wait();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains(&shown), "names the file: {stderr}");
    assert!(stderr.contains("locked by another process"), "{stderr}");

    // With the causes gone, the data dir starts again.
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
}

/// L6 at run time, on a full disk (a small tmpfs the test fills): an upload ("cannot store
/// the upload"), the file cache (a screenshot) and the store (a channel to persist) each answer
/// `internal_error` naming the full disk and the path; once space is freed, each works again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l6_a_full_disk_is_named_on_upload_file_cache_and_store() {
    let sim = SimPhone::start("SIMDISKFULL0006");
    let dir = TempDir::new("l6-full");
    let data = dir.path().join("data");
    let _mount = Mount::tmpfs(&data, "6m");
    let conn = ConnectorProc::start(&data, Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    let shot = x.tool(&ch, "android_screenshot", json!({})).await;
    assert!(shot.get("error").is_none(), "works before: {shot}");
    let cached = || -> Vec<PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(data.join("files"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v
    };
    let before = cached();
    let filler = fill_disk(&data);
    let here = data.display().to_string();

    let (status, body) = upload_answer(&conn.base, &ch, "app.apk", &[7u8; 48 * 1024]);
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert_eq!((status, code(&body)), (500, "internal_error"), "{body}");
    assert!(message.contains("the disk is full"), "{message}");
    assert!(
        message.contains(&format!("{here}/files/")),
        "names the path: {message}"
    );
    assert!(message.contains("free space"), "{message}");
    assert_eq!(cached(), before, "no partial upload is kept");

    let shot = x.tool(&ch, "android_screenshot", json!({})).await;
    let message = shot["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(code(&shot), "internal_error", "{shot}");
    assert!(message.contains("the disk is full"), "{message}");
    assert!(message.contains(&format!("{here}/files/")), "{message}");
    assert_eq!(cached(), before, "no partial screenshot is kept");

    let open = x.request("channel.open", None, json!({})).await;
    let message = open["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(code(&open), "internal_error", "{open}");
    assert!(
        message.contains("could not persist the channel"),
        "{message}"
    );
    assert!(message.contains("the disk is full"), "{message}");
    assert!(message.contains(&here), "{message}");

    std::fs::remove_file(filler).unwrap();
    let (status, body) = upload_answer(&conn.base, &ch, "app.apk", &[7u8; 48 * 1024]);
    assert_eq!(status, 200, "space freed: {body}");
    let shot = x.tool(&ch, "android_screenshot", json!({})).await;
    assert!(shot.get("error").is_none(), "{shot}");
    let (_, open) = x.open(None).await;
    assert_eq!(open["type"], "channel.open.ack");
}

// ---------------------------------------------------------------------------------------------
// L1: the wrong-claim-code pause survives a restart.

/// L1: wrong claim codes are counted on disk before they are answered, so a restart — even a
/// `kill -9` right after the last refusal — gives no fresh attempts: three wrong codes, a
/// restart, two more, and the next (even the right code) is `rate_limited` with the pause
/// running; another restart while paused keeps the pause. Before, each restart gave five fresh
/// attempts per serial and reset the doubling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l1_the_claim_code_pause_survives_a_restart() {
    let mut phone = code_gated_sim("SIMPAUSE000L1", "right-code-l1").await;
    let serial = phone.sim.serial.clone();
    let claim = |code: &str| json!({"flow_id": "adb_device_claim", "input": {"serial": serial, "claim_code": code}});
    async fn reconnect(phone: &mut common::scenario::DirectSim) {
        phone.conn.restart();
        let mut x = connect(&phone.conn.addr).await;
        x.hello(&phone.connector_id).await;
        let (ch, _) = x.open(Some(&phone.ch)).await;
        assert_eq!(ch, phone.ch, "the channel is restored");
        phone.x = x;
    }
    for _ in 0..3 {
        let e = phone
            .x
            .request("auth.start", Some(&phone.ch), claim("guess-1"))
            .await;
        assert_eq!(code(&e), "auth_failed", "{e}");
    }
    reconnect(&mut phone).await;
    for n in 0..2 {
        let e = phone
            .x
            .request("auth.start", Some(&phone.ch), claim("guess-2"))
            .await;
        assert_eq!(
            code(&e),
            "auth_failed",
            "attempt {} of 5 after a restart: {e}",
            n + 4
        );
    }
    reconnect(&mut phone).await;
    for code_tried in ["guess-3", "right-code-l1"] {
        let e = phone
            .x
            .request("auth.start", Some(&phone.ch), claim(code_tried))
            .await;
        assert_eq!(code(&e), "rate_limited", "paused across the restart: {e}");
        let message = e["error"]["message"].as_str().unwrap();
        let secs: u64 = message
            .split("retry in ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("names the wait: {message}"));
        assert!(
            (1..=30).contains(&secs),
            "the first pause, not a fresh one: {message}"
        );
        assert!(
            !message.contains("right-code-l1") && !message.contains(&serial),
            "{message}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// L5: half-sent request heads of one peer do not stall other clients.

/// A TCP connection to `addr` from the loopback address `local`.
async fn connect_from(local: &str, addr: &str) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
    socket
        .connect(addr.parse().unwrap())
        .await
        .expect("connect")
}

/// `GET /health` with the key from `local`: the status line's code.
async fn health_from(local: &str, addr: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = connect_from(local, addr).await;
    let head = format!(
        "GET /health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {API_KEY}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), s.read_to_end(&mut answer))
        .await
        .expect("answered")
        .expect("read");
    let text = String::from_utf8_lossy(&answer);
    text.split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Whether the server closed `s` (EOF or reset) within `secs`; `false` if still open.
fn closed_within(s: &mut std::net::TcpStream, secs: u64) -> bool {
    use std::io::Read;
    s.set_read_timeout(Some(Duration::from_secs(secs))).unwrap();
    let mut buf = [0u8; 256];
    match s.read(&mut buf) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    }
}

/// L5: 300 half-sent request heads from 127.0.0.1 hold at most 32 connections (the per-peer
/// cap of unauthenticated connections; the oldest waiting one is closed for each newer one),
/// so a client from another address (127.0.0.2, HTTP and WebSocket) and a client of 127.0.0.1
/// itself are served before the heads' header timeout (before, all 256 slots were taken and
/// every new client waited ~10 s for hyper's timeout to free one); the heads the connector
/// still holds are closed at the header timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l5_half_sent_heads_do_not_stall_other_clients() {
    let dir = TempDir::new("l5");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let baseline = open_fds(conn.pid());
    let addr = conn.addr.clone();
    let started = Instant::now();
    let mut heads = tokio::task::spawn_blocking(move || half_sent_heads(&addr, 300))
        .await
        .unwrap();

    assert_eq!(
        health_from("127.0.0.2", &conn.addr).await,
        200,
        "another peer is served"
    );
    let stream = connect_from("127.0.0.2", &conn.addr).await;
    let mut ws = connect_over(stream, &conn.addr).await;
    ws.hello("").await;
    assert_eq!(
        health_from("127.0.0.1", &conn.addr).await,
        200,
        "the same peer is served too"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "served before the heads' 10 s header timeout freed any slot ({:?})",
        started.elapsed()
    );

    // The connector holds at most 32 of the heads (plus the WebSocket and its own files).
    let held = loop {
        let fds = open_fds(conn.pid());
        if fds <= baseline + 32 + 4 || started.elapsed() > Duration::from_secs(9) {
            break fds;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        held <= baseline + 32 + 4,
        "{held} fds held (baseline {baseline})"
    );
    let mut newest = heads.pop().unwrap();
    let mut oldest = heads.remove(0);
    let cut = tokio::task::spawn_blocking(move || {
        // The oldest was closed to make room; the newest is closed by the header timeout.
        let evicted = closed_within(&mut oldest, 5);
        let timed_out = closed_within(&mut newest, 30);
        (evicted, timed_out)
    })
    .await
    .unwrap();
    assert_eq!(cut, (true, true), "(evicted, closed at the header timeout)");
}
