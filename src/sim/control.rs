//! Control API (JSON over HTTP on loopback), placeholder until implemented.

use std::net::SocketAddr;

use tokio_util::sync::CancellationToken;

use super::phone::Phone;

/// Binds the control API and serves it until `shutdown`.
pub async fn start(
    addr: SocketAddr,
    _phone: Phone,
    _shutdown: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    listener.local_addr()
}
