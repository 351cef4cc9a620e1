//! Running `input …` (and other commands whose only answer is success or an exception) with
//! their failure mapped to a device error.

use std::time::Duration;

use crate::device::error::DeviceError;
use crate::device::tools::ToolCtx;

/// Deadline of a tap or key press.
pub const INPUT_DEADLINE: Duration = Duration::from_secs(5);
/// Deadline of typing (`input text` is ~20 ms per character on real phones).
pub const TEXT_DEADLINE: Duration = Duration::from_secs(30);
/// Cap of output of input commands (bytes).
const OUTPUT_LIMIT: usize = 64 * 1024;

/// Runs an input command and maps a failure (classified by [`super::command::Text::failure`]:
/// non-zero exit, an exception on either stream, a refusal with its fix) to its device error.
pub async fn run_input(
    ctx: &ToolCtx<'_>,
    cmd: &str,
    deadline: Duration,
) -> Result<(), DeviceError> {
    let out = super::command::run(ctx, cmd, deadline, OUTPUT_LIMIT).await?;
    check(&out)
}

/// The checks of [`run_input`] on an input command's output already read (for callers that
/// look at the output first, such as `input text`'s key-map crash, field row 63).
pub fn check(out: &super::command::Text) -> Result<(), DeviceError> {
    if let Some(e) = out.failure("input") {
        return Err(e);
    }
    // No status at all (legacy shell whose marker never printed) is not a success.
    if out.exit_code.is_none() || out.stdout.contains("inaccessible or not found") {
        return Err(DeviceError::CommandFailed(format!(
            "input failed (exit none): {}",
            out.telling_line()
        )));
    }
    Ok(())
}

/// Deadline of a gesture held for `ms`: [`INPUT_DEADLINE`] plus the hold.
pub fn gesture_deadline(ms: u64) -> Duration {
    INPUT_DEADLINE + Duration::from_millis(ms)
}

/// Schema of a gesture's `duration_ms` argument (1..=`max` ms, `default` when absent).
pub fn duration_schema(default: u64, max: u64) -> serde_json::Value {
    serde_json::json!({"type": "integer", "minimum": 1, "maximum": max, "description": format!("Duration in ms (default {default}).")})
}
