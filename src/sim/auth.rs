//! ADB public-key authentication, device side (`ro.adb.secure=1`), as adbd does it.
//!
//! On `CNXN` the device sends `AUTH(TOKEN, 20 random bytes)`. The host answers with
//! `AUTH(SIGNATURE)`: RSA PKCS#1 v1.5 over a SHA-1 DigestInfo whose digest *is* the token
//! (`RSA_sign(NID_sha1, token, 20)`). A signature that verifies against an accepted key puts the
//! transport online (`CNXN`); a bad one earns a new token. When the host has no more keys it sends
//! `AUTH(RSAPUBLICKEY, "base64(android pubkey struct) user@host\0")`; the key waits as *pending*
//! until the user accepts it (here: control API `POST /v1/auth {"action":"accept"}`).
//! Accepted keys are kept like `/data/misc/adb/adb_keys`: one `base64 comment` line per key.
//!
//! Sources: research notes §3.3 and §5.3; AOSP `adb/daemon/auth.cpp` (`adbd_auth_verify`),
//! `adb/crypto/rsa_2048_key.cpp` and `libcrypto_utils/android_pubkey.cpp` (the 524-byte struct).

use std::path::{Path, PathBuf};

use base64::Engine;
use rsa::{BigUint, Pkcs1v15Sign, RsaPublicKey};

/// Size of `RSAPublicKey` in `android_pubkey.h`: `u32 len; u32 n0inv; u8 n[256]; u8 rr[256]; u32 e`.
pub const ANDROID_PUBKEY_LEN: usize = 524;
/// Modulus size in 32-bit words (`ANDROID_PUBKEY_MODULUS_SIZE_WORDS`).
const MODULUS_WORDS: u32 = 64;
/// File of accepted keys in `state_dir` (`/data/misc/adb/adb_keys`).
pub const ADB_KEYS_FILE: &str = "adb_keys";
/// File of keys paired over wireless debugging in `state_dir` (Android keeps them in
/// `adb_temp_keys.xml`; same line format here).
pub const PAIRED_KEYS_FILE: &str = "adb_wifi_keys";
/// Token size (`TOKEN_SIZE` in `adb_auth.h`).
pub const TOKEN_LEN: usize = 20;

/// Decodes the 524-byte Android public-key struct (all fields little-endian) into an RSA key.
/// Errors: wrong length, `len` other than 64 words, or a key `rsa` rejects.
pub fn decode_android_pubkey(raw: &[u8]) -> Result<RsaPublicKey, String> {
    if raw.len() != ANDROID_PUBKEY_LEN {
        return Err(format!("pubkey struct is {} bytes, not 524", raw.len()));
    }
    let word = |at: usize| u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]);
    if word(0) != MODULUS_WORDS {
        return Err(format!("modulus length {} words, not 64", word(0)));
    }
    let n = BigUint::from_bytes_le(&raw[8..8 + 256]);
    let e = BigUint::from(word(8 + 256 + 256));
    RsaPublicKey::new(n, e).map_err(|e| format!("rsa key: {e}"))
}

/// Parses one `adb_keys` line or `RSAPUBLICKEY` payload: `base64 [comment]`, NULs trimmed.
pub fn parse_key_line(text: &str) -> Result<RsaPublicKey, String> {
    let b64 = text
        .trim_matches(|c: char| c == '\0' || c.is_whitespace())
        .split_whitespace()
        .next()
        .ok_or("empty key")?;
    let raw = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|e| format!("base64: {e}"))?;
    decode_android_pubkey(&raw)
}

/// Whether `sig` is a valid PKCS#1 v1.5 SHA-1 signature of `token` (the token is the digest).
pub fn verify(key: &RsaPublicKey, token: &[u8], sig: &[u8]) -> bool {
    token.len() == TOKEN_LEN
        && key
            .verify(Pkcs1v15Sign::new::<sha1::Sha1>(), token, sig)
            .is_ok()
}

/// A key the device knows: its `adb_keys` line and the decoded key.
#[derive(Clone, Debug)]
pub struct KnownKey {
    /// `base64 user@host`, as stored in `adb_keys`.
    pub line: String,
    /// Decoded key.
    pub key: RsaPublicKey,
}

/// Accepted and pending keys of one phone, persisted in `state_dir/adb_keys` when set.
#[derive(Debug, Default)]
pub struct KeyStore {
    /// Authentication required (`--require-auth`); off = `CNXN` straight away.
    pub required: bool,
    /// Accepted keys.
    pub accepted: Vec<KnownKey>,
    /// Keys offered with `RSAPUBLICKEY`, waiting for the user.
    pub pending: Vec<KnownKey>,
    file: Option<PathBuf>,
}

impl KeyStore {
    /// A store; with `state_dir`, reads `state_dir/adb_keys` (unparsable lines are skipped, as
    /// adbd does). Errors: the directory cannot be created or the file cannot be read.
    pub fn open(required: bool, state_dir: Option<&Path>) -> std::io::Result<KeyStore> {
        KeyStore::open_file(required, state_dir, ADB_KEYS_FILE)
    }

    /// Like [`KeyStore::open`] with another file in `state_dir` (wireless debugging keeps its
    /// paired keys apart, in [`PAIRED_KEYS_FILE`]).
    pub fn open_file(
        required: bool,
        state_dir: Option<&Path>,
        file_name: &str,
    ) -> std::io::Result<KeyStore> {
        let mut store = KeyStore {
            required,
            ..KeyStore::default()
        };
        if let Some(dir) = state_dir {
            std::fs::create_dir_all(dir)?;
            let file = dir.join(file_name);
            match std::fs::read_to_string(&file) {
                Ok(text) => {
                    for line in text.lines().filter(|l| !l.trim().is_empty()) {
                        if let Ok(key) = parse_key_line(line) {
                            store.accepted.push(KnownKey {
                                line: line.trim().to_string(),
                                key,
                            });
                        }
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            store.file = Some(file);
        }
        Ok(store)
    }

    /// The accepted key that signed `token`, if any (its `adb_keys` line).
    pub fn check(&self, token: &[u8], sig: &[u8]) -> Option<String> {
        self.accepted
            .iter()
            .find(|k| verify(&k.key, token, sig))
            .map(|k| k.line.clone())
    }

    /// Whether the key with this `adb_keys` line is accepted.
    pub fn is_accepted(&self, line: &str) -> bool {
        self.accepted.iter().any(|k| k.line == line)
    }

    /// Records an `RSAPUBLICKEY` payload as pending; returns its line (errors: undecodable).
    pub fn offer(&mut self, payload: &[u8]) -> Result<String, String> {
        let text = String::from_utf8_lossy(payload);
        let line = text
            .trim_matches(|c: char| c == '\0' || c.is_whitespace())
            .to_string();
        let key = parse_key_line(&line)?;
        if !self.is_accepted(&line) && !self.pending.iter().any(|k| k.line == line) {
            self.pending.push(KnownKey {
                line: line.clone(),
                key,
            });
        }
        Ok(line)
    }

    /// Accepts one key line directly (a host that paired over wireless debugging) and
    /// persists the list; an already known key is kept once. Errors: undecodable line, or
    /// the file cannot be written.
    pub fn add(&mut self, line: &str) -> Result<(), String> {
        let line = line.trim().to_string();
        let key = parse_key_line(&line)?;
        if !self.is_accepted(&line) {
            self.accepted.push(KnownKey { line, key });
        }
        self.save().map_err(|e| format!("saving keys: {e}"))
    }

    /// The accepted public keys.
    pub fn keys(&self) -> Vec<RsaPublicKey> {
        self.accepted.iter().map(|k| k.key.clone()).collect()
    }

    /// Accepts every pending key ("Always allow from this computer") and persists the list.
    /// Returns how many were accepted.
    pub fn accept_pending(&mut self) -> std::io::Result<usize> {
        let n = self.pending.len();
        self.accepted.append(&mut self.pending);
        self.save()?;
        Ok(n)
    }

    /// Forgets every key ("Revoke USB debugging authorizations") and persists the empty list.
    pub fn revoke(&mut self) -> std::io::Result<()> {
        self.accepted.clear();
        self.pending.clear();
        self.save()
    }

    fn save(&self) -> std::io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let text: String = self
            .accepted
            .iter()
            .map(|k| format!("{}\n", k.line))
            .collect();
        let tmp = file.with_extension("tmp");
        std::fs::write(&tmp, text)?;
        std::fs::rename(tmp, file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_structs() {
        assert!(decode_android_pubkey(&[0u8; 10]).is_err());
        let mut raw = vec![0u8; ANDROID_PUBKEY_LEN];
        raw[0] = 63;
        assert!(decode_android_pubkey(&raw)
            .unwrap_err()
            .contains("63 words"));
        assert!(parse_key_line("not base64! user@host").is_err());
    }

    #[test]
    fn store_persists_accepted_only() {
        let dir = std::env::temp_dir().join(format!("sim-keystore-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = KeyStore::open(true, Some(&dir)).unwrap();
        assert!(store.accepted.is_empty() && store.required);
        std::fs::write(dir.join("adb_keys"), "garbage line\n\n").unwrap();
        assert!(KeyStore::open(true, Some(&dir))
            .unwrap()
            .accepted
            .is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
