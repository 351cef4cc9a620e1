//! The inventory's log lines: how a route is named, and one line per visible state change.

use std::collections::HashSet;
use std::sync::Mutex;

use super::{AttachedPhone, Visible};
use crate::device::parse::devices::{DeviceState, RouteKind};

/// A route as the log names it: its kind, its transport and its adb server, so two routes of
/// one serial through the same server (USB and `adb connect`, or two addresses) read apart.
/// Never the whole serial: a USB transport is the phone's serial and an mDNS one carries it,
/// both masked ([`crate::protocol::descriptor::mask_serial`]).
pub(super) fn route_name(p: &AttachedPhone) -> String {
    let server = p.adb_server.as_deref().unwrap_or("");
    let masked = || crate::protocol::descriptor::mask_serial(&p.transport);
    match p.route_kind() {
        RouteKind::UsbAdbServer => format!("USB {} via adb server {server}", masked()),
        RouteKind::WifiAdbServer if p.transport.contains("._adb-tls-connect.") => {
            format!("Wi-Fi (mDNS {}) via adb server {server}", masked())
        }
        RouteKind::WifiAdbServer => format!("Wi-Fi {} via adb server {server}", p.transport),
        RouteKind::Emulator => format!("{} via adb server {server}", p.transport),
        RouteKind::Direct => format!("direct {}", p.transport),
        RouteKind::WifiPaired => format!("Wi-Fi (paired) {}", p.transport),
    }
}

/// One log line when a known phone's visible state changes (`offline` → `device`, …): the
/// masked serial, both states and the adb server (`direct` for the direct transport; never
/// the transport, which for USB is the full serial); a step between two states shown alike
/// (`offline`: silent, or its address dead) is not one. A first sighting is not logged, so the
/// operator commands' one-shot surveys stay quiet; changes to or from
/// `adb_server_unavailable` are at debug level, the adb server's own line says it once.
pub(super) fn log_state_change(
    serial: &str,
    before: &Visible,
    after: &Visible,
    seen: &Mutex<HashSet<String>>,
) {
    let mut seen = seen.lock().unwrap_or_else(|e| e.into_inner());
    // A phone whose routes were all forgotten (a Wi-Fi address it left, or one adb stopped
    // listing) is `gone`; it counts as a change only for a serial seen before in this process.
    let (was, now, server) = match (before, after) {
        (Some((was, _, server)), None) => (was.clone(), DeviceState::Gone, server.clone()),
        (Some((was, ..)), Some((now, _, server))) => (was.clone(), now.clone(), server.clone()),
        (None, Some((now, _, server))) if seen.contains(serial) => {
            (DeviceState::Gone, now.clone(), server.clone())
        }
        (None, Some(_)) => {
            seen.insert(serial.to_string());
            return;
        }
        (None, None) => return,
    };
    seen.insert(serial.to_string());
    drop(seen);
    // What the line shows, not the variant: `Offline` (silent) and `Gone` (address dead) are
    // both adb's `offline`, and a step between them is no change to the reader.
    if was.as_str() == now.as_str() {
        return;
    }
    let masked = crate::protocol::descriptor::mask_serial(serial);
    let server = server.as_deref().unwrap_or("direct");
    if matches!(was, DeviceState::ServerUnavailable)
        || matches!(now, DeviceState::ServerUnavailable)
    {
        tracing::debug!(serial_hint = %masked, server, from = was.as_str(), to = now.as_str(), "phone state changed");
    } else {
        tracing::info!(serial_hint = %masked, server, from = was.as_str(), to = now.as_str(), "phone state changed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::inventory::tests::route;

    /// Every kind of route is named apart, and a transport carrying the serial is masked.
    #[test]
    fn route_names_say_the_transport_and_mask_the_serial() {
        let names = [
            route("R58N12ABCDEF", Some("box"), false),
            route(
                "adb-R58N12ABCDEF-AbCdEf._adb-tls-connect._tcp",
                Some("box"),
                false,
            ),
            route("192.168.1.5:5555", Some("box"), false),
            route("emulator-5554", Some("box"), false),
            route("tcp:10.0.0.2:5555", None, false),
            route("tcp:10.0.0.2:40001", None, true),
        ]
        .map(|r| route_name(&r));
        assert_eq!(
            names,
            [
                "USB R58…CDEF via adb server box",
                "Wi-Fi (mDNS adb…_tcp) via adb server box",
                "Wi-Fi 192.168.1.5:5555 via adb server box",
                "emulator-5554 via adb server box",
                "direct tcp:10.0.0.2:5555",
                "Wi-Fi (paired) tcp:10.0.0.2:40001",
            ]
        );
    }
}
