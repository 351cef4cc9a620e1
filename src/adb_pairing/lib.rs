//! Android 11+ wireless debugging: the pairing protocol ("Pair device with QR code" / "with
//! pairing code") for both roles, and the TLS configurations of the `STLS` upgrade that follows.
//! The connector plays the host (client, SPAKE2 Alice); the simulated phone plays the device
//! (server, SPAKE2 Bob). Both use this one crate, so every byte is decided in one place.
//!
//! The exchange (AOSP `pairing_connection/pairing_connection.cpp`): TLS 1.3 with a mandatory
//! client certificate ([`tls`]); 64 bytes of exported keying material appended to the password;
//! SPAKE2 over edwards25519 as BoringSSL does it ([`spake2`]); each side sends one
//! [`peer_info::PeerInfo`] sealed with AES-128-GCM ([`cipher`]) in a framed [`packet`]. The host
//! sends its RSA key line ([`adb_key`]), the device its GUID. [`exchange`] runs all of it with a
//! deadline; [`qr`] builds and parses the `WIFI:T:ADB;…;;` text a phone scans.
//!
//! Every mistake in this list looks to a user exactly like a wrong code, so each module has
//! known-answer tests. Decision record: `docs/decisions/0002-wireless-pairing.md`; wire notes:
//! research notes §2 and §3.4.

pub mod adb_key;
pub mod cipher;
pub mod exchange;
pub mod packet;
pub mod peer_info;
pub mod qr;
mod random;
pub mod spake2;
pub mod tls;

pub use adb_key::{AdbKey, AdbKeyError};
pub use exchange::{pair_as_host, serve_pairing, Guid, PairingError, PeerKeyLine, Stage};
pub use qr::QrPairing;
pub use random::alphanumeric as random_alphanumeric;
/// Digits of a wireless-debugging pairing code: Android draws it as a 6-digit decimal number
/// (AOSP `frameworks/base/services/core/java/com/android/server/adb/AdbDebuggingManager.java`,
/// `PAIRING_CODE_LENGTH = 6`, `createPairingCode`: `SecureRandom` digits 0–9).
pub const PAIRING_CODE_LENGTH: usize = 6;

/// Whether `code` is a code a phone could show: exactly [`PAIRING_CODE_LENGTH`] ASCII digits
/// (a host checks it before dialling: any other code can only fail as a "wrong code").
pub fn valid_pairing_code(code: &str) -> bool {
    code.len() == PAIRING_CODE_LENGTH && code.bytes().all(|b| b.is_ascii_digit())
}

/// The TLS crates whose types appear in this crate's API (configs, streams), so users name
/// them without depending on them separately.
pub use {rustls, tokio_rustls};
