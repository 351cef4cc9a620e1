//! Which `screencap` a screenshot is made from (`src/device/tools/phone/capture/source.rs`),
//! through the real wire: the connector binary, simulated phones on the direct transport, the
//! sim's command log, and the stored images fetched over HTTP. Loopback phones are "local":
//! re-encoded screenshots come from the raw framebuffer; the PNG passthrough always from
//! `screencap -p`; a device profile's `quirks.screenshot_capture = "png"` forces the PNG.

mod common;

use serde_json::{json, Value};

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::scenario::claimed_channel;
use common::xagent::http_get;

fn ok(ack: &Value) -> &Value {
    assert!(ack.get("error").is_none(), "{ack}");
    &ack["payload"]["result"]
}

/// RGBA pixels and size of a stored PNG, fetched over HTTP.
fn fetch_png(conn: &ConnectorProc, r: &Value) -> (Vec<u8>, u32, u32) {
    let (st, ctype, body) = http_get(
        &format!("{}{}", conn.base, r["download_url"].as_str().unwrap()),
        None,
    );
    assert_eq!((st, ctype.as_str()), (200, "image/png"));
    let mut reader = png::Decoder::new(std::io::Cursor::new(body))
        .read_info()
        .unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (buf, info.width, info.height)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_frame_for_re_encoding_png_for_passthrough_same_pixels_either_way() {
    let raw_sim = SimPhone::start_with_control("SHOTSRC00001", &[]);
    let png_sim = SimPhone::start_with_control("SHOTSRC00002", &["--model", "PNGSOURCE"]);
    let dir = TempDir::new("shotsrc");
    let profiles = dir.path().join("profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::write(
        profiles.join("default.toml"),
        include_str!("../device-profiles/default.toml"),
    )
    .unwrap();
    std::fs::write(
        profiles.join("png.toml"),
        "[match]\nmodel = \"PNGSOURCE\"\n\n[quirks]\nscreenshot_capture = \"png\"\n",
    )
    .unwrap();
    let conn = ConnectorProc::start_with(
        dir.path(),
        Phones::Direct(vec![raw_sim.addr.clone(), png_sim.addr.clone()]),
        &[
            "--claim-policy",
            "open",
            "--device-profiles",
            profiles.to_str().unwrap(),
        ],
    );
    let (mut x, ch) = claimed_channel(&conn.addr, &raw_sim.serial).await;
    let (mut y, ch_png) = claimed_channel(&conn.addr, &png_sim.serial).await;

    // The agent-size JPEG from a local phone: the raw dump, never the phone's PNG encode.
    let r = ok(&x
        .tool(
            &ch,
            "android_screenshot",
            json!({"format": "jpeg", "max_dimension": 1280}),
        )
        .await)
    .clone();
    assert_eq!(
        (r["width"].as_u64(), r["height"].as_u64()),
        (Some(576), Some(1280))
    );
    assert_eq!(
        (r["mime_type"].as_str(), r["blank"].as_bool()),
        (Some("image/jpeg"), Some(false))
    );
    assert_eq!(raw_sim.count_runs(&["screencap"]), 1);
    assert_eq!(raw_sim.count_runs(&["screencap", "-p"]), 0);

    // The passthrough stays `screencap -p`, bytes as captured.
    let r = ok(&x.tool(&ch, "android_screenshot", json!({})).await).clone();
    assert_eq!(r["mime_type"], "image/png");
    assert_eq!(raw_sim.count_runs(&["screencap", "-p"]), 1);
    let (full, w, h) = fetch_png(&conn, &r);
    assert_eq!((w, h), (1080, 2400));

    // A downscaled PNG from the raw frame and from the phone's PNG: identical pixels (both
    // pipelines resize the same frame the same way; PNG is lossless).
    let small = json!({"format": "png", "max_dimension": 600});
    let from_raw = ok(&x.tool(&ch, "android_screenshot", small.clone()).await).clone();
    let from_png = ok(&y.tool(&ch_png, "android_screenshot", small).await).clone();
    assert_eq!(raw_sim.count_runs(&["screencap"]), 2);
    assert_eq!(
        png_sim.count_runs(&["screencap"]),
        0,
        "the profile forces -p"
    );
    assert_eq!(png_sim.count_runs(&["screencap", "-p"]), 1);
    let (a, aw, ah) = fetch_png(&conn, &from_raw);
    let (b, bw, bh) = fetch_png(&conn, &from_png);
    assert_eq!((aw, ah), (270, 600));
    assert_eq!((aw, ah), (bw, bh));
    assert!(a == b, "raw and PNG sources gave different pixels");
    // Not a black or uniform frame: the launcher is drawn.
    assert!(full.chunks(4).any(|p| p[..3] != full[..3]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_capture_on_a_foldable_skips_the_warning_and_captures_the_chosen_display() {
    let sim = SimPhone::start_with_control(
        "SHOTSRC00003",
        &["--persona", "foldable-android14", "--model", ""],
    );
    let dir = TempDir::new("shotsrc-fold");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    let r = ok(&x
        .tool(
            &ch,
            "android_screenshot",
            json!({"format": "jpeg", "max_dimension": 1024}),
        )
        .await)
    .clone();
    let id = r["display"]["id"]
        .as_str()
        .expect("display reported")
        .to_string();
    // The first capture printed the multi-display warning before the raw header; the tool
    // chose a display and captured it with -d, still raw.
    assert_eq!(sim.count_runs(&["screencap"]), 1);
    assert_eq!(sim.count_runs(&["screencap", "-d", &id]), 1);
    assert_eq!(sim.count_runs(&["screencap", "-p"]), 0);
    // Inner display 1840x2208 fitted into 1024.
    assert_eq!(
        (r["width"].as_u64(), r["height"].as_u64()),
        (Some(853), Some(1024))
    );
}

/// A display too large to re-encode on the box (its raw frame over the 64 MiB cap, ~16 Mpx) is
/// refused as `invalid_arguments` naming what works — the phone's own PNG, passed through — as
/// soon as the frame's header announces its size (field report: it was `device_command_failed`
/// "device output exceeded 67108864 bytes" after 64 MiB had crossed the wire). The passthrough
/// of that display works, and re-encoding works again once the size is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_display_too_large_to_re_encode_is_refused_naming_the_passthrough() {
    let sim = SimPhone::start_with_control("SHOTSRC00003", &[]);
    let dir = TempDir::new("shotsrc-big");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let (mut x, ch) = claimed_channel(&conn.addr, "SHOTSRC00003").await;
    let big = json!({"override_size": "3000x7200"});
    assert_eq!(sim.control_post("/v1/state", big), 200);
    let jpeg = json!({"format": "jpeg", "max_dimension": 1000});
    let ack = x.tool(&ch, "android_screenshot", jpeg.clone()).await;
    assert_eq!(ack["error"]["code"], "invalid_arguments", "{ack}");
    let message = ack["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("format png without max_dimension"),
        "{message}"
    );
    let passthrough = x.tool(&ch, "android_screenshot", json!({})).await;
    let r = ok(&passthrough);
    let pixels = r["width"].as_u64().unwrap() * r["height"].as_u64().unwrap();
    assert!(pixels * 4 > 64 << 20, "{r}");
    let reset = json!({"override_size": "reset"});
    assert_eq!(sim.control_post("/v1/state", reset), 200);
    let again = x.tool(&ch, "android_screenshot", jpeg).await;
    assert_eq!(ok(&again)["mime_type"], "image/jpeg");
}
