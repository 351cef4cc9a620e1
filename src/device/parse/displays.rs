//! `dumpsys window` read once as blocks keyed by display id: each display's size, rotation,
//! focus and policy state come from its own block, whatever order the displays are listed in
//! and however many there are (field bugs 52, 53: a virtual display 62 or display 1 listed
//! before display 0). Every consumer asks for the display it acts on ([`DEFAULT_DISPLAY`]
//! unless told otherwise); nothing is "the first block".
//!
//! Block headers: `Display: mDisplayId=<n> …` (AOSP `DisplayContent.dump`, Android 4.2+; the
//! `WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)` section and, on Android 12+, the
//! `ActivityTaskSupervisor state:` part of `dumpsys activity activities`) and `Display #<n> …`
//! (`ActivityTaskSupervisor`'s activity list). A block ends at the next header or at a line
//! that starts in column 0 (the next top-level section). Lines outside every block (dumps
//! before Android 4.2, grep'd lines, the `dumpsys window windows` tail) are an unnamed block
//! that stands for the default display only.
//!
//! Per block: `cur=WxH` (`DisplayContent.dump` "init=… cur=… app=…": override size and
//! rotation applied, px), the first `mCurrentRotation=ROTATION_<deg>` / `mRotation=<n|ROTATION_deg>`
//! token (`DisplayRotation.dump`, `WindowOrientationListener`, a configuration's
//! `winConfig={… mRotation=ROTATION_90}`), `mCurrentFocus=` / `mFocusedApp=` (see
//! [`super::window`]) and `mAwake=` (`DisplayPolicy.dump`, Android 10+; `PhoneWindowManager.dump`
//! before). Captures: `tests/fixtures/window/`, `tests/fixtures/activity/`.

use super::text::parse_u32;
use super::window::{focused_app_record, parse_window_token, FocusedWindow};
use super::window_list::{focus_candidate, parse_window_list, WindowEntry};

pub use super::window::DEFAULT_DISPLAY;

/// What one display's block of a window dump says; `None` where it says nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DisplayBlock {
    /// The display id of the header; `None` for lines outside every display block.
    pub id: Option<u32>,
    /// `cur=` size (override and rotation applied), px.
    pub size: Option<(u32, u32)>,
    /// Rotation in quarter turns (0–3).
    pub rotation: Option<u8>,
    /// `mCurrentFocus=` (a window; `null` leaves it `None`).
    pub focus: Option<FocusedWindow>,
    /// `mFocusedApp=` (the activity that has app focus).
    pub focused_app: Option<FocusedWindow>,
    /// `mAwake=` of the display's policy: the screen is on (not asleep or dozing).
    pub awake: Option<bool>,
}

/// A window dump as blocks, in the order they were printed, and its window list (the
/// `dumpsys window windows` section, [`super::window_list`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowDump {
    blocks: Vec<DisplayBlock>,
    windows: Vec<WindowEntry>,
}

impl WindowDump {
    /// Splits `text` into display blocks and reads each. Never fails: a dump without any of the
    /// lines gives blocks that say nothing.
    pub fn parse(text: &str) -> WindowDump {
        let mut blocks: Vec<DisplayBlock> = vec![DisplayBlock::default()];
        for raw in text.lines() {
            let line = raw.trim();
            if let Some(id) = display_header(line) {
                blocks.push(DisplayBlock {
                    id: Some(id),
                    ..DisplayBlock::default()
                });
                continue;
            }
            let top_level = !line.is_empty() && !raw.starts_with([' ', '\t']);
            if top_level && blocks.last().is_some_and(|b| b.id.is_some()) {
                blocks.push(DisplayBlock::default());
            }
            if let Some(block) = blocks.last_mut() {
                block.read(line);
            }
        }
        WindowDump {
            blocks,
            windows: parse_window_list(text),
        }
    }

    /// The window list, top of the Z-order first (empty when the dump has none).
    pub fn windows(&self) -> &[WindowEntry] {
        &self.windows
    }

    /// The ids of the display blocks, in order of first appearance.
    pub fn display_ids(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = Vec::new();
        for id in self.blocks.iter().filter_map(|b| b.id) {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        ids
    }

    /// The first value `f` reads for display `id`: from its own blocks, then — for the default
    /// display only — from the lines outside every block.
    fn pick<T>(&self, id: u32, f: impl Fn(&DisplayBlock) -> Option<T>) -> Option<T> {
        let own = self.blocks.iter().filter(|b| b.id == Some(id)).find_map(&f);
        own.or_else(|| {
            (id == DEFAULT_DISPLAY)
                .then(|| self.blocks.iter().filter(|b| b.id.is_none()).find_map(&f))
                .flatten()
        })
    }

    /// `cur=` size of display `id`, px.
    pub fn size(&self, id: u32) -> Option<(u32, u32)> {
        self.pick(id, |b| b.size)
    }

    /// Rotation of display `id`, quarter turns.
    pub fn rotation(&self, id: u32) -> Option<u8> {
        self.pick(id, |b| b.rotation)
    }

    /// The focus of display `id`: its focused window, else (focus `null` or absent) its focused
    /// app's activity — from its own blocks, then (default display only) from the lines
    /// outside every block; a dump with no focus line for the display (the windows section of
    /// Android 11+, field bug 61) answers with the window the window manager would focus: the
    /// first of its list, top down, that can receive keys.
    pub fn focus(&self, id: u32) -> Option<FocusedWindow> {
        self.focus_lines(id)
            .or_else(|| focus_candidate(&self.windows, id).map(|w| w.window.clone()))
    }

    /// The app under display `id`'s focus: the focused window itself when it is an activity's,
    /// else (a framework dialog, a system window) the display's `mFocusedApp`, else the top
    /// shown app window of the list below the focus (field bug 79: the app a crash or ANR
    /// dialog covers).
    pub fn app_under_focus(&self, id: u32) -> Option<FocusedWindow> {
        let focus = self.focus(id);
        if let Some(f) = focus.as_ref().filter(|f| f.activity.is_some()) {
            return Some(f.clone());
        }
        let app = self.pick(id, |b| b.focused_app.clone());
        app.or_else(|| {
            self.windows
                .iter()
                .filter(|w| w.on_display(id) && w.visible != Some(false) && w.is_app_window())
                .find(|w| focus.as_ref().is_none_or(|f| f.title != w.window.title))
                .map(|w| w.window.clone())
        })
    }

    /// The focus lines of display `id` (`mCurrentFocus`, else `mFocusedApp`).
    fn focus_lines(&self, id: u32) -> Option<FocusedWindow> {
        let of = |blocks: Vec<&DisplayBlock>| {
            blocks
                .iter()
                .find_map(|b| b.focus.clone())
                .or_else(|| blocks.iter().find_map(|b| b.focused_app.clone()))
        };
        let own = of(self.blocks.iter().filter(|b| b.id == Some(id)).collect());
        own.or_else(|| {
            (id == DEFAULT_DISPLAY)
                .then(|| of(self.blocks.iter().filter(|b| b.id.is_none()).collect()))
                .flatten()
        })
    }

    /// Whether display `id`'s policy is awake.
    pub fn awake(&self, id: u32) -> Option<bool> {
        self.pick(id, |b| b.awake)
    }
}

impl DisplayBlock {
    /// Reads one trimmed line of this block (the first value of each kind wins).
    fn read(&mut self, line: &str) {
        if let Some(v) = line.strip_prefix("mCurrentFocus=") {
            if self.focus.is_none() {
                self.focus = parse_window_token(v, self.id);
            }
            return;
        }
        if let Some(v) = line.strip_prefix("mFocusedApp=") {
            if self.focused_app.is_none() {
                self.focused_app = focused_app_record(v, self.id);
            }
            return;
        }
        if self.size.is_none() {
            self.size = cur_size(line);
        }
        if self.rotation.is_none() {
            self.rotation = rotation_token(line);
        }
        if self.awake.is_none() {
            self.awake = bool_token(line, "mAwake=");
        }
    }
}

/// `Display: mDisplayId=0 …` or `Display #0 (…)` → 0.
fn display_header(line: &str) -> Option<u32> {
    let rest = line
        .strip_prefix("Display: mDisplayId=")
        .or_else(|| line.strip_prefix("Display #"))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    parse_u32(&digits)
}

/// `… cur=WxH …` → (W, H).
fn cur_size(line: &str) -> Option<(u32, u32)> {
    let rest = &line[line.find(" cur=").map(|i| i + 5).or_else(|| {
        // The token may open the (trimmed) line.
        line.starts_with("cur=").then_some(4)
    })?..];
    let token = rest.split_whitespace().next()?;
    let (w, h) = token.split_once('x')?;
    Some((w.parse().ok()?, h.parse().ok()?))
}

/// The first `mCurrentRotation=` / `mRotation=` token of `line` naming a quarter turn.
/// `mDisplayRotation=` and unparsable values (`undefined`) are skipped.
fn rotation_token(line: &str) -> Option<u8> {
    line.split(|c: char| c.is_whitespace() || c == '{' || c == ',')
        .filter_map(|tok| {
            tok.strip_prefix("mCurrentRotation=")
                .or_else(|| tok.strip_prefix("mRotation="))
        })
        .find_map(|v| {
            let v = v.trim_end_matches(['}', ',']);
            let turns = match v.strip_prefix("ROTATION_") {
                Some(deg) => deg.parse::<u16>().ok().filter(|d| d % 90 == 0)? / 90,
                None => v.parse::<u16>().ok()?,
            };
            u8::try_from(turns).ok().filter(|t| *t <= 3)
        })
}

/// `KEY=true|false` as a whole whitespace-separated word of `line`.
pub(super) fn bool_token(line: &str, key: &str) -> Option<bool> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .and_then(|v| v.trim_end_matches([',', '}']).parse().ok())
}

/// Parses the focused window of the default display ([`WindowDump`]: per
/// display block `mCurrentFocus` wins; when it is `null` or absent the block's `mFocusedApp`
/// activity is used; lines outside every display block stand for the default display). Another
/// display's focus, `mTopFocusedDisplayId` included, never answers for the default display
/// (field bug 53). `None` when the default display has no focus in the dump.
pub fn parse_current_focus(text: &str) -> Option<FocusedWindow> {
    let dump = WindowDump::parse(text);
    dump.focus(DEFAULT_DISPLAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A multi-display dump in the Android 12+ layout: the blocks of `ids` in that order, each
    /// with its size and focus (field bugs 52, 53).
    fn blocks(displays: &[(u32, &str, &str)]) -> String {
        let mut t = String::from("WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n");
        for (id, size, focus) in displays {
            t.push_str(&format!(
                "  Display: mDisplayId={id} rootTasks=1\n    init={size} 420dpi cur={size} app={size} rng=1x1-1x1\n  mCurrentFocus={focus}\n  mFocusedApp=null\n    DisplayRotation\n      mRotation=0 mDeferredRotationPauseCount=0\n\n"
            ));
        }
        t
    }

    #[test]
    fn field_bug_52_each_display_size_from_its_own_block() {
        let t = blocks(&[
            (62, "1080x1920", "null"),
            (0, "1080x2400", "Window{1 u0 a.b/a.b.Main}"),
        ]);
        let d = WindowDump::parse(&t);
        assert_eq!(d.size(DEFAULT_DISPLAY), Some((1080, 2400)));
        assert_eq!(d.size(62), Some((1080, 1920)));
        assert_eq!(d.display_ids(), vec![62, 0]);
        // However many displays come first.
        let t = blocks(&[
            (2, "800x600", "null"),
            (62, "1080x1920", "null"),
            (0, "1440x3120", "null"),
        ]);
        assert_eq!(
            WindowDump::parse(&t).size(DEFAULT_DISPLAY),
            Some((1440, 3120))
        );
        // No block for display 0 and no unnamed lines: unknown, never another display's.
        let t = blocks(&[(62, "1080x1920", "null")]);
        assert_eq!(WindowDump::parse(&t).size(DEFAULT_DISPLAY), None);
    }

    #[test]
    fn field_bug_53_the_default_displays_focus_whatever_comes_first() {
        let t = blocks(&[
            (
                1,
                "1080x2092",
                "Window{aa u0 com.android.systemui/com.android.systemui.SubHomeActivity}",
            ),
            (
                0,
                "1840x2208",
                "Window{bb u0 jp.naver.line.android/jp.naver.line.android.activity.SplashActivity}",
            ),
        ]);
        let d = WindowDump::parse(&t);
        let f = d.focus(DEFAULT_DISPLAY).expect("display 0 focus");
        assert_eq!(f.package.as_deref(), Some("jp.naver.line.android"));
        assert_eq!(f.display_id, Some(0));
        assert_eq!(
            d.focus(1).and_then(|f| f.package).as_deref(),
            Some("com.android.systemui")
        );
    }

    #[test]
    fn field_bugs_61_79_focus_and_the_app_under_a_dialog_from_the_window_list() {
        // Android 11's windows section: no focus line; its ANR dialog takes the focus and the
        // launcher's shown window is the app under it.
        let d = WindowDump::parse(fixture!(
            "window/appium-android11-emulator-dumpsys-window-windows.txt"
        ));
        let f = d.focus(DEFAULT_DISPLAY).expect("focus");
        assert_eq!(
            f.dialog.map(|d| d.package).as_deref(),
            Some("com.android.systemui")
        );
        let under = d
            .app_under_focus(DEFAULT_DISPLAY)
            .expect("the app under it");
        assert_eq!(
            under.package.as_deref(),
            Some("com.google.android.apps.nexuslauncher")
        );
        // A display block's focus line still wins over the list, and its focused app is the
        // app under a dialog focus line.
        let t = "  Display: mDisplayId=0 rootTasks=1\n    mCurrentFocus=Window{1 u0 Application Error: a.b}\n    mFocusedApp=ActivityRecord{2 u0 c.d/.Home t1}\nWINDOW MANAGER WINDOWS (dumpsys window windows)\n  Window #0 Window{3 u0 e.f/e.f.Main}:\n    mViewVisibility=0x0\n";
        let d = WindowDump::parse(t);
        assert!(d.focus(0).unwrap().dialog.is_some());
        assert_eq!(
            d.app_under_focus(0).unwrap().package.as_deref(),
            Some("c.d")
        );
        // An app's own focus is its own app.
        let d = WindowDump::parse("  mCurrentFocus=Window{1 u0 a.b/a.b.C}\n");
        assert_eq!(
            d.app_under_focus(0).unwrap().package.as_deref(),
            Some("a.b")
        );
    }

    #[test]
    fn unnamed_lines_stand_for_the_default_display_only() {
        let t = "  mCurrentRotation=ROTATION_90\n  mCurrentFocus=Window{1 u0 a.b/a.b.C}\n";
        let d = WindowDump::parse(t);
        assert_eq!(d.rotation(DEFAULT_DISPLAY), Some(1));
        assert_eq!(
            d.focus(DEFAULT_DISPLAY).unwrap().package.as_deref(),
            Some("a.b")
        );
        assert_eq!(d.focus(3), None);
        // A top-level header closes a display block: the windows section's tail is unnamed.
        let t = "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n  Display: mDisplayId=2 rootTasks=1\n    init=1x1 1dpi cur=800x600 app=1x1\nWINDOW MANAGER WINDOWS (dumpsys window windows)\n  mCurrentFocus=Window{1 u0 a.b/a.b.C}\n";
        let d = WindowDump::parse(t);
        assert_eq!(d.focus(2), None);
        assert_eq!(d.focus(0).unwrap().display_id, None);
    }

    #[test]
    fn cur_is_rotated_and_overridden() {
        let t = "  Display: mDisplayId=0 rootTasks=1\n    init=1080x2400 420dpi cur=2400x1080 app=2400x1017 rng=1080x1017-2400x2337\n";
        assert_eq!(WindowDump::parse(t).size(0), Some((2400, 1080)));
        assert_eq!(WindowDump::parse("no display").size(0), None);
    }

    #[test]
    fn rotation_in_every_form() {
        let r = |t: &str| WindowDump::parse(t).rotation(0);
        assert_eq!(r("  mCurrentRotation=ROTATION_270\n"), Some(3));
        assert_eq!(
            r("    mRotation=1 mDeferredRotationPauseCount=0\n"),
            Some(1)
        );
        let cfg = "winConfig={ mBounds=Rect(0, 0 - 0, 0) mDisplayRotation=undefined mRotation=undefined}\n\
                   winConfig={ mDisplayRotation=ROTATION_90 mRotation=ROTATION_90}";
        assert_eq!(r(cfg), Some(1));
        assert_eq!(
            r(fixture!(
                "window/avc-dumpsys-window-windows-jb-emulator.txt"
            )),
            Some(0)
        );
        assert_eq!(r("mRotation=7 cur=1x1"), None);
        assert_eq!(r("no rotation"), None);
    }

    #[test]
    fn awake_from_the_display_policy() {
        let t = fixture!("activity/mtk-tablet-android13-dumpsys-activity-activities.txt");
        let d = WindowDump::parse(t);
        assert_eq!(d.awake(0), Some(false), "captured asleep");
        assert_eq!(d.size(0), Some((480, 800)));
        assert_eq!(d.display_ids(), vec![0]);
        assert_eq!(
            bool_token("mAwake=true mScreenOnEarly=true", "mAwake="),
            Some(true)
        );
    }
}
