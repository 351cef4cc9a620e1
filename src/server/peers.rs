//! A cap on the HTTP connections each peer holds before it has authenticated, so that one peer's
//! half-sent request heads cannot take the accept loop's slots from everyone else (issue 19,
//! L5: 300 half-sent heads stalled every new client until hyper's header timeout freed slots).
//!
//! Every accepted connection is admitted for its peer ([`PeerGate::admit`]) and counts as
//! *unauthenticated* until one of its requests carries the right Bearer key
//! ([`Admission::authenticated`], called by the router before the route runs). A peer holds at
//! most [`MAX_UNAUTHENTICATED_PER_PEER`] such connections: admitting one more closes the
//! peer's oldest unauthenticated connection that is *waiting* for a request head (never one
//! serving a request, e.g. a key-less `GET /files/refs/…` download or the card). So a flooding
//! peer only ever evicts its own connections, other peers keep being served, and a client of
//! the flooding peer's own address that sends its head at once is served too.
//!
//! A peer is an IPv4 address, or the /64 prefix of an IPv6 address (one host usually holds a
//! whole /64); an IPv4-mapped IPv6 address is its IPv4 address.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// Unauthenticated HTTP connections one peer holds at most while they wait for a request head.
pub const MAX_UNAUTHENTICATED_PER_PEER: usize = 32;

/// Who a connection counts against: an IPv4 address or an IPv6 /64 prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PeerKey {
    /// An IPv4 peer.
    V4(std::net::Ipv4Addr),
    /// The upper 64 bits of an IPv6 peer.
    V6Prefix(u64),
}

impl PeerKey {
    /// The key of `ip`.
    pub fn of(ip: IpAddr) -> PeerKey {
        match ip {
            IpAddr::V4(v4) => PeerKey::V4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => PeerKey::V4(v4),
                None => PeerKey::V6Prefix((u128::from(v6) >> 64) as u64),
            },
        }
    }
}

/// One unauthenticated connection in its peer's queue.
struct Entry {
    id: u64,
    /// Cancelled to close the connection (evicted).
    evict: CancellationToken,
    /// Requests being served now (not evictable while above 0).
    serving: AtomicUsize,
}

#[derive(Default)]
struct Peers {
    next_id: u64,
    /// Unauthenticated connections per peer, oldest first.
    waiting: HashMap<PeerKey, VecDeque<Arc<Entry>>>,
}

/// The per-peer accounting of one listener; cheap to clone.
#[derive(Clone, Default)]
pub struct PeerGate(Arc<Mutex<Peers>>);

impl PeerGate {
    fn peers(&self) -> std::sync::MutexGuard<'_, Peers> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Admits a new connection from `peer`: it counts as unauthenticated until
    /// [`Admission::authenticated`]. When the peer already holds
    /// [`MAX_UNAUTHENTICATED_PER_PEER`] unauthenticated connections, the oldest of them that is
    /// waiting for a request head is evicted (its [`Admission::evicted`] token is cancelled).
    pub fn admit(&self, peer: IpAddr) -> Arc<Admission> {
        let key = PeerKey::of(peer);
        let entry = {
            let mut peers = self.peers();
            peers.next_id += 1;
            let entry = Arc::new(Entry {
                id: peers.next_id,
                evict: CancellationToken::new(),
                serving: AtomicUsize::new(0),
            });
            let queue = peers.waiting.entry(key).or_default();
            if queue.len() >= MAX_UNAUTHENTICATED_PER_PEER {
                let idle = queue
                    .iter()
                    .position(|e| e.serving.load(Ordering::SeqCst) == 0);
                if let Some(victim) = idle.and_then(|i| queue.remove(i)) {
                    victim.evict.cancel();
                }
            }
            queue.push_back(Arc::clone(&entry));
            entry
        };
        Arc::new(Admission {
            gate: self.clone(),
            key,
            entry,
        })
    }

    /// Unauthenticated connections `peer` holds now.
    pub fn unauthenticated(&self, peer: IpAddr) -> usize {
        self.peers()
            .waiting
            .get(&PeerKey::of(peer))
            .map_or(0, VecDeque::len)
    }

    fn forget(&self, key: PeerKey, id: u64) {
        let mut peers = self.peers();
        if let Some(queue) = peers.waiting.get_mut(&key) {
            queue.retain(|e| e.id != id);
            if queue.is_empty() {
                peers.waiting.remove(&key);
            }
        }
    }
}

/// One connection's place in its peer's accounting; leaves it when authenticated or dropped
/// (the connection ended). Carried in each of the connection's requests as an extension.
pub struct Admission {
    gate: PeerGate,
    key: PeerKey,
    entry: Arc<Entry>,
}

impl Admission {
    /// Cancelled when the connection is evicted: the connection's task closes it.
    pub fn evicted(&self) -> &CancellationToken {
        &self.entry.evict
    }

    /// Who the connection counts against (its peer's address or /64).
    pub fn peer(&self) -> PeerKey {
        self.key
    }

    /// A request of this connection carried the right key: it no longer counts (idempotent).
    pub fn authenticated(&self) {
        self.gate.forget(self.key, self.entry.id);
    }

    /// A request is being served: not evictable until the returned guard drops.
    pub fn serving(self: &Arc<Self>) -> Serving {
        self.entry.serving.fetch_add(1, Ordering::SeqCst);
        Serving(Arc::clone(&self.entry))
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.gate.forget(self.key, self.entry.id);
    }
}

/// A request in service (see [`Admission::serving`]).
pub struct Serving(Arc<Entry>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.serving.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_evicts_only_its_own_oldest_waiting_connection() {
        let gate = PeerGate::default();
        let a: IpAddr = "127.0.0.1".parse().unwrap();
        let b: IpAddr = "127.0.0.2".parse().unwrap();
        let held: Vec<_> = (0..MAX_UNAUTHENTICATED_PER_PEER)
            .map(|_| gate.admit(a))
            .collect();
        let other = gate.admit(b);
        // The oldest is serving a request: the next oldest goes.
        let busy = held[0].serving();
        let newest = gate.admit(a);
        assert!(!held[0].evicted().is_cancelled());
        assert!(held[1].evicted().is_cancelled());
        assert!(!other.evicted().is_cancelled() && !newest.evicted().is_cancelled());
        assert_eq!(gate.unauthenticated(a), MAX_UNAUTHENTICATED_PER_PEER);
        drop(busy);
        // Authenticated connections no longer count; dropped ones leave.
        held[2].authenticated();
        assert_eq!(gate.unauthenticated(a), MAX_UNAUTHENTICATED_PER_PEER - 1);
        drop(held);
        assert_eq!(gate.unauthenticated(a), 1);
        assert_eq!(gate.unauthenticated(b), 1);
    }

    #[test]
    fn ipv6_peers_count_by_their_64_prefix() {
        let one: IpAddr = "2001:db8:1:2::1".parse().unwrap();
        let two: IpAddr = "2001:db8:1:2:ffff::9".parse().unwrap();
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(PeerKey::of(one), PeerKey::of(two));
        assert_eq!(
            PeerKey::of(mapped),
            PeerKey::of("192.0.2.7".parse().unwrap())
        );
    }
}
