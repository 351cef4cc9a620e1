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

/// `sim --mdns-interface` refuses a name the box has no interface for, before anything
/// listens, in the words `serve --mdns-interface` uses (one `error:` line listing the
/// interfaces there are), instead of announcing nothing without a word.
#[test]
fn an_unknown_mdns_interface_is_refused_like_serve_refuses_it() {
    let (code, out, err) = common::procs::run_cli(&[
        "sim",
        "--listen",
        "127.0.0.1:0",
        "--serial",
        "SIMCLI000002",
        "--wireless",
        "--mdns-interface",
        "nosuchif0",
    ]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(!out.contains("listening"), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let reason = err
        .strip_prefix("error: ")
        .unwrap_or_else(|| panic!("{err}"))
        .trim_end();
    assert!(
        reason.starts_with("--mdns-interface \"nosuchif0\": no such network interface")
            && reason.contains("lo"),
        "{err}"
    );
    // `serve` says the same of the same name (inside its configuration error).
    let dir = common::procs::TempDir::new("sim-mdns-if");
    let key = dir.path().join("api_key");
    std::fs::write(&key, format!("{}\n", common::API_KEY)).unwrap();
    let data = dir.path().join("data");
    let (_, _, serve) = common::procs::run_cli(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--adb-server",
        "",
        "--data-dir",
        data.to_str().unwrap(),
        "--api-key-file",
        key.to_str().unwrap(),
        "--mdns-interface",
        "nosuchif0",
    ]);
    assert!(serve.contains(reason), "serve: {serve}\nsim: {err}");
}

/// `sim --serial ""` (or blank) is refused before anything listens, on one `error:` line,
/// instead of a phone adb lists with no serial.
#[test]
fn a_blank_serial_is_refused() {
    for serial in ["", "   "] {
        let (code, out, err) =
            common::procs::run_cli(&["sim", "--listen", "127.0.0.1:0", "--serial", serial]);
        assert_eq!(code, Some(1), "{serial:?}: {out}{err}");
        assert!(!out.contains("listening"), "{out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("error: --serial must not be empty or blank"),
            "{err}"
        );
    }
}
