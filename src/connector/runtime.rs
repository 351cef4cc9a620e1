//! Per-channel runtime state: the last display geometry read (a hint), what the agent last saw,
//! the arrival order that serialises side effects, and the tool-call rate limiter. Created on a channel's first tool
//! call, dropped with the channel.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use super::arrival_order::ArrivalOrder;
use crate::device::tools::{DisplayCache, LastSeen, ReadinessCache};

/// Runtime state of one channel's phone: last display geometry read, the arrival order
/// serialising side effects, and the tool-call rate limiter.
#[derive(Default)]
pub struct ChannelRuntime {
    /// Last display geometry read (a hint only, never used to check or map a point).
    pub display: DisplayCache,
    /// The bound phone's last readiness reading (booting, screen off, lock screen).
    pub readiness: ReadinessCache,
    /// What the agent last saw (UI snapshot, screenshots).
    pub last_seen: LastSeen,
    /// Side-effecting calls run one at a time in arrival order (Device Profile §5).
    pub arrival: Arc<ArrivalOrder>,
    /// Token bucket of tool calls.
    pub rate: Mutex<RateBucket>,
    /// `auth.logout`s answered on this channel. A pairing flow notes it at `auth.start` and
    /// binds only if it is unchanged: a logout answered meanwhile ends the flow (the client
    /// was told nothing is bound, so nothing may be bound behind its back).
    pub logouts: AtomicU64,
    /// A pairing that succeeded on this channel and is not bound yet: the next `adb_pair_code`
    /// connects with it, no new code (field bug 36).
    pub paired: Mutex<Option<PairedPhone>>,
}

/// A pairing that succeeded on a channel and is not bound yet, kept in the channel's runtime:
/// the phone holds the connector's key, so the next `adb_pair_code` on the channel connects
/// with it and needs no new code (field bug 36). Dropped once bound, or when the phone refuses
/// the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PairedPhone {
    /// The GUID the phone sent (`adb-<serial>-<6>`).
    pub guid: String,
    /// `HOST:PORT` of the pairing dialog used (one-shot: never dialled again); `None` for a
    /// QR pairing.
    pub pairing_addr: Option<String>,
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
