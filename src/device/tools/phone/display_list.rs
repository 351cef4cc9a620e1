//! The phone's logical displays, from `dumpsys display` ([`crate::device::parse::display_manager`]),
//! so an agent finds a `display_id` rather than guessing one.

use std::time::Duration;

use super::command;
use crate::device::error::DeviceError;
use crate::device::parse::display_manager::{parse_logical_displays, LogicalDisplay};
use crate::device::tools::ToolCtx;

/// Deadline of the read.
const READ_DEADLINE: Duration = Duration::from_secs(10);

/// The logical displays in dump order. Errors: the dump lists none (`device_command_failed`:
/// a build without the `Logical Displays:` section, Android < 4.2), a failed read.
pub async fn read(ctx: &ToolCtx<'_>) -> Result<Vec<LogicalDisplay>, DeviceError> {
    let out = command::run(ctx, "dumpsys display", READ_DEADLINE, 8 << 20).await?;
    let displays = parse_logical_displays(&out.stdout);
    if displays.is_empty() {
        return Err(DeviceError::CommandFailed(format!(
            "`dumpsys display` lists no logical display (no `Logical Displays:` section): {}",
            out.telling_line()
        )));
    }
    Ok(displays)
}
