//! Typing through ADBKeyboard (`senzhk/ADBKeyBoard` `AdbIME.java`): the text goes as base64
//! `am broadcast -a ADB_INPUT_B64 --es msg …` payloads to the keyboard while it is the selected
//! input method; the previous one is put back afterwards.
//!
//! - Selecting it is `ime enable ID && ime set ID`. Right after the keyboard is installed,
//!   Android lists it but may not have registered it yet: `Unknown input method ID cannot be
//!   enabled for user #0`, exit 255, once (suyiiyii/AutoGLM-GUI#479, field bug 44; wording of
//!   AOSP `InputMethodManagerService` shell command `ime enable` / `ime set`). That step is
//!   retried a bounded number of times; if it persists, [`DeviceError::UnsupportedText`] names
//!   the step and its fix (Settings → Keyboards).
//! - A keyboard that is selected yet types nothing (an ADBKeyboard whose broadcast receiver
//!   Android 13+ no longer delivers shell broadcasts to: senzhk/ADBKeyBoard PR #84, Android 16,
//!   `Broadcast completed: result=0` either way) is told by [`did_not_type`], decided by the
//!   caller from the field read back and the bound IME ([`bound_ime`]).

use std::time::Duration;

use base64::Engine;

use super::command;
use super::input::{run_input, TEXT_DEADLINE};
use crate::device::error::DeviceError;
use crate::device::shell_quote::command_line;
use crate::device::tools::ToolCtx;

/// The ADBKeyboard IME id.
pub const ADB_KEYBOARD_IME: &str = "com.android.adbkeyboard/.AdbIME";
/// Deadline of IME queries and switches.
pub const IME_DEADLINE: Duration = Duration::from_secs(10);
/// The part of a call kept for putting the previous IME back.
pub const RESTORE_RESERVE: Duration = Duration::from_secs(3);
/// Tries of `ime enable && ime set` while Android does not know the listed keyboard yet.
pub const SELECT_ATTEMPTS: u32 = 5;
/// Pause between those tries (the registration race lasts well under a second).
pub const SELECT_BACKOFF: Duration = Duration::from_millis(400);
/// Cap of the output of IME commands (bytes).
const OUTPUT_LIMIT: usize = 1 << 20;

async fn shell_text(ctx: &ToolCtx<'_>, cmd: &str) -> Result<String, DeviceError> {
    Ok(command::run(ctx, cmd, IME_DEADLINE, OUTPUT_LIMIT)
        .await?
        .stdout)
}

/// Why typing `text` needs the IME (the start of the "no ADBKeyboard" message).
fn why_ime(text: &str) -> String {
    match text.chars().find(|c| !c.is_ascii()) {
        Some(c) => format!(
            "the text contains non-ASCII character U+{:04X}: `input text` types printable ASCII only (non-ASCII crashes it with a NullPointerException), so it needs an IME",
            c as u32
        ),
        None => "the device policy types all text through ADBKeyboard (quirks.text_input = \"adbkeyboard\")".to_string(),
    }
}

/// Checks that the phone lists ADBKeyboard (`ime list -a -s`, every installed IME) and reads
/// the selected IME to put back later (`settings get secure default_input_method`; `None`
/// when there is none or it is ADBKeyboard already). Errors: `unsupported_text` naming the fix
/// when the keyboard is not installed (`why` overrides the reason the message starts with:
/// the ASCII fallback of field row 63); the listing's own refusal (`device_permission_denied`
/// with the maker's switch when the build withholds a shell permission).
pub async fn prepare(
    ctx: &ToolCtx<'_>,
    text: &str,
    why: Option<&str>,
) -> Result<Option<String>, DeviceError> {
    let out = command::run(ctx, "ime list -a -s", IME_DEADLINE, OUTPUT_LIMIT).await?;
    // A refused listing is not an empty one: ColorOS answers `SecurityException: uid 2000 does
    // not have android.permission.WRITE_SECURE_SETTINGS` with ADBKeyboard installed
    // (zai-org/Open-AutoGLM#106, field bug 70).
    if let Some(e) = out.failure("ime list") {
        return Err(e);
    }
    let imes = out.stdout;
    if !imes.lines().any(|l| l.trim() == ADB_KEYBOARD_IME) {
        return Err(DeviceError::UnsupportedText(format!(
            "{}, and the phone has no {ADB_KEYBOARD_IME}. Install ADBKeyboard (com.android.adbkeyboard) on the phone{}",
            why.map_or_else(|| why_ime(text), str::to_string),
            if text.is_ascii() { "" } else { ", or type ASCII" }
        )));
    }
    Ok(Some(bound_ime(ctx).await?)
        .filter(|p| !p.is_empty() && p != "null" && p != ADB_KEYBOARD_IME))
}

/// The input method the phone has selected now (`settings get secure default_input_method`).
pub async fn bound_ime(ctx: &ToolCtx<'_>) -> Result<String, DeviceError> {
    Ok(shell_text(ctx, "settings get secure default_input_method")
        .await?
        .trim()
        .to_string())
}

/// `Unknown input method ID cannot be enabled|selected …` on either stream.
fn unknown_ime(out: &command::Text) -> Option<String> {
    out.all()
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("Unknown input method"))
        .map(|l| l.chars().take(300).collect())
}

/// Enables and selects ADBKeyboard, retrying (at most [`SELECT_ATTEMPTS`], [`SELECT_BACKOFF`]
/// apart, within the call's deadline) while Android answers that it does not know the
/// keyboard it listed. Errors: `unsupported_text` naming the step and Settings → Keyboards
/// when that persists; the step's own failure otherwise.
pub async fn select(ctx: &ToolCtx<'_>) -> Result<(), DeviceError> {
    let line = format!(
        "{} && {}",
        command_line(&["ime", "enable", ADB_KEYBOARD_IME]),
        command_line(&["ime", "set", ADB_KEYBOARD_IME])
    );
    let mut refused = String::new();
    for attempt in 1..=SELECT_ATTEMPTS {
        let out = command::run(ctx, &line, IME_DEADLINE, OUTPUT_LIMIT).await?;
        let Some(unknown) = unknown_ime(&out) else {
            return match out.failure("ime enable/set") {
                Some(e) => Err(e),
                None => Ok(()),
            };
        };
        tracing::debug!(
            attempt,
            "ime enable/set: the keyboard is listed but not known yet"
        );
        refused = unknown;
        if attempt < SELECT_ATTEMPTS {
            tokio::time::sleep(SELECT_BACKOFF.min(ctx.deadline.left())).await;
        }
    }
    let step = if refused.contains("cannot be selected") {
        "ime set"
    } else {
        "ime enable"
    };
    Err(DeviceError::UnsupportedText(format!(
        "`{step} {ADB_KEYBOARD_IME}` failed {SELECT_ATTEMPTS} times: `{refused}` — the phone lists ADBKeyboard but Android has not registered it as an input method for this user (installed moments ago, or switched off). Turn it on in Settings → System → Keyboards (older: Languages & input → On-screen keyboard → Manage keyboards) → ADB Keyboard, then retry; nothing was typed"
    )))
}

/// Types `text` (after [`select`]): `ADB_CLEAR_TEXT` first when `clear`, the base64 payloads,
/// ENTER when `submit`, in as few command lines as fit the phone's request size.
pub async fn type_text(
    ctx: &ToolCtx<'_>,
    text: &str,
    clear: bool,
    submit: bool,
) -> Result<(), DeviceError> {
    let max = ctx.link.max_shell_command().await?;
    let mut steps = Vec::new();
    if clear {
        steps.push(command_line(&["am", "broadcast", "-a", "ADB_CLEAR_TEXT"]));
    }
    steps.extend(broadcasts(text, max));
    if submit {
        steps.push(command_line(&["input", "keyevent", "66"]));
    }
    for line in command::batched(&steps, max) {
        run_input(ctx, &line, TEXT_DEADLINE).await?;
    }
    Ok(())
}

/// Puts `previous` back as the selected IME.
pub async fn restore(ctx: &ToolCtx<'_>, previous: &str) -> Result<(), DeviceError> {
    run_input(ctx, &command_line(&["ime", "set", previous]), IME_DEADLINE).await
}

/// The error of a keyboard that typed nothing: `bound` is the IME selected after typing.
pub fn did_not_type(bound: &str) -> DeviceError {
    if bound == ADB_KEYBOARD_IME {
        return DeviceError::UnsupportedText(format!(
            "ADBKeyboard ({ADB_KEYBOARD_IME}) was the selected input method, yet the focused field did not change: the installed ADBKeyboard does not receive `am broadcast` on this Android (from Android 13 its receiver must be registered exported; builds before senzhk/ADBKeyBoard PR #84 miss it, e.g. on Android 16). Update ADBKeyboard on the phone, or type ASCII (`input text`); nothing was typed and the previous input method was restored"
        ));
    }
    DeviceError::UnsupportedText(format!(
        "`ime set {ADB_KEYBOARD_IME}` did not hold: the phone's selected input method is `{}` and the field did not change (an OEM keyboard policy or a security keyboard switched back). Select ADB Keyboard by hand (Settings → System → Keyboards), or type ASCII; nothing was typed",
        bound.chars().take(200).collect::<String>()
    ))
}

/// The `ADB_INPUT_B64` broadcast typing `chunk` (base64 needs no quoting beyond the quotes).
fn broadcast_step(chunk: &str) -> String {
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
pub fn broadcasts(text: &str, max: usize) -> Vec<String> {
    let overhead = broadcast_step("").len();
    let budget = (max.saturating_sub(overhead) / 4 * 3).max(4); // UTF-8 bytes per chunk
    let mut steps = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if current.len() + c.len_utf8() > budget && !current.is_empty() {
            steps.push(broadcast_step(&std::mem::take(&mut current)));
        }
        current.push(c);
    }
    if !current.is_empty() {
        steps.push(broadcast_step(&current));
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_are_split_on_character_boundaries() {
        let text = "中文'输入\"".repeat(300);
        let steps = broadcasts(&text, 4096 - 32);
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
    fn the_registration_race_is_told_from_either_stream() {
        let line =
            "Unknown input method com.android.adbkeyboard/.AdbIME cannot be enabled for user #0";
        let out = command::Text {
            stdout: String::new(),
            stderr: format!("{line}\n"),
            exit_code: Some(255),
        };
        assert_eq!(unknown_ime(&out).as_deref(), Some(line));
        let ok = command::Text {
            stdout: "Input method com.android.adbkeyboard/.AdbIME: now enabled for user #0\n"
                .into(),
            stderr: String::new(),
            exit_code: Some(0),
        };
        assert!(unknown_ime(&ok).is_none());
        let m = did_not_type(ADB_KEYBOARD_IME).to_string();
        assert!(
            m.contains("does not receive") && m.contains("Update ADBKeyboard"),
            "{m}"
        );
        assert!(did_not_type("com.sec.android.inputmethod/.SamsungKeypad")
            .to_string()
            .contains("SamsungKeypad"));
    }
}
