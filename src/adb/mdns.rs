//! Finding wireless-debugging phones by mDNS (DNS-SD), host side: a phone whose user scanned
//! the QR code announces `_adb-tls-pairing._tcp` under the QR's `S:` name; a phone with
//! wireless debugging on announces `_adb-tls-connect._tcp` under its GUID (`adb-<serial>-<6>`).
//! Service types: research notes §1.2, AOSP `adb_mdns.h`.
//!
//! Browsing is confined to the configured interfaces (`--mdns-interface`); with none named,
//! every interface of the box is used (mdns-sd's default — a desk user's Wi-Fi and Ethernet).
//! The adb server's `host:mdns:services` is a second, optional source ([`adb_server_services`]).
//! mdns-sd runs its own thread; waiting on its channel happens on a blocking thread, never on an
//! async worker.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use mdns_sd::{IfKind, ServiceDaemon, ServiceEvent};
use tokio_util::sync::CancellationToken;

use super::server_client::AdbServerClient;

/// DNS-SD type of a phone's pairing server ("Pair device with QR code").
pub const PAIRING_SERVICE: &str = "_adb-tls-pairing._tcp.local.";
/// DNS-SD type of a phone's `STLS` connect port (wireless debugging on).
pub const CONNECT_SERVICE: &str = "_adb-tls-connect._tcp.local.";
/// How often a waiting browse looks at its cancel token and at the adb server.
const POLL: Duration = Duration::from_millis(250);

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

    /// Waits up to `within` (or until `cancel`) for `instance` of `service_type` to resolve;
    /// its address (IPv4 preferred) and port. `adb_server`, when given, is asked too
    /// (`host:mdns:services`), so a phone only adb's own discovery sees is found as well.
    /// `None`: not seen in time, or canceled.
    pub async fn find(
        &self,
        service_type: &'static str,
        instance: &str,
        within: Duration,
        cancel: &CancellationToken,
        adb_server: Option<&AdbServerClient>,
    ) -> Option<SocketAddr> {
        let deadline = super::deadline_in(within);
        let receiver = self.daemon.browse(service_type).ok()?;
        let wanted = format!("{instance}.{service_type}").to_ascii_lowercase();
        let (tx, mut rx) = tokio::sync::mpsc::channel::<SocketAddr>(1);
        let stop = cancel.child_token();
        let watcher = {
            let stop = stop.clone();
            let std_deadline = deadline.into_std();
            tokio::task::spawn_blocking(move || {
                while !stop.is_cancelled() && std::time::Instant::now() < std_deadline {
                    let Ok(event) = receiver.recv_timeout(POLL) else {
                        if receiver.is_disconnected() {
                            return;
                        }
                        continue;
                    };
                    if let ServiceEvent::ServiceResolved(found) = event {
                        if found.fullname.to_ascii_lowercase() != wanted {
                            continue;
                        }
                        if let Some(addr) = address(&found) {
                            let _ = tx.blocking_send(addr);
                            return;
                        }
                    }
                }
            })
        };
        let found = loop {
            if let Some(server) = adb_server {
                if let Some(addr) = adb_server_find(server, service_type, instance).await {
                    break Some(addr);
                }
            }
            tokio::select! {
                _ = cancel.cancelled() => break None,
                _ = tokio::time::sleep_until(deadline) => break None,
                got = rx.recv() => break got,
                _ = tokio::time::sleep(POLL * 4), if adb_server.is_some() => {}
            }
        };
        stop.cancel();
        let _ = watcher.await;
        let _ = self.daemon.stop_browse(service_type);
        found
    }
}

impl Browser {
    /// Starts a lasting browse of `service_type`: announcements (a phone re-announcing its
    /// connect port after a Wi-Fi toggle) and answers to the browse's own queries are read
    /// with [`ServiceWatch::latest`]. Errors: the daemon stopped.
    pub fn watch(&self, service_type: &'static str) -> Result<ServiceWatch, MdnsError> {
        let events = self
            .daemon
            .browse(service_type)
            .map_err(|e| MdnsError(e.to_string()))?;
        Ok(ServiceWatch {
            events,
            service_type,
        })
    }
}

/// A lasting browse of one service type (see [`Browser::watch`]).
pub struct ServiceWatch {
    events: mdns_sd::Receiver<ServiceEvent>,
    service_type: &'static str,
}

impl std::fmt::Debug for ServiceWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServiceWatch({})", self.service_type)
    }
}

impl ServiceWatch {
    /// The newest address resolved for `instance` among the events received since the last
    /// call (never waits). `None`: nothing new for it.
    pub fn latest(&self, instance: &str) -> Option<SocketAddr> {
        let wanted = format!("{instance}.{}", self.service_type).to_ascii_lowercase();
        let mut newest = None;
        while let Ok(event) = self.events.try_recv() {
            tracing::trace!(event = ?event, "mDNS event");
            if let ServiceEvent::ServiceResolved(found) = event {
                if found.fullname.to_ascii_lowercase() == wanted {
                    newest = address(&found).or(newest);
                }
            }
        }
        newest
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

/// One line of `host:mdns:services`: instance, service type (`_adb-tls-pairing._tcp`) and
/// `IP:PORT`, tab-separated (AOSP `client/adb_wifi.cpp` / `transport_mdns.cpp`, as printed by
/// `adb mdns services`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdbServerService {
    /// Instance name.
    pub instance: String,
    /// Service type without `.local.`.
    pub service_type: String,
    /// Address.
    pub addr: SocketAddr,
}

/// Parses the `host:mdns:services` text; malformed lines are skipped.
pub fn parse_adb_server_services(text: &str) -> Vec<AdbServerService> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.split('\t').map(str::trim);
            let instance = parts.next()?.to_string();
            let service_type = parts.next()?.trim_end_matches('.').to_string();
            let addr = parts.next()?.parse().ok()?;
            Some(AdbServerService {
                instance,
                service_type,
                addr,
            })
        })
        .collect()
}

/// `host:mdns:services` of an adb server (only servers with mDNS discovery answer it; adb 29
/// does not). Errors: the server's.
pub async fn adb_server_services(
    server: &AdbServerClient,
) -> Result<Vec<AdbServerService>, super::AdbError> {
    Ok(parse_adb_server_services(&server.mdns_services().await?))
}

async fn adb_server_find(
    server: &AdbServerClient,
    service_type: &str,
    instance: &str,
) -> Option<SocketAddr> {
    let short = service_type.trim_end_matches(".local.");
    adb_server_services(server)
        .await
        .ok()?
        .into_iter()
        .find(|s| {
            s.service_type == short
                && s.instance.eq_ignore_ascii_case(instance)
                && !s.addr.ip().is_unspecified()
        })
        .map(|s| s.addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adb_server_lines_parse_and_odd_ones_are_skipped() {
        let text = "adb-SIM1-abc123\t_adb-tls-connect._tcp\t198.18.0.1:40001\n\
                    xagent-Abc\t_adb-tls-pairing._tcp.\t198.18.0.1:40002\n\
                    broken line\n";
        let got = parse_adb_server_services(text);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].instance, "adb-SIM1-abc123");
        assert_eq!(got[1].service_type, "_adb-tls-pairing._tcp");
        assert_eq!(got[1].addr, "198.18.0.1:40002".parse().unwrap());
    }

    #[test]
    fn loopback_exists_and_an_unknown_interface_is_named_with_the_real_ones() {
        assert!(interface_names().iter().any(|n| n == "lo"));
        assert!(check_interfaces(&["lo".into(), " ".into()]).is_ok());
        let e = check_interfaces(&["lo".into(), "nosuch0".into()]).unwrap_err();
        assert_eq!(e.name, "nosuch0");
        assert!(e.available.split(", ").any(|n| n == "lo"), "{e}");
    }
}
