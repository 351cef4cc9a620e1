//! One socket's session (spec §6–8): the hello gate, routing by envelope
//! `connector_channel_id`, dispatch of each [`Request`] to its handler, and the answer.
//!
//! Recoverable errors are answered with an `error` packet (or the ack's `error`) and the socket
//! stays open. `auth.*` and `tool.invoke` run as tracked tasks so `ping` and other channels are
//! never blocked by a slow phone; the rest is answered inline.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::error::{answer, frame_error, DataPlaneError};
use super::hello::Greeting;
use super::outbox::Outbox;
use super::reply::Reply;
use super::request::Request;
use super::{auth, channel, descriptor, hello, tool};
use crate::connector::{Connector, SessionId};
use crate::protocol::descriptor::ConnectionStatus;
use crate::protocol::{ErrorCode, Packet, PacketType};

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// Per-socket state.
pub struct Session {
    id: SessionId,
    connector: Arc<Connector>,
    outbox: Outbox,
    greeting: Greeting,
    /// Last status pushed or answered per open channel (baseline of descriptor pushes).
    last_status: HashMap<String, ConnectionStatus>,
}

/// Whether a reply counts as a dispatch sample (answered inline without storage or phone
/// work; see [`crate::connector::dispatch_stats`]).
#[derive(Clone, Copy)]
enum Sample {
    Control(Instant),
    None,
}

impl Session {
    /// A new session writing to `outbox`.
    pub fn new(connector: Arc<Connector>, outbox: Outbox) -> Session {
        Session {
            id: NEXT_SESSION.fetch_add(1, Ordering::Relaxed),
            connector,
            outbox,
            greeting: Greeting::default(),
            last_status: HashMap::new(),
        }
    }

    /// Process-unique id of this session.
    pub fn id(&self) -> SessionId {
        self.id
    }

    /// Whether hello completed.
    pub fn greeted(&self) -> bool {
        self.greeting.done
    }

    /// The socket closed: its routes are dropped and its lease hold released.
    pub fn end(&mut self) {
        self.connector.drop_session(self.id);
        if self.greeting.done {
            self.connector.lease_release(self.id);
        }
    }

    /// A binary frame: refused (the data plane carries text frames only).
    pub async fn on_binary(&mut self, received: Instant) {
        let p = frame_error(None, "the data plane carries text frames only");
        self.outbox.send(p, Some(received)).await;
    }

    /// The inventory changed: pushes the descriptor of every channel whose status changed.
    pub async fn on_phones_changed(&mut self) {
        for push in descriptor::changes(&self.connector, self.id, &mut self.last_status) {
            self.outbox.send(push, None).await;
        }
    }

    /// A text frame: decode, admit, dispatch, answer.
    pub async fn on_text(&mut self, text: &str, received: Instant) {
        let packet = match Packet::decode(text) {
            Ok(p) => p,
            Err(e) => {
                let p = frame_error(Some(text), &e.to_string());
                return self.outbox.send(p, Some(received)).await;
            }
        };
        let channel = match self.admit(&packet) {
            Ok(channel) => channel,
            Err(e) => {
                return self
                    .answer(&packet, Err(e), Sample::Control(received))
                    .await
            }
        };
        let request = match Request::decode(&packet) {
            Ok(r) => r,
            Err(e) => {
                let sample = match channel {
                    Some(_) => Sample::None,
                    None => Sample::Control(received),
                };
                return self.answer(&packet, Err(e), sample).await;
            }
        };
        self.dispatch(packet, request, channel, received).await;
    }

    /// The hello gate and routing (spec §7, §8.23): `Ok(Some(channel))` for a user-level
    /// packet on a channel open on this socket, `Ok(None)` for session-level packets.
    fn admit(&self, packet: &Packet) -> Result<Option<String>, DataPlaneError> {
        if packet.kind == crate::protocol::PacketType::ConnectorHello {
            return Ok(None);
        }
        if !self.greeting.done {
            return Err(DataPlaneError::rejected(
                ErrorCode::HelloRequired,
                "connector.hello must complete first",
            ));
        }
        if !Request::is_channel_scoped(&packet.kind) {
            return Ok(None);
        }
        let Some(channel) = packet
            .connector_channel_id
            .as_deref()
            .filter(|c| !c.is_empty())
        else {
            return Err(DataPlaneError::rejected(
                ErrorCode::ConnectorChannelIdRequired,
                "envelope connector_channel_id is required",
            ));
        };
        if !self.connector.channel_known(channel) {
            return Err(DataPlaneError::rejected(
                ErrorCode::ConnectorChannelNotOwned,
                "connector_channel_id is not a channel of this connector",
            ));
        }
        if !self.connector.is_open_on(channel, self.id) {
            return Err(DataPlaneError::rejected(
                ErrorCode::ChannelNotOpen,
                "channel.open must complete on this connection first",
            ));
        }
        Ok(Some(channel.to_string()))
    }

    async fn dispatch(
        &mut self,
        packet: Packet,
        request: Request,
        channel: Option<String>,
        received: Instant,
    ) {
        let connector = Arc::clone(&self.connector);
        let channel = channel.unwrap_or_default();
        let control = Sample::Control(received);
        match request {
            Request::Hello(p) => {
                let r = hello::handle(&connector, &mut self.greeting, self.id, &p);
                self.answer(&packet, r, control).await
            }
            Request::Ping => self.answer(&packet, Ok(Reply::Pong), control).await,
            Request::Pong | Request::Error => {}
            Request::ChannelOpen { requested } => {
                let r = channel::open(&connector, self.id, requested, &mut self.last_status).await;
                // Not a dispatch sample: the ack waited for a SQLite commit.
                self.answer(&packet, r, Sample::None).await
            }
            Request::ChannelClose => {
                let r = channel::close(&connector, self.id, &channel, &mut self.last_status);
                self.answer(&packet, Ok(r), control).await
            }
            Request::DescriptorGet => {
                let r = descriptor::get(&connector, &channel, &mut self.last_status);
                self.answer(&packet, Ok(r), control).await
            }
            Request::AuthStart(p) => self.spawn(packet, async move {
                auth::start(&connector, &channel, &p).await
            }),
            Request::AuthStatus(p) => {
                self.spawn(packet, async move { auth::status(&connector, &channel, p) })
            }
            Request::AuthCancel(p) => {
                self.spawn(
                    packet,
                    async move { auth::cancel(&connector, &channel, &p) },
                )
            }
            Request::AuthLogout => {
                self.spawn(
                    packet,
                    async move { auth::logout(&connector, &channel).await },
                )
            }
            Request::ToolInvoke(p) => {
                let outbox = self.outbox.clone();
                let request_id = packet.request_id.clone();
                // Taken here, in the order the packets arrive, not in the spawned task.
                let ticket = connector.side_effect_ticket(&channel, &p.tool_id);
                self.spawn(packet, async move {
                    connector.dispatch_stats().record_tool(received.elapsed());
                    tool::invoke(&connector, &channel, request_id, &p, ticket, &outbox).await
                })
            }
            // The type is the caller's string: never repeated.
            Request::Unknown(_) => {
                let e = DataPlaneError::rejected(
                    ErrorCode::UnsupportedPacket,
                    "this packet `type` is not served by this connector, which takes connector.hello, channel.open, channel.close, connection.descriptor.get, auth.start, auth.status, auth.cancel, auth.logout, tool.invoke, ping, pong and error",
                );
                self.answer(&packet, Err(e), control).await
            }
        }
    }

    /// Queues the answer to `request`.
    async fn answer(
        &self,
        request: &Packet,
        result: Result<Reply, DataPlaneError>,
        sample: Sample,
    ) {
        let received = match sample {
            Sample::Control(at) => Some(at),
            Sample::None => None,
        };
        self.outbox.send(answer(request, result), received).await;
    }

    /// Runs a handler as a tracked task and queues its answer. At the drain deadline the task
    /// is dropped and answered [`abandoned_error`] (a side-effecting call stays `running` in the
    /// journal, so a repeat after the restart is `tool_call_interrupted` as well).
    fn spawn<F>(&self, request: Packet, work: F)
    where
        F: Future<Output = Result<Reply, DataPlaneError>> + Send + 'static,
    {
        let outbox = self.outbox.clone();
        let lifecycle = self.connector.lifecycle().clone();
        let abandon = lifecycle.abandon().clone();
        lifecycle.spawn(async move {
            tokio::select! {
                result = work => outbox.send(answer(&request, result), None).await,
                _ = abandon.cancelled() => {
                    tracing::warn!(
                        packet = request.kind.as_str(),
                        request_id = request.request_id.as_deref().unwrap_or(""),
                        "request abandoned at the shutdown deadline; a journaled call stays interrupted"
                    );
                    outbox.try_send(answer(&request, Err(abandoned_error(&request))));
                }
            }
        });
    }
}

/// The answer to a request still running at the drain deadline: `tool_call_interrupted` for a
/// tool call (its effect on the phone is unknown, as for a repeat after a restart,
/// `connector::invoke`), `internal_error` for the rest.
fn abandoned_error(request: &Packet) -> DataPlaneError {
    if request.kind == PacketType::ToolInvoke {
        DataPlaneError::failed(
            ErrorCode::ToolCallInterrupted,
            "the connector shut down before this call finished; its effect on the phone is unknown — observe the phone, then call with a new tool_call_id",
        )
    } else {
        DataPlaneError::failed(
            ErrorCode::InternalError,
            "the connector shut down before answering; send the request again after it restarts",
        )
    }
}
