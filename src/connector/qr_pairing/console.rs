//! The box's own QR pairing, started from the operator console (`GET /console/pair`): the
//! same steps as `pair` on a terminal ([`super::attempt::pair_by_qr`]: the phone scans
//! `WIFI:T:ADB;S:…;P:…;;`, is found by mDNS, pairs with the connector's adb key), then the
//! phone is connected over `STLS`, remembered and followed as every phone paired over Wi-Fi
//! ([`Connector::connect_and_remember`]) — bound to no channel: an agent claims it as any other.
//!
//! One attempt at a time; a new one stops the old. The password lives only in the QR code's
//! PNG ([`ConsolePairing::qr_png`]) and in the task: the console's pages never carry it as
//! text, and nothing logs it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use xagent_adb_pairing::QrPairing;

use super::attempt::{not_announced_message, pair_by_qr, QrStop};
use super::image;
use crate::connector::auth_session::AuthStatus;
use crate::connector::{lock, Connector};
use crate::protocol::now_ms;

/// One console pairing attempt.
pub struct ConsolePairing {
    /// The QR code's PNG (the only form the password leaves the task in).
    qr_png: Vec<u8>,
    /// Unix ms after which the code is `expired`.
    expires_at: i64,
    /// Stops the attempt's task.
    stop: CancellationToken,
    state: Mutex<(AuthStatus, String)>,
}

/// A snapshot of the console's pairing attempt.
#[derive(Debug, Clone)]
pub struct ConsolePairingView {
    /// Where it stands (`pending` while the code waits for a phone).
    pub status: AuthStatus,
    /// What happened or what to do, for a person (never the password).
    pub message: String,
    /// Unix ms the code expires.
    pub expires_at: i64,
}

impl ConsolePairing {
    /// The attempt now; a `pending` code past its expiry reads `expired`.
    pub fn view(&self) -> ConsolePairingView {
        let (status, message) = lock(&self.state).clone();
        let (status, message) = if status == AuthStatus::Pending && now_ms() > self.expires_at {
            (AuthStatus::Expired, super::EXPIRED_MESSAGE.to_string())
        } else {
            (status, message)
        };
        ConsolePairingView {
            status,
            message,
            expires_at: self.expires_at,
        }
    }

    /// The QR code's PNG while a phone may still scan it (`pending`), else `None`.
    pub fn qr_png(&self) -> Option<&[u8]> {
        (self.view().status == AuthStatus::Pending).then_some(self.qr_png.as_slice())
    }

    fn set(&self, status: AuthStatus, message: impl Into<String>) {
        let mut st = lock(&self.state);
        if st.0.is_final() {
            return;
        }
        *st = (status, message.into());
    }
}

impl Connector {
    /// The console's current pairing attempt, if one was started.
    pub fn console_pairing(&self) -> Option<Arc<ConsolePairing>> {
        lock(&self.console_pairing).clone()
    }

    /// Starts a new console pairing attempt (stopping the previous one): a fresh QR code, valid
    /// for `--qr-ttl-secs`, and its task. Errors: for a person — no adb key on this connector,
    /// or the code cannot be drawn.
    pub fn console_pairing_start(self: &Arc<Self>) -> Result<Arc<ConsolePairing>, String> {
        let key_file = self
            .host_key
            .clone()
            .ok_or("wireless pairing is not available on this connector (no adb key)")?;
        let offer = QrPairing::generate();
        let qr_png = image::png(&offer.text()).map_err(|e| e.to_string())?;
        let ttl = self.qr_ttl();
        let attempt = Arc::new(ConsolePairing {
            qr_png,
            expires_at: now_ms().saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)),
            stop: self.lifecycle.shutdown().child_token(),
            state: Mutex::new((
                AuthStatus::Pending,
                "scan the QR code with the phone: Developer options → Wireless debugging → \
                 Pair device with QR code"
                    .into(),
            )),
        });
        if let Some(old) = lock(&self.console_pairing).replace(Arc::clone(&attempt)) {
            old.set(AuthStatus::Canceled, "replaced by a newer QR code");
            old.stop.cancel();
        }
        tracing::info!(
            service = offer.service_name(),
            "QR pairing offered on the operator console"
        );
        self.lifecycle.spawn(run(
            Arc::clone(self),
            Arc::clone(&attempt),
            key_file,
            offer,
            ttl,
        ));
        Ok(attempt)
    }
}

/// The attempt's task: pairs, connects, remembers; records each step on `attempt`.
async fn run(
    connector: Arc<Connector>,
    attempt: Arc<ConsolePairing>,
    key_file: crate::adb::HostKeyFile,
    offer: QrPairing,
    ttl: Duration,
) {
    let stop = attempt.stop.clone();
    let key = match key_file.get().await {
        Ok(key) => key,
        Err(_) => {
            attempt.set(
                AuthStatus::Failed,
                "the connector's adb key cannot be read or made",
            );
            return;
        }
    };
    let paired = pair_by_qr(&key, &offer, &connector.qr_config, ttl, &stop, || {
        attempt.set(AuthStatus::Scanned, "the phone scanned the code; pairing")
    })
    .await;
    let (guid, addr) = match paired {
        Ok(found) => found,
        Err(QrStop::Canceled) => return,
        Err(QrStop::Expired) => {
            attempt.set(AuthStatus::Expired, super::EXPIRED_MESSAGE);
            return;
        }
        Err(QrStop::Failed(reason)) => {
            tracing::info!(reason = reason.as_str(), "console QR pairing failed");
            attempt.set(AuthStatus::Failed, reason);
            return;
        }
        Err(QrStop::NotAnnounced(_)) => {
            attempt.set(AuthStatus::Failed, not_announced_message());
            return;
        }
    };
    match connector
        .connect_and_remember(&key_file, guid.as_str(), &[addr.to_string()])
        .await
    {
        Ok(phone) => {
            tracing::info!(
                serial_hint = %crate::protocol::descriptor::mask_serial(&phone.serial),
                "console QR pairing added a phone"
            );
            attempt.set(
                AuthStatus::Authenticated,
                format!(
                    "paired: {} ({}) is on the box now; an agent can claim it",
                    phone.serial, phone.model
                ),
            );
        }
        Err(failure) => {
            let refusal = crate::connector::pairing::connect_refusal(
                failure,
                "the address it announced does not answer",
            );
            attempt.set(AuthStatus::Failed, refusal.message);
        }
    }
}
