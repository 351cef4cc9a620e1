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
//!   holds the text (`verified`), never claiming success for nothing typed; on the IME path a
//!   field the selected keyboard left untouched is `unsupported_text` naming the cause (field
//!   bug 40, [`ime::did_not_type`]).
//! - The whole call has one deadline (30 s, issue 19 M1): the read before typing takes at most
//!   [`READ_BEFORE_SLICE`], typing leaves time for the read back and the IME restore, and a
//!   read that failed or timed out says so in `warning` (never "no focused field").

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::command;
use super::phone::field::{read_back, read_back_holds, read_field, FieldRead};
use super::phone::ime;
use super::phone::input::{self, run_input, TEXT_DEADLINE};
use super::phone::readiness::require_unlocked;
use super::phone::ui::focused_node;
use super::{DeviceTool, LockRule, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::shell_quote::command_line;

/// The most of the call a field read before typing may take (a dump is 1.5–3 s on a real
/// phone): the rest is the typing's and the read back's.
const READ_BEFORE_SLICE: Duration = Duration::from_secs(8);
/// The part of the call kept for reading the field back after typing.
const READ_BACK_RESERVE: Duration = Duration::from_secs(5);

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
    /// What to check when the text may not have landed (or could not be read back, and why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// `android_input_text`.
pub struct InputText;

impl DeviceTool for InputText {
    const ID: &'static str = "android_input_text";
    const TITLE: &'static str = "Type text";
    const DESCRIPTION: &'static str = "Type text into the focused field of the bound phone, exactly as given: every character is data, never shell syntax; `%s` is typed literally; a newline presses Enter between lines. Non-ASCII text (any script, emoji) goes through an ADBKeyboard-compatible IME when the phone has one (else unsupported_text says how to fix it). clear_first empties the field first; submit presses Enter after. The result reads the field back: verified true/false (null when it cannot be read, e.g. password fields). Tap a text field first. While the lock screen shows or the screen is off nothing is typed: device_locked says how to unlock.";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = &["input_text", "ime_broadcast"];
    const RECEIPT: bool = true;
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
        // 21: a field that already ends with the text proves nothing); on the IME path also
        // whether the keyboard took anything (field bug 40). At most a slice of the call.
        let before = if clear && !via_ime {
            FieldRead::Skipped
        } else {
            read_field(&ctx.with_deadline(ctx.deadline.within(READ_BEFORE_SLICE))).await?
        };
        let after = if via_ime {
            type_via_ime(ctx, text, clear, submit, &before, None).await?
        } else {
            let typing = ctx.with_deadline(ctx.deadline.reserving(READ_BACK_RESERVE));
            if clear {
                clear_with_input(&typing).await?;
            }
            let max = ctx.link.max_shell_command().await?;
            let mut refused = None;
            for (i, line) in text_commands(text, submit, max)?.iter().enumerate() {
                let out = command::run(&typing, line, TEXT_DEADLINE, TEXT_OUTPUT_LIMIT).await?;
                if keymap_refused(&out) {
                    refused = Some(i);
                    break;
                }
                input::check(&out)?;
            }
            match refused {
                None => read_back(ctx, &before).await?,
                // One step only, so nothing was typed: the whole text goes through the IME.
                Some(0) if single_step(text, max) => {
                    tracing::info!("`input text` has no keys for this text on this phone; typing it through ADBKeyboard");
                    let after = type_via_ime(ctx, text, clear, submit, &before, Some(KEYMAP_WHY)).await?;
                    return Ok(outcome(text, true, clear, submit, &before, after));
                }
                Some(_) => {
                    return Err(DeviceError::UnsupportedText(format!(
                        "{KEYMAP_WHY}; part of the text before that piece was typed already (not retyped, so nothing is doubled): clear the field and retry with ADBKeyboard installed (quirks.text_input = \"adbkeyboard\")"
                    )))
                }
            }
        };
        Ok(outcome(text, via_ime, clear, submit, &before, after))
    }
}

/// Cap of the output of one `input text` (bytes).
const TEXT_OUTPUT_LIMIT: usize = 64 * 1024;
/// Why the ASCII path could not type (field row 63).
const KEYMAP_WHY: &str = "`input text` crashed on this phone (NullPointerException in InputShellCommand.sendText: its virtual key map has no keys for a character of the text)";

/// Whether `text` is typed by one `input text` step (one line, no `%s`, fits one command):
/// a crash of the first command line then typed nothing. Steps are joined with `&&`, so a
/// crash in a later step of a batch comes after the earlier steps typed their part.
fn single_step(text: &str, max: usize) -> bool {
    !text.contains('\n') && split_percent_s(text).len() == 1 && fitting_runs(text, max).len() == 1
}

/// `input text`'s crash when the phone's key character map cannot produce the text: AOSP
/// `InputShellCommand.sendText` takes `KeyCharacterMap.getEvents(chars)`, which is `null` for
/// a character without keys, then reads its length (`Attempt to get length of null array`;
/// older `Input.java`: a bare `NullPointerException` in `sendText`). Nothing of that command
/// was injected (TencentQQGYLab/AppAgent#34, emulator, plain ASCII with spaces).
fn keymap_refused(out: &command::Text) -> bool {
    let all = out.all();
    all.contains("NullPointerException") && (all.contains("null array") || all.contains("sendText"))
}

/// Types through ADBKeyboard and reads the field back while it is still the selected IME;
/// the previous IME is put back whatever happened. A keyboard that typed nothing into a
/// readable field is a typed error decided from that read and the bound IME (field bug 40).
async fn type_via_ime(
    ctx: &ToolCtx<'_>,
    text: &str,
    clear: bool,
    submit: bool,
    before: &FieldRead,
    why: Option<&str>,
) -> Result<FieldRead, DeviceError> {
    let previous = ime::prepare(ctx, text, why).await?;
    let typing = ctx.with_deadline(
        ctx.deadline
            .reserving(READ_BACK_RESERVE + ime::RESTORE_RESERVE),
    );
    let keeping = ctx.with_deadline(ctx.deadline.reserving(ime::RESTORE_RESERVE));
    let typed = match ime::select(&typing).await {
        Ok(()) => ime::type_text(&typing, text, clear, submit).await,
        Err(e) => Err(e),
    };
    let after = match &typed {
        Ok(()) => read_back(&keeping, before).await,
        Err(_) => Ok(FieldRead::Skipped),
    };
    let untouched = match (before.text(), after.as_ref().ok().and_then(FieldRead::text)) {
        (Some(b), Some(a)) => a == b && !(clear && a == text),
        _ => false,
    };
    let bound = match untouched {
        true => Some(ime::bound_ime(&keeping).await),
        false => None,
    };
    if let Some(previous) = previous {
        if let Err(e) = ime::restore(ctx, &previous).await {
            tracing::warn!(code = %e.code(), "could not restore the previous IME");
            typed?;
            return Err(e.reword(|m| {
                format!(
                    "the text was typed, but putting the previous input method back failed: {m}"
                )
            }));
        }
    }
    typed?;
    match bound {
        Some(Ok(bound)) => Err(ime::did_not_type(&bound)),
        Some(Err(e)) => Err(e),
        None => after,
    }
}

/// The result from the reads before and after typing.
fn outcome(
    text: &str,
    via_ime: bool,
    clear: bool,
    submit: bool,
    before: &FieldRead,
    after: FieldRead,
) -> Output {
    let (verified, field_text) = match &after {
        FieldRead::Focused(n) if n.password => (None, None),
        FieldRead::Focused(n) => (
            Some(read_back_holds(before.text(), &n.text, text, clear)),
            Some(n.text.clone()),
        ),
        _ => (None, None),
    };
    let warning = match (&after, verified) {
        (_, Some(false)) => Some("the focused field does not hold the typed text; observe the screen before retrying".to_string()),
        (FieldRead::NoFocus, _) if !submit => Some("no focused field after typing; the text may have gone nowhere — tap a text field first".to_string()),
        (FieldRead::Failed { why, .. }, _) => Some(format!("the text was sent but could not be verified: reading the field back failed ({why}); observe the screen before retrying")),
        _ => None,
    };
    // `backend` is the way the text went, not the UI dumps that read the field around it.
    crate::adb::meter::choose_backend(InputText::BACKENDS[usize::from(via_ime)]);
    Output {
        typed_chars: text.chars().count(),
        method: if via_ime {
            Method::ImeBroadcast
        } else {
            Method::InputText
        },
        verified,
        field_text,
        warning,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        out.warning = Some("no focused field".into());
        assert_output::<InputText>(&out);
    }
}
