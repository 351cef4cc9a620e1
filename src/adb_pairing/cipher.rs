//! The PeerInfo cipher of `pairing_auth/aes_128_gcm.cpp`: a 16-byte key from
//! HKDF-SHA256(ikm = the 64-byte SPAKE2 key, no salt, info = `adb pairing_auth aes-128-gcm key`
//! without a NUL), AES-128-GCM with a 16-byte tag and no AAD, nonce = a u64 message counter
//! little-endian then 4 zero bytes, one counter per direction starting at 0.
//!
//! Each side seals exactly one message, so both directions use nonce 0 under the same key:
//! nonce reuse that is the protocol's own, kept for interoperability.

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM};
use ring::hkdf::{KeyType, Salt, HKDF_SHA256};
use zeroize::Zeroizing;

/// HKDF `info` (`kInfo`, `sizeof - 1`: no NUL).
pub const HKDF_INFO: &[u8] = b"adb pairing_auth aes-128-gcm key";
/// GCM tag length appended to every ciphertext, bytes.
pub const TAG_LEN: usize = 16;

/// Why a message did not open.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CipherError {
    /// The tag did not verify: the peers derived different keys (a wrong password, a wrong
    /// exporter label, a wrong name — all look alike) or the bytes were changed.
    #[error("the message did not authenticate (keys differ: wrong password)")]
    Tag,
}

struct Len16;

impl KeyType for Len16 {
    fn len(&self) -> usize {
        16
    }
}

/// Seals and opens PeerInfo messages under one SPAKE2 key.
pub struct PeerInfoCipher {
    key: LessSafeKey,
    enc_sequence: u64,
    dec_sequence: u64,
}

impl std::fmt::Debug for PeerInfoCipher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerInfoCipher").finish_non_exhaustive()
    }
}

fn nonce(sequence: u64) -> Nonce {
    let mut iv = [0u8; 12];
    iv[..8].copy_from_slice(&sequence.to_le_bytes());
    Nonce::assume_unique_for_key(iv)
}

impl PeerInfoCipher {
    /// Derives the AES key from the 64-byte SPAKE2 key.
    pub fn new(spake2_key: &[u8; 64]) -> PeerInfoCipher {
        // HKDF without a salt is HMAC with an all-zero key, which an empty salt gives too.
        let prk = Salt::new(HKDF_SHA256, &[]).extract(spake2_key);
        let mut k = Zeroizing::new([0u8; 16]);
        // 16 bytes is far below HKDF-SHA256's 255·32 limit, so neither step can fail.
        prk.expand(&[HKDF_INFO], Len16)
            .and_then(|okm| okm.fill(&mut k[..]))
            .expect("16-byte HKDF output");
        let key = UnboundKey::new(&AES_128_GCM, &k[..]).expect("16-byte AES-128 key");
        PeerInfoCipher {
            key: LessSafeKey::new(key),
            enc_sequence: 0,
            dec_sequence: 0,
        }
    }

    /// Encrypts `plain`; returns ciphertext ‖ tag (`plain.len() + 16` bytes).
    pub fn seal(&mut self, plain: &[u8]) -> Vec<u8> {
        let mut buf = plain.to_vec();
        // Sealing fails only for inputs beyond GCM's 64 GiB limit.
        self.key
            .seal_in_place_append_tag(nonce(self.enc_sequence), Aad::empty(), &mut buf)
            .expect("AES-GCM input within limits");
        self.enc_sequence += 1;
        buf
    }

    /// Decrypts ciphertext ‖ tag. Errors: [`CipherError::Tag`] (also for input shorter than
    /// the tag).
    pub fn open(&mut self, sealed: &[u8]) -> Result<Zeroizing<Vec<u8>>, CipherError> {
        let mut buf = Zeroizing::new(sealed.to_vec());
        let len = self
            .key
            .open_in_place(nonce(self.dec_sequence), Aad::empty(), &mut buf)
            .map_err(|_| CipherError::Tag)?
            .len();
        buf.truncate(len);
        self.dec_sequence += 1;
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Vector from Python `cryptography` (HKDF(SHA256, 16, salt=None, info) + AESGCM):
    /// ikm = 00..3f; first message nonce 0, second nonce 1.
    #[test]
    fn matches_an_independent_vector() {
        let ikm: [u8; 64] = core::array::from_fn(|i| i as u8);
        let mut c = PeerInfoCipher::new(&ikm);
        assert_eq!(
            hex(&c.seal(b"adb pairing test")),
            "29b539ee6d54407ac0846f982aff66a2e84d41f9207ef7d03f8912c749b08220"
        );
        assert_eq!(
            hex(&c.seal(b"second")),
            "fa3e9d9c5f2211d472322df1a70c7111d8234af40e2e"
        );
    }

    #[test]
    fn opens_what_the_peer_sealed_and_rejects_other_keys() {
        let key = [7u8; 64];
        let mut host = PeerInfoCipher::new(&key);
        let mut device = PeerInfoCipher::new(&key);
        let sealed = host.seal(b"hello");
        assert_eq!(sealed.len(), 5 + TAG_LEN);
        assert_eq!(&device.open(&sealed).unwrap()[..], b"hello");
        let mut other = PeerInfoCipher::new(&[8u8; 64]);
        assert_eq!(other.open(&host.seal(b"x")), Err(CipherError::Tag));
        assert_eq!(other.open(&[1, 2, 3]), Err(CipherError::Tag));
    }
}
