//! App tools: `android_app_list` and `android_app_stop` here; `android_app_launch`,
//! `android_app_install` / `android_app_uninstall` and `android_open_url` have their own files.
//!
//! Launching never uses `monkey` (field bug 16: `monkey -p PKG 1` exits 251 with `SYS_KEYS has no
//! physical keys` on valid apps). It resolves the launcher activity with
//! `cmd package resolve-activity --brief -c android.intent.category.LAUNCHER PKG` (AOSP
//! `PackageManagerShellCommand.runResolveActivity`, Android 7+), falls back to
//! `LEANBACK_LAUNCHER` (TV apps, field bug 17), starts it with `am start -n PKG/ACT`, and judges
//! success by the foreground package (`dumpsys window windows` / `dumpsys activity activities`).

use std::collections::BTreeSet;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::command::{self, am_failure, compound, sections};
use super::phone::packages::{
    self, check_package, cmd_unsupported, list_packages, package_schema, query_activities,
    require_installed, Which, LAUNCHER, LEANBACK,
};
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::parse::package;
use crate::device::shell_quote::command_line;

/// Deadline of each shell call of `android_app_list` (package lists, launcher queries, one
/// batch of `dumpsys package`).
pub const LIST_DEADLINE: Duration = Duration::from_secs(30);
/// Deadline of each shell call of `android_app_stop`.
pub const STOP_DEADLINE: Duration = Duration::from_secs(10);
/// Output cap of app-tool shell calls (bytes; `dumpsys activity activities` can be ~1 MB).
pub const OUTPUT_LIMIT: usize = 8 * 1024 * 1024;

/// Packages with an activity in `cmd package query-activities --brief` output (component lines
/// `pkg/.Act`; the `priority=…` lines are skipped). `None` when the command is unsupported.
pub fn parse_query_activities(out: &str) -> Option<BTreeSet<String>> {
    if cmd_unsupported(out) {
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

/// Arguments of `android_app_list`.
#[derive(Debug, Deserialize)]
pub struct ListArgs {
    /// Also list system packages.
    #[serde(default)]
    pub include_system: bool,
}

/// Which launcher category makes a package launchable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LauncherCategory {
    /// `android.intent.category.LAUNCHER`.
    Launcher,
    /// `android.intent.category.LEANBACK_LAUNCHER` (TV).
    Leanback,
}

/// One package.
#[derive(Debug, Serialize)]
pub struct AppEntry {
    /// Package name.
    pub package: String,
    /// `versionName`, `null` when the phone reports none.
    pub version_name: Option<String>,
    /// Whether it has a launcher activity; `null` when the phone cannot tell.
    pub has_launcher: Option<bool>,
    /// Which category, `null` when none.
    pub launcher_category: Option<LauncherCategory>,
    /// Not user-installed.
    pub system: bool,
    /// Always `null`: plain ADB cannot read app labels.
    pub label: Option<String>,
}

/// Result of `android_app_list`.
#[derive(Debug, Serialize)]
pub struct ListOutput {
    /// Number of packages.
    pub count: usize,
    /// As asked.
    pub include_system: bool,
    /// The packages, sorted by name.
    pub packages: Vec<AppEntry>,
    /// Why labels are null.
    pub label_note: &'static str,
}

/// `android_app_list`.
pub struct AppList;

impl DeviceTool for AppList {
    const ID: &'static str = "android_app_list";
    const TITLE: &'static str = "List installed apps";
    const DESCRIPTION: &'static str = "List the apps installed on the bound phone: user-installed apps by default (`pm list packages -3`), all packages with include_system. Per package: package, version_name (null when the phone reports none), has_launcher (true when it has a LAUNCHER or LEANBACK_LAUNCHER activity; null when the phone cannot tell), launcher_category (launcher, leanback or null), system, label (always null: plain ADB cannot read app labels). No side effects.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    const BACKENDS: &'static [&'static str] = &["pm_list_packages"];
    type Args = ListArgs;
    type Output = ListOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "properties": {
            "include_system": {"type": "boolean", "description": "Also list system packages (default false)."}
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["count", "include_system", "packages", "label_note"], "properties": {
            "count": {"type": "integer", "minimum": 0}, "include_system": {"type": "boolean"},
            "label_note": {"type": "string"},
            "packages": {"type": "array", "items": {"type": "object",
                "required": ["package", "version_name", "has_launcher", "launcher_category", "system", "label"],
                "properties": {
                    "package": {"type": "string"}, "version_name": {"type": ["string", "null"]},
                    "has_launcher": {"type": ["boolean", "null"]},
                    "launcher_category": {"enum": ["launcher", "leanback", null]},
                    "system": {"type": "boolean"}, "label": {"type": "null"}
                }}}
        }})
    }

    /// The package lists, the launcher queries and the version batches together.
    fn deadline(_: &ListArgs) -> Duration {
        LIST_DEADLINE * 2
    }

    async fn run(args: ListArgs, ctx: &ToolCtx<'_>) -> Result<ListOutput, DeviceError> {
        let include_system = args.include_system;
        let user: BTreeSet<String> = list_packages(ctx, Which::ThirdParty, LIST_DEADLINE)
            .await?
            .into_iter()
            .map(|p| p.package)
            .collect();
        let listed: BTreeSet<String> = if include_system {
            list_packages(ctx, Which::All, LIST_DEADLINE)
                .await?
                .into_iter()
                .map(|p| p.package)
                .chain(user.iter().cloned())
                .collect()
        } else {
            user.clone()
        };
        let out = command::run(
            ctx,
            &compound(&[
                query_activities(LAUNCHER, None),
                query_activities(LEANBACK, None),
            ]),
            LIST_DEADLINE,
            OUTPUT_LIMIT,
        )
        .await?;
        if let Some(e) = out.service_missing() {
            return Err(e);
        }
        let s = sections(&out.stdout, 2);
        let launcher = parse_query_activities(&s[0]);
        let leanback = parse_query_activities(&s[1]);
        let names: Vec<String> = listed.into_iter().collect();
        let versions = version_names(ctx, &names).await?;
        let packages: Vec<AppEntry> = names
            .into_iter()
            .zip(versions)
            .map(|(p, version_name)| {
                let kind = match (&launcher, &leanback) {
                    (Some(l), _) if l.contains(&p) => Some(LauncherCategory::Launcher),
                    (_, Some(t)) if t.contains(&p) => Some(LauncherCategory::Leanback),
                    _ => None,
                };
                AppEntry {
                    has_launcher: launcher.as_ref().map(|_| kind.is_some()),
                    launcher_category: kind,
                    system: !user.contains(&p),
                    package: p,
                    version_name,
                    label: None,
                }
            })
            .collect();
        Ok(ListOutput {
            count: packages.len(),
            include_system,
            packages,
            label_note: "labels are null: plain ADB cannot read app labels (needs aapt or a helper app on the phone)",
        })
    }
}

/// `versionName` of each package, batched ([`packages::dumpsys_package_lines`]).
async fn version_names(
    ctx: &ToolCtx<'_>,
    names: &[String],
) -> Result<Vec<Option<String>>, DeviceError> {
    let out =
        packages::dumpsys_package_lines(ctx, names, "versionName=", LIST_DEADLINE, OUTPUT_LIMIT)
            .await?;
    Ok(out.iter().map(|s| parse_version_name(s)).collect())
}

/// Arguments of `android_app_stop`.
#[derive(Debug, Deserialize)]
pub struct StopArgs {
    /// Package to stop.
    pub package: String,
}

/// Result of `android_app_stop`.
#[derive(Debug, Serialize)]
pub struct StopOutput {
    /// The package.
    pub package: String,
    /// Always `true` (a failure is an error).
    pub stopped: bool,
}

/// `android_app_stop`: `am force-stop PKG` (after `pm path` tells whether it is installed).
pub struct AppStop;

impl DeviceTool for AppStop {
    const ID: &'static str = "android_app_stop";
    const TITLE: &'static str = "Force-stop an app";
    const DESCRIPTION: &'static str = "Force-stop an app on the bound phone (`am force-stop`): its processes end and its activities close; the app's data is kept. Stopping an app that is not running succeeds. Errors: app_not_installed.";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = &["am_force_stop"];
    type Args = StopArgs;
    type Output = StopOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["package"], "properties": {
            "package": package_schema("Android package name (e.g. com.android.settings) to stop.")
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["package", "stopped"], "properties": {
            "package": {"type": "string"}, "stopped": {"const": true}
        }})
    }

    /// `pm path`, then `am force-stop`.
    fn deadline(_: &StopArgs) -> Duration {
        STOP_DEADLINE * 2
    }

    async fn run(args: StopArgs, ctx: &ToolCtx<'_>) -> Result<StopOutput, DeviceError> {
        let pkg = check_package(&args.package)?;
        require_installed(ctx, pkg, STOP_DEADLINE).await?;
        let out = command::run(
            ctx,
            &command_line(&["am", "force-stop", pkg]),
            STOP_DEADLINE,
            OUTPUT_LIMIT,
        )
        .await?;
        if let Some(e) = am_failure(&out, "am force-stop") {
            return Err(e);
        }
        Ok(StopOutput {
            package: pkg.to_string(),
            stopped: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

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

    #[test]
    fn outputs_match_the_schema() {
        let entry = |system, kind: Option<LauncherCategory>| AppEntry {
            package: "com.example.notes".into(),
            version_name: None,
            has_launcher: Some(kind.is_some()),
            launcher_category: kind,
            system,
            label: None,
        };
        assert_output::<AppList>(&ListOutput {
            count: 2,
            include_system: true,
            packages: vec![
                entry(false, Some(LauncherCategory::Leanback)),
                entry(true, None),
            ],
            label_note: "labels are null",
        });
        assert_output::<AppStop>(&StopOutput {
            package: "com.example.notes".into(),
            stopped: true,
        });
    }
}
