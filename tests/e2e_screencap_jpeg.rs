//! Issue 20 §6 end to end: screenshots over slow links take the phone's JPEG (`screencap -j`,
//! Android 16), raw frames over USB stay. Real binary, WebSocket, simulated phones: over the
//! direct wireless transport (paired with a code, TLS) an SDK 36 persona answers `-j` with a
//! JPEG (`backend: "jpeg_phone"`, the stored bytes are the phone's); an SDK 34 persona answers
//! it with its usage, which is seen once per build fingerprint and the old path (the phone's
//! PNG) taken from then on; through an adb server that lists the phone as USB, the raw frame.

mod common;

use serde_json::{json, Value};

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::{claim_when_visible, connector_behind};
use common::usb_listing::{self, Renames};
use common::wireless::pair_code_input;
use common::xagent::{connect, http_get, XAgent};

fn ok(ack: &Value) -> Value {
    assert!(ack.get("error").is_none(), "{ack}");
    ack["payload"]["result"].clone()
}

/// A wireless-debugging sim of `persona`, a connector, and a channel bound to the phone by
/// pairing with a code (the direct wireless transport).
async fn paired(serial: &str, persona: &str) -> (SimPhone, ConnectorProc, XAgent, String, TempDir) {
    let dir = TempDir::new(&format!("jpeg-{}", serial.to_lowercase()));
    let state = dir.path().join("sim-state");
    std::fs::create_dir_all(&state).unwrap();
    let sim = SimPhone::start_with_control(
        serial,
        &[
            "--wireless",
            "--state-dir",
            state.to_str().unwrap(),
            "--persona",
            persona,
        ],
    );
    let conn = ConnectorProc::start_with(dir.path(), Phones::Direct(vec![]), &[]);
    let mut x = connect(&conn.addr).await;
    x.hello_fresh().await;
    let (ch, _) = x.open(None).await;
    let code = "314159";
    let ports = sim.control_json("/v1/pair", json!({ "code": code }));
    let input = pair_code_input(&ports, code, Some(ports["connect_port"].to_string().into()));
    let ack = x
        .request(
            "auth.start",
            Some(&ch),
            json!({"flow_id": "adb_pair_code", "input": input}),
        )
        .await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    (sim, conn, x, ch, dir)
}

fn stored(conn: &ConnectorProc, r: &Value) -> (String, Vec<u8>) {
    let (st, ctype, body) = http_get(
        &format!("{}{}", conn.base, r["download_url"].as_str().unwrap()),
        None,
    );
    assert_eq!(st, 200);
    (ctype, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn android_16_over_wireless_debugging_sends_its_own_jpeg() {
    let (sim, conn, mut x, ch, _dir) = paired("SIMJPEG360001", "pixel-android16").await;
    let r = ok(&x
        .tool(&ch, "android_screenshot", json!({"format": "jpeg"}))
        .await);
    assert_eq!(r["backend"], "jpeg_phone", "{r}");
    assert_eq!(r["mime_type"], "image/jpeg", "{r}");
    let (ctype, body) = stored(&conn, &r);
    assert_eq!(ctype, "image/jpeg");
    assert_eq!(&body[..3], [0xFF, 0xD8, 0xFF]);
    assert_eq!(
        (r["width"].clone(), r["height"].clone()),
        (
            r["display"]["width"].clone(),
            r["display"]["height"].clone()
        ),
        "{r}"
    );
    // Known for this build now: the next one asks for the JPEG at once, the fingerprint is
    // not read again.
    let r = ok(&x
        .tool(&ch, "android_screenshot", json!({"format": "jpeg"}))
        .await);
    assert_eq!(r["backend"], "jpeg_phone", "{r}");
    assert_eq!(sim.count_runs(&["screencap", "-j"]), 2);
    assert_eq!(sim.count_runs(&["getprop", "ro.build.fingerprint"]), 1);
    // The default PNG is still the phone's PNG as it is; a downscale needs pixels: PNG too.
    let r = ok(&x.tool(&ch, "android_screenshot", json!({})).await);
    assert_eq!(r["backend"], "png", "{r}");
    let r = ok(&x
        .tool(
            &ch,
            "android_screenshot",
            json!({"format": "jpeg", "max_dimension": 640}),
        )
        .await);
    assert_eq!(r["backend"], "png", "{r}");
    assert_eq!(sim.count_runs(&["screencap", "-j"]), 2);
    // An observation over the same link takes the same screenshot path.
    let r = ok(&x
        .tool(&ch, "android_observe", json!({"format": "jpeg"}))
        .await);
    assert_eq!(r["backend"], "uiautomator_tty+jpeg_phone", "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn android_14_refuses_the_flag_once_and_keeps_its_png() {
    let (sim, conn, mut x, ch, _dir) = paired("SIMJPEG340001", "pixel-android14").await;
    for _ in 0..2 {
        let r = ok(&x
            .tool(&ch, "android_screenshot", json!({"format": "jpeg"}))
            .await);
        assert_eq!(r["backend"], "png", "{r}");
        let (ctype, body) = stored(&conn, &r);
        assert_eq!(ctype, "image/jpeg");
        assert_eq!(&body[..3], [0xFF, 0xD8, 0xFF]);
    }
    // Tried once for this build fingerprint, never again.
    assert_eq!(sim.count_runs(&["screencap", "-j"]), 1);
    assert_eq!(sim.count_runs(&["screencap", "-p"]), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_usb_the_raw_frame_stays_on_android_16() {
    let adb = AdbServer::start(AdbFlavor::Google34);
    let sim = SimPhone::start_with_control("SIMJPEGUSB01", &["--persona", "pixel-android16"]);
    adb.connect(&sim.addr);
    let renames = Renames::default();
    renames.add(&sim.addr, "SIMJPEGUSB01");
    let listing = usb_listing::start(adb.addr(), renames).await;
    let (_dir, _conn, mut x) =
        connector_behind("jpegusb", &listing, &["--claim-policy", "open"]).await;
    let (ch, _) = x.open(None).await;
    let ack = claim_when_visible(&mut x, &ch, "SIMJPEGUSB01").await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    let r = ok(&x
        .tool(&ch, "android_screenshot", json!({"format": "jpeg"}))
        .await);
    assert_eq!(r["backend"], "raw", "{r}");
    assert_eq!(sim.count_runs(&["screencap", "-j"]), 0);
    assert_eq!(sim.count_runs(&["screencap"]), 1);
}
