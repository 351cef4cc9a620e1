//! `connector.hello` (spec §8.1–8.2): card id, protocol version ≥ 3.0, profile, and the
//! connector id a socket may not change. A completed hello holds the connector lease.

use super::error::DataPlaneError;
use super::reply::{HelloAck, Reply};
use super::session::Greeting;
use crate::connector::{Connector, SessionId};
use crate::protocol::payloads::{parse_version, HelloPayload};
use crate::protocol::{ErrorCode, CARD_ID, DEVICE_PROFILE, PROTOCOL_VERSION};

/// Checks the hello and, when it passes, marks the socket greeted and holds the lease.
/// Errors (all `error` packets): `connector_card_id_mismatch`, `unsupported_protocol_version`,
/// `unsupported_profile`, `connector_id_mismatch`.
pub fn handle(
    connector: &Connector,
    greeting: &mut Greeting,
    session: SessionId,
    p: &HelloPayload,
) -> Result<Reply, DataPlaneError> {
    let refuse = DataPlaneError::rejected;
    if p.connector_card_id != CARD_ID {
        return Err(refuse(
            ErrorCode::ConnectorCardIdMismatch,
            "connector_card_id must be \"device.adb\"",
        ));
    }
    match p
        .protocol_version
        .as_ref()
        .map(|v| v.as_str().map(parse_version))
    {
        Some(Some(Some(v))) if v >= (3, 0) => {}
        Some(None) => {
            return Err(refuse(
                ErrorCode::UnsupportedProtocolVersion,
                "protocol_version must be a string such as \"3.0\"",
            ))
        }
        _ => {
            return Err(refuse(
                ErrorCode::UnsupportedProtocolVersion,
                "protocol_version 3.0 or later is required",
            ))
        }
    }
    match &p.supported_profiles {
        None => {
            return Err(refuse(
                ErrorCode::UnsupportedProfile,
                "supported_profiles is required",
            ))
        }
        Some(list) if !list.iter().any(|x| x == DEVICE_PROFILE) => {
            return Err(refuse(
                ErrorCode::UnsupportedProfile,
                "supported_profiles must include xagent.device.v1",
            ))
        }
        Some(_) => {}
    }
    let requested = p.connector_id.as_deref().filter(|id| !id.is_empty());
    if let (Some(acked), Some(req)) = (&greeting.acked_connector_id, requested) {
        if acked != req {
            return Err(refuse(
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
