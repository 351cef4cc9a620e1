//! End to end through real adb servers: simulated phone ← `adb connect` ← Google adb 34 /
//! Debian adb 29 (private ports) ← connector ← xAgent client over WebSocket.

mod common;

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};

async fn through(flavor: AdbFlavor) {
    let sim = SimPhone::start("SIMADB0000042");
    let adb = AdbServer::start(flavor);
    adb.connect(&sim.addr);
    let dir = TempDir::new("e2e-adb");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let t = common::scenario::walking_skeleton(&conn.addr, &sim.serial).await;
    println!(
        "{flavor:?}: screenshot round trip {:.1} ms, tap round trip {:.1} ms",
        t.screenshot_ms, t.tap_ms
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walking_skeleton_through_google_adb_34() {
    through(AdbFlavor::Google34).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walking_skeleton_through_debian_adb_29() {
    through(AdbFlavor::Debian29).await;
}
