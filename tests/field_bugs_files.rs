//! Field bugs of round 3 about files, storage and installs (rows 41, 45, 46, 47 of
//! `../shared/cases/field-bugs-3.md`), the transfer plane's hardening item L2, and the variants
//! of each kind, through the real path: WebSocket → connector binary → Google adb 34 or the
//! direct transport → simulated phone; uploads and downloads over real HTTP. `docs/field-bugs.md`
//! (Round 3) maps rows to tests.

mod common;
#[path = "tools_support/mod.rs"]
mod tools_support;

use std::io::Write;

use serde_json::{json, Value};

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::xagent::XAgent;
use tools_support::{agent, argvs, bound, code, direct_with_profile, ok, upload};

/// A sim (with `flags`) behind a private Google adb 34, a connector on that server, a bound
/// channel.
struct ViaAdb {
    sim: SimPhone,
    adb: AdbServer,
    conn: ConnectorProc,
    x: XAgent,
    ch: String,
    _dir: TempDir,
}

async fn via_adb34(serial: &str, flags: &[&str]) -> ViaAdb {
    let sim = SimPhone::start_with_control(serial, flags);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&sim.addr);
    let dir = TempDir::new(&serial.to_ascii_lowercase());
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (x, ch) = bound(&sim, &conn).await;
    ViaAdb {
        sim,
        adb,
        conn,
        x,
        ch,
        _dir: dir,
    }
}

/// A sim (with `flags`) on the connector's direct transport, and a bound channel.
async fn direct(
    serial: &str,
    flags: &[&str],
) -> (SimPhone, ConnectorProc, XAgent, String, TempDir) {
    let sim = SimPhone::start_with_control(serial, flags);
    let dir = TempDir::new(&serial.to_ascii_lowercase());
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (x, ch) = bound(&sim, &conn).await;
    (sim, conn, x, ch, dir)
}

impl ViaAdb {
    /// `adb shell ARGS…` stdout.
    fn shell(&self, args: &[&str]) -> String {
        let mut argv = vec!["-s", self.sim.addr.as_str(), "shell"];
        argv.extend(args);
        String::from_utf8_lossy(&self.adb.run(&argv).stdout).to_string()
    }
}

/// The files the sim's media store indexed.
fn media_indexed(sim: &SimPhone) -> Vec<String> {
    sim.control_get("/v1/media")["indexed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect()
}

/// `android_file_push` of `file_ref` to `path`; the ack.
async fn push(x: &mut XAgent, ch: &str, file_ref: &str, path: &str) -> Value {
    x.tool(
        ch,
        "android_file_push",
        json!({"file_ref": file_ref, "path": path}),
    )
    .await
}

/// `android_file_pull` of `path`; the ack.
async fn pull(x: &mut XAgent, ch: &str, path: &str) -> Value {
    x.tool(ch, "android_file_pull", json!({"path": path})).await
}

/// The default roots line of `device-profiles/default.toml`, for [`direct_with_profile`] edits.
const DEFAULT_ROOTS: &str =
    "roots = [\"/sdcard/Download\", \"/sdcard/Pictures\", \"/sdcard/DCIM\"]";

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

/// GET of a file answer: status, the headers asked for (lowercase names), body.
fn download(conn: &ConnectorProc, url: &str, names: &[&str]) -> (u16, Vec<String>, Vec<u8>) {
    let mut resp = agent()
        .get(&format!("{}{url}", conn.base))
        .call()
        .expect("download");
    let heads = names
        .iter()
        .map(|n| {
            resp.headers()
                .get(*n)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        })
        .collect();
    let status = resp.status().as_u16();
    (status, heads, resp.body_mut().read_to_vec().unwrap())
}

const FILE_HEADERS: &[&str] = &[
    "content-type",
    "content-disposition",
    "x-content-type-options",
    "content-security-policy",
];

/// A sim APK (ZIP signature + manifest text, see `src/sim/programs/packages.rs`) with extra
/// manifest attributes (`isSplitRequired`, `split`, …).
fn apk(package: &str, attrs: &str) -> Vec<u8> {
    let mut b = b"PK\x03\x04\x14\x00\x00\x00".to_vec();
    b.extend_from_slice(format!("<manifest package=\"{package}\" android:versionName=\"5.1\" {attrs}><application><activity><intent-filter><category android:name=\"android.intent.category.LAUNCHER\"/></intent-filter></activity></application></manifest>").as_bytes());
    b.extend((0..3000u32).map(|i| (i % 251) as u8));
    b
}

const EASYPARK: &str = "net.easypark.android";

fn split_base(package: &str) -> Vec<u8> {
    apk(
        package,
        "android:isSplitRequired=\"true\" android:requiredSplitTypes=\"base__abi,base__density\"",
    )
}

fn split(package: &str, name: &str, types: &str) -> Vec<u8> {
    apk(
        package,
        &format!(" split=\"{name}\" android:splitTypes=\"{types}\""),
    )
}

/// A zip of `entries`, deflated (an `.apks` bundle as bundletool writes it).
fn zip_of(entries: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let writer = entries.iter().fold(
        zip::ZipWriter::new(std::io::Cursor::new(Vec::new())),
        |mut w, (name, data)| {
            w.start_file(*name, deflated).expect("zip entry");
            w.write_all(data).expect("zip data");
            w
        },
    );
    writer.finish().expect("zip").into_inner()
}

/// Uploads the three APKs of split app `package` (base requiring ABI and density splits, and
/// one of each) and installs them as `file_refs`; the ack.
async fn install_whole_split_app(
    conn: &ConnectorProc,
    x: &mut XAgent,
    ch: &str,
    package: &str,
) -> Value {
    let apks = [
        split_base(package),
        split(package, "config.arm64_v8a", "base__abi"),
        split(package, "config.xxhdpi", "base__density"),
    ];
    let refs: Vec<String> = apks
        .iter()
        .enumerate()
        .map(|(i, b)| upload(conn, ch, &format!("part{i}.apk"), b))
        .collect();
    x.tool(ch, "android_app_install", json!({"file_refs": refs}))
        .await
}

/// The argvs of the phone's command log whose program and first argument are `pm VERB`.
fn pm_runs(sim: &SimPhone, verb: &str) -> Vec<Vec<String>> {
    argvs(sim)
        .into_iter()
        .filter(|a| a.len() > 1 && a[0] == "pm" && a[1] == verb)
        .collect()
}

/// Every temporary APK the connector pushed was removed again (an `rm -f` naming it ran).
fn temp_apks_removed(sim: &SimPhone) -> usize {
    let log = argvs(sim);
    let pushed: Vec<String> = log
        .iter()
        .flat_map(|a| a.iter().cloned())
        .filter(|w| w.starts_with("/data/local/tmp/xagent-"))
        .collect();
    assert!(!pushed.is_empty(), "no temporary APK was named");
    for p in &pushed {
        assert!(
            log.iter()
                .any(|a| a.first().is_some_and(|x| x == "rm") && a.contains(p)),
            "{p} not removed: {log:?}"
        );
    }
    pushed.len()
}

// ---- row 41: pushed media indexed ----------------------------------------------------------

/// Row 41: a picture pushed into `/sdcard/Pictures` on an Android 16 Pixel (no
/// `media_scanner` service) is indexed by the media store, and the result says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_41_push_into_pictures_is_indexed_on_android_16() {
    let mut p = via_adb34("SIMFB41A16001", &["--persona", "pixel-android16"]).await;
    let out = p
        .adb
        .run(&["-s", &p.sim.addr, "shell", "cmd", "media_scanner"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("cmd: Can't find service: media_scanner"),
        "the Android 16 persona has no media_scanner service: {text}"
    );
    let file_ref = upload(&p.conn, &p.ch, "receipt.png", b"\x89PNG\r\n\x1a\nreceipt");
    let r = ok(&push(&mut p.x, &p.ch, &file_ref, "/sdcard/Pictures/receipt.png").await);
    assert_eq!(r["path"], "/sdcard/Pictures/receipt.png");
    assert_eq!(r["media_indexed"], true, "{r}");
    assert!(
        r["media_uri"]
            .as_str()
            .unwrap()
            .starts_with("content://media/external_primary/images/media/"),
        "{r}"
    );
    assert!(r["note"].as_str().unwrap().contains("indexed"), "{r}");
    assert_eq!(
        media_indexed(&p.sim),
        ["/storage/emulated/0/Pictures/receipt.png"]
    );
    // The phone was asked with MediaProvider's scan_file call, on the canonical path.
    let asked = argvs(&p.sim).into_iter().any(|a| {
        a.first().is_some_and(|c| c == "content")
            && a.iter().any(|w| w == "scan_file")
            && a.last()
                .is_some_and(|w| w == "/storage/emulated/0/Pictures/receipt.png")
    });
    assert!(
        asked,
        "content call … scan_file … /storage/emulated/0/Pictures/receipt.png ran"
    );
}

/// Variant: a video pushed into `Movies` (the default roots plus Movies) is indexed as video;
/// a file in a hidden folder is scanned and kept out, and the result says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_41_variants_movies_indexed_hidden_folder_kept_out() {
    let sim = SimPhone::start_with_control("SIMFB41MOV001", &[]);
    let dir = TempDir::new("fb41-movies");
    let (conn, mut x, ch) = direct_with_profile(&sim, &dir, &[(DEFAULT_ROOTS, "roots = [\"/sdcard/Download\", \"/sdcard/Pictures\", \"/sdcard/DCIM\", \"/storage/emulated/0/Movies\"]")]).await;
    let clip = upload(&conn, &ch, "clip.mp4", b"\x00\x00\x00\x18ftypmp42");
    let r = ok(&push(&mut x, &ch, &clip, "/mnt/sdcard/Movies/trip/clip.mp4").await);
    assert_eq!(r["media_indexed"], true, "{r}");
    assert!(
        r["media_uri"].as_str().unwrap().contains("/video/media/"),
        "{r}"
    );
    let r = ok(&push(&mut x, &ch, &clip, "/sdcard/DCIM/.thumbnails/clip.mp4").await);
    assert_eq!(r["media_indexed"], false, "{r}");
    assert!(r["media_uri"].is_null());
    assert!(r["note"].as_str().unwrap().contains("did not index"), "{r}");
    assert_eq!(
        media_indexed(&sim),
        ["/storage/emulated/0/Movies/trip/clip.mp4"]
    );
}

/// Variant: Android 6 has no `scan_file` call (`content call` throws) and an `am` without
/// `--receiver-include-background`: the scan is requested with the broadcast, asked again
/// without the flag, and the result says it is requested, not confirmed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_41_variants_old_android_falls_back_to_the_scan_broadcast() {
    let (sim, conn, mut x, ch, _dir) =
        direct("SIMFB41OLD001", &["--persona", "legacy-android6"]).await;
    let file_ref = upload(&conn, &ch, "scan.jpg", b"\xff\xd8\xff\xe0jpeg");
    let r = ok(&push(&mut x, &ch, &file_ref, "/sdcard/DCIM/scan one.jpg").await);
    assert_eq!(r["media_indexed"], false, "{r}");
    let note = r["note"].as_str().unwrap();
    assert!(
        note.contains("requested") && note.contains("MEDIA_SCANNER_SCAN_FILE"),
        "{note}"
    );
    assert_eq!(
        media_indexed(&sim),
        ["/storage/emulated/0/DCIM/scan one.jpg"]
    );
    let broadcasts: Vec<Vec<String>> = argvs(&sim)
        .into_iter()
        .filter(|a| a.len() > 1 && a[0] == "am" && a[1] == "broadcast")
        .collect();
    assert_eq!(broadcasts.len(), 2, "{broadcasts:?}");
    assert!(broadcasts[1].contains(&"file:///storage/emulated/0/DCIM/scan%20one.jpg".to_string()));
    assert!(!broadcasts[1].contains(&"--receiver-include-background".to_string()));
}

/// Variant: a phone whose media store answers neither way (`content` and `am` scripted to
/// fail as on a stripped OEM build, `Can't find service`): the push still succeeds, never as
/// `device_booting`, and the note names both answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_41_variants_a_missing_media_service_never_fails_the_push() {
    let (sim, conn, mut x, ch, _dir) = direct("SIMFB41NOS001", &[]).await;
    for (re, err) in [
        ("^content call", "Error while accessing provider:media\njava.lang.IllegalStateException: Could not find provider: media\n"),
        ("^am broadcast", "cmd: Can't find service: activity\n"),
    ] {
        sim.control_json("/v1/script", json!({"command_regex": re, "stderr": err, "exit_code": 20}));
    }
    let file_ref = upload(&conn, &ch, "a.png", b"png");
    let ack = push(&mut x, &ch, &file_ref, "/sdcard/Pictures/a.png").await;
    let r = ok(&ack);
    assert_eq!(r["media_indexed"], false);
    let note = r["note"].as_str().unwrap();
    assert!(
        note.contains("Could not find provider") && note.contains("Can't find service"),
        "{note}"
    );
    assert!(media_indexed(&sim).is_empty());
}

// ---- row 45: storage aliases -----------------------------------------------------------------

/// Row 45: `/storage/emulated/0/Download/…` is the Download root: pulled (and pushed) as such.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_45_storage_emulated_0_is_the_download_root() {
    let mut p = via_adb34("SIMFB45STO001", &[]).await;
    let pdf: Vec<u8> = b"%PDF-1.7\n"
        .iter()
        .copied()
        .chain((0..5000u32).map(|i| i as u8))
        .collect();
    let file_ref = upload(&p.conn, &p.ch, "Check-in confirmation.pdf", &pdf);
    ok(&push(
        &mut p.x,
        &p.ch,
        &file_ref,
        "/sdcard/Download/Check-in confirmation.pdf",
    )
    .await);
    let r = ok(&pull(
        &mut p.x,
        &p.ch,
        "/storage/emulated/0/Download/Check-in confirmation.pdf",
    )
    .await);
    assert_eq!(
        r["path"],
        "/storage/emulated/0/Download/Check-in confirmation.pdf"
    );
    let (st, _, body) = download(&p.conn, r["download_url"].as_str().unwrap(), &[]);
    assert_eq!((st, body), (200, pdf));
    assert!(p
        .shell(&["ls", "/storage/self/primary/Download"])
        .contains("Check-in confirmation.pdf"));
}

/// Variants: `/mnt/sdcard` and `/storage/self/primary` are the same root; a root written as
/// `/storage/emulated/0/…` admits `/sdcard/…`; no spelling climbs out of a root or reaches
/// another user's storage, and names are case-sensitive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_45_variants_aliases_and_no_way_out() {
    let sim = SimPhone::start_with_control("SIMFB45VAR001", &[]);
    let dir = TempDir::new("fb45-var");
    let (conn, mut x, ch) = direct_with_profile(
        &sim,
        &dir,
        &[(
            DEFAULT_ROOTS,
            "roots = [\"/sdcard/Download\", \"/storage/emulated/0/Documents/\"]",
        )],
    )
    .await;
    let data = b"alias bytes".to_vec();
    let file_ref = upload(&conn, &ch, "x.txt", &data);
    ok(&push(&mut x, &ch, &file_ref, "/mnt/sdcard/Download/x.txt").await);
    let r = ok(&pull(&mut x, &ch, "/storage/self/primary/Download/x.txt").await);
    assert_eq!(r["byte_size"], data.len());
    let r = ok(&push(&mut x, &ch, &file_ref, "/sdcard/Documents/notes/x.txt").await);
    assert_eq!(r["path"], "/sdcard/Documents/notes/x.txt");
    for bad in [
        "/storage/self/primary/../../data/local/tmp/x",
        "/mnt/sdcard/Download/../../../system/bin/sh",
        "/storage/emulated/10/Download/x.txt",
        "/storage/emulated/0/Download",
        "/sdcard/download/x.txt",
        "/storage/emulated/0/Pictures/x.png",
        "/data/media/0/Download/x.txt",
    ] {
        for (tool, args) in [
            ("android_file_pull", json!({"path": bad})),
            (
                "android_file_push",
                json!({"file_ref": file_ref, "path": bad}),
            ),
        ] {
            let ack = x.tool(&ch, tool, args).await;
            assert_eq!(code(&ack), "policy_denied", "{tool} {bad}: {ack}");
            assert!(message(&ack).contains("files.roots"), "{ack}");
        }
    }
}

// ---- sync faults as adbd reports them (issue §4) ----------------------------------------------

/// Variants of a refused push or pull: adbd's `fchown failed: Operation not permitted` is
/// `device_permission_denied` naming the fix, a disk that fills mid-write (`write failed: No
/// space left on device`) says the phone's storage is full and that nothing was left behind,
/// a pull whose read fails after some bytes (`read failed: I/O error`) quotes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_variants_sync_refusals_are_typed_by_errno() {
    let mut p = via_adb34("SIMFILESYNC01", &[]).await;
    let file_ref = upload(&p.conn, &p.ch, "big.bin", &vec![7u8; 200_000]);
    let fault = |op: &str, fault: &str| json!({"op": op, "path_regex": "Download/", "fault": fault, "after_bytes": 65536, "times": 1});
    p.sim
        .control_json("/v1/sync/fault", fault("send", "fchown"));
    let ack = push(&mut p.x, &p.ch, &file_ref, "/sdcard/Download/big.bin").await;
    assert_eq!(code(&ack), "device_permission_denied", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("fchown failed: Operation not permitted")
            && m.contains("Download, Pictures or DCIM"),
        "{m}"
    );
    p.sim
        .control_json("/v1/sync/fault", fault("send", "no_space"));
    let ack = push(&mut p.x, &p.ch, &file_ref, "/sdcard/Download/big.bin").await;
    assert_eq!(code(&ack), "device_command_failed", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("storage is full")
            && m.contains("No space left on device")
            && m.contains("removed the partial file"),
        "{m}"
    );
    assert!(
        !p.shell(&["ls", "/sdcard/Download"]).contains("big.bin"),
        "no partial file"
    );
    ok(&push(&mut p.x, &p.ch, &file_ref, "/sdcard/Download/big.bin").await);
    p.sim
        .control_json("/v1/sync/fault", fault("recv", "io_error"));
    let ack = pull(&mut p.x, &p.ch, "/sdcard/Download/big.bin").await;
    assert_eq!(code(&ack), "device_command_failed", "{ack}");
    assert!(message(&ack).contains("read failed: I/O error"), "{ack}");
    p.sim
        .control_json("/v1/sync/fault", fault("recv", "denied"));
    let ack = pull(&mut p.x, &p.ch, "/sdcard/Download/big.bin").await;
    assert_eq!(code(&ack), "device_permission_denied", "{ack}");
    // The faults were used up: the file reads whole again.
    let r = ok(&pull(&mut p.x, &p.ch, "/sdcard/Download/big.bin").await);
    assert_eq!(r["byte_size"], 200_000);
}

// ---- row 46: split apps ------------------------------------------------------------------------

/// Row 46: the base APK of a split app alone answers `split_apks_required` saying what to
/// upload; the temporary APK is removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_46_a_split_base_alone_says_what_to_upload() {
    let mut p = via_adb34("SIMFB46BAS001", &[]).await;
    let base = upload(&p.conn, &p.ch, "base.apk", &split_base(EASYPARK));
    let ack =
        p.x.tool(&p.ch, "android_app_install", json!({"file_ref": base}))
            .await;
    assert_eq!(code(&ack), "split_apks_required", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("INSTALL_FAILED_MISSING_SPLIT: Missing split for net.easypark.android"),
        "{m}"
    );
    assert!(m.contains("file_refs") && m.contains(".apks"), "{m}");
    temp_apks_removed(&p.sim);
    assert!(!p.shell(&["ls", "/data/local/tmp"]).contains("xagent-"));
}

/// Row 46: base + two splits as three file_refs install as one session (create, three
/// writes, commit), the package is named, the phone lists the splits, temp files are gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_46_split_app_installs_from_three_file_refs_in_one_session() {
    let mut p = via_adb34("SIMFB46REF001", &[]).await;
    let r = ok(&install_whole_split_app(&p.conn, &mut p.x, &p.ch, EASYPARK).await);
    assert_eq!(r["package"], EASYPARK, "{r}");
    assert_eq!(r["apk_count"], 3);
    assert_eq!(pm_runs(&p.sim, "install-create").len(), 1);
    assert_eq!(pm_runs(&p.sim, "install-write").len(), 3);
    assert_eq!(pm_runs(&p.sim, "install-commit").len(), 1);
    assert!(pm_runs(&p.sim, "install-abandon").is_empty());
    assert_eq!(
        temp_apks_removed(&p.sim),
        3 * 2,
        "each pushed path is named by its write too"
    );
    let paths = p.shell(&["pm", "path", EASYPARK]);
    assert!(
        paths.contains("base.apk")
            && paths.contains("split_config.arm64_v8a.apk")
            && paths.contains("split_config.xxhdpi.apk"),
        "{paths}"
    );
    assert!(!p.shell(&["ls", "/data/local/tmp"]).contains("xagent-"));
}

/// Variants: one `.apks` bundle (bundletool layout) installs; a bundle missing a required
/// split type, and splits without their base, answer `split_apks_required`; a session whose
/// write fails is abandoned and its temp files removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_46_variants_apks_bundle_missing_types_no_base_failed_write() {
    let (sim, conn, mut x, ch, _dir) = direct("SIMFB46VAR001", &[]).await;
    let pkg = "com.example.splitty";
    let bundle = zip_of(&[
        ("toc.pb", b"toc".to_vec()),
        ("splits/base-master.apk", split_base(pkg)),
        (
            "splits/base-arm64_v8a.apk",
            split(pkg, "config.arm64_v8a", "base__abi"),
        ),
        (
            "splits/base-xxhdpi.apk",
            split(pkg, "config.xxhdpi", "base__density"),
        ),
        ("standalones/standalone-arm64_v8a_xxhdpi.apk", apk(pkg, "")),
    ]);
    let r = ok(&x
        .tool(
            &ch,
            "android_app_install",
            json!({"file_ref": upload(&conn, &ch, "splitty.apks", &bundle)}),
        )
        .await);
    assert_eq!(
        (r["package"].as_str(), r["apk_count"].as_u64()),
        (Some(pkg), Some(3)),
        "{r}"
    );
    let other = "com.example.splitless";
    let no_density = zip_of(&[
        ("base.apk", split_base(other)),
        (
            "split_config.arm64_v8a.apk",
            split(other, "config.arm64_v8a", "base__abi"),
        ),
    ]);
    let ack = x
        .tool(
            &ch,
            "android_app_install",
            json!({"file_ref": upload(&conn, &ch, "s.apks", &no_density)}),
        )
        .await;
    assert_eq!(code(&ack), "split_apks_required", "{ack}");
    assert!(message(&ack).contains("every split"), "{ack}");
    let only_splits: Vec<String> = [
        split(other, "config.arm64_v8a", "base__abi"),
        split(other, "config.xxhdpi", "base__density"),
    ]
    .iter()
    .enumerate()
    .map(|(i, b)| upload(&conn, &ch, &format!("s{i}.apk"), b))
    .collect();
    let ack = x
        .tool(
            &ch,
            "android_app_install",
            json!({"file_refs": only_splits}),
        )
        .await;
    assert_eq!(code(&ack), "split_apks_required", "{ack}");
    assert!(message(&ack).contains("without their base APK"), "{ack}");
    sim.control_json(
        "/v1/script",
        json!({"command_regex": "^pm install-write .*1_", "stderr": "Error: failed to write; No space left on device\n", "exit_code": 1, "times": 1}),
    );
    let ack = install_whole_split_app(&conn, &mut x, &ch, other).await;
    assert_eq!(code(&ack), "device_command_failed", "{ack}");
    assert!(message(&ack).contains("No space left on device"), "{ack}");
    let abandoned = pm_runs(&sim, "install-abandon");
    assert_eq!(abandoned.len(), 1, "the unfinished session is abandoned");
    temp_apks_removed(&sim);
    let list = ok(&x.tool(&ch, "android_app_list", json!({})).await);
    assert!(!list.to_string().contains(other), "nothing half-installed");
    for bad in [
        json!({}),
        json!({"file_ref": "a", "file_refs": ["b"]}),
        json!({"file_refs": []}),
    ] {
        let ack = x.tool(&ch, "android_app_install", bad.clone()).await;
        assert_eq!(code(&ack), "invalid_arguments", "{bad}: {ack}");
    }
}

// ---- row 47: OEM install restrictions ----------------------------------------------------------

/// Row 47: Xiaomi's `INSTALL_FAILED_USER_RESTRICTED: Install canceled by user` names the fix
/// (Developer options → "Install via USB").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_47_xiaomi_user_restricted_names_install_via_usb() {
    let mut p = via_adb34("SIMFB47MIUI01", &[]).await;
    p.sim.control_json(
        "/v1/script",
        json!({"command_regex": "^pm install -r -t ", "stdout": "Failure [INSTALL_FAILED_USER_RESTRICTED: Install canceled by user]\n", "exit_code": 1}),
    );
    let file_ref = upload(&p.conn, &p.ch, "app.apk", &apk("com.example.blocked", ""));
    let ack =
        p.x.tool(&p.ch, "android_app_install", json!({"file_ref": file_ref}))
            .await;
    assert_eq!(code(&ack), "device_permission_denied", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("INSTALL_FAILED_USER_RESTRICTED: Install canceled by user"),
        "{m}"
    );
    assert!(
        m.contains("Developer options → \"Install via USB\"") && m.contains("Xiaomi"),
        "{m}"
    );
    temp_apks_removed(&p.sim);
}

/// Variants of the kind: vivo's `INSTALL_FAILED_ABORTED: User rejected permissions` and older
/// MIUI's `INSTALL_CANCELED_BY_USER` (on a session commit) name the on-phone prompts; a
/// verifier's `INSTALL_FAILED_VERIFICATION_FAILURE` names "Verify apps over USB" and Samsung's
/// Auto Blocker; Samsung's numbered `Failure [-3006: INSTALL_FAILED_BLOCKED_CROSS_DOWN]` is
/// quoted as a maker's code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_47_variants_other_oem_wordings() {
    let (sim, conn, mut x, ch, _dir) = direct("SIMFB47VAR001", &[]).await;
    let single = upload(&conn, &ch, "app.apk", &apk("com.example.oem", ""));
    let cases = [
        ("^pm install -r -t ", "Failure [INSTALL_FAILED_ABORTED: User rejected permissions]", "device_permission_denied", "vivo"),
        ("^pm install -r -t ", "Failure [INSTALL_FAILED_VERIFICATION_FAILURE]", "device_permission_denied", "Verify apps over USB"),
        ("^pm install -r -t ", "Failure [INSTALL_FAILED_VERIFICATION_FAILURE]", "device_permission_denied", "Auto Blocker"),
        ("^pm install -r -t ", "Failure [-3006: INSTALL_FAILED_BLOCKED_CROSS_DOWN]", "device_command_failed", "phone's maker"),
        ("^pm install -r -t ", "Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Package com.example.oem signatures do not match previously installed version; ignoring!]", "device_command_failed", "signed with another key"),
    ];
    for (re, line, want, fix) in cases {
        sim.control_json(
            "/v1/script",
            json!({"command_regex": re, "stdout": format!("{line}\n"), "exit_code": 1, "times": 1}),
        );
        let ack = x
            .tool(&ch, "android_app_install", json!({"file_ref": single}))
            .await;
        assert_eq!(code(&ack), want, "{line}: {ack}");
        let m = message(&ack);
        assert!(m.contains(line) && m.contains(fix), "{line}: {m}");
    }
    sim.control_json("/v1/script", json!({"command_regex": "^pm install-commit ", "stdout": "Failure [INSTALL_CANCELED_BY_USER]\n", "exit_code": 1, "times": 1}));
    let pkg = "com.example.miui";
    let ack = install_whole_split_app(&conn, &mut x, &ch, pkg).await;
    assert_eq!(code(&ack), "device_permission_denied", "{ack}");
    assert!(message(&ack).contains("Install via USB"), "{ack}");
    // The commit answered: the session is finished, not abandoned; temp files are gone.
    assert!(pm_runs(&sim, "install-abandon").is_empty());
    temp_apks_removed(&sim);
}

// ---- L2: the transfer plane serves foreign files as attachments --------------------------------

/// L2: an SVG an app left in Download, pulled, is served as an attachment
/// (`application/octet-stream`), never as `image/svg+xml`; so is an uploaded HTML page; every
/// file answer has `nosniff` and `sandbox`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l2_files_from_the_phone_and_uploads_are_attachments() {
    let (_sim, conn, mut x, ch, _dir) = direct("SIMLTWO000001", &[]).await;
    let svg =
        b"<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(document.domain)</script></svg>";
    let up = upload(&conn, &ch, "evil.svg", svg);
    ok(&push(&mut x, &ch, &up, "/sdcard/Download/evil.svg").await);
    let r = ok(&pull(&mut x, &ch, "/sdcard/Download/evil.svg").await);
    let (st, h, body) = download(&conn, r["download_url"].as_str().unwrap(), FILE_HEADERS);
    assert_eq!(st, 200);
    assert_eq!(body, svg);
    assert_eq!(h[0], "application/octet-stream");
    assert!(h[1].starts_with("attachment;"), "{h:?}");
    assert_eq!((h[2].as_str(), h[3].as_str()), ("nosniff", "sandbox"));
    let page = upload(
        &conn,
        &ch,
        "page.html",
        b"<html><script>alert(1)</script></html>",
    );
    let (st, h, _) = download(&conn, &format!("/files/refs/{page}"), FILE_HEADERS);
    assert_eq!(st, 200);
    assert_eq!(h[0], "application/octet-stream");
    assert!(
        h[1].starts_with("attachment; filename=\"page.html\""),
        "{h:?}"
    );
    assert_eq!((h[2].as_str(), h[3].as_str()), ("nosniff", "sandbox"));
}

/// L2: the connector's own screenshots stay inline images, with `nosniff` and `sandbox`
/// too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l2_own_screenshots_stay_inline_and_sandboxed() {
    let (_sim, conn, mut x, ch, _dir) = direct("SIMLTWO000002", &[]).await;
    let r = ok(&x.tool(&ch, "android_screenshot", json!({})).await);
    let url = r["download_url"]
        .as_str()
        .expect("screenshot url")
        .to_string();
    let (st, h, body) = download(&conn, &url, FILE_HEADERS);
    assert_eq!(st, 200);
    assert_eq!(h[0], "image/png");
    assert!(body.starts_with(b"\x89PNG"));
    assert!(h[1].starts_with("inline;"), "{h:?}");
    assert_eq!((h[2].as_str(), h[3].as_str()), ("nosniff", "sandbox"));
}
