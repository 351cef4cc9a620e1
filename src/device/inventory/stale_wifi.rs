//! `adb connect` transports an adb server lists `offline` for good (mined row 65). When a Wi-Fi
//! connection drops, the server re-dials the phone by itself and the transport comes back
//! within seconds once the phone answers (adb 29 and 34 alike). But a re-dial that reached the
//! phone and whose `CNXN` (or its answer) was lost is never given up: adb has no handshake
//! timeout, so the transport stays `offline` while the phone is fine, and `adb connect` only
//! answers `already connected to HOST:PORT` (rpuxa/SuperWirelessAdb#3, koush/Loggy#3,
//! MasterDevX/Termux-ADB#52). The cure users find is `adb disconnect HOST:PORT` and `adb connect
//! HOST:PORT`: a fresh connection.
//!
//! So a `HOST:PORT` transport (the kind `adb connect` made, [`is_connect_serial`]) listed
//! `offline` for [`STALE_AFTER`] without a break, whose adbd answers a fresh connection at that
//! address (the phone is there: one that is away is left to adb's own re-dial, which goes on
//! for minutes),
//! is disconnected and dialed again
//! (`host:disconnect:HOST:PORT`, then `host:connect:HOST:PORT`, AOSP `services.cpp`), at most
//! [`STALE_REDIALS`] times per offline stretch, [`STALE_AFTER`] apart; a dial that fails goes on
//! as a forgotten phone's round ([`super::reconnect`]: bounded back-off, then `offline` with the
//! fix). A transport that is back `device`, or that the server no longer lists (an operator's
//! `adb disconnect`), ends the watch. USB serials, emulators and mDNS names are never touched.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::reconnect::{is_connect_serial, round};
use super::Inventory;
use crate::adb::AdbServerClient;
use crate::device::parse::devices::{DeviceEntry, DeviceState};

/// How long a `HOST:PORT` transport stays `offline` before it is dialed afresh: longer than
/// adb's own re-dial of a phone that answers (about 1 s against a refusing port, in seconds
/// once the phone is back), so a transport adb is already bringing back is left alone.
pub const STALE_AFTER: Duration = Duration::from_secs(12);
/// Fresh dials per offline stretch.
pub const STALE_REDIALS: u32 = 3;

/// The `HOST:PORT` transports of one adb server session listed `offline` now, and whether a
/// watch runs for each; shared with the watches.
#[derive(Debug, Default, Clone)]
pub(super) struct StaleWifi {
    offline: Arc<Mutex<BTreeMap<String, u64>>>,
}

impl StaleWifi {
    /// Applies one list: each `HOST:PORT` transport newly `offline` gets a watch (its stretch
    /// numbered, so a watch ends when its stretch does); the others are forgotten.
    pub(super) fn observe(
        &self,
        inv: &Inventory,
        client: &AdbServerClient,
        label: &str,
        entries: &[DeviceEntry],
        session: &CancellationToken,
    ) {
        let offline: Vec<&str> = entries
            .iter()
            .filter(|e| e.state == DeviceState::Offline && is_connect_serial(&e.serial))
            .map(|e| e.serial.as_str())
            .collect();
        let mut started = Vec::new();
        {
            let mut map = self.offline.lock().unwrap_or_else(|p| p.into_inner());
            map.retain(|serial, _| offline.contains(&serial.as_str()));
            for serial in offline {
                if !map.contains_key(serial) {
                    let stretch = STRETCH.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    map.insert(serial.to_string(), stretch);
                    started.push((serial.to_string(), stretch));
                }
            }
        }
        for (addr, stretch) in started {
            let (me, inv, client, label) =
                (self.clone(), inv.clone(), client.clone(), label.to_string());
            tokio::spawn(session.clone().run_until_cancelled_owned(async move {
                me.watch(&inv, &client, &label, &addr, stretch).await
            }));
        }
    }

    /// Whether `addr`'s offline stretch `stretch` still lasts.
    fn lasts(&self, addr: &str, stretch: u64) -> bool {
        let map = self.offline.lock().unwrap_or_else(|p| p.into_inner());
        map.get(addr) == Some(&stretch)
    }

    /// Waits out [`STALE_AFTER`], then dials `addr` afresh while its stretch lasts.
    async fn watch(
        &self,
        inv: &Inventory,
        client: &AdbServerClient,
        label: &str,
        addr: &str,
        stretch: u64,
    ) {
        let mut n = 0;
        while n < STALE_REDIALS {
            tokio::time::sleep(STALE_AFTER).await;
            if !self.lasts(addr, stretch) {
                return;
            }
            // A phone that is away (out of range, asleep, rebooting) is left to adb, which
            // keeps re-dialing it for minutes; only one whose port answers is dialed afresh.
            if !answers(addr).await {
                tracing::debug!(server = %label, addr, "offline `adb connect` phone does not answer at its address: left to the adb server's own re-dial");
                continue;
            }
            n += 1;
            tracing::warn!(server = %label, addr, attempt = n, of = STALE_REDIALS, "adb server lists this `adb connect` phone offline for {}s (a re-dial whose handshake was lost: `adb connect` only says `already connected`): disconnecting it and dialing it again", STALE_AFTER.as_secs());
            if let Err(e) = client.disconnect_device(addr).await {
                tracing::debug!(server = %label, addr, error = %e, "host:disconnect refused");
            }
            match client.connect_device(addr).await {
                Ok(_) => {}
                // The phone does not answer a fresh dial either: connected again with back-off,
                // then told `offline` with the fix.
                Err(_) => return round(inv, client, label, addr).await,
            }
        }
    }
}

/// Whether the phone's adbd answers a fresh connection at `addr` (`HOST:PORT`): a plaintext
/// `CNXN` answered with `CNXN`, `AUTH` or `STLS` (`adb::port_probe`: no key is offered, so the
/// phone shows no prompt).
async fn answers(addr: &str) -> bool {
    crate::adb::port_probe::probe_adbd(addr).await.is_some()
}

/// Numbers offline stretches across sessions and servers.
static STRETCH: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
