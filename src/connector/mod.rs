//! The connector core: identity, channels and their routes, the claim flow binding a channel to a
//! phone, the lease, descriptor projection, and tool dispatch. One [`Connector`] per process,
//! shared (`Arc`) by every data-plane session ([`crate::data_plane`]).
//!
//! # One owner of state
//! Identity, lease, channels, routes, bindings, auth sessions and channel runtimes live in one
//! [`state::State`] behind one `std` mutex, never held across `.await`. Operations that also
//! write SQLite (channel open and eviction, claim, logout, lease expiry) are serialised by an
//! async *write gate*: each takes the gate, reads and checks the state, commits to the store,
//! then applies its memory half — so the memory never runs ahead of or behind the database, and
//! two such operations never interleave (open vs deregister, claim vs logout, two claims of one
//! phone). The gate is held for one SQLite commit (≈ 0.1–1 ms, WAL `synchronous=NORMAL`) and
//! only by those rare packets; routing, descriptors and tool calls never take it.
//!
//! State that must survive restarts (connector id, channels, bindings, file refs) is written
//! through to SQLite ([`crate::store`]) before it is acknowledged.

pub mod arrival_order;
pub mod auth_session;
pub mod call_log;
pub mod channels;
pub mod claim;
pub mod claim_error;
mod claim_handle;
pub mod claim_policy;
pub mod dispatch_stats;
pub mod form;
pub mod invoke;
pub mod lease;
pub mod pairing;
pub mod pairing_connect;
pub mod pairing_watch;
pub mod qr_pairing;
pub mod release;
pub mod runtime;
pub mod state;
pub mod thumbnail;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::device::inventory::Inventory;
use crate::device::policy::{Policy, Profiles};
use crate::device::tools::registry;
use crate::file_cache::FileCache;
use crate::lifecycle::Lifecycle;
use crate::protocol::random_id;
use crate::secret::CodeHash;
use crate::store::{Store, StoreError};
use claim_policy::ClaimPolicy;

pub use arrival_order::Ticket;
pub use runtime::{ChannelRuntime, RateBucket, RATE_BURST, RATE_PER_SEC};
pub use state::SessionId;

/// (manufacturer, model, SDK) a policy was resolved for.
type PolicyKey = (String, String, Option<u32>);
/// (channel id, tool_call_id) of a journaled call.
type CallKey = (String, String);
/// A running journaled call: its arguments (a repeat must carry the same) and the sender that
/// publishes its outcome JSON to the repeats waiting for it.
struct InFlightCall {
    args: serde_json::Value,
    outcome: tokio::sync::watch::Sender<Option<String>>,
}

/// Channels kept per connector (bound and open ones are never evicted; see
/// [`Connector::open_channel`]).
pub const MAX_CHANNELS: usize = 4096;

/// The connector's settings from the config.
#[derive(Clone)]
pub struct ConnectorConfig {
    /// Who may claim a phone.
    pub claim_policy: ClaimPolicy,
    /// Claim-code hashes by serial (policy `code`).
    pub claim_codes: HashMap<String, CodeHash>,
    /// Lease grace after the last hello'd socket closes (spec §8.2).
    pub lease_grace: Duration,
    /// Device policy profiles.
    pub profiles: Profiles,
}

/// The settings a SIGHUP replaces in a running connector ([`Connector::reload`]).
pub struct Reloadable {
    /// Who may claim a phone.
    pub claim_policy: ClaimPolicy,
    /// Claim-code hashes by serial.
    pub claim_codes: HashMap<String, CodeHash>,
    /// Device policy profiles.
    pub profiles: Profiles,
    /// Validity of QR codes issued from now on.
    pub qr_ttl: Duration,
}

/// The connector; shared as `Arc<Connector>`.
pub struct Connector {
    state: Mutex<state::State>,
    /// Serialises the operations that write the store and the state together.
    writes: tokio::sync::Mutex<()>,
    lease_grace: Duration,
    channel_cap: usize,
    store: Store,
    files: FileCache,
    inventory: Inventory,
    /// Replaced on SIGHUP ([`Connector::reload`]): raising `open` to `code` takes effect at once.
    claim_policy: std::sync::RwLock<ClaimPolicy>,
    /// Replaced as a whole on SIGHUP ([`Connector::reload`]).
    claim_codes: std::sync::RwLock<HashMap<String, CodeHash>>,
    /// Replaced as a whole on SIGHUP ([`Connector::reload`]).
    profiles: std::sync::RwLock<Profiles>,
    card_tools: Vec<&'static str>,
    claim_guard: claim_policy::ClaimGuard,
    /// Cache of resolved policies (not connector state: derived from the profiles alone).
    policies: Mutex<HashMap<PolicyKey, Arc<Policy>>>,
    /// Waiters of running journaled calls (their own lock: per call, never crosses the state).
    inflight: Mutex<HashMap<CallKey, InFlightCall>>,
    dispatch_stats: dispatch_stats::DispatchStats,
    /// Each phone's last tool call and the recent failures (the operator console).
    call_log: call_log::CallLog,
    /// The box's own QR pairing started from the operator console (one at a time).
    console_pairing: Mutex<Option<Arc<qr_pairing::console::ConsolePairing>>>,
    lifecycle: Lifecycle,
    /// The connector's adb key (wireless pairing flows); `None`: those flows are unavailable.
    host_key: Option<crate::adb::HostKeyFile>,
    /// Settings of the QR pairing flow (its `qr_ttl` is replaced on SIGHUP).
    qr_config: qr_pairing::QrPairingConfig,
    /// How long a QR code issued from now on is valid (`--qr-ttl-secs`; replaced on SIGHUP).
    qr_ttl: std::sync::RwLock<Duration>,
    /// QR pairing attempts by `auth_session_id` (their own lock, never held across `.await`).
    qr_attempts: qr_pairing::QrAttempts,
    /// The follower of each paired wireless phone, by serial: its stop token.
    followers: Mutex<HashMap<String, tokio_util::sync::CancellationToken>>,
    /// What tools learned about each phone, by serial (the way its UI dump works): hints
    /// only, so two phones sharing a serial cost at most an extra step, never a wrong answer.
    phone_hints: Mutex<HashMap<String, Arc<crate::device::tools::PhoneHints>>>,
    /// What tools changed on bound phones, and the phones being handed back (`[release]`).
    releases: release::Releases,
    /// The fleet this box is a member of (`--fleet-etcd`): bindings are taken fleet-wide
    /// first and fenced before side effects; `None`: the box is on its own.
    fleet: Option<Arc<crate::fleet::Fleet>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Connector {
    /// Loads identity, channels and bindings from `store`. Timers and tool calls are spawned
    /// on `lifecycle`. Errors: the store failed.
    pub async fn load(
        store: Store,
        files: FileCache,
        inventory: Inventory,
        config: ConnectorConfig,
        lifecycle: Lifecycle,
    ) -> Result<Connector, StoreError> {
        let connector_id = store
            .connector_id_or_init(random_id("conn_device_adb"))
            .await?;
        let channels = store.channel_ids().await?;
        let bindings = store.binding_all().await?;
        // Wrong claim codes survive a restart (issue 19, L1).
        let claim_guard =
            claim_policy::ClaimGuard::restored(store.clone(), store.claim_failures_all().await?);
        let profiles = config.profiles;
        let releases =
            release::Releases::load(store.clone(), inventory.clone(), lifecycle.clone()).await?;
        // A restart mid-release (or after a binding ended unreleased) hands the phone back now.
        releases.resume(&profiles);
        Ok(Connector {
            state: Mutex::new(state::State::restored(connector_id, channels, bindings)),
            writes: tokio::sync::Mutex::new(()),
            lease_grace: config.lease_grace,
            channel_cap: MAX_CHANNELS,
            store,
            files,
            inventory,
            claim_policy: std::sync::RwLock::new(config.claim_policy),
            claim_codes: std::sync::RwLock::new(config.claim_codes),
            card_tools: card_tools_for(&profiles.card_policy()),
            claim_guard,
            policies: Mutex::default(),
            profiles: std::sync::RwLock::new(profiles),
            inflight: Mutex::default(),
            dispatch_stats: dispatch_stats::DispatchStats::new(),
            call_log: call_log::CallLog::default(),
            console_pairing: Mutex::default(),
            lifecycle,
            host_key: None,
            qr_config: qr_pairing::QrPairingConfig::default(),
            qr_ttl: std::sync::RwLock::new(qr_pairing::QrPairingConfig::default().qr_ttl),
            qr_attempts: Mutex::default(),
            followers: Mutex::default(),
            phone_hints: Mutex::default(),
            releases,
            fleet: None,
        })
    }

    /// The same connector as a member of `fleet`: the bindings restored from the store are
    /// held locally until the first registration takes their keys (`fleet::reconcile`), and a
    /// binding found lost pushes the descriptors again.
    pub fn with_fleet(mut self, fleet: Arc<crate::fleet::Fleet>) -> Connector {
        for (channel, serial) in self.state().binding_pairs() {
            fleet.adopt(&serial, &channel);
        }
        fleet.set_instance(&self.connector_id());
        let inventory = self.inventory.clone();
        fleet.on_lost(Box::new(move || inventory.announce()));
        self.releases.set_fleet(Arc::clone(&fleet));
        self.fleet = Some(fleet);
        self
    }

    /// The fleet, when this box is a member of one.
    pub fn fleet(&self) -> Option<&Arc<crate::fleet::Fleet>> {
        self.fleet.as_ref()
    }

    /// The same connector keeping at most `cap` channels (tests of the channel cap).
    pub fn with_channel_cap(mut self, cap: usize) -> Connector {
        self.channel_cap = cap;
        self
    }

    /// The same connector pairing phones with the adb key in `key` (flow `adb_pair_code`).
    pub fn with_host_key(mut self, key: crate::adb::HostKeyFile) -> Connector {
        self.host_key = Some(key);
        self
    }

    /// The same connector with these QR pairing settings (flow `adb_qr_pair`).
    pub fn with_qr_pairing(mut self, config: qr_pairing::QrPairingConfig) -> Connector {
        self.qr_ttl = std::sync::RwLock::new(config.qr_ttl);
        self.qr_config = config;
        self
    }

    /// The state, locked (never hold the guard across `.await`).
    fn state(&self) -> MutexGuard<'_, state::State> {
        lock(&self.state)
    }

    /// Runs `f` on the state under its lock (tests check invariants with it).
    pub fn inspect<T>(&self, f: impl FnOnce(&state::State) -> T) -> T {
        f(&self.state())
    }

    /// The persisted runtime-instance id (replaced when the lease expires).
    pub fn connector_id(&self) -> String {
        self.state().connector_id().to_string()
    }

    /// Whether any channel exists (restored from disk or opened since).
    pub fn has_channels(&self) -> bool {
        self.state().has_channels()
    }

    /// Tools in this connector's card (implemented, and enabled by the default policy).
    pub fn card_tools(&self) -> &[&'static str] {
        &self.card_tools
    }

    /// The hints kept for the phone `serial` (made on first use, kept for the process).
    pub fn phone_hints(&self, serial: &str) -> Arc<crate::device::tools::PhoneHints> {
        Arc::clone(
            lock(&self.phone_hints)
                .entry(serial.to_string())
                .or_default(),
        )
    }

    /// The effective policy of a phone, resolved once per (manufacturer, model, SDK).
    pub fn policy_for(
        &self,
        facts: crate::device::policy::PhoneFacts,
    ) -> Result<Arc<Policy>, crate::device::policy::PolicyError> {
        let key = (facts.manufacturer.clone(), facts.model.clone(), facts.sdk);
        if let Some(p) = lock(&self.policies).get(&key) {
            return Ok(Arc::clone(p));
        }
        let policy = Arc::new(
            self.profiles
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .for_phone(&facts)?,
        );
        lock(&self.policies).insert(key, Arc::clone(&policy));
        Ok(policy)
    }

    /// The effective policy of an attached phone (its maker, model and SDK, as read by the
    /// inventory), as a tool's error: a profile that cannot be resolved is `internal_error`.
    pub fn policy_of(
        &self,
        phone: &crate::device::inventory::AttachedPhone,
    ) -> Result<Arc<Policy>, crate::device::tools::ToolError> {
        self.policy_for(crate::device::policy::PhoneFacts {
            manufacturer: phone.manufacturer.clone(),
            model: phone.model.clone(),
            sdk: phone.sdk,
        })
        .map_err(|e| {
            crate::device::tools::ToolError::new(
                crate::protocol::ErrorCode::InternalError,
                e.to_string(),
            )
        })
    }

    /// The device profiles in force.
    pub fn profiles(&self) -> Profiles {
        self.profiles
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether `code` is the claim code of `serial` (SHA-256 compared in constant time).
    pub(crate) fn claim_code_matches(&self, serial: &str, code: &str) -> bool {
        use subtle::ConstantTimeEq;
        let hash = crate::secret::hash_claim_code(code);
        code_entry(
            &self.claim_codes.read().unwrap_or_else(|e| e.into_inner()),
            serial,
        )
        .is_some_and(|h| bool::from(h.ct_eq(&hash)))
    }

    /// Replaces the claim policy, the claim codes, the device profiles and the QR codes'
    /// validity (SIGHUP, [`crate::daemon::reload`]). Channels, bindings, sockets and calls in
    /// flight are untouched; the next claim is checked under the new policy; QR codes already
    /// issued keep their validity; policies are resolved again from the new profiles on each
    /// phone's next call. The card's tool list stays as built at start (xAgent caches the card;
    /// a changed list needs a restart).
    pub fn reload(&self, settings: Reloadable) {
        *self.claim_policy.write().unwrap_or_else(|e| e.into_inner()) = settings.claim_policy;
        *self.claim_codes.write().unwrap_or_else(|e| e.into_inner()) = settings.claim_codes;
        *self.profiles.write().unwrap_or_else(|e| e.into_inner()) = settings.profiles;
        *self.qr_ttl.write().unwrap_or_else(|e| e.into_inner()) = settings.qr_ttl;
        lock(&self.policies).clear();
    }

    /// The claim policy in force.
    pub fn claim_policy(&self) -> ClaimPolicy {
        *self.claim_policy.read().unwrap_or_else(|e| e.into_inner())
    }

    /// How long a QR code issued now is valid.
    pub fn qr_ttl(&self) -> Duration {
        *self.qr_ttl.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The file cache.
    pub fn files(&self) -> &FileCache {
        &self.files
    }

    /// The store (the daemon closes it at shutdown).
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Data-plane dispatch latency histograms (`GET /metrics`).
    pub fn dispatch_stats(&self) -> &dispatch_stats::DispatchStats {
        &self.dispatch_stats
    }

    /// Each phone's last tool call and the recent failed calls (the operator console).
    pub fn call_log(&self) -> &call_log::CallLog {
        &self.call_log
    }

    /// The phone inventory.
    pub fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// The phones being handed back and each phone's last release (`devices`, `check`, the
    /// console), sorted by serial.
    pub fn release_views(&self) -> Vec<release::ReleaseView> {
        self.releases.views()
    }

    /// The task tree tool calls and timers are spawned on.
    pub fn lifecycle(&self) -> &Lifecycle {
        &self.lifecycle
    }
}

/// The card's tools under `policy`: implemented tools minus `[tools].disabled`, and
/// `android_shell` only when `[shell].enabled` (Device Profile §7: no arbitrary shell by default).
pub fn card_tools_for(policy: &Policy) -> Vec<&'static str> {
    registry().card_ids(policy)
}

/// The `[claim_codes]` entry of `serial`: its own key, else the one key equal to it but for
/// ASCII case (an operator typing `r58n12abcdef` for `R58N12ABCDEF`, as claims already
/// fold case); two keys that differ only in case need the exact spelling.
pub(crate) fn code_entry<'a>(
    codes: &'a HashMap<String, CodeHash>,
    serial: &str,
) -> Option<&'a CodeHash> {
    codes.get(serial).or_else(|| {
        let mut folded = codes
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(serial))
            .map(|(_, h)| h);
        match (folded.next(), folded.next()) {
            (Some(h), None) => Some(h),
            _ => None,
        }
    })
}
