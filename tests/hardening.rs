//! Hardening found by an attack run from outside (issue 19 §3), each through the real binary:
//! L1 the wrong-claim-code pause survives a restart; L3 a frame that fails to decode still has
//! its ids echoed; L5 half-sent request heads do not stall other clients; L6 storage errors
//! name their cause and path; L7 a database file that is empty or not SQLite refuses to start.

mod common;

use serde_json::{json, Value};

use common::procs::{ConnectorProc, Phones, TempDir};
use common::xagent::connect;

fn code(p: &Value) -> &str {
    p["error"]["code"].as_str().unwrap_or("")
}

/// L3: a frame that fails to decode for any reason — a number out of range, nesting past the
/// parser's limit, a duplicate key, a wrong type elsewhere, trailing text, a frame cut short —
/// but whose `packet_id`/`request_id` can be read is answered `invalid_packet` with them echoed
/// (the attack run's `"time":1e400` came back without them).
#[tokio::test]
async fn l3_undecodable_frames_echo_their_ids() {
    let dir = TempDir::new("l3");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![]));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let head = |n: usize| {
        format!(
            r#""schema":"xagent.connector.packet/v1","packet_id":"pkt_l3_{n}","request_id":"req_l3_{n}""#
        )
    };
    let frames = [
        format!(r#"{{{},"type":"ping","time":1e400}}"#, head(0)),
        format!(r#"{{"time":-1e999999,{},"type":"ping"}}"#, head(1)),
        format!(
            r#"{{{},"type":"ping","payload":{{"a":{}1{}}}}}"#,
            head(2),
            "[".repeat(300),
            "]".repeat(300)
        ),
        format!(r#"{{{},"type":"ping","type":"pong"}}"#, head(3)),
        format!(r#"{{{},"type":"ping","time":"yesterday"}}"#, head(4)),
        format!(r#"{{{},"type":"ping","connector_channel_id":7}}"#, head(5)),
        format!(r#"{{{},"type":"ping"}} {{"more":1}}"#, head(6)),
        format!(r#"{{{},"type":"ping","payload":{{"text":"cut"#, head(7)),
        format!(r#"{{{},"type":"ping","payload":{{"s":"\ud800"}}}}"#, head(8)),
    ];
    for (n, frame) in frames.iter().enumerate() {
        x.send_text(frame).await;
        let e = x.recv_within(5).await.expect("an error packet");
        assert_eq!(
            (e["type"].as_str(), code(&e)),
            (Some("error"), "invalid_packet"),
            "frame {n}: {e}"
        );
        assert_eq!(
            (e["reply_to"].as_str(), e["request_id"].as_str()),
            (
                Some(format!("pkt_l3_{n}").as_str()),
                Some(format!("req_l3_{n}").as_str())
            ),
            "frame {n} ({}…): {e}",
            &frame[..frame.len().min(120)]
        );
    }
    // Ids given twice with different values are no one request's: not echoed.
    x.send_text(r#"{"packet_id":"a","packet_id":"b","request_id":"req_l3_dup","time":1e400}"#)
        .await;
    let e = x.recv_within(5).await.expect("an error packet");
    assert_eq!(code(&e), "invalid_packet", "{e}");
    assert!(e.get("reply_to").is_none(), "{e}");
    assert_eq!(e["request_id"], json!("req_l3_dup"), "{e}");
    let pong = x.request("ping", None, json!({})).await;
    assert_eq!(pong["type"], "pong", "socket still usable");
}
