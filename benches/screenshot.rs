//! Screenshot pipeline benchmark (a bench binary printing figures; run
//! `cargo bench --bench screenshot`, add `--quick` for fewer calls).
//!
//! Against the real release binary and one simulated 1080x2400 phone on the direct transport:
//! 1. the agent-size screenshot (`format: jpeg, max_dimension: 1280`) and the PNG passthrough,
//!    interleaved: round-trip p50/p99, and the connector's CPU per call (utime + stime from
//!    `/proc/<pid>/stat` over N calls ÷ N, so the simulated phone's PNG encoding is not in it);
//! 2. bytes at mobile-mcp's size (`max_dimension: 1024, quality: 75`);
//! 3. connector RSS before, right after 200 agent-size screenshots, and idle 3 s later.
//!
//! Figures go to stdout; `docs/performance.md` records them with the machine and its load.

#[path = "../tests/common/mod.rs"]
mod common;
mod figures;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claim_when_visible;
use common::xagent::connect;
use figures::{rss_kb, summary};

/// CPU time a process has used (user + system), ms: fields 14 and 15 of `/proc/<pid>/stat`,
/// counted after the `)` that ends the command name.
fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(0))
        .collect();
    // After ')': state(0) ppid(1) … utime is field 14 overall = index 11 here, stime index 12.
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    ticks as f64 * 1000.0 / clk_tck()
}

fn clk_tck() -> f64 {
    // SAFETY: sysconf reads a constant of the running system.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if v > 0 {
        v as f64
    } else {
        100.0
    }
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn result(ack: &Value) -> &Value {
    assert!(ack["payload"].get("error").is_none(), "{ack}");
    &ack["payload"]["result"]
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let n = if quick { 40 } else { 200 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        println!("load average at start: {}", load());
        let sim = SimPhone::start("BENCHSHOT0001");
        let dir = TempDir::new("bench-shot");
        let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
        let pid = conn.pid();
        let mut x = connect(&conn.addr).await;
        x.validate = false;
        x.hello("").await;
        let (ch, _) = x.open(None).await;
        claim_when_visible(&mut x, &ch, &sim.serial).await;
        x.tool(&ch, "android_tap", json!({"x": 10, "y": 10})).await; // warm the display cache
        tokio::time::sleep(Duration::from_secs(1)).await;
        let rss_before = rss_kb(pid);

        let agent = json!({"format": "jpeg", "max_dimension": 1280});
        // Paced below the per-channel rate limit; both kinds get the same pause.
        let pause = Duration::from_millis(70);
        let (mut jpeg_ms, mut png_ms) = (Vec::new(), Vec::new());
        let (mut jpeg_cpu, mut png_cpu) = (0.0, 0.0);
        let mut jpeg_bytes = 0;
        let mut geometry = Value::Null;
        for _ in 0..n {
            let c = cpu_ms(pid);
            let t = Instant::now();
            let ack = x.tool(&ch, "android_screenshot", agent.clone()).await;
            jpeg_ms.push(t.elapsed().as_secs_f64() * 1e3);
            jpeg_cpu += cpu_ms(pid) - c;
            let r = result(&ack);
            jpeg_bytes = r["byte_size"].as_u64().unwrap_or(0);
            geometry = json!({"width": r["width"], "height": r["height"], "scale": r["scale"]});
            tokio::time::sleep(pause).await;
            let c = cpu_ms(pid);
            let t = Instant::now();
            let ack = x.tool(&ch, "android_screenshot", json!({})).await;
            png_ms.push(t.elapsed().as_secs_f64() * 1e3);
            png_cpu += cpu_ms(pid) - c;
            result(&ack);
            tokio::time::sleep(pause).await;
        }
        let rss_after = rss_kb(pid);
        println!("load average after the calls: {}", load());
        let a = summary("agent-size jpeg 1280 (default q80)", jpeg_ms);
        let b = summary("png passthrough", png_ms);
        println!(
            "   connector CPU per call: jpeg 1280 {:.1} ms, png passthrough {:.1} ms",
            jpeg_cpu / n as f64,
            png_cpu / n as f64
        );
        println!("   round trip ratio jpeg 1280 / png: {:.2}x", a / b);
        println!("   jpeg 1280 bytes: {jpeg_bytes}, geometry {geometry}");
        for (dim, q) in [(1024, 75), (1280, 80), (1280, 75)] {
            let ack = x
                .tool(
                    &ch,
                    "android_screenshot",
                    json!({"format": "jpeg", "max_dimension": dim, "quality": q}),
                )
                .await;
            let r = result(&ack);
            println!(
                "   jpeg {dim} q{q}: {} bytes ({}x{})",
                r["byte_size"], r["width"], r["height"]
            );
            tokio::time::sleep(pause).await;
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
        let rss_idle = rss_kb(pid);
        println!(
            "   connector RSS: before {:.1} MB, after {n} agent-size + {n} png screenshots {:.1} MB, idle 3 s later {:.1} MB",
            rss_before as f64 / 1024.0,
            rss_after as f64 / 1024.0,
            rss_idle as f64 / 1024.0
        );
    });
}
