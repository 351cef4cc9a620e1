//! `android_hide_keyboard`: hides the soft keyboard when it shows (BACK, which the IME consumes
//! to hide itself: [`super::phone::keyboard`]), so the screen under it can be read and tapped.
//! Nothing is pressed when no keyboard shows.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::keyboard;
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;

/// No arguments.
#[derive(Debug, Deserialize)]
pub struct Args {}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// The keyboard showed when the call began.
    pub was_shown: bool,
    /// The keyboard shows now (read again after the key).
    pub keyboard_shown: bool,
    /// The key pressed: `back`, or `null` when none was needed.
    pub key: Option<&'static str>,
}

/// `android_hide_keyboard`.
pub struct HideKeyboard;

impl DeviceTool for HideKeyboard {
    const ID: &'static str = "android_hide_keyboard";
    const TITLE: &'static str = "Hide the soft keyboard";
    const DESCRIPTION: &'static str = "Hide the bound phone's soft keyboard when it shows (android_device_status says keyboard_shown): presses back, which the keyboard consumes to close itself, and reads again. Nothing is pressed when no keyboard shows. Answers was_shown, keyboard_shown (after) and key (back or null). device_command_failed when the phone does not say whether a keyboard shows.";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = &["input_keyevent"];
    const RECEIPT: bool = true;
    type Args = Args;
    type Output = Output;

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["was_shown", "keyboard_shown", "key"], "properties": {
            "was_shown": {"type": "boolean"},
            "keyboard_shown": {"type": "boolean"},
            "key": {"enum": ["back", null]}
        }})
    }

    async fn run(_: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let done = keyboard::hide(ctx).await?;
        Ok(Output {
            was_shown: done.was_shown,
            keyboard_shown: done.shown_after,
            key: done.pressed_back.then_some("back"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn outputs_match_the_schema() {
        for key in [Some("back"), None] {
            assert_output::<HideKeyboard>(&Output {
                was_shown: key.is_some(),
                keyboard_shown: false,
                key,
            });
        }
    }
}
