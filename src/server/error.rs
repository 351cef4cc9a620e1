//! Errors of the HTTP plane and their one mapping to responses: a status and the JSON body
//! `{"error": {"code", "message"}}` documented in `docs/protocol.md` ("HTTP endpoints answer
//! errors as …"). Messages never carry secrets.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use super::MAX_SOCKETS;

/// An HTTP request refused or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// 401 `unauthorized` (with `WWW-Authenticate: Bearer`), spec §3.
    #[error("missing or wrong Bearer API key")]
    Unauthorized,
    /// 401 `unauthorized` of the operator console (with `WWW-Authenticate: Basic`, so a
    /// browser asks for the user `operator` and the operator key): [`super::console`].
    #[error("the operator console needs HTTP Basic credentials: user operator, the operator key as password")]
    ConsoleUnauthorized,
    /// 503 `screen_unavailable`: the console could not take a phone's screen (the tool
    /// error's code and message: why, and the fix).
    #[error("{0}")]
    ScreenUnavailable(String),
    /// 404 `phone_not_found`: the console was asked for the screen of a phone the connector
    /// does not know (no attached phone has that name).
    #[error("no phone of that name is attached; GET /console lists the phones")]
    PhoneNotFound,
    /// 429 `rate_limited` (with `Retry-After`, seconds): too many failed console logins from
    /// this peer ([`super::console::login_throttle`]); retry after the seconds given.
    #[error("too many failed operator console logins from this address; retry in {0} s")]
    ConsoleThrottled(u64),
    /// 400 `websocket_upgrade_required`: `GET /ws` without a handshake (the upgrade's reason).
    #[error("GET /ws must be a WebSocket upgrade: {0}")]
    WebSocketUpgradeRequired(String),
    /// 400 `subprotocol_required` (spec §6).
    #[error("Sec-WebSocket-Protocol must offer xagent.connector.packet.v1")]
    SubprotocolRequired,
    /// 503 `too_many_connections`: [`MAX_SOCKETS`] data-plane sockets are open.
    #[error("at most {MAX_SOCKETS} data-plane sockets")]
    TooManyConnections,
    /// 404 `file_not_found`: unknown or expired ref (spec §5.2).
    #[error("file_ref does not exist or expired")]
    FileNotFound,
    /// 403 `file_forbidden`: tampered signature or another channel's ref.
    #[error("file_ref does not match its signature or channel")]
    FileForbidden,
    /// 400 `connector_channel_id_required`: upload without the channel header (spec §5.1).
    #[error("X-XAgent-Connector-Channel-ID is required")]
    ChannelIdRequired,
    /// 403 `connector_channel_not_owned`: upload for a channel this connector did not issue.
    #[error("the channel is not a channel of this connector")]
    ChannelNotOwned,
    /// 400 `invalid_upload`: the body is not the expected multipart form (reason given).
    #[error("{0}")]
    InvalidUpload(String),
    /// 400 `invalid_query`: a query parameter an endpoint reads has a value it does not take
    /// (what it takes; the value is not echoed). Parameters an endpoint does not read are
    /// ignored, as everywhere.
    #[error("{0}")]
    InvalidQuery(&'static str),
    /// 413 `upload_too_large`: past the configured limit (bytes).
    #[error("uploads are limited to {0} bytes")]
    UploadTooLarge(u64),
    /// 404 `endpoint_not_found`: no route has this path (the router's fallback). The path is
    /// not echoed: it may hold a file ref.
    #[error("no such endpoint; the connector serves /connector-card.json, /skill.md, /health, /metrics, /ws, /files/refs/{{file_ref}} and /files/uploads")]
    EndpointNotFound,
    /// 405 `method_not_allowed`: the path exists, not with this method (the method); the
    /// response's `Allow` header lists the methods it takes.
    #[error("{0} is not allowed on this endpoint; the Allow header lists the methods it takes")]
    MethodNotAllowed(String),
    /// 500 `internal_error`: storage failed (what failed, no detail).
    #[error("{0}")]
    Internal(&'static str),
    /// 500 `internal_error`: storage failed, with its cause and path (disk full, read-only,
    /// locked: [`crate::store::StorageFault`]).
    #[error("{0}")]
    Storage(String),
}

impl HttpError {
    /// The stable code of the body.
    pub fn code(&self) -> &'static str {
        match self {
            HttpError::Unauthorized | HttpError::ConsoleUnauthorized => "unauthorized",
            HttpError::ScreenUnavailable(_) => "screen_unavailable",
            HttpError::PhoneNotFound => "phone_not_found",
            HttpError::ConsoleThrottled(_) => "rate_limited",
            HttpError::WebSocketUpgradeRequired(_) => "websocket_upgrade_required",
            HttpError::SubprotocolRequired => "subprotocol_required",
            HttpError::TooManyConnections => "too_many_connections",
            HttpError::FileNotFound => "file_not_found",
            HttpError::FileForbidden => "file_forbidden",
            HttpError::ChannelIdRequired => "connector_channel_id_required",
            HttpError::ChannelNotOwned => "connector_channel_not_owned",
            HttpError::InvalidUpload(_) => "invalid_upload",
            HttpError::InvalidQuery(_) => "invalid_query",
            HttpError::UploadTooLarge(_) => "upload_too_large",
            HttpError::EndpointNotFound => "endpoint_not_found",
            HttpError::MethodNotAllowed(_) => "method_not_allowed",
            HttpError::Internal(_) | HttpError::Storage(_) => "internal_error",
        }
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            HttpError::Unauthorized | HttpError::ConsoleUnauthorized => StatusCode::UNAUTHORIZED,
            HttpError::ScreenUnavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            HttpError::PhoneNotFound => StatusCode::NOT_FOUND,
            HttpError::ConsoleThrottled(_) => StatusCode::TOO_MANY_REQUESTS,
            HttpError::WebSocketUpgradeRequired(_)
            | HttpError::SubprotocolRequired
            | HttpError::ChannelIdRequired
            | HttpError::InvalidUpload(_)
            | HttpError::InvalidQuery(_) => StatusCode::BAD_REQUEST,
            HttpError::TooManyConnections => StatusCode::SERVICE_UNAVAILABLE,
            HttpError::FileNotFound | HttpError::EndpointNotFound => StatusCode::NOT_FOUND,
            HttpError::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            HttpError::FileForbidden | HttpError::ChannelNotOwned => StatusCode::FORBIDDEN,
            HttpError::UploadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            HttpError::Internal(_) | HttpError::Storage(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// `{"error": {"code", "message"}}`.
#[derive(Serialize)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Serialize)]
struct ErrorDetail {
    code: &'static str,
    message: String,
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = Json(ErrorBody {
            error: ErrorDetail {
                code: self.code(),
                message: self.to_string(),
            },
        });
        if self == HttpError::Unauthorized {
            return (status, [(header::WWW_AUTHENTICATE, "Bearer")], body).into_response();
        }
        if self == HttpError::ConsoleUnauthorized {
            // RFC 7617: the realm names what the password opens; UTF-8 credentials.
            let challenge = super::console::basic_auth::CHALLENGE;
            return (status, [(header::WWW_AUTHENTICATE, challenge)], body).into_response();
        }
        if let HttpError::ConsoleThrottled(secs) = self {
            return (status, [(header::RETRY_AFTER, secs.to_string())], body).into_response();
        }
        (status, body).into_response()
    }
}
