//! ADB: the wire framing shared by host and simulated device, and the host-side clients.
//!
//! - [`wire`], [`shell_v2`], [`sync_proto`]: framing only, re-exported from the
//!   `xagent-adb-wire` crate (the simulated phone, crate `xagent-adb-sim`, uses the same one).
//! - [`server_client`]: async client of an adb server (`host:*` services, transports by serial).
//! - [`direct`]: host side of the adbd transport over TCP, no adb binary needed.
//! - [`host_key`]: the connector's adb key ([`HostKeyFile`] in the data dir, [`HostKey`]).
//! - [`mdns`]: finding wireless-debugging phones by mDNS (and the adb server's list).
//! - [`port_probe`]: whether adbd (not a pairing server) answers at a port.
//! - [`link`]: [`DeviceLink`], one phone reached either way, with shell / exec / sync on top.
//! - [`meter`]: where a tool call's time went on the link (phone, transfer) and its backends.
//! - [`error`]: [`AdbError`], typed failures with deadlines.

pub mod direct;
pub mod error;
pub mod host_key;
pub mod link;
pub mod mdns;
pub mod meter;
pub mod port_probe;
pub mod server_client;
pub mod stream;

pub use xagent_adb_wire::{shell_v2, sync_proto, wire};

pub use error::AdbError;
pub use host_key::{HostKey, HostKeyFile};
pub use link::{DeviceLink, ShellOutput};
pub use server_client::AdbServerClient;

/// About 30 years: where [`deadline_in`] stops.
const FAR_FUTURE: std::time::Duration = std::time::Duration::from_secs(30 * 365 * 86_400);

/// The instant `within` from now, saturating: a `within` past what the clock can hold (a wait
/// of `u64::MAX` seconds) is about 30 years away instead of a panic in `Instant + Duration`.
pub fn deadline_in(within: std::time::Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(within)
        .unwrap_or_else(|| now + within.min(FAR_FUTURE))
}

#[cfg(test)]
mod tests {
    /// A wait past what the clock can hold ends ~30 years out instead of panicking.
    #[test]
    fn deadline_in_saturates() {
        let far = super::deadline_in(std::time::Duration::MAX);
        assert!(far > tokio::time::Instant::now() + super::FAR_FUTURE / 2);
        let near = super::deadline_in(std::time::Duration::from_secs(5));
        assert!(near < far);
    }

    /// The ADB floor sits under the rest of the connector (protocol, connector, config,
    /// device, server, store): its files name nothing of the crate outside `adb`.
    #[test]
    fn adb_imports_nothing_above_its_floor() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/adb");
        // Spelled in pieces so this test does not match itself.
        let needle = concat!("crate", "::");
        let grandparent = concat!("super", "::", "super", "::");
        let mut leaks = Vec::new();
        // Every file under src/adb, its subdirectories (`mdns/`) included.
        let mut files = Vec::new();
        let mut dirs = vec![dir];
        while let Some(d) = dirs.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else {
                    files.push(path);
                }
            }
        }
        for path in files {
            let code = std::fs::read_to_string(&path).unwrap();
            for (n, line) in code.lines().enumerate() {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                let outside = line.match_indices(needle).any(|(at, _)| {
                    !line[at + needle.len()..].starts_with("adb::") && !line[..at].ends_with('$')
                });
                if outside || line.contains(grandparent) {
                    leaks.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(
            leaks.is_empty(),
            "the ADB floor reaches up:\n{}",
            leaks.join("\n")
        );
    }
}
