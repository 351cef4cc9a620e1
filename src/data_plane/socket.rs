//! One data-plane WebSocket: frames in, frames out, the first-packet deadline, close. What the
//! frames mean is the [`Session`]'s business; this loop knows nothing of channels.
//!
//! Shutdown: when the process's `shutdown` token fires the loop stops reading; the writer keeps
//! writing until every producer is done (tool calls still running finish and their acks go
//! out), then closes the socket with 1001 (going away). At the drain deadline (`abandon`) the
//! calls still running are answered `tool_call_interrupted` (`Session`), the writer flushes
//! those acks for at most [`ABANDON_FLUSH`], then closes with 1001.
//!
//! Close codes (RFC 6455 §7.4.1): 1001 on shutdown, 1008 (policy violation) when no
//! `connector.hello` completed within [`FIRST_PACKET_TIMEOUT`], 1009 for a frame above
//! [`crate::server::MAX_PACKET_BYTES`], 1002 for a frame that breaks the WebSocket protocol, 1007 for a text frame that is not UTF-8;
//! no code when the client closed first or the connection broke.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use axum::extract::ws::{CloseFrame, Message as WsMessage, WebSocket};
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;

use super::outbox::{Outbox, Outgoing};
use super::session::Session;
use crate::connector::Connector;

/// Time allowed between upgrade and the first packet.
pub const FIRST_PACKET_TIMEOUT: Duration = Duration::from_secs(10);
/// Time allowed for the close handshake once the last packet is written.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// After the drain deadline, how long the writer still flushes the acks of abandoned calls.
pub const ABANDON_FLUSH: Duration = Duration::from_millis(500);

/// Close code when the connector shuts down (1001, going away).
pub const CLOSE_GOING_AWAY: u16 = 1001;
/// Close code for a frame that breaks the WebSocket protocol (1002).
pub const CLOSE_PROTOCOL_ERROR: u16 = 1002;
/// Close code for a text frame whose payload is not UTF-8 (1007, invalid frame payload data).
pub const CLOSE_INVALID_PAYLOAD: u16 = 1007;
/// Close code when no `connector.hello` completed in time (1008, policy violation: spec §6
/// "首包必须是 connector.hello"; the 10 s are this connector's).
pub const CLOSE_POLICY_VIOLATION: u16 = 1008;
/// Close code for a frame or message above the size limit (1009, message too big).
pub const CLOSE_TOO_BIG: u16 = 1009;

/// The close code and reason the reader decided on, for the writer's close frame.
type CloseReason = Arc<OnceLock<(u16, &'static str)>>;

/// The close a read error calls for: 1009 for a frame above the size limit, 1002 for a
/// protocol violation, 1007 for a text frame that is not UTF-8, none for a broken connection
/// (nobody to tell).
fn close_for(error: axum::Error) -> Option<(u16, &'static str)> {
    use tungstenite::error::Error as WsError;
    match error.into_inner().downcast_ref::<WsError>() {
        Some(WsError::Capacity(_)) => Some((CLOSE_TOO_BIG, "packet above the 1 MiB limit")),
        Some(WsError::Protocol(_)) => Some((CLOSE_PROTOCOL_ERROR, "websocket protocol error")),
        Some(WsError::Utf8(_)) => Some((CLOSE_INVALID_PAYLOAD, "text frame is not UTF-8")),
        _ => None,
    }
}

/// Serves one upgraded socket until it closes or shutdown starts.
pub async fn run(connector: Arc<Connector>, socket: WebSocket) {
    let lifecycle = connector.lifecycle().clone();
    let (sink, mut stream) = socket.split();
    let (outbox, queue) = Outbox::new();
    let close: CloseReason = Arc::default();
    let writer = lifecycle.spawn(write_frames(
        Arc::clone(&connector),
        sink,
        queue,
        Arc::clone(&close),
    ));
    let mut changes = connector.inventory().subscribe();
    let mut session = Session::new(connector, outbox);
    let first_deadline = tokio::time::sleep(FIRST_PACKET_TIMEOUT);
    tokio::pin!(first_deadline);
    loop {
        tokio::select! {
            _ = lifecycle.shutdown().cancelled() => {
                let _ = close.set((CLOSE_GOING_AWAY, "connector shutting down"));
                break;
            }
            _ = &mut first_deadline, if !session.greeted() => {
                tracing::debug!(session = session.id(), "no hello in time; closing");
                let _ = close.set((CLOSE_POLICY_VIOLATION, "no connector.hello within 10 s"));
                break;
            }
            _ = changes.changed() => session.on_phones_changed().await,
            frame = stream.next() => match frame {
                Some(Ok(WsMessage::Text(text))) => session.on_text(text.as_str(), Instant::now()).await,
                Some(Ok(WsMessage::Binary(_))) => session.on_binary(Instant::now()).await,
                Some(Err(e)) => {
                    if let Some(code) = close_for(e) {
                        tracing::debug!(session = session.id(), code = code.0, "closing on a bad frame");
                        let _ = close.set(code);
                    }
                    break;
                }
                Some(Ok(WsMessage::Close(_))) | None => break,
                Some(Ok(_)) => {}
            },
        }
    }
    // Dropping the session drops its queue handle: the writer ends once running tasks answered.
    session.end();
    drop(session);
    let _ = writer.await;
}

/// Writes queued packets until every producer is gone (or, past the drain deadline, for
/// [`ABANDON_FLUSH`] more), then closes with the code in `close` — 1001 once shutdown began.
async fn write_frames(
    connector: Arc<Connector>,
    mut sink: SplitSink<WebSocket, WsMessage>,
    mut queue: mpsc::Receiver<Outgoing>,
    close: CloseReason,
) {
    let lifecycle = connector.lifecycle().clone();
    let abandon = lifecycle.abandon().clone();
    // Set at the drain deadline: from then on the writer flushes until this instant only.
    let mut flush_until: Option<tokio::time::Instant> = None;
    let give_up = || Some(tokio::time::Instant::now() + ABANDON_FLUSH);
    loop {
        let out = match flush_until {
            None => tokio::select! {
                out = queue.recv() => out,
                _ = abandon.cancelled() => {
                    flush_until = give_up();
                    continue;
                }
            },
            Some(at) => tokio::time::timeout_at(at, queue.recv())
                .await
                .ok()
                .flatten(),
        };
        let Some(out) = out else { break };
        let send = sink.send(WsMessage::Text(out.packet.encode().into()));
        tokio::pin!(send);
        let mut written = None;
        if flush_until.is_none() {
            tokio::select! {
                r = &mut send => written = Some(r.is_ok()),
                _ = abandon.cancelled() => flush_until = give_up(),
            }
        }
        let written = match (written, flush_until) {
            (Some(w), _) => w,
            (None, Some(at)) => matches!(tokio::time::timeout_at(at, &mut send).await, Ok(Ok(()))),
            (None, None) => false,
        };
        if !written {
            break;
        }
        if let Some(at) = out.received {
            connector.dispatch_stats().record_control(at.elapsed());
        }
    }
    let code = close.get().copied().or_else(|| {
        lifecycle
            .shutdown()
            .is_cancelled()
            .then_some((CLOSE_GOING_AWAY, "connector shutting down"))
    });
    // Past the drain deadline the whole close must fit in `lifecycle::ABANDON_GRACE` (2 s).
    let limit = if flush_until.is_some() {
        ABANDON_FLUSH
    } else {
        CLOSE_TIMEOUT
    };
    if let Some((code, reason)) = code {
        let frame = CloseFrame {
            code,
            reason: reason.into(),
        };
        let _ = tokio::time::timeout(limit, sink.send(WsMessage::Close(Some(frame)))).await;
    }
    let _ = tokio::time::timeout(limit, sink.close()).await;
}
