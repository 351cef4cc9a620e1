//! A private real adb server for one test: its own port (`-P`), its own temporary `HOME` (so
//! `~/.android/adbkey` is fresh), mDNS off, stopped by that port on drop.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Which adb build runs the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdbFlavor {
    /// Google platform-tools 34.0.1 (PyPI `adbx`), unpacked by `.ci/install-test-deps`.
    Google34,
    /// Debian's `adb` 1:29.0.6.
    Debian29,
}

impl AdbFlavor {
    /// Path of the binary; `XAGENT_TEST_ADB34` / `XAGENT_TEST_ADB29` override the defaults.
    /// Panics with the fix when the binary is missing (run `.ci/install-test-deps`).
    pub fn binary(self) -> PathBuf {
        let (var, default) = match self {
            AdbFlavor::Google34 => (
                "XAGENT_TEST_ADB34",
                Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools/platform-tools/adb"),
            ),
            AdbFlavor::Debian29 => ("XAGENT_TEST_ADB29", PathBuf::from("/usr/bin/adb")),
        };
        let path = std::env::var_os(var).map(PathBuf::from).unwrap_or(default);
        assert!(
            path.exists(),
            "{} not found at {}: run `bash .ci/install-test-deps` (or set {var})",
            match self {
                AdbFlavor::Google34 => "Google adb 34",
                AdbFlavor::Debian29 => "Debian adb 29",
            },
            path.display()
        );
        path
    }
}

/// A running private adb server.
pub struct AdbServer {
    /// Which build.
    pub flavor: AdbFlavor,
    /// The server's TCP port on 127.0.0.1.
    pub port: u16,
    home: PathBuf,
}

/// A free TCP port on 127.0.0.1 (bound then released), below Linux's ephemeral range
/// (`net.ipv4.ip_local_port_range`, 32768–60999 by default). A port from that range (what
/// binding port 0 gives) can be the source port the adb client picks to reach it: with no
/// server listening yet, the client's `connect` then meets itself (TCP self-connect) and reads
/// back its own request — `adb start-server` failed with "protocol fault (status 30 30 30 63)",
/// "000c" being the length prefix of its own `host:version`.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // Spread over 20000–31999 by process (test binaries run side by side), then step on.
    let base = std::process::id().wrapping_mul(7919);
    for _ in 0..2000 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = 20_000 + (base.wrapping_add(n.wrapping_mul(131)) % 12_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in 20000-31999");
}

impl AdbServer {
    /// Starts `adb -P <port> start-server` with a temporary HOME.
    pub fn start(flavor: AdbFlavor) -> Self {
        Self::start_on(flavor, free_port())
    }

    /// Starts `adb -P <port> start-server` on a given port (to bring a stopped server back
    /// where it was).
    pub fn start_on(flavor: AdbFlavor, port: u16) -> Self {
        let home =
            std::env::temp_dir().join(format!("xagent-adb-home-{}-{}", std::process::id(), port));
        std::fs::create_dir_all(&home).expect("adb home");
        let server = Self { flavor, port, home };
        let out = server.run(&["start-server"]);
        assert!(
            out.status.success(),
            "adb start-server failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        server
    }

    /// `host:port` of the server, as the connector's `--adb-server` takes it.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Runs `adb -P <port> ARGS…` against this server and returns its output.
    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(self.flavor.binary())
            .arg("-P")
            .arg(self.port.to_string())
            .args(args)
            .env("HOME", &self.home)
            .env("ADB_MDNS", "0")
            .env("ADB_EMU", "0")
            .env("ADB_MDNS_AUTO_CONNECT", "0")
            .env_remove("ANDROID_SERIAL")
            .env_remove("ADB_SERVER_SOCKET")
            .output()
            .expect("run adb")
    }

    /// `adb connect host:port`, retried briefly until the output says `connected to` (adb exits 0
    /// even on failure, so the text is what counts).
    pub fn connect(&self, target: &str) {
        let mut last = String::new();
        for _ in 0..50 {
            let out = self.run(&["connect", target]);
            last = String::from_utf8_lossy(&out.stdout).to_string();
            if last.contains("connected to") && !last.contains("failed") {
                // Wait until the transport is `device`, not `offline`/`connecting`.
                for _ in 0..100 {
                    let state = self.run(&["-s", target, "get-state"]);
                    if String::from_utf8_lossy(&state.stdout).trim() == "device" {
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("adb connect {target} did not reach `device`: {last}");
    }
}

/// How long `adb kill-server` may take before the server is killed by its port.
const KILL_SERVER_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);

impl AdbServer {
    /// Stops the server by its port: `adb -P PORT kill-server` (≤ 10 s; adb 34 has been seen
    /// to hang in it while a transport sits in an AUTH loop), then SIGKILL to whatever process
    /// still listens on 127.0.0.1:PORT.
    pub fn stop(&self) {
        let mut cmd = Command::new(self.flavor.binary());
        cmd.arg("-P")
            .arg(self.port.to_string())
            .arg("kill-server")
            .env("HOME", &self.home)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if let Ok(mut client) = cmd.spawn() {
            let until = std::time::Instant::now() + KILL_SERVER_DEADLINE;
            while client.try_wait().ok().flatten().is_none() && std::time::Instant::now() < until {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let _ = client.kill();
            let _ = client.wait();
        }
        if let Some(pid) = listener_pid(self.port) {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}

/// Pid of the process listening on TCP `port` (IPv4 or IPv6), from `/proc/net/tcp{,6}` and
/// the processes' socket descriptors (procfs(5)).
fn listener_pid(port: u16) -> Option<u32> {
    let inode = ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            text.lines().skip(1).find_map(|line| {
                let f: Vec<&str> = line.split_whitespace().collect();
                let local_port = f.get(1)?.rsplit(':').next()?;
                (u16::from_str_radix(local_port, 16).ok()? == port && f.get(3)? == &"0A")
                    .then(|| f.get(9).map(|s| s.to_string()))?
            })
        })?;
    let needle = format!("socket:[{inode}]");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|p| {
        let pid: u32 = p.file_name().to_str()?.parse().ok()?;
        let fds = std::fs::read_dir(p.path().join("fd")).ok()?;
        fds.flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy() == needle))
            .then_some(pid)
    })
}

impl Drop for AdbServer {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.home);
    }
}
