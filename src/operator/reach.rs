//! Where a listener is reached from, for the URLs `check` prints: a wildcard listen address
//! (`0.0.0.0`, `[::]`) is no address a browser can open, so it is replaced by the box's own
//! addresses (its interfaces', loopback last).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The address a client on this box reaches a listener bound to `listen` at: a wildcard is
/// answered on loopback too.
pub fn local_reach(listen: SocketAddr) -> SocketAddr {
    let ip = match listen.ip() {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, listen.port())
}

/// The addresses a listener bound to `listen` is reached at: `listen` itself unless it is a
/// wildcard; for `0.0.0.0` the box's IPv4 addresses, for `[::]` its IPv4 and global or
/// unique-local IPv6 ones (link-local ones need a zone a URL cannot carry), non-loopback
/// first, then loopback ([`local_reach`]). When the interfaces cannot be read, loopback only.
pub fn reachable(listen: SocketAddr) -> Vec<SocketAddr> {
    if !listen.ip().is_unspecified() {
        return vec![listen];
    }
    let v6 = listen.is_ipv6();
    let mut out: Vec<SocketAddr> = if_addrs::get_if_addrs()
        .unwrap_or_default()
        .into_iter()
        .map(|i| i.ip())
        .filter(|ip| !ip.is_loopback())
        .filter(|ip| match ip {
            IpAddr::V4(_) => true,
            // fe80::/10 is link-local.
            IpAddr::V6(a) => v6 && (a.segments()[0] & 0xffc0) != 0xfe80,
        })
        .map(|ip| SocketAddr::new(ip, listen.port()))
        .collect();
    out.sort();
    out.dedup();
    out.push(local_reach(listen));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wildcard_listen_address_is_reached_on_loopback() {
        let v4: SocketAddr = "0.0.0.0:8787".parse().unwrap();
        assert_eq!(local_reach(v4).to_string(), "127.0.0.1:8787");
        let v6: SocketAddr = "[::]:8787".parse().unwrap();
        assert_eq!(local_reach(v6).to_string(), "[::1]:8787");
        let lan: SocketAddr = "192.168.1.9:8787".parse().unwrap();
        assert_eq!(local_reach(lan), lan);
        assert_eq!(reachable(lan), vec![lan]);
        let all = reachable(v4);
        assert_eq!(all.last().unwrap().to_string(), "127.0.0.1:8787");
        assert!(all
            .iter()
            .all(|a| !a.ip().is_unspecified() && a.port() == 8787));
    }
}
