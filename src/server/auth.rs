//! System API key check (`Authorization: Bearer <api_key>`, spec §3). Both sides are hashed
//! with SHA-256 and compared in constant time, so neither content nor length leaks by timing.

use axum::http::{header, HeaderMap};
use subtle::ConstantTimeEq;

use super::error::HttpError;
use crate::secret::{hash_claim_code, Secret};

/// Whether `headers` carry the right Bearer key.
pub fn bearer_ok(headers: &HeaderMap, key: &Secret) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    // The auth scheme name is case-insensitive (RFC 9110 §11.1).
    let Some((scheme, token)) = value.split_once(' ') else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return false;
    }
    let given = hash_claim_code(token.trim());
    let expected = hash_claim_code(key.expose());
    bool::from(given.ct_eq(&expected))
}

/// `Ok` when `headers` carry the right Bearer key, else [`HttpError::Unauthorized`] (401).
pub fn require_bearer(headers: &HeaderMap, key: &Secret) -> Result<(), HttpError> {
    if bearer_ok(headers, key) {
        Ok(())
    } else {
        Err(HttpError::Unauthorized)
    }
}
