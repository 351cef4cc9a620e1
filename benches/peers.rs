//! Peers comparison (outside `cargo test` and CI; run `bash benches/peers/compare.sh [--realistic
//! LINK] [--calls N] [--touchscreen NAME]`, which installs the pinned mobile-mcp and runs this bench binary).
//!
//! One simulated phone behind one private Google adb 34 server; the same operations through
//! * the connector (`serve --adb-server`, WebSocket tool calls),
//! * mobile-mcp 1.0.4 (npm `@mobilenext/mobile-mcp`, pinned in `benches/peers/package.json`)
//!   over MCP stdio, in its default mode (the Go `mobilecli` binary) and in its legacy adb mode
//!   (`MOBILEMCP_LEGACY_ROBOT=1`: `adb` child processes),
//! * the raw adb CLI (`adb -s SERIAL exec-out …` / `shell …`, one process per call),
//! * the raw adb socket (this crate's adb client, `host:transport` + the service),
//!
//! called interleaved (one round of every kind, then the next round), 70 ms apart. Printed:
//! p50/p99 per peer and operation, what each screenshot returns (format, size, bytes), and
//! the ratios connector ÷ peer. Operations: screenshot (each peer's default, plus the
//! connector's agent-size jpeg 1280), tap, UI tree.

#[path = "../tests/common/mod.rs"]
mod common;
mod figures;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claim_when_visible;
use common::xagent::connect;
use figures::{load, summary};
use xagent_adb_connector::adb::{AdbServerClient, DeviceLink};

/// One mobile-mcp server behind `benches/peers/mcp_proxy.mjs`.
struct Mcp {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Mcp {
    fn start(legacy: bool, android_home: &std::path::Path, adb_port: u16) -> Mcp {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/peers");
        let mut cmd = Command::new("node");
        cmd.arg(format!("{dir}/mcp_proxy.mjs"))
            .env("ANDROID_HOME", android_home)
            .env("ANDROID_ADB_SERVER_PORT", adb_port.to_string())
            .env(
                "PATH",
                format!(
                    "{}/platform-tools:{}",
                    android_home.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if legacy {
            cmd.env("MOBILEMCP_LEGACY_ROBOT", "1");
        }
        let mut child = cmd.spawn().expect("node (run benches/peers/compare.sh)");
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        assert!(line.contains("ready"), "mcp proxy: {line}");
        Mcp {
            child,
            stdin,
            stdout,
        }
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        writeln!(self.stdin, "{}", json!({"tool": tool, "args": args})).unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or(Value::Null)
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Default)]
struct Figures {
    ms: BTreeMap<String, Vec<f64>>,
    what: BTreeMap<String, String>,
    errors: BTreeMap<String, usize>,
}

impl Figures {
    fn add(&mut self, key: &str, ms: f64, ok: bool, what: Option<String>) {
        self.ms.entry(key.into()).or_default().push(ms);
        if !ok {
            *self.errors.entry(key.into()).or_default() += 1;
        }
        if let Some(w) = what {
            self.what.insert(key.into(), w);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let realistic = args
        .iter()
        .position(|a| a == "--realistic")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let calls: usize = args
        .iter()
        .position(|a| a == "--calls")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    // `--touchscreen NAME`: the sim's touchscreen capture (`sim --touchscreen`), so the
    // connector taps through evdev; without it every peer, the connector too, uses `input`.
    let touchscreen = args
        .iter()
        .position(|a| a == "--touchscreen")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        println!(
            "peers: {calls} interleaved rounds; phone {}; load average at start {}",
            realistic
                .as_deref()
                .map_or("instant".into(), |l| format!("realistic over {l}")),
            load()
        );
        let mut timing: Vec<&str> = match &realistic {
            Some(l) => vec!["--timing", "realistic", "--link", l.as_str()],
            None => vec![],
        };
        if let Some(t) = &touchscreen {
            timing.extend(["--touchscreen", t.as_str()]);
        }
        let mut tap_backend = Value::Null;
        let sim = SimPhone::start_background_with("PEERS0001", &timing);
        let adb = AdbServer::start(AdbFlavor::Google34);
        adb.connect(&sim.addr);
        let serial = sim.addr.clone();
        let adb_bin = AdbFlavor::Google34.binary();
        // mobile-mcp finds adb as $ANDROID_HOME/platform-tools/adb.
        let android_home = adb_bin.parent().unwrap().parent().unwrap().to_path_buf();
        let dir = TempDir::new("bench-peers");
        let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
        let mut x = connect(&conn.addr).await;
        x.validate = false;
        x.hello("").await;
        let (ch, _) = x.open(None).await;
        // Claimed by `ro.serialno`; the adb serial (its address) is for the CLI and socket peers.
        let ack = claim_when_visible(&mut x, &ch, &sim.serial).await;
        assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
        let socket = DeviceLink::via_server(AdbServerClient::new(adb.addr()), serial.clone());
        let mut mcp = Mcp::start(false, &android_home, adb.port);
        let mut legacy = Mcp::start(true, &android_home, adb.port);
        let cli = |a: &[&str]| {
            let t = Instant::now();
            let out = adb.run(&[&["-s", serial.as_str()], a].concat());
            (t.elapsed().as_secs_f64() * 1e3, out)
        };
        let deadline = Duration::from_secs(60);
        let pause = Duration::from_millis(70);
        let mut f = Figures::default();
        for round in 0..calls + 1 {
            // Round 0 warms every path (mobilecli's device agent, adb's transports) and is
            // not counted.
            let mut g = Figures::default();
            let fig = if round == 0 { &mut g } else { &mut f };
            // Screenshots.
            let t = Instant::now();
            let ack = x.tool(&ch, "android_screenshot", json!({})).await;
            let r = &ack["payload"]["result"];
            fig.add(
                "screenshot connector png",
                t.elapsed().as_secs_f64() * 1e3,
                ack.get("error").is_none(),
                Some(format!(
                    "{} {}x{} {} B",
                    r["mime_type"], r["width"], r["height"], r["byte_size"]
                )),
            );
            tokio::time::sleep(pause).await;
            let t = Instant::now();
            let ack = x
                .tool(
                    &ch,
                    "android_screenshot",
                    json!({"format": "jpeg", "max_dimension": 1280}),
                )
                .await;
            let r = &ack["payload"]["result"];
            fig.add(
                "screenshot connector jpeg 1280",
                t.elapsed().as_secs_f64() * 1e3,
                ack.get("error").is_none(),
                Some(format!(
                    "{} {}x{} {} B",
                    r["mime_type"], r["width"], r["height"], r["byte_size"]
                )),
            );
            tokio::time::sleep(pause).await;
            for (name, m) in [("mobile-mcp", &mut mcp), ("mobile-mcp legacy", &mut legacy)] {
                let r = m.call("mobile_take_screenshot", json!({"device": serial}));
                fig.add(
                    &format!("screenshot {name}"),
                    r["ms"].as_f64().unwrap_or(f64::NAN),
                    r["ok"] == true,
                    Some(format!(
                        "{} {} B {}",
                        r["mime"],
                        r["bytes"],
                        r["text"]
                            .as_str()
                            .unwrap_or("")
                            .chars()
                            .take(80)
                            .collect::<String>()
                    )),
                );
                tokio::time::sleep(pause).await;
            }
            let (ms, out) = cli(&["exec-out", "screencap", "-p"]);
            fig.add(
                "screenshot adb cli",
                ms,
                out.status.success(),
                Some(format!("image/png {} B", out.stdout.len())),
            );
            tokio::time::sleep(pause).await;
            let t = Instant::now();
            let png = socket.exec("screencap -p", deadline, 64 << 20).await;
            fig.add(
                "screenshot adb socket",
                t.elapsed().as_secs_f64() * 1e3,
                png.is_ok(),
                png.ok().map(|b| format!("image/png {} B", b.len())),
            );
            tokio::time::sleep(pause).await;
            // Taps.
            let t = Instant::now();
            let ack = x
                .tool(&ch, "android_tap", json!({"x": 540, "y": 1200}))
                .await;
            fig.add(
                "tap connector",
                t.elapsed().as_secs_f64() * 1e3,
                ack.get("error").is_none(),
                None,
            );
            tap_backend = ack["payload"]["result"]["backend"].clone();
            tokio::time::sleep(pause).await;
            for (name, m) in [("mobile-mcp", &mut mcp), ("mobile-mcp legacy", &mut legacy)] {
                let r = m.call(
                    "mobile_click_on_screen_at_coordinates",
                    json!({"device": serial, "x": 540, "y": 1200}),
                );
                fig.add(
                    &format!("tap {name}"),
                    r["ms"].as_f64().unwrap_or(f64::NAN),
                    r["ok"] == true,
                    None,
                );
                tokio::time::sleep(pause).await;
            }
            let (ms, out) = cli(&["shell", "input", "tap", "540", "1200"]);
            fig.add("tap adb cli", ms, out.status.success(), None);
            tokio::time::sleep(pause).await;
            let t = Instant::now();
            let r = socket.shell("input tap 540 1200", deadline, 1 << 16).await;
            fig.add(
                "tap adb socket",
                t.elapsed().as_secs_f64() * 1e3,
                r.is_ok(),
                None,
            );
            tokio::time::sleep(pause).await;
            // UI trees.
            let t = Instant::now();
            let ack = x.tool(&ch, "android_ui_tree", json!({})).await;
            fig.add(
                "ui tree connector",
                t.elapsed().as_secs_f64() * 1e3,
                ack.get("error").is_none(),
                None,
            );
            tokio::time::sleep(pause).await;
            for (name, m) in [("mobile-mcp", &mut mcp), ("mobile-mcp legacy", &mut legacy)] {
                let r = m.call("mobile_list_elements_on_screen", json!({"device": serial}));
                fig.add(
                    &format!("ui tree {name}"),
                    r["ms"].as_f64().unwrap_or(f64::NAN),
                    r["ok"] == true,
                    None,
                );
                tokio::time::sleep(pause).await;
            }
            let (ms, out) = cli(&["exec-out", "uiautomator", "dump", "/dev/tty"]);
            fig.add("ui tree adb cli", ms, out.status.success(), None);
            tokio::time::sleep(pause).await;
            let t = Instant::now();
            let r = socket
                .exec("uiautomator dump /dev/tty", deadline, 8 << 20)
                .await;
            fig.add(
                "ui tree adb socket",
                t.elapsed().as_secs_f64() * 1e3,
                r.is_ok(),
                None,
            );
            tokio::time::sleep(pause).await;
            if round == 0 {
                for (k, e) in &g.errors {
                    println!("   warm-up error: {k} ({e})");
                }
            }
        }
        println!("load average after the calls: {}", load());
        let mut p50 = BTreeMap::new();
        for (k, ms) in std::mem::take(&mut f.ms) {
            let errs = f.errors.get(&k).copied().unwrap_or(0);
            let label = if errs > 0 {
                format!("{k} ({errs} errors)")
            } else {
                k.clone()
            };
            p50.insert(k, summary(&label, ms));
        }
        println!("what each screenshot returns (last call):");
        for (k, w) in &f.what {
            if k.starts_with("screenshot") {
                println!("   {k:<34} {w}");
            }
        }
        println!(
            "connector tap backend: {tap_backend} (touchscreen: {}); mobile-mcp's mobilecli cannot run its phone-side helper on the sim, so its taps go through `input`",
            touchscreen.as_deref().unwrap_or("none")
        );
        println!("ratios connector ÷ peer (p50):");
        for op in ["screenshot", "tap", "ui tree"] {
            let ours = if op == "screenshot" {
                "screenshot connector png".to_string()
            } else {
                format!("{op} connector")
            };
            for peer in ["mobile-mcp", "mobile-mcp legacy", "adb cli", "adb socket"] {
                if let (Some(a), Some(b)) = (p50.get(&ours), p50.get(&format!("{op} {peer}"))) {
                    println!("   {ours} ÷ {op} {peer}: {:.2}", a / b);
                }
            }
        }
        if let (Some(a), Some(b)) = (
            p50.get("screenshot connector jpeg 1280"),
            p50.get("screenshot adb cli"),
        ) {
            println!(
                "   screenshot connector jpeg 1280 ÷ adb cli exec-out screencap -p: {:.2}",
                a / b
            );
        }
        if let (Some(a), Some(b)) = (
            p50.get("screenshot connector jpeg 1280"),
            p50.get("screenshot mobile-mcp"),
        ) {
            println!(
                "   screenshot connector jpeg 1280 ÷ mobile-mcp: {:.2}",
                a / b
            );
        }
        drop(mcp);
        drop(legacy);
        let _ = adb.run(&["disconnect", &serial]);
    });
}
