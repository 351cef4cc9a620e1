//! The soft keyboard: whether it shows, and hiding it with the key the IME itself handles.
//!
//! Shown: [`crate::device::parse::keyboard`] on `dumpsys input_method`, grep'd on the phone to
//! the two keys it reads (the full dump carries the IME's own dump and is large). Hiding:
//! `KEYCODE_BACK` while the IME window shows is consumed by the IME, which hides itself
//! (AOSP `InputMethodService.onKeyDown` → `handleBack`), so it is pressed only when the
//! keyboard reads shown; a keyboard that closed in between lets that BACK reach the app
//! (reported by `keyboard_shown` read again after it).

use std::time::Duration;

use super::command;
use super::input::{run_input, INPUT_DEADLINE};
use crate::device::error::DeviceError;
use crate::device::parse::keyboard::parse_keyboard_shown;
use crate::device::tools::ToolCtx;

/// The read of `dumpsys input_method`, as one pipeline (also a section of
/// `android_device_status`'s compound command).
pub const KEYBOARD_READ: &str = "dumpsys input_method | grep -E 'mInputShown=|mIsInputViewShown='";

/// Deadline of one read.
const READ_DEADLINE: Duration = Duration::from_secs(10);

/// How often, and how many times, the state is read again after BACK (the IME's hide
/// animation: ~200–300 ms on AOSP's `InputMethodService` window).
const SETTLE: (Duration, usize) = (Duration::from_millis(150), 6);

/// Whether the keyboard shows now; `None` when the phone's dump prints neither key.
pub async fn read_shown(ctx: &ToolCtx<'_>) -> Result<Option<bool>, DeviceError> {
    let out = command::run(ctx, KEYBOARD_READ, READ_DEADLINE, 64 << 10).await?;
    Ok(parse_keyboard_shown(&out.stdout))
}

/// What [`hide`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hidden {
    /// The keyboard showed before.
    pub was_shown: bool,
    /// BACK was pressed.
    pub pressed_back: bool,
    /// The keyboard shows after (read again).
    pub shown_after: bool,
}

/// Hides the keyboard when it shows (BACK, then reads until it reads hidden, a few times).
/// Errors: the phone does not say whether it shows (`device_command_failed` naming the fix),
/// a failed read or key press.
pub async fn hide(ctx: &ToolCtx<'_>) -> Result<Hidden, DeviceError> {
    let unknown = || {
        DeviceError::CommandFailed(
            "the phone's `dumpsys input_method` prints neither mInputShown nor mIsInputViewShown: \
             whether a keyboard shows is unknown; take a screenshot, and press back with \
             android_press_key if one does"
                .into(),
        )
    };
    let shown = read_shown(ctx).await?.ok_or_else(unknown)?;
    if !shown {
        return Ok(Hidden {
            was_shown: false,
            pressed_back: false,
            shown_after: false,
        });
    }
    run_input(ctx, "input keyevent 4", INPUT_DEADLINE).await?;
    let mut after = true;
    for _ in 0..SETTLE.1 {
        after = read_shown(ctx).await?.unwrap_or(true);
        if !after {
            break;
        }
        // Within the call's one deadline, as every step is.
        tokio::time::sleep(SETTLE.0.min(ctx.deadline.left())).await;
    }
    Ok(Hidden {
        was_shown: true,
        pressed_back: true,
        shown_after: after,
    })
}
