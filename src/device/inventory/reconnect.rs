//! Phones an adb server forgot when it restarted (field bug 51). An adb server keeps its
//! `adb connect HOST:PORT` transports in memory only: when another tool's adb runs
//! `kill-server` (or a version mismatch restarts the server, amo13/Anarchy-Droid#6,
//! Genymobile/scrcpy#906), the new server lists USB phones again by itself but none of the
//! `HOST:PORT` ones. The tracker remembers which `HOST:PORT` transports its server listed;
//! on the first list of a new session it asks the server to connect the ones missing
//! (`host:connect:HOST:PORT`, AOSP `client/adb_client.cpp` / `services.cpp` `connect_device`)
//! with a bounded back-off ([`RECONNECT_BACKOFF`]); the channel comes back by itself, and if
//! the phone does not answer, its state says so and names the fix
//! ([`DeviceState::ServerForgot`]: `device_offline`).
//!
//! What is connected again, and what is not (an operator's `adb disconnect` is never fought):
//! only `HOST:PORT` serials this server listed since the connector started; one the same
//! server session stops listing (`adb disconnect`, or adb giving up on a dead address) is
//! forgotten for good; only a new session (the server restarted) starts a round, one per
//! restart, each ending at the first success or after [`RECONNECT_ATTEMPTS`]. mDNS names
//! (`adb-…._adb-tls-connect._tcp`: the server finds those itself), emulators and USB
//! serials are never connected.

use std::collections::BTreeMap;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::Inventory;
use crate::adb::AdbServerClient;
use crate::device::parse::devices::{DeviceEntry, DeviceState, RouteKind};

/// Waits before each attempt to connect a forgotten phone again (the first at once): five
/// attempts over about 15 s, enough for a phone that was busy during the restart, bounded
/// so a phone that is really gone is told `offline` with the fix soon.
pub const RECONNECT_BACKOFF: [Duration; 5] = [
    Duration::ZERO,
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
];
/// Attempts per phone and restart.
pub const RECONNECT_ATTEMPTS: u32 = RECONNECT_BACKOFF.len() as u32;

/// Whether adb names the transport `HOST:PORT` because `adb connect` made it (the only kind a
/// restarted server forgets and `host:connect` brings back).
pub fn is_connect_serial(adb_serial: &str) -> bool {
    !adb_serial.contains("._adb") && RouteKind::of(Some(""), adb_serial) == RouteKind::WifiAdbServer
}

/// The `HOST:PORT` transports one adb server listed, and whether the current session has
/// listed each yet.
#[derive(Debug, Default)]
pub(super) struct WifiMemory {
    /// serial → listed in the current session's last list.
    serials: BTreeMap<String, bool>,
}

impl WifiMemory {
    fn listed(entries: &[DeviceEntry]) -> impl Iterator<Item = &str> {
        entries
            .iter()
            .map(|e| e.serial.as_str())
            .filter(|s| is_connect_serial(s))
    }

    /// A list of the same session: its `HOST:PORT` serials are remembered; one listed before
    /// in this session and missing now was disconnected on purpose (or given up by adb):
    /// forgotten. One remembered from an earlier session and not listed yet is kept.
    pub(super) fn same_session(&mut self, entries: &[DeviceEntry]) {
        let now: Vec<&str> = Self::listed(entries).collect();
        self.serials
            .retain(|serial, seen_now| !*seen_now || now.contains(&serial.as_str()));
        for serial in now {
            self.serials.insert(serial.to_string(), true);
        }
    }

    /// The first list of a new session (the server restarted, or its connection came back):
    /// the remembered serials it does not list, to connect again. All stay remembered.
    pub(super) fn new_session(&mut self, entries: &[DeviceEntry]) -> Vec<String> {
        let now: Vec<&str> = Self::listed(entries).collect();
        let mut missing = Vec::new();
        for (serial, seen_now) in self.serials.iter_mut() {
            *seen_now = now.contains(&serial.as_str());
            if !*seen_now {
                missing.push(serial.clone());
            }
        }
        for serial in now {
            self.serials.insert(serial.to_string(), true);
        }
        missing
    }
}

/// Starts one round per forgotten `HOST:PORT` of the adb server `label`, canceled with
/// `session` (the server went away again). Logged once per round, with what it asks.
pub(super) fn start(
    inv: &Inventory,
    client: &AdbServerClient,
    label: &str,
    forgotten: Vec<String>,
    session: &CancellationToken,
) {
    if forgotten.is_empty() {
        return;
    }
    tracing::info!(server = %label, phones = %forgotten.join(", "), "adb server restarted and no longer lists these `adb connect` phones: connecting them again");
    for addr in forgotten {
        let (inv, client, label) = (inv.clone(), client.clone(), label.to_string());
        tokio::spawn(
            session.clone().run_until_cancelled_owned(async move {
                round(&inv, &client, &label, &addr).await
            }),
        );
    }
}

/// Asks `client` to connect `addr` until it says `connected to`, waiting
/// [`RECONNECT_BACKOFF`] before each attempt; the routes through `addr` read
/// [`DeviceState::ServerForgot`] meanwhile, and after the last failure.
pub(super) async fn round(inv: &Inventory, client: &AdbServerClient, label: &str, addr: &str) {
    let mut last = String::new();
    for (n, wait) in RECONNECT_BACKOFF.iter().enumerate() {
        tokio::time::sleep(*wait).await;
        mark(inv, label, addr, n as u32 + 1, &last, false);
        match client.connect_device(addr).await {
            Ok(_) => {
                tracing::info!(server = %label, addr, attempt = n + 1, "adb server restarted: connected the phone again");
                return;
            }
            Err(e) => last = e.to_string(),
        }
    }
    mark(inv, label, addr, RECONNECT_ATTEMPTS, &last, true);
    let fix = DeviceState::ServerForgot {
        addr: addr.to_string(),
        attempt: RECONNECT_ATTEMPTS,
        of: RECONNECT_ATTEMPTS,
        last: last.clone(),
        gave_up: true,
    }
    .remedy(RouteKind::WifiAdbServer)
    .unwrap_or_default();
    tracing::warn!(server = %label, addr, attempts = RECONNECT_ATTEMPTS, last = %last, "adb server restarted and the phone does not answer `adb connect`: offline; {fix}");
}

/// Sets the routes of `label` through `addr` that are not online to the round's state.
fn mark(inv: &Inventory, label: &str, addr: &str, attempt: u32, last: &str, gave_up: bool) {
    let state = DeviceState::ServerForgot {
        addr: addr.to_string(),
        attempt,
        of: RECONNECT_ATTEMPTS,
        last: last.to_string(),
        gave_up,
    };
    inv.update_routes(
        |p| p.identified && p.adb_server.as_deref() == Some(label) && p.transport == addr,
        |s| (*s != DeviceState::Device).then(|| state.clone()),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::parse::devices::parse_devices_l;

    #[test]
    fn only_adb_connect_serials_are_connected_again() {
        assert!(is_connect_serial("127.0.0.1:5555"));
        assert!(is_connect_serial("192.168.1.20:37155"));
        assert!(is_connect_serial("[fe80::1]:5555"));
        assert!(!is_connect_serial("emulator-5554"));
        assert!(!is_connect_serial("R58N12ABCDEF"));
        assert!(!is_connect_serial("0123456789ABCDEF"));
        assert!(!is_connect_serial(
            "adb-R58N12ABCDEF-AbCdEf._adb-tls-connect._tcp"
        ));
    }

    /// Restarted twice: each new session asks again for what it misses; an `adb disconnect`
    /// within a session is never undone, even across a later restart.
    #[test]
    fn a_restart_asks_again_and_a_disconnect_is_respected() {
        let list = |s: &str| parse_devices_l(s);
        let mut m = WifiMemory::default();
        assert!(m
            .new_session(&list("127.0.0.1:5555\tdevice\n10.0.0.9:5555\tdevice\nemulator-5554\tdevice\nR58N1\tdevice\n"))
            .is_empty());
        // The operator disconnects 10.0.0.9:5555 while the server runs.
        m.same_session(&list(
            "127.0.0.1:5555\tdevice\nemulator-5554\tdevice\nR58N1\tdevice\n",
        ));
        // Restart: only the emulator and the USB phone come back by themselves.
        let missing = m.new_session(&list("emulator-5554\tdevice\nR58N1\tdevice\n"));
        assert_eq!(missing, ["127.0.0.1:5555"]);
        // Not back yet within the session: still remembered (the round runs).
        m.same_session(&list("emulator-5554\tdevice\n"));
        // A second restart asks again.
        assert_eq!(m.new_session(&list("")), ["127.0.0.1:5555"]);
        // Back, then disconnected on purpose: forgotten, never asked for again.
        m.same_session(&list("127.0.0.1:5555\tdevice\n"));
        m.same_session(&list(""));
        assert!(m.new_session(&list("")).is_empty());
    }
}
