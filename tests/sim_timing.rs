//! The sim's cost model (`sim --timing realistic --link …`, `src/sim/timing.rs`), checked
//! through the real wire: the `sim` binary with its flags, a real adb 34 server, `adb exec-out`
//! / `adb shell`. These are functional checks of the model (a modelled cost is a floor on what
//! the host sees), not performance assertions: no upper bound on any duration is asserted.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{bin, SimPhone};
use xagent_adb_sim::persona::Persona;
use xagent_adb_sim::timing::{Link, Model};

fn model(persona: &str, link: Link) -> Model {
    let p = Persona::load(persona).unwrap();
    Model {
        phone: p.timing,
        sdk: p.sdk,
        link: link.spec(),
    }
}

/// The time `bytes` take on `link` (bandwidth only; the latency is a further floor).
fn transfer(link: Link, bytes: usize) -> Duration {
    Duration::from_secs_f64(bytes as f64 / link.spec().bytes_per_sec)
}

#[test]
fn realistic_usb2_screencap_and_input_take_at_least_the_modelled_time() {
    let sim =
        SimPhone::start_with_control("TIMING0001", &["--timing", "realistic", "--link", "usb2"]);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&sim.addr);
    let m = model("pixel-android14", Link::Usb2);
    let pixels = 1080 * 2400;

    let t = Instant::now();
    let out = adb.run(&["-s", &sim.addr, "exec-out", "screencap", "-p"]);
    let took = t.elapsed();
    assert!(out.status.success());
    assert_eq!(&out.stdout[1..4], b"PNG");
    let floor = m.screencap(pixels, true) + transfer(Link::Usb2, out.stdout.len());
    assert!(
        took >= floor,
        "screencap -p took {took:?}, the model says at least {floor:?}"
    );
    println!(
        "screencap -p over usb2: {took:?} (model floor {floor:?}, {} bytes)",
        out.stdout.len()
    );

    let t = Instant::now();
    let out = adb.run(&["-s", &sim.addr, "exec-out", "screencap"]);
    let took = t.elapsed();
    // 16-byte header (Android 9+) and the RGBA pixels.
    assert_eq!(out.stdout.len(), 16 + pixels as usize * 4);
    let floor = m.screencap(pixels, false) + transfer(Link::Usb2, out.stdout.len());
    assert!(
        took >= floor,
        "raw screencap took {took:?}, the model says at least {floor:?}"
    );
    println!("raw screencap over usb2: {took:?} (model floor {floor:?})");

    let t = Instant::now();
    let out = adb.run(&["-s", &sim.addr, "shell", "input", "tap", "5", "5"]);
    let took = t.elapsed();
    assert!(out.status.success());
    let floor = m.program("input", &["tap".into()]).unwrap();
    assert!(
        took >= floor,
        "input tap took {took:?}, the model says at least {floor:?}"
    );
}

#[test]
fn wifi_link_slows_the_bytes_not_the_phone() {
    let sim =
        SimPhone::start_with_control("TIMING0002", &["--timing", "realistic", "--link", "wifi"]);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&sim.addr);
    let t = Instant::now();
    let out = adb.run(&["-s", &sim.addr, "exec-out", "screencap"]);
    let took = t.elapsed();
    let m = model("pixel-android14", Link::Wifi);
    let floor = m.screencap(1080 * 2400, false) + transfer(Link::Wifi, out.stdout.len());
    assert!(
        took >= floor,
        "raw screencap over wifi took {took:?}, floor {floor:?}"
    );
    // Over Wi-Fi the raw frame costs more than the phone's PNG encode saves: the connector's
    // choice of `screencap -p` there (docs/performance.md) follows from the model.
    let png_floor = m.screencap(1080 * 2400, true);
    assert!(floor > png_floor, "{floor:?} vs {png_floor:?}");
}

#[test]
fn bad_timing_or_link_values_are_refused_with_the_known_ones() {
    for (flag, value, known) in [
        ("--timing", "fast", "realistic"),
        ("--link", "usb4", "wifi"),
    ] {
        let out = Command::new(bin())
            .args([
                "sim",
                "--listen",
                "127.0.0.1:0",
                "--serial",
                "X",
                flag,
                value,
            ])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{flag} {value} was accepted");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(known), "{err}");
    }
}

#[test]
fn instant_is_the_default_and_models_nothing() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let (_, phone) = rt
        .block_on(xagent_adb_sim::start_with_phone(
            xagent_adb_sim::SimOptions::default(),
            shutdown.clone(),
        ))
        .unwrap();
    assert!(phone.with(|s| s.timing.is_none()));
    let (_, phone) = rt
        .block_on(xagent_adb_sim::start_with_phone(
            xagent_adb_sim::SimOptions {
                timing: xagent_adb_sim::timing::TimingMode::Realistic,
                link: Link::Usb3,
                ..Default::default()
            },
            shutdown.clone(),
        ))
        .unwrap();
    assert_eq!(
        phone.with(|s| s.timing),
        Some(model("pixel-android14", Link::Usb3))
    );
    shutdown.cancel();
}
