//! The focused window (`dumpsys window` / `dumpsys window windows`) and the resumed activity
//! (`dumpsys activity activities`).
//!
//! Window lines (AOSP `DisplayContent.dump`, `WindowState.toString`):
//! `mCurrentFocus=Window{e615992 u0 com.pkg/com.pkg.Activity}`, `mCurrentFocus=null`, a window
//! without an activity (`Window{43e887a8 u0 com.lookout.enterprise}`, `Window{… u0
//! NotificationShade}`), the pre-4.2 form without user (`Window{b4d2a948 pkg/cls paused=false}`),
//! and `mFocusedApp=` holding an `ActivityRecord{…}` (possibly wrapped in
//! `AppWindowToken{… token=Token{… ActivityRecord{…}}}`). Since Android 10 each display prints
//! its own block under `Display: mDisplayId=<n>` (or `Display #<n>`), and `mTopFocusedDisplayId=`
//! names the display with the global focus.
//!
//! Activity lines (AOSP `ActivityTaskSupervisor`/`RootWindowContainer` dumps):
//! `mResumedActivity: ActivityRecord{… u0 pkg/.Act t12}` (≤ Android 9), `ResumedActivity: …`
//! (Android 10+), `topResumedActivity=ActivityRecord{…}`, `Resumed: ActivityRecord{…}`.
//! Captures: files under `tests/fixtures/window/` and `tests/fixtures/activity/`.

use super::package::parse_component;

/// Android's default display (`Display.DEFAULT_DISPLAY`): where `input` and `am start` act
/// when no display is named.
pub const DEFAULT_DISPLAY: u32 = 0;

/// The window that has input focus.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FocusedWindow {
    /// Display of the block the line came from (Android 10+ multi-display dumps).
    pub display_id: Option<u32>,
    /// Owning package, when the title names one.
    pub package: Option<String>,
    /// Fully qualified activity class, when the title is a component.
    pub activity: Option<String>,
    /// Window title as printed (`com.pkg/com.pkg.Act`, `NotificationShade`, `StatusBar`); for the
    /// `mFocusedApp` fallback, the component from the `ActivityRecord`.
    pub title: String,
    /// The framework's crash, ANR or debugger dialog this window is, and whose process it is
    /// about (field bug 79).
    pub dialog: Option<AppDialog>,
}

/// What a framework process dialog says about an app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogKind {
    /// `AppErrorDialog`: "… has stopped" / "… keeps stopping" (the process crashed).
    Crash,
    /// `AppNotRespondingDialog`: "… isn't responding" (ANR).
    NotResponding,
    /// `AppWaitingForDebuggerDialog`: the process waits for a debugger (`am set-debug-app -w`).
    WaitingForDebugger,
}

impl DialogKind {
    /// Stable lower-case name (`crash`, `not_responding`, `waiting_for_debugger`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Crash => "crash",
            Self::NotResponding => "not_responding",
            Self::WaitingForDebugger => "waiting_for_debugger",
        }
    }
}

/// A framework dialog window about one process. The system server titles them `"Application
/// Error: " + processName` (`AppErrorDialog`), `"Application Not Responding: " + processName`
/// (`AppNotRespondingDialog`) and `"Waiting For Debugger: " + processName`
/// (`AppWaitingForDebuggerDialog`), AOSP `services/core/java/com/android/server/am/`; the
/// window's owner is `android` (`ty=SYSTEM_ALERT`). Captures:
/// `tests/fixtures/install-launch/crash-dialog-focus-application-error.txt`,
/// `install-launch/anr-dialog-focus-change-logcat.txt`,
/// `window/appium-android11-emulator-dumpsys-window-windows.txt`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppDialog {
    /// Which dialog.
    pub kind: DialogKind,
    /// The process as titled (`com.pkg`, or `com.pkg:service` for a secondary process).
    pub process: String,
    /// The package the process belongs to (the process name up to `:`).
    pub package: String,
}

/// The framework dialog a window title names, if it is one.
pub fn app_dialog(title: &str) -> Option<AppDialog> {
    const TITLES: [(&str, DialogKind); 3] = [
        ("Application Error: ", DialogKind::Crash),
        ("Application Not Responding: ", DialogKind::NotResponding),
        ("Waiting For Debugger: ", DialogKind::WaitingForDebugger),
    ];
    TITLES.iter().find_map(|(prefix, kind)| {
        let process = title.strip_prefix(prefix)?.trim();
        let package = process.split(':').next().unwrap_or("").to_string();
        let plausible = !package.is_empty()
            && package
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_');
        plausible.then(|| AppDialog {
            kind: *kind,
            process: process.to_string(),
            package,
        })
    })
}

/// `mFocusedApp=` value → the `ActivityRecord{…}` it holds (possibly wrapped in
/// `AppWindowToken{… token=Token{… ActivityRecord{…}}}`).
pub(super) fn focused_app_record(value: &str, display_id: Option<u32>) -> Option<FocusedWindow> {
    activity_record(value).map(|(package, activity, title)| FocusedWindow {
        display_id,
        package: Some(package),
        activity: Some(activity),
        title,
        dialog: None,
    })
}

/// `Window{hash [uN] title [paused=…]}` → window; `null` → `None`.
pub(super) fn parse_window_token(value: &str, display_id: Option<u32>) -> Option<FocusedWindow> {
    let inner = value.trim().strip_prefix("Window{")?;
    let inner = &inner[..inner.rfind('}')?];
    let mut tokens: Vec<&str> = inner.split_whitespace().skip(1).collect();
    if tokens.first().is_some_and(|t| is_user_token(t)) {
        tokens.remove(0);
    }
    if tokens.last().is_some_and(|t| t.starts_with("paused=")) {
        tokens.pop();
    }
    let title = tokens.join(" ");
    if title.is_empty() {
        return None;
    }
    let (package, activity) = match parse_component(&title) {
        Some((p, a)) => (Some(p), Some(a)),
        None => {
            let name = title.strip_prefix("Splash Screen ").unwrap_or(&title);
            let looks_like_package = name.contains('.')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_');
            (looks_like_package.then(|| name.to_string()), None)
        }
    };
    let dialog = app_dialog(&title);
    Some(FocusedWindow {
        display_id,
        package,
        activity,
        title,
        dialog,
    })
}

fn is_user_token(t: &str) -> bool {
    t.strip_prefix('u')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The `ActivityRecord{…}` of a window block's `mActivityRecord=` / `mAppToken=` line →
/// `(package, full class)`.
pub(super) fn activity_record_of(line: &str) -> Option<(String, String)> {
    activity_record(line).map(|(p, c, _)| (p, c))
}

/// Finds `ActivityRecord{hash [uN] pkg/cls [tN]}` anywhere in `value` →
/// `(package, full class, component as printed)`.
fn activity_record(value: &str) -> Option<(String, String, String)> {
    let start = value.find("ActivityRecord{")? + "ActivityRecord{".len();
    let body = &value[start..];
    let body = &body[..body.find('}').unwrap_or(body.len())];
    let component = body.split_whitespace().find(|t| t.contains('/'))?;
    let (package, class) = parse_component(component)?;
    Some((package, class, component.to_string()))
}

/// Parses the resumed (foreground) activity from `dumpsys activity activities` as
/// `(package, fully qualified class)`. Preference: `topResumedActivity`, then
/// `mResumedActivity`/`ResumedActivity`, then `Resumed:`; the first of each kind wins; `null`
/// values are skipped.
pub fn parse_resumed_activity(text: &str) -> Option<(String, String)> {
    const KEYS: [(&str, usize); 5] = [
        ("topResumedActivity=", 0),
        ("mResumedActivity:", 1),
        ("ResumedActivity:", 1),
        ("mResumedActivity=", 1),
        ("Resumed:", 2),
    ];
    let mut best: [Option<(String, String)>; 3] = [None, None, None];
    for line in text.lines() {
        let line = line.trim();
        for (key, rank) in KEYS {
            if let Some(value) = line.strip_prefix(key) {
                if best[rank].is_none() {
                    best[rank] = activity_record(value).map(|(p, c, _)| (p, c));
                }
                break;
            }
        }
    }
    best.into_iter().flatten().next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::parse::displays::parse_current_focus;

    #[test]
    fn jelly_bean_window_dump_old_title_form() {
        let w = parse_current_focus(fixture!(
            "window/avc-dumpsys-window-windows-jb-emulator.txt"
        ))
        .expect("focus");
        assert_eq!(w.package.as_deref(), Some("com.dtmilano.android.sampleui"));
        assert_eq!(
            w.activity.as_deref(),
            Some("com.dtmilano.android.sampleui.MainActivity")
        );
        assert_eq!(
            w.title,
            "com.dtmilano.android.sampleui/com.dtmilano.android.sampleui.MainActivity"
        );
        assert_eq!(w.display_id, None);
    }

    #[test]
    fn android8_grep_with_app_window_token() {
        let text = fixture!("window/android8-grep-mcurrentfocus-mfocusedapp-appwindowtoken.txt");
        let w = parse_current_focus(text).expect("focus");
        assert_eq!(w.package.as_deref(), Some("com.google.android.apps.photos"));
        assert_eq!(
            w.activity.as_deref(),
            Some("com.google.android.apps.photos.home.HomeActivity")
        );
        // With the window line gone, mFocusedApp (inside AppWindowToken{…Token{…}}) answers.
        let app_only: String = text.lines().skip(1).collect();
        let w = parse_current_focus(&app_only).expect("fallback");
        assert_eq!(w.title, "com.google.android.apps.photos/.home.HomeActivity");
        assert_eq!(
            w.activity.as_deref(),
            Some("com.google.android.apps.photos.home.HomeActivity")
        );
    }

    #[test]
    fn android5_polling_null_and_package_only_windows() {
        let text = fixture!("window/android5-mcurrentfocus-null-and-window-without-activity.txt");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(parse_current_focus(lines[0]), None);
        let w = parse_current_focus(lines[1]).expect("activity window");
        assert_eq!(
            w.activity.as_deref(),
            Some("com.lookout.enterprise.ui.android.activity.StartActivity")
        );
        let last = parse_current_focus(lines[lines.len() - 1]).expect("popup window");
        assert_eq!(last.package.as_deref(), Some("com.lookout.enterprise"));
        assert_eq!(
            (last.activity, last.title.as_str()),
            (None, "com.lookout.enterprise")
        );
        // null focus falls back to the focused app of the same block.
        let w = parse_current_focus(&format!(
            "{}\n  mFocusedApp=ActivityRecord{{1 u0 a.b/.C t3}}",
            lines[0]
        ))
        .expect("fallback");
        assert_eq!(w.activity.as_deref(), Some("a.b.C"));
    }

    #[test]
    fn dumps_without_focus_lines() {
        assert_eq!(
            parse_current_focus(fixture!(
                "window/avc-dumpsys-window-lastanr-policy-fragment.txt"
            )),
            None
        );
        // Kodi's window block lists the window but the focus lines were cut from the capture:
        // the top window that can take keys (visible, focusable) is the focus (field bug 61).
        let kodi = fixture!("window/android-tv-kodi-window-windows-head-PARTIAL.txt");
        let w = parse_current_focus(kodi).expect("the top focusable window");
        assert_eq!(
            (w.package.as_deref(), w.activity.as_deref(), w.display_id),
            (Some("org.xbmc.kodi"), Some("org.xbmc.kodi.Main"), Some(0))
        );
        assert_eq!(
            parse_resumed_activity(kodi),
            None,
            "mActivityRecord= is not a resumed-activity key"
        );
        assert_eq!(parse_current_focus(""), None);
        assert_eq!(parse_current_focus("mCurrentFocus=Window{"), None);
    }

    #[test]
    fn field_bug_79_framework_dialogs_name_their_process() {
        let text = fixture!("install-launch/crash-dialog-focus-application-error.txt");
        let w = parse_current_focus(text).expect("focus");
        let d = w.dialog.expect("a crash dialog");
        assert_eq!(d.kind, DialogKind::Crash);
        assert_eq!(d.package, "dev.jasonpearson.automobile.ctrlproxy");
        assert_eq!((w.package, w.activity), (None, None));
        // The ANR window as the logcat names it, and a secondary process.
        let anr = fixture!("install-launch/anr-dialog-focus-change-logcat.txt");
        let title = anr
            .split("to Window{397fff u0 ")
            .nth(1)
            .and_then(|t| t.split('}').next())
            .expect("the focus change line");
        let d = app_dialog(title).expect("an ANR dialog");
        assert_eq!(
            (d.kind, d.package.as_str()),
            (DialogKind::NotResponding, "cgeo.geocaching")
        );
        let d = app_dialog("Application Not Responding: com.x.y:sync").unwrap();
        assert_eq!(
            (d.process.as_str(), d.package.as_str()),
            ("com.x.y:sync", "com.x.y")
        );
        let d = app_dialog("Waiting For Debugger: com.x.y").unwrap();
        assert_eq!(d.kind.as_str(), "waiting_for_debugger");
        assert_eq!(app_dialog("Application Error: "), None);
        assert_eq!(app_dialog("com.x/com.x.Main"), None);
    }

    #[test]
    fn android13_activity_dump_system_window_and_resumed() {
        let text = fixture!("activity/mtk-tablet-android13-dumpsys-activity-activities.txt");
        let w = parse_current_focus(text).expect("focus");
        assert_eq!(w.title, "NotificationShade");
        assert_eq!((w.package, w.activity, w.display_id), (None, None, Some(0)));
        assert_eq!(
            parse_resumed_activity(text),
            Some((
                "com.mediatek.camera".into(),
                "com.mediatek.camera.CameraLauncher".into()
            ))
        );
    }

    #[test]
    fn resumed_activity_grep_line() {
        assert_eq!(
            parse_resumed_activity(fixture!(
                "activity/android8-9-grep-resumedactivity-line.txt"
            )),
            Some((
                "com.tencent.mobileqq".into(),
                "com.tencent.mobileqq.activity.SplashActivity".into()
            ))
        );
        let t = "  mResumedActivity: ActivityRecord{1 u0 a.b/.Old t1}\n  topResumedActivity=ActivityRecord{2 u0 c.d/c.d.New t2}";
        assert_eq!(
            parse_resumed_activity(t),
            Some(("c.d".into(), "c.d.New".into()))
        );
        assert_eq!(parse_resumed_activity("  mResumedActivity: null"), None);
    }

    #[test]
    fn the_default_display_answers_even_when_another_has_the_top_focus() {
        let t = "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n\
                 \x20 Display: mDisplayId=2 rootTasks=1\n\
                 \x20   mCurrentFocus=null\n\
                 \x20   mFocusedApp=ActivityRecord{bb u10 org.video/.Player t9}\n\
                 \x20 Display: mDisplayId=0 rootTasks=3\n\
                 \x20   mCurrentFocus=Window{aa u0 com.android.launcher3/com.android.launcher3.Launcher}\n\
                 \x20 mTopFocusedDisplayId=2\n";
        let w = parse_current_focus(t).expect("focus");
        assert_eq!(w.display_id, Some(0));
        assert_eq!(w.package.as_deref(), Some("com.android.launcher3"));
        // Display 2's focus is its null window's focused app.
        let other = crate::device::parse::displays::WindowDump::parse(t)
            .focus(2)
            .expect("display 2");
        assert_eq!(other.activity.as_deref(), Some("org.video.Player"));
        let splash =
            parse_current_focus("mCurrentFocus=Window{9 u0 Splash Screen com.x.y}").expect("s");
        assert_eq!(
            (splash.package.as_deref(), splash.title.as_str()),
            (Some("com.x.y"), "Splash Screen com.x.y")
        );
    }
}
