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
    /// The adb server refused a service because the phone's transport is still being set up
    /// (AOSP `transport.cpp` `acquire_one_transport`): `authorizing` — `device still
    /// authorizing`, the server is still trying its keys or the phone shows its "Allow USB
    /// debugging?" prompt (openstf/adbkit#130, flutter/flutter#27456; field bug 54) — else
    /// `device still connecting`, a network transport not yet answered. Passing: a retry
    /// after the prompt is answered or the connection is up succeeds.
    #[error("{}", if *.authorizing {
        "the phone is still checking this host's ADB key (adb: device still authorizing): unlock it and accept the \"Allow USB debugging?\" prompt if it shows (tick \"Always allow\"), then retry"
    } else {
        "the phone's connection is still being set up (adb: device still connecting): retry in a few seconds; if it stays, `adb disconnect HOST:PORT` and connect it again"
    })]
    TransportSettingUp {
        /// `device still authorizing` (else `device still connecting`).
        authorizing: bool,
    },
    /// The phone's adbd closed a service request before it opened (`CLSE` for the `OPEN`; an
    /// adb server relays it as `FAIL` `closed`, AOSP `sockets.cpp`, and `adb` prints `error:
    /// closed`): the transport is listed online but adbd refuses the stream — a stale
    /// connection (dwaan/homebridge-adb#84; openatx/uiautomator2#1153; field bug 55), or a
    /// phone in recovery/sideload without that service. `service` is the service's kind
    /// (`shell`, `exec`, `sync`), never its command.
    #[error("the phone's adbd closed the `{service}` request before it started (adb: closed): retry; if it repeats, its adb connection is stale: run `adb reconnect` on the box, or replug the cable or switch USB debugging (Wireless debugging) off and on; a phone in recovery or sideload has no such service")]
    ServiceClosed {
        /// The service's kind (`shell`, `exec`, `sync`), or `service` when not known.
        service: String,
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
    /// Names the service kind (the word before the first `:` of `service`, never its command)
    /// in a [`AdbError::ServiceClosed`]; other errors unchanged.
    pub fn for_service(self, service: &str) -> AdbError {
        match self {
            AdbError::ServiceClosed { .. } => AdbError::ServiceClosed {
                service: service_kind(service).to_string(),
            },
            other => other,
        }
    }

    /// Classifies a `FAIL` message of the adb server (`adb.cpp`, `transport.cpp` texts).
    pub fn from_server_fail(message: &str) -> AdbError {
        let m = message.to_ascii_lowercase();
        let m = m.trim();
        if m == "closed" {
            AdbError::ServiceClosed {
                service: "service".into(),
            }
        } else if m.contains("still authorizing") || m.contains("still connecting") {
            AdbError::TransportSettingUp {
                authorizing: m.contains("authorizing"),
            }
        } else if m.contains("unauthorized") {
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

/// The kind of a service request: `shell`, `exec`, `sync`, … (the word before its first `:`
/// or `,` — `shell,v2,raw:CMD` is `shell`; `service` when that is not one short word).
pub fn service_kind(service: &str) -> &str {
    let word = service.split([':', ',']).next().unwrap_or("");
    if !word.is_empty()
        && word.len() <= 16
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        word
    } else {
        "service"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// adb's refusals of a transport being set up, and adbd's `closed`, each by its kind
    /// (AOSP `transport.cpp`, `sockets.cpp` texts; field bugs 54, 55).
    #[test]
    fn passing_transport_states_and_closed_are_their_own_kinds() {
        for (said, authorizing) in [
            ("device still authorizing", true),
            ("Device still authorizing\n", true),
            ("device still connecting", false),
        ] {
            match AdbError::from_server_fail(said) {
                AdbError::TransportSettingUp { authorizing: a } => assert_eq!(a, authorizing),
                other => panic!("{said}: {other:?}"),
            }
        }
        let e = AdbError::from_server_fail("closed").for_service("shell,v2,raw:input tap 1 2");
        assert!(
            matches!(&e, AdbError::ServiceClosed { service } if service == "shell"),
            "{e:?}"
        );
        assert!(!e.to_string().contains("tap"), "never the command: {e}");
        let e = AdbError::from_server_fail("closed").for_service("exec:screencap -p");
        assert!(
            matches!(&e, AdbError::ServiceClosed { service } if service == "exec"),
            "{e:?}"
        );
        assert!(matches!(
            AdbError::from_server_fail(
                "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set"
            ),
            AdbError::DeviceUnauthorized
        ));
    }
}
