//! Auth flow `adb_qr_pair` (type `qr_login`): Android 11+ "Wireless debugging → Pair device with
//! QR code". `auth.start` answers `pending` at once with the QR (`WIFI:T:ADB;S:xagent-…;P:…;;`,
//! as text and as a PNG data URL), `expires_at` and `poll_interval_millis`; one background task
//! per attempt ([`attempt`], tracked by the lifecycle and cancellable) then browses mDNS for the
//! phone's `_adb-tls-pairing._tcp` under the QR's name (`scanned`), pairs on the shared pairing
//! path, finds `_adb-tls-connect._tcp` for the GUID received, connects over `STLS` and binds the
//! channel (`authenticated`). `auth.status` reads the attempt (`refresh: true` issues a new
//! code), `auth.cancel` stops it. Spec §8.7–8.12; issue 9.
//!
//! The password lives only in the QR text handed to xAgent and in the task; it is never logged,
//! stored, put in a descriptor, an error or `auth.status` answers after the first.

pub mod attempt;
pub mod console;
pub mod image;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use xagent_adb_pairing::QrPairing;

use super::auth_session::AuthStatus;
use super::claim_error::{refuse, ClaimError};
use super::{lock, Connector};
use crate::protocol::{now_ms, random_id, ErrorCode};

/// How long a QR code is offered before `expired` (a person needs time to reach Developer
/// options → Wireless debugging → Pair device with QR code).
pub const DEFAULT_QR_TTL: Duration = Duration::from_secs(180);
/// `poll_interval_millis` suggested to the frontend.
pub const POLL_INTERVAL_MILLIS: u64 = 1500;
/// Finished attempts kept for `auth.status` after their end, before they are forgotten.
const KEEP_FINISHED_MS: i64 = 15 * 60 * 1000;

/// Settings of the QR flow (`serve` flags `--mdns-interface`, `--qr-ttl-secs`).
#[derive(Debug, Clone)]
pub struct QrPairingConfig {
    /// Interfaces to browse mDNS on; empty: every interface of the box.
    pub mdns_interfaces: Vec<String>,
    /// How long one QR code is valid.
    pub qr_ttl: Duration,
    /// The adb server also asked for mDNS services (`host:mdns:services`), if any.
    pub adb_server: Option<String>,
}

impl Default for QrPairingConfig {
    fn default() -> Self {
        QrPairingConfig {
            mdns_interfaces: Vec::new(),
            qr_ttl: DEFAULT_QR_TTL,
            adb_server: None,
        }
    }
}

/// What `auth.start` / a refresh hands out: the QR and its validity. `Debug` hides the text.
#[derive(Clone)]
pub struct QrOffer {
    /// The attempt's `auth_session_id`.
    pub auth_session_id: String,
    /// `WIFI:T:ADB;S:…;P:…;;` (holds the password: for the frontend only).
    pub qr_code_text: String,
    /// `data:image/png;base64,…` of the same.
    pub qr_code_image: String,
    /// Unix ms after which the code is `expired`.
    pub expires_at: i64,
}

impl std::fmt::Debug for QrOffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QrOffer")
            .field("auth_session_id", &self.auth_session_id)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

/// A snapshot of one attempt for `auth.status` / `auth.cancel`.
#[derive(Debug, Clone)]
pub struct QrView {
    /// Current state.
    pub status: AuthStatus,
    /// Why it failed / what to do, for a person.
    pub message: String,
    /// Unix ms the current code expires.
    pub expires_at: i64,
}

/// One QR pairing attempt of a channel (kept across refreshes under one session id).
#[derive(Debug)]
pub struct QrAttempt {
    channel_id: String,
    /// The channel's `auth.logout` count at `auth.start` (a logout since ends the attempt).
    logouts: u64,
    inner: Mutex<AttemptState>,
}

#[derive(Debug)]
struct AttemptState {
    /// Bumped by each refresh; a task of an older generation writes nothing.
    generation: u64,
    status: AuthStatus,
    message: String,
    expires_at: i64,
    /// Stops the running task.
    stop: CancellationToken,
    finished_ms: Option<i64>,
}

/// What `auth.status` says of a code nobody scanned in time.
pub(super) const EXPIRED_MESSAGE: &str =
    "the QR code expired before a phone scanned it: refresh it and scan again";

impl QrAttempt {
    /// The attempt's state now; a `pending` code past `expires_at` reads `expired`.
    pub fn view(&self) -> QrView {
        let st = lock(&self.inner);
        let expired = st.status == AuthStatus::Pending && now_ms() > st.expires_at;
        let (status, message) = if expired {
            (AuthStatus::Expired, EXPIRED_MESSAGE.to_string())
        } else {
            (st.status, st.message.clone())
        };
        QrView {
            status,
            message,
            expires_at: st.expires_at,
        }
    }

    /// Records a step of generation `generation`; ignored once the attempt was refreshed,
    /// canceled or finished. Final states stop the task's token.
    fn set(&self, generation: u64, status: AuthStatus, message: &str) {
        let mut st = lock(&self.inner);
        if st.generation != generation || st.finished_ms.is_some() {
            return;
        }
        st.status = status;
        st.message = message.to_string();
        if status.is_final() {
            st.finished_ms = Some(now_ms());
            st.stop.cancel();
        }
    }
}

impl AuthStatus {
    /// Whether nothing follows this state (the attempt's task is over).
    pub fn is_final(self) -> bool {
        !matches!(self, AuthStatus::Pending | AuthStatus::Scanned)
    }
}

/// The QR attempts by `auth_session_id`.
pub type QrAttempts = Mutex<HashMap<String, Arc<QrAttempt>>>;

impl Connector {
    /// `auth.start` of `adb_qr_pair`: a new QR code and the task waiting for the phone. A
    /// channel has one attempt at a time: an unfinished earlier one is canceled. Errors:
    /// `auth_failed` (no adb key), `connector_channel_not_owned`. A bound channel may pair
    /// again: only the phone bound there is bound at the end.
    pub fn qr_start(self: &Arc<Self>, channel_id: &str) -> Result<QrOffer, ClaimError> {
        self.check_channel_pairable(channel_id)?;
        if self.host_key.is_none() {
            return Err(refuse(
                ErrorCode::AuthFailed,
                "wireless pairing is not available on this connector",
            ));
        }
        let session_id = random_id("auth");
        let attempt = Arc::new(QrAttempt {
            channel_id: channel_id.to_string(),
            logouts: self.logouts(channel_id),
            inner: Mutex::new(AttemptState {
                generation: 0,
                status: AuthStatus::Pending,
                message: String::new(),
                expires_at: 0,
                stop: CancellationToken::new(),
                finished_ms: Some(0),
            }),
        });
        {
            let mut all = lock(&self.qr_attempts);
            let now = now_ms();
            all.retain(|_, a| {
                let mut st = lock(&a.inner);
                if a.channel_id == channel_id && st.finished_ms.is_none() {
                    st.status = AuthStatus::Canceled;
                    st.message = "replaced by a newer QR code".into();
                    st.finished_ms = Some(now);
                    st.stop.cancel();
                }
                st.finished_ms
                    .is_none_or(|t| now.saturating_sub(t) < KEEP_FINISHED_MS)
            });
            all.insert(session_id.clone(), Arc::clone(&attempt));
        }
        self.qr_issue(&session_id, &attempt)
    }

    /// A fresh code for `attempt` (first issue or refresh) and its task.
    fn qr_issue(
        self: &Arc<Self>,
        session_id: &str,
        attempt: &Arc<QrAttempt>,
    ) -> Result<QrOffer, ClaimError> {
        let offer = QrPairing::generate();
        let qr_code_text = offer.text().to_string();
        let qr_code_image = image::png_data_url(&qr_code_text)
            .map_err(|_| refuse(ErrorCode::InternalError, "the QR code cannot be drawn"))?;
        let ttl = self.qr_ttl();
        let expires_at =
            now_ms().saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
        let stop = self.lifecycle.shutdown().child_token();
        let generation = {
            let mut st = lock(&attempt.inner);
            st.stop.cancel();
            st.generation += 1;
            st.status = AuthStatus::Pending;
            st.message = "scan the QR code with the phone: Developer options → Wireless debugging → Pair device with QR code".into();
            st.expires_at = expires_at;
            st.stop = stop.clone();
            st.finished_ms = None;
            st.generation
        };
        tracing::info!(
            channel = attempt.channel_id.as_str(),
            service = offer.service_name(),
            "QR pairing offered"
        );
        self.lifecycle.spawn(attempt::run(
            Arc::clone(self),
            Arc::clone(attempt),
            generation,
            offer,
            ttl,
            stop,
        ));
        Ok(QrOffer {
            auth_session_id: session_id.to_string(),
            qr_code_text,
            qr_code_image,
            expires_at,
        })
    }

    /// The QR attempt `auth_session_id` of `channel_id`, if there is one.
    pub fn qr_attempt(&self, channel_id: &str, auth_session_id: &str) -> Option<Arc<QrAttempt>> {
        lock(&self.qr_attempts)
            .get(auth_session_id)
            .filter(|a| a.channel_id == channel_id)
            .cloned()
    }

    /// `auth.status` with `refresh: true`: a new code for an attempt that is not pairing, done or
    /// canceled (`pending`, `expired`, `failed`); otherwise `None` and the state stands (a
    /// canceled session stays canceled: a new `auth.start` is the way to pair again).
    pub fn qr_refresh(
        self: &Arc<Self>,
        channel_id: &str,
        auth_session_id: &str,
    ) -> Option<Result<QrOffer, ClaimError>> {
        let attempt = self.qr_attempt(channel_id, auth_session_id)?;
        if matches!(
            attempt.view().status,
            AuthStatus::Scanned | AuthStatus::Authenticated | AuthStatus::Canceled
        ) {
            return None;
        }
        Some(self.qr_issue(auth_session_id, &attempt))
    }

    /// Stops every unfinished attempt on `channel_id` (`canceled`, with `why`).
    pub(crate) fn qr_cancel_channel(&self, channel_id: &str, why: &str) {
        let now = now_ms();
        for attempt in lock(&self.qr_attempts)
            .values()
            .filter(|a| a.channel_id == channel_id)
        {
            let mut st = lock(&attempt.inner);
            if st.finished_ms.is_none() {
                st.status = AuthStatus::Canceled;
                st.message = why.into();
                st.finished_ms = Some(now);
                st.stop.cancel();
                tracing::info!(channel = channel_id, "QR pairing canceled: {why}");
            }
        }
    }

    /// `auth.cancel`: stops an unfinished attempt. `Some(true)`: canceled now; `Some(false)`:
    /// it had already finished; `None`: no such attempt on this channel.
    pub fn qr_cancel(&self, channel_id: &str, auth_session_id: &str) -> Option<bool> {
        let attempt = self.qr_attempt(channel_id, auth_session_id)?;
        let mut st = lock(&attempt.inner);
        if st.finished_ms.is_some() {
            return Some(false);
        }
        st.status = AuthStatus::Canceled;
        st.message = "canceled".into();
        st.finished_ms = Some(now_ms());
        st.stop.cancel();
        tracing::info!(channel = channel_id, "QR pairing canceled");
        Some(true)
    }
}
