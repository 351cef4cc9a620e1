//! The packet envelope (spec §7) and packet types (spec §8).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{now_ms, random_id, ErrorCode};

/// Envelope `schema` value.
pub const PACKET_SCHEMA: &str = "xagent.connector.packet/v1";

/// A packet type (spec §8). Unknown types parse to [`PacketType::Unknown`] carrying the string,
/// so the socket can answer `unsupported_packet` instead of failing to decode.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PacketType {
    /// §8.1
    ConnectorHello,
    /// §8.2
    ConnectorHelloAck,
    /// §8.3
    ChannelOpen,
    /// §8.4
    ChannelOpenAck,
    /// §8.5
    ChannelClose,
    /// §8.6
    ChannelCloseAck,
    /// §8.7
    AuthStart,
    /// §8.8
    AuthStartAck,
    /// §8.9
    AuthStatus,
    /// §8.10
    AuthStatusAck,
    /// §8.11
    AuthCancel,
    /// §8.12
    AuthCancelAck,
    /// §8.13
    AuthLogout,
    /// §8.14
    AuthLogoutAck,
    /// §8.15
    DescriptorGet,
    /// §8.16
    DescriptorGetAck,
    /// §8.17
    DescriptorPush,
    /// §8.18
    ToolInvoke,
    /// §8.19
    ToolInvokeAck,
    /// §8.20
    ToolProgressPush,
    /// §8.22
    Ping,
    /// §8.22
    Pong,
    /// §8.23
    Error,
    /// Anything else (e.g. `message.push`, which a device connector never receives).
    Unknown(String),
}

const TYPE_NAMES: &[(&str, PacketType)] = &[
    ("connector.hello", PacketType::ConnectorHello),
    ("connector.hello.ack", PacketType::ConnectorHelloAck),
    ("channel.open", PacketType::ChannelOpen),
    ("channel.open.ack", PacketType::ChannelOpenAck),
    ("channel.close", PacketType::ChannelClose),
    ("channel.close.ack", PacketType::ChannelCloseAck),
    ("auth.start", PacketType::AuthStart),
    ("auth.start.ack", PacketType::AuthStartAck),
    ("auth.status", PacketType::AuthStatus),
    ("auth.status.ack", PacketType::AuthStatusAck),
    ("auth.cancel", PacketType::AuthCancel),
    ("auth.cancel.ack", PacketType::AuthCancelAck),
    ("auth.logout", PacketType::AuthLogout),
    ("auth.logout.ack", PacketType::AuthLogoutAck),
    ("connection.descriptor.get", PacketType::DescriptorGet),
    (
        "connection.descriptor.get.ack",
        PacketType::DescriptorGetAck,
    ),
    ("connection.descriptor.push", PacketType::DescriptorPush),
    ("tool.invoke", PacketType::ToolInvoke),
    ("tool.invoke.ack", PacketType::ToolInvokeAck),
    ("tool.progress.push", PacketType::ToolProgressPush),
    ("ping", PacketType::Ping),
    ("pong", PacketType::Pong),
    ("error", PacketType::Error),
];

impl PacketType {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            PacketType::Unknown(s) => s,
            known => TYPE_NAMES
                .iter()
                .find(|(_, t)| t == known)
                .map(|(name, _)| *name)
                .unwrap_or("unknown"),
        }
    }

    /// Parses a wire string; never fails.
    pub fn from_wire(s: &str) -> Self {
        TYPE_NAMES
            .iter()
            .find(|(name, _)| *name == s)
            .map(|(_, t)| t.clone())
            .unwrap_or_else(|| PacketType::Unknown(s.to_string()))
    }

    /// The ack type answering this request type, if it is a request.
    pub fn ack(&self) -> Option<PacketType> {
        Some(match self {
            PacketType::ConnectorHello => PacketType::ConnectorHelloAck,
            PacketType::ChannelOpen => PacketType::ChannelOpenAck,
            PacketType::ChannelClose => PacketType::ChannelCloseAck,
            PacketType::AuthStart => PacketType::AuthStartAck,
            PacketType::AuthStatus => PacketType::AuthStatusAck,
            PacketType::AuthCancel => PacketType::AuthCancelAck,
            PacketType::AuthLogout => PacketType::AuthLogoutAck,
            PacketType::DescriptorGet => PacketType::DescriptorGetAck,
            PacketType::ToolInvoke => PacketType::ToolInvokeAck,
            PacketType::Ping => PacketType::Pong,
            _ => return None,
        })
    }
}

impl Serialize for PacketType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for PacketType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(PacketType::from_wire(&s))
    }
}

/// Envelope `error` (spec §7): stable code and a message free of secrets.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct PacketError {
    /// Stable code.
    pub code: ErrorCode,
    /// Readable description for logs and developers.
    #[serde(default)]
    pub message: String,
}

/// One data-plane packet (spec §7).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Packet {
    /// Always [`PACKET_SCHEMA`].
    pub schema: String,
    /// Unique id of this packet.
    pub packet_id: String,
    /// Request id chosen by xAgent, echoed unchanged in acks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// `packet_id` this packet answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_to: Option<String>,
    /// User-level channel id (routing only; never a credential).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_channel_id: Option<String>,
    /// Packet type.
    #[serde(rename = "type")]
    pub kind: PacketType,
    /// Unix time, ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<i64>,
    /// Type-specific payload (a JSON object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    /// Error, when this packet reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<PacketError>,
}

/// Why a text frame is not a valid packet (answered with `invalid_packet`).
#[derive(Debug, thiserror::Error)]
pub enum EnvelopeError {
    /// Not JSON, or fields of the wrong type (the field named, never its value).
    #[error("packet is not a valid JSON envelope: {0}")]
    Json(#[from] super::decode::ShapeError),
    /// `schema` is not `xagent.connector.packet/v1`.
    #[error("packet schema must be \"xagent.connector.packet/v1\"")]
    Schema,
    /// `packet_id` empty.
    #[error("packet_id must be a non-empty string")]
    PacketId,
    /// `type` empty.
    #[error("type must be a non-empty string")]
    Type,
    /// `payload` present but not an object.
    #[error("payload must be a JSON object")]
    Payload,
}

impl Packet {
    /// Decodes and validates an envelope from a WebSocket text frame.
    pub fn decode(text: &str) -> Result<Packet, EnvelopeError> {
        let packet: Packet = super::decode::from_json_str(text)?;
        if packet.schema != PACKET_SCHEMA {
            return Err(EnvelopeError::Schema);
        }
        if packet.packet_id.is_empty() {
            return Err(EnvelopeError::PacketId);
        }
        if packet.kind.as_str().is_empty() {
            return Err(EnvelopeError::Type);
        }
        if packet.payload.as_ref().is_some_and(|p| !p.is_object()) {
            return Err(EnvelopeError::Payload);
        }
        Ok(packet)
    }

    /// The `error` answer to a frame that failed [`Packet::decode`]: `reply_to` and
    /// `request_id` are echoed whenever the frame's `packet_id` and `request_id` can be read,
    /// whatever else made it fail (numbers out of range, deep nesting, duplicate keys, wrong
    /// types, a frame cut short): see [`super::frame_ids`].
    pub fn invalid_frame_error(text: &str, code: ErrorCode, message: &str) -> Packet {
        let mut out = Packet::new(PacketType::Error).with_error(code, message);
        let ids = super::frame_ids::FrameIds::scan(text);
        out.reply_to = ids.packet_id;
        out.request_id = ids.request_id;
        out
    }

    /// A new packet of `kind` with a fresh `packet_id` and the current time.
    pub fn new(kind: PacketType) -> Packet {
        Packet {
            schema: PACKET_SCHEMA.to_string(),
            packet_id: random_id("pkt"),
            request_id: None,
            reply_to: None,
            connector_channel_id: None,
            kind,
            time: Some(now_ms()),
            payload: None,
            error: None,
        }
    }

    /// A reply of `kind` to `self`: echoes `request_id`, sets `reply_to` and copies the channel.
    pub fn reply(&self, kind: PacketType) -> Packet {
        let mut out = Packet::new(kind);
        out.request_id = self.request_id.clone();
        out.reply_to = Some(self.packet_id.clone());
        out.connector_channel_id = self.connector_channel_id.clone();
        out
    }

    /// Sets the payload (builder style).
    pub fn with_payload(mut self, payload: Value) -> Packet {
        self.payload = Some(payload);
        self
    }

    /// Sets the error (builder style).
    pub fn with_error(mut self, code: ErrorCode, message: impl Into<String>) -> Packet {
        self.error = Some(PacketError {
            code,
            message: message.into(),
        });
        self
    }

    /// Sets the channel (builder style).
    pub fn with_channel(mut self, channel: Option<String>) -> Packet {
        self.connector_channel_id = channel;
        self
    }

    /// Encodes to a JSON text frame.
    pub fn encode(&self) -> String {
        // Serialising plain structs with string keys cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_and_reply() {
        let p = Packet::decode(
            r#"{"schema":"xagent.connector.packet/v1","packet_id":"p1","request_id":"r1","type":"ping"}"#,
        )
        .unwrap();
        assert_eq!(p.kind, PacketType::Ping);
        let r = p.reply(PacketType::Pong);
        assert_eq!(r.request_id.as_deref(), Some("r1"));
        assert_eq!(r.reply_to.as_deref(), Some("p1"));
        let u = Packet::decode(
            r#"{"schema":"xagent.connector.packet/v1","packet_id":"p1","type":"message.push"}"#,
        )
        .unwrap();
        assert_eq!(u.kind, PacketType::Unknown("message.push".into()));
        assert!(Packet::decode("{").is_err());
        assert!(Packet::decode(r#"{"schema":"x","packet_id":"p","type":"ping"}"#).is_err());
        assert!(Packet::decode(
            r#"{"schema":"xagent.connector.packet/v1","packet_id":"p","type":"ping","payload":[1]}"#
        )
        .is_err());
    }
}
