//! Device Profile §5: distinct, stable error codes for a command timeout and a permission denied
//! on the phone; after a timeout the stream is closed and the channel stays usable (field bug 20).

mod common;

use std::time::Instant;

use serde_json::json;

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claim_when_visible;
use common::xagent::connect;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn device_timeout_and_permission_denied_are_distinct_and_the_channel_survives() {
    let sim = SimPhone::start_with_control("SIMERRORS0029", &[]);
    let dir = TempDir::new("deverr");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    let (ch, _) = x.open(None).await;
    claim_when_visible(&mut x, &ch, &sim.serial).await;
    x.tool(&ch, "android_tap", json!({"x": 1, "y": 1})).await; // display size cached
                                                               // A tap that never returns nor closes: the 5 s deadline ends it.
    assert_eq!(
        sim.control_post(
            "/v1/script",
            json!({"command_regex": "input.*tap.*'5' '6'", "hang": true})
        ),
        200
    );
    let t = Instant::now();
    let ack = x.tool(&ch, "android_tap", json!({"x": 5, "y": 6})).await;
    assert_eq!(ack["error"]["code"], "device_timeout", "{ack}");
    assert!(
        ack["error"]["message"]
            .as_str()
            .unwrap()
            .contains("shell: 'input'"),
        "{ack}"
    );
    let waited = t.elapsed().as_secs_f64();
    assert!(
        (4.5..9.0).contains(&waited),
        "deadline honoured: {waited:.1} s"
    );
    // Permission denied on the phone.
    assert_eq!(
        sim.control_post("/v1/script", json!({"command_regex": "input.*keyevent",
            "stderr": "java.lang.SecurityException: Injecting input events requires the caller (or the source of the instrumentation, if any) to have the INJECT_EVENTS permission.\n",
            "exit_code": 1})),
        200
    );
    let ack = x
        .tool(&ch, "android_press_key", json!({"key": "back"}))
        .await;
    assert_eq!(ack["error"]["code"], "device_permission_denied", "{ack}");
    // The channel is still usable.
    let ack = x.tool(&ch, "android_tap", json!({"x": 7, "y": 8})).await;
    assert!(ack.get("error").is_none(), "{ack}");
    let st = x.tool(&ch, "android_device_status", json!({})).await;
    assert!(st.get("error").is_none(), "{st}");
}
