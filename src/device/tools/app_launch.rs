//! `android_app_launch`: resolve the LAUNCHER activity (LEANBACK_LAUNCHER fallback; when the
//! phone resolves to the framework's chooser, the app's own launcher activities from
//! `query-activities`, field bug 29; before Android 7, which has no `cmd`, the app's
//! `android.intent.action.MAIN` filters in the Activity Resolver Table of `dumpsys package PKG`),
//! an installed app that resolves nothing is read from `dumpsys package PKG`: disabled, or its
//! launcher activity disabled, is `app_disabled` (field row 60, `phone::app_state`); refuse
//! high-risk apps (`[risk]` of the device policy), `am start -n PKG/ACT`, then poll the
//! foreground package (`dumpsys window windows` focus, `dumpsys activity activities` resumed
//! activity, parsed by `device::parse::window`) for up to [`VERIFY_WINDOW`]. Never `monkey`
//! (field bug 16).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::app_state::{disabled_refusal, is_suspended_app_dialog, paused_refusal};
use super::phone::command::{self, compound, sections};
use super::phone::lock_task::{lock_task_error, start_refusal};
use super::phone::packages::{
    check_package, cmd_unsupported, package_schema, query_activities, LAUNCHER, LEANBACK,
};
use super::phone::readiness::{require_unlocked, Readiness};
use super::{DeviceTool, LockRule, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::parse::displays::{self, WindowDump};
use crate::device::parse::lock_task::{parse_lock_task, LockTaskMode, LockTaskState};
use crate::device::parse::{keyguard, package, window};
use crate::device::policy::glob;
use crate::device::shell_quote::command_line;

/// Deadline of each shell call of `android_app_launch`.
pub const LAUNCH_DEADLINE: Duration = Duration::from_secs(10);
/// How long `android_app_launch` waits for the package to reach the foreground.
pub const VERIFY_WINDOW: Duration = Duration::from_secs(5);
/// Pause between foreground checks.
const VERIFY_POLL: Duration = Duration::from_millis(250);
/// Output cap of each shell call (bytes; `dumpsys activity activities` can be ~1 MB).
const OUTPUT_LIMIT: usize = 8 * 1024 * 1024;

/// Refuses packages and activities listed under `[risk]` of the device policy.
fn check_risk(ctx: &ToolCtx<'_>, pkg: &str, activity: Option<&str>) -> Result<(), DeviceError> {
    if let Some(g) = ctx
        .policy
        .risk
        .refuse_packages
        .iter()
        .find(|g| glob(g, pkg))
    {
        return Err(DeviceError::Policy {
            rule: "risk.refuse_packages",
            why: format!("{pkg} matches `{g}`"),
        });
    }
    if let Some(act) = activity {
        let comp = format!("{pkg}/{act}");
        if let Some(g) = ctx
            .policy
            .risk
            .refuse_activities
            .iter()
            .find(|g| glob(g, &comp))
        {
            return Err(DeviceError::Policy {
                rule: "risk.refuse_activities",
                why: format!("{comp} matches `{g}`"),
            });
        }
    }
    Ok(())
}

/// The launcher activity of `pkg` as `(component, category)`, or the precise reason there is none.
async fn resolve_launcher(
    ctx: &ToolCtx<'_>,
    pkg: &str,
) -> Result<(String, &'static str), DeviceError> {
    let resolve = |cat: &str| {
        command_line(&[
            "cmd",
            "package",
            "resolve-activity",
            "--brief",
            "-c",
            cat,
            pkg,
        ])
    };
    // The app's own launcher activities, for when resolve-activity answers the framework's
    // chooser (`android/com.android.internal.app.ResolverActivity`: an app with two launcher
    // activities and no default; bytedance/btrace PR #169, field bug 29).
    let own = |cat: &str| query_activities(cat, Some(pkg));
    let cmd = compound(&[
        resolve(LAUNCHER),
        resolve(LEANBACK),
        command_line(&["pm", "path", pkg]),
        own(LAUNCHER),
        own(LEANBACK),
    ]);
    let out = command::run(ctx, &cmd, LAUNCH_DEADLINE, OUTPUT_LIMIT).await?;
    if let Some(e) = out.service_missing() {
        return Err(e);
    }
    let s = sections(&out.stdout, 5);
    for (text, category) in [(&s[0], "launcher"), (&s[1], "leanback")] {
        if let Some((p, class)) = package::parse_resolve_activity_brief(text) {
            if p == pkg {
                return Ok((format!("{p}/{class}"), category));
            }
        }
    }
    // Only an activity of `pkg` itself is the app's: the chooser (package `android`) or
    // another app's activity never is.
    for (text, category) in [(&s[3], "launcher"), (&s[4], "leanback")] {
        let first = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.contains('=') && !l.contains(char::is_whitespace))
            .filter_map(package::parse_component)
            .find(|(p, _)| p == pkg);
        if let Some((p, class)) = first {
            return Ok((format!("{p}/{class}"), category));
        }
    }
    if !s[2].lines().any(|l| l.trim().starts_with("package:")) {
        return Err(DeviceError::AppNotInstalled {
            package: pkg.to_string(),
            hint: " (see android_app_list)",
        });
    }
    // Installed, and nothing resolves: read the package (field row 60: a disabled app or
    // launcher activity resolves nothing, and an Android 6 table still lists it). Before
    // Android 7 there is no `cmd`: the app's MAIN filters come from the Activity Resolver Table
    // of the same dump, as appium-adb does below API 24.
    let out = command::run(
        ctx,
        &command_line(&["dumpsys", "package", pkg]),
        LAUNCH_DEADLINE,
        OUTPUT_LIMIT,
    )
    .await?;
    if let Some(e) = out.service_missing() {
        return Err(e);
    }
    if let Some(e) = disabled_refusal(pkg, &out.stdout, &[LAUNCHER, LEANBACK]) {
        return Err(e);
    }
    if cmd_unsupported(&s[0]) && cmd_unsupported(&s[1]) {
        let table = package::parse_activity_resolver_table(&out.stdout);
        for (cat, category) in [(LAUNCHER, "launcher"), (LEANBACK, "leanback")] {
            if let Some(class) = package::resolver_main_activity(&table, pkg, cat) {
                return Ok((format!("{pkg}/{class}"), category));
            }
        }
    }
    Err(DeviceError::NoLauncherActivity {
        package: pkg.to_string(),
    })
}

/// What one verification poll saw: the default display's focused package, the resumed
/// activity's package, and the readiness read from the same dumps (the lock screen over the
/// app: Android 12+ print `KeyguardController` and the display blocks in `dumpsys activity
/// activities`; the resumed activity stays named behind the keyguard, as in
/// `tests/fixtures/activity/mtk-tablet-android13-dumpsys-activity-activities.txt`).
struct Seen {
    focus: Option<String>,
    resumed: Option<String>,
    readiness: Readiness,
    /// A framework crash/ANR dialog holding the focus (field bug 79).
    dialog: Option<window::AppDialog>,
    /// Lock task mode from the activity dump (field bug 81).
    lock_task: Option<LockTaskState>,
    /// The framework's "App paused" activity is in front (field row 64).
    paused_dialog: bool,
}

/// The foreground package: focused window, else resumed activity.
async fn foreground(ctx: &ToolCtx<'_>) -> Result<Seen, DeviceError> {
    let cmd = compound(&[
        command_line(&["dumpsys", "window", "windows"]),
        command_line(&["dumpsys", "activity", "activities"]),
    ]);
    let out = command::run(ctx, &cmd, LAUNCH_DEADLINE, OUTPUT_LIMIT).await?;
    if let Some(e) = out.service_missing() {
        return Err(e);
    }
    let s = sections(&out.stdout, 2);
    let focused = displays::parse_current_focus(&s[0]);
    let dialog = focused.as_ref().and_then(|f| f.dialog.clone());
    let paused_dialog = focused
        .as_ref()
        .and_then(|f| Some((f.package.as_deref()?, f.activity.as_deref()?)))
        .is_some_and(|(p, a)| is_suspended_app_dialog(p, a));
    let focus = focused.and_then(|f| f.package);
    let resumed_component = window::parse_resumed_activity(&s[1]);
    let paused_dialog = paused_dialog
        || resumed_component
            .as_ref()
            .is_some_and(|(p, a)| is_suspended_app_dialog(p, a));
    let resumed = resumed_component.map(|(p, _)| p);
    let lock_task = parse_lock_task(&s[1]);
    let mut readiness = Readiness::from_dumps(
        &WindowDump::parse(&out.stdout),
        &keyguard::parse_keyguard(&out.stdout),
    );
    if readiness.locked.is_some() {
        readiness = ctx.readiness.record(readiness);
    }
    Ok(Seen {
        focus,
        resumed,
        readiness,
        dialog,
        lock_task,
        paused_dialog,
    })
}

/// Arguments.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// Package to launch.
    pub package: String,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// The package.
    pub package: String,
    /// `PKG/ACTIVITY` started.
    pub component: String,
    /// `launcher` or `leanback`.
    pub launcher_category: &'static str,
    /// The foreground package seen (the package itself).
    pub foreground_package: String,
    /// Always `true`: the package reached the foreground.
    pub verified: bool,
    /// From `am start` to the foreground, ms.
    pub elapsed_ms: u64,
}

/// `android_app_launch`.
pub struct AppLaunch;

impl DeviceTool for AppLaunch {
    const ID: &'static str = "android_app_launch";
    const TITLE: &'static str = "Launch an app";
    const DESCRIPTION: &'static str = "Open an app by package name on the bound phone: resolves its LAUNCHER activity (LEANBACK_LAUNCHER for TV apps), starts it, and waits up to 5 s until the package is in the foreground (verified: true). Errors: app_not_installed, no_launcher_activity (installed but not launchable), app_disabled (installed but disabled, or its launcher activity is, or paused — Android showed its \"App paused\" dialog: the message names who can enable or unpause it), policy_denied (high-risk app), device_command_failed (started but not in the foreground), device_locked (the lock screen is showing: nothing started, or started behind it and not verified), app_crashed / app_not_responding (the system's \"keeps stopping\" / \"isn't responding\" dialog holds the focus: the message names the app and the dialog's buttons), device_lock_task (a kiosk or screen pinning keeps another app in front).";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = &["am_start"];
    const RECEIPT: bool = true;
    const LOCK_RULE: LockRule = LockRule::Refused;
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["package"], "properties": {
            "package": package_schema("Android package name (e.g. com.android.settings) to launch.")
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["package", "component", "launcher_category", "foreground_package", "verified", "elapsed_ms"], "properties": {
            "package": {"type": "string"}, "component": {"type": "string"},
            "launcher_category": {"type": "string", "enum": ["launcher", "leanback"]},
            "foreground_package": {"type": "string"}, "verified": {"const": true},
            "elapsed_ms": {"type": "integer", "minimum": 0}
        }})
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let pkg = check_package(&args.package)?;
        check_risk(ctx, pkg, None)?;
        let (component, category) = resolve_launcher(ctx, pkg).await?;
        let activity = component.split_once('/').map(|(_, a)| a);
        check_risk(ctx, pkg, activity)?;
        // Nothing is started behind the lock screen (field bug 48).
        require_unlocked(ctx).await?;
        let started = Instant::now();
        let out = command::run(
            ctx,
            &command_line(&["am", "start", "-n", &component]),
            LAUNCH_DEADLINE,
            OUTPUT_LIMIT,
        )
        .await?;
        if let Some(e) = start_refusal(ctx, &out, &component).await {
            return Err(e);
        }
        loop {
            let Seen {
                focus,
                resumed,
                readiness,
                dialog,
                lock_task,
                paused_dialog,
            } = foreground(ctx).await?;
            // Suspended ("paused"): the framework's dialog activity came up instead.
            if paused_dialog {
                return Err(paused_refusal(pkg, &format!("{component} was started")));
            }
            // Never verified behind the lock screen (it came up during the launch, or this
            // phone's window dump did not show it before `am start`).
            if let Some(DeviceError::Locked {
                screen_off,
                locked,
                secure,
                ..
            }) = readiness.refusal()
            {
                return Err(DeviceError::Locked {
                    screen_off,
                    locked,
                    secure,
                    done: Some(format!(
                        "{component} was started but is behind the lock screen, not verified"
                    )),
                });
            }
            // A crash or ANR dialog over the screen: the app is not usable, whoever's it is
            // (the resumed activity stays named under an ANR dialog).
            if let Some(dialog) = dialog {
                return Err(DeviceError::AppDialog {
                    dialog,
                    launched: pkg.to_string(),
                    started: format!("{component} was started"),
                });
            }
            // Kept out by lock task mode on a build whose `am start` said nothing.
            if let Some(state) = lock_task
                .filter(|t| t.mode != LockTaskMode::None && t.package.as_deref() != Some(pkg))
            {
                return Err(lock_task_error(Some(state), &component));
            }
            if focus.as_deref() == Some(pkg) || resumed.as_deref() == Some(pkg) {
                return Ok(Output {
                    package: pkg.to_string(),
                    component,
                    launcher_category: category,
                    foreground_package: pkg.to_string(),
                    verified: true,
                    elapsed_ms: started.elapsed().as_millis() as u64,
                });
            }
            if started.elapsed() >= VERIFY_WINDOW {
                let now = focus.or(resumed).unwrap_or_else(|| "unknown".into());
                return Err(DeviceError::CommandFailed(format!("am start succeeded but {pkg} did not reach the foreground within {} s (foreground: {now}); the screen may be locked or the app closed itself — check android_screenshot", VERIFY_WINDOW.as_secs())));
            }
            tokio::time::sleep(VERIFY_POLL).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn outputs_match_the_schema() {
        assert_output::<AppLaunch>(&Output {
            package: "com.android.settings".into(),
            component: "com.android.settings/.Settings".into(),
            launcher_category: "launcher",
            foreground_package: "com.android.settings".into(),
            verified: true,
            elapsed_ms: 120,
        });
    }
}
