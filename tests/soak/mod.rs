//! The fault soak (`docs/reliability.md`): simulated phones, one agent per phone calling tools
//! in a loop over the real wire, while a seeded fault injector unplugs and replugs phones,
//! freezes transports, makes commands hang or fail, kills and restarts the adb server, drops
//! WebSocket connections mid-call and restarts the connector with `kill -9`. The invariants are
//! checked throughout and returned in a [`Report`]; `tests/soak_short.rs` (CI, short) and
//! `benches/soak.rs` (long, offline) run it.
//!
//! Half the phones reach the connector through a private Google adb 34 server (`adb connect`),
//! half over the direct transport (`--device tcp:…`), so both paths see every fault.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

use super::common::adb_server::{AdbFlavor, AdbServer};
use super::common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use super::common::API_KEY;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Simulated phones (and agents, one channel each).
    pub phones: usize,
    /// How long the agents call tools.
    pub duration: Duration,
    /// Seed of the fault schedule and of the agents' choices.
    pub seed: u64,
    /// Mean time between two faults.
    pub fault_every: Duration,
}

/// How long one call may take before it counts as unanswered: the longest device deadline of
/// the tools used (30 s, `android_input_text`) plus margin.
pub const CALL_DEADLINE: Duration = Duration::from_secs(45);
/// How long an agent waits after an error answer before its next call.
pub const ERROR_BACKOFF: Duration = Duration::from_millis(250);
/// Descriptors must follow the truth within this (issue 10).
pub const CONVERGENCE: Duration = Duration::from_secs(2);

/// The longest a frozen phone (transport open, nothing answered: adb keeps listing it
/// `device`) may stay `connected` before the connector's liveness checks mark it `offline`:
/// behind an adb server a check every `SERVER_LIVENESS_PERIOD`, two tries of
/// `LIVENESS_DEADLINE`; direct, `LIVENESS_IDLE` of silence, the next `DIRECT_PROBE_PERIOD`
/// tick and one `LIVENESS_DEADLINE`. The `offline` truth of a freeze is judged from then on,
/// within [`CONVERGENCE`] like every other.
pub fn freeze_detection() -> Duration {
    use xagent_adb_connector::device::inventory::{
        DIRECT_PROBE_PERIOD, LIVENESS_DEADLINE, LIVENESS_IDLE, SERVER_LIVENESS_PERIOD,
    };
    (SERVER_LIVENESS_PERIOD + 2 * LIVENESS_DEADLINE)
        .max(LIVENESS_IDLE + DIRECT_PROBE_PERIOD + LIVENESS_DEADLINE)
}

/// Error codes that mean a binding was lost: never acceptable in the soak.
const BINDING_LOST: &[&str] = &[
    "connector_channel_not_owned",
    "channel_not_open",
    "connector_channel_id_required",
];

/// Figures and violations of one soak run.
#[derive(Debug, Default)]
pub struct Report {
    /// Tool calls finished (ack received).
    pub calls: u64,
    /// Acks without error.
    pub ok: u64,
    /// Acks with a typed error, by code.
    pub errors: BTreeMap<String, u64>,
    /// Faults injected, by kind.
    pub faults: BTreeMap<&'static str, u64>,
    /// Longest time from a call's first send to its ack (ms), lost sockets included.
    pub max_call_ms: f64,
    /// Calls sent again with the same `tool_call_id` after the socket was lost.
    pub resent: u64,
    /// Socket reconnections by agents.
    pub reconnects: u64,
    /// Descriptor convergence lags measured (ms).
    pub convergence_ms: Vec<f64>,
    /// Freezes whose `offline` truth was judged (not excused by another fault's window).
    pub freezes_judged: u64,
    /// Time from a freeze to the first `offline` its agent saw (ms), per freeze.
    pub freeze_detect_ms: Vec<f64>,
    /// Largest connector RSS sampled (KiB) and open descriptors.
    pub max_rss_kb: u64,
    /// Largest count of open file descriptors of the connector.
    pub max_fds: u64,
    /// RSS (KiB) at the end of the first quarter of the run, the baseline of growth.
    pub baseline_rss_kb: u64,
    /// Every invariant violation, described.
    pub violations: Vec<String>,
}

impl Report {
    /// Prints the figures.
    pub fn print(&self, cfg: &Config, elapsed: Duration) {
        println!(
            "soak: {} phones, {:.0} s, seed {}",
            cfg.phones,
            elapsed.as_secs_f64(),
            cfg.seed
        );
        println!(
            "  calls answered: {} (ok {}, typed errors {})",
            self.calls,
            self.ok,
            self.calls - self.ok
        );
        println!("  errors by code: {:?}", self.errors);
        println!(
            "  faults injected: {:?} (total {})",
            self.faults,
            self.faults.values().sum::<u64>()
        );
        println!(
            "  resent after a lost socket: {}, reconnects: {}",
            self.resent, self.reconnects
        );
        println!(
            "  longest call (first send to ack): {:.0} ms",
            self.max_call_ms
        );
        let mut lags = self.convergence_ms.clone();
        lags.sort_by(f64::total_cmp);
        let pick = |q: f64| {
            lags.get(((lags.len() as f64 - 1.0) * q).round() as usize)
                .copied()
                .unwrap_or(0.0)
        };
        println!(
            "  descriptor convergence: {} checks, p50 {:.0} ms, p95 {:.0} ms, max {:.0} ms",
            lags.len(),
            pick(0.5),
            pick(0.95),
            lags.last().copied().unwrap_or(0.0)
        );
        let mut detect = self.freeze_detect_ms.clone();
        detect.sort_by(f64::total_cmp);
        println!(
            "  frozen phones: {} offline truths judged; freeze to offline seen {:?} ms",
            self.freezes_judged,
            detect.iter().map(|d| d.round() as u64).collect::<Vec<_>>()
        );
        println!(
            "  connector RSS: baseline {} KiB, max {} KiB; open fds max {}",
            self.baseline_rss_kb, self.max_rss_kb, self.max_fds
        );
        println!("  violations: {}", self.violations.len());
        for v in &self.violations {
            println!("    - {v}");
        }
    }
}

/// SplitMix64: a seeded, dependency-free generator for the schedule.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// What the phones truly are, as the injector changes them: `(phone, since, status)` in order.
#[derive(Default)]
struct Truth {
    transitions: Vec<(usize, Instant, &'static str)>,
    /// Windows in which descriptors are not judged (connector restarting, adb server down, a
    /// phone's agent reconnecting): `(phone or None for all, from, to)`.
    excused: Vec<(Option<usize>, Instant, Instant)>,
    /// When a phone was put back online (before adb re-attaches it, which may take longer
    /// than adb's own reconnect): a shorter outage than [`CONVERGENCE`] is not judged.
    returns: Vec<(usize, Instant)>,
    /// Freezes: `(phone, frozen at, offline judged from)`.
    frozen: Vec<(usize, Instant, Instant)>,
}

/// When the connector sent `packet` (its `time`, ms since the epoch), as an `Instant`: the
/// connector's lag is judged, not how late an agent busy elsewhere read its socket.
fn sent_at(packet: &Value) -> Instant {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let age = packet["time"]
        .as_u64()
        .map_or(0, |t| now_ms.saturating_sub(t));
    Instant::now()
        .checked_sub(Duration::from_millis(age))
        .unwrap_or_else(Instant::now)
}

/// What the agents observed: `(phone, at, connection.status)` from pushes and open acks.
type Observed = Arc<Mutex<Vec<(usize, Instant, String)>>>;

struct Shared {
    cfg: Config,
    addr: Mutex<String>,
    stop: AtomicBool,
    truth: Mutex<Truth>,
    observed: Observed,
    report: Mutex<Report>,
    /// Per agent: drop the socket right after sending the next call.
    drop_next: Vec<AtomicBool>,
    /// Taps and texts sent, per phone, to count side effects at the end.
    taps: Vec<Mutex<Vec<(u32, u32)>>>,
    texts: Vec<Mutex<Vec<String>>>,
    connector_pid: AtomicU64,
}

impl Shared {
    fn violation(&self, v: String) {
        eprintln!("soak violation: {v}");
        self.report.lock().unwrap().violations.push(v);
    }
}

/// A minimal data-plane client that never panics: every failure is a lost socket.
struct Client {
    ws: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    n: u64,
    agent: usize,
}

enum Lost {
    /// The socket ended or failed.
    Closed,
    /// No answer within the deadline.
    Timeout,
}

impl Client {
    async fn dial(addr: &str, agent: usize) -> Option<Client> {
        let mut req = format!("ws://{addr}/ws").into_client_request().ok()?;
        req.headers_mut()
            .insert("Authorization", format!("Bearer {API_KEY}").parse().ok()?);
        req.headers_mut().insert(
            "Sec-WebSocket-Protocol",
            "xagent.connector.packet.v1".parse().ok()?,
        );
        let (ws, _) = tokio::time::timeout(
            Duration::from_secs(3),
            tokio_tungstenite::connect_async(req),
        )
        .await
        .ok()?
        .ok()?;
        Some(Client { ws, n: 0, agent })
    }

    /// Sends a request; returns its packet id.
    async fn send(
        &mut self,
        kind: &str,
        channel: Option<&str>,
        payload: Value,
    ) -> Result<String, Lost> {
        self.n += 1;
        let id = format!("soak_{}_{}", self.agent, self.n);
        let mut p = json!({"schema": "xagent.connector.packet/v1", "packet_id": id, "request_id": id,
                           "type": kind, "time": 1790000000000i64, "payload": payload});
        if let Some(c) = channel {
            p["connector_channel_id"] = json!(c);
        }
        self.ws
            .send(Message::Text(p.to_string().into()))
            .await
            .map_err(|_| Lost::Closed)?;
        Ok(id)
    }

    /// Waits for the answer to `packet_id`, handing every other packet to `push`.
    async fn answer(
        &mut self,
        packet_id: &str,
        within: Duration,
        push: &mut (dyn FnMut(&Value) + Send),
    ) -> Result<Value, Lost> {
        let until = tokio::time::Instant::now() + within;
        loop {
            let frame = match tokio::time::timeout_at(until, self.ws.next()).await {
                Err(_) => return Err(Lost::Timeout),
                Ok(None) | Ok(Some(Err(_))) => return Err(Lost::Closed),
                Ok(Some(Ok(f))) => f,
            };
            match frame {
                Message::Text(t) => {
                    let Ok(v) = serde_json::from_str::<Value>(t.as_str()) else {
                        continue;
                    };
                    if v["reply_to"] == packet_id {
                        return Ok(v);
                    }
                    push(&v);
                }
                Message::Close(_) => return Err(Lost::Closed),
                _ => {}
            }
        }
    }

    async fn request(
        &mut self,
        kind: &str,
        channel: Option<&str>,
        payload: Value,
        push: &mut (dyn FnMut(&Value) + Send),
    ) -> Result<Value, Lost> {
        let id = self.send(kind, channel, payload).await?;
        self.answer(&id, Duration::from_secs(20), push).await
    }
}

/// The call an agent is making (kept across lost sockets: it is sent again with the same
/// `tool_call_id`).
struct Call {
    tool: &'static str,
    args: Value,
    call_id: String,
    first_sent: Option<Instant>,
}

fn next_call(rng: &mut Rng, agent: usize, k: u64, shared: &Shared) -> Call {
    let call_id = format!("soak-{agent}-{k}");
    let (tool, args) = match rng.below(5) {
        0 => ("android_screenshot", json!({})),
        1 => ("android_ui_tree", json!({})),
        2 => {
            // Unique coordinates per call, so the phone's log tells how often it ran.
            let (x, y) = (10 + (k % 1000) as u32, 10 + (k / 1000) as u32);
            shared.taps[agent].lock().unwrap().push((x, y));
            ("android_tap", json!({"x": x, "y": y}))
        }
        3 => {
            let word = format!("soak{agent}w{k}");
            shared.texts[agent].lock().unwrap().push(word.clone());
            ("android_input_text", json!({"text": word}))
        }
        _ => ("android_press_key", json!({"key": "home"})),
    };
    Call {
        tool,
        args,
        call_id,
        first_sent: None,
    }
}

async fn agent(shared: Arc<Shared>, i: usize, serial: String) {
    let mut rng = Rng::new(shared.cfg.seed ^ (0xa5a5 + i as u64));
    let mut channel: Option<String> = None;
    let mut connector_id = String::new();
    let mut client: Option<Client> = None;
    let mut pending: Option<Call> = None;
    let mut k = 0u64;
    let observed = Arc::clone(&shared.observed);
    let mut on_push = move |v: &Value| {
        if v["type"] == "connection.descriptor.push" {
            if let Some(s) = v["payload"]["connection_descriptor"]["connection"]["status"].as_str()
            {
                observed
                    .lock()
                    .unwrap()
                    .push((i, sent_at(v), s.to_string()));
            }
        }
    };
    while !shared.stop.load(Ordering::SeqCst) {
        let Some(c) = client.as_mut() else {
            let addr = shared.addr.lock().unwrap().clone();
            match Client::dial(&addr, i).await {
                Some(mut c) => {
                    let reconnect = channel.is_some();
                    let started = Instant::now();
                    if let Some(ch) = setup(
                        &mut c,
                        &shared,
                        i,
                        &serial,
                        &mut connector_id,
                        channel.as_deref(),
                        &mut on_push,
                    )
                    .await
                    {
                        if reconnect {
                            shared.report.lock().unwrap().reconnects += 1;
                            shared.truth.lock().unwrap().excused.push((
                                Some(i),
                                started,
                                Instant::now() + CONVERGENCE,
                            ));
                        }
                        channel = Some(ch);
                        client = Some(c);
                    } else {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
                None => tokio::time::sleep(Duration::from_millis(200)).await,
            }
            continue;
        };
        let ch = channel.clone().unwrap_or_default();
        let call = pending.get_or_insert_with(|| {
            k += 1;
            next_call(&mut rng, i, k, &shared)
        });
        let resend = call.first_sent.is_some();
        let first = *call.first_sent.get_or_insert_with(Instant::now);
        let mut args = call.args.clone();
        args["connector_channel_id"] = json!(ch);
        let sent = c
            .send(
                "tool.invoke",
                Some(&ch),
                json!({"tool_id": call.tool, "arguments": args,
                   "context": {"session_id": format!("soak-{i}"), "tool_call_id": call.call_id}}),
            )
            .await;
        if resend {
            shared.report.lock().unwrap().resent += 1;
        }
        let Ok(packet_id) = sent else {
            client = None;
            continue;
        };
        if shared.drop_next[i].swap(false, Ordering::SeqCst) {
            // Mid-call: the answer may be under way; the socket goes without a close frame.
            tokio::time::sleep(Duration::from_millis(rng.below(300))).await;
            shared.truth.lock().unwrap().excused.push((
                Some(i),
                Instant::now(),
                Instant::now() + CONVERGENCE,
            ));
            client = None;
            continue;
        }
        match c.answer(&packet_id, CALL_DEADLINE, &mut on_push).await {
            Ok(ack) => {
                let code = ack["error"]["code"].as_str().map(str::to_string);
                {
                    let mut r = shared.report.lock().unwrap();
                    r.calls += 1;
                    r.max_call_ms = r.max_call_ms.max(first.elapsed().as_secs_f64() * 1000.0);
                    match &code {
                        None => r.ok += 1,
                        Some(code) => *r.errors.entry(code.clone()).or_default() += 1,
                    }
                }
                match code.as_deref() {
                    None if ack["type"] == "tool.invoke.ack" => {}
                    Some(code) if !code.is_empty() => {
                        if BINDING_LOST.contains(&code) {
                            shared.violation(format!(
                                "agent {i}: binding lost, {} answered {code}",
                                call.call_id
                            ));
                        }
                        // As an agent would: wait a little before trying again.
                        tokio::time::sleep(ERROR_BACKOFF).await;
                    }
                    _ => shared.violation(format!(
                        "agent {i}: {} answered without a typed error: {ack}",
                        call.call_id
                    )),
                }
                pending = None;
            }
            Err(Lost::Closed) => {
                // The connector restarted or the socket broke: send the same call again.
                if first.elapsed() > 3 * CALL_DEADLINE {
                    shared.violation(format!(
                        "agent {i}: {} unanswered for {:?} across reconnects",
                        call.call_id,
                        first.elapsed()
                    ));
                    pending = None;
                }
                client = None;
            }
            Err(Lost::Timeout) => {
                shared.violation(format!(
                    "agent {i}: {} ({}) unanswered within {CALL_DEADLINE:?}",
                    call.call_id, call.tool
                ));
                pending = None;
                client = None;
            }
        }
    }
}

/// Hello, open (restoring `channel`), and the first time claim the phone. Returns the channel.
async fn setup(
    c: &mut Client,
    shared: &Shared,
    i: usize,
    serial: &str,
    connector_id: &mut String,
    channel: Option<&str>,
    on_push: &mut (dyn FnMut(&Value) + Send),
) -> Option<String> {
    let hello = c
        .request(
            "connector.hello",
            None,
            json!({"connector_card_id": "device.adb", "connector_id": connector_id.as_str(),
                  "protocol_version": "3.0", "supported_profiles": ["xagent.device.v1"]}),
            on_push,
        )
        .await
        .ok()?;
    let id = hello["payload"]["connector_id"].as_str()?.to_string();
    if !connector_id.is_empty() && *connector_id != id {
        shared.violation(format!(
            "agent {i}: connector_id changed {connector_id} → {id}"
        ));
    }
    *connector_id = id;
    let open = c
        .request("channel.open", channel, json!({}), on_push)
        .await
        .ok()?;
    let ch = open["payload"]["connector_channel_id"]
        .as_str()?
        .to_string();
    let status = open["payload"]["connection_descriptor"]["connection"]["status"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if let Some(old) = channel {
        if ch != old {
            shared.violation(format!("agent {i}: channel {old} not restored (got {ch})"));
        }
        if status == "created" {
            shared.violation(format!(
                "agent {i}: binding lost after reconnect (status created)"
            ));
        }
        shared
            .observed
            .lock()
            .unwrap()
            .push((i, Instant::now(), status));
        return Some(ch);
    }
    // First time: claim the phone (it may not be visible yet).
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let ack = c
            .request(
                "auth.start",
                Some(&ch),
                json!({"flow_id": "adb_device_claim", "input": {"serial": serial}}),
                on_push,
            )
            .await
            .ok()?;
        if ack.get("error").is_none() && ack["payload"]["status"] == "authenticated" {
            return Some(ch);
        }
        if Instant::now() > until {
            shared.violation(format!("agent {i}: could not claim {serial}: {ack}"));
            return None;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The phones, the adb server and the connector under test.
struct Rig {
    phones: Vec<SimPhone>,
    /// Indices of the phones reached through the adb server.
    via_adb: Vec<usize>,
    adb: AdbServer,
    conn: Arc<Mutex<ConnectorProc>>,
    _dir: TempDir,
}

fn post(phone: &SimPhone, path: &str, body: Value) {
    let _ = phone.control_post(path, body);
}

fn rss_and_fds(pid: u64) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    Some((rss, fds))
}

/// Fault kinds, in the order the first cycle injects them (each at least once).
const FAULTS: &[&str] = &[
    "unplug",
    "freeze",
    "hang",
    "fail",
    "drop_ws",
    "kill_adb",
    "kill9_connector",
];

/// Runs the soak and returns its report.
pub async fn run(cfg: Config) -> Report {
    let started = Instant::now();
    let dir = TempDir::new("soak");
    let adb = AdbServer::start(AdbFlavor::Google34);
    let mut phones = Vec::new();
    for i in 0..cfg.phones {
        phones.push(SimPhone::start_with_control(&format!("SIMSOAK{i:05}"), &[]));
    }
    let via_adb: Vec<usize> = (0..cfg.phones).filter(|i| i % 2 == 0).collect();
    for &i in &via_adb {
        adb.connect(&phones[i].addr);
    }
    let mut extra: Vec<String> = vec!["--claim-policy".into(), "open".into()];
    for (i, p) in phones.iter().enumerate() {
        if !via_adb.contains(&i) {
            extra.push("--device".into());
            extra.push(format!("tcp:{}", p.addr));
        }
    }
    let extra_refs: Vec<&str> = extra.iter().map(String::as_str).collect();
    let conn = ConnectorProc::start_with(dir.path(), Phones::AdbServer(adb.addr()), &extra_refs);
    let shared = Arc::new(Shared {
        addr: Mutex::new(conn.addr.clone()),
        connector_pid: AtomicU64::new(u64::from(conn.pid())),
        cfg: cfg.clone(),
        stop: AtomicBool::new(false),
        truth: Mutex::new(Truth::default()),
        observed: Arc::default(),
        report: Mutex::new(Report::default()),
        drop_next: (0..cfg.phones).map(|_| AtomicBool::new(false)).collect(),
        taps: (0..cfg.phones).map(|_| Mutex::new(Vec::new())).collect(),
        texts: (0..cfg.phones).map(|_| Mutex::new(Vec::new())).collect(),
    });
    let rig = Arc::new(Rig {
        phones,
        via_adb,
        adb,
        conn: Arc::new(Mutex::new(conn)),
        _dir: dir,
    });

    let mut agents = Vec::new();
    for i in 0..cfg.phones {
        let serial = rig.phones[i].serial.clone();
        agents.push(tokio::spawn(agent(Arc::clone(&shared), i, serial)));
    }
    let sampler = tokio::spawn(sample(Arc::clone(&shared), started));
    inject(Arc::clone(&shared), Arc::clone(&rig)).await;
    shared.stop.store(true, Ordering::SeqCst);
    for a in agents {
        // An agent waits at most one call deadline for its last ack.
        let _ = tokio::time::timeout(CALL_DEADLINE + Duration::from_secs(5), a).await;
    }
    sampler.abort();
    finish(&shared, &rig, started).await;
    let mut report = std::mem::take(&mut *shared.report.lock().unwrap());
    report.violations.sort();
    report
}

/// Samples the connector's RSS and open fds every 500 ms.
async fn sample(shared: Arc<Shared>, started: Instant) {
    let quarter = shared.cfg.duration / 4;
    loop {
        let pid = shared.connector_pid.load(Ordering::SeqCst);
        if let Some((rss, fds)) = rss_and_fds(pid) {
            let mut r = shared.report.lock().unwrap();
            r.max_rss_kb = r.max_rss_kb.max(rss);
            r.max_fds = r.max_fds.max(fds);
            if started.elapsed() <= quarter {
                r.baseline_rss_kb = r.baseline_rss_kb.max(rss);
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Re-attaches the adb-server phones (as a farm's replug would), marking them online.
async fn reattach(shared: &Shared, rig: &Arc<Rig>, which: Vec<usize>) {
    for i in which {
        let rig2 = Arc::clone(rig);
        let _ = tokio::task::spawn_blocking(move || rig2.adb.connect(&rig2.phones[i].addr)).await;
        shared
            .truth
            .lock()
            .unwrap()
            .transitions
            .push((i, Instant::now(), "connected"));
    }
}

async fn inject(shared: Arc<Shared>, rig: Arc<Rig>) {
    let cfg = shared.cfg.clone();
    let mut rng = Rng::new(cfg.seed);
    let until = Instant::now() + cfg.duration;
    // Let the agents bind before the first fault.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let mut n = 0usize;
    while Instant::now() < until {
        let kind = if n < FAULTS.len() {
            FAULTS[n]
        } else {
            FAULTS[rng.below(FAULTS.len() as u64) as usize]
        };
        n += 1;
        let p = rng.below(cfg.phones as u64) as usize;
        *shared
            .report
            .lock()
            .unwrap()
            .faults
            .entry(kind)
            .or_default() += 1;
        let phone = &rig.phones[p];
        match kind {
            "unplug" | "freeze" => {
                // A freeze: the transport stays open and silent (adb keeps listing the phone
                // `device`); held long enough for the liveness checks to tell, then judged.
                let (mode, detection, hold) = if kind == "unplug" {
                    ("unplugged", Duration::ZERO, 1000 + rng.below(2000))
                } else {
                    let d = freeze_detection();
                    let hold = (d + CONVERGENCE).as_millis() as u64 + 1000 + rng.below(1000);
                    ("frozen", d, hold)
                };
                post(phone, "/v1/transport", json!({"state": mode}));
                {
                    let (now, mut truth) = (Instant::now(), shared.truth.lock().unwrap());
                    truth.transitions.push((p, now + detection, "offline"));
                    if kind == "freeze" {
                        truth.frozen.push((p, now, now + detection));
                    }
                }
                tokio::time::sleep(Duration::from_millis(hold)).await;
                post(phone, "/v1/transport", json!({"state": "online"}));
                shared
                    .truth
                    .lock()
                    .unwrap()
                    .returns
                    .push((p, Instant::now()));
                if rig.via_adb.contains(&p) {
                    reattach(&shared, &rig, vec![p]).await;
                } else {
                    shared
                        .truth
                        .lock()
                        .unwrap()
                        .transitions
                        .push((p, Instant::now(), "connected"));
                }
            }
            "hang" => post(
                phone,
                "/v1/script",
                json!({"command_regex": "^input ", "hang": true, "times": 1}),
            ),
            "fail" => post(
                phone,
                "/v1/script",
                json!({"command_regex": "screencap|uiautomator|^input ", "stderr": "Killed", "exit_code": 137, "times": 1}),
            ),
            "drop_ws" => shared.drop_next[p].store(true, Ordering::SeqCst),
            "kill_adb" => {
                let from = Instant::now();
                let rig2 = Arc::clone(&rig);
                let _ = tokio::task::spawn_blocking(move || {
                    rig2.adb.run(&["kill-server"]);
                    std::thread::sleep(Duration::from_millis(500));
                    rig2.adb.run(&["start-server"]);
                })
                .await;
                reattach(&shared, &rig, rig.via_adb.clone()).await;
                shared
                    .truth
                    .lock()
                    .unwrap()
                    .excused
                    .push((None, from, Instant::now()));
            }
            "kill9_connector" => {
                let from = Instant::now();
                let conn = Arc::clone(&rig.conn);
                let pid = tokio::task::spawn_blocking(move || {
                    let mut c = conn.lock().unwrap();
                    c.restart();
                    c.pid()
                })
                .await
                .unwrap_or(0);
                shared.connector_pid.store(u64::from(pid), Ordering::SeqCst);
                shared.truth.lock().unwrap().excused.push((
                    None,
                    from,
                    Instant::now() + CONVERGENCE,
                ));
            }
            _ => unreachable!(),
        }
        let gap = cfg.fault_every.as_millis() as u64;
        tokio::time::sleep(Duration::from_millis(gap / 2 + rng.below(gap))).await;
    }
    // Everything back to normal before the end, so the last transitions can be judged.
    tokio::time::sleep(Duration::from_secs(3)).await;
}

/// A phone's truth and observations in time order, for a violation's message.
fn history(
    observed: &[(usize, Instant, String)],
    truth: &Truth,
    p: usize,
    started: Instant,
) -> String {
    let mut events: Vec<(Instant, String)> = observed
        .iter()
        .filter(|(q, _, _)| *q == p)
        .map(|(_, t, s)| (*t, format!("seen {s}")))
        .chain(
            truth
                .transitions
                .iter()
                .filter(|(q, _, _)| *q == p)
                .map(|(_, t, s)| (*t, format!("TRUTH {s}"))),
        )
        .collect();
    events.sort_by_key(|(t, _)| *t);
    events
        .iter()
        .map(|(t, e)| {
            format!(
                "+{:.1} {e}",
                t.saturating_duration_since(started).as_secs_f64()
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// End-of-run checks: descriptor convergence, side effects run once, no panic in the logs.
async fn finish(shared: &Shared, rig: &Rig, started: Instant) {
    let truth = std::mem::take(&mut *shared.truth.lock().unwrap());
    let observed = shared.observed.lock().unwrap().clone();
    for (p, at, want) in &truth.transitions {
        // A later transition of the same phone within the window supersedes this one.
        let superseded = truth
            .transitions
            .iter()
            .any(|(q, t, _)| q == p && t > at && *t <= *at + CONVERGENCE)
            || truth
                .returns
                .iter()
                .any(|(q, t)| q == p && t > at && *t <= *at + CONVERGENCE);
        let excused = truth.excused.iter().any(|(q, from, to)| {
            q.is_none_or(|q| q == *p) && *from <= *at + CONVERGENCE && *to >= *at
        });
        if superseded || excused {
            continue;
        }
        if truth.frozen.iter().any(|(q, _, from)| q == p && from == at) {
            shared.report.lock().unwrap().freezes_judged += 1;
        }
        // Converged when the status the agent holds at `at + CONVERGENCE` (its last observation
        // by then) is the truth; the lag is 0 when it already was at `at`, else the time of the
        // first observation of the truth after `at`.
        let status_at = |when: Instant| {
            observed
                .iter()
                .filter(|(q, t, _)| q == p && *t <= when)
                .max_by_key(|(_, t, _)| *t)
                .map(|(_, _, s)| s.as_str())
        };
        let first_seen = observed
            .iter()
            .filter(|(q, t, s)| q == p && t >= at && s == want)
            .min_by_key(|(_, t, _)| *t)
            .map(|(_, t, _)| t.duration_since(*at));
        let lag = if status_at(*at) == Some(*want) {
            Some(Duration::ZERO)
        } else {
            first_seen
        };
        if let Some(lag) = lag {
            shared
                .report
                .lock()
                .unwrap()
                .convergence_ms
                .push(lag.as_secs_f64() * 1000.0);
        }
        if status_at(*at + CONVERGENCE) != Some(*want) {
            let lag = first_seen.map_or("never".to_string(), |l| format!("after {l:?}"));
            shared.violation(format!(
                "phone {p}: descriptor {want} {lag} (> {CONVERGENCE:?}) from +{:.1} s; seen: {}",
                at.duration_since(started).as_secs_f64(),
                history(&observed, &truth, *p, started)
            ));
        }
    }
    for (p, start, _) in &truth.frozen {
        if let Some(t) = observed
            .iter()
            .filter(|(q, t, s)| q == p && t >= start && s == "offline")
            .map(|(_, t, _)| *t)
            .min()
        {
            let ms = t.duration_since(*start).as_secs_f64() * 1000.0;
            shared.report.lock().unwrap().freeze_detect_ms.push(ms);
        }
    }
    // No side effect ran twice for one tool_call_id: every tap and text is unique per call.
    for (i, phone) in rig.phones.iter().enumerate() {
        let log = phone.state()["command_log"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut seen_taps: BTreeMap<(u32, u32), u32> = BTreeMap::new();
        let mut seen_texts: BTreeMap<String, u32> = BTreeMap::new();
        let sent_texts: HashSet<String> = shared.texts[i].lock().unwrap().iter().cloned().collect();
        for e in &log {
            let argv: Vec<&str> = e["argv"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if argv.len() == 4 && argv[0] == "input" && argv[1] == "tap" {
                if let (Ok(x), Ok(y)) = (argv[2].parse(), argv[3].parse()) {
                    *seen_taps.entry((x, y)).or_default() += 1;
                }
            }
            if argv.first() == Some(&"input") {
                for w in argv.iter().filter(|w| sent_texts.contains(**w)) {
                    *seen_texts.entry(w.to_string()).or_default() += 1;
                }
            }
        }
        let sent_taps: HashSet<(u32, u32)> =
            shared.taps[i].lock().unwrap().iter().copied().collect();
        for (at, n) in seen_taps
            .iter()
            .filter(|(at, n)| **n > 1 && sent_taps.contains(at))
        {
            shared.violation(format!(
                "phone {i}: tap {at:?} ran {n} times for one tool_call_id"
            ));
        }
        for (w, n) in seen_texts.iter().filter(|(_, n)| **n > 1) {
            shared.violation(format!(
                "phone {i}: text {w} typed {n} times for one tool_call_id"
            ));
        }
    }
    let logs = rig.conn.lock().unwrap().logs();
    // Kept for the post-mortem when something failed (the data dir goes with the run).
    if !shared.report.lock().unwrap().violations.is_empty() {
        let keep = std::env::temp_dir().join(format!("soak-connector-{}.log", std::process::id()));
        if std::fs::write(&keep, &logs).is_ok() {
            println!("soak: connector log kept at {}", keep.display());
        }
    }
    for line in logs.lines().filter(|l| l.contains("panicked")) {
        shared.violation(format!("connector panic: {line}"));
    }
}
