//! Throttling of failed console logins, per peer ([`PeerKey`]: an IPv4 address or an IPv6
//! /64), so the operator key cannot be guessed at the speed of the network: after
//! [`FREE_FAILURES`] wrong credentials in a row the peer is paused for [`FIRST_PAUSE`], and each
//! further failure after a pause doubles it, up to [`MAX_PAUSE`]. While paused, every console
//! request of the peer is answered 429 `rate_limited` with `Retry-After` (seconds), its
//! credentials not even compared. The right credentials end the count. A request with no
//! `Authorization` header (a browser's first, before it asks for the password) is no failure.
//! The same scheme as OpenSSH's `PerSourcePenalties` and fail2ban's bans, in-process.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::server::peers::PeerKey;

/// Wrong logins a peer may make in a row before its first pause.
pub const FREE_FAILURES: u32 = 5;
/// The first pause.
pub const FIRST_PAUSE: Duration = Duration::from_secs(1);
/// The longest pause.
pub const MAX_PAUSE: Duration = Duration::from_secs(300);
/// Peers remembered at most; past it, those neither paused nor failing in the last
/// [`MAX_PAUSE`] are forgotten first.
const MAX_PEERS: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct Failing {
    /// Wrong logins in a row.
    failures: u32,
    /// End of the current pause.
    paused_until: Option<Instant>,
    /// The last failure.
    last: Instant,
}

/// The failed logins of each peer.
#[derive(Debug, Default)]
pub struct LoginThrottle {
    peers: Mutex<HashMap<PeerKey, Failing>>,
}

impl LoginThrottle {
    fn peers(&self) -> std::sync::MutexGuard<'_, HashMap<PeerKey, Failing>> {
        self.peers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `Err(wait)` while `peer` is paused: how long until it may try again.
    pub fn check(&self, peer: PeerKey) -> Result<(), Duration> {
        let now = Instant::now();
        match self.peers().get(&peer).and_then(|f| f.paused_until) {
            Some(until) if until > now => Err(until - now),
            _ => Ok(()),
        }
    }

    /// `peer` sent wrong credentials; returns the pause it starts, if any (the
    /// [`FREE_FAILURES`]th failure in a row and every one after).
    pub fn failed(&self, peer: PeerKey) -> Option<Duration> {
        let now = Instant::now();
        let mut peers = self.peers();
        if peers.len() >= MAX_PEERS && !peers.contains_key(&peer) {
            peers
                .retain(|_, f| f.paused_until.is_some_and(|u| u > now) || now - f.last < MAX_PAUSE);
            if peers.len() >= MAX_PEERS {
                // Every slot is in use: the oldest failure goes.
                if let Some(oldest) = peers.iter().min_by_key(|(_, f)| f.last).map(|(k, _)| *k) {
                    peers.remove(&oldest);
                }
            }
        }
        let f = peers.entry(peer).or_insert(Failing {
            failures: 0,
            paused_until: None,
            last: now,
        });
        f.failures = f.failures.saturating_add(1);
        f.last = now;
        let past_free = f.failures.checked_sub(FREE_FAILURES)?;
        let pause = FIRST_PAUSE
            .checked_mul(1u32.checked_shl(past_free).unwrap_or(u32::MAX))
            .unwrap_or(MAX_PAUSE)
            .min(MAX_PAUSE);
        f.paused_until = Some(now + pause);
        Some(pause)
    }

    /// `peer` logged in: its count starts again.
    pub fn succeeded(&self, peer: PeerKey) {
        self.peers().remove(&peer);
    }
}

/// `Retry-After` of a pause with `wait` left: whole seconds, rounded up, at least 1.
pub fn retry_after_secs(wait: Duration) -> u64 {
    wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_free_failures_then_a_doubling_pause() {
        let t = LoginThrottle::default();
        let peer = PeerKey::of("127.0.0.1".parse().unwrap());
        let other = PeerKey::of("10.0.0.2".parse().unwrap());
        for _ in 1..FREE_FAILURES {
            assert_eq!(t.failed(peer), None);
            assert!(t.check(peer).is_ok());
        }
        assert_eq!(t.failed(peer), Some(FIRST_PAUSE));
        assert!(t.check(peer).is_err());
        assert!(t.check(other).is_ok(), "another peer is not paused");
        assert_eq!(t.failed(peer), Some(FIRST_PAUSE * 2));
        assert_eq!(t.failed(peer), Some(FIRST_PAUSE * 4));
        for _ in 0..40 {
            t.failed(peer);
        }
        assert_eq!(t.failed(peer), Some(MAX_PAUSE));
        t.succeeded(peer);
        assert!(t.check(peer).is_ok());
        assert_eq!(t.failed(peer), None, "the count starts again");
        assert_eq!(retry_after_secs(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after_secs(Duration::from_secs(1)), 1);
    }
}
