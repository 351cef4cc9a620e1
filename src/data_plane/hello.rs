//! `connector.hello` (spec §8.1–8.2): card id, protocol version ≥ 3.0, profile, and the
//! connector id a socket may not change. A completed hello holds the connector lease.

use super::error::DataPlaneError;
use super::reply::{HelloAck, Reply};
use crate::connector::{Connector, SessionId};
use crate::protocol::payloads::{parse_version, HelloPayload};
use crate::protocol::{ErrorCode, CARD_ID, DEVICE_PROFILE, PROTOCOL_VERSION};

/// What a socket said in its hello.
#[derive(Debug, Default)]
pub struct Greeting {
    /// Hello completed.
    pub done: bool,
    /// The connector id its hello was acknowledged with.
    pub acked_connector_id: Option<String>,
}

/// Checks the hello and, when it passes, marks the socket greeted and holds the lease.
/// Errors (all `error` packets): `connector_card_id_mismatch`, `unsupported_protocol_version`,
/// `unsupported_profile`, `connector_id_mismatch`.
pub fn handle(
    connector: &Connector,
    greeting: &mut Greeting,
    session: SessionId,
    p: &HelloPayload,
) -> Result<Reply, DataPlaneError> {
    if let Some((code, message)) = refusal(p) {
        return Err(DataPlaneError::rejected(code, message));
    }
    let requested = p.connector_id.as_deref().filter(|id| !id.is_empty());
    if let (Some(acked), Some(req)) = (&greeting.acked_connector_id, requested) {
        if acked != req {
            return Err(DataPlaneError::rejected(
                ErrorCode::ConnectorIdMismatch,
                "this socket already said hello with another connector_id",
            ));
        }
    }
    greeting.done = true;
    let connector_id = connector.lease_hold(session);
    greeting.acked_connector_id = Some(connector_id.clone());
    Ok(Reply::HelloAck(HelloAck {
        connector_card_id: CARD_ID,
        connector_id,
        protocol_version: PROTOCOL_VERSION,
    }))
}

/// The first rule `p` breaks (card id, then version, then profile), with its message.
fn refusal(p: &HelloPayload) -> Option<(ErrorCode, &'static str)> {
    if p.connector_card_id != CARD_ID {
        return Some((
            ErrorCode::ConnectorCardIdMismatch,
            "connector_card_id must be \"device.adb\"",
        ));
    }
    let version = p.protocol_version.as_ref().map(|v| v.as_str());
    let version_refusal = match version {
        // A number such as 3.0 is not a version string.
        Some(None) => Some("protocol_version must be a string such as \"3.0\""),
        Some(Some(v)) if parse_version(v).is_some_and(|v| v >= (3, 0)) => None,
        _ => Some("protocol_version 3.0 or later is required"),
    };
    if let Some(message) = version_refusal {
        return Some((ErrorCode::UnsupportedProtocolVersion, message));
    }
    let profile_refusal = match &p.supported_profiles {
        None => Some("supported_profiles is required"),
        Some(list) if !list.iter().any(|x| x == DEVICE_PROFILE) => {
            Some("supported_profiles must include xagent.device.v1")
        }
        Some(_) => None,
    };
    profile_refusal.map(|message| (ErrorCode::UnsupportedProfile, message))
}
