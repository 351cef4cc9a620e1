//! The operator console's credentials: HTTP Basic (RFC 7617), user [`OPERATOR_USER`], password
//! the first line of `--operator-key-file`. User and password are each hashed (SHA-256) and
//! compared in constant time, so neither content nor length leaks by timing, and both are
//! compared whatever the first comparison said.

use axum::http::{header, HeaderMap};
use base64::Engine;
use subtle::ConstantTimeEq;

use crate::secret::{hash_claim_code, Secret};

/// The one user name of the console.
pub const OPERATOR_USER: &str = "operator";

/// The `WWW-Authenticate` challenge of a 401 from the console.
pub const CHALLENGE: &str =
    "Basic realm=\"xagent-adb-connector operator console\", charset=\"UTF-8\"";

/// Whether `headers` carry `Authorization: Basic base64(operator:KEY)` with `key`.
pub fn basic_ok(headers: &HeaderMap, key: &Secret) -> bool {
    let Some(value) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    // The scheme name is case-insensitive (RFC 9110 §11.1).
    let Some((scheme, encoded)) = value.split_once(' ') else {
        return false;
    };
    if !scheme.eq_ignore_ascii_case("basic") {
        return false;
    }
    let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(encoded.trim()) else {
        return false;
    };
    let Ok(text) = String::from_utf8(decoded) else {
        return false;
    };
    // The user id cannot hold a colon (RFC 7617 §2); the password may.
    let Some((user, password)) = text.split_once(':') else {
        return false;
    };
    let user_ok = hash_claim_code(user).ct_eq(&hash_claim_code(OPERATOR_USER));
    let password_ok = hash_claim_code(password).ct_eq(&hash_claim_code(key.expose()));
    bool::from(user_ok & password_ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, value.parse().unwrap());
        h
    }

    fn basic(user_pass: &str) -> HeaderMap {
        with(&format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(user_pass)
        ))
    }

    #[test]
    fn only_the_operator_with_the_key() {
        let key = Secret::new("0123456789abcdef:x");
        assert!(basic_ok(&basic("operator:0123456789abcdef:x"), &key));
        assert!(basic_ok(
            &with(&format!(
                "basic {}",
                base64::engine::general_purpose::STANDARD.encode("operator:0123456789abcdef:x")
            )),
            &key
        ));
        for bad in [
            "operator:0123456789abcdef",
            "admin:0123456789abcdef:x",
            "operator0123456789abcdef:x",
            "",
        ] {
            assert!(!basic_ok(&basic(bad), &key), "{bad}");
        }
        assert!(!basic_ok(&with("Bearer 0123456789abcdef:x"), &key));
        assert!(!basic_ok(&with("Basic !!!"), &key));
        assert!(!basic_ok(&HeaderMap::new(), &key));
    }
}
