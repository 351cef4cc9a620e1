//! The connector's own adb key: one RSA-2048 key in the data dir (`adbkey`, PKCS#8 PEM, 0600),
//! made on first use and then loaded. The direct transport signs `AUTH` tokens with it, offers
//! it as `RSAPUBLICKEY`, and presents its certificate in the `STLS` upgrade; pairing sends its
//! public line to the phone. It never appears in logs, errors or results (`Debug` shows nothing).
//!
//! Android forgets keys (authorized and paired alike) not used for 7 days, unless the user turns
//! off "Disable adb authorization timeout" / automatic revocation in Developer options.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::OnceCell;
use xagent_adb_pairing::rustls::ClientConfig;
use xagent_adb_pairing::{pair_as_host, tls, AdbKey, Guid, PairingError, Stage};

use super::error::AdbError;

/// The comment a phone shows for this key under "Paired devices" / in its prompt.
pub const KEY_COMMENT: &str = "xagent-adb-connector";

/// The connector's adb identity for the direct transport: its RSA key ([`AdbKey`], signs `AUTH`
/// tokens, offered as `RSAPUBLICKEY`) and the TLS client configuration of the `STLS` upgrade
/// built from it once. Cheap to clone; `Debug` shows no key material.
#[derive(Clone)]
pub struct HostKey {
    key: Arc<AdbKey>,
    tls: Arc<ClientConfig>,
}

impl std::fmt::Debug for HostKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostKey").finish_non_exhaustive()
    }
}

impl HostKey {
    /// Wraps `key`. Errors: [`AdbError::Protocol`] when its certificate cannot be built.
    pub fn new(key: AdbKey) -> Result<HostKey, AdbError> {
        let tls = tls::host_client_config(&key)
            .map_err(|e| AdbError::Protocol(format!("adb key certificate: {e}")))?;
        Ok(HostKey {
            key: Arc::new(key),
            tls,
        })
    }

    /// The key (pairing sends its public line to the phone).
    pub fn key(&self) -> &AdbKey {
        &self.key
    }

    /// The TLS client configuration of the `STLS` upgrade and of pairing.
    pub fn tls_config(&self) -> Arc<ClientConfig> {
        Arc::clone(&self.tls)
    }
}

/// The key file, loaded (or generated: a second or more of CPU on a Pi, off the async workers)
/// once, on first use, so a connector with no direct phones never pays for it. Cheap to clone.
#[derive(Clone, Debug)]
pub struct HostKeyFile {
    path: PathBuf,
    cell: Arc<OnceCell<HostKey>>,
}

impl HostKeyFile {
    /// The key at `path` (usually `DATA_DIR/adbkey`); nothing is read yet.
    pub fn new(path: impl Into<PathBuf>) -> HostKeyFile {
        HostKeyFile {
            path: path.into(),
            cell: Arc::new(OnceCell::new()),
        }
    }

    /// The key if it is loaded; otherwise starts loading (or making) it in the background and
    /// answers `None` at once. For warming the key at start-up; a phone's `AUTH` waits for it
    /// with [`HostKeyFile::get`] instead, since `None` is no refusal by the phone.
    pub fn ready(&self) -> Option<HostKey> {
        if let Some(key) = self.cell.get() {
            return Some(key.clone());
        }
        let this = self.clone();
        tokio::spawn(async move {
            if let Err(e) = this.get().await {
                tracing::warn!(error = %e, "the connector's adb key is unavailable");
            }
        });
        None
    }

    /// Whether the key file exists (loading it is cheap; making it is not).
    pub fn exists(&self) -> bool {
        self.path.exists()
    }

    /// The key, loaded or generated on the first call. The work runs in its own task, so a
    /// caller that gives up (a connect deadline) does not waste it: the next call finds the
    /// key. Errors: [`AdbError::Protocol`] naming the file when it cannot be read, parsed or
    /// written (never its content).
    pub async fn get(&self) -> Result<HostKey, AdbError> {
        if let Some(key) = self.cell.get() {
            return Ok(key.clone());
        }
        let this = self.clone();
        tokio::spawn(async move {
            this.cell
                .get_or_try_init(|| async {
                    let path = this.path.clone();
                    let key = tokio::task::spawn_blocking(move || {
                        AdbKey::load_or_generate(&path, KEY_COMMENT)
                    })
                    .await
                    .map_err(|e| AdbError::Protocol(format!("adb key task: {e}")))?
                    .map_err(|e| AdbError::Protocol(format!("adb key: {e}")))?;
                    HostKey::new(key)
                })
                .await
                .cloned()
        })
        .await
        .map_err(|e| AdbError::Protocol(format!("adb key task: {e}")))?
    }
}

/// Pairs `key` with a phone's pairing port `addr` (`HOST:PORT`, the "Pair device with pairing
/// code" dialog or the QR flow's mDNS answer) using `password` (the code, or the QR `P:` value);
/// TCP connect and the whole exchange within `within`. Returns the phone's GUID. Errors:
/// [`PairWithPhoneError::NothingListens`] when the connect is refused,
/// [`PairWithPhoneError::Unreachable`] when it fails otherwise,
/// [`PairWithPhoneError::NotPairingPort`] when the peer closed before TLS finished and the port
/// answers as adbd, else the exchange's [`PairingError`] (a connect past the deadline is
/// [`PairingError::Timeout`]).
pub async fn pair_with_phone(
    key: &HostKey,
    addr: &str,
    password: &[u8],
    within: Duration,
) -> Result<Guid, PairWithPhoneError> {
    let deadline = super::deadline_in(within);
    let stream = tokio::time::timeout_at(deadline, tokio::net::TcpStream::connect(addr))
        .await
        .map_err(|_| PairWithPhoneError::Pairing(PairingError::Timeout(Stage::Tls)))?
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::ConnectionRefused => PairWithPhoneError::NothingListens,
            _ => PairWithPhoneError::Unreachable,
        })?;
    match pair_as_host(stream, password, key.key(), deadline).await {
        Ok(guid) => Ok(guid),
        // Closed (or broken) before TLS finished: the port may be adbd's, not a pairing
        // server (field row 58).
        Err(
            e @ (PairingError::PeerClosed(Stage::Tls)
            | PairingError::Tls(_)
            | PairingError::Protocol {
                stage: Stage::Tls, ..
            }
            | PairingError::Io {
                stage: Stage::Tls, ..
            }),
        ) => Err(
            match tokio::time::timeout_at(deadline, super::port_probe::probe_adbd(addr))
                .await
                .ok()
                .flatten()
            {
                Some(port) => PairWithPhoneError::NotPairingPort(port),
                None => PairWithPhoneError::Pairing(e),
            },
        ),
        Err(e) => Err(PairWithPhoneError::Pairing(e)),
    }
}

/// Why [`pair_with_phone`] failed; never holds the password.
#[derive(Debug, thiserror::Error)]
pub enum PairWithPhoneError {
    /// The TCP connection to the pairing port failed other than by a refusal (no route to the
    /// host, network unreachable).
    #[error("the phone's pairing port cannot be reached")]
    Unreachable,
    /// The host refused the connection: nothing listens at that port (the pairing dialog is
    /// closed, or the port is wrong).
    #[error("nothing listens at the phone's pairing port")]
    NothingListens,
    /// The port is one of adbd's, not a pairing server ([`super::port_probe`]).
    #[error("the port is adbd's, not the pairing dialog's")]
    NotPairingPort(super::port_probe::AdbdPort),
    /// The pairing exchange failed.
    #[error(transparent)]
    Pairing(PairingError),
}

/// How long after pairing a phone's refusal of the key is taken for "not recorded yet" (ms
/// order): adbd records the host's key in its pairing-result callback, which runs only after
/// both PeerInfos are exchanged (AOSP `adb/pairing_connection/pairing_connection.cpp`,
/// `adb/daemon/adb_wifi.cpp`), so a connect sent the moment the host has the phone's PeerInfo
/// can race it.
pub const PAIRED_KEY_GRACE: Duration = Duration::from_secs(2);

/// Runs `attempt` (the first connect after pairing) again every 100 ms while the phone answers
/// [`AdbError::NotPaired`], for up to [`PAIRED_KEY_GRACE`]; any other outcome, or `NotPaired`
/// after the grace, is returned as is.
pub async fn retry_until_key_recorded<T, F, Fut>(mut attempt: F) -> Result<T, AdbError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, AdbError>>,
{
    let until = tokio::time::Instant::now() + PAIRED_KEY_GRACE;
    loop {
        match attempt().await {
            Err(AdbError::NotPaired) if tokio::time::Instant::now() < until => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            outcome => return outcome,
        }
    }
}
