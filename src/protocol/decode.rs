//! Decoding the caller's JSON (envelope, payloads) with errors that name the field and the
//! expected shape, never the value: serde's own messages quote it (`invalid type: string
//! "…", expected i64`), and a caller's value may carry a secret (docs/protocol.md "Tool calls":
//! no error repeats a value that failed its check).

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_path_to_error::Segment;

/// Why JSON did not decode: the field (a path such as `payload.context.tool_call_id`) and what
/// was expected, or where the text stopped being JSON. Never holds the caller's value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShapeError(String);

/// Decodes `T` from the text of a frame; a field's error is named from the top (`time`).
pub fn from_json_str<T: DeserializeOwned>(text: &str) -> Result<T, ShapeError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| shape_error("", &e))?;
    // Trailing characters are a syntax error (fixed words plus a position).
    de.end()
        .map_err(|e| ShapeError(format!("not valid JSON: {e}")))?;
    Ok(value)
}

/// Decodes `T` from `value`, the field `root` of the packet (`payload`), whose name starts the
/// path in the error.
pub fn from_json_value<T: DeserializeOwned>(value: Value, root: &str) -> Result<T, ShapeError> {
    serde_path_to_error::deserialize(value).map_err(|e| shape_error(root, &e))
}

fn shape_error(root: &str, e: &serde_path_to_error::Error<serde_json::Error>) -> ShapeError {
    let inner = e.inner();
    if inner.is_syntax() || inner.is_eof() {
        // serde_json's syntax messages are fixed words plus a position.
        return ShapeError(format!("not valid JSON: {inner}"));
    }
    let field = field_path(root, e.path());
    let said = message_without_position(inner);
    let what = match said.split_once(": ") {
        Some(("invalid type", rest)) => {
            let (got, expected) = rest.rsplit_once(", expected ").unwrap_or((rest, "?"));
            format!(
                "{} must be {}, not {}",
                field.as_deref().unwrap_or("the packet"),
                expected_shape(expected),
                json_kind(got)
            )
        }
        Some(("invalid value", rest)) => {
            let (_, expected) = rest.rsplit_once(", expected ").unwrap_or((rest, "?"));
            format!(
                "{} has an invalid value: expected {}",
                field.as_deref().unwrap_or("the packet"),
                expected_shape(expected)
            )
        }
        _ if said.starts_with("missing field `") => {
            let name = said
                .trim_start_matches("missing field `")
                .trim_end_matches('`');
            let inside = field.map(|f| format!(" in {f}")).unwrap_or_default();
            format!("field `{}` is required{inside}", safe_name(name))
        }
        _ => format!(
            "{} has the wrong shape",
            field.as_deref().unwrap_or("the packet")
        ),
    };
    ShapeError(what)
}

/// `` `payload.context.session_id` `` (`None` at the top of an envelope). Map keys are this
/// connector's field names; any other key is shown as `?`.
fn field_path(root: &str, path: &serde_path_to_error::Path) -> Option<String> {
    let mut out = root.to_string();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            Segment::Map { key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(safe_name(key));
            }
            Segment::Enum { .. } | Segment::Unknown => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push('?');
            }
        }
    }
    (!out.is_empty()).then(|| format!("`{out}`"))
}

/// `name` when it looks like a field name of ours (`[a-z0-9_]`, ≤ 64), else `?`.
fn safe_name(name: &str) -> &str {
    let ours = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if ours {
        name
    } else {
        "?"
    }
}

fn message_without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_string()
}

/// What serde's `Unexpected` names (`string "…"`, ``integer `5` ``, `map`): the JSON type only.
fn json_kind(unexpected: &str) -> &'static str {
    let starts = |p: &str| unexpected.starts_with(p);
    if starts("string") || starts("character") {
        "a string"
    } else if starts("integer") || starts("floating point") {
        "a number"
    } else if starts("boolean") {
        "a boolean"
    } else if starts("map") {
        "an object"
    } else if starts("sequence") {
        "an array"
    } else if starts("null") || starts("unit") {
        "null"
    } else {
        "another JSON type"
    }
}

/// serde's expectation (from this connector's types) in JSON words.
fn expected_shape(expected: &str) -> String {
    match expected {
        "a map" => "an object".into(),
        "a sequence" => "an array".into(),
        "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" | "usize" | "isize" => {
            "an integer".into()
        }
        e if e.starts_with("struct ") => "an object".into(),
        e => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        id: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        #[serde(default)]
        time: Option<i64>,
        #[serde(default)]
        inner: Option<Inner>,
        #[serde(default)]
        list: Vec<String>,
    }

    fn said(text: &str) -> String {
        from_json_str::<Outer>(text).unwrap_err().to_string()
    }

    #[test]
    fn errors_name_the_field_and_shape_never_the_value() {
        let cases = [
            (
                r#"{"name":"a","time":"SECRET, expected x"}"#,
                "`time` must be an integer, not a string",
            ),
            (
                r#"{"name":"a","inner":"SECRET"}"#,
                "`inner` must be an object, not a string",
            ),
            (
                r#"{"name":"a","inner":{"id":1234567}}"#,
                "`inner.id` must be a string, not a number",
            ),
            (
                r#"{"name":"a","list":["x",true]}"#,
                "`list[1]` must be a string, not a boolean",
            ),
            (r#"{"time":1}"#, "field `name` is required"),
            (r#""SECRET""#, "the packet must be an object, not a string"),
        ];
        for (text, want) in cases {
            let got = said(text);
            assert_eq!(got, want, "{text}");
            assert!(!got.contains("SECRET") && !got.contains("1234567"));
        }
        assert!(said(r#"{"name":"SECRET"#).starts_with("not valid JSON: EOF"));
        assert!(said(r#"{"name":"a"} x"#).starts_with("not valid JSON: trailing"));
        let e = from_json_value::<Inner>(serde_json::json!({"id": ["SECRET"]}), "payload");
        assert_eq!(
            e.unwrap_err().to_string(),
            "`payload.id` must be a string, not an array"
        );
    }
}
