//! Phones handed back clean (issue 21 §3, device-profile section `[release]`), through the real
//! wire: xAgent's WebSocket → connector → a real Google adb server → the simulated phone. A
//! binding launches an app, installs an APK, pushes a file, rotates the screen, overrides
//! `wm size`/density and switches the IME and an animation scale through the tools; when the
//! binding ends (`auth.logout`, the lease's expiry) the phone's state, read back with
//! `adb shell` (`pm list packages`, `ls`, `wm size`, `settings get`), is as it was. A claim
//! during the release is refused with `device_releasing` and succeeds after; an opted-out step
//! does not run; a failed step shows in `devices --json` and `check`.

mod common;
#[path = "tools_support/mod.rs"]
mod tools_support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use common::adb_server::AdbServer;
use common::procs::{devices_json, run_cli, ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::{claim_when_visible, sims_behind_adb34};
use common::xagent::{connect, XAgent};
use tools_support::{ok, profiles_dir, sim_apk, upload};

/// The built-in profile with `android_shell` on for the commands the test changes the phone
/// with (`wm size|density`, `settings put global`, `ime set`), then `extra` edits.
fn profile(dir: &TempDir, extra: &[(&str, &str)]) -> String {
    let mut edits = vec![
        ("[shell]\nenabled = false", "[shell]\nenabled = true"),
        (
            "# [[shell.allow]]\n# program = \"getprop\"\n# args = [\"[a-z0-9._]+\"]",
            "[[shell.allow]]\nprogram = \"wm\"\nargs = [\"size|density\", \"[0-9x]+\"]\n\
             [[shell.allow]]\nprogram = \"settings\"\nargs = [\"put\", \"global\", \"[a-z_]+\", \"[0-9.]+\"]\n\
             [[shell.allow]]\nprogram = \"ime\"\nargs = [\"set\", \"[A-Za-z0-9._/]+\"]",
        ),
    ];
    edits.extend_from_slice(extra);
    profiles_dir(dir, &edits).to_str().unwrap().to_string()
}

/// One phone behind a Google adb 34 server, and a connector reaching it through that server.
struct Rig {
    sim: SimPhone,
    adb: AdbServer,
    conn: ConnectorProc,
    dir: TempDir,
}

impl Rig {
    fn start(serial: &str, profile_edits: &[(&str, &str)], extra: &[&str]) -> Rig {
        let (mut sims, adb) = sims_behind_adb34(&[serial]);
        let sim = sims.remove(0);
        let dir = TempDir::new("release");
        let profiles = profile(&dir, profile_edits);
        let mut flags = vec!["--claim-policy", "open", "--device-profiles", &profiles];
        flags.extend_from_slice(extra);
        let conn = ConnectorProc::start_with(dir.path(), Phones::AdbServer(adb.addr()), &flags);
        Rig {
            sim,
            adb,
            conn,
            dir,
        }
    }

    /// `adb -s ADDR shell CMD` through the adb server: the phone's own answer, trimmed.
    fn sh(&self, cmd: &str) -> String {
        let out = self.adb.run(&["-s", &self.sim.addr, "shell", cmd]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// The phone's row of `devices --json` (through the running connector's socket).
    async fn row(&self) -> Value {
        let data = self.dir.path().to_str().unwrap().to_string();
        let adb = self.adb.addr();
        let serial = self.sim.serial.clone();
        tokio::task::spawn_blocking(move || {
            devices_json(&data, &["--adb-server", &adb])
                .into_iter()
                .find(|r| r["serial"] == serial.as_str())
                .unwrap_or(Value::Null)
        })
        .await
        .unwrap()
    }

    /// The phone's `release` once it is no longer `releasing` (≤ 60 s).
    async fn finished_release(&self) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let release = self.row().await["release"].clone();
            if release["state"] == "clean" || release["state"] == "failed" {
                return release;
            }
            assert!(
                Instant::now() < deadline,
                "release never finished: {release}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A client after its hello with a fresh channel bound to the phone.
    async fn bound(&self) -> (XAgent, String) {
        let mut x = connect(&self.conn.addr).await;
        x.hello_fresh().await;
        let (ch, _) = x.open(None).await;
        let ack = claim_when_visible(&mut x, &ch, &self.sim.serial).await;
        assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
        (x, ch)
    }
}

async fn logout(x: &mut XAgent, ch: &str) {
    let out = x.request("auth.logout", Some(ch), json!({})).await;
    assert!(out.get("error").is_none(), "{out}");
}

/// `getprop KEY` on the phone through `android_shell`, trimmed.
async fn getprop(x: &mut XAgent, ch: &str, key: &str) -> String {
    let r = ok(&x
        .tool(ch, "android_shell", json!({"argv": ["getprop", key]}))
        .await);
    r["stdout"].as_str().unwrap_or_default().trim().to_string()
}

async fn shell(x: &mut XAgent, ch: &str, argv: &[&str]) {
    let r = ok(&x.tool(ch, "android_shell", json!({ "argv": argv })).await);
    assert_eq!(r["exit_code"], 0, "{argv:?}: {r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logout_undoes_what_the_tools_did_and_a_claim_waits_for_it() {
    let rig = Rig::start("SIMRELEASE001", &[], &[]);
    rig.sim
        .control_json("/v1/state", json!({"adb_keyboard": true}));
    let before = |k: &str| rig.sh(&format!("settings get {k}"));
    let (rotation, auto, scale, ime) = (
        before("system user_rotation"),
        before("system accelerometer_rotation"),
        before("global window_animation_scale"),
        before("secure default_input_method"),
    );
    let (mut x, ch) = rig.bound().await;
    ok(&x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.example.notes"}),
        )
        .await);
    let apk = upload(
        &rig.conn,
        &ch,
        "r.apk",
        &sim_apk("com.example.release", "1.0"),
    );
    let r = ok(&x
        .tool(&ch, "android_app_install", json!({"file_ref": apk}))
        .await);
    assert_eq!(r["new_packages"], json!(["com.example.release"]), "{r}");
    let file = upload(&rig.conn, &ch, "note.txt", b"left by the last user");
    ok(&x
        .tool(
            &ch,
            "android_file_push",
            json!({"file_ref": file, "path": "/sdcard/Download/left.txt"}),
        )
        .await);
    ok(&x
        .tool(
            &ch,
            "android_set_orientation",
            json!({"orientation": "landscape"}),
        )
        .await);
    shell(&mut x, &ch, &["wm", "size", "720x1280"]).await;
    shell(&mut x, &ch, &["wm", "density", "320"]).await;
    shell(
        &mut x,
        &ch,
        &["settings", "put", "global", "window_animation_scale", "0"],
    )
    .await;
    shell(
        &mut x,
        &ch,
        &["ime", "set", "com.android.adbkeyboard/.AdbIME"],
    )
    .await;
    // The phone carries the last user's state now.
    assert!(rig
        .sh("pm list packages")
        .contains("package:com.example.release"));
    assert!(rig.sh("ls /sdcard/Download").contains("left.txt"));
    assert!(rig.sh("wm size").contains("Override size: 720x1280"));
    assert_eq!(before("system user_rotation"), "1");
    assert_eq!(before("global window_animation_scale"), "0");
    // The release is slowed on the phone (its first step waits), so a claim meets it running.
    let slow = json!({"command_regex": "^am force-stop", "delay_ms": 6000, "times": 1});
    assert_eq!(rig.sim.control_post("/v1/script", slow), 200);
    logout(&mut x, &ch).await;
    let early = x.claim(&ch, &rig.sim.serial).await;
    assert_eq!(early["error"]["code"], "device_releasing", "{early}");
    let m = early["error"]["message"].as_str().unwrap_or("");
    assert!(m.contains("retry") && !m.contains(&rig.sim.serial), "{m}");
    assert_eq!(rig.row().await["release"]["state"], "releasing");
    let release = rig.finished_release().await;
    assert_eq!(release["state"], "clean", "{release}");
    // Every change is undone, as the phone itself answers.
    assert!(!rig.sh("pm list packages").contains("com.example.release"));
    assert!(!rig.sh("ls /sdcard/Download").contains("left.txt"));
    assert!(
        !rig.sh("wm size").contains("Override"),
        "{}",
        rig.sh("wm size")
    );
    assert!(!rig.sh("wm density").contains("Override"));
    assert_eq!(before("system user_rotation"), rotation);
    assert_eq!(before("system accelerometer_rotation"), auto);
    assert_eq!(before("global window_animation_scale"), scale);
    assert_eq!(before("secure default_input_method"), ime);
    assert_eq!(
        rig.sim
            .count_runs(&["am", "force-stop", "com.example.notes"]),
        1
    );
    assert_eq!(
        rig.sim.count_runs(&["input", "keyevent", "KEYCODE_HOME"]),
        1
    );
    // Claimable again, and the next binding starts from a clean record.
    let again = x.claim(&ch, &rig.sim.serial).await;
    assert_eq!(again["payload"]["status"], "authenticated", "{again}");
    // Logged step by step, the serial masked.
    let logs = rig.conn.logs();
    assert!(logs.contains("release step done"), "{logs}");
    for line in logs.lines().filter(|l| l.contains("release")) {
        assert!(!line.contains("SIMRELEASE001"), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opted_out_step_is_not_run_and_a_failed_step_shows_in_devices_and_check() {
    let rig = Rig::start(
        "SIMRELEASE002",
        &[("remove_files = true ", "remove_files = false ")],
        &[],
    );
    let (mut x, ch) = rig.bound().await;
    let apk = upload(
        &rig.conn,
        &ch,
        "r.apk",
        &sim_apk("com.example.stays", "1.0"),
    );
    ok(&x
        .tool(&ch, "android_app_install", json!({"file_ref": apk}))
        .await);
    let file = upload(&rig.conn, &ch, "kept.txt", b"kept");
    ok(&x
        .tool(
            &ch,
            "android_file_push",
            json!({"file_ref": file, "path": "/sdcard/Download/kept.txt"}),
        )
        .await);
    // The phone refuses the uninstall.
    let refuse = json!({"command_regex": "^pm uninstall", "stdout": "Failure [DELETE_FAILED_INTERNAL_ERROR]\n", "exit_code": 1});
    assert_eq!(rig.sim.control_post("/v1/script", refuse), 200);
    logout(&mut x, &ch).await;
    let release = rig.finished_release().await;
    assert_eq!(release["state"], "failed", "{release}");
    let failed = release["failed_steps"].as_array().unwrap();
    assert_eq!(failed.len(), 1, "{release}");
    assert_eq!(failed[0]["step"], "uninstall_apps");
    assert!(
        failed[0]["message"]
            .as_str()
            .unwrap()
            .contains("DELETE_FAILED_INTERNAL_ERROR"),
        "{release}"
    );
    // remove_files = false: the file stays and no `rm` of it ran.
    assert!(rig.sh("ls /sdcard/Download").contains("kept.txt"));
    assert_eq!(
        rig.sim
            .count_runs(&["rm", "-f", "/sdcard/Download/kept.txt"]),
        0
    );
    // HOME is still pressed (its step is on).
    assert_eq!(
        rig.sim.count_runs(&["input", "keyevent", "KEYCODE_HOME"]),
        1
    );
    let data = rig.dir.path().to_str().unwrap().to_string();
    let adb = rig.adb.addr();
    let key = rig
        .dir
        .path()
        .join("api_key.txt")
        .to_str()
        .unwrap()
        .to_string();
    let (code, out, _) = tokio::task::spawn_blocking(move || {
        run_cli(&[
            "check",
            "--data-dir",
            &data,
            "--api-key-file",
            &key,
            "--adb-server",
            &adb,
        ])
    })
    .await
    .unwrap();
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("PROBLEM  phone SIMRELEASE002: release step uninstall_apps failed"),
        "{out}"
    );
    let data = rig.dir.path().to_str().unwrap().to_string();
    let adb = rig.adb.addr();
    let (_, table, _) = tokio::task::spawn_blocking(move || {
        run_cli(&["devices", "--data-dir", &data, "--adb-server", &adb])
    })
    .await
    .unwrap();
    assert!(
        table.lines().next().unwrap_or("").contains("RELEASE"),
        "{table}"
    );
    assert!(table.contains("failed: uninstall_apps"), "{table}");
    // A failed step does not hold the phone back.
    let again = x.claim(&ch, &rig.sim.serial).await;
    assert_eq!(again["payload"]["status"], "authenticated", "{again}");
    // The next release (a tap: HOME only) replaces the failed record: no problem any more.
    ok(&x.tool(&ch, "android_tap", json!({"x": 5, "y": 5})).await);
    logout(&mut x, &ch).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while rig.row().await["release"]["state"] != "clean" {
        assert!(
            Instant::now() < deadline,
            "no clean release: {}",
            rig.row().await
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let data = rig.dir.path().to_str().unwrap().to_string();
    let adb = rig.adb.addr();
    let (_, out, _) = tokio::task::spawn_blocking(move || {
        run_cli(&["check", "--data-dir", &data, "--adb-server", &adb])
    })
    .await
    .unwrap();
    assert!(!out.contains("release step"), "{out}");
}

/// A binding whose tools changed nothing `[release]` undoes (a tap) still ends with HOME
/// pressed (`go_home`, on by default): the next user starts on the launcher, not on the
/// screen the last one left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binding_that_changed_nothing_still_goes_home() {
    let rig = Rig::start("SIMRELEASE003", &[], &[]);
    let (mut x, ch) = rig.bound().await;
    ok(&x.tool(&ch, "android_tap", json!({"x": 10, "y": 10})).await);
    assert_eq!(
        rig.sim.count_runs(&["input", "keyevent", "KEYCODE_HOME"]),
        0
    );
    logout(&mut x, &ch).await;
    let release = rig.finished_release().await;
    assert_eq!(release["state"], "clean", "{release}");
    assert_eq!(
        rig.sim.count_runs(&["input", "keyevent", "KEYCODE_HOME"]),
        1
    );
    let again = x.claim(&ch, &rig.sim.serial).await;
    assert_eq!(again["payload"]["status"], "authenticated", "{again}");
}

/// A binding that only looked at the phone (no side-effecting tool) ends with nothing to do,
/// HOME included: the phone is claimable at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binding_that_only_looked_is_claimable_at_once() {
    let rig = Rig::start("SIMRELEASE006", &[], &[]);
    let (mut x, ch) = rig.bound().await;
    ok(&x.tool(&ch, "android_device_status", json!({})).await);
    logout(&mut x, &ch).await;
    let again = x.claim(&ch, &rig.sim.serial).await;
    assert_eq!(again["payload"]["status"], "authenticated", "{again}");
    assert!(rig.row().await["release"].is_null());
    assert_eq!(
        rig.sim.count_runs(&["input", "keyevent", "KEYCODE_HOME"]),
        0
    );
}

/// With `go_home = false` and nothing recorded, ending the binding runs nothing: the phone is
/// claimable at once and no release is shown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binding_that_changed_nothing_without_go_home_is_claimable_at_once() {
    let rig = Rig::start(
        "SIMRELEASE005",
        &[("go_home = true ", "go_home = false ")],
        &[],
    );
    let (mut x, ch) = rig.bound().await;
    ok(&x.tool(&ch, "android_tap", json!({"x": 10, "y": 10})).await);
    logout(&mut x, &ch).await;
    let again = x.claim(&ch, &rig.sim.serial).await;
    assert_eq!(again["payload"]["status"], "authenticated", "{again}");
    assert!(rig.row().await["release"].is_null());
    assert_eq!(
        rig.sim.count_runs(&["input", "keyevent", "KEYCODE_HOME"]),
        0
    );
}

/// `reboot = true`: the release ends with the phone's own `reboot` (a direct-transport phone:
/// the simulated phone drops its transport, comes back, and finishes booting, as AOSP's
/// `reboot.c` and `sys.boot_completed` behave). While it is down or booting the phone is not
/// claimable (`device_releasing`); once the claim succeeds the phone has rebooted
/// (`sys.boot.reason` `reboot,shell`), finished booting, and answers tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reboot_step_runs_and_the_phone_is_claimable_only_once_it_is_back() {
    let sim = SimPhone::start_with_control("SIMREBOOT0001", &[]);
    let dir = TempDir::new("release-reboot");
    let profiles = profile(
        &dir,
        &[
            ("reboot = false ", "reboot = true "),
            (
                "[[shell.allow]]\nprogram = \"wm\"",
                "[[shell.allow]]\nprogram = \"getprop\"\nargs = [\"[a-z0-9._]+\"]\n[[shell.allow]]\nprogram = \"wm\"",
            ),
        ],
    );
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![sim.addr.clone()]),
        &["--claim-policy", "open", "--device-profiles", &profiles],
    );
    let mut x = connect(&conn.addr).await;
    x.hello_fresh().await;
    let (ch, _) = x.open(None).await;
    let ack = claim_when_visible(&mut x, &ch, &sim.serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    ok(&x.tool(&ch, "android_tap", json!({"x": 10, "y": 10})).await);
    logout(&mut x, &ch).await;
    // The phone goes down with its transport as it reboots; a claim then is refused.
    let deadline = Instant::now() + Duration::from_secs(60);
    while sim.state()["transport"] != "unplugged" {
        assert!(Instant::now() < deadline, "the phone never rebooted");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused = x.claim(&ch, &sim.serial).await;
    assert_eq!(refused["error"]["code"], "device_releasing", "{refused}");
    // Claims are refused until the release is over, then one succeeds.
    loop {
        let ack = x.claim(&ch, &sim.serial).await;
        if ack["payload"]["status"] == "authenticated" {
            break;
        }
        assert_eq!(ack["error"]["code"], "device_releasing", "{ack}");
        assert!(Instant::now() < deadline, "never claimable again: {ack}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(sim.count_runs(&["reboot"]), 1, "one reboot, ordered once");
    assert_eq!(sim.count_runs(&["input", "keyevent", "KEYCODE_HOME"]), 1);
    assert_eq!(getprop(&mut x, &ch, "sys.boot_completed").await, "1");
    assert_eq!(
        getprop(&mut x, &ch, "sys.boot.reason").await,
        "reboot,shell"
    );
    let logs = conn.logs();
    assert!(logs.contains("release step done"), "{logs}");
    assert!(logs.contains("step=\"reboot\""), "{logs}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lease_expiry_after_a_restart_still_hands_the_phone_back() {
    let mut rig = Rig::start("SIMRELEASE004", &[], &["--lease-grace", "2s"]);
    let (mut x, ch) = rig.bound().await;
    let file = upload(&rig.conn, &ch, "gone.txt", b"gone");
    ok(&x
        .tool(
            &ch,
            "android_file_push",
            json!({"file_ref": file, "path": "/sdcard/Download/gone.txt"}),
        )
        .await);
    ok(&x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.example.notes"}),
        )
        .await);
    assert!(rig.sh("ls /sdcard/Download").contains("gone.txt"));
    // Killed mid-binding: what the tools changed is on disk; no xAgent comes back, so the
    // restored channels' lease expires and the phone is handed back.
    drop(x);
    rig.conn.restart();
    let release = rig.finished_release().await;
    assert_eq!(release["state"], "clean", "{release}");
    assert!(!rig.sh("ls /sdcard/Download").contains("gone.txt"));
    assert_eq!(
        rig.sim
            .count_runs(&["am", "force-stop", "com.example.notes"]),
        1
    );
    let logs = rig.conn.logs();
    assert!(logs.contains("connector lease expired"), "{logs}");
}

/// A failed step is a problem with its time, not for ever: once it is older than
/// `FAILURE_SHOWN` (24 h; the store's record is aged here, the connector stopped) with no
/// release since, `check` says it as a note with that time and no longer fails for it; a
/// later clean release replaces it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_release_step_ages_out_of_check_with_its_time() {
    let mut rig = Rig::start("SIMRELEASE009", &[], &[]);
    let (mut x, ch) = rig.bound().await;
    let apk = upload(
        &rig.conn,
        &ch,
        "r.apk",
        &sim_apk("com.example.agesout", "1.0"),
    );
    ok(&x
        .tool(&ch, "android_app_install", json!({"file_ref": apk}))
        .await);
    let refuse = json!({"command_regex": "^pm uninstall", "stdout": "Failure [DELETE_FAILED_INTERNAL_ERROR]\n", "exit_code": 1});
    assert_eq!(rig.sim.control_post("/v1/script", refuse), 200);
    logout(&mut x, &ch).await;
    assert_eq!(rig.finished_release().await["state"], "failed");
    drop(x);
    rig.conn.kill();
    let data = rig.dir.path().to_path_buf();
    let check = |data: std::path::PathBuf, adb: String| async move {
        tokio::task::spawn_blocking(move || {
            let key = data.join("api_key.txt");
            run_cli(&[
                "check",
                "--data-dir",
                data.to_str().unwrap(),
                "--api-key-file",
                key.to_str().unwrap(),
                "--adb-server",
                &adb,
                "--claim-policy",
                "open",
            ])
        })
        .await
        .unwrap()
    };
    let (_, out, _) = check(data.clone(), rig.adb.addr()).await;
    let line = out
        .lines()
        .find(|l| l.contains("release step uninstall_apps failed"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.starts_with("PROBLEM  phone SIMRELEASE009"), "{out}");
    // Its time: `YYYY-MM-DDTHH:MM:SSZ (N ago)`.
    assert!(
        line.contains("Z (") && line.contains(" ago)") || line.contains("just now"),
        "{line}"
    );

    // 25 h later (the record aged in the store): a note with its time, not a problem.
    let db = data.join(xagent_adb_connector::store::data_dir::DB_FILE);
    let aged = rusqlite::Connection::open(&db)
        .unwrap()
        .execute(
            "UPDATE release_outcomes SET finished_ms = finished_ms - 90000000",
            [],
        )
        .unwrap();
    assert_eq!(aged, 1);
    let (_, out, _) = check(data.clone(), rig.adb.addr()).await;
    let line = out
        .lines()
        .find(|l| l.contains("release step uninstall_apps failed"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.starts_with("note     phone SIMRELEASE009"), "{out}");
    assert!(
        line.contains("ago") && line.contains("no longer counted a problem"),
        "{line}"
    );
    assert!(!out.contains("PROBLEM  phone SIMRELEASE009"), "{out}");
}
