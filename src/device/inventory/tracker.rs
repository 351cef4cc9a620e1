//! Phones behind adb servers: one `host:track-devices-l` loop per server (reconnecting with
//! back-off), the identity of each transport newly online, the liveness check of the phones
//! the server lists `device`, and — after the server restarted — the `adb connect` phones it
//! forgot ([`super::reconnect`]), and dials afresh `adb connect` phones it lists `offline` for
//! good ([`super::stale_wifi`]).

use std::collections::{HashMap, HashSet};

use tokio_util::sync::CancellationToken;

use super::identity::{place, probe};
use super::reconnect::WifiMemory;
use super::{
    AttachedPhone, Inventory, RouteKey, Source, FROZEN_RECHECK, LIVENESS_DEADLINE,
    SERVER_LIVENESS_PERIOD, SERVER_RETRY,
};
use crate::adb::{AdbServerClient, DeviceLink};
use crate::device::parse::devices::{parse_devices_l, DeviceEntry, DeviceState, RouteKind};

/// Follows `host:track-devices-l` of one adb server until `shutdown`, reconnecting with back-off.
pub async fn run_adb_tracker(inv: Inventory, client: AdbServerClient, shutdown: CancellationToken) {
    let source = Source {
        label: client.addr().to_string(),
        rank: 0,
    };
    run_adb_tracker_from(inv, client, source, shutdown).await
}

/// [`run_adb_tracker`] for one of several servers: its phones carry `source`'s label and rank.
pub async fn run_adb_tracker_from(
    inv: Inventory,
    client: AdbServerClient,
    source: Source,
    shutdown: CancellationToken,
) {
    let liveness = run_server_liveness(inv.clone(), source.label.clone(), shutdown.clone());
    let tracker = track(inv, client, source, shutdown);
    tokio::join!(liveness, tracker);
}

/// What a liveness check of a phone behind an adb server found.
enum Liveness {
    /// A `sync:` stream opened.
    Answers,
    /// No answer within [`LIVENESS_DEADLINE`], twice: a hung adbd or USB stack.
    Frozen,
    /// The server refused the stream at once (`device offline`, `device not found`): the
    /// transport closed — unplugged or out of reach — before adb's list says so.
    Gone,
}

/// Whether a phone behind an adb server answers: a `sync:` stream opens (the server replies
/// `OKAY` only once adbd did) within [`LIVENESS_DEADLINE`], tried twice so one slow answer of
/// a busy phone is not taken for a freeze. A refusal without waiting is [`Liveness::Gone`]
/// (AOSP `transport.cpp` answers `device offline` for a closed transport).
async fn answers(link: &DeviceLink) -> Liveness {
    let mut refused = false;
    for _ in 0..2 {
        match tokio::time::timeout(LIVENESS_DEADLINE, link.open("sync:")).await {
            Ok(Ok(stream)) => {
                drop(stream);
                return Liveness::Answers;
            }
            Ok(Err(_)) => refused = true,
            Err(_) => {}
        }
    }
    if refused {
        Liveness::Gone
    } else {
        Liveness::Frozen
    }
}

/// The liveness check of the phones behind one adb server (`label`): see the module doc.
async fn run_server_liveness(inv: Inventory, label: String, shutdown: CancellationToken) {
    let mut suspects = inv.suspects.subscribe();
    let mut last_full = tokio::time::Instant::now();
    loop {
        let suspected = tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(FROZEN_RECHECK) => false,
            _ = suspects.changed() => true,
        };
        // Online phones every period (or at once when a call timed out); marked ones each tick.
        let full = suspected || last_full.elapsed() >= SERVER_LIVENESS_PERIOD;
        if full {
            last_full = tokio::time::Instant::now();
        }
        let routes: Vec<AttachedPhone> = inv
            .routes()
            .into_iter()
            .filter(|p| {
                p.adb_server.as_deref() == Some(label.as_str())
                    && ((full && p.state == DeviceState::Device) || inv.is_frozen(&p.key()))
            })
            .collect();
        let checked = futures_util::future::join_all(routes.into_iter().map(|p| async move {
            let ok = answers(&p.link).await;
            (p, ok)
        }))
        .await;
        for (p, found) in checked {
            let masked = crate::protocol::descriptor::mask_serial(&p.serial);
            let fix = DeviceState::Offline
                .remedy(p.route_kind())
                .unwrap_or_default();
            match found {
                Liveness::Answers => {
                    if inv.thaw(&p.key()) {
                        tracing::info!(serial_hint = %masked, server = %label, "phone answers again: connected");
                    }
                }
                Liveness::Frozen => {
                    if inv.freeze(&p.key()) {
                        tracing::warn!(serial_hint = %masked, server = %label, "phone listed `device` by adb does not answer (frozen transport): offline until it answers; {fix}");
                    }
                }
                Liveness::Gone => {
                    if inv.freeze(&p.key()) {
                        tracing::warn!(serial_hint = %masked, server = %label, "phone's transport closed (unplugged or out of reach) before adb listed it: offline until it is back; {fix}");
                    }
                }
            }
        }
    }
}

/// The `host:track-devices-l` loop of [`run_adb_tracker_from`].
async fn track(
    inv: Inventory,
    client: AdbServerClient,
    source: Source,
    shutdown: CancellationToken,
) {
    // (adb serial, transport id) → name, learned while online.
    let mut known: Known = HashMap::new();
    let mut wifi = WifiMemory::default();
    let mut warned = false;
    while !shutdown.is_cancelled() {
        match client.track_devices().await {
            Ok(mut tracker) => {
                // Cancels this session's re-connects when the server goes away again.
                let session = shutdown.child_token();
                let stale = super::stale_wifi::StaleWifi::default();
                let mut first = true;
                loop {
                    if warned {
                        tracing::info!(server = %source.label, "adb server reachable again");
                        warned = false;
                    }
                    let list = tokio::select! {
                        _ = shutdown.cancelled() => return,
                        l = tracker.next_list() => l,
                    };
                    if list.is_ok() {
                        inv.set_server_down(&source.label, false);
                    }
                    let Ok(list) = list else {
                        // The server went away (killed, restarted, box rebooted): said once; the
                        // line above says when it is back.
                        tracing::warn!(server = %source.label, "adb server connection lost: its phones are unavailable until it answers again; retrying every 2 s");
                        warned = true;
                        break;
                    };
                    let entries = parse_devices_l(&list);
                    reconcile(&inv, &client, &source, &mut known, &entries).await;
                    if std::mem::take(&mut first) {
                        let forgotten = wifi.new_session(&entries);
                        super::reconnect::start(&inv, &client, &source.label, forgotten, &session);
                    } else {
                        wifi.same_session(&entries);
                    }
                    stale.observe(&inv, &client, &source.label, &entries, &session);
                }
                session.cancel();
            }
            Err(e) if !warned => {
                warned = true;
                tracing::warn!(server = %source.label, error = %e, "adb server not reachable (start it with `adb start-server`, or pass --adb-server \"\" to use only --device phones); retrying every 2 s");
            }
            Err(e) => tracing::debug!(error = %e, "adb server still not reachable"),
        }
        server_gone(&inv, &source.label, &known);
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(SERVER_RETRY) => {}
        }
    }
}

/// The server `label` does not answer: everything it carried is unreachable until it
/// returns — told apart from a phone's own absence (`adb_server_unavailable`, field bug 34).
fn server_gone(inv: &Inventory, label: &str, known: &Known) {
    inv.set_server_down(label, true);
    for (adb_serial, id) in known.keys() {
        let key = key_of(label, adb_serial, *id);
        inv.unmark(&key);
        inv.set_state(&key, DeviceState::ServerUnavailable);
    }
}

/// (adb serial, transport id) → the name of the phone identified there.
type Known = HashMap<(String, Option<u64>), String>;

fn key_of(label: &str, adb_serial: &str, transport_id: Option<u64>) -> RouteKey {
    RouteKey {
        server: Some(label.to_string()),
        transport: adb_serial.to_string(),
        transport_id,
    }
}

/// Applies one `track-devices-l` list: states first (a phone that left or went offline is
/// told at once), then the transports newly `device` are identified, concurrently, each
/// within [`super::PROBE_DEADLINE`], and named one after the other ([`place`]: two phones
/// under one serial are told apart here). A transport already identified and online is not
/// probed again: probing every phone on every list, one after the other, let a frozen phone
/// (adb still says `device`) hold every other phone's change back by the probe deadline (fault
/// soak, `docs/reliability.md`). A transport is addressed by its transport id when the list
/// gives it (`host:transport-id:N`), so a link never reaches another phone listed under the
/// same serial.
async fn reconcile(
    inv: &Inventory,
    client: &AdbServerClient,
    source: &Source,
    known: &mut Known,
    entries: &[DeviceEntry],
) {
    let label = &source.label;
    let listed: HashSet<RouteKey> = entries
        .iter()
        .map(|e| key_of(label, &e.serial, e.transport_id))
        .collect();
    let mut to_probe = Vec::new();
    for e in entries {
        let key = key_of(label, &e.serial, e.transport_id);
        let id = (e.serial.clone(), e.transport_id);
        let link = DeviceLink::via_transport(client.clone(), e.serial.clone(), e.transport_id);
        if e.state == DeviceState::Device {
            // A route marked unresponsive is the liveness check's (probing it here would hold
            // this list's other changes back by the probe deadline).
            if !(known.contains_key(&id) && (inv.online(&key) || inv.is_frozen(&key))) {
                to_probe.push((id, key, link));
            }
        } else if known.contains_key(&id) {
            inv.unmark(&key);
            inv.set_state(&key, e.state.clone());
        } else if let Some(old) = renumbered(label, known, &listed, e) {
            // The same `HOST:PORT` (or emulator) under a new transport id, not online yet (adb
            // connected it again after a restart: `connecting`, `offline`, `unauthorized`):
            // the phone identified there before, in its new state.
            let name = known.remove(&old).unwrap_or_default();
            inv.rekey(&key_of(label, &old.0, old.1), e.transport_id, link);
            inv.set_state(&key, e.state.clone());
            known.insert(id, name);
        } else {
            inv.upsert(never_online(source, e, link));
        }
    }
    // A transport adb no longer lists was unplugged (or its network transport dropped): `Gone`,
    // not adb's `offline` (attached but silent).
    for (adb_serial, id) in known.keys() {
        let key = key_of(label, adb_serial, *id);
        if !listed.contains(&key) {
            inv.unmark(&key);
            inv.mark_gone(&key);
        }
    }
    inv.forget_unlisted_unidentified(label, &listed);
    identify(inv, source, known, to_probe, &listed).await;
    // Transports whose route was replaced (re-plugged under a new id, or the id taken by
    // another phone) are no longer this server's to mark.
    known.retain(|(adb_serial, id), _| inv.has_route(&key_of(label, adb_serial, *id)));
}

/// The record of a transport never online: its adb serial is the best name there is (USB
/// serials equal `ro.serialno`).
fn never_online(source: &Source, e: &DeviceEntry, link: DeviceLink) -> AttachedPhone {
    AttachedPhone {
        serial: e.serial.clone(),
        serialno: e.serial.clone(),
        second: None,
        model: e.model.clone().unwrap_or_default(),
        manufacturer: String::new(),
        sdk: None,
        state: e.state.clone(),
        link,
        transport: e.serial.clone(),
        transport_id: e.transport_id,
        adb_server: Some(source.label.clone()),
        rank: source.rank,
        wifi_paired: false,
        identified: false,
    }
}

/// Probes the transports of `to_probe` concurrently, then names ([`place`]) and records each
/// phone that answered, one after the other (so two phones of one serial met in one list
/// are told apart).
async fn identify(
    inv: &Inventory,
    source: &Source,
    known: &mut Known,
    to_probe: Vec<((String, Option<u64>), RouteKey, DeviceLink)>,
    listed: &HashSet<RouteKey>,
) {
    let probed =
        futures_util::future::join_all(to_probe.into_iter().map(|(id, key, link)| async move {
            let identity = probe(&link).await;
            (id, key, link, identity)
        }))
        .await;
    for (id, key, link, identity) in probed {
        let identity = match identity {
            Ok(identity) => identity,
            Err(err) => {
                tracing::debug!(error = %err, "probe of a tracked phone failed");
                continue;
            }
        };
        let placed = place(inv, &identity.serialno, &key, &link, listed).await;
        known.insert(id, placed.name.clone());
        inv.upsert(identity.route(placed, key, link, source.rank, false));
    }
}

/// The one identified transport of `known` that `e` renumbers: the same adb serial, another
/// id, no longer listed — for serials that name one phone (`HOST:PORT`, emulators, mDNS
/// names), never a USB serial, which two phones may share (field bug 50).
fn renumbered(
    label: &str,
    known: &Known,
    listed: &HashSet<RouteKey>,
    e: &DeviceEntry,
) -> Option<(String, Option<u64>)> {
    if e.transport_id.is_none() || RouteKind::of(Some(label), &e.serial) == RouteKind::UsbAdbServer
    {
        return None;
    }
    let mut old = known.keys().filter(|(serial, id)| {
        serial == &e.serial
            && *id != e.transport_id
            && !listed.contains(&key_of(label, serial, *id))
    });
    match (old.next(), old.next()) {
        (Some(one), None) => Some(one.clone()),
        _ => None,
    }
}

/// Records in `inv` what one `host:devices-l` (or `host:devices`) answer `list` of `client`
/// shows, as the tracker does: online phones are probed for their identity (a failed probe
/// leaves the phone out) and named, the others kept under their adb serial. For the operator
/// commands, which look once instead of tracking.
pub async fn refresh_once(inv: &Inventory, client: &AdbServerClient, source: &Source, list: &str) {
    let mut known = HashMap::new();
    reconcile(inv, client, source, &mut known, &parse_devices_l(list)).await;
}
