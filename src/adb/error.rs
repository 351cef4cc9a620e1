//! Typed errors of every ADB operation (host smart-socket client and direct transport).

use std::time::Duration;

/// Why an ADB operation failed. Each maps to one stable protocol error code
/// (see `connector::errors`).
#[derive(Debug, thiserror::Error)]
pub enum AdbError {
    /// The adb server does not accept connections (not running, wrong port).
    #[error("adb server at {addr} is not reachable: {reason}")]
    ServerUnavailable {
        /// `host:port` tried.
        addr: String,
        /// OS error text.
        reason: String,
    },
    /// The server does not know this serial (`device 'X' not found`).
    #[error("device not found")]
    DeviceNotFound,
    /// The transport exists but is `offline` (or the direct connection dropped).
    #[error("device offline")]
    DeviceOffline,
    /// The phone has not accepted this host's RSA key.
    #[error("device unauthorized: accept the RSA key prompt on the phone")]
    DeviceUnauthorized,
    /// A wireless-debugging port refused this host's key over TLS: the phone was never
    /// paired with it, or revoked the pairing (Android does after 7 days unused).
    #[error("the phone does not know this connector's key: pair it again (wireless debugging)")]
    NotPaired,
    /// The host cannot open the USB device.
    #[error("no permissions for the device: install the udev rule (plugdev group)")]
    NoPermissions,
    /// The whole operation exceeded its deadline; the stream was closed.
    #[error("{step} timed out after {} ms", .after.as_millis())]
    Timeout {
        /// What was running (e.g. `shell: screencap -p`), never user text.
        step: String,
        /// The deadline.
        after: Duration,
    },
    /// The server or device answered FAIL / refused the service.
    #[error("adb refused the request: {0}")]
    Refused(String),
    /// Output exceeded the caller's byte cap.
    #[error("device output exceeded {limit} bytes")]
    OutputTooLarge {
        /// The cap, bytes.
        limit: usize,
    },
    /// The service request (`shell:…`, `exec:…`) is longer than the phone's adbd takes in one
    /// packet; not sent, because adbd drops the whole transport on an oversized packet and an
    /// adb server aborts on one (AOSP `sockets.cpp` `connect_to_remote`: `CHECK_LE` of the
    /// length against the transport's max payload).
    #[error("the request to the phone is {bytes} bytes; this phone's adbd takes at most {max} bytes per request (4096 before Android 7): send shorter input")]
    RequestTooLong {
        /// Length of the service request with its NUL, bytes.
        bytes: usize,
        /// The phone's max payload, bytes.
        max: usize,
    },
    /// The peer violated the protocol.
    #[error("adb protocol error: {0}")]
    Protocol(String),
    /// Socket error.
    #[error("adb i/o error: {0}")]
    Io(#[from] std::io::Error),
}

impl From<super::wire::WireError> for AdbError {
    fn from(e: super::wire::WireError) -> Self {
        match e {
            super::wire::WireError::Io(io) => AdbError::Io(io),
            other => AdbError::Protocol(other.to_string()),
        }
    }
}

impl AdbError {
    /// Classifies a `FAIL` message of the adb server (`adb.cpp`, `transport.cpp` texts).
    pub fn from_server_fail(message: &str) -> AdbError {
        let m = message.to_ascii_lowercase();
        if m.contains("unauthorized") {
            AdbError::DeviceUnauthorized
        } else if m.contains("offline") {
            AdbError::DeviceOffline
        } else if m.contains("insufficient permissions") || m.contains("no permissions") {
            AdbError::NoPermissions
        } else if m.contains("not found")
            || m.contains("no devices")
            // adb 34 for `host:transport-id:N` of a transport that went away (AOSP
            // `transport.cpp` `acquire_one_transport`: "no device with transport id 'N'").
            || m.contains("no device with transport id")
        {
            AdbError::DeviceNotFound
        } else {
            AdbError::Refused(message.trim().to_string())
        }
    }
}

/// Runs `fut` under a deadline, mapping expiry to [`AdbError::Timeout`] naming `step`.
pub async fn with_deadline<T>(
    step: impl FnOnce() -> String,
    after: Duration,
    fut: impl std::future::Future<Output = Result<T, AdbError>>,
) -> Result<T, AdbError> {
    match tokio::time::timeout(after, fut).await {
        Ok(r) => r,
        Err(_) => Err(AdbError::Timeout {
            step: step(),
            after,
        }),
    }
}
