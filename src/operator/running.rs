//! Whether the connector (`serve`) runs, as `check` asks it: its operator socket in the data
//! dir ([`super::bindings::SOCKET_FILE`]) answers, else its listen address answers `GET
//! /health` (an HTTP status line, whatever the status: without the API key it is 401, which
//! only a running server gives). A wildcard listen address (`0.0.0.0`, `[::]`) is asked on
//! loopback, where the connector answers too ([`super::reach::local_reach`]).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Deadline of each probe (socket connect, HTTP exchange).
pub const PROBE_DEADLINE: Duration = Duration::from_secs(3);

/// The systemd unit the package installs (the fix when nothing answers).
pub const SERVICE_UNIT: &str = "xagent-adb-connector";

/// What answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Running {
    /// The operator socket at this path accepted a connection.
    Socket(PathBuf),
    /// `GET /health` at this URL got an HTTP answer (plain HTTP), or the TLS port accepted a
    /// connection (a TLS listener is not spoken to).
    Listen(String),
    /// Nothing answered: the socket tried (when a data dir is configured) and the URL.
    Nothing {
        /// The socket path tried, `None` without a data dir.
        socket: Option<PathBuf>,
        /// The `/health` URL tried.
        url: String,
        /// Why the URL did not answer (the OS's words, or a timeout).
        why: String,
    },
}

/// Asks the socket in `data_dir`, then `listen`; never fails (what did not answer is in
/// [`Running::Nothing`]).
pub async fn probe(data_dir: Option<&Path>, listen: SocketAddr, tls: bool) -> Running {
    if let Some(dir) = data_dir {
        let path = dir.join(super::bindings::SOCKET_FILE);
        // The connector writes its answer and closes; dropping the stream unread is fine.
        if let Ok(Ok(_)) =
            tokio::time::timeout(PROBE_DEADLINE, tokio::net::UnixStream::connect(&path)).await
        {
            return Running::Socket(path);
        }
    }
    let addr = super::reach::local_reach(listen);
    let scheme = if tls { "https" } else { "http" };
    let url = format!("{scheme}://{addr}/health");
    match tokio::time::timeout(PROBE_DEADLINE, ask_health(addr, tls)).await {
        Ok(Ok(())) => Running::Listen(url),
        Ok(Err(why)) => Running::Nothing {
            socket: data_dir.map(|d| d.join(super::bindings::SOCKET_FILE)),
            url,
            why,
        },
        Err(_) => Running::Nothing {
            socket: data_dir.map(|d| d.join(super::bindings::SOCKET_FILE)),
            url,
            why: format!("no answer within {} s", PROBE_DEADLINE.as_secs()),
        },
    }
}

/// One `GET /health` on a fresh connection to `addr`: `Ok` when an HTTP status line comes back
/// (or, with `tls`, when the port accepts the connection).
async fn ask_health(addr: SocketAddr, tls: bool) -> Result<(), String> {
    let mut stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| e.to_string())?;
    if tls {
        return Ok(());
    }
    let request = format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut head = [0u8; 8];
    stream
        .read_exact(&mut head)
        .await
        .map_err(|e| format!("the port accepted the connection but gave no HTTP answer ({e})"))?;
    if head.starts_with(b"HTTP/1.") {
        Ok(())
    } else {
        Err("the port answers, but not with HTTP (another program on that port?)".into())
    }
}

/// `check`'s line(s) for `running` (text ending in a newline) and whether it is fine.
pub fn report(running: &Running) -> (String, bool) {
    match running {
        Running::Socket(path) => (
            format!(
                "ok       connector running (its operator socket {} answers)\n",
                path.display()
            ),
            true,
        ),
        Running::Listen(url) => (
            format!("ok       connector running ({url} answers)\n"),
            true,
        ),
        Running::Nothing { socket, url, why } => {
            let socket = match socket {
                Some(path) => format!("its operator socket {} and ", path.display()),
                None => String::new(),
            };
            (
                format!(
                    "PROBLEM  connector not running: nothing answers on {socket}{url} ({why})\n         \
                     fix: start the service: `systemctl start {SERVICE_UNIT}` (its log: \
                     `journalctl -u {SERVICE_UNIT}`), or run `xagent-adb-connector serve` with this \
                     configuration\n"
                ),
                false,
            )
        }
    }
}
