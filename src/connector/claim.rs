//! Auth flow `adb_device_claim` (type `form`, fields `serial`, `claim_code`): binds a channel to
//! one attached phone by its `ro.serialno` (or `ro.serialno#N` when several phones report one
//! serial: [`super::claim_handle`]). Policy `open`: any attached phone; policy `code`: only
//! with the admin-issued code for that serial (compared as SHA-256, constant time). A phone is
//! bound to at most one channel (SQLite UNIQUE). The claim code is never logged or echoed.

use super::auth_session::{AuthSession, AuthStatus};
use super::claim_error::{refuse, ClaimError};
use super::claim_policy::ClaimPolicy;
use super::state::BindRefusal;
use super::Connector;
use crate::device::error::state_refusal;
use crate::device::parse::devices::DeviceState;
use crate::protocol::card::{CLAIM_FLOW_ID, PAIR_CODE_FLOW_ID, QR_PAIR_FLOW_ID};
use crate::protocol::payloads::AuthStartPayload;
use crate::protocol::{now_ms, random_id, ErrorCode};
use crate::store::BindingRecord;

/// The refusal of a claim while the phone's last binding is released (`device_releasing`).
const RELEASING: &str = "this phone is being handed back clean after its last binding (the device profile's [release] steps are running); retry in a few seconds";

impl Connector {
    /// Runs `auth.start` for `channel_id`. Returns `(auth_session_id, result)`. Under the
    /// write gate: two claims (of one phone, or on one channel) and a logout never interleave,
    /// and the outcome is remembered for `auth.status` in the same step.
    pub async fn claim(
        &self,
        channel_id: &str,
        payload: &AuthStartPayload,
    ) -> (String, Result<(), ClaimError>) {
        let _gate = self.writes.lock().await;
        let result = self.try_claim(channel_id, payload).await;
        self.remember_outcome(channel_id, result)
    }

    /// Records the outcome of a finished `auth.start` as a new auth session (for
    /// `auth.status`); returns its id with the outcome.
    pub(super) fn remember_outcome(
        &self,
        channel_id: &str,
        result: Result<(), ClaimError>,
    ) -> (String, Result<(), ClaimError>) {
        let session_id = random_id("auth");
        let status = if result.is_ok() {
            AuthStatus::Authenticated
        } else {
            AuthStatus::Failed
        };
        self.state()
            .remember_auth(session_id.clone(), channel_id, status);
        (session_id, result)
    }

    async fn try_claim(&self, channel_id: &str, p: &AuthStartPayload) -> Result<(), ClaimError> {
        if p.flow_id != CLAIM_FLOW_ID {
            return Err(refuse(
                ErrorCode::AuthFlowNotFound,
                &format!(
                    "unknown flow_id; this connector offers {CLAIM_FLOW_ID}, \
                     {PAIR_CODE_FLOW_ID} and {QR_PAIR_FLOW_ID}"
                ),
            ));
        }
        const SERIAL: &str = "the phone's serial as `devices` lists it";
        let raw = super::form::string_field(&p.input, "serial", SERIAL)?.unwrap_or("");
        // Serials are byte-exact (one may begin with a space, field bug 33): the exact serial
        // wins; surrounding whitespace is dropped only when no phone has the exact one.
        let serial = if raw.trim().is_empty()
            || self.inventory.get(raw).is_some()
            || !self.inventory.sharing(raw).is_empty()
        {
            raw
        } else {
            raw.trim()
        };
        if serial.trim().is_empty() {
            return Err(super::form::missing("serial", SERIAL));
        }
        // adb serials are byte-exact on the wire, but one typed by a person may differ in
        // case: an unknown serial that matches one known phone's name (or serial) but for
        // ASCII case is that phone (two that match: the exact spelling is needed).
        let folded = self.case_folded(serial);
        let serial = folded.as_deref().unwrap_or(serial);
        if serial.len() > 128 {
            return Err(refuse(
                ErrorCode::AuthFailed,
                "field `serial` is too long: a serial has 1 to 128 characters",
            ));
        }
        // A claim code of another JSON type (a number, an object) is a form error under either
        // policy, never a guess: policy `open` ignores the code's text, not its shape.
        let code = super::form::string_field(
            &p.input,
            "claim_code",
            "the admin-issued claim code, in quotes",
        )?;
        // A serial several phones report names one of them (`claim_handle`).
        let mut names = self.claim_candidates(channel_id, serial);
        let guard = self.claim_guard_key(&names[0]);
        match self.state().check_bind(channel_id, &names[0]) {
            Ok(true) => return Ok(()),
            Err(BindRefusal::ChannelBound) => {
                return Err(refuse(
                    ErrorCode::AuthFailed,
                    "this channel is already bound to another phone; auth.logout first",
                ))
            }
            // Reported below, after the code check, exactly as the store's UNIQUE refusal.
            Ok(false) | Err(BindRefusal::PhoneBound) | Err(BindRefusal::UnknownChannel) => {}
        }
        // No phone by that name: said as such under either policy, before any code is
        // compared — never counted as a wrong code, and the same words whether or not a code
        // exists for the serial.
        if self.inventory.get(&names[0]).is_none() {
            return Err(self.unknown_serial());
        }
        if self.claim_policy() == ClaimPolicy::Code {
            if let Some(wait) = self.claim_guard.blocked_for(&guard, now_ms()) {
                return Err(refuse(
                    ErrorCode::RateLimited,
                    &format!(
                        "too many wrong claim codes for this serial; retry in {} s",
                        wait.as_secs().max(1)
                    ),
                ));
            }
            let code = code.unwrap_or("");
            // A missing code is a form error, not a guess: it does not count toward the pause.
            if code.is_empty() {
                return Err(refuse(
                    ErrorCode::AuthFailed,
                    "this connector requires an admin-issued claim code for this phone (claim policy `code`): field `claim_code` is required; ask the administrator for the phone's code",
                ));
            }
            names.retain(|name| self.claim_code_opens(name, code));
            if names.is_empty() {
                // Never the code: the masked serial and the channel say which claim it was.
                tracing::warn!(
                    channel = channel_id,
                    serial_hint = %crate::protocol::descriptor::mask_serial(serial),
                    "claim refused: wrong claim code"
                );
                self.claim_guard.failed(&guard, now_ms()).await;
                return Err(refuse(
                    ErrorCode::AuthFailed,
                    "the claim code does not match this phone (ask the administrator for its code)",
                ));
            }
        }
        let serial = names.swap_remove(0);
        let phone = self
            .inventory
            .get(&serial)
            .ok_or_else(|| self.unknown_serial())?;
        // Being handed back is said whatever the phone's state now: the `reboot` step takes
        // it offline for a while, and `device_offline` would not say it comes back by itself.
        if self.releases.is_releasing(&serial) {
            return Err(refuse(ErrorCode::DeviceReleasing, RELEASING));
        }
        if let Some((code, message)) = state_refusal(&phone.state, phone.route_kind()) {
            return Err(ClaimError { code, message });
        }
        if self.state().check_bind(channel_id, &serial) == Err(BindRefusal::PhoneBound) {
            if let Some(message) = self.all_taken(&serial) {
                return Err(refuse(ErrorCode::AuthFailed, &message));
            }
        }
        self.bind_phone(channel_id, &serial, &phone.model).await
    }

    /// The one known name (`ro.serialno`, `ro.serialno#N`) `serial` spells but for ASCII case,
    /// when no phone has `serial` exactly; `None` when one has it, none matches, or several do.
    fn case_folded(&self, serial: &str) -> Option<String> {
        if self.inventory.get(serial).is_some() || !self.inventory.sharing(serial).is_empty() {
            return None;
        }
        let mut matches: Vec<String> = self
            .inventory
            .list()
            .into_iter()
            .flat_map(|p| {
                let serialno = p.identified.then_some(p.serialno);
                [Some(p.serial), serialno]
            })
            .flatten()
            .filter(|name| name.eq_ignore_ascii_case(serial))
            .collect();
        matches.sort();
        matches.dedup();
        match matches.len() {
            1 => matches.pop(),
            _ => None,
        }
    }

    /// The refusal of a claim whose serial no phone has. When a direct phone refuses the
    /// connector's key since its first connection, its serial is unknown (adbd sends no
    /// `CNXN`, AOSP `daemon/auth.cpp`), so it may well be the one claimed: the claim is
    /// `device_unauthorized` naming its address and the fix on the phone, not "no attached
    /// phone". With an adb server down, `adb_server_unavailable` naming it (the phone may be
    /// behind it; field bug 34). Otherwise `auth_failed`. The claimed serial is not echoed.
    fn unknown_serial(&self) -> ClaimError {
        let waiting: Vec<_> = self
            .inventory
            .unidentified_direct()
            .into_iter()
            .filter(|p| p.state == DeviceState::Unauthorized)
            .collect();
        let Some(first) = waiting.first() else {
            // With an adb server down, the phone may well be behind it: say so, not "no phone".
            let down = self.inventory.servers_down();
            if !down.is_empty() {
                return ClaimError {
                    code: ErrorCode::AdbServerUnavailable,
                    message: format!(
                        "no reachable phone has this serial, and the adb server at {} is not reachable (the phone may be behind it): start it with `adb start-server`, then claim again",
                        down.join(", ")
                    ),
                };
            }
            return refuse(
                ErrorCode::AuthFailed,
                "no attached phone has this serial (check the cable or `adb devices`)",
            );
        };
        let places: Vec<&str> = waiting.iter().map(|p| p.transport.as_str()).collect();
        let (phones, serials) = if places.len() == 1 {
            ("phone", "its serial")
        } else {
            ("phones", "their serials")
        };
        let (code, why) = state_refusal(&first.state, first.route_kind())
            .unwrap_or((ErrorCode::DeviceUnauthorized, String::new()));
        ClaimError {
            code,
            message: format!(
                "no identified phone has this serial, and the direct {phones} at {} cannot \
                 tell {serials} yet: {why}",
                places.join(", ")
            ),
        }
    }

    /// Binds `channel_id` to the phone `serial` (caller holds the write gate): the memory check
    /// answers a phone bound elsewhere without a write, the store's UNIQUE constraint stays the
    /// last word, then the state. Errors: `connector_channel_not_owned`, `auth_failed` (phone
    /// bound to another channel, or the channel to another phone), `internal_error` (store).
    pub(super) async fn bind_phone(
        &self,
        channel_id: &str,
        serial: &str,
        model: &str,
    ) -> Result<(), ClaimError> {
        let record = BindingRecord {
            channel_id: channel_id.to_string(),
            serial: serial.to_string(),
            model: model.to_string(),
            bound_ms: now_ms(),
        };
        let refusal = match self.state().check_bind(channel_id, serial) {
            Ok(true) => return Ok(()),
            Ok(false) => None,
            Err(refusal) => Some(refusal),
        };
        if refusal == Some(BindRefusal::UnknownChannel) {
            return Err(refuse(
                ErrorCode::ConnectorChannelNotOwned,
                "connector_channel_id is not a channel of this connector",
            ));
        }
        // A pairing flow may run on a channel bound to a phone that must pair again
        // (`check_channel_pairable`); another phone paired there is not taken.
        if refusal == Some(BindRefusal::ChannelBound) {
            return Err(refuse(
                ErrorCode::AuthFailed,
                "this channel is already bound to another phone; auth.logout first",
            ));
        }
        // The last binding's release still runs: a typed, retryable refusal.
        if self.releases.is_releasing(serial) {
            return Err(refuse(ErrorCode::DeviceReleasing, RELEASING));
        }
        // The fleet first (issue 22): a phone another box holds is refused naming that box,
        // before anything is written here.
        if let (None, Some(fleet)) = (refusal, &self.fleet) {
            if let Err(refusal) = fleet.take(serial, channel_id).await {
                let (code, message) = refusal.code_and_message();
                return Err(ClaimError { code, message });
            }
        }
        let inserted = match refusal {
            Some(_) => false,
            None => match self.store.binding_insert(record.clone()).await {
                Ok(inserted) => inserted,
                Err(e) => {
                    if let Some(fleet) = &self.fleet {
                        fleet.release(serial).await;
                    }
                    return Err(refuse(
                        ErrorCode::InternalError,
                        &format!("could not store the binding: {e}"),
                    ));
                }
            },
        };
        if !inserted && refusal.is_none() {
            if let Some(fleet) = &self.fleet {
                fleet.release(serial).await;
            }
        }
        if !inserted {
            return Err(refuse(
                ErrorCode::AuthFailed,
                "this phone is already bound to another channel",
            ));
        }
        tracing::info!(channel = channel_id, serial_hint = %crate::protocol::descriptor::mask_serial(serial), "phone bound");
        self.state().bind(record);
        Ok(())
    }

    /// `auth.status`: the remembered session, if it belongs to `channel_id`.
    pub fn auth_session(&self, channel_id: &str, auth_session_id: &str) -> Option<AuthSession> {
        self.state().auth_session(channel_id, auth_session_id)
    }

    /// `auth.logout`: releases the channel's phone (spec §8.13: the connector cleans the
    /// target's login state). When the phone's `[release]` policy has something to undo of
    /// what tools did on the binding, the binding's removal marks it pending release in the
    /// same transaction and the release starts ([`super::release`]); otherwise the phone is
    /// claimable at once. Under the write gate (never interleaves with a claim).
    pub async fn logout(&self, channel_id: &str) -> Result<(), ClaimError> {
        let _gate = self.writes.lock().await;
        // A pairing still running on the channel ends now and never binds (`connect_and_bind`).
        self.runtime(channel_id)
            .logouts
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.qr_cancel_channel(channel_id, "ended by auth.logout");
        let bound = self.state().binding(channel_id).map(|b| b.serial.clone());
        let released = bound
            .as_deref()
            .map(crate::protocol::descriptor::mask_serial);
        let profiles = self.profiles();
        let release = bound
            .as_deref()
            .filter(|serial| self.releases.needed(serial, &profiles));
        let removed = match release {
            Some(_) => self
                .store
                .binding_delete_for_release(channel_id.to_string(), now_ms())
                .await
                .map(|_| ()),
            None => self.store.binding_delete(channel_id.to_string()).await,
        };
        removed.map_err(|e| {
            refuse(
                ErrorCode::InternalError,
                &format!("could not remove the binding: {e}"),
            )
        })?;
        if let Some(serial) = release {
            self.releases.begin(serial, &profiles);
        }
        self.state().unbind(channel_id);
        // A phone being handed back keeps its fleet key until the release ends (it gives the
        // key back then): other boxes see it bound meanwhile.
        if let (Some(serial), Some(fleet), None) = (&bound, &self.fleet, release) {
            fleet.release(serial).await;
        }
        match released {
            Some(masked) => {
                tracing::info!(channel = channel_id, serial_hint = %masked, "auth.logout: phone released")
            }
            None => tracing::info!(channel = channel_id, "auth.logout: no phone was bound"),
        }
        self.files
            .revoke_channel(Some(channel_id))
            .await
            .map_err(|e| {
                refuse(
                    ErrorCode::InternalError,
                    &format!("could not revoke the channel's files: {e}"),
                )
            })?;
        Ok(())
    }
}
