//! `android_app_launch`: resolve the LAUNCHER activity (LEANBACK_LAUNCHER fallback), refuse
//! high-risk apps (`[risk]` of the device policy), `am start -n PKG/ACT`, then poll the
//! foreground package (`dumpsys window windows` focus, `dumpsys activity activities` resumed
//! activity, parsed by `device::parse::window`) for up to [`VERIFY_WINDOW`]. Never `monkey`
//! (field bug 16).

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::super::util::{self, compound, sections};
use super::super::{ToolCtx, ToolError};
use super::{am_failure, unsupported, LAUNCHER, LEANBACK, OUTPUT_LIMIT};
use crate::device::parse::{package, window};
use crate::device::policy::glob;
use crate::device::shell_quote::command_line;
use crate::protocol::ErrorCode;

/// Deadline of each shell call of `android_app_launch`.
pub const LAUNCH_DEADLINE: Duration = Duration::from_secs(10);
/// How long `android_app_launch` waits for the package to reach the foreground.
pub const VERIFY_WINDOW: Duration = Duration::from_secs(5);
/// Pause between foreground checks.
const VERIFY_POLL: Duration = Duration::from_millis(250);

/// Refuses packages and activities listed under `[risk]` of the device policy.
fn check_risk(ctx: &ToolCtx<'_>, pkg: &str, activity: Option<&str>) -> Result<(), ToolError> {
    if let Some(g) = ctx
        .policy
        .risk
        .refuse_packages
        .iter()
        .find(|g| glob(g, pkg))
    {
        return Err(util::denied(
            "risk.refuse_packages",
            &format!("{pkg} matches `{g}`"),
        ));
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
            return Err(util::denied(
                "risk.refuse_activities",
                &format!("{comp} matches `{g}`"),
            ));
        }
    }
    Ok(())
}

/// The launcher activity of `pkg` as `(component, category)`, or the precise reason there is none.
async fn resolve_launcher(
    ctx: &ToolCtx<'_>,
    pkg: &str,
) -> Result<(String, &'static str), ToolError> {
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
    let cmd = compound(&[
        resolve(LAUNCHER),
        resolve(LEANBACK),
        command_line(&["pm", "path", pkg]),
    ]);
    let out = util::run(ctx, &cmd, LAUNCH_DEADLINE, OUTPUT_LIMIT).await?;
    let s = sections(&out.stdout, 3);
    for (text, category) in [(&s[0], "launcher"), (&s[1], "leanback")] {
        if let Some((p, class)) = package::parse_resolve_activity_brief(text) {
            if p == pkg {
                return Ok((format!("{p}/{class}"), category));
            }
        }
    }
    if unsupported(&s[0]) && unsupported(&s[1]) {
        return Err(ToolError::new(
            ErrorCode::DeviceCommandFailed,
            "this phone has no `cmd package resolve-activity` (Android 7+ is required to launch apps)",
        ));
    }
    if !s[2].lines().any(|l| l.trim().starts_with("package:")) {
        return Err(ToolError::new(
            ErrorCode::AppNotInstalled,
            format!("{pkg} is not installed on the bound phone (see android_app_list)"),
        ));
    }
    Err(ToolError::new(
        ErrorCode::NoLauncherActivity,
        format!("{pkg} is installed but has no LAUNCHER or LEANBACK_LAUNCHER activity; it cannot be opened from a launcher"),
    ))
}

/// The foreground package: focused window, else resumed activity.
async fn foreground(ctx: &ToolCtx<'_>) -> Result<(Option<String>, Option<String>), ToolError> {
    let cmd = compound(&[
        command_line(&["dumpsys", "window", "windows"]),
        command_line(&["dumpsys", "activity", "activities"]),
    ]);
    let out = util::run(ctx, &cmd, LAUNCH_DEADLINE, OUTPUT_LIMIT).await?;
    let s = sections(&out.stdout, 2);
    let focus = window::parse_current_focus(&s[0]).and_then(|f| f.package);
    let resumed = window::parse_resumed_activity(&s[1]).map(|(p, _)| p);
    Ok((focus, resumed))
}

/// `android_app_launch`.
pub async fn app_launch(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let pkg = util::package_arg(args)?;
    check_risk(ctx, pkg, None)?;
    let (component, category) = resolve_launcher(ctx, pkg).await?;
    let activity = component.split_once('/').map(|(_, a)| a);
    check_risk(ctx, pkg, activity)?;
    let started = Instant::now();
    let out = util::run(
        ctx,
        &command_line(&["am", "start", "-n", &component]),
        LAUNCH_DEADLINE,
        OUTPUT_LIMIT,
    )
    .await?;
    if let Some(e) = am_failure(&out, "am start") {
        return Err(e);
    }
    loop {
        let (focus, resumed) = foreground(ctx).await?;
        if focus.as_deref() == Some(pkg) || resumed.as_deref() == Some(pkg) {
            return Ok(json!({
                "package": pkg,
                "component": component,
                "launcher_category": category,
                "foreground_package": pkg,
                "verified": true,
                "elapsed_ms": started.elapsed().as_millis() as u64,
            }));
        }
        if started.elapsed() >= VERIFY_WINDOW {
            let now = focus.or(resumed).unwrap_or_else(|| "unknown".into());
            return Err(ToolError::new(
                ErrorCode::DeviceCommandFailed,
                format!("am start succeeded but {pkg} did not reach the foreground within {} s (foreground: {now}); the screen may be locked or the app closed itself — check android_screenshot", VERIFY_WINDOW.as_secs()),
            ));
        }
        tokio::time::sleep(VERIFY_POLL).await;
    }
}
