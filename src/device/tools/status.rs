//! `android_device_status`: model, release, battery, screen, lock screen, display size,
//! foreground app, a crash/ANR dialog over it and lock task mode in one shell round trip
//! (`getprop; dumpsys battery; wm size; dumpsys power; dumpsys window; dumpsys trust; dumpsys
//! activity activities | grep …; dumpsys input_method | grep …`). What a section did not give is `null` and listed in
//! `unavailable` (a user reading `""` as a model cannot tell a blank property from a failed
//! read); nothing at all is an error. A system service it reads that is not running (`Can't
//! find service: window` while `sys.boot_completed` already prints 1: a system server
//! restarting) is `device_booting` naming it, never a status with holes (field bug 49). The
//! display and focus are display 0's own block, whatever other displays the dump lists first
//! (field bugs 52, 53).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::command::{Text, SEP};
use super::phone::display::DisplayGeometry;
use super::phone::keyboard::KEYBOARD_READ;
use super::phone::lock_task::LOCK_TASK_READ;
use super::phone::readiness::{DeviceFacts, Readiness};
use super::phone::ui::TEXT_LIMIT;
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::parse::displays::{WindowDump, DEFAULT_DISPLAY};
use crate::device::parse::{battery, getprop, keyboard, keyguard, lock_task, power, wm};

/// Deadline of the one compound shell command.
pub const STATUS_DEADLINE: Duration = Duration::from_secs(10);

/// `android_device_status`.
pub struct DeviceStatus;

/// No arguments.
#[derive(Debug, Deserialize)]
pub struct Args {}

/// A width and height, px.
#[derive(Debug, Serialize)]
pub struct Size {
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
}

impl From<(u32, u32)> for Size {
    fn from((width, height): (u32, u32)) -> Self {
        Size { width, height }
    }
}

/// The display: input-space size plus `wm size`'s physical and override sizes.
#[derive(Debug, Serialize)]
pub struct Display {
    /// Input-space width (override and rotation applied), px.
    pub width: Option<u32>,
    /// Input-space height, px.
    pub height: Option<u32>,
    /// `Physical size:`.
    pub physical: Option<Size>,
    /// `Override size:`.
    pub r#override: Option<Size>,
}

/// The result. A field the phone's answer did not give (a missing, empty or garbled property
/// or `dumpsys` section) is `null` — never an empty string — and named in `unavailable`.
#[derive(Debug, Serialize)]
pub struct Output {
    /// `ro.product.model`.
    pub model: Option<String>,
    /// `ro.product.manufacturer`.
    pub manufacturer: Option<String>,
    /// `ro.build.version.release`.
    pub android_release: Option<String>,
    /// `ro.build.version.sdk`.
    pub sdk: Option<u32>,
    /// `level`×100/`scale` (field bug 18); `null` when the level is outside `0..=scale` (a
    /// value set with `dumpsys battery set level`, field bug 82: see `notes`).
    pub battery_percent: Option<u32>,
    /// The battery values were set from the shell (`dumpsys battery set|unplug`: the dump says
    /// `UPDATES STOPPED`), not read from the hardware; `dumpsys battery reset` restores them.
    pub battery_overridden: Option<bool>,
    /// Whether the screen is on.
    pub screen_on: Option<bool>,
    /// The lock screen is showing on the default display (no app shown over it): acting tools
    /// answer `device_locked`.
    pub locked: Option<bool>,
    /// The lock needs the PIN, pattern or password (`false`: a swipe dismisses it). Read from
    /// `KeyguardServiceDelegate secure=` (Android 6–14) or, while locked, `dumpsys trust`
    /// `deviceLocked=`; `null` where neither tells (Android 15+ while unlocked).
    pub lock_secure: Option<bool>,
    /// Display sizes.
    pub display: Display,
    /// Package of the app in front on the default display: the focused window's, or under a
    /// framework crash/ANR dialog the app it covers (field bugs 61, 79).
    pub foreground_package: Option<String>,
    /// The framework's crash or ANR dialog holding the default display's focus (`null`: none).
    pub app_dialog: Option<AppDialogOut>,
    /// Lock task mode: `none`, `locked` (a kiosk app keeps itself in front) or `pinned` (screen
    /// pinning); other apps cannot be launched meanwhile (field bug 81).
    pub lock_task: Option<&'static str>,
    /// The app lock task mode keeps in front (`null` when none or not readable).
    pub lock_task_package: Option<String>,
    /// The soft keyboard shows (`dumpsys input_method` `mInputShown=`, else the IME's
    /// `mIsInputViewShown=`): it covers the lower part of the screen; `android_hide_keyboard`
    /// closes it.
    pub keyboard_shown: Option<bool>,
    /// Why a value above is null or flagged, for the agent (e.g. an overridden battery level).
    pub notes: Vec<String>,
    /// Fields above that are `null` because the phone did not report them, in field order
    /// ([`UNAVAILABLE_FIELDS`]; `display` when its input-space size is unknown,
    /// `display.physical` when `wm size` gave no physical size). Empty when everything was
    /// read.
    pub unavailable: Vec<&'static str>,
}

/// A framework process dialog (AOSP `AppErrorDialog`, `AppNotRespondingDialog`).
#[derive(Debug, Serialize)]
pub struct AppDialogOut {
    /// `crash`, `not_responding` or `waiting_for_debugger`.
    pub kind: &'static str,
    /// The package whose process it is about.
    pub package: String,
    /// The process as titled (`com.pkg:service` for a secondary one).
    pub process: String,
}

/// Names `unavailable` may hold, in result order.
pub const UNAVAILABLE_FIELDS: &[&str] = &[
    "model",
    "manufacturer",
    "android_release",
    "sdk",
    "battery_percent",
    "battery_overridden",
    "screen_on",
    "locked",
    "lock_secure",
    "display",
    "display.physical",
    "foreground_package",
    "lock_task",
    "keyboard_shown",
];

impl Output {
    /// Fills `unavailable` from the fields that are `null`.
    fn with_unavailable(mut self) -> Output {
        let missing = [
            self.model.is_none(),
            self.manufacturer.is_none(),
            self.android_release.is_none(),
            self.sdk.is_none(),
            self.battery_percent.is_none(),
            self.battery_overridden.is_none(),
            self.screen_on.is_none(),
            self.locked.is_none(),
            self.lock_secure.is_none(),
            self.display.width.is_none() || self.display.height.is_none(),
            // `override` is null whenever no override is set: not a failure to read.
            self.display.physical.is_none(),
            self.foreground_package.is_none(),
            self.lock_task.is_none(),
            self.keyboard_shown.is_none(),
        ];
        self.unavailable = UNAVAILABLE_FIELDS
            .iter()
            .zip(missing)
            .filter(|(_, m)| *m)
            .map(|(f, _)| *f)
            .collect();
        self
    }
}

/// A property's value, `None` when it is absent or blank (a phone without the property prints
/// nothing for it; `getprop.cpp` prints `[]` for an empty one).
fn non_blank(v: Option<&String>) -> Option<String> {
    v.map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl DeviceTool for DeviceStatus {
    const ID: &'static str = "android_device_status";
    const TITLE: &'static str = "Android device status";
    const DESCRIPTION: &'static str = "Read the bound phone's model, manufacturer, Android release and SDK, battery percent, whether the screen is on, whether the lock screen is showing (locked) and needs a PIN/pattern/password (lock_secure), display size (px), the foreground app package of the default display, a crash/ANR dialog over it (app_dialog), lock task mode (lock_task: none, locked = a kiosk, pinned = screen pinning; other apps cannot be launched), whether the soft keyboard shows (keyboard_shown; android_hide_keyboard closes it) and whether the battery values were overridden from the shell (battery_overridden; an out-of-range level reads battery_percent null, explained in notes). A value the phone did not report is null and its field is listed in `unavailable` (empty when everything was read); when the phone reported none of them the call fails with device_command_failed. No side effects.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    const BACKENDS: &'static [&'static str] = &["shell"];
    type Args = Args;
    type Output = Output;

    fn output_schema() -> Value {
        let size = json!({"type": ["object", "null"], "required": ["width", "height"], "properties": {
            "width": {"type": "integer"}, "height": {"type": "integer"}}});
        let text = json!({"type": ["string", "null"], "minLength": 1});
        json!({"type": "object",
        "required": ["model", "manufacturer", "android_release", "sdk", "battery_percent", "battery_overridden", "screen_on", "locked", "lock_secure", "display", "foreground_package", "app_dialog", "lock_task", "lock_task_package", "keyboard_shown", "notes", "unavailable"],
        "properties": {
            "model": text, "manufacturer": text,
            "android_release": text, "sdk": {"type": ["integer", "null"]},
            "battery_percent": {"type": ["integer", "null"], "minimum": 0, "maximum": 100},
            "battery_overridden": {"type": ["boolean", "null"]},
            "screen_on": {"type": ["boolean", "null"]},
            "locked": {"type": ["boolean", "null"]}, "lock_secure": {"type": ["boolean", "null"]},
            "display": {"type": "object", "required": ["width", "height", "physical", "override"], "properties": {
                "width": {"type": ["integer", "null"]}, "height": {"type": ["integer", "null"]},
                "physical": size, "override": size
            }},
            "foreground_package": {"type": ["string", "null"]},
            "app_dialog": {"type": ["object", "null"], "required": ["kind", "package", "process"], "properties": {
                "kind": {"enum": ["crash", "not_responding", "waiting_for_debugger"]},
                "package": {"type": "string"}, "process": {"type": "string"}
            }},
            "lock_task": {"enum": ["none", "locked", "pinned", null]},
            "lock_task_package": {"type": ["string", "null"]},
            "keyboard_shown": {"type": ["boolean", "null"]},
            "notes": {"type": "array", "items": {"type": "string"}},
            "unavailable": {"type": "array", "uniqueItems": true, "items": {"enum": UNAVAILABLE_FIELDS}}
        }})
    }

    async fn run(_: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let cmd = format!(
            "getprop; echo {SEP}; dumpsys battery; echo {SEP}; wm size; echo {SEP}; dumpsys power; echo {SEP}; dumpsys window; echo {SEP}; dumpsys trust; echo {SEP}; {LOCK_TASK_READ}; echo {SEP}; {KEYBOARD_READ}"
        );
        let out = ctx.shell(&cmd, STATUS_DEADLINE, TEXT_LIMIT).await?;
        let decoded = Text::decode(&out);
        if let Some(e) = services_down(&decoded) {
            return Err(e);
        }
        let text = decoded.stdout;
        let parts: Vec<&str> = text.split(&format!("{SEP}\n")).collect();
        let part = |i: usize| parts.get(i).copied().unwrap_or("");
        let props = getprop::parse_getprop(part(0));
        let prop = |k: &str| non_blank(props.get(k));
        let battery = battery::parse_dumpsys_battery(part(1));
        let size = wm::parse_wm_size(part(2));
        let windows = WindowDump::parse(part(4));
        // The input space: display 0's `cur=` (override and rotation applied), else wm's
        // effective size.
        let effective = windows
            .size(DEFAULT_DISPLAY)
            .or_else(|| size.as_ref().and_then(|s| s.effective()));
        if let Some(size) = effective {
            ctx.display.set(DisplayGeometry {
                size,
                rotation: windows.rotation(DEFAULT_DISPLAY),
            });
        }
        let screen_on = power::parse_screen_on(part(3));
        let lock = keyguard::parse_keyguard(&format!("{}{}", part(4), part(5)));
        // Kept as read: the status reports what this read saw (`lock_secure` not carried).
        let readiness = Readiness {
            screen_on: screen_on.or(windows.awake(DEFAULT_DISPLAY)),
            ..Readiness::from_dumps(&windows, &lock)
        };
        let _ = ctx.readiness.record(readiness.clone());
        let lock_task = lock_task::parse_lock_task(part(6));
        ctx.readiness.note(DeviceFacts {
            tv: prop("ro.build.characteristics").map(|c| c.split(',').any(|t| t.trim() == "tv")),
            lock_task: lock_task.as_ref().map(|t| t.mode),
        });
        let focus = windows.focus(DEFAULT_DISPLAY);
        let app_dialog = focus.as_ref().and_then(|f| f.dialog.clone());
        // Under a framework dialog, the app in front is the one it covers.
        let foreground = match &app_dialog {
            Some(_) => windows.app_under_focus(DEFAULT_DISPLAY),
            None => focus,
        };
        let mut notes = Vec::new();
        if let Some(b) = battery.as_ref().filter(|b| b.percent.is_none()) {
            if let (Some(level), Some(scale)) = (b.level, b.scale) {
                notes.push(format!("battery level {level} is outside 0..={scale}{}: battery_percent is null", if b.overridden { " (set with `dumpsys battery set level`; `dumpsys battery reset` restores the real readings)" } else { "" }));
            }
        }
        if battery.as_ref().is_some_and(|b| b.overridden) && notes.is_empty() {
            notes.push("the battery values were set with `dumpsys battery set|unplug` (UPDATES STOPPED), not read from the hardware; `dumpsys battery reset` restores them".to_string());
        }
        let out = Output {
            model: prop("ro.product.model"),
            manufacturer: prop("ro.product.manufacturer"),
            android_release: prop("ro.build.version.release"),
            sdk: prop("ro.build.version.sdk").and_then(|v| v.parse::<u32>().ok()),
            battery_percent: battery.as_ref().and_then(|b| b.percent),
            battery_overridden: battery.as_ref().map(|b| b.overridden),
            screen_on,
            locked: readiness.locked,
            lock_secure: readiness.lock_secure,
            display: Display {
                width: effective.map(|s| s.0),
                height: effective.map(|s| s.1),
                physical: size.as_ref().and_then(|s| s.physical).map(Size::from),
                r#override: size.as_ref().and_then(|s| s.override_size).map(Size::from),
            },
            foreground_package: foreground.and_then(|f| f.package),
            app_dialog: app_dialog.map(|d| AppDialogOut {
                kind: d.kind.as_str(),
                package: d.package,
                process: d.process,
            }),
            lock_task: lock_task.as_ref().map(|t| t.mode.as_str()),
            lock_task_package: lock_task.and_then(|t| t.package),
            keyboard_shown: keyboard::parse_keyboard_shown(part(7)),
            notes,
            unavailable: Vec::new(),
        }
        .with_unavailable();
        if out.unavailable.len() == UNAVAILABLE_FIELDS.len() {
            return Err(nothing_read(&text));
        }
        Ok(out)
    }
}

/// Services this call reads that may be absent on a working phone: `trust` (builds without
/// TrustManagerService) only adds `lock_secure`, `activity` only `lock_task`, `input_method`
/// (builds without an IME, e.g. some kiosks) only `keyboard_shown`.
const OPTIONAL_SERVICES: &[&str] = &["trust", "activity", "input_method"];

/// `device_booting` naming the first service the status read found not running (`dumpsys`
/// prints `Can't find service: NAME` on stderr, `cmd`/`wm` `cmd: Can't find service: NAME`),
/// optional ones aside.
fn services_down(out: &Text) -> Option<DeviceError> {
    out.stderr
        .lines()
        .chain(out.stdout.lines())
        .filter_map(|l| {
            let name = l.rsplit("Can't find service:").next()?.trim();
            (l.contains("Can't find service:") && !OPTIONAL_SERVICES.contains(&name))
                .then(|| (name.to_string(), l.trim().to_string()))
        })
        .map(|(service, line)| DeviceError::ServiceMissing { service, line })
        .next()
}

/// The phone answered, but no section held anything readable (a shell that prints nothing, or
/// only errors): `device_command_failed` quoting the first line it printed.
fn nothing_read(text: &str) -> DeviceError {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.contains(SEP))
        .map(|l| l.chars().take(200).collect::<String>());
    DeviceError::CommandFailed(match first {
        Some(line) => format!("the phone reported none of its status (getprop, dumpsys battery/power/window, wm size gave nothing readable); it printed: {line}"),
        None => "the phone reported none of its status: getprop, dumpsys battery/power/window and wm size printed nothing".to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn outputs_match_the_schema() {
        let mut out = Output {
            model: Some("Pixel 7".into()),
            manufacturer: Some("Google".into()),
            android_release: Some("14".into()),
            sdk: Some(34),
            battery_percent: None,
            battery_overridden: Some(false),
            screen_on: Some(true),
            locked: Some(false),
            lock_secure: None,
            display: Display {
                width: Some(1080),
                height: Some(2400),
                physical: Some((1080, 2400).into()),
                r#override: None,
            },
            foreground_package: None,
            app_dialog: Some(AppDialogOut {
                kind: "crash",
                package: "com.example.notes".into(),
                process: "com.example.notes".into(),
            }),
            lock_task: Some("pinned"),
            lock_task_package: Some("com.example.notes".into()),
            keyboard_shown: Some(false),
            notes: vec!["battery level 999 is outside 0..=100".into()],
            unavailable: Vec::new(),
        }
        .with_unavailable();
        assert_eq!(
            out.unavailable,
            ["battery_percent", "lock_secure", "foreground_package"]
        );
        assert_output::<DeviceStatus>(&out);
        out.model = None;
        out.display = Display {
            width: None,
            height: None,
            physical: None,
            r#override: Some((720, 1600).into()),
        };
        let out = out.with_unavailable();
        assert_eq!(
            out.unavailable,
            [
                "model",
                "battery_percent",
                "lock_secure",
                "display",
                "display.physical",
                "foreground_package"
            ]
        );
        assert_output::<DeviceStatus>(&out);
    }
}
