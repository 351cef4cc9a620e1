//! One adb server given under two names — `127.0.0.1:5037` and `localhost:5037`, or two
//! `NAME=`s of one address — is asked once: each name's host is resolved, and a server whose
//! socket addresses meet those of one listed before it is dropped for that one, with a
//! warning naming both ([`distinct`]). Asked twice, it listed every phone twice (`devices`,
//! `check`) and gave each phone two routes through one server (`serve`).

use std::net::SocketAddr;
use std::time::Duration;

use super::AdbServerSpec;

/// How long one server's name may take to resolve; past it the name is kept as it is (its
/// phones are then asked for under it, as before).
pub const RESOLVE_DEADLINE: Duration = Duration::from_secs(2);

/// An adb server listed again under another name, and dropped for the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SameServer {
    /// The name (label) kept: the one listed first.
    pub kept: String,
    /// The name dropped.
    pub dropped: String,
    /// A socket address both resolve to.
    pub addr: SocketAddr,
}

impl SameServer {
    /// One line for the log and `check`, naming both.
    pub fn describe(&self) -> String {
        format!(
            "--adb-server {} and {} are the same adb server ({}): asked once, as {}",
            self.kept, self.dropped, self.addr, self.kept
        )
    }
}

/// `servers` (config order) without those that resolve to a socket address a server listed
/// before them resolves to, and one [`SameServer`] per server dropped. The names are resolved
/// side by side, each within [`RESOLVE_DEADLINE`]; a name that does not resolve is kept (it is
/// reported unreachable where it is asked).
pub async fn distinct(servers: &[AdbServerSpec]) -> (Vec<AdbServerSpec>, Vec<SameServer>) {
    let lookups: Vec<_> = servers
        .iter()
        .map(|server| {
            let addr = server.addr.clone();
            tokio::spawn(async move {
                match tokio::time::timeout(RESOLVE_DEADLINE, tokio::net::lookup_host(addr)).await {
                    Ok(Ok(found)) => found.collect::<Vec<SocketAddr>>(),
                    _ => Vec::new(),
                }
            })
        })
        .collect();
    let mut kept: Vec<(AdbServerSpec, Vec<SocketAddr>)> = Vec::new();
    let mut same = Vec::new();
    for (server, lookup) in servers.iter().zip(lookups) {
        let addrs = lookup.await.unwrap_or_default();
        let earlier = kept.iter().find_map(|(first, theirs)| {
            addrs
                .iter()
                .find(|a| theirs.contains(a))
                .map(|a| (first.name.clone(), *a))
        });
        match earlier {
            Some((first, addr)) => same.push(SameServer {
                kept: first,
                dropped: server.name.clone(),
                addr,
            }),
            None => kept.push((server.clone(), addrs)),
        }
    }
    (kept.into_iter().map(|(server, _)| server).collect(), same)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_adb_server;

    #[tokio::test]
    async fn one_address_under_two_names_is_kept_once() {
        let servers: Vec<AdbServerSpec> = [
            "a=127.0.0.1:5037",
            "127.0.0.2:5037",
            "b=127.0.0.1:5037",
            "127.0.0.1:5038",
            "c=127.0.0.2:5037",
        ]
        .iter()
        .map(|s| parse_adb_server(s).unwrap())
        .collect();
        let (kept, same) = distinct(&servers).await;
        let names: Vec<&str> = kept.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "127.0.0.2:5037", "127.0.0.1:5038"]);
        assert_eq!(same.len(), 2, "{same:?}");
        assert_eq!(
            (same[0].kept.as_str(), same[0].dropped.as_str()),
            ("a", "b")
        );
        assert_eq!(
            (same[1].kept.as_str(), same[1].dropped.as_str()),
            ("127.0.0.2:5037", "c")
        );
        assert_eq!(same[0].addr, "127.0.0.1:5037".parse().unwrap());
    }
}
