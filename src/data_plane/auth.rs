//! The auth packets of flows `adb_device_claim` and `adb_pair_code` (spec §8.7–8.14). Both
//! complete inside `auth.start` ([`crate::connector::claim`], [`crate::connector::pairing`]);
//! the other packets report or release.

use super::error::DataPlaneError;
use super::reply::{to_payload, AuthAck, AuthCancelAck, AuthLogoutAck, Reply};
use crate::connector::claim::AuthStatus;
use crate::connector::Connector;
use crate::protocol::card::{CLAIM_FLOW_ID, PAIR_CODE_FLOW_ID};
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
        connection_descriptor: (status == AuthStatus::Authenticated)
            .then(|| connector.descriptor(channel)),
    }
}

/// `auth.start`: runs the claim. A refusal is the ack with `status: failed` and `error`.
pub async fn start(
    connector: &Connector,
    channel: &str,
    p: &AuthStartPayload,
) -> Result<Reply, DataPlaneError> {
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
            "phone bound to this channel",
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

/// `auth.status`: the remembered session; an authenticated one whose binding was released
/// since reads `unauthenticated`. Errors: `auth_session_not_found`.
pub fn status(
    connector: &Connector,
    channel: &str,
    p: AuthStatusPayload,
) -> Result<Reply, DataPlaneError> {
    let Some(sess) = connector.auth_session(channel, &p.auth_session_id) else {
        return Err(DataPlaneError::failed(
            ErrorCode::AuthSessionNotFound,
            "unknown auth_session_id for this channel",
        ));
    };
    let status = if sess.status == AuthStatus::Authenticated && connector.binding(channel).is_none()
    {
        AuthStatus::Canceled
    } else {
        sess.status
    };
    let flow = p.flow_id.unwrap_or_else(|| CLAIM_FLOW_ID.to_string());
    Ok(Reply::AuthStatusAck(auth_ack(
        connector,
        channel,
        &flow,
        &p.auth_session_id,
        status,
        "",
    )))
}

/// `auth.cancel`: claims complete within `auth.start`, so there is never an unfinished session
/// to cancel: `ignored` for a known session, `not_found` otherwise.
pub fn cancel(
    connector: &Connector,
    channel: &str,
    p: &AuthCancelPayload,
) -> Result<Reply, DataPlaneError> {
    let known = connector
        .auth_session(channel, &p.auth_session_id)
        .is_some();
    let ack = if known {
        AuthCancelAck {
            connector_channel_id: channel.to_string(),
            auth_session_id: p.auth_session_id.clone(),
            status: "ignored",
            auth_status: Some(if connector.binding(channel).is_some() {
                "authenticated"
            } else {
                "unauthenticated"
            }),
            message: "the claim already finished",
            connection_descriptor: Some(connector.descriptor(channel)),
        }
    } else {
        AuthCancelAck {
            connector_channel_id: channel.to_string(),
            auth_session_id: p.auth_session_id.clone(),
            status: "not_found",
            auth_status: None,
            message: "unknown auth_session_id",
            connection_descriptor: None,
        }
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
