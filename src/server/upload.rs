//! `POST /files/uploads` (spec §5.1): Bearer key, `X-XAgent-Connector-Channel-ID` naming a channel
//! of this connector, multipart field `file`, streamed to disk chunk by chunk with a size limit
//! (413 past it, the partial file removed). Returns `file_ref`, `file_type`, `filename`,
//! `byte_size` (bytes), `expires_at` (Unix ms). The ref is bound to that channel.

use axum::extract::{Multipart, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::files::CHANNEL_HEADER;
use super::{auth, AppState};

/// Default largest accepted upload: 256 MiB (APKs for `android_app_install`).
pub const DEFAULT_MAX_UPLOAD_BYTES: u64 = 256 * 1024 * 1024;

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"code": code, "message": message}})),
    )
        .into_response()
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

/// The handler.
pub async fn upload(
    State(st): State<AppState>,
    headers: HeaderMap,
    form: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Response {
    if !auth::bearer_ok(&headers, &st.api_key) {
        return auth::unauthorized();
    }
    let Some(channel) = headers.get(CHANNEL_HEADER).and_then(|v| v.to_str().ok()) else {
        return error(
            StatusCode::BAD_REQUEST,
            "connector_channel_id_required",
            "X-XAgent-Connector-Channel-ID is required",
        );
    };
    if !st.connector.channel_known(channel) {
        return error(
            StatusCode::FORBIDDEN,
            "connector_channel_not_owned",
            "the channel is not a channel of this connector",
        );
    }
    // Checked after the key and the channel, so a stranger learns nothing from the body type.
    let mut form = match form {
        Ok(f) => f,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                "invalid_upload",
                &format!(
                    "the body must be multipart/form-data with a `file` field: {}",
                    e.body_text()
                ),
            )
        }
    };
    loop {
        let field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "invalid_upload",
                    "multipart field `file` is required",
                )
            }
            Err(e) => return error(StatusCode::BAD_REQUEST, "invalid_upload", &e.body_text()),
        };
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

async fn store_field(
    st: &AppState,
    channel: &str,
    mut field: axum::extract::multipart::Field<'_>,
    filename: &str,
    mime: &str,
    ext: &str,
) -> Response {
    let files = st.connector.files();
    let (file_id, path) = files.reserve(ext);
    let Ok(mut out) = tokio::fs::File::create(&path).await else {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "cannot store the upload",
        );
    };
    let mut size: u64 = 0;
    loop {
        match field.chunk().await {
            Ok(Some(chunk)) => {
                size += chunk.len() as u64;
                if size > st.upload_max_bytes {
                    drop(out);
                    let _ = tokio::fs::remove_file(&path).await;
                    return error(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "upload_too_large",
                        &format!("uploads are limited to {} bytes", st.upload_max_bytes),
                    );
                }
                if out.write_all(&chunk).await.is_err() {
                    let _ = tokio::fs::remove_file(&path).await;
                    return error(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "internal_error",
                        "cannot store the upload",
                    );
                }
            }
            Ok(None) => break,
            Err(e) => {
                drop(out);
                let _ = tokio::fs::remove_file(&path).await;
                return error(StatusCode::BAD_REQUEST, "invalid_upload", &e.body_text());
            }
        }
    }
    if out.flush().await.is_err() {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "cannot store the upload",
        );
    }
    match files
        .commit(channel, &file_id, &path, mime, filename, size)
        .await
    {
        Ok(issued) => Json(json!({
            "file_ref": issued.file_ref,
            "file_type": file_type(mime),
            "filename": filename,
            "byte_size": size,
            "expires_at": issued.expires_at,
        }))
        .into_response(),
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "cannot record the upload",
        ),
    }
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
