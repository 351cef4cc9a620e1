//! A phone's screen for the operator console (`GET /console/phones/{serial}/screen.png`):
//! [`crate::device::tools::thumbnail`] on the phone's preferred route with its device policy,
//! as a tool call would run it, but for no channel (nothing stored, no `screenshot_id`).

use std::time::Duration;

use super::Connector;
use crate::device::error::state_refusal;
use crate::device::tools::{
    CallDeadline, DisplayCache, LastSeen, ReadinessCache, ToolCtx, ToolError,
};
use crate::protocol::ErrorCode;

/// The one deadline of a thumbnail (the screenshot tool's capture deadline and its resize).
pub const THUMBNAIL_DEADLINE: Duration = Duration::from_secs(20);

impl Connector {
    /// A PNG of phone `serial`'s screen, longer side at most `max_dim` px. Errors: as a tool
    /// call's — `device_offline` when no such phone is attached, the refusal of its state
    /// (`device_unauthorized`, …, with the fix), the capture's own errors.
    pub async fn console_thumbnail(
        &self,
        serial: &str,
        max_dim: u32,
    ) -> Result<Vec<u8>, ToolError> {
        let phone = self.inventory.get(serial).ok_or_else(|| {
            ToolError::new(
                ErrorCode::DeviceOffline,
                "no phone of that name is attached",
            )
        })?;
        if let Some((code, message)) = state_refusal(&phone.state, phone.route_kind()) {
            return Err(ToolError::new(code, message));
        }
        let policy = self.policy_of(&phone)?;
        let hints = self.phone_hints(&phone.serial);
        let (display, readiness, last_seen) = (
            DisplayCache::default(),
            ReadinessCache::default(),
            LastSeen::default(),
        );
        let progress = |_: f64, _: &str| {};
        let ctx = ToolCtx {
            policy: &policy,
            link: &phone.link,
            route: phone.route_kind(),
            files: &self.files,
            channel_id: "",
            display: &display,
            readiness: &readiness,
            last_seen: &last_seen,
            hints: &hints,
            progress: &progress,
            deadline: CallDeadline::start(THUMBNAIL_DEADLINE),
        };
        crate::device::tools::thumbnail(&ctx, max_dim)
            .await
            .map_err(ToolError::from)
    }
}
