//! The connector's mutable state in one struct, owned by one lock in [`super::Connector`]:
//! identity (`connector_id`), the lease, channels, routes, bindings, auth sessions and channel
//! runtimes. Every rule that spans several of them is one method here, run under that lock, so
//! no reader ever sees half of a change (e.g. a channel gone but still routed).
//!
//! The lock is a `std::sync::Mutex` and is never held across `.await`: operations that also
//! write SQLite are serialised by the connector's write gate and apply their memory half here
//! after the commit (see [`super::Connector`]).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::auth_session::{AuthSession, AuthStatus};
use super::runtime::ChannelRuntime;
use crate::store::BindingRecord;

/// Id of one data-plane socket (process-unique, never reused).
pub type SessionId = u64;

/// Lease bookkeeping (spec §8.2).
#[derive(Default)]
struct Lease {
    /// Sessions that completed hello and are still open.
    holders: HashSet<SessionId>,
    /// Bumped on every hold and timer start; a timer fires only if unchanged.
    generation: u64,
}

/// Why [`State::bind`] refused a binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindRefusal {
    /// The channel no longer exists (forgotten or deregistered meanwhile).
    UnknownChannel,
    /// The channel is bound to another phone.
    ChannelBound,
    /// The phone is bound to another channel.
    PhoneBound,
}

/// Identity, lease, channels, routes, bindings, auth sessions and runtimes.
pub struct State {
    connector_id: String,
    lease: Lease,
    channels: HashSet<String>,
    /// Channel → its binding.
    bindings: HashMap<String, BindingRecord>,
    /// Open channel → the session it is open on.
    routes: HashMap<String, SessionId>,
    runtimes: HashMap<String, Arc<ChannelRuntime>>,
    /// `auth_session_id` → session.
    auth_sessions: HashMap<String, AuthSession>,
}

impl State {
    /// State restored from the store: identity, channels and bindings; nothing routed.
    pub fn restored(
        connector_id: String,
        channels: impl IntoIterator<Item = String>,
        bindings: impl IntoIterator<Item = BindingRecord>,
    ) -> State {
        State {
            connector_id,
            lease: Lease::default(),
            channels: channels.into_iter().collect(),
            bindings: bindings
                .into_iter()
                .map(|b| (b.channel_id.clone(), b))
                .collect(),
            routes: HashMap::new(),
            runtimes: HashMap::new(),
            auth_sessions: HashMap::new(),
        }
    }

    /// The current runtime-instance id.
    pub fn connector_id(&self) -> &str {
        &self.connector_id
    }

    /// Whether any channel exists.
    pub fn has_channels(&self) -> bool {
        !self.channels.is_empty()
    }

    /// How many channels exist.
    pub fn channel_count(&self) -> usize {
        self.channels.len()
    }

    /// Whether `channel_id` was issued by this connector (and not forgotten since).
    pub fn channel_known(&self, channel_id: &str) -> bool {
        self.channels.contains(channel_id)
    }

    /// Whether `channel_id` is open on `session`.
    pub fn is_open_on(&self, channel_id: &str, session: SessionId) -> bool {
        self.routes.get(channel_id) == Some(&session)
    }

    /// Channels open on `session`.
    pub fn channels_of(&self, session: SessionId) -> Vec<String> {
        self.routes
            .iter()
            .filter(|(_, s)| **s == session)
            .map(|(c, _)| c.clone())
            .collect()
    }

    /// Channels with no binding and no route: the ones the channel cap may forget.
    pub fn idle_channel_count(&self) -> usize {
        self.channels
            .iter()
            .filter(|c| !self.bindings.contains_key(*c) && !self.routes.contains_key(*c))
            .count()
    }

    /// Open channels (never evicted).
    pub fn open_channels(&self) -> HashSet<String> {
        self.routes.keys().cloned().collect()
    }

    /// The binding of a channel.
    pub fn binding(&self, channel_id: &str) -> Option<&BindingRecord> {
        self.bindings.get(channel_id)
    }

    /// Runtime state of a channel, created on first use.
    pub fn runtime(&mut self, channel_id: &str) -> Arc<ChannelRuntime> {
        Arc::clone(self.runtimes.entry(channel_id.to_string()).or_default())
    }

    /// A session completed hello: it holds the lease and any running grace timer is void.
    pub fn hold_lease(&mut self, session: SessionId) {
        self.lease.holders.insert(session);
        self.lease.generation += 1;
    }

    /// A session ended: `true` when it was the last holder (the grace timer must start).
    pub fn release_lease(&mut self, session: SessionId) -> bool {
        self.lease.holders.remove(&session) && self.lease.holders.is_empty()
    }

    /// Starts a grace period; returns its generation for [`State::expire_lease`].
    pub fn start_grace(&mut self) -> u64 {
        self.lease.generation += 1;
        self.lease.generation
    }

    /// The lease expiry (spec §8.2) as one step: if the grace period `generation` is still the
    /// current one and nobody holds the lease, every channel, route, binding, runtime and auth
    /// session is dropped and `new_id` becomes the connector id. Returns how many channels were
    /// dropped, or `None` when a hello came in meanwhile (nothing changed).
    pub fn expire_lease(&mut self, generation: u64, new_id: String) -> Option<usize> {
        if self.lease.generation != generation || !self.lease.holders.is_empty() {
            return None;
        }
        let count = self.channels.len();
        self.channels.clear();
        self.bindings.clear();
        self.routes.clear();
        self.runtimes.clear();
        self.auth_sessions.clear();
        self.connector_id = new_id;
        Some(count)
    }

    /// Records a channel persisted by the store.
    pub fn add_channel(&mut self, channel_id: String) {
        self.channels.insert(channel_id);
    }

    /// Routes a known channel to `session` (taking it from any other session, spec §8.3).
    /// `false` when the channel is unknown (nothing routed).
    pub fn route(&mut self, channel_id: &str, session: SessionId) -> bool {
        if !self.channels.contains(channel_id) {
            return false;
        }
        self.routes.insert(channel_id.to_string(), session);
        true
    }

    /// Stops routing `channel_id` if `session` owns it (binding kept, spec §8.5).
    pub fn unroute(&mut self, channel_id: &str, session: SessionId) {
        if self.is_open_on(channel_id, session) {
            self.routes.remove(channel_id);
        }
    }

    /// Drops every route of a closed session.
    pub fn drop_session(&mut self, session: SessionId) {
        self.routes.retain(|_, s| *s != session);
    }

    /// Forgets channels the store evicted, with their runtimes and auth sessions.
    pub fn forget_channels(&mut self, evicted: &[String]) {
        for id in evicted {
            self.channels.remove(id);
            self.runtimes.remove(id);
            self.routes.remove(id);
        }
        let gone: HashSet<&String> = evicted.iter().collect();
        self.auth_sessions
            .retain(|_, s| !gone.contains(&s.channel_id));
    }

    /// Checks a binding before it is written: the channel exists, has no other phone, and the
    /// phone has no other channel. `Ok(true)` when this exact binding already exists.
    pub fn check_bind(&self, channel_id: &str, serial: &str) -> Result<bool, BindRefusal> {
        if !self.channels.contains(channel_id) {
            return Err(BindRefusal::UnknownChannel);
        }
        if let Some(existing) = self.bindings.get(channel_id) {
            return if existing.serial == serial {
                Ok(true)
            } else {
                Err(BindRefusal::ChannelBound)
            };
        }
        if self.bindings.values().any(|b| b.serial == serial) {
            return Err(BindRefusal::PhoneBound);
        }
        Ok(false)
    }

    /// Records a binding the store committed (after [`State::check_bind`] under the same
    /// write gate).
    pub fn bind(&mut self, record: BindingRecord) {
        self.bindings.insert(record.channel_id.clone(), record);
    }

    /// Removes a channel's binding.
    pub fn unbind(&mut self, channel_id: &str) {
        self.bindings.remove(channel_id);
    }

    /// Remembers the outcome of an `auth.start` (for `auth.status`), unless the channel is gone.
    pub fn remember_auth(&mut self, auth_session_id: String, channel_id: &str, status: AuthStatus) {
        if self.channels.contains(channel_id) {
            self.auth_sessions.insert(
                auth_session_id,
                AuthSession {
                    channel_id: channel_id.to_string(),
                    status,
                },
            );
        }
    }

    /// The remembered auth session, if it belongs to `channel_id`.
    pub fn auth_session(&self, channel_id: &str, auth_session_id: &str) -> Option<AuthSession> {
        self.auth_sessions
            .get(auth_session_id)
            .filter(|s| s.channel_id == channel_id)
            .cloned()
    }

    /// The cross-map invariants (tests): every route, binding, runtime and auth session
    /// belongs to a known channel, and a phone is bound to at most one channel.
    pub fn check_invariants(&self) -> Result<(), String> {
        let unknown = |c: &String| !self.channels.contains(c);
        if let Some(c) = self.routes.keys().find(|c| unknown(c)) {
            return Err(format!("route of unknown channel {c}"));
        }
        if let Some(c) = self.bindings.keys().find(|c| unknown(c)) {
            return Err(format!("binding of unknown channel {c}"));
        }
        if let Some(c) = self.runtimes.keys().find(|c| unknown(c)) {
            return Err(format!("runtime of unknown channel {c}"));
        }
        if let Some(s) = self.auth_sessions.values().find(|s| unknown(&s.channel_id)) {
            return Err(format!("auth session of unknown channel {}", s.channel_id));
        }
        let serials: HashSet<&str> = self.bindings.values().map(|b| b.serial.as_str()).collect();
        if serials.len() != self.bindings.len() {
            return Err("a phone is bound to two channels".into());
        }
        Ok(())
    }

    /// Known channels (tests compare them with the store).
    pub fn channel_ids(&self) -> HashSet<String> {
        self.channels.clone()
    }

    /// Every binding, by the phone's serial (the operator console: channel and since when).
    pub fn bindings_by_serial(&self) -> HashMap<String, BindingRecord> {
        self.bindings
            .values()
            .map(|b| (b.serial.clone(), b.clone()))
            .collect()
    }

    /// Every binding (the operator socket lists them with the model seen at the claim).
    pub fn binding_records(&self) -> Vec<BindingRecord> {
        self.bindings.values().cloned().collect()
    }

    /// Bindings as (channel, serial) pairs (tests compare them with the store).
    pub fn binding_pairs(&self) -> HashSet<(String, String)> {
        self.bindings
            .values()
            .map(|b| (b.channel_id.clone(), b.serial.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(channel: &str, serial: &str) -> BindingRecord {
        BindingRecord {
            channel_id: channel.into(),
            serial: serial.into(),
            model: "Pixel 8".into(),
            bound_ms: 0,
        }
    }

    #[test]
    fn expiry_is_void_after_a_hello_and_clears_everything_otherwise() {
        let mut st = State::restored("conn_a".into(), ["c1".to_string()], [binding("c1", "S1")]);
        st.hold_lease(1);
        assert!(st.route("c1", 1));
        assert!(st.release_lease(1));
        let generation = st.start_grace();
        st.hold_lease(2);
        assert_eq!(st.expire_lease(generation, "conn_b".into()), None);
        assert!(st.release_lease(2));
        let generation = st.start_grace();
        assert_eq!(st.expire_lease(generation, "conn_b".into()), Some(1));
        assert_eq!(st.connector_id(), "conn_b");
        assert!(!st.channel_known("c1") && st.binding("c1").is_none());
        st.check_invariants().unwrap();
    }

    #[test]
    fn a_phone_binds_to_one_channel_and_forgotten_channels_leave_nothing() {
        let mut st = State::restored("conn".into(), ["c1".into(), "c2".into()], []);
        assert_eq!(st.check_bind("c1", "S1"), Ok(false));
        st.bind(binding("c1", "S1"));
        assert_eq!(st.check_bind("c1", "S1"), Ok(true));
        assert_eq!(st.check_bind("c1", "S2"), Err(BindRefusal::ChannelBound));
        assert_eq!(st.check_bind("c2", "S1"), Err(BindRefusal::PhoneBound));
        assert_eq!(st.check_bind("c3", "S3"), Err(BindRefusal::UnknownChannel));
        st.remember_auth("auth_1".into(), "c2", AuthStatus::Failed);
        st.runtime("c2");
        assert!(st.route("c2", 7));
        st.forget_channels(&["c2".into()]);
        assert!(st.auth_session("c2", "auth_1").is_none());
        assert!(st.channels_of(7).is_empty());
        st.check_invariants().unwrap();
    }
}
