//! The device tools of `device.adb` (profile `xagent.device.v1`): their card declarations
//! ([`catalog`]) and their dispatch ([`invoke`]). Tool ids are a public contract.
//!
//! Each tool works only on the [`DeviceLink`] of the phone bound to the calling channel (the
//! connector resolves it; tools never take a serial). Every device call has a deadline
//! (per-tool, documented in `docs/tools.md`).

mod apps;
mod catalog;
mod files;
mod gestures;
mod input;
mod logcat;
pub mod memory;
mod observe;
mod orientation;
mod record;
mod screenshot;
mod shell;
mod target;
mod text;
mod util;
mod wait;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::adb::{AdbError, DeviceLink};
use crate::files::FileCache;
use crate::protocol::ErrorCode;

pub use catalog::{card_tools, catalog, tool_decl, ToolId};

/// A tool failure: a stable code and a message free of secrets and user text.
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

impl From<AdbError> for ToolError {
    fn from(e: AdbError) -> Self {
        let code = match &e {
            AdbError::ServerUnavailable { .. } => ErrorCode::AdbServerUnavailable,
            AdbError::DeviceNotFound | AdbError::DeviceOffline => ErrorCode::DeviceOffline,
            AdbError::DeviceUnauthorized => ErrorCode::DeviceUnauthorized,
            AdbError::NoPermissions => ErrorCode::DeviceNoPermissions,
            AdbError::Timeout { .. } => ErrorCode::DeviceTimeout,
            AdbError::OutputTooLarge { .. }
            | AdbError::Refused(_)
            | AdbError::Protocol(_)
            | AdbError::Io(_) => ErrorCode::DeviceCommandFailed,
        };
        ToolError::new(code, e.to_string())
    }
}

/// Last known display input size of a phone, reused for bounds checks for [`DISPLAY_TTL`].
#[derive(Debug, Default)]
pub struct DisplayCache {
    size: Mutex<Option<((u32, u32), Instant)>>,
}

/// How long a display size read from the phone is trusted (ms-scale taps must not pay a `wm size`
/// round trip each; rotation changes are picked up within this time or at the next observation).
pub const DISPLAY_TTL: Duration = Duration::from_secs(5);

impl DisplayCache {
    /// The cached size if fresh.
    pub fn get(&self) -> Option<(u32, u32)> {
        let guard = self.size.lock().unwrap_or_else(|e| e.into_inner());
        guard
            .filter(|(_, at)| at.elapsed() < DISPLAY_TTL)
            .map(|(s, _)| s)
    }
    /// Forgets the size (after a rotation change).
    pub fn clear(&self) {
        *self.size.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
    /// Records a size just read.
    pub fn set(&self, size: (u32, u32)) {
        *self.size.lock().unwrap_or_else(|e| e.into_inner()) = Some((size, Instant::now()));
    }
}

/// What a tool may use.
pub struct ToolCtx<'a> {
    /// The bound phone's effective device policy.
    pub policy: &'a crate::device::policy::Policy,
    /// The bound phone.
    pub link: &'a DeviceLink,
    /// Where screenshots and files go.
    pub files: &'a FileCache,
    /// The calling channel (file refs are bound to it).
    pub channel_id: &'a str,
    /// Display size cache of the bound phone.
    pub display: &'a DisplayCache,
    /// What the agent last saw on this channel (UI snapshot, screenshots).
    pub memory: &'a memory::ChannelMemory,
    /// Reports progress of a long tool (`fraction` 0..1, message) as `tool.progress.push`.
    pub progress: &'a (dyn Fn(f64, &str) + Send + Sync),
}

/// Runs `tool` with already schema-validated `args`.
pub async fn invoke(tool: ToolId, args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    match tool {
        ToolId::DeviceStatus => observe::device_status(ctx).await,
        ToolId::Screenshot => screenshot::screenshot(args, ctx).await,
        ToolId::UiTree => observe::ui_tree(args, ctx).await,
        ToolId::Tap => gestures::tap(args, ctx).await,
        ToolId::LongPress => gestures::long_press(args, ctx).await,
        ToolId::DoubleTap => gestures::double_tap(args, ctx).await,
        ToolId::Swipe => gestures::swipe(args, ctx).await,
        ToolId::Scroll => gestures::scroll(args, ctx).await,
        ToolId::InputText => text::input_text(args, ctx).await,
        ToolId::PressKey => input::press_key(args, ctx).await,
        ToolId::AppList => apps::app_list(args, ctx).await,
        ToolId::AppLaunch => apps::app_launch(args, ctx).await,
        ToolId::AppStop => apps::app_stop(args, ctx).await,
        ToolId::AppInstall => apps::app_install(args, ctx).await,
        ToolId::AppUninstall => apps::app_uninstall(args, ctx).await,
        ToolId::OpenUrl => apps::open_url(args, ctx).await,
        ToolId::FilePull => files::file_pull(args, ctx).await,
        ToolId::FilePush => files::file_push(args, ctx).await,
        ToolId::Logcat => logcat::logcat(args, ctx).await,
        ToolId::WaitFor => wait::wait_for(args, ctx).await,
        ToolId::SetOrientation => orientation::set_orientation(args, ctx).await,
        ToolId::ScreenRecord => record::screen_record(args, ctx).await,
        ToolId::Shell => shell::shell(args, ctx).await,
    }
}
