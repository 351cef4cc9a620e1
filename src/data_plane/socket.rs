//! One data-plane WebSocket: frames in, frames out, the first-packet deadline, close. What the
//! frames mean is the [`Session`]'s business; this loop knows nothing of channels.
//!
//! Shutdown: when the process's `shutdown` token fires the loop stops reading; the writer keeps
//! writing until every producer is done (tool calls still running finish and their acks go
//! out), then closes the socket. At the drain deadline (`abandon`) the writer gives up.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::{Message as WsMessage, WebSocket};
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

/// Serves one upgraded socket until it closes or shutdown starts.
pub async fn run(connector: Arc<Connector>, socket: WebSocket) {
    let lifecycle = connector.lifecycle().clone();
    let (sink, mut stream) = socket.split();
    let (outbox, queue) = Outbox::new();
    let writer = lifecycle.spawn(write_frames(Arc::clone(&connector), sink, queue));
    let mut changes = connector.inventory().subscribe();
    let mut session = Session::new(connector, outbox);
    let first_deadline = tokio::time::sleep(FIRST_PACKET_TIMEOUT);
    tokio::pin!(first_deadline);
    loop {
        tokio::select! {
            _ = lifecycle.shutdown().cancelled() => break,
            _ = &mut first_deadline, if !session.greeted() => {
                tracing::debug!(session = session.id(), "no hello in time; closing");
                break;
            }
            _ = changes.changed() => session.on_phones_changed().await,
            frame = stream.next() => match frame {
                Some(Ok(WsMessage::Text(text))) => session.on_text(text.as_str(), Instant::now()).await,
                Some(Ok(WsMessage::Binary(_))) => session.on_binary(Instant::now()).await,
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
        }
    }
    // Dropping the session drops its queue handle: the writer ends once running tasks answered.
    session.end();
    drop(session);
    let _ = writer.await;
}

/// Writes queued packets until every producer is gone (or the drain deadline), then closes.
async fn write_frames(
    connector: Arc<Connector>,
    mut sink: SplitSink<WebSocket, WsMessage>,
    mut queue: mpsc::Receiver<Outgoing>,
) {
    let abandon = connector.lifecycle().abandon().clone();
    loop {
        let out = tokio::select! {
            out = queue.recv() => out,
            _ = abandon.cancelled() => None,
        };
        let Some(out) = out else { break };
        let written = tokio::select! {
            r = sink.send(WsMessage::Text(out.packet.encode().into())) => r.is_ok(),
            _ = abandon.cancelled() => false,
        };
        if !written {
            break;
        }
        if let Some(at) = out.received {
            connector.dispatch_stats().record_control(at.elapsed());
        }
    }
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, sink.close()).await;
}
