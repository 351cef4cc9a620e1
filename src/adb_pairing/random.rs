//! The crate's one source of randomness: the OS generator through `ring`.

use ring::rand::{SecureRandom, SystemRandom};

/// `N` random bytes. Panics only if the OS has no randomness (ring's `fill` never fails on
/// Linux once `getrandom` works), which no caller could recover from.
pub(crate) fn bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    SystemRandom::new()
        .fill(&mut out)
        .expect("the operating system's random number generator failed");
    out
}

/// `len` characters drawn uniformly from `A-Za-z0-9` by the OS generator (rejection sampling,
/// no modulo bias): QR names and passwords, GUID suffixes.
pub fn alphanumeric(len: usize) -> String {
    const SET: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::with_capacity(len);
    while out.len() < len {
        for b in bytes::<32>() {
            // 248 = 4 * 62: values above it would favour the first characters.
            if b < 248 && out.len() < len {
                out.push(SET[usize::from(b) % 62] as char);
            }
        }
    }
    out
}
