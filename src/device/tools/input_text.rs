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
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::command;
use super::phone::input::{run_input, TEXT_DEADLINE};
use super::phone::readiness::require_unlocked;
use super::phone::ui::focused_node;
use super::{DeviceTool, LockRule, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::shell_quote::command_line;

/// The ADBKeyboard IME id.
pub const ADB_KEYBOARD_IME: &str = "com.android.adbkeyboard/.AdbIME";
/// Deadline of IME queries and switches.
const IME_DEADLINE: Duration = Duration::from_secs(10);

fn is_input_text_safe(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_ascii_graphic() || c == ' ' || c == '\n')
}

/// The name of a control character an agent may mean to type.
fn control_name(c: char) -> Option<&'static str> {
    Some(match c {
        '\0' => "NUL",
        '\t' => "tab",
        '\r' => "carriage return",
        '\u{1b}' => "escape",
        '\u{7f}' => "delete",
        '\u{8}' => "backspace",
        _ => return None,
    })
}

/// Refuses a control character other than the newline (CRLF already folded to it): neither
/// `input text` nor an IME types one as text (`input text` drops or mangles them; a NUL ends a
/// Java string argument). The message names the character by code point and, when a key does
/// it, the `android_press_key` name. Errors: [`DeviceError::UnsupportedText`].
pub fn check_control_characters(text: &str) -> Result<(), DeviceError> {
    let Some(c) = text.chars().find(|c| c.is_control() && *c != '\n') else {
        return Ok(());
    };
    let name = control_name(c)
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    let key = match c {
        '\t' => " Press it with android_press_key {\"key\": \"tab\"} instead.",
        '\u{1b}' => " Press it with android_press_key {\"key\": \"escape\"} instead.",
        '\u{8}' | '\u{7f}' => " Press it with android_press_key {\"key\": \"delete\"} instead.",
        '\r' => " Use \\n (or \\r\\n) for a line break, or android_press_key {\"key\": \"enter\"}.",
        _ => "",
    };
    Err(DeviceError::UnsupportedText(format!(
        "the text contains control character U+{:04X}{name}, which cannot be typed as text (only printable characters and \\n line breaks can).{key}",
        c as u32
    )))
}

async fn shell_text(ctx: &ToolCtx<'_>, cmd: &str) -> Result<String, DeviceError> {
    Ok(command::run(ctx, cmd, IME_DEADLINE, 1 << 20).await?.stdout)
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

/// Splits `piece` into runs of characters whose quoted `input text` step is at most `max`
/// bytes (quoted, `'` takes 4 bytes, `'\''`, any other character its own; `shell_quote`);
/// one run when it fits.
fn fitting_runs(piece: &str, max: usize) -> Vec<String> {
    let overhead = command_line(&["input", "text", ""]).len();
    let budget = max.saturating_sub(overhead).max(4);
    let mut runs = Vec::new();
    let (mut current, mut used) = (String::new(), 0);
    for c in piece.chars() {
        let cost = if c == '\'' { 4 } else { c.len_utf8() };
        if used + cost > budget && !current.is_empty() {
            runs.push(std::mem::take(&mut current));
            used = 0;
        }
        current.push(c);
        used += cost;
    }
    if !current.is_empty() {
        runs.push(current);
    }
    runs
}

/// Builds the command lines typing `text`, each at most `max` bytes (the phone's adbd takes a
/// request of 4096 bytes before Android 7): one quoted `input text` per piece (pieces longer
/// than a line split into runs), `input keyevent 66` (ENTER) between lines and after the text
/// when `submit`, joined with `&&` ([`command::batched`]) so a failure stops the rest.
pub fn text_commands(text: &str, submit: bool, max: usize) -> Result<Vec<String>, DeviceError> {
    check_control_characters(text)?;
    if let Some(bad) = text
        .chars()
        .find(|c| !(c.is_ascii_graphic() || *c == ' ' || *c == '\n'))
    {
        return Err(DeviceError::UnsupportedText(format!(
            "non-ASCII character U+{:04X} cannot be typed with `input text` (printable ASCII only); install an ADBKeyboard-compatible IME for Unicode input",
            bad as u32
        )));
    }
    let enter = command_line(&["input", "keyevent", "66"]);
    let mut steps = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            steps.push(enter.clone());
        }
        for piece in split_percent_s(line) {
            for run in fitting_runs(&piece, max) {
                steps.push(command_line(&["input", "text", &run]));
            }
        }
    }
    if submit {
        steps.push(enter);
    }
    Ok(command::batched(&steps, max))
}

/// Types through ADBKeyboard; restores the previous IME whatever happens.
async fn type_with_ime(
    ctx: &ToolCtx<'_>,
    text: &str,
    clear: bool,
    submit: bool,
) -> Result<(), DeviceError> {
    let imes = shell_text(ctx, "ime list -a -s").await?;
    if !imes.lines().any(|l| l.trim() == ADB_KEYBOARD_IME) {
        let why = match text.chars().find(|c| !c.is_ascii()) {
            Some(c) => format!(
                "the text contains non-ASCII character U+{:04X}: `input text` types printable ASCII only (non-ASCII crashes it with a NullPointerException), so it needs an IME",
                c as u32
            ),
            None => "the device policy types all text through ADBKeyboard (quirks.text_input = \"adbkeyboard\")".to_string(),
        };
        return Err(DeviceError::UnsupportedText(format!(
            "{why}, and the phone has no {ADB_KEYBOARD_IME}. Install ADBKeyboard (com.android.adbkeyboard) on the phone{}",
            if text.is_ascii() { "" } else { ", or type ASCII" }
        )));
    }
    let previous = shell_text(ctx, "settings get secure default_input_method")
        .await?
        .trim()
        .to_string();
    let max = ctx.link.max_shell_command().await?;
    let mut steps = vec![
        command_line(&["ime", "enable", ADB_KEYBOARD_IME]),
        command_line(&["ime", "set", ADB_KEYBOARD_IME]),
    ];
    if clear {
        steps.push(command_line(&["am", "broadcast", "-a", "ADB_CLEAR_TEXT"]));
    }
    steps.extend(ime_broadcasts(text, max));
    if submit {
        steps.push(command_line(&["input", "keyevent", "66"]));
    }
    let mut typed = Ok(());
    for line in command::batched(&steps, max) {
        typed = run_input(ctx, &line, TEXT_DEADLINE).await;
        if typed.is_err() {
            break;
        }
    }
    if !previous.is_empty() && previous != "null" && previous != ADB_KEYBOARD_IME {
        let restore = command_line(&["ime", "set", &previous]);
        if let Err(e) = run_input(ctx, &restore, IME_DEADLINE).await {
            tracing::warn!(code = %e.code(), "could not restore the previous IME");
        }
    }
    typed
}

/// The `ADB_INPUT_B64` broadcast typing `chunk` (base64 needs no quoting beyond the quotes).
fn ime_broadcast_step(chunk: &str) -> String {
    let b64 = base64::engine::general_purpose::STANDARD.encode(chunk.as_bytes());
    command_line(&[
        "am",
        "broadcast",
        "-a",
        "ADB_INPUT_B64",
        "--es",
        "msg",
        &b64,
    ])
}

/// The `ADB_INPUT_B64` broadcasts typing `text`, each at most `max` bytes: the text split on
/// character boundaries so that each chunk's base64 (4 bytes per 3) fits; ADBKeyboard types
/// each payload as it comes (`AdbIME.java`).
fn ime_broadcasts(text: &str, max: usize) -> Vec<String> {
    let overhead = ime_broadcast_step("").len();
    let budget = (max.saturating_sub(overhead) / 4 * 3).max(4); // UTF-8 bytes per chunk
    let mut steps = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if current.len() + c.len_utf8() > budget && !current.is_empty() {
            steps.push(ime_broadcast_step(&std::mem::take(&mut current)));
        }
        current.push(c);
    }
    if !current.is_empty() {
        steps.push(ime_broadcast_step(&current));
    }
    steps
}

/// Clears the focused field with `input`: move to its end, then one DEL per character.
async fn clear_with_input(ctx: &ToolCtx<'_>) -> Result<(), DeviceError> {
    let len = focused_node(ctx)
        .await?
        .map(|n| n.text.chars().count())
        .unwrap_or(0);
    if len == 0 {
        return Ok(());
    }
    // MOVE_END, then DELs: as many per `input keyevent` as fit in one request.
    let max = ctx.link.max_shell_command().await?;
    let per_step = (max.saturating_sub(32) / 5).max(1); // each `'67' ` is 5 bytes
    let mut steps = vec![command_line(&["input", "keyevent", "123"])];
    let mut left = len.min(5000);
    while left > 0 {
        let n = left.min(per_step);
        let mut argv = vec!["input".to_string(), "keyevent".into()];
        argv.extend(std::iter::repeat_n("67".to_string(), n));
        steps.push(command_line(&argv));
        left -= n;
    }
    for line in command::batched(&steps, max) {
        run_input(ctx, &line, TEXT_DEADLINE).await?;
    }
    Ok(())
}

/// Arguments.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// Text to type (CRLF counts as a line break).
    pub text: String,
    /// Empty the focused field first.
    #[serde(default)]
    pub clear_first: bool,
    /// Press Enter after typing.
    #[serde(default)]
    pub submit: bool,
}

/// How the text was typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// `input text`.
    InputText,
    /// ADBKeyboard broadcast.
    ImeBroadcast,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// Characters typed.
    pub typed_chars: usize,
    /// How.
    pub method: Method,
    /// Whether the focused field holds the text (`null` when unreadable, e.g. password).
    pub verified: Option<bool>,
    /// The focused field's text read back (`null` when unreadable).
    pub field_text: Option<String>,
    /// What to check when the text may not have landed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<&'static str>,
}

/// `android_input_text`.
pub struct InputText;

impl DeviceTool for InputText {
    const ID: &'static str = "android_input_text";
    const TITLE: &'static str = "Type text";
    const DESCRIPTION: &'static str = "Type text into the focused field of the bound phone, exactly as given: every character is data, never shell syntax; `%s` is typed literally; a newline presses Enter between lines. Non-ASCII text (any script, emoji) goes through an ADBKeyboard-compatible IME when the phone has one (else unsupported_text says how to fix it). clear_first empties the field first; submit presses Enter after. The result reads the field back: verified true/false (null when it cannot be read, e.g. password fields). Tap a text field first. While the lock screen shows or the screen is off nothing is typed: device_locked says how to unlock.";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const LOCK_RULE: LockRule = LockRule::Refused;
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "Text to type; a line break (LF, or CRLF as one) is typed as Enter."},
            "clear_first": {"type": "boolean", "description": "Empty the focused field first (default false)."},
            "submit": {"type": "boolean", "description": "Press Enter after typing (default false)."}
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["typed_chars", "method", "verified", "field_text"], "properties": {
            "typed_chars": {"type": "integer", "minimum": 0},
            "method": {"type": "string", "enum": ["input_text", "ime_broadcast"]},
            "verified": {"type": ["boolean", "null"]},
            "field_text": {"type": ["string", "null"]},
            "warning": {"type": "string"}
        }})
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        // Windows clients send CRLF; a line break is a line break.
        let normalized = args.text.replace("\r\n", "\n");
        let text = normalized.as_str();
        check_control_characters(text)?;
        // Typing behind the lock screen would land in its PIN pad or nowhere (field bug 48).
        require_unlocked(ctx).await?;
        let (clear, submit) = (args.clear_first, args.submit);
        let method = ctx.policy.quirks.text_input.as_str();
        let via_ime = method == "adbkeyboard" || !is_input_text_safe(text);
        // What the field held before, so the read-back compares before and after (field bug
        // 21: a field that already ends with the text proves nothing). Not needed when the
        // field is cleared first.
        let before = if clear {
            None
        } else {
            focused_node(ctx).await.ok().flatten().map(|n| n.text)
        };
        if via_ime {
            type_with_ime(ctx, text, clear, submit).await?;
        } else {
            if clear {
                clear_with_input(ctx).await?;
            }
            let max = ctx.link.max_shell_command().await?;
            for line in text_commands(text, submit, max)? {
                run_input(ctx, &line, TEXT_DEADLINE).await?;
            }
        }
        let field = focused_node(ctx).await.ok().flatten();
        let (verified, field_text) = match &field {
            Some(n) if n.password => (None, None),
            Some(n) => (
                Some(read_back_holds(before.as_deref(), &n.text, text, clear)),
                Some(n.text.clone()),
            ),
            None => (None, None),
        };
        let warning = if verified == Some(false) {
            Some("the focused field does not hold the typed text; observe the screen before retrying")
        } else if field.is_none() && !submit {
            Some("no focused field after typing; the text may have gone nowhere — tap a text field first")
        } else {
            None
        };
        Ok(Output {
            typed_chars: text.chars().count(),
            method: if via_ime {
                Method::ImeBroadcast
            } else {
                Method::InputText
            },
            verified,
            field_text,
            warning,
        })
    }
}

/// Whether the field's text after typing shows that `text` went in: `text` exactly after a
/// clear; else the field changed and holds exactly `text` (it was empty, showing its hint), or
/// grew by exactly `text`'s characters and holds `text` (typed at the end, or at the cursor
/// inside). When the text before is unknown, the field must end with `text` (the best evidence
/// left).
pub fn read_back_holds(before: Option<&str>, after: &str, text: &str, cleared: bool) -> bool {
    if cleared {
        return after == text;
    }
    match before {
        // An empty field showing its hint reads back as the hint (Android 8+ puts the hint in
        // the node's text while `isShowingHintText`, AOSP `TextView.java`
        // `onInitializeAccessibilityNodeInfoInternal`), so "before" may be a hint: a field that
        // changed and now holds exactly the typed text holds it.
        Some(before) => {
            after != before
                && (after == text
                    || (after.chars().count() == before.chars().count() + text.chars().count()
                        && (after == format!("{before}{text}") || after.contains(text))))
        }
        None => after.ends_with(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_back_compares_before_and_after() {
        // Field bug 21: the field already held `abc` and the IME dropped the new `abc`.
        assert!(!read_back_holds(Some("abc"), "abc", "abc", false));
        assert!(read_back_holds(Some("abc"), "abcabc", "abc", false));
        assert!(read_back_holds(Some(""), "abc", "abc", false));
        // An empty field whose node text was its hint.
        assert!(read_back_holds(
            Some("Write a note"),
            "hello",
            "hello",
            false
        ));
        assert!(!read_back_holds(
            Some("Write a note"),
            "Write a note",
            "hello",
            false
        ));
        assert!(read_back_holds(Some("hello"), "helXlo", "X", false));
        assert!(!read_back_holds(Some("hello"), "hello!!", "!", false));
        assert!(read_back_holds(None, "xabc", "abc", false));
        assert!(read_back_holds(None, "abc", "abc", true));
        assert!(!read_back_holds(None, "abcd", "abc", true));
    }
    use crate::device::tools::registry::assert_output;
    use crate::protocol::ErrorCode;

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
        let cmd = text_commands("a;reboot\nit's", false, usize::MAX).unwrap();
        assert_eq!(
            cmd,
            ["'input' 'text' 'a;reboot' && 'input' 'keyevent' '66' && 'input' 'text' 'it'\\''s'"]
        );
        let err = text_commands("שלום", false, usize::MAX).unwrap_err();
        assert_eq!(err.code(), ErrorCode::UnsupportedText);
    }

    /// Each command line fits the phone's request limit; together they type the text exactly.
    #[test]
    fn long_text_is_typed_in_lines_that_fit() {
        let text = format!("{}x%sy\n{}", "'".repeat(1500), "a".repeat(1800));
        let lines = text_commands(&text, true, 4096 - 32).unwrap();
        assert!(lines.len() > 1, "{lines:?}");
        assert!(lines.iter().all(|l| l.len() <= 4096 - 32));
        let typed: String = lines
            .join(" && ")
            .split(" && ")
            .map(|step| match step {
                "'input' 'keyevent' '66'" => "\n".to_string(),
                s => s
                    .strip_prefix("'input' 'text' '")
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap()
                    .replace("'\\''", "'"),
            })
            .collect();
        assert_eq!(typed, format!("{text}\n"));
    }

    #[test]
    fn ime_payloads_are_split_on_character_boundaries() {
        let text = "中文'输入\"".repeat(300);
        let steps = ime_broadcasts(&text, 4096 - 32);
        assert!(steps.len() > 1);
        let mut joined = Vec::new();
        for s in &steps {
            assert!(s.len() <= 4096 - 32, "{}", s.len());
            let b64 = s.rsplit(' ').next().unwrap().trim_matches('\'');
            joined.extend(
                base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .unwrap(),
            );
        }
        assert_eq!(String::from_utf8(joined).unwrap(), text);
    }

    #[test]
    fn outputs_match_the_schema() {
        let mut out = Output {
            typed_chars: 3,
            method: Method::InputText,
            verified: Some(true),
            field_text: Some("abc".into()),
            warning: None,
        };
        assert_output::<InputText>(&out);
        out.verified = None;
        out.field_text = None;
        out.method = Method::ImeBroadcast;
        out.warning = Some("no focused field");
        assert_output::<InputText>(&out);
    }
}
