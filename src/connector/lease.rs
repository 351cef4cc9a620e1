//! The connector offline lease (spec §8.2 "Connector Server runtime lease", Architecture
//! "Connector Server Offline Lease"): when the last authenticated socket of this `connector_id`
//! closes, a grace timer starts (1 h by default, `--lease-grace`); a hello within it cancels the
//! timer; on expiry the `connector_id` is deregistered and the cascade removes every channel,
//! binding, journal entry and unfinished auth session, and a new `connector_id` is issued;
//! bound phones with something to undo are handed back clean (`[release]`, [`super::release`]). Channels restored from disk at start with no hello within the grace
//! are cleaned the same way.

use std::sync::Arc;
use std::time::Duration;

use super::{Connector, SessionId};
use crate::protocol::{now_ms, random_id};
use crate::store::StoreError;

/// Default grace: one hour (spec §8.2).
pub const DEFAULT_LEASE_GRACE: Duration = Duration::from_secs(3600);

impl Connector {
    /// A session completed hello: it holds the lease; any running grace timer is void.
    /// Returns the connector id the hello is acknowledged with (read under the same lock, so
    /// it is the id the lease now protects).
    pub fn lease_hold(&self, session: SessionId) -> String {
        let mut state = self.state();
        state.hold_lease(session);
        state.connector_id().to_string()
    }

    /// A session ended: if it was the last holder, start the grace timer.
    pub fn lease_release(self: &Arc<Self>, session: SessionId) {
        if self.state().release_lease(session) {
            self.start_grace_timer();
        }
    }

    /// Starts the grace timer (also called at start-up when channels were restored from disk).
    /// The timer is a tracked task that ends at shutdown (a restart starts a new one).
    pub fn start_grace_timer(self: &Arc<Self>) {
        let generation = self.state().start_grace();
        let me = Arc::clone(self);
        let grace = self.lease_grace;
        let shutdown = self.lifecycle.shutdown().clone();
        self.lifecycle.spawn(async move {
            tokio::select! {
                _ = shutdown.cancelled() => {}
                _ = tokio::time::sleep(grace) => {
                    if let Err(e) = me.expire_lease(generation).await {
                        tracing::error!(error = %e, "lease expiry cleanup failed");
                    }
                }
            }
        });
    }

    /// The cascade of an expired lease, if grace period `generation` is still current and no
    /// session holds the lease. Under the write gate: the memory is cleared and the new id set
    /// in one step (a hello from now on is acknowledged with the new id), then the store runs
    /// the same cascade in one transaction before any channel can be opened again. Returns
    /// whether the lease expired. Errors: the store failed (memory already cleared; the next
    /// start restores the old channels and runs the timer again).
    pub async fn expire_lease(&self, generation: u64) -> Result<bool, StoreError> {
        let _gate = self.writes.lock().await;
        let new_id = random_id("conn_device_adb");
        // The bindings cannot change meanwhile: binds and unbinds take the write gate.
        let bound = self.state().binding_pairs();
        let Some(count) = self.state().expire_lease(generation, new_id.clone()) else {
            return Ok(false);
        };
        // Bound phones with something to undo are handed back ([`super::release`]): marked
        // pending in the cascade's transaction, released from then on.
        let profiles = self.profiles();
        let releasing: Vec<(String, String)> = bound
            .into_iter()
            .filter(|(_, serial)| self.releases.needed(serial, &profiles))
            .map(|(channel, serial)| (serial, channel))
            .collect();
        let serials: Vec<String> = releasing.iter().map(|(s, _)| s.clone()).collect();
        let cascade = self.store.deregister_all(new_id, releasing, now_ms()).await;
        // Started after the commit (its end deletes the pending mark), and even when the
        // store failed: the memory no longer binds them.
        for serial in &serials {
            self.releases.begin(serial, &profiles);
        }
        cascade?;
        if let Some(fleet) = &self.fleet {
            fleet.release_all_but(&serials).await;
        }
        self.files.revoke_channel(None).await?;
        tracing::info!(
            channels = count,
            "connector lease expired; channels and bindings removed"
        );
        Ok(true)
    }

    /// Begins a grace period without a timer and returns its generation, for callers (tests)
    /// that decide themselves when to call [`Connector::expire_lease`].
    pub fn begin_grace_period(&self) -> u64 {
        self.state().start_grace()
    }
}
