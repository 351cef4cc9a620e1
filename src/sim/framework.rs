//! What the system server holds besides the apps' own screens: a framework process dialog
//! (crash or ANR) over the screen, lock task mode (kiosk or screen pinning), and battery values
//! overridden from the shell. Plain data and the dialog's view; the programs print them
//! ([`crate::programs`]: `dumpsys window`, `dumpsys activity activities`, `am start`,
//! `dumpsys battery`).

use serde::{Deserialize, Serialize};

use crate::ui::{Action, DialogButton, Node, Rect};

/// Which framework dialog shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DialogKind {
    /// `AppErrorDialog` ("… keeps stopping"): the process crashed.
    Crash,
    /// `AppNotRespondingDialog` ("… isn't responding").
    Anr,
}

/// A framework dialog about one process (AOSP `services/core/java/com/android/server/am/`
/// `AppErrorDialog`, `AppNotRespondingDialog`): its window is titled `Application Error:
/// PROCESS` / `Application Not Responding: PROCESS`, owned by `android`, `ty=SYSTEM_ALERT`
/// (`BaseErrorDialog`), and takes the focus over the app.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppDialog {
    /// Crash or ANR.
    pub kind: DialogKind,
    /// The process (`com.pkg`, or `com.pkg:remote`).
    pub process: String,
}

impl AppDialog {
    /// The window title the system server gives it.
    pub fn title(&self) -> String {
        match self.kind {
            DialogKind::Crash => format!("Application Error: {}", self.process),
            DialogKind::Anr => format!("Application Not Responding: {}", self.process),
        }
    }

    /// The package its process belongs to.
    pub fn package(&self) -> &str {
        self.process.split(':').next().unwrap_or(&self.process)
    }

    /// The dialog's view, centred on `screen`: the message (AOSP `core/res/res/values/strings.xml`
    /// `aerr_application_repeated` "%1$s keeps stopping", `anr_application_process` "%1$s
    /// isn't responding") and its buttons (`aerr_close_app` / `aerr_app_info`, `anr_close` /
    /// `anr_wait`), labelled with the app's `label`.
    pub fn view(&self, label: &str, screen: Rect) -> Node {
        let pkg = "android";
        let (w, h) = (screen.x2, screen.y2);
        let frame = Rect::new(w / 12, h * 2 / 5, w * 11 / 12, h * 3 / 5);
        let text = match self.kind {
            DialogKind::Crash => format!("{label} keeps stopping"),
            DialogKind::Anr => format!("{label} isn't responding"),
        };
        let row = |i: i32, n: i32| {
            let top = frame.y1 + (frame.y2 - frame.y1) * (i + 1) / (n + 1);
            Rect::new(frame.x1 + w / 24, top, frame.x2 - w / 24, top + h / 24)
        };
        let buttons = match self.kind {
            DialogKind::Crash => [
                ("App info", DialogButton::AppInfo),
                ("Close app", DialogButton::Close),
            ],
            DialogKind::Anr => [
                ("Close app", DialogButton::Close),
                ("Wait", DialogButton::Wait),
            ],
        };
        let mut children = vec![Node::new("android.widget.TextView", pkg, row(0, 3))
            .text(&text)
            .id("android:id/alertTitle")];
        for (i, (label, button)) in buttons.iter().enumerate() {
            let mut b = Node::new("android.widget.Button", pkg, row(i as i32 + 1, 3))
                .text(label)
                .id(match button {
                    DialogButton::Close => "android:id/aerr_close",
                    DialogButton::Wait => "android:id/aerr_wait",
                    DialogButton::AppInfo => "android:id/aerr_app_info",
                })
                .on_tap(Action::Dialog(*button));
            b.clickable = true;
            b.focusable = true;
            children.push(b);
        }
        Node::new("android.widget.FrameLayout", pkg, frame)
            .id("android:id/parentPanel")
            .fill([0xf2, 0xf2, 0xf2, 0xff])
            .with(children)
    }
}

/// Lock task mode (AOSP `LockTaskController`, `lockTaskModeToString`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LockTaskMode {
    /// A device owner's kiosk (`startLockTask` by an allowlisted app): Home and Recents off.
    Locked,
    /// Screen pinning by the user: Home and Recents show "App is pinned" and do nothing.
    Pinned,
}

impl LockTaskMode {
    /// `mLockTaskModeState=` value.
    pub fn as_dump(self) -> &'static str {
        match self {
            Self::Locked => "LOCKED",
            Self::Pinned => "PINNED",
        }
    }
}

/// The task locked in front.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockTask {
    /// Kiosk or pinning.
    pub mode: LockTaskMode,
    /// The package of the locked task (launched first if it is not in front).
    pub package: String,
}

/// Values set with `dumpsys battery set|unplug` (AOSP `BatteryService` `Shell.onCommand`):
/// while any is set, updates from the hardware stop and the dump says `(UPDATES STOPPED -- use
/// 'reset' to restart)` until `dumpsys battery reset`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatteryOverride {
    /// `set level N` (no range check in `BatteryService`: 999 is printed as 999).
    pub level: Option<i64>,
    /// `set ac|usb|wireless 0|1`, `unplug` (all three off).
    pub ac: Option<bool>,
    /// See `ac`.
    pub usb: Option<bool>,
    /// See `ac`.
    pub wireless: Option<bool>,
    /// `set status N`.
    pub status: Option<i64>,
}
