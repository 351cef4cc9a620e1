//! The short fault soak (issue 10, `docs/reliability.md`): 4 simulated phones (2 through a
//! Google adb 34 server, 2 over the direct transport), an agent per phone calling screenshot,
//! UI tree, tap, text and key in a loop for 60 s while a seeded injector runs every fault kind
//! at least once — unplug/replug, frozen transport, hanging and failing commands, adb server
//! kill + restart, WebSocket dropped mid-call, connector `kill -9` + restart. Every invariant of
//! the soak must hold; `benches/soak.rs` runs the long variant with 16 phones.

mod common;
mod soak;

use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn short_soak_keeps_every_invariant() {
    let cfg = soak::Config {
        phones: 4,
        duration: Duration::from_secs(60),
        seed: std::env::var("SOAK_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(10),
        fault_every: Duration::from_secs(3),
    };
    let started = Instant::now();
    let report = soak::run(cfg.clone()).await;
    report.print(&cfg, started.elapsed());
    assert!(
        report.violations.is_empty(),
        "violations: {:#?}",
        report.violations
    );
    assert!(
        report.calls >= 40,
        "too few calls answered: {}",
        report.calls
    );
    assert!(report.ok > 0, "no call succeeded");
    for kind in [
        "unplug",
        "freeze",
        "hang",
        "fail",
        "drop_ws",
        "kill_adb",
        "kill9_connector",
    ] {
        assert!(
            report.faults.get(kind).copied().unwrap_or(0) >= 1,
            "fault {kind} not injected: {:?}",
            report.faults
        );
    }
    assert!(
        !report.convergence_ms.is_empty(),
        "no descriptor convergence was judged"
    );
    assert!(
        report.freezes_judged >= 1,
        "no frozen phone's offline truth was judged"
    );
}

/// Soak finding: every `track-devices` list re-probed every online phone, one after another,
/// so a frozen phone (adb still lists it `device`) held back every other phone's change by the
/// probe deadline. Now a phone already identified and online is not probed again: a change of
/// another phone leaves its `getprop` count alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adb_list_change_does_not_reprobe_phones_already_online() {
    use common::adb_server::{AdbFlavor, AdbServer};
    use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
    use common::scenario::claim_when_visible;
    use common::xagent::connect;
    use serde_json::json;

    let adb = AdbServer::start(AdbFlavor::Google34);
    let steady = SimPhone::start_with_control("SIMREPROBE01", &[]);
    let moving = SimPhone::start_with_control("SIMREPROBE02", &[]);
    adb.connect(&steady.addr);
    adb.connect(&moving.addr);
    let dir = TempDir::new("reprobe");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch_steady, _) = x.open(None).await;
    let (ch_moving, _) = x.open(None).await;
    let ack = claim_when_visible(&mut x, &ch_steady, &steady.serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let ack = claim_when_visible(&mut x, &ch_moving, &moving.serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let probes = || steady.count_runs(&["getprop", "ro.serialno"]);
    let before = probes();
    assert!(before >= 1, "the steady phone was identified by getprop");

    // The other phone leaves and comes back: two list changes, two pushes on its channel.
    assert_eq!(
        moving.control_post("/v1/transport", json!({"state": "unplugged"})),
        200
    );
    let offline = wait_status(&mut x, &ch_moving, "offline").await;
    assert!(offline, "the unplugged phone's descriptor goes offline");
    assert_eq!(
        moving.control_post("/v1/transport", json!({"state": "online"})),
        200
    );
    adb.connect(&moving.addr);
    let back = wait_status(&mut x, &ch_moving, "connected").await;
    assert!(back, "the replugged phone's descriptor is connected again");

    assert_eq!(
        probes(),
        before,
        "the steady phone was probed again on another phone's change"
    );
}

/// Waits (≤ 20 s) for a descriptor push of `channel` with `status`.
async fn wait_status(x: &mut common::xagent::XAgent, channel: &str, status: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        let Some(push) = x.wait_push("connection.descriptor.push", 20).await else {
            return false;
        };
        let d = &push["payload"]["connection_descriptor"]["connection"];
        if d["connector_channel_id"] == channel && d["status"] == status {
            return true;
        }
    }
    false
}
