//! `POST /files/uploads` (spec §5.1): Bearer key, `X-XAgent-Connector-Channel-ID` naming a channel
//! of this connector, multipart field `file`, streamed to disk chunk by chunk with a size limit
//! (413 past it, the partial file removed). Returns `file_ref`, `file_type`, `filename`,
//! `byte_size` (bytes), `expires_at` (Unix ms). The ref is bound to that channel.

use axum::extract::{Multipart, State};
use axum::http::HeaderMap;
use axum::Json;
use serde::Serialize;
use tokio::io::AsyncWriteExt;

use super::error::HttpError;
use super::file_refs::CHANNEL_HEADER;
use super::{auth, AppState};
use crate::file_cache::{FileOrigin, StoredFile};
use crate::store::StorageFault;

/// Default largest accepted upload: 256 MiB (APKs for `android_app_install`).
pub const DEFAULT_MAX_UPLOAD_BYTES: u64 = 256 * 1024 * 1024;

/// The answer to a stored upload (spec §5.1).
#[derive(Debug, Clone, Serialize)]
pub struct Uploaded {
    /// Signed reference, bound to the channel.
    pub file_ref: String,
    /// `image`, `video`, `audio` or `file` (by MIME).
    pub file_type: &'static str,
    /// Sanitised display name.
    pub filename: String,
    /// Size, bytes.
    pub byte_size: u64,
    /// Expiry, Unix ms.
    pub expires_at: i64,
}

/// `file_type` from a MIME type (`image`, `video`, `audio`, `file`).
pub fn file_type(mime: &str) -> &'static str {
    match mime.split('/').next().unwrap_or("") {
        "image" => "image",
        "video" => "video",
        "audio" => "audio",
        _ => "file",
    }
}

/// A safe display name: last path component, printable, ≤ 128 chars.
pub fn clean_filename(raw: &str) -> String {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or("");
    let name: String = base
        .chars()
        .filter(|c| !c.is_control() && *c != '"')
        .take(128)
        .collect();
    if name.is_empty() || name == "." || name == ".." {
        "upload.bin".into()
    } else {
        name
    }
}

/// The handler. Errors: 401, 400 `connector_channel_id_required` / `invalid_upload`, 403
/// `connector_channel_not_owned`, 413 `upload_too_large`, 500 `internal_error` (storage: the
/// message names the cause, e.g. the disk is full, and the path).
pub async fn upload(
    State(st): State<AppState>,
    headers: HeaderMap,
    form: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Json<Uploaded>, HttpError> {
    auth::require_bearer(&headers, &st.api_key.current())?;
    let channel = headers
        .get(CHANNEL_HEADER)
        .and_then(|v| v.to_str().ok())
        .ok_or(HttpError::ChannelIdRequired)?;
    if !st.connector.channel_known(channel) {
        return Err(HttpError::ChannelNotOwned);
    }
    // Checked after the key and the channel, so a stranger learns nothing from the body type.
    let mut form = form.map_err(|e| {
        HttpError::InvalidUpload(format!(
            "the body must be multipart/form-data with a `file` field: {}",
            e.body_text()
        ))
    })?;
    loop {
        let field = form
            .next_field()
            .await
            .map_err(|e| HttpError::InvalidUpload(e.body_text()))?
            .ok_or_else(|| HttpError::InvalidUpload("multipart field `file` is required".into()))?;
        if field.name() != Some("file") {
            continue;
        }
        let filename = clean_filename(field.file_name().unwrap_or("upload.bin"));
        let mime = field
            .content_type()
            .unwrap_or("application/octet-stream")
            .to_string();
        let ext = filename
            .rsplit_once('.')
            .map(|(_, e)| e)
            .unwrap_or("bin")
            .to_string();
        return store_field(&st, channel, field, &filename, &mime, &ext).await;
    }
}

/// Streams `field` to a reserved file, removing the partial file on any failure.
async fn store_field(
    st: &AppState,
    channel: &str,
    field: axum::extract::multipart::Field<'_>,
    filename: &str,
    mime: &str,
    ext: &str,
) -> Result<Json<Uploaded>, HttpError> {
    let files = st.connector.files();
    let (file_id, path) = files.reserve(ext);
    let size = match write_field(field, &path, st.upload_max_bytes).await {
        Ok(size) => size,
        Err(e) => {
            let _ = tokio::fs::remove_file(&path).await;
            return Err(e);
        }
    };
    let stored = StoredFile {
        mime,
        filename,
        byte_size: size,
        origin: FileOrigin::Upload,
    };
    let issued = match files.commit(channel, &file_id, &path, stored).await {
        Ok(issued) => issued,
        Err(e) => {
            let _ = tokio::fs::remove_file(&path).await;
            return Err(HttpError::Storage(format!("cannot record the upload: {e}")));
        }
    };
    Ok(Json(Uploaded {
        file_ref: issued.file_ref,
        file_type: file_type(mime),
        filename: filename.to_string(),
        byte_size: size,
        expires_at: issued.expires_at,
    }))
}

/// Writes the field's chunks to `path` up to `max` bytes; returns the size.
async fn write_field(
    mut field: axum::extract::multipart::Field<'_>,
    path: &std::path::Path,
    max: u64,
) -> Result<u64, HttpError> {
    let cannot_store = |e: std::io::Error| {
        HttpError::Storage(format!(
            "cannot store the upload: {}",
            StorageFault::of_io(path, &e)
        ))
    };
    let mut out = tokio::fs::File::create(path).await.map_err(cannot_store)?;
    let mut size: u64 = 0;
    while let Some(chunk) = field
        .chunk()
        .await
        .map_err(|e| HttpError::InvalidUpload(e.body_text()))?
    {
        size += chunk.len() as u64;
        if size > max {
            return Err(HttpError::UploadTooLarge(max));
        }
        out.write_all(&chunk).await.map_err(cannot_store)?;
    }
    out.flush().await.map_err(cannot_store)?;
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filenames_are_cleaned() {
        assert_eq!(clean_filename("../../etc/passwd"), "passwd");
        assert_eq!(clean_filename("C:\\x\\app.apk"), "app.apk");
        assert_eq!(clean_filename(".."), "upload.bin");
        assert_eq!(file_type("image/png"), "image");
        assert_eq!(file_type("application/vnd.android.package-archive"), "file");
    }
}
