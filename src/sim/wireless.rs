//! Wireless debugging, device side (`sim --wireless`), as Android 11+ does it:
//!
//! - the **connect port** (adbd's `TlsServer`, a random port): plaintext `CNXN` in → device
//!   `STLS` → host `STLS` → TLS 1.3 where the client certificate's key must be a paired key →
//!   the device sends `CNXN` first, then the ordinary services of [`crate::transport`]
//!   (notes §3.4; AOSP `adb.cpp handle_new_connection`, `daemon/auth.cpp adbd_tls_verify_cert`);
//! - a one-shot **pairing server** per "the user scanned this" ([`Wireless::open_pairing`]):
//!   up to 20 attempts (`kMaxPairingAttempts`), closed after the first success; the host's
//!   key joins the paired keys, kept in `state_dir/adb_wifi_keys`;
//! - mDNS advertisements ([`crate::mdns`], only with `--mdns-interface`):
//!   `_adb-tls-pairing._tcp` named by the QR's `S:` (code variant: the GUID) while pairing is
//!   open, `_adb-tls-connect._tcp` named by the GUID on the connect port.
//!
//! The GUID is `adb-<serial>-<6 alnum>` (`GenerateDeviceGuid` in `daemon/mdns.cpp`), kept in
//! `state_dir/adb_wifi_guid` like `persist.adb.wifi.guid`. Passwords are never logged or
//! returned.

use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use xagent_adb_pairing::exchange::{serve_pairing_with, ServeOptions, Stage};
use xagent_adb_pairing::tls::{self, DeviceIdentity};
use xagent_adb_wire::wire::{Message, WireError, A_CNXN, A_STLS, A_STLS_VERSION, MAX_PAYLOAD};
use zeroize::Zeroizing;

use crate::auth::{KeyStore, PAIRED_KEYS_FILE};
use crate::mdns::Advertiser;
use crate::phone::Phone;
use crate::transport;

/// DNS-SD type of a phone's pairing server.
pub const PAIRING_SERVICE: &str = "_adb-tls-pairing._tcp.local.";
/// DNS-SD type of a phone's `STLS` connect port.
pub const CONNECT_SERVICE: &str = "_adb-tls-connect._tcp.local.";
/// Failed connections a pairing server takes before it gives up (`kMaxPairingAttempts`).
const MAX_PAIRING_ATTEMPTS: usize = 20;
/// Bound on one pairing attempt, from accept to the last byte.
const PAIRING_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(30);
/// Bound on each step of the `STLS` handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// First byte of a TLS handshake record (RFC 8446 §5.1, `ContentType.handshake`).
const TLS_HANDSHAKE_RECORD: u8 = 0x16;
/// File in `state_dir` that keeps the GUID.
const GUID_FILE: &str = "adb_wifi_guid";

/// What the user did on the phone's pairing screen (control API `POST /v1/pair`), with faults.
pub struct PairRequest {
    /// The code shown, or the QR's `P:`.
    pub password: Zeroizing<String>,
    /// The QR's `S:` (the pairing service's instance name); `None` for the code variant.
    pub service_name: Option<String>,
    /// The phone uses a different password than the host will (a mistyped code).
    pub wrong_password: bool,
    /// The phone leaves right after this stage.
    pub leave_after: Option<Stage>,
    /// The phone waits this long after each accept (a slow phone).
    pub delay: Duration,
}

impl std::fmt::Debug for PairRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PairRequest")
            .field("service_name", &self.service_name)
            .field("wrong_password", &self.wrong_password)
            .field("leave_after", &self.leave_after)
            .field("delay", &self.delay)
            .finish_non_exhaustive()
    }
}

/// Answer of `POST /v1/pair`.
#[derive(Clone, Debug, Serialize)]
pub struct PairingPorts {
    /// Port of the pairing server just opened.
    pub pairing_port: u16,
    /// Port of the `STLS` connect port.
    pub connect_port: u16,
    /// The GUID the phone will send.
    pub guid: String,
}

/// The `wireless` part of `GET /v1/state`.
#[derive(Clone, Debug, Serialize)]
pub struct WirelessView {
    /// Keys of paired hosts.
    pub paired_keys: usize,
    /// A pairing server is waiting.
    pub pairing_open: bool,
    /// Port of the `STLS` connect port.
    pub connect_port: u16,
    /// The phone's GUID.
    pub guid: String,
}

/// Handle to the phone's wireless debugging (cheap to clone).
#[derive(Clone, Debug)]
pub struct Wireless {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    phone: Phone,
    ip: IpAddr,
    /// The connect port, the token that stops its listener and connections, and its mDNS name.
    connect: Mutex<ConnectPort>,
    identity: DeviceIdentity,
    guid: String,
    mdns: Option<Advertiser>,
    shutdown: CancellationToken,
    /// The open pairing server: its number and its stop token.
    pairing: Mutex<Option<(u64, CancellationToken)>>,
    next_pairing: Mutex<u64>,
}

/// The `STLS` connect port being served.
#[derive(Debug)]
struct ConnectPort {
    port: u16,
    stop: CancellationToken,
    /// Full mDNS name it is announced under (`None` without mDNS).
    announced: Option<String>,
    /// The accept loop; it drops the listener when it ends, so a move waits for it and
    /// answers only once the old port refuses connections (as the phone's toggle has).
    served: Option<tokio::task::JoinHandle<()>>,
}

/// How a move of the connect port is announced (control API `POST /v1/wireless/move`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MoveRequest {
    /// Announce the new port as `<GUID> (N)`: the phone's responder renamed the service after
    /// a name conflict (RFC 6762 §9, RFC 6763 Appendix D; Android's
    /// `MdnsAdvertiser.Registration.getUpdatedServiceName` counts from 2). `None`: under the
    /// GUID itself.
    pub conflict_suffix: Option<u32>,
    /// Leave the earlier announcement registered, pointing at the port that just closed (a
    /// stale record: builds that register the new instance before withdrawing the old,
    /// b/432299214). Otherwise it is replaced (same name) or withdrawn (renamed).
    pub keep_stale: bool,
}

/// Answer of a move: the new port and the instance name announced (`None` without mDNS).
#[derive(Clone, Debug, Serialize)]
pub struct MovedPort {
    /// The new `STLS` connect port.
    pub connect_port: u16,
    /// The `_adb-tls-connect._tcp` instance it is announced under.
    pub instance: Option<String>,
}

fn guid(serial: &str, state_dir: Option<&Path>) -> std::io::Result<String> {
    let file = state_dir.map(|d| d.join(GUID_FILE));
    if let Some(text) = file.as_ref().and_then(|f| std::fs::read_to_string(f).ok()) {
        if !text.trim().is_empty() {
            return Ok(text.trim().to_string());
        }
    }
    let made = format!(
        "adb-{serial}-{}",
        xagent_adb_pairing::random_alphanumeric(6)
    );
    if let Some(f) = file {
        std::fs::write(f, &made)?;
    }
    Ok(made)
}

impl Wireless {
    /// Loads the paired keys and the GUID from `state_dir`, binds the connect port on `ip`
    /// (port chosen by the OS), starts mDNS on `mdns_interfaces` (none: no mDNS) and serves
    /// until `shutdown`. Errors: unreadable state, bind or mDNS failures.
    pub async fn start(
        phone: Phone,
        ip: IpAddr,
        mdns_interfaces: &[String],
        state_dir: Option<&Path>,
        shutdown: CancellationToken,
    ) -> std::io::Result<Wireless> {
        let (serial, model, sdk) = phone.with(|s| {
            let sdk = s.props.get("ro.build.version.sdk").cloned();
            (s.serial.clone(), s.model.clone(), sdk.unwrap_or_default())
        });
        let paired = KeyStore::open_file(true, state_dir, PAIRED_KEYS_FILE)?;
        phone.with(|s| s.paired = paired);
        let guid = guid(&serial, state_dir)?;
        let identity = DeviceIdentity::generate().map_err(std::io::Error::other)?;
        let mdns = Advertiser::start(mdns_interfaces, &serial, ip)?;
        let wireless = Wireless {
            inner: Arc::new(Inner {
                phone,
                ip,
                connect: Mutex::new(ConnectPort {
                    port: 0,
                    stop: CancellationToken::new(),
                    announced: None,
                    served: None,
                }),
                identity,
                guid,
                mdns,
                shutdown,
                pairing: Mutex::new(None),
                next_pairing: Mutex::new(0),
            }),
        };
        wireless
            .open_connect_port(&model, &sdk, &MoveRequest::default())
            .await?;
        Ok(wireless)
    }

    /// Serves the `STLS` connect port on a fresh OS-chosen port and announces it (under the
    /// GUID, or the GUID with the conflict suffix `how` asks for), replacing or withdrawing
    /// the earlier announcement unless `how` keeps it stale; an earlier port stops, with its
    /// connections.
    async fn open_connect_port(
        &self,
        model: &str,
        sdk: &str,
        how: &MoveRequest,
    ) -> std::io::Result<MovedPort> {
        let inner = &self.inner;
        let listener = TcpListener::bind((inner.ip, 0)).await?;
        let port = listener.local_addr()?.port();
        let stop = inner.shutdown.child_token();
        let instance = match how.conflict_suffix {
            Some(n) => format!("{} ({n})", inner.guid),
            None => inner.guid.clone(),
        };
        // Registered again under the same name, which replaces the earlier record in place (a
        // withdrawal first would race the new probe and mdns-sd would rename it `… (2)`).
        let announced = match &inner.mdns {
            Some(m) => {
                let txt = [("v", "1"), ("name", model), ("api", sdk)];
                Some(m.register(CONNECT_SERVICE, &instance, port, &txt)?)
            }
            None => None,
        };
        let served = tokio::spawn(serve_connect(
            listener,
            inner.phone.clone(),
            inner.identity.clone(),
            stop.clone(),
        ));
        let old = std::mem::replace(
            &mut *lock(&inner.connect),
            ConnectPort {
                port,
                stop,
                announced: announced.clone(),
                served: Some(served),
            },
        );
        old.stop.cancel();
        if let Some(served) = old.served {
            let _ = served.await;
        }
        if let (Some(m), Some(earlier)) = (&inner.mdns, &old.announced) {
            if Some(earlier) != announced.as_ref() && !how.keep_stale {
                m.unregister(earlier);
            }
        }
        Ok(MovedPort {
            connect_port: port,
            instance: announced.map(|_| instance),
        })
    }

    /// Moves the connect port (what a Wi-Fi toggle does to a real phone's wireless-debugging
    /// port): closes the old one and its connections, serves and announces a new one as `how`
    /// says. Errors: bind or mDNS failures.
    pub async fn move_connect_port(&self, how: &MoveRequest) -> std::io::Result<MovedPort> {
        let (model, sdk) = self.inner.phone.with(|s| {
            let sdk = s.props.get("ro.build.version.sdk").cloned();
            (s.model.clone(), sdk.unwrap_or_default())
        });
        self.open_connect_port(&model, &sdk, how).await
    }

    /// The `GET /v1/state` view.
    pub fn view(&self) -> WirelessView {
        WirelessView {
            paired_keys: self.inner.phone.with(|s| s.paired.accepted.len()),
            pairing_open: lock(&self.inner.pairing).is_some(),
            connect_port: lock(&self.inner.connect).port,
            guid: self.inner.guid.clone(),
        }
    }

    /// Opens a one-shot pairing server (closing any earlier one) on an OS-chosen port and
    /// announces it over mDNS. Errors: bind or mDNS failures.
    pub async fn open_pairing(&self, request: PairRequest) -> std::io::Result<PairingPorts> {
        let inner = &self.inner;
        let identity = DeviceIdentity::generate().map_err(std::io::Error::other)?;
        let config = tls::device_pairing_config(&identity).map_err(std::io::Error::other)?;
        let listener = TcpListener::bind((inner.ip, 0)).await?;
        let pairing_port = listener.local_addr()?.port();
        let instance = request
            .service_name
            .clone()
            .unwrap_or_else(|| inner.guid.clone());
        let announced = match &inner.mdns {
            Some(m) => Some(m.register(PAIRING_SERVICE, &instance, pairing_port, &[])?),
            None => None,
        };
        let number = {
            let mut n = lock(&inner.next_pairing);
            *n += 1;
            *n
        };
        let stop = inner.shutdown.child_token();
        if let Some((_, earlier)) = lock(&inner.pairing).replace((number, stop.clone())) {
            earlier.cancel();
        }
        let options = ServeOptions {
            config,
            leave_after: request.leave_after,
        };
        let this = self.clone();
        tokio::spawn(async move {
            this.pairing_server(listener, request, options, stop).await;
            if let (Some(m), Some(name)) = (&this.inner.mdns, announced) {
                m.unregister(&name);
            }
            let mut open = lock(&this.inner.pairing);
            if open.as_ref().is_some_and(|(n, _)| *n == number) {
                *open = None;
            }
        });
        Ok(PairingPorts {
            pairing_port,
            connect_port: lock(&inner.connect).port,
            guid: inner.guid.clone(),
        })
    }

    async fn pairing_server(
        &self,
        listener: TcpListener,
        request: PairRequest,
        options: ServeOptions,
        stop: CancellationToken,
    ) {
        let password = if request.wrong_password {
            Zeroizing::new(format!("{}-typed-differently", &*request.password))
        } else {
            request.password.clone()
        };
        for _ in 0..MAX_PAIRING_ATTEMPTS {
            let sock = tokio::select! {
                _ = stop.cancelled() => return,
                accepted = listener.accept() => match accepted {
                    Ok((sock, _)) => sock,
                    Err(_) => continue,
                },
            };
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(request.delay) => {}
            }
            let deadline = Instant::now() + PAIRING_ATTEMPT_TIMEOUT;
            let outcome = tokio::select! {
                _ = stop.cancelled() => return,
                r = serve_pairing_with(sock, password.as_bytes(), &self.inner.guid, deadline, &options) => r,
            };
            match outcome {
                Ok(Some(line)) => {
                    let phone = &self.inner.phone;
                    if phone.with(|s| s.paired.add(line.as_str())).is_ok() {
                        phone.keys_changed();
                        return;
                    }
                }
                // The phone left mid-way, as asked: its pairing screen is gone.
                Ok(None) => return,
                Err(_) => {}
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn serve_connect(
    listener: TcpListener,
    phone: Phone,
    identity: DeviceIdentity,
    shutdown: CancellationToken,
) {
    transport::accept_until(listener, shutdown, |sock, cancel| {
        tokio::spawn(stls_connection(
            sock,
            phone.clone(),
            identity.clone(),
            cancel,
        ));
    })
    .await;
}

async fn read_until(sock: &mut TcpStream, command: u32) -> Result<Message, WireError> {
    loop {
        let m = Message::read_from(sock, MAX_PAYLOAD).await?;
        if m.command == command {
            return Ok(m);
        }
    }
}

/// One connection to the connect port: `CNXN` → `STLS` both ways → TLS (paired keys only) →
/// the ordinary transport. Any failure or a step past its bound drops the connection, which
/// adb reports as `failed to connect`.
async fn stls_connection(
    mut sock: TcpStream,
    phone: Phone,
    identity: DeviceIdentity,
    cancel: CancellationToken,
) {
    let Ok(Ok(cnxn)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, read_until(&mut sock, A_CNXN)).await
    else {
        return;
    };
    let stls = Message::new(A_STLS, A_STLS_VERSION, 0, Vec::new());
    if stls.write_to(&mut sock).await.is_err() {
        return;
    }
    // The host's `STLS` answer and its TLS ClientHello race each other in adb's host (its
    // write thread sends the packet while a second thread starts the handshake on the same
    // socket, under the lock the write thread needs: `BlockingConnectionAdapter::DoTlsHandshake`
    // in AOSP `transport.cpp`), so the ClientHello often comes first and the `STLS` packet later,
    // inside TLS, where the transport ignores it. A TLS record (first byte 0x16, never the
    // first byte of an adb command) starts the handshake at once.
    let mut first = [0u8; 1];
    let Ok(Ok(1)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, sock.peek(&mut first)).await else {
        return;
    };
    if first[0] != TLS_HANDSHAKE_RECORD {
        let Ok(Ok(_)) =
            tokio::time::timeout(HANDSHAKE_TIMEOUT, read_until(&mut sock, A_STLS)).await
        else {
            return;
        };
    }
    let keys = phone.with(|s| s.paired.keys());
    let Ok(config) = tls::device_stls_config(&identity, &keys) else {
        return;
    };
    let accept = xagent_adb_pairing::tokio_rustls::TlsAcceptor::from(config).accept(sock);
    let Ok(Ok(stream)) = tokio::time::timeout(HANDSHAKE_TIMEOUT, accept).await else {
        return;
    };
    transport::serve_admitted(stream, phone, cancel, cnxn.arg1).await;
}
