//! System API key check (`Authorization: Bearer <api_key>`, spec §3). Both sides are hashed
//! with SHA-256 and compared in constant time, so neither content nor length leaks by timing.

use axum::http::{header, HeaderMap};
use subtle::ConstantTimeEq;

use super::error::HttpError;
use crate::secret::{hash_claim_code, Secret};

/// The system API key in force, shared by every handler and replaced in place on SIGHUP
/// ([`crate::daemon::reload`]): a request is checked against the key current when it arrives,
/// so after a rotation the old key is refused at once while open sockets stay up.
#[derive(Clone)]
pub struct ApiKey(std::sync::Arc<std::sync::RwLock<Secret>>);

impl ApiKey {
    /// Holds `key`.
    pub fn new(key: Secret) -> ApiKey {
        ApiKey(std::sync::Arc::new(std::sync::RwLock::new(key)))
    }

    /// The key in force now.
    pub fn current(&self) -> Secret {
        self.0.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Replaces the key.
    pub fn replace(&self, key: Secret) {
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = key;
    }
}

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
