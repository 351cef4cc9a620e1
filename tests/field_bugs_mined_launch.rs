//! Mined field rows about installing and launching apps (issue 19 §2; `docs/field-bugs.md`,
//! "Mined rows"): an app below Android 14+'s target SDK floor (59), an installed app that is
//! disabled, or whose launcher activity is (60), and a paused (suspended) app (64). Each row replays what the phone printed (the
//! fixtures under `tests/fixtures/install-launch/`, or sim behaviour with its source in
//! `docs/sim.md`) and drives the connector's tools over the WebSocket, behind Google adb 34 or
//! over the direct transport; the variants replay the same kind with another release, state or
//! place in the flow.

mod common;
#[path = "tools_support/mod.rs"]
mod tools_support;

use serde_json::{json, Value};

use common::procs::SimPhone;
use common::scenario::{adb_bench, claimed_sim, AdbBench};
use common::xagent::XAgent;
use tools_support::{argvs, code, ok, upload};

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

/// `POST /v1/state` that must be accepted.
fn set_state(sim: &SimPhone, patch: Value) {
    assert_eq!(sim.control_post("/v1/state", patch.clone()), 200, "{patch}");
}

async fn launch(x: &mut XAgent, ch: &str, package: &str) -> Value {
    x.tool(ch, "android_app_launch", json!({ "package": package }))
        .await
}

/// `adb -s ADDR shell ARGS…` through the bench's Google adb 34: (stdout, stderr).
fn adb_shell(b: &AdbBench, args: &[&str]) -> (String, String) {
    let mut argv = vec!["-s", b.sim.addr.as_str(), "shell"];
    argv.extend(args);
    let out = b.adb.run(&argv);
    // A legacy shell (no shell v2) may end lines with CRLF.
    let text = |b: &[u8]| String::from_utf8_lossy(b).replace("\r\n", "\n");
    (text(&out.stdout), text(&out.stderr))
}

/// No serial and no address of the phone in `ack`.
fn leaks_nothing(ack: &Value, sim: &SimPhone) {
    let text = ack.to_string();
    assert!(!text.contains(&sim.serial), "{text}");
    assert!(!text.contains(&sim.addr), "{text}");
}

/// `sim_flags` of a persona (its own model name).
fn persona(name: &str) -> [&str; 4] {
    ["--persona", name, "--model", ""]
}

const NOTES: &str = "com.example.notes";

// ---- 60: an installed app that is disabled --------------------------------------------------

/// Row 60: `pm disable-user` (Settings → Apps → Disable) leaves the app installed (`pm path`
/// lists it) but nothing of it resolves: the launch was `no_launcher_activity` ("cannot be
/// opened from a launcher"), which sends the agent looking for an activity that exists. Now
/// `app_disabled` naming the state, who disabled it and the fix; after `pm enable` it launches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_60_disabled_app_launch_is_app_disabled_with_the_fix() {
    let mut b = adb_bench("SIMFB60000001", &[]).await;
    let (out, _) = adb_shell(&b, &["pm", "disable-user", "--user", "0", NOTES]);
    assert_eq!(out, "Package com.example.notes new state: disabled-user\n");
    // What the thread's phone printed for a disabled launcher (meefik/linuxdeploy#1239).
    let fixture = include_str!(
        "fixtures/install-launch/linuxdeploy-1239-am-start-disabled-launcher-error-type-3.txt"
    );
    let (out, err) = adb_shell(
        &b,
        &["am", "start", "-n", "com.example.notes/.MainActivity"],
    );
    assert_eq!(
        out,
        "Starting: Intent { cmp=com.example.notes/.MainActivity }\n"
    );
    assert!(fixture.contains("Error type 3\nError: Activity class {"));
    assert_eq!(
        err,
        "Error type 3\nError: Activity class {com.example.notes/com.example.notes.MainActivity} does not exist.\n"
    );
    let before = b.sim.state()["foreground"].clone();
    let starts = |sim: &SimPhone| {
        argvs(sim)
            .iter()
            .filter(|a| a.len() > 1 && a[0] == "am" && a[1] == "start")
            .count()
    };
    let started_before = starts(&b.sim);

    let ack = launch(&mut b.x, &b.ch, NOTES).await;
    assert_eq!(code(&ack), "app_disabled", "{ack}");
    let m = message(&ack);
    assert!(
        m.starts_with(
            "com.example.notes is installed but disabled (disabled-user, by com.android.shell"
        ) && m.contains("nothing was started")
            && m.contains("Settings → Apps → com.example.notes → Enable")
            && m.contains("`adb shell pm enable com.example.notes`"),
        "{m}"
    );
    leaks_nothing(&ack, &b.sim);
    assert_eq!(b.sim.state()["foreground"], before);
    assert_eq!(starts(&b.sim), started_before, "nothing was started");

    let (out, _) = adb_shell(&b, &["pm", "enable", NOTES]);
    assert_eq!(out, "Package com.example.notes new state: enabled\n");
    let ack = launch(&mut b.x, &b.ch, NOTES).await;
    assert_eq!(ok(&ack)["verified"], true, "{ack}");
    assert_eq!(b.sim.state()["foreground"], NOTES);
}

/// Variants of row 60: a package disabled by root or a device admin (state 2, which the shell
/// may not undo: `pm enable` throws) and one disabled until used, over the direct transport;
/// an app that turned off its own launcher activity (linuxdeploy's stealth mode: the package
/// enabled, its launcher component listed under `disabledComponents:`); Android 6, whose
/// launch reads the Activity Resolver Table, which still lists a disabled app.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_60_variants_admin_disabled_hidden_launcher_and_android6() {
    let mut d = claimed_sim("SIMFB60V00001", &[]).await;
    let clock = "com.android.deskclock";
    set_state(&d.sim, json!({"app_enabled": {clock: "disabled"}}));
    let ack = launch(&mut d.x, &d.ch, clock).await;
    assert_eq!(code(&ack), "app_disabled", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("(disabled: by root, a device admin or the system)")
            && m.contains("`adb shell pm enable` is refused for this state"),
        "{m}"
    );
    leaks_nothing(&ack, &d.sim);
    set_state(
        &d.sim,
        json!({"app_enabled": {clock: "disabled-until-used"}}),
    );
    let ack = launch(&mut d.x, &d.ch, clock).await;
    assert_eq!(code(&ack), "app_disabled", "{ack}");
    assert!(
        message(&ack).contains("(disabled-until-used: the system keeps it off"),
        "{ack}"
    );

    // The package enabled, its launcher activity off: named, and not "no launcher".
    set_state(
        &d.sim,
        json!({"app_enabled": {clock: "default"}, "disabled_components": ["com.example.notes/.MainActivity"]}),
    );
    let ack = launch(&mut d.x, &d.ch, NOTES).await;
    assert_eq!(code(&ack), "app_disabled", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("installed and enabled, but its launcher activity com.example.notes.MainActivity is disabled")
            && m.contains("pm enable com.example.notes/com.example.notes.MainActivity"),
        "{m}"
    );
    // Other apps are untouched; a package with no launcher at all keeps its own code.
    assert_eq!(ok(&launch(&mut d.x, &d.ch, clock).await)["verified"], true);
    let ack = launch(&mut d.x, &d.ch, "com.android.shell").await;
    assert_eq!(code(&ack), "no_launcher_activity", "{ack}");

    // Android 6: no `cmd`, the table still lists the disabled app; its state decides.
    let mut old = adb_bench("SIMFB60V00002", &persona("legacy-android6")).await;
    let (out, _) = adb_shell(&old, &["pm", "disable-user", NOTES]);
    assert_eq!(out, "Package com.example.notes new state: disabled-user\n");
    let ack = launch(&mut old.x, &old.ch, NOTES).await;
    assert_eq!(code(&ack), "app_disabled", "{ack}");
    assert!(
        message(&ack).contains("disabled-user, by com.android.shell"),
        "{ack}"
    );
    // Android 6 has no shell v2: the exception comes on the one stream.
    let (out, err) = adb_shell(&old, &["pm", "disable", NOTES]);
    let err = format!("{out}{err}");
    assert!(
        err.contains("java.lang.SecurityException: Shell cannot change component state for com.example.notes/null to 2"),
        "{err}"
    );
}

// ---- 59: an app below Android 14+'s target SDK floor ---------------------------------------

/// A sim APK (ZIP signature + manifest text, `src/sim/programs/packages.rs`) targeting
/// `target` (`None`: no `targetSdkVersion`).
fn apk(package: &str, target: Option<u32>, attrs: &str) -> Vec<u8> {
    let target = target
        .map(|t| format!("android:targetSdkVersion=\"{t}\""))
        .unwrap_or_default();
    let mut b = b"PK\x03\x04\x14\x00\x00\x00".to_vec();
    b.extend_from_slice(format!("<manifest package=\"{package}\" android:versionName=\"1.0\" {attrs}><uses-sdk {target}/><application><activity><intent-filter><category android:name=\"android.intent.category.LAUNCHER\"/></intent-filter></activity></application></manifest>").as_bytes());
    b.extend((0..2000u32).map(|i| (i % 251) as u8));
    b
}

/// The argvs of the phone's log whose program and first argument are `pm VERB`.
fn pm_runs(sim: &SimPhone, verb: &str) -> Vec<Vec<String>> {
    argvs(sim)
        .into_iter()
        .filter(|a| a.len() > 1 && a[0] == "pm" && a[1] == verb)
        .collect()
}

const BYPASS: &str = "--bypass-low-target-sdk-block";

/// Row 59: Android 14 refuses an app targeting SDK 22 (`INSTALL_FAILED_DEPRECATED_SDK_VERSION:
/// App package must target at least SDK version 23, but found 22`, android/testing-samples#518).
/// The answer said "below 23" whatever the phone's floor and only "rebuild the app"; now it
/// names the phone's floor and the APK's target from the line, and `allow_low_target_sdk`
/// installs it (asked again with `--bypass-low-target-sdk-block`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_59_low_target_sdk_names_the_floor_and_installs_when_allowed() {
    let mut b = adb_bench("SIMFB59000001", &[]).await;
    let old = upload(
        &b.conn,
        &b.ch,
        "old.apk",
        &apk("com.example.legacy", Some(22), ""),
    );
    let ack =
        b.x.tool(&b.ch, "android_app_install", json!({"file_ref": old}))
            .await;
    assert_eq!(code(&ack), "device_command_failed", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("Failure [INSTALL_FAILED_DEPRECATED_SDK_VERSION: App package must target at least SDK version 23, but found 22]")
            && m.contains("refuses apps that target an SDK below 23")
            && m.contains("this APK targets 22")
            && m.contains("allow_low_target_sdk: true"),
        "{m}"
    );
    leaks_nothing(&ack, &b.sim);
    assert!(pm_runs(&b.sim, "install")
        .iter()
        .all(|a| !a.iter().any(|w| w == BYPASS)));

    let ack =
        b.x.tool(
            &b.ch,
            "android_app_install",
            json!({"file_ref": old, "allow_low_target_sdk": true}),
        )
        .await;
    let r = ok(&ack);
    assert_eq!(
        (&r["package"], &r["low_target_sdk_bypassed"]),
        (&json!("com.example.legacy"), &json!(true)),
        "{ack}"
    );
    let runs = pm_runs(&b.sim, "install");
    assert!(runs.last().unwrap().iter().any(|w| w == BYPASS), "{runs:?}");
}

/// Variants of row 59: Android 16 (floor 24, as Lanchon/sigspoof-checker#14 reports for 15) on a
/// split app installed as one session (the flag goes on `install-create`); an APK at the floor
/// installs without the flag; Android 13 has no floor (the flag, unknown there, is never sent
/// even when allowed); the reported line itself (`found 0`: an APK with no targetSdkVersion,
/// majido/clipper#15) answered by a scripted phone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_59_variants_android16_split_session_at_the_floor_and_android13() {
    let mut d = claimed_sim("SIMFB59V00001", &persona("pixel-android16")).await;
    let pkg = "com.example.sigspoof";
    let parts = [
        apk(
            pkg,
            Some(23),
            "android:isSplitRequired=\"true\" android:requiredSplitTypes=\"base__abi\"",
        ),
        apk(
            pkg,
            None,
            " split=\"config.arm64_v8a\" android:splitTypes=\"base__abi\"",
        ),
    ];
    let refs: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| upload(&d.conn, &d.ch, &format!("part{i}.apk"), p))
        .collect();
    let ack =
        d.x.tool(&d.ch, "android_app_install", json!({"file_refs": refs}))
            .await;
    assert_eq!(code(&ack), "device_command_failed", "{ack}");
    let m = message(&ack);
    // The sim's line is the one the Android 15 phone printed.
    let reported = include_str!(
        "fixtures/install-launch/sigspoof-checker-14-android15-install-failed-deprecated-sdk-version.txt"
    );
    assert!(m.contains(reported.trim_end()), "{m}");
    assert!(
        m.contains("at least SDK version 24, but found 23")
            && m.contains("below 24")
            && m.contains("targets 23"),
        "{m}"
    );
    let ack =
        d.x.tool(
            &d.ch,
            "android_app_install",
            json!({"file_refs": refs, "allow_low_target_sdk": true}),
        )
        .await;
    assert_eq!(ok(&ack)["low_target_sdk_bypassed"], true, "{ack}");
    let creates = pm_runs(&d.sim, "install-create");
    assert!(!creates[0].iter().any(|w| w == BYPASS), "{creates:?}");
    assert!(
        creates.last().unwrap().iter().any(|w| w == BYPASS),
        "{creates:?}"
    );

    // At Android 14's floor: installed at once, no flag.
    let mut b = adb_bench("SIMFB59V00002", &[]).await;
    let at = upload(
        &b.conn,
        &b.ch,
        "at.apk",
        &apk("com.example.floor", Some(23), ""),
    );
    let ack =
        b.x.tool(
            &b.ch,
            "android_app_install",
            json!({"file_ref": at, "allow_low_target_sdk": true}),
        )
        .await;
    assert_eq!(ok(&ack)["low_target_sdk_bypassed"], false, "{ack}");
    assert_eq!(pm_runs(&b.sim, "install").len(), 1);
    // The reported line, `found 0`, from a scripted phone.
    let fixture = include_str!(
        "fixtures/install-launch/clipper-15-android14-install-failed-deprecated-sdk-version.txt"
    );
    let line = fixture
        .lines()
        .find_map(|l| {
            l.split_once(": Failure ")
                .map(|(_, f)| format!("Failure {f}"))
        })
        .unwrap();
    let body = json!({"command_regex": "^pm install -r -t ", "stdout": format!("{line}\n"), "exit_code": 1, "times": 1});
    assert_eq!(b.sim.control_post("/v1/script", body), 200);
    let ack =
        b.x.tool(&b.ch, "android_app_install", json!({"file_ref": at}))
            .await;
    assert_eq!(code(&ack), "device_command_failed", "{ack}");
    assert!(message(&ack).contains("this APK targets 0"), "{ack}");

    // Android 13: no floor, no flag even when allowed.
    let mut s13 = claimed_sim("SIMFB59V00003", &persona("samsung-android13")).await;
    let low = upload(
        &s13.conn,
        &s13.ch,
        "low.apk",
        &apk("com.example.low", Some(19), ""),
    );
    let ack = s13
        .x
        .tool(
            &s13.ch,
            "android_app_install",
            json!({"file_ref": low, "allow_low_target_sdk": true}),
        )
        .await;
    assert_eq!(ok(&ack)["low_target_sdk_bypassed"], false, "{ack}");
    assert!(pm_runs(&s13.sim, "install")
        .iter()
        .all(|a| !a.iter().any(|w| w == BYPASS)));
}

// ---- 64: a paused (suspended) app ------------------------------------------------------------

/// Row 64: a paused app (Digital Wellbeing's "Pause app" or app timer, Focus mode: the package
/// suspended) starts without an error from `am start`, and Android brings up its "App paused"
/// dialog activity instead (VaibhavLakhera/minimo-launcher#47, trinadhthatakula/Thor PR #244).
/// The launch waited 5 s and answered "did not reach the foreground (foreground: android)"; now
/// `app_disabled` at the first poll, naming the pause and how to lift it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_64_paused_app_is_app_disabled_naming_the_pause() {
    let mut b = adb_bench("SIMFB64000001", &[]).await;
    let (out, _) = adb_shell(&b, &["pm", "suspend", NOTES]);
    assert_eq!(out, "Package com.example.notes new suspended state: true\n");
    let (out, _) = adb_shell(&b, &["dumpsys", "package", NOTES]);
    assert!(out.contains(" suspended=true "), "{out}");
    let ack = launch(&mut b.x, &b.ch, NOTES).await;
    assert_eq!(code(&ack), "app_disabled", "{ack}");
    let m = message(&ack);
    assert!(
        m.starts_with("com.example.notes is paused (suspended by Digital Wellbeing")
            && m.contains("com.example.notes/com.example.notes.MainActivity was started")
            && m.contains("\"App paused\" dialog")
            && m.contains("`adb shell pm unsuspend com.example.notes`"),
        "{m}"
    );
    leaks_nothing(&ack, &b.sim);
    // What the phone holds in front is the framework's activity (reconstructed fixture).
    let fixture = include_str!(
        "fixtures/install-launch/suspended-app-top-resumed-activity-RECONSTRUCTED.txt"
    );
    let (dump, _) = adb_shell(&b, &["dumpsys", "activity", "activities"]);
    let wanted = "android/com.android.internal.app.SuspendedAppActivity";
    assert!(fixture.contains(wanted) && dump.contains(wanted), "{dump}");

    let (out, _) = adb_shell(&b, &["pm", "unsuspend", NOTES]);
    assert_eq!(
        out,
        "Package com.example.notes new suspended state: false\n"
    );
    let ack = launch(&mut b.x, &b.ch, NOTES).await;
    assert_eq!(ok(&ack)["verified"], true, "{ack}");
}

/// Variants of row 64: Android 16 over the direct transport (paused by the user: the control
/// API's `suspended`); another app launches as usual while one is paused; a paused app that is
/// also disabled is told as disabled (nothing of it resolves, so nothing is started).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_64_variants_android16_other_apps_and_disabled_first() {
    let mut d = claimed_sim("SIMFB64V00001", &persona("pixel-android16")).await;
    let clock = "com.android.deskclock";
    set_state(&d.sim, json!({"suspended": [clock]}));
    let ack = launch(&mut d.x, &d.ch, clock).await;
    assert_eq!(code(&ack), "app_disabled", "{ack}");
    assert!(
        message(&ack).starts_with("com.android.deskclock is paused"),
        "{ack}"
    );
    leaks_nothing(&ack, &d.sim);
    assert_eq!(d.sim.state()["foreground"], "android");
    // Another app is not paused.
    assert_eq!(ok(&launch(&mut d.x, &d.ch, NOTES).await)["verified"], true);
    // Paused and disabled: the disabled state decides, before anything starts.
    set_state(&d.sim, json!({"app_enabled": {clock: "disabled-user"}}));
    let ack = launch(&mut d.x, &d.ch, clock).await;
    assert_eq!(code(&ack), "app_disabled", "{ack}");
    assert!(
        message(&ack).contains("is installed but disabled (disabled-user"),
        "{ack}"
    );
    assert_eq!(d.sim.state()["foreground"], NOTES);
    set_state(
        &d.sim,
        json!({"suspended": [], "app_enabled": {clock: "default"}}),
    );
    assert_eq!(ok(&launch(&mut d.x, &d.ch, clock).await)["verified"], true);
}
