//! What a tool call changes on the phone, in the terms the release undoes it in: the apps it
//! launched, the packages it added, the files it wrote, the settings it changed (with the value
//! read before the first change) and the display overrides it set. Pure: the tool's id, its
//! arguments and its result in, [`Change`]s out.
//!
//! Sources: `android_set_orientation` writes `Settings.System.ACCELEROMETER_ROTATION` /
//! `USER_ROTATION` (`device/tools/orientation.rs`); through `android_shell` (when its
//! allow-list lets it), AOSP `SettingsService` `settings put NAMESPACE KEY VALUE`,
//! `WindowManagerShellCommand` `wm size WxH` / `wm density N` (undone by `reset`), and
//! `InputMethodManagerService` `ime set ID` (the selection is `Settings.Secure.DEFAULT_INPUT_METHOD`).

use serde_json::Value;

/// A kind of change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// An app `android_app_launch` started (item: the package).
    AppLaunched,
    /// A package `android_app_install` added (item: the package).
    AppInstalled,
    /// A file `android_file_push` wrote (item: its device path).
    FilePushed,
    /// A setting (item: `NAMESPACE KEY`; the record keeps the value before).
    Setting,
    /// A `wm size` override (item empty).
    WmSize,
    /// A `wm density` override (item empty).
    WmDensity,
    /// A side-effecting tool ran on the binding (item empty): whatever it changed, the screen
    /// may differ from how the binding found it, so HOME is pressed (`go_home`).
    Used,
}

impl Kind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::AppLaunched => "app_launched",
            Kind::AppInstalled => "app_installed",
            Kind::FilePushed => "file_pushed",
            Kind::Setting => "setting",
            Kind::WmSize => "wm_size",
            Kind::WmDensity => "wm_density",
            Kind::Used => "used",
        }
    }

    /// The kind of a stored name (`None`: a name this build does not know).
    pub fn parse(s: &str) -> Option<Kind> {
        [
            Kind::AppLaunched,
            Kind::AppInstalled,
            Kind::FilePushed,
            Kind::Setting,
            Kind::WmSize,
            Kind::WmDensity,
            Kind::Used,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// One change: its kind and item.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Change {
    /// The kind.
    pub kind: Kind,
    /// The package, the path, `NAMESPACE KEY`, or empty.
    pub item: String,
}

/// The settings rotation locks (`android_set_orientation`).
pub const ROTATION_KEYS: [(&str, &str); 2] = [
    ("system", "accelerometer_rotation"),
    ("system", "user_rotation"),
];
/// The selected input method.
pub const IME_KEY: (&str, &str) = ("secure", "default_input_method");
/// The animation scales (Developer options; AOSP `Settings.Global`).
pub const ANIMATION_KEYS: [(&str, &str); 3] = [
    ("global", "window_animation_scale"),
    ("global", "transition_animation_scale"),
    ("global", "animator_duration_scale"),
];

/// Whether `(namespace, key)` is a setting the release puts back.
fn tracked(ns: &str, key: &str) -> bool {
    ROTATION_KEYS
        .iter()
        .chain(ANIMATION_KEYS.iter())
        .chain(std::iter::once(&IME_KEY))
        .any(|(n, k)| *n == ns && *k == key)
}

/// The `android_shell` argv of a call, with a leading `cmd SERVICE` folded to the program it
/// stands for (`cmd settings put …` is `settings put …`).
fn shell_argv(args: &Value) -> Vec<&str> {
    let argv: Vec<&str> = args["argv"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match argv.as_slice() {
        ["cmd", "window", rest @ ..] => std::iter::once("wm").chain(rest.iter().copied()).collect(),
        ["cmd", "input_method", rest @ ..] => {
            std::iter::once("ime").chain(rest.iter().copied()).collect()
        }
        ["cmd", "settings", rest @ ..] => std::iter::once("settings")
            .chain(rest.iter().copied())
            .collect(),
        _ => argv,
    }
}

/// `settings` arguments without `--user N` (AOSP `SettingsService` takes it anywhere before
/// the namespace).
fn without_user<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if *a == "--user" {
            it.next();
        } else {
            out.push(*a);
        }
    }
    out
}

/// The settings a call of `tool_id` with `args` is about to change, as `(namespace, key)`:
/// read before it runs, so the release can put back what was there.
pub fn settings_touched(tool_id: &str, args: &Value) -> Vec<(String, String)> {
    let owned = |(n, k): (&str, &str)| (n.to_string(), k.to_string());
    match tool_id {
        "android_set_orientation" => ROTATION_KEYS.into_iter().map(owned).collect(),
        "android_shell" => {
            let argv = shell_argv(args);
            match argv.as_slice() {
                ["settings", rest @ ..] => match without_user(rest).as_slice() {
                    ["put", ns, key, _, ..] if tracked(ns, key) => vec![owned((ns, key))],
                    ["delete", ns, key] if tracked(ns, key) => vec![owned((ns, key))],
                    _ => Vec::new(),
                },
                ["ime", "set", ..] => vec![owned(IME_KEY)],
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// The changes a call of `tool_id` with `args` made, from its outcome (`result`: the tool's
/// output, `None` when it failed). A launch counts even when it failed (a crashed or locked
/// launch may have started the app; stopping an app that is not running is harmless); every
/// other change counts only when the call succeeded.
pub fn changes_made(tool_id: &str, args: &Value, result: Option<&Value>) -> Vec<Change> {
    let change = |kind, item: &str| Change {
        kind,
        item: item.to_string(),
    };
    let settings = || {
        settings_touched(tool_id, args)
            .into_iter()
            .map(|(ns, key)| change(Kind::Setting, &format!("{ns} {key}")))
            .collect::<Vec<_>>()
    };
    match (tool_id, result) {
        ("android_app_launch", _) => args["package"]
            .as_str()
            .map(|p| vec![change(Kind::AppLaunched, p)])
            .unwrap_or_default(),
        ("android_app_install", Some(out)) => out["new_packages"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(|p| change(Kind::AppInstalled, p))
                    .collect()
            })
            .unwrap_or_default(),
        ("android_file_push", Some(out)) => out["path"]
            .as_str()
            .map(|p| vec![change(Kind::FilePushed, p)])
            .unwrap_or_default(),
        ("android_set_orientation", Some(_)) => settings(),
        ("android_shell", Some(_)) => {
            let argv = shell_argv(args);
            match argv.as_slice() {
                ["wm", "size", spec, ..] if *spec != "reset" && !spec.starts_with('-') => {
                    vec![change(Kind::WmSize, "")]
                }
                ["wm", "density", n, ..] if *n != "reset" && !n.starts_with('-') => {
                    vec![change(Kind::WmDensity, "")]
                }
                _ => settings(),
            }
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_tool_names_what_it_changed() {
        let launch = changes_made("android_app_launch", &json!({"package": "com.a"}), None);
        assert_eq!(
            launch,
            [Change {
                kind: Kind::AppLaunched,
                item: "com.a".into()
            }]
        );
        let install = changes_made(
            "android_app_install",
            &json!({}),
            Some(&json!({"package": "com.b", "new_packages": ["com.b"]})),
        );
        assert_eq!(install[0].kind, Kind::AppInstalled);
        assert!(changes_made("android_app_install", &json!({}), None).is_empty());
        let push = changes_made(
            "android_file_push",
            &json!({"path": "/sdcard/Download/"}),
            Some(&json!({"path": "/sdcard/Download/a.txt"})),
        );
        assert_eq!(push[0].item, "/sdcard/Download/a.txt");
        let shell =
            |argv: Value| changes_made("android_shell", &json!({ "argv": argv }), Some(&json!({})));
        assert_eq!(
            shell(json!(["wm", "size", "720x1280"]))[0].kind,
            Kind::WmSize
        );
        assert!(
            shell(json!(["wm", "size"])).is_empty(),
            "a read changes nothing"
        );
        assert!(shell(json!(["wm", "size", "reset"])).is_empty());
        assert_eq!(
            shell(json!(["cmd", "window", "density", "320"]))[0].kind,
            Kind::WmDensity
        );
        assert_eq!(
            shell(json!([
                "settings",
                "--user",
                "0",
                "put",
                "global",
                "window_animation_scale",
                "0"
            ]))[0]
                .item,
            "global window_animation_scale"
        );
        assert!(shell(json!(["settings", "put", "global", "adb_enabled", "1"])).is_empty());
        assert_eq!(
            shell(json!(["ime", "set", "x/.Y"]))[0].item,
            "secure default_input_method"
        );
        assert_eq!(
            changes_made(
                "android_set_orientation",
                &json!({"orientation": "landscape"}),
                Some(&json!({}))
            )
            .len(),
            2
        );
        assert!(changes_made("android_tap", &json!({}), Some(&json!({}))).is_empty());
    }

    #[test]
    fn kinds_round_trip() {
        for k in [Kind::AppLaunched, Kind::Setting, Kind::WmDensity] {
            assert_eq!(Kind::parse(k.as_str()), Some(k));
        }
        assert_eq!(Kind::parse("other"), None);
    }
}
