//! App tools end to end (real binary, real WebSocket, simulated phone): list, launch (field bugs
//! 16 and 17), stop, install from an upload, uninstall behind the policy gate, open_url's scheme
//! allow-list, over the direct transport (the adb-server pass of every new tool is in
//! `e2e_tools_files.rs`).

mod common;
#[path = "tools_support/mod.rs"]
mod tools_support;

use serde_json::json;

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use tools_support::{argvs, bound, code, ok, profiles_dir, sim_apk, upload};

fn direct(sim: &SimPhone, dir: &TempDir) -> ConnectorProc {
    ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]))
}

fn find<'a>(list: &'a serde_json::Value, pkg: &str) -> Option<&'a serde_json::Value> {
    list["packages"]
        .as_array()?
        .iter()
        .find(|p| p["package"] == pkg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_list_reports_user_apps_versions_and_launchers() {
    let sim = SimPhone::start_with_control("SIMAPPLIST001", &[]);
    let dir = TempDir::new("applist");
    let conn = direct(&sim, &dir);
    let (mut x, ch) = bound(&sim, &conn).await;
    let r = ok(&x.tool(&ch, "android_app_list", json!({})).await);
    let notes = find(&r, "com.example.notes").expect("user app listed");
    assert_eq!(notes["version_name"], "1.0.3");
    assert_eq!(notes["has_launcher"], true);
    assert_eq!(notes["launcher_category"], "launcher");
    assert_eq!(notes["system"], false);
    assert!(notes["label"].is_null());
    assert_eq!(
        find(&r, "com.example.tv").unwrap()["launcher_category"],
        "leanback"
    );
    assert!(
        find(&r, "com.android.settings").is_none(),
        "system apps hidden by default"
    );
    assert_eq!(r["count"], r["packages"].as_array().unwrap().len());

    let r = ok(&x
        .tool(&ch, "android_app_list", json!({"include_system": true}))
        .await);
    let settings = find(&r, "com.android.settings").expect("system app listed");
    assert_eq!(settings["system"], true);
    assert_eq!(settings["has_launcher"], true);
    assert_eq!(
        find(&r, "com.android.shell").unwrap()["has_launcher"],
        false
    );
    let ack = x
        .tool(&ch, "android_app_list", json!({"include_system": "yes"}))
        .await;
    assert_eq!(code(&ack), "invalid_arguments");
    // One batched shell call for the versions: no `dumpsys package` runs outside a batch.
    let dumps = argvs(&sim)
        .iter()
        .filter(|a| {
            a.first().is_some_and(|p| p == "dumpsys") && a.get(1).is_some_and(|s| s == "package")
        })
        .count();
    assert!(dumps >= 3, "{dumps}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_16_settings_launches_without_monkey_and_is_verified() {
    let sim = SimPhone::start_with_control("SIMLAUNCH0016", &[]);
    let dir = TempDir::new("launch16");
    let conn = direct(&sim, &dir);
    let (mut x, ch) = bound(&sim, &conn).await;
    let r = ok(&x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.android.settings"}),
        )
        .await);
    assert_eq!(r["verified"], true, "{r}");
    assert_eq!(r["foreground_package"], "com.android.settings");
    assert_eq!(r["launcher_category"], "launcher");
    let status = ok(&x.tool(&ch, "android_device_status", json!({})).await);
    assert_eq!(status["foreground_package"], "com.android.settings");
    let log = argvs(&sim);
    assert!(
        log.iter().all(|a| a.first().is_none_or(|p| p != "monkey")),
        "monkey must never run: {log:?}"
    );
    assert!(
        log.iter().any(|a| a.len() == 4
            && a[0] == "am"
            && a[1] == "start"
            && a[2] == "-n"
            && a[3].starts_with("com.android.settings/")),
        "{log:?}"
    );
    // Repeating the launch is harmless: still in front.
    let r = ok(&x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.android.settings"}),
        )
        .await);
    assert_eq!(r["verified"], true);
    // Schema: a shell-ish package name never reaches the phone.
    let ack = x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.x;reboot"}),
        )
        .await;
    assert_eq!(code(&ack), "invalid_arguments");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_17_leanback_fallback_and_distinct_errors() {
    let sim = SimPhone::start_with_control("SIMLAUNCH0017", &[]);
    let dir = TempDir::new("launch17");
    let conn = direct(&sim, &dir);
    let (mut x, ch) = bound(&sim, &conn).await;
    let r = ok(&x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.example.tv"}),
        )
        .await);
    assert_eq!(r["launcher_category"], "leanback", "{r}");
    assert_eq!(r["verified"], true);
    let ack = x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.example.nothere"}),
        )
        .await;
    assert_eq!(code(&ack), "app_not_installed", "{ack}");
    let ack = x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.android.shell"}),
        )
        .await;
    assert_eq!(code(&ack), "no_launcher_activity", "{ack}");
    assert!(argvs(&sim)
        .iter()
        .all(|a| a.first().is_none_or(|p| p != "monkey")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_stop_force_stops_and_knows_unknown_packages() {
    let sim = SimPhone::start_with_control("SIMAPPSTOP001", &[]);
    let dir = TempDir::new("appstop");
    let conn = direct(&sim, &dir);
    let (mut x, ch) = bound(&sim, &conn).await;
    ok(&x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.example.notes"}),
        )
        .await);
    let r = ok(&x
        .tool(
            &ch,
            "android_app_stop",
            json!({"package": "com.example.notes"}),
        )
        .await);
    assert_eq!(r["stopped"], true);
    assert_eq!(
        sim.count_runs(&["am", "force-stop", "com.example.notes"]),
        1
    );
    let status = ok(&x.tool(&ch, "android_device_status", json!({})).await);
    assert_ne!(status["foreground_package"], "com.example.notes");
    let ack = x
        .tool(
            &ch,
            "android_app_stop",
            json!({"package": "com.example.nothere"}),
        )
        .await;
    assert_eq!(code(&ack), "app_not_installed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_from_upload_and_uninstall_refused_by_default() {
    let sim = SimPhone::start_with_control("SIMINSTALL001", &[]);
    let dir = TempDir::new("install");
    let conn = direct(&sim, &dir);
    let (mut x, ch) = bound(&sim, &conn).await;
    let file_ref = upload(
        &conn,
        &ch,
        "uploaded.apk",
        &sim_apk("com.example.uploaded", "4.2"),
    );
    let r = ok(&x
        .tool(&ch, "android_app_install", json!({"file_ref": file_ref}))
        .await);
    assert_eq!(r["package"], "com.example.uploaded", "{r}");
    let log = argvs(&sim);
    let install = log
        .iter()
        .find(|a| a.len() == 5 && a[0] == "pm" && a[1] == "install")
        .expect("pm install ran");
    assert_eq!(&install[2..4], ["-r", "-t"]);
    assert!(install[4].starts_with("/data/local/tmp/xagent-") && install[4].ends_with(".apk"));
    assert!(
        log.iter().any(|a| a == &["rm", "-f", install[4].as_str()]),
        "temp APK removed"
    );
    let list = ok(&x.tool(&ch, "android_app_list", json!({})).await);
    assert_eq!(
        find(&list, "com.example.uploaded").unwrap()["version_name"],
        "4.2"
    );
    // Reinstall: replaced, package unknown from the diff.
    let r = ok(&x
        .tool(&ch, "android_app_install", json!({"file_ref": file_ref}))
        .await);
    assert!(r["package"].is_null(), "{r}");
    // Not an APK → pm's reason; unknown and other-channel refs → invalid_arguments.
    let junk = upload(&conn, &ch, "junk.apk", b"not a zip");
    let ack = x
        .tool(&ch, "android_app_install", json!({"file_ref": junk}))
        .await;
    assert_eq!(code(&ack), "device_command_failed");
    assert!(
        ack["error"]["message"]
            .as_str()
            .unwrap()
            .contains("INSTALL_PARSE_FAILED_NOT_APK"),
        "{ack}"
    );
    let ack = x
        .tool(
            &ch,
            "android_app_install",
            json!({"file_ref": "00112233445566778899aabbccddeeff.AAAA"}),
        )
        .await;
    assert_eq!(code(&ack), "invalid_arguments");
    let (other, _) = x.open(None).await;
    let foreign = upload(
        &conn,
        &other,
        "other.apk",
        &sim_apk("com.example.other", "1"),
    );
    let ack = x
        .tool(&ch, "android_app_install", json!({"file_ref": foreign}))
        .await;
    assert_eq!(code(&ack), "invalid_arguments", "{ack}");
    // Uninstall is off by default.
    let ack = x
        .tool(
            &ch,
            "android_app_uninstall",
            json!({"package": "com.example.uploaded"}),
        )
        .await;
    assert_eq!(code(&ack), "policy_denied");
    assert!(ack["error"]["message"]
        .as_str()
        .unwrap()
        .contains("gates.allow_uninstall"));
    assert_eq!(
        sim.count_runs(&["pm", "uninstall", "com.example.uploaded"]),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uninstall_allowed_by_profile_and_install_gate() {
    let sim = SimPhone::start_with_control("SIMUNINST0001", &[]);
    let dir = TempDir::new("uninstall");
    let profiles = profiles_dir(
        &dir,
        &[("allow_uninstall = false", "allow_uninstall = true")],
    );
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![sim.addr.clone()]),
        &[
            "--claim-policy",
            "open",
            "--device-profiles",
            profiles.to_str().unwrap(),
        ],
    );
    let (mut x, ch) = bound(&sim, &conn).await;
    let file_ref = upload(&conn, &ch, "a.apk", &sim_apk("com.example.gone", "1.0"));
    ok(&x
        .tool(&ch, "android_app_install", json!({"file_ref": file_ref}))
        .await);
    let r = ok(&x
        .tool(
            &ch,
            "android_app_uninstall",
            json!({"package": "com.example.gone"}),
        )
        .await);
    assert_eq!(r["uninstalled"], true);
    let list = ok(&x.tool(&ch, "android_app_list", json!({})).await);
    assert!(find(&list, "com.example.gone").is_none());
    let ack = x
        .tool(
            &ch,
            "android_app_uninstall",
            json!({"package": "com.example.gone"}),
        )
        .await;
    assert_eq!(code(&ack), "app_not_installed");
    let ack = x
        .tool(
            &ch,
            "android_app_uninstall",
            json!({"package": "com.android.settings"}),
        )
        .await;
    assert_eq!(code(&ack), "device_command_failed", "{ack}");

    drop(x);
    drop(conn);
    let dir2 = TempDir::new("noinstall");
    let profiles = profiles_dir(&dir2, &[("allow_install = true", "allow_install = false")]);
    let conn2 = ConnectorProc::start_with(
        dir2.path(),
        Phones::Direct(vec![sim.addr.clone()]),
        &[
            "--claim-policy",
            "open",
            "--device-profiles",
            profiles.to_str().unwrap(),
        ],
    );
    let (mut x2, ch2) = bound(&sim, &conn2).await;
    let file_ref = upload(&conn2, &ch2, "b.apk", &sim_apk("com.example.b", "1.0"));
    let ack = x2
        .tool(&ch2, "android_app_install", json!({"file_ref": file_ref}))
        .await;
    assert_eq!(code(&ack), "policy_denied");
    assert!(ack["error"]["message"]
        .as_str()
        .unwrap()
        .contains("gates.allow_install"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_url_allows_https_as_one_argument_and_refuses_other_schemes() {
    let sim = SimPhone::start_with_control("SIMOPENURL001", &[]);
    let dir = TempDir::new("openurl");
    let conn = direct(&sim, &dir);
    let (mut x, ch) = bound(&sim, &conn).await;
    let url = "https://example.com/a?q=it's;$(reboot)&x=`id`|true";
    let r = ok(&x.tool(&ch, "android_open_url", json!({"url": url})).await);
    assert_eq!(r["scheme"], "https");
    assert_eq!(
        sim.count_runs(&["am", "start", "-a", "android.intent.action.VIEW", "-d", url]),
        1,
        "the URL is one argv element: {:?}",
        argvs(&sim)
    );
    assert!(argvs(&sim).iter().all(|a| a
        .first()
        .is_none_or(|p| p != "reboot" && p != "id" && p != "true")));
    for bad in [
        "javascript:alert(1)",
        "file:///sdcard/Download/x.html",
        "intent://x#Intent;end",
    ] {
        let ack = x.tool(&ch, "android_open_url", json!({"url": bad})).await;
        assert_eq!(code(&ack), "policy_denied", "{bad}: {ack}");
        assert!(ack["error"]["message"]
            .as_str()
            .unwrap()
            .contains("open_url.schemes"));
    }
    let ack = x
        .tool(
            &ch,
            "android_open_url",
            json!({"url": "https://exa mple.com"}),
        )
        .await;
    assert_eq!(code(&ack), "invalid_arguments");
    let starts = argvs(&sim)
        .iter()
        .filter(|a| a.first().is_some_and(|p| p == "am"))
        .count();
    assert_eq!(starts, 1, "refused URLs never reach the phone");
}
