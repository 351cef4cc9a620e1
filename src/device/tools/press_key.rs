//! `android_press_key`: one key of a closed set, `input keyevent [--longpress] CODE` (argv
//! quoted once for the phone's `sh`, [`crate::device::shell_quote`]).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::input::{run_input, INPUT_DEADLINE};
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::shell_quote::command_line;

/// Keys of `android_press_key` (closed set): the tool's name, the Android keycode and the
/// `KeyEvent` constant's name without `KEYCODE_` (`None` for `select_all`, a combination) —
/// frameworks/base/core/java/android/view/KeyEvent.java.
pub const KEYS: &[(&str, u32, Option<&str>)] = &[
    ("home", 3, Some("HOME")),
    ("back", 4, Some("BACK")),
    ("enter", 66, Some("ENTER")),
    ("recents", 187, Some("APP_SWITCH")),
    ("delete", 67, Some("DEL")),
    ("tab", 61, Some("TAB")),
    ("space", 62, Some("SPACE")),
    ("escape", 111, Some("ESCAPE")),
    ("dpad_up", 19, Some("DPAD_UP")),
    ("dpad_down", 20, Some("DPAD_DOWN")),
    ("dpad_left", 21, Some("DPAD_LEFT")),
    ("dpad_right", 22, Some("DPAD_RIGHT")),
    ("dpad_center", 23, Some("DPAD_CENTER")),
    ("volume_up", 24, Some("VOLUME_UP")),
    ("volume_down", 25, Some("VOLUME_DOWN")),
    ("volume_mute", 164, Some("VOLUME_MUTE")),
    ("power", 26, Some("POWER")),
    ("wake", 224, Some("WAKEUP")),
    ("sleep", 223, Some("SLEEP")),
    ("menu", 82, Some("MENU")),
    ("search", 84, Some("SEARCH")),
    ("paste", 279, Some("PASTE")),
    ("copy", 278, Some("COPY")),
    ("cut", 277, Some("CUT")),
    ("select_all", 29, None),
];

/// The first SDK whose `input` presses `key` (tool name): `KEYCODE_CUT`/`COPY`/`PASTE` are API
/// 24 (`KeyEvent.java`), `input keycombination` (select_all) arrived with Android 13's
/// `InputShellCommand` (API 33). Older phones accept the command and do nothing (field report:
/// exit 0), so the tool checks first.
fn min_sdk(key: &str) -> Option<u32> {
    match key {
        "cut" | "copy" | "paste" => Some(24),
        "select_all" => Some(33),
        _ => None,
    }
}

/// Arguments.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// A key of [`KEYS`], as [`resolve_key`] reads it.
    pub key: String,
    /// Hold the key.
    #[serde(default)]
    pub long_press: bool,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// The key pressed, by its name in [`KEYS`] (lower case, whatever spelling was asked).
    pub key: &'static str,
    /// Whether it was held.
    pub long_press: bool,
}

fn key_names() -> Vec<&'static str> {
    KEYS.iter().map(|(k, _, _)| *k).collect()
}

/// The key `asked` names, and its keycode: a name of [`KEYS`] or the Android `KeyEvent` name
/// (`APP_SWITCH` for `recents`), in any case, with or without `KEYCODE_` — as `input keyevent`
/// itself reads names (AOSP `KeyEvent.keyCodeFromString` strips `KEYCODE_`). `None` when it is
/// none of them.
pub fn resolve_key(asked: &str) -> Option<(&'static str, u32)> {
    let lower = asked.trim().to_ascii_lowercase();
    let bare = lower.strip_prefix("keycode_").unwrap_or(&lower);
    KEYS.iter()
        .find(|(name, _, android)| {
            *name == bare || android.is_some_and(|a| a.eq_ignore_ascii_case(bare))
        })
        .map(|(name, code, _)| (*name, *code))
}

/// The `invalid_arguments` text for a key [`resolve_key`] does not know: every valid name. The
/// value asked is not repeated (argument values are never echoed, see the registry).
fn unknown_key() -> DeviceError {
    DeviceError::InvalidArguments(format!(
        "invalid argument /key: not a key this tool presses; valid keys (any case, `KEYCODE_` prefix optional, Android's names such as APP_SWITCH also accepted): {}",
        key_names().join(", ")
    ))
}

/// `android_press_key`.
pub struct PressKey;

impl DeviceTool for PressKey {
    const ID: &'static str = "android_press_key";
    const TITLE: &'static str = "Press a key";
    const DESCRIPTION: &'static str = "Press one key on the bound phone: home, back, enter, recents, delete, tab, space, escape, dpad_up, dpad_down, dpad_left, dpad_right, dpad_center, volume_up, volume_down, volume_mute, power, wake, sleep, menu, search, paste, copy, cut, select_all. Names are case-insensitive; a `KEYCODE_` prefix and Android's own KeyEvent names (KEYCODE_APP_SWITCH for recents, KEYCODE_DEL for delete, KEYCODE_WAKEUP for wake) are accepted too. The result names the key by the list's name. cut/copy/paste need Android 7+ (SDK 24) and select_all Android 13+ (SDK 33): older phones answer device_command_failed, nothing pressed.";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = &["input_keyevent"];
    const RECEIPT: bool = true;
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        // No `minLength`: an empty key gets the same answer as an unknown one, every valid
        // name (the schema's own "shorter than 1 character" named none).
        json!({"type": "object", "required": ["key"], "properties": {
            "key": {"type": "string", "maxLength": 64, "description": format!(
                "Key to press, case-insensitive, `KEYCODE_` prefix optional: {}.", key_names().join(", "))},
            "long_press": {"type": "boolean", "description": "Hold the key (long press)."}
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["key", "long_press"], "properties": {
            "key": {"type": "string", "enum": key_names()}, "long_press": {"type": "boolean"}
        }})
    }

    /// The SDK read (for keys that need one) and the key press.
    fn deadline(_: &Args) -> std::time::Duration {
        INPUT_DEADLINE * 2
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let (key, code) = resolve_key(&args.key).ok_or_else(unknown_key)?;
        if let Some(min) = min_sdk(key) {
            let out = ctx
                .shell("getprop ro.build.version.sdk", INPUT_DEADLINE, 64)
                .await?;
            let sdk = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse::<u32>()
                .ok();
            if let Some(sdk) = sdk.filter(|s| *s < min) {
                return Err(DeviceError::CommandFailed(format!(
                    "{key} needs Android SDK {min} or newer; this phone runs SDK {sdk}, whose `input` \
                     ignores it (nothing was pressed)"
                )));
            }
        }
        let cmd = if key == "select_all" {
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
            key,
            long_press: args.long_press,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn keys_newer_than_android_6_name_their_sdk() {
        assert_eq!(min_sdk("paste"), Some(24));
        assert_eq!(min_sdk("select_all"), Some(33));
        assert_eq!(min_sdk("home"), None);
    }

    #[test]
    fn outputs_match_the_schema() {
        assert_output::<PressKey>(&Output {
            key: "home",
            long_press: false,
        });
    }

    #[test]
    fn keys_are_read_in_any_case_with_or_without_keycode() {
        for asked in ["home", "HOME", "Home", "KEYCODE_HOME", "keycode_home"] {
            assert_eq!(resolve_key(asked), Some(("home", 3)), "{asked}");
        }
        assert_eq!(resolve_key("KEYCODE_APP_SWITCH"), Some(("recents", 187)));
        assert_eq!(resolve_key("del"), Some(("delete", 67)));
        assert_eq!(resolve_key("KEYCODE_WAKEUP"), Some(("wake", 224)));
        assert_eq!(resolve_key("Select_All"), Some(("select_all", 29)));
        for asked in ["", "KEYCODE_", "self_destruct", "keycode_a", "homes"] {
            assert_eq!(resolve_key(asked), None, "{asked}");
        }
        let m = unknown_key().to_string();
        assert!(key_names().iter().all(|k| m.contains(k)), "{m}");
        // The card's description lists the same keys (it is a constant, so checked here).
        assert!(key_names()
            .iter()
            .all(|k| PressKey::DESCRIPTION.contains(k)));
    }
}
