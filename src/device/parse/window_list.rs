//! The window list of `dumpsys window windows` (`WINDOW MANAGER WINDOWS`): one block per window,
//! printed top of the Z-order first, headed `Window #N Window{hash uU TITLE}:` (AOSP
//! `WindowManagerService.dumpWindowsNoHeaderLocked`, `WindowState.dump`; Android 4.x numbers
//! them from the top down, `#7` first, later releases from `#0`: the print order is the order).
//!
//! Since Android 11 the windows section prints no `mCurrentFocus=` / `mFocusedApp=` (they live
//! in each display's block of `dumpsys window displays`): captures of Android 11, 12 and 13
//! (`tests/fixtures/window/appium-android1{1,2,3}-emulator-dumpsys-window-windows.txt`), and the
//! reports openatx/uiautomator2#952 (Android 13, 14), #1148 (Android 15),
//! JeffLIrion/python-androidtv#271 (Android TV 11). A reader of that section alone finds the
//! focus the way the window manager picks it (`DisplayContent.findFocusedWindow`): the first
//! window, top down, that can receive keys (`WindowState.canReceiveKeys`: its view `VISIBLE`
//! and not `FLAG_NOT_FOCUSABLE`) — field bug 61.
//!
//! Per block, the first of each: `mDisplayId=` (Android 10+), `package=` (the owner),
//! `ty=` (symbolic `BASE_APPLICATION`, `SYSTEM_ALERT`, or numeric `1`, `2003` before Android
//! 10), `fl=` (symbolic words, or `#hex` before Android 10; `FLAG_NOT_FOCUSABLE` = 0x8,
//! `FLAG_SECURE` = 0x2000, AOSP `WindowManager.LayoutParams`), `mViewVisibility=0x0` (`View`
//! `VISIBLE`; 0x4 `INVISIBLE`, 0x8 `GONE`), `isVisible=` / `isOnScreen=` (Android 11+),
//! `mActivityRecord=` / `mAppToken=` (the window's activity). A block runs to the next header:
//! Android 13's `paramsForRotation=` continuation lines start in column 2 like the header, so
//! indentation cannot end it.

use super::text::parse_u32;
use super::window::{activity_record_of, parse_window_token, FocusedWindow};

/// `WindowManager.LayoutParams.FLAG_NOT_FOCUSABLE`.
pub const FLAG_NOT_FOCUSABLE: u32 = 0x0000_0008;
/// `WindowManager.LayoutParams.FLAG_SECURE`.
pub const FLAG_SECURE: u32 = 0x0000_2000;

/// One window of the list; `None` where its block does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowEntry {
    /// The window as its header names it (title, package and activity when the title names
    /// them, a framework dialog's process).
    pub window: FocusedWindow,
    /// `mDisplayId=` (absent before Android 10).
    pub display_id: Option<u32>,
    /// `package=`: the owner (`android` for the framework's crash and ANR dialogs).
    pub owner: Option<String>,
    /// `ty=` as printed (`BASE_APPLICATION`, `SYSTEM_ALERT`, `1`, `2040`).
    pub window_type: Option<String>,
    /// `FLAG_NOT_FOCUSABLE` is set.
    pub not_focusable: Option<bool>,
    /// `FLAG_SECURE` is set.
    pub secure: Option<bool>,
    /// Shown: `mViewVisibility=0x0` and neither `isVisible=false` nor `isOnScreen=false`.
    pub visible: Option<bool>,
    /// The activity the window belongs to, `(package, full class)`.
    pub activity: Option<(String, String)>,
}

impl WindowEntry {
    /// Whether the window could take the key focus (`WindowState.canReceiveKeys`): not known
    /// to be hidden, not `FLAG_NOT_FOCUSABLE`.
    pub fn receives_keys(&self) -> bool {
        self.visible != Some(false) && self.not_focusable != Some(true)
    }

    /// Whether it is on display `id` (a block without `mDisplayId=` is the default display's).
    pub fn on_display(&self, id: u32) -> bool {
        self.display_id
            .map_or(id == super::window::DEFAULT_DISPLAY, |d| d == id)
    }

    /// Whether it is an app's own window: it belongs to an activity, or its type is an
    /// application window (`BASE_APPLICATION`, `ty=1`).
    pub fn is_app_window(&self) -> bool {
        self.activity.is_some()
            || matches!(
                self.window_type.as_deref(),
                Some("BASE_APPLICATION" | "APPLICATION" | "1" | "2")
            )
    }

    fn read(&mut self, line: &str) {
        for (i, word) in line.split_whitespace().enumerate() {
            if let Some(v) = word.strip_prefix("mDisplayId=") {
                self.display_id = self.display_id.or_else(|| parse_u32(v));
            } else if let Some(v) = word.strip_prefix("package=") {
                self.owner.get_or_insert_with(|| v.to_string());
            } else if let Some(v) = word.strip_prefix("ty=") {
                self.window_type
                    .get_or_insert_with(|| v.trim_end_matches('}').to_string());
            } else if let Some(v) = word.strip_prefix("fl=") {
                if self.not_focusable.is_none() {
                    let rest = line.split_whitespace().skip(i + 1);
                    let flags = layout_flags(v, rest);
                    self.not_focusable = flags.map(|f| f & FLAG_NOT_FOCUSABLE != 0);
                    self.secure = flags.map(|f| f & FLAG_SECURE != 0);
                }
            } else if let Some(v) = word.strip_prefix("mViewVisibility=") {
                if self.visible.is_none() {
                    self.visible = v.strip_prefix("0x").map(|h| h == "0");
                }
            } else if let Some(v) = word
                .strip_prefix("isVisible=")
                .or_else(|| word.strip_prefix("isOnScreen="))
            {
                if v == "false" {
                    self.visible = Some(false);
                }
            }
        }
        let line = line.trim();
        if self.activity.is_none()
            && ["mActivityRecord=", "mAppToken="]
                .iter()
                .any(|k| line.starts_with(k))
        {
            self.activity = activity_record_of(line);
        }
    }
}

/// The flags of a `fl=` token: `#hex` (numeric form), or the symbolic words that follow it on
/// the line up to the next `key=` word. `None` when neither form reads.
fn layout_flags<'a>(first: &'a str, rest: impl Iterator<Item = &'a str>) -> Option<u32> {
    if let Some(hex) = first.strip_prefix('#') {
        let hex: String = hex.chars().take_while(char::is_ascii_hexdigit).collect();
        return u32::from_str_radix(&hex, 16).ok();
    }
    let words = std::iter::once(first)
        .chain(rest.take_while(|w| !w.contains('=')))
        .map(|w| w.trim_end_matches('}'));
    let mut flags = 0;
    for w in words {
        flags |= match w {
            "NOT_FOCUSABLE" => FLAG_NOT_FOCUSABLE,
            "SECURE" => FLAG_SECURE,
            _ => 0,
        };
    }
    Some(flags)
}

/// `Window #N Window{…}:` → the `Window{…}` token.
fn header(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("Window #")?;
    let (num, token) = rest.split_once(' ')?;
    (num.bytes().all(|b| b.is_ascii_digit()) && token.ends_with(':'))
        .then(|| token.trim_end_matches(':'))
}

/// The windows of `text` in print order (top of the Z-order first). Lines outside any window
/// block are ignored; a dump without a window list gives an empty list.
pub fn parse_window_list(text: &str) -> Vec<WindowEntry> {
    let mut list: Vec<WindowEntry> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if let Some(window) = header(line).and_then(|t| parse_window_token(t, None)) {
            list.push(WindowEntry {
                window,
                ..WindowEntry::default()
            });
            open = true;
        } else if !line.is_empty() && !line.starts_with([' ', '\t']) {
            // A column-0 line is the next section of a full `dumpsys window`.
            open = false;
        } else if let Some(entry) = list.last_mut().filter(|_| open) {
            entry.read(line);
        }
    }
    for e in &mut list {
        e.window.display_id = e.display_id;
    }
    list
}

/// The window of display `id` that takes the key focus: the first, top down, that can
/// receive keys.
pub fn focus_candidate(list: &[WindowEntry], id: u32) -> Option<&WindowEntry> {
    list.iter().find(|w| w.on_display(id) && w.receives_keys())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn android11_emulator_list_the_anr_dialog_takes_the_focus() {
        let list = parse_window_list(fixture!(
            "window/appium-android11-emulator-dumpsys-window-windows.txt"
        ));
        assert_eq!(list.len(), 10);
        assert_eq!(list[1].window.title, "NavigationBar0");
        assert_eq!(
            (list[1].not_focusable, list[1].visible),
            (Some(true), Some(true))
        );
        assert_eq!(list[0].visible, Some(false), "mViewVisibility=0x4");
        let focus = focus_candidate(&list, 0).expect("a focusable window");
        assert_eq!(
            focus.window.title,
            "Application Not Responding: com.android.systemui"
        );
        assert_eq!(focus.owner.as_deref(), Some("android"));
        assert_eq!(focus.window_type.as_deref(), Some("SYSTEM_ALERT"));
        assert!(!focus.is_app_window());
        let launcher = &list[8];
        assert!(launcher.is_app_window() && launcher.receives_keys());
        assert_eq!(
            launcher.activity.as_ref().map(|a| a.0.as_str()),
            Some("com.google.android.apps.nexuslauncher")
        );
        assert_eq!(focus_candidate(&list, 2), None);
    }

    #[test]
    fn android12_and_13_lists_skip_not_focusable_and_hidden_windows() {
        for (file, pkg) in [
            (
                fixture!("window/appium-android12-emulator-dumpsys-window-windows.txt"),
                "com.android.launcher3",
            ),
            (
                fixture!("window/appium-android13-emulator-dumpsys-window-windows.txt"),
                "com.google.android.apps.nexuslauncher",
            ),
        ] {
            let list = parse_window_list(file);
            let focus = focus_candidate(&list, 0).expect("focus");
            assert_eq!(focus.window.package.as_deref(), Some(pkg));
            assert_eq!(focus.window_type.as_deref(), Some("BASE_APPLICATION"));
            assert_eq!(focus.secure, Some(false));
        }
    }

    #[test]
    fn field_bug_61_reported_blocks_gone_window_and_grep_line() {
        // The reported Window #25 block: its view is GONE (0x8), so it has no focus.
        let list = parse_window_list(fixture!(
            "window/android13-14-dumpsys-window-windows-window-block-no-mcurrentfocus-PARTIAL.txt"
        ));
        assert_eq!(list.len(), 1);
        let bili = &list[0];
        assert_eq!(bili.window.package.as_deref(), Some("tv.danmaku.bili"));
        assert_eq!((bili.display_id, bili.visible), (Some(0), Some(false)));
        assert_eq!(
            bili.activity,
            Some((
                "tv.danmaku.bili".into(),
                "tv.danmaku.bili.MainActivityV2".into()
            ))
        );
        assert_eq!(focus_candidate(&list, 0), None);
        // The TCL TV's grep line: a header alone says nothing against it.
        let tv = parse_window_list(fixture!(
            "window/tcl-androidtv11-grep-focus-empty-window1-line.txt"
        ));
        let focus = focus_candidate(&tv, 0).expect("the only window");
        assert_eq!(
            focus.window.package.as_deref(),
            Some("com.google.android.youtube.tv")
        );
    }

    #[test]
    fn jelly_bean_hex_flags_and_top_down_numbering() {
        let list = parse_window_list(fixture!(
            "window/avc-dumpsys-window-windows-jb-emulator.txt"
        ));
        assert_eq!(list[0].window.title, "RecentsPanel");
        assert_eq!(list.len(), 8);
        let app = list
            .iter()
            .find(|w| w.window_type.as_deref() == Some("1") && w.visible == Some(true))
            .expect("the visible app window");
        assert_eq!(
            app.window.package.as_deref(),
            Some("com.dtmilano.android.sampleui")
        );
        assert_eq!(app.not_focusable, Some(false));
        assert_eq!(layout_flags("#812100", std::iter::empty()), Some(0x812100));
        assert_eq!(
            layout_flags("NOT_FOCUSABLE", "SECURE} pfl=X".split_whitespace()),
            Some(FLAG_NOT_FOCUSABLE | FLAG_SECURE)
        );
    }
}
