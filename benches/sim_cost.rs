//! What the simulated phone costs per observation (a bench binary printing figures; run
//! `cargo bench --bench sim_cost`). An in-process sim (`xagent_adb_sim`) on
//! 127.0.0.1 is driven over the direct ADB wire by the connector's own client
//! (`xagent_adb_connector::adb::DeviceLink`), the same path the connector uses in production:
//! `exec:screencap -p` (PNG encode of the whole frame) and `exec:uiautomator dump /dev/tty`.
//! Figures go to stdout; `docs/sim.md` records them with the machine they came from.

use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use xagent_adb_connector::adb::DeviceLink;
use xagent_adb_sim::{self as sim, SimOptions};

const WARMUP: usize = 5;
const RUNS: usize = 100;
const LIMIT: usize = 64 << 20;
const DEADLINE: Duration = Duration::from_secs(30);

fn pct(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn report(name: &str, mut ms: Vec<f64>, bytes: usize) {
    ms.sort_by(|a, b| a.total_cmp(b));
    println!(
        "{name:<46} n={:<4} p50={:>8.2} ms  p95={:>8.2} ms  ({bytes} bytes)",
        ms.len(),
        pct(&ms, 0.5),
        pct(&ms, 0.95)
    );
}

async fn measure(link: &DeviceLink, command: &str) -> (Vec<f64>, usize) {
    let mut bytes = 0;
    for _ in 0..WARMUP {
        bytes = link
            .exec(command, DEADLINE, LIMIT)
            .await
            .expect(command)
            .len();
    }
    let mut ms = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let t = Instant::now();
        let out = link.exec(command, DEADLINE, LIMIT).await.expect(command);
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(!out.is_empty());
    }
    (ms, bytes)
}

async fn bench(persona: &str) {
    let shutdown = CancellationToken::new();
    let opts = SimOptions {
        persona: persona.into(),
        model: String::new(),
        ..SimOptions::default()
    };
    let handle = sim::start(opts, shutdown.clone()).await.expect("sim");
    let link = DeviceLink::direct(handle.adb_addr.to_string());
    let (ms, bytes) = measure(&link, "screencap -p").await;
    report(&format!("{persona}: exec screencap -p"), ms, bytes);
    let (ms, bytes) = measure(&link, "uiautomator dump /dev/tty").await;
    report(
        &format!("{persona}: exec uiautomator dump /dev/tty"),
        ms,
        bytes,
    );
    shutdown.cancel();
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "sim_cost: {} runs after {} warm-up, DeviceLink direct over 127.0.0.1",
        RUNS, WARMUP
    );
    rt.block_on(async {
        bench("pixel-android14").await;
        bench("foldable-android14").await;
    });
}
