//! The device side of the ADB transport over TCP: accept, answer `CNXN`, then route `OPEN`,
//! `OKAY`, `WRTE`, `CLSE` to streams. One writer task per connection owns the socket's write
//! half; one task per stream runs its service, so a slow stream never blocks the others.
//! Garbage (bad magic, oversized payload) drops the connection.
//! Source: research notes §3.1–3.5 (AOSP `adb.cpp handle_packet`, `transport.cpp`).

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::phone::{Phone, TransportMode};
use crate::services;
use crate::stream::{StreamEntry, StreamReader, StreamTable, StreamWriter};
use xagent_adb_wire::wire::{
    Message, AUTH_RSAPUBLICKEY, AUTH_SIGNATURE, AUTH_TOKEN, A_AUTH, A_CLSE, A_CNXN, A_OKAY, A_OPEN,
    A_VERSION, A_WRTE, MAX_PAYLOAD,
};

/// How long a new connection may take to send its `CNXN`.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Accepts connections until `shutdown`.
pub async fn serve(listener: TcpListener, phone: Phone, shutdown: CancellationToken) {
    accept_until(listener, shutdown, |sock, cancel| {
        tokio::spawn(connection(sock, phone.clone(), cancel));
    })
    .await;
}

/// Accepts until `shutdown`, handing each socket (`TCP_NODELAY` set) and a child token of
/// `shutdown` to `each`; a failed accept (too many open files) is retried after 50 ms.
pub async fn accept_until(
    listener: TcpListener,
    shutdown: CancellationToken,
    mut each: impl FnMut(TcpStream, CancellationToken),
) {
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            accepted = listener.accept() => match accepted {
                Ok((sock, _)) => {
                    let _ = sock.set_nodelay(true);
                    each(sock, shutdown.child_token());
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            },
        }
    }
}

/// `device::ro.product.name=…;ro.product.model=…;ro.product.device=…;features=…`
/// (`get_connection_string`); `:` in values would break the host's split, so it is dropped.
fn banner(phone: &Phone) -> Vec<u8> {
    phone.with(|s| {
        let clean = |v: &str| v.replace([':', ';'], "");
        format!(
            "device::ro.product.name={};ro.product.model={};ro.product.device={};features={}",
            clean(&s.persona.product),
            clean(&s.model),
            clean(&s.persona.device),
            s.persona.features.join(",")
        )
        .into_bytes()
    })
}

async fn writer<W: AsyncWrite + Unpin>(
    mut wr: W,
    mut rx: mpsc::Receiver<Message>,
    mut mode: watch::Receiver<TransportMode>,
    cancel: CancellationToken,
) {
    loop {
        let msg = tokio::select! {
            m = rx.recv() => m,
            _ = cancel.cancelled() => None,
        };
        let Some(msg) = msg else { break };
        // Frozen: nothing leaves until the transport thaws (or the connection ends).
        let thawed = tokio::select! {
            r = mode.wait_for(|m| *m != TransportMode::Frozen) => r.is_ok(),
            _ = cancel.cancelled() => false,
        };
        if !thawed {
            break;
        }
        if wr.write_all(&msg.encode()).await.is_err() {
            break;
        }
    }
    cancel.cancel();
    let _ = wr.shutdown().await;
}

/// Reads messages into a channel (so callers can `select!` without losing partial reads).
/// Garbage or EOF ends the task, which closes the channel.
async fn reader<R: AsyncRead + Unpin>(
    mut rd: R,
    tx: mpsc::Sender<Message>,
    cancel: CancellationToken,
) {
    loop {
        let msg = tokio::select! {
            m = Message::read_from(&mut rd, MAX_PAYLOAD) => m,
            _ = cancel.cancelled() => return,
        };
        let Ok(msg) = msg else { return };
        if tx.send(msg).await.is_err() {
            return;
        }
    }
}

fn new_token() -> Vec<u8> {
    let mut token = [0u8; crate::auth::TOKEN_LEN];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut token);
    token.to_vec()
}

fn auth_message(token: &[u8]) -> Message {
    Message::new(A_AUTH, AUTH_TOKEN, 0, token.to_vec())
}

/// Holds a connection until the transport is online: silent while `Offline`, an AUTH token
/// loop that never succeeds while `Unauthorized` (a fault), and with `require_auth` the real
/// adbd exchange of [`crate::auth`]: TOKEN, SIGNATURE checked against accepted keys (a bad one
/// earns a new TOKEN), RSAPUBLICKEY kept pending until accepted (`daemon/auth.cpp`).
/// `Some(key line)` when admitted (empty without auth); `None` when unplugged, closed or shut down.
async fn admit(
    phone: &Phone,
    rx: &mut mpsc::Receiver<Message>,
    out: &mpsc::Sender<Message>,
    cancel: &CancellationToken,
) -> Option<String> {
    let mut watch = phone.watch_transport();
    let mut keys = phone.watch_keys();
    let required = phone.with(|s| s.auth.required);
    let mut token: Option<Vec<u8>> = None;
    let mut offered: Option<String> = None;
    loop {
        let mode = *watch.borrow_and_update();
        keys.borrow_and_update();
        match mode {
            TransportMode::Online if !required => return Some(String::new()),
            TransportMode::Online => {
                if let Some(line) = offered.as_ref() {
                    if phone.with(|s| s.auth.is_accepted(line)) {
                        return offered;
                    }
                }
            }
            TransportMode::Unplugged => return None,
            TransportMode::Stalled => {
                phone.with(|s| s.lost_connections += 1);
                lost(rx, cancel).await;
                return None;
            }
            _ => {}
        }
        let wants_token = matches!(mode, TransportMode::Unauthorized)
            || (mode == TransportMode::Online && required);
        if wants_token && token.is_none() {
            let t = new_token();
            out.send(auth_message(&t)).await.ok()?;
            token = Some(t);
        }
        tokio::select! {
            r = watch.changed() => r.ok()?,
            r = keys.changed() => r.ok()?,
            m = rx.recv() => {
                let m = m?;
                if m.command != A_AUTH || !wants_token {
                    continue;
                }
                let checked = token.as_deref().filter(|_| mode == TransportMode::Online);
                match m.arg0 {
                    AUTH_SIGNATURE => {
                        if let Some(line) = checked.and_then(|t| phone.with(|s| s.auth.check(t, &m.payload))) {
                            return Some(line);
                        }
                        let t = new_token();
                        out.send(auth_message(&t)).await.ok()?;
                        token = Some(t);
                    }
                    AUTH_RSAPUBLICKEY if checked.is_some() => {
                        offered = phone.with(|s| s.auth.offer(&m.payload)).ok();
                    }
                    _ => {}
                }
            }
            _ = cancel.cancelled() => return None,
        }
    }
}

/// A connection the phone lost ([`TransportMode::Stalled`]): read and dropped until the peer
/// closes it, never answered whatever the mode becomes.
async fn lost(rx: &mut mpsc::Receiver<Message>, cancel: &CancellationToken) {
    loop {
        tokio::select! {
            m = rx.recv() => if m.is_none() { return },
            _ = cancel.cancelled() => return,
        }
    }
}

/// Spawns the reader and writer tasks of one connection; returns (outgoing, incoming).
fn spawn_io<R, W>(
    rd: R,
    wr: W,
    mode: watch::Receiver<TransportMode>,
    cancel: &CancellationToken,
) -> (mpsc::Sender<Message>, mpsc::Receiver<Message>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out, out_rx) = mpsc::channel::<Message>(64);
    let (in_tx, rx) = mpsc::channel::<Message>(64);
    tokio::spawn(writer(wr, out_rx, mode, cancel.clone()));
    tokio::spawn(reader(rd, in_tx, cancel.clone()));
    (out, rx)
}

/// Serves a connection that is already admitted — the `STLS` port after its TLS handshake,
/// where the TLS client certificate did the authentication. adbd speaks first there: it sends
/// `CNXN` at once (the host waits for it with `SSL_peek`, notes §3.4 step 6), then routes
/// streams. `host_max_payload` is arg1 of the host's plaintext `CNXN`.
pub async fn serve_admitted<S>(
    stream: S,
    phone: Phone,
    cancel: CancellationToken,
    host_max_payload: u32,
) where
    S: AsyncRead + AsyncWrite + Send + 'static,
{
    // Offline or unauthorized: hold the connection silent until online (AUTH has no place
    // on the TLS port); unplugged: drop it.
    let mut watch = phone.watch_transport();
    loop {
        let mode = *watch.borrow_and_update();
        match mode {
            TransportMode::Online => break,
            TransportMode::Unplugged => return,
            TransportMode::Stalled => {
                phone.with(|s| s.lost_connections += 1);
                let (rd, wr) = tokio::io::split(stream);
                let (_out, mut rx) = spawn_io(rd, wr, phone.watch_transport(), &cancel);
                return lost(&mut rx, &cancel).await;
            }
            _ => {}
        }
        tokio::select! {
            r = watch.changed() => if r.is_err() { return },
            _ = cancel.cancelled() => return,
        }
    }
    let (rd, wr) = tokio::io::split(stream);
    let (out, rx) = spawn_io(rd, wr, phone.watch_transport(), &cancel);
    online(phone, out, rx, cancel, host_max_payload, Admission::Paired).await;
}

/// How a connection was let in, so a revocation drops exactly the connections it concerns.
#[derive(Debug)]
enum Admission {
    /// No authentication (`require_auth` off).
    Open,
    /// `AUTH` with this accepted `adb_keys` line.
    Key(String),
    /// The `STLS` port's TLS handshake, with a key paired over wireless debugging.
    Paired,
}

impl Admission {
    /// Whether the key this connection came in with is no longer known (adbd then drops it:
    /// revoking authorisations clears the paired keys too, AOSP `AdbDebuggingManager`
    /// `MESSAGE_ADB_CLEAR`).
    fn revoked(&self, phone: &Phone) -> bool {
        match self {
            Admission::Open => false,
            Admission::Key(line) => !phone.with(|s| s.auth.is_accepted(line)),
            Admission::Paired => phone.with(|s| s.paired.accepted.is_empty()),
        }
    }
}

/// The max payload the phone's adbd answers `CNXN` with: the smaller of the host's and its
/// own, which follows its release (AOSP `adb.h`): 4096 (`MAX_PAYLOAD_V1`) before Android 7
/// (SDK 24), 256 KiB (`MAX_PAYLOAD_V2`) from Android 7, 1 MiB (`MAX_PAYLOAD`) in later
/// releases (the sim switches at SDK 28).
fn negotiated_max_payload(phone: &Phone, host_max_payload: u32) -> u32 {
    let own = match phone.with(|s| s.persona.sdk) {
        sdk if sdk < 24 => 4096,
        sdk if sdk < 28 => 256 * 1024,
        _ => MAX_PAYLOAD,
    };
    host_max_payload.clamp(4096, own)
}

/// Sends the device `CNXN` and runs the connection until it ends.
async fn online(
    phone: Phone,
    out: mpsc::Sender<Message>,
    rx: mpsc::Receiver<Message>,
    cancel: CancellationToken,
    host_max_payload: u32,
    key: Admission,
) {
    // A key revoked (or the transport changed) between this connection's admission (its TLS
    // handshake or `AUTH`) and now was announced before these listened: the key is checked
    // here and the mode at `run`'s first turn; every later change wakes them. adbd drops
    // every connection of a revoked key, whenever it came in.
    let keys = phone.watch_keys();
    let mut mode = phone.watch_transport();
    mode.mark_changed();
    if key.revoked(&phone) {
        return cancel.cancel();
    }
    let max_payload = negotiated_max_payload(&phone, host_max_payload);
    let _ = out
        .send(Message::new(A_CNXN, A_VERSION, max_payload, banner(&phone)))
        .await;
    let conn = Conn {
        phone,
        out,
        table: StreamTable::default(),
        max_payload,
        next_id: 1,
        cancel,
        key,
    };
    conn.run(rx, keys, mode).await;
}

async fn connection(sock: TcpStream, phone: Phone, cancel: CancellationToken) {
    if phone.transport_mode() == TransportMode::Unplugged {
        return;
    }
    let (rd, wr) = sock.into_split();
    let (out, mut rx) = spawn_io(rd, wr, phone.watch_transport(), &cancel);
    let hello = tokio::time::timeout(HANDSHAKE_TIMEOUT, async {
        while let Some(m) = rx.recv().await {
            if m.command == A_CNXN {
                return Some(m);
            }
        }
        None
    });
    let Ok(Some(cnxn)) = hello.await else {
        return cancel.cancel();
    };
    let Some(key) = admit(&phone, &mut rx, &out, &cancel).await else {
        return cancel.cancel();
    };
    let key = if key.is_empty() {
        Admission::Open
    } else {
        Admission::Key(key)
    };
    online(phone, out, rx, cancel, cnxn.arg1, key).await;
}

struct Conn {
    phone: Phone,
    out: mpsc::Sender<Message>,
    table: StreamTable,
    max_payload: u32,
    next_id: u32,
    cancel: CancellationToken,
    /// How this connection authenticated.
    key: Admission,
}

impl Conn {
    /// Answers packets until the connection ends (closed; unplugged: `watch`; its key
    /// revoked: `keys`).
    async fn run(
        mut self,
        mut rx: mpsc::Receiver<Message>,
        mut keys: watch::Receiver<u64>,
        mut watch: watch::Receiver<TransportMode>,
    ) {
        loop {
            let msg = tokio::select! {
                _ = self.cancel.cancelled() => break,
                r = keys.changed() => {
                    // Revoked: adbd drops every connection whose key is gone.
                    if r.is_err() || self.key.revoked(&self.phone) { break }
                    continue;
                }
                r = watch.changed() => {
                    if r.is_err() {
                        break;
                    }
                    if *watch.borrow_and_update() == TransportMode::Frozen {
                        // Nothing read (nor answered) until it thaws; then as any change.
                        let thawed = tokio::select! {
                            r = watch.wait_for(|m| *m != TransportMode::Frozen) => r.is_ok(),
                            _ = self.cancel.cancelled() => false,
                        };
                        if !thawed {
                            break;
                        }
                    }
                    if *watch.borrow_and_update() != TransportMode::Online { break }
                    continue;
                }
                m = rx.recv() => m,
            };
            let Some(msg) = msg else { break };
            if self.handle(msg).await.is_err() {
                break;
            }
        }
        self.cancel.cancel();
        self.table.with(|t| t.clear());
    }

    async fn send(&self, msg: Message) -> Result<(), ()> {
        self.out.send(msg).await.map_err(|_| ())
    }

    async fn handle(&mut self, msg: Message) -> Result<(), ()> {
        // adbd drops the whole transport on a packet over the max payload (AOSP `transport.cpp`
        // `check_header`: data_length > max payload → the transport is kicked).
        if msg.payload.len() > self.max_payload as usize {
            return Err(());
        }
        let (a0, a1) = (msg.arg0, msg.arg1);
        match msg.command {
            A_CNXN => {
                self.max_payload = negotiated_max_payload(&self.phone, a1);
                self.send(Message::new(
                    A_CNXN,
                    A_VERSION,
                    self.max_payload,
                    banner(&self.phone),
                ))
                .await
            }
            A_OPEN if a0 != 0 => self.open(a0, &msg.payload).await,
            A_OKAY => {
                self.table.with(|t| t.get(&a1).map(|e| e.acks.send(())));
                Ok(())
            }
            A_WRTE => {
                let known = self
                    .table
                    .with(|t| t.get(&a1).map(|e| (e.remote, e.data.send(msg.payload))));
                match known {
                    Some((remote, _)) => {
                        self.send(Message::new(A_OKAY, a1, remote, Vec::new()))
                            .await
                    }
                    None => Ok(()),
                }
            }
            A_CLSE => {
                if let Some(e) = self.table.with(|t| t.remove(&a1)) {
                    e.cancel.cancel();
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    async fn open(&mut self, remote: u32, payload: &[u8]) -> Result<(), ()> {
        let name = String::from_utf8_lossy(payload)
            .trim_end_matches('\0')
            .to_string();
        let persona = self.phone.with(|s| s.persona.clone());
        let Some(service) = services::parse(&name, &persona) else {
            return self.send(Message::new(A_CLSE, 0, remote, Vec::new())).await;
        };
        let local = self.next_id;
        self.next_id = self.next_id.wrapping_add(1).max(1);
        let (data_tx, data_rx) = mpsc::unbounded_channel();
        let (ack_tx, ack_rx) = mpsc::unbounded_channel();
        let cancel = self.cancel.child_token();
        let entry = StreamEntry {
            remote,
            data: data_tx,
            acks: ack_tx,
            cancel: cancel.clone(),
        };
        self.table.with(|t| t.insert(local, entry));
        self.send(Message::new(A_OKAY, local, remote, Vec::new()))
            .await?;
        let reader = StreamReader {
            data: data_rx,
            cancel: cancel.clone(),
        };
        let writer = StreamWriter {
            local,
            remote,
            max_payload: self.max_payload as usize,
            out: self.out.clone(),
            acks: ack_rx,
            cancel,
            table: self.table.clone(),
            pacer: self
                .phone
                .with(|s| s.timing.map(|m| crate::timing::Pacer::new(m.link))),
        };
        tokio::spawn(services::run(service, self.phone.clone(), reader, writer));
        Ok(())
    }
}

/// A failed bind of `addr` (given by `flag`) as the OS said it, naming both ("Address already
/// in use" alone does not say which of the sim's addresses).
pub fn bind_error(e: std::io::Error, flag: &str, addr: std::net::SocketAddr) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("cannot listen on {addr} ({flag}): {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persona::Persona;

    /// A connection let in over TLS whose pairing is revoked before its session starts (the
    /// revoke's notice came before the session listened for one) is dropped, as adbd drops
    /// every connection of a revoked key: its host reads end-of-stream, not a `CNXN`.
    #[tokio::test]
    async fn a_connection_admitted_before_a_revoke_is_dropped() {
        let phone = Phone::new(
            Persona::load("pixel-android14").unwrap(),
            "SIMREV01",
            "Pixel",
        );
        // Paired keys empty: every pairing revoked.
        assert!(phone.with(|s| s.paired.accepted.is_empty()));
        let (host, device) = tokio::io::duplex(64 * 1024);
        let served = tokio::spawn(serve_admitted(
            device,
            phone,
            CancellationToken::new(),
            4096,
        ));
        let (mut rd, _wr) = tokio::io::split(host);
        let read = tokio::time::timeout(
            Duration::from_secs(5),
            Message::read_from(&mut rd, MAX_PAYLOAD),
        )
        .await
        .expect("the connection is dropped at once");
        assert!(read.is_err(), "no CNXN on a revoked connection: {read:?}");
        tokio::time::timeout(Duration::from_secs(5), served)
            .await
            .expect("the session ends")
            .unwrap();
    }
}
