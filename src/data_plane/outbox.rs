//! The bounded queue of packets on their way to one socket.
//!
//! [`OUTBOX_CAPACITY`] packets at most: when a client stops reading, the socket's writer
//! blocks, the queue fills, and producers wait ([`Outbox::send`]) — the session loop stops
//! reading the client's frames and tool tasks hold their acks — instead of memory growing.
//! The one producer outside async code, a tool's progress callback, uses
//! [`Outbox::push_progress`], which drops the push when the queue is full: progress is
//! advisory and the ack that follows supersedes it.

use std::time::Instant;

use tokio::sync::mpsc;

use crate::protocol::Packet;

/// Packets queued per socket before producers wait.
pub const OUTBOX_CAPACITY: usize = 256;

/// A packet on its way to the socket; `received` is when the frame it answers arrived, for
/// packets whose dispatch latency is recorded once written (see
/// [`crate::connector::dispatch_stats`]).
pub struct Outgoing {
    /// The packet.
    pub packet: Packet,
    /// Arrival of the frame it answers, when it is a dispatch sample.
    pub received: Option<Instant>,
}

/// Producer side of a socket's queue; cheap to clone.
#[derive(Clone)]
pub struct Outbox {
    tx: mpsc::Sender<Outgoing>,
}

impl Outbox {
    /// A queue of [`OUTBOX_CAPACITY`] and its consumer.
    pub fn new() -> (Outbox, mpsc::Receiver<Outgoing>) {
        let (tx, rx) = mpsc::channel(OUTBOX_CAPACITY);
        (Outbox { tx }, rx)
    }

    /// Queues `packet`, waiting while the queue is full. A socket already gone drops it.
    pub async fn send(&self, packet: Packet, received: Option<Instant>) {
        let _ = self.tx.send(Outgoing { packet, received }).await;
    }

    /// Queues a progress push without waiting; dropped when the queue is full or the socket
    /// gone (returns whether it was queued).
    pub fn push_progress(&self, packet: Packet) -> bool {
        self.tx
            .try_send(Outgoing {
                packet,
                received: None,
            })
            .is_ok()
    }

    /// Queues `packet` without waiting; `false` when the queue is full or the socket gone.
    /// For the acks of calls abandoned at the drain deadline, when the writer only flushes
    /// for [`super::socket::ABANDON_FLUSH`] more.
    pub fn try_send(&self, packet: Packet) -> bool {
        self.tx
            .try_send(Outgoing {
                packet,
                received: None,
            })
            .is_ok()
    }
}
