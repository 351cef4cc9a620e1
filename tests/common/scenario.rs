//! The walking-skeleton scenario, played by xAgent over the real wire against a connector that
//! reaches a simulated phone (through an adb server or directly).
#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::adb_server::{AdbFlavor, AdbServer};
use super::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use super::schemas::{assert_card, assert_descriptor};
use super::xagent::{connect, http_get, XAgent};
use super::API_KEY;

/// Simulated phones (control API on), one per serial of `serials` (repeats allowed: phones
/// sharing a serial), all `adb connect`ed to one private Google adb 34 server.
pub fn sims_behind_adb34(serials: &[&str]) -> (Vec<SimPhone>, AdbServer) {
    let sims: Vec<SimPhone> = serials
        .iter()
        .map(|s| SimPhone::start_with_control(s, &[]))
        .collect();
    let adb = AdbServer::start(AdbFlavor::Google34);
    for sim in &sims {
        adb.connect(&sim.addr);
    }
    (sims, adb)
}

/// A connector (data dir tagged `tag`, `extra` flags after `--adb-server adb_server`) and a
/// client after its hello.
pub async fn connector_behind(
    tag: &str,
    adb_server: &str,
    extra: &[&str],
) -> (TempDir, ConnectorProc, XAgent) {
    let dir = TempDir::new(tag);
    let conn = ConnectorProc::start_with(dir.path(), Phones::AdbServer(adb_server.into()), extra);
    let mut x = connect(&conn.addr).await;
    x.hello("").await;
    (dir, conn, x)
}

/// Claims `serial`, retrying while the connector has not yet seen the phone (≤ 15 s).
pub async fn claim_when_visible(x: &mut XAgent, channel: &str, serial: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let ack = x.claim(channel, serial).await;
        if ack.get("error").is_none() || Instant::now() > deadline {
            return ack;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A client on the connector at `addr`: hello, one new channel, `serial` claimed (asserted
/// `authenticated`). Returns the client and the channel id.
pub async fn claimed_channel(addr: &str, serial: &str) -> (XAgent, String) {
    let (x, ch, _) = claimed_channel_with_id(addr, serial).await;
    (x, ch)
}

/// [`claimed_channel`], also returning the `connector_id` the hello was given (for a re-hello
/// that restores the channel).
pub async fn claimed_channel_with_id(addr: &str, serial: &str) -> (XAgent, String, String) {
    let mut x = connect(addr).await;
    let id = x.hello_fresh().await;
    let (ch, _) = x.open(None).await;
    let ack = claim_when_visible(&mut x, &ch, serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    (x, ch, id)
}

/// A simulated phone (control API on) reached directly by a connector of its own, and a client
/// (after its hello) with a channel open: where most tool and claim tests start. Dropping it
/// stops the connector and the phone and removes the connector's data dir.
pub struct DirectSim {
    pub sim: SimPhone,
    pub conn: ConnectorProc,
    pub x: XAgent,
    /// The open channel: the phone claimed on it by [`claimed_sim`], not by [`code_gated_sim`].
    pub ch: String,
    /// The `connector_id` the hello was given (for a re-hello that restores the channel).
    pub connector_id: String,
    pub dir: TempDir,
}

/// A phone behind its own Google adb 34 server, claimed on a fresh channel. Dropping it stops
/// the connector, the adb server and the phone and removes the connector's data dir.
pub struct AdbBench {
    pub sim: SimPhone,
    pub x: XAgent,
    pub ch: String,
    pub conn: ConnectorProc,
    pub adb: AdbServer,
    pub _dir: TempDir,
}

/// A sim started with `sim_flags`, connected to its own Google adb 34 server, a connector
/// reaching it through that server, and the phone claimed on a fresh channel.
pub async fn adb_bench(serial: &str, sim_flags: &[&str]) -> AdbBench {
    let sim = SimPhone::start_with_control(serial, sim_flags);
    let adb = AdbServer::start(AdbFlavor::Google34);
    adb.connect(&sim.addr);
    let dir = TempDir::new("fbadb");
    let conn = ConnectorProc::start(dir.path(), Phones::AdbServer(adb.addr()));
    let (x, ch) = claimed_channel(&conn.addr, &sim.serial).await;
    AdbBench {
        sim,
        x,
        ch,
        conn,
        adb,
        _dir: dir,
    }
}

/// Starts a sim as `serial` with `sim_flags` (`--persona …`), a connector reaching it over the
/// direct transport (claim policy open), and claims it (asserted `authenticated`, retried while
/// the connector has not yet seen the phone, ≤ 15 s).
pub async fn claimed_sim(serial: &str, sim_flags: &[&str]) -> DirectSim {
    let sim = SimPhone::start_with_control(serial, sim_flags);
    let dir = TempDir::new("claimed-sim");
    let conn = ConnectorProc::start(dir.path(), Phones::Direct(vec![sim.addr.clone()]));
    let mut phone = open_channel_on(sim, conn, dir).await;
    let ack = claim_when_visible(&mut phone.x, &phone.ch, &phone.sim.serial).await;
    assert_eq!(ack["payload"]["status"], "authenticated", "{ack}");
    phone
}

/// Starts a sim as `serial` and a connector reaching it over the direct transport with claim
/// policy `code` and `claim_code` as the phone's claim code
/// ([`ConnectorProc::start_with_claim_code`]); the client has said hello and opened a channel
/// but claimed nothing.
pub async fn code_gated_sim(serial: &str, claim_code: &str) -> DirectSim {
    let sim = SimPhone::start_with_control(serial, &[]);
    let dir = TempDir::new("code-gated-sim");
    let conn = ConnectorProc::start_with_claim_code(
        dir.path(),
        Phones::Direct(vec![sim.addr.clone()]),
        &sim.serial,
        claim_code,
        &[],
    );
    let mut phone = open_channel_on(sim, conn, dir).await;
    until_code_asked(&mut phone.x, &phone.ch, &phone.sim.serial).await;
    phone
}

/// Waits (≤ 15 s) until the connector sees `serial` under claim policy `code`: until then a
/// claim is "no attached phone" (never a counted wrong code), so a test counting wrong codes
/// waits first, with code-less claims — a form error, which counts nothing either.
pub async fn until_code_asked(x: &mut XAgent, ch: &str, serial: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let e = x
            .request(
                "auth.start",
                Some(ch),
                json!({"flow_id": "adb_device_claim", "input": {"serial": serial}}),
            )
            .await;
        let message = e["error"]["message"].as_str().unwrap_or_default();
        if message.contains("`claim_code` is required") {
            return;
        }
        assert!(Instant::now() < deadline, "the phone never showed: {e}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A client on `conn`: hello as a new connector, one new channel; nothing claimed.
async fn open_channel_on(sim: SimPhone, conn: ConnectorProc, dir: TempDir) -> DirectSim {
    let mut x = connect(&conn.addr).await;
    let connector_id = x.hello_fresh().await;
    let (ch, _) = x.open(None).await;
    DirectSim {
        sim,
        conn,
        x,
        ch,
        connector_id,
        dir,
    }
}

/// Opens the sim's Notes app and focuses its EditText through the tools (`android_ui_tree`,
/// then taps by element and by resource id).
pub async fn focus_note(x: &mut XAgent, ch: &str) {
    let tree = x.tool(ch, "android_ui_tree", json!({})).await;
    let notes = find_text(&elements(&tree), "Notes").expect("Notes icon");
    x.tool(ch, "android_tap", json!({"element_id": notes["element_id"], "snapshot_id": tree["payload"]["result"]["snapshot_id"]})).await;
    let ack = x
        .tool(
            ch,
            "android_tap",
            json!({"resource_id": "com.example.notes:id/note_text"}),
        )
        .await;
    assert!(ack.get("error").is_none(), "{ack}");
}

/// Waits until `sim` (control API, `--require-auth`) shows a host key offered and not yet
/// accepted (`GET /v1/auth` `pending` = 1), polling 100 × 100 ms; panics if it never does.
pub async fn wait_key_offered(sim: &SimPhone) {
    for _ in 0..100 {
        if sim.control_get("/v1/auth")["pending"] == 1 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the connector never offered its key");
}

/// The connector's adb key (`data_dir/adbkey`) as texts no log line or ack may hold: the
/// public key's base64 (as adbd stores it) and one body line of the private key's PEM.
pub async fn adb_key_secrets(data_dir: &Path) -> (String, String) {
    let key = xagent_adb_connector::adb::HostKeyFile::new(data_dir.join("adbkey"))
        .get()
        .await
        .expect("the connector's adb key");
    let public = key.key().public_key_line();
    let public = public.split_whitespace().next().expect("base64 key");
    let pem = std::fs::read_to_string(data_dir.join("adbkey")).expect("adbkey");
    let private = pem
        .lines()
        .find(|l| !l.starts_with("-----") && l.len() > 40)
        .expect("a PEM body line");
    (public.to_string(), private.to_string())
}

/// Elements of an `android_ui_tree` result.
pub fn elements(ack: &Value) -> Vec<Value> {
    ack["payload"]["result"]["elements"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The element whose `text` equals `text`.
pub fn find_text(elems: &[Value], text: &str) -> Option<Value> {
    elems.iter().find(|e| e["text"] == text).cloned()
}

/// The first element of `class`.
pub fn find_class(elems: &[Value], class: &str) -> Option<Value> {
    elems.iter().find(|e| e["class"] == class).cloned()
}

/// Round-trip times measured by the scenario (ms).
#[derive(Debug, Default)]
pub struct Timings {
    /// `android_screenshot` ack round trip.
    pub screenshot_ms: f64,
    /// `android_tap` ack round trip.
    pub tap_ms: f64,
}

/// Plays the whole path: card/skill/health, hello, open, claim, status, screenshot (downloaded
/// and decoded), UI tree → tap Notes → tap its EditText → type → UI tree shows the text.
pub async fn walking_skeleton(addr: &str, serial: &str) -> Timings {
    let base = format!("http://{addr}");
    let (st, ctype, body) = http_get(&format!("{base}/connector-card.json"), None);
    assert_eq!(st, 200);
    assert!(ctype.starts_with("application/json"));
    let card: Value = serde_json::from_slice(&body).unwrap();
    assert_card(&card);
    let (st, _, skill) = http_get(&format!("{base}/skill.md"), None);
    assert_eq!(st, 200);
    assert!(String::from_utf8_lossy(&skill).contains("name: connector-device-adb"));
    let (st, _, health) = http_get(&format!("{base}/health"), Some(API_KEY));
    assert_eq!(st, 200);
    let health: Value = serde_json::from_slice(&health).unwrap();
    assert_eq!(health["build"], card["build"]);

    let mut x = connect(addr).await;
    let hello = x.hello("").await;
    assert!(hello["payload"]["connector_id"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    let (ch, open) = x.open(None).await;
    assert_eq!(
        open["payload"]["connection_descriptor"]["connection"]["status"],
        "created"
    );

    let ack = claim_when_visible(&mut x, &ch, serial).await;
    assert!(ack.get("error").is_none(), "claim failed: {ack}");
    assert_eq!(ack["payload"]["status"], "authenticated");
    let d = &ack["payload"]["connection_descriptor"];
    assert_descriptor(d);
    assert_eq!(d["connection"]["status"], "connected");
    assert!(
        !d.to_string().contains(serial),
        "descriptor must not carry the full serial"
    );
    assert!(d["target"]["display_name"]
        .as_str()
        .unwrap()
        .contains("Pixel"));
    for t in d["tools"].as_array().unwrap() {
        assert_eq!(t["status"], "available");
    }

    let status = x.tool(&ch, "android_device_status", json!({})).await;
    let r = &status["payload"]["result"];
    assert!(status.get("error").is_none(), "{status}");
    assert!(r["model"].as_str().unwrap().contains("Pixel"), "{r}");
    assert!(r["display"]["width"].as_u64().unwrap() > 0, "{r}");

    let t0 = Instant::now();
    let shot = x.tool(&ch, "android_screenshot", json!({})).await;
    let screenshot_ms = t0.elapsed().as_secs_f64() * 1e3;
    assert!(shot.get("error").is_none(), "{shot}");
    let r = &shot["payload"]["result"];
    assert_eq!(r["mime_type"], "image/png");
    let url = format!("{base}{}", r["download_url"].as_str().unwrap());
    let (st, ctype, png_bytes) = http_get(&url, None);
    assert_eq!(st, 200);
    assert_eq!(ctype, "image/png");
    assert_eq!(png_bytes.len() as u64, r["byte_size"].as_u64().unwrap());
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let reader = decoder.read_info().expect("valid PNG");
    assert_eq!(u64::from(reader.info().width), r["width"].as_u64().unwrap());
    assert_eq!(
        u64::from(reader.info().height),
        r["height"].as_u64().unwrap()
    );

    let tree = x.tool(&ch, "android_ui_tree", json!({})).await;
    assert!(tree.get("error").is_none(), "{tree}");
    let notes = find_text(&elements(&tree), "Notes").expect("Notes icon on the launcher");
    let t0 = Instant::now();
    let tap = x
        .tool(
            &ch,
            "android_tap",
            json!({"x": notes["center"][0], "y": notes["center"][1]}),
        )
        .await;
    let tap_ms = t0.elapsed().as_secs_f64() * 1e3;
    assert!(tap.get("error").is_none(), "{tap}");
    let tree = x.tool(&ch, "android_ui_tree", json!({})).await;
    let edit = find_class(&elements(&tree), "android.widget.EditText").expect("EditText in Notes");
    let tap = x
        .tool(
            &ch,
            "android_tap",
            json!({"x": edit["center"][0], "y": edit["center"][1]}),
        )
        .await;
    assert!(tap.get("error").is_none(), "{tap}");
    let typed = "Hello, it's 100%sure; $HOME `id`";
    let ack = x
        .tool(&ch, "android_input_text", json!({"text": typed}))
        .await;
    assert!(ack.get("error").is_none(), "{ack}");
    let tree = x.tool(&ch, "android_ui_tree", json!({})).await;
    let edit = find_class(&elements(&tree), "android.widget.EditText").expect("EditText");
    assert_eq!(
        edit["text"], typed,
        "the field holds exactly what was typed"
    );
    let key = x
        .tool(&ch, "android_press_key", json!({"key": "home"}))
        .await;
    assert!(key.get("error").is_none(), "{key}");
    let tree = x.tool(&ch, "android_ui_tree", json!({})).await;
    assert!(
        find_text(&elements(&tree), "Notes").is_some(),
        "home shows the launcher"
    );
    x.close().await;
    Timings {
        screenshot_ms,
        tap_ms,
    }
}
