//! Stable error codes (spec §8.23 table, plus this connector's device codes documented in
//! `docs/protocol.md`). The wire form is the snake_case string.

use serde::{Deserialize, Serialize};

/// A stable, machine-readable error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// Invalid JSON or envelope (spec §8.23).
    InvalidPacket,
    /// User-level packet before hello completed.
    HelloRequired,
    /// Hello names another card id.
    ConnectorCardIdMismatch,
    /// Hello names another connector id on an already-identified socket.
    ConnectorIdMismatch,
    /// Hello `protocol_version` missing or below 3.0.
    UnsupportedProtocolVersion,
    /// Hello `supported_profiles` missing or without `xagent.device.v1`.
    UnsupportedProfile,
    /// User-level packet on a channel that is not open.
    ChannelNotOpen,
    /// User-level packet without envelope `connector_channel_id`.
    ConnectorChannelIdRequired,
    /// Channel id unknown to this connector.
    ConnectorChannelNotOwned,
    /// The channel has no bound phone.
    ConnectionNotAuthenticated,
    /// Unknown auth session.
    AuthSessionNotFound,
    /// Unknown auth flow id.
    AuthFlowNotFound,
    /// Claim refused (bad code, unknown phone, already bound).
    AuthFailed,
    /// Tool invocation failed for a reason without a more specific code.
    ToolInvokeFailed,
    /// Tool id not in the card.
    ToolNotFound,
    /// Arguments do not match the tool's `input_schema`.
    InvalidArguments,
    /// The packet type is not supported.
    UnsupportedPacket,
    /// The bound phone is not attached or its transport is offline.
    DeviceOffline,
    /// The bound phone has not accepted this host's ADB key.
    DeviceUnauthorized,
    /// The host lacks permission to open the USB device (udev).
    DeviceNoPermissions,
    /// A device command exceeded its deadline.
    DeviceTimeout,
    /// The phone refused the operation (SecurityException, permission denied).
    DevicePermissionDenied,
    /// A device command failed (non-zero exit or error output).
    DeviceCommandFailed,
    /// The adb server is not reachable.
    AdbServerUnavailable,
    /// A system service the call needs is not up yet (the phone is booting or its system
    /// server restarting); retry after a few seconds.
    DeviceBooting,
    /// The lock screen (keyguard) is showing, or the screen is off: the tool would act on the
    /// lock screen instead of the app; wake and unlock the phone, then retry.
    DeviceLocked,
    /// The phone is in lock task mode (a kiosk, or screen pinning): only the locked app runs,
    /// so the launch or link was refused; leave kiosk mode or unpin, then retry.
    DeviceLockTask,
    /// The app is installed but disabled (the package, or its launcher activity): nothing was
    /// started; the message names who can enable it (field row 60).
    AppDisabled,
    /// The app crashed: the system's "keeps stopping" dialog holds the focus (field bug 79).
    AppCrashed,
    /// The app is not responding: the system's "isn't responding" dialog holds the focus.
    AppNotResponding,
    /// Coordinates outside the display.
    OutOfBounds,
    /// Text cannot be typed by the available input method.
    UnsupportedText,
    /// The bound phone offers no way to do what the tool asks (e.g. a two-finger pinch where
    /// only `input` can inject, which has one finger); the message says what is missing.
    Unsupported,
    /// `uiautomator dump` failed (reason in the message).
    UiDumpFailed,
    /// The screenshot bytes were not a valid PNG.
    InvalidScreenshot,
    /// The device policy (`device-profiles/*.toml`) refuses the call; the message names the rule.
    PolicyDenied,
    /// The package is not installed on the bound phone.
    AppNotInstalled,
    /// The package is installed but has no LAUNCHER (nor LEANBACK_LAUNCHER) activity.
    NoLauncherActivity,
    /// A file exceeds the policy's size limit (`files.max_pull_bytes` / `max_push_bytes`).
    FileTooLarge,
    /// The device path does not exist (pull).
    FileNotFound,
    /// Too many packets/tool calls in a period.
    RateLimited,
    /// `channel.open` of a new channel while the connector keeps its maximum of channels
    /// ([`crate::connector::MAX_CHANNELS`]) and every one is bound or open on a socket.
    TooManyChannels,
    /// A repeated side-effecting call whose first attempt was interrupted by a restart: its
    /// effect is unknown and it is not run again.
    ToolCallInterrupted,
    /// `element_id` / selector matched nothing on screen.
    ElementNotFound,
    /// `snapshot_id` is not the channel's latest UI snapshot.
    StaleSnapshot,
    /// The APK is one part of a split app and the parts it needs were not given (field bug 46).
    SplitApksRequired,
    /// This phone cannot run the app: its Android is older than the app's minSdkVersion (or
    /// newer than its maxSdkVersion), its CPU runs none of the APK's native ABIs, or it lacks a
    /// required feature or library (field rows 73, 74). Not retryable on this phone.
    AppIncompatible,
    /// The phone is being handed back clean after its last binding (`[release]` steps
    /// running): not claimable yet; retry after a few seconds.
    DeviceReleasing,
    /// The phone is bound on another box of the fleet (issue 22): the message names the box.
    PhoneBoundElsewhere,
    /// This box no longer holds the phone's fleet binding (its key is another box's, or gone:
    /// deleted, or with an expired lease): every tool call on the channel is refused,
    /// observing ones too.
    FleetBindingLost,
    /// The fleet store (etcd) is not reachable, so a new binding cannot be made fleet-wide
    /// (retryable; `--fleet-claims local` binds locally instead).
    FleetUnavailable,
    /// Another live connector is registered in the fleet under this box's `--box` name: this
    /// box stays out of the fleet (no presence, no fleet claims) until the name is free. Not
    /// retryable as such: give each box its own name.
    FleetBoxNameTaken,
    /// Internal failure (storage).
    InternalError,
    /// A code this build does not know (received from a peer).
    #[serde(other)]
    Unknown,
}

impl ErrorCode {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidPacket => "invalid_packet",
            Self::HelloRequired => "hello_required",
            Self::ConnectorCardIdMismatch => "connector_card_id_mismatch",
            Self::ConnectorIdMismatch => "connector_id_mismatch",
            Self::UnsupportedProtocolVersion => "unsupported_protocol_version",
            Self::UnsupportedProfile => "unsupported_profile",
            Self::ChannelNotOpen => "channel_not_open",
            Self::ConnectorChannelIdRequired => "connector_channel_id_required",
            Self::ConnectorChannelNotOwned => "connector_channel_not_owned",
            Self::ConnectionNotAuthenticated => "connection_not_authenticated",
            Self::AuthSessionNotFound => "auth_session_not_found",
            Self::AuthFlowNotFound => "auth_flow_not_found",
            Self::AuthFailed => "auth_failed",
            Self::ToolInvokeFailed => "tool_invoke_failed",
            Self::ToolNotFound => "tool_not_found",
            Self::InvalidArguments => "invalid_arguments",
            Self::UnsupportedPacket => "unsupported_packet",
            Self::DeviceOffline => "device_offline",
            Self::DeviceUnauthorized => "device_unauthorized",
            Self::DeviceNoPermissions => "device_no_permissions",
            Self::DeviceTimeout => "device_timeout",
            Self::DevicePermissionDenied => "device_permission_denied",
            Self::DeviceCommandFailed => "device_command_failed",
            Self::AdbServerUnavailable => "adb_server_unavailable",
            Self::DeviceBooting => "device_booting",
            Self::DeviceLocked => "device_locked",
            Self::DeviceLockTask => "device_lock_task",
            Self::AppDisabled => "app_disabled",
            Self::AppCrashed => "app_crashed",
            Self::AppNotResponding => "app_not_responding",
            Self::OutOfBounds => "out_of_bounds",
            Self::UnsupportedText => "unsupported_text",
            Self::Unsupported => "unsupported",
            Self::UiDumpFailed => "ui_dump_failed",
            Self::InvalidScreenshot => "invalid_screenshot",
            Self::PolicyDenied => "policy_denied",
            Self::AppNotInstalled => "app_not_installed",
            Self::NoLauncherActivity => "no_launcher_activity",
            Self::FileTooLarge => "file_too_large",
            Self::FileNotFound => "file_not_found",
            Self::RateLimited => "rate_limited",
            Self::TooManyChannels => "too_many_channels",
            Self::ToolCallInterrupted => "tool_call_interrupted",
            Self::ElementNotFound => "element_not_found",
            Self::StaleSnapshot => "stale_snapshot",
            Self::SplitApksRequired => "split_apks_required",
            Self::AppIncompatible => "app_incompatible",
            Self::DeviceReleasing => "device_releasing",
            Self::PhoneBoundElsewhere => "phone_bound_elsewhere",
            Self::FleetBindingLost => "fleet_binding_lost",
            Self::FleetUnavailable => "fleet_unavailable",
            Self::FleetBoxNameTaken => "fleet_box_name_taken",
            Self::InternalError => "internal_error",
            Self::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_form_matches_as_str() {
        for code in [
            ErrorCode::InvalidPacket,
            ErrorCode::ConnectorCardIdMismatch,
            ErrorCode::DeviceTimeout,
            ErrorCode::UnsupportedText,
            ErrorCode::Unsupported,
            ErrorCode::PolicyDenied,
            ErrorCode::AppNotInstalled,
            ErrorCode::NoLauncherActivity,
            ErrorCode::FileTooLarge,
            ErrorCode::FileNotFound,
            ErrorCode::DeviceBooting,
            ErrorCode::DeviceLocked,
            ErrorCode::DeviceLockTask,
            ErrorCode::AppDisabled,
            ErrorCode::AppCrashed,
            ErrorCode::AppNotResponding,
            ErrorCode::TooManyChannels,
            ErrorCode::SplitApksRequired,
            ErrorCode::AppIncompatible,
            ErrorCode::DeviceReleasing,
            ErrorCode::PhoneBoundElsewhere,
            ErrorCode::FleetBindingLost,
            ErrorCode::FleetUnavailable,
            ErrorCode::FleetBoxNameTaken,
        ] {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
        }
        let unknown: ErrorCode = serde_json::from_str("\"something_new\"").unwrap();
        assert_eq!(unknown, ErrorCode::Unknown);
    }
}
