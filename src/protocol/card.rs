//! The Connector Card `xagent.connector/v1` (spec §4.1, §10) and the one helper that injects the
//! reserved `connector_channel_id` argument into every tool's input schema.

use serde_json::{json, Value};

use super::{
    BuildInfo, CARD_ID, CONNECTOR_VERSION, DEVICE_PROFILE, PROTOCOL_VERSION, PROVIDER, SKILL_ID,
    TARGET_TYPE,
};

/// Card `schema` value.
pub const CARD_SCHEMA: &str = "xagent.connector/v1";
/// Id of the claim flow (form: `serial`, `claim_code`).
pub const CLAIM_FLOW_ID: &str = "adb_device_claim";

/// Id of the wireless pairing flow with a pairing code (form: `host`, `port`, `code`,
/// `connect_port`).
pub const PAIR_CODE_FLOW_ID: &str = "adb_pair_code";

/// Id of the wireless pairing flow by QR code (`qr_login`: no input).
pub const QR_PAIR_FLOW_ID: &str = "adb_qr_pair";

/// Whether calling a tool changes the phone (Device Profile §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideEffect {
    /// Observation only: runs concurrently, never journaled.
    None,
    /// Changes the phone: serialised per channel and run at most once per `tool_call_id`.
    ChangesPhone,
}

/// A tool as declared in the card, before the channel argument is injected.
#[derive(Debug, Clone)]
pub struct ToolDecl {
    /// Model function name (`^[A-Za-z0-9_.-]{1,256}$`).
    pub tool_id: &'static str,
    /// Short title.
    pub title: &'static str,
    /// What it does, units and contract, for the model.
    pub description: &'static str,
    /// Whether calling it changes the phone (journaled, serialised per channel).
    pub side_effect: SideEffect,
    /// Object schema of the model arguments, without `connector_channel_id`.
    pub input_schema: Value,
    /// Schema of the result object.
    pub output_schema: Value,
}

/// Returns `schema` with the reserved `connector_channel_id` string property added and listed
/// first in `required` (spec §10: injected by a protocol helper, never hand-written per tool).
pub fn with_connector_channel_id(mut schema: Value) -> Value {
    if !schema.is_object() {
        schema = json!({});
    }
    let obj = schema.as_object_mut().expect("object ensured above");
    obj.insert("type".into(), json!("object"));
    let props = obj.entry("properties").or_insert_with(|| json!({}));
    if let Some(props) = props.as_object_mut() {
        props.insert(
            "connector_channel_id".into(),
            json!({
                "type": "string",
                "description": "Target user-level Connector channel ID. Pass the opaque ID returned by connector_channels_list unchanged."
            }),
        );
    }
    let required = obj.entry("required").or_insert_with(|| json!([]));
    if let Some(list) = required.as_array_mut() {
        list.retain(|v| v != "connector_channel_id");
        list.insert(0, json!("connector_channel_id"));
    }
    schema
}

/// The full input schema of a declared tool (with the channel argument).
pub fn tool_input_schema(tool: &ToolDecl) -> Value {
    with_connector_channel_id(tool.input_schema.clone())
}

/// Builds the card. No secret, serial or base URL appears in it (spec §4.1 "Forbidden").
pub fn build_card(build: &BuildInfo, tools: &[ToolDecl]) -> Value {
    json!({
        "schema": CARD_SCHEMA,
        "protocol_version": PROTOCOL_VERSION,
        "build": build,
        "connector_card_id": CARD_ID,
        "connector": {
            "name": "Android ADB Connector",
            "version": CONNECTOR_VERSION,
            "vendor": "xagent-adb-connector",
            "description": "Observe and control Android phones attached to this edge box over ADB (USB or wireless debugging)."
        },
        "supports": {
            "user_channel_mode": "multiple",
            "target_types": [TARGET_TYPE],
            "targets": [{"target_type": TARGET_TYPE, "provider": PROVIDER, "label": "Android Device"}],
            "profiles": [DEVICE_PROFILE]
        },
        "tools": tools.iter().map(|t| json!({
            "tool_id": t.tool_id,
            "profile": DEVICE_PROFILE,
            "title": t.title,
            "description": t.description,
            "related_skill_ids": [SKILL_ID],
            "input_schema": tool_input_schema(t),
            "output_schema": t.output_schema,
        })).collect::<Vec<_>>(),
        "auth_flows": [{
            "id": CLAIM_FLOW_ID,
            "target_type": TARGET_TYPE,
            "type": "form",
            "title": "Claim an Android phone",
            "description": "Bind this channel to one phone attached to the edge box. The phone must be attached and authorized (USB debugging accepted).",
            "fields": [
                {
                    "name": "serial",
                    "label": "Phone serial",
                    "input_type": "text",
                    "required": true,
                    "placeholder": "e.g. R58N12ABCDEF",
                    "help_text": "The phone's serial number (Settings → About phone, or the label on the device farm slot)."
                },
                {
                    "name": "claim_code",
                    "label": "Claim code",
                    "input_type": "password",
                    "required": false,
                    "secret": true,
                    "help_text": "The code the administrator issued for this phone (not needed when the claim policy is open)."
                }
            ]
        }, {
            "id": PAIR_CODE_FLOW_ID,
            "target_type": TARGET_TYPE,
            "type": "form",
            "title": "Pair a phone over Wi-Fi with a pairing code",
            "description": "Android 11+: on the phone open Developer options → Wireless debugging → Pair device with pairing code, and type what it shows. The connector pairs, connects over TLS and binds this channel to the phone. connect_port (the port under Wireless debugging → IP address & Port) is optional: the connector finds the phone by the name it announces over mDNS when it is left out or has changed. A pairing that could not connect is kept: the next attempt on this channel needs no new code.",
            "fields": [
                {
                    "name": "host",
                    "label": "Phone IP address",
                    "input_type": "text",
                    "required": true,
                    "placeholder": "e.g. 192.168.1.23",
                    "help_text": "The IP address shown in the phone's pairing dialog."
                },
                {
                    "name": "port",
                    "label": "Pairing port",
                    "input_type": "text",
                    "required": true,
                    "placeholder": "e.g. 37123",
                    "help_text": "The port shown in the phone's pairing dialog (not the connect port)."
                },
                {
                    "name": "code",
                    "label": "Pairing code",
                    "input_type": "password",
                    "required": true,
                    "secret": true,
                    "help_text": "The 6-digit Wi-Fi pairing code the phone shows."
                },
                {
                    "name": "connect_port",
                    "label": "Connect port",
                    "input_type": "text",
                    "required": false,
                    "placeholder": "e.g. 41235",
                    "help_text": "Optional: the port under Wireless debugging → IP address & Port (it differs from the pairing port). Left out, or stale after a Wi-Fi toggle, the connector finds the phone by the name it announces (mDNS)."
                }
            ]
        }, {
            "id": QR_PAIR_FLOW_ID,
            "target_type": TARGET_TYPE,
            "type": "qr_login",
            "title": "Pair a phone over Wi-Fi with a QR code",
            "description": "Android 11+: on the phone open Developer options → Wireless debugging → Pair device with QR code and scan the code shown here. The phone must be on the same network as the edge box (mDNS). The connector pairs, connects over TLS and binds this channel to the phone; it finds the phone again by its wireless-debugging name when its address changes. Android forgets a paired computer unused for 7 days unless automatic revocation is turned off."
        }],
        "security": {
            "trust_level": "local",
            "api_key_required": true,
            "data_classes": ["device_state", "screenshot", "ui_text"]
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_injects_channel_argument_once() {
        let s = with_connector_channel_id(
            json!({"properties": {"x": {"type": "integer"}}, "required": ["x", "connector_channel_id"]}),
        );
        assert_eq!(s["type"], "object");
        assert_eq!(s["properties"]["connector_channel_id"]["type"], "string");
        assert_eq!(s["required"], json!(["connector_channel_id", "x"]));
    }
}
