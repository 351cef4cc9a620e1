//! The auth packets (spec §8.7–8.14) of flows `adb_device_claim` and `adb_pair_code` (both
//! complete inside `auth.start`: [`crate::connector::claim`], [`crate::connector::pairing`])
//! and `adb_qr_pair` (`auth.start` answers `pending` with the QR; a background attempt moves
//! it on: [`crate::connector::qr_pairing`]). The other packets report, refresh, cancel or
//! release.

use std::sync::Arc;

use super::error::DataPlaneError;
use super::reply::{to_payload, AuthAck, AuthCancelAck, AuthLogoutAck, Reply};
use crate::connector::auth_session::AuthStatus;
use crate::connector::qr_pairing::{QrOffer, POLL_INTERVAL_MILLIS};
use crate::connector::Connector;
use crate::protocol::card::{CLAIM_FLOW_ID, PAIR_CODE_FLOW_ID, QR_PAIR_FLOW_ID};
use crate::protocol::payloads::{AuthCancelPayload, AuthStartPayload, AuthStatusPayload};
use crate::protocol::ErrorCode;

/// The `auth.start.ack` / `auth.status.ack` payload; the descriptor only when authenticated.
fn auth_ack(
    connector: &Connector,
    channel: &str,
    flow_id: &str,
    auth_session_id: &str,
    status: AuthStatus,
    message: &str,
) -> AuthAck {
    AuthAck {
        connector_channel_id: channel.to_string(),
        flow_id: flow_id.to_string(),
        auth_session_id: auth_session_id.to_string(),
        status,
        message: message.to_string(),
        qr_code_text: None,
        qr_code_image: None,
        expires_at: None,
        poll_interval_millis: None,
        connection_descriptor: (status == AuthStatus::Authenticated)
            .then(|| connector.descriptor(channel)),
    }
}

/// The `pending` ack carrying a freshly issued QR code.
fn qr_ack(connector: &Connector, channel: &str, offer: QrOffer) -> AuthAck {
    AuthAck {
        qr_code_text: Some(offer.qr_code_text),
        qr_code_image: Some(offer.qr_code_image),
        expires_at: Some(offer.expires_at),
        poll_interval_millis: Some(POLL_INTERVAL_MILLIS),
        ..auth_ack(
            connector,
            channel,
            QR_PAIR_FLOW_ID,
            &offer.auth_session_id,
            AuthStatus::Pending,
            "scan the QR code with the phone: Developer options → Wireless debugging → Pair device with QR code",
        )
    }
}

/// `auth.start`: runs the claim or pairing, or issues a QR code. A refusal is the ack with
/// `status: failed` and `error`.
pub async fn start(
    connector: &Arc<Connector>,
    channel: &str,
    p: &AuthStartPayload,
) -> Result<Reply, DataPlaneError> {
    if p.flow_id == QR_PAIR_FLOW_ID {
        return match connector.qr_start(channel) {
            Ok(offer) => Ok(Reply::AuthStartAck(qr_ack(connector, channel, offer))),
            Err(e) => Err(DataPlaneError::failed(e.code, e.message)),
        };
    }
    let (session_id, result) = if p.flow_id == PAIR_CODE_FLOW_ID {
        connector.pair_with_code(channel, p).await
    } else {
        connector.claim(channel, p).await
    };
    match result {
        Ok(()) => Ok(Reply::AuthStartAck(auth_ack(
            connector,
            channel,
            &p.flow_id,
            &session_id,
            AuthStatus::Authenticated,
            &bound_message(connector, channel),
        ))),
        Err(e) => {
            let ack = auth_ack(
                connector,
                channel,
                &p.flow_id,
                &session_id,
                AuthStatus::Failed,
                &e.message,
            );
            Err(DataPlaneError::failed_with(
                e.code,
                e.message,
                to_payload(&ack),
            ))
        }
    }
}

/// The message of a successful `auth.start`: "phone bound to this channel", and the warning
/// when its serial is not unique (field bug 50, [`Connector::serial_warning`]).
fn bound_message(connector: &Connector, channel: &str) -> String {
    match connector.serial_warning(channel) {
        Some(warning) => format!("phone bound to this channel; warning: {warning}"),
        None => "phone bound to this channel".to_string(),
    }
}

/// The answer to `refresh: true` on a canceled QR attempt (no new code is issued).
pub const CANCELED_NO_REFRESH: &str =
    "this QR pairing was canceled and is not refreshed: send auth.start (flow adb_qr_pair) for a new QR code";

/// `auth.status`: a QR attempt's current state (`refresh: true` issues a new code unless the
/// phone is already pairing or bound, or the attempt was canceled: [`CANCELED_NO_REFRESH`]), or the remembered session of a form flow; an
/// authenticated one whose binding was released since reads `unauthenticated`. Errors:
/// `auth_session_not_found`.
pub fn status(
    connector: &Arc<Connector>,
    channel: &str,
    p: AuthStatusPayload,
) -> Result<Reply, DataPlaneError> {
    if let Some(attempt) = connector.qr_attempt(channel, &p.auth_session_id) {
        if p.refresh {
            if let Some(issued) = connector.qr_refresh(channel, &p.auth_session_id) {
                let offer = issued.map_err(|e| DataPlaneError::failed(e.code, e.message))?;
                return Ok(Reply::AuthStatusAck(qr_ack(connector, channel, offer)));
            }
        }
        let view = attempt.view();
        let status = released(connector, channel, view.status);
        // A refresh of a canceled attempt is refused: it stays canceled, and the answer says so.
        let message = if p.refresh && view.status == AuthStatus::Canceled {
            CANCELED_NO_REFRESH
        } else {
            view.message.as_str()
        };
        let mut ack = auth_ack(
            connector,
            channel,
            QR_PAIR_FLOW_ID,
            &p.auth_session_id,
            status,
            message,
        );
        ack.expires_at = Some(view.expires_at);
        if !status.is_final() {
            ack.poll_interval_millis = Some(POLL_INTERVAL_MILLIS);
        }
        return Ok(Reply::AuthStatusAck(ack));
    }
    let Some(sess) = connector.auth_session(channel, &p.auth_session_id) else {
        return Err(DataPlaneError::failed(
            ErrorCode::AuthSessionNotFound,
            "unknown auth_session_id for this channel",
        ));
    };
    let flow = p.flow_id.unwrap_or_else(|| CLAIM_FLOW_ID.to_string());
    Ok(Reply::AuthStatusAck(auth_ack(
        connector,
        channel,
        &flow,
        &p.auth_session_id,
        released(connector, channel, sess.status),
        "",
    )))
}

/// `authenticated` reads `unauthenticated` once the channel's binding was released.
fn released(connector: &Connector, channel: &str, status: AuthStatus) -> AuthStatus {
    if status == AuthStatus::Authenticated && connector.binding(channel).is_none() {
        AuthStatus::Canceled
    } else {
        status
    }
}

/// `auth.cancel`: an unfinished QR attempt stops (`canceled`); a finished session is
/// `ignored` (with the current descriptor); an unknown one `not_found`.
pub fn cancel(
    connector: &Connector,
    channel: &str,
    p: &AuthCancelPayload,
) -> Result<Reply, DataPlaneError> {
    let auth_status = || {
        Some(if connector.binding(channel).is_some() {
            "authenticated"
        } else {
            "unauthenticated"
        })
    };
    let ack = match connector.qr_cancel(channel, &p.auth_session_id) {
        Some(true) => AuthCancelAck {
            connector_channel_id: channel.to_string(),
            auth_session_id: p.auth_session_id.clone(),
            status: "canceled",
            auth_status: auth_status(),
            message: "QR pairing canceled",
            connection_descriptor: Some(connector.descriptor(channel)),
        },
        Some(false) => AuthCancelAck {
            connector_channel_id: channel.to_string(),
            auth_session_id: p.auth_session_id.clone(),
            status: "ignored",
            auth_status: auth_status(),
            message: "the QR pairing already finished",
            connection_descriptor: Some(connector.descriptor(channel)),
        },
        None if connector
            .auth_session(channel, &p.auth_session_id)
            .is_some() =>
        {
            AuthCancelAck {
                connector_channel_id: channel.to_string(),
                auth_session_id: p.auth_session_id.clone(),
                status: "ignored",
                auth_status: auth_status(),
                message: "the claim already finished",
                connection_descriptor: Some(connector.descriptor(channel)),
            }
        }
        None => AuthCancelAck {
            connector_channel_id: channel.to_string(),
            auth_session_id: p.auth_session_id.clone(),
            status: "not_found",
            auth_status: None,
            message: "unknown auth_session_id",
            connection_descriptor: None,
        },
    };
    Ok(Reply::AuthCancelAck(ack))
}

/// `auth.logout`: releases the phone and answers with the `created` descriptor.
pub async fn logout(connector: &Connector, channel: &str) -> Result<Reply, DataPlaneError> {
    connector
        .logout(channel)
        .await
        .map_err(|e| DataPlaneError::failed(e.code, e.message))?;
    Ok(Reply::AuthLogoutAck(AuthLogoutAck {
        status: "ok",
        connection_descriptor: connector.descriptor(channel),
    }))
}
