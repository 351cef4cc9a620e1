//! An auth session's status and what is remembered of it for `auth.status` (spec §8.8 /
//! §8.10): written by every auth flow, kept in the connector's state.

/// Status of an auth session (spec §8.8 / §8.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthStatus {
    /// QR shown, waiting for the phone (flow `adb_qr_pair`).
    Pending,
    /// The phone scanned the QR; pairing and connecting.
    Scanned,
    /// The QR code expired before a phone scanned it.
    Expired,
    /// Bound.
    Authenticated,
    /// Refused.
    Failed,
    /// Canceled by xAgent.
    Canceled,
}

impl AuthStatus {
    /// Wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthStatus::Pending => "pending",
            AuthStatus::Scanned => "scanned",
            AuthStatus::Expired => "expired",
            AuthStatus::Authenticated => "authenticated",
            AuthStatus::Failed => "failed",
            AuthStatus::Canceled => "unauthenticated",
        }
    }
}

impl serde::Serialize for AuthStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A remembered auth session (claims finish at once; kept for `auth.status`).
#[derive(Debug, Clone)]
pub struct AuthSession {
    /// Channel it belongs to.
    pub channel_id: String,
    /// Outcome.
    pub status: AuthStatus,
}
