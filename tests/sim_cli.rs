//! The `sim` subcommand's flags through the real binary and a real Google adb 34 server:
//! `--persona` alone gives the persona's `ro.product.model` (it used to stay "Pixel 8"),
//! `--model` still overrides it (fresh-user finding; README "Flags").

mod common;

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::SimPhone;

/// `ro.product.model` as adb reads it, and as the control API reports it.
fn model_of(sim: &SimPhone, adb: &AdbServer) -> (String, String) {
    adb.connect(&sim.addr);
    let out = adb.run(&["-s", &sim.addr, "shell", "getprop", "ro.product.model"]);
    let via_adb = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let state = sim.state()["model"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (via_adb, state)
}

#[test]
fn persona_sets_the_model_and_model_overrides_it() {
    let adb = AdbServer::start(AdbFlavor::Google34);
    for (flags, model) in [
        (&["--persona", "legacy-android6"][..], "Nexus 5"),
        (&["--persona", "samsung-android13"][..], "SM-S911B"),
        (&[][..], "Pixel 8"),
        (
            &["--persona", "legacy-android6", "--model", "Moto G"][..],
            "Moto G",
        ),
    ] {
        let sim = SimPhone::start_with_control("SIMCLI000001", flags);
        let (via_adb, state) = model_of(&sim, &adb);
        assert_eq!(via_adb, model, "{flags:?}");
        assert_eq!(state, model, "{flags:?}");
        let _ = adb.run(&["disconnect", &sim.addr]);
    }
}
