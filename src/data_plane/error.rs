//! Data-plane errors and the one place they become packets (spec §7 envelope `error`, §8.23
//! codes).
//!
//! Two kinds, by where the answer goes:
//! * [`DataPlaneError::Rejected`]: the packet was refused before a handler ran (envelope,
//!   hello checks, `hello_required`, routing, unsupported type) → an `error` packet;
//! * [`DataPlaneError::Failed`]: a handler refused or failed → the request's own ack with
//!   `error`, and a payload when the ack still reports something (`auth.start.ack` with
//!   `status: failed`, `tool.invoke.ack` with `tool_id`).

use serde_json::Value;

use crate::protocol::{ErrorCode, Packet, PacketType};

/// Why a data-plane request was not answered with its normal reply.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DataPlaneError {
    /// Refused before any handler ran: answered with an `error` packet.
    #[error("{code:?}: {message}")]
    Rejected {
        /// Stable code.
        code: ErrorCode,
        /// Message (never a secret).
        message: String,
    },
    /// The handler refused or failed: answered with the request's ack carrying `error`.
    #[error("{code:?}: {message}")]
    Failed {
        /// Stable code.
        code: ErrorCode,
        /// Message (never a secret).
        message: String,
        /// Ack payload sent with the error, if any.
        payload: Option<Value>,
    },
}

impl DataPlaneError {
    /// An `error`-packet refusal.
    pub fn rejected(code: ErrorCode, message: impl Into<String>) -> DataPlaneError {
        DataPlaneError::Rejected {
            code,
            message: message.into(),
        }
    }

    /// An ack error without payload.
    pub fn failed(code: ErrorCode, message: impl Into<String>) -> DataPlaneError {
        DataPlaneError::Failed {
            code,
            message: message.into(),
            payload: None,
        }
    }

    /// An ack error whose ack also carries `payload`.
    pub fn failed_with(code: ErrorCode, message: impl Into<String>, payload: Value) -> Self {
        DataPlaneError::Failed {
            code,
            message: message.into(),
            payload: Some(payload),
        }
    }

    /// The packet answering `request` with this error: an `error` packet, or the request's ack
    /// (`reply_to`, `request_id` and the envelope channel echoed either way).
    pub fn into_packet(self, request: &Packet) -> Packet {
        match self {
            DataPlaneError::Rejected { code, message } => {
                request.reply(PacketType::Error).with_error(code, message)
            }
            DataPlaneError::Failed {
                code,
                message,
                payload,
            } => {
                let kind = request.kind.ack().unwrap_or(PacketType::Error);
                let mut ack = request.reply(kind);
                ack.payload = payload;
                ack.with_error(code, message)
            }
        }
    }
}

/// The `error` packet answering a frame that is not a packet: a text frame failing envelope
/// decoding (`text`, with its `packet_id`/`request_id` echoed when readable) or a binary
/// frame (`None`).
pub fn frame_error(text: Option<&str>, message: &str) -> Packet {
    match text {
        Some(text) => Packet::invalid_frame_error(text, ErrorCode::InvalidPacket, message),
        None => Packet::new(PacketType::Error).with_error(ErrorCode::InvalidPacket, message),
    }
}

/// The packet answering `request`: the reply, or the error mapped as above.
pub fn answer(request: &Packet, result: Result<super::reply::Reply, DataPlaneError>) -> Packet {
    match result {
        Ok(reply) => reply.into_packet(request),
        Err(e) => e.into_packet(request),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(kind: &str) -> Packet {
        Packet::decode(&format!(
            r#"{{"schema":"xagent.connector.packet/v1","packet_id":"p1","request_id":"r1","connector_channel_id":"cch_1","type":"{kind}"}}"#
        ))
        .unwrap()
    }

    #[test]
    fn rejections_are_error_packets_and_failures_are_acks() {
        let e = DataPlaneError::rejected(ErrorCode::ChannelNotOpen, "open it first");
        let p = e.into_packet(&request("tool.invoke"));
        assert_eq!(p.kind, PacketType::Error);
        assert_eq!(p.reply_to.as_deref(), Some("p1"));
        assert_eq!(p.request_id.as_deref(), Some("r1"));
        assert_eq!(p.connector_channel_id.as_deref(), Some("cch_1"));
        assert_eq!(p.error.unwrap().code, ErrorCode::ChannelNotOpen);
        assert!(p.payload.is_none());

        let e = DataPlaneError::failed_with(
            ErrorCode::DeviceOffline,
            "unplugged",
            json!({"tool_id": "android_tap"}),
        );
        let p = e.into_packet(&request("tool.invoke"));
        assert_eq!(p.kind, PacketType::ToolInvokeAck);
        assert_eq!(p.payload, Some(json!({"tool_id": "android_tap"})));
        assert_eq!(p.error.unwrap().message, "unplugged");
    }
}
