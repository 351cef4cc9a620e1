//! `pm list packages|path|clear` and `cmd package …` / `cmd input …` (AOSP
//! `PackageManagerShellCommand`): `package:NAME` lines (`-f`: `package:APK_PATH=NAME`, user
//! apps under `/data/app/`, system apps under `/system/`, as `runListPackages` prints them); `resolve-activity --brief` prints the
//! priority line then `pkg/.Activity`, or `No activity found`.

use super::{input, Output};
use crate::apps;
use crate::phone::Phone;

/// All installed package names, sorted (for `dumpsys package`).
pub fn installed(phone: &Phone) -> Vec<String> {
    packages(phone)
}

/// All installed package names, sorted.
fn packages(phone: &Phone) -> Vec<String> {
    let (launcher, adb_keyboard) =
        phone.with(|s| (s.persona.launcher_package.clone(), s.adb_keyboard));
    let mut all: Vec<String> = apps::APPS
        .iter()
        .chain(apps::LEANBACK_APPS)
        .map(|a| a.package.to_string())
        .collect();
    if adb_keyboard {
        all.push(apps::ADB_KEYBOARD_PACKAGE.to_string());
    }
    all.extend(apps::SYSTEM_PACKAGES.iter().map(|p| p.to_string()));
    all.push(launcher);
    all.extend(
        phone
            .with(|s| super::packages::installed_apks(s))
            .into_iter()
            .map(|a| a.package),
    );
    all.sort();
    all.dedup();
    all
}

/// Runs `pm`.
pub fn pm(phone: &Phone, args: &[String], stdin: &[u8]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    package_cmd(phone, &args, stdin)
}

fn package_cmd(phone: &Phone, args: &[&str], stdin: &[u8]) -> Output {
    let installed = packages(phone);
    match args {
        ["list", "packages", rest @ ..] => {
            let filter = rest.iter().find(|a| !a.starts_with('-')).copied().unwrap_or("");
            let third_party = rest.contains(&"-3");
            // `-d` only disabled packages, `-e` only enabled ones (`runListPackages`).
            let (only_disabled, only_enabled) = (rest.contains(&"-d"), rest.contains(&"-e"));
            let disabled = |p: &str| phone.with(|s| s.enabled_state(p).is_disabled());
            let with_path = rest.contains(&"-f");
            let added: Vec<String> = phone.with(|s| super::packages::installed_apks(s)).into_iter().map(|a| a.package).collect();
            let user = |p: &str| p.starts_with("com.example.") || added.iter().any(|a| a == p);
            let lines: String = installed
                .iter()
                .filter(|p| p.contains(filter))
                .filter(|p| !third_party || user(p))
                .filter(|p| !only_disabled || disabled(p.as_str()))
                .filter(|p| !only_enabled || !disabled(p.as_str()))
                .map(|p| match (with_path, user(p)) {
                    (false, _) => format!("package:{p}\n"),
                    (true, true) => format!("package:/data/app/~~sim/{p}-1/base.apk={p}\n"),
                    (true, false) => format!("package:/system/priv-app/{p}/{p}.apk={p}\n"),
                })
                .collect();
            Output::ok(lines)
        }
        ["path", pkg] if installed.iter().any(|p| p == pkg) => {
            // A split app lists its base, then each split (AOSP `runPath`).
            let splits: Vec<String> = phone.with(|s| {
                s.vfs
                    .list(&format!("{}/{pkg}-1", super::packages::APP_DIR))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(n, _)| n)
                    .filter(|n| n.starts_with("split_"))
                    .collect()
            });
            let mut out = format!("package:/data/app/~~sim/{pkg}-1/base.apk\n");
            for split in splits {
                out.push_str(&format!("package:/data/app/~~sim/{pkg}-1/{split}\n"));
            }
            Output::ok(out)
        }
        ["path", _] => Output::code(1),
        ["clear", pkg] => {
            if *pkg == "com.example.notes" {
                phone.with(|s| s.ui.note_text.clear());
            }
            Output::ok("Success\n")
        }
        ["resolve-activity", rest @ ..] => resolve_activity(phone, rest),
        [verb @ ("suspend" | "unsuspend"), rest @ ..] => {
            // AOSP `runSuspend`: `Package P new suspended state: true|false`.
            let Some(pkg) = rest.iter().rev().find(|a| !a.starts_with('-')).copied() else {
                return Output::err(255, "Error: package name not specified\n");
            };
            if !installed.iter().any(|p| p == pkg) {
                return Output::err(255, format!("Exception occurred while executing '{verb}':\njava.lang.IllegalArgumentException: Unknown target package: {pkg}\n"));
            }
            let on = *verb == "suspend";
            phone.with(|s| if on { s.suspended.insert(pkg.to_string()); } else { s.suspended.remove(pkg); });
            Output::ok(format!("Package {pkg} new suspended state: {on}\n"))
        }
        [verb @ ("enable" | "disable" | "disable-user" | "disable-until-used" | "default-state"), rest @ ..] => {
            set_enabled(phone, verb, rest, &installed)
        }
        ["install", rest @ ..] => super::install_session::install(phone, rest, stdin),
        ["install-create", rest @ ..] => super::install_session::create(phone, rest),
        ["install-write", rest @ ..] => super::install_session::write(phone, rest, stdin),
        ["install-commit", rest @ ..] => super::install_session::commit_session(phone, rest),
        ["install-abandon", rest @ ..] => super::install_session::abandon(phone, rest),
        ["uninstall", rest @ ..] => super::packages::uninstall(phone, rest),
        ["query-activities", rest @ ..] => super::packages::query_activities(phone, rest),
        _ => Output::err(255, "Package manager (package) commands:\n  help\n  list packages [-3] [FILTER]\n  path PACKAGE\n  resolve-activity [--brief] [-c CATEGORY] PACKAGE\n"),
    }
}

fn resolve_activity(phone: &Phone, args: &[&str]) -> Output {
    let (mut pkg, mut category) = (None, "android.intent.category.LAUNCHER");
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-c" => category = it.next().copied().unwrap_or(category),
            "-a" | "--user" | "--components" => {
                it.next();
            }
            a if !a.starts_with('-') => pkg = Some(a),
            _ => {}
        }
    }
    let launcher = phone.with(|s| s.persona.launcher_component());
    let launcher_category = category == "android.intent.category.LAUNCHER";
    let pool = match category {
        "android.intent.category.LEANBACK_LAUNCHER" => apps::LEANBACK_APPS,
        "android.intent.category.LAUNCHER" => apps::APPS,
        _ => &[],
    };
    let hit = match pkg {
        Some(p) if p == launcher.0 && launcher_category => {
            Some((launcher.0.clone(), launcher.1.clone()))
        }
        Some(p) => pool
            .iter()
            .find(|a| a.package == p)
            .map(|a| (a.package.to_string(), a.activity.to_string())),
        None => None,
    };
    // A disabled package or launcher component resolves nothing (`isEnabledAndMatch`).
    let hit = hit.filter(|(p, a)| phone.with(|s| s.activity_enabled(p, a)));
    match hit {
        Some((p, a)) => Output::ok(format!(
            "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n{p}/{a}\n"
        )),
        None => Output::ok("No activity found\n"),
    }
}

/// `pm enable|disable|disable-user|disable-until-used|default-state [--user N] PKG[/CLS]`
/// (AOSP `PackageManagerShellCommand.runSetEnabledSetting`): `Package P new state: WORD` (a
/// component: `Component {P/CLS} new state: WORD`). As the shell user only whole packages move,
/// and only between default, enabled and disabled-user (`setEnabledSettings`); anything else
/// throws, printed by `BasicShellCommandHandler` as `Exception occurred while executing
/// 'VERB':` and the exception, exit 255. An unknown package: `IllegalArgumentException:
/// Unknown package: P` the same way (ksalokya/debloater#3).
fn set_enabled(phone: &Phone, verb: &str, args: &[&str], installed: &[String]) -> Output {
    use crate::enabled_state::EnabledState;
    let to = match verb {
        "enable" => EnabledState::Enabled,
        "disable" => EnabledState::Disabled,
        "disable-user" => EnabledState::DisabledUser,
        "disable-until-used" => EnabledState::DisabledUntilUsed,
        _ => EnabledState::Default,
    };
    let mut it = args.iter();
    let mut target = None;
    while let Some(a) = it.next() {
        match *a {
            "--user" => {
                it.next();
            }
            a if !a.starts_with('-') => target = Some(a),
            _ => {}
        }
    }
    let Some(target) = target else {
        return Output::err(255, "Error: no package or component specified\n");
    };
    let throw = |exception: String| {
        Output::err(
            255,
            format!("Exception occurred while executing '{verb}':\n{exception}\n\tat com.android.server.pm.PackageManagerService.setEnabledSetting(PackageManagerService.java)\n"),
        )
    };
    let (pkg, class) = match target.split_once('/') {
        Some((p, c)) => (p, Some(c)),
        None => (target, None),
    };
    if !installed.iter().any(|p| p == pkg) {
        return throw(format!(
            "java.lang.IllegalArgumentException: Unknown package: {pkg}"
        ));
    }
    let from = phone.with(|s| s.enabled_state(pkg));
    if class.is_some() || !from.shell_may_change_to(to) {
        return throw(format!(
            "java.lang.SecurityException: Shell cannot change component state for {pkg}/{} to {}",
            class.unwrap_or("null"),
            to.number()
        ));
    }
    phone.with(|s| {
        if to == EnabledState::Default {
            s.app_enabled.remove(pkg);
        } else {
            s.app_enabled.insert(pkg.to_string(), to);
        }
    });
    Output::ok(format!("Package {pkg} new state: {}\n", to.word()))
}

/// Services registered with `servicemanager` that implement no shell command: `cmd` reaches
/// them and gets `android.os.Binder`'s default `onShellCommand`/`handleShellCommand`, which
/// prints "No shell command implementation." to stderr and reports 0. AOSP
/// `services/core/java/com/android/server/clipboard/ClipboardService.java` (its `ClipboardImpl`
/// has no shell command through Android 14), `core/java/android/os/Binder.java`.
const SERVICES_WITHOUT_SHELL_COMMAND: &[&str] = &["clipboard"];

/// Runs `cmd SERVICE …` for `package` and `input`; `clipboard` answers as a service without a
/// shell command.
pub fn cmd(phone: &Phone, args: &[String], stdin: &[u8]) -> Output {
    let rest: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    match args.first().map(String::as_str) {
        Some("package") => package_cmd(phone, &rest, stdin),
        Some("input") => input::run(phone, &args[1..]),
        Some(svc) if SERVICES_WITHOUT_SHELL_COMMAND.contains(&svc) => {
            Output::err(0, "No shell command implementation.\n")
        }
        Some(svc) => Output::err(20, format!("cmd: Can't find service: {svc}\n")),
        None => Output::err(
            20,
            "cmd: No service specified; use -l to list all services\n",
        ),
    }
}
