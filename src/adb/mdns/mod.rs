//! Finding wireless-debugging phones by mDNS (DNS-SD), host side: a phone whose user scanned
//! the QR code announces `_adb-tls-pairing._tcp` under the QR's `S:` name; a phone with
//! wireless debugging on announces `_adb-tls-connect._tcp` under its GUID (`adb-<serial>-<6>`).
//! Service types: research notes §1.2, AOSP `adb_mdns.h`.
//!
//! Browsing is confined to the configured interfaces (`--mdns-interface`); with none named,
//! every interface of the box is used (mdns-sd's default — a desk user's Wi-Fi and Ethernet).
//! The adb server's `host:mdns:services` is a second, optional source ([`adb_server_services`]).
//! Instance names are matched with their DNS-SD conflict renames (`<GUID> (2)`: [`instance`]).
//! mdns-sd runs its own thread; waiting on its channel happens on a blocking thread, never on an
//! async worker.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use mdns_sd::{IfKind, ServiceDaemon, ServiceEvent};
use tokio_util::sync::CancellationToken;

mod adb_server;
pub mod instance;
mod watch;

pub use adb_server::{
    adb_server_addresses, adb_server_services, parse_adb_server_services, AdbServerService,
};
pub use instance::{instance_of, names_instance};
pub use watch::ServiceWatch;

use super::server_client::AdbServerClient;

/// DNS-SD type of a phone's pairing server ("Pair device with QR code").
pub const PAIRING_SERVICE: &str = "_adb-tls-pairing._tcp.local.";
/// DNS-SD type of a phone's `STLS` connect port (wireless debugging on).
pub const CONNECT_SERVICE: &str = "_adb-tls-connect._tcp.local.";
/// How often a waiting browse looks at its cancel token and at the adb server.
const POLL: Duration = Duration::from_millis(250);
/// How often a waiting browse asks the adb server's list again.
const SERVER_ASK_EVERY: Duration = Duration::from_secs(1);

/// Why mDNS browsing cannot run.
#[derive(Debug, thiserror::Error)]
#[error("mDNS browsing unavailable: {0}")]
pub struct MdnsError(String);

/// The network interfaces of the box by name, sorted (every interface, up or down, with or
/// without an address: `if_nameindex(3)`). Empty when the list cannot be read.
pub fn interface_names() -> Vec<String> {
    let mut names = Vec::new();
    // SAFETY: if_nameindex returns an array ended by an entry with index 0 and a null name, or
    // null on failure; it is read up to that end, then freed once with if_freenameindex.
    unsafe {
        let list = libc::if_nameindex();
        if list.is_null() {
            return names;
        }
        let mut entry = list;
        while (*entry).if_index != 0 && !(*entry).if_name.is_null() {
            names.push(
                std::ffi::CStr::from_ptr((*entry).if_name)
                    .to_string_lossy()
                    .into_owned(),
            );
            entry = entry.add(1);
        }
        libc::if_freenameindex(list);
    }
    names.sort();
    names.dedup();
    names
}

/// A `--mdns-interface` names no interface of the box (mdns-sd would browse nothing there
/// without a word).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--mdns-interface {name:?}: no such network interface on this box (it has: {available})")]
pub struct UnknownInterface {
    /// The name given.
    pub name: String,
    /// The box's interfaces, comma-separated.
    pub available: String,
}

/// Checks that every non-blank name in `names` is an interface of the box
/// ([`interface_names`]; when that list cannot be read, every name passes). Errors: the
/// first unknown one, with the list of those that exist.
pub fn check_interfaces(names: &[String]) -> Result<(), UnknownInterface> {
    let wanted: Vec<&str> = names
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let present = interface_names();
    if present.is_empty() {
        // The list cannot be read: no grounds to refuse a name.
        return Ok(());
    }
    match wanted.into_iter().find(|n| !present.iter().any(|p| p == n)) {
        None => Ok(()),
        Some(name) => Err(UnknownInterface {
            name: name.to_string(),
            available: present.join(", "),
        }),
    }
}

/// One mDNS querier confined to some interfaces; dropped → its thread stops.
pub struct Browser {
    daemon: ServiceDaemon,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Browser")
    }
}

impl Browser {
    /// A querier on `interfaces` (names such as `wlan0`); empty: every interface. Errors:
    /// the daemon's sockets cannot be opened.
    pub fn start(interfaces: &[String]) -> Result<Browser, MdnsError> {
        let e = |e: mdns_sd::Error| MdnsError(e.to_string());
        let daemon = ServiceDaemon::new().map_err(e)?;
        if !interfaces.is_empty() {
            daemon.disable_interface(IfKind::All).map_err(e)?;
            for name in interfaces {
                daemon
                    .enable_interface(IfKind::Name(name.clone()))
                    .map_err(e)?;
            }
        }
        Ok(Browser { daemon })
    }

    /// Waits up to `within` (or until `cancel`) for `instance` of `service_type` to resolve
    /// (conflict renames included: [`names_instance`]); its address (IPv4 preferred) and port.
    /// `adb_server`, when given, is asked too (`host:mdns:services`), so a phone only adb's own
    /// discovery sees is found as well. `None`: not seen in time, or canceled.
    pub async fn find(
        &self,
        service_type: &'static str,
        instance: &str,
        within: Duration,
        cancel: &CancellationToken,
        adb_server: Option<&AdbServerClient>,
    ) -> Option<SocketAddr> {
        find_each(
            Some(self),
            service_type,
            instance,
            within,
            cancel,
            adb_server,
            |addr| async move { Some(addr) },
        )
        .await
    }
}

impl Browser {
    /// Starts a lasting browse of `service_type`: announcements (a phone re-announcing its
    /// connect port after a Wi-Fi toggle) and answers to the browse's own queries are read
    /// with [`ServiceWatch::candidates`]. Errors: the daemon stopped.
    pub fn watch(&self, service_type: &'static str) -> Result<ServiceWatch, MdnsError> {
        let events = self
            .daemon
            .browse(service_type)
            .map_err(|e| MdnsError(e.to_string()))?;
        Ok(ServiceWatch::new(events, service_type))
    }
}

/// Hands each address announced for `instance` of `service_type` (exactly or renamed after a
/// name conflict) to `attempt`, once per address, the freshest of those waiting first, until
/// `attempt` answers `Some`, `within` passes (a running attempt is dropped then) or `cancel`
/// fires. Sources: mDNS through `browser` (`None`: mDNS could not start), and `adb_server`'s
/// `host:mdns:services` when given (asked every second). A stale record at a dead port only
/// costs its attempt: the next address is tried. `None`: nothing announced answered.
pub async fn find_each<T, F, Fut>(
    browser: Option<&Browser>,
    service_type: &'static str,
    instance: &str,
    within: Duration,
    cancel: &CancellationToken,
    adb_server: Option<&AdbServerClient>,
    attempt: F,
) -> Option<T>
where
    F: FnMut(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = super::deadline_in(within);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<SocketAddr>();
    let stop = cancel.child_token();
    // mDNS answers come from a blocking thread (mdns-sd's receiver blocks); without a browser
    // only the adb server is asked.
    let browsing = browser.and_then(|b| Some((b, b.daemon.browse(service_type).ok()?)));
    let watcher = browsing.as_ref().map(|(_, receiver)| {
        let (stop, wanted, receiver) = (stop.clone(), instance.to_string(), receiver.clone());
        let until = deadline.into_std();
        tokio::task::spawn_blocking(move || {
            forward_resolved(&receiver, service_type, &wanted, until, &stop, &tx)
        })
    });
    if browsing.is_none() && adb_server.is_none() {
        return None;
    }
    let found = offer_each(rx, adb_server, service_type, instance, cancel, attempt);
    let found = tokio::time::timeout_at(deadline, found)
        .await
        .ok()
        .flatten();
    stop.cancel();
    if let Some(w) = watcher {
        let _ = w.await;
    }
    if let Some((b, _)) = browsing {
        let _ = b.daemon.stop_browse(service_type);
    }
    found
}

/// The loop of [`find_each`]: addresses from `rx` (mDNS) and `adb_server`, each
/// handed to `attempt` once, freshest first; `None` on `cancel` (the caller bounds it in time).
async fn offer_each<T, F, Fut>(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<SocketAddr>,
    adb_server: Option<&AdbServerClient>,
    service_type: &str,
    instance: &str,
    cancel: &CancellationToken,
    mut attempt: F,
) -> Option<T>
where
    F: FnMut(SocketAddr) -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let mut pending: Vec<SocketAddr> = Vec::new();
    let mut tried: Vec<SocketAddr> = Vec::new();
    let mut ask_server_at = tokio::time::Instant::now();
    let mut open = true;
    loop {
        while let Ok(addr) = rx.try_recv() {
            pending.push(addr);
        }
        if let Some(server) = adb_server {
            if tokio::time::Instant::now() >= ask_server_at {
                pending.extend(adb_server_addresses(server, service_type, instance).await);
                ask_server_at = tokio::time::Instant::now() + SERVER_ASK_EVERY;
            }
        }
        // Freshest first: the last one announced is tried first.
        while let Some(addr) = pending.pop() {
            if tried.contains(&addr) {
                continue;
            }
            tried.push(addr);
            if let Some(t) = attempt(addr).await {
                return Some(t);
            }
        }
        tokio::select! {
            _ = cancel.cancelled() => return None,
            got = rx.recv(), if open => match got {
                Some(addr) => pending.push(addr),
                None => open = false,
            },
            _ = tokio::time::sleep(POLL), if adb_server.is_some() || !open => {}
        }
    }
}

/// Sends on `tx` the address of every resolution of `wanted` (or a conflict rename of it) of
/// `service_type` that `receiver` gets, until `until`, `stop`, or either channel closes. Runs
/// on a blocking thread (mdns-sd's receiver blocks).
fn forward_resolved(
    receiver: &mdns_sd::Receiver<ServiceEvent>,
    service_type: &str,
    wanted: &str,
    until: std::time::Instant,
    stop: &CancellationToken,
    tx: &tokio::sync::mpsc::UnboundedSender<SocketAddr>,
) {
    while !stop.is_cancelled() && std::time::Instant::now() < until {
        let Ok(event) = receiver.recv_timeout(POLL) else {
            if receiver.is_disconnected() {
                return;
            }
            continue;
        };
        let ServiceEvent::ServiceResolved(found) = event else {
            continue;
        };
        let named = instance_of(&found.fullname, service_type)
            .is_some_and(|name| names_instance(&name, wanted));
        if let (true, Some(addr)) = (named, address(&found)) {
            if tx.send(addr).is_err() {
                return;
            }
        }
    }
}

/// The service's address, IPv4 preferred (a phone announces both; hosts reach IPv4 first).
fn address(found: &mdns_sd::ResolvedService) -> Option<SocketAddr> {
    let ips: Vec<IpAddr> = found.addresses.iter().map(|a| a.to_ip_addr()).collect();
    ips.iter()
        .find(|ip| ip.is_ipv4())
        .or_else(|| ips.first())
        .map(|ip| SocketAddr::new(*ip, found.port))
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.daemon.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_exists_and_an_unknown_interface_is_named_with_the_real_ones() {
        assert!(interface_names().iter().any(|n| n == "lo"));
        assert!(check_interfaces(&["lo".into(), " ".into()]).is_ok());
        let e = check_interfaces(&["lo".into(), "nosuch0".into()]).unwrap_err();
        assert_eq!(e.name, "nosuch0");
        assert!(e.available.split(", ").any(|n| n == "lo"), "{e}");
    }
}
