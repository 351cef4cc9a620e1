//! The requests this connector serves, decoded once from a packet's type and payload
//! (spec §8). Payload rules follow the spec's field tables; where this connector is lenient
//! (`auth.cancel`: a missing or odd payload reads as empty, answered `not_found`) it says so.
//! A malformed `auth.status` is `invalid_packet`, as a malformed `auth.start` is.

use crate::protocol::decode::{from_json_value, ShapeError};
use crate::protocol::payloads::{
    AuthCancelPayload, AuthStartPayload, AuthStatusPayload, HelloPayload, ToolInvokePayload,
};
use crate::protocol::{ErrorCode, Packet, PacketType};

use super::error::DataPlaneError;

/// One decoded request.
#[derive(Debug, Clone)]
pub enum Request {
    /// `connector.hello` (§8.1).
    Hello(HelloPayload),
    /// `channel.open` (§8.3); the requested id is the envelope `connector_channel_id`, empty
    /// meaning "issue a new one".
    ChannelOpen {
        /// Channel to restore, if any.
        requested: Option<String>,
    },
    /// `channel.close` (§8.5).
    ChannelClose,
    /// `connection.descriptor.get` (§8.15).
    DescriptorGet,
    /// `auth.start` (§8.7).
    AuthStart(AuthStartPayload),
    /// `auth.status` (§8.9).
    AuthStatus(AuthStatusPayload),
    /// `auth.cancel` (§8.11).
    AuthCancel(AuthCancelPayload),
    /// `auth.logout` (§8.13).
    AuthLogout,
    /// `tool.invoke` (§8.18).
    ToolInvoke(ToolInvokePayload),
    /// `ping` (§8.22).
    Ping,
    /// `pong` (ignored).
    Pong,
    /// `error` from xAgent (ignored).
    Error,
    /// Any other type (acks, pushes, unknown names): answered `unsupported_packet`.
    Unknown(String),
}

impl Request {
    /// Whether `kind` is a user-level packet routed by the envelope channel (spec §7).
    pub fn is_channel_scoped(kind: &PacketType) -> bool {
        matches!(
            kind,
            PacketType::ChannelClose
                | PacketType::DescriptorGet
                | PacketType::AuthStart
                | PacketType::AuthStatus
                | PacketType::AuthCancel
                | PacketType::AuthLogout
                | PacketType::ToolInvoke
        )
    }

    /// Decodes `packet`'s payload for its type. Errors: a payload that does not fit
    /// (`invalid_packet`; an `error` packet for hello, the ack's `error` otherwise).
    pub fn decode(packet: &Packet) -> Result<Request, DataPlaneError> {
        Ok(match &packet.kind {
            PacketType::ConnectorHello => Request::Hello(hello_payload(packet)?),
            PacketType::ChannelOpen => Request::ChannelOpen {
                requested: packet
                    .connector_channel_id
                    .clone()
                    .filter(|c| !c.is_empty()),
            },
            PacketType::ChannelClose => Request::ChannelClose,
            PacketType::DescriptorGet => Request::DescriptorGet,
            PacketType::AuthStart => {
                Request::AuthStart(payload_or_default(packet).map_err(|e| {
                    DataPlaneError::failed(
                        ErrorCode::InvalidPacket,
                        format!("bad auth.start payload (flow_id: string, input: object): {e}"),
                    )
                })?)
            }
            PacketType::AuthStatus => Request::AuthStatus(auth_session_payload(
                packet,
                "auth_session_id: string; optional flow_id: string, refresh: boolean",
            )?),
            PacketType::AuthCancel => {
                Request::AuthCancel(auth_session_payload(packet, "auth_session_id: string")?)
            }
            PacketType::AuthLogout => Request::AuthLogout,
            PacketType::ToolInvoke => Request::ToolInvoke(tool_payload(packet)?),
            PacketType::Ping => Request::Ping,
            PacketType::Pong => Request::Pong,
            PacketType::Error => Request::Error,
            other => Request::Unknown(other.as_str().to_string()),
        })
    }
}

fn hello_payload(packet: &Packet) -> Result<HelloPayload, DataPlaneError> {
    let Some(payload) = packet.payload.clone() else {
        return Err(DataPlaneError::rejected(
            ErrorCode::InvalidPacket,
            "connector.hello needs a payload with connector_card_id, protocol_version and supported_profiles",
        ));
    };
    from_json_value(payload, "payload").map_err(|e| {
        DataPlaneError::rejected(ErrorCode::InvalidPacket, format!("bad hello payload: {e}"))
    })
}

/// The payload of `auth.status` or `auth.cancel` (§8.9, §8.11), whose `shape` the errors
/// name: `auth_session_id` (string) is required. A malformed one is `invalid_packet` in the
/// ack naming the field; `auth_session_not_found` / `not_found` are kept for a well-formed id
/// that names no session (§8.9 suggests them only for that).
fn auth_session_payload<T: serde::de::DeserializeOwned>(
    packet: &Packet,
    shape: &str,
) -> Result<T, DataPlaneError> {
    let kind = packet.kind.as_str();
    let Some(payload) = packet.payload.clone() else {
        return Err(DataPlaneError::failed(
            ErrorCode::InvalidPacket,
            format!("{kind} needs a payload ({shape})"),
        ));
    };
    from_json_value(payload, "payload").map_err(|e| {
        DataPlaneError::failed(
            ErrorCode::InvalidPacket,
            format!("bad {kind} payload ({shape}): {e}"),
        )
    })
}

/// Longest `context.tool_call_id`, characters: the spec states no limit, so the card's
/// `tool_id` bound (`maxLength: 256`) is used; the id is journaled for 24 h.
pub const MAX_TOOL_CALL_ID_CHARS: usize = 256;

fn tool_payload(packet: &Packet) -> Result<ToolInvokePayload, DataPlaneError> {
    match packet
        .payload
        .clone()
        .map(|v| from_json_value(v, "payload"))
    {
        Some(Ok(p)) => check_tool_call_id(p),
        // Names the field and the expected type (e.g. `payload.context.tool_call_id`: string).
        Some(Err(e)) => Err(DataPlaneError::failed(
            ErrorCode::InvalidPacket,
            format!("bad tool.invoke payload (tool_id: string, arguments: object, context.tool_call_id: string): {e}"),
        )),
        None => Err(DataPlaneError::failed(
            ErrorCode::InvalidPacket,
            "tool.invoke payload needs tool_id (string) and arguments (object)",
        )),
    }
}

/// Refuses an over-long `context.tool_call_id` with `invalid_packet` (never repeated), before
/// anything is journaled or run.
fn check_tool_call_id(p: ToolInvokePayload) -> Result<ToolInvokePayload, DataPlaneError> {
    let id = p.context.as_ref().and_then(|c| c.tool_call_id.as_deref());
    if id.is_some_and(|id| id.chars().count() > MAX_TOOL_CALL_ID_CHARS) {
        return Err(DataPlaneError::failed(
            ErrorCode::InvalidPacket,
            format!(
                "context.tool_call_id is longer than {MAX_TOOL_CALL_ID_CHARS} characters; nothing was run"
            ),
        ));
    }
    Ok(p)
}

/// The payload as `T`; a missing payload is `T::default()`.
fn payload_or_default<T: serde::de::DeserializeOwned + Default>(
    packet: &Packet,
) -> Result<T, ShapeError> {
    match &packet.payload {
        None => Ok(T::default()),
        Some(v) => from_json_value(v.clone(), "payload"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(kind: &str, payload: &str) -> Packet {
        Packet::decode(&format!(
            r#"{{"schema":"xagent.connector.packet/v1","packet_id":"p","type":"{kind}"{payload}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn payloads_decode_once_with_the_documented_leniency() {
        assert!(matches!(
            Request::decode(&packet("connector.hello", "")),
            Err(DataPlaneError::Rejected { .. })
        ));
        // Each refused as a malformed packet, never a rejection or a default.
        let malformed = |kind: &str, payload: &str| {
            matches!(
                Request::decode(&packet(kind, payload)),
                Err(DataPlaneError::Failed {
                    code: ErrorCode::InvalidPacket,
                    ..
                })
            )
        };
        for (kind, payload) in [
            ("tool.invoke", r#","payload":{"tool_id":1}"#),
            ("auth.status", ""),
            ("auth.status", r#","payload":{}"#),
            ("auth.status", r#","payload":{"auth_session_id":1}"#),
            ("auth.cancel", r#","payload":{"auth_session_id":1}"#),
        ] {
            assert!(malformed(kind, payload), "{kind} {payload}");
        }
        let sid = r#","payload":{"auth_session_id":"as_1"}"#;
        assert!(matches!(
            Request::decode(&packet("auth.status", sid)),
            Ok(Request::AuthStatus(_))
        ));
        assert!(matches!(
            Request::decode(&packet("auth.cancel", sid)),
            Ok(Request::AuthCancel(_))
        ));
        assert!(matches!(
            Request::decode(&packet("channel.open.ack", "")),
            Ok(Request::Unknown(k)) if k == "channel.open.ack"
        ));
        assert!(Request::is_channel_scoped(&PacketType::ToolInvoke));
        assert!(!Request::is_channel_scoped(&PacketType::ChannelOpen));
    }
}
