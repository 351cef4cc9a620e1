//! `am start|force-stop` (AOSP `ActivityManagerShellCommand`) and `monkey -p PKG -c
//! android.intent.category.LAUNCHER 1` (AOSP `development/cmds/monkey/Monkey.java`: no launcher
//! activity → `** No activities found to run, monkey aborted.`, status 252 = -4).

use super::window_dump::{full_component, short_component};
use super::Output;
use crate::apps;
use crate::phone::{Phone, PhoneState};

/// Resolves `pkg/act` (short or full class) to a launchable activity.
fn resolve(s: &PhoneState, component: &str) -> Option<(String, String)> {
    let (pkg, act) = component.split_once('/')?;
    let short = short_component(pkg, act);
    let (lp, la) = s.persona.launcher_component();
    if pkg == lp && short == short_component(&lp, &la) {
        return Some((lp, la));
    }
    let app = apps::find_any(pkg)?;
    // A disabled package or activity does not resolve: `Error type 3` (START_CLASS_NOT_FOUND).
    (short == format!("{pkg}/{}", app.activity) && s.activity_enabled(pkg, app.activity))
        .then(|| (pkg.to_string(), app.activity.to_string()))
}

/// Runs `am`.
pub fn am(phone: &Phone, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["start" | "start-activity", rest @ ..] => phone.with(|s| start(s, rest)),
        ["broadcast", rest @ ..] => super::media::scan_broadcast(phone, rest)
            .unwrap_or_else(|| super::ime::broadcast(phone, rest)),
        ["force-stop" | "kill", pkg, ..] => {
            phone.with(|s| s.force_stop(pkg));
            Output::code(0)
        }
        _ => Output::err(255, "Activity manager (activity) commands:\n  help\n  start [-W] [-S] [-n <COMPONENT>] [-a <ACTION>] [-c <CATEGORY>]\n  force-stop <PACKAGE>\n"),
    }
}

fn start(s: &mut PhoneState, args: &[&str]) -> Output {
    let (mut component, mut action, mut category, mut data) = (None, None, None, None);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-n" => component = it.next().copied(),
            "-a" => action = it.next().copied(),
            "-c" => category = it.next().copied(),
            "-d" => data = it.next().copied(),
            "--user" | "-f" | "-t" => {
                it.next();
            }
            _ => {}
        }
    }
    if let (None, Some("android.intent.action.VIEW"), Some(d)) = (component, action, data) {
        // The browser is another task: refused in lock task mode like any other.
        if s.lock_task.is_some() {
            let out = super::packages::view(d);
            if out.code == 0 {
                return lock_task_violation(s, out);
            }
            return out;
        }
        return super::packages::view(d);
    }
    let target = match (component, action, category) {
        (Some(c), _, _) => resolve(s, c).ok_or_else(|| c.to_string()),
        (None, _, Some("android.intent.category.HOME")) => Ok(s.persona.launcher_component()),
        (None, Some("android.settings.SETTINGS"), _) => {
            Ok(("com.android.settings".into(), ".Settings".into()))
        }
        _ => Err(String::new()),
    };
    let intent = match (component, action) {
        (Some(c), _) => format!("cmp={c}"),
        (None, Some(a)) => format!("act={a}"),
        _ => String::new(),
    };
    match target {
        Ok((pkg, act)) => {
            let started = Output::ok(format!("Starting: Intent {{ {intent} }}\n"));
            if s.start_activity(&pkg, &act) {
                started
            } else {
                lock_task_violation(s, started)
            }
        }
        Err(c) if !c.is_empty() => {
            let (pkg, act) = c.split_once('/').unwrap_or((c.as_str(), ""));
            let mut out = Output::ok(format!("Starting: Intent {{ {intent} }}\n"));
            out.stderr = format!("Error type 3\nError: Activity class {{{}}} does not exist.\n", full_component(pkg, act)).into_bytes();
            out.code = 255;
            out
        }
        Err(_) => Output::err(255, format!("Starting: Intent {{ {intent} }}\nError: Activity not started, unable to resolve Intent {{ {intent} flg=0x10000000 }}\n")),
    }
}

/// `am start` refused in lock task mode: `START_RETURN_LOCK_TASK_MODE_VIOLATION`, which
/// `ActivityManagerShellCommand.runStartActivity` has no message for, so its `default:` branch
/// prints `Error: Activity not started, unknown error code N` on the error stream (no `-W`)
/// and the command still returns 0 (RushB-fr/freekiosk#238, LineageOS 11:
/// `tests/fixtures/device-state/lineageos11-echo-show5-lock-task-am-start-error-101.txt`).
/// N is 101 since Android 8.0 (`FIRST_START_NON_FATAL_ERROR_CODE + 1`) and 5 before (AOSP
/// `ActivityManager.java` of those releases).
fn lock_task_violation(s: &PhoneState, started: Output) -> Output {
    let code = if s.persona.sdk >= 26 { 101 } else { 5 };
    Output {
        stderr: format!("Error: Activity not started, unknown error code {code}\n").into_bytes(),
        ..started
    }
}

/// Runs `monkey -p PKG [-c CATEGORY] [--pct-syskeys N] COUNT`: launches the package's launcher
/// activity. Like AOSP `Monkey.java`: stdout echoes `  bash arg:` lines; without a launcher
/// activity `** No activities found to run, monkey aborted.` and status 252 (-4); on a persona
/// without hardware SYS_KEYS and the default 2.0 % system-key factor,
/// `** SYS_KEYS has no physical keys but with factor 2.0%.` and status 251 (-5, the event source
/// failed `validate()`; `MonkeySourceRandom.validateKeyCategory`), whatever the package.
pub fn monkey(phone: &Phone, args: &[String]) -> Output {
    let pkg = args
        .iter()
        .position(|a| a == "-p")
        .and_then(|i| args.get(i + 1));
    let mut header = String::new();
    for a in args {
        header.push_str(&format!("  bash arg: {a}\n"));
    }
    let Some(pkg) = pkg else {
        return Output::err(1, "usage: monkey [-p ALLOWED_PACKAGE [-p ALLOWED_PACKAGE] ...] [-c MAIN_CATEGORY [-c MAIN_CATEGORY] ...] COUNT\n");
    };
    // `processOptions` echoes its argv and every option's data on stderr.
    let mut echo = format!("args: [{}]\n", args.join(", "));
    for (i, a) in args.iter().enumerate() {
        echo.push_str(&format!(" arg: \"{a}\"\n"));
        let takes_data =
            ["-p", "-c", "-s", "--throttle"].contains(&a.as_str()) || a.starts_with("--pct-");
        if let Some(data) = args.get(i + 1).filter(|_| takes_data) {
            echo.push_str(&format!("data=\"{data}\"\n"));
        }
    }
    let syskeys: f32 = args
        .iter()
        .position(|a| a == "--pct-syskeys")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(2.0);
    let (has_launcher, has_keys) = phone.with(|s| {
        let app = apps::find(pkg);
        (app.is_some(), s.persona.physical_sys_keys)
    });
    if has_launcher && !has_keys && syskeys >= 0.1 {
        let mut out = Output::ok(header);
        out.stderr =
            format!("{echo}** SYS_KEYS has no physical keys but with factor {syskeys:.1}%.\n")
                .into_bytes();
        out.code = 251;
        return out;
    }
    let launched = phone.with(|s| match apps::find(pkg) {
        Some(app) => {
            // Refused in lock task mode like `am start` (monkey injects the launch intent).
            s.start_activity(app.package, app.activity);
            true
        }
        None => false,
    });
    if launched {
        let mut out = Output::ok(format!("{header}Events injected: 1\n## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)\n"));
        out.stderr = echo.into_bytes();
        out
    } else {
        let mut out = Output::ok(header);
        out.stderr = format!("{echo}** No activities found to run, monkey aborted.\n").into_bytes();
        out.code = 252;
        out
    }
}
