//! The control API and personas, through a real adb 34 server: scripted answers (field bugs
//! 9/10/20), state changes (foreground, FLAG_SECURE), transport faults (field bug 12),
//! the legacy persona without shell_v2 (field bug 19) and the foldable's display warning
//! (field bug 7).

#[path = "common/adb_server.rs"]
mod adb_server;

use std::time::{Duration, Instant};

use adb_server::{AdbFlavor, AdbServer};
use tokio_util::sync::CancellationToken;
use xagent_adb_sim::{self as sim, SimOptions};

struct Rig {
    _rt: tokio::runtime::Runtime,
    shutdown: CancellationToken,
    adb: AdbServer,
    target: String,
    control: String,
}

impl Drop for Rig {
    fn drop(&mut self) {
        let _ = self.adb.run(&["disconnect", &self.target]);
        self.shutdown.cancel();
    }
}

fn rig(persona: &str) -> Rig {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let shutdown = CancellationToken::new();
    let opts = SimOptions {
        serial: "SIMCTL".into(),
        persona: persona.into(),
        control: Some("127.0.0.1:0".parse().unwrap()),
        ..SimOptions::default()
    };
    let handle = rt.block_on(sim::start(opts, shutdown.clone())).unwrap();
    let adb = AdbServer::start(AdbFlavor::Google34);
    let target = handle.adb_addr.to_string();
    adb.connect(&target);
    let control = format!("http://{}", handle.control_addr.unwrap());
    Rig {
        _rt: rt,
        shutdown,
        adb,
        target,
        control,
    }
}

impl Rig {
    fn adb(&self, args: &[&str]) -> std::process::Output {
        let mut full = vec!["-s", self.target.as_str()];
        full.extend_from_slice(args);
        self.adb.run(&full)
    }

    fn stdout(&self, args: &[&str]) -> String {
        String::from_utf8_lossy(&self.adb(args).stdout).to_string()
    }

    fn post(&self, path: &str, body: serde_json::Value) -> serde_json::Value {
        let mut resp = ureq::post(format!("{}{path}", self.control))
            .content_type("application/json")
            .send(body.to_string())
            .unwrap();
        serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap()
    }

    fn state(&self) -> serde_json::Value {
        let mut resp = ureq::get(format!("{}/v1/state", self.control))
            .call()
            .unwrap();
        serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap()
    }

    /// Polls `adb devices` until this target's state is `want` (bounded).
    fn wait_state(&self, want: &str) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let list = String::from_utf8_lossy(&self.adb.run(&["devices"]).stdout).to_string();
            let state = list
                .lines()
                .find(|l| l.starts_with(&self.target))
                .and_then(|l| l.split('\t').nth(1));
            if state == Some(want) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    }
}

#[test]
fn scripted_ui_dump_fails_then_recovers() {
    let r = rig("pixel-android14");
    let n = r.post(
        "/v1/script",
        serde_json::json!({"command_regex": "^uiautomator dump", "stdout": "ERROR: could not get idle state.\n", "times": 2}),
    );
    assert_eq!(n["scripts"], 1);
    for _ in 0..2 {
        assert_eq!(
            r.stdout(&["shell", "uiautomator", "dump", "/dev/tty"]),
            "ERROR: could not get idle state.\n"
        );
    }
    assert!(r
        .stdout(&["shell", "uiautomator", "dump", "/dev/tty"])
        .contains("<hierarchy"));
    let state = r.state();
    assert_eq!(state["scripts"], 0);
    let log = state["command_log"].as_array().unwrap();
    assert_eq!(log[0]["argv"][0], "uiautomator dump /dev/tty");
    assert_eq!(
        log.last().unwrap()["argv"],
        serde_json::json!(["uiautomator", "dump", "/dev/tty"])
    );
}

#[test]
fn hanging_command_does_not_block_the_phone() {
    let r = rig("pixel-android14");
    r.post(
        "/v1/script",
        serde_json::json!({"command_regex": "^su$", "hang": true}),
    );
    let mut child = std::process::Command::new(AdbFlavor::Google34.binary())
        .args([
            "-P",
            &r.adb.port.to_string(),
            "-s",
            &r.target,
            "shell",
            "su",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        child.try_wait().unwrap().is_none(),
        "su returned although scripted to hang"
    );
    assert_eq!(
        r.stdout(&["shell", "echo", "still-usable"]),
        "still-usable\n"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(r.stdout(&["shell", "echo", "after-kill"]), "after-kill\n");
}

#[test]
fn state_patch_changes_what_the_phone_reports() {
    let r = rig("pixel-android14");
    let v = r.post("/v1/state", serde_json::json!({"foreground": "com.android.settings", "secure_window": true, "battery_level": 42}));
    assert_eq!(v["foreground"], "com.android.settings");
    let win = r.stdout(&["shell", "dumpsys", "window", "windows"]);
    assert!(
        win.contains("com.android.settings/com.android.settings.Settings}")
            && win.contains("SECURE"),
        "{win}"
    );
    assert!(r
        .stdout(&["shell", "dumpsys battery"])
        .contains("  level: 42\n"));
    let png = r.adb(&["exec-out", "screencap", "-p"]).stdout;
    let mut reader = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    assert!(
        buf.chunks(4).all(|px| px[..3] == [0, 0, 0]),
        "secure window must capture black"
    );
}

#[test]
fn transport_offline_then_online() {
    let r = rig("pixel-android14");
    r.post("/v1/transport", serde_json::json!({"state": "offline"}));
    assert!(r.wait_state("offline"), "adb never saw the device offline");
    r.post("/v1/transport", serde_json::json!({"state": "online"}));
    r.adb.connect(&r.target);
    assert_eq!(r.stdout(&["shell", "echo", "back"]), "back\n");
}

#[test]
fn transport_unplugged_then_replugged() {
    let r = rig("pixel-android14");
    r.post("/v1/transport", serde_json::json!({"state": "unplugged"}));
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = r.adb(&["shell", "echo", "x"]);
        if !out.status.success() || out.stdout != b"x\n" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "shell kept working while unplugged"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    r.post("/v1/transport", serde_json::json!({"state": "online"}));
    r.adb.connect(&r.target);
    assert_eq!(r.stdout(&["shell", "echo", "replugged"]), "replugged\n");
}

#[test]
fn transport_unauthorized_then_accepted() {
    let r = rig("pixel-android14");
    r.post(
        "/v1/transport",
        serde_json::json!({"state": "unauthorized"}),
    );
    let _ = r.adb.run(&["connect", &r.target]);
    assert!(
        r.wait_state("unauthorized"),
        "adb never saw the device unauthorized"
    );
    r.post("/v1/transport", serde_json::json!({"state": "online"}));
    assert!(r.wait_state("device"));
    assert_eq!(r.stdout(&["shell", "echo", "accepted"]), "accepted\n");
}

#[test]
fn legacy_persona_has_no_exit_status() {
    let r = rig("legacy-android6");
    assert_eq!(r.stdout(&["features"]).trim(), "");
    let out = r.adb(&["shell", "nosuchcmd; exit 3"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "/system/bin/sh: nosuchcmd: inaccessible or not found\n"
    );
    let raw = r.adb(&["exec-out", "screencap"]).stdout;
    assert_eq!(
        raw.len(),
        12 + 1080 * 1920 * 4,
        "Android 6 raw header is 12 bytes"
    );
}

#[test]
fn foldable_warns_before_png_without_display_id() {
    let r = rig("foldable-android14");
    let out = r.adb(&["exec-out", "screencap", "-p"]).stdout;
    assert!(out.starts_with(b"[Warning] Multiple displays were found"));
    let png = r.adb(&["exec-out", "screencap", "-p", "-d", "0"]).stdout;
    let reader = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    assert_eq!((reader.info().width, reader.info().height), (1840, 2208));
}

/// field-bugs-2.md, last section: a script reaches one simple command (argv joined by spaces,
/// unquoted) inside a compound, quoted line and a pipeline; the other commands run as usual.
#[test]
fn script_answers_for_one_command_inside_a_compound_line() {
    let r = rig("pixel-android14");
    r.post(
        "/v1/script",
        serde_json::json!({"command_regex": "^logcat -d$", "stdout": "scripted log\n", "stderr": "warn\n", "exit_code": 3}),
    );
    let out = r.adb(&[
        "shell",
        "'echo' 'before'; 'logcat' '-d'; echo \"status $?\"; logcat -d | 'wc' '-l'",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "before\nscripted log\nstatus 3\n1\n"
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "warn\nwarn\n");
    // The whole-line form still answers for the whole line.
    r.post(
        "/v1/script",
        serde_json::json!({"command_regex": "^getprop ro.build.version.sdk$", "stdout": "23\n", "times": 1}),
    );
    assert_eq!(
        r.stdout(&["shell", "getprop", "ro.build.version.sdk"]),
        "23\n"
    );
    assert_eq!(
        r.stdout(&["shell", "getprop", "ro.build.version.sdk"]),
        "34\n"
    );
    let state = r.state();
    let log = state["command_log"].as_array().unwrap();
    assert!(log
        .iter()
        .any(|e| e["argv"] == serde_json::json!(["logcat", "-d"]) && e["exit_code"] == 3));
}

/// POSTs a raw body and returns (status, parsed JSON body); the body must be JSON.
fn post_raw(
    control: &str,
    path: &str,
    content_type: Option<&str>,
    body: &str,
) -> (u16, serde_json::Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut req = agent.post(format!("{control}{path}"));
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    let mut resp = req.send(body.to_string()).unwrap();
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    let json = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{path}: body {text:?} is not JSON: {e}"));
    (status, json)
}

#[test]
fn bodies_that_do_not_fit_answer_400_json() {
    // README: "Errors answer 400 {"error": "…"}" — axum's own rejections were 415/422 text.
    let rig = rig("pixel-android14");
    let json = Some("application/json");
    let cases = [
        ("/v1/transport", json, r#"{"state":"sideways"}"#, "state"),
        ("/v1/state", json, "not json", "JSON"),
        (
            "/v1/script",
            None,
            r#"{"command_regex":"x"}"#,
            "Content-Type",
        ),
        ("/v1/auth", json, r#"{"action":7}"#, "action"),
        (
            "/v1/script",
            json,
            r#"{"command_regex":["x"]}"#,
            "command_regex",
        ),
    ];
    for (path, ct, body, says) in cases {
        let (status, answer) = post_raw(&rig.control, path, ct, body);
        assert_eq!(status, 400, "{path} {body}: {answer}");
        let error = answer["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"));
        assert!(error.contains(says), "{path} {body}: {error}");
        assert_eq!(answer.as_object().unwrap().len(), 1, "{answer}");
    }
    // A pairing code of the wrong type is not echoed back (passwords and codes never are).
    let (status, answer) = post_raw(&rig.control, "/v1/pair", json, r#"{"code":739251}"#);
    assert_eq!(status, 400);
    assert!(!answer.to_string().contains("739251"), "{answer}");
    // The phone still works after the refusals.
    assert_eq!(
        rig.post("/v1/transport", serde_json::json!({"state": "online"}))["state"],
        "online"
    );
}

/// An `override_size` outside what WindowManagerService allows (200 px to 3x the physical size
/// per side) answers 400 naming the range, and the size stays as it was (fresh-user finding 20:
/// it answered 200 and silently clamped to 3240x7200). `wm size` on the phone still clamps, as a
/// phone does. In range applies, as `wm size` shows.
#[test]
fn out_of_range_override_sizes_answer_400_naming_the_range() {
    let rig = rig("pixel-android14");
    let json = Some("application/json");
    for size in [
        "99999999x99999999",
        "199x2400",
        "1080x7201",
        "3241x2400",
        "0x0",
    ] {
        let body = serde_json::json!({ "override_size": size }).to_string();
        let (status, answer) = post_raw(&rig.control, "/v1/state", json, &body);
        assert_eq!(status, 400, "{size}: {answer}");
        let error = answer["error"].as_str().unwrap();
        assert!(
            error.contains("width 200..=3240, height 200..=7200")
                && error.contains("physical 1080x2400"),
            "{size}: {error}"
        );
        assert!(rig.state()["override_size"].is_null(), "{size} applied");
    }
    for (size, bad) in [("12x", "WxH"), ("x", "WxH"), ("-5x10", "WxH")] {
        let body = serde_json::json!({ "override_size": size }).to_string();
        let (status, answer) = post_raw(&rig.control, "/v1/state", json, &body);
        assert_eq!(status, 400, "{size}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains(bad), "{answer}");
    }
    for edge in ["200x200", "3240x7200", "720x1600"] {
        let v = rig.post("/v1/state", serde_json::json!({ "override_size": edge }));
        assert!(v["override_size"].is_array(), "{edge}: {v}");
        let wm = rig.stdout(&["shell", "wm", "size"]);
        assert!(
            wm.contains(&format!("Override size: {edge}")),
            "{edge}: {wm}"
        );
    }
}

/// A `POST /v1/state` refused for one field changes no other field of the patch: all or
/// nothing (fresh-user finding: `{"rotation":1,"battery_level":500}` answered 400 and the
/// phone was rotated anyway).
#[test]
fn a_refused_state_patch_changes_nothing() {
    let rig = rig("pixel-android14");
    let json = Some("application/json");
    let before = rig.state();
    for body in [
        serde_json::json!({"rotation": 1, "battery_level": 500}),
        serde_json::json!({"rotation": 2, "override_size": "100x100"}),
        serde_json::json!({"battery_level": 5, "screen_on": false, "foreground": "com.example.none"}),
        serde_json::json!({"note_text": "half", "locked": true, "rotation": 9}),
    ] {
        let (status, answer) = post_raw(&rig.control, "/v1/state", json, &body.to_string());
        assert_eq!(status, 400, "{body}: {answer}");
        let after = rig.state();
        for field in [
            "rotation",
            "battery_level",
            "override_size",
            "screen_on",
            "locked",
            "foreground",
        ] {
            assert_eq!(after[field], before[field], "{field} changed by {body}");
        }
    }
    // A valid patch still applies every field.
    let v = rig.post(
        "/v1/state",
        serde_json::json!({"rotation": 1, "battery_level": 50}),
    );
    assert_eq!(
        (v["rotation"].as_u64(), v["battery_level"].as_u64()),
        (Some(1), Some(50)),
        "{v}"
    );
}

/// Sends `method` to `path` of the control API; returns (status, `Allow` header, body text).
fn call_raw(control: &str, method: &str, path: &str) -> (u16, Option<String>, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .allow_non_standard_methods(true)
        .build()
        .into();
    let request = ureq::http::Request::builder()
        .method(method)
        .uri(format!("{control}{path}"))
        .body(())
        .unwrap();
    let mut resp = agent.run(request).unwrap();
    let allow = resp
        .headers()
        .get("allow")
        .map(|v| v.to_str().unwrap().to_string());
    let text = resp.body_mut().read_to_string().unwrap();
    (resp.status().as_u16(), allow, text)
}

/// An unknown path answers 404 and a method the path does not take 405, each with the JSON
/// body `{"error": "…"}` every other error of the control API has, naming the path (and, for
/// 405, the methods it takes, as the `Allow` header does) — not an empty body (fresh-user
/// finding, session 9: `curl` printed nothing).
#[test]
fn unknown_paths_and_wrong_methods_answer_json_errors() {
    let rig = rig("pixel-android14");
    for (method, path) in [
        ("GET", "/v1/nosuch"),
        ("POST", "/v1/wireless"),
        ("GET", "/"),
    ] {
        let (status, _, text) = call_raw(&rig.control, method, path);
        assert_eq!(status, 404, "{method} {path}: {text:?}");
        let answer: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{method} {path}: body {text:?} is not JSON: {e}"));
        let error = answer["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"));
        assert!(error.contains(path), "{method} {path}: {error}");
        assert_eq!(answer.as_object().unwrap().len(), 1, "{answer}");
    }
    for (method, path, allowed) in [
        ("GET", "/v1/transport", &["POST"][..]),
        ("DELETE", "/v1/state", &["GET", "POST"]),
        ("GET", "/v1/log", &["DELETE"]),
        ("PUT", "/v1/pair", &["POST"]),
        ("GET", "/v1/script", &["POST", "DELETE"]),
    ] {
        let (status, allow, text) = call_raw(&rig.control, method, path);
        assert_eq!(status, 405, "{method} {path}: {text:?}");
        let answer: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{method} {path}: body {text:?} is not JSON: {e}"));
        let error = answer["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"));
        assert!(
            error.starts_with(&format!("{method} is not allowed on {path}")),
            "{error}"
        );
        // The methods the body names are the ones the `Allow` header lists (HEAD aside).
        let allow = allow.unwrap_or_else(|| panic!("{method} {path}: no Allow header"));
        let mut listed: Vec<&str> = allow.split(',').filter(|m| *m != "HEAD").collect();
        listed.sort_unstable();
        let mut want = allowed.to_vec();
        want.sort_unstable();
        assert_eq!(listed, want, "{method} {path}: Allow {allow}");
        for m in allowed {
            assert!(error.contains(m), "{method} {path}: {error}");
        }
        assert_eq!(answer.as_object().unwrap().len(), 1, "{answer}");
    }
    // The phone still answers after the refusals.
    assert_eq!(rig.state()["serial"], "SIMCTL");
}
