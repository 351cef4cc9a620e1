//! The fuzz targets: one function per parser of untrusted bytes, shared by the proptest runner
//! (`tests/fuzz_parsers.rs`, in `cargo test`) and the AFL++ harness (`benches/fuzz_afl.rs`,
//! offline). Each target feeds the bytes to the parser and checks the properties of
//! `docs/reliability.md`: it returns (value, `None` or typed error) without panicking, what it
//! keeps is bounded by what it was given, and encoders round-trip. A violated property panics,
//! which both engines report as a crash.

#![allow(dead_code)]

use std::sync::OnceLock;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use xagent_adb_connector::adb::{shell_v2, wire};
use xagent_adb_connector::data_plane::request::Request;
use xagent_adb_connector::device::parse::{
    battery, devices, displays, getprop, keyguard, package, png_check, power, secure, text,
    uiautomator, window, wm,
};
use xagent_adb_connector::protocol::payloads::parse_version;
use xagent_adb_connector::protocol::Packet;
use xagent_adb_connector::server::upload::{clean_filename, file_type};
use xagent_adb_pairing::{packet as pairing_packet, peer_info::PeerInfo};

/// A fuzz target: name (the `FUZZ_TARGET` of the AFL harness), the function, and the capture
/// directories under `tests/fixtures/` it is seeded from.
pub struct Target {
    /// Stable name.
    pub name: &'static str,
    /// Runs one input; panics on a violated property.
    pub run: fn(&[u8]),
    /// Seed directories (relative to `tests/fixtures/`); plus [`synthetic_seeds`].
    pub seeds: &'static [&'static str],
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "envelope",
        run: envelope,
        seeds: &[],
    },
    Target {
        name: "uiautomator",
        run: uiautomator_xml,
        seeds: &["uiautomator", "other"],
    },
    Target {
        name: "dumpsys_battery",
        run: dumpsys_battery,
        seeds: &["battery"],
    },
    Target {
        name: "dumpsys_window",
        run: dumpsys_window,
        seeds: &["window", "activity"],
    },
    Target {
        name: "dumpsys_power",
        run: dumpsys_power,
        seeds: &["power"],
    },
    Target {
        name: "getprop",
        run: getprop_text,
        seeds: &["getprop"],
    },
    Target {
        name: "wm",
        run: wm_text,
        seeds: &["wm"],
    },
    Target {
        name: "packages",
        run: packages_text,
        seeds: &["packages"],
    },
    Target {
        name: "devices",
        run: devices_text,
        seeds: &["devices"],
    },
    Target {
        name: "screencap_png",
        run: screencap_png,
        seeds: &["screencap"],
    },
    Target {
        name: "adb_frame",
        run: adb_frame,
        seeds: &[],
    },
    Target {
        name: "shell_v2",
        run: shell_v2_frames,
        seeds: &[],
    },
    Target {
        name: "pairing",
        run: pairing,
        seeds: &[],
    },
    Target {
        name: "multipart",
        run: multipart,
        seeds: &[],
    },
    Target {
        name: "sim_transport",
        run: sim_transport,
        seeds: &[],
    },
];

/// Looks a target up by name.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// The seed corpus of a target: every capture in its directories, plus hand-built wire inputs.
pub fn seeds(t: &Target) -> Vec<Vec<u8>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for dir in t.seeds {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            if let Ok(bytes) = std::fs::read(&p) {
                out.push(bytes);
            }
        }
    }
    out.extend(synthetic_seeds(t.name));
    if out.is_empty() {
        out.push(Vec::new());
    }
    out
}

/// Seeds for targets whose inputs are wire bytes rather than captured text: the shapes the
/// research notes recorded (adb 34 CNXN, shell v2 stdout + exit, pairing header, a multipart
/// body as curl sends it, data-plane packets of spec §5).
pub fn synthetic_seeds(name: &str) -> Vec<Vec<u8>> {
    match name {
        "envelope" => [
            r#"{"schema":"xagent.connector.packet/v1","packet_id":"p1","type":"connector.hello","payload":{"connector_card_id":"c","protocol_version":"3.0","supported_profiles":["xagent.device.v1"]}}"#,
            r#"{"schema":"xagent.connector.packet/v1","packet_id":"p2","type":"tool.invoke","connector_channel_id":"ch1","payload":{"tool_call_id":"t1","tool_name":"device.tap","arguments":{"x":1,"y":2}}}"#,
            r#"{"schema":"xagent.connector.packet/v1","packet_id":"p3","type":"auth.start","payload":{}}"#,
            r#"{"schema":"xagent.connector.packet/v1","packet_id":"p4","type":"channel.open","connector_channel_id":"x"}"#,
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect(),
        "adb_frame" => vec![
            wire::Message::new(wire::A_CNXN, wire::A_VERSION, wire::MAX_PAYLOAD, b"host::features=shell_v2,cmd".to_vec()).encode(),
            wire::Message::new(wire::A_OPEN, 1, 0, b"shell,v2,raw:getprop\0".to_vec()).encode(),
            wire::Message::new(wire::A_WRTE, 1, 2, shell_v2::encode(shell_v2::ID_STDOUT, b"hi\n")).encode(),
        ],
        "shell_v2" => vec![
            [shell_v2::encode(shell_v2::ID_STDOUT, b"hi\n"), shell_v2::encode(shell_v2::ID_EXIT, &[0])].concat(),
            [shell_v2::encode(shell_v2::ID_STDERR, b"Exception\n"), shell_v2::encode(shell_v2::ID_EXIT, &[255])].concat(),
        ],
        "pairing" => vec![
            pairing_packet::encode(pairing_packet::PacketType::Spake2Msg, &[7; 32]).unwrap_or_default(),
            PeerInfo::DeviceGuid("adb-SIM0001-AbCdEf".into()).encode().unwrap_or_default(),
        ],
        "multipart" => vec![
            b"--XBOUND\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n--XBOUND--\r\n".to_vec(),
            b"--XBOUND\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhi\r\n--XBOUND\r\nContent-Disposition: form-data; name=\"file\"; filename=\"../../etc/x y.txt\"\r\n\r\nabc\r\n--XBOUND--\r\n".to_vec(),
        ],
        "sim_transport" => sim_seeds(),
        _ => Vec::new(),
    }
}

/// Adb messages a host sends: a shell v2 command, a sync `SEND` + `RECV` of a file.
fn sim_seeds() -> Vec<Vec<u8>> {
    use xagent_adb_connector::adb::sync_proto as sp;
    let shell = [
        wire::Message::new(
            wire::A_OPEN,
            1,
            0,
            b"shell,v2,raw:getprop ro.product.model\0".to_vec(),
        )
        .encode(),
        wire::Message::new(
            wire::A_WRTE,
            1,
            1,
            shell_v2::encode(shell_v2::ID_CLOSE_STDIN, &[]),
        )
        .encode(),
        wire::Message::new(wire::A_OKAY, 1, 1, Vec::new()).encode(),
    ]
    .concat();
    let sync_body = [
        sp::encode(sp::ID_SEND, b"/sdcard/x.txt,420"),
        sp::encode(sp::ID_DATA, b"hello"),
        sp::encode_word(sp::ID_DONE, 0),
        sp::encode(sp::ID_RECV, b"/sdcard/x.txt"),
        sp::encode(sp::ID_QUIT, &[]),
    ]
    .concat();
    let sync = [
        wire::Message::new(wire::A_OPEN, 2, 0, b"sync:\0".to_vec()).encode(),
        wire::Message::new(wire::A_WRTE, 2, 1, sync_body).encode(),
        wire::Message::new(wire::A_CLSE, 2, 1, Vec::new()).encode(),
    ]
    .concat();
    let exec = wire::Message::new(
        wire::A_OPEN,
        3,
        0,
        b"exec:uiautomator dump /dev/tty\0".to_vec(),
    )
    .encode();
    vec![shell, sync, exec]
}

/// Text parsers get the bytes through the same decoding the tools apply to phone output.
fn decoded(data: &[u8]) -> String {
    let s = text::decode_output(data);
    // Decoding may only shrink, keep or (lossy U+FFFD, 3 bytes per bad byte) triple the size.
    assert!(
        s.len() <= 3 * data.len() + 3,
        "decode_output grew {} → {}",
        data.len(),
        s.len()
    );
    s
}

fn envelope(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Packet::decode(text) {
        Ok(packet) => {
            // Round trip: what we encode decodes to the same packet.
            let again = Packet::decode(&packet.encode()).expect("an encoded packet decodes");
            assert_eq!(again, packet);
            let _ = Request::decode(&packet);
        }
        Err(e) => {
            let answer = Packet::invalid_frame_error(
                text,
                xagent_adb_connector::protocol::ErrorCode::InvalidPacket,
                &e.to_string(),
            );
            // The echoed ids are capped at 128 bytes each: the error never amplifies the input.
            assert!(
                answer.encode().len() <= 2048 + 2 * text.len().min(300),
                "error answer too large"
            );
        }
    }
    let _ = parse_version(text);
}

fn uiautomator_xml(data: &[u8]) {
    let s = decoded(data);
    match uiautomator::parse_uiautomator_dump(&s) {
        Ok(dump) => {
            // Every node is at least `<node/>` in the input.
            assert!(
                dump.nodes.len() <= s.len() / 6 + 1,
                "{} nodes from {} bytes",
                dump.nodes.len(),
                s.len()
            );
            for n in &dump.nodes {
                let _ = (n.bounds.center(), n.bounds.width(), n.bounds.height());
            }
        }
        Err(uiautomator::UiDumpError::NoXml { output }) => assert!(output.len() <= 2000 + 4),
        Err(_) => {}
    }
    let _ = uiautomator::Bounds::parse(&s);
}

fn dumpsys_battery(data: &[u8]) {
    let _ = battery::parse_dumpsys_battery(&decoded(data));
}

fn dumpsys_window(data: &[u8]) {
    let s = decoded(data);
    let _ = displays::parse_current_focus(&s);
    let _ = window::parse_resumed_activity(&s);
    let dump = displays::WindowDump::parse(&s);
    for id in dump.display_ids() {
        let _ = (
            dump.size(id),
            dump.rotation(id),
            dump.focus(id),
            dump.awake(id),
        );
    }
    let _ = keyguard::parse_keyguard(&s);
    let _ = secure::focused_window_secure(&s);
}

fn dumpsys_power(data: &[u8]) {
    let _ = power::parse_screen_on(&decoded(data));
}

fn getprop_text(data: &[u8]) {
    let s = decoded(data);
    let props = getprop::parse_getprop(&s);
    let kept: usize = props.iter().map(|(k, v)| k.len() + v.len()).sum();
    assert!(kept <= s.len(), "getprop kept {kept} bytes of {}", s.len());
}

fn wm_text(data: &[u8]) {
    let s = decoded(data);
    if let Some(size) = wm::parse_wm_size(&s) {
        let _ = size.effective();
    }
    if let Some(d) = wm::parse_wm_density(&s) {
        let _ = d.effective();
    }
}

fn packages_text(data: &[u8]) {
    let s = decoded(data);
    let lines = package::parse_pm_list_packages(&s);
    assert!(lines.len() <= s.lines().count());
    let _ = package::parse_resolve_activity_brief(&s);
    let _ = package::parse_component(&s);
}

fn devices_text(data: &[u8]) {
    let s = decoded(data);
    let list = devices::parse_devices_l(&s);
    assert!(list.len() <= s.lines().count());
    for d in &list {
        let _ = (
            d.state.as_str(),
            d.state
                .remedy(xagent_adb_connector::device::parse::devices::RouteKind::Direct),
        );
    }
}

fn screencap_png(data: &[u8]) {
    if let Ok((offset, _info)) = png_check::find_png(data) {
        assert!(offset <= data.len());
    }
}

/// ADB transport frames as both sides read them (`Message::read_from`, shared by the host's
/// direct transport and the simulated phone), plus the CNXN banner.
fn adb_frame(data: &[u8]) {
    let mut rest = data;
    // Reading from a slice never pends, so `drive` runs the async reader to completion.
    while !rest.is_empty() {
        let before = rest.len();
        match drive(wire::Message::read_from(&mut rest, wire::MAX_PAYLOAD)) {
            Some(Ok(msg)) => {
                assert!(msg.payload.len() <= wire::MAX_PAYLOAD as usize);
                let encoded = msg.encode();
                let back = drive(wire::Message::read_from(
                    &mut encoded.as_slice(),
                    wire::MAX_PAYLOAD,
                ))
                .expect("slice reads complete")
                .expect("an encoded message decodes");
                assert_eq!(back, msg);
                let _ = wire::parse_banner(&msg.payload);
                assert!(rest.len() < before);
            }
            Some(Err(_)) => break,
            None => panic!("Message::read_from pended on a slice"),
        }
    }
    let _ = wire::parse_banner(data);
}

fn shell_v2_frames(data: &[u8]) {
    // The first byte picks the chunking, as packets split and coalesce across WRTE.
    let (step, body) = match data.split_first() {
        Some((s, b)) => (usize::from(*s % 17) + 1, b),
        None => (1, data),
    };
    let mut dec = shell_v2::ShellV2Decoder::default();
    let mut out = 0usize;
    for chunk in body.chunks(step) {
        dec.push(chunk);
        while let Some((id, payload)) = dec.next_packet() {
            out += 5 + payload.len();
            // Round trip: a decoded packet re-encodes to the bytes it came from.
            let re = shell_v2::encode(id, &payload);
            assert_eq!(re.len(), 5 + payload.len());
        }
        assert!(
            dec.buffered() <= shell_v2::MAX_PACKET_DATA + 5,
            "decoder kept {} bytes",
            dec.buffered()
        );
    }
    assert!(out <= body.len());
}

fn pairing(data: &[u8]) {
    if data.len() >= pairing_packet::HEADER_LEN {
        let header: [u8; pairing_packet::HEADER_LEN] = data[..pairing_packet::HEADER_LEN]
            .try_into()
            .expect("length checked");
        for want in [
            pairing_packet::PacketType::Spake2Msg,
            pairing_packet::PacketType::PeerInfo,
        ] {
            if let Ok(len) = pairing_packet::decode_header(&header, want) {
                assert!((1..=pairing_packet::MAX_PAYLOAD).contains(&len));
                let body = &data[pairing_packet::HEADER_LEN..];
                if body.len() >= len {
                    let framed =
                        pairing_packet::encode(want, &body[..len]).expect("valid length frames");
                    assert_eq!(&framed[..], &data[..pairing_packet::HEADER_LEN + len]);
                }
            }
        }
    }
    // PeerInfo is exactly 8192 bytes: pad or cut the input to that size as well.
    let mut sized = data.to_vec();
    sized.resize(xagent_adb_pairing::peer_info::SIZE, 0);
    for bytes in [data, sized.as_slice()] {
        if let Ok(info) = PeerInfo::decode(bytes) {
            let again = PeerInfo::decode(&info.encode().expect("a decoded PeerInfo encodes"));
            assert_eq!(again.as_ref(), Ok(&info));
        }
    }
}

/// Name of the threads of the simulated phone's runtime (its `spawn_blocking` pool): a panic
/// there is counted by the hook of [`count_runtime_panics`], since tokio would otherwise swallow it.
const RUNTIME_THREAD: &str = "fuzz-rt";

static RUNTIME_PANICS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

thread_local! {
    /// Set while this thread drives the simulated phone's runtime: its tasks run here.
    static IN_RUNTIME: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs (once) a panic hook counting panics in the simulated phone's tasks (on the thread
/// driving its runtime, or on the runtime's blocking threads).
pub fn count_runtime_panics() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let in_runtime = IN_RUNTIME.try_with(std::cell::Cell::get).unwrap_or(false);
            if in_runtime || std::thread::current().name() == Some(RUNTIME_THREAD) {
                RUNTIME_PANICS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            previous(info);
        }));
    });
}

fn runtime_panics() -> usize {
    RUNTIME_PANICS.load(std::sync::atomic::Ordering::SeqCst)
}

/// Polls a future that has everything it needs in memory (a body, a slice) to completion
/// without a runtime. Pending 10 000 times in a row means it waits for something that can
/// never come: a hang, reported as `None`. Unlike a wall-clock timeout, this cannot mistake a
/// paused or starved process for a hang.
pub fn drive<F: std::future::Future>(fut: F) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    for _ in 0..10_000 {
        if let std::task::Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return Some(out);
        }
    }
    None
}

/// The upload endpoint's parse path: axum's `Multipart` over the body (as `server::upload`
/// reads it), the `file` field's name through `clean_filename`, its type through `file_type`.
/// The whole body is in memory, so the parse must complete without ever waiting ([`drive`]).
fn multipart(data: &[u8]) {
    use axum::extract::{FromRequest, Multipart};
    let body = data.to_vec();
    let total = data.len();
    let parse = async move {
        let req = axum::http::Request::builder()
            .method("POST")
            .header("content-type", "multipart/form-data; boundary=XBOUND")
            .body(axum::body::Body::from(body))
            .expect("request");
        let Ok(mut form) = Multipart::from_request(req, &()).await else {
            return;
        };
        let mut seen = 0usize;
        while let Ok(Some(field)) = form.next_field().await {
            let name = clean_filename(field.file_name().unwrap_or("upload.bin"));
            assert!(
                !name.contains('/') && !name.contains('\\') && !name.is_empty(),
                "unclean name {name:?}"
            );
            let _ = file_type(field.content_type().unwrap_or("application/octet-stream"));
            if let Ok(bytes) = field.bytes().await {
                seen += bytes.len();
            }
        }
        assert!(
            seen <= total,
            "fields hold {seen} bytes of a {total}-byte body"
        );
    };
    assert!(
        drive(parse).is_some(),
        "the multipart parse waited with the whole body in memory (a hang)"
    );
}

/// Bytes of the phone's answer read per input: a program that streams without end (`logcat`,
/// `screenrecord`) is cut there, as a host would stop reading.
const SIM_ANSWER_CAP: usize = 8 * 1024 * 1024;

thread_local! {
    /// The simulated phone's runtime, one per thread and reused across inputs: current-thread
    /// (its tasks run on this thread, so the counting allocator sees their memory) with paused
    /// time. Paused time auto-advances only when every task is idle, so "quiet for 40 ms" means
    /// "nothing left to run", and the 5 s bound after cancel cannot fire because the process
    /// was paused or starved — only because a task waits forever.
    static SIM_RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .thread_name(RUNTIME_THREAD)
        .build()
        .expect("tokio runtime");
}

/// The simulated phone's side of the transport: the bytes arrive as a host's stream on an
/// admitted connection (what `serve_admitted` runs after TLS); the phone must answer or drop
/// the connection, and stop within a bound once cancelled. Every input gets a freshly booted
/// phone (the persona is parsed once), so no input sees what an earlier one left behind.
fn sim_transport(data: &[u8]) {
    static PERSONA: OnceLock<xagent_adb_sim::persona::Persona> = OnceLock::new();
    let persona = PERSONA
        .get_or_init(|| xagent_adb_sim::persona::Persona::load("pixel-android14").expect("persona"))
        .clone();
    let phone = xagent_adb_sim::Phone::new(persona, "FUZZ0001", "Pixel 8");
    let input = data.to_vec();
    count_runtime_panics();
    let panics_before = runtime_panics();
    IN_RUNTIME.with(|f| f.set(true));
    SIM_RUNTIME.with(|rt| {
        rt.block_on(async move {
            let (mut host, device) = tokio::io::duplex(256 * 1024);
            let cancel = CancellationToken::new();
            let served = tokio::spawn(xagent_adb_sim::transport::serve_admitted(
                device,
                phone,
                cancel.clone(),
                wire::MAX_PAYLOAD,
            ));
            let _ = host.write_all(&input).await;
            // Read what the phone answers until it has nothing left to run (virtual 40 ms of
            // quiet), then end the host's side and drain to EOF: the phone must notice and close.
            let mut sink = vec![0u8; 64 * 1024];
            let mut answered = 0usize;
            while answered < SIM_ANSWER_CAP {
                match tokio::time::timeout(Duration::from_millis(40), host.read(&mut sink)).await {
                    Ok(Ok(n)) if n > 0 => answered += n,
                    _ => break,
                }
            }
            let _ = host.shutdown().await;
            let _ = tokio::time::timeout(Duration::from_millis(500), async {
                while answered < 2 * SIM_ANSWER_CAP {
                    match host.read(&mut sink).await {
                        Ok(n) if n > 0 => answered += n,
                        _ => break,
                    }
                }
            })
            .await;
            if std::env::var_os("FUZZ_DEBUG").is_some() {
                eprintln!(
                    "sim_transport: {} bytes in, {answered} bytes out",
                    input.len()
                );
            }
            cancel.cancel();
            drop(host);
            let ended = tokio::time::timeout(Duration::from_secs(5), served).await;
            assert!(
                ended.is_ok(),
                "the sim's connection did not end 5 s (virtual) after cancel"
            );
            if let Ok(Err(e)) = ended {
                assert!(!e.is_panic(), "the sim's connection task panicked");
            }
        })
    });
    IN_RUNTIME.with(|f| f.set(false));
    assert_eq!(runtime_panics(), panics_before, "a sim task panicked");
}
