//! xAgent Connector Common Protocol 3.0 wire types.
//!
//! Every data-plane WebSocket text message is one [`Packet`] (spec §7):
//! `{"schema":"xagent.connector.packet/v1","packet_id","request_id?","reply_to?",
//! "connector_channel_id?","type","time?","payload?","error?"}`. Closed sets (packet type, status,
//! error code) are enums with an explicit unknown case so an unexpected value never kills a socket.
//! Objects we emit — the card ([`card`]), descriptors ([`descriptor`]) and packets — are pinned by
//! tests against the official JSON Schemas vendored in `tests/schemas/`.

pub mod card;
pub mod decode;
pub mod descriptor;
pub mod error_code;
pub mod frame_ids;
pub mod packet;
pub mod payloads;

pub use error_code::ErrorCode;
pub use packet::{Packet, PacketError, PacketType};

/// Protocol version this connector implements (spec §1).
pub const PROTOCOL_VERSION: &str = "3.0";
/// Card id (spec §4.2 table: `device.adb`).
pub const CARD_ID: &str = "device.adb";
/// Device Profile id.
pub const DEVICE_PROFILE: &str = "xagent.device.v1";
/// Target type of the Device Profile.
pub const TARGET_TYPE: &str = "device";
/// Provider of the target.
pub const PROVIDER: &str = "adb";
/// Primary Connector Skill name (`connector-<card id>` with `.` → `-`, spec §4.2).
pub const SKILL_ID: &str = "connector-device-adb";
/// WebSocket subprotocol of the data plane (spec §6).
pub const WS_SUBPROTOCOL: &str = "xagent.connector.packet.v1";
/// Connector implementation version (card `connector.version`); bumped when tools change.
pub const CONNECTOR_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Build identity injected at compile time by `build.rs`; identical in card and `/health`
/// (spec §4.3).
#[derive(Debug, Clone, serde::Serialize, PartialEq, Eq)]
pub struct BuildInfo {
    /// Crate version.
    pub version: &'static str,
    /// Nearest git tag, empty when untagged.
    pub git_tag: &'static str,
    /// Short git revision (12 hex) or `unknown`.
    pub git_rev: &'static str,
    /// UTC build time, `yyMMddHHmm`.
    pub build_time: &'static str,
}

/// The build identity of this binary.
pub const BUILD: BuildInfo = BuildInfo {
    version: env!("CARGO_PKG_VERSION"),
    git_tag: env!("XAGENT_GIT_TAG"),
    git_rev: env!("XAGENT_GIT_REV"),
    build_time: env!("XAGENT_BUILD_TIME"),
};

/// Unix time in milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// A random opaque id `prefix_` + 24 hex chars (96 bits from the OS RNG via `ring`).
pub fn random_id(prefix: &str) -> String {
    format!("{prefix}_{}", random_hex(12))
}

/// `n` random bytes from the OS RNG as lowercase hex (2·`n` chars).
pub fn random_hex(n: usize) -> String {
    use ring::rand::SecureRandom;
    let mut bytes = vec![0u8; n];
    // SystemRandom fails only without an OS RNG; the process cannot run safely then.
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .expect("operating system random number generator");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
