//! `android_observe` and receipts (issue 20 §3, §4): a bench binary printing figures; run
//! `cargo bench --bench observe`. `docs/performance.md` records them.
//!
//! 1. **Diff bytes** on the real `uiautomator dump` captures of `tests/fixtures/uiautomator/`:
//!    the listed elements as `android_ui_tree` serializes them (the full observation's tree),
//!    then one element's text changed, and the `changes` an observation `since` the first
//!    answers: bytes of the diff ÷ bytes of the full tree (target ≤ 0.2).
//! 2. **Time** on the handset model (`sim --timing realistic --link usb2`, one phone over the
//!    direct transport): `android_observe` (default screenshot: the PNG passthrough) against
//!    `android_ui_tree` alone, interleaved (target ≤ 1.1); `android_tap` with and without
//!    `receipt: true` against a bare `screencap | sha1sum` on the same phone (target: the
//!    receipt adds ≤ 1 frame hash + 10 ms).

#[path = "../tests/common/mod.rs"]
mod common;
mod figures;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claim_when_visible;
use common::xagent::connect;
use figures::summary;
use xagent_adb_connector::adb::DeviceLink;
use xagent_adb_connector::device::parse::uiautomator::parse_uiautomator_dump;
use xagent_adb_connector::device::tools::phone::observation::{diff, element_keys};
use xagent_adb_connector::device::tools::phone::tree::Element;
use xagent_adb_connector::device::tools::phone::ui::meaningful;

fn diff_bytes() {
    println!("== 1. full tree vs the diff after a one-element change (real dumps)");
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/uiautomator");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    names.sort();
    for path in names {
        let xml = std::fs::read_to_string(&path).unwrap();
        let Ok(dump) = parse_uiautomator_dump(&xml) else {
            continue;
        };
        let keys = element_keys(&dump, false);
        let els: Vec<Value> = dump
            .nodes
            .iter()
            .filter(|n| meaningful(n, false))
            .enumerate()
            .map(|(i, n)| serde_json::to_value(Element::of(n, &format!("e{i}"))).unwrap())
            .collect();
        if els.len() < 2 {
            continue;
        }
        let full = serde_json::to_vec(&els).unwrap().len();
        let before: Vec<(String, Value)> = keys.iter().cloned().zip(els.iter().cloned()).collect();
        let mut after = before.clone();
        let mid = after.len() / 2;
        after[mid].1["text"] = json!("changed text");
        let changes = diff(&before, &after);
        let bytes = serde_json::to_vec(&json!({"changes": changes}))
            .unwrap()
            .len();
        println!(
            "   {:<58} elements={:<4} full={:>7} B  diff={:>4} B  ratio={:.4}",
            path.file_name().unwrap().to_string_lossy(),
            els.len(),
            full,
            bytes,
            bytes as f64 / full as f64
        );
    }
}

async fn timed(x: &mut common::xagent::XAgent, ch: &str, tool: &str, args: Value) -> f64 {
    let t = Instant::now();
    let ack = x.tool(ch, tool, args).await;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    assert!(ack.get("error").is_none(), "{ack}");
    ms
}

async fn times(n: usize) {
    println!("== 2. handset model (sim --timing realistic --link usb2), direct transport");
    let sim = SimPhone::start_background_with(
        "BENCHOBS00001",
        &["--timing", "realistic", "--link", "usb2"],
    );
    let dir = TempDir::new("bench-observe");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let mut x = connect(&conn.addr).await;
    x.validate = false;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    claim_when_visible(&mut x, &ch, &sim.serial).await;
    timed(&mut x, &ch, "android_ui_tree", json!({})).await; // learn the dump's way
    let (mut tree, mut observe) = (Vec::new(), Vec::new());
    for _ in 0..n {
        tree.push(timed(&mut x, &ch, "android_ui_tree", json!({})).await);
        observe.push(timed(&mut x, &ch, "android_observe", json!({})).await);
    }
    let a = summary("android_ui_tree", tree);
    let b = summary("android_observe (png passthrough)", observe);
    println!("   observe / ui_tree = {:.3}", b / a);
    let link = DeviceLink::direct(sim.addr.clone());
    let deadline = Duration::from_secs(10);
    let (mut plain, mut receipt, mut hash) = (Vec::new(), Vec::new(), Vec::new());
    let pause = Duration::from_millis(70);
    for _ in 0..n * 4 {
        plain.push(timed(&mut x, &ch, "android_tap", json!({"x": 540, "y": 400})).await);
        tokio::time::sleep(pause).await;
        receipt.push(
            timed(
                &mut x,
                &ch,
                "android_tap",
                json!({"x": 540, "y": 400, "receipt": true}),
            )
            .await,
        );
        tokio::time::sleep(pause).await;
        let t = Instant::now();
        link.shell("screencap | sha1sum", deadline, 4096)
            .await
            .unwrap();
        hash.push(t.elapsed().as_secs_f64() * 1e3);
        tokio::time::sleep(pause).await;
    }
    let p = summary("android_tap", plain);
    let r = summary("android_tap receipt: true (nothing moves)", receipt);
    let h = summary("bare `screencap | sha1sum` (DeviceLink)", hash);
    println!(
        "   receipt adds {:.1} ms = {:.2} frame hashes (target: 1 hash + 10 ms = {:.1} ms)",
        r - p,
        (r - p) / h,
        h + 10.0
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    diff_bytes();
    let n = std::env::var("OBSERVE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    times(n).await;
}
