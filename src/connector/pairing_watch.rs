//! Following a paired wireless phone (both pairing flows, and after restarts): its direct
//! transport is watched at the last known address ([`inventory::run_paired_watch`]) while a
//! lasting mDNS browse listens for the phone's `_adb-tls-connect._tcp` under its GUID
//! (instance = GUID, or the GUID renamed after a name conflict, `<GUID> (2)`). Android picks a
//! new port (and often a new IP) on every Wi-Fi toggle and announces it; when the phone is
//! unreachable and an announced address answers as this phone (field bug 37: the exact name
//! was compared, and the last record seen could be a stale one at a dead port), the watch moves
//! to the new address, which is stored. While the
//! descriptor's phone is unreachable it reads `offline`, and `connected` again once found.
//!
//! USB first: while the same serial is online through the adb server (USB, or a transport adb
//! set up), the Wi-Fi watch is stopped, so the inventory keeps the USB link; when that goes
//! away the Wi-Fi watch resumes as the fallback. Issue 9 "Re-connect by GUID".

// A wireless GUID is `adb-<serial>-<6 chars>`: logged masked like a serial.
use crate::protocol::descriptor::mask_serial;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use std::net::SocketAddr;

use crate::adb::mdns::{adb_server_addresses, Browser, ServiceWatch, CONNECT_SERVICE};
use crate::adb::{AdbServerClient, DeviceLink, HostKeyFile};
use crate::connector::qr_pairing::QrPairingConfig;
use crate::device::inventory::{self, Inventory};
use crate::device::parse::devices::DeviceState;
use crate::lifecycle::Lifecycle;
use crate::store::{Store, WirelessPhoneRecord};

/// How often the follower looks at the inventory.
const TICK: Duration = Duration::from_secs(1);

/// Where the phone `serial` is now, as the inventory sees it.
enum Seen {
    /// Online through the adb server (USB or an adb-made transport).
    Usb,
    /// Online through our direct transport.
    Wifi,
    /// Neither.
    Unreachable,
}

fn seen(inv: &Inventory, serial: &str) -> Seen {
    match inv.get(serial) {
        Some(p) if p.state == DeviceState::Device && p.transport.starts_with("tcp:") => Seen::Wifi,
        Some(p) if p.state == DeviceState::Device => Seen::Usb,
        _ => Seen::Unreachable,
    }
}

/// How long an announced address that did not answer as this phone is left out before it is
/// tried again (a stale record at a dead port stays cached for its TTL, ~120 s).
const DEAD_RETRY: Duration = Duration::from_secs(15);
/// Bound on checking one announced address (connect, `STLS`, `getprop ro.serialno`).
const CANDIDATE_DEADLINE: Duration = Duration::from_secs(6);
/// How often an unreachable phone is looked up in the adb server's `host:mdns:services`.
const SERVER_ASK_EVERY: Duration = Duration::from_secs(5);

/// Where the follower looks for a phone that left its address: its lasting mDNS browse and the
/// adb server's list; addresses that did not answer as the phone, with when.
struct Lookup {
    announced: Option<ServiceWatch>,
    /// Kept alive for `announced` (dropping it stops its daemon).
    _browser: Option<Browser>,
    adb_server: Option<AdbServerClient>,
    server_asked: Option<tokio::time::Instant>,
    dead: Vec<(SocketAddr, tokio::time::Instant)>,
}

impl Lookup {
    /// One lasting browse per followed phone (its re-announcements arrive as they happen) and
    /// the adb server of `discovery`. mDNS that cannot start leaves the adb server only.
    async fn start(discovery: &QrPairingConfig, phone: &WirelessPhoneRecord) -> Lookup {
        let interfaces = discovery.mdns_interfaces.clone();
        let browser = match tokio::task::spawn_blocking(move || Browser::start(&interfaces)).await {
            Ok(Ok(b)) => Some(b),
            _ => {
                tracing::warn!(
                    guid = %mask_serial(&phone.guid),
                    "mDNS unavailable: the phone is watched at its last address and looked up in the adb server's list only"
                );
                None
            }
        };
        Lookup {
            announced: browser.as_ref().and_then(|b| b.watch(CONNECT_SERVICE).ok()),
            _browser: browser,
            adb_server: discovery.adb_server.as_deref().map(AdbServerClient::new),
            server_asked: None,
            dead: Vec::new(),
        }
    }

    /// The addresses announced for `phone` other than its current one, freshest first (mDNS
    /// records, conflict renames included, then the adb server's), without those that
    /// recently failed.
    async fn candidates(&mut self, phone: &WirelessPhoneRecord) -> Vec<SocketAddr> {
        let now = tokio::time::Instant::now();
        self.dead
            .retain(|(_, at)| now.duration_since(*at) < DEAD_RETRY);
        let mut found = self
            .announced
            .as_mut()
            .map(|a| a.candidates(&phone.guid))
            .unwrap_or_default();
        if let Some(server) = &self.adb_server {
            if self
                .server_asked
                .is_none_or(|at| now.duration_since(at) >= SERVER_ASK_EVERY)
            {
                self.server_asked = Some(now);
                found.extend(adb_server_addresses(server, CONNECT_SERVICE, &phone.guid).await);
            }
        }
        let mut out: Vec<SocketAddr> = Vec::new();
        for addr in found {
            let fresh = addr.to_string() != phone.addr
                && !out.contains(&addr)
                && !self.dead.iter().any(|(d, _)| *d == addr);
            if fresh {
                out.push(addr);
            }
        }
        out
    }

    /// The first of `candidates` where `phone` answers (its own serial, over `STLS` with the
    /// connector's key); the others are noted dead for [`DEAD_RETRY`].
    async fn first_answering(
        &mut self,
        candidates: Vec<SocketAddr>,
        phone: &WirelessPhoneRecord,
        key: &HostKeyFile,
    ) -> Option<String> {
        for addr in candidates {
            let link = DeviceLink::direct_with_key(addr.to_string(), key.clone());
            let serial = tokio::time::timeout(CANDIDATE_DEADLINE, inventory::identify(&link)).await;
            link.reset().await;
            if matches!(&serial, Ok(Ok(s)) if *s == phone.serial) {
                return Some(addr.to_string());
            }
            self.dead.push((addr, tokio::time::Instant::now()));
        }
        None
    }
}

/// Follows `phone` until `shutdown` (a child of the lifecycle's): watches its last address,
/// re-finds it by GUID when it stays unreachable — mDNS on `discovery.mdns_interfaces` (empty:
/// every interface), conflict renames `<GUID> (N)` included, and `discovery.adb_server`'s
/// `host:mdns:services` — checking that an announced address answers as this phone before
/// moving there (a stale record never masks the live one), stores the new address, and yields
/// to USB. Never returns early; every lookup has its deadline.
pub async fn follow(
    inv: Inventory,
    store: Store,
    mut phone: WirelessPhoneRecord,
    key: HostKeyFile,
    discovery: QrPairingConfig,
    lifecycle: Lifecycle,
    shutdown: CancellationToken,
) {
    let mut lookup = Lookup::start(&discovery, &phone).await;
    let mut watch: Option<CancellationToken> = None;
    loop {
        let now = seen(&inv, &phone.serial);
        if let Seen::Usb = now {
            if let Some(w) = watch.take() {
                tracing::info!(
                    guid = %mask_serial(&phone.guid),
                    "phone online over USB; Wi-Fi kept as fallback"
                );
                w.cancel();
            }
        } else if watch.is_none() {
            // Just paired (attached by the flow), just started, or USB just went: the watch
            // probes the Wi-Fi link from now on.
            tracing::info!(
                guid = %mask_serial(&phone.guid),
                addr = phone.addr.as_str(),
                "watching the wireless phone over Wi-Fi"
            );
            watch = Some(start_watch(&inv, &phone, &key, &lifecycle, &shutdown));
        } else if let Seen::Unreachable = now {
            let candidates = lookup.candidates(&phone).await;
            if let Some(addr) = lookup.first_answering(candidates, &phone, &key).await {
                tracing::info!(
                    guid = %mask_serial(&phone.guid),
                    addr = addr.as_str(),
                    "wireless phone found at a new address"
                );
                if let Some(w) = watch.take() {
                    w.cancel();
                }
                // The old address is dead, not a fallback (its watch only ever marks it
                // offline from now on, never re-adds it).
                inv.remove_route(None, &format!("tcp:{}", phone.addr));
                phone.addr = addr;
                if let Err(e) = store.wireless_phone_upsert(phone.clone()).await {
                    tracing::warn!(error = %e, "could not store the phone's new address");
                }
                watch = Some(start_watch(&inv, &phone, &key, &lifecycle, &shutdown));
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(TICK) => {}
        }
    }
}

/// Starts the watch of `phone` at its address (under its serial: listed even when it refuses
/// the key from the first connection); cancel the token to stop it.
fn start_watch(
    inv: &Inventory,
    phone: &WirelessPhoneRecord,
    key: &HostKeyFile,
    lifecycle: &Lifecycle,
    shutdown: &CancellationToken,
) -> CancellationToken {
    let stop = shutdown.child_token();
    lifecycle.spawn(inventory::run_paired_watch(
        inv.clone(),
        phone.addr.clone(),
        phone.serial.clone(),
        key.clone(),
        stop.clone(),
    ));
    stop
}

impl crate::connector::Connector {
    /// Follows the paired phone `phone` from now on (see the module); a follower of the same
    /// serial started earlier (an older address) is replaced. No adb key: nothing to follow.
    pub fn follow_wireless_phone(&self, phone: WirelessPhoneRecord) {
        let Some(key) = self.host_key.clone() else {
            return;
        };
        let stop = self.lifecycle.shutdown().child_token();
        if let Some(earlier) =
            super::lock(&self.followers).insert(phone.serial.clone(), stop.clone())
        {
            earlier.cancel();
        }
        self.lifecycle.spawn(follow(
            self.inventory.clone(),
            self.store.clone(),
            phone,
            key,
            self.qr_config.clone(),
            self.lifecycle.clone(),
            stop,
        ));
    }
}
