//! One ADB stream as a service sees it: a reader of host `WRTE` payloads and a writer that
//! sends `WRTE`s one at a time, each waiting for the host's `OKAY` (no `delayed_ack`).
//! Source: AOSP `docs/dev/protocol.md`, research notes §3.5.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::timing::Pacer;
use xagent_adb_wire::wire::{Message, A_CLSE, A_WRTE};

/// The connection-side record of an open stream, keyed by our local id.
#[derive(Debug)]
pub struct StreamEntry {
    /// The host's id for this stream.
    pub remote: u32,
    /// Host `WRTE` payloads go here.
    pub data: mpsc::UnboundedSender<Vec<u8>>,
    /// One unit per host `OKAY`.
    pub acks: mpsc::UnboundedSender<()>,
    /// Cancelled when the host closes the stream or the connection ends.
    pub cancel: CancellationToken,
}

/// Open streams of one connection.
#[derive(Clone, Debug, Default)]
pub struct StreamTable(Arc<Mutex<HashMap<u32, StreamEntry>>>);

impl StreamTable {
    /// Runs `f` on the table (never across `.await`).
    pub fn with<R>(&self, f: impl FnOnce(&mut HashMap<u32, StreamEntry>) -> R) -> R {
        let mut guard = match self.0.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        f(&mut guard)
    }
}

/// The stream is gone (host closed it, or the connection ended).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

/// Receives what the host writes to the stream.
#[derive(Debug)]
pub struct StreamReader {
    pub(crate) data: mpsc::UnboundedReceiver<Vec<u8>>,
    pub(crate) cancel: CancellationToken,
}

impl StreamReader {
    /// Next host payload; `None` once the host closed the stream.
    pub async fn read(&mut self) -> Option<Vec<u8>> {
        tokio::select! {
            d = self.data.recv() => d,
            _ = self.cancel.cancelled() => None,
        }
    }
}

/// Sends data to the host with flow control.
#[derive(Debug)]
pub struct StreamWriter {
    pub(crate) local: u32,
    pub(crate) remote: u32,
    pub(crate) max_payload: usize,
    pub(crate) out: mpsc::Sender<Message>,
    pub(crate) acks: mpsc::UnboundedReceiver<()>,
    pub(crate) cancel: CancellationToken,
    pub(crate) table: StreamTable,
    /// The link's bandwidth and latency (`sim --timing realistic`); `None` sends at once.
    pub(crate) pacer: Option<Pacer>,
}

impl StreamWriter {
    /// Writes `data` in `WRTE`s of at most the negotiated payload, one outstanding at a time.
    pub async fn write(&mut self, data: &[u8]) -> Result<(), Closed> {
        for chunk in data.chunks(self.max_payload.max(1)) {
            if let Some(p) = self.pacer.as_mut() {
                tokio::select! {
                    _ = p.pace(chunk.len()) => {}
                    _ = self.cancel.cancelled() => return Err(Closed),
                }
            }
            let msg = Message::new(A_WRTE, self.local, self.remote, chunk.to_vec());
            tokio::select! {
                r = self.out.send(msg) => r.map_err(|_| Closed)?,
                _ = self.cancel.cancelled() => return Err(Closed),
            }
            tokio::select! {
                a = self.acks.recv() => a.ok_or(Closed)?,
                _ = self.cancel.cancelled() => return Err(Closed),
            }
        }
        Ok(())
    }

    /// Whether the host closed the stream.
    pub fn is_closed(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Ends the stream: forgets it and sends `CLSE(local, remote)` unless the host closed first.
    pub async fn close(self) {
        self.table.with(|t| t.remove(&self.local));
        if !self.cancel.is_cancelled() {
            let _ = self
                .out
                .send(Message::new(A_CLSE, self.local, self.remote, Vec::new()))
                .await;
        }
    }
}
