//! The adb server's own mDNS discovery as a second source: `host:mdns:services` lists what it
//! has seen, one line per service: instance, service type (`_adb-tls-pairing._tcp`) and
//! `IP:PORT`, tab-separated (AOSP `client/adb_wifi.cpp` / `transport_mdns.cpp`, as printed by
//! `adb mdns services`; older servers print the type with a trailing dot). adb 29 has no such
//! service and answers `FAIL`.

use std::net::SocketAddr;

use super::instance::names_instance;
use crate::adb::server_client::AdbServerClient;

/// One line of `host:mdns:services`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdbServerService {
    /// Instance name (a conflict rename ` (N)` kept as printed).
    pub instance: String,
    /// Service type without `.local.` or a trailing dot.
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

/// `host:mdns:services` of an adb server. Errors: the server's.
pub async fn adb_server_services(
    server: &AdbServerClient,
) -> Result<Vec<AdbServerService>, crate::adb::AdbError> {
    Ok(parse_adb_server_services(&server.mdns_services().await?))
}

/// Every address `server` lists for `instance` of `service_type` (`_adb-tls-connect._tcp.local.`),
/// conflict renames included ([`names_instance`]), in the server's order; none when it cannot
/// say.
pub async fn adb_server_addresses(
    server: &AdbServerClient,
    service_type: &str,
    instance: &str,
) -> Vec<SocketAddr> {
    let short = service_type.trim_end_matches(".local.");
    adb_server_services(server)
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|s| {
            s.service_type.eq_ignore_ascii_case(short)
                && names_instance(&s.instance, instance)
                && !s.addr.ip().is_unspecified()
        })
        .map(|s| s.addr)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adb_server_lines_parse_and_odd_ones_are_skipped() {
        let text = "adb-SIM1-abc123\t_adb-tls-connect._tcp\t198.18.0.1:40001\n\
                    xagent-Abc\t_adb-tls-pairing._tcp.\t198.18.0.1:40002\n\
                    adb-SIM1-abc123 (2)\t_adb-tls-connect._tcp\t198.18.0.1:40003\n\
                    broken line\n";
        let got = parse_adb_server_services(text);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].instance, "adb-SIM1-abc123");
        assert_eq!(got[1].service_type, "_adb-tls-pairing._tcp");
        assert_eq!(got[1].addr, "198.18.0.1:40002".parse().unwrap());
        assert_eq!(got[2].instance, "adb-SIM1-abc123 (2)");
    }
}
