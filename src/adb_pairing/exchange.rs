//! The pairing exchange over any byte stream, both roles, each bounded by a deadline (adb has no
//! timeouts after connect; a phone that stops answering must not hang us).
//!
//! Sequence (`pairing_connection.cpp`; each side writes first, then reads, so neither waits on
//! the other): TLS 1.3 handshake (host = client) → password ‖ 64 bytes exported keying material
//! → SPAKE2 messages (packet type 0) → sealed PeerInfo (type 1): the host sends its key line,
//! the device its GUID. A wrong password shows only here, as a PeerInfo that fails to open.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use rustls::ServerConfig;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;
use zeroize::Zeroizing;

use crate::adb_key::AdbKey;
use crate::cipher::PeerInfoCipher;
use crate::packet::{self, PacketError, PacketType};
use crate::peer_info::PeerInfo;
use crate::spake2::{Role, Spake2};
use crate::tls;

/// The device's GUID (`adb-<serial>-<6 alnum>`): the `_adb-tls-connect._tcp` instance name to
/// look for after pairing, stable across the phone's IP and port changes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Guid(pub String);

impl Guid {
    /// The GUID text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Guid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The host's public-key line as the device received it (`base64 user@host`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerKeyLine(pub String);

impl PeerKeyLine {
    /// The line.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Where an exchange was when it stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The TLS 1.3 handshake.
    Tls = 0,
    /// Sending and receiving the SPAKE2 messages.
    Spake2 = 1,
    /// Sending and receiving the sealed PeerInfo.
    PeerInfo = 2,
}

impl Stage {
    fn from_u8(n: u8) -> Stage {
        match n {
            0 => Stage::Tls,
            1 => Stage::Spake2,
            _ => Stage::PeerInfo,
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Stage::Tls => "the TLS handshake",
            Stage::Spake2 => "the key exchange (SPAKE2)",
            Stage::PeerInfo => "the exchange of identities (PeerInfo)",
        })
    }
}

/// Why pairing failed, in words for the person holding the phone. Never holds the password.
#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    /// The peer's PeerInfo did not decrypt: the two sides used different passwords (or the
    /// phone's pairing dialog moved on to a new code).
    #[error("wrong pairing code or password: the other side could not be authenticated")]
    WrongPassword,
    /// The peer closed the connection.
    #[error("the other side closed the connection during {0}")]
    PeerClosed(Stage),
    /// The deadline passed.
    #[error("pairing did not finish in time (stopped during {0})")]
    Timeout(Stage),
    /// The peer sent something the protocol does not allow.
    #[error("the other side broke the pairing protocol during {stage}: {reason}")]
    Protocol {
        /// Where.
        stage: Stage,
        /// What was wrong.
        reason: String,
    },
    /// TLS failed (handshake refused, a certificate rejected, a bad record).
    #[error("TLS failed during pairing: {0}")]
    Tls(String),
    /// Another network error.
    #[error("network error during {stage}: {source}")]
    Io {
        /// Where.
        stage: Stage,
        /// The OS error.
        source: std::io::Error,
    },
}

fn io_error(stage: Stage, e: std::io::Error) -> PairingError {
    use std::io::ErrorKind::*;
    if let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return PairingError::Tls(tls.to_string());
    }
    match e.kind() {
        UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe => {
            PairingError::PeerClosed(stage)
        }
        _ => PairingError::Io { stage, source: e },
    }
}

fn packet_error(stage: Stage, e: PacketError) -> PairingError {
    match e {
        PacketError::Io(e) => io_error(stage, e),
        other => PairingError::Protocol {
            stage,
            reason: other.to_string(),
        },
    }
}

/// Tracks the stage so a timeout can say where it happened (atomic: futures stay `Send`).
#[derive(Default)]
struct Progress(AtomicU8);

impl Progress {
    fn enter(&self, stage: Stage) -> Stage {
        self.0.store(stage as u8, Ordering::Relaxed);
        stage
    }
}

async fn bounded<T>(
    deadline: Instant,
    progress: &Progress,
    work: impl std::future::Future<Output = Result<T, PairingError>>,
) -> Result<T, PairingError> {
    match tokio::time::timeout_at(deadline, work).await {
        Ok(result) => result,
        Err(_) => Err(PairingError::Timeout(Stage::from_u8(
            progress.0.load(Ordering::Relaxed),
        ))),
    }
}

/// One side of an exchange: its SPAKE2 role, what it tells the peer, where it leaves early.
struct Side {
    role: Role,
    mine: PeerInfo,
    /// Stop (and drop the connection) right after this stage.
    leave_after: Option<Stage>,
}

/// A TLS stream whose keying material can be exported (client or server end).
trait Exporter: AsyncRead + AsyncWrite + Unpin {
    fn keying_material(&self) -> Result<Zeroizing<[u8; tls::EXPORTER_LEN]>, PairingError>;
}

impl<S: AsyncRead + AsyncWrite + Unpin> Exporter for tokio_rustls::client::TlsStream<S> {
    fn keying_material(&self) -> Result<Zeroizing<[u8; tls::EXPORTER_LEN]>, PairingError> {
        tls::exported_keying_material(self.get_ref().1)
            .map_err(|e| PairingError::Tls(e.to_string()))
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Exporter for tokio_rustls::server::TlsStream<S> {
    fn keying_material(&self) -> Result<Zeroizing<[u8; tls::EXPORTER_LEN]>, PairingError> {
        tls::exported_keying_material(self.get_ref().1)
            .map_err(|e| PairingError::Tls(e.to_string()))
    }
}

/// The whole exchange before `deadline`: the TLS `handshake`, then [`exchange`].
async fn run<T: Exporter>(
    deadline: Instant,
    handshake: impl std::future::Future<Output = std::io::Result<T>>,
    side: &Side,
    password: &[u8],
) -> Result<Option<PeerInfo>, PairingError> {
    let progress = Progress::default();
    bounded(deadline, &progress, async {
        let mut tls = handshake.await.map_err(|e| io_error(Stage::Tls, e))?;
        let ekm = tls.keying_material()?;
        exchange(&mut tls, &ekm[..], side, password, &progress).await
    })
    .await
}

/// SPAKE2 and PeerInfo over an established TLS stream; returns the peer's PeerInfo, or
/// `None` when `side.leave_after` made it stop early.
async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    tls: &mut S,
    ekm: &[u8],
    side: &Side,
    password: &[u8],
    progress: &Progress,
) -> Result<Option<PeerInfo>, PairingError> {
    let (role, mine, leave_after) = (side.role, &side.mine, side.leave_after);
    if leave_after == Some(Stage::Tls) {
        return Ok(None);
    }
    let mut full = Zeroizing::new(Vec::with_capacity(password.len() + ekm.len()));
    full.extend_from_slice(password);
    full.extend_from_slice(ekm);
    let stage = progress.enter(Stage::Spake2);
    let ours = Spake2::new(role, &full);
    packet::write(tls, PacketType::Spake2Msg, ours.message())
        .await
        .map_err(|e| packet_error(stage, e))?;
    let theirs = packet::read(tls, PacketType::Spake2Msg)
        .await
        .map_err(|e| packet_error(stage, e))?;
    let key = ours.finish(&theirs).map_err(|e| PairingError::Protocol {
        stage,
        reason: e.to_string(),
    })?;
    if leave_after == Some(Stage::Spake2) {
        return Ok(None);
    }
    let stage = progress.enter(Stage::PeerInfo);
    let protocol = |reason: String| PairingError::Protocol { stage, reason };
    let mut cipher = PeerInfoCipher::new(&key);
    let plain = mine.encode().map_err(|e| protocol(e.to_string()))?;
    packet::write(tls, PacketType::PeerInfo, &cipher.seal(&plain))
        .await
        .map_err(|e| packet_error(stage, e))?;
    let sealed = packet::read(tls, PacketType::PeerInfo)
        .await
        .map_err(|e| packet_error(stage, e))?;
    let opened = cipher
        .open(&sealed)
        .map_err(|_| PairingError::WrongPassword)?;
    let theirs = PeerInfo::decode(&opened).map_err(|e| protocol(e.to_string()))?;
    // Best effort: the peer may already be gone, which is fine once both PeerInfos crossed.
    let _ = tls.shutdown().await;
    Ok(Some(theirs))
}

/// Host side (AOSP `PairingConnectionCtx` as client): pairs over `stream` (a TCP connection to
/// the phone's pairing port) with `password` (the 6-digit code or the QR `P:` value, as bytes),
/// presenting `key`'s certificate and sending its public-key line. Returns the phone's GUID.
/// Everything, the TLS handshake included, must finish before `deadline`.
///
/// Errors: [`PairingError::WrongPassword`], [`PairingError::PeerClosed`],
/// [`PairingError::Timeout`], [`PairingError::Protocol`] (also a device that answers with
/// something other than a GUID), [`PairingError::Tls`], [`PairingError::Io`].
pub async fn pair_as_host<S: AsyncRead + AsyncWrite + Unpin + Send>(
    stream: S,
    password: &[u8],
    key: &AdbKey,
    deadline: Instant,
) -> Result<Guid, PairingError> {
    let config = tls::host_client_config(key).map_err(|e| PairingError::Tls(e.to_string()))?;
    let side = Side {
        role: Role::Alice,
        mine: PeerInfo::RsaPublicKey(key.public_key_line()),
        leave_after: None,
    };
    let connector = tokio_rustls::TlsConnector::from(config);
    let handshake = connector.connect(tls::server_name(), stream);
    match run(deadline, handshake, &side, password).await? {
        Some(PeerInfo::DeviceGuid(guid)) => Ok(Guid(guid)),
        _ => Err(PairingError::Protocol {
            stage: Stage::PeerInfo,
            reason: "the phone sent a key instead of its GUID".into(),
        }),
    }
}

/// How a device-side exchange runs (see [`serve_pairing_with`]).
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// The TLS server configuration ([`tls::device_pairing_config`]).
    pub config: Arc<ServerConfig>,
    /// Drop the connection right after this stage (a phone that leaves mid-way; simulators
    /// and tests). `None` runs to the end.
    pub leave_after: Option<Stage>,
}

/// Device side (AOSP `PairingServer`, one connection): runs the exchange as TLS server with a
/// throw-away certificate, sends `guid`, returns the host's public-key line. Bounded by
/// `deadline`. Errors as [`pair_as_host`] (a host that sends a GUID is a protocol error).
pub async fn serve_pairing<S>(
    stream: S,
    password: &[u8],
    guid: &str,
    deadline: Instant,
) -> Result<PeerKeyLine, PairingError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let identity = tls::DeviceIdentity::generate().map_err(|e| PairingError::Tls(e.to_string()))?;
    let config =
        tls::device_pairing_config(&identity).map_err(|e| PairingError::Tls(e.to_string()))?;
    let options = ServeOptions {
        config,
        leave_after: None,
    };
    serve_pairing_with(stream, password, guid, deadline, &options)
        .await?
        .ok_or(PairingError::PeerClosed(Stage::PeerInfo))
}

/// [`serve_pairing`] with a given TLS configuration and an optional early exit: returns
/// `Ok(None)` when it left after `options.leave_after` as asked.
pub async fn serve_pairing_with<S>(
    stream: S,
    password: &[u8],
    guid: &str,
    deadline: Instant,
    options: &ServeOptions,
) -> Result<Option<PeerKeyLine>, PairingError>
where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    let side = Side {
        role: Role::Bob,
        mine: PeerInfo::DeviceGuid(guid.to_string()),
        leave_after: options.leave_after,
    };
    let acceptor = tokio_rustls::TlsAcceptor::from(options.config.clone());
    match run(deadline, acceptor.accept(stream), &side, password).await? {
        None => Ok(None),
        Some(PeerInfo::RsaPublicKey(line)) => Ok(Some(PeerKeyLine(line))),
        Some(PeerInfo::DeviceGuid(_)) => Err(PairingError::Protocol {
            stage: Stage::PeerInfo,
            reason: "the host sent a GUID instead of its key".into(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(30)
    }

    #[tokio::test]
    async fn host_and_device_pair_over_a_pipe() {
        let key = AdbKey::generate("xagent@test").unwrap();
        let (host_end, device_end) = tokio::io::duplex(64 * 1024);
        let device = tokio::spawn(async move {
            serve_pairing(device_end, b"123456", "adb-SIM0001-AbCdEf", soon()).await
        });
        let guid = pair_as_host(host_end, b"123456", &key, soon())
            .await
            .unwrap();
        assert_eq!(guid.as_str(), "adb-SIM0001-AbCdEf");
        assert_eq!(device.await.unwrap().unwrap().0, key.public_key_line());

        let (host_end, device_end) = tokio::io::duplex(64 * 1024);
        let device =
            tokio::spawn(async move { serve_pairing(device_end, b"123456", "g", soon()).await });
        let err = pair_as_host(host_end, b"654321", &key, soon())
            .await
            .unwrap_err();
        assert!(matches!(err, PairingError::WrongPassword), "{err}");
        assert!(!err.to_string().contains("654321"));
        assert!(matches!(
            device.await.unwrap(),
            Err(PairingError::WrongPassword)
        ));
    }

    #[tokio::test]
    async fn a_silent_peer_times_out_and_a_closed_one_is_named() {
        let key = AdbKey::generate("xagent@test").unwrap();
        let (host_end, _device_end) = tokio::io::duplex(1024);
        let deadline = Instant::now() + Duration::from_millis(200);
        let err = pair_as_host(host_end, b"1", &key, deadline)
            .await
            .unwrap_err();
        assert!(matches!(err, PairingError::Timeout(Stage::Tls)), "{err}");
        let (host_end, device_end) = tokio::io::duplex(1024);
        drop(device_end);
        let err = pair_as_host(host_end, b"1", &key, soon())
            .await
            .unwrap_err();
        assert!(matches!(err, PairingError::PeerClosed(Stage::Tls)), "{err}");
    }
}
