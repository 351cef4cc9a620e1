//! The inventory of attached phones, keyed by `ro.serialno`, kept current without polling the
//! adb server: `host:track-devices` pushes every change; direct-transport phones are re-probed
//! every [`DIRECT_PROBE_PERIOD`]. Subscribers get a tick on every change (descriptor pushes).
//!
//! A phone behind an adb server can freeze while adb keeps listing it `device` (the server does
//! not notice a USB or TCP transport that accepts bytes and never answers). Every
//! [`SERVER_LIVENESS_PERIOD`] (a marked one every [`FROZEN_RECHECK`]), and at once after a call
//! ended in `device_timeout`
//! ([`Inventory::suspect`]), each such phone is asked to open a `sync:` stream (adbd answers
//! `OKAY` from its own thread: no process on the phone, none on the host) within
//! [`LIVENESS_DEADLINE`]; one that fails twice in a row is marked `offline` (calls then fail fast
//! with `device_offline` and the fix) until it answers again.
//!
//! Several adb servers (boxes) feed one inventory. A phone is keyed by `ro.serialno`; each way
//! to reach it is a *route* (adb server + adb serial, or a direct `tcp:` transport). When one
//! serial has several routes (the same phone seen by two servers, or two phones sharing a
//! serial), the route used is chosen deterministically: an online (`device`) route first, then
//! the lower rank (adb servers in config order, then direct phones); the others stay as
//! fallbacks and take over when the chosen one goes away. The log says so once per serial.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::adb::{AdbError, AdbServerClient, DeviceLink, HostKeyFile};
use crate::device::parse::devices::{parse_devices_l, DeviceState, RouteKind};
use crate::device::parse::text::decode_output;

/// How often direct-transport phones are checked (ms scale: pushes must follow within 2 s).
pub const DIRECT_PROBE_PERIOD: Duration = Duration::from_millis(1000);
/// A direct link idle this long gets a liveness probe (a frozen transport accepts bytes but never
/// answers: field bug 12).
pub const LIVENESS_IDLE: Duration = Duration::from_secs(3);
/// Deadline of the liveness probe.
pub const LIVENESS_DEADLINE: Duration = Duration::from_millis(1500);
/// Deadline of the identity probe (`getprop` ×3).
pub const PROBE_DEADLINE: Duration = Duration::from_secs(5);
/// How often phones behind an adb server that it lists as `device` are checked for an answer
/// (a `sync:` open each: for 32 phones ≈ 11 local connections per second, no process).
pub const SERVER_LIVENESS_PERIOD: Duration = Duration::from_secs(3);
/// How often a phone marked unresponsive is checked again (only those: it is back `connected`
/// within this of answering).
pub const FROZEN_RECHECK: Duration = Duration::from_secs(1);
/// How long a direct phone whose connection closed is given to answer a new one before it is
/// recorded gone: enough for a key refusal (connect, `AUTH`, then
/// [`crate::adb::direct::KEY_PROMPT_WAIT`]) to be told as `unauthorized`, short enough that a
/// phone that left the network is `offline` within about 2 s.
pub const REDIAL_GRACE: Duration = Duration::from_millis(2000);
/// Back-off between attempts to reach the adb server.
pub const SERVER_RETRY: Duration = Duration::from_secs(2);

/// One phone the connector can see.
#[derive(Clone, Debug)]
pub struct AttachedPhone {
    /// `ro.serialno` (or the transport name while it has never been online).
    pub serial: String,
    /// `ro.product.model`.
    pub model: String,
    /// `ro.product.manufacturer`.
    pub manufacturer: String,
    /// `ro.build.version.sdk`.
    pub sdk: Option<u32>,
    /// Transport state.
    pub state: DeviceState,
    /// How to reach it.
    pub link: DeviceLink,
    /// adb serial (`R58N…`, `127.0.0.1:5555`) or `tcp:HOST:PORT` for direct phones.
    pub transport: String,
    /// The adb server (its configured name, else `host:port`) carrying it; `None` for a
    /// direct-transport phone.
    pub adb_server: Option<String>,
    /// Preference among routes to one serial: lower wins (see the module doc).
    pub rank: usize,
    /// A direct route to a phone the connector paired over Wi-Fi ([`RouteKind::WifiPaired`]).
    pub wifi_paired: bool,
}

impl AttachedPhone {
    /// How this route reaches the phone (what a fix may tell the user to do).
    pub fn route_kind(&self) -> RouteKind {
        match RouteKind::of(self.adb_server.as_deref(), &self.transport) {
            RouteKind::Direct if self.wifi_paired => RouteKind::WifiPaired,
            kind => kind,
        }
    }

    /// Whether `self` and `other` are the same route (server and transport).
    fn same_route(&self, other: &AttachedPhone) -> bool {
        self.adb_server == other.adb_server && self.transport == other.transport
    }

    /// Sort key of route preference: online first, then rank, then the names (stable).
    fn preference(&self) -> (bool, usize, Option<&str>, &str) {
        (
            self.state != DeviceState::Device,
            self.rank,
            self.adb_server.as_deref(),
            &self.transport,
        )
    }
}

/// Rank of direct-transport phones: after every adb server.
pub const DIRECT_RANK: usize = 1 << 16;

/// Where a tracker's phones come from: an adb server's label and its rank.
#[derive(Clone, Debug)]
pub struct Source {
    /// Configured name of the server, else its `host:port`.
    pub label: String,
    /// Config order of the server (0 first).
    pub rank: usize,
}

/// Routes of every serial.
type Routes = HashMap<String, Vec<AttachedPhone>>;

/// Shared inventory; cheap to clone.
#[derive(Clone)]
pub struct Inventory {
    phones: Arc<RwLock<Routes>>,
    changes: Arc<watch::Sender<u64>>,
    /// Routes (adb server label, adb serial) marked `offline` because they stopped answering
    /// while adb lists them `device`; the liveness check owns them until they answer.
    frozen: Arc<Mutex<HashSet<(String, String)>>>,
    /// Ticks when a call suspects a phone (a `device_timeout`): check now.
    suspects: Arc<watch::Sender<u64>>,
    /// Serials seen in this process: one coming back after all its routes were forgotten is
    /// logged as `gone` → its state ([`log_state_change`]); a first sighting is not.
    seen: Arc<Mutex<HashSet<String>>>,
    /// Labels of the adb servers that do not answer now (killed, restarting, not started):
    /// a serial no phone has may be behind one of them (field bug 34).
    servers_down: Arc<Mutex<HashSet<String>>>,
}

/// The preferred route of one serial.
fn best(routes: &[AttachedPhone]) -> Option<&AttachedPhone> {
    routes
        .iter()
        .min_by(|a, b| a.preference().cmp(&b.preference()))
}

/// What subscribers see of a serial: its preferred route's state and place.
type Visible = Option<(DeviceState, String, Option<String>)>;

fn visible(routes: Option<&Vec<AttachedPhone>>) -> Visible {
    routes
        .and_then(|r| best(r))
        .map(|p| (p.state.clone(), p.transport.clone(), p.adb_server.clone()))
}

/// A route as the log names it: its kind, its transport and its adb server, so two routes of
/// one serial through the same server (USB and `adb connect`, or two addresses) read apart.
/// Never the whole serial: a USB transport is the phone's serial and an mDNS one carries it,
/// both masked ([`crate::protocol::descriptor::mask_serial`]).
fn route_name(p: &AttachedPhone) -> String {
    let server = p.adb_server.as_deref().unwrap_or("");
    let masked = || crate::protocol::descriptor::mask_serial(&p.transport);
    match p.route_kind() {
        RouteKind::UsbAdbServer => format!("USB {} via adb server {server}", masked()),
        RouteKind::WifiAdbServer if p.transport.contains("._adb-tls-connect.") => {
            format!("Wi-Fi (mDNS {}) via adb server {server}", masked())
        }
        RouteKind::WifiAdbServer => format!("Wi-Fi {} via adb server {server}", p.transport),
        RouteKind::Emulator => format!("{} via adb server {server}", p.transport),
        RouteKind::Direct => format!("direct {}", p.transport),
        RouteKind::WifiPaired => format!("Wi-Fi (paired) {}", p.transport),
    }
}

/// One log line when a known phone's visible state changes (`offline` → `device`, …): the
/// masked serial, both states and the adb server (`direct` for the direct transport; never
/// the transport, which for USB is the full serial); a step between two states shown alike
/// (`offline`: silent, or its address dead) is not one. A first sighting is not logged, so the
/// operator commands' one-shot surveys stay quiet; changes to or from
/// `adb_server_unavailable` are at debug level, the adb server's own line says it once.
fn log_state_change(
    serial: &str,
    before: &Visible,
    after: &Visible,
    seen: &Mutex<HashSet<String>>,
) {
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    // A phone whose routes were all forgotten (a Wi-Fi address it left, or one adb stopped
    // listing) is `gone`; it counts as a change only for a serial seen before in this process.
    let (was, now, server) = match (before, after) {
        (Some((was, _, server)), None) => (was.clone(), DeviceState::Gone, server.clone()),
        (Some((was, ..)), Some((now, _, server))) => (was.clone(), now.clone(), server.clone()),
        (None, Some((now, _, server))) if seen.contains(serial) => {
            (DeviceState::Gone, now.clone(), server.clone())
        }
        (None, Some(_)) => {
            seen.insert(serial.to_string());
            return;
        }
        (None, None) => return,
    };
    seen.insert(serial.to_string());
    drop(seen);
    // What the line shows, not the variant: `Offline` (silent) and `Gone` (address dead) are
    // both adb's `offline`, and a step between them is no change to the reader.
    if was.as_str() == now.as_str() {
        return;
    }
    let masked = crate::protocol::descriptor::mask_serial(serial);
    let server = server.as_deref().unwrap_or("direct");
    if matches!(was, DeviceState::ServerUnavailable)
        || matches!(now, DeviceState::ServerUnavailable)
    {
        tracing::debug!(serial_hint = %masked, server, from = was.as_str(), to = now.as_str(), "phone state changed");
    } else {
        tracing::info!(serial_hint = %masked, server, from = was.as_str(), to = now.as_str(), "phone state changed");
    }
}

impl Default for Inventory {
    fn default() -> Self {
        Self {
            phones: Arc::default(),
            changes: Arc::new(watch::channel(0).0),
            frozen: Arc::default(),
            suspects: Arc::new(watch::channel(0).0),
            seen: Arc::default(),
            servers_down: Arc::default(),
        }
    }
}

impl Inventory {
    /// Records whether the adb server `label` answers (`down`: it does not).
    fn set_server_down(&self, label: &str, down: bool) {
        let mut set = self.servers_down.lock().unwrap_or_else(|e| e.into_inner());
        if down {
            set.insert(label.to_string());
        } else {
            set.remove(label);
        }
    }

    /// The adb servers (`host:port` labels) that do not answer now, sorted.
    pub fn servers_down(&self) -> Vec<String> {
        let set = self.servers_down.lock().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<String> = set.iter().cloned().collect();
        v.sort();
        v
    }

    /// The phone with `ro.serialno == serial`, through its preferred route.
    pub fn get(&self, serial: &str) -> Option<AttachedPhone> {
        self.read().get(serial).and_then(|r| best(r)).cloned()
    }

    /// Every known phone, each through its preferred route.
    pub fn list(&self) -> Vec<AttachedPhone> {
        self.read()
            .values()
            .filter_map(|r| best(r))
            .cloned()
            .collect()
    }

    /// Every route of every phone (fallbacks included).
    pub fn routes(&self) -> Vec<AttachedPhone> {
        self.read().values().flatten().cloned().collect()
    }

    /// A receiver ticking on every change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Tells the liveness checks that a call to a phone ended in `device_timeout`: phones behind
    /// adb servers are checked now rather than at the next period.
    pub fn suspect(&self) {
        self.suspects.send_modify(|n| *n += 1);
    }

    fn frozen_marks(&self) -> std::sync::MutexGuard<'_, HashSet<(String, String)>> {
        self.frozen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the route through `transport` of adb server `server` is marked unresponsive.
    fn is_frozen(&self, server: &str, transport: &str) -> bool {
        self.frozen_marks()
            .contains(&(server.to_string(), transport.to_string()))
    }

    /// Marks an online route of `server` that did not answer as `offline`; `false` when it
    /// was not online (adb's own state, or already marked).
    fn freeze(&self, server: &str, transport: &str) -> bool {
        if !self.online_by_transport(Some(server), transport) {
            return false;
        }
        self.frozen_marks()
            .insert((server.to_string(), transport.to_string()));
        // Logged as a `phone state changed` like any other (README: one line per change); the
        // liveness check adds why.
        self.set_state_inner(Some(server), transport, DeviceState::Offline, true);
        true
    }

    /// A marked route answered again: `device`. `false` when it was not marked (adb's state
    /// in between wins: the tracker re-probes it).
    fn thaw(&self, server: &str, transport: &str) -> bool {
        if !self
            .frozen_marks()
            .remove(&(server.to_string(), transport.to_string()))
        {
            return false;
        }
        self.set_state_inner(Some(server), transport, DeviceState::Device, true);
        true
    }

    /// adb reported a state of its own for the route: it supersedes an unresponsive mark.
    fn unmark(&self, server: &str, transport: &str) {
        self.frozen_marks()
            .remove(&(server.to_string(), transport.to_string()));
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Routes> {
        self.phones.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Routes> {
        self.phones.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Inserts or replaces a route of a phone; ticks when anything visible changed.
    fn upsert(&self, phone: AttachedPhone) {
        // The serial is an identifier the logs never carry whole (see `mask_serial`).
        let masked = crate::protocol::descriptor::mask_serial(&phone.serial);
        let serial = phone.serial.clone();
        let (before, after, duplicate) = {
            let mut map = self.write();
            let routes = map.entry(phone.serial.clone()).or_default();
            let before = visible(Some(routes));
            let was = routes.len();
            match routes.iter_mut().find(|r| r.same_route(&phone)) {
                Some(r) => *r = phone,
                None => routes.push(phone),
            }
            let dup = (was == 1 && routes.len() == 2).then(|| {
                let mut sorted: Vec<&AttachedPhone> = routes.iter().collect();
                sorted.sort_by(|a, b| a.preference().cmp(&b.preference()));
                sorted.iter().map(|r| route_name(r)).collect::<Vec<_>>()
            });
            (before, visible(Some(routes)), dup)
        };
        let changed = before != after;
        log_state_change(&serial, &before, &after, &self.seen);
        if let Some(places) = duplicate {
            tracing::warn!(
                serial_hint = %masked,
                used = %places[0],
                fallback = %places[1],
                "one serial is reachable through two routes: the first is used, the other is the fallback"
            );
        }
        if changed {
            self.changes.send_modify(|n| *n += 1);
        }
    }

    /// Whether any route through `transport` of `server` (`None`: direct) is recorded.
    fn has_route(&self, server: Option<&str>, transport: &str) -> bool {
        self.read()
            .values()
            .flatten()
            .any(|p| p.transport == transport && p.adb_server.as_deref() == server)
    }

    /// Direct routes whose phone has never identified itself: one that refused the
    /// connector's key from its first connection sends no `CNXN`, so no `ro.serialno` can be
    /// read; it is recorded under its transport (`tcp:HOST:PORT`) as its serial, as `adb
    /// devices` lists an unauthorized network phone by its address.
    pub fn unidentified_direct(&self) -> Vec<AttachedPhone> {
        let mut routes: Vec<AttachedPhone> = self
            .read()
            .values()
            .flatten()
            .filter(|p| p.adb_server.is_none() && p.serial == p.transport)
            .cloned()
            .collect();
        routes.sort_by(|a, b| a.transport.cmp(&b.transport));
        routes
    }

    /// Forgets the record of a direct phone kept under its `transport` while it was
    /// unidentified ([`Inventory::unidentified_direct`]): it now answers under its
    /// `ro.serialno`. Not logged as a state change (the phone did not go); ticks when one was
    /// there. Returns whether one was.
    fn forget_unidentified(&self, transport: &str) -> bool {
        let removed = {
            let mut map = self.write();
            let Some(routes) = map.get_mut(transport) else {
                return false;
            };
            let was = routes.len();
            routes.retain(|p| !(p.adb_server.is_none() && p.transport == transport));
            let removed = routes.len() != was;
            if routes.is_empty() {
                map.remove(transport);
            }
            removed
        };
        if removed {
            self.changes.send_modify(|n| *n += 1);
        }
        removed
    }

    /// Whether the route through `transport` of `server` (`None`: direct) is recorded online.
    fn online_by_transport(&self, server: Option<&str>, transport: &str) -> bool {
        self.read().values().flatten().any(|p| {
            p.transport == transport
                && p.adb_server.as_deref() == server
                && p.state == DeviceState::Device
        })
    }

    /// Forgets the routes through `transport` of `server` (`None`: direct), e.g. a Wi-Fi
    /// address the phone left; ticks when anything visible changed.
    pub fn remove_route(&self, server: Option<&str>, transport: &str) {
        let changed = {
            let mut map = self.write();
            let mut changed = false;
            let mut gone = Vec::new();
            map.retain(|serial, routes| {
                let before = visible(Some(routes));
                routes.retain(|p| !(p.transport == transport && p.adb_server.as_deref() == server));
                let after = visible(Some(routes));
                if before != after {
                    changed = true;
                    gone.push((serial.clone(), before, after));
                }
                !routes.is_empty()
            });
            drop(map);
            for (serial, before, after) in &gone {
                log_state_change(serial, before, after, &self.seen);
            }
            changed
        };
        if changed {
            self.changes.send_modify(|n| *n += 1);
        }
    }

    /// Marks every route through `transport` of `server` (`None`: direct) as `state` (kept,
    /// so bindings survive). Each visible change is logged ([`log_state_change`]).
    fn set_state_by_transport(&self, server: Option<&str>, transport: &str, state: DeviceState) {
        self.set_state_inner(server, transport, state, true);
    }

    /// [`Inventory::set_state_by_transport`], logging the changes only when `log`.
    fn set_state_inner(
        &self,
        server: Option<&str>,
        transport: &str,
        state: DeviceState,
        log: bool,
    ) {
        let changes = {
            let mut map = self.write();
            let mut changes = Vec::new();
            for (serial, routes) in map.iter_mut() {
                let before = visible(Some(routes));
                for p in routes
                    .iter_mut()
                    .filter(|p| p.transport == transport && p.adb_server.as_deref() == server)
                {
                    p.state = state.clone();
                }
                let after = visible(Some(routes));
                if before != after {
                    changes.push((serial.clone(), before, after));
                }
            }
            changes
        };
        if log {
            for (serial, before, after) in &changes {
                log_state_change(serial, before, after, &self.seen);
            }
        }
        if !changes.is_empty() {
            self.changes.send_modify(|n| *n += 1);
        }
    }
}

/// Identity of an online phone: (serial, model, manufacturer, sdk).
struct Identity {
    serial: String,
    model: String,
    manufacturer: String,
    sdk: Option<u32>,
}

async fn probe(link: &DeviceLink) -> Result<Identity, AdbError> {
    let out = link
        .shell(
            "getprop ro.serialno; getprop ro.product.model; getprop ro.product.manufacturer; getprop ro.build.version.sdk",
            PROBE_DEADLINE,
            64 * 1024,
        )
        .await?;
    let text = decode_output(&out.stdout);
    let mut lines = text.lines().map(|l| l.trim().to_string());
    // ro.serialno byte-exact but for the line end (a serial may begin with a space; field bug 33).
    let serial = text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_string();
    lines.next();
    let model = lines.next().unwrap_or_default();
    let manufacturer = lines.next().unwrap_or_default();
    let sdk = lines.next().and_then(|l| l.parse().ok());
    if serial.is_empty() {
        return Err(AdbError::Protocol(
            "phone reported an empty ro.serialno".into(),
        ));
    }
    Ok(Identity {
        serial,
        model,
        manufacturer,
        sdk,
    })
}

/// Follows `host:track-devices` of one adb server until `shutdown`, reconnecting with back-off.
pub async fn run_adb_tracker(inv: Inventory, client: AdbServerClient, shutdown: CancellationToken) {
    let source = Source {
        label: client.addr().to_string(),
        rank: 0,
    };
    run_adb_tracker_from(inv, client, source, shutdown).await
}

/// [`run_adb_tracker`] for one of several servers: its phones carry `source`'s label and rank.
pub async fn run_adb_tracker_from(
    inv: Inventory,
    client: AdbServerClient,
    source: Source,
    shutdown: CancellationToken,
) {
    let liveness = run_server_liveness(inv.clone(), source.label.clone(), shutdown.clone());
    let tracker = track(inv, client, source, shutdown);
    tokio::join!(liveness, tracker);
}

/// What a liveness check of a phone behind an adb server found.
enum Liveness {
    /// A `sync:` stream opened.
    Answers,
    /// No answer within [`LIVENESS_DEADLINE`], twice: a hung adbd or USB stack.
    Frozen,
    /// The server refused the stream at once (`device offline`, `device not found`): the
    /// transport closed — unplugged or out of reach — before adb's list says so.
    Gone,
}

/// Whether a phone behind an adb server answers: a `sync:` stream opens (the server replies
/// `OKAY` only once adbd did) within [`LIVENESS_DEADLINE`], tried twice so one slow answer of
/// a busy phone is not taken for a freeze. A refusal without waiting is [`Liveness::Gone`]
/// (AOSP `transport.cpp` answers `device offline` for a closed transport).
async fn answers(link: &DeviceLink) -> Liveness {
    let mut refused = false;
    for _ in 0..2 {
        match tokio::time::timeout(LIVENESS_DEADLINE, link.open("sync:")).await {
            Ok(Ok(stream)) => {
                drop(stream);
                return Liveness::Answers;
            }
            Ok(Err(_)) => refused = true,
            Err(_) => {}
        }
    }
    if refused {
        Liveness::Gone
    } else {
        Liveness::Frozen
    }
}

/// The liveness check of the phones behind one adb server (`label`): see the module doc.
async fn run_server_liveness(inv: Inventory, label: String, shutdown: CancellationToken) {
    let mut suspects = inv.suspects.subscribe();
    let mut last_full = tokio::time::Instant::now();
    loop {
        let suspected = tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(FROZEN_RECHECK) => false,
            _ = suspects.changed() => true,
        };
        // Online phones every period (or at once when a call timed out); marked ones each tick.
        let full = suspected || last_full.elapsed() >= SERVER_LIVENESS_PERIOD;
        if full {
            last_full = tokio::time::Instant::now();
        }
        let routes: Vec<AttachedPhone> = inv
            .routes()
            .into_iter()
            .filter(|p| {
                p.adb_server.as_deref() == Some(label.as_str())
                    && ((full && p.state == DeviceState::Device)
                        || inv.is_frozen(&label, &p.transport))
            })
            .collect();
        let checked = futures_util::future::join_all(routes.into_iter().map(|p| async move {
            let ok = answers(&p.link).await;
            (p, ok)
        }))
        .await;
        for (p, found) in checked {
            let masked = crate::protocol::descriptor::mask_serial(&p.serial);
            let fix = DeviceState::Offline
                .remedy(p.route_kind())
                .unwrap_or_default();
            match found {
                Liveness::Answers => {
                    if inv.thaw(&label, &p.transport) {
                        tracing::info!(serial_hint = %masked, server = %label, "phone answers again: connected");
                    }
                }
                Liveness::Frozen => {
                    if inv.freeze(&label, &p.transport) {
                        tracing::warn!(serial_hint = %masked, server = %label, "phone listed `device` by adb does not answer (frozen transport): offline until it answers; {fix}");
                    }
                }
                Liveness::Gone => {
                    if inv.freeze(&label, &p.transport) {
                        tracing::warn!(serial_hint = %masked, server = %label, "phone's transport closed (unplugged or out of reach) before adb listed it: offline until it is back; {fix}");
                    }
                }
            }
        }
    }
}

/// The `host:track-devices` loop of [`run_adb_tracker_from`].
async fn track(
    inv: Inventory,
    client: AdbServerClient,
    source: Source,
    shutdown: CancellationToken,
) {
    // adb serial → ro.serialno learned while online.
    let mut known: HashMap<String, String> = HashMap::new();
    let mut warned = false;
    while !shutdown.is_cancelled() {
        match client.track_devices().await {
            Ok(mut tracker) => loop {
                if warned {
                    tracing::info!(server = %source.label, "adb server reachable again");
                    warned = false;
                }
                let list = tokio::select! {
                    _ = shutdown.cancelled() => return,
                    l = tracker.next_list() => l,
                };
                if list.is_ok() {
                    inv.set_server_down(&source.label, false);
                }
                let Ok(list) = list else {
                    // The server went away (killed, restarted, box rebooted): said once; the
                    // line above says when it is back.
                    tracing::warn!(server = %source.label, "adb server connection lost: its phones are unavailable until it answers again; retrying every 2 s");
                    warned = true;
                    break;
                };
                reconcile(&inv, &client, &source, &mut known, &list).await;
            },
            Err(e) if !warned => {
                warned = true;
                tracing::warn!(server = %source.label, error = %e, "adb server not reachable (start it with `adb start-server`, or pass --adb-server \"\" to use only --device phones); retrying every 2 s");
            }
            Err(e) => tracing::debug!(error = %e, "adb server still not reachable"),
        }
        // Server gone: everything it carried is unreachable until it returns — told apart from
        // a phone's own absence (`adb_server_unavailable`, field bug 34).
        inv.set_server_down(&source.label, true);
        for adb_serial in known.keys() {
            inv.unmark(&source.label, adb_serial);
            inv.set_state_by_transport(
                Some(&source.label),
                adb_serial,
                DeviceState::ServerUnavailable,
            );
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(SERVER_RETRY) => {}
        }
    }
}

/// Applies one `track-devices` list: states first (a phone that left or went offline is told
/// at once), then the phones newly `device` are identified, concurrently, each within
/// [`PROBE_DEADLINE`]. A phone already identified and online under the same adb serial is not
/// probed again: probing every phone on every list, one after the other, let a frozen phone
/// (adb still says `device`) hold every other phone's change back by the probe deadline (fault
/// soak, `docs/reliability.md`).
async fn reconcile(
    inv: &Inventory,
    client: &AdbServerClient,
    source: &Source,
    known: &mut HashMap<String, String>,
    list: &str,
) {
    let entries = parse_devices_l(list);
    let mut to_probe = Vec::new();
    for e in &entries {
        let link = DeviceLink::via_server(client.clone(), e.serial.clone());
        if e.state == DeviceState::Device {
            // A route marked unresponsive is the liveness check's (probing it here would hold
            // this list's other changes back by the probe deadline).
            if !(known.contains_key(&e.serial)
                && (inv.online_by_transport(Some(&source.label), &e.serial)
                    || inv.is_frozen(&source.label, &e.serial)))
            {
                to_probe.push((e.serial.clone(), link));
            }
        } else if known.contains_key(&e.serial) {
            inv.unmark(&source.label, &e.serial);
            inv.set_state_by_transport(Some(&source.label), &e.serial, e.state.clone());
        } else {
            // Never online: its adb serial is the best name we have (USB serials equal ro.serialno).
            inv.upsert(AttachedPhone {
                serial: e.serial.clone(),
                model: e.model.clone().unwrap_or_default(),
                manufacturer: String::new(),
                sdk: None,
                state: e.state.clone(),
                link,
                transport: e.serial.clone(),
                adb_server: Some(source.label.clone()),
                rank: source.rank,
                wifi_paired: false,
            });
        }
    }
    // A phone adb no longer lists was unplugged (or its network transport dropped): `Gone`,
    // not adb's `offline` (attached but silent).
    let present: Vec<&str> = entries.iter().map(|e| e.serial.as_str()).collect();
    for adb_serial in known.keys().filter(|s| !present.contains(&s.as_str())) {
        inv.unmark(&source.label, adb_serial);
        inv.set_state_by_transport(Some(&source.label), adb_serial, DeviceState::Gone);
    }
    let probed =
        futures_util::future::join_all(to_probe.into_iter().map(|(adb_serial, link)| async move {
            let identity = probe(&link).await;
            (adb_serial, link, identity)
        }))
        .await;
    for (adb_serial, link, identity) in probed {
        match identity {
            Ok(Identity {
                serial,
                model,
                manufacturer,
                sdk,
            }) => {
                known.insert(adb_serial.clone(), serial.clone());
                inv.upsert(AttachedPhone {
                    serial,
                    model,
                    manufacturer,
                    sdk,
                    state: DeviceState::Device,
                    link,
                    transport: adb_serial,
                    adb_server: Some(source.label.clone()),
                    rank: source.rank,
                    wifi_paired: false,
                });
            }
            Err(err) => tracing::debug!(error = %err, "probe of a tracked phone failed"),
        }
    }
}

/// Whether an online direct link still answers: connected, and either recently heard from or
/// answering a short `echo`. Otherwise the state to record: [`DeviceState::Gone`] when the
/// connection closed or failed (unplugged, off the network), [`DeviceState::Offline`] when it
/// stays open but silent (a frozen adbd: field bug 12). A silent link is dropped so the next
/// probe dials again.
async fn alive(link: &DeviceLink) -> Result<(), DeviceState> {
    if !link.is_connected().await {
        return Err(DeviceState::Gone);
    }
    if link
        .idle_for()
        .await
        .is_some_and(|idle| idle < LIVENESS_IDLE)
    {
        return Ok(());
    }
    let state = match link.shell("echo", LIVENESS_DEADLINE, 64).await {
        Ok(_) => return Ok(()),
        Err(AdbError::Timeout { .. }) => DeviceState::Offline,
        Err(_) => DeviceState::Gone,
    };
    link.reset().await;
    Err(state)
}

/// Identifies the phone behind a direct `link` (`getprop`, [`PROBE_DEADLINE`]) and records it
/// online under `transport` (`tcp:HOST:PORT`). Returns it. Errors: the link's ([`AdbError`]).
pub async fn attach_direct(
    inv: &Inventory,
    link: &DeviceLink,
    transport: &str,
) -> Result<AttachedPhone, AdbError> {
    attach(inv, link, transport, false).await
}

/// The `ro.serialno` of the phone behind a direct `link` (the identity probe,
/// [`PROBE_DEADLINE`]), recording nothing: whether an announced address is the phone looked
/// for. Errors: the link's ([`AdbError`]).
pub async fn identify(link: &DeviceLink) -> Result<String, AdbError> {
    Ok(probe(link).await?.serial)
}

/// [`attach_direct`] for a phone the connector paired over Wi-Fi: its route is
/// [`RouteKind::WifiPaired`] (the Wi-Fi fixes in errors, as `check` gives them).
pub async fn attach_paired(
    inv: &Inventory,
    link: &DeviceLink,
    transport: &str,
) -> Result<AttachedPhone, AdbError> {
    attach(inv, link, transport, true).await
}

async fn attach(
    inv: &Inventory,
    link: &DeviceLink,
    transport: &str,
    wifi_paired: bool,
) -> Result<AttachedPhone, AdbError> {
    let Identity {
        serial,
        model,
        manufacturer,
        sdk,
    } = probe(link).await?;
    let phone = AttachedPhone {
        serial,
        model,
        manufacturer,
        sdk,
        state: DeviceState::Device,
        link: link.clone(),
        transport: transport.to_string(),
        adb_server: None,
        rank: DIRECT_RANK,
        wifi_paired,
    };
    inv.upsert(phone.clone());
    // After the upsert: a claim in between finds the phone under one name or the other.
    if inv.forget_unidentified(transport) {
        tracing::info!(
            transport,
            serial_hint = %crate::protocol::descriptor::mask_serial(&phone.serial),
            "direct phone accepted this connector's key: listed by its serial from now on"
        );
    }
    Ok(phone)
}

/// Keeps one direct-transport phone's state current until `shutdown`; the link answers `AUTH`
/// and `STLS` with the connector's adb key (`key`). A connection that closed is dialled again
/// at once (within [`REDIAL_GRACE`]), so the state recorded says why the phone cannot be used:
/// one that now refuses the key (`AUTH` not accepted, or a wireless-debugging port refusing it
/// over TLS) is `unauthorized`, never "address closed or refused" (a revoked key drops adbd's
/// connections first: AOSP `daemon/auth.cpp`, `adbd_auth_verify`; Developer options → Revoke
/// USB debugging authorisations).
pub async fn run_direct_watch(
    inv: Inventory,
    addr: String,
    key: HostKeyFile,
    shutdown: CancellationToken,
) {
    watch_direct(inv, addr, key, None, shutdown).await
}

/// [`run_direct_watch`] for a phone the connector paired over Wi-Fi (its route is
/// [`RouteKind::WifiPaired`]); `serial` is its `ro.serialno` from the pairing record, so a
/// phone that refuses the key from the watch's first connection (pairing revoked while the
/// connector was down) is still listed `unauthorized` under it ([`record_refusing`]).
pub async fn run_paired_watch(
    inv: Inventory,
    addr: String,
    serial: String,
    key: HostKeyFile,
    shutdown: CancellationToken,
) {
    watch_direct(inv, addr, key, Some(serial), shutdown).await
}

/// The loop of both watches; `paired`: the serial of a Wi-Fi-paired phone (`None` for a
/// `--device` phone).
async fn watch_direct(
    inv: Inventory,
    addr: String,
    key: HostKeyFile,
    paired: Option<String>,
    shutdown: CancellationToken,
) {
    let paired = paired.as_deref();
    let transport = format!("tcp:{addr}");
    let link = DeviceLink::direct_with_key(addr, key);
    let mut online = false;
    loop {
        online = if online {
            match alive(&link).await {
                Ok(()) => true,
                // Closed: what the phone says on a new connection is its state, when it says
                // it soon; past the grace the phone is gone and the next period dials again.
                Err(DeviceState::Gone) => {
                    match tokio::time::timeout(REDIAL_GRACE, dial(&inv, &link, &transport, paired))
                        .await
                    {
                        Ok(online) => online,
                        Err(_) => {
                            inv.set_state_by_transport(None, &transport, DeviceState::Gone);
                            false
                        }
                    }
                }
                Err(state) => {
                    inv.set_state_by_transport(None, &transport, state);
                    false
                }
            }
        } else {
            dial(&inv, &link, &transport, paired).await
        };
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(DIRECT_PROBE_PERIOD) => {}
        }
    }
}

/// One attach attempt of [`run_direct_watch`] (`paired`: the serial of a Wi-Fi-paired phone):
/// `true` when the phone is online; otherwise a known phone's state follows why it cannot be
/// reached. A phone never attached is recorded only when it refuses the key
/// ([`record_refusing`]); one that does not answer at all stays unlisted, as `adb connect`
/// lists no phone it could not reach.
async fn dial(inv: &Inventory, link: &DeviceLink, transport: &str, paired: Option<&str>) -> bool {
    let Err(e) = attach(inv, link, transport, paired.is_some()).await else {
        return true;
    };
    match state_of_failed_dial(&e) {
        Some(DeviceState::Unauthorized) if !inv.has_route(None, transport) => {
            record_refusing(inv, link, transport, paired);
        }
        Some(state) => inv.set_state_by_transport(None, transport, state),
        None => {}
    }
    false
}

/// Records a direct phone that refused the connector's key before this process ever
/// identified it, `unauthorized`, so it is listed and a claim is told the fix; [`attach`]
/// replaces it once the phone accepts the key. A `--device` phone (`paired` `None`) sent no
/// `CNXN`, so no `ro.serialno`: it is recorded under its transport
/// ([`Inventory::unidentified_direct`]) and told to accept the prompt. A Wi-Fi-paired phone is
/// recorded under `paired`, the serial of its pairing record (the TLS port refusing the key:
/// pairing revoked or forgotten, AOSP `daemon/auth.cpp`), and told to pair again. Logged once,
/// with the fix (never the key; the serial masked).
fn record_refusing(inv: &Inventory, link: &DeviceLink, transport: &str, paired: Option<&str>) {
    let phone = AttachedPhone {
        serial: paired.unwrap_or(transport).to_string(),
        model: String::new(),
        manufacturer: String::new(),
        sdk: None,
        state: DeviceState::Unauthorized,
        link: link.clone(),
        transport: transport.to_string(),
        adb_server: None,
        rank: DIRECT_RANK,
        wifi_paired: paired.is_some(),
    };
    let fix = DeviceState::Unauthorized
        .remedy(phone.route_kind())
        .unwrap_or_default();
    match paired {
        Some(serial) => tracing::warn!(
            transport,
            serial_hint = %crate::protocol::descriptor::mask_serial(serial),
            "phone paired over Wi-Fi refuses this connector's key (unauthorized); {fix}"
        ),
        None => tracing::warn!(
            transport,
            "direct phone refuses this connector's key (unauthorized): listed by its address until it accepts; {fix}"
        ),
    }
    inv.upsert(phone);
}

/// The state of a direct phone whose connect failed with `e`; `None` when the failure says
/// nothing about the phone's state (a protocol error, a refused service).
fn state_of_failed_dial(e: &AdbError) -> Option<DeviceState> {
    match e {
        // Plain `AUTH` not accepted (the prompt waits on the phone), or the TLS port refusing
        // the key (pairing revoked or forgotten): both are the phone refusing this host.
        AdbError::DeviceUnauthorized | AdbError::NotPaired => Some(DeviceState::Unauthorized),
        AdbError::Timeout { .. } => Some(DeviceState::Offline),
        AdbError::Io(_) | AdbError::DeviceOffline => Some(DeviceState::Gone),
        _ => None,
    }
}

/// Records in `inv` what one `host:devices-l` (or `host:devices`) answer `list` of `client`
/// shows, as the tracker does: online phones are probed for their identity (a failed probe
/// leaves the phone out), the others kept under their adb serial. For the operator commands,
/// which look once instead of tracking.
pub async fn refresh_once(inv: &Inventory, client: &AdbServerClient, source: &Source, list: &str) {
    let mut known = HashMap::new();
    reconcile(inv, client, source, &mut known, list).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(transport: &str, adb_server: Option<&str>, wifi_paired: bool) -> AttachedPhone {
        AttachedPhone {
            serial: "R58N12ABCDEF".into(),
            model: String::new(),
            manufacturer: String::new(),
            sdk: None,
            state: DeviceState::Device,
            link: DeviceLink::direct("127.0.0.1:1"),
            transport: transport.into(),
            adb_server: adb_server.map(str::to_string),
            rank: 0,
            wifi_paired,
        }
    }

    /// A `--device` phone refusing the key before it ever identified itself is listed
    /// `unauthorized` under its transport, and forgotten under that name once identified.
    #[test]
    fn an_unidentified_direct_phone_is_listed_by_its_transport_until_identified() {
        let inv = Inventory::default();
        let transport = "tcp:10.0.0.2:5555";
        record_refusing(&inv, &DeviceLink::direct("10.0.0.2:5555"), transport, None);
        let waiting = inv.unidentified_direct();
        assert_eq!(waiting.len(), 1);
        assert_eq!(waiting[0].serial, transport);
        assert_eq!(waiting[0].state, DeviceState::Unauthorized);
        assert_eq!(waiting[0].route_kind(), RouteKind::Direct);
        assert!(inv.get(transport).is_some());
        inv.upsert(route(transport, None, false));
        assert!(inv.forget_unidentified(transport));
        assert!(inv.unidentified_direct().is_empty());
        let listed = inv.list();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].serial, "R58N12ABCDEF");
        assert!(!inv.forget_unidentified(transport));
    }

    /// A Wi-Fi-paired phone refusing the key from the first connection is listed
    /// `unauthorized` under the serial of its pairing record (a Wi-Fi-paired route, so the
    /// fix is to pair again), never under its address; attaching it replaces that record.
    #[test]
    fn a_paired_phone_refusing_the_key_is_listed_by_its_stored_serial() {
        let inv = Inventory::default();
        let transport = "tcp:10.0.0.3:37000";
        let link = DeviceLink::direct("10.0.0.3:37000");
        record_refusing(&inv, &link, transport, Some("R58N12ABCDEF"));
        assert!(inv.unidentified_direct().is_empty());
        assert!(inv.get(transport).is_none());
        let phone = inv.get("R58N12ABCDEF").expect("listed by its serial");
        assert_eq!(phone.state, DeviceState::Unauthorized);
        assert_eq!(phone.route_kind(), RouteKind::WifiPaired);
        assert_eq!(phone.transport, transport);
        inv.upsert(route(transport, None, true));
        let listed = inv.list();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].state, DeviceState::Device);
        assert_eq!(inv.routes().len(), 1);
    }

    /// Every kind of route is named apart, and a transport carrying the serial is masked.
    #[test]
    fn route_names_say_the_transport_and_mask_the_serial() {
        let names = [
            route("R58N12ABCDEF", Some("box"), false),
            route(
                "adb-R58N12ABCDEF-AbCdEf._adb-tls-connect._tcp",
                Some("box"),
                false,
            ),
            route("192.168.1.5:5555", Some("box"), false),
            route("emulator-5554", Some("box"), false),
            route("tcp:10.0.0.2:5555", None, false),
            route("tcp:10.0.0.2:40001", None, true),
        ]
        .map(|r| route_name(&r));
        assert_eq!(
            names,
            [
                "USB R58…CDEF via adb server box",
                "Wi-Fi (mDNS adb…_tcp) via adb server box",
                "Wi-Fi 192.168.1.5:5555 via adb server box",
                "emulator-5554 via adb server box",
                "direct tcp:10.0.0.2:5555",
                "Wi-Fi (paired) tcp:10.0.0.2:40001",
            ]
        );
    }
}
