//! The background task of one QR pairing attempt: wait for the phone's pairing service (until
//! the code expires), pair, find the phone's connect service by its GUID, connect and bind.
//! Each step has its deadline; the attempt's token stops it at any point (cancel, refresh,
//! shutdown). Outcomes are written to the [`QrAttempt`] for `auth.status`. The network part,
//! [`pair_by_qr`], is shared with the `pair` CLI.

// A wireless GUID is `adb-<serial>-<6 chars>`: logged masked like a serial.
use crate::protocol::descriptor::mask_serial;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use xagent_adb_pairing::{Guid, PairingError, QrPairing};

use super::{QrAttempt, QrPairingConfig};
use crate::adb::host_key::{pair_with_phone, PairWithPhoneError};
use crate::adb::mdns::{Browser, CONNECT_SERVICE, PAIRING_SERVICE};
use crate::adb::{AdbServerClient, HostKey};
use crate::connector::auth_session::AuthStatus;
use crate::connector::pairing::{connect_refusal, pairing_refusal, PAIR_DEADLINE};
use crate::connector::runtime::PairedPhone;
use crate::connector::Connector;

/// How long the phone has, once paired, to announce `_adb-tls-connect._tcp` (it does so at
/// once when wireless debugging is on; a slow Wi-Fi can take a few seconds).
pub const CONNECT_FIND_DEADLINE: Duration = Duration::from_secs(30);

/// Why a QR pairing stopped short.
#[derive(Debug)]
pub enum QrStop {
    /// The token was canceled (the state was written by whoever canceled).
    Canceled,
    /// No phone scanned the code in time.
    Expired,
    /// A step failed; the reason is for a person (never holds the password).
    Failed(String),
    /// Paired (the phone holds the key, this is its GUID), but its connect service was not
    /// announced in time.
    NotAnnounced(Guid),
}

/// What [`QrStop::NotAnnounced`] tells a person.
pub fn not_announced_message() -> String {
    format!(
        "paired, but the phone did not announce its wireless-debugging port within {} s: either Wireless debugging was turned off or mDNS is blocked between the phone and the connector (client isolation or a firewall on the Wi-Fi, or --mdns-interface naming another interface)",
        CONNECT_FIND_DEADLINE.as_secs()
    )
}

/// The network half of QR pairing: waits (≤ `ttl`) for the phone that scanned `offer` to
/// announce `_adb-tls-pairing._tcp` (then calls `scanned`), pairs `key` with it, and waits
/// (≤ [`CONNECT_FIND_DEADLINE`]) for its `_adb-tls-connect._tcp` named by the GUID received.
/// mDNS on `config.mdns_interfaces`, plus the adb server's list when configured. Returns the
/// GUID and the connect address. Errors: [`QrStop`].
pub async fn pair_by_qr(
    key: &HostKey,
    offer: &QrPairing,
    config: &QrPairingConfig,
    ttl: Duration,
    stop: &CancellationToken,
    scanned: impl FnOnce(),
) -> Result<(Guid, SocketAddr), QrStop> {
    let interfaces = config.mdns_interfaces.clone();
    let browser = tokio::task::spawn_blocking(move || Browser::start(&interfaces))
        .await
        .map_err(|_| QrStop::Failed("mDNS browsing could not start".into()))?
        .map_err(|e| {
            tracing::warn!(error = %e, "mDNS browsing unavailable");
            QrStop::Failed(
                "the connector cannot browse mDNS on its configured interfaces (--mdns-interface)"
                    .into(),
            )
        })?;
    let adb_server = config.adb_server.as_deref().map(AdbServerClient::new);
    let stopped_or = |other: QrStop| {
        if stop.is_cancelled() {
            QrStop::Canceled
        } else {
            other
        }
    };

    // 1. The phone registers the pairing service under the QR's name once it scanned it.
    let pairing_addr = browser
        .find(
            PAIRING_SERVICE,
            offer.service_name(),
            ttl,
            stop,
            adb_server.as_ref(),
        )
        .await
        .ok_or_else(|| stopped_or(QrStop::Expired))?;
    scanned();

    // 2. Pairing on the path shared with adb_pair_code.
    let pairing_target = pairing_addr.to_string();
    let guid = tokio::select! {
        _ = stop.cancelled() => return Err(QrStop::Canceled),
        r = pair_with_phone(key, &pairing_target, offer.password().as_bytes(), PAIR_DEADLINE) => r,
    }
    .map_err(|e| match e {
        PairWithPhoneError::Unreachable => QrStop::Failed(format!(
            "the phone announced its pairing port {pairing_addr} but cannot be reached there: is it on the same network?"
        )),
        PairWithPhoneError::Pairing(PairingError::WrongPassword) => QrStop::Failed(
            "the phone and the connector disagree on the QR code's password (was an older code scanned?): refresh the QR code and scan it again".into(),
        ),
        PairWithPhoneError::NothingListens => QrStop::Failed(format!(
            "the phone announced its pairing port {pairing_addr} but nothing listens there any more (was the QR code dialog closed?): open it again and scan the new code"
        )),
        PairWithPhoneError::NotPairingPort(_) => QrStop::Failed(format!(
            "the port the phone announced for pairing ({pairing_addr}) answers as adbd, not as a pairing server: refresh the QR code and scan it again"
        )),
        PairWithPhoneError::Pairing(e) => QrStop::Failed(pairing_refusal(&e).message),
    })?;
    tracing::info!(guid = %mask_serial(guid.as_str()), "phone paired");

    // 3. The connect service is named by the GUID the phone just sent.
    let connect_addr = browser
        .find(
            CONNECT_SERVICE,
            guid.as_str(),
            CONNECT_FIND_DEADLINE,
            stop,
            adb_server.as_ref(),
        )
        .await
        .ok_or_else(|| stopped_or(QrStop::NotAnnounced(guid.clone())))?;
    Ok((guid, connect_addr))
}

/// Runs attempt `attempt` (generation `generation`) for `offer` until it is bound, failed,
/// expired or `stop`ped. The pairing service is awaited for `ttl`.
pub async fn run(
    connector: Arc<Connector>,
    attempt: Arc<QrAttempt>,
    generation: u64,
    offer: QrPairing,
    ttl: Duration,
    stop: CancellationToken,
) {
    let channel = attempt.channel_id.as_str();
    match steps(&connector, &attempt, generation, &offer, ttl, &stop).await {
        Ok(serial) => {
            tracing::info!(
                channel,
                serial_hint = %crate::protocol::descriptor::mask_serial(&serial),
                "QR pairing bound the phone"
            );
            attempt.set(
                generation,
                AuthStatus::Authenticated,
                "phone bound to this channel",
            );
        }
        Err(QrStop::Canceled) => {}
        Err(QrStop::Expired) => {
            attempt.set(generation, AuthStatus::Expired, super::EXPIRED_MESSAGE)
        }
        Err(QrStop::Failed(reason)) => {
            tracing::info!(channel, reason = reason.as_str(), "QR pairing failed");
            attempt.set(generation, AuthStatus::Failed, &reason);
        }
        Err(QrStop::NotAnnounced(guid)) => {
            // The phone holds the key: the channel keeps the pairing (field bug 36).
            *crate::connector::lock(&connector.runtime(channel).paired) = Some(PairedPhone {
                guid: guid.as_str().to_string(),
                pairing_addr: None,
            });
            let reason = format!(
                "{}. The pairing is kept: auth.start flow adb_pair_code with `host` and `connect_port` (no code) connects it",
                not_announced_message()
            );
            tracing::info!(
                channel,
                "QR pairing failed: the phone paired but was not announced"
            );
            attempt.set(generation, AuthStatus::Failed, &reason);
        }
    }
}

async fn steps(
    connector: &Arc<Connector>,
    attempt: &QrAttempt,
    generation: u64,
    offer: &QrPairing,
    ttl: Duration,
    stop: &CancellationToken,
) -> Result<String, QrStop> {
    let key_file = connector.host_key.clone().ok_or_else(|| {
        QrStop::Failed("wireless pairing is not available on this connector".into())
    })?;
    let key = key_file
        .get()
        .await
        .map_err(|_| QrStop::Failed("the connector's adb key cannot be read or made".into()))?;
    let (guid, connect_addr) = pair_by_qr(&key, offer, &connector.qr_config, ttl, stop, || {
        attempt.set(
            generation,
            AuthStatus::Scanned,
            "the phone scanned the code; pairing",
        )
    })
    .await?;
    // 4. STLS connect, serial, bind (shared with adb_pair_code). Not interrupted once begun
    // (each step has its deadline): a cancel then finds the attempt finished.
    if stop.is_cancelled() {
        return Err(QrStop::Canceled);
    }
    *crate::connector::lock(&connector.runtime(&attempt.channel_id).paired) = Some(PairedPhone {
        guid: guid.as_str().to_string(),
        pairing_addr: None,
    });
    // The address announced first is tried first; a stale one falls back to the lookup.
    connector
        .connect_and_bind(
            &attempt.channel_id,
            key_file,
            guid.as_str(),
            &[connect_addr.to_string()],
            attempt.logouts,
        )
        .await
        .map_err(|failure| {
            QrStop::Failed(
                connect_refusal(failure, "the address it announced does not answer").message,
            )
        })
}
