//! Installing APKs on the bound phone: one APK with `pm install -r -t PATH`, several (a split
//! app) as one install session — `pm install-create -r -t -S TOTAL` (prints `Success: created
//! install session [ID]`), `pm install-write -S SIZE ID NAME PATH` per APK (`Success: streamed
//! N bytes`), `pm install-commit ID` (`Success` or `Failure [CODE: message]`) — AOSP
//! `PackageManagerShellCommand` `runInstallCreate` / `runInstallWrite` / `doCommitSession`, what
//! `adb install-multiple` does. The APKs are pushed over sync to
//! `/data/local/tmp/xagent-<tag>-<n>.apk` first (`install-write` opens a path with the shell's
//! rights) and removed afterwards whatever happened; a session that was created but not
//! committed is abandoned (`pm install-abandon ID`), also after a timeout. An APK below Android
//! 14+'s target SDK floor is installed again with `--bypass-low-target-sdk-block` when the
//! caller allowed it (field row 59).

use std::time::Duration;

use super::apk_bundle::Apk;
use super::command::{self, Text};
use super::sync_refusal::{self, Direction};
use crate::device::error::DeviceError;
use crate::device::parse::install::{low_target_sdk, parse_failure};
use crate::device::shell_quote::command_line;
use crate::device::tools::ToolCtx;

/// Deadline of pushing one APK (256 MiB over USB 2 at ~20 MB/s ≈ 13 s; Wi-Fi is slower).
pub const PUSH_STEP: Duration = Duration::from_secs(120);
/// Deadline of `pm install` / `pm install-commit` (dex optimisation of a large app takes tens
/// of seconds; an on-phone confirmation — MIUI's "Install via USB", vivo's prompt — that nobody
/// answers ends in `device_timeout`).
pub const COMMIT_STEP: Duration = Duration::from_secs(120);
/// Deadline of the small steps (create, write from a local file, abandon, rm).
pub const SMALL_STEP: Duration = Duration::from_secs(30);
/// Output cap per step (bytes).
const OUTPUT_LIMIT: usize = 1 << 20;

/// The session id in `Success: created install session [ID]`.
pub fn parse_session_id(stdout: &str) -> Option<u64> {
    let line = stdout
        .lines()
        .find(|l| l.contains("created install session"))?;
    let (_, rest) = line.split_once('[')?;
    rest.split(']').next()?.trim().parse().ok()
}

/// One step of the install on `steps` (the call's deadline less the clean-up reserve).
async fn run(steps: &ToolCtx<'_>, argv: &[&str], cap: Duration) -> Result<Text, DeviceError> {
    let out = command::run(steps, &command_line(argv), cap, OUTPUT_LIMIT).await?;
    match out.service_missing() {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// `backend` of an install: `pm install` of one APK, or one `pm install-create` session.
pub const INSTALL_BACKENDS: &[&str] = &["pm_install", "pm_install_session"];

/// Pushes `apks`, installs them (one → `pm install`, several → one session) and cleans up;
/// returns the output of the step that decided (`pm install` or `pm install-commit`), or the
/// step that failed before it, and whether it was asked again with
/// `--bypass-low-target-sdk-block` (`bypass_low_target_sdk` and the phone's floor refused it). `tag` makes the temporary names unique (the upload's id);
/// `reserve` of the call's deadline is kept for the clean-up, which runs on `ctx`.
pub async fn install(
    ctx: &ToolCtx<'_>,
    apks: &[Apk],
    tag: &str,
    reserve: Duration,
    bypass_low_target_sdk: bool,
) -> Result<(Text, bool), DeviceError> {
    let steps = &ctx.with_deadline(ctx.deadline.reserving(reserve));
    crate::adb::meter::note_backend(INSTALL_BACKENDS[usize::from(apks.len() > 1)]);
    let remotes: Vec<String> = (0..apks.len())
        .map(|i| format!("/data/local/tmp/xagent-{tag}-{i}.apk"))
        .collect();
    let mut pushed = 0;
    let mut bypassed = false;
    let mut result = Ok(Text::default());
    for (apk, remote) in apks.iter().zip(&remotes) {
        let step = match steps.deadline.clip(PUSH_STEP) {
            Ok(s) => s,
            Err(e) => {
                result = Err(e);
                break;
            }
        };
        pushed += 1;
        if let Err(e) = ctx.link.push(remote, 0o644, &apk.bytes, step).await {
            result = Err(sync_refusal::classify(e, Direction::Push, remote));
            break;
        }
    }
    if result.is_ok() {
        result = install_pushed(ctx, steps, apks, &remotes, &[]).await;
        // Asked again with the flag only when this phone's floor refused it (field row 59):
        // Android before 14 has no such flag and would refuse an unknown option.
        let low = |t: &Text| parse_failure(&t.all()).is_some_and(|f| low_target_sdk(&f).is_some());
        if bypass_low_target_sdk && result.as_ref().is_ok_and(low) {
            result = install_pushed(ctx, steps, apks, &remotes, &[BYPASS_LOW_TARGET_SDK]).await;
            bypassed = true;
        }
    }
    // Always remove the temporary APKs, also after a timeout or failure.
    let mut rm = vec!["rm", "-f"];
    rm.extend(remotes[..pushed].iter().map(String::as_str));
    if pushed > 0 {
        let _ = command::run(ctx, &command_line(&rm), SMALL_STEP, OUTPUT_LIMIT).await;
    }
    result.map(|text| (text, bypassed))
}

/// `pm install`'s flag that lifts Android 14+'s target SDK floor (AOSP
/// `PackageManagerShellCommand.makeInstallParams`: `INSTALL_BYPASS_LOW_TARGET_SDK_BLOCK`).
pub const BYPASS_LOW_TARGET_SDK: &str = "--bypass-low-target-sdk-block";

/// Installs the pushed `remotes` (one → `pm install`, several → one session) with `extra`
/// install flags.
async fn install_pushed(
    ctx: &ToolCtx<'_>,
    steps: &ToolCtx<'_>,
    apks: &[Apk],
    remotes: &[String],
    extra: &[&str],
) -> Result<Text, DeviceError> {
    if apks.len() == 1 {
        let mut argv = vec!["pm", "install", "-r", "-t"];
        argv.extend_from_slice(extra);
        argv.push(&remotes[0]);
        run(steps, &argv, COMMIT_STEP).await
    } else {
        session(ctx, steps, apks, remotes, extra).await
    }
}

/// create → write each → commit on `steps`; abandons on `ctx` a session that was not committed.
async fn session(
    ctx: &ToolCtx<'_>,
    steps: &ToolCtx<'_>,
    apks: &[Apk],
    remotes: &[String],
    extra: &[&str],
) -> Result<Text, DeviceError> {
    let total: usize = apks.iter().map(|a| a.bytes.len()).sum();
    let total = total.to_string();
    let mut argv = vec!["pm", "install-create", "-r", "-t"];
    argv.extend_from_slice(extra);
    argv.extend_from_slice(&["-S", &total]);
    let created = run(steps, &argv, SMALL_STEP).await?;
    let Some(id) = parse_session_id(&created.stdout) else {
        return Ok(created); // its Failure/Error line is classified by the caller
    };
    let id = id.to_string();
    let outcome = write_and_commit(steps, apks, remotes, &id).await;
    let committed = matches!(&outcome, Ok((true, _)));
    if !committed {
        let _ = command::run(
            ctx,
            &command_line(&["pm", "install-abandon", &id]),
            SMALL_STEP,
            OUTPUT_LIMIT,
        )
        .await;
    }
    outcome.map(|(_, text)| text)
}

/// Writes every APK into session `id` and commits it; `(committed, output)` where `committed`
/// says the commit ran and answered (success or `Failure`: the session is finished either way).
async fn write_and_commit(
    steps: &ToolCtx<'_>,
    apks: &[Apk],
    remotes: &[String],
    id: &str,
) -> Result<(bool, Text), DeviceError> {
    for (apk, remote) in apks.iter().zip(remotes) {
        let size = apk.bytes.len().to_string();
        let argv = ["pm", "install-write", "-S", &size, id, &apk.name, remote];
        let out = run(steps, &argv, SMALL_STEP).await?;
        if !out.stdout.contains("Success") {
            return Ok((false, out));
        }
    }
    let out = run(steps, &["pm", "install-commit", id], COMMIT_STEP).await?;
    let answered = out.all().lines().any(|l| {
        let l = l.trim();
        l == "Success" || l.starts_with("Failure")
    });
    Ok((answered, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids() {
        assert_eq!(
            parse_session_id("Success: created install session [1234567890]\n"),
            Some(1234567890)
        );
        assert_eq!(
            parse_session_id("Error: java.lang.SecurityException\n"),
            None
        );
    }
}
