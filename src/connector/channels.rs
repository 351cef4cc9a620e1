//! Channels (spec §8.3–8.6, §9): open (issue or restore) with the channel cap, close, routing
//! checks, and the descriptor projection of a channel.
//!
//! The cap ([`super::MAX_CHANNELS`] per connector; the spec states no limit) holds for every
//! channel: idle ones (no binding, not open on a socket) are forgotten to make room, and when
//! none is idle a new channel is refused ([`OpenChannelError::Full`]). So one socket, or all of
//! them together, can hold at most that many channels open.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use super::{Connector, SessionId};
use crate::device::parse::devices::DeviceState;
use crate::device::tools::{registry, LockRule};
use crate::protocol::descriptor::{mask_serial, BoundPhoneView, ConnectionStatus, Descriptor};
use crate::protocol::{now_ms, random_id};
use crate::store::{BindingRecord, StoreError};

/// Why [`Connector::open_channel`] issued no channel.
#[derive(Debug, thiserror::Error)]
pub enum OpenChannelError {
    /// The connector keeps `cap` channels and every one is bound or open on a socket, so none
    /// can be forgotten to make room (`too_many_channels`).
    #[error("this connector already keeps {cap} channels, each bound to a phone or open on a socket: close one (channel.close) or reuse one (channel.open with its id)")]
    Full {
        /// The cap ([`super::MAX_CHANNELS`]).
        cap: usize,
    },
    /// The store failed (`internal_error`).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// An opened channel: its id and whether a known id was restored (spec §8.3 `restored`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenedChannel {
    /// The channel id (the requested one, or a fresh `cch_…`).
    pub channel_id: String,
    /// `false` when a new channel was issued (also for an unknown old id).
    pub restored: bool,
}

/// When the channel-cap refusal was last logged at warn level (ms since the epoch).
static LAST_FULL_WARNING_MS: AtomicI64 = AtomicI64::new(0);
/// At most one channel-cap warning per this many ms.
const FULL_WARNING_EVERY_MS: i64 = 60_000;

impl Connector {
    /// Opens a channel on `session`: restores `requested` when known, else issues and persists
    /// a new id (spec §8.3), then routes it to `session`. Runs under the write gate, so it never
    /// interleaves with a lease expiry or an eviction. Restoring a known id never counts
    /// against the cap. Errors: [`OpenChannelError::Full`] when the cap is reached and no
    /// channel is idle; the store failed (nothing changed in memory either way).
    pub async fn open_channel(
        &self,
        requested: Option<&str>,
        session: SessionId,
    ) -> Result<OpenedChannel, OpenChannelError> {
        let _gate = self.writes.lock().await;
        if let Some(id) = requested {
            if self.state().route(id, session) {
                return Ok(OpenedChannel {
                    channel_id: id.to_string(),
                    restored: true,
                });
            }
        }
        self.evict_idle_channels().await?;
        let id = random_id("cch");
        let connector_id = self.connector_id();
        self.store
            .channel_insert(id.clone(), connector_id, now_ms())
            .await?;
        let mut state = self.state();
        state.add_channel(id.clone());
        state.route(&id, session);
        Ok(OpenedChannel {
            channel_id: id,
            restored: false,
        })
    }

    /// Keeps the channel table below the cap ([`super::MAX_CHANNELS`]) before a new channel is
    /// issued: the oldest channels with no binding and no open socket are forgotten (their
    /// journal rows, files and auth sessions too). Restoring a forgotten id later issues a
    /// fresh channel with `restored: false`, which spec §8.3 allows for unknown ids. Bound or
    /// open channels are never evicted: when too few channels are idle, nothing is forgotten
    /// and nothing is issued ([`OpenChannelError::Full`]). Called under the write gate.
    async fn evict_idle_channels(&self) -> Result<(), OpenChannelError> {
        let (excess, keep) = {
            let state = self.state();
            let excess = (state.channel_count() + 1).saturating_sub(self.channel_cap);
            if excess > state.idle_channel_count() {
                // A client looping on a full table must not flood the log: one warning a
                // minute, the rest at debug level.
                let now = now_ms();
                let last = LAST_FULL_WARNING_MS.load(Ordering::Relaxed);
                if now.saturating_sub(last) >= FULL_WARNING_EVERY_MS
                    && LAST_FULL_WARNING_MS
                        .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                {
                    tracing::warn!(
                        cap = self.channel_cap,
                        "channel.open refused: every channel is bound or open (channel cap; said once a minute)"
                    );
                } else {
                    tracing::debug!(cap = self.channel_cap, "channel.open refused (channel cap)");
                }
                return Err(OpenChannelError::Full {
                    cap: self.channel_cap,
                });
            }
            (excess, state.open_channels())
        };
        if excess == 0 {
            return Ok(());
        }
        let (evicted, paths) = self.store.channel_evict_idle(keep, excess).await?;
        self.state().forget_channels(&evicted);
        for p in paths {
            let _ = tokio::fs::remove_file(p).await;
        }
        if !evicted.is_empty() {
            // At the cap every new channel forgets one: debug, not one info line per open.
            tracing::debug!(count = evicted.len(), "forgot idle channels (channel cap)");
        }
        Ok(())
    }

    /// Stops routing `channel_id` if `session` owns it (binding kept, spec §8.5).
    pub fn close_channel(&self, channel_id: &str, session: SessionId) {
        self.state().unroute(channel_id, session);
    }

    /// Drops every route of a closed session.
    pub fn drop_session(&self, session: SessionId) {
        self.state().drop_session(session);
    }

    /// Whether `channel_id` was issued by this connector.
    pub fn channel_known(&self, channel_id: &str) -> bool {
        self.state().channel_known(channel_id)
    }

    /// Whether `channel_id` is open on `session`.
    pub fn is_open_on(&self, channel_id: &str, session: SessionId) -> bool {
        self.state().is_open_on(channel_id, session)
    }

    /// Channels open on `session`.
    pub fn channels_of(&self, session: SessionId) -> Vec<String> {
        self.state().channels_of(session)
    }

    /// The binding of a channel.
    pub fn binding(&self, channel_id: &str) -> Option<BindingRecord> {
        self.state().binding(channel_id).cloned()
    }

    /// Runtime state of a channel (created on first use).
    pub fn runtime(&self, channel_id: &str) -> Arc<super::ChannelRuntime> {
        self.state().runtime(channel_id)
    }

    /// Current status of a channel (spec §9), from its binding and the inventory.
    pub fn status(&self, channel_id: &str) -> ConnectionStatus {
        status_of(self, self.binding(channel_id).as_ref())
    }

    /// The descriptor of a channel.
    pub fn descriptor(&self, channel_id: &str) -> Descriptor {
        let (connector_id, binding) = {
            let state = self.state();
            (
                state.connector_id().to_string(),
                state.binding(channel_id).cloned(),
            )
        };
        let view = binding.as_ref().map(|b| BoundPhoneView {
            model: b.model.clone(),
            serial_hint: mask_serial(&b.serial),
            // In a fleet the location names the box (issue 22), else the adb server.
            location: match &self.fleet {
                Some(fleet) => Some(fleet.box_name().to_string()),
                None => self.inventory.get(&b.serial).and_then(|p| p.adb_server),
            },
            warning: self.serial_warning(channel_id),
        });
        let lost = binding
            .as_ref()
            .zip(self.fleet.as_ref())
            .and_then(|(b, fleet)| fleet.lost(&b.serial));
        let ids: &[&str] = &self.card_tools;
        let status = status_of(self, binding.as_ref());
        let mut d = Descriptor::project(&connector_id, channel_id, status, view.as_ref(), ids);
        if let Some(message) = lost {
            // A binding lost in the fleet (issue 22): every tool is refused, observations too
            // (the phone may be another box's user's now).
            d.restrict(|_| true, &message);
            d.target.warning = Some(message);
            return d;
        }
        if status == ConnectionStatus::Connected {
            // The lock screen (as of the last reading) leaves the tools that would act on it
            // unavailable until a reading finds it gone (docs/protocol.md, Descriptor).
            if let Some(reason) = self.runtime(channel_id).readiness.locked_reason() {
                let refused = |id: &str| {
                    registry()
                        .get(id)
                        .is_some_and(|t| t.lock_rule() == LockRule::Refused)
                };
                d.restrict(refused, &reason);
            }
        }
        d
    }
}

fn status_of(connector: &Connector, binding: Option<&BindingRecord>) -> ConnectionStatus {
    let Some(binding) = binding else {
        return ConnectionStatus::Created;
    };
    match connector.inventory.get(&binding.serial).map(|p| p.state) {
        Some(DeviceState::Device) => ConnectionStatus::Connected,
        Some(DeviceState::Unauthorized) => ConnectionStatus::Revoked,
        Some(DeviceState::NoPermissions { .. }) => ConnectionStatus::Error,
        // The phone may be fine; the adb server is gone (field bug 34): offline until it returns.
        _ => ConnectionStatus::Offline,
    }
}
