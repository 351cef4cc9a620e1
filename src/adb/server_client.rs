//! Async client of the adb server's host protocol ("smart sockets", tcp:5037 or `-P`).
//!
//! Request: `%04x` + service; response `OKAY` or `FAIL` + `%04x` + message; queries then carry
//! `%04x` + payload. Source: AOSP `packages/modules/adb/docs/dev/protocol.md`, `services.cpp`,
//! `client/adb_client.cpp`. Each call opens one short TCP connection to the server (that is how
//! adb's own client works; the server keeps the device transports), so no process is spawned per
//! call and calls on different phones never share state.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::error::{with_deadline, AdbError};
use super::stream::ServiceStream;

/// Deadline of host-only queries (`host:version`, `host:devices-l`, connect), ms.
pub const HOST_QUERY_DEADLINE: Duration = Duration::from_secs(5);

/// Longest `%04x` payload: 0xffff bytes.
const MAX_HEX_PAYLOAD: usize = 0xffff;

/// A handle on one adb server; cheap to clone.
#[derive(Clone, Debug)]
pub struct AdbServerClient {
    addr: String,
}

impl AdbServerClient {
    /// `addr` is `host:port`, e.g. `127.0.0.1:5037`.
    pub fn new(addr: impl Into<String>) -> Self {
        Self { addr: addr.into() }
    }

    /// The server address.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    async fn dial(&self) -> Result<TcpStream, AdbError> {
        let tcp =
            TcpStream::connect(&self.addr)
                .await
                .map_err(|e| AdbError::ServerUnavailable {
                    addr: self.addr.clone(),
                    reason: e.to_string(),
                })?;
        tcp.set_nodelay(true)?;
        Ok(tcp)
    }

    /// Sends one request on `tcp` and reads `OKAY` or `FAIL`.
    async fn request(tcp: &mut TcpStream, service: &str) -> Result<(), AdbError> {
        if service.len() > MAX_HEX_PAYLOAD {
            return Err(AdbError::Protocol("service request too long".into()));
        }
        tcp.write_all(format!("{:04x}{service}", service.len()).as_bytes())
            .await?;
        let mut status = [0u8; 4];
        tcp.read_exact(&mut status).await?;
        match &status {
            b"OKAY" => Ok(()),
            b"FAIL" => {
                let msg = read_hex_payload(tcp).await?;
                Err(AdbError::from_server_fail(&String::from_utf8_lossy(&msg)))
            }
            other => Err(AdbError::Protocol(format!(
                "unexpected adb server status {:?}",
                String::from_utf8_lossy(other)
            ))),
        }
    }

    /// A host query answered with `OKAY` + `%04x` payload.
    async fn query(&self, service: &str) -> Result<Vec<u8>, AdbError> {
        let step = || {
            format!(
                "adb server query {}",
                service.split(':').take(2).collect::<Vec<_>>().join(":")
            )
        };
        with_deadline(step, HOST_QUERY_DEADLINE, async {
            let mut tcp = self.dial().await?;
            Self::request(&mut tcp, service).await?;
            read_hex_payload(&mut tcp).await
        })
        .await
    }

    /// `host:version` → the server's protocol version (41 for current servers).
    pub async fn version(&self) -> Result<u32, AdbError> {
        let payload = self.query("host:version").await?;
        u32::from_str_radix(String::from_utf8_lossy(&payload).trim(), 16)
            .map_err(|_| AdbError::Protocol("bad host:version payload".into()))
    }

    /// `host:devices-l` → the raw device list text (parse with `device::parse::devices`).
    pub async fn devices_l(&self) -> Result<String, AdbError> {
        Ok(String::from_utf8_lossy(&self.query("host:devices-l").await?).into_owned())
    }

    /// `host:connect:<host:port>` → the server's answer text. adb reports failure in the text
    /// (`failed to connect to …`), which is mapped to [`AdbError::Refused`].
    pub async fn connect_device(&self, target: &str) -> Result<String, AdbError> {
        let text = String::from_utf8_lossy(&self.query(&format!("host:connect:{target}")).await?)
            .into_owned();
        if text.contains("connected to") && !text.starts_with("failed") {
            Ok(text)
        } else {
            Err(AdbError::Refused(text))
        }
    }

    /// `host:disconnect:<host:port>` → the server's answer text (`disconnected HOST:PORT`;
    /// AOSP `services.cpp` answers `FAIL no such device 'HOST:PORT'` when it has none).
    pub async fn disconnect_device(&self, target: &str) -> Result<String, AdbError> {
        Ok(
            String::from_utf8_lossy(&self.query(&format!("host:disconnect:{target}")).await?)
                .into_owned(),
        )
    }

    /// `host:mdns:services` → the text adb's own mDNS discovery lists (one service a line,
    /// `instance\ttype\tIP:PORT`; parse with `adb::mdns::parse_adb_server_services`). Servers
    /// without mDNS discovery (Debian's adb 29) answer `FAIL`, an [`AdbError`].
    pub async fn mdns_services(&self) -> Result<String, AdbError> {
        Ok(String::from_utf8_lossy(&self.query("host:mdns:services").await?).into_owned())
    }

    /// The device's feature list: `host-transport-id:<id>:features` when the transport id is
    /// known, else `host-serial:<serial>:features`.
    pub async fn features(
        &self,
        serial: &str,
        transport_id: Option<u64>,
    ) -> Result<Vec<String>, AdbError> {
        let request = match transport_id {
            Some(id) => format!("host-transport-id:{id}:features"),
            None => format!("host-serial:{serial}:features"),
        };
        let payload = self.query(&request).await?;
        Ok(String::from_utf8_lossy(&payload)
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect())
    }

    /// A stream of device lists, one per change (the first at once): `host:track-devices-l`,
    /// whose long lines end in `transport_id:N` (adb ≥ 1.0.41; Google adb 34 and Debian's
    /// adb 29 both have it), else `host:track-devices` (`serial\tstate` lines, no transport
    /// ids) from a server that refuses the long form.
    pub async fn track_devices(&self) -> Result<DeviceTracker, AdbError> {
        match self.track("host:track-devices-l").await {
            Err(AdbError::Refused(_)) => self.track("host:track-devices").await,
            other => other,
        }
    }

    async fn track(&self, service: &'static str) -> Result<DeviceTracker, AdbError> {
        let tcp = with_deadline(
            || "adb server track-devices".into(),
            HOST_QUERY_DEADLINE,
            async {
                let mut tcp = self.dial().await?;
                Self::request(&mut tcp, service).await?;
                Ok(tcp)
            },
        )
        .await?;
        tcp.set_nodelay(true)?;
        Ok(DeviceTracker { tcp })
    }

    /// Opens a device service (`service`) on one transport: `host:transport-id:<id>` when its
    /// transport id is known — the one way to reach one of two transports adb lists under the
    /// same serial (two cheap tablets both `0123456789ABCDEF`: `host:transport:<serial>`
    /// answers "more than one device with serial …", AOSP `transport.cpp`
    /// `acquire_one_transport`; field bug 50) — else `host:transport:<serial>`. The caller
    /// bounds the whole exchange with its deadline.
    pub async fn open_service(
        &self,
        serial: &str,
        transport_id: Option<u64>,
        service: &str,
    ) -> Result<ServiceStream, AdbError> {
        let mut tcp = self.dial().await?;
        let select = match transport_id {
            Some(id) => format!("host:transport-id:{id}"),
            None => format!("host:transport:{serial}"),
        };
        Self::request(&mut tcp, &select).await?;
        Self::request(&mut tcp, service)
            .await
            .map_err(|e| e.for_service(service))?;
        Ok(ServiceStream::Server(tcp))
    }
}

/// The `host:track-devices` stream.
pub struct DeviceTracker {
    tcp: TcpStream,
}

impl DeviceTracker {
    /// Waits for the next device list (`serial\tstate\n` lines). Errors when the server goes away.
    pub async fn next_list(&mut self) -> Result<String, AdbError> {
        Ok(String::from_utf8_lossy(&read_hex_payload(&mut self.tcp).await?).into_owned())
    }
}

/// Reads `%04x` + that many bytes.
async fn read_hex_payload(tcp: &mut TcpStream) -> Result<Vec<u8>, AdbError> {
    let mut len = [0u8; 4];
    tcp.read_exact(&mut len).await?;
    let len = usize::from_str_radix(std::str::from_utf8(&len).unwrap_or("x"), 16)
        .map_err(|_| AdbError::Protocol("bad %04x length from adb server".into()))?;
    let mut payload = vec![0u8; len];
    tcp.read_exact(&mut payload).await?;
    Ok(payload)
}
