//! Auth flow `adb_pair_code` (type `form`; fields `host`, `port`, `code`, optional
//! `connect_port`): Android 11+ "Wireless debugging → Pair device with pairing code". The
//! connector pairs its adb key with the phone (`xagent_adb_pairing::pair_as_host`), then finds
//! the phone by the GUID it sent — at `host:connect_port` when given and plausible, else by its
//! `_adb-tls-connect._tcp` announcement ([`super::pairing_connect`]) — connects over the `STLS`
//! upgrade, reads `ro.serialno`, adds the phone to the inventory (watched from then on) and
//! binds the channel. A code that is not 6 digits is refused before anything is dialled. A
//! pairing that succeeded but could not connect is kept on the channel: the next attempt there
//! (no code, or the same spent dialog) connects with it. The network steps run outside the write
//! gate (pairing takes seconds); only the bind takes it. The phone's serial, GUID and address are
//! stored, so a restarted connector watches it again. The code is never logged, echoed or
//! stored.

// A wireless GUID is `adb-<serial>-<6 chars>`: logged masked like a serial.
use crate::protocol::descriptor::mask_serial;
use std::time::Duration;

use serde_json::Value;
use xagent_adb_pairing::PairingError;

use super::claim_error::{refuse, ClaimError};
use super::form;
use super::pairing_connect::ConnectFailure;
use super::runtime::PairedPhone;
use super::state::BindRefusal;
use super::Connector;
use crate::adb::host_key::{pair_with_phone, PairWithPhoneError};
use crate::protocol::payloads::AuthStartPayload;
use crate::protocol::ErrorCode;

/// Deadline of the pairing exchange (TCP connect, TLS, SPAKE2, PeerInfo).
pub const PAIR_DEADLINE: Duration = Duration::from_secs(30);

/// Whether `c` may appear in an IP address (v4, v6 with brackets and a `%` zone) or a DNS name.
fn is_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']' | '%' | '_')
}

/// The form input of `adb_pair_code`, checked.
struct PairCodeInput {
    host: String,
    /// The pairing port; may be left out when the channel holds a pairing already.
    port: Option<u16>,
    /// The code; may be left out when the channel holds a pairing already.
    code: Option<zeroize::Zeroizing<String>>,
    connect_port: Option<u16>,
}

/// The `adb tcpip` port (AOSP `DEFAULT_ADB_LOCAL_TRANSPORT_PORT`): never the wireless-debugging
/// (`STLS`) port, which is random (`TlsServer(0)`, `daemon/adb_wifi.cpp`).
const TCPIP_PORT: u16 = 5555;

fn port_field(
    input: &serde_json::Map<String, Value>,
    name: &str,
) -> Result<Option<u16>, ClaimError> {
    let bad = || {
        refuse(
            ErrorCode::AuthFailed,
            &format!("field `{name}` must be a port number from 1 to 65535"),
        )
    };
    match input.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or_else(bad),
        Some(Value::String(s)) => s
            .trim()
            .parse::<u16>()
            .ok()
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or_else(bad),
        Some(other) => Err(refuse(
            ErrorCode::AuthFailed,
            &format!(
                "field `{name}` must be a port number from 1 to 65535, not {}",
                form::json_kind(other)
            ),
        )),
    }
}

impl PairCodeInput {
    fn parse(input: &serde_json::Map<String, Value>) -> Result<PairCodeInput, ClaimError> {
        const HOST: &str = "the phone's IP address shown under \"Pair device with pairing code\"";
        let host = form::string_field(input, "host", HOST)?
            .map(str::trim)
            .ok_or_else(|| form::missing("host", HOST))?;
        // An IP address or a host name: never repeated (docs/protocol.md).
        if host.len() > 253 || !host.chars().all(is_host_char) {
            return Err(refuse(
                ErrorCode::AuthFailed,
                "field `host` is not an IP address or host name (letters, digits, `.`, `-`, `:`, `[`, `]`, `%` and `_` only, at most 253 characters): give the phone's IP address shown under \"Pair device with pairing code\"",
            ));
        }
        let port = port_field(input, "port")?;
        const CODE: &str = "the pairing code the phone shows, in quotes";
        let code = form::string_field(input, "code", CODE)?.map(str::trim);
        // Checked before dialling: any other code could only fail as a "wrong code" (and
        // cost one of the phone's pairing attempts). Never echoed.
        if code.is_some_and(|c| !xagent_adb_pairing::valid_pairing_code(c)) {
            return Err(refuse(
                ErrorCode::AuthFailed,
                &format!(
                    "field `code`: the pairing code must be {} digits (the number the phone shows under \"Pair device with pairing code\")",
                    xagent_adb_pairing::PAIRING_CODE_LENGTH
                ),
            ));
        }
        Ok(PairCodeInput {
            host: host.to_string(),
            port,
            code: code.map(|c| zeroize::Zeroizing::new(c.to_string())),
            connect_port: port_field(input, "connect_port")?,
        })
    }

    /// `HOST:PORT` of the pairing dialog, when `port` was given.
    fn pairing_addr(&self) -> Option<String> {
        self.port.map(|port| format!("{}:{port}", self.host))
    }

    /// The port and code to pair with. Errors: `auth_failed` naming the missing field.
    fn pairing(&self) -> Result<(u16, &str), ClaimError> {
        let port = self.port.ok_or_else(|| {
            refuse(
                ErrorCode::AuthFailed,
                "field `port` is required: the port shown under \"Pair device with pairing code\"",
            )
        })?;
        let code = self
            .code
            .as_ref()
            .ok_or_else(|| form::missing("code", "the pairing code the phone shows, in quotes"))?;
        Ok((port, code.as_str()))
    }

    /// Where to try the phone first: `host:connect_port`, unless it is left out or cannot be
    /// the connect port (the pairing port, closed after its one pairing; 5555, `adb tcpip`'s).
    fn connect_addrs(&self) -> Vec<String> {
        self.connect_port
            .filter(|p| Some(*p) != self.port && *p != TCPIP_PORT)
            .map(|p| vec![format!("{}:{p}", self.host)])
            .unwrap_or_default()
    }
}

/// Words for the person holding the phone; never the code.
pub(super) fn pairing_refusal(e: &PairingError) -> ClaimError {
    let message = match e {
        PairingError::WrongPassword => {
            "the pairing code was wrong, or the phone already shows a new one: open \"Pair device with pairing code\" again and type the code it shows"
        }
        PairingError::PeerClosed(_) => {
            "the phone closed the pairing connection (was its pairing dialog closed?): open it again and retry"
        }
        PairingError::Timeout(_) => {
            "the phone did not finish pairing in time: check that it is awake, on the same network, and shows its pairing dialog"
        }
        PairingError::Protocol { .. } | PairingError::Tls(_) | PairingError::Io { .. } => {
            "pairing with the phone failed (network or protocol error): open the pairing dialog again and retry"
        }
    };
    refuse(ErrorCode::AuthFailed, message)
}

/// Words for a pairing port that did not take the pairing (field row 58), by what was found
/// there: no route, nothing listening, or one of adbd's own ports. The host and port are the
/// caller's: named by their fields, never repeated.
pub(super) fn port_refusal(e: &PairWithPhoneError) -> ClaimError {
    use crate::adb::port_probe::AdbdPort;
    let message = match e {
        PairWithPhoneError::NothingListens => {
            "cannot reach the phone's pairing port: nothing listens at the `host` and `port` given. The pairing dialog is closed — it closes, and its code and port change, when the phone leaves \"Pair device with pairing code\" or its screen turns off — or `port` is mistyped: open the dialog again (keep it on screen) and give the port and code it shows now"
        }
        PairWithPhoneError::NotPairingPort(AdbdPort::WirelessConnect) => {
            "the `port` given is the phone's wireless-debugging connect port (\"IP address & Port\" on the Wireless debugging screen), not its pairing port: tap \"Pair device with pairing code\" and give the port shown in that dialog as `port` (the port given here can go in `connect_port`)"
        }
        PairWithPhoneError::NotPairingPort(AdbdPort::Tcpip) => {
            "the `port` given is adbd's plain TCP port (as after `adb tcpip 5555`), which takes no pairing code: connect to it with `adb connect` on the adb server the connector uses and claim the phone with adb_device_claim, or, to pair over Wireless debugging, give the port shown under \"Pair device with pairing code\""
        }
        _ => {
            "cannot reach the phone's pairing port at the `host` given (no route to it): the connector and the phone are not on one network — another Wi-Fi, a guest network that isolates clients, a VPN, or the phone's IP address changed: check `host` against the IP address the pairing dialog shows"
        }
    };
    refuse(ErrorCode::AuthFailed, message)
}

/// Words for a connect after pairing that did not bind; `given`: what the caller said of the
/// connect port (never its value).
pub(super) fn connect_refusal(failure: ConnectFailure, given: &str) -> ClaimError {
    match failure {
        ConnectFailure::Refused(e) => e,
        ConnectFailure::KeyRefused => refuse(
            ErrorCode::AuthFailed,
            "the phone paired but then refused the connector's key: pair it again (open \"Pair device with pairing code\" for a new code)",
        ),
        ConnectFailure::NotFound => refuse(
            ErrorCode::AuthFailed,
            &format!(
                "paired, but the phone's wireless-debugging port was not found: {given}, and no `_adb-tls-connect._tcp` announcement of this phone reached the connector within {} s. Either the port changed (Wi-Fi toggled: read it again under Wireless debugging → IP address & Port) or mDNS is blocked between the phone and the connector (client isolation or a firewall on the Wi-Fi, or --mdns-interface naming another interface). The pairing is kept: auth.start again with `host` and `connect_port`, no new code needed",
                super::pairing_connect::LOOKUP_DEADLINE.as_secs()
            ),
        ),
    }
}

impl Connector {
    /// How many `auth.logout`s channel `channel_id` has answered ([`super::ChannelRuntime::logouts`]).
    pub(super) fn logouts(&self, channel_id: &str) -> u64 {
        self.runtime(channel_id)
            .logouts
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether both pairing flows may start on `channel_id`: any channel of this connector,
    /// bound or not. Re-pairing the phone bound there is always accepted (its key may have just
    /// been revoked, before the connector saw the refusal: field bug 38); the bind at the end
    /// accepts only that same phone, so another phone paired there is refused then ("already
    /// bound to another phone"), its pairing kept for the channel. Errors:
    /// `connector_channel_not_owned`.
    pub(super) fn check_channel_pairable(&self, channel_id: &str) -> Result<(), ClaimError> {
        match self.state().check_bind(channel_id, "") {
            Err(BindRefusal::UnknownChannel) => Err(refuse(
                ErrorCode::ConnectorChannelNotOwned,
                "connector_channel_id is not a channel of this connector",
            )),
            _ => Ok(()),
        }
    }

    /// `auth.start` of `adb_pair_code`. Returns `(auth_session_id, result)`; the outcome is
    /// remembered for `auth.status`.
    pub async fn pair_with_code(
        &self,
        channel_id: &str,
        payload: &AuthStartPayload,
    ) -> (String, Result<(), ClaimError>) {
        let result = self.try_pair_with_code(channel_id, payload).await;
        self.remember_outcome(channel_id, result)
    }

    async fn try_pair_with_code(
        &self,
        channel_id: &str,
        p: &AuthStartPayload,
    ) -> Result<(), ClaimError> {
        let input = PairCodeInput::parse(&p.input)?;
        self.check_channel_pairable(channel_id)?;
        let logouts = self.logouts(channel_id);
        let Some(key_file) = self.host_key.clone() else {
            return Err(refuse(
                ErrorCode::AuthFailed,
                "wireless pairing is not available on this connector",
            ));
        };
        let guid = self.pairing_for(channel_id, &input, &key_file).await?;
        let given = match input.connect_port {
            None => "`connect_port` was not given",
            Some(p) if Some(p) == input.port => {
                "`connect_port` is the pairing port, which closes after pairing"
            }
            Some(TCPIP_PORT) => {
                "`connect_port` 5555 is the `adb tcpip` port, not the wireless-debugging one"
            }
            Some(_) => "nothing answers at the `host` and `connect_port` given",
        };
        self.connect_and_bind(channel_id, key_file, &guid, &input.connect_addrs(), logouts)
            .await
            .map(|_| ())
            .map_err(|failure| connect_refusal(failure, given))
    }

    /// The GUID to connect to: the channel's earlier pairing when this attempt brings no new
    /// dialog (no code, or the same spent dialog: field bug 36), else a new pairing with the
    /// code, kept on the channel until it is bound. Errors: `auth_failed` in words for the
    /// person at the phone, `internal_error` (key).
    async fn pairing_for(
        &self,
        channel_id: &str,
        input: &PairCodeInput,
        key_file: &crate::adb::HostKeyFile,
    ) -> Result<String, ClaimError> {
        let runtime = self.runtime(channel_id);
        let earlier = super::lock(&runtime.paired).clone();
        if let Some(earlier) = earlier.filter(|e| {
            input.code.is_none() || (input.port.is_some() && e.pairing_addr == input.pairing_addr())
        }) {
            tracing::info!(
                channel = channel_id,
                guid = %mask_serial(&earlier.guid),
                "connecting with the pairing made earlier on this channel"
            );
            return Ok(earlier.guid);
        }
        let (port, code) = input.pairing()?;
        let key = key_file.get().await.map_err(|_| {
            refuse(
                ErrorCode::InternalError,
                "the connector's adb key cannot be read or made",
            )
        })?;
        let pairing_addr = format!("{}:{port}", input.host);
        let guid = pair_with_phone(&key, &pairing_addr, code.as_bytes(), PAIR_DEADLINE)
            .await
            .map_err(|e| match e {
                // The host is the caller's: named by its field, never repeated.
                PairWithPhoneError::Pairing(e) => pairing_refusal(&e),
                other => port_refusal(&other),
            })?;
        tracing::info!(channel = channel_id, guid = %mask_serial(guid.as_str()), "phone paired");
        *super::lock(&runtime.paired) = Some(PairedPhone {
            guid: guid.as_str().to_string(),
            pairing_addr: Some(pairing_addr),
        });
        Ok(guid.as_str().to_string())
    }
}
