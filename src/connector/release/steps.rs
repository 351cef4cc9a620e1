//! The release plan: from a phone's recorded changes and its `[release]` policy, the steps to
//! run, in order, each a list of quoted command lines (every word through
//! [`crate::device::shell_quote::command_line`]).
//!
//! Order: apps stopped before they are uninstalled, files, then the settings, HOME, and the
//! reboot last. Sources of the commands: AOSP `ActivityManagerShellCommand` (`am force-stop`),
//! `PackageManagerShellCommand` (`pm uninstall`), toybox `rm -f`, `SettingsService`
//! (`settings put|delete`), `WindowManagerShellCommand` (`wm size reset`, `wm density
//! reset`), `InputMethodManagerService` (`ime set`), `input keyevent KEYCODE_HOME`, and
//! `reboot` (toolbox, shell uid may reboot: `adb reboot` runs the same service).

use super::changes::{Kind, ANIMATION_KEYS, IME_KEY, ROTATION_KEYS};
use crate::device::policy::ReleasePolicy;
use crate::device::shell_quote::command_line;
use crate::store::release::ChangeRecord;

/// One step: its `[release]` key and its command lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The `[release]` key that enables it (`force_stop_apps`, …).
    pub name: &'static str,
    /// Quoted command lines, run one by one (a failed one does not stop the others).
    pub commands: Vec<String>,
}

impl Step {
    /// Whether the step is the reboot (the phone drops its transport as it runs).
    pub fn is_reboot(&self) -> bool {
        self.name == "reboot"
    }
}

fn items(changes: &[ChangeRecord], kind: Kind) -> Vec<&str> {
    let mut out: Vec<&str> = changes
        .iter()
        .filter(|c| Kind::parse(&c.kind) == Some(kind))
        .map(|c| c.item.as_str())
        .collect();
    out.dedup();
    out
}

/// The value recorded before the first change of `ns key`: `Some(None)` when it was not set
/// (`null`), `None` when it was not changed or could not be read.
fn before<'a>(changes: &'a [ChangeRecord], (ns, key): (&str, &str)) -> Option<Option<&'a str>> {
    let item = format!("{ns} {key}");
    let c = changes
        .iter()
        .find(|c| Kind::parse(&c.kind) == Some(Kind::Setting) && c.item == item)?;
    let v = c.before.as_deref()?.trim();
    Some((v != "null").then_some(v))
}

/// `settings put NS KEY V`, or `settings delete NS KEY` when it was not set.
fn put_back((ns, key): (&str, &str), value: Option<&str>) -> String {
    match value {
        Some(v) => command_line(&["settings", "put", ns, key, v]),
        None => command_line(&["settings", "delete", ns, key]),
    }
}

/// The steps `policy` enables for `changes`. HOME (`go_home`) is pressed after any binding
/// that ran a side-effecting tool ([`Kind::Used`]), even one that changed nothing the other
/// steps undo: the next user starts on the launcher, whatever the last one left on the screen.
/// Empty when the binding ran no side-effecting tool (or changed nothing the policy undoes and
/// `go_home` is off) and no reboot is asked for: the phone is then claimable at once.
pub fn plan(policy: &ReleasePolicy, changes: &[ChangeRecord]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut add = |on: bool, name: &'static str, commands: Vec<String>| {
        if on && !commands.is_empty() {
            steps.push(Step { name, commands });
        }
    };
    let launched = items(changes, Kind::AppLaunched);
    let installed = items(changes, Kind::AppInstalled);
    add(
        policy.force_stop_apps,
        "force_stop_apps",
        launched
            .iter()
            .filter(|p| !(policy.uninstall_apps && installed.contains(p)))
            .map(|p| command_line(&["am", "force-stop", p]))
            .collect(),
    );
    add(
        policy.uninstall_apps,
        "uninstall_apps",
        installed
            .iter()
            .map(|p| command_line(&["pm", "uninstall", p]))
            .collect(),
    );
    add(
        policy.remove_files,
        "remove_files",
        items(changes, Kind::FilePushed)
            .iter()
            .map(|p| command_line(&["rm", "-f", p]))
            .collect(),
    );
    // USER_ROTATION first while auto-rotate is still off, so the window manager turns the
    // display back (AOSP `DisplayRotation` applies it only then); then auto-rotate.
    let [auto_key, rotation_key] = ROTATION_KEYS;
    let mut rotation = Vec::new();
    if let Some(r) = before(changes, rotation_key) {
        rotation.push(put_back(rotation_key, Some(r.unwrap_or("0"))));
    }
    if let Some(a) = before(changes, auto_key) {
        rotation.push(put_back(auto_key, a));
    }
    if let Some(None) = before(changes, rotation_key) {
        rotation.push(put_back(rotation_key, None));
    }
    add(policy.reset_orientation, "reset_orientation", rotation);
    let mut display = Vec::new();
    if !items(changes, Kind::WmSize).is_empty() {
        display.push(command_line(&["wm", "size", "reset"]));
    }
    if !items(changes, Kind::WmDensity).is_empty() {
        display.push(command_line(&["wm", "density", "reset"]));
    }
    add(policy.reset_display, "reset_display", display);
    add(
        policy.reset_ime,
        "reset_ime",
        match before(changes, IME_KEY) {
            Some(Some(id)) => vec![command_line(&["ime", "set", id])],
            Some(None) => vec![put_back(IME_KEY, None)],
            None => Vec::new(),
        },
    );
    add(
        policy.reset_animation_scales,
        "reset_animation_scales",
        ANIMATION_KEYS
            .iter()
            .filter_map(|k| before(changes, *k).map(|v| put_back(*k, v)))
            .collect(),
    );
    let used = !steps.is_empty() || !items(changes, Kind::Used).is_empty();
    if policy.go_home && used {
        steps.push(Step {
            name: "go_home",
            commands: vec![command_line(&["input", "keyevent", "KEYCODE_HOME"])],
        });
    }
    if policy.reboot {
        steps.push(Step {
            name: "reboot",
            commands: vec![command_line(&["reboot"])],
        });
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(kind: Kind, item: &str, before: Option<&str>) -> ChangeRecord {
        ChangeRecord {
            serial: "S".into(),
            channel_id: "c".into(),
            kind: kind.as_str().into(),
            item: item.into(),
            before: before.map(str::to_string),
            recorded_ms: 0,
        }
    }

    #[test]
    fn the_plan_undoes_each_change_in_order_and_quotes_every_word() {
        let changes = [
            rec(Kind::AppLaunched, "com.a", None),
            rec(Kind::AppInstalled, "com.b", None),
            rec(Kind::AppLaunched, "com.b", None),
            rec(Kind::FilePushed, "/sdcard/Download/it's.txt", None),
            rec(Kind::Setting, "system accelerometer_rotation", Some("1")),
            rec(Kind::Setting, "system user_rotation", Some("null")),
            rec(Kind::WmSize, "", None),
            rec(
                Kind::Setting,
                "secure default_input_method",
                Some("com.x/.Ime"),
            ),
            rec(Kind::Setting, "global window_animation_scale", Some("1.0")),
        ];
        let steps = plan(&ReleasePolicy::default(), &changes);
        let names: Vec<&str> = steps.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "force_stop_apps",
                "uninstall_apps",
                "remove_files",
                "reset_orientation",
                "reset_display",
                "reset_ime",
                "reset_animation_scales",
                "go_home"
            ]
        );
        assert_eq!(steps[0].commands, ["'am' 'force-stop' 'com.a'"]);
        assert_eq!(
            steps[2].commands,
            [r"'rm' '-f' '/sdcard/Download/it'\''s.txt'"]
        );
        let line = |argv: &[&str]| command_line(argv);
        assert_eq!(
            steps[3].commands,
            [
                line(&["settings", "put", "system", "user_rotation", "0"]),
                line(&["settings", "put", "system", "accelerometer_rotation", "1"]),
                line(&["settings", "delete", "system", "user_rotation"])
            ]
        );
        assert_eq!(steps[5].commands, [line(&["ime", "set", "com.x/.Ime"])]);
    }

    #[test]
    fn nothing_changed_is_home_only_or_nothing() {
        let names = |steps: Vec<Step>| steps.iter().map(|s| s.name).collect::<Vec<_>>();
        // No side-effecting call: nothing to do.
        assert!(plan(&ReleasePolicy::default(), &[]).is_empty());
        // A tap changed nothing the steps undo: HOME all the same.
        let used = [rec(Kind::Used, "", None)];
        assert_eq!(names(plan(&ReleasePolicy::default(), &used)), ["go_home"]);
        let stay = ReleasePolicy {
            go_home: false,
            ..ReleasePolicy::default()
        };
        assert!(plan(&stay, &used).is_empty());
        let off = ReleasePolicy {
            remove_files: false,
            go_home: false,
            ..ReleasePolicy::default()
        };
        assert!(plan(&off, &[rec(Kind::FilePushed, "/sdcard/a", None)]).is_empty());
        let reboot = ReleasePolicy {
            reboot: true,
            ..ReleasePolicy::default()
        };
        assert_eq!(names(plan(&reboot, &[])), ["reboot"]);
        assert_eq!(names(plan(&reboot, &used)), ["go_home", "reboot"]);
        // An unreadable value before is left alone.
        let unread = [rec(Kind::Setting, "global window_animation_scale", None)];
        assert!(plan(&stay, &unread).is_empty());
    }
}
