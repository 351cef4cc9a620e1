//! mDNS (DNS-SD) advertisements of the simulated phone, confined to named interfaces: the
//! daemon is told `disable_interface(All)` and then `enable_interface(Name)` for each
//! `--mdns-interface`, so nothing is announced on any other interface. Without interface
//! names there is no daemon at all (tests run it only inside a network namespace).
//! Service types and instance names: research notes §1.2 (`adb_mdns.h`, `daemon/mdns.cpp`).
//!
//! Each announcement carries a host name of its own (`<serial>-<n>.local.`). mdns-sd's goodbye
//! for a withdrawn service sends its address records with TTL 0 too, which withdraws the
//! address of every other service of the same host from the hosts' caches (a fresh pairing
//! service announced just before the goodbye of the previous one then never resolves).
//! Android's responder does not: its exit announcement covers the service's PTR records only
//! (`MdnsRecordRepository.exitService`, Connectivity module), so the phone's other services
//! stay resolvable. Own host names keep that property.

use std::net::IpAddr;

use mdns_sd::{IfKind, ServiceDaemon, ServiceInfo};

/// One mDNS responder restricted to some interfaces.
pub struct Advertiser {
    daemon: ServiceDaemon,
    /// Host label (the serial, DNS-safe); each announcement's host is `<label>-<n>.local.`.
    host: String,
    /// Announcements made so far (the `n` of the next host name).
    announced: std::sync::atomic::AtomicU64,
    /// The address the phone's ports listen on; unspecified: every enabled interface's.
    ip: IpAddr,
}

impl std::fmt::Debug for Advertiser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Advertiser({})", self.host)
    }
}

fn other(e: mdns_sd::Error) -> std::io::Error {
    std::io::Error::other(format!("mDNS: {e}"))
}

impl Advertiser {
    /// A responder on `interfaces` (names such as `lo`, `wlan0`), host name
    /// `<serial>-<n>.local.` (see the module), announcing `ip` (the phone's listen address; `0.0.0.0`: the enabled
    /// interfaces' addresses, as adbd listening on all of them); `None` when `interfaces` is
    /// empty. Errors: the daemon cannot start.
    pub fn start(
        interfaces: &[String],
        serial: &str,
        ip: IpAddr,
    ) -> std::io::Result<Option<Advertiser>> {
        if interfaces.is_empty() {
            return Ok(None);
        }
        let daemon = ServiceDaemon::new().map_err(other)?;
        daemon.disable_interface(IfKind::All).map_err(other)?;
        for name in interfaces {
            daemon
                .enable_interface(IfKind::Name(name.clone()))
                .map_err(other)?;
        }
        let label: String = serial
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        Ok(Some(Advertiser {
            daemon,
            host: label,
            announced: std::sync::atomic::AtomicU64::new(0),
            ip,
        }))
    }

    /// Announces `instance` of `service_type` (`_adb-tls-connect._tcp.local.`) on `port` at
    /// the listen address (a phone listening on one address must not announce others: a host
    /// would try an address nothing answers on); returns the full name for
    /// [`Advertiser::unregister`]. Errors: an invalid name.
    pub fn register(
        &self,
        service_type: &str,
        instance: &str,
        port: u16,
        txt: &[(&str, &str)],
    ) -> std::io::Result<String> {
        let n = self
            .announced
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let host = format!("{}-{n}.local.", self.host);
        let info = if self.ip.is_unspecified() {
            ServiceInfo::new(service_type, instance, &host, "", port, txt)
                .map_err(other)?
                .enable_addr_auto()
        } else {
            ServiceInfo::new(service_type, instance, &host, self.ip, port, txt).map_err(other)?
        };
        let fullname = info.get_fullname().to_string();
        self.daemon.register(info).map_err(other)?;
        Ok(fullname)
    }

    /// Withdraws an announcement (a goodbye with TTL 0); errors are ignored (the daemon may be
    /// shutting down).
    pub fn unregister(&self, fullname: &str) {
        let _ = self.daemon.unregister(fullname);
    }
}

impl Drop for Advertiser {
    fn drop(&mut self) {
        let _ = self.daemon.shutdown();
    }
}
