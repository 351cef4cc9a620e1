//! Reading the `input` of a `form` auth flow (`adb_device_claim`, `adb_pair_code`): each field is
//! missing, of the wrong JSON type, or a string whose value the flow then checks — three
//! different answers (fresh-user finding 10: a number or a bad value read "field is required").
//! Messages name the field and the JSON type given, never the value.

use serde_json::{Map, Value};

use super::claim_error::{refuse, ClaimError};
use crate::protocol::ErrorCode;

/// The JSON type of `v`, for messages ("a number", never the number).
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The string field `name` of `input`, untrimmed: `Ok(None)` when absent, `null` or empty after
/// trimming (missing); `auth_failed` "field `name` must be a string (`what`), not a number" for
/// any other type. `what` says what the field holds.
pub fn string_field<'a>(
    input: &'a Map<String, Value>,
    name: &str,
    what: &str,
) -> Result<Option<&'a str>, ClaimError> {
    match input.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(refuse(
            ErrorCode::AuthFailed,
            &format!(
                "field `{name}` must be a string ({what}), not {}",
                json_kind(other)
            ),
        )),
    }
}

/// `auth_failed` "field `name` is required: `what`".
pub fn missing(name: &str, what: &str) -> ClaimError {
    refuse(
        ErrorCode::AuthFailed,
        &format!("field `{name}` is required: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn missing_wrong_type_and_text_are_told_apart() {
        let input = json!({"a": "x", "b": 123456, "c": "  ", "d": null});
        let input = input.as_object().unwrap();
        assert_eq!(string_field(input, "a", "w").unwrap(), Some("x"));
        for name in ["c", "d", "e"] {
            assert_eq!(string_field(input, name, "w").unwrap(), None);
        }
        let e = string_field(input, "b", "the code").unwrap_err();
        assert_eq!(
            e.message,
            "field `b` must be a string (the code), not a number"
        );
        assert!(!e.message.contains("123456"));
    }
}
