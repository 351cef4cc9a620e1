//! Direct transport: the host side of the adbd wire over plain TCP (CNXN, OPEN/OKAY/WRTE/CLSE),
//! so the connector drives a phone (or the simulated phone) with no adb binary at all.
//!
//! One TCP connection per phone carries many streams. A reader task routes incoming messages to
//! per-stream queues by local id; a writer task owns the socket's write half. Flow control follows
//! AOSP `docs/dev/protocol.md` without `delayed_ack`: one outstanding WRTE per stream, and this side
//! acknowledges a device WRTE with OKAY only when the consumer takes the chunk (backpressure).
//!
//! With a [`HostKey`] the handshake is the host side of AOSP `adb.cpp`/`auth.cpp`: an `AUTH`
//! TOKEN is answered with a signature, and a refused signature with the key itself
//! (`RSAPUBLICKEY`, the phone shows its prompt); a device answering `STLS` (wireless debugging,
//! Android 11+) gets `STLS` back and the socket becomes TLS 1.3 with the key's certificate as
//! client identity, then the device's `CNXN` is read over TLS. Android revokes keys unused for
//! 7 days (authorized and paired alike) unless the user turns that off in Developer options.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use xagent_adb_pairing::tls;

use super::error::{with_deadline, AdbError};
use super::host_key::HostKeyFile;
use super::wire::{
    parse_banner, Message, AUTH_RSAPUBLICKEY, AUTH_SIGNATURE, AUTH_TOKEN, A_AUTH, A_CLSE, A_CNXN,
    A_OKAY, A_OPEN, A_STLS, A_STLS_VERSION, A_VERSION, A_WRTE, MAX_PAYLOAD,
};

/// Features this host offers in its CNXN banner (only what this client implements).
pub const HOST_FEATURES: &str = "shell_v2,cmd,stat_v2,ls_v2";
/// Deadline for TCP connect + CNXN exchange (AUTH and the `STLS` upgrade included).
pub const CONNECT_DEADLINE: Duration = Duration::from_secs(5);
/// How long a connect waits for the phone's `CNXN` after offering the key (`RSAPUBLICKEY`):
/// the prompt is the user's, so past this the phone counts as unauthorized and the next probe
/// (whose signature the phone then accepts) connects.
pub const KEY_PROMPT_WAIT: Duration = Duration::from_secs(1);
/// How long the handshake waits for the connector's adb key to be loaded (ms for an existing
/// file) or made (seconds on a Pi) when the phone asks for `AUTH`; past it the connect fails
/// with [`AdbError::Timeout`] naming [`KEY_LOAD_STEP`], not `unauthorized`: the phone did not
/// refuse anything. Below [`CONNECT_DEADLINE`] so this error, not the connect's, is the one seen.
pub const KEY_LOAD_WAIT: Duration = Duration::from_secs(3);
/// The `step` of the [`AdbError::Timeout`] a connect answers when the key is not loaded in
/// [`KEY_LOAD_WAIT`].
pub const KEY_LOAD_STEP: &str = "loading the connector's adb key";
const CONNECT_STEP: &str = "direct adb connect";

type ByteReader = Box<dyn AsyncRead + Unpin + Send>;
type ByteWriter = Box<dyn AsyncWrite + Unpin + Send>;

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
    /// Connects to `addr` (`host:port`) and exchanges CNXN, without an adb key.
    ///
    /// Errors: as [`DirectConnection::connect_with`] with no key.
    pub async fn connect(addr: &str) -> Result<DirectConnection, AdbError> {
        Self::connect_with(addr, None).await
    }

    /// Connects to `addr` (`host:port`) and exchanges CNXN, answering `AUTH` and `STLS` with
    /// the key in `key` when given (read only when the device asks for it); all of it within
    /// [`CONNECT_DEADLINE`].
    ///
    /// Errors: [`AdbError::DeviceOffline`] when unreachable, [`AdbError::DeviceUnauthorized`]
    /// when the device asks for AUTH and holds no accepted key (the prompt waits on the phone),
    /// [`AdbError::Refused`] on STLS without a key, [`AdbError::NotPaired`] when the phone
    /// refuses the key over TLS; no answer within the deadline is [`AdbError::DeviceOffline`];
    /// a key not loaded within [`KEY_LOAD_WAIT`] is [`AdbError::Timeout`] ([`KEY_LOAD_STEP`]).
    pub async fn connect_with(
        addr: &str,
        key: Option<&HostKeyFile>,
    ) -> Result<DirectConnection, AdbError> {
        let addr_owned = addr.to_string();
        let key = key.cloned();
        let connected = with_deadline(|| CONNECT_STEP.into(), CONNECT_DEADLINE, async move {
            let tcp = TcpStream::connect(&addr_owned)
                .await
                .map_err(|_| AdbError::DeviceOffline)?;
            tcp.set_nodelay(true)?;
            let (rd, wr, reply) = handshake(tcp, key.as_ref()).await?;
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
        })
        .await;
        match connected {
            // A transport whose CNXN never comes is `offline`, as adb lists it (AOSP
            // `transport.cpp`: kCsOffline until CNXN): the phone's state, not a slow command.
            Err(AdbError::Timeout { step, .. }) if step == CONNECT_STEP => {
                Err(AdbError::DeviceOffline)
            }
            // A peer that closes or resets the connection before its `CNXN` (an unplugged
            // phone's port, a restarting adbd) is not an online adbd either: `offline`, not a
            // failed command ("early eof" read as one before).
            Err(AdbError::Io(_)) => Err(AdbError::DeviceOffline),
            other => other,
        }
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

    /// The max payload negotiated in `CNXN` (the smaller of the two sides'), bytes.
    pub fn max_payload(&self) -> usize {
        self.shared.max_payload
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
                return Err(AdbError::ServiceClosed {
                    service: super::error::service_kind(service).to_string(),
                });
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

/// The host side of the connection handshake (AOSP `adb.cpp` `handle_packet`, `auth.cpp`):
/// `CNXN`, then `AUTH` answered with a signature and then the public key, or `STLS` answered
/// with `STLS` and a TLS 1.3 upgrade. Returns the byte halves and the device's `CNXN`.
/// The caller bounds the whole exchange.
async fn handshake(
    mut tcp: TcpStream,
    key: Option<&HostKeyFile>,
) -> Result<(ByteReader, ByteWriter, Message), AdbError> {
    let banner = format!("host::features={HOST_FEATURES}");
    Message::new(A_CNXN, A_VERSION, MAX_PAYLOAD, banner.into_bytes())
        .write_to(&mut tcp)
        .await?;
    let mut signed = false;
    let mut offered = false;
    loop {
        let reply = if offered {
            tokio::time::timeout(KEY_PROMPT_WAIT, Message::read_from(&mut tcp, MAX_PAYLOAD))
                .await
                .map_err(|_| AdbError::DeviceUnauthorized)??
        } else {
            Message::read_from(&mut tcp, MAX_PAYLOAD).await?
        };
        match reply.command {
            A_CNXN => {
                let (rd, wr) = tcp.into_split();
                return Ok((Box::new(rd), Box::new(wr), reply));
            }
            A_AUTH if reply.arg0 == AUTH_TOKEN => {
                // No key at all: the phone cannot accept this host, so it is unauthorized.
                let Some(key) = key else {
                    return Err(AdbError::DeviceUnauthorized);
                };
                // A key not loaded yet is waited for (bounded): answering `unauthorized`
                // meanwhile would report a refusal the phone never made. The load runs in its
                // own task, so a wait that gives up does not waste it.
                let key = match tokio::time::timeout(KEY_LOAD_WAIT, key.get()).await {
                    Ok(key) => key?,
                    Err(_) => {
                        return Err(AdbError::Timeout {
                            step: KEY_LOAD_STEP.into(),
                            after: KEY_LOAD_WAIT,
                        })
                    }
                };
                // First the signature; a refused one earns a new token, answered with the
                // key itself so the phone can ask its user (host `auth.cpp`).
                let answer = if !signed {
                    signed = true;
                    let signature = key
                        .key()
                        .sign_auth_token(&reply.payload)
                        .map_err(|e| AdbError::Protocol(format!("cannot sign AUTH token: {e}")))?;
                    Message::new(A_AUTH, AUTH_SIGNATURE, 0, signature)
                } else if !offered {
                    offered = true;
                    let mut line = key.key().public_key_line().into_bytes();
                    line.push(0);
                    Message::new(A_AUTH, AUTH_RSAPUBLICKEY, 0, line)
                } else {
                    return Err(AdbError::DeviceUnauthorized);
                };
                answer.write_to(&mut tcp).await?;
            }
            A_STLS => {
                let Some(key) = key else {
                    return Err(AdbError::Refused("device requires TLS (pair first)".into()));
                };
                let key = key.get().await?;
                Message::new(A_STLS, A_STLS_VERSION, 0, Vec::new())
                    .write_to(&mut tcp)
                    .await?;
                let mut stream = tls::connect_as_host(tcp, key.tls_config())
                    .await
                    .map_err(|_| AdbError::NotPaired)?;
                // TLS 1.3: the phone checks the client certificate after the client's
                // handshake is done, so a refusal shows up as this first read failing.
                let reply = Message::read_from(&mut stream, MAX_PAYLOAD)
                    .await
                    .map_err(|_| AdbError::NotPaired)?;
                if reply.command != A_CNXN {
                    return Err(AdbError::Protocol(
                        "device did not answer CNXN over TLS".into(),
                    ));
                }
                let (rd, wr) = tokio::io::split(stream);
                return Ok((Box::new(rd), Box::new(wr), reply));
            }
            _ => return Err(AdbError::Protocol("device did not answer CNXN".into())),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

async fn writer_task(
    mut wr: ByteWriter,
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

async fn reader_task(mut rd: ByteReader, shared: Arc<Shared>) {
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
