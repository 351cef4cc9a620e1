//! The simulated phone driven by real adb servers (Google adb 34 and Debian adb 29) over
//! 127.0.0.1: connect, devices -l, shell (legacy and v2 exit codes), exec-out screencap,
//! push/pull, uiautomator, tap + text.

#[path = "common/adb_server.rs"]
mod adb_server;

use adb_server::{AdbFlavor, AdbServer};
use tokio_util::sync::CancellationToken;
use xagent_adb_sim::{self as sim, SimOptions};

struct Rig {
    _rt: tokio::runtime::Runtime,
    shutdown: CancellationToken,
    adb: AdbServer,
    target: String,
    phone: sim::Phone,
}

impl Drop for Rig {
    fn drop(&mut self) {
        let _ = self.adb.run(&["disconnect", &self.target]);
        self.shutdown.cancel();
    }
}

fn rig(flavor: AdbFlavor, serial: &str) -> Rig {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let shutdown = CancellationToken::new();
    let opts = SimOptions {
        serial: serial.into(),
        ..SimOptions::default()
    };
    let (handle, phone) = rt
        .block_on(sim::start_with_phone(opts, shutdown.clone()))
        .unwrap();
    let adb = AdbServer::start(flavor);
    let target = handle.adb_addr.to_string();
    adb.connect(&target);
    Rig {
        _rt: rt,
        shutdown,
        adb,
        target,
        phone,
    }
}

impl Rig {
    fn adb(&self, args: &[&str]) -> std::process::Output {
        let mut full = vec!["-s", self.target.as_str()];
        full.extend_from_slice(args);
        self.adb.run(&full)
    }

    fn stdout(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&self.adb(args).stdout).to_string()
    }
}

fn devices_and_getprop(r: &Rig, serial: &str) {
    let devices = String::from_utf8_lossy(&r.adb.run(&["devices", "-l"]).stdout).to_string();
    let line = devices
        .lines()
        .find(|l| l.starts_with(&r.target))
        .unwrap_or_default()
        .to_string();
    assert!(line.contains(" device "), "{devices}");
    assert!(
        line.contains("product:shiba")
            && line.contains("model:Pixel_8")
            && line.contains("device:shiba"),
        "{line}"
    );
    assert_eq!(
        r.stdout(&["shell", "getprop", "ro.serialno"]).trim(),
        serial
    );
    assert_eq!(
        r.stdout(&["shell", "getprop ro.product.model"]).trim(),
        "Pixel 8"
    );
}

fn exit_codes(r: &Rig, v2: bool) {
    let out = r.adb(&["shell", "false; echo rc=$?"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "rc=1\n");
    let out = r.adb(&["shell", "exit 3"]);
    assert_eq!(out.status.code(), Some(if v2 { 3 } else { 0 }));
    let out = r.adb(&["shell", "nosuchprogram"]);
    let err =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        err.contains("/system/bin/sh: nosuchprogram: inaccessible or not found"),
        "{err}"
    );
    if v2 {
        assert_eq!(out.status.code(), Some(127));
    }
}

fn screencap_png(r: &Rig) {
    let out = r.adb(&["exec-out", "screencap", "-p"]);
    assert!(out.status.success());
    let decoder = png::Decoder::new(std::io::Cursor::new(out.stdout));
    let reader = decoder.read_info().expect("valid PNG");
    let info = reader.info();
    assert_eq!((info.width, info.height), (1080, 2400));
}

fn push_pull(r: &Rig) {
    let dir = std::env::temp_dir().join(format!("sim-push-{}-{}", std::process::id(), r.adb.port));
    std::fs::create_dir_all(&dir).unwrap();
    let mut data = vec![0u8; 200 * 1024];
    let mut x = 0x1234_5678u32;
    for b in data.iter_mut() {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        *b = x as u8;
    }
    let src = dir.join("in.bin");
    let back = dir.join("out.bin");
    std::fs::write(&src, &data).unwrap();
    let push = r.adb(&["push", src.to_str().unwrap(), "/sdcard/Download/blob.bin"]);
    assert!(
        push.status.success(),
        "{}",
        String::from_utf8_lossy(&push.stderr)
    );
    let pull = r.adb(&["pull", "/sdcard/Download/blob.bin", back.to_str().unwrap()]);
    assert!(
        pull.status.success(),
        "{}",
        String::from_utf8_lossy(&pull.stderr)
    );
    assert_eq!(std::fs::read(&back).unwrap(), data);
    let missing = r.adb(&["pull", "/sdcard/nope.bin", back.to_str().unwrap()]);
    assert!(!missing.status.success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The center of the `bounds="[x1,y1][x2,y2]"` of the first node whose attributes contain `needle`.
fn center_of(xml: &str, needle: &str) -> (i32, i32) {
    let node = xml
        .split("<node ")
        .find(|n| n.contains(needle))
        .unwrap_or_else(|| panic!("{needle} not in {xml}"));
    let b = node.split("bounds=\"").nth(1).unwrap();
    let nums: Vec<i32> = b
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(4)
        .map(|s| s.parse().unwrap())
        .collect();
    ((nums[0] + nums[2]) / 2, (nums[1] + nums[3]) / 2)
}

fn ui_flow(r: &Rig) {
    let xml = r.stdout(&["shell", "uiautomator", "dump", "/dev/tty"]);
    assert!(
        xml.starts_with(
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        ),
        "{xml}"
    );
    assert!(
        xml.contains("text=\"Notes\"")
            && xml.trim_end().ends_with("UI hierchary dumped to: /dev/tty"),
        "{xml}"
    );
    let (x, y) = center_of(&xml, "text=\"Notes\"");
    r.adb(&["shell", "input", "tap", &x.to_string(), &y.to_string()]);
    let xml = r.stdout(&["shell", "uiautomator", "dump", "/dev/tty"]);
    let (x, y) = center_of(&xml, "resource-id=\"com.example.notes:id/note_text\"");
    r.adb(&["shell", "input", "tap", &x.to_string(), &y.to_string()]);
    r.adb(&["shell", "input", "text", "hello"]);
    let xml = r.stdout(&["shell", "uiautomator", "dump", "/dev/tty"]);
    assert!(
        xml.contains("text=\"hello\" resource-id=\"com.example.notes:id/note_text\""),
        "{xml}"
    );
    // Android 11+ print the focus per display (`dumpsys window displays`); the windows
    // section lists the window without a focus line (fixtures/window/appium-android1*).
    let focus = r.stdout(&["shell", "dumpsys", "window", "displays"]);
    assert!(
        focus.contains("mCurrentFocus=Window{")
            && focus.contains("com.example.notes/com.example.notes.MainActivity}"),
        "{focus}"
    );
    let windows = r.stdout(&["shell", "dumpsys", "window", "windows"]);
    assert!(
        windows.contains(" Window{")
            && windows.contains(" u0 com.example.notes/com.example.notes.MainActivity}:")
            && !windows.contains("mCurrentFocus="),
        "{windows}"
    );
}

fn full_suite(flavor: AdbFlavor, serial: &str, v2: bool) {
    let r = rig(flavor, serial);
    devices_and_getprop(&r, serial);
    exit_codes(&r, v2);
    screencap_png(&r);
    push_pull(&r);
    ui_flow(&r);
    let log = r.phone.command_log();
    assert!(
        log.iter()
            .any(|e| e.argv == ["input", "text", "hello"] && e.exit_code == 0),
        "{log:?}"
    );
}

#[test]
fn google_adb34_drives_the_sim() {
    full_suite(AdbFlavor::Google34, "SIM34A", true);
}

#[test]
fn debian_adb29_drives_the_sim() {
    full_suite(AdbFlavor::Debian29, "SIM29A", true);
}
