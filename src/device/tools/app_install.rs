//! `android_app_install` and `android_app_uninstall`, both gated by the device policy
//! (`[gates] allow_install` / `allow_uninstall`).
//!
//! Install: the APK comes from `POST /files/uploads` as a `file_ref` bound to the calling channel
//! — one APK, or one `.apks`/`.xapk` bundle of a split app — or as several `file_refs` (the base
//! APK and its splits, field bug 46). One APK is installed with `pm install -r -t PATH`, several
//! as one install session ([`install_session`]); the temporary files are removed whatever
//! happened. A `Failure [INSTALL_…]` line is classified once ([`crate::device::parse::install`]):
//! a split app without its splits is `split_apks_required` naming what to upload, a refusal of
//! the phone or its maker's security settings (`INSTALL_FAILED_USER_RESTRICTED` on
//! Xiaomi, `…ABORTED` on vivo, a verifier) is `device_permission_denied` naming the on-phone
//! fix (field bug 47), the rest `device_command_failed` with the reason's fix. The package name
//! is found by diffing `pm list packages` before and after (no APK parsing on the host): a fresh
//! install names its package; a reinstall of an existing package reports `package: null`. One
//! deadline, [`INSTALL_DEADLINE`], covers the whole call.

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::apk_bundle::{self, Apk};
use super::phone::app_fit;
use super::phone::command;
use super::phone::file_refs::{read_upload, resolve_upload};
use super::phone::install_session;
use super::phone::packages::{
    check_package, list_packages, package_schema, require_installed, Which,
};
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::parse::install::{classify, low_target_sdk, parse_failure, Kind};
use crate::device::shell_quote::command_line;

/// Deadline of a whole install call: package lists, pushes, the install and the clean-up.
pub const INSTALL_DEADLINE: Duration = Duration::from_secs(300);
/// Part of [`INSTALL_DEADLINE`] kept for removing temporary files and abandoning a session.
pub const CLEANUP_RESERVE: Duration = Duration::from_secs(15);
/// Deadline of the small calls (package lists, `rm`, `pm uninstall`).
pub const SMALL_DEADLINE: Duration = Duration::from_secs(30);
/// Most `file_refs` one install takes.
pub const MAX_FILE_REFS: usize = 32;
/// Output cap (bytes).
const OUTPUT_LIMIT: usize = 4 * 1024 * 1024;

async fn installed(ctx: &ToolCtx<'_>) -> Result<BTreeSet<String>, DeviceError> {
    Ok(list_packages(ctx, Which::All, SMALL_DEADLINE)
        .await?
        .into_iter()
        .map(|p| p.package)
        .collect())
}

/// Arguments of `android_app_install`: exactly one of the two.
#[derive(Debug, Deserialize)]
pub struct InstallArgs {
    /// The uploaded APK, or a `.apks`/`.xapk` bundle.
    #[serde(default)]
    pub file_ref: Option<String>,
    /// The uploaded APKs of one split app (base and splits), installed as one session.
    #[serde(default)]
    pub file_refs: Option<Vec<String>>,
    /// Install an app below Android 14+'s target SDK floor anyway
    /// (`--bypass-low-target-sdk-block`, used only when the phone refused it; field row 59).
    #[serde(default)]
    pub allow_low_target_sdk: bool,
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
    /// Bytes of all the APKs installed.
    pub byte_size: usize,
    /// How many APKs were installed (more than one: a split app, in one session).
    pub apk_count: usize,
    /// Why `package` is null, else empty.
    pub note: &'static str,
    /// The phone refused the app's target SDK and it was installed with
    /// `--bypass-low-target-sdk-block` (`allow_low_target_sdk`).
    pub low_target_sdk_bypassed: bool,
}

/// The uploads named by the arguments, as APKs (a bundle unpacked), and the first one's id.
async fn gather(ctx: &ToolCtx<'_>, args: &InstallArgs) -> Result<(Vec<Apk>, String), DeviceError> {
    let refs: Vec<&String> = match (&args.file_ref, &args.file_refs) {
        (Some(r), None) => vec![r],
        (None, Some(rs)) if !rs.is_empty() && rs.len() <= MAX_FILE_REFS => rs.iter().collect(),
        (None, Some(_)) => {
            return Err(DeviceError::InvalidArguments(format!(
                "file_refs must hold 1 to {MAX_FILE_REFS} file_refs"
            )))
        }
        _ => {
            return Err(DeviceError::InvalidArguments(
                "give exactly one of file_ref (one APK, or one .apks bundle) and file_refs (the base APK and its splits)".into(),
            ))
        }
    };
    if refs.iter().collect::<BTreeSet<_>>().len() != refs.len() {
        return Err(DeviceError::InvalidArguments(
            "file_refs names the same file_ref twice".into(),
        ));
    }
    let mut apks = Vec::new();
    let mut tag = String::new();
    for r in refs {
        let upload = resolve_upload(ctx, r).await?;
        if tag.is_empty() {
            tag = upload.file_id.chars().take(16).collect();
        }
        let bytes = read_upload(&upload).await?;
        let unpacked = tokio::task::spawn_blocking(move || apk_bundle::unpack(bytes))
            .await
            .map_err(|e| DeviceError::Internal(format!("bundle reader: {e}")))??;
        apks.extend(unpacked);
    }
    if apks.len() > apk_bundle::MAX_APKS {
        return Err(DeviceError::InvalidArguments(format!(
            "{} APKs given; at most {} are installed at once",
            apks.len(),
            apk_bundle::MAX_APKS
        )));
    }
    // Session names stay unique across uploads.
    for (i, apk) in apks.iter_mut().enumerate() {
        let rest = apk
            .name
            .split_once('_')
            .map_or(apk.name.as_str(), |(_, r)| r);
        apk.name = format!("{i}_{rest}");
    }
    Ok((apks, tag))
}

/// The error of a package manager answer that is not `Success`: one classification of its
/// `Failure` line; an app this phone cannot run names what it needs and what the phone has
/// (`app_fit`, read from the phone only for those kinds).
async fn install_error(ctx: &ToolCtx<'_>, out: &command::Text, apks: &[Apk]) -> DeviceError {
    let split = apks.len() > 1;
    let all = out.all();
    let Some(failure) = parse_failure(&all) else {
        return out.failure("pm install").unwrap_or_else(|| {
            DeviceError::CommandFailed(format!("pm install failed: {}", out.telling_line()))
        });
    };
    let (kind, fix) = classify(&failure, split);
    let fit = match kind {
        Kind::Incompatible => app_fit::explain_on(ctx, &failure, apks).await,
        _ => None,
    };
    let message = match (low_target_sdk(&failure), fit) {
        // The phone's own floor and the APK's target, with the way past it (field row 59).
        (Some((floor, found)), _) => format!(
            "pm install failed: {}: this phone refuses apps that target an SDK below {floor} (Android 14: 23, Android 15 and later: 24) and this APK targets {found}: rebuild it with targetSdkVersion {floor} or higher, or install it anyway with allow_low_target_sdk: true (pm install --bypass-low-target-sdk-block)",
            failure.line
        ),
        (None, Some(fit)) => format!("pm install failed: {}: {fit}", failure.line),
        (None, None) => format!("pm install failed: {}: {fix}", failure.line),
    };
    match kind {
        Kind::SplitMissing => DeviceError::SplitApksRequired(message),
        Kind::Refused => DeviceError::PermissionDenied(message),
        Kind::Incompatible => DeviceError::AppIncompatible(message),
        Kind::Failed => DeviceError::CommandFailed(message),
    }
}

/// `android_app_install`.
pub struct AppInstall;

impl DeviceTool for AppInstall {
    const ID: &'static str = "android_app_install";
    const TITLE: &'static str = "Install an APK";
    const DESCRIPTION: &'static str = "Install (or update) an app on the bound phone. Upload first with POST /files/uploads on this channel, then pass either file_ref (one APK, or one .apks/.xapk bundle of a split app) or file_refs (the base APK and all its split APKs, installed as one session). Runs `pm install -r -t` (one APK) or `pm install-create/-write/-commit` (several), with one 300 s deadline for the whole call (an on-phone confirmation nobody answers ends in device_timeout). Returns package (the newly installed package; null when an installed app was replaced) and apk_count. Errors: policy_denied (gates.allow_install), invalid_arguments (unknown/other-channel file_ref, neither or both of file_ref/file_refs), split_apks_required (a split app without its splits: upload them all), device_permission_denied (the phone or its maker's settings refused, e.g. Xiaomi's \"Install via USB\": the message names the fix), app_incompatible (this phone cannot run the app: an Android older than its minSdkVersion, no native code for the phone's CPU ABIs, a missing feature or library; the message names what the app needs and what the phone has), device_command_failed (pm's Failure [INSTALL_…] reason and its fix; an app below Android 14+'s target SDK floor names it and allow_low_target_sdk).";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = super::phone::install_session::INSTALL_BACKENDS;
    type Args = InstallArgs;
    type Output = InstallOutput;

    fn input_schema() -> Value {
        let file_ref = json!({"type": "string", "minLength": 1, "maxLength": 200, "description": "file_ref returned by POST /files/uploads on this channel."});
        json!({"type": "object", "properties": {
            "file_ref": {"type": "string", "minLength": 1, "maxLength": 200, "description": "file_ref returned by POST /files/uploads on this channel: one APK, or one .apks/.xapk bundle (a zip of the APKs of a split app)."},
            "file_refs": {"type": "array", "minItems": 1, "maxItems": MAX_FILE_REFS, "items": file_ref, "description": "file_refs of the base APK and every split APK of one app (uploaded one by one on this channel), installed as one install session."},
            "allow_low_target_sdk": {"type": "boolean", "default": false, "description": "Android 14+ refuses apps whose targetSdkVersion is below its floor (23 on Android 14, 24 on 15 and later; Failure [INSTALL_FAILED_DEPRECATED_SDK_VERSION]). true: when the phone refuses the app for that, install it again with pm install --bypass-low-target-sdk-block (the result says low_target_sdk_bypassed)."}
        }, "oneOf": [{"required": ["file_ref"]}, {"required": ["file_refs"]}]})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["installed", "package", "new_packages", "byte_size", "apk_count", "note", "low_target_sdk_bypassed"], "properties": {
            "installed": {"const": true}, "package": {"type": ["string", "null"]},
            "new_packages": {"type": "array", "items": {"type": "string"}},
            "byte_size": {"type": "integer", "minimum": 0},
            "apk_count": {"type": "integer", "minimum": 1}, "note": {"type": "string"},
            "low_target_sdk_bypassed": {"type": "boolean"}
        }})
    }

    /// One deadline for the lists before and after, the pushes, the install and the clean-up.
    fn deadline(_: &InstallArgs) -> Duration {
        INSTALL_DEADLINE
    }

    async fn run(args: InstallArgs, ctx: &ToolCtx<'_>) -> Result<InstallOutput, DeviceError> {
        if !ctx.policy.gates.allow_install {
            return Err(DeviceError::Policy {
                rule: "gates.allow_install",
                why: "installing apps is disabled for this phone".into(),
            });
        }
        let (apks, tag) = gather(ctx, &args).await?;
        let before = installed(ctx).await?;
        let (out, bypassed) =
            install_session::install(ctx, &apks, &tag, CLEANUP_RESERVE, args.allow_low_target_sdk)
                .await?;
        if !out.all().lines().any(|l| l.trim() == "Success") {
            return Err(install_error(ctx, &out, &apks).await);
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
            byte_size: apks.iter().map(|a| a.bytes.len()).sum(),
            apk_count: apks.len(),
            low_target_sdk_bypassed: bypassed,
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
    const BACKENDS: &'static [&'static str] = &["pm_uninstall"];
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
                .map(|f| f.line)
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
    fn outputs_match_the_schema() {
        assert_output::<AppInstall>(&InstallOutput {
            installed: true,
            package: None,
            new_packages: vec![],
            byte_size: 1024,
            apk_count: 1,
            low_target_sdk_bypassed: false,
            note: "replaced",
        });
        assert_output::<AppInstall>(&InstallOutput {
            installed: true,
            package: Some("com.example.notes".into()),
            new_packages: vec!["com.example.notes".into()],
            byte_size: 1024,
            apk_count: 3,
            low_target_sdk_bypassed: true,
            note: "",
        });
        assert_output::<AppUninstall>(&UninstallOutput {
            package: "com.example.notes".into(),
            uninstalled: true,
        });
    }
}
