//! `GET /files/refs/{file_ref}` (spec §5.2): raw bytes with the stored `Content-Type`;
//! 404 unknown or expired, 403 tampered or another channel's ref (when the caller sends
//! `X-XAgent-Connector-Channel-ID`).

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::AppState;
use crate::files::FileRefError;

/// Header naming the caller's channel (spec §5.1).
pub const CHANNEL_HEADER: &str = "x-xagent-connector-channel-id";

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"code": code, "message": message}})),
    )
        .into_response()
}

/// Serves a stored file.
pub async fn download(
    State(st): State<AppState>,
    Path(file_ref): Path<String>,
    headers: HeaderMap,
) -> Response {
    let channel = headers.get(CHANNEL_HEADER).and_then(|v| v.to_str().ok());
    let rec = match st.connector.files().resolve(&file_ref, channel).await {
        Ok(r) => r,
        Err(FileRefError::NotFound) => {
            return error(
                StatusCode::NOT_FOUND,
                "file_not_found",
                "file_ref does not exist or expired",
            )
        }
        Err(FileRefError::Forbidden) => {
            return error(
                StatusCode::FORBIDDEN,
                "file_forbidden",
                "file_ref does not match its signature or channel",
            )
        }
        Err(FileRefError::Storage) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal_error",
                "storage failure",
            )
        }
    };
    match tokio::fs::read(&rec.path).await {
        Ok(bytes) => (
            [
                (header::CONTENT_TYPE, rec.mime.clone()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("inline; filename=\"{}\"", rec.filename),
                ),
                (header::CACHE_CONTROL, "private, no-store".to_string()),
            ],
            Body::from(bytes),
        )
            .into_response(),
        Err(_) => error(
            StatusCode::NOT_FOUND,
            "file_not_found",
            "file_ref does not exist or expired",
        ),
    }
}
