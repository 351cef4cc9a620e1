//! The connector core: identity, channels and their routes, the claim flow binding a channel to a
//! phone, descriptor projection, and tool dispatch. One [`Connector`] per process, shared by
//! every WebSocket session ([`session`]).
//!
//! State that must survive restarts (connector id, channels, bindings, file refs) is written
//! through to SQLite ([`crate::store`]) before it is acknowledged; the in-memory maps here are
//! caches of it plus runtime-only routes.

pub mod claim;
pub mod claim_policy;
pub mod dispatch_stats;
pub mod invoke;
pub mod lease;
pub mod session;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use crate::device::inventory::Inventory;
use crate::device::parse::devices::DeviceState;
use crate::device::policy::{Policy, Profiles};
use crate::device::tools::{registry, DisplayCache, LastSeen};
use crate::files::FileCache;
use crate::protocol::descriptor::{mask_serial, BoundPhoneView, ConnectionStatus, Descriptor};
use crate::protocol::random_id;
use crate::secret::CodeHash;
use crate::store::{BindingRecord, Store, StoreError};
use claim_policy::ClaimPolicy;

/// Runtime state of one channel's phone: display cache, the lock serialising side effects, and
/// the tool-call rate limiter.
#[derive(Default)]
pub struct ChannelRuntime {
    /// Display size cache.
    pub display: DisplayCache,
    /// What the agent last saw (UI snapshot, screenshots).
    pub last_seen: LastSeen,
    /// Held while a side-effecting tool runs (Device Profile §5: serialise per channel).
    pub side_effects: tokio::sync::Mutex<()>,
    /// Token bucket of tool calls.
    pub rate: Mutex<RateBucket>,
}

/// Tool calls allowed in a burst per channel.
pub const RATE_BURST: f64 = 30.0;
/// Sustained tool calls per second per channel.
pub const RATE_PER_SEC: f64 = 15.0;

/// A token bucket (`RATE_BURST` tokens, refilled at `RATE_PER_SEC`).
pub struct RateBucket {
    tokens: f64,
    at: std::time::Instant,
}

impl Default for RateBucket {
    fn default() -> Self {
        Self {
            tokens: RATE_BURST,
            at: std::time::Instant::now(),
        }
    }
}

impl RateBucket {
    /// Takes one token; `false` when the channel is over its rate.
    pub fn take(&mut self) -> bool {
        let now = std::time::Instant::now();
        let refill = now.duration_since(self.at).as_secs_f64() * RATE_PER_SEC;
        self.tokens = (self.tokens + refill).min(RATE_BURST);
        self.at = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// (manufacturer, model, SDK) a policy was resolved for.
type PolicyKey = (String, String, Option<u32>);
/// (channel id, tool_call_id) of a journaled call.
type CallKey = (String, String);
/// Publishes the outcome JSON of a running journaled call to its waiters.
type OutcomeSender = tokio::sync::watch::Sender<Option<String>>;

/// A WebSocket route of an open channel.
#[derive(Clone)]
pub struct Route {
    /// Session that opened the channel.
    pub session_id: u64,
    /// Outgoing packet queue of that session.
    pub tx: mpsc::UnboundedSender<session::Outgoing>,
}

/// The connector; shared as `Arc<Connector>`.
pub struct Connector {
    connector_id: Mutex<String>,
    lease: Mutex<lease::LeaseState>,
    lease_grace: std::time::Duration,
    store: Store,
    files: FileCache,
    inventory: Inventory,
    claim_policy: ClaimPolicy,
    claim_codes: HashMap<String, CodeHash>,
    channels: Mutex<HashSet<String>>,
    bindings: Mutex<HashMap<String, BindingRecord>>,
    routes: Mutex<HashMap<String, Route>>,
    runtimes: Mutex<HashMap<String, Arc<ChannelRuntime>>>,
    auth_sessions: Mutex<HashMap<String, claim::AuthSession>>,
    profiles: Profiles,
    card_tools: Vec<&'static str>,
    claim_guard: claim::ClaimGuard,
    policies: Mutex<HashMap<PolicyKey, Arc<Policy>>>,
    inflight: Mutex<HashMap<CallKey, OutcomeSender>>,
    dispatch_stats: dispatch_stats::DispatchStats,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Channels kept per connector (bound and open ones are never evicted; see
/// [`Connector::evict_idle_channels`]).
pub const MAX_CHANNELS: usize = 4096;

/// Meta key of the persisted connector id.
pub(crate) const CONNECTOR_ID_META: &str = "connector_id";

impl Connector {
    /// Loads identity, channels and bindings from `store`.
    pub async fn load(
        store: Store,
        files: FileCache,
        inventory: Inventory,
        claim_policy: ClaimPolicy,
        claim_codes: HashMap<String, CodeHash>,
        lease_grace: std::time::Duration,
        profiles: Profiles,
    ) -> Result<Connector, StoreError> {
        let fresh = random_id("conn_device_adb").into_bytes();
        let id = store.meta_get_or_init(CONNECTOR_ID_META, fresh).await?;
        let connector_id = String::from_utf8_lossy(&id).into_owned();
        let channels: HashSet<String> = store
            .run(|c| {
                let mut st = c.prepare(crate::store::sql::CHANNEL_ALL)?;
                let rows = st.query_map([], |r| r.get::<_, String>(0))?;
                rows.collect()
            })
            .await?;
        let bindings = store
            .binding_all()
            .await?
            .into_iter()
            .map(|b| (b.channel_id.clone(), b))
            .collect();
        Ok(Connector {
            connector_id: Mutex::new(connector_id),
            lease: Mutex::default(),
            lease_grace,
            store,
            files,
            inventory,
            claim_policy,
            claim_codes,
            channels: Mutex::new(channels),
            bindings: Mutex::new(bindings),
            routes: Mutex::default(),
            runtimes: Mutex::default(),
            auth_sessions: Mutex::default(),
            card_tools: card_tools_for(&profiles.card_policy()),
            claim_guard: claim::ClaimGuard::default(),
            policies: Mutex::default(),
            profiles,
            inflight: Mutex::default(),
            dispatch_stats: dispatch_stats::DispatchStats::new(),
        })
    }

    /// The persisted runtime-instance id (replaced when the lease expires).
    pub fn connector_id(&self) -> String {
        lock(&self.connector_id).clone()
    }

    /// Whether any channel exists (restored from disk or opened since).
    pub fn has_channels(&self) -> bool {
        !lock(&self.channels).is_empty()
    }

    /// Tools in this connector's card (implemented, and enabled by the default policy).
    pub fn card_tools(&self) -> &[&'static str] {
        &self.card_tools
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
        let policy = Arc::new(self.profiles.for_phone(&facts)?);
        lock(&self.policies).insert(key, Arc::clone(&policy));
        Ok(policy)
    }

    /// The loaded device profiles.
    pub fn profiles(&self) -> &Profiles {
        &self.profiles
    }

    /// The file cache.
    pub fn files(&self) -> &FileCache {
        &self.files
    }

    /// Data-plane dispatch latency histograms (`GET /metrics`).
    pub fn dispatch_stats(&self) -> &dispatch_stats::DispatchStats {
        &self.dispatch_stats
    }

    /// The phone inventory.
    pub fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// Whether `channel_id` was issued by this connector.
    pub fn channel_known(&self, channel_id: &str) -> bool {
        lock(&self.channels).contains(channel_id)
    }

    /// Opens a channel for `session`: reuses `requested` when known, else issues a new id
    /// (spec §8.3). Persists before returning.
    pub async fn open_channel(
        &self,
        requested: Option<&str>,
        route: Route,
    ) -> Result<(String, bool), StoreError> {
        let restored = requested.is_some_and(|id| self.channel_known(id));
        let id = match requested.filter(|id| self.channel_known(id)) {
            Some(id) => id.to_string(),
            None => {
                self.evict_idle_channels().await?;
                let id = random_id("cch");
                self.store
                    .channel_insert(id.clone(), self.connector_id(), crate::protocol::now_ms())
                    .await?;
                lock(&self.channels).insert(id.clone());
                id
            }
        };
        lock(&self.routes).insert(id.clone(), route);
        Ok((id, restored))
    }

    /// Keeps the channel table below [`MAX_CHANNELS`] before a new channel is issued: the
    /// oldest channels with no binding and no open socket are forgotten (their journal rows,
    /// files and auth sessions too). Restoring a forgotten id later issues a fresh channel with
    /// `restored: false`, which spec §8.3 allows for unknown ids. Bound or open channels are
    /// never evicted.
    async fn evict_idle_channels(&self) -> Result<(), StoreError> {
        let excess = (lock(&self.channels).len() + 1).saturating_sub(MAX_CHANNELS);
        if excess == 0 {
            return Ok(());
        }
        let keep: HashSet<String> = lock(&self.routes).keys().cloned().collect();
        let (evicted, paths) = self.store.channel_evict_idle(keep, excess).await?;
        {
            let mut channels = lock(&self.channels);
            let mut runtimes = lock(&self.runtimes);
            for id in &evicted {
                channels.remove(id);
                runtimes.remove(id);
            }
        }
        if !evicted.is_empty() {
            let gone: HashSet<&String> = evicted.iter().collect();
            lock(&self.auth_sessions).retain(|_, s| !gone.contains(&s.channel_id));
        }
        for p in paths {
            let _ = tokio::fs::remove_file(p).await;
        }
        if !evicted.is_empty() {
            tracing::info!(count = evicted.len(), "forgot idle channels (channel cap)");
        }
        Ok(())
    }

    /// Removes the route of `channel_id` if `session_id` owns it (binding kept, spec §8.5).
    pub fn close_channel(&self, channel_id: &str, session_id: u64) {
        let mut routes = lock(&self.routes);
        if routes
            .get(channel_id)
            .is_some_and(|r| r.session_id == session_id)
        {
            routes.remove(channel_id);
        }
    }

    /// Drops every route of a closed session.
    pub fn drop_session(&self, session_id: u64) {
        lock(&self.routes).retain(|_, r| r.session_id != session_id);
    }

    /// Whether `channel_id` is open on `session_id`.
    pub fn is_open_on(&self, channel_id: &str, session_id: u64) -> bool {
        lock(&self.routes)
            .get(channel_id)
            .is_some_and(|r| r.session_id == session_id)
    }

    /// Channels open on `session_id`.
    pub fn channels_of(&self, session_id: u64) -> Vec<String> {
        lock(&self.routes)
            .iter()
            .filter(|(_, r)| r.session_id == session_id)
            .map(|(c, _)| c.clone())
            .collect()
    }

    /// The binding of a channel.
    pub fn binding(&self, channel_id: &str) -> Option<BindingRecord> {
        lock(&self.bindings).get(channel_id).cloned()
    }

    /// Runtime state of a channel (created on first use).
    pub fn runtime(&self, channel_id: &str) -> Arc<ChannelRuntime> {
        Arc::clone(
            lock(&self.runtimes)
                .entry(channel_id.to_string())
                .or_default(),
        )
    }

    /// Current status of a channel (spec §9), from its binding and the inventory.
    pub fn status(&self, channel_id: &str) -> ConnectionStatus {
        let Some(binding) = self.binding(channel_id) else {
            return ConnectionStatus::Created;
        };
        match self.inventory.get(&binding.serial).map(|p| p.state) {
            Some(DeviceState::Device) => ConnectionStatus::Connected,
            Some(DeviceState::Unauthorized) => ConnectionStatus::Revoked,
            Some(DeviceState::NoPermissions { .. }) => ConnectionStatus::Error,
            _ => ConnectionStatus::Offline,
        }
    }

    /// The descriptor of a channel.
    pub fn descriptor(&self, channel_id: &str) -> Descriptor {
        let binding = self.binding(channel_id);
        let view = binding.as_ref().map(|b| BoundPhoneView {
            model: b.model.clone(),
            serial_hint: mask_serial(&b.serial),
        });
        Descriptor::project(
            &self.connector_id(),
            channel_id,
            self.status(channel_id),
            view.as_ref(),
            &self.card_tools,
        )
    }
}

/// The card's tools under `policy`: implemented tools minus `[tools].disabled`, and
/// `android_shell` only when `[shell].enabled` (Device Profile §7: no arbitrary shell by default).
pub fn card_tools_for(policy: &Policy) -> Vec<&'static str> {
    registry().card_ids(policy)
}
