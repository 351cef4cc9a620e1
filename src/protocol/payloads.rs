//! Typed payloads of the request packets this connector receives (spec §8).

use serde::Deserialize;
use serde_json::{Map, Value};

/// `connector.hello` payload (§8.1). `protocol_version` and `supported_profiles` are optional
/// here so their absence can be answered with a precise error instead of `invalid_packet`.
#[derive(Debug, Clone, Deserialize, Default)]
pub struct HelloPayload {
    /// Must equal `device.adb`.
    #[serde(default)]
    pub connector_card_id: String,
    /// Previous runtime-instance id, may be empty on first connect.
    #[serde(default)]
    pub connector_id: Option<String>,
    /// xAgent's protocol version, a string such as `"3.0"`; must be ≥ 3.0. Kept as raw JSON so
    /// a wrong type (`3.0` as a number) is refused as `unsupported_protocol_version`, not as a
    /// broken packet.
    #[serde(default)]
    pub protocol_version: Option<serde_json::Value>,
    /// Profiles xAgent supports; must include `xagent.device.v1`.
    #[serde(default)]
    pub supported_profiles: Option<Vec<String>>,
}

/// `auth.start` payload (§8.7).
#[derive(Debug, Clone, Deserialize, Default)]
pub struct AuthStartPayload {
    /// Flow id from the card.
    #[serde(default)]
    pub flow_id: String,
    /// Form input (field name → value).
    #[serde(default)]
    pub input: Map<String, Value>,
}

/// `auth.status` payload (§8.9).
#[derive(Debug, Clone, Deserialize, Default)]
pub struct AuthStatusPayload {
    /// Flow id.
    #[serde(default)]
    pub flow_id: Option<String>,
    /// Session to query (required: a payload without it is `invalid_packet`).
    pub auth_session_id: String,
    /// Refresh authentication material.
    #[serde(default)]
    pub refresh: bool,
}

/// `auth.cancel` payload (§8.11).
#[derive(Debug, Clone, Deserialize, Default)]
pub struct AuthCancelPayload {
    /// Session to cancel (required: a payload without it is `invalid_packet`).
    pub auth_session_id: String,
}

/// `tool.invoke` payload (§8.18).
#[derive(Debug, Clone, Deserialize)]
pub struct ToolInvokePayload {
    /// Tool id from the card.
    pub tool_id: String,
    /// Model arguments (validated against the tool's input schema).
    #[serde(default)]
    pub arguments: Value,
    /// Runtime correlation (`session_id`, `tool_call_id`); never authorization material.
    #[serde(default)]
    pub context: Option<ToolContext>,
}

/// `tool.invoke` `context`.
#[derive(Debug, Clone, Deserialize, Default)]
pub struct ToolContext {
    /// xAgent session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Model tool-call id, the idempotency key of side-effecting calls.
    #[serde(default)]
    pub tool_call_id: Option<String>,
}

/// Parses a protocol version `major.minor` into a comparable pair; `None` when malformed.
pub fn parse_version(v: &str) -> Option<(u32, u32)> {
    let (major, minor) = v.trim().split_once('.').unwrap_or((v.trim(), "0"));
    Some((major.parse().ok()?, minor.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(parse_version("3.0"), Some((3, 0)));
        assert_eq!(parse_version("3"), Some((3, 0)));
        assert!(parse_version("2.9") < parse_version("3.0"));
        assert_eq!(parse_version("x"), None);
    }
}
