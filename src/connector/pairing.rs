//! Auth flow `adb_pair_code` (type `form`; fields `host`, `port`, `code`, optional
//! `connect_port`): Android 11+ "Wireless debugging → Pair device with pairing code". The
//! connector pairs its adb key with the phone (`xagent_adb_pairing::pair_as_host`), connects to
//! the phone's wireless-debugging port over the `STLS` upgrade, reads `ro.serialno`, adds the
//! phone to the inventory (watched from then on) and binds the channel. A code that is not 6
//! digits is refused before anything is dialled. The network steps run outside the write gate
//! (pairing takes seconds); only the bind takes it. The phone's serial, GUID and address are
//! stored, so a restarted connector watches it again. The code is never logged, echoed or
//! stored.

// A wireless GUID is `adb-<serial>-<6 chars>`: logged masked like a serial.
use crate::protocol::descriptor::mask_serial;
use std::time::Duration;

use serde_json::Value;
use xagent_adb_pairing::PairingError;

use super::claim::{refuse, ClaimError};
use super::form;
use super::state::BindRefusal;
use super::Connector;
use crate::adb::host_key::{pair_with_phone, PairWithPhoneError};
use crate::adb::{AdbError, DeviceLink};
use crate::device::inventory;
use crate::device::parse::devices::{DeviceState, RouteKind};
use crate::protocol::payloads::AuthStartPayload;
use crate::protocol::{now_ms, ErrorCode};
use crate::store::WirelessPhoneRecord;

/// Deadline of the pairing exchange (TCP connect, TLS, SPAKE2, PeerInfo).
pub const PAIR_DEADLINE: Duration = Duration::from_secs(30);

/// Whether `c` may appear in an IP address (v4, v6 with brackets and a `%` zone) or a DNS name.
fn is_host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']' | '%' | '_')
}

/// The form input of `adb_pair_code`, checked.
struct PairCodeInput {
    host: String,
    port: u16,
    code: zeroize::Zeroizing<String>,
    connect_port: Option<u16>,
}

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
        let port = port_field(input, "port")?.ok_or_else(|| {
            refuse(
                ErrorCode::AuthFailed,
                "field `port` is required: the port shown under \"Pair device with pairing code\"",
            )
        })?;
        const CODE: &str = "the pairing code the phone shows, in quotes";
        let code = form::string_field(input, "code", CODE)?
            .map(str::trim)
            .ok_or_else(|| form::missing("code", CODE))?;
        // Checked before dialling: any other code could only fail as a "wrong code" (and
        // cost one of the phone's pairing attempts). Never echoed.
        if !xagent_adb_pairing::valid_pairing_code(code) {
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
            code: zeroize::Zeroizing::new(code.to_string()),
            connect_port: port_field(input, "connect_port")?,
        })
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

/// Words for a failed connect to `shown`: the address when the connector found it (mDNS), the
/// names of the fields when the caller gave it (their values are never repeated).
fn connect_refusal(e: &AdbError, shown: &str) -> ClaimError {
    let message = match e {
        AdbError::NotPaired => {
            format!("the phone paired but refused the connector's key on {shown}: pair it again")
        }
        AdbError::Timeout { .. } => format!("the phone did not answer on {shown} in time"),
        _ => format!(
            "paired, but the phone's wireless-debugging port {shown} cannot be reached: check `connect_port` (Wireless debugging → IP address & Port)"
        ),
    };
    refuse(ErrorCode::AuthFailed, &message)
}

impl Connector {
    /// How many `auth.logout`s channel `channel_id` has answered ([`super::ChannelRuntime::logouts`]).
    pub(super) fn logouts(&self, channel_id: &str) -> u64 {
        self.runtime(channel_id)
            .logouts
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Whether both pairing flows may start on `channel_id`: a channel of this connector with
    /// no phone bound yet, or one whose bound phone refuses the connector's key over its
    /// Wi-Fi-paired route (pairing revoked or forgotten), as pairing again is that phone's fix
    /// ([`DeviceState::remedy`] for [`RouteKind::WifiPaired`]); the bind at the end then
    /// accepts only that same phone. Errors: `auth_failed` (bound already),
    /// `connector_channel_not_owned`.
    pub(super) fn check_channel_unbound(&self, channel_id: &str) -> Result<(), ClaimError> {
        // The state lock is let go before the inventory's is taken.
        let (check, bound) = {
            let state = self.state();
            let bound = state.binding(channel_id).map(|b| b.serial.clone());
            (state.check_bind(channel_id, ""), bound)
        };
        match check {
            Err(BindRefusal::ChannelBound)
                if bound
                    .and_then(|serial| self.inventory.get(&serial))
                    .is_some_and(|p| {
                        p.state == DeviceState::Unauthorized
                            && p.route_kind() == RouteKind::WifiPaired
                    }) =>
            {
                Ok(())
            }
            Err(BindRefusal::ChannelBound) => Err(refuse(
                ErrorCode::AuthFailed,
                "this channel is already bound to another phone; auth.logout first",
            )),
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
        self.check_channel_unbound(channel_id)?;
        let logouts = self.logouts(channel_id);
        let Some(key_file) = self.host_key.clone() else {
            return Err(refuse(
                ErrorCode::AuthFailed,
                "wireless pairing is not available on this connector",
            ));
        };
        let key = key_file.get().await.map_err(|_| {
            refuse(
                ErrorCode::InternalError,
                "the connector's adb key cannot be read or made",
            )
        })?;
        let pairing_addr = format!("{}:{}", input.host, input.port);
        let guid = pair_with_phone(&key, &pairing_addr, input.code.as_bytes(), PAIR_DEADLINE)
            .await
            .map_err(|e| match e {
                // The host is the caller's: named by its field, never repeated.
                PairWithPhoneError::Unreachable => refuse(
                    ErrorCode::AuthFailed,
                    "cannot reach the phone's pairing port at the `host` and `port` given: check them and that the pairing dialog is open",
                ),
                PairWithPhoneError::Pairing(e) => pairing_refusal(&e),
            })?;
        tracing::info!(channel = channel_id, guid = %mask_serial(guid.as_str()), "phone paired");
        let Some(connect_port) = input.connect_port else {
            return Err(refuse(
                ErrorCode::AuthFailed,
                "paired; now give `connect_port` (Wireless debugging → IP address & Port) to connect",
            ));
        };
        let addr = format!("{}:{connect_port}", input.host);
        self.connect_and_bind(
            channel_id,
            key_file,
            guid.as_str(),
            &addr,
            "the `host` and `connect_port` given",
            logouts,
        )
        .await
        .map(|_| ())
    }

    /// The shared end of both pairing flows: connects to the paired phone's connect port
    /// `addr` over `STLS`, reads its serial, remembers (serial, `guid`, `addr`) for restarts,
    /// binds `channel_id` and watches the phone from then on. Returns the serial. Errors:
    /// `auth_failed` in words for the person at the phone (naming the address as `shown`),
    /// `internal_error` (store).
    pub(super) async fn connect_and_bind(
        &self,
        channel_id: &str,
        key_file: crate::adb::HostKeyFile,
        guid: &str,
        addr: &str,
        shown: &str,
        logouts: u64,
    ) -> Result<String, ClaimError> {
        let addr = addr.to_string();
        let transport = format!("tcp:{addr}");
        let link = DeviceLink::direct_with_key(addr.clone(), key_file.clone());
        let phone = crate::adb::host_key::retry_until_key_recorded(|| {
            inventory::attach_paired(&self.inventory, &link, &transport)
        })
        .await
        .map_err(|e| connect_refusal(&e, shown))?;
        // Remembered before the bind: a restart follows the phone again whatever the bind says.
        let record = WirelessPhoneRecord {
            serial: phone.serial.clone(),
            guid: guid.to_string(),
            addr: addr.clone(),
            paired_ms: now_ms(),
        };
        self.store
            .wireless_phone_upsert(record.clone())
            .await
            .map_err(|e| {
                refuse(
                    ErrorCode::InternalError,
                    &format!("could not store the paired phone: {e}"),
                )
            })?;
        // From now on the phone is followed (watched, re-found by GUID, second to USB), as
        // after a restart, whatever the bind says: the inventory never keeps an unwatched route.
        self.follow_wireless_phone(record);
        {
            let _gate = self.writes.lock().await;
            if self.logouts(channel_id) != logouts {
                return Err(refuse(
                    ErrorCode::AuthFailed,
                    "auth.logout ended this pairing before it finished: the phone is paired but not bound; auth.start again to bind it",
                ));
            }
            self.bind_phone(channel_id, &phone.serial, &phone.model)
                .await?;
        }
        Ok(phone.serial)
    }
}
