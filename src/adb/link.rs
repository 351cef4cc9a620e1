//! [`DeviceLink`]: how the connector reaches one phone — through an adb server by serial, or over
//! a direct transport — and the device services on top: shell (v2 with exit code, or legacy),
//! `exec:` for binary output, and sync pull/push. Every operation takes a deadline over the whole
//! exchange; on expiry the stream is dropped (closing the service on the phone).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex as AsyncMutex;

use super::direct::DirectConnection;
use super::error::{with_deadline, AdbError};
use super::host_key::HostKeyFile;
use super::server_client::AdbServerClient;
use super::shell_v2::{self, ShellV2Decoder};
use super::stream::{FrameReader, ServiceStream};
use super::sync_proto::{self as sp};

/// Result of a shell command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutput {
    /// Standard output bytes.
    pub stdout: Vec<u8>,
    /// Standard error bytes (empty on legacy shell, where stderr is merged into stdout).
    pub stderr: Vec<u8>,
    /// Exit status; on legacy shell (no `shell_v2`) recovered from a marker, `None` if absent.
    pub exit_code: Option<u8>,
}

impl ShellOutput {
    /// Stdout as (lossy) UTF-8.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// How a phone is reached.
#[derive(Clone, Debug)]
pub enum LinkKind {
    /// Through an adb server, addressing the transport by its adb serial.
    Server {
        /// The server.
        client: AdbServerClient,
        /// adb's serial of the transport (`R58N…`, `127.0.0.1:5555`).
        adb_serial: String,
        /// adb's id of the transport (`transport_id:N` of `devices -l`), when the server gave
        /// it: services are then opened on exactly this transport (`host:transport-id:N`),
        /// never on another phone listed under the same serial.
        transport_id: Option<u64>,
    },
    /// Direct adbd transport to `host:port`.
    Direct {
        /// Address.
        addr: String,
    },
}

/// A reachable phone. Cheap to clone; the direct connection is shared and re-dialled when it
/// drops.
#[derive(Clone)]
pub struct DeviceLink {
    kind: LinkKind,
    direct: Arc<AsyncMutex<Option<DirectConnection>>>,
    features: Arc<std::sync::OnceLock<Vec<String>>>,
    /// The connector's adb key for direct links (`AUTH`, `STLS`); `None` = keyless.
    host_key: Option<HostKeyFile>,
}

impl std::fmt::Debug for DeviceLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceLink({:?})", self.kind)
    }
}

impl DeviceLink {
    /// A link through an adb server to the transport listed as `adb_serial`.
    pub fn via_server(client: AdbServerClient, adb_serial: impl Into<String>) -> Self {
        Self::via_transport(client, adb_serial, None)
    }

    /// A link through an adb server to one transport: by its `transport_id` when known
    /// (`host:transport-id:N`), else by `adb_serial`.
    pub fn via_transport(
        client: AdbServerClient,
        adb_serial: impl Into<String>,
        transport_id: Option<u64>,
    ) -> Self {
        Self::new(LinkKind::Server {
            client,
            adb_serial: adb_serial.into(),
            transport_id,
        })
    }

    /// A direct link (connects lazily) without an adb key.
    pub fn direct(addr: impl Into<String>) -> Self {
        Self::new(LinkKind::Direct { addr: addr.into() })
    }

    /// A direct link that answers `AUTH` and `STLS` with `key` (connects lazily).
    pub fn direct_with_key(addr: impl Into<String>, key: HostKeyFile) -> Self {
        let mut link = Self::direct(addr);
        link.host_key = Some(key);
        link
    }

    fn new(kind: LinkKind) -> Self {
        Self {
            kind,
            direct: Arc::new(AsyncMutex::new(None)),
            features: Arc::new(std::sync::OnceLock::new()),
            host_key: None,
        }
    }

    /// How this phone is reached.
    pub fn kind(&self) -> &LinkKind {
        &self.kind
    }

    async fn direct_conn(&self, addr: &str) -> Result<DirectConnection, AdbError> {
        let mut guard = self.direct.lock().await;
        if let Some(conn) = guard.as_ref().filter(|c| c.is_alive()) {
            return Ok(conn.clone());
        }
        let conn = DirectConnection::connect_with(addr, self.host_key.as_ref()).await?;
        *guard = Some(conn.clone());
        Ok(conn)
    }

    /// For direct links: whether the TCP connection is up (no I/O). Server links: `true` (the
    /// tracker reports their state).
    pub async fn is_connected(&self) -> bool {
        match &self.kind {
            LinkKind::Server { .. } => true,
            LinkKind::Direct { .. } => self
                .direct
                .lock()
                .await
                .as_ref()
                .is_some_and(|c| c.is_alive()),
        }
    }

    /// For direct links: time since the device last sent anything (`None` when not connected or
    /// not a direct link).
    pub async fn idle_for(&self) -> Option<Duration> {
        match &self.kind {
            LinkKind::Server { .. } => None,
            LinkKind::Direct { .. } => self
                .direct
                .lock()
                .await
                .as_ref()
                .filter(|c| c.is_alive())
                .map(|c| c.idle_for()),
        }
    }

    /// Drops a direct link's connection so the next call dials again.
    pub async fn reset(&self) {
        if let Some(c) = self.direct.lock().await.take() {
            c.close();
        }
    }

    /// The device's feature list (cached after the first success).
    pub async fn features(&self) -> Result<Vec<String>, AdbError> {
        if let Some(f) = self.features.get() {
            return Ok(f.clone());
        }
        let list = match &self.kind {
            LinkKind::Server {
                client,
                adb_serial,
                transport_id,
            } => client.features(adb_serial, *transport_id).await?,
            LinkKind::Direct { addr } => self.direct_conn(addr).await?.features(),
        };
        let _ = self.features.set(list.clone());
        Ok(list)
    }

    /// Opens a raw service stream (no deadline; callers wrap). A request longer than the
    /// phone's max payload ([`Self::max_request`]) is refused with
    /// [`AdbError::RequestTooLong`] before anything is sent.
    pub async fn open(&self, service: &str) -> Result<ServiceStream, AdbError> {
        let bytes = service.len() + 1; // sent NUL-terminated
        match &self.kind {
            LinkKind::Server {
                client,
                adb_serial,
                transport_id,
            } => {
                let max = self.max_request().await?;
                if bytes > max {
                    return Err(AdbError::RequestTooLong { bytes, max });
                }
                client
                    .open_service(adb_serial, *transport_id, service)
                    .await
            }
            LinkKind::Direct { addr } => {
                let conn = self.direct_conn(addr).await?;
                if bytes > conn.max_payload() {
                    return Err(AdbError::RequestTooLong {
                        bytes,
                        max: conn.max_payload(),
                    });
                }
                Ok(ServiceStream::Direct(conn.open(service).await?))
            }
        }
    }

    /// The longest command [`Self::shell`] can send in one request, bytes: [`Self::max_request`]
    /// less the service prefix, the legacy exit-status marker and the NUL
    /// ([`SHELL_REQUEST_OVERHEAD`]).
    pub async fn max_shell_command(&self) -> Result<usize, AdbError> {
        Ok(self
            .max_request()
            .await?
            .saturating_sub(SHELL_REQUEST_OVERHEAD))
    }

    /// The longest service request (bytes, with its NUL) the phone takes in one packet. Direct:
    /// the max payload negotiated in `CNXN`. Through an adb server, which does not tell it: by
    /// the phone's features — AOSP raised adbd's max payload from 4096 (`MAX_PAYLOAD_V1`) to
    /// 256 KiB (`MAX_PAYLOAD_V2`) in Android 7, the release that brought `shell_v2`
    /// (`adb.h`), so without `shell_v2` it is 4096, with it at least 256 KiB.
    pub async fn max_request(&self) -> Result<usize, AdbError> {
        const MAX_PAYLOAD_V1: usize = 4096;
        const MAX_PAYLOAD_V2: usize = 256 * 1024;
        match &self.kind {
            LinkKind::Direct { addr } => Ok(self.direct_conn(addr).await?.max_payload()),
            LinkKind::Server { .. } => {
                Ok(if self.features().await?.iter().any(|f| f == "shell_v2") {
                    MAX_PAYLOAD_V2
                } else {
                    MAX_PAYLOAD_V1
                })
            }
        }
    }

    /// Runs `command` (already quoted for the phone's `sh`) and collects output up to `limit`
    /// bytes per stream, within `deadline`. Uses shell v2 when the phone has `shell_v2`
    /// (exit code kept), legacy `shell:` otherwise.
    pub async fn shell(
        &self,
        command: &str,
        deadline: Duration,
        limit: usize,
    ) -> Result<ShellOutput, AdbError> {
        let step = || format!("shell: {}", first_word(command));
        let _busy = super::meter::busy();
        with_deadline(step, deadline, async {
            if self.features().await?.iter().any(|f| f == "shell_v2") {
                let mut s = self.open(&format!("shell,v2,raw:{command}")).await?;
                read_shell_v2(&mut s, limit).await
            } else {
                // Legacy shell has no exit status (field bug 19): append a marker carrying `$?`.
                let mut s = self
                    .open(&format!("shell:{command} ; echo {LEGACY_RC_MARKER}$?"))
                    .await?;
                Ok(split_legacy_rc(s.read_to_end(limit).await?))
            }
        })
        .await
    }

    /// Runs `command` over `exec:` (raw, binary-safe stdout, no pty, no exit code) within
    /// `deadline`, up to `limit` bytes.
    pub async fn exec(
        &self,
        command: &str,
        deadline: Duration,
        limit: usize,
    ) -> Result<Vec<u8>, AdbError> {
        let step = || format!("exec: {}", first_word(command));
        let _busy = super::meter::busy();
        with_deadline(step, deadline, async {
            let mut s = self.open(&format!("exec:{command}")).await?;
            s.read_to_end(limit).await
        })
        .await
    }

    /// [`Self::exec`] for output whose first `head` bytes announce its total length
    /// ([`ServiceStream::read_to_end_announced`]): a raw `screencap` dump is read into one
    /// buffer of its final size, taken from `buffer`.
    pub async fn exec_announced(
        &self,
        command: &str,
        deadline: Duration,
        limit: usize,
        head: usize,
        announced: fn(&[u8]) -> Option<usize>,
        buffer: fn(usize) -> Vec<u8>,
    ) -> Result<Vec<u8>, AdbError> {
        let step = || format!("exec: {}", first_word(command));
        let _busy = super::meter::busy();
        with_deadline(step, deadline, async {
            let mut s = self.open(&format!("exec:{command}")).await?;
            s.read_to_end_announced(limit, head, announced, buffer)
                .await
        })
        .await
    }

    /// Pulls a file over sync `RECV`, up to `limit` bytes, within `deadline`.
    pub async fn pull(
        &self,
        path: &str,
        deadline: Duration,
        limit: usize,
    ) -> Result<Vec<u8>, AdbError> {
        let _busy = super::meter::busy();
        with_deadline(|| "sync pull".into(), deadline, async {
            let mut s = self.open("sync:").await?;
            let mut r = FrameReader::new(&mut s);
            r.write_all(&sp::encode(sp::ID_RECV, path.as_bytes()))
                .await?;
            let mut out = Vec::new();
            // From the first DATA frame on, the file's bytes move (see `meter`).
            let mut first_data: Option<std::time::Instant> = None;
            loop {
                let head = r.read_exact(8).await?;
                let id = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
                let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
                match id {
                    sp::ID_DATA if len <= sp::SYNC_DATA_MAX => {
                        if out.len() + len > limit {
                            return Err(AdbError::OutputTooLarge { limit });
                        }
                        first_data.get_or_insert_with(std::time::Instant::now);
                        out.extend(r.read_exact(len).await?);
                    }
                    sp::ID_DONE => {
                        if let Some(t) = first_data {
                            super::meter::transfer(t.elapsed());
                        }
                        break;
                    }
                    sp::ID_FAIL if len <= 4096 => {
                        let msg = r.read_exact(len).await?;
                        return Err(AdbError::Refused(String::from_utf8_lossy(&msg).into()));
                    }
                    _ => return Err(AdbError::Protocol("bad sync RECV reply".into())),
                }
            }
            let _ = r.write_all(&sp::encode(sp::ID_QUIT, &[])).await;
            Ok(out)
        })
        .await
    }

    /// Pushes `data` to `path` with `mode` (e.g. `0o644`) over sync `SEND`, within `deadline`.
    pub async fn push(
        &self,
        path: &str,
        mode: u32,
        data: &[u8],
        deadline: Duration,
    ) -> Result<(), AdbError> {
        let _busy = super::meter::busy();
        with_deadline(|| "sync push".into(), deadline, async {
            let mut s = self.open("sync:").await?;
            let mut r = FrameReader::new(&mut s);
            let spec = format!("{path},{mode}");
            let mut out = sp::encode(sp::ID_SEND, spec.as_bytes());
            for chunk in data.chunks(sp::SYNC_DATA_MAX) {
                out.extend(sp::encode(sp::ID_DATA, chunk));
            }
            // The pushed file's mtime, Unix seconds (the ADB floor keeps its own clock).
            let mtime = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as u32);
            out.extend(sp::encode_word(sp::ID_DONE, mtime));
            let sending = std::time::Instant::now();
            r.write_all(&out).await?;
            super::meter::transfer(sending.elapsed());
            let head = r.read_exact(8).await?;
            let id = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
            let len = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
            match id {
                sp::ID_OKAY => {
                    let _ = r.write_all(&sp::encode(sp::ID_QUIT, &[])).await;
                    Ok(())
                }
                sp::ID_FAIL if len <= 4096 => {
                    let msg = r.read_exact(len).await?;
                    Err(AdbError::Refused(String::from_utf8_lossy(&msg).into()))
                }
                _ => Err(AdbError::Protocol("bad sync SEND reply".into())),
            }
        })
        .await
    }
}

/// Marker line the legacy-shell wrapper prints before the exit status.
pub const LEGACY_RC_MARKER: &str = "__XAGENT_RC=";

/// Bytes a shell request adds around its command: `shell,v2,raw:` (13), or `shell:` and
/// ` ; echo __XAGENT_RC=$?` (6 + 23), and the NUL, rounded up.
pub const SHELL_REQUEST_OVERHEAD: usize = 32;

/// Splits legacy-shell output into the command's output (stdout and stderr merged, as the
/// legacy `shell:` service gives them) and the status printed after [`LEGACY_RC_MARKER`].
pub fn split_legacy_rc(mut out: Vec<u8>) -> ShellOutput {
    let marker = LEGACY_RC_MARKER.as_bytes();
    let pos = out.windows(marker.len()).rposition(|w| w == marker);
    let exit_code = pos.and_then(|p| {
        let tail = String::from_utf8_lossy(&out[p + marker.len()..]).into_owned();
        tail.trim().parse::<u8>().ok()
    });
    if let Some(p) = pos.filter(|_| exit_code.is_some()) {
        out.truncate(p);
    }
    ShellOutput {
        stdout: out,
        stderr: Vec::new(),
        exit_code,
    }
}

/// The program name of a command line, for error messages (never the arguments: they may be
/// user text).
fn first_word(command: &str) -> &str {
    command.split_whitespace().next().unwrap_or("")
}

async fn read_shell_v2(s: &mut ServiceStream, limit: usize) -> Result<ShellOutput, AdbError> {
    // Non-interactive: close stdin at once, as adb does (research notes §5.2).
    s.write_all(&shell_v2::encode(shell_v2::ID_CLOSE_STDIN, &[]))
        .await?;
    let mut dec = ShellV2Decoder::default();
    let mut out = ShellOutput {
        stdout: Vec::new(),
        stderr: Vec::new(),
        exit_code: None,
    };
    while let Some(chunk) = s.read_chunk().await? {
        dec.push(&chunk);
        while let Some((id, data)) = dec.next_packet() {
            let sink = match id {
                shell_v2::ID_STDOUT => &mut out.stdout,
                shell_v2::ID_STDERR => &mut out.stderr,
                shell_v2::ID_EXIT => {
                    out.exit_code = data.first().copied();
                    continue;
                }
                _ => continue,
            };
            if sink.len() + data.len() > limit {
                return Err(AdbError::OutputTooLarge { limit });
            }
            sink.extend_from_slice(&data);
        }
        if let Some(len) = dec.oversized() {
            return Err(AdbError::Protocol(format!(
                "shell v2 packet declares {len} bytes, above the 1 MiB limit"
            )));
        }
        if out.exit_code.is_some() {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_exit_status_is_recovered_from_the_marker() {
        let o = split_legacy_rc(b"/system/bin/sh: x: not found\n__XAGENT_RC=127\n".to_vec());
        assert_eq!(o.exit_code, Some(127));
        assert_eq!(o.stdout, b"/system/bin/sh: x: not found\n");
        let o = split_legacy_rc(b"no newline__XAGENT_RC=0\n".to_vec());
        assert_eq!(
            (o.exit_code, o.stdout.as_slice()),
            (Some(0), &b"no newline"[..])
        );
        let o = split_legacy_rc(b"cut off".to_vec());
        assert_eq!((o.exit_code, o.stdout.as_slice()), (None, &b"cut off"[..]));
    }
}
