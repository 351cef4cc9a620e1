//! App tools: `android_app_list`, `android_app_launch`, `android_app_stop` here;
//! `android_app_install` / `android_app_uninstall` in [`install`], `android_open_url` in [`url`].
//!
//! Launching never uses `monkey` (field bug 16: `monkey -p PKG 1` exits 251 with `SYS_KEYS has no
//! physical keys` on valid apps). It resolves the launcher activity with
//! `cmd package resolve-activity --brief -c android.intent.category.LAUNCHER PKG` (AOSP
//! `PackageManagerShellCommand.runResolveActivity`, Android 7+), falls back to
//! `LEANBACK_LAUNCHER` (TV apps, field bug 17), starts it with `am start -n PKG/ACT`, and judges
//! success by the foreground package (`dumpsys window windows` / `dumpsys activity activities`).

mod install;
mod launch;
mod url;

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::{json, Value};

use super::util::{self, compound, sections, Text};
use super::{ToolCtx, ToolError};
use crate::device::parse::package;
use crate::device::shell_quote::command_line;
use crate::protocol::card::ToolDecl;
use crate::protocol::ErrorCode;

pub(super) use install::resolve_ref;
pub use install::{app_install, app_uninstall};
pub use launch::app_launch;
pub use url::open_url;

/// Deadline of each shell call of `android_app_list` (package lists, launcher queries, one
/// batch of `dumpsys package`).
pub const LIST_DEADLINE: Duration = Duration::from_secs(30);
/// Deadline of each shell call of `android_app_stop`.
pub const STOP_DEADLINE: Duration = Duration::from_secs(10);
/// Output cap of app-tool shell calls (bytes; `dumpsys activity activities` can be ~1 MB).
pub const OUTPUT_LIMIT: usize = 8 * 1024 * 1024;
/// Longest command line of one `dumpsys package` batch (bytes; adb host requests carry a
/// 4-hex-digit length, old adbd a 4 KiB payload).
const BATCH_BYTES: usize = 3500;

const LAUNCHER: &str = "android.intent.category.LAUNCHER";
const LEANBACK: &str = "android.intent.category.LEANBACK_LAUNCHER";

/// Whether the output says the command itself is missing (Android < 7 has no `cmd package`).
fn unsupported(t: &str) -> bool {
    t.contains("Unknown command")
        || t.contains("Can't find service")
        || t.contains("not found")
        || t.contains("inaccessible")
}

/// Packages with an activity in `cmd package query-activities --brief` output (component lines
/// `pkg/.Act`; the `priority=…` lines are skipped). `None` when the command is unsupported.
pub fn parse_query_activities(out: &str) -> Option<BTreeSet<String>> {
    if unsupported(out) {
        return None;
    }
    Some(
        out.lines()
            .map(str::trim)
            .filter(|l| !l.contains('=') && !l.contains(char::is_whitespace))
            .filter_map(package::parse_component)
            .map(|(p, _)| p)
            .collect(),
    )
}

/// The `versionName=` value in `dumpsys package PKG` output (AOSP
/// `ComputerEngine.dumpPackagesLPr`: `    versionName=1.2.3`); the first one wins (later ones
/// belong to the hidden system package of an updated system app). `None` when absent or `null`.
pub fn parse_version_name(out: &str) -> Option<String> {
    let v = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("versionName="))?
        .trim();
    (!v.is_empty() && v != "null").then(|| v.to_string())
}

fn query(category: &str) -> String {
    command_line(&[
        "cmd",
        "package",
        "query-activities",
        "--brief",
        "-a",
        "android.intent.action.MAIN",
        "-c",
        category,
    ])
}

/// `android_app_list`.
pub async fn app_list(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let include_system = args
        .get("include_system")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut parts = vec![
        command_line(&["pm", "list", "packages", "-3"]),
        query(LAUNCHER),
        query(LEANBACK),
    ];
    if include_system {
        parts.push(command_line(&["pm", "list", "packages"]));
    }
    let out = util::run(ctx, &compound(&parts), LIST_DEADLINE, OUTPUT_LIMIT).await?;
    let s = sections(&out.stdout, 4);
    let user: BTreeSet<String> = package::parse_pm_list_packages(&s[0])
        .into_iter()
        .map(|p| p.package)
        .collect();
    let listed: BTreeSet<String> = if include_system {
        package::parse_pm_list_packages(&s[3])
            .into_iter()
            .map(|p| p.package)
            .chain(user.iter().cloned())
            .collect()
    } else {
        user.clone()
    };
    let launcher = parse_query_activities(&s[1]);
    let leanback = parse_query_activities(&s[2]);
    let names: Vec<String> = listed.into_iter().collect();
    let versions = version_names(ctx, &names).await?;
    let packages: Vec<Value> = names
        .iter()
        .zip(versions)
        .map(|(p, version)| {
            let kind = match (&launcher, &leanback) {
                (Some(l), _) if l.contains(p) => Some("launcher"),
                (_, Some(t)) if t.contains(p) => Some("leanback"),
                _ => None,
            };
            let has_launcher = launcher.as_ref().map(|_| kind.is_some());
            json!({
                "package": p,
                "version_name": version,
                "has_launcher": has_launcher,
                "launcher_category": kind,
                "system": !user.contains(p),
                "label": Value::Null,
            })
        })
        .collect();
    Ok(json!({
        "count": packages.len(),
        "include_system": include_system,
        "packages": packages,
        "label_note": "labels are null: plain ADB cannot read app labels (needs aapt or a helper app on the phone)",
    }))
}

/// `versionName` of each package, batched: one shell call per ≤ [`BATCH_BYTES`] of command line.
async fn version_names(
    ctx: &ToolCtx<'_>,
    names: &[String],
) -> Result<Vec<Option<String>>, ToolError> {
    let mut out = Vec::with_capacity(names.len());
    let mut batch: Vec<String> = Vec::new();
    let mut len = 0;
    for (i, name) in names.iter().enumerate() {
        let part = format!(
            "{} | {}",
            command_line(&["dumpsys", "package", name]),
            command_line(&["grep", "-F", "versionName="])
        );
        len += part.len() + util::SEP.len() + 10;
        batch.push(part);
        if len >= BATCH_BYTES || i + 1 == names.len() {
            let n = batch.len();
            let text = util::run(ctx, &compound(&batch), LIST_DEADLINE, OUTPUT_LIMIT).await?;
            out.extend(
                sections(&text.stdout, n)
                    .iter()
                    .take(n)
                    .map(|s| parse_version_name(s)),
            );
            batch.clear();
            len = 0;
        }
    }
    Ok(out)
}

/// Maps a failed `am` call (non-zero exit, `Error:` or an exception in its output).
pub(super) fn am_failure(out: &Text, what: &str) -> Option<ToolError> {
    let all = out.all();
    let failed = out.exit_code.is_some_and(|c| c != 0)
        || all.lines().any(|l| l.trim_start().starts_with("Error"))
        || all.contains("Exception");
    failed.then(|| {
        let code = if all.contains("SecurityException") || all.contains("Permission Denial") {
            ErrorCode::DevicePermissionDenied
        } else {
            ErrorCode::DeviceCommandFailed
        };
        let first = all
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("Error") || l.contains("Exception"))
            .unwrap_or("")
            .chars()
            .take(300)
            .collect::<String>();
        ToolError::new(
            code,
            format!("{what} failed (exit {:?}): {first}", out.exit_code),
        )
    })
}

/// `android_app_stop`: `am force-stop PKG` (after `pm path` tells whether it is installed).
pub async fn app_stop(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let pkg = util::package_arg(args)?;
    util::require_installed(ctx, pkg, STOP_DEADLINE).await?;
    let out = util::run(
        ctx,
        &command_line(&["am", "force-stop", pkg]),
        STOP_DEADLINE,
        OUTPUT_LIMIT,
    )
    .await?;
    if let Some(e) = am_failure(&out, "am force-stop") {
        return Err(e);
    }
    Ok(json!({"package": pkg, "stopped": true}))
}

fn package_arg(what: &str) -> Value {
    json!({"type": "string", "minLength": 3, "maxLength": 255, "pattern": util::PACKAGE_PATTERN,
           "description": format!("Android package name (e.g. com.android.settings) {what}.")})
}

/// Card declarations of the app tools.
pub fn decls() -> Vec<ToolDecl> {
    let mut v = vec![
        ToolDecl {
            tool_id: "android_app_list",
            title: "List installed apps",
            description: "List the apps installed on the bound phone: user-installed apps by default (`pm list packages -3`), all packages with include_system. Per package: package, version_name (null when the phone reports none), has_launcher (true when it has a LAUNCHER or LEANBACK_LAUNCHER activity; null when the phone cannot tell), launcher_category (launcher, leanback or null), system, label (always null: plain ADB cannot read app labels). No side effects.",
            side_effect: false,
            input_schema: json!({"type": "object", "properties": {
                "include_system": {"type": "boolean", "description": "Also list system packages (default false)."}
            }}),
            output_schema: json!({"type": "object", "required": ["count", "packages"]}),
        },
        ToolDecl {
            tool_id: "android_app_launch",
            title: "Launch an app",
            description: "Open an app by package name on the bound phone: resolves its LAUNCHER activity (LEANBACK_LAUNCHER for TV apps), starts it, and waits up to 5 s until the package is in the foreground (verified: true). Errors: app_not_installed, no_launcher_activity (installed but not launchable), policy_denied (high-risk app), device_command_failed (started but not in the foreground, e.g. locked screen).",
            side_effect: true,
            input_schema: json!({"type": "object", "required": ["package"], "properties": {
                "package": package_arg("to launch")
            }}),
            output_schema: json!({"type": "object", "required": ["package", "component", "verified"]}),
        },
        ToolDecl {
            tool_id: "android_app_stop",
            title: "Force-stop an app",
            description: "Force-stop an app on the bound phone (`am force-stop`): its processes end and its activities close; the app's data is kept. Stopping an app that is not running succeeds. Errors: app_not_installed.",
            side_effect: true,
            input_schema: json!({"type": "object", "required": ["package"], "properties": {
                "package": package_arg("to stop")
            }}),
            output_schema: json!({"type": "object", "required": ["package", "stopped"]}),
        },
    ];
    v.extend(install::decls());
    v.push(url::decl());
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_activities_and_version_names() {
        let out = "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\ncom.android.settings/.Settings\ncom.example.notes/com.example.notes.MainActivity\n";
        let set = parse_query_activities(out).unwrap();
        assert!(set.contains("com.android.settings") && set.contains("com.example.notes"));
        assert_eq!(set.len(), 2);
        assert!(parse_query_activities("No activities found\n")
            .unwrap()
            .is_empty());
        assert!(parse_query_activities("cmd: Can't find service: package\n").is_none());
        assert_eq!(
            parse_version_name(
                "    versionCode=3 minSdk=24\n    versionName=1.2 beta\n    versionName=1.0\n"
            ),
            Some("1.2 beta".into())
        );
        assert_eq!(parse_version_name("    versionName=null\n"), None);
        assert_eq!(parse_version_name(""), None);
    }
}
