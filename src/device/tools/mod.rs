//! The device tools of `device.adb` (profile `xagent.device.v1`). Tool ids are a public contract.
//!
//! One file per tool or small family, each holding its typed `Args`, input schema, typed
//! `Output`, output schema, side-effect class and `run` (a [`DeviceTool`]). The [`registry`] is
//! the one place the card, argument validation and dispatch read. Operations several tools share
//! live in [`phone`]; tool files never import each other. Failures are [`DeviceError`]s, mapped
//! once to protocol codes and handed to the connector as a [`ToolError`].
//!
//! Each tool works only on the [`DeviceLink`] of the phone bound to the calling channel (the
//! connector resolves it; tools never take a serial). Every call has one deadline covering all
//! its steps ([`DeviceTool::deadline`], documented in `docs/tools.md`): each phone step is cut to
//! what is left of it ([`phone::deadline`]).
//!
//! The connector's surface: [`registry()`] → [`Registry::get`] / [`Registry::card_tools`] /
//! [`Registry::card_decls`]; per tool [`RegisteredTool::decl`], [`RegisteredTool::side_effect`],
//! [`RegisteredTool::validate`], [`RegisteredTool::run_json`] with a [`ToolCtx`]; per channel a
//! [`DisplayCache`], a [`ReadinessCache`] and a [`LastSeen`].

pub mod phone;
mod registry;

#[cfg(test)]
mod args_shape;

mod app_install;
mod app_launch;
mod apps;
mod displays;
mod file_transfer;
mod input_text;
mod keyboard;
mod logcat;
mod observe;
mod open_url;
mod orientation;
mod pinch;
mod press_key;
mod screen_record;
mod screenshot;
mod shell;
mod status;
mod swipe;
mod tap;
mod ui_tree;
mod wait_for;

use crate::adb::DeviceLink;
use crate::device::error::DeviceError;
use crate::file_cache::FileCache;
use crate::protocol::ErrorCode;

pub use crate::protocol::card::SideEffect;
/// The operator console's screen thumbnail, on `android_screenshot`'s capture path.
pub use phone::capture::thumbnail;
pub use phone::deadline::CallDeadline;
pub use phone::display::DisplayCache;
pub use phone::hints::PhoneHints;
pub use phone::last_seen::LastSeen;
pub use phone::readiness::ReadinessCache;
pub use registry::{
    integral_floats_as_integers, registry, DeviceTool, LockRule, RegisteredTool, Registry,
};

/// Every implemented tool, in card order (the card order is part of the contract). Adding a
/// tool: its file (with its tests), its `mod` line above, and one line here.
fn registered() -> Vec<RegisteredTool> {
    vec![
        RegisteredTool::of::<status::DeviceStatus>(),
        RegisteredTool::of::<screenshot::Screenshot>(),
        RegisteredTool::of::<ui_tree::UiTree>(),
        RegisteredTool::of::<tap::Tap>(),
        RegisteredTool::of::<tap::LongPress>(),
        RegisteredTool::of::<tap::DoubleTap>(),
        RegisteredTool::of::<swipe::Swipe>(),
        RegisteredTool::of::<swipe::Scroll>(),
        RegisteredTool::of::<input_text::InputText>(),
        RegisteredTool::of::<press_key::PressKey>(),
        RegisteredTool::of::<apps::AppList>(),
        RegisteredTool::of::<app_launch::AppLaunch>(),
        RegisteredTool::of::<apps::AppStop>(),
        RegisteredTool::of::<app_install::AppInstall>(),
        RegisteredTool::of::<app_install::AppUninstall>(),
        RegisteredTool::of::<open_url::OpenUrl>(),
        RegisteredTool::of::<file_transfer::FilePull>(),
        RegisteredTool::of::<file_transfer::FilePush>(),
        RegisteredTool::of::<logcat::Logcat>(),
        RegisteredTool::of::<wait_for::WaitFor>(),
        RegisteredTool::of::<orientation::SetOrientation>(),
        RegisteredTool::of::<screen_record::ScreenRecord>(),
        RegisteredTool::of::<shell::Shell>(),
        RegisteredTool::of::<keyboard::HideKeyboard>(),
        RegisteredTool::of::<displays::Displays>(),
        RegisteredTool::of::<pinch::Pinch>(),
        RegisteredTool::of::<observe::Observe>(),
    ]
}

/// A tool failure as the connector sends it: a stable code and a message free of secrets and
/// user text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// Stable code (see `docs/protocol.md`).
    pub code: ErrorCode,
    /// Human-readable explanation with the fix where there is one.
    pub message: String,
}

impl ToolError {
    /// Builds an error.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

impl From<DeviceError> for ToolError {
    fn from(e: DeviceError) -> Self {
        ToolError::new(e.code(), e.to_string())
    }
}

/// What a tool may use.
pub struct ToolCtx<'a> {
    /// The bound phone's effective device policy.
    pub policy: &'a crate::device::policy::Policy,
    /// The bound phone.
    pub link: &'a DeviceLink,
    /// How the bound phone is reached (the fix a message names depends on it).
    pub route: crate::device::parse::devices::RouteKind,
    /// Where screenshots and files go.
    pub files: &'a FileCache,
    /// The calling channel (file refs are bound to it).
    pub channel_id: &'a str,
    /// Last display geometry read from the bound phone (a hint, see [`DisplayCache`]).
    pub display: &'a DisplayCache,
    /// The bound phone's last readiness reading (booting, screen, lock screen).
    pub readiness: &'a ReadinessCache,
    /// What the agent last saw on this channel (UI snapshot, screenshots).
    pub last_seen: &'a LastSeen,
    /// What the connector learned about the bound phone (the way its UI dump works).
    pub hints: &'a PhoneHints,
    /// Reports progress of a long tool (`fraction` 0..1, message) as `tool.progress.push`.
    pub progress: &'a (dyn Fn(f64, &str) + Send + Sync),
    /// The call's one deadline: every phone step is cut to it
    /// ([`phone::deadline`]). The registry starts it with the tool's budget
    /// ([`DeviceTool::deadline`]); the connector passes [`CallDeadline::not_started`].
    pub deadline: CallDeadline,
}
