//! The typed refusal every auth flow answers with (`adb_device_claim`, `adb_pair_code`,
//! `adb_qr_pair`), and the form readers' errors: a stable code and a message with no secret.

use crate::protocol::ErrorCode;

/// A claim refusal: code + message (no secret, no full serial).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimError {
    /// Stable code.
    pub code: ErrorCode,
    /// Message.
    pub message: String,
}

pub(crate) fn refuse(code: ErrorCode, message: &str) -> ClaimError {
    ClaimError {
        code,
        message: message.to_string(),
    }
}
