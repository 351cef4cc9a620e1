//! Following a paired wireless phone (both pairing flows, and after restarts): its direct
//! transport is watched at the last known address ([`inventory::run_paired_watch`]) while a
//! lasting mDNS browse listens for the phone's `_adb-tls-connect._tcp` under its GUID
//! (instance = GUID). Android picks a new port (and often a new IP) on every Wi-Fi toggle and
//! announces it; when the phone is unreachable and announced elsewhere, the watch moves to the
//! new address, which is stored. While the
//! descriptor's phone is unreachable it reads `offline`, and `connected` again once found.
//!
//! USB first: while the same serial is online through the adb server (USB, or a transport adb
//! set up), the Wi-Fi watch is stopped, so the inventory keeps the USB link; when that goes
//! away the Wi-Fi watch resumes as the fallback. Issue 9 "Re-connect by GUID".

// A wireless GUID is `adb-<serial>-<6 chars>`: logged masked like a serial.
use crate::protocol::descriptor::mask_serial;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::adb::mdns::{Browser, CONNECT_SERVICE};
use crate::adb::HostKeyFile;
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

/// Follows `phone` until `shutdown` (a child of the lifecycle's): watches its last address, re-finds it by GUID over mDNS
/// on `mdns_interfaces` (empty: every interface) when it stays unreachable, stores a new
/// address, and yields to USB. Never returns early; every lookup has its deadline.
pub async fn follow(
    inv: Inventory,
    store: Store,
    mut phone: WirelessPhoneRecord,
    key: HostKeyFile,
    mdns_interfaces: Vec<String>,
    lifecycle: Lifecycle,
    shutdown: CancellationToken,
) {
    // One lasting browse per followed phone: its re-announcements arrive as they happen.
    let interfaces = mdns_interfaces.clone();
    let browser = match tokio::task::spawn_blocking(move || Browser::start(&interfaces)).await {
        Ok(Ok(b)) => Some(b),
        _ => {
            tracing::warn!(
                guid = %mask_serial(&phone.guid),
                "mDNS unavailable: the phone is watched at its last address only"
            );
            None
        }
    };
    let announced = browser.as_ref().and_then(|b| b.watch(CONNECT_SERVICE).ok());
    let mut latest: Option<String> = None;
    let mut watch: Option<CancellationToken> = None;
    loop {
        if let Some(addr) = announced.as_ref().and_then(|a| a.latest(&phone.guid)) {
            latest = Some(addr.to_string());
        }
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
        } else if let (Seen::Unreachable, Some(addr)) = (&now, latest.clone()) {
            if addr != phone.addr {
                tracing::info!(
                    guid = %mask_serial(&phone.guid),
                    addr = addr.as_str(),
                    "wireless phone found at a new address"
                );
                latest = None;
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
            self.qr_config.mdns_interfaces.clone(),
            self.lifecycle.clone(),
            stop,
        ));
    }
}
