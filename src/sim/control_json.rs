//! JSON bodies and error answers of the control API, shared by its route files
//! ([`crate::control`], [`crate::control_storage`]).

use axum::http::StatusCode;
use axum::Json;

/// An error answer: status and `{"error": …}`.
pub type ApiError = (StatusCode, Json<serde_json::Value>);

/// A JSON request body. A body axum's `Json` rejects (wrong content type, not JSON, fields that
/// do not fit) answers 400 `{"error": "…"}` like every other error here, not axum's plain-text
/// 415/422; values serde would quote in its message are left out (they may be a pairing code).
pub struct JsonBody<T>(pub T);

impl<T, S> axum::extract::FromRequest<S> for JsonBody<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(value)) => Ok(JsonBody(value)),
            Err(rejection) => Err(bad(redact_values(&rejection.body_text()))),
        }
    }
}

/// A JSON body that may be left out: an empty body is `T::default()`, anything else is read
/// as [`JsonBody`] reads it.
pub struct OptionalJsonBody<T>(pub T);

impl<T, S> axum::extract::FromRequest<S> for OptionalJsonBody<T>
where
    T: serde::de::DeserializeOwned + Default,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, ApiError> {
        let (parts, body) = req.into_parts();
        let bytes = axum::body::to_bytes(body, 64 * 1024)
            .await
            .map_err(|e| bad(format!("request body: {e}")))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJsonBody(T::default()));
        }
        let req = axum::extract::Request::from_parts(parts, axum::body::Body::from(bytes));
        JsonBody::<T>::from_request(req, state)
            .await
            .map(|JsonBody(v)| OptionalJsonBody(v))
    }
}

/// Drops the offending value from serde's `invalid type: string "…", expected …` and
/// `invalid value: …, expected …` messages, keeping the kind and what was expected.
fn redact_values(msg: &str) -> String {
    let mut out = msg.to_string();
    for marker in ["invalid type: ", "invalid value: "] {
        let Some(start) = out.find(marker).map(|i| i + marker.len()) else {
            continue;
        };
        let Some(len) = out[start..].find(", expected") else {
            continue;
        };
        let kind = out[start..start + len]
            .split_whitespace()
            .next()
            .unwrap_or("value")
            .to_string();
        out.replace_range(start..start + len, &kind);
    }
    out
}

/// 400 with `{"error": msg}`.
pub fn bad(msg: impl Into<String>) -> ApiError {
    api_error(StatusCode::BAD_REQUEST, msg)
}

/// `status` with the body `{"error": msg}` of every error here.
pub fn api_error(status: StatusCode, msg: impl Into<String>) -> ApiError {
    (status, Json(serde_json::json!({ "error": msg.into() })))
}
