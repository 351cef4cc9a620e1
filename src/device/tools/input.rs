//! Control tools: `android_tap`, `android_input_text`, `android_press_key`. Every command line is
//! built from argv and quoted once for the phone's `sh` ([`crate::device::shell_quote`]).

use std::time::Duration;

use serde_json::{json, Value};

use super::{ToolCtx, ToolError};
use crate::device::parse::{text, window, wm};
use crate::device::shell_quote::command_line;
use crate::protocol::card::ToolDecl;
use crate::protocol::ErrorCode;

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

/// Deadline of a tap or key press.
pub const INPUT_DEADLINE: Duration = Duration::from_secs(5);
/// Deadline of typing (`input text` is ~20 ms per character on real phones).
pub(super) const TEXT_DEADLINE: Duration = Duration::from_secs(30);
/// Cap of output of input commands (bytes).
const OUTPUT_LIMIT: usize = 64 * 1024;

/// The display's input size (px): from the cache, else `dumpsys window displays` `cur=` (override
/// and rotation applied), else `wm size` (Override wins over Physical).
pub(super) async fn display_size(ctx: &ToolCtx<'_>) -> Result<(u32, u32), ToolError> {
    if let Some(s) = ctx.display.get() {
        return Ok(s);
    }
    let cmd = "dumpsys window displays; echo __XAGENT_SECTION__; wm size";
    let out = ctx.link.shell(cmd, INPUT_DEADLINE, 4 << 20).await?;
    let text = text::decode_output(&out.stdout);
    let (displays, wm_part) = text
        .split_once("__XAGENT_SECTION__")
        .unwrap_or(("", text.as_str()));
    let size = window::parse_current_display_size(displays)
        .or_else(|| wm::parse_wm_size(wm_part).and_then(|s| s.effective()))
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::DeviceCommandFailed,
                "could not read the display size (dumpsys window displays / wm size)",
            )
        })?;
    ctx.display.set(size);
    Ok(size)
}

/// Runs an input command and maps a failure (non-zero exit or error text) to a tool error.
pub(super) async fn run_input(
    ctx: &ToolCtx<'_>,
    cmd: &str,
    deadline: Duration,
) -> Result<(), ToolError> {
    let out = ctx.link.shell(cmd, deadline, OUTPUT_LIMIT).await?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // No status at all (legacy shell whose marker never printed) is not a success.
    let failed = out.exit_code != Some(0)
        || stdout.contains("Exception")
        || stderr.contains("Exception")
        || stdout.contains("inaccessible or not found");
    if failed {
        let code = if stderr.contains("SecurityException") || stdout.contains("SecurityException") {
            ErrorCode::DevicePermissionDenied
        } else {
            ErrorCode::DeviceCommandFailed
        };
        let first = stderr
            .lines()
            .chain(stdout.lines())
            .next()
            .unwrap_or("")
            .to_string();
        return Err(ToolError::new(
            code,
            format!("input failed (exit {:?}): {first}", out.exit_code),
        ));
    }
    Ok(())
}

/// Splits one line so that no piece contains `%s` (which `input text` turns into a space:
/// AOSP `cmds/input/.../InputShellCommand.java sendText`): `100%sure` → [`100%`, `sure`].
pub fn split_percent_s(line: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        current.push(c);
        if c == '%' && chars.peek() == Some(&'s') {
            pieces.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// Builds the command line typing `text`: one quoted `input text` per piece, `input keyevent 66`
/// (ENTER) between lines, joined with `&&` so a failure stops the rest.
pub fn text_command(text: &str) -> Result<String, ToolError> {
    if let Some(bad) = text
        .chars()
        .find(|c| !(c.is_ascii_graphic() || *c == ' ' || *c == '\n'))
    {
        return Err(ToolError::new(
            ErrorCode::UnsupportedText,
            format!(
                "character U+{:04X} cannot be typed with `input text` (ASCII only); install an ADBKeyboard-compatible IME for Unicode input",
                bad as u32
            ),
        ));
    }
    let mut steps = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            steps.push(command_line(&["input", "keyevent", "66"]));
        }
        for piece in split_percent_s(line) {
            steps.push(command_line(&["input", "text", &piece]));
        }
    }
    Ok(steps.join(" && "))
}

/// `input keyevent [--longpress] CODE`.
pub async fn press_key(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let key = args.get("key").and_then(Value::as_str).unwrap_or("");
    let long = args
        .get("long_press")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let code = KEYS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, c)| *c)
        .ok_or_else(|| ToolError::new(ErrorCode::InvalidArguments, "unknown key"))?;
    let cmd = if key == "select_all" {
        // Ctrl+A: KEYCODE_A (29) with META_CTRL_ON via `input keycombination` is Android 13+;
        // `input keyevent --longpress` cannot express it, so use the two-key combination form.
        command_line(&["input", "keycombination", "113", "29"])
    } else if long {
        command_line(&["input", "keyevent", "--longpress", &code.to_string()])
    } else {
        command_line(&["input", "keyevent", &code.to_string()])
    };
    run_input(ctx, &cmd, INPUT_DEADLINE).await?;
    Ok(json!({"key": key, "long_press": long}))
}

/// Card declarations of the input tools.
pub fn decls() -> Vec<ToolDecl> {
    let key_names: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
    vec![
        super::text::decl(),
        ToolDecl {
            tool_id: "android_press_key",
            title: "Press a key",
            description:
                "Press one key on the bound phone (home, back, enter, recents, delete, …).",
            side_effect: true,
            input_schema: json!({"type": "object", "required": ["key"], "properties": {
                "key": {"type": "string", "enum": key_names, "description": "Key to press."},
                "long_press": {"type": "boolean", "description": "Hold the key (long press)."}
            }}),
            output_schema: json!({"type": "object"}),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_s_is_split_so_it_stays_literal() {
        assert_eq!(
            split_percent_s("Some%sText%s!"),
            vec!["Some%", "sText%", "s!"]
        );
        assert_eq!(split_percent_s("100%sure"), vec!["100%", "sure"]);
        assert_eq!(split_percent_s("plain"), vec!["plain"]);
    }

    #[test]
    fn text_command_quotes_everything_and_maps_newline_to_enter() {
        let cmd = text_command("a;reboot\nit's").unwrap();
        assert_eq!(
            cmd,
            "'input' 'text' 'a;reboot' && 'input' 'keyevent' '66' && 'input' 'text' 'it'\\''s'"
        );
        let err = text_command("שלום").unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsupportedText);
    }
}
