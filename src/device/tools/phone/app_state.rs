//! Whether an installed app cannot start because it is disabled (field row 60). A disabled
//! package — Settings → Apps → Disable, `pm disable-user`, a device admin, root — or a disabled
//! launcher activity (an app hiding its icon, e.g. linuxdeploy's stealth mode,
//! meefik/linuxdeploy#1239) resolves no activity: `resolve-activity` answers `No activity found`
//! and `am start -n` `Error type 3` / `Error: Activity class {…} does not exist.` while `pm path`
//! still lists the APK. Read from `dumpsys package PKG` (`parse::package_state`: the user's
//! `enabled=N` and `disabledComponents:`; the Activity Resolver Table still lists a disabled
//! component, so its launcher activity is known). The shell user may re-enable a whole package
//! only from disabled-user (AOSP `PackageManagerService.setEnabledSettings`: "Shell cannot change
//! component state for P/null to N" otherwise), so the fix named depends on the state.

use crate::device::error::DeviceError;
use crate::device::parse::package::{self as package_parse, ResolverActivity};
use crate::device::parse::package_state::{parse_user_states, user_state, EnabledSetting};

/// The user whose state decides: the system user, whom `am start` without `--user` targets on
/// a phone with one user (`UserHandle.USER_CURRENT`); another user's line is read only when
/// user 0 has none.
const USER: u32 = 0;

/// [`DeviceError::AppDisabled`] when `dumpsys` (of `dumpsys package PKG`) shows `pkg` disabled
/// for the user, or the launcher activity the resolver table lists for it in `categories`
/// disabled; `None` otherwise.
pub fn disabled_refusal(pkg: &str, dumpsys: &str, categories: &[&str]) -> Option<DeviceError> {
    let states = parse_user_states(dumpsys);
    let state = user_state(&states, USER)?;
    let by = state
        .last_disabled_caller
        .as_deref()
        .map(|c| format!(", by {c}"))
        .unwrap_or_default();
    let nothing = "nothing was started";
    let settings = format!("Settings → Apps → {pkg} → Enable");
    match state.enabled {
        Some(EnabledSetting::DisabledUser) => {
            return Some(DeviceError::AppDisabled(format!(
                "{pkg} is installed but disabled (disabled-user{by}: turned off under Settings → Apps or with `pm disable-user`): {nothing}. Enable it under {settings}, or from a computer with `adb shell pm enable {pkg}`, then retry"
            )));
        }
        Some(s @ (EnabledSetting::Disabled | EnabledSetting::DisabledUntilUsed)) => {
            let who = if s == EnabledSetting::Disabled {
                "by root, a device admin or the system"
            } else {
                "the system keeps it off until another app asks for it"
            };
            return Some(DeviceError::AppDisabled(format!(
                "{pkg} is installed but disabled ({}{by}: {who}): {nothing}. Enable it under {settings} (or through the device admin that disabled it); `adb shell pm enable` is refused for this state (\"Shell cannot change component state\"), then retry",
                s.word()
            )));
        }
        _ => {}
    }
    let table = package_parse::parse_activity_resolver_table(dumpsys);
    let launcher = launcher_activities(&table, pkg, categories)
        .find(|class| state.disabled_components.iter().any(|c| c == class))?;
    Some(DeviceError::AppDisabled(format!(
        "{pkg} is installed and enabled, but its launcher activity {launcher} is disabled (the app turned its own icon off, e.g. a hide-icon or stealth mode): {nothing}. Open it the way the app documents (a dialer code, a widget, its notification), or turn the activity back on as root (`pm enable {pkg}/{launcher}`: the shell may not change another app's components)"
    )))
}

/// The framework activity Android starts instead of a suspended ("paused") app (AOSP
/// `ActivityStartInterceptor.interceptSuspendedPackageIfNeeded` →
/// `core/java/com/android/internal/app/SuspendedAppActivity.java`, package `android`).
pub const SUSPENDED_APP_ACTIVITY: &str = "com.android.internal.app.SuspendedAppActivity";

/// Whether `(package, activity)` in front is the "App paused" dialog activity.
pub fn is_suspended_app_dialog(package: &str, activity: &str) -> bool {
    package == "android" && activity.trim_start_matches("android/") == SUSPENDED_APP_ACTIVITY
}

/// [`DeviceError::AppDisabled`] for `pkg` started while suspended (field row 64): `am start`
/// succeeded, and the framework's "App paused" dialog came up instead of the app (Digital
/// Wellbeing's app timer or "Pause app", Focus mode, parental controls, a device admin;
/// VaibhavLakhera/minimo-launcher#47, trinadhthatakula/Thor PR #244). `started` says what ran.
pub fn paused_refusal(pkg: &str, started: &str) -> DeviceError {
    DeviceError::AppDisabled(format!(
        "{pkg} is paused (suspended by Digital Wellbeing's app timer or \"Pause app\", Focus mode, parental controls or a device admin): {started}, and Android showed its \"App paused\" dialog instead of the app. Unpause it on the phone (tap the app's icon → Unpause, or Digital Wellbeing → the app), or, for a suspension made from the shell, `adb shell pm unsuspend {pkg}`; then retry"
    ))
}

/// The fully qualified classes of `pkg`'s MAIN activities in any of `categories`, as the
/// resolver table shows them (disabled ones included).
fn launcher_activities<'a>(
    table: &'a [ResolverActivity],
    pkg: &'a str,
    categories: &'a [&'a str],
) -> impl Iterator<Item = String> + 'a {
    categories
        .iter()
        .filter_map(move |cat| package_parse::resolver_main_activity(table, pkg, cat))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::phone::packages::{LAUNCHER, LEANBACK};

    const TABLE: &str = "Activity Resolver Table:\n  Non-Data Actions:\n      android.intent.action.MAIN:\n        5d2b ru.meefik.linuxdeploy/.MainActivity filter 1c\n          Action: \"android.intent.action.MAIN\"\n          Category: \"android.intent.category.LAUNCHER\"\n\nPackages:\n  Package [ru.meefik.linuxdeploy] (1a):\n";

    #[test]
    fn each_state_names_its_fix() {
        let line = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/install-launch/pixel9a-dumpsys-package-user0-enabled-3.txt"
        ));
        let m = disabled_refusal("com.google.android.gms", line, &[LAUNCHER])
            .unwrap()
            .to_string();
        assert!(
            m.contains("disabled-user") && m.contains("adb shell pm enable com.google.android.gms"),
            "{m}"
        );
        let admin = format!("{TABLE}    User 0: installed=true hidden=false stopped=false notLaunched=false enabled=2\n");
        let m = disabled_refusal("ru.meefik.linuxdeploy", &admin, &[LAUNCHER])
            .unwrap()
            .to_string();
        assert!(
            m.contains("(disabled: by root") && m.contains("is refused"),
            "{m}"
        );
        let enabled = format!("{TABLE}    User 0: installed=true enabled=0\n");
        assert!(
            disabled_refusal("ru.meefik.linuxdeploy", &enabled, &[LAUNCHER, LEANBACK]).is_none()
        );
    }

    #[test]
    fn the_paused_dialog_is_known_by_its_component() {
        assert!(is_suspended_app_dialog("android", SUSPENDED_APP_ACTIVITY));
        assert!(!is_suspended_app_dialog(
            "com.example",
            SUSPENDED_APP_ACTIVITY
        ));
        assert!(!is_suspended_app_dialog(
            "android",
            "com.android.internal.app.ResolverActivity"
        ));
        let m = paused_refusal(
            "com.example.notes",
            "com.example.notes/.MainActivity was started",
        )
        .to_string();
        assert!(m.contains("pm unsuspend com.example.notes"), "{m}");
    }

    #[test]
    fn a_disabled_launcher_activity_is_named() {
        let text = format!("{TABLE}    User 0: installed=true enabled=0\n      disabledComponents:\n        ru.meefik.linuxdeploy.MainActivity\n");
        let m = disabled_refusal("ru.meefik.linuxdeploy", &text, &[LAUNCHER, LEANBACK])
            .unwrap()
            .to_string();
        assert!(
            m.contains("launcher activity ru.meefik.linuxdeploy.MainActivity is disabled"),
            "{m}"
        );
        // Another disabled component leaves the launcher alone.
        let other = format!("{TABLE}    User 0: installed=true enabled=0\n      disabledComponents:\n        ru.meefik.linuxdeploy.Boot\n");
        assert!(disabled_refusal("ru.meefik.linuxdeploy", &other, &[LAUNCHER]).is_none());
    }
}
