//! Spec §8.18–8.19 and Device Profile §4–5: argument validation against the declared schema,
//! the model's `connector_channel_id` ignored, exactly-once side effects journaled by
//! (channel, `tool_call_id`) — repeats answered from the journal (a repeat with other arguments
//! refused), concurrent repeats wait, and a
//! call interrupted by `kill -9` is not run again after restart (the phone's command log proves it).

mod common;

use std::time::Duration;

use serde_json::{json, Value};

use common::scenario::{claimed_sim, DirectSim};
use common::xagent::{connect, http_get, XAgent};

async fn invoke(x: &mut XAgent, ch: &str, tool: &str, args: Value, call_id: &str) -> Value {
    let mut args = args;
    args["connector_channel_id"] = json!(ch);
    x.request(
        "tool.invoke",
        Some(ch),
        json!({"tool_id": tool, "arguments": args, "context": {"session_id": "s", "tool_call_id": call_id}}),
    )
    .await
}

/// [`invoke`] by `phone`'s client on the channel it claimed.
async fn invoke_on(phone: &mut DirectSim, tool: &str, args: Value, call_id: &str) -> Value {
    invoke(&mut phone.x, &phone.ch, tool, args, call_id).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_8_18_arguments_are_validated_and_the_model_channel_is_ignored() {
    let mut phone = claimed_sim("SIMARGS000017", &[]).await;
    for (args, field) in [
        (json!({"x": "ten", "y": 5}), "/x"),
        (json!({"x": 5}), "arguments"),
        (json!({"x": -1, "y": 5}), "/x"),
        (json!({"x": 5, "y": 5.5}), "/y"),
    ] {
        let ack = invoke_on(&mut phone, "android_tap", args, "").await;
        assert_eq!(ack["error"]["code"], "invalid_arguments", "{ack}");
        assert!(
            ack["error"]["message"].as_str().unwrap().contains(field),
            "{ack}"
        );
    }
    // A whole number written as a float is an integer (JSON Schema; Python's json.dumps(5.0)).
    let ack = invoke_on(&mut phone, "android_tap", json!({"x": 5.0, "y": 1e1}), "").await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(
        ack["payload"]["result"]["tapped"],
        json!({"x": 5, "y": 10}),
        "{ack}"
    );
    let ack = invoke_on(
        &mut phone,
        "android_press_key",
        json!({"key": "self_destruct"}),
        "",
    )
    .await;
    assert_eq!(ack["error"]["code"], "invalid_arguments");
    // Out of the display: refused with the valid range.
    let ack = invoke_on(&mut phone, "android_tap", json!({"x": 50_000, "y": 5}), "").await;
    assert_eq!(ack["error"]["code"], "out_of_bounds", "{ack}");
    assert!(
        ack["error"]["message"]
            .as_str()
            .unwrap()
            .contains("0..=1079"),
        "{ack}"
    );
    // The model's own copy of connector_channel_id is ignored; the envelope routes.
    let ack = phone.x
        .request(
            "tool.invoke",
            Some(&phone.ch),
            json!({"tool_id": "android_device_status", "arguments": {"connector_channel_id": "cch_someone_else"}}),
        )
        .await;
    assert!(ack.get("error").is_none(), "{ack}");
    assert_eq!(ack["payload"]["tool_id"], "android_device_status");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_8_19_repeated_side_effecting_call_runs_once() {
    let mut phone = claimed_sim("SIMONCE000019", &[]).await;
    let first = invoke_on(
        &mut phone,
        "android_tap",
        json!({"x": 11, "y": 12}),
        "call_once_1",
    )
    .await;
    assert!(first.get("error").is_none(), "{first}");
    assert_eq!(phone.sim.count_runs(&["input", "tap", "11", "12"]), 1);
    let again = invoke_on(
        &mut phone,
        "android_tap",
        json!({"x": 11, "y": 12}),
        "call_once_1",
    )
    .await;
    assert_eq!(
        again["payload"], first["payload"],
        "answered from the journal"
    );
    assert_eq!(
        phone.sim.count_runs(&["input", "tap", "11", "12"]),
        1,
        "not run again"
    );
    // The model's copy of connector_channel_id is not part of the call (routing ignores it).
    let same = invoke_on(
        &mut phone,
        "android_tap",
        json!({"y": 12, "x": 11, "connector_channel_id": "cch_other"}),
        "call_once_1",
    )
    .await;
    assert_eq!(same["payload"], first["payload"], "{same}");
    // The same id with other arguments is refused, not answered with the first call's outcome
    // (that would report a tap at a point the caller did not ask for), and nothing runs.
    let other = invoke_on(
        &mut phone,
        "android_tap",
        json!({"x": 13, "y": 14}),
        "call_once_1",
    )
    .await;
    assert_eq!(other["error"]["code"], "invalid_arguments", "{other}");
    let message = other["error"]["message"].as_str().unwrap();
    assert!(message.contains("other arguments"), "{other}");
    assert_eq!(phone.sim.count_runs(&["input", "tap", "13", "14"]), 0);
    assert_eq!(phone.sim.count_runs(&["input", "tap", "11", "12"]), 1);
    // A new tool_call_id is a new call; no tool_call_id is always new.
    invoke_on(
        &mut phone,
        "android_tap",
        json!({"x": 11, "y": 12}),
        "call_once_2",
    )
    .await;
    invoke_on(&mut phone, "android_tap", json!({"x": 11, "y": 12}), "").await;
    invoke_on(&mut phone, "android_tap", json!({"x": 11, "y": 12}), "").await;
    assert_eq!(phone.sim.count_runs(&["input", "tap", "11", "12"]), 4);
    // The same id for another tool is refused.
    let ack = invoke_on(
        &mut phone,
        "android_press_key",
        json!({"key": "home"}),
        "call_once_1",
    )
    .await;
    assert_eq!(ack["error"]["code"], "invalid_arguments", "{ack}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_8_19_concurrent_repeat_waits_for_the_first() {
    let phone = claimed_sim("SIMWAIT000019", &[]).await;
    let st = phone.sim.control_post(
        "/v1/script",
        json!({"command_regex": "input.*tap.*'21' '22'", "stdout": "", "exit_code": 0, "delay_ms": 1500, "times": 1}),
    );
    assert_eq!(st, 200);
    let before = phone.sim.state()["command_log"].as_array().unwrap().len();
    let mut y = connect(&phone.conn.addr).await;
    y.hello("").await;
    let (ch_y, _) = y.open(Some(&phone.ch)).await; // the channel moves to y's socket; x keeps none
    assert_eq!(ch_y, phone.ch);
    let first = tokio::spawn(async move {
        let ack = invoke(
            &mut y,
            &ch_y,
            "android_tap",
            json!({"x": 21, "y": 22}),
            "call_wait_1",
        )
        .await;
        (ack, y)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut z = connect(&phone.conn.addr).await;
    z.hello("").await;
    let (ch_z, _) = z.open(Some(&phone.ch)).await;
    let second = invoke(
        &mut z,
        &ch_z,
        "android_tap",
        json!({"x": 21, "y": 22}),
        "call_wait_1",
    )
    .await;
    let (first, _y) = first.await.unwrap();
    assert!(first.get("error").is_none(), "{first}");
    assert_eq!(
        second["payload"], first["payload"],
        "the repeat got the first call's result"
    );
    let runs: Vec<Value> = phone.sim.state()["command_log"].as_array().unwrap()[before..].to_vec();
    let taps = runs.iter().filter(|e| e["argv"][0] == "input").count();
    assert!(taps <= 1, "the phone ran the tap at most once: {runs:?}");
    drop(phone.x);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_8_19_kill_9_mid_call_then_retry_is_not_run_twice() {
    let mut phone = claimed_sim("SIMCRASH00019", &[]).await;
    let shot = invoke_on(&mut phone, "android_screenshot", json!({}), "call_shot").await;
    let file_url = format!(
        "{}{}",
        phone.conn.base,
        shot["payload"]["result"]["download_url"].as_str().unwrap()
    );
    let st = phone.sim.control_post(
        "/v1/script",
        json!({"command_regex": "input.*tap.*'33' '34'", "stdout": "", "exit_code": 0, "delay_ms": 4000, "times": 1}),
    );
    assert_eq!(st, 200);
    let p = common::xagent::packet(
        "tool.invoke",
        Some(&phone.ch),
        json!({"tool_id": "android_tap", "arguments": {"connector_channel_id": phone.ch, "x": 33, "y": 34}, "context": {"tool_call_id": "call_crash"}}),
        9001,
    );
    phone.x.send_text(&p.to_string()).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    phone.conn.kill();
    drop(phone.x);
    tokio::time::sleep(Duration::from_millis(4000)).await; // the scripted tap finishes on the phone
    let runs_before = phone.sim.state()["command_log"].as_array().unwrap().len();
    phone.conn.restart();

    let mut y = connect(&phone.conn.addr).await;
    assert_eq!(
        y.hello(&phone.connector_id).await["payload"]["connector_id"],
        json!(phone.connector_id)
    );
    let (ch2, _) = y.open(Some(&phone.ch)).await;
    assert_eq!(ch2, phone.ch, "binding intact");
    let mut retry = Value::Null;
    for _ in 0..50 {
        retry = invoke(
            &mut y,
            &phone.ch,
            "android_tap",
            json!({"x": 33, "y": 34}),
            "call_crash",
        )
        .await;
        if retry["error"]["code"] != "device_offline" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(retry["error"]["code"], "tool_call_interrupted", "{retry}");
    let log = phone.sim.state()["command_log"].as_array().unwrap().clone();
    let taps_after: Vec<&Value> = log[runs_before..]
        .iter()
        .filter(|e| e["argv"][0] == "input" && e["argv"][1] == "tap")
        .collect();
    assert!(
        taps_after.is_empty(),
        "the retried call did not run again: {taps_after:?}"
    );
    assert_eq!(http_get(&file_url, None).0, 200, "file refs intact");
    let ok = invoke(
        &mut y,
        &phone.ch,
        "android_tap",
        json!({"x": 33, "y": 34}),
        "call_crash_new_id",
    )
    .await;
    assert!(ok.get("error").is_none(), "channel usable: {ok}");
}

/// `context.tool_call_id` is bounded at 256 characters (fresh-user finding 16: 100 000 characters
/// were accepted and journaled for 24 h): a longer one is `invalid_packet`, nothing runs or is
/// journaled, the id is not repeated; 256 characters still work and are journaled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_over_long_tool_call_id_is_refused_before_anything_runs() {
    let mut phone = claimed_sim("SIMCALLID0016", &[]).await;
    for long in ["k".repeat(257), "é".repeat(257), "z".repeat(100_000)] {
        for (tool, args) in [
            ("android_tap", json!({"x": 21, "y": 22})),
            ("android_device_status", json!({})),
        ] {
            let ack = invoke_on(&mut phone, tool, args, &long).await;
            assert_eq!(ack["error"]["code"], "invalid_packet", "{tool}");
            let m = ack["error"]["message"].as_str().unwrap();
            assert!(
                m.contains("context.tool_call_id is longer than 256 characters"),
                "{m}"
            );
            assert!(!m.contains(&long[..16]), "the id is repeated");
        }
    }
    assert_eq!(
        phone.sim.count_runs(&["input", "tap", "21", "22"]),
        0,
        "nothing ran"
    );
    let at_limit = "k".repeat(256);
    let first = invoke_on(
        &mut phone,
        "android_tap",
        json!({"x": 21, "y": 22}),
        &at_limit,
    )
    .await;
    assert!(first.get("error").is_none(), "{first}");
    let again = invoke_on(
        &mut phone,
        "android_tap",
        json!({"x": 21, "y": 22}),
        &at_limit,
    )
    .await;
    assert_eq!(again["payload"], first["payload"], "journaled at the limit");
    assert_eq!(phone.sim.count_runs(&["input", "tap", "21", "22"]), 1);
}

/// The backticked `android_*` ids in `text`.
fn tool_ids(text: &str) -> std::collections::BTreeSet<String> {
    text.split('`')
        .filter(|s| s.starts_with("android_") && !s.contains(' '))
        .map(str::to_string)
        .collect()
}

/// The tools docs/protocol.md and docs/tools.md call journaled (side-effecting) and not journaled
/// (observation) are the tools the connector journals (fresh-user finding 19: protocol.md listed
/// three, tools.md more). Witness through the wire: a `tool_call_id` first used by `android_tap`
/// is refused for another journaled tool ("already used for another tool", nothing run) and
/// ignored by an observation tool, for every tool of the card.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_docs_list_exactly_the_tools_the_connector_journals() {
    let protocol = include_str!("../docs/protocol.md");
    let bullet = protocol
        .split("\n- Side-effecting tools")
        .nth(1)
        .and_then(|rest| rest.split("\n- ").next())
        .expect("docs/protocol.md names the side-effecting tools");
    let (effects, observations) = bullet
        .split_once("The observation tools")
        .expect("and the observation tools");
    let mut doc_journaled = tool_ids(effects);
    let doc_observing = tool_ids(observations);
    // Listed there "when enabled"; not in the default card this test reads.
    assert!(doc_journaled.remove("android_shell"));
    let mut tools_md_journaled = std::collections::BTreeSet::new();
    let mut tools_md_observing = std::collections::BTreeSet::new();
    for section in include_str!("../docs/tools.md").split("\n## ").skip(1) {
        let (head, body) = section.split_once('\n').unwrap();
        let ids = tool_ids(&format!("`{}`", head.replace(", ", "` `")));
        if body.contains("**Repeated call**: journaled") {
            tools_md_journaled.extend(ids);
        } else if body.contains("**Side effect**: none") {
            tools_md_observing.extend(ids);
        }
    }
    tools_md_journaled.remove("android_shell");
    assert_eq!(
        tools_md_journaled, doc_journaled,
        "docs/tools.md vs docs/protocol.md"
    );
    assert_eq!(
        tools_md_observing, doc_observing,
        "docs/tools.md vs docs/protocol.md"
    );

    let mut phone = claimed_sim("SIMJOURNAL019", &[]).await;
    let first = invoke_on(&mut phone, "android_tap", json!({"x": 5, "y": 6}), "shared").await;
    assert!(first.get("error").is_none(), "{first}");
    let (_, _, card) = http_get(&format!("{}/connector-card.json", phone.conn.base), None);
    let card: Value = serde_json::from_slice(&card).unwrap();
    let args = |tool: &str| match tool {
        "android_tap" | "android_long_press" | "android_double_tap" => json!({"x": 5, "y": 6}),
        "android_swipe" => json!({"x1": 5, "y1": 6, "x2": 7, "y2": 8}),
        "android_scroll" => json!({"direction": "down"}),
        "android_pinch" => json!({"x": 540, "y": 1200, "scale": 2.0}),
        "android_input_text" => json!({"text": "a"}),
        "android_press_key" => json!({"key": "home"}),
        "android_set_orientation" => json!({"orientation": "portrait"}),
        "android_app_launch" | "android_app_stop" | "android_app_uninstall" => {
            json!({"package": "com.example.notes"})
        }
        "android_app_install" => json!({"file_ref": "fr_none"}),
        "android_open_url" => json!({"url": "https://example.com/"}),
        "android_file_push" => json!({"file_ref": "fr_none", "path": "/sdcard/Download/a.txt"}),
        "android_file_pull" => json!({"path": "/sdcard/Download/none.txt"}),
        "android_wait_for" => json!({"condition": "stable", "timeout_ms": 300, "interval_ms": 100}),
        "android_screen_record" => json!({"duration_s": 1}),
        _ => json!({}),
    };
    let (mut journaled, mut observing) = (Default::default(), Default::default());
    for tool in card["tools"].as_array().unwrap() {
        let id = tool["tool_id"].as_str().unwrap();
        if id == "android_tap" {
            continue;
        }
        let ack = invoke_on(&mut phone, id, args(id), "shared").await;
        let refused =
            ack["error"]["message"] == "context.tool_call_id was already used for another tool";
        if refused {
            assert_eq!(ack["error"]["code"], "invalid_arguments", "{ack}");
        } else {
            assert_ne!(ack["error"]["code"], "invalid_arguments", "{id}: {ack}");
        }
        let set: &mut std::collections::BTreeSet<String> = if refused {
            &mut journaled
        } else {
            &mut observing
        };
        set.insert(id.to_string());
    }
    journaled.insert("android_tap".to_string());
    assert_eq!(
        journaled, doc_journaled,
        "journaled by the connector vs the docs"
    );
    assert_eq!(
        observing, doc_observing,
        "not journaled by the connector vs the docs"
    );
    assert_eq!(phone.sim.count_runs(&["input", "tap", "5", "6"]), 1);
}

/// Sends `tool` with `args` (and `call_id` when given) as packet `n` without waiting for the ack.
async fn send_call(x: &mut XAgent, ch: &str, tool: &str, args: Value, call_id: &str, n: u64) {
    let mut payload = json!({"tool_id": tool, "arguments": args});
    if !call_id.is_empty() {
        payload["context"] = json!({ "tool_call_id": call_id });
    }
    let p = common::xagent::packet("tool.invoke", Some(ch), payload, n);
    x.send_text(&p.to_string()).await;
}

/// The acks of packets `ns`, by packet number, read off the socket (≤ 30 s).
async fn acks_of(x: &mut XAgent, ns: &[u64]) -> std::collections::HashMap<u64, Value> {
    let mut acks = std::collections::HashMap::new();
    while acks.len() < ns.len() {
        let p = x.recv_within(30).await.expect("an ack");
        let n = p["reply_to"]
            .as_str()
            .and_then(|r| r.strip_prefix("pkt_test_"))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(n) = n.filter(|n| ns.contains(n)) {
            acks.insert(n, p);
        }
    }
    acks
}

/// Device Profile §5: side-effecting calls sent back-to-back on one channel, without waiting
/// for the acks, run on the phone in the order they were sent (fresh-user finding: six taps
/// x=100..105 ran as 105, 102, 100, 101, 103, 104 — each call's task reached the lock in the
/// scheduler's order). Mixed tools too. Three calls sharing one `tool_call_id`: the first runs,
/// the second (same arguments, keys reordered) gets its result, the third (other arguments) is
/// refused — in that order, every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn back_to_back_side_effects_run_in_the_order_sent() {
    let mut phone = claimed_sim("SIMORDER00001", &[]).await;
    let log = || phone.sim.state()["command_log"].as_array().unwrap().clone();
    for round in 0..3u64 {
        let before = log().len();
        let first = 9000 + round * 100;
        let mut sent = Vec::new();
        for i in 0..6u64 {
            let n = first + i;
            send_call(
                &mut phone.x,
                &phone.ch,
                "android_tap",
                json!({"x": 100 + i, "y": 200 + round}),
                "",
                n,
            )
            .await;
            sent.push(n);
        }
        send_call(
            &mut phone.x,
            &phone.ch,
            "android_press_key",
            json!({"key": "enter"}),
            "",
            first + 6,
        )
        .await;
        send_call(
            &mut phone.x,
            &phone.ch,
            "android_tap",
            json!({"x": 199, "y": 200 + round}),
            "",
            first + 7,
        )
        .await;
        sent.extend([first + 6, first + 7]);
        for (n, ack) in acks_of(&mut phone.x, &sent).await {
            assert!(ack.get("error").is_none(), "{n}: {ack}");
        }
        let ran: Vec<String> = log()[before..]
            .iter()
            .filter(|e| e["argv"][0] == "input")
            .map(|e| {
                let argv: Vec<&str> = e["argv"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                argv[1..].join(" ")
            })
            .collect();
        let y = 200 + round;
        let mut expected: Vec<String> = (100..106).map(|x| format!("tap {x} {y}")).collect();
        expected.extend(["keyevent 66".to_string(), format!("tap 199 {y}")]);
        assert_eq!(ran, expected, "round {round}");
    }
    // 24 calls came in a burst of the 30 the channel's rate allows; let the bucket refill.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for round in 0..3u64 {
        let id = format!("same_{round}");
        let first = 9500 + round * 10;
        send_call(
            &mut phone.x,
            &phone.ch,
            "android_tap",
            json!({"x": 5, "y": 5 + round}),
            &id,
            first,
        )
        .await;
        send_call(
            &mut phone.x,
            &phone.ch,
            "android_tap",
            json!({"y": 5 + round, "x": 5}),
            &id,
            first + 1,
        )
        .await;
        send_call(
            &mut phone.x,
            &phone.ch,
            "android_tap",
            json!({"x": 7, "y": 5 + round}),
            &id,
            first + 2,
        )
        .await;
        let acks = acks_of(&mut phone.x, &[first, first + 1, first + 2]).await;
        let (a, b, c) = (&acks[&first], &acks[&(first + 1)], &acks[&(first + 2)]);
        assert!(a.get("error").is_none(), "{a}");
        assert_eq!(b["payload"], a["payload"], "{b}");
        assert_eq!(c["error"]["code"], "invalid_arguments", "{c}");
    }
}
