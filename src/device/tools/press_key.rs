//! `android_press_key`: one key of a closed set, `input keyevent [--longpress] CODE` (argv
//! quoted once for the phone's `sh`, [`crate::device::shell_quote`]).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::input::{run_input, INPUT_DEADLINE};
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::shell_quote::command_line;

/// Keys of `android_press_key` (closed set) and their Android keycodes
/// (`android.view.KeyEvent`, frameworks/base/core/java/android/view/KeyEvent.java).
pub const KEYS: &[(&str, u32)] = &[
    ("home", 3),
    ("back", 4),
    ("enter", 66),
    ("recents", 187),
    ("delete", 67),
    ("tab", 61),
    ("space", 62),
    ("escape", 111),
    ("dpad_up", 19),
    ("dpad_down", 20),
    ("dpad_left", 21),
    ("dpad_right", 22),
    ("dpad_center", 23),
    ("volume_up", 24),
    ("volume_down", 25),
    ("volume_mute", 164),
    ("power", 26),
    ("wake", 224),
    ("sleep", 223),
    ("menu", 82),
    ("search", 84),
    ("paste", 279),
    ("copy", 278),
    ("cut", 277),
    ("select_all", 29),
];

/// Arguments.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// A key of [`KEYS`].
    pub key: String,
    /// Hold the key.
    #[serde(default)]
    pub long_press: bool,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// The key pressed.
    pub key: String,
    /// Whether it was held.
    pub long_press: bool,
}

fn key_names() -> Vec<&'static str> {
    KEYS.iter().map(|(k, _)| *k).collect()
}

/// `android_press_key`.
pub struct PressKey;

impl DeviceTool for PressKey {
    const ID: &'static str = "android_press_key";
    const TITLE: &'static str = "Press a key";
    const DESCRIPTION: &'static str =
        "Press one key on the bound phone (home, back, enter, recents, delete, …).";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["key"], "properties": {
            "key": {"type": "string", "enum": key_names(), "description": "Key to press."},
            "long_press": {"type": "boolean", "description": "Hold the key (long press)."}
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["key", "long_press"], "properties": {
            "key": {"type": "string", "enum": key_names()}, "long_press": {"type": "boolean"}
        }})
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let code = KEYS
            .iter()
            .find(|(k, _)| *k == args.key)
            .map(|(_, c)| *c)
            .ok_or_else(|| DeviceError::InvalidArguments("unknown key".into()))?;
        let cmd = if args.key == "select_all" {
            // Ctrl+A: KEYCODE_A (29) with META_CTRL_ON via `input keycombination` is Android 13+;
            // `input keyevent --longpress` cannot express it, so use the two-key combination form.
            command_line(&["input", "keycombination", "113", "29"])
        } else if args.long_press {
            command_line(&["input", "keyevent", "--longpress", &code.to_string()])
        } else {
            command_line(&["input", "keyevent", &code.to_string()])
        };
        run_input(ctx, &cmd, INPUT_DEADLINE).await?;
        Ok(Output {
            key: args.key,
            long_press: args.long_press,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn outputs_match_the_schema() {
        assert_output::<PressKey>(&Output {
            key: "home".into(),
            long_press: false,
        });
    }
}
