//! File and log tools end to end (real binary, real WebSocket, simulated phone, direct
//! transport): push/pull round trip of binary bytes, the policy's roots (traversal, relative,
//! NUL, outside), size limits, missing files, and logcat's filters; and every new device tool once
//! through a private Google adb 34 server.

mod common;
#[path = "tools_support/mod.rs"]
mod tools_support;

use serde_json::json;

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::xagent::http_get;
use tools_support::{argvs, bound, code, ok, profiles_dir, sim_apk, upload};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_then_pull_round_trips_binary_bytes() {
    let sim = SimPhone::start_with_control("SIMFILES00001", &[]);
    let dir = TempDir::new("files");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = bound(&sim, &conn).await;
    let data: Vec<u8> = (0..200_000u32)
        .map(|i| (i * 31 % 256) as u8)
        .chain(*b"\r\n\n\r")
        .collect();
    let file_ref = upload(&conn, &ch, "photo.png", &data);
    let r = ok(&x
        .tool(
            &ch,
            "android_file_push",
            json!({"file_ref": file_ref, "path": "/sdcard//Pictures/./photo.png"}),
        )
        .await);
    assert_eq!(r["path"], "/sdcard/Pictures/photo.png");
    assert_eq!(r["byte_size"], data.len());
    let r = ok(&x
        .tool(
            &ch,
            "android_file_pull",
            json!({"path": "/sdcard/Pictures/photo.png"}),
        )
        .await);
    assert_eq!(r["mime_type"], "image/png");
    assert_eq!(r["byte_size"], data.len());
    let (st, _, body) = http_get(
        &format!("{}{}", conn.base, r["download_url"].as_str().unwrap()),
        None,
    );
    assert_eq!(st, 200);
    assert_eq!(body, data, "bytes survive unchanged");
    // Pushing again replaces the file (repeatable).
    ok(&x
        .tool(
            &ch,
            "android_file_push",
            json!({"file_ref": file_ref, "path": "/sdcard/Pictures/photo.png"}),
        )
        .await);
    let ack = x
        .tool(
            &ch,
            "android_file_pull",
            json!({"path": "/sdcard/Download/missing.txt"}),
        )
        .await;
    assert_eq!(code(&ack), "file_not_found", "{ack}");
    let ack = x
        .tool(
            &ch,
            "android_file_push",
            json!({"file_ref": "nope", "path": "/sdcard/Download/a"}),
        )
        .await;
    assert_eq!(code(&ack), "invalid_arguments");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paths_outside_the_roots_are_refused() {
    let sim = SimPhone::start_with_control("SIMFILES00002", &[]);
    let dir = TempDir::new("roots");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = bound(&sim, &conn).await;
    let file_ref = upload(&conn, &ch, "x.txt", b"hello");
    for path in [
        "/sdcard/Download/../../data/local/tmp/x",
        "/sdcard/Download/a/../../../system/bin/sh",
        "sdcard/Download/x",
        "/data/local/tmp/x",
        "/sdcard/Downloads/x",
        "/sdcard/Download/a\u{0}b",
        "/sdcard/Download",
    ] {
        let ack = x
            .tool(&ch, "android_file_pull", json!({"path": path}))
            .await;
        assert_eq!(code(&ack), "policy_denied", "pull {path:?}: {ack}");
        assert!(ack["error"]["message"]
            .as_str()
            .unwrap()
            .contains("files.roots"));
        let ack = x
            .tool(
                &ch,
                "android_file_push",
                json!({"file_ref": file_ref, "path": path}),
            )
            .await;
        assert_eq!(code(&ack), "policy_denied", "push {path:?}: {ack}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn size_limits_give_file_too_large() {
    let sim = SimPhone::start_with_control("SIMFILES00003", &[]);
    let dir = TempDir::new("limits");
    let profiles = profiles_dir(
        &dir,
        &[
            ("max_pull_bytes = 52428800", "max_pull_bytes = 1000"),
            ("max_push_bytes = 52428800", "max_push_bytes = 3000"),
        ],
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
    let small = upload(&conn, &ch, "s.bin", &[7u8; 2000]);
    let big = upload(&conn, &ch, "b.bin", &[7u8; 5000]);
    ok(&x
        .tool(
            &ch,
            "android_file_push",
            json!({"file_ref": small, "path": "/sdcard/Download/s.bin"}),
        )
        .await);
    let ack = x
        .tool(
            &ch,
            "android_file_push",
            json!({"file_ref": big, "path": "/sdcard/Download/b.bin"}),
        )
        .await;
    assert_eq!(code(&ack), "file_too_large", "{ack}");
    let ack = x
        .tool(
            &ch,
            "android_file_pull",
            json!({"path": "/sdcard/Download/s.bin"}),
        )
        .await;
    assert_eq!(code(&ack), "file_too_large", "{ack}");
    assert!(ack["error"]["message"]
        .as_str()
        .unwrap()
        .contains("max_pull_bytes"));
}

fn lines(r: &serde_json::Value) -> Vec<String> {
    r["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logcat_filters_by_count_level_tag_package_and_time() {
    let sim = SimPhone::start_with_control("SIMLOGCAT0001", &[]);
    let dir = TempDir::new("logcat");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = bound(&sim, &conn).await;
    ok(&x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.example.notes"}),
        )
        .await);
    let all = lines(&ok(&x.tool(&ch, "android_logcat", json!({})).await));
    assert!(all.len() >= 10, "{all:?}");
    assert!(all.iter().all(|l| !l.starts_with("---------")));
    let r = ok(&x.tool(&ch, "android_logcat", json!({"lines": 3})).await);
    assert_eq!(lines(&r), all[all.len() - 3..].to_vec());
    let errs = lines(&ok(&x
        .tool(&ch, "android_logcat", json!({"level": "E"}))
        .await));
    assert!(!errs.is_empty());
    assert!(
        errs.iter().all(|l| l
            .split_whitespace()
            .nth(4)
            .is_some_and(|lv| lv == "E" || lv == "F")),
        "{errs:?}"
    );
    let am = lines(&ok(&x
        .tool(&ch, "android_logcat", json!({"tag": "ActivityManager"}))
        .await));
    assert!(!am.is_empty());
    assert!(
        am.iter().all(|l| l.contains(" ActivityManager: ")),
        "{am:?}"
    );
    let r = ok(&x
        .tool(
            &ch,
            "android_logcat",
            json!({"package": "com.example.notes"}),
        )
        .await);
    let pid = r["pid"].as_u64().expect("notes runs").to_string();
    let own = lines(&r);
    assert!(!own.is_empty());
    assert!(
        own.iter()
            .all(|l| l.split_whitespace().nth(2) == Some(pid.as_str())),
        "{own:?}"
    );
    let r = ok(&x
        .tool(
            &ch,
            "android_logcat",
            json!({"package": "com.android.deskclock"}),
        )
        .await);
    assert!(r["pid"].is_null() && r["count"] == 0, "{r}");
    // since: the timestamp of a line returns that line and the later ones.
    let k = all.len() / 2;
    let stamp: String = all[k].chars().take(18).collect();
    let since = lines(&ok(&x
        .tool(
            &ch,
            "android_logcat",
            json!({"since": stamp, "lines": 2000}),
        )
        .await));
    assert!(
        since.first().is_some_and(|l| l.starts_with(&stamp)),
        "{stamp} {since:?}"
    );
    assert!(since.len() < all.len() && since.last() == all.last());
    for bad in [
        json!({"lines": 0}),
        json!({"lines": 2001}),
        json!({"level": "X"}),
        json!({"since": "now; reboot"}),
        json!({"tag": "a b"}),
    ] {
        let ack = x.tool(&ch, "android_logcat", bad.clone()).await;
        assert_eq!(code(&ack), "invalid_arguments", "{bad}");
    }
}

fn find<'a>(list: &'a serde_json::Value, pkg: &str) -> Option<&'a serde_json::Value> {
    list["packages"]
        .as_array()?
        .iter()
        .find(|p| p["package"] == pkg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_new_tool_through_google_adb_34() {
    let sim = SimPhone::start_with_control("SIMADBTOOLS01", &[]);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&sim.addr);
    let dir = TempDir::new("tools-adb34");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (mut x, ch) = bound(&sim, &conn).await;
    let list = ok(&x.tool(&ch, "android_app_list", json!({})).await);
    assert!(find(&list, "com.example.notes").is_some());
    let r = ok(&x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.android.settings"}),
        )
        .await);
    assert_eq!(r["verified"], true);
    let ack = x
        .tool(
            &ch,
            "android_app_launch",
            json!({"package": "com.example.nothere"}),
        )
        .await;
    assert_eq!(code(&ack), "app_not_installed");
    ok(&x
        .tool(
            &ch,
            "android_app_stop",
            json!({"package": "com.android.settings"}),
        )
        .await);
    let file_ref = upload(&conn, &ch, "c.apk", &sim_apk("com.example.viaadb", "9.9"));
    let r = ok(&x
        .tool(&ch, "android_app_install", json!({"file_ref": file_ref}))
        .await);
    assert_eq!(r["package"], "com.example.viaadb");
    let ack = x
        .tool(
            &ch,
            "android_app_uninstall",
            json!({"package": "com.example.viaadb"}),
        )
        .await;
    assert_eq!(code(&ack), "policy_denied");
    ok(&x
        .tool(
            &ch,
            "android_open_url",
            json!({"url": "https://example.com/"}),
        )
        .await);
    let data: Vec<u8> = (0..70_000u32).map(|i| (i % 256) as u8).collect();
    let file_ref = upload(&conn, &ch, "blob.bin", &data);
    ok(&x
        .tool(
            &ch,
            "android_file_push",
            json!({"file_ref": file_ref, "path": "/sdcard/Download/blob.bin"}),
        )
        .await);
    let r = ok(&x
        .tool(
            &ch,
            "android_file_pull",
            json!({"path": "/sdcard/Download/blob.bin"}),
        )
        .await);
    assert_eq!(r["byte_size"], 70_000);
    let r = ok(&x.tool(&ch, "android_logcat", json!({"lines": 3})).await);
    assert_eq!(r["count"], 3, "{r}");
    assert!(argvs(&sim)
        .iter()
        .all(|a| a.first().is_none_or(|p| p != "monkey")));
}

/// A root itself is a directory, and the refusal says so instead of calling it "outside" the
/// roots it is one of (fresh-user finding 8); refusals never repeat the caller's path (finding 9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_itself_is_refused_as_a_directory_and_no_path_is_echoed() {
    let sim = SimPhone::start_with_control("SIMFILES00009", &[]);
    let dir = TempDir::new("root-itself");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = bound(&sim, &conn).await;
    let file_ref = upload(&conn, &ch, "x.txt", b"hello");
    for (path, root) in [
        ("/sdcard/Download", "/sdcard/Download"),
        ("/sdcard//Pictures/./", "/sdcard/Pictures"),
        ("/sdcard/DCIM/", "/sdcard/DCIM"),
    ] {
        for (tool, args) in [
            ("android_file_pull", json!({"path": path})),
            (
                "android_file_push",
                json!({"file_ref": file_ref, "path": path}),
            ),
        ] {
            let ack = x.tool(&ch, tool, args).await;
            assert_eq!(code(&ack), "policy_denied", "{tool} {path:?}: {ack}");
            let m = ack["error"]["message"].as_str().unwrap();
            assert!(
                m.contains(&format!("the allowed directory {root} itself"))
                    && m.contains("name a file inside it")
                    && !m.contains("outside"),
                "{tool} {path:?}: {m}"
            );
        }
    }
    for path in [
        "/data/local/tmp/marker-7f3a",
        "/sdcard/Download/../marker-7f3a",
    ] {
        let ack = x
            .tool(&ch, "android_file_pull", json!({"path": path}))
            .await;
        assert_eq!(code(&ack), "policy_denied", "{ack}");
        let m = ack["error"]["message"].as_str().unwrap();
        assert!(!m.contains("marker-7f3a"), "the path is echoed: {m}");
    }
}
