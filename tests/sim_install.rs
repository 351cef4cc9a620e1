//! `adb install` against the simulated phone with Google adb 34 and Debian adb 29: both stream the
//! APK (`exec:cmd package install -S SIZE` when the device has `cmd`, AOSP
//! `client/adb_install.cpp`), and the package shows up in `pm list packages -3`.

mod common;

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{SimPhone, TempDir};

fn install_through(flavor: AdbFlavor) {
    let sim = SimPhone::start("SIMINSTALL0001");
    let adb = AdbServer::start(flavor);
    adb.connect(&sim.addr);
    let dir = TempDir::new("apk");
    let apk = dir.path().join("streamed.apk");
    let mut bytes = b"PK\x03\x04".to_vec();
    bytes.extend_from_slice(b"<manifest package=\"com.example.streamed\" versionName=\"2.0\"/>");
    bytes.resize(300_000, 0x5a); // several sync/exec chunks
    std::fs::write(&apk, &bytes).unwrap();
    let out = adb.run(&["-s", &sim.addr, "install", apk.to_str().unwrap()]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("Success"),
        "{flavor:?}: {text}"
    );
    let list = adb.run(&["-s", &sim.addr, "shell", "pm", "list", "packages", "-3"]);
    assert!(
        String::from_utf8_lossy(&list.stdout).contains("package:com.example.streamed"),
        "{flavor:?}"
    );
    let again = adb.run(&["-s", &sim.addr, "install", apk.to_str().unwrap()]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&again.stderr)
    );
    assert!(
        text.contains("INSTALL_FAILED_ALREADY_EXISTS"),
        "{flavor:?}: {text}"
    );
}

#[test]
fn adb34_install_streams_the_apk() {
    install_through(AdbFlavor::Google34);
}

#[test]
fn adb29_install_streams_the_apk() {
    install_through(AdbFlavor::Debian29);
}
