//! The connector offline lease (spec §8.2 "Connector Server runtime lease", Architecture
//! "Connector Server Offline Lease"): when the last authenticated socket of this `connector_id`
//! closes, a grace timer starts (1 h by default, `--lease-grace`); a hello within it cancels the
//! timer; on expiry the `connector_id` is deregistered and the cascade removes every channel,
//! binding, journal entry and unfinished auth session (phones are left as they are) and a new
//! `connector_id` is issued. Channels restored from disk at start with no hello within the grace
//! are cleaned the same way.

use std::sync::Arc;
use std::time::Duration;

use super::{lock, Connector};
use crate::protocol::random_id;
use crate::store::sql;

/// Default grace: one hour (spec §8.2).
pub const DEFAULT_LEASE_GRACE: Duration = Duration::from_secs(3600);

impl Connector {
    /// A session completed hello: it holds the lease; any running grace timer is void.
    pub fn lease_hold(&self, session_id: u64) {
        let mut lease = lock(&self.lease);
        lease.holders.insert(session_id);
        lease.generation += 1;
    }

    /// A session ended: if it was the last holder, start the grace timer.
    pub fn lease_release(self: &Arc<Self>, session_id: u64) {
        let start = {
            let mut lease = lock(&self.lease);
            lease.holders.remove(&session_id) && lease.holders.is_empty()
        };
        if start {
            self.start_grace_timer();
        }
    }

    /// Starts the grace timer (also called at start-up when channels were restored from disk).
    pub fn start_grace_timer(self: &Arc<Self>) {
        let generation = {
            let mut lease = lock(&self.lease);
            lease.generation += 1;
            lease.generation
        };
        let me = Arc::clone(self);
        let grace = self.lease_grace;
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            let expired = {
                let lease = lock(&me.lease);
                lease.generation == generation && lease.holders.is_empty()
            };
            if expired {
                if let Err(e) = me.deregister().await {
                    tracing::error!(error = %e, "lease expiry cleanup failed");
                }
            }
        });
    }

    /// The cascade of an expired lease.
    async fn deregister(&self) -> Result<(), crate::store::StoreError> {
        let new_id = random_id("conn_device_adb");
        let stored = new_id.clone();
        self.store
            .run(move |c| {
                let tx = c.transaction()?;
                tx.execute_batch(sql::DEREGISTER_ALL)?;
                tx.execute(
                    sql::META_SET,
                    rusqlite::params![super::CONNECTOR_ID_META, stored.into_bytes()],
                )?;
                tx.commit()
            })
            .await?;
        let count = {
            let mut channels = lock(&self.channels);
            let n = channels.len();
            channels.clear();
            n
        };
        self.files.revoke_channel(None).await?;
        lock(&self.bindings).clear();
        lock(&self.auth_sessions).clear();
        lock(&self.runtimes).clear();
        lock(&self.routes).clear();
        *lock(&self.connector_id) = new_id;
        tracing::info!(
            channels = count,
            "connector lease expired; channels and bindings removed"
        );
        Ok(())
    }
}

/// Lease bookkeeping.
#[derive(Default)]
pub struct LeaseState {
    /// Sessions that completed hello and are still open.
    pub holders: std::collections::HashSet<u64>,
    /// Bumped on every hold / timer start; a timer fires only if unchanged.
    pub generation: u64,
}
