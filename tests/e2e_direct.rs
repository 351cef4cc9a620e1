//! End to end through the direct transport (no adb binary): simulated phone ← connector's own
//! host side of the adbd wire ← xAgent client over WebSocket.

mod common;

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walking_skeleton_through_direct_transport() {
    let sim = SimPhone::start("SIMDIRECT00042");
    let dir = TempDir::new("e2e-direct");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let t = common::scenario::walking_skeleton(&conn.addr, &sim.serial).await;
    println!(
        "direct: screenshot round trip {:.1} ms, tap round trip {:.1} ms",
        t.screenshot_ms, t.tap_ms
    );
}
