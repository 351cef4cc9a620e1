//! A lasting browse of one service type ([`super::Browser::watch`]): the follower of a paired
//! phone keeps one, so the phone's re-announcements (a new port after a Wi-Fi toggle, a
//! conflict rename `<GUID> (2)`) are known as they happen. Every record naming the phone is
//! kept, not only the last event: a stale record at a dead port (the old announcement still
//! cached, or re-sent by a build that registers the new instance before withdrawing the old,
//! b/432299214) must not hide the live one, so the caller tries them all, freshest first.

use std::collections::HashMap;
use std::net::SocketAddr;

use mdns_sd::ServiceEvent;

use super::instance::{instance_of, names_instance};

/// A lasting browse of one service type.
pub struct ServiceWatch {
    events: mdns_sd::Receiver<ServiceEvent>,
    service_type: &'static str,
    /// Records resolved so far, by full name: the address and the number of the event that
    /// last resolved it (higher: fresher).
    records: HashMap<String, (SocketAddr, u64)>,
    events_seen: u64,
}

impl std::fmt::Debug for ServiceWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServiceWatch({})", self.service_type)
    }
}

impl ServiceWatch {
    pub(super) fn new(
        events: mdns_sd::Receiver<ServiceEvent>,
        service_type: &'static str,
    ) -> ServiceWatch {
        ServiceWatch {
            events,
            service_type,
            records: HashMap::new(),
            events_seen: 0,
        }
    }

    /// Takes in every event received since the last call (never waits): a resolution records
    /// its address, a removal (goodbye, TTL 0) forgets the record. Logged at `trace` by kind
    /// and port only: an instance name holds the phone's serial.
    fn take_events(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.events_seen += 1;
            match event {
                ServiceEvent::ServiceResolved(found) => {
                    let addr = super::address(&found);
                    tracing::trace!(port = found.port, "mDNS record resolved");
                    if let Some(addr) = addr {
                        self.records
                            .insert(found.fullname.clone(), (addr, self.events_seen));
                    }
                }
                ServiceEvent::ServiceRemoved(_, fullname) => {
                    tracing::trace!("mDNS record removed");
                    self.records.remove(&fullname);
                }
                _ => {}
            }
        }
    }

    /// The addresses announced for `instance` (exactly, or renamed after a name conflict:
    /// [`names_instance`]), freshest first, each once.
    pub fn candidates(&mut self, instance: &str) -> Vec<SocketAddr> {
        self.take_events();
        let mut named: Vec<(SocketAddr, u64)> = self
            .records
            .iter()
            .filter(|(fullname, _)| {
                instance_of(fullname, self.service_type)
                    .is_some_and(|found| names_instance(&found, instance))
            })
            .map(|(_, record)| *record)
            .collect();
        named.sort_by_key(|record| std::cmp::Reverse(record.1));
        let mut out: Vec<SocketAddr> = Vec::with_capacity(named.len());
        for (addr, _) in named {
            if !out.contains(&addr) {
                out.push(addr);
            }
        }
        out
    }
}
