//! Screenshot pipeline benchmark (a bench binary printing figures; run
//! `cargo bench --bench screenshot`, add `--quick` for fewer calls, `--realistic LINK` (usb2,
//! usb3, wifi) to run the simulated phones with their cost model, `sim --timing realistic`).
//!
//! Against the real release binary and two simulated 1080x2400 phones on the direct transport
//! (loopback: the connector captures the raw framebuffer for re-encoded screenshots), one of
//! them forced to the phone's PNG by a device profile (`quirks.screenshot_capture = "png"`),
//! all calls interleaved in one run:
//! 1. the agent-size screenshot (`format: jpeg, max_dimension: 1280`) from the raw frame and from
//!    the phone's PNG, the PNG passthrough, and the bare `exec:screencap -p` on a second adbd
//!    connection (our adb client): round-trip p50/p99, and the connector's CPU per call
//!    (utime + stime from `/proc/<pid>/stat` around each call, so the simulated phones' work is
//!    not in it);
//! 2. bytes at mobile-mcp's size (`max_dimension: 1024, quality: 75`);
//! 3. connector RSS before, right after the calls, and idle 3 s later.
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
use figures::{cpu_ms, load, rss_kb, summary};
use xagent_adb_connector::adb::DeviceLink;

/// A device profile directory: the built-in default plus one profile that forces the phone's
/// PNG on the phone whose model is `PNGSOURCE`.
fn profiles(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("profiles");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(
        p.join("default.toml"),
        include_str!("../device-profiles/default.toml"),
    )
    .unwrap();
    std::fs::write(
        p.join("png-source.toml"),
        "[match]\nmodel = \"PNGSOURCE\"\n\n[quirks]\nscreenshot_capture = \"png\"\n",
    )
    .unwrap();
    p
}

/// One kind of call: its round trips and the connector CPU they cost.
#[derive(Default)]
struct Kind {
    ms: Vec<f64>,
    cpu: f64,
}

fn result(ack: &Value) -> &Value {
    assert!(ack["payload"].get("error").is_none(), "{ack}");
    &ack["payload"]["result"]
}

async fn timed_tool(
    x: &mut common::xagent::XAgent,
    ch: &str,
    args: Value,
    pid: u32,
    kind: &mut Kind,
) -> Value {
    let c = cpu_ms(pid);
    let t = Instant::now();
    let ack = x.tool(ch, "android_screenshot", args).await;
    kind.ms.push(t.elapsed().as_secs_f64() * 1e3);
    kind.cpu += cpu_ms(pid) - c;
    result(&ack).clone()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let link = args
        .iter()
        .position(|a| a == "--realistic")
        .and_then(|i| args.get(i + 1))
        .cloned();
    let n = match (quick, &link) {
        (true, _) => 40,
        (false, Some(_)) => 40,
        (false, None) => 200,
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        println!(
            "load average at start: {}; phones: {}",
            load(),
            link.as_deref()
                .map_or("instant".to_string(), |l| format!("realistic over {l}"))
        );
        let timing: Vec<&str> = match &link {
            Some(l) => vec!["--timing", "realistic", "--link", l.as_str()],
            None => vec![],
        };
        let raw_sim = SimPhone::start_with_control("BENCHSHOT0001", &timing);
        let mut png_args = timing.clone();
        png_args.extend(["--model", "PNGSOURCE"]);
        let png_sim = SimPhone::start_with_control("BENCHSHOT0002", &png_args);
        let dir = TempDir::new("bench-shot");
        let profiles = profiles(dir.path());
        let conn = ConnectorProc::start_with(
            dir.path(),
            Phones::Direct(vec![raw_sim.addr.clone(), png_sim.addr.clone()]),
            &[
                "--claim-policy",
                "open",
                "--device-profiles",
                profiles.to_str().unwrap(),
            ],
        );
        let pid = conn.pid();
        let mut x = connect(&conn.addr).await;
        x.validate = false;
        x.hello("").await;
        let (ch, _) = x.open(None).await;
        claim_when_visible(&mut x, &ch, &raw_sim.serial).await;
        let (ch_png, _) = x.open(None).await;
        claim_when_visible(&mut x, &ch_png, &png_sim.serial).await;
        for c in [&ch, &ch_png] {
            x.tool(c, "android_tap", json!({"x": 10, "y": 10})).await; // warm the display cache
        }
        // The bare operation on a second adbd connection to the first phone.
        let bare_link = DeviceLink::direct(raw_sim.addr.clone());
        let deadline = Duration::from_secs(30);
        tokio::time::sleep(Duration::from_secs(1)).await;
        let rss_before = rss_kb(pid);

        let agent = json!({"format": "jpeg", "max_dimension": 1280});
        // Paced below the per-channel rate limit; every kind gets the same pause.
        let pause = Duration::from_millis(70);
        let (mut raw_jpeg, mut png_jpeg, mut passthrough) =
            (Kind::default(), Kind::default(), Kind::default());
        let mut bare = Vec::new();
        let mut jpeg_bytes = (0, 0);
        let mut geometry = Value::Null;
        for _ in 0..n {
            let r = timed_tool(&mut x, &ch, agent.clone(), pid, &mut raw_jpeg).await;
            jpeg_bytes.0 = r["byte_size"].as_u64().unwrap_or(0);
            geometry = json!({"width": r["width"], "height": r["height"], "scale": r["scale"]});
            tokio::time::sleep(pause).await;
            let r = timed_tool(&mut x, &ch_png, agent.clone(), pid, &mut png_jpeg).await;
            jpeg_bytes.1 = r["byte_size"].as_u64().unwrap_or(0);
            tokio::time::sleep(pause).await;
            timed_tool(&mut x, &ch, json!({}), pid, &mut passthrough).await;
            tokio::time::sleep(pause).await;
            let t = Instant::now();
            bare_link
                .exec("screencap -p", deadline, 64 << 20)
                .await
                .unwrap();
            bare.push(t.elapsed().as_secs_f64() * 1e3);
            tokio::time::sleep(pause).await;
        }
        let rss_after = rss_kb(pid);
        println!("load average after the calls: {}", load());
        let a = summary("agent-size jpeg 1280, raw frame", raw_jpeg.ms.clone());
        let b = summary("agent-size jpeg 1280, phone PNG", png_jpeg.ms.clone());
        let p = summary("png passthrough", passthrough.ms.clone());
        let e = summary("bare exec screencap -p (DeviceLink)", bare);
        let per = |k: &Kind| k.cpu / n as f64;
        println!(
            "   connector CPU per call: jpeg 1280 from raw {:.1} ms, from PNG {:.1} ms, png passthrough {:.1} ms",
            per(&raw_jpeg),
            per(&png_jpeg),
            per(&passthrough)
        );
        println!(
            "   round trip ratios: jpeg(raw) / png passthrough {:.2}x, jpeg(PNG) / png passthrough {:.2}x, jpeg(raw) / bare screencap -p {:.2}x, jpeg(PNG) / bare {:.2}x, passthrough / bare {:.3}x",
            a / p,
            b / p,
            a / e,
            b / e,
            p / e
        );
        println!(
            "   jpeg 1280 bytes: raw {} / PNG {}, geometry {geometry}",
            jpeg_bytes.0, jpeg_bytes.1
        );
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
            "   connector RSS: before {:.1} MB, after {n} x 3 screenshots {:.1} MB, idle 3 s later {:.1} MB",
            rss_before as f64 / 1024.0,
            rss_after as f64 / 1024.0,
            rss_idle as f64 / 1024.0
        );
    });
}
