//! The real binary as child processes: `serve` and `sim`. Each reads its own stdout for the bound
//! address and is killed on drop. Connector logs (stderr) go to a file the test can read.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::API_KEY;

/// Path of the binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_xagent-adb-connector")
}

/// `devices --json` of data dir `data` for the one direct phone `transport` (`tcp:HOST:PORT`, no
/// adb server): its rows, after asserting exit 0.
pub fn devices_json_direct(data: &str, transport: &str) -> Vec<serde_json::Value> {
    devices_json(data, &["--adb-server", "", "--device", transport])
}

/// `devices --json` of data dir `data` with the phone flags `phones` (`--adb-server A`, …):
/// its rows, after asserting exit 0.
pub fn devices_json(data: &str, phones: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec!["devices", "--json", "--data-dir", data];
    args.extend_from_slice(phones);
    let (code, out, err) = run_cli(&args);
    assert_eq!(code, Some(0), "{out}{err}");
    serde_json::from_str(&out).expect("devices --json")
}

/// Runs the binary with `args` and no inherited `XAGENT_ADB_*` (a one-shot command such as
/// `check`, `devices`, `pair`); returns (exit code, stdout, stderr).
pub fn run_cli(args: &[&str]) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(bin());
    cmd.args(args);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
        cmd.env_remove(k);
    }
    let out = cmd.output().expect("run binary");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// File descriptors process `pid` holds open (`/proc/PID/fd`).
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// Opens `n` connections to `addr` (`HOST:PORT`) and sends half of a request head on each
/// (blocking: call it from `spawn_blocking`); returns them, oldest first.
pub fn half_sent_heads(addr: &str, n: usize) -> Vec<std::net::TcpStream> {
    use std::io::Write;
    (0..n)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(addr).expect("connect");
            s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
                .expect("half a head");
            s
        })
        .collect()
}

/// A unique temporary directory (removed on drop).
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// Creates `…/xagent-test-<tag>-<pid>-<n>`.
    pub fn new(tag: &str) -> TempDir {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("xagent-test-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
    /// The path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Spawns `cmd` and waits (≤ 20 s) for a stdout line starting with each of `prefixes`, in
/// order; returns the child and the rest of those lines. Later stdout lines are drained.
fn spawn_and_wait_all(mut cmd: Command, prefixes: &[&str]) -> (Child, Vec<String>) {
    let mut child = cmd.stdout(Stdio::piped()).spawn().expect("spawn binary");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    let mut found = Vec::new();
    for prefix in prefixes {
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        found.push(rest.trim().to_string());
                        break;
                    }
                }
                Err(e) => {
                    let _ = child.kill();
                    let status = child.wait().ok();
                    panic!("process did not print {prefix:?} ({e:?}; exit status {status:?})");
                }
            }
        }
    }
    (child, found)
}

/// Spawns `cmd` and waits (≤ 20 s) for a stdout line starting with `prefix`; returns the child
/// and the rest of that line.
pub fn spawn_and_wait(cmd: Command, prefix: &str) -> (Child, String) {
    let (child, mut found) = spawn_and_wait_all(cmd, &[prefix]);
    (child, found.remove(0))
}

/// A simulated phone process.
pub struct SimPhone {
    child: Child,
    /// `HOST:PORT` of its ADB transport.
    pub addr: String,
    /// Its ro.serialno.
    pub serial: String,
    /// `http://127.0.0.1:PORT` of its control API, when started with one.
    pub control: Option<String>,
}

impl SimPhone {
    /// `xagent-adb-connector sim --listen 127.0.0.1:0 --serial SERIAL`.
    pub fn start(serial: &str) -> SimPhone {
        Self::start_at(serial, "127.0.0.1:0")
    }

    /// A phone whose process runs at `nice 10`: in production a phone is separate hardware, so a
    /// benchmark of the connector lets the simulated phones yield the host's cores to it.
    pub fn start_background(serial: &str) -> SimPhone {
        let mut cmd = Command::new("nice");
        cmd.args(["-n", "10", bin()]);
        Self::spawn_with(cmd, serial, "127.0.0.1:0", &[])
    }

    /// A phone at `nice 10` with extra `sim` flags (benches: `--timing realistic …`).
    pub fn start_background_with(serial: &str, extra: &[&str]) -> SimPhone {
        let mut cmd = Command::new("nice");
        cmd.args(["-n", "10", bin()]);
        Self::spawn_with(cmd, serial, "127.0.0.1:0", extra)
    }

    /// The same on a given `HOST:PORT` (to bring a phone back where it was).
    pub fn start_at(serial: &str, listen: &str) -> SimPhone {
        Self::spawn(serial, listen, &[])
    }

    /// A phone with its control API on a loopback port chosen by the OS, and extra `sim` flags.
    pub fn start_with_control(serial: &str, extra: &[&str]) -> SimPhone {
        let mut cmd = Command::new(bin());
        cmd.args([
            "sim",
            "--listen",
            "127.0.0.1:0",
            "--serial",
            serial,
            "--control",
            "127.0.0.1:0",
        ])
        .args(extra)
        .stderr(Stdio::null());
        let (child, found) = spawn_and_wait_all(
            cmd,
            &[
                "simulated phone listening on tcp:",
                "control API on http://",
            ],
        );
        SimPhone {
            child,
            addr: found[0].clone(),
            serial: serial.to_string(),
            control: Some(format!("http://{}", found[1])),
        }
    }

    fn spawn(serial: &str, listen: &str, extra: &[&str]) -> SimPhone {
        Self::spawn_with(Command::new(bin()), serial, listen, extra)
    }

    /// Runs `sim` through `cmd` (the binary itself, or a wrapper such as `nice` whose
    /// arguments end with the binary).
    fn spawn_with(mut cmd: Command, serial: &str, listen: &str, extra: &[&str]) -> SimPhone {
        cmd.args(["sim", "--listen", listen, "--serial", serial])
            .args(extra)
            .stderr(Stdio::null());
        let (child, rest) = spawn_and_wait(cmd, "simulated phone listening on tcp:");
        SimPhone {
            child,
            addr: rest,
            serial: serial.to_string(),
            control: None,
        }
    }

    /// `GET /v1/state` of the control API.
    pub fn state(&self) -> serde_json::Value {
        self.control_get("/v1/state")
    }

    /// `GET` a control API path as JSON (asserted `200`).
    pub fn control_get(&self, path: &str) -> serde_json::Value {
        let url = format!(
            "{}{path}",
            self.control.as_ref().expect("sim started with control")
        );
        let (st, _, body) = super::xagent::http_get(&url, None);
        assert_eq!(st, 200);
        serde_json::from_slice(&body).expect("control json")
    }

    /// `POST` a JSON body to a control API path; the JSON answer (a status other than 2xx
    /// panics).
    pub fn control_json(&self, path: &str, body: serde_json::Value) -> serde_json::Value {
        let url = format!(
            "{}{path}",
            self.control.as_ref().expect("sim started with control")
        );
        let text = ureq::post(&url)
            .header("Content-Type", "application/json")
            .send(body.to_string().as_bytes())
            .expect("control post")
            .body_mut()
            .read_to_string()
            .expect("control answer");
        serde_json::from_str(&text).expect("control json")
    }

    /// `POST` a JSON body to a control API path; returns the status.
    pub fn control_post(&self, path: &str, body: serde_json::Value) -> u16 {
        let url = format!(
            "{}{path}",
            self.control.as_ref().expect("sim started with control")
        );
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .into();
        agent
            .post(&url)
            .header("Content-Type", "application/json")
            .send(body.to_string().as_bytes())
            .expect("control post")
            .status()
            .as_u16()
    }

    /// How many command-log entries have exactly this argv.
    pub fn count_runs(&self, argv: &[&str]) -> usize {
        self.state()["command_log"]
            .as_array()
            .map(|log| {
                log.iter()
                    .filter(|e| {
                        e["argv"].as_array().is_some_and(|a| {
                            a.len() == argv.len() && a.iter().zip(argv).all(|(x, y)| x == y)
                        })
                    })
                    .count()
            })
            .unwrap_or(0)
    }

    /// Kills the process: the phone is unplugged.
    pub fn unplug(mut self) -> (String, String) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        (self.serial.clone(), self.addr.clone())
    }
}

impl Drop for SimPhone {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How the connector reaches phones in a test.
#[derive(Clone, Debug)]
pub enum Phones {
    /// Through this adb server (`--adb-server`).
    AdbServer(String),
    /// Direct transport to these `HOST:PORT`s (`--device tcp:…`), adb server disabled.
    Direct(Vec<String>),
}

/// A connector process (`serve`).
pub struct ConnectorProc {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    /// Its data dir (kept across restarts by the test).
    pub data_dir: PathBuf,
    /// Where its stderr (logs) goes.
    pub log_path: PathBuf,
    phones: Phones,
    extra: Vec<String>,
    /// `RUST_LOG` of the process (`debug` unless started with [`ConnectorProc::start_logging`]).
    rust_log: String,
}

impl ConnectorProc {
    /// Starts `serve` on a free port with the test API key and claim policy open.
    pub fn start(data_dir: &Path, phones: Phones) -> ConnectorProc {
        Self::start_with(data_dir, phones, &["--claim-policy", "open"])
    }

    /// [`ConnectorProc::start_with`] with claim policy `code` and `code` as `serial`'s claim
    /// code (written to `DATA_DIR/codes.toml`, passed as `--config`), then `extra`.
    pub fn start_with_claim_code(
        data_dir: &Path,
        phones: Phones,
        serial: &str,
        code: &str,
        extra: &[&str],
    ) -> ConnectorProc {
        let codes = data_dir.join("codes.toml");
        std::fs::write(&codes, format!("[claim_codes]\n{serial} = \"{code}\"\n")).unwrap();
        let codes = codes.to_str().unwrap().to_string();
        let mut flags = vec!["--claim-policy", "code", "--config", &codes];
        flags.extend_from_slice(extra);
        ConnectorProc::start_with(data_dir, phones, &flags)
    }

    /// Starts `serve` with extra flags.
    pub fn start_with(data_dir: &Path, phones: Phones, extra: &[&str]) -> ConnectorProc {
        Self::start_logging(data_dir, phones, extra, "debug")
    }

    /// [`ConnectorProc::start_with`] logging at `rust_log` (`RUST_LOG`, e.g. `trace`).
    pub fn start_logging(
        data_dir: &Path,
        phones: Phones,
        extra: &[&str],
        rust_log: &str,
    ) -> ConnectorProc {
        let mut c = ConnectorProc {
            child: None,
            base: String::new(),
            addr: String::new(),
            data_dir: data_dir.to_path_buf(),
            log_path: data_dir.join("connector.log"),
            phones,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            rust_log: rust_log.to_string(),
        };
        c.spawn("127.0.0.1:0");
        c
    }

    fn spawn(&mut self, listen: &str) {
        let key_file = self.data_dir.join("api_key.txt");
        std::fs::write(&key_file, format!("{API_KEY}\n")).expect("key file");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log_path)
            .expect("log file");
        let mut cmd = Command::new(bin());
        cmd.arg("serve")
            .args(["--listen", listen])
            .arg("--data-dir")
            .arg(&self.data_dir)
            .arg("--api-key-file")
            .arg(&key_file)
            .args(&self.extra)
            .env("RUST_LOG", &self.rust_log)
            .stderr(Stdio::from(log));
        match &self.phones {
            Phones::AdbServer(addr) => {
                cmd.args(["--adb-server", addr]);
            }
            Phones::Direct(addrs) => {
                cmd.args(["--adb-server", ""]);
                for a in addrs {
                    cmd.args(["--device", &format!("tcp:{a}")]);
                }
            }
        }
        let (child, rest) = spawn_and_wait(cmd, "listening on http://");
        self.addr = rest.clone();
        self.base = format!("http://{rest}");
        self.child = Some(child);
    }

    /// Kills the process (SIGKILL) and starts it again on the same data dir and port.
    pub fn restart(&mut self) {
        self.kill();
        let addr = self.addr.clone();
        self.spawn(&addr);
    }

    /// SIGKILL.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Sends SIGTERM (as `systemctl stop` does) without waiting.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Waits up to `limit` for the process to exit; its status, or `None` if still running.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + limit;
        let child = self.child.as_mut()?;
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                self.child = None;
                return Some(status);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// OS process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(|c| c.id()).unwrap_or(0)
    }

    /// Everything the process logged so far.
    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }
}

impl Drop for ConnectorProc {
    fn drop(&mut self) {
        self.kill();
    }
}
