//! Rows 1–20 of `/work/shared/cases/field-bugs.md` (and rows 39, 40, 44 of `field-bugs-3.md`),
//! replayed on the sim: each test shows the sim
//! producing the *faulty* behaviour a real phone showed (through its faithful programs or the
//! control API), driven by a private Google adb 34 server, so the connector's fixes can be
//! tested against it. Named `field_bug_NN_<kind>`.

#[path = "sim_rig.rs"]
mod sim_rig;

use std::time::{Duration, Instant};

use serde_json::json;
use sim_rig::adb_server::{AdbFlavor, AdbServer};
use sim_rig::Attached;

fn rig(persona: &str) -> Attached {
    sim_rig::attach(sim_rig::persona(persona, "SIMBUG"), AdbFlavor::Google34)
}

fn pixel() -> Attached {
    rig("pixel-android14")
}

/// `adb shell LINE` → (stdout, stderr, status).
fn sh(a: &Attached, line: &str) -> (String, String, Option<i32>) {
    let out = a.adb(&["shell", line]);
    let s = |b: &[u8]| String::from_utf8_lossy(b).to_string();
    (s(&out.stdout), s(&out.stderr), out.status.code())
}

fn ran(a: &Attached, program: &str) -> bool {
    a.sim
        .phone
        .command_log()
        .iter()
        .any(|e| e.argv[0] == program)
}

fn note(a: &Attached) -> String {
    a.sim.get("/v1/state")["note_text"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Center of the first node whose attributes contain `needle` in a fresh UI dump.
fn center(a: &Attached, needle: &str) -> (i32, i32) {
    let xml = a.stdout(&["exec-out", "uiautomator", "dump", "/dev/tty"]);
    let node = xml.split("<node ").find(|n| n.contains(needle)).unwrap();
    let b = node.split("bounds=\"").nth(1).unwrap();
    let v: Vec<i32> = b
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .take(4)
        .map(|s| s.parse().unwrap())
        .collect();
    ((v[0] + v[2]) / 2, (v[1] + v[3]) / 2)
}

/// Notes app in front with its text field focused and empty.
fn focus_notes(a: &Attached) {
    a.sim.post(
        "/v1/state",
        json!({"foreground": "com.example.notes", "note_text": ""}),
    );
    let (x, y) = center(a, "com.example.notes:id/note_text");
    sh(a, &format!("input tap {x} {y}"));
    assert_eq!(
        a.sim.get("/v1/state")["focused"],
        "com.example.notes:id/note_text"
    );
}

#[test]
fn field_bug_01_text_shell_metacharacters() {
    let a = pixel();
    focus_notes(&a);
    sh(&a, "input text a$a");
    assert_eq!(note(&a), "a", "$a expanded by the phone's shell");
    sh(&a, "input text #");
    let log = a.sim.phone.command_log();
    assert_eq!(
        log.last().unwrap().argv,
        ["input", "text"],
        "`#` began a comment"
    );
    assert_eq!(note(&a), "a");
    sh(&a, "input text x`id`y");
    assert!(ran(&a, "id"), "command substitution ran `id`");
    sh(&a, "input text a;reboot");
    assert!(ran(&a, "reboot"), "`;` ran a second command");
}

#[test]
fn field_bug_02_text_percent_s() {
    let a = pixel();
    focus_notes(&a);
    sh(&a, "input text Some%sText%s!");
    sh(&a, "input text 100%sure");
    assert_eq!(note(&a), "Some Text !100 ure", "`%s` became a space");
}

#[test]
fn field_bug_03_text_newline() {
    let a = pixel();
    focus_notes(&a);
    let (_, err, code) = sh(&a, "input text line1\nline2");
    assert_eq!(note(&a), "line1");
    assert!(err.contains("line2: inaccessible or not found"), "{err}");
    assert_eq!(code, Some(127), "the second line ran as a command");
}

#[test]
fn field_bug_04_text_non_ascii() {
    let a = pixel();
    focus_notes(&a);
    for text in ["שלום!", "Тест", "😸 Cat"] {
        let (out, err, code) = sh(&a, &format!("input text '{text}'"));
        assert!(
            (out + &err).contains("java.lang.NullPointerException"),
            "{text}"
        );
        assert_eq!(code, Some(255));
    }
    assert_eq!(note(&a), "");
}

#[test]
fn field_bug_05_text_quote_in_ime_broadcast() {
    let a = pixel();
    a.sim.post("/v1/state", json!({"adb_keyboard": true}));
    sh(&a, "ime set com.android.adbkeyboard/.AdbIME");
    focus_notes(&a);
    let (_, err, code) = sh(
        &a,
        "am broadcast -a ADB_INPUT_TEXT --es msg '中文'输入\"test'",
    );
    assert!(err.contains("no closing quote"), "{err}");
    assert_ne!(code, Some(0));
    assert_eq!(note(&a), "");
    // The fix the row names: base64 payload.
    sh(
        &a,
        "am broadcast -a ADB_INPUT_B64 --es msg 5Lit5paHJ+i+k+WFpSJ0ZXN0",
    );
    assert_eq!(note(&a), "中文'输入\"test");
}

#[test]
fn field_bug_06_screenshot_crlf_mangled_png() {
    let a = pixel();
    let png = a.adb(&["exec-out", "screencap", "-p"]).stdout;
    let mut mangled = Vec::new();
    for b in png {
        if b == b'\n' {
            mangled.push(b'\r');
        }
        mangled.push(b);
    }
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(&mangled);
    a.sim
        .script(json!({"command_regex": "^screencap -p$", "stdout_base64": b64}));
    let got = a.adb(&["exec-out", "screencap -p"]).stdout;
    assert_eq!(got[..8], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0D, 0x0A, 0x1A]);
    assert!(png::Decoder::new(std::io::Cursor::new(got))
        .read_info()
        .is_err());
}

#[test]
fn field_bug_07_screenshot_multi_display_warning() {
    let a = rig("foldable-android14");
    let out = a.adb(&["exec-out", "screencap", "-p"]).stdout;
    let png_at = out.windows(4).position(|w| w == b"\x89PNG").unwrap();
    let warning = String::from_utf8_lossy(&out[..png_at]);
    assert!(
        warning.starts_with("[Warning] Multiple displays were found"),
        "{warning}"
    );
    let ids = a.stdout(&["shell", "dumpsys", "SurfaceFlinger", "--display-id"]);
    let first = ids.split_whitespace().nth(1).unwrap();
    assert_eq!(ids.lines().count(), 2, "{ids}");
    let png = a.adb(&["exec-out", "screencap", "-p", "-d", first]).stdout;
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "with -d: no warning");
}

#[test]
fn field_bug_08_screenshot_flag_secure() {
    let a = pixel();
    a.sim.post(
        "/v1/state",
        json!({"foreground": "com.android.settings", "secure_window": true}),
    );
    let png = a.adb(&["exec-out", "screencap", "-p"]).stdout;
    let mut reader = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    reader.next_frame(&mut buf).unwrap();
    assert!(
        buf.chunks(4).all(|px| px[..3] == [0, 0, 0]),
        "a valid all-black PNG"
    );
    assert!(a
        .stdout(&["shell", "dumpsys window windows"])
        .contains("SECURE"));
}

#[test]
fn field_bug_09_ui_dump_not_idle() {
    let a = pixel();
    a.sim.script(json!({"command_regex": "^uiautomator dump", "stdout": "ERROR: could not get idle state.\n"}));
    let (out, _, code) = sh(&a, "uiautomator dump /dev/tty");
    assert_eq!(
        (out.as_str(), code),
        ("ERROR: could not get idle state.\n", Some(0))
    );
}

#[test]
fn field_bug_10_ui_dump_null_root() {
    let a = pixel();
    let msg = "ERROR: null root node returned by UiTestAutomationBridge.\n";
    a.sim
        .script(json!({"command_regex": "^uiautomator dump", "stdout": msg, "times": 3}));
    for _ in 0..3 {
        assert_eq!(sh(&a, "uiautomator dump /dev/tty").0, msg);
    }
    assert!(sh(&a, "uiautomator dump /dev/tty")
        .0
        .contains("<hierarchy rotation=\"0\">"));
}

#[test]
fn field_bug_11_several_devices() {
    let a = pixel();
    let b = sim_rig::persona("pixel-android14", "SIMBUGB");
    a.adb.connect(&b.target);
    let out = a.adb.run(&["shell", "getprop", "ro.serialno"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("more than one device/emulator"));
    let via_b = sim_rig::adb_s(&a.adb, &b.target, &["shell", "getprop", "ro.serialno"]);
    assert_eq!(String::from_utf8_lossy(&via_b.stdout).trim(), "SIMBUGB");
    assert!(!ran(&a, "getprop"), "nothing reached A");
    let _ = a.adb.run(&["disconnect", &b.target]);
}

#[test]
fn field_bug_12_device_offline() {
    let a = pixel();
    a.sim.post("/v1/transport", json!({"state": "offline"}));
    assert!(sim_rig::wait_state(&a.adb, &a.sim.target, "offline"));
    a.sim.post("/v1/transport", json!({"state": "online"}));
    a.adb.connect(&a.sim.target);
    assert_eq!(sh(&a, "echo back").0, "back\n");
}

#[test]
fn field_bug_13_unauthorized() {
    // `no permissions (…udev…)` is a USB-only host state (the server cannot open the usb node);
    // a TCP transport cannot produce it, so only the `unauthorized` half is replayed here.
    let sim = sim_rig::start(xagent_adb_sim::SimOptions {
        require_auth: true,
        ..Default::default()
    });
    let adb = AdbServer::start(AdbFlavor::Google34);
    let _ = adb.run(&["connect", &sim.target]);
    assert!(sim_rig::wait_state(&adb, &sim.target, "unauthorized"));
    let list = String::from_utf8_lossy(&adb.run(&["devices", "-l"]).stdout).to_string();
    let line = list.lines().find(|l| l.starts_with(&sim.target)).unwrap();
    assert!(line.contains("unauthorized"), "{list}");
    assert!(!sim_rig::adb_s(&adb, &sim.target, &["shell", "true"])
        .status
        .success());
    let _ = adb.run(&["disconnect", &sim.target]);
}

#[test]
fn field_bug_14_scaled_screenshot_coordinates() {
    let a = pixel();
    let (x, y) = center(&a, "text=\"Notes\"");
    sh(&a, &format!("input tap {} {}", x / 2, y / 2));
    assert_ne!(
        a.sim.get("/v1/state")["foreground"],
        "com.example.notes",
        "half-scale tap lands short"
    );
    sh(&a, &format!("input tap {x} {y}"));
    assert_eq!(a.sim.get("/v1/state")["foreground"], "com.example.notes");
}

#[test]
fn field_bug_15_override_size() {
    let a = pixel();
    sh(&a, "wm size 540x1200");
    assert_eq!(
        sh(&a, "wm size").0,
        "Physical size: 1080x2400\nOverride size: 540x1200\n"
    );
    let png = a.adb(&["exec-out", "screencap", "-p"]).stdout;
    let reader = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    assert_eq!(
        (reader.info().width, reader.info().height),
        (540, 1200),
        "input space is the override"
    );
}

#[test]
fn field_bug_16_monkey_sys_keys() {
    let launch = "monkey -p com.android.settings -c android.intent.category.LAUNCHER 1";
    let emu = rig("emulator-android15");
    let (_, err, code) = sh(&emu, launch);
    assert_eq!(code, Some(251));
    assert!(
        err.contains("** SYS_KEYS has no physical keys but with factor 2.0%."),
        "{err}"
    );
    assert_ne!(
        emu.sim.get("/v1/state")["foreground"],
        "com.android.settings"
    );
    // The fix: resolve the launcher activity, then `am start -n`.
    let (comp, _, _) = sh(&emu, "cmd package resolve-activity --brief -c android.intent.category.LAUNCHER com.android.settings");
    sh(
        &emu,
        &format!("am start -n {}", comp.lines().last().unwrap()),
    );
    assert_eq!(
        emu.sim.get("/v1/state")["foreground"],
        "com.android.settings"
    );
    // A phone with volume keys (AOSP validateKeyCategory passes) launches fine.
    assert_eq!(sh(&pixel(), launch).2, Some(0));
}

#[test]
fn field_bug_17_leanback_only_app() {
    let a = pixel();
    let tv = sh(
        &a,
        "monkey -p com.example.tv -c android.intent.category.LAUNCHER 1",
    );
    let none = sh(
        &a,
        "monkey -p com.nope -c android.intent.category.LAUNCHER 1",
    );
    for (_, err, code) in [&tv, &none] {
        assert!(err.contains("No activities found to run, monkey aborted."));
        assert_eq!(*code, Some(252));
    }
    assert!(sh(&a, "pm list packages")
        .0
        .contains("package:com.example.tv\n"));
    let lb = sh(&a, "cmd package resolve-activity --brief -c android.intent.category.LEANBACK_LAUNCHER com.example.tv").0;
    assert!(lb.contains("com.example.tv/"), "{lb}");
}

#[test]
fn field_bug_18_dumpsys_battery_capacity_level() {
    let a = pixel();
    let capture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/battery/redmi-note14-hyperos3-miuibatteryservice.txt"
    ))
    .unwrap();
    a.sim
        .script(json!({"command_regex": "^dumpsys battery$", "stdout": capture, "times": 1}));
    assert_eq!(sh(&a, "dumpsys battery").0, capture);
    a.sim.post("/v1/state", json!({"battery_level": 80}));
    let native = sh(&a, "dumpsys battery").0;
    let greedy = regex::Regex::new(r"(?s).*level: (\d+)").unwrap();
    let got = &greedy.captures(&native).unwrap()[1];
    assert!(
        native.contains("  level: 80\n") && native.contains("Capacity level: "),
        "{native}"
    );
    assert_ne!(got, "80", "a greedy regex reads the Capacity level");
}

#[test]
fn field_bug_19_legacy_exit_status_lost() {
    let a = rig("legacy-android6");
    let (out, err, code) = sh(&a, "ls /nope");
    assert_eq!(code, Some(0), "no shell_v2: exit status lost");
    assert!(
        err.is_empty() && out.contains("No such file or directory"),
        "stderr merged: {out}"
    );
}

#[test]
fn field_bug_20_hang() {
    let a = pixel();
    a.sim.script(json!({"command_regex": "^su$", "hang": true}));
    let mut child = std::process::Command::new(AdbFlavor::Google34.binary())
        .args([
            "-P",
            &a.adb.port.to_string(),
            "-s",
            &a.sim.target,
            "shell",
            "su",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_millis(500);
    while Instant::now() < until {
        assert!(child.try_wait().unwrap().is_none(), "su returned");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(sh(&a, "echo usable").0, "usable\n");
    child.kill().unwrap();
    child.wait().unwrap();
}

// ---- round 3 (`field-bugs-3.md`): the sim's own behaviours, through Google adb 34 ----

#[test]
fn field_bug_39_ui_dump_to_tty_prints_only_the_status_line() {
    let a = pixel();
    a.sim
        .post("/v1/state", json!({"ui_dump_tty": "status_only"}));
    let (out, err, code) = sh(&a, "uiautomator dump /dev/tty");
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("UI hierchary dumped to: /dev/tty\n", "", Some(0))
    );
    // A dump into a file still writes the tree.
    let (out, _, _) = sh(
        &a,
        "uiautomator dump /data/local/tmp/t.xml; cat /data/local/tmp/t.xml",
    );
    assert!(out.contains("<hierarchy rotation=\"0\">"), "{out}");
}

#[test]
fn field_bug_40_keyboard_that_does_not_receive_completes_and_types_nothing() {
    let a = pixel();
    focus_notes(&a);
    a.sim.post(
        "/v1/state",
        json!({"adb_keyboard": true, "adb_keyboard_receives": false}),
    );
    sh(&a, "ime enable com.android.adbkeyboard/.AdbIME");
    sh(&a, "ime set com.android.adbkeyboard/.AdbIME");
    let (out, _, code) = sh(&a, "am broadcast -a ADB_INPUT_B64 --es msg 44OQ44K544Kx");
    assert!(out.contains("Broadcast completed: result=0"), "{out}");
    assert_eq!(code, Some(0));
    assert_eq!(note(&a), "");
}

#[test]
fn field_bug_44_ime_enable_refused_once_while_listed() {
    let a = pixel();
    a.sim.post(
        "/v1/state",
        json!({"adb_keyboard": true, "ime_registration_pending": 1}),
    );
    let id = "com.android.adbkeyboard/.AdbIME";
    assert!(sh(&a, "ime list -a -s").0.contains(id), "listed");
    assert!(!sh(&a, "ime list -s").0.contains(id), "not enabled");
    let (_, err, code) = sh(&a, &format!("ime enable {id}"));
    assert_eq!(
        (err.as_str(), code),
        (
            "Unknown input method com.android.adbkeyboard/.AdbIME cannot be enabled for user #0\n",
            Some(255)
        )
    );
    let (out, _, code) = sh(&a, &format!("ime enable {id}"));
    assert_eq!(
        (out.as_str(), code),
        (
            "Input method com.android.adbkeyboard/.AdbIME: now enabled for user #0\n",
            Some(0)
        )
    );
    assert!(sh(&a, "ime list -s").0.contains(id), "enabled now");
}
