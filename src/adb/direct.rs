//! Direct transport: the host side of the adbd wire over plain TCP (CNXN, OPEN/OKAY/WRTE/CLSE),
//! so the connector drives a phone (or the simulated phone) with no adb binary at all.
//!
//! One TCP connection per phone carries many streams. A reader task routes incoming messages to
//! per-stream queues by local id; a writer task owns the socket's write half. Flow control follows
//! AOSP `docs/dev/protocol.md` without `delayed_ack`: one outstanding WRTE per stream, and this side
//! acknowledges a device WRTE with OKAY only when the consumer takes the chunk (backpressure).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::error::{with_deadline, AdbError};
use super::wire::{
    parse_banner, Message, A_AUTH, A_CLSE, A_CNXN, A_OKAY, A_OPEN, A_STLS, A_VERSION, A_WRTE,
    MAX_PAYLOAD,
};

/// Features this host offers in its CNXN banner (only what this client implements).
pub const HOST_FEATURES: &str = "shell_v2,cmd,stat_v2,ls_v2";
/// Deadline for TCP connect + CNXN exchange.
pub const CONNECT_DEADLINE: Duration = Duration::from_secs(5);

enum StreamEvent {
    Okay(u32),
    Write(Vec<u8>),
    Close,
}

struct Shared {
    addr: String,
    out: mpsc::UnboundedSender<Message>,
    streams: Mutex<HashMap<u32, mpsc::UnboundedSender<StreamEvent>>>,
    next_id: AtomicU32,
    max_payload: usize,
    props: Vec<(String, String)>,
    alive: CancellationToken,
    /// When the last message arrived from the device.
    last_rx: Mutex<std::time::Instant>,
}

/// A live direct connection to one adbd; cheap to clone. Dropped connections are detected with
/// [`DirectConnection::is_alive`]; callers reconnect.
#[derive(Clone)]
pub struct DirectConnection {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for DirectConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectConnection")
            .field("addr", &self.shared.addr)
            .finish()
    }
}

impl DirectConnection {
    /// Connects to `addr` (`host:port`) and exchanges CNXN.
    ///
    /// Errors: [`AdbError::DeviceOffline`] when unreachable, [`AdbError::DeviceUnauthorized`]
    /// when the device asks for AUTH (this build holds no adb key yet), [`AdbError::Refused`] on
    /// STLS (wireless-debugging TLS ports need pairing), [`AdbError::Timeout`].
    pub async fn connect(addr: &str) -> Result<DirectConnection, AdbError> {
        let addr_owned = addr.to_string();
        with_deadline(
            || "direct adb connect".into(),
            CONNECT_DEADLINE,
            async move {
                let tcp = TcpStream::connect(&addr_owned)
                    .await
                    .map_err(|_| AdbError::DeviceOffline)?;
                tcp.set_nodelay(true)?;
                let (mut rd, mut wr) = tcp.into_split();
                let banner = format!("host::features={HOST_FEATURES}");
                Message::new(A_CNXN, A_VERSION, MAX_PAYLOAD, banner.into_bytes())
                    .write_to(&mut wr)
                    .await?;
                let reply = Message::read_from(&mut rd, MAX_PAYLOAD).await?;
                match reply.command {
                    A_CNXN => {}
                    A_AUTH => return Err(AdbError::DeviceUnauthorized),
                    A_STLS => {
                        return Err(AdbError::Refused("device requires TLS (pair first)".into()))
                    }
                    _ => return Err(AdbError::Protocol("device did not answer CNXN".into())),
                }
                let max_payload = reply.arg1.clamp(4096, MAX_PAYLOAD) as usize;
                let (_, props) = parse_banner(&reply.payload);
                let (tx, rx) = mpsc::unbounded_channel();
                let shared = Arc::new(Shared {
                    addr: addr_owned,
                    out: tx,
                    streams: Mutex::new(HashMap::new()),
                    next_id: AtomicU32::new(1),
                    max_payload,
                    props,
                    alive: CancellationToken::new(),
                    last_rx: Mutex::new(std::time::Instant::now()),
                });
                tokio::spawn(writer_task(wr, rx, shared.alive.clone()));
                tokio::spawn(reader_task(rd, Arc::clone(&shared)));
                Ok(DirectConnection { shared })
            },
        )
        .await
    }

    /// `host:port` of the device.
    pub fn addr(&self) -> &str {
        &self.shared.addr
    }

    /// `false` once the TCP connection has failed or closed.
    pub fn is_alive(&self) -> bool {
        !self.shared.alive.is_cancelled()
    }

    /// How long since the device last sent anything.
    pub fn idle_for(&self) -> Duration {
        lock(&self.shared.last_rx).elapsed()
    }

    /// Drops the connection (every stream fails with `DeviceOffline`).
    pub fn close(&self) {
        self.shared.alive.cancel();
    }

    /// A banner property (`ro.product.model`, `features`, …).
    pub fn banner_prop(&self, key: &str) -> Option<&str> {
        self.shared
            .props
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The device's advertised features.
    pub fn features(&self) -> Vec<String> {
        self.banner_prop("features")
            .unwrap_or_default()
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// Opens a service stream (`OPEN` → `OKAY`); `CLSE` instead means refused.
    pub async fn open(&self, service: &str) -> Result<DirectStream, AdbError> {
        if !self.is_alive() {
            return Err(AdbError::DeviceOffline);
        }
        let local = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, mut rx) = mpsc::unbounded_channel();
        lock(&self.shared.streams).insert(local, tx);
        let mut name = service.as_bytes().to_vec();
        name.push(0);
        self.send(Message::new(A_OPEN, local, 0, name))?;
        let remote = match rx.recv().await {
            Some(StreamEvent::Okay(remote)) => remote,
            Some(_) => {
                lock(&self.shared.streams).remove(&local);
                return Err(AdbError::Refused("device closed the service".into()));
            }
            None => return Err(AdbError::DeviceOffline),
        };
        Ok(DirectStream {
            shared: Arc::clone(&self.shared),
            local,
            remote,
            events: rx,
            pending: VecDeque::new(),
            closed: false,
        })
    }

    fn send(&self, msg: Message) -> Result<(), AdbError> {
        self.shared
            .out
            .send(msg)
            .map_err(|_| AdbError::DeviceOffline)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

async fn writer_task(
    mut wr: tokio::net::tcp::OwnedWriteHalf,
    mut rx: mpsc::UnboundedReceiver<Message>,
    alive: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = alive.cancelled() => break,
            msg = rx.recv() => match msg {
                Some(msg) => if msg.write_to(&mut wr).await.is_err() { alive.cancel(); break; },
                None => break,
            },
        }
    }
}

async fn reader_task(mut rd: tokio::net::tcp::OwnedReadHalf, shared: Arc<Shared>) {
    loop {
        let msg = tokio::select! {
            _ = shared.alive.cancelled() => break,
            m = Message::read_from(&mut rd, shared.max_payload.max(MAX_PAYLOAD as usize) as u32) => m,
        };
        let Ok(msg) = msg else { break };
        *lock(&shared.last_rx) = std::time::Instant::now();
        // Device → host: arg0 = device's id, arg1 = our local id.
        let target = lock(&shared.streams).get(&msg.arg1).cloned();
        match (msg.command, target) {
            (A_OKAY, Some(tx)) => {
                let _ = tx.send(StreamEvent::Okay(msg.arg0));
            }
            (A_WRTE, Some(tx)) => {
                let _ = tx.send(StreamEvent::Write(msg.payload));
            }
            (A_CLSE, Some(tx)) => {
                let _ = tx.send(StreamEvent::Close);
                lock(&shared.streams).remove(&msg.arg1);
            }
            (A_WRTE, None) => {
                // Unknown stream: tell the device it is closed.
                let _ = shared
                    .out
                    .send(Message::new(A_CLSE, 0, msg.arg0, Vec::new()));
            }
            _ => {}
        }
    }
    shared.alive.cancel();
    // Dropping the senders wakes every waiting stream with "offline".
    lock(&shared.streams).clear();
}

/// One open service stream on a [`DirectConnection`]. Dropping it sends CLSE.
pub struct DirectStream {
    shared: Arc<Shared>,
    local: u32,
    remote: u32,
    events: mpsc::UnboundedReceiver<StreamEvent>,
    pending: VecDeque<Vec<u8>>,
    closed: bool,
}

impl DirectStream {
    /// Next chunk from the device (acknowledged with OKAY), `None` after CLSE.
    pub async fn read_chunk(&mut self) -> Result<Option<Vec<u8>>, AdbError> {
        if let Some(chunk) = self.pending.pop_front() {
            return Ok(Some(chunk));
        }
        if self.closed {
            return Ok(None);
        }
        loop {
            match self.events.recv().await {
                Some(StreamEvent::Write(data)) => {
                    self.ack()?;
                    return Ok(Some(data));
                }
                Some(StreamEvent::Okay(_)) => continue,
                Some(StreamEvent::Close) => {
                    self.closed = true;
                    return Ok(None);
                }
                None => return Err(AdbError::DeviceOffline),
            }
        }
    }

    /// Writes `data` in max-payload WRTEs, waiting for the device's OKAY after each.
    pub async fn write_all(&mut self, data: &[u8]) -> Result<(), AdbError> {
        for chunk in data.chunks(self.shared.max_payload) {
            if self.closed {
                return Err(AdbError::Refused("device closed the stream".into()));
            }
            self.shared
                .out
                .send(Message::new(
                    A_WRTE,
                    self.local,
                    self.remote,
                    chunk.to_vec(),
                ))
                .map_err(|_| AdbError::DeviceOffline)?;
            loop {
                match self.events.recv().await {
                    Some(StreamEvent::Okay(_)) => break,
                    Some(StreamEvent::Write(d)) => {
                        self.ack()?;
                        self.pending.push_back(d);
                    }
                    Some(StreamEvent::Close) => {
                        self.closed = true;
                        return Err(AdbError::Refused("device closed the stream".into()));
                    }
                    None => return Err(AdbError::DeviceOffline),
                }
            }
        }
        Ok(())
    }

    fn ack(&self) -> Result<(), AdbError> {
        self.shared
            .out
            .send(Message::new(A_OKAY, self.local, self.remote, Vec::new()))
            .map_err(|_| AdbError::DeviceOffline)
    }
}

impl Drop for DirectStream {
    fn drop(&mut self) {
        lock(&self.shared.streams).remove(&self.local);
        if !self.closed {
            let _ = self
                .shared
                .out
                .send(Message::new(A_CLSE, self.local, self.remote, Vec::new()));
        }
    }
}
