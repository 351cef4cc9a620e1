//! The inventory of attached phones, keyed by the phone's name (its `ro.serialno`, or
//! `ro.serialno#N` when several phones report one serial: [`names`]), kept current without
//! polling the adb server: `host:track-devices-l` pushes every change ([`tracker`]);
//! direct-transport phones are re-probed every [`DIRECT_PROBE_PERIOD`] ([`direct`]).
//! Subscribers get a tick on every change (descriptor pushes).
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
//! Several adb servers (boxes) feed one inventory. Each way to reach a phone is a *route*
//! ([`RouteKey`]): an adb server and one of its transports (adb's transport id, which tells
//! apart two transports listed under one serial; services are opened with
//! `host:transport-id:N`), or a direct `tcp:` transport. A transport is one phone: the routes
//! of one name are one phone (the same phone seen by two servers, or over USB and Wi-Fi —
//! their Android IDs agree), while two phones reporting one serial (their Android IDs differ,
//! or one server lists both at once) are two names ([`identity::place`], field bug 50). When a
//! name has several routes, the route used is chosen deterministically: an online (`device`)
//! route first, then the lower rank (adb servers in config order, then direct phones); the
//! others stay as fallbacks and take over when the chosen one goes away. The log says so once
//! per name.

mod direct;
mod identity;
mod log;
pub mod names;
mod reconnect;
mod routes;
mod stale_wifi;
mod tracker;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::watch;

use crate::adb::DeviceLink;
use crate::device::parse::devices::{DeviceState, RouteKind};

pub use direct::{attach_direct, attach_paired, identify, run_direct_watch, run_paired_watch};
pub use identity::SECOND_PROPERTY_DEADLINE;
pub use names::{NameBook, NameRecord};
pub use reconnect::{RECONNECT_ATTEMPTS, RECONNECT_BACKOFF};
pub use stale_wifi::{STALE_AFTER, STALE_REDIALS};
pub use tracker::{refresh_once, run_adb_tracker, run_adb_tracker_from};

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

/// One way to reach a phone: its adb server's label (`None` for a direct transport), the
/// transport's name there (adb serial, or `tcp:HOST:PORT`), and adb's transport id when the
/// server gave one (`transport_id:N`; `None` for direct phones and servers without
/// `track-devices-l`). Two transports adb lists under one serial differ by their id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RouteKey {
    /// Label of the adb server; `None`: direct.
    pub server: Option<String>,
    /// adb serial (`R58N…`, `127.0.0.1:5555`) or `tcp:HOST:PORT`.
    pub transport: String,
    /// adb's transport id.
    pub transport_id: Option<u64>,
}

impl RouteKey {
    /// The key of a direct route through `transport` (`tcp:HOST:PORT`).
    pub fn direct(transport: &str) -> RouteKey {
        RouteKey {
            server: None,
            transport: transport.to_string(),
            transport_id: None,
        }
    }

    /// Whether both name the same transport of the same server, whatever their ids.
    fn same_transport(&self, other: &RouteKey) -> bool {
        self.server == other.server && self.transport == other.transport
    }
}

/// One phone the connector can see, through one route.
#[derive(Clone, Debug)]
pub struct AttachedPhone {
    /// The phone's name: its `ro.serialno`, or `ro.serialno#N` (N ≥ 2) for each further phone
    /// reporting the same serial ([`names`]); the transport name while it has never been
    /// online. Claims, bindings and `devices` use it.
    pub serial: String,
    /// `ro.serialno` as the phone reports it (the transport name while never online).
    pub serialno: String,
    /// Digest of the phone's Android ID ([`names::digest`]), read only when another route
    /// reports the same serial.
    pub second: Option<String>,
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
    /// adb's transport id (`transport_id:N`); `None` for direct phones.
    pub transport_id: Option<u64>,
    /// The adb server (its configured name, else `host:port`) carrying it; `None` for a
    /// direct-transport phone.
    pub adb_server: Option<String>,
    /// Preference among routes to one serial: lower wins (see the module doc).
    pub rank: usize,
    /// A direct route to a phone the connector paired over Wi-Fi ([`RouteKind::WifiPaired`]).
    pub wifi_paired: bool,
    /// Whether the phone answered its identity probe on this route; `false` for a record of a
    /// transport never online, kept under the transport's name.
    pub identified: bool,
}

impl AttachedPhone {
    /// How this route reaches the phone (what a fix may tell the user to do).
    pub fn route_kind(&self) -> RouteKind {
        match RouteKind::of(self.adb_server.as_deref(), &self.transport) {
            RouteKind::Direct if self.wifi_paired => RouteKind::WifiPaired,
            kind => kind,
        }
    }

    /// The route's key.
    pub fn key(&self) -> RouteKey {
        RouteKey {
            server: self.adb_server.clone(),
            transport: self.transport.clone(),
            transport_id: self.transport_id,
        }
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

/// Routes of every name.
type Routes = HashMap<String, Vec<AttachedPhone>>;

/// Shared inventory; cheap to clone.
#[derive(Clone)]
pub struct Inventory {
    phones: Arc<RwLock<Routes>>,
    changes: Arc<watch::Sender<u64>>,
    /// Routes marked `offline` because they stopped answering while adb lists them `device`;
    /// the liveness check owns them until they answer.
    frozen: Arc<Mutex<HashSet<RouteKey>>>,
    /// Ticks when a call suspects a phone (a `device_timeout`): check now.
    suspects: Arc<watch::Sender<u64>>,
    /// Names seen in this process: one coming back after all its routes were forgotten is
    /// logged as `gone` → its state (`log::log_state_change`); a first sighting is not.
    seen: Arc<Mutex<HashSet<String>>>,
    /// Labels of the adb servers that do not answer now (killed, restarting, not started):
    /// a serial no phone has may be behind one of them (field bug 34).
    servers_down: Arc<Mutex<HashSet<String>>>,
    /// Names of phones sharing a serial.
    names: NameBook,
}

/// The preferred route of one name.
fn best(routes: &[AttachedPhone]) -> Option<&AttachedPhone> {
    routes
        .iter()
        .min_by(|a, b| a.preference().cmp(&b.preference()))
}

/// What subscribers see of a name: its preferred route's state and place.
type Visible = Option<(DeviceState, String, Option<String>)>;

fn visible(routes: Option<&Vec<AttachedPhone>>) -> Visible {
    routes
        .and_then(|r| best(r))
        .map(|p| (p.state.clone(), p.transport.clone(), p.adb_server.clone()))
}

/// Sort key of names sharing a serial: the serial itself, then `#2`, `#3`, … in number order.
fn name_order(name: &str) -> (usize, &str) {
    (name.len(), name)
}

impl Default for Inventory {
    fn default() -> Self {
        Self::with_names(NameBook::default())
    }
}

impl Inventory {
    /// An empty inventory naming phones that share a serial from `names` (the records read
    /// from the store at start; [`names`]).
    pub fn with_names(names: NameBook) -> Self {
        Self {
            phones: Arc::default(),
            changes: Arc::new(watch::channel(0).0),
            frozen: Arc::default(),
            suspects: Arc::new(watch::channel(0).0),
            seen: Arc::default(),
            servers_down: Arc::default(),
            names,
        }
    }

    /// The names of phones sharing a serial.
    pub fn names(&self) -> &NameBook {
        &self.names
    }

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

    /// The phone named `serial` (its `ro.serialno`, or `ro.serialno#N`), through its
    /// preferred route.
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

    /// The identified phones reporting `serialno`, each through its preferred route, in name
    /// order (`SERIAL`, `SERIAL#2`, …): more than one when the serial is not unique.
    pub fn sharing(&self, serialno: &str) -> Vec<AttachedPhone> {
        let mut phones: Vec<AttachedPhone> = self
            .read()
            .values()
            .filter_map(|r| best(r))
            .filter(|p| p.identified && p.serialno == serialno)
            .cloned()
            .collect();
        phones.sort_by(|a, b| name_order(&a.serial).cmp(&name_order(&b.serial)));
        phones
    }

    /// A receiver ticking on every change.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Ticks [`Self::subscribe`]rs without a change of the inventory itself: something they
    /// project from a phone changed (the lock screen came up or went), so each session
    /// re-projects its channels' descriptors and pushes those whose status changed.
    pub fn announce(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// Tells the liveness checks that a call to a phone ended in `device_timeout`: phones behind
    /// adb servers are checked now rather than at the next period.
    pub fn suspect(&self) {
        self.suspects.send_modify(|n| *n += 1);
    }

    fn frozen_marks(&self) -> std::sync::MutexGuard<'_, HashSet<RouteKey>> {
        self.frozen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the route `key` is marked unresponsive.
    fn is_frozen(&self, key: &RouteKey) -> bool {
        self.frozen_marks().contains(key)
    }

    /// Marks an online route that did not answer as `offline`; `false` when it was not online
    /// (adb's own state, or already marked).
    fn freeze(&self, key: &RouteKey) -> bool {
        if !self.online(key) {
            return false;
        }
        self.frozen_marks().insert(key.clone());
        // Logged as a `phone state changed` like any other (README: one line per change); the
        // liveness check adds why.
        self.set_state(key, DeviceState::Offline);
        true
    }

    /// A marked route answered again: `device`. `false` when it was not marked (adb's state
    /// in between wins: the tracker re-probes it).
    fn thaw(&self, key: &RouteKey) -> bool {
        if !self.frozen_marks().remove(key) {
            return false;
        }
        self.set_state(key, DeviceState::Device);
        true
    }

    /// adb reported a state of its own for the route: it supersedes an unresponsive mark.
    fn unmark(&self, key: &RouteKey) {
        self.frozen_marks().remove(key);
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Routes> {
        self.phones.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Routes> {
        self.phones.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The route `key`, under whichever name holds it.
    fn route(&self, key: &RouteKey) -> Option<AttachedPhone> {
        self.read()
            .values()
            .flatten()
            .find(|p| &p.key() == key)
            .cloned()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A route of `R58N12ABCDEF` through `transport` (`adb_server`: `None` for direct).
    pub(crate) fn route(
        transport: &str,
        adb_server: Option<&str>,
        wifi_paired: bool,
    ) -> AttachedPhone {
        AttachedPhone {
            serial: "R58N12ABCDEF".into(),
            serialno: "R58N12ABCDEF".into(),
            second: None,
            model: String::new(),
            manufacturer: String::new(),
            sdk: None,
            state: DeviceState::Device,
            link: DeviceLink::direct("127.0.0.1:1"),
            transport: transport.into(),
            transport_id: None,
            adb_server: adb_server.map(str::to_string),
            rank: 0,
            wifi_paired,
            identified: true,
        }
    }
}
