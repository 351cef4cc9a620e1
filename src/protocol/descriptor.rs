//! Connection Descriptor `xagent.connection/v2` (spec §9): the per-channel runtime projection.

use serde::{Deserialize, Serialize};

use super::{CARD_ID, DEVICE_PROFILE, PROVIDER, TARGET_TYPE};

/// Descriptor `schema` value.
pub const DESCRIPTOR_SCHEMA: &str = "xagent.connection/v2";

/// `connection.status` (spec §9 table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConnectionStatus {
    /// Channel exists, no phone bound.
    Created,
    /// A claim is in progress.
    Authenticating,
    /// Bound phone attached, authorized and reachable.
    Connected,
    /// Bound, some capabilities degraded.
    Degraded,
    /// Bound phone unplugged or its transport offline.
    Offline,
    /// Binding material expired.
    Expired,
    /// The phone revoked this host's key (`unauthorized`).
    Revoked,
    /// Unclassified error.
    Error,
}

/// `tools[].status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// Callable now.
    Available,
    /// Not callable now (no phone bound, or offline).
    Unavailable,
    /// The phone denies it.
    DeniedByTarget,
    /// The phone must re-accept this host.
    RequiresReauth,
    /// The phone cannot do it.
    NotSupported,
}

/// `tools[].target_permission_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionState {
    /// Not known.
    Unknown,
    /// Granted.
    Granted,
    /// Denied.
    Denied,
    /// Re-authorization needed.
    RequiresReauth,
}

/// `connection` object.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DescriptorConnection {
    /// Always `device.adb`.
    pub connector_card_id: String,
    /// This server's runtime-instance id.
    pub connector_id: String,
    /// The channel described.
    pub connector_channel_id: String,
    /// Always `device`.
    pub target_type: String,
    /// Enabled profiles for this channel: `["xagent.device.v1"]`.
    pub profiles: Vec<String>,
    /// Status.
    pub status: ConnectionStatus,
}

/// `target` object: display-level information only (never the full serial).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DescriptorTarget {
    /// Always `adb`.
    pub provider: String,
    /// `Android Device`.
    pub label: String,
    /// e.g. `Pixel 8 (…0042)` or `No phone bound`.
    pub display_name: String,
    /// Masked serial, e.g. `EMU…0042`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account_hint: Option<String>,
    /// Which box the phone hangs off when the connector follows adb servers: the server's
    /// configured name (`--adb-server NAME=HOST:PORT`), else its `HOST:PORT`; absent for a
    /// direct-transport phone or while the phone is not attached. An extension field: the
    /// descriptor schema (`xagent.connection.v2`) leaves `target` open to more properties.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// One `tools[]` entry.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DescriptorTool {
    /// Tool id from the card.
    pub tool_id: String,
    /// Availability.
    pub status: ToolStatus,
    /// Permission state on the phone.
    pub target_permission_state: PermissionState,
    /// Why it is not available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The descriptor.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Descriptor {
    /// Always [`DESCRIPTOR_SCHEMA`].
    pub schema: String,
    /// Identity and status.
    pub connection: DescriptorConnection,
    /// Display information.
    pub target: DescriptorTarget,
    /// Every card tool with its availability.
    pub tools: Vec<DescriptorTool>,
}

/// What the connector knows about the phone bound to a channel, for projection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundPhoneView {
    /// Model (`ro.product.model`).
    pub model: String,
    /// Masked serial hint.
    pub serial_hint: String,
    /// The adb server (box) carrying it now, if any ([`DescriptorTarget::location`]).
    pub location: Option<String>,
}

impl Descriptor {
    /// Projects a channel: `status` with every tool in `tool_ids` available only when
    /// `status == Connected` (spec §9: an unavailable tool is not projected to the agent).
    pub fn project(
        connector_id: &str,
        channel_id: &str,
        status: ConnectionStatus,
        phone: Option<&BoundPhoneView>,
        tool_ids: &[&str],
    ) -> Descriptor {
        let (tool_status, permission, reason) = match status {
            ConnectionStatus::Connected => (ToolStatus::Available, PermissionState::Granted, None),
            ConnectionStatus::Revoked | ConnectionStatus::Expired => (
                ToolStatus::RequiresReauth,
                PermissionState::RequiresReauth,
                Some("the phone must accept this host's ADB key again"),
            ),
            ConnectionStatus::Offline => (
                ToolStatus::Unavailable,
                PermissionState::Unknown,
                Some("the bound phone is offline or unplugged"),
            ),
            // A bound phone the host may not open (`no permissions`, field bug 28): never "no
            // phone is bound".
            ConnectionStatus::Error | ConnectionStatus::Degraded if phone.is_some() => (
                ToolStatus::Unavailable,
                PermissionState::Unknown,
                Some("the host may not open the bound phone's USB device: install Android udev rules, add the user to the plugdev group, replug"),
            ),
            _ => (
                ToolStatus::Unavailable,
                PermissionState::Unknown,
                Some("no phone is bound to this channel; run the adb_device_claim flow"),
            ),
        };
        let target = match phone {
            Some(p) => DescriptorTarget {
                provider: PROVIDER.into(),
                label: "Android Device".into(),
                display_name: format!("{} ({})", p.model, p.serial_hint),
                account_hint: Some(p.serial_hint.clone()),
                location: p.location.clone(),
            },
            None => DescriptorTarget {
                provider: PROVIDER.into(),
                label: "Android Device".into(),
                display_name: "No phone bound".into(),
                account_hint: None,
                location: None,
            },
        };
        Descriptor {
            schema: DESCRIPTOR_SCHEMA.into(),
            connection: DescriptorConnection {
                connector_card_id: CARD_ID.into(),
                connector_id: connector_id.into(),
                connector_channel_id: channel_id.into(),
                target_type: TARGET_TYPE.into(),
                profiles: vec![DEVICE_PROFILE.into()],
                status,
            },
            target,
            tools: tool_ids
                .iter()
                .map(|id| DescriptorTool {
                    tool_id: (*id).into(),
                    status: tool_status,
                    target_permission_state: permission,
                    reason: reason.map(str::to_string),
                })
                .collect(),
        }
    }

    /// Marks the tools `refused` picks `unavailable` with `reason` and the connection
    /// `degraded` (spec §9: bound, some capabilities degraded) — a bound, online phone whose
    /// lock screen is up. Nothing changes when no tool is picked.
    pub fn restrict(&mut self, refused: impl Fn(&str) -> bool, reason: &str) {
        let mut any = false;
        for t in self.tools.iter_mut().filter(|t| refused(&t.tool_id)) {
            t.status = ToolStatus::Unavailable;
            t.target_permission_state = PermissionState::Unknown;
            t.reason = Some(reason.to_string());
            any = true;
        }
        if any {
            self.connection.status = ConnectionStatus::Degraded;
        }
    }

    /// As a JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// Masks a serial for display: first 3 and last 4 characters, `…` between; short serials show
/// only the last 2. The full serial never leaves the connector (spec §9 "redacted hints").
pub fn mask_serial(serial: &str) -> String {
    let chars: Vec<char> = serial.chars().collect();
    if chars.len() >= 10 {
        let head: String = chars[..3].iter().collect();
        let tail: String = chars[chars.len() - 4..].iter().collect();
        format!("{head}…{tail}")
    } else {
        let tail: String = chars[chars.len().saturating_sub(2)..].iter().collect();
        format!("…{tail}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_never_show_the_whole_serial() {
        assert_eq!(mask_serial("R58N12ABCDEF0042"), "R58…0042");
        assert_eq!(mask_serial("SIM0001"), "…01");
        assert_eq!(mask_serial(""), "…");
    }
}
