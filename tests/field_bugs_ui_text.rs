//! Field bugs of round 3 on the UI dump, selectors and text input (rows 39, 40, 42, 43, 44 of
//! `field-bugs-3.md`) and the attack run's deadline findings M1 and L4, each with variants of
//! its kind. Every test goes through the real path: WebSocket → connector binary → direct
//! transport (or Google adb 34) → simulated phone, which replays the phone's behaviour with
//! its state (`ui_dump_tty`, `adb_keyboard_receives`, `ime_registration_pending`, the Compose
//! and web view screens) or per-command scripts.

mod common;

use serde_json::{json, Value};

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::{claimed_channel, claimed_sim, elements, DirectSim};

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

fn result(ack: &Value) -> &Value {
    &ack["payload"]["result"]
}

/// The command log's argv lines (joined by spaces) since entry `from`.
fn commands_since(sim: &SimPhone, from: usize) -> Vec<String> {
    sim.state()["command_log"].as_array().unwrap()[from..]
        .iter()
        .map(|e| {
            e["argv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap_or(""))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn log_len(sim: &SimPhone) -> usize {
    sim.state()["command_log"].as_array().map_or(0, Vec::len)
}

fn dumps(commands: &[String]) -> Vec<&String> {
    commands
        .iter()
        .filter(|c| c.starts_with("uiautomator dump"))
        .collect()
}

fn set_state(sim: &SimPhone, patch: Value) {
    assert_eq!(sim.control_post("/v1/state", patch.clone()), 200, "{patch}");
}

fn script(sim: &SimPhone, s: Value) {
    assert_eq!(sim.control_post("/v1/script", s.clone()), 200, "{s}");
}

// ---- row 39: `/dev/tty` gives only the status line ----

/// Asserts the ui_tree ack holds the launcher and that since `from` the phone dumped into a
/// private file it read and removed; returns the commands run.
fn assert_dumped_via_a_private_file(sim: &SimPhone, from: usize, ack: &Value) -> Vec<String> {
    assert!(ack.get("error").is_none(), "{ack}");
    assert!(
        elements(ack).iter().any(|e| e["text"] == "Notes"),
        "the tree came back: {ack}"
    );
    let ran = commands_since(sim, from);
    let file = ran
        .iter()
        .find_map(|c| c.strip_prefix("uiautomator dump /data/local/tmp/"))
        .unwrap_or_else(|| panic!("a dump into a private file: {ran:?}"));
    let path = format!("/data/local/tmp/{file}");
    assert!(ran.contains(&format!("cat {path}")), "read: {ran:?}");
    assert!(ran.contains(&format!("rm -f {path}")), "removed: {ran:?}");
    ran
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_39_tty_status_line_falls_back_to_a_private_file_and_is_remembered() {
    let mut b = claimed_sim("SIMFB39000001", &[]).await;
    set_state(&b.sim, json!({"ui_dump_tty": "status_only"}));
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    let ran = assert_dumped_via_a_private_file(&b.sim, from, &ack);
    let tty: Vec<_> = ran.iter().filter(|c| c.ends_with("/dev/tty")).collect();
    assert_eq!(tty.len(), 1, "/dev/tty tried once, never retried: {ran:?}");
    // Remembered for the phone: the next call (another tool too) goes to the file at once.
    for tool in ["android_ui_tree", "android_wait_for"] {
        let from = log_len(&b.sim);
        let args = json!({"condition": "appears", "text": "Notes", "timeout_ms": 1000});
        let ack = b.x.tool(&b.ch, tool, args).await;
        assert!(ack.get("error").is_none(), "{tool}: {ack}");
        let ran = commands_since(&b.sim, from);
        assert!(
            !ran.iter().any(|c| c.ends_with("/dev/tty")),
            "{tool}: /dev/tty not tried again: {ran:?}"
        );
        assert!(!dumps(&ran).is_empty(), "{ran:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_39_variants_tty_works_on_one_phone_and_not_another() {
    let a = SimPhone::start_with_control("SIMFB39AAAAA1", &[]);
    let c = SimPhone::start_with_control("SIMFB39CCCCC2", &[]);
    set_state(&a, json!({"ui_dump_tty": "status_only"}));
    let dir = TempDir::new("fb39two");
    let conn = ConnectorProc::start(
        dir.path(),
        Phones::Direct(vec![a.addr.clone(), c.addr.clone()]),
    );
    let (mut xa, cha) = claimed_channel(&conn.addr, &a.serial).await;
    let (mut xc, chc) = claimed_channel(&conn.addr, &c.serial).await;
    for _ in 0..2 {
        let (fa, fc) = (log_len(&a), log_len(&c));
        let ack = xa.tool(&cha, "android_ui_tree", json!({})).await;
        assert_dumped_via_a_private_file(&a, fa, &ack);
        let ack = xc.tool(&chc, "android_ui_tree", json!({})).await;
        assert!(ack.get("error").is_none(), "{ack}");
        let ran = commands_since(&c, fc);
        assert_eq!(
            dumps(&ran),
            vec!["uiautomator dump /dev/tty"],
            "the other phone keeps /dev/tty: {ran:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_39_variants_other_status_forms() {
    let enxio = "java.io.FileNotFoundException: /dev/tty: open failed: ENXIO (No such device or address)\n\tat libcore.io.IoBridge.open(IoBridge.java:574)\n";
    for (n, (stdout, stderr)) in [
        ("UI hierarchy dumped to: /dev/tty\r\n", ""),
        ("UI hierchary dumped to: /dev/tty\n", enxio),
        ("\n\nUI hierchary dumped to: /dev/tty\n\n", ""),
    ]
    .into_iter()
    .enumerate()
    {
        let mut b = claimed_sim(&format!("SIMFB39V0000{n}"), &[]).await;
        script(
            &b.sim,
            json!({"command_regex": "^uiautomator dump /dev/tty$", "stdout": stdout, "stderr": stderr, "exit_code": 0}),
        );
        let from = log_len(&b.sim);
        let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
        assert_dumped_via_a_private_file(&b.sim, from, &ack);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_39_variants_no_way_gives_a_tree_is_no_output_not_retried() {
    let mut b = claimed_sim("SIMFB39V00010", &[]).await;
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump", "stdout": "UI hierchary dumped to: somewhere\n", "exit_code": 0}),
    );
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    assert!(message(&ack).contains("reason: no_output"), "{ack}");
    let ran = commands_since(&b.sim, from);
    assert_eq!(dumps(&ran).len(), 2, "one try of each way: {ran:?}");
}

// ---- row 40: the keyboard ignores the broadcast ----

/// A sim with ADBKeyBoard installed (receiving or not) and the Notes field focused.
async fn notes_with_keyboard(serial: &str, receives: bool) -> DirectSim {
    let mut b = claimed_sim(serial, &[]).await;
    set_state(
        &b.sim,
        json!({"adb_keyboard": true, "adb_keyboard_receives": receives}),
    );
    common::scenario::focus_note(&mut b.x, &b.ch).await;
    b
}

/// Asserts `ack` is the typed "keyboard typed nothing" error, the field unchanged (`field`),
/// and the previous IME selected again.
fn assert_keyboard_typed_nothing(b: &DirectSim, ack: &Value, field: &str, says: &str) {
    assert_eq!(ack["error"]["code"], "unsupported_text", "{ack}");
    assert!(message(ack).contains(says), "{ack}");
    assert_eq!(b.sim.state()["note_text"], field);
    let ime = b.sim.state()["input_method"].clone();
    assert_ne!(ime, "com.android.adbkeyboard/.AdbIME", "restored: {ime}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_40_keyboard_that_ignores_broadcasts_is_a_typed_error() {
    let mut b = notes_with_keyboard("SIMFB40000001", false).await;
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "バスケ"}))
            .await;
    assert_keyboard_typed_nothing(&b, &ack, "", "does not receive");
    assert!(message(&ack).contains("Update ADBKeyboard"), "{ack}");
    // The same keyboard, updated (receiving again), types it.
    set_state(&b.sim, json!({"adb_keyboard_receives": true}));
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "バスケ"}))
            .await;
    assert_eq!(result(&ack)["verified"], true, "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_40_variants_other_fields_and_a_clear_first() {
    let mut b = notes_with_keyboard("SIMFB40V00001", false).await;
    for (present, args) in [
        ("日本", json!({"text": "本"})),
        ("Тест", json!({"text": "ст", "clear_first": true})),
        ("abc", json!({"text": "abcé"})),
    ] {
        set_state(&b.sim, json!({"note_text": present}));
        let ack = b.x.tool(&b.ch, "android_input_text", args.clone()).await;
        assert_keyboard_typed_nothing(&b, &ack, present, "does not receive");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_40_variants_a_keyboard_switch_that_does_not_hold() {
    let mut b = notes_with_keyboard("SIMFB40V00002", true).await;
    // An OEM build answers `ime set` as done but keeps its own keyboard.
    script(
        &b.sim,
        json!({"command_regex": "^ime set com.android.adbkeyboard/.AdbIME$", "stdout": "Input method com.android.adbkeyboard/.AdbIME selected for user #0\n"}),
    );
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "héllo"}))
            .await;
    assert_keyboard_typed_nothing(&b, &ack, "", "did not hold");
}

// ---- row 42: a Compose test tag as a bare resource-id ----

async fn people_app(serial: &str) -> DirectSim {
    let b = claimed_sim(serial, &[]).await;
    set_state(
        &b.sim,
        json!({"foreground": "com.example.people/.PersonDetailsActivity"}),
    );
    b
}

/// `android_tap` on the element with `resource_id`; the ack.
async fn tap_id(b: &mut DirectSim, resource_id: &str) -> Value {
    b.x.tool(&b.ch, "android_tap", json!({"resource_id": resource_id}))
        .await
}

fn element_with_id(ack: &Value, id: &str) -> Value {
    elements(ack)
        .into_iter()
        .find(|e| e["resource_id"] == id)
        .unwrap_or_else(|| panic!("{id} in {ack}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_42_full_id_selects_a_bare_compose_test_tag() {
    let mut b = people_app("SIMFB42000001").await;
    let tree = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    let fab = element_with_id(&tree, "personDetailsSpeedDial_Main");
    let ack = tap_id(&mut b, "com.example.people:id/personDetailsSpeedDial_Main").await;
    assert!(ack.get("error").is_none(), "{ack}");
    let tapped = &result(&ack)["tapped"];
    assert_eq!(
        [&tapped["x"], &tapped["y"]],
        [&fab["center"][0], &fab["center"][1]],
        "{ack}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_42_variants_both_ways_in_every_selector_consumer() {
    let mut b = people_app("SIMFB42V00001").await;
    let tree = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    let toolbar = element_with_id(&tree, "com.example.people:id/toolbar");
    // A bare name selects a full View id.
    let ack = tap_id(&mut b, "toolbar").await;
    assert_eq!(result(&ack)["tapped"]["y"], toolbar["center"][1], "{ack}");
    // The same matcher in wait_for, scroll and long press.
    let ack = b.x.tool(
        &b.ch,
        "android_wait_for",
        json!({"condition": "appears", "resource_id": "com.example.people:id/personName", "timeout_ms": 1000}),
    )
    .await;
    assert_eq!(result(&ack)["satisfied"], true, "{ack}");
    assert_eq!(
        result(&ack)["element"]["resource_id"],
        "personName",
        "{ack}"
    );
    let ack =
        b.x.tool(
            &b.ch,
            "android_long_press",
            json!({"resource_id": "com.example.people:id/personDetailsCall", "duration_ms": 600}),
        )
        .await;
    assert!(ack.get("error").is_none(), "{ack}");
    let ack = b.x.tool(
        &b.ch,
        "android_scroll",
        json!({"direction": "down", "resource_id": "com.example.people:id/personDetailsSpeedDial_Main"}),
    )
    .await;
    assert!(ack.get("error").is_none(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_42_variants_an_ambiguous_bare_name_lists_the_candidates() {
    let mut b = people_app("SIMFB42V00002").await;
    let from = log_len(&b.sim);
    let ack = tap_id(&mut b, "title").await;
    assert_eq!(ack["error"]["code"], "invalid_arguments", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("`com.example.people:id/title`") && m.contains("`android:id/title`"),
        "lists both: {m}"
    );
    assert!(
        !commands_since(&b.sim, from)
            .iter()
            .any(|c| c.starts_with("input")),
        "nothing injected"
    );
    // The full id is never ambiguous.
    let ack = tap_id(&mut b, "android:id/title").await;
    assert!(ack.get("error").is_none(), "{ack}");
    // wait_for refuses it the same way.
    let ack =
        b.x.tool(
            &b.ch,
            "android_wait_for",
            json!({"condition": "appears", "resource_id": "title", "timeout_ms": 500}),
        )
        .await;
    assert_eq!(ack["error"]["code"], "invalid_arguments", "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_42_variants_another_package_or_case_is_not_found_with_the_near_match_named() {
    let mut b = people_app("SIMFB42V00003").await;
    let ack = tap_id(&mut b, "org.other.app:id/toolbar").await;
    assert_eq!(ack["error"]["code"], "element_not_found", "{ack}");
    assert!(
        message(&ack).contains("`com.example.people:id/toolbar`"),
        "another package's id differs; the near match is named: {ack}"
    );
    let ack = tap_id(&mut b, "com.example.people:id/personname").await;
    assert!(
        message(&ack).contains("`personName`"),
        "case differs: {ack}"
    );
}

// ---- row 43: a web view that exposes no content ----

async fn ui_tree_of(serial: &str, activity: &str) -> Value {
    let mut b = claimed_sim(serial, &[]).await;
    set_state(
        &b.sim,
        json!({"foreground": format!("com.example.web/{activity}")}),
    );
    b.x.tool(&b.ch, "android_ui_tree", json!({})).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_43_webview_without_content_is_reported_opaque() {
    let ack = ui_tree_of("SIMFB43000001", ".BlankActivity").await;
    assert!(ack.get("error").is_none(), "{ack}");
    let regions = result(&ack)["opaque_regions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(regions.len(), 1, "{ack}");
    let r = &regions[0];
    assert_eq!(r["kind"], "web_view", "{r}");
    assert_eq!(r["class"], "android.webkit.WebView", "{r}");
    assert_eq!(r["described_descendants"], 0, "{r}");
    let b = r["bounds"].as_array().unwrap();
    let hint = r["hint"].as_str().unwrap();
    assert!(hint.contains("android_screenshot"), "{hint}");
    assert!(
        hint.contains(&format!("[{},{}][{},{}]", b[0], b[1], b[2], b[3])),
        "says where: {hint}"
    );
    assert!(
        r["element_id"].is_string(),
        "points at the view itself: {r}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_43_variants_a_few_descendants_or_a_described_page() {
    let ack = ui_tree_of("SIMFB43V00001", ".SparseActivity").await;
    let regions = result(&ack)["opaque_regions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(regions.len(), 1, "{ack}");
    assert_eq!(regions[0]["described_descendants"], 2, "{ack}");
    let ack = ui_tree_of("SIMFB43V00002", ".ArticleActivity").await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert!(
        result(&ack).get("opaque_regions").is_none(),
        "a page that exposes its text is not opaque: {ack}"
    );
}

// ---- row 44: `ime enable` races the keyboard's registration ----

fn ime_selects(commands: &[String]) -> usize {
    commands
        .iter()
        .filter(|c| c.starts_with("ime enable com.android.adbkeyboard"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_44_ime_enable_race_is_retried() {
    let mut b = notes_with_keyboard("SIMFB44000001", true).await;
    set_state(&b.sim, json!({"ime_registration_pending": 1}));
    let from = log_len(&b.sim);
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "héllo wörld"}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(result(&ack)["verified"], true, "{ack}");
    assert_eq!(b.sim.state()["note_text"], "héllo wörld");
    assert_eq!(ime_selects(&commands_since(&b.sim, from)), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_44_variants_twice_and_on_the_set_step() {
    let mut b = notes_with_keyboard("SIMFB44V00001", true).await;
    set_state(&b.sim, json!({"ime_registration_pending": 2}));
    let ack =
        b.x.tool(
            &b.ch,
            "android_input_text",
            json!({"text": "ça", "clear_first": true}),
        )
        .await;
    assert_eq!(result(&ack)["verified"], true, "{ack}");
    // The race on `ime set` (enable already took): retried as well.
    script(
        &b.sim,
        json!({"command_regex": "^ime set com.android.adbkeyboard/.AdbIME$", "stderr": "Unknown input method com.android.adbkeyboard/.AdbIME cannot be selected for user #0\n", "exit_code": 255, "times": 1}),
    );
    let ack =
        b.x.tool(
            &b.ch,
            "android_input_text",
            json!({"text": "ñ", "clear_first": true}),
        )
        .await;
    assert_eq!(result(&ack)["verified"], true, "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_44_variants_never_enabled_is_a_typed_error_naming_the_step() {
    let mut b = notes_with_keyboard("SIMFB44V00002", true).await;
    set_state(&b.sim, json!({"ime_registration_pending": 1000}));
    let before = b.sim.state()["input_method"].clone();
    let from = log_len(&b.sim);
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "日本語"}))
            .await;
    assert_eq!(ack["error"]["code"], "unsupported_text", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("ime enable") && m.contains("Settings → System → Keyboards"),
        "{m}"
    );
    assert!(m.contains("Unknown input method"), "quotes the line: {m}");
    let tries = ime_selects(&commands_since(&b.sim, from));
    assert!((2..=5).contains(&tries), "bounded retry: {tries}");
    assert_eq!(b.sim.state()["input_method"], before);
    assert_eq!(b.sim.state()["note_text"], "");
}

// ---- M1: one deadline for the whole of android_input_text ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m1_input_text_keeps_one_deadline_on_a_hung_dump() {
    let mut b = claimed_sim("SIMM1HUNG0001", &[]).await;
    common::scenario::focus_note(&mut b.x, &b.ch).await;
    script(
        &b.sim,
        json!({"command_regex": "uiautomator", "hang": true}),
    );
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "hello"}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
    let r = result(&ack);
    assert_eq!(r["verified"], Value::Null, "{r}");
    let warning = r["warning"].as_str().unwrap_or("");
    assert!(
        warning.contains("timed out") && warning.contains("could not be verified"),
        "{r}"
    );
    assert!(!warning.contains("no focused field"), "{r}");
    assert_eq!(b.sim.state()["note_text"], "hello", "typed once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m1_variants_ime_path_on_a_hung_dump_still_restores_the_keyboard() {
    let mut b = notes_with_keyboard("SIMM1HUNG0002", true).await;
    let before = b.sim.state()["input_method"].clone();
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator", "hang": true}),
    );
    let ack =
        b.x.tool(&b.ch, "android_input_text", json!({"text": "Привет"}))
            .await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert!(
        result(&ack)["warning"]
            .as_str()
            .unwrap_or("")
            .contains("timed out"),
        "{ack}"
    );
    assert_eq!(b.sim.state()["note_text"], "Привет");
    assert_eq!(b.sim.state()["input_method"], before, "restored");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn m1_variants_frozen_phone_behind_adb34_is_one_device_timeout() {
    let sim = SimPhone::start_with_control("SIMM1FRZ00001", &[]);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&sim.addr);
    let dir = TempDir::new("m1frozen");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    common::scenario::focus_note(&mut x, &ch).await;
    assert_eq!(
        sim.control_post("/v1/transport", json!({"state": "frozen"})),
        200
    );
    let ack = x
        .tool(&ch, "android_input_text", json!({"text": "hello"}))
        .await;
    assert_eq!(ack["error"]["code"], "device_timeout", "{ack}");
    assert!(
        message(&ack).contains("deadline of 30000 ms"),
        "one budget: {ack}"
    );
}

// ---- L4: every wait is bounded by its timeout_ms (plus at most one poll) ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l4_wait_for_is_bounded_by_its_timeout_on_a_hung_dump() {
    let mut b = claimed_sim("SIMWAIT000001", &[]).await;
    script(
        &b.sim,
        json!({"command_regex": "uiautomator", "hang": true}),
    );
    for (args, budget) in [
        (
            json!({"condition": "appears", "text": "zz", "timeout_ms": 1000}),
            "4000 ms",
        ),
        (
            json!({"condition": "stable", "timeout_ms": 200, "interval_ms": 5000}),
            "5200 ms",
        ),
        (
            json!({"condition": "disappears", "content_desc": "Notes", "timeout_ms": 100}),
            "3100 ms",
        ),
    ] {
        let ack = b.x.tool(&b.ch, "android_wait_for", args.clone()).await;
        assert_eq!(ack["error"]["code"], "device_timeout", "{args}: {ack}");
        assert!(message(&ack).contains(budget), "{args}: {ack}");
    }
}
