//! `GET /files/refs/{file_ref}` (spec §5.2): raw bytes with the stored `Content-Type`;
//! 404 unknown or expired, 403 tampered or another channel's ref (when the caller sends
//! `X-XAgent-Connector-Channel-ID`).

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};

use super::error::HttpError;
use super::AppState;
use crate::file_cache::FileRefError;

/// Header naming the caller's channel (spec §5.1).
pub const CHANNEL_HEADER: &str = "x-xagent-connector-channel-id";

impl From<FileRefError> for HttpError {
    fn from(e: FileRefError) -> HttpError {
        match e {
            FileRefError::NotFound => HttpError::FileNotFound,
            FileRefError::Forbidden => HttpError::FileForbidden,
            FileRefError::Storage(why) => HttpError::Storage(why),
        }
    }
}

/// Serves a stored file. Errors: 404 `file_not_found`, 403 `file_forbidden`, 500.
pub async fn download(
    State(st): State<AppState>,
    Path(file_ref): Path<String>,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let channel = headers.get(CHANNEL_HEADER).and_then(|v| v.to_str().ok());
    let rec = st.connector.files().resolve(&file_ref, channel).await?;
    // A record whose bytes are gone (evicted meanwhile) is as good as expired.
    let bytes = tokio::fs::read(&rec.path)
        .await
        .map_err(|_| HttpError::FileNotFound)?;
    Ok((
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
        .into_response())
}
