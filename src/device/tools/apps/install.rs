//! `android_app_install` and `android_app_uninstall`, both gated by the device policy
//! (`[gates] allow_install` / `allow_uninstall`).
//!
//! Install: the APK comes from `POST /files/uploads` as a `file_ref` bound to the calling channel;
//! it is pushed over sync to `/data/local/tmp/xagent-<id>.apk`, installed with
//! `pm install -r -t PATH` (AOSP `PackageManagerShellCommand.runInstall`: prints `Success` or
//! `Failure [INSTALL_…: reason]`), and removed again whatever happened. The package name is
//! found by diffing `pm list packages` before and after (no APK parsing on the host): a fresh
//! install names its package; a reinstall of an existing package reports `package: null`.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{json, Value};

use super::super::util::{self, arg_str};
use super::super::{ToolCtx, ToolError};
use crate::device::parse::package;
use crate::device::shell_quote::command_line;
use crate::files::FileRefError;
use crate::protocol::card::ToolDecl;
use crate::protocol::ErrorCode;

/// Deadline of `pm install` (dex optimisation of a large APK takes tens of seconds; an on-phone
/// confirmation dialog — "Install via USB" on MIUI — never ends it, so the deadline does and the
/// call fails with `device_timeout`).
pub const INSTALL_DEADLINE: Duration = Duration::from_secs(120);
/// Deadline of pushing the APK (256 MiB over USB 2 at ~20 MB/s ≈ 13 s; Wi-Fi is slower).
pub const PUSH_DEADLINE: Duration = Duration::from_secs(120);
/// Deadline of the small calls (package lists, `rm`, `pm uninstall`).
pub const SMALL_DEADLINE: Duration = Duration::from_secs(30);
/// Output cap (bytes).
const OUTPUT_LIMIT: usize = 4 * 1024 * 1024;

async fn installed(ctx: &ToolCtx<'_>) -> Result<BTreeSet<String>, ToolError> {
    let out = util::run(
        ctx,
        &command_line(&["pm", "list", "packages"]),
        SMALL_DEADLINE,
        OUTPUT_LIMIT,
    )
    .await?;
    Ok(package::parse_pm_list_packages(&out.stdout)
        .into_iter()
        .map(|p| p.package)
        .collect())
}

/// The `INSTALL_…`/`DELETE_…` reason in a `Failure [REASON: text]` line, with the line.
pub fn parse_failure(out: &str) -> Option<(String, String)> {
    let line = out
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("Failure") || l.starts_with("Error"))?;
    let reason = line
        .split_once('[')
        .map(|(_, r)| r.trim_end_matches(']'))
        .and_then(|r| r.split([':', ' ', ']']).next())
        .unwrap_or("")
        .to_string();
    Some((reason, line.chars().take(300).collect()))
}

/// Resolves a `file_ref` of the calling channel to its local path and size.
pub(in crate::device::tools) async fn resolve_ref(
    ctx: &ToolCtx<'_>,
    file_ref: &str,
) -> Result<(std::path::PathBuf, u64, String), ToolError> {
    match ctx.files.resolve(file_ref, Some(ctx.channel_id)).await {
        Ok(rec) => Ok((rec.path.into(), rec.byte_size.max(0) as u64, rec.file_id)),
        Err(FileRefError::Storage) => Err(ToolError::new(
            ErrorCode::InternalError,
            "file cache unavailable",
        )),
        Err(_) => Err(ToolError::new(
            ErrorCode::InvalidArguments,
            "file_ref is unknown, expired or belongs to another channel; upload the file with POST /files/uploads on this channel",
        )),
    }
}

/// `android_app_install`.
pub async fn app_install(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    if !ctx.policy.gates.allow_install {
        return Err(util::denied(
            "gates.allow_install",
            "installing apps is disabled for this phone",
        ));
    }
    let (path, _, file_id) = resolve_ref(ctx, arg_str(args, "file_ref")).await?;
    let bytes = tokio::fs::read(&path)
        .await
        .map_err(|_| ToolError::new(ErrorCode::InvalidArguments, "the uploaded file is gone"))?;
    let before = installed(ctx).await?;
    let id: String = file_id.chars().take(16).collect();
    let remote = format!("/data/local/tmp/xagent-{id}.apk");
    ctx.link
        .push(&remote, 0o644, &bytes, PUSH_DEADLINE)
        .await
        .map_err(ToolError::from)?;
    let result = util::run(
        ctx,
        &command_line(&["pm", "install", "-r", "-t", &remote]),
        INSTALL_DEADLINE,
        OUTPUT_LIMIT,
    )
    .await;
    // Always remove the temporary APK, also after a timeout or failure.
    let _ = util::run(
        ctx,
        &command_line(&["rm", "-f", &remote]),
        SMALL_DEADLINE,
        OUTPUT_LIMIT,
    )
    .await;
    let out = result?;
    let all = out.all();
    if !all.lines().any(|l| l.trim() == "Success") {
        let (reason, line) =
            parse_failure(&all).unwrap_or_else(|| (String::new(), out.first_line()));
        let code = if reason.contains("USER_RESTRICTED") || reason.contains("ABORTED") {
            ErrorCode::DevicePermissionDenied
        } else {
            ErrorCode::DeviceCommandFailed
        };
        return Err(ToolError::new(code, format!("pm install failed: {line}")));
    }
    let after = installed(ctx).await?;
    let new: Vec<&String> = after.difference(&before).collect();
    Ok(json!({
        "installed": true,
        "package": if new.len() == 1 { json!(new[0]) } else { Value::Null },
        "new_packages": new,
        "byte_size": bytes.len(),
        "note": if new.is_empty() { "the APK replaced an installed package; its name is not reported (found by diffing pm list packages)" } else { "" },
    }))
}

/// `android_app_uninstall`: `pm uninstall PKG` when `gates.allow_uninstall`.
pub async fn app_uninstall(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let pkg = util::package_arg(args)?;
    if !ctx.policy.gates.allow_uninstall {
        return Err(util::denied(
            "gates.allow_uninstall",
            "uninstalling apps is disabled for this phone (set allow_uninstall = true in a device profile to allow it)",
        ));
    }
    util::require_installed(ctx, pkg, SMALL_DEADLINE).await?;
    let out = util::run(
        ctx,
        &command_line(&["pm", "uninstall", pkg]),
        SMALL_DEADLINE,
        OUTPUT_LIMIT,
    )
    .await?;
    let all = out.all();
    if !all.lines().any(|l| l.trim() == "Success") {
        let line = parse_failure(&all)
            .map(|(_, l)| l)
            .unwrap_or_else(|| out.first_line());
        return Err(ToolError::new(
            ErrorCode::DeviceCommandFailed,
            format!("pm uninstall failed: {line} (system apps cannot be uninstalled)"),
        ));
    }
    Ok(json!({"package": pkg, "uninstalled": true}))
}

/// Card declarations of install and uninstall.
pub fn decls() -> Vec<ToolDecl> {
    vec![
        ToolDecl {
            tool_id: "android_app_install",
            title: "Install an APK",
            description: "Install (or update) an APK on the bound phone. Upload the APK first with POST /files/uploads on this channel and pass its file_ref. Runs `pm install -r -t` with a 120 s deadline (a confirmation dialog on the phone ends in device_timeout). Returns package (the newly installed package; null when an installed app was replaced). Errors: policy_denied (gates.allow_install), invalid_arguments (unknown/other-channel file_ref), device_command_failed (pm's Failure [INSTALL_…] reason in the message).",
            side_effect: true,
            input_schema: json!({"type": "object", "required": ["file_ref"], "properties": {
                "file_ref": {"type": "string", "minLength": 1, "maxLength": 200, "description": "file_ref returned by POST /files/uploads on this channel."}
            }}),
            output_schema: json!({"type": "object", "required": ["installed", "package"]}),
        },
        ToolDecl {
            tool_id: "android_app_uninstall",
            title: "Uninstall an app",
            description: "Uninstall an app and its data from the bound phone (`pm uninstall`). Refused with policy_denied unless the device policy allows it (gates.allow_uninstall, off by default). Errors: app_not_installed, device_command_failed (e.g. system apps).",
            side_effect: true,
            input_schema: json!({"type": "object", "required": ["package"], "properties": {
                "package": {"type": "string", "minLength": 3, "maxLength": 255, "pattern": util::PACKAGE_PATTERN, "description": "Android package name to uninstall."}
            }}),
            output_schema: json!({"type": "object", "required": ["package", "uninstalled"]}),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_lines() {
        let (r, l) = parse_failure("Performing Streamed Install\nFailure [INSTALL_FAILED_VERSION_DOWNGRADE: Downgrade detected]\n").unwrap();
        assert_eq!(r, "INSTALL_FAILED_VERSION_DOWNGRADE");
        assert!(l.starts_with("Failure ["));
        let (r, _) = parse_failure("Failure [DELETE_FAILED_INTERNAL_ERROR]\n").unwrap();
        assert_eq!(r, "DELETE_FAILED_INTERNAL_ERROR");
        assert!(parse_failure("Success\n").is_none());
    }
}
