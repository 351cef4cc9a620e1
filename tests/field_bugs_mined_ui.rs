//! Mined field rows about the UI tree and typing (issue 19 §2; `docs/field-bugs.md`, "Mined
//! rows"): a `uiautomator dump` killed while it wrote the tree (62). Each row replays what the
//! phone printed (the fixtures under `tests/fixtures/`, as sim scripts) and drives the
//! connector's tools over the WebSocket through the direct transport to the simulated phone;
//! the variants replay the same kind with another signal or another place of the message.

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

/// Programs run since `from` but the geometry reads beside a dump (which are no retries).
fn dumps_since(sim: &SimPhone, from: usize) -> usize {
    sim.state()["command_log"].as_array().unwrap()[from..]
        .iter()
        .filter(|e| {
            let program = e["argv"][0].as_str().unwrap_or("");
            program != "dumpsys" && program != "wm"
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

/// Row 62 (dtmilano/AndroidViewClient#140, Sony Z1, Android 5.0.2): the dump is cut off in
/// the middle of a node and the shell reports `Killed` (exit 137). The kill is the cause: the
/// answer is `reason: killed` naming exit 137, not retried, never a malformed-XML parse error.
const CUT_OFF: &str = include_str!("fixtures/uiautomator/sony-z1-lollipop-dump-cut-off-killed.txt");

/// The fixture's XML part (what went to stdout before the kill).
fn cut_off_xml() -> &'static str {
    CUT_OFF
        .strip_suffix("Killed\n")
        .expect("fixture ends with Killed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_62_dump_killed_mid_tree_is_killed_not_malformed() {
    let mut b = claimed_sim("SIMFB62000001", &[]).await;
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump( |$)", "stdout": cut_off_xml(), "stderr": "Killed\n", "exit_code": 137, "times": 4}),
    );
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
    let m = message(&ack);
    assert!(
        m.contains("reason: killed") && m.contains("exit 137"),
        "{m}"
    );
    assert!(!m.contains("malformed"), "{m}");
    assert!(m.contains("Killed"), "the shell's word is quoted: {m}");
    assert_eq!(dumps_since(&b.sim, from), 1, "not retried: {m}");
    delete_scripts(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(
        ack.get("error").is_none(),
        "the next call works again: {ack}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn field_bug_62_variants_other_signals_and_streams() {
    let mut b = claimed_sim("SIMFB62V00001", &[]).await;
    let xml = cut_off_xml();
    // Cut at another place (inside the prolog's hierarchy, after a whole node).
    let after_first_node = &xml[..xml.find("<node index=\"1\"").unwrap()];
    for (stdout, stderr, exit_code) in [
        // `Killed` merged into stdout after the cut (legacy shell / pty).
        (format!("{xml}\nKilled\n"), String::new(), 137),
        // SIGTERM (an OEM watchdog), no message.
        (after_first_node.to_string(), String::new(), 143),
        // Crashed dumper: SIGSEGV mid-tree.
        (
            xml[..200].to_string(),
            "Segmentation fault\n".to_string(),
            139,
        ),
    ] {
        script(
            &b.sim,
            json!({"command_regex": "^uiautomator dump( |$)", "stdout": stdout, "stderr": stderr, "exit_code": exit_code, "times": 4}),
        );
        let from = log_len(&b.sim);
        let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
        assert_eq!(ack["error"]["code"], "ui_dump_failed", "{ack}");
        let m = message(&ack);
        assert!(m.contains("reason: killed"), "{exit_code}: {m}");
        assert!(m.contains(&format!("exit {exit_code}")), "{exit_code}: {m}");
        assert!(
            !m.contains("<node"),
            "{exit_code}: no XML in the message: {m}"
        );
        assert_eq!(
            dumps_since(&b.sim, from),
            1,
            "{exit_code}: not retried: {m}"
        );
        delete_scripts(&b.sim);
    }
    // A cut-off tree with no kill (exit 0) is still a transient malformed answer: retried.
    script(
        &b.sim,
        json!({"command_regex": "^uiautomator dump( |$)", "stdout": xml, "times": 1}),
    );
    let from = log_len(&b.sim);
    let ack = b.x.tool(&b.ch, "android_ui_tree", json!({})).await;
    assert!(
        ack.get("error").is_none(),
        "retried after one cut-off dump: {ack}"
    );
    assert_eq!(dumps_since(&b.sim, from), 2);
}
