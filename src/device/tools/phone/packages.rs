//! Package names and the package manager: the name rule shared by schemas and code, whether a
//! package is installed, and the launcher categories app tools query.

use std::time::Duration;

use serde_json::{json, Value};

use super::command;
use crate::device::error::DeviceError;
use crate::device::parse::package;
use crate::device::shell_quote::command_line;
use crate::device::tools::ToolCtx;

/// Intent category of phone launchers.
pub const LAUNCHER: &str = "android.intent.category.LAUNCHER";
/// Intent category of TV launchers (field bug 17).
pub const LEANBACK: &str = "android.intent.category.LEANBACK_LAUNCHER";

/// `cmd package query-activities --brief -a android.intent.action.MAIN -c CATEGORY [PACKAGE]`
/// (AOSP `PackageManagerShellCommand.runQueryIntentActivities`; a trailing package limits the
/// intent to it, `Intent.parseCommandArgs`), quoted.
pub fn query_activities(category: &str, package: Option<&str>) -> String {
    let mut argv = vec![
        "cmd",
        "package",
        "query-activities",
        "--brief",
        "-a",
        "android.intent.action.MAIN",
        "-c",
        category,
    ];
    argv.extend(package);
    command_line(&argv)
}

/// The JSON Schema regex of a package name (same rule as [`valid_package`]).
pub const PACKAGE_PATTERN: &str = r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$";

/// Whether `name` is a syntactically valid Android package name (AOSP
/// `FrameworkParsingPackageUtils.validateName`: dot-separated segments of `[A-Za-z][A-Za-z0-9_]*`,
/// at least two segments), at most 255 bytes.
pub fn valid_package(name: &str) -> bool {
    let segs: Vec<&str> = name.split('.').collect();
    name.len() <= 255
        && segs.len() >= 2
        && segs.iter().all(|s| {
            let mut c = s.chars();
            c.next().is_some_and(|f| f.is_ascii_alphabetic())
                && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        })
}

/// Checks a `package` argument with [`valid_package`] (defence in depth behind the schema).
pub fn check_package(name: &str) -> Result<&str, DeviceError> {
    if valid_package(name) {
        Ok(name)
    } else {
        Err(DeviceError::InvalidArguments(
            "package must be an Android package name such as com.android.settings".into(),
        ))
    }
}

/// Schema of a `package` argument; `description` completes "Android package name …".
pub fn package_schema(description: &str) -> Value {
    json!({"type": "string", "minLength": 3, "maxLength": 255, "pattern": PACKAGE_PATTERN,
           "description": description})
}

/// Whether the output says the command is unusable (Android < 7 has no `cmd package`).
/// Callers check [`command::Text::service_missing`] first: `Can't find service` there is a
/// phone still booting (field bug 27), a typed `device_booting`, not an old Android.
pub fn cmd_unsupported(t: &str) -> bool {
    t.contains("Unknown command")
        || t.contains("Can't find service")
        || t.contains("not found")
        || t.contains("inaccessible")
}

/// Which packages [`list_packages`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Every package (`pm list packages`).
    All,
    /// User-installed packages (`pm list packages -3`).
    ThirdParty,
}

/// Whether `out` is a package list: it has `package:` lines, or nothing at all (a phone with no
/// user apps prints nothing). Anything else — `pm`'s usage text for a flag this build does not
/// know (Android 6, renderdoc PR #959, field bug 26), an error — is not a list.
fn is_package_list(out: &str) -> bool {
    let mut lines = out.lines().map(str::trim).filter(|l| !l.is_empty());
    lines.clone().next().is_none() || lines.any(|l| l.starts_with("package:"))
}

/// Whether `pm` refused a flag: its usage text or an unknown-option line (`usage: pm list
/// packages …`, `Error: Unknown option: -3`), printed on stdout or stderr with exit 0 or not
/// (field bug 26).
fn refuses_flag(all: &str) -> bool {
    all.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("usage:")
            || l.starts_with("Usage:")
            || l.contains("Unknown option")
            || l.contains("unknown option")
    })
}

/// The phone's package list, classified from stdout, stderr and exit status: a missing package
/// service is `device_booting` (field bug 27), a usage text or error is
/// `device_command_failed` quoting it — never an empty list (field bug 26).
///
/// A `pm` that answers a flag with its usage text (an older or trimmed build than the flag:
/// Android 6, renderdoc PR #959) is asked again with less, down to plain `pm list packages`,
/// which every Android's `pm` knows. User apps come from `pm list packages -3`; else from
/// `-f`, whose packages under `/data/` are the user-installed ones (AOSP
/// `PackageManagerShellCommand.runListPackages`: `package:PATH=NAME`); else from the plain
/// list, each package's `flags=[…]` line of `dumpsys package NAME` telling system apps by
/// `SYSTEM` — the test `-3` itself applies (`ApplicationInfo.FLAG_SYSTEM`; captures
/// `tests/fixtures/packages/`).
pub async fn list_packages(
    ctx: &ToolCtx<'_>,
    which: Which,
    deadline: Duration,
) -> Result<Vec<package::PackageLine>, DeviceError> {
    let ask = |flag: Option<&'static str>| async move {
        let mut argv = vec!["pm", "list", "packages"];
        argv.extend(flag);
        let out = command::run(ctx, &command_line(&argv), deadline, 8 << 20).await?;
        if let Some(e) = out.service_missing() {
            return Err(e);
        }
        // A flag this `pm` does not know is answered on either stream, with any status.
        let refused = flag.is_some() && refuses_flag(&out.all());
        if !refused {
            if let Some(e) = out.failure(&argv.join(" ")) {
                return Err(e);
            }
        }
        Ok::<_, DeviceError>((!refused && is_package_list(&out.stdout), out))
    };
    if which == Which::ThirdParty {
        if let (true, out) = ask(Some("-3")).await? {
            return Ok(package::parse_pm_list_packages(&out.stdout));
        }
        if let (true, out) = ask(Some("-f")).await? {
            return Ok(package::parse_pm_list_packages(&out.stdout)
                .into_iter()
                .filter(|p| {
                    p.apk_path
                        .as_deref()
                        .is_some_and(|a| a.starts_with("/data/"))
                })
                .collect());
        }
    }
    let (listed, out) = ask(None).await?;
    if !listed {
        return Err(DeviceError::CommandFailed(format!(
            "pm list packages printed no package list but: {} (this phone's pm does not list packages even without flags; report the phone's model and Android version)",
            out.telling_line()
        )));
    }
    let all = package::parse_pm_list_packages(&out.stdout);
    if which == Which::All {
        return Ok(all);
    }
    let names: Vec<String> = all.iter().map(|p| p.package.clone()).collect();
    let system = system_flags(ctx, &names, deadline).await?;
    Ok(all
        .into_iter()
        .zip(system)
        .filter(|(_, system)| *system == Some(false))
        .map(|(p, _)| p)
        .collect())
}

/// Whether each package is a system app: the `SYSTEM` flag on the first `flags=[ … ]` line of
/// `dumpsys package NAME` (AOSP `Settings.dumpPackageLPr` prints the application flags before
/// `privateFlags=` and `pkgFlags=`); `None` when the phone printed no such line.
async fn system_flags(
    ctx: &ToolCtx<'_>,
    names: &[String],
    deadline: Duration,
) -> Result<Vec<Option<bool>>, DeviceError> {
    let out = dumpsys_package_lines(ctx, names, "flags=[", deadline, 8 << 20).await?;
    Ok(out.iter().map(|s| parse_system_flag(s)).collect())
}

/// The lines of `dumpsys package NAME` holding `needle` (`grep -F`, on the phone), for each of
/// `names`, in one batched shell call ([`command::run_batched`]) within `deadline`, up to
/// `limit` bytes of output in all.
pub async fn dumpsys_package_lines(
    ctx: &ToolCtx<'_>,
    names: &[String],
    needle: &str,
    deadline: Duration,
    limit: usize,
) -> Result<Vec<String>, DeviceError> {
    let parts: Vec<String> = names
        .iter()
        .map(|name| {
            format!(
                "{} | {}",
                command_line(&["dumpsys", "package", name]),
                command_line(&["grep", "-F", needle])
            )
        })
        .collect();
    command::run_batched(ctx, &parts, deadline, limit).await
}

fn parse_system_flag(out: &str) -> Option<bool> {
    out.lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix("flags=["))
        .map(|flags| flags.split_whitespace().any(|f| f == "SYSTEM"))
}

/// Fails with `app_not_installed` unless `pm path PKG` lists an APK.
pub async fn require_installed(
    ctx: &ToolCtx<'_>,
    pkg: &str,
    deadline: Duration,
) -> Result<(), DeviceError> {
    let out = command::run(
        ctx,
        &command_line(&["pm", "path", pkg]),
        deadline,
        64 * 1024,
    )
    .await?;
    if let Some(e) = out.service_missing() {
        return Err(e);
    }
    if out.stdout.lines().any(|l| l.trim().starts_with("package:")) {
        Ok(())
    } else {
        Err(DeviceError::AppNotInstalled {
            package: pkg.to_string(),
            hint: "",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names() {
        assert!(valid_package("com.android.settings"));
        assert!(valid_package("com.example.tv_2"));
        assert!(!valid_package("settings"));
        assert!(!valid_package("com..x"));
        assert!(!valid_package("com.1x"));
        assert!(!valid_package("com.x;reboot"));
        let re = regex::Regex::new(PACKAGE_PATTERN).unwrap();
        assert!(re.is_match("com.android.settings") && !re.is_match("a;b.c"));
    }

    #[test]
    fn system_flag_from_dumpsys_package() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/packages/");
        let read = |f: &str| std::fs::read_to_string(format!("{root}{f}")).unwrap();
        // A user app (Android 7, appium-adb's capture): no SYSTEM.
        let user = read("appium-adb-dumpsys-package-android7-indented.txt");
        assert_eq!(parse_system_flag(&user), Some(false));
        // A system app: the first package block of an Android 7.1 TV box's full dump.
        let system = read("rockchip-tvbox-android7.1-dumpsys-package-excerpt.txt");
        assert_eq!(parse_system_flag(&system), Some(true));
        // `privateFlags=[` and `pkgFlags=[` lines are not the application flags.
        assert_eq!(parse_system_flag("    privateFlags=[ SYSTEM ]\n"), None);
        assert_eq!(parse_system_flag("Unable to find package: a.b\n"), None);
    }

    #[test]
    fn a_usage_text_is_not_a_package_list() {
        assert!(is_package_list("package:com.a.b\n"));
        assert!(is_package_list("\n"));
        assert!(!is_package_list(
            "usage: pm list packages [-f] [-d] [-e] [-s] [-3] [-i] [-u] [--user USER_ID] [FILTER]\n"
        ));
    }
}
