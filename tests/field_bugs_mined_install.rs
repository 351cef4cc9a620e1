//! Mined field rows about apps a phone cannot run (issue 19 §2; `docs/field-bugs.md`, "Mined
//! rows"): an app whose minSdkVersion is above the phone's Android (73), and an APK whose
//! native code is for another CPU (74). Each row replays what the phone printed (fixtures under
//! `tests/fixtures/install-launch/`, or the sim's package manager with its source in
//! `docs/sim.md`) through `android_app_install` over the WebSocket, behind Google adb 34 or over
//! the direct transport; the variants replay the kind on another release, install path or CPU.

mod common;
#[path = "tools_support/mod.rs"]
mod tools_support;

use std::io::Write;

use serde_json::{json, Value};

use common::procs::SimPhone;
use common::scenario::{adb_bench, claimed_sim};
use common::xagent::XAgent;
use tools_support::{code, ok, upload};

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

/// `POST /v1/state` that must be accepted.
fn set_state(sim: &SimPhone, patch: Value) {
    assert_eq!(sim.control_post("/v1/state", patch.clone()), 200, "{patch}");
}

/// `sim_flags` of a persona (its own model name).
fn persona(name: &str) -> [&str; 4] {
    ["--persona", name, "--model", ""]
}

/// A real zip APK (entries stored, so the sim reads the manifest text, see
/// `src/sim/programs/packages.rs`): `manifest_attrs` on `<manifest>`, `uses_sdk` on
/// `<uses-sdk>`, and `libs` as `lib/<abi>/<name>.so` entries.
fn apk(package: &str, manifest_attrs: &str, uses_sdk: &str, libs: &[&str]) -> Vec<u8> {
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    w.start_file("AndroidManifest.xml", stored).unwrap();
    write!(w, "<manifest package=\"{package}\" android:versionName=\"1.0\" {manifest_attrs}><uses-sdk {uses_sdk}/><application><activity><intent-filter><category android:name=\"android.intent.category.LAUNCHER\"/></intent-filter></activity></application></manifest>").unwrap();
    w.start_file("classes.dex", stored).unwrap();
    w.write_all(&(0..2000u32).map(|i| (i % 251) as u8).collect::<Vec<_>>())
        .unwrap();
    for lib in libs {
        w.start_file(*lib, stored).unwrap();
        w.write_all(b"\x7fELF").unwrap();
    }
    w.finish().unwrap().into_inner()
}

async fn install(x: &mut XAgent, ch: &str, file_ref: &str) -> Value {
    x.tool(ch, "android_app_install", json!({ "file_ref": file_ref }))
        .await
}

/// The app is not on the phone: a launch says `app_not_installed`.
async fn not_installed(x: &mut XAgent, ch: &str, package: &str) {
    let ack = x
        .tool(ch, "android_app_launch", json!({ "package": package }))
        .await;
    assert_eq!(code(&ack), "app_not_installed", "{ack}");
}

/// The `Failure [...]` line of a fixture.
fn failure_line(fixture: &str) -> &str {
    fixture
        .lines()
        .map(|l| l.split_once("Failure [").map_or("", |(_, r)| r))
        .find(|r| !r.is_empty())
        .and_then(|r| r.strip_suffix(']'))
        .expect("fixture has a Failure line")
}

const SNDCPY: &str =
    include_str!("fixtures/install-launch/sndcpy-10-android9-install-failed-older-sdk.txt");
const DROIDVNC: &str =
    include_str!("fixtures/install-launch/droidvnc-ng-23-emui31-install-failed-older-sdk-bare.txt");
const ANBOX: &str =
    include_str!("fixtures/install-launch/anbox-33-install-failed-no-matching-abis.txt");
const GENYMOTION: &str = include_str!(
    "fixtures/install-launch/genymotion-arm-translation-28-install-multiple-no-matching-abis.txt"
);

// ---- 73: the app needs a newer Android ------------------------------------------------------

/// Row 73: an app whose minSdkVersion is above the phone's API level (`Requires newer sdk
/// version #29 (current version is #28)`, rom1v/sndcpy#10 on Android 9). The answer was
/// `device_command_failed` with "needs a newer Android version than this phone's": now
/// `app_incompatible` naming both levels and their releases, read from the line. The Android 14
/// sim refuses an app needing 35 with the same line for its levels; the reported line itself,
/// scripted; then a build at 34 installs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_73_app_needing_a_newer_android_is_app_incompatible() {
    let mut b = adb_bench("SIMFB73000001", &[]).await;
    let pkg = "com.rom1v.sndcpy";
    let new = upload(
        &b.conn,
        &b.ch,
        "sndcpy.apk",
        &apk(
            pkg,
            "",
            "android:minSdkVersion=\"35\" android:targetSdkVersion=\"35\"",
            &[],
        ),
    );
    let ack = install(&mut b.x, &b.ch, &new).await;
    assert_eq!(code(&ack), "app_incompatible", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains(
            "INSTALL_FAILED_OLDER_SDK: Failed parse during installPackageLI: /data/app/vmdl"
        ) && m.contains("Requires newer sdk version #35 (current version is #34)")
            && m.contains("needs Android 15 (API 35) or later")
            && m.contains("this phone runs Android 14 (API 34)")
            && m.contains("minSdkVersion is 34 or lower"),
        "{m}"
    );
    assert!(
        !m.contains(&b.sim.serial) && !m.contains(&b.sim.addr),
        "{m}"
    );
    not_installed(&mut b.x, &b.ch, pkg).await;

    // The reported line, as the Android 9 phone printed it.
    let line = failure_line(SNDCPY);
    let body = json!({"command_regex": "^pm install -r -t ", "stdout": format!("Failure [{line}]\n"), "exit_code": 1, "times": 1});
    assert_eq!(b.sim.control_post("/v1/script", body), 200);
    let ack = install(&mut b.x, &b.ch, &new).await;
    assert_eq!(code(&ack), "app_incompatible", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains(line)
            && m.contains("needs Android 10 (API 29) or later")
            && m.contains("runs Android 9 (API 28)"),
        "{m}"
    );

    let fits = upload(
        &b.conn,
        &b.ch,
        "sndcpy-34.apk",
        &apk(pkg, "", "android:minSdkVersion=\"34\"", &[]),
    );
    let ack = install(&mut b.x, &b.ch, &fits).await;
    assert_eq!(ok(&ack)["package"], pkg, "{ack}");
}

/// Variants of row 73: Android 6 prints the bare code (`Failure [INSTALL_FAILED_OLDER_SDK]`,
/// bk138/droidVNC-NG#23 on EMUI 3.1): the connector reads the phone's level itself; an app
/// built against a preview SDK (a codename minSdkVersion) on Android 16, installed as a split
/// session: the commit's line names the codename; the same phone installs an app at its level.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_73_variants_android6_bare_code_preview_codename_and_split_session() {
    let mut d = claimed_sim("SIMFB73V00001", &persona("legacy-android6")).await;
    let pkg = "net.christianbeier.droidvnc_ng";
    let r = upload(
        &d.conn,
        &d.ch,
        "droidvnc-ng-1.0.0.apk",
        &apk(pkg, "", "android:minSdkVersion=\"24\"", &[]),
    );
    let ack = install(&mut d.x, &d.ch, &r).await;
    assert_eq!(code(&ack), "app_incompatible", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains(&format!("Failure [{}]", failure_line(DROIDVNC)))
            && m.contains("above this phone's Android 6.0 (API 23)")
            && m.contains("minSdkVersion is 23 or lower"),
        "{m}"
    );
    not_installed(&mut d.x, &d.ch, pkg).await;

    let mut p = claimed_sim("SIMFB73V00002", &persona("pixel-android16")).await;
    let pkg = "com.example.preview";
    let parts = [
        apk(
            pkg,
            "android:isSplitRequired=\"true\" android:requiredSplitTypes=\"base__abi\"",
            "android:minSdkVersion=\"Baklava\"",
            &[],
        ),
        apk(
            pkg,
            " split=\"config.arm64_v8a\" android:splitTypes=\"base__abi\"",
            "",
            &["lib/arm64-v8a/libpreview.so"],
        ),
    ];
    let refs: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, a)| upload(&p.conn, &p.ch, &format!("part{i}.apk"), a))
        .collect();
    let ack =
        p.x.tool(&p.ch, "android_app_install", json!({"file_refs": refs}))
            .await;
    assert_eq!(code(&ack), "app_incompatible", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("Requires development platform Baklava but this is a release platform.")
            && m.contains("preview SDK Baklava")
            && m.contains("numeric minSdkVersion"),
        "{m}"
    );
    not_installed(&mut p.x, &p.ch, pkg).await;

    let at = upload(
        &p.conn,
        &p.ch,
        "at36.apk",
        &apk("com.example.at36", "", "android:minSdkVersion=\"36\"", &[]),
    );
    let ack = install(&mut p.x, &p.ch, &at).await;
    assert_eq!(ok(&ack)["package"], "com.example.at36", "{ack}");
}

// ---- 74: native code for another CPU --------------------------------------------------------

/// Row 74: an ARM-only APK on an x86_64 Android (anbox/anbox#33: `Failure
/// [INSTALL_FAILED_NO_MATCHING_ABIS: Failed to extract native libraries, res=-113]`). The
/// answer was `device_command_failed` "has no native code for this phone's CPU (getprop …)":
/// now `app_incompatible` naming the APK's ABIs (its `lib/<abi>/` entries) and the phone's
/// (`ro.product.cpu.abilist`), and the ARM translation images; an x86_64 build installs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_74_native_code_for_another_cpu_is_app_incompatible() {
    let mut b = adb_bench("SIMFB74000001", &[]).await;
    set_state(&b.sim, json!({"cpu_abilist": ["x86_64", "x86"]}));
    let pkg = "com.example.rycar";
    let arm = upload(
        &b.conn,
        &b.ch,
        "5_temnyj_rycar_vozrozhdenie.apk",
        &apk(
            pkg,
            "",
            "",
            &["lib/arm64-v8a/libgame.so", "lib/armeabi-v7a/libgame.so"],
        ),
    );
    let ack = install(&mut b.x, &b.ch, &arm).await;
    assert_eq!(code(&ack), "app_incompatible", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains(&format!("Failure [{}]", failure_line(ANBOX)))
            && m.contains("native code for arm64-v8a, armeabi-v7a only")
            && m.contains("this phone's CPU runs x86_64, x86 (ro.product.cpu.abilist)")
            && m.contains("for x86_64")
            && m.contains("ARM translation"),
        "{m}"
    );
    assert!(
        !m.contains(&b.sim.serial) && !m.contains(&b.sim.addr),
        "{m}"
    );
    not_installed(&mut b.x, &b.ch, pkg).await;

    let x86 = upload(
        &b.conn,
        &b.ch,
        "rycar-x86_64.apk",
        &apk(pkg, "", "", &["lib/x86_64/libgame.so"]),
    );
    let ack = install(&mut b.x, &b.ch, &x86).await;
    assert_eq!(ok(&ack)["package"], pkg, "{ack}");
}

/// Variants of row 74: a split app whose ABI split is ARM on an x86_64 emulator, committed as
/// one session (m9rco/Genymotion_ARM_Translation#28: `adb install-multiple` → `failed to
/// finalize session`); a 32-bit ARM box (`armeabi-v7a,armeabi`) given an arm64-only APK: its
/// ABI named, no translation hint; an APK with no native code installs on x86.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_74_variants_split_session_arm32_box_and_no_native_code() {
    let mut d = claimed_sim("SIMFB74V00001", &persona("emulator-android15")).await;
    set_state(&d.sim, json!({"cpu_abilist": ["x86_64", "x86"]}));
    let pkg = "com.example.myapplication";
    let parts = [
        apk(
            pkg,
            "android:isSplitRequired=\"true\" android:requiredSplitTypes=\"base__abi\"",
            "",
            &[],
        ),
        apk(
            pkg,
            " split=\"config.armeabi_v7a\" android:splitTypes=\"base__abi\"",
            "",
            &["lib/armeabi-v7a/libnative-lib.so"],
        ),
    ];
    let refs: Vec<String> = parts
        .iter()
        .enumerate()
        .map(|(i, a)| upload(&d.conn, &d.ch, &format!("split{i}.apk"), a))
        .collect();
    let ack =
        d.x.tool(&d.ch, "android_app_install", json!({"file_refs": refs}))
            .await;
    assert_eq!(code(&ack), "app_incompatible", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains(&format!("Failure [{}]", failure_line(GENYMOTION)))
            && m.contains("native code for armeabi-v7a only")
            && m.contains("runs x86_64, x86")
            && m.contains("ARM translation"),
        "{m}"
    );
    not_installed(&mut d.x, &d.ch, pkg).await;
    // No native code: nothing for the CPU to refuse.
    let plain = upload(
        &d.conn,
        &d.ch,
        "plain.apk",
        &apk("com.example.plain", "", "", &[]),
    );
    let ack = install(&mut d.x, &d.ch, &plain).await;
    assert_eq!(ok(&ack)["package"], "com.example.plain", "{ack}");

    let mut t = claimed_sim("SIMFB74V00002", &persona("samsung-android13")).await;
    set_state(&t.sim, json!({"cpu_abilist": ["armeabi-v7a", "armeabi"]}));
    let a64 = upload(
        &t.conn,
        &t.ch,
        "arm64.apk",
        &apk("com.example.arm64only", "", "", &["lib/arm64-v8a/libx.so"]),
    );
    let ack = install(&mut t.x, &t.ch, &a64).await;
    assert_eq!(code(&ack), "app_incompatible", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("native code for arm64-v8a only")
            && m.contains("runs armeabi-v7a, armeabi")
            && m.contains("for armeabi-v7a")
            && !m.contains("ARM translation"),
        "{m}"
    );
}
