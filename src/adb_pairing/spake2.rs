//! SPAKE2 exactly as BoringSSL's `crypto/curve25519/spake25519.c` does it (edwards25519,
//! "password scalar hack" on), which is what adb's `pairing_auth/pairing_auth.cpp` calls. The
//! RustCrypto `spake2` crate is a different variant and does not interoperate (notes §2.6).
//!
//! BoringSSL keeps two scalars *unreduced* because its mask points M and N are not in the
//! prime-order subgroup: the private key `x = 8·(r mod l)` (r = 64 random bytes) and the password
//! scalar `w = (SHA-512(pw) mod l) + k·l`, k ∈ 0..8 chosen so that 8 | w. Both are multiples of 8
//! below 8l, so `x = 8a` and `w = 8u` with `a = r mod l` and `u = w/8 = (SHA-512(pw) mod l)·8⁻¹
//! mod l`. Hence `x·P = a·(8P)` and `w·P = u·(8P)` for any point P, torsion or not, with
//! curve25519-dalek's ordinary constant-time scalar multiplication.
//!
//! Message: `T = x·B + w·(M for Alice | N for Bob)` (32 bytes, compressed Edwards y). Key:
//! `K = x·(T_peer − w·(N for Alice | M for Bob))`, then SHA-512 over the length-prefixed
//! (u64 LE) fields `alice_name, bob_name, msg_alice, msg_bob, K, SHA-512(pw)` — 64 bytes.

use curve25519_dalek::constants::ED25519_BASEPOINT_POINT;
use curve25519_dalek::edwards::{CompressedEdwardsY, EdwardsPoint};
use curve25519_dalek::scalar::Scalar;
use ring::digest::{self, SHA512};
use zeroize::{Zeroize, Zeroizing};

/// adb's name for the host (Alice), with the NUL that `sizeof` counts in `pairing_auth.cpp`.
pub const CLIENT_NAME: &[u8; 16] = b"adb pair client\0";
/// adb's name for the device (Bob), NUL included.
pub const SERVER_NAME: &[u8; 16] = b"adb pair server\0";
/// Length of a SPAKE2 message (`SPAKE2_MAX_MSG_SIZE`), bytes.
pub const MESSAGE_LEN: usize = 32;
/// Length of the shared key (`SPAKE2_MAX_KEY_SIZE`), bytes.
pub const KEY_LEN: usize = 64;

/// Alice's mask M: the first SHA-256 iterate of `"edwards25519 point generation seed (M)"` that
/// decodes to a point (`spake25519.c`, `kSpakeMSmallPrecomp`'s source).
pub const M: [u8; 32] = [
    0x5a, 0xda, 0x7e, 0x4b, 0xf6, 0xdd, 0xd9, 0xad, 0xb6, 0x62, 0x6d, 0x32, 0x13, 0x1c, 0x6b, 0x5c,
    0x51, 0xa1, 0xe3, 0x47, 0xa3, 0x47, 0x8f, 0x53, 0xcf, 0xcf, 0x44, 0x1b, 0x88, 0xee, 0xd1, 0x2e,
];
/// Bob's mask N, from the seed `"edwards25519 point generation seed (N)"`.
pub const N: [u8; 32] = [
    0x10, 0xe3, 0xdf, 0x0a, 0xe3, 0x7d, 0x8e, 0x7a, 0x99, 0xb5, 0xfe, 0x74, 0xb4, 0x46, 0x72, 0x10,
    0x3d, 0xbd, 0xdc, 0xbd, 0x06, 0xaf, 0x68, 0x0d, 0x71, 0x32, 0x9a, 0x11, 0x69, 0x3b, 0xc7, 0x78,
];

/// Which side of the exchange (`spake2_role_alice` / `spake2_role_bob`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The host (pairing client); masks its message with M.
    Alice,
    /// The device (pairing server); masks its message with N.
    Bob,
}

/// Why [`Spake2::finish`] failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Spake2Error {
    /// The peer's message is not 32 bytes or not an edwards25519 point (`SPAKE2_process_msg`
    /// returns 0 for both).
    #[error("the peer's SPAKE2 message is not a curve point")]
    InvalidMessage,
}

/// One side of one exchange. Secrets are zeroized on drop.
pub struct Spake2 {
    role: Role,
    my_name: Vec<u8>,
    their_name: Vec<u8>,
    /// `x = 8a`.
    a: Scalar,
    /// `w = 8u`.
    u: Scalar,
    pw_hash: [u8; 64],
    my_msg: [u8; MESSAGE_LEN],
}

impl std::fmt::Debug for Spake2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spake2")
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl Drop for Spake2 {
    fn drop(&mut self) {
        self.a.zeroize();
        self.u.zeroize();
        self.pw_hash.zeroize();
    }
}

fn mask(bytes: &[u8; 32]) -> EdwardsPoint {
    // Both constants decode (see the derivation test); the identity would only weaken, not
    // break, a run, and cannot happen.
    CompressedEdwardsY(*bytes)
        .decompress()
        .unwrap_or_default()
        .mul_by_cofactor()
}

fn absorb(ctx: &mut digest::Context, field: &[u8]) {
    ctx.update(&(field.len() as u64).to_le_bytes());
    ctx.update(field);
}

impl Spake2 {
    /// A fresh side for adb pairing: adb's names for `role`, 64 random bytes from the OS.
    /// `password` = the code (or QR password) followed by the 64 bytes of exported keying
    /// material ([`crate::tls::exported_keying_material`]).
    pub fn new(role: Role, password: &[u8]) -> Spake2 {
        let (mine, theirs) = match role {
            Role::Alice => (CLIENT_NAME, SERVER_NAME),
            Role::Bob => (SERVER_NAME, CLIENT_NAME),
        };
        let seed = Zeroizing::new(crate::random::bytes::<64>());
        Spake2::with_seed(role, mine, theirs, password, &seed)
    }

    /// A side with explicit names and the 64 bytes BoringSSL draws with `RAND_bytes` (for
    /// known-answer tests; use [`Spake2::new`] otherwise).
    pub fn with_seed(
        role: Role,
        my_name: &[u8],
        their_name: &[u8],
        password: &[u8],
        seed: &[u8; 64],
    ) -> Spake2 {
        let a = Scalar::from_bytes_mod_order_wide(seed);
        let mut pw_hash = [0u8; 64];
        pw_hash.copy_from_slice(digest::digest(&SHA512, password).as_ref());
        let u = Scalar::from_bytes_mod_order_wide(&pw_hash) * Scalar::from(8u8).invert();
        let my_mask = mask(if role == Role::Alice { &M } else { &N });
        let my_msg = (ED25519_BASEPOINT_POINT.mul_by_cofactor() * a + my_mask * u)
            .compress()
            .to_bytes();
        Spake2 {
            role,
            my_name: my_name.to_vec(),
            their_name: their_name.to_vec(),
            a,
            u,
            pw_hash,
            my_msg,
        }
    }

    /// The message to send (32 bytes).
    pub fn message(&self) -> &[u8; MESSAGE_LEN] {
        &self.my_msg
    }

    /// The private key `x` as BoringSSL keeps it: 32 bytes little-endian, unreduced (tests).
    pub fn private_key(&self) -> [u8; 32] {
        times_eight(&self.a)
    }

    /// The password scalar `w` as BoringSSL keeps it: 32 bytes little-endian, unreduced (tests).
    pub fn password_scalar(&self) -> [u8; 32] {
        times_eight(&self.u)
    }

    /// Processes the peer's message and returns the 64-byte shared key. A wrong password gives
    /// a different key, not an error: that only shows when the peer's PeerInfo fails to open.
    /// Errors: [`Spake2Error::InvalidMessage`].
    pub fn finish(self, their_msg: &[u8]) -> Result<Zeroizing<[u8; KEY_LEN]>, Spake2Error> {
        let t: [u8; 32] = their_msg
            .try_into()
            .map_err(|_| Spake2Error::InvalidMessage)?;
        let their_point = CompressedEdwardsY(t)
            .decompress()
            .ok_or(Spake2Error::InvalidMessage)?;
        let their_mask = mask(if self.role == Role::Alice { &N } else { &M });
        let q = their_point - their_mask * self.u;
        let k = Zeroizing::new((q.mul_by_cofactor() * self.a).compress().to_bytes());
        let (alice_name, bob_name, alice_msg, bob_msg) = match self.role {
            Role::Alice => (&self.my_name, &self.their_name, &self.my_msg, &t),
            Role::Bob => (&self.their_name, &self.my_name, &t, &self.my_msg),
        };
        let mut ctx = digest::Context::new(&SHA512);
        for field in [
            &alice_name[..],
            &bob_name[..],
            &alice_msg[..],
            &bob_msg[..],
            &k[..],
            &self.pw_hash[..],
        ] {
            absorb(&mut ctx, field);
        }
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        key.copy_from_slice(ctx.finish().as_ref());
        Ok(key)
    }
}

/// `8·s` as a 256-bit little-endian integer (s < l < 2²⁵³, so it fits).
fn times_eight(s: &Scalar) -> [u8; 32] {
    let b = s.to_bytes();
    let mut out = [0u8; 32];
    let mut carry = 0u8;
    for (o, byte) in out.iter_mut().zip(b) {
        *o = (byte << 3) | carry;
        carry = byte >> 5;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const KAT: &str = include_str!("../../tests/fixtures/pairing/spake2-kat.json");

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Five vectors from spake2-cffi (BoringSSL's C), `tests/fixtures/pairing/make_kat.py`:
    /// every message, scalar and key must match, each side fed the *C* peer's message.
    #[test]
    fn matches_boringssl_vectors() {
        let doc: serde_json::Value = serde_json::from_str(KAT).unwrap();
        let vectors = doc["vectors"].as_array().unwrap();
        assert_eq!(vectors.len(), 5);
        for v in vectors {
            let h = |k: &str| hex(v[k].as_str().unwrap());
            let seed = |k: &str| -> [u8; 64] { h(k).try_into().unwrap() };
            let (an, bn) = (h("alice_name"), h("bob_name"));
            assert_eq!(an, CLIENT_NAME);
            assert_eq!(bn, SERVER_NAME);
            let alice = Spake2::with_seed(
                Role::Alice,
                &an,
                &bn,
                &h("password_alice"),
                &seed("alice_random64"),
            );
            let bob = Spake2::with_seed(
                Role::Bob,
                &bn,
                &an,
                &h("password_bob"),
                &seed("bob_random64"),
            );
            let name = v["name"].as_str().unwrap();
            assert_eq!(
                alice.private_key().to_vec(),
                h("alice_private_key"),
                "{name}"
            );
            assert_eq!(bob.private_key().to_vec(), h("bob_private_key"), "{name}");
            assert_eq!(alice.password_scalar().to_vec(), h("alice_password_scalar"));
            assert_eq!(bob.password_scalar().to_vec(), h("bob_password_scalar"));
            assert_eq!(alice.message().to_vec(), h("msg_alice"), "{name}");
            assert_eq!(bob.message().to_vec(), h("msg_bob"), "{name}");
            let ka = alice.finish(&h("msg_bob")).unwrap();
            let kb = bob.finish(&h("msg_alice")).unwrap();
            assert_eq!(ka.to_vec(), h("key_alice"), "{name}");
            assert_eq!(kb.to_vec(), h("key_bob"), "{name}");
            assert_eq!(v["keys_equal"].as_bool().unwrap(), ka == kb, "{name}");
        }
    }

    /// M and N are what their seeds give: SHA-256 of the seed, re-hashed until it decodes.
    #[test]
    fn masks_come_from_their_seeds() {
        for (tag, want) in [("M", M), ("N", N)] {
            let seed = format!("edwards25519 point generation seed ({tag})");
            let mut v = digest::digest(&digest::SHA256, seed.as_bytes());
            let point = loop {
                let bytes: [u8; 32] = v.as_ref().try_into().unwrap();
                if CompressedEdwardsY(bytes).decompress().is_some() {
                    break bytes;
                }
                v = digest::digest(&digest::SHA256, v.as_ref());
            };
            assert_eq!(point, want, "{tag}");
        }
    }

    #[test]
    fn random_sides_agree_only_on_the_same_password() {
        let alice = Spake2::new(Role::Alice, b"123456");
        let bob = Spake2::new(Role::Bob, b"123456");
        let (ma, mb) = (*alice.message(), *bob.message());
        assert_eq!(alice.finish(&mb).unwrap(), bob.finish(&ma).unwrap());
        let alice = Spake2::new(Role::Alice, b"123456");
        let bob = Spake2::new(Role::Bob, b"654321");
        let (ma, mb) = (*alice.message(), *bob.message());
        assert_ne!(alice.finish(&mb).unwrap(), bob.finish(&ma).unwrap());
    }

    #[test]
    fn rejects_messages_that_are_not_points() {
        let alice = Spake2::new(Role::Alice, b"pw");
        assert_eq!(
            Spake2::new(Role::Alice, b"pw")
                .finish(&[0u8; 31])
                .unwrap_err(),
            Spake2Error::InvalidMessage
        );
        // y = 2 is not on the curve.
        let mut bad = [0u8; 32];
        bad[0] = 2;
        assert_eq!(alice.finish(&bad).unwrap_err(), Spake2Error::InvalidMessage);
        assert!(!format!("{:?}", Spake2::new(Role::Bob, b"secret")).contains("secret"));
    }
}
