//! Mined field rows about the UI tree's content (issue 19 §2; `docs/field-bugs.md`, "Mined
//! rows"): the dumper's XML writer refusing a character of the screen's text (66). Each row
//! replays what the phone printed (the fixtures under `tests/fixtures/`, as sim scripts) and
//! drives the connector's tools over the WebSocket through the direct transport to the
//! simulated phone; the variants replay the same kind with another Android release's wording,
//! another stream, or another tool that reads the tree.

mod common;

use serde_json::{json, Value};

use common::procs::SimPhone;
use common::scenario::claimed_sim;

fn message(ack: &Value) -> String {
    ack["error"]["message"].as_str().unwrap_or("").to_string()
}

fn log_len(sim: &SimPhone) -> usize {
    sim.state()["command_log"]
        .as_array()
        .map(Vec::len)
        .unwrap_or(0)
}

/// `uiautomator dump` runs since `from` (the geometry reads beside a dump are no retries; a
/// command line a script answered whole is logged as one word).
fn dumps_since(sim: &SimPhone, from: usize) -> usize {
    sim.state()["command_log"].as_array().unwrap()[from..]
        .iter()
        .filter(|e| {
            e["argv"][0]
                .as_str()
                .is_some_and(|p| p == "uiautomator" || p.starts_with("uiautomator "))
        })
        .count()
}

fn delete_scripts(sim: &SimPhone) {
    let url = format!("{}/v1/script", sim.control.clone().expect("control"));
    ureq::delete(&url).call().expect("delete scripts");
}

/// A script that must be accepted.
fn script(sim: &SimPhone, body: Value) {
    assert_eq!(sim.control_post("/v1/script", body.clone()), 200, "{body}");
}

/// Row 66 (openatx/uiautomator2#135, WeChat's chat list on a Meizu MX4 Pro): the dumper's
/// XML writer (KXmlSerializer) refuses a UTF-16 surrogate half of an emoji in a node's text:
/// `java.lang.IllegalArgumentException: Illegal character (d83d)`.
const ILLEGAL_D83D: &str =
    include_str!("fixtures/uiautomator/wechat-dump-illegal-character-d83d-kxmlserializer.txt");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_66_dumper_refusing_a_character_is_unwritable_text() {
    let mut b = claimed_sim("SIMFB66000001", &[]).await;
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump( |$)", "stderr": ILLEGAL_D83D, "exit_code": 1, "times": 4}),
    );
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    let m = message(&ack);
    assert!(m.contains("reason: unwritable_text"), "{m}");
    assert!(
        m.contains("Illegal character (d83d)") && m.contains("U+D83D"),
        "the writer's line and the unit: {m}"
    );
    assert!(m.contains("emoji"), "says what the unit is: {m}");
    assert!(
        m.contains("off screen") && m.contains("android_screenshot"),
        "names the way out: {m}"
    );
    assert!(!m.contains("parse_error") && !m.contains("settle"), "{m}");
    assert!(!m.contains("KXmlSerializer.java"), "no stack frames: {m}");
    assert!(!m.contains("SIMFB66000001"), "no serial: {m}");
    assert_eq!(dumps_since(&b.sim, from), 1, "not retried: {m}");
    // The text gone from the screen, the next call reads the tree.
    delete_scripts(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(ack.get("error").is_none(), "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_66_variants_newer_wording_other_stream_and_tools() {
    let mut b = claimed_sim("SIMFB66V00001", &[]).await;
    // Android 7+ (`com.android.org.kxml2`, mobile-dev-inc/Maestro#288's wording): a NUL in a
    // text, the trace merged into stdout (legacy shell), exit 0.
    let nul = "java.lang.IllegalArgumentException: Illegal character (U+0)\n\tat com.android.org.kxml2.io.KXmlSerializer.reportInvalidCharacter(KXmlSerializer.java:182)\n\tat com.android.org.kxml2.io.KXmlSerializer.writeEscaped(KXmlSerializer.java:173)\n\tat com.android.org.kxml2.io.KXmlSerializer.attribute(KXmlSerializer.java:495)\n\tat com.android.uiautomator.core.AccessibilityNodeInfoDumper.dumpNodeRec(AccessibilityNodeInfoDumper.java:104)\n\tat com.android.uiautomator.core.AccessibilityNodeInfoDumper.dumpWindowToFile(AccessibilityNodeInfoDumper.java:89)\n\tat com.android.commands.uiautomator.DumpCommand.run(DumpCommand.java:110)\n";
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump( |$)", "stdout": nul, "times": 4}),
    );
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("reason: unwritable_text") && m.contains("U+0000") && m.contains("NUL"),
        "{m}"
    );
    assert_eq!(dumps_since(&b.sim, from), 1, "not retried: {m}");
    delete_scripts(&b.sim);

    // A lone high surrogate before an ASCII letter (a text cut and joined): `Bad surrogate
    // pair`, met by a tap through a selector, which reads the tree: the same typed answer.
    let pair = "java.lang.IllegalArgumentException: Bad surrogate pair (U+d83d U+41)\n\tat com.android.org.kxml2.io.KXmlSerializer.writeSurrogate(KXmlSerializer.java:190)\n\tat com.android.org.kxml2.io.KXmlSerializer.writeEscaped(KXmlSerializer.java:170)\n\tat com.android.org.kxml2.io.KXmlSerializer.attribute(KXmlSerializer.java:495)\n\tat com.android.uiautomator.core.AccessibilityNodeInfoDumper.dumpNodeRec(AccessibilityNodeInfoDumper.java:104)\n";
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump( |$)", "stderr": pair, "exit_code": 1, "times": 4}),
    );
    let from = log_len(&b.sim);
    let ack =
        b.x.tool(&b.ch, "android_tap", json!({"text": "Notes"}))
            .await;
    assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("reason: unwritable_text") && m.contains("U+D83D"),
        "{m}"
    );
    assert_eq!(dumps_since(&b.sim, from), 1, "not retried: {m}");
    let taps = b.sim.state()["command_log"].as_array().unwrap()[from..]
        .iter()
        .filter(|e| {
            e["argv"][0]
                .as_str()
                .is_some_and(|p| p.starts_with("input"))
        })
        .count();
    assert_eq!(taps, 0, "nothing tapped");
    delete_scripts(&b.sim);

    // Another crash of the dumper (the NPE of `childNafCheck` on a child that went away while
    // it was read, Android 4.4's Dalvik frames): the tree changed under it; retried, and the
    // next dump answers.
    let npe = "java.lang.NullPointerException\n\tat com.android.uiautomator.core.AccessibilityNodeInfoDumper.childNafCheck(AccessibilityNodeInfoDumper.java:200)\n\tat com.android.uiautomator.core.AccessibilityNodeInfoDumper.nafCheck(AccessibilityNodeInfoDumper.java:180)\n\tat com.android.uiautomator.core.AccessibilityNodeInfoDumper.dumpNodeRec(AccessibilityNodeInfoDumper.java:104)\n\tat com.android.commands.uiautomator.DumpCommand.run(DumpCommand.java:99)\n";
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump( |$)", "stderr": npe, "exit_code": 1, "times": 1}),
    );
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(ack.get("error").is_none(), "retried once: {ack}");
    assert_eq!(dumps_since(&b.sim, from), 2);
    // Every attempt crashing: the reason says so, with the exception.
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump( |$)", "stderr": npe, "exit_code": 1, "times": 4}),
    );
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("reason: dumper_crashed") && m.contains("NullPointerException"),
        "{m}"
    );
}

/// The shell dumper's uncaught exception as the crash buffer holds it (`logcat -b crash -d -v
/// epoch`) at Unix second `at`, pid 1348: AOSP `RuntimeInit`'s `*** FATAL EXCEPTION IN SYSTEM
/// PROCESS: main` (Android 4.4's Dalvik) then the fixture's trace, one `AndroidRuntime` line each
/// *(reconstructed: the fixture's frames in the logcat form of field bug 66's sources)*.
fn crash_buffer(at: u64) -> String {
    let mut out = String::from("--------- beginning of crash\n");
    out.push_str(&format!(
        "{at}.100  1348  1348 E AndroidRuntime: *** FATAL EXCEPTION IN SYSTEM PROCESS: main\n"
    ));
    for line in ILLEGAL_D83D.lines() {
        out.push_str(&format!("{at}.101  1348  1348 E AndroidRuntime: {line}\n"));
    }
    out
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The dumper's handler logs the exception and kills the process (SIGKILL, nothing printed,
/// exit 137): the cause is read from the crash buffer, not `killed`; a crash logged before the
/// call is no cause, and the answer stays `killed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_66_variants_silent_sigkill_reads_the_crash_buffer() {
    let mut b = claimed_sim("SIMFB66V00002", &[]).await;
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump( |$)", "exit_code": 137, "times": 4}),
    );
    script(
        &b.sim,
        json!({"command_regex": "^logcat -b crash", "stdout": crash_buffer(now_secs()), "times": 1}),
    );
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("reason: unwritable_text") && m.contains("U+D83D"),
        "{m}"
    );
    assert!(!m.contains("reason: killed"), "{m}");
    assert_eq!(dumps_since(&b.sim, from), 1, "not retried: {m}");
    delete_scripts(&b.sim);
    // A crash an hour old (an earlier dump's) and a SIGKILL now: killed, as before.
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump( |$)", "stderr": "Killed\n", "exit_code": 137, "times": 4}),
    );
    script(
        &b.sim,
        json!({"command_regex": "^logcat -b crash", "stdout": crash_buffer(now_secs() - 3600), "times": 1}),
    );
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    let m = message(&ack);
    assert!(
        m.contains("reason: killed") && m.contains("exit 137"),
        "{m}"
    );
}
