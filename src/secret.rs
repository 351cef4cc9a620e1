//! Secrets at rest in memory: the system API key and claim codes. [`Secret`] never prints its
//! value; claim codes and API keys are compared as SHA-256 digests ([`hash_claim_code`]) in
//! constant time by their users, so the plain value is kept only where it must be.

/// A secret string whose `Debug` never shows the value (no `Display`).
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    /// The value, for comparison only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// SHA-256 digest (32 bytes) of a claim code or key; the plain code is never kept.
pub type CodeHash = [u8; 32];

/// SHA-256 of `code` (FIPS 180-4, via `ring`).
pub fn hash_claim_code(code: &str) -> CodeHash {
    let d = ring::digest::digest(&ring::digest::SHA256, code.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// Lowercase hex of `bytes` (2 characters per byte).
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_do_not_print() {
        assert_eq!(
            format!("{:?}", Secret::new("topsecret")),
            "Secret([redacted])"
        );
    }
}
