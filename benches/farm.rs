//! Farm benchmark (a bench binary printing figures): `cargo bench --bench farm -- [--phones N]
//! [--minutes M] [--link usb2|usb3|wifi] [--instant] [--sample-secs S]`; defaults 32 phones, 10
//! minutes, usb2, a sample every 30 s.
//!
//! N simulated phones, each its own process at `nice 10` with the cost model
//! (`sim --timing realistic --link …`: in production a phone is separate hardware doing its own
//! work), on the direct transport of one release connector; N channels, one per phone, run an
//! agent loop (agent-size screenshot `jpeg`/1280, UI tree, tap, text, key), 70 ms between
//! calls. Printed: cold start to ready (connector spawned → every channel bound), errors, p50/p99
//! per tool, and every sample the connector's CPU % of one core (utime + stime delta ÷ wall
//! time), RSS, peak RSS (VmHWM) and open file descriptors.

#[path = "../tests/common/mod.rs"]
mod common;
mod figures;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claim_when_visible;
use common::xagent::connect;
use figures::{cpu_ms, load, peak_rss_kb, rss_kb, summary};

fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Per tool: round trips (ms) and error count.
type Stats = Arc<Mutex<BTreeMap<&'static str, (Vec<f64>, usize)>>>;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let phones: usize = arg(&args, "--phones", 32);
    let minutes: f64 = arg(&args, "--minutes", 10.0);
    let link: String = arg(&args, "--link", "usb2".to_string());
    let instant = args.iter().any(|a| a == "--instant");
    let sample_secs: f64 = arg(&args, "--sample-secs", 30.0);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        println!(
            "farm: {phones} phones ({}), {minutes} min; load average at start {}",
            if instant { "instant".to_string() } else { format!("realistic over {link}") },
            load()
        );
        let timing: Vec<&str> = if instant {
            vec![]
        } else {
            vec!["--timing", "realistic", "--link", link.as_str()]
        };
        let sims: Vec<SimPhone> = (0..phones)
            .map(|i| SimPhone::start_background_with(&format!("FARM{i:05}"), &timing))
            .collect();
        let dir = TempDir::new("bench-farm");
        let cold = Instant::now();
        let conn = ConnectorProc::start(
            dir.path(),
            Phones::Direct(sims.iter().map(|s| s.addr.clone()).collect()),
        );
        let pid = conn.pid();
        let mut bound = Vec::new();
        for s in &sims {
            let mut x = connect(&conn.addr).await;
            x.validate = false;
            x.hello("").await;
            let (ch, _) = x.open(None).await;
            let ack = claim_when_visible(&mut x, &ch, &s.serial).await;
            assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
            bound.push((x, ch));
        }
        println!(
            "   cold start to ready ({phones} phones bound): {:.2} s; RSS {:.1} MB (peak {:.1}), fds {}",
            cold.elapsed().as_secs_f64(),
            rss_kb(pid) as f64 / 1024.0,
            peak_rss_kb(pid) as f64 / 1024.0,
            fds(pid)
        );
        let stats: Stats = Arc::default();
        let stop = Instant::now() + Duration::from_secs_f64(minutes * 60.0);
        let mut tasks = Vec::new();
        for (mut x, ch) in bound {
            let stats = stats.clone();
            tasks.push(tokio::spawn(async move {
                let steps: [(&'static str, &'static str, Value); 5] = [
                    (
                        "screenshot jpeg 1280",
                        "android_screenshot",
                        json!({"format": "jpeg", "max_dimension": 1280}),
                    ),
                    ("ui_tree", "android_ui_tree", json!({})),
                    ("tap", "android_tap", json!({"x": 540, "y": 1200})),
                    ("input_text", "android_input_text", json!({"text": "hello"})),
                    ("press_key", "android_press_key", json!({"key": "back"})),
                ];
                while Instant::now() < stop {
                    for (name, tool, a) in &steps {
                        let t = Instant::now();
                        let ack = x.tool(&ch, tool, a.clone()).await;
                        let ms = t.elapsed().as_secs_f64() * 1e3;
                        {
                            let mut st = stats.lock().unwrap();
                            let e = st.entry(name).or_default();
                            e.0.push(ms);
                            let failed = ack.get("error").is_some()
                                || ack["payload"].get("error").is_some();
                            if failed {
                                e.1 += 1;
                                if e.1 <= 3 {
                                    println!("   error in {name}: {ack}");
                                }
                            }
                        }
                        tokio::time::sleep(Duration::from_millis(70)).await;
                    }
                }
            }));
        }
        let start = Instant::now();
        let cpu0 = cpu_ms(pid);
        let (mut last_cpu, mut last_t) = (cpu_ms(pid), Instant::now());
        println!("   t (s)  connector CPU % of one core   RSS MB   peak MB   fds   load");
        while Instant::now() < stop {
            tokio::time::sleep(Duration::from_secs_f64(sample_secs).min(stop - Instant::now())).await;
            let (c, t) = (cpu_ms(pid), Instant::now());
            println!(
                "   {:>5.0}  {:>6.1}                       {:>6.1}   {:>7.1}   {:>4}  {}",
                start.elapsed().as_secs_f64(),
                (c - last_cpu) / (t - last_t).as_secs_f64() / 10.0,
                rss_kb(pid) as f64 / 1024.0,
                peak_rss_kb(pid) as f64 / 1024.0,
                fds(pid),
                load()
            );
            (last_cpu, last_t) = (c, t);
        }
        for t in tasks {
            t.await.unwrap();
        }
        let total_cpu = cpu_ms(pid) - cpu0;
        let st = std::mem::take(&mut *stats.lock().unwrap());
        let mut errors = 0;
        for (name, (ms, errs)) in st {
            errors += errs;
            summary(&format!("{name} ({errs} errors)"), ms);
        }
        println!(
            "   errors: {errors}; connector CPU over the run {:.1} % of one core; RSS at the end {:.1} MB, peak (VmHWM) {:.1} MB; fds {}",
            total_cpu / start.elapsed().as_secs_f64() / 10.0,
            rss_kb(pid) as f64 / 1024.0,
            peak_rss_kb(pid) as f64 / 1024.0,
            fds(pid)
        );
        tokio::time::sleep(Duration::from_secs(3)).await;
        println!(
            "   idle 3 s later: RSS {:.1} MB, fds {}; load average {}",
            rss_kb(pid) as f64 / 1024.0,
            fds(pid),
            load()
        );
    });
}
