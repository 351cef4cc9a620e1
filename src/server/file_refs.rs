//! `GET /files/refs/{file_ref}` (spec §5.2): the stored bytes; 404 unknown or expired, 403
//! tampered or another channel's ref (when the caller sends `X-XAgent-Connector-Channel-ID`).
//!
//! How a file is served depends on where it came from (issue 19 L2: a file an app drops in
//! Download, pulled and served inline as `text/html` or `image/svg+xml`, ran as a page on the
//! connector's address). Only images and videos the connector made itself (screenshots, screen
//! recordings: [`crate::file_cache::FileOrigin::served_inline`]) are served inline under their
//! own `Content-Type`; uploads and files pulled from the phone are served as
//! `application/octet-stream` with `Content-Disposition: attachment`, whatever their name says.
//! Every file answer carries `X-Content-Type-Options: nosniff` (no browser guesses a type) and
//! `Content-Security-Policy: sandbox` (a document shown anyway runs no script and has an
//! opaque origin, W3C CSP3 §6.3.2 `sandbox`).

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};

use super::error::HttpError;
use super::AppState;
use crate::file_cache::FileRefError;
use crate::store::FileRecord;

/// Header naming the caller's channel (spec §5.1).
pub const CHANNEL_HEADER: &str = "x-xagent-connector-channel-id";

/// `Content-Security-Policy` of every file answer.
pub const FILE_CSP: &str = "sandbox";

impl From<FileRefError> for HttpError {
    fn from(e: FileRefError) -> HttpError {
        match e {
            FileRefError::NotFound => HttpError::FileNotFound,
            FileRefError::Forbidden => HttpError::FileForbidden,
            FileRefError::Storage(why) => HttpError::Storage(why),
        }
    }
}

/// `Content-Disposition` for `rec` (RFC 6266): `inline` or `attachment`, an ASCII `filename`
/// (other characters replaced by `_`) and, when the name is not plain ASCII, `filename*` with
/// the UTF-8 name percent-encoded (RFC 8187), so no header value is ever invalid.
pub fn content_disposition(inline: bool, filename: &str) -> HeaderValue {
    let kind = if inline { "inline" } else { "attachment" };
    let ascii: String = filename
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && !matches!(c, '"' | '\\' | '%') || c == ' ' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut value = format!("{kind}; filename=\"{ascii}\"");
    if ascii != filename {
        let encoded: String = filename
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"!#$&+-.^_`|~".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        value.push_str(&format!("; filename*=UTF-8''{encoded}"));
    }
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("attachment"))
}

/// The headers of a file answer for `rec` (see the module doc).
pub fn file_headers(rec: &FileRecord) -> HeaderMap {
    let mut h = HeaderMap::new();
    let ctype = if rec.served_inline {
        HeaderValue::from_str(&rec.mime).ok()
    } else {
        None
    };
    h.insert(
        header::CONTENT_TYPE,
        ctype.unwrap_or_else(|| HeaderValue::from_static("application/octet-stream")),
    );
    h.insert(
        header::CONTENT_DISPOSITION,
        content_disposition(rec.served_inline, &rec.filename),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(FILE_CSP),
    );
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-store"),
    );
    h
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
    Ok((file_headers(&rec), Body::from(bytes)).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(mime: &str, filename: &str, served_inline: bool) -> FileRecord {
        FileRecord {
            file_id: "f".into(),
            channel_id: "c".into(),
            path: "/x".into(),
            mime: mime.into(),
            filename: filename.into(),
            byte_size: 1,
            created_ms: 0,
            expires_ms: 1,
            served_inline,
        }
    }

    #[test]
    fn only_own_captures_are_inline_and_every_answer_is_sandboxed() {
        let shot = file_headers(&record("image/png", "a.png", true));
        assert_eq!(shot[header::CONTENT_TYPE], "image/png");
        assert!(shot[header::CONTENT_DISPOSITION]
            .to_str()
            .unwrap()
            .starts_with("inline;"));
        for (mime, name) in [
            ("image/svg+xml", "x.svg"),
            ("text/html", "x.html"),
            ("image/png", "y.png"),
        ] {
            let h = file_headers(&record(mime, name, false));
            assert_eq!(h[header::CONTENT_TYPE], "application/octet-stream");
            assert!(h[header::CONTENT_DISPOSITION]
                .to_str()
                .unwrap()
                .starts_with("attachment;"));
        }
        for h in [shot, file_headers(&record("text/html", "x.html", false))] {
            assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
            assert_eq!(h[header::CONTENT_SECURITY_POLICY], "sandbox");
        }
    }

    #[test]
    fn filenames_are_always_a_valid_header() {
        let v = content_disposition(false, "Check-in confirmation.pdf");
        assert_eq!(v, "attachment; filename=\"Check-in confirmation.pdf\"");
        let v = content_disposition(false, "レシート 1.png");
        let s = v.to_str().unwrap();
        assert!(s.starts_with("attachment; filename=\"____ 1.png\"; filename*=UTF-8''%E3%83"));
        assert!(!s.contains('\n'));
    }
}
