//! How the inventory's routes change: added or replaced ([`Inventory::upsert`], where a
//! transport is kept one phone), renumbered, given a state, forgotten.

use std::collections::HashSet;

use super::log::{log_state_change, route_name};
use super::{visible, AttachedPhone, Inventory, RouteKey};
use crate::adb::DeviceLink;
use crate::device::parse::devices::DeviceState;

impl Inventory {
    /// Inserts or replaces a route of a phone; ticks when anything visible changed. A
    /// transport is one phone: a route of another name through the same adb-server transport
    /// (same id) is dropped when it was never identified, and demoted (`offline`, no id) when
    /// it was (the server reused the id after a restart, or the transport now reports another
    /// phone). A route of the same name through the same transport under another id is an
    /// earlier enumeration of it (re-plugged, server restarted): dropped.
    pub(super) fn upsert(&self, phone: AttachedPhone) {
        // The serial is an identifier the logs never carry whole (see `mask_serial`).
        let masked = crate::protocol::descriptor::mask_serial(&phone.serial);
        let name = phone.serial.clone();
        let key = phone.key();
        let (changes, duplicate) = {
            let mut map = self.write();
            let mut changes = if key.server.is_some() {
                release_transport(&mut map, &name, &key)
            } else {
                Vec::new()
            };
            let routes = map.entry(name.clone()).or_default();
            let before = visible(Some(routes));
            if key.transport_id.is_some() {
                routes.retain(|r| !(r.key().same_transport(&key) && r.key() != key));
            }
            let was = routes.len();
            match routes.iter_mut().find(|r| r.key() == key) {
                Some(r) => *r = phone,
                None => routes.push(phone),
            }
            let dup = (was == 1 && routes.len() == 2).then(|| {
                let mut sorted: Vec<&AttachedPhone> = routes.iter().collect();
                sorted.sort_by(|a, b| a.preference().cmp(&b.preference()));
                sorted.iter().map(|r| route_name(r)).collect::<Vec<_>>()
            });
            let after = visible(Some(routes));
            changes.push((name.clone(), before, after));
            (changes, dup)
        };
        let mut changed = false;
        for (serial, before, after) in &changes {
            changed |= before != after;
            log_state_change(serial, before, after, &self.seen);
        }
        if let Some(places) = duplicate {
            tracing::warn!(
                serial_hint = %masked,
                used = %places[0],
                fallback = %places[1],
                "one serial is reachable through two routes: the first is used, the other is the fallback"
            );
        }
        if changed {
            self.changes.send_modify(|n| *n += 1);
        }
    }

    /// Gives the route `old` adb's new transport id for it (and a link by that id): the same
    /// transport renumbered by its server.
    pub(super) fn rekey(&self, old: &RouteKey, transport_id: Option<u64>, link: DeviceLink) {
        for r in self
            .write()
            .values_mut()
            .flatten()
            .filter(|r| &r.key() == old)
        {
            r.transport_id = transport_id;
            r.link = link.clone();
        }
    }

    /// Records the Android ID digest of the phone `name` (on every route of it).
    pub(super) fn set_second(&self, name: &str, second: &str) {
        if let Some(routes) = self.write().get_mut(name) {
            for r in routes.iter_mut() {
                r.second = Some(second.to_string());
            }
        }
    }

    /// Whether the route `key` is recorded.
    pub(super) fn has_route(&self, key: &RouteKey) -> bool {
        self.read().values().flatten().any(|p| &p.key() == key)
    }

    /// Direct routes whose phone has never identified itself: one that refused the
    /// connector's key from its first connection sends no `CNXN`, so no `ro.serialno` can be
    /// read; it is recorded under its transport (`tcp:HOST:PORT`) as its serial, as `adb
    /// devices` lists an unauthorized network phone by its address.
    pub fn unidentified_direct(&self) -> Vec<AttachedPhone> {
        let mut routes: Vec<AttachedPhone> = self
            .read()
            .values()
            .flatten()
            .filter(|p| p.adb_server.is_none() && p.serial == p.transport)
            .cloned()
            .collect();
        routes.sort_by(|a, b| a.transport.cmp(&b.transport));
        routes
    }

    /// Forgets the record of a direct phone kept under its `transport` while it was
    /// unidentified ([`Inventory::unidentified_direct`]): it now answers under its
    /// `ro.serialno`. Not logged as a state change (the phone did not go); ticks when one was
    /// there. Returns whether one was.
    pub(super) fn forget_unidentified(&self, transport: &str) -> bool {
        let removed = {
            let mut map = self.write();
            let Some(routes) = map.get_mut(transport) else {
                return false;
            };
            let was = routes.len();
            routes.retain(|p| !(p.adb_server.is_none() && p.transport == transport));
            let removed = routes.len() != was;
            if routes.is_empty() {
                map.remove(transport);
            }
            removed
        };
        if removed {
            self.changes.send_modify(|n| *n += 1);
        }
        removed
    }

    /// Forgets the records of `server`'s transports never online (kept under their adb
    /// serial) that its list no longer shows (`listed`): unplugged before they ever answered.
    pub(super) fn forget_unlisted_unidentified(&self, server: &str, listed: &HashSet<RouteKey>) {
        let changed = {
            let mut map = self.write();
            let was: usize = map.values().map(Vec::len).sum();
            for routes in map.values_mut() {
                routes.retain(|p| {
                    p.identified
                        || p.adb_server.as_deref() != Some(server)
                        || listed.contains(&p.key())
                });
            }
            map.retain(|_, routes| !routes.is_empty());
            map.values().map(Vec::len).sum::<usize>() != was
        };
        if changed {
            self.changes.send_modify(|n| *n += 1);
        }
    }

    /// Whether the route `key` is recorded online.
    pub(super) fn online(&self, key: &RouteKey) -> bool {
        self.read()
            .values()
            .flatten()
            .any(|p| &p.key() == key && p.state == DeviceState::Device)
    }

    /// Forgets the routes through `transport` of `server` (`None`: direct), e.g. a Wi-Fi
    /// address the phone left; ticks when anything visible changed.
    pub fn remove_route(&self, server: Option<&str>, transport: &str) {
        let changed = {
            let mut map = self.write();
            let mut changed = false;
            let mut gone = Vec::new();
            map.retain(|serial, routes| {
                let before = visible(Some(routes));
                routes.retain(|p| !(p.transport == transport && p.adb_server.as_deref() == server));
                let after = visible(Some(routes));
                if before != after {
                    changed = true;
                    gone.push((serial.clone(), before, after));
                }
                !routes.is_empty()
            });
            drop(map);
            for (serial, before, after) in &gone {
                log_state_change(serial, before, after, &self.seen);
            }
            changed
        };
        if changed {
            self.changes.send_modify(|n| *n += 1);
        }
    }

    /// Marks the route `key` as `state` (kept, so bindings survive). Each visible change is
    /// logged ([`log_state_change`]).
    pub(super) fn set_state(&self, key: &RouteKey, state: DeviceState) {
        self.update_routes(|p| &p.key() == key, |_| Some(state.clone()));
    }

    /// Marks the route `key` gone (its server no longer lists it), unless the connector is
    /// connecting it again ([`DeviceState::ServerForgot`], [`reconnect`]).
    pub(super) fn mark_gone(&self, key: &RouteKey) {
        self.update_routes(
            |p| &p.key() == key,
            |s| (!matches!(s, DeviceState::ServerForgot { .. })).then_some(DeviceState::Gone),
        );
    }

    /// Applies `next` (the new state, or `None`: unchanged) to every route `select` picks;
    /// each visible change is logged, and one tick sent when anything changed.
    pub(super) fn update_routes(
        &self,
        select: impl Fn(&AttachedPhone) -> bool,
        next: impl Fn(&DeviceState) -> Option<DeviceState>,
    ) {
        let changes = {
            let mut map = self.write();
            let mut changes = Vec::new();
            for (serial, routes) in map.iter_mut() {
                let before = visible(Some(routes));
                for p in routes.iter_mut().filter(|p| select(p)) {
                    if let Some(state) = next(&p.state) {
                        p.state = state;
                    }
                }
                let after = visible(Some(routes));
                if before != after {
                    changes.push((serial.clone(), before, after));
                }
            }
            changes
        };
        for (serial, before, after) in &changes {
            log_state_change(serial, before, after, &self.seen);
        }
        if !changes.is_empty() {
            self.changes.send_modify(|n| *n += 1);
        }
    }
}

/// A visible change of one name: (name, before, after).
type Change = (String, super::Visible, super::Visible);

/// Takes the adb-server transport `key` from every name but `name`: a record never
/// identified there is dropped, an identified route demoted (`Gone`, no id). The changes.
fn release_transport(map: &mut super::Routes, name: &str, key: &RouteKey) -> Vec<Change> {
    let mut changes = Vec::new();
    for (other, routes) in map.iter_mut().filter(|(n, _)| n.as_str() != name) {
        let before = visible(Some(routes));
        routes.retain(|r| r.identified || &r.key() != key);
        for r in routes.iter_mut().filter(|r| &r.key() == key) {
            r.transport_id = None;
            r.state = DeviceState::Gone;
        }
        let after = visible(Some(routes));
        if before != after {
            changes.push((other.clone(), before, after));
        }
    }
    map.retain(|_, routes| !routes.is_empty());
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::inventory::tests::route;

    /// Two transports listed under one serial are two routes (their ids differ); a route of
    /// one name re-enumerated under a new id replaces the old one; a transport taken by
    /// another name leaves the first name demoted, and a never-identified record dropped.
    #[test]
    fn a_transport_is_one_phone() {
        let inv = Inventory::default();
        let usb = |name: &str, id: u64| AttachedPhone {
            serial: name.into(),
            serialno: "0123456789ABCDEF".into(),
            transport_id: Some(id),
            ..route("0123456789ABCDEF", Some("box"), false)
        };
        inv.upsert(usb("0123456789ABCDEF", 3));
        inv.upsert(usb("0123456789ABCDEF#2", 4));
        assert_eq!(inv.list().len(), 2);
        assert_eq!(inv.sharing("0123456789ABCDEF").len(), 2);
        // #2 re-plugged: a new id, the old route is gone.
        inv.upsert(usb("0123456789ABCDEF#2", 7));
        let routes = inv.routes();
        assert_eq!(routes.len(), 2, "{routes:?}");
        assert!(routes.iter().all(|r| r.transport_id != Some(4)));
        // The server restarted and reused id 3 for the #2 phone: the first is demoted.
        inv.upsert(usb("0123456789ABCDEF#2", 3));
        let first = inv.get("0123456789ABCDEF").expect("kept");
        assert_eq!((first.state, first.transport_id), (DeviceState::Gone, None));
        // A record never identified, under its adb serial, gives way to the identified phone.
        let waiting = AttachedPhone {
            serial: "127.0.0.1:5555".into(),
            serialno: "127.0.0.1:5555".into(),
            transport_id: Some(9),
            identified: false,
            state: DeviceState::Unauthorized,
            ..route("127.0.0.1:5555", Some("box"), false)
        };
        inv.upsert(waiting.clone());
        inv.upsert(AttachedPhone {
            serial: "SIMWIFI01".into(),
            serialno: "SIMWIFI01".into(),
            identified: true,
            state: DeviceState::Device,
            ..waiting
        });
        assert!(inv.get("127.0.0.1:5555").is_none());
        assert!(inv.get("SIMWIFI01").is_some());
    }
}
