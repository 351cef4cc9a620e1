//! Typed payloads of the packets this connector sends (spec §8), and [`Reply`], the answer a
//! handler returns. Field names and values are the wire's; tests validate every packet against
//! the official schemas (`tests/schemas/`).

use serde::Serialize;
use serde_json::Value;

use crate::connector::auth_session::AuthStatus;
use crate::protocol::descriptor::Descriptor;
use crate::protocol::{Packet, PacketType};

/// `connector.hello.ack` payload (§8.2).
#[derive(Debug, Clone, Serialize)]
pub struct HelloAck {
    /// Always `device.adb`.
    pub connector_card_id: &'static str,
    /// The persisted runtime-instance id.
    pub connector_id: String,
    /// Always `3.0`.
    pub protocol_version: &'static str,
}

/// `channel.open.ack` payload (§8.4).
#[derive(Debug, Clone, Serialize)]
pub struct ChannelOpenAck {
    /// The opened channel.
    pub connector_channel_id: String,
    /// Its descriptor.
    pub connection_descriptor: Descriptor,
    /// `false` when an old id was not recognised and a new channel was issued (§8.3).
    pub restored: bool,
}

/// `{"status": "ok"}` (`channel.close.ack`, §8.6).
#[derive(Debug, Clone, Serialize)]
pub struct StatusOk {
    /// Always `ok`.
    pub status: &'static str,
}

/// `{"connection_descriptor": …}` (`connection.descriptor.get.ack` §8.16, `.push` §8.17).
#[derive(Debug, Clone, Serialize)]
pub struct DescriptorPayload {
    /// The channel's descriptor.
    pub connection_descriptor: Descriptor,
}

/// `auth.start.ack` / `auth.status.ack` payload (§8.8, §8.10).
#[derive(Debug, Clone, Serialize)]
pub struct AuthAck {
    /// The channel.
    pub connector_channel_id: String,
    /// The flow.
    pub flow_id: String,
    /// The auth session.
    pub auth_session_id: String,
    /// `pending`, `scanned`, `authenticated`, `expired`, `failed` or `unauthenticated`.
    pub status: AuthStatus,
    /// Human-readable outcome (empty for `auth.status` of a form flow).
    pub message: String,
    /// The QR's text, when a code is issued (`auth.start`, refresh) of flow `adb_qr_pair`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qr_code_text: Option<String>,
    /// The QR as a PNG data URL, with `qr_code_text`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qr_code_image: Option<String>,
    /// Unix ms the QR code expires (`adb_qr_pair`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
    /// Suggested `auth.status` polling interval, ms (`adb_qr_pair`, while unfinished).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval_millis: Option<u64>,
    /// The descriptor, when authenticated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection_descriptor: Option<Descriptor>,
}

/// `auth.cancel.ack` payload (§8.12).
#[derive(Debug, Clone, Serialize)]
pub struct AuthCancelAck {
    /// The channel.
    pub connector_channel_id: String,
    /// The session asked about.
    pub auth_session_id: String,
    /// `canceled` (a QR attempt stopped), `ignored` (already finished) or `not_found`.
    pub status: &'static str,
    /// `authenticated` / `unauthenticated`, for a known session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_status: Option<&'static str>,
    /// Why.
    pub message: &'static str,
    /// The descriptor, for a known session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection_descriptor: Option<Descriptor>,
}

/// `auth.logout.ack` payload (§8.14).
#[derive(Debug, Clone, Serialize)]
pub struct AuthLogoutAck {
    /// Always `ok`.
    pub status: &'static str,
    /// The channel's descriptor after the release (`created`).
    pub connection_descriptor: Descriptor,
}

/// `tool.invoke.ack` payload (§8.19): `result` on success; on failure only `tool_id` (the
/// envelope carries `error`), and no payload for a tool not in the card (never repeated).
#[derive(Debug, Clone, Serialize)]
pub struct ToolInvokeAck {
    /// The tool called.
    pub tool_id: String,
    /// The tool's result object.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

/// `tool.progress.push` payload (§8.20).
#[derive(Debug, Clone, Serialize)]
pub struct ToolProgressPush {
    /// The tool running.
    pub tool_id: String,
    /// Always `running`.
    pub status: &'static str,
    /// What it is doing.
    pub message: String,
    /// 0.0–1.0.
    pub progress: f64,
}

/// A handler's normal answer to a request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// `connector.hello.ack`.
    HelloAck(HelloAck),
    /// `pong` (no payload).
    Pong,
    /// `channel.open.ack` (its envelope names the opened channel).
    ChannelOpenAck(ChannelOpenAck),
    /// `channel.close.ack`.
    ChannelCloseAck,
    /// `connection.descriptor.get.ack`.
    DescriptorGetAck(DescriptorPayload),
    /// `auth.start.ack`.
    AuthStartAck(AuthAck),
    /// `auth.status.ack`.
    AuthStatusAck(AuthAck),
    /// `auth.cancel.ack`.
    AuthCancelAck(AuthCancelAck),
    /// `auth.logout.ack`.
    AuthLogoutAck(AuthLogoutAck),
    /// `tool.invoke.ack`.
    ToolInvokeAck(ToolInvokeAck),
}

/// A typed payload as the envelope's JSON object (these structs always serialise).
pub fn to_payload<T: Serialize>(payload: &T) -> Value {
    serde_json::to_value(payload).unwrap_or_default()
}

impl Reply {
    /// The packet answering `request` (`reply_to`, `request_id` and channel echoed).
    pub fn into_packet(self, request: &Packet) -> Packet {
        let (kind, payload) = match &self {
            Reply::HelloAck(p) => (PacketType::ConnectorHelloAck, Some(to_payload(p))),
            Reply::Pong => (PacketType::Pong, None),
            Reply::ChannelOpenAck(p) => (PacketType::ChannelOpenAck, Some(to_payload(p))),
            Reply::ChannelCloseAck => (
                PacketType::ChannelCloseAck,
                Some(to_payload(&StatusOk { status: "ok" })),
            ),
            Reply::DescriptorGetAck(p) => (PacketType::DescriptorGetAck, Some(to_payload(p))),
            Reply::AuthStartAck(p) => (PacketType::AuthStartAck, Some(to_payload(p))),
            Reply::AuthStatusAck(p) => (PacketType::AuthStatusAck, Some(to_payload(p))),
            Reply::AuthCancelAck(p) => (PacketType::AuthCancelAck, Some(to_payload(p))),
            Reply::AuthLogoutAck(p) => (PacketType::AuthLogoutAck, Some(to_payload(p))),
            Reply::ToolInvokeAck(p) => (PacketType::ToolInvokeAck, Some(to_payload(p))),
        };
        let mut packet = request.reply(kind);
        packet.payload = payload;
        if let Reply::ChannelOpenAck(p) = self {
            packet.connector_channel_id = Some(p.connector_channel_id);
        }
        packet
    }
}

/// `connection.descriptor.push` for `channel` (§8.17).
pub fn descriptor_push(channel: &str, descriptor: Descriptor) -> Packet {
    Packet::new(PacketType::DescriptorPush)
        .with_channel(Some(channel.to_string()))
        .with_payload(to_payload(&DescriptorPayload {
            connection_descriptor: descriptor,
        }))
}
