//! `android_input_text`: types text into the focused field, exactly (field bugs 1–5).
//!
//! - Printable ASCII and newlines go through `input text` (AOSP `InputShellCommand.java`): argv
//!   quoted once for `sh` (no metacharacter can start a command), `%s` split so it stays literal,
//!   a newline pressed as ENTER between lines.
//! - Anything else goes through an ADBKeyboard-compatible IME (`senzhk/ADBKeyBoard` `AdbIME.java`)
//!   with the text as a base64 broadcast payload (quotes and newlines never reach a parser); the
//!   previous IME is restored afterwards. Without such an IME the call fails with
//!   `unsupported_text` naming the fix.
//! - Afterwards the focused field is read back from a UI dump and the result says whether it
//!   holds the text (`verified`), never claiming success for nothing typed.

use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use super::input::{run_input, text_command, TEXT_DEADLINE};
use super::{ToolCtx, ToolError};
use crate::device::parse::{text as out_text, uiautomator};
use crate::device::shell_quote::command_line;
use crate::protocol::card::ToolDecl;
use crate::protocol::ErrorCode;

/// The ADBKeyboard IME id.
pub const ADB_KEYBOARD_IME: &str = "com.android.adbkeyboard/.AdbIME";
/// Deadline of IME queries and switches.
const IME_DEADLINE: Duration = Duration::from_secs(10);

fn is_input_text_safe(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_ascii_graphic() || c == ' ' || c == '\n')
}

async fn shell_text(ctx: &ToolCtx<'_>, cmd: &str) -> Result<String, ToolError> {
    let out = ctx.link.shell(cmd, IME_DEADLINE, 1 << 20).await?;
    Ok(out_text::decode_output(&out.stdout))
}

/// The focused node of a fresh dump, if any.
async fn focused_node(ctx: &ToolCtx<'_>) -> Result<Option<uiautomator::UiNode>, ToolError> {
    let dump = super::observe::dump_with_retries(ctx).await?;
    Ok(dump.nodes.into_iter().find(|n| n.focused))
}

/// Types through ADBKeyboard; restores the previous IME whatever happens.
async fn type_with_ime(
    ctx: &ToolCtx<'_>,
    text: &str,
    clear: bool,
    submit: bool,
) -> Result<(), ToolError> {
    let imes = shell_text(ctx, "ime list -a -s").await?;
    if !imes.lines().any(|l| l.trim() == ADB_KEYBOARD_IME) {
        return Err(ToolError::new(
            ErrorCode::UnsupportedText,
            "this text needs an IME: `input text` types printable ASCII only (non-ASCII crashes it with a NullPointerException). Install ADBKeyboard (com.android.adbkeyboard) on the phone, or type ASCII",
        ));
    }
    let previous = shell_text(ctx, "settings get secure default_input_method")
        .await?
        .trim()
        .to_string();
    let b64 = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let mut steps = vec![
        command_line(&["ime", "enable", ADB_KEYBOARD_IME]),
        command_line(&["ime", "set", ADB_KEYBOARD_IME]),
    ];
    if clear {
        steps.push(command_line(&["am", "broadcast", "-a", "ADB_CLEAR_TEXT"]));
    }
    steps.push(command_line(&[
        "am",
        "broadcast",
        "-a",
        "ADB_INPUT_B64",
        "--es",
        "msg",
        &b64,
    ]));
    if submit {
        steps.push(command_line(&["input", "keyevent", "66"]));
    }
    let typed = run_input(ctx, &steps.join(" && "), TEXT_DEADLINE).await;
    if !previous.is_empty() && previous != "null" && previous != ADB_KEYBOARD_IME {
        let restore = command_line(&["ime", "set", &previous]);
        if let Err(e) = run_input(ctx, &restore, IME_DEADLINE).await {
            tracing::warn!(code = %e.code, "could not restore the previous IME");
        }
    }
    typed
}

/// Clears the focused field with `input`: move to its end, then one DEL per character.
async fn clear_with_input(ctx: &ToolCtx<'_>) -> Result<(), ToolError> {
    let len = focused_node(ctx)
        .await?
        .map(|n| n.text.chars().count())
        .unwrap_or(0);
    if len == 0 {
        return Ok(());
    }
    let mut argv = vec!["input".to_string(), "keyevent".into(), "123".into()];
    argv.extend(std::iter::repeat_n("67".to_string(), len.min(5000)));
    run_input(ctx, &command_line(&argv), TEXT_DEADLINE).await
}

/// The tool.
pub async fn input_text(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    // Windows clients send CRLF; a line break is a line break.
    let normalized = args
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or("")
        .replace("\r\n", "\n");
    let text = normalized.as_str();
    let clear = args
        .get("clear_first")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let submit = args.get("submit").and_then(Value::as_bool).unwrap_or(false);
    let method = ctx.policy.quirks.text_input.as_str();
    let via_ime = method == "adbkeyboard" || !is_input_text_safe(text);
    if via_ime {
        type_with_ime(ctx, text, clear, submit).await?;
    } else {
        if clear {
            clear_with_input(ctx).await?;
        }
        let mut cmd = text_command(text)?;
        if submit {
            cmd.push_str(" && ");
            cmd.push_str(&command_line(&["input", "keyevent", "66"]));
        }
        run_input(ctx, &cmd, TEXT_DEADLINE).await?;
    }
    let field = focused_node(ctx).await.ok().flatten();
    let (verified, field_text) = match &field {
        Some(n) if n.password => (None, None),
        Some(n) => (
            Some(if clear {
                n.text == text
            } else {
                n.text.ends_with(text)
            }),
            Some(n.text.clone()),
        ),
        None => (None, None),
    };
    let mut out = json!({
        "typed_chars": text.chars().count(),
        "method": if via_ime { "ime_broadcast" } else { "input_text" },
        "verified": verified,
        "field_text": field_text,
    });
    if verified == Some(false) {
        out["warning"] = json!(
            "the focused field does not hold the typed text; observe the screen before retrying"
        );
    } else if field.is_none() && !submit {
        out["warning"] = json!("no focused field after typing; the text may have gone nowhere — tap a text field first");
    }
    Ok(out)
}

/// Card declaration.
pub fn decl() -> ToolDecl {
    ToolDecl {
        tool_id: "android_input_text",
        title: "Type text",
        description: "Type text into the focused field of the bound phone, exactly as given: every character is data, never shell syntax; `%s` is typed literally; a newline presses Enter between lines. Non-ASCII text (any script, emoji) goes through an ADBKeyboard-compatible IME when the phone has one (else unsupported_text says how to fix it). clear_first empties the field first; submit presses Enter after. The result reads the field back: verified true/false (null when it cannot be read, e.g. password fields). Tap a text field first.",
        side_effect: true,
        input_schema: json!({"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "Text to type."},
            "clear_first": {"type": "boolean", "description": "Empty the focused field first (default false)."},
            "submit": {"type": "boolean", "description": "Press Enter after typing (default false)."}
        }}),
        output_schema: json!({"type": "object", "required": ["typed_chars", "verified"]}),
    }
}
