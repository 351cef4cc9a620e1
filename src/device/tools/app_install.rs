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

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::command;
use super::phone::file_refs::{read_upload, resolve_upload};
use super::phone::packages::{
    check_package, list_packages, package_schema, require_installed, Which,
};
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::shell_quote::command_line;

/// Deadline of `pm install` (dex optimisation of a large APK takes tens of seconds; an on-phone
/// confirmation dialog — "Install via USB" on MIUI — never ends it, so the deadline does and the
/// call fails with `device_timeout`).
pub const INSTALL_DEADLINE: Duration = Duration::from_secs(120);
/// Deadline of pushing the APK (256 MiB over USB 2 at ~20 MB/s ≈ 13 s; Wi-Fi is slower).
pub const PUSH_DEADLINE: Duration = Duration::from_secs(120);
/// Deadline of the small calls (package lists, `rm`, `pm uninstall`).
pub const SMALL_DEADLINE: Duration = Duration::from_secs(30);
/// The part of the call kept for removing the pushed copy after the install.
const CLEANUP_RESERVE: Duration = Duration::from_secs(5);
/// Output cap (bytes).
const OUTPUT_LIMIT: usize = 4 * 1024 * 1024;

async fn installed(ctx: &ToolCtx<'_>) -> Result<BTreeSet<String>, DeviceError> {
    Ok(list_packages(ctx, Which::All, SMALL_DEADLINE)
        .await?
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

/// Arguments of `android_app_install`.
#[derive(Debug, Deserialize)]
pub struct InstallArgs {
    /// The uploaded APK.
    pub file_ref: String,
}

/// Result of `android_app_install`.
#[derive(Debug, Serialize)]
pub struct InstallOutput {
    /// Always `true` (a failure is an error).
    pub installed: bool,
    /// The newly installed package; `null` when an installed app was replaced.
    pub package: Option<String>,
    /// Packages present after but not before.
    pub new_packages: Vec<String>,
    /// APK size, bytes.
    pub byte_size: usize,
    /// Why `package` is null, else empty.
    pub note: &'static str,
}

/// `android_app_install`.
pub struct AppInstall;

impl DeviceTool for AppInstall {
    const ID: &'static str = "android_app_install";
    const TITLE: &'static str = "Install an APK";
    const DESCRIPTION: &'static str = "Install (or update) an APK on the bound phone. Upload the APK first with POST /files/uploads on this channel and pass its file_ref. Runs `pm install -r -t` with a 120 s deadline (a confirmation dialog on the phone ends in device_timeout). Returns package (the newly installed package; null when an installed app was replaced). Errors: policy_denied (gates.allow_install), invalid_arguments (unknown/other-channel file_ref), device_command_failed (pm's Failure [INSTALL_…] reason in the message).";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    type Args = InstallArgs;
    type Output = InstallOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["file_ref"], "properties": {
            "file_ref": {"type": "string", "minLength": 1, "maxLength": 200, "description": "file_ref returned by POST /files/uploads on this channel."}
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["installed", "package", "new_packages", "byte_size", "note"], "properties": {
            "installed": {"const": true}, "package": {"type": ["string", "null"]},
            "new_packages": {"type": "array", "items": {"type": "string"}},
            "byte_size": {"type": "integer", "minimum": 0}, "note": {"type": "string"}
        }})
    }

    /// The lists before and after, the push, the install and the removal of the copy.
    fn deadline(_: &InstallArgs) -> Duration {
        PUSH_DEADLINE + INSTALL_DEADLINE + SMALL_DEADLINE * 2
    }

    async fn run(args: InstallArgs, ctx: &ToolCtx<'_>) -> Result<InstallOutput, DeviceError> {
        if !ctx.policy.gates.allow_install {
            return Err(DeviceError::Policy {
                rule: "gates.allow_install",
                why: "installing apps is disabled for this phone".into(),
            });
        }
        let upload = resolve_upload(ctx, &args.file_ref).await?;
        let bytes = read_upload(&upload).await?;
        let before = installed(ctx).await?;
        let id: String = upload.file_id.chars().take(16).collect();
        let remote = format!("/data/local/tmp/xagent-{id}.apk");
        ctx.push(&remote, 0o644, &bytes, PUSH_DEADLINE).await?;
        // Time is kept for removing the copy, whatever the install does.
        let installing = ctx.with_deadline(ctx.deadline.reserving(CLEANUP_RESERVE));
        let result = command::run(
            &installing,
            &command_line(&["pm", "install", "-r", "-t", &remote]),
            INSTALL_DEADLINE,
            OUTPUT_LIMIT,
        )
        .await;
        // Always remove the temporary APK, also after a timeout or failure.
        let _ = command::run(
            ctx,
            &command_line(&["rm", "-f", &remote]),
            SMALL_DEADLINE,
            OUTPUT_LIMIT,
        )
        .await;
        let out = result?;
        if let Some(e) = out.service_missing() {
            return Err(e);
        }
        let all = out.all();
        if !all.lines().any(|l| l.trim() == "Success") {
            let (reason, line) =
                parse_failure(&all).unwrap_or_else(|| (String::new(), out.first_line()));
            let denied = reason.contains("USER_RESTRICTED") || reason.contains("ABORTED");
            return Err(DeviceError::command(
                denied,
                format!("pm install failed: {line}"),
            ));
        }
        let after = installed(ctx).await?;
        let new: Vec<String> = after.difference(&before).cloned().collect();
        Ok(InstallOutput {
            installed: true,
            package: (new.len() == 1).then(|| new[0].clone()),
            note: if new.is_empty() {
                "the APK replaced an installed package; its name is not reported (found by diffing pm list packages)"
            } else {
                ""
            },
            new_packages: new,
            byte_size: bytes.len(),
        })
    }
}

/// Arguments of `android_app_uninstall`.
#[derive(Debug, Deserialize)]
pub struct UninstallArgs {
    /// Package to uninstall.
    pub package: String,
}

/// Result of `android_app_uninstall`.
#[derive(Debug, Serialize)]
pub struct UninstallOutput {
    /// The package.
    pub package: String,
    /// Always `true` (a failure is an error).
    pub uninstalled: bool,
}

/// `android_app_uninstall`: `pm uninstall PKG` when `gates.allow_uninstall`.
pub struct AppUninstall;

impl DeviceTool for AppUninstall {
    const ID: &'static str = "android_app_uninstall";
    const TITLE: &'static str = "Uninstall an app";
    const DESCRIPTION: &'static str = "Uninstall an app and its data from the bound phone (`pm uninstall`). Refused with policy_denied unless the device policy allows it (gates.allow_uninstall, off by default). Errors: app_not_installed, device_command_failed (e.g. system apps).";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    type Args = UninstallArgs;
    type Output = UninstallOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["package"], "properties": {
            "package": package_schema("Android package name to uninstall.")
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["package", "uninstalled"], "properties": {
            "package": {"type": "string"}, "uninstalled": {"const": true}
        }})
    }

    /// `pm path`, then `pm uninstall`.
    fn deadline(_: &UninstallArgs) -> Duration {
        SMALL_DEADLINE * 2
    }

    async fn run(args: UninstallArgs, ctx: &ToolCtx<'_>) -> Result<UninstallOutput, DeviceError> {
        let pkg = check_package(&args.package)?;
        if !ctx.policy.gates.allow_uninstall {
            return Err(DeviceError::Policy {
                rule: "gates.allow_uninstall",
                why: "uninstalling apps is disabled for this phone (set allow_uninstall = true in a device profile to allow it)".into(),
            });
        }
        require_installed(ctx, pkg, SMALL_DEADLINE).await?;
        let out = command::run(
            ctx,
            &command_line(&["pm", "uninstall", pkg]),
            SMALL_DEADLINE,
            OUTPUT_LIMIT,
        )
        .await?;
        if let Some(e) = out.service_missing() {
            return Err(e);
        }
        let all = out.all();
        if !all.lines().any(|l| l.trim() == "Success") {
            let line = parse_failure(&all)
                .map(|(_, l)| l)
                .unwrap_or_else(|| out.first_line());
            return Err(DeviceError::CommandFailed(format!(
                "pm uninstall failed: {line} (system apps cannot be uninstalled)"
            )));
        }
        Ok(UninstallOutput {
            package: pkg.to_string(),
            uninstalled: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn failure_lines() {
        let (r, l) = parse_failure("Performing Streamed Install\nFailure [INSTALL_FAILED_VERSION_DOWNGRADE: Downgrade detected]\n").unwrap();
        assert_eq!(r, "INSTALL_FAILED_VERSION_DOWNGRADE");
        assert!(l.starts_with("Failure ["));
        let (r, _) = parse_failure("Failure [DELETE_FAILED_INTERNAL_ERROR]\n").unwrap();
        assert_eq!(r, "DELETE_FAILED_INTERNAL_ERROR");
        assert!(parse_failure("Success\n").is_none());
    }

    #[test]
    fn outputs_match_the_schema() {
        assert_output::<AppInstall>(&InstallOutput {
            installed: true,
            package: None,
            new_packages: vec![],
            byte_size: 1024,
            note: "replaced",
        });
        assert_output::<AppInstall>(&InstallOutput {
            installed: true,
            package: Some("com.example.notes".into()),
            new_packages: vec!["com.example.notes".into()],
            byte_size: 1024,
            note: "",
        });
        assert_output::<AppUninstall>(&UninstallOutput {
            package: "com.example.notes".into(),
            uninstalled: true,
        });
    }
}
