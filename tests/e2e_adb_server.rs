//! End to end through real adb servers: simulated phone ← `adb connect` ← Google adb 34 /
//! Debian adb 29 (private ports) ← connector ← xAgent client over WebSocket.

mod common;

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};

async fn through(flavor: AdbFlavor) {
    let sim = SimPhone::start("SIMADB0000042");
    let adb = AdbServer::start(flavor);
    adb.connect(&sim.addr);
    let dir = TempDir::new("e2e-adb");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let t = common::scenario::walking_skeleton(&conn.addr, &sim.serial).await;
    println!(
        "{flavor:?}: screenshot round trip {:.1} ms, tap round trip {:.1} ms",
        t.screenshot_ms, t.tap_ms
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walking_skeleton_through_google_adb_34() {
    through(AdbFlavor::Google34).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn walking_skeleton_through_debian_adb_29() {
    through(AdbFlavor::Debian29).await;
}

/// An Android 6 phone's adbd takes requests of at most 4096 bytes (AOSP `adb.h`
/// `MAX_PAYLOAD_V1`): a longer one drops its transport, and an adb server sending one aborts
/// (`sockets.cpp` `connect_to_remote`), taking every phone on it along. Text whose quoted
/// `input text` line is longer is typed in several requests, each within the limit, and
/// arrives exactly; a request that cannot be split (a 4000-character URL) is refused as
/// `invalid_arguments` naming the limit, nothing sent. The adb server keeps running and the
/// phone stays attached. Also over the direct transport (the limit negotiated in `CNXN`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_over_an_android_6_phones_max_payload_are_split_or_refused_never_sent() {
    use common::scenario::{claimed_channel, focus_note};
    use serde_json::json;
    let sim = SimPhone::start_with_control("SIMMAXPAY0006", &["--persona", "legacy-android6"]);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&sim.addr);
    let dir = TempDir::new("maxpayload");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let direct = TempDir::new("maxpayload-direct");
    let conn_direct = ConnectorProc::start(direct.path(), Phones::Direct(vec![sim.addr.clone()]));
    // 1500 quotes: each is written '\'' on the phone's command line, over 4096 bytes in all.
    let long = format!("{}end", "'".repeat(1500));
    let url = format!("https://example.com/{}", "a".repeat(4000));
    let log = || sim.state()["command_log"].as_array().unwrap().clone();
    for addr in [&conn.addr, &conn_direct.addr] {
        let (mut x, ch) = claimed_channel(addr, &sim.serial).await;
        focus_note(&mut x, &ch).await;
        let before = log().len();
        let ack = x
            .tool(
                &ch,
                "android_input_text",
                json!({ "text": long, "clear_first": true }),
            )
            .await;
        assert!(ack.get("error").is_none(), "{ack}");
        assert_eq!(
            ack["payload"]["result"]["verified"],
            true,
            "through {addr}: {ack}; the phone ran {:?}",
            log()[before..]
                .iter()
                .map(|e| e["argv"].to_string().chars().take(80).collect::<String>())
                .collect::<Vec<_>>()
        );
        assert_eq!(sim.state()["note_text"], json!(long));
        let texts = log()[before..]
            .iter()
            .filter(|e| e["argv"][0] == "input" && e["argv"][1] == "text")
            .count();
        assert!(texts >= 2, "typed in several requests: {texts}");

        let before = log().len();
        let ack = x.tool(&ch, "android_open_url", json!({ "url": url })).await;
        assert_eq!(ack["error"]["code"], "invalid_arguments", "{ack}");
        let message = ack["error"]["message"].as_str().unwrap();
        assert!(message.contains("4096"), "{message}");
        let ran: Vec<_> = log()[before..]
            .iter()
            .filter(|e| e["argv"][0] == "am")
            .cloned()
            .collect();
        assert!(ran.is_empty(), "nothing started: {ran:?}");
        let before = log().len();
        x.request("auth.logout", Some(&ch), json!({})).await;
        // The hand-back (docs/operator.md, release) presses HOME once the binding ends; the
        // next connector's claim of the same phone must not have it land mid-typing.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !log()[before..]
            .iter()
            .any(|e| e["argv"] == json!(["input", "keyevent", "KEYCODE_HOME"]))
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the release pressed HOME"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
    let listed = adb.run(&["devices"]);
    assert!(listed.status.success(), "the adb server still runs");
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains(&format!("{}\tdevice", sim.addr)),
        "{listed:?}"
    );
}
