//! The HTTP accept loop: hyper's HTTP/1 server (the one `axum::serve` wraps) with the limits an
//! edge box reachable from a LAN needs, which `axum::serve` does not expose.
//!
//! * At most [`MAX_CONNECTIONS`] HTTP connections at once: past it, accepting pauses (new
//!   clients wait in the kernel's backlog) instead of spending a file descriptor and buffers
//!   per connection until the process runs out (a slow-headers attack held 20 000 sockets).
//! * [`HEADER_READ_TIMEOUT`]: a connection that has not sent a whole request head within it —
//!   a first request or the next one on a kept-alive connection — is closed (hyper
//!   `http1::Builder::header_read_timeout`, which starts when hyper waits for a head).
//!
//! * At most [`super::peers::MAX_UNAUTHENTICATED_PER_PEER`] connections per peer that have not
//!   sent an authenticated request: one more closes that peer's oldest one waiting for a head
//!   ([`super::peers`]), so one peer's half-sent heads never fill the slots above and other
//!   clients keep being served.
//!
//! With TLS ([`super::tls`]), each connection's handshake runs in its own task under the same
//! [`HEADER_READ_TIMEOUT`]; a client speaking plain HTTP to a TLS port fails the handshake and
//! is closed.
//!
//! Upgraded WebSockets leave this accounting when the upgrade completes; they have their own
//! cap ([`super::MAX_SOCKETS`]). On shutdown, accepting stops and each connection finishes its
//! request in flight (hyper graceful shutdown).

use std::sync::Arc;
use std::time::Duration;

use axum::middleware::AddExtension;
use axum::{Extension, Router};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower_layer::Layer;

use super::peers::{Admission, PeerGate};
use crate::lifecycle::Lifecycle;

/// The service of one connection: the router, each request carrying the connection's
/// [`Admission`].
type ConnectionService = TowerToHyperService<AddExtension<Router, Arc<Admission>>>;

/// Open HTTP connections served at once (WebSockets excluded once upgraded).
pub const MAX_CONNECTIONS: usize = 256;
/// Time a client has to send a complete request head (s): hyper closes the connection after it.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long shutdown waits for requests in flight (s).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Serves `router` on `listener` until `lifecycle` shuts down, then waits up to
/// [`SHUTDOWN_GRACE`] for the requests in flight. Connection tasks are tracked by `lifecycle`.
/// Errors: none once listening (a failed `accept`, e.g. out of file descriptors, is logged and
/// retried after 100 ms).
pub async fn serve(listener: TcpListener, router: Router, lifecycle: &Lifecycle) {
    serve_with_tls(listener, router, lifecycle, None).await
}

/// [`serve`], with TLS on every connection when `tls` is set (the acceptor in force when the
/// connection arrives: a SIGHUP reload takes effect for the next connections).
pub async fn serve_with_tls(
    listener: TcpListener,
    router: Router,
    lifecycle: &Lifecycle,
    tls: Option<super::tls::TlsSlot>,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    accept_until_shutdown(&listener, &router, &slots, lifecycle, tls.as_ref()).await;
    drop(listener);
    // Every connection task holds a slot until it ends: all slots back = all requests done.
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, slots.acquire_many(MAX_CONNECTIONS as u32)).await;
}

async fn accept_until_shutdown(
    listener: &TcpListener,
    router: &Router,
    slots: &Arc<Semaphore>,
    lifecycle: &Lifecycle,
    tls: Option<&super::tls::TlsSlot>,
) {
    let shutdown: &CancellationToken = lifecycle.shutdown();
    let peers = PeerGate::default();
    loop {
        let permit = tokio::select! {
            _ = shutdown.cancelled() => return,
            p = Arc::clone(slots).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => return,
            },
        };
        let (stream, peer) = tokio::select! {
            _ = shutdown.cancelled() => return,
            r = listener.accept() => match r {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed; retrying");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let admission = peers.admit(peer.ip());
        let evicted = admission.evicted().clone();
        let service = TowerToHyperService::new(Extension(admission).layer(router.clone()));
        let shutdown = shutdown.clone();
        let acceptor = tls.map(|t| t.acceptor());
        lifecycle.spawn(async move {
            let served = async {
                match acceptor {
                    None => serve_connection(stream, service, &shutdown).await,
                    Some(acceptor) => {
                        let handshake = acceptor.accept(stream);
                        match tokio::time::timeout(HEADER_READ_TIMEOUT, handshake).await {
                            Ok(Ok(tls)) => serve_connection(tls, service, &shutdown).await,
                            Ok(Err(e)) => tracing::debug!(error = %e, "TLS handshake failed"),
                            Err(_) => tracing::debug!("TLS handshake timed out"),
                        }
                    }
                }
            };
            // Evicted (its peer holds too many unauthenticated connections): closed at once.
            tokio::select! {
                _ = served => {}
                _ = evicted.cancelled() => {
                    tracing::debug!("unauthenticated connection closed: its peer holds too many");
                }
            }
            drop(permit);
        });
    }
}

/// Serves HTTP/1 (with upgrades) on one connection until it ends or shutdown, then finishes
/// the request in flight.
async fn serve_connection<IO>(io: IO, service: ConnectionService, shutdown: &CancellationToken)
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let conn = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(TokioIo::new(io), service)
        .with_upgrades();
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = shutdown.cancelled() => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}
