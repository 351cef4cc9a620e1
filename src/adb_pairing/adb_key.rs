//! The host's adb key: RSA-2048, kept as PKCS#8 PEM in a 0600 file, shown to phones as the
//! Android public-key line, presented in TLS as a self-signed certificate in adb's shape, and
//! used for the legacy `AUTH` signature.
//!
//! Sources: AOSP `client/auth.cpp` and `crypto/rsa_2048_key.cpp` (key and `user@host` line),
//! `libcrypto_utils/android_pubkey.cpp` (the 524-byte struct), `crypto/x509_generator.cpp`
//! (the certificate), `daemon/auth.cpp` (the SHA-1 token signature); research notes §2.5, §3.3.

use std::path::{Path, PathBuf};

use base64::Engine;
use rsa::pkcs1::DecodeRsaPrivateKey;
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey, LineEnding};
use rsa::traits::PublicKeyParts;
use rsa::{BigUint, Pkcs1v15Sign, RsaPrivateKey, RsaPublicKey};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// Modulus size, bits (adb's keys are RSA-2048 with e = 65537).
pub const KEY_BITS: usize = 2048;
/// Size of the Android public-key struct (`ANDROID_PUBKEY_ENCODED_SIZE`), bytes.
pub const ANDROID_PUBKEY_LEN: usize = 524;
/// Modulus size in 32-bit words (`ANDROID_PUBKEY_MODULUS_SIZE_WORDS`).
const MODULUS_WORDS: u32 = 64;
/// Modulus size, bytes.
const MODULUS_BYTES: usize = 256;

/// Why a key could not be made, read, written or used. Messages name the file, never the key.
#[derive(Debug, thiserror::Error)]
pub enum AdbKeyError {
    /// Reading or writing the key file failed.
    #[error("adb key file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file is not an RSA-2048 private key in PKCS#8 (or adb's PKCS#1) PEM.
    #[error("adb key file {path} is not an RSA-2048 private key in PEM")]
    Format {
        /// The file.
        path: PathBuf,
    },
    /// Key generation, encoding, signing or the certificate failed.
    #[error("adb key: {0}")]
    Crypto(String),
}

/// The host's RSA-2048 adb key and the comment (`user@host`) of its public-key line.
/// `Debug` shows the comment and the public fingerprint only.
#[derive(Clone)]
pub struct AdbKey {
    private: RsaPrivateKey,
    comment: String,
}

impl std::fmt::Debug for AdbKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdbKey")
            .field("comment", &self.comment)
            .field(
                "spki_sha256",
                &crate::tls::spki_sha256_hex(&self.public_key()).unwrap_or_default(),
            )
            .finish_non_exhaustive()
    }
}

fn crypto(e: impl std::fmt::Display) -> AdbKeyError {
    AdbKeyError::Crypto(e.to_string())
}

impl AdbKey {
    /// A fresh RSA-2048 key (e = 65537) from the OS generator; `comment` is the `user@host`
    /// the phone shows under "Paired devices" (spaces and NULs are replaced by `_`).
    /// Takes a second or more on a Pi: call it off the async workers.
    pub fn generate(comment: &str) -> Result<AdbKey, AdbKeyError> {
        let private = RsaPrivateKey::new(&mut rsa::rand_core::OsRng, KEY_BITS).map_err(crypto)?;
        Ok(AdbKey {
            private,
            comment: clean_comment(comment),
        })
    }

    /// Reads a key from PEM: PKCS#8 (`BEGIN PRIVATE KEY`, what [`AdbKey::save`] writes) or
    /// adb's own PKCS#1 `~/.android/adbkey` (`BEGIN RSA PRIVATE KEY`). Errors:
    /// [`AdbKeyError::Io`], [`AdbKeyError::Format`] (also for a key that is not 2048 bits).
    pub fn load(path: &Path, comment: &str) -> Result<AdbKey, AdbKeyError> {
        let text = zeroize::Zeroizing::new(std::fs::read_to_string(path).map_err(|source| {
            AdbKeyError::Io {
                path: path.to_path_buf(),
                source,
            }
        })?);
        let private = RsaPrivateKey::from_pkcs8_pem(&text)
            .ok()
            .or_else(|| RsaPrivateKey::from_pkcs1_pem(&text).ok())
            .filter(|k| k.size() * 8 == KEY_BITS)
            .ok_or_else(|| AdbKeyError::Format {
                path: path.to_path_buf(),
            })?;
        Ok(AdbKey {
            private,
            comment: clean_comment(comment),
        })
    }

    /// [`AdbKey::load`] if `path` exists, else [`AdbKey::generate`] and [`AdbKey::save`].
    pub fn load_or_generate(path: &Path, comment: &str) -> Result<AdbKey, AdbKeyError> {
        if path.exists() {
            return AdbKey::load(path, comment);
        }
        let key = AdbKey::generate(comment)?;
        key.save(path)?;
        Ok(key)
    }

    /// Writes PKCS#8 PEM to `path`, mode 0600, through a temporary file and a rename (a crash
    /// leaves the old key or the new one). Creates the parent directory.
    pub fn save(&self, path: &Path) -> Result<(), AdbKeyError> {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let io = |source| AdbKeyError::Io {
            path: path.to_path_buf(),
            source,
        };
        let pem = self.private.to_pkcs8_pem(LineEnding::LF).map_err(crypto)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension("tmp");
        let _ = std::fs::remove_file(&tmp);
        let mut f = std::fs::OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(io)?;
        f.write_all(pem.as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// The `user@host` comment.
    pub fn comment(&self) -> &str {
        &self.comment
    }

    /// The public half.
    pub fn public_key(&self) -> RsaPublicKey {
        self.private.to_public_key()
    }

    /// The 524-byte Android struct ([`android_public_key`] of [`AdbKey::public_key`]).
    pub fn android_public_key(&self) -> [u8; ANDROID_PUBKEY_LEN] {
        android_public_key(&self.public_key())
    }

    /// `adbkey.pub` without its newline: `base64(524-byte struct) user@host` — what PeerInfo
    /// type 0 and `AUTH(RSAPUBLICKEY)` carry, and what a phone stores.
    pub fn public_key_line(&self) -> String {
        format!(
            "{} {}",
            base64::engine::general_purpose::STANDARD.encode(self.android_public_key()),
            self.comment
        )
    }

    /// PKCS#1 v1.5 signature over a SHA-1 DigestInfo whose digest *is* `token` (the legacy
    /// `AUTH(TOKEN)` answer, `RSA_sign(NID_sha1, token, 20)`); 256 bytes.
    pub fn sign_auth_token(&self, token: &[u8]) -> Result<Vec<u8>, AdbKeyError> {
        self.private
            .sign(Pkcs1v15Sign::new::<sha1::Sha1>(), token)
            .map_err(crypto)
    }

    /// adb's host certificate: self-signed X.509 v3 over this key, serial 1, subject = issuer =
    /// `C=US, O=Android, CN=Adb`, sha256WithRSAEncryption; with the key as PKCS#8 DER, for a
    /// rustls client identity. A phone compares only the public key.
    pub fn certificate(
        &self,
    ) -> Result<(CertificateDer<'static>, PrivateKeyDer<'static>), AdbKeyError> {
        use rcgen::{
            CertificateParams, DistinguishedName, DnType, KeyPair, SerialNumber, PKCS_RSA_SHA256,
        };
        let der = PrivatePkcs8KeyDer::from(
            self.private
                .to_pkcs8_der()
                .map_err(crypto)?
                .as_bytes()
                .to_vec(),
        );
        let pair = KeyPair::from_pkcs8_der_and_sign_algo(&der, &PKCS_RSA_SHA256).map_err(crypto)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(crypto)?;
        let mut name = DistinguishedName::new();
        name.push(DnType::CountryName, "US");
        name.push(DnType::OrganizationName, "Android");
        name.push(DnType::CommonName, "Adb");
        params.distinguished_name = name;
        params.serial_number = Some(SerialNumber::from(1u64));
        let cert = params.self_signed(&pair).map_err(crypto)?;
        Ok((cert.der().clone(), PrivateKeyDer::Pkcs8(der)))
    }

    /// DER `SubjectPublicKeyInfo` of the public key.
    pub fn spki_der(&self) -> Result<Vec<u8>, AdbKeyError> {
        Ok(self
            .public_key()
            .to_public_key_der()
            .map_err(crypto)?
            .into_vec())
    }
}

fn clean_comment(comment: &str) -> String {
    let c: String = comment
        .chars()
        .map(|c| {
            if c.is_whitespace() || c == '\0' {
                '_'
            } else {
                c
            }
        })
        .collect();
    if c.is_empty() {
        "unknown@unknown".into()
    } else {
        c
    }
}

/// The Android public-key struct (`android_pubkey_encode`), all fields little-endian:
/// `u32 len = 64` words; `u32 n0inv = −n⁻¹ mod 2³²`; `u8 n[256]`; `u8 rr[256] = (2²⁰⁴⁸)² mod n`;
/// `u32 e`. Keys other than 2048 bits are encoded truncated and will not verify on a phone.
pub fn android_public_key(key: &RsaPublicKey) -> [u8; ANDROID_PUBKEY_LEN] {
    let n = key.n();
    let le = n.to_bytes_le();
    let mut out = [0u8; ANDROID_PUBKEY_LEN];
    out[..4].copy_from_slice(&MODULUS_WORDS.to_le_bytes());
    let n0 = u32::from_le_bytes(core::array::from_fn(|i| le.get(i).copied().unwrap_or(0)));
    // Newton's iteration doubles the correct low bits of an odd number's inverse each step:
    // 1 → 2 → 4 → 8 → 16 → 32 bits after five steps (n is odd: an RSA modulus).
    let mut inv: u32 = 1;
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u32.wrapping_sub(n0.wrapping_mul(inv)));
    }
    out[4..8].copy_from_slice(&inv.wrapping_neg().to_le_bytes());
    let copy = |dst: &mut [u8], src: &[u8]| {
        let len = src.len().min(MODULUS_BYTES);
        dst[..len].copy_from_slice(&src[..len]);
    };
    copy(&mut out[8..8 + MODULUS_BYTES], &le);
    let rr = (BigUint::from(1u32) << (2 * 8 * MODULUS_BYTES)) % n;
    copy(&mut out[264..264 + MODULUS_BYTES], &rr.to_bytes_le());
    let e = u32::from_le_bytes(core::array::from_fn(|i| {
        key.e().to_bytes_le().get(i).copied().unwrap_or(0)
    }));
    out[520..524].copy_from_slice(&e.to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_line_struct_file_and_certificate() {
        let key = AdbKey::generate("xagent@test box").unwrap();
        assert_eq!(key.comment(), "xagent@test_box");
        let raw = key.android_public_key();
        assert_eq!(u32::from_le_bytes(raw[..4].try_into().unwrap()), 64);
        let n0inv = u32::from_le_bytes(raw[4..8].try_into().unwrap());
        let n0 = u32::from_le_bytes(raw[8..12].try_into().unwrap());
        assert_eq!(n0.wrapping_mul(n0inv), u32::MAX, "n0inv = -1/n mod 2^32");
        assert_eq!(BigUint::from_bytes_le(&raw[8..264]), *key.public_key().n());
        let rr = BigUint::from_bytes_le(&raw[264..520]);
        assert_eq!(rr, (BigUint::from(1u32) << 4096) % key.public_key().n());
        assert_eq!(u32::from_le_bytes(raw[520..].try_into().unwrap()), 65537);
        let line = key.public_key_line();
        let (b64, comment) = line.split_once(' ').unwrap();
        assert_eq!(b64.len(), 700, "adb's adbkey.pub is 700 base64 characters");
        assert_eq!(comment, "xagent@test_box");

        let dir = std::env::temp_dir().join(format!("adb-key-test-{}", std::process::id()));
        let path = dir.join("adbkey");
        key.save(&path).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = AdbKey::load_or_generate(&path, "xagent@test_box").unwrap();
        assert_eq!(again.public_key_line(), line);
        std::fs::write(dir.join("junk"), "not a key").unwrap();
        let err = AdbKey::load(&dir.join("junk"), "c")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("junk") && err.contains("not an RSA-2048"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);

        let (cert, _) = key.certificate().unwrap();
        let parsed = webpki::EndEntityCert::try_from(&cert).unwrap();
        assert_eq!(
            parsed.subject_public_key_info().as_ref(),
            &key.spki_der().unwrap()[..],
        );
        let shown = format!("{key:?}");
        assert!(
            shown.contains("xagent@test_box") && !shown.contains(b64),
            "{shown}"
        );

        let sig = key.sign_auth_token(&[1u8; 20]).unwrap();
        assert_eq!(sig.len(), 256);
        key.public_key()
            .verify(Pkcs1v15Sign::new::<sha1::Sha1>(), &[1u8; 20], &sig)
            .unwrap();
    }
}
