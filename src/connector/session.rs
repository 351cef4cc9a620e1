//! One data-plane WebSocket session (spec §6–8): the hello gate, per-packet dispatch, routing by
//! envelope `connector_channel_id`, and descriptor pushes when a bound phone's state changes.
//!
//! Recoverable errors are answered with an `error` packet (or the ack's `error`) and the socket
//! stays open. Tool calls run as tasks so `ping` and other channels are never blocked by a slow
//! phone.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{Message as WsMessage, WebSocket};
use futures_util::{SinkExt, StreamExt};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::claim::AuthStatus;
use super::{Connector, Route};
use crate::protocol::descriptor::ConnectionStatus;
use crate::protocol::payloads::{
    parse_version, AuthCancelPayload, AuthStartPayload, AuthStatusPayload, HelloPayload,
    ToolInvokePayload,
};
use crate::protocol::{ErrorCode, Packet, PacketType, CARD_ID, DEVICE_PROFILE, PROTOCOL_VERSION};

/// Time allowed between upgrade and the first packet.
pub const FIRST_PACKET_TIMEOUT: Duration = Duration::from_secs(10);

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// A packet on its way to the socket; `received` is when the frame it answers arrived, for
/// session-answered packets whose dispatch latency is recorded once written.
pub struct Outgoing {
    packet: Packet,
    received: Option<Instant>,
}

impl From<Packet> for Outgoing {
    fn from(packet: Packet) -> Outgoing {
        Outgoing {
            packet,
            received: None,
        }
    }
}

struct Session {
    id: u64,
    hello_done: bool,
    acked_connector_id: Option<String>,
    tx: mpsc::UnboundedSender<Outgoing>,
    last_status: HashMap<String, ConnectionStatus>,
    /// Arrival of the frame being handled.
    received: Instant,
}

impl Session {
    /// Queues a reply answered by the session itself (its dispatch latency is recorded).
    fn reply(&self, packet: Packet) {
        let _ = self.tx.send(Outgoing {
            packet,
            received: Some(self.received),
        });
    }
}

/// Serves one upgraded socket until it closes or `shutdown` fires.
pub async fn run(connector: Arc<Connector>, socket: WebSocket, shutdown: CancellationToken) {
    let (mut sink, mut stream) = socket.split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Outgoing>();
    let stats_owner = Arc::clone(&connector);
    let writer = tokio::spawn(async move {
        while let Some(out) = rx.recv().await {
            if sink
                .send(WsMessage::Text(out.packet.encode().into()))
                .await
                .is_err()
            {
                break;
            }
            if let Some(at) = out.received {
                stats_owner.dispatch_stats().record_control(at.elapsed());
            }
        }
        let _ = sink.close().await;
    });
    let mut s = Session {
        id: NEXT_SESSION.fetch_add(1, Ordering::Relaxed),
        hello_done: false,
        acked_connector_id: None,
        tx,
        last_status: HashMap::new(),
        received: Instant::now(),
    };
    let mut changes = connector.inventory().subscribe();
    let first_deadline = tokio::time::sleep(FIRST_PACKET_TIMEOUT);
    tokio::pin!(first_deadline);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = &mut first_deadline, if !s.hello_done => {
                tracing::debug!(session = s.id, "no hello in time; closing");
                break;
            }
            _ = changes.changed() => push_descriptor_changes(&connector, &mut s),
            frame = stream.next() => match frame {
                Some(Ok(WsMessage::Text(text))) => {
                    s.received = Instant::now();
                    handle_text(&connector, &mut s, text.as_str()).await
                }
                Some(Ok(WsMessage::Binary(_))) => {
                    s.received = Instant::now();
                    send_error(&s, None, ErrorCode::InvalidPacket, "the data plane carries text frames only")
                }
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
        }
    }
    connector.drop_session(s.id);
    if s.hello_done {
        connector.lease_release(s.id);
    }
    drop(s);
    let _ = writer.await;
}

fn send_error(s: &Session, req: Option<&Packet>, code: ErrorCode, message: &str) {
    let p = match req {
        Some(r) => r.reply(PacketType::Error),
        None => Packet::new(PacketType::Error),
    };
    s.reply(p.with_error(code, message));
}

async fn handle_text(connector: &Arc<Connector>, s: &mut Session, text: &str) {
    let packet = match Packet::decode(text) {
        Ok(p) => p,
        Err(e) => {
            return s.reply(Packet::invalid_frame_error(
                text,
                ErrorCode::InvalidPacket,
                &e.to_string(),
            ))
        }
    };
    if packet.kind == PacketType::ConnectorHello {
        return hello(connector, s, &packet);
    }
    if !s.hello_done {
        return send_error(
            s,
            Some(&packet),
            ErrorCode::HelloRequired,
            "connector.hello must complete first",
        );
    }
    match &packet.kind {
        PacketType::Ping => {
            s.reply(packet.reply(PacketType::Pong));
        }
        PacketType::ChannelOpen => channel_open(connector, s, packet).await,
        PacketType::Pong | PacketType::Error => {}
        PacketType::ChannelClose
        | PacketType::DescriptorGet
        | PacketType::AuthStart
        | PacketType::AuthStatus
        | PacketType::AuthCancel
        | PacketType::AuthLogout
        | PacketType::ToolInvoke => {
            if let Some(channel) = routed_channel(connector, s, &packet) {
                user_packet(connector, s, packet, channel);
            }
        }
        other => send_error(
            s,
            Some(&packet),
            ErrorCode::UnsupportedPacket,
            &format!(
                "packet type {:?} is not supported by this connector",
                other.as_str()
            ),
        ),
    }
}

fn hello(connector: &Arc<Connector>, s: &mut Session, packet: &Packet) {
    let Some(payload) = packet.payload.clone() else {
        return send_error(
            s,
            Some(packet),
            ErrorCode::InvalidPacket,
            "connector.hello needs a payload with connector_card_id, protocol_version and supported_profiles",
        );
    };
    let p: HelloPayload = match serde_json::from_value(payload) {
        Ok(p) => p,
        Err(e) => {
            return send_error(
                s,
                Some(packet),
                ErrorCode::InvalidPacket,
                &format!("bad hello payload: {e}"),
            )
        }
    };
    if p.connector_card_id != CARD_ID {
        return send_error(
            s,
            Some(packet),
            ErrorCode::ConnectorCardIdMismatch,
            "connector_card_id must be \"device.adb\"",
        );
    }
    match p
        .protocol_version
        .as_ref()
        .map(|v| v.as_str().map(parse_version))
    {
        Some(Some(Some(v))) if v >= (3, 0) => {}
        Some(None) => {
            return send_error(
                s,
                Some(packet),
                ErrorCode::UnsupportedProtocolVersion,
                "protocol_version must be a string such as \"3.0\"",
            )
        }
        _ => {
            return send_error(
                s,
                Some(packet),
                ErrorCode::UnsupportedProtocolVersion,
                "protocol_version 3.0 or later is required",
            )
        }
    }
    match &p.supported_profiles {
        None => {
            return send_error(
                s,
                Some(packet),
                ErrorCode::UnsupportedProfile,
                "supported_profiles is required",
            )
        }
        Some(list) if !list.iter().any(|x| x == DEVICE_PROFILE) => {
            return send_error(
                s,
                Some(packet),
                ErrorCode::UnsupportedProfile,
                "supported_profiles must include xagent.device.v1",
            )
        }
        Some(_) => {}
    }
    let requested = p.connector_id.as_deref().filter(|id| !id.is_empty());
    if let (Some(acked), Some(req)) = (&s.acked_connector_id, requested) {
        if acked != req {
            return send_error(
                s,
                Some(packet),
                ErrorCode::ConnectorIdMismatch,
                "this socket already said hello with another connector_id",
            );
        }
    }
    s.hello_done = true;
    connector.lease_hold(s.id);
    s.acked_connector_id = Some(connector.connector_id());
    let ack = packet
        .reply(PacketType::ConnectorHelloAck)
        .with_payload(json!({
            "connector_card_id": CARD_ID,
            "connector_id": connector.connector_id(),
            "protocol_version": PROTOCOL_VERSION,
        }));
    s.reply(ack);
}

/// Checks the envelope channel of a user-level packet (spec §7 routing, §8.23 codes).
fn routed_channel(connector: &Connector, s: &Session, packet: &Packet) -> Option<String> {
    let Some(channel) = packet
        .connector_channel_id
        .as_deref()
        .filter(|c| !c.is_empty())
    else {
        send_error(
            s,
            Some(packet),
            ErrorCode::ConnectorChannelIdRequired,
            "envelope connector_channel_id is required",
        );
        return None;
    };
    if !connector.channel_known(channel) {
        send_error(
            s,
            Some(packet),
            ErrorCode::ConnectorChannelNotOwned,
            "connector_channel_id is not a channel of this connector",
        );
        return None;
    }
    if !connector.is_open_on(channel, s.id) {
        send_error(
            s,
            Some(packet),
            ErrorCode::ChannelNotOpen,
            "channel.open must complete on this connection first",
        );
        return None;
    }
    Some(channel.to_string())
}

/// Opens (or restores) a channel inline, so its status is the session's baseline for pushes.
async fn channel_open(connector: &Arc<Connector>, s: &mut Session, packet: Packet) {
    let route = Route {
        session_id: s.id,
        tx: s.tx.clone(),
    };
    let requested = packet
        .connector_channel_id
        .clone()
        .filter(|c| !c.is_empty());
    let reply = match connector.open_channel(requested.as_deref(), route).await {
        Ok((id, restored)) => {
            let d = connector.descriptor(&id);
            s.last_status.insert(id.clone(), d.connection.status);
            packet
                .reply(PacketType::ChannelOpenAck)
                .with_channel(Some(id.clone()))
                .with_payload(json!({
                    "connector_channel_id": id,
                    "connection_descriptor": d.to_value(),
                    // false when an old id was not recognised and a new channel was issued (§8.3)
                    "restored": restored,
                }))
        }
        Err(_) => packet
            .reply(PacketType::ChannelOpenAck)
            .with_error(ErrorCode::InternalError, "could not persist the channel"),
    };
    // Not a dispatch sample: the ack waited for a SQLite commit.
    let _ = s.tx.send(reply.into());
}

fn user_packet(connector: &Arc<Connector>, s: &mut Session, packet: Packet, channel: String) {
    let connector = Arc::clone(connector);
    let tx = s.tx.clone();
    let session_id = s.id;
    if packet.kind == PacketType::DescriptorGet {
        let d = connector.descriptor(&channel);
        s.last_status.insert(channel.clone(), d.connection.status);
        s.reply(
            packet
                .reply(PacketType::DescriptorGetAck)
                .with_payload(json!({"connection_descriptor": d.to_value()})),
        );
        return;
    }
    if packet.kind == PacketType::ChannelClose {
        connector.close_channel(&channel, session_id);
        s.last_status.remove(&channel);
        s.reply(
            packet
                .reply(PacketType::ChannelCloseAck)
                .with_payload(json!({"status": "ok"})),
        );
        return;
    }
    let received = s.received;
    tokio::spawn(async move {
        if packet.kind == PacketType::ToolInvoke {
            connector.dispatch_stats().record_tool(received.elapsed());
        }
        let reply = match packet.kind {
            PacketType::AuthStart => auth_start(&connector, &packet, &channel).await,
            PacketType::AuthStatus => auth_status(&connector, &packet, &channel),
            PacketType::AuthCancel => auth_cancel(&connector, &packet, &channel),
            PacketType::AuthLogout => auth_logout(&connector, &packet, &channel).await,
            _ => tool_invoke(&connector, &packet, &channel, &tx).await,
        };
        let _ = tx.send(reply.into());
    });
}

fn payload_of<T: serde::de::DeserializeOwned + Default>(packet: &Packet) -> Result<T, String> {
    match &packet.payload {
        None => Ok(T::default()),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| e.to_string()),
    }
}

async fn auth_start(connector: &Connector, packet: &Packet, channel: &str) -> Packet {
    let p: AuthStartPayload = match payload_of(packet) {
        Ok(p) => p,
        Err(e) => {
            return packet.reply(PacketType::AuthStartAck).with_error(
                ErrorCode::InvalidPacket,
                format!("bad auth.start payload: {e}"),
            )
        }
    };
    let (session_id, result) = connector.claim(channel, &p).await;
    match result {
        Ok(()) => packet
            .reply(PacketType::AuthStartAck)
            .with_payload(connector.auth_payload(
                channel,
                &p.flow_id,
                &session_id,
                AuthStatus::Authenticated,
                "phone bound to this channel",
            )),
        Err(e) => packet
            .reply(PacketType::AuthStartAck)
            .with_payload(connector.auth_payload(
                channel,
                &p.flow_id,
                &session_id,
                AuthStatus::Failed,
                &e.message,
            ))
            .with_error(e.code, e.message),
    }
}

fn auth_status(connector: &Connector, packet: &Packet, channel: &str) -> Packet {
    let p: AuthStatusPayload = payload_of(packet).unwrap_or_default();
    match connector.auth_session(channel, &p.auth_session_id) {
        Some(sess) => {
            let status = if sess.status == AuthStatus::Authenticated
                && connector.binding(channel).is_none()
            {
                AuthStatus::Canceled
            } else {
                sess.status
            };
            let flow = p
                .flow_id
                .unwrap_or_else(|| crate::protocol::card::CLAIM_FLOW_ID.to_string());
            packet
                .reply(PacketType::AuthStatusAck)
                .with_payload(connector.auth_payload(
                    channel,
                    &flow,
                    &p.auth_session_id,
                    status,
                    "",
                ))
        }
        None => packet.reply(PacketType::AuthStatusAck).with_error(
            ErrorCode::AuthSessionNotFound,
            "unknown auth_session_id for this channel",
        ),
    }
}

fn auth_cancel(connector: &Connector, packet: &Packet, channel: &str) -> Packet {
    let p: AuthCancelPayload = payload_of(packet).unwrap_or_default();
    let mut payload =
        json!({"connector_channel_id": channel, "auth_session_id": p.auth_session_id});
    match connector.auth_session(channel, &p.auth_session_id) {
        // Claims complete within auth.start, so there is never an unfinished session to cancel.
        Some(_) => {
            payload["status"] = json!("ignored");
            payload["auth_status"] = json!(if connector.binding(channel).is_some() {
                "authenticated"
            } else {
                "unauthenticated"
            });
            payload["message"] = json!("the claim already finished");
            payload["connection_descriptor"] = connector.descriptor(channel).to_value();
        }
        None => {
            payload["status"] = json!("not_found");
            payload["message"] = json!("unknown auth_session_id");
        }
    }
    packet
        .reply(PacketType::AuthCancelAck)
        .with_payload(payload)
}

async fn auth_logout(connector: &Connector, packet: &Packet, channel: &str) -> Packet {
    match connector.logout(channel).await {
        Ok(()) => packet.reply(PacketType::AuthLogoutAck).with_payload(json!({
            "status": "ok",
            "connection_descriptor": connector.descriptor(channel).to_value(),
        })),
        Err(e) => packet
            .reply(PacketType::AuthLogoutAck)
            .with_error(e.code, e.message),
    }
}

async fn tool_invoke(
    connector: &Connector,
    packet: &Packet,
    channel: &str,
    tx: &mpsc::UnboundedSender<Outgoing>,
) -> Packet {
    let p: ToolInvokePayload = match packet.payload.clone().map(serde_json::from_value) {
        Some(Ok(p)) => p,
        Some(Err(e)) => {
            // serde names the field and the expected type (e.g. context.tool_call_id: string).
            return packet.reply(PacketType::ToolInvokeAck).with_error(
                ErrorCode::InvalidPacket,
                format!("bad tool.invoke payload (tool_id: string, arguments: object, context.tool_call_id: string): {e}"),
            );
        }
        None => {
            return packet.reply(PacketType::ToolInvokeAck).with_error(
                ErrorCode::InvalidPacket,
                "tool.invoke payload needs tool_id (string) and arguments (object)",
            )
        }
    };
    let span = tracing::info_span!("tool", channel = channel, tool = %p.tool_id);
    let started = std::time::Instant::now();
    let progress = |fraction: f64, message: &str| {
        let push = Packet::new(PacketType::ToolProgressPush)
            .with_channel(Some(channel.to_string()))
            .with_payload(json!({
                "tool_id": p.tool_id,
                "status": "running",
                "message": message,
                "progress": fraction,
            }));
        let mut push = push;
        // Correlates the push with the call (spec §8.20 only recommends the payload).
        push.request_id = packet.request_id.clone();
        let _ = tx.send(push.into());
    };
    let result =
        tracing::Instrument::instrument(connector.invoke_tool(channel, &p, &progress), span).await;
    tracing::debug!(tool = %p.tool_id, ms = started.elapsed().as_millis() as u64, ok = result.is_ok(), "tool call finished");
    let ack = packet.reply(PacketType::ToolInvokeAck);
    match result {
        Ok(v) => ack.with_payload(json!({"tool_id": p.tool_id, "result": v})),
        Err(e) => ack
            .with_payload(json!({"tool_id": p.tool_id}))
            .with_error(e.code, e.message),
    }
}

/// Pushes `connection.descriptor.push` for every channel of this session whose status changed.
fn push_descriptor_changes(connector: &Connector, s: &mut Session) {
    for channel in connector.channels_of(s.id) {
        let d = connector.descriptor(&channel);
        let status = d.connection.status;
        if s.last_status.get(&channel) == Some(&status) {
            continue;
        }
        s.last_status.insert(channel.clone(), status);
        let push = Packet::new(PacketType::DescriptorPush)
            .with_channel(Some(channel.clone()))
            .with_payload(json!({"connection_descriptor": d.to_value()}));
        let _ = s.tx.send(push.into());
    }
}
