//! Whether the focused window has `FLAG_SECURE`, from `dumpsys window windows`.
//!
//! The focused window's title comes from `mCurrentFocus` ([`super::window`]), or on Android
//! 11+ from the window list ([`super::window_list`]); its block
//! (`Window #N Window{hash u0 TITLE}:`) carries the layout flags either symbolically
//! (`fl=… SECURE …`, Android 10+) or as hex (`fl=#820100`, older releases), where
//! `FLAG_SECURE = 0x00002000` (AOSP `WindowManager.LayoutParams`).

use super::displays::{WindowDump, DEFAULT_DISPLAY};

pub use super::window_list::FLAG_SECURE;

/// `Some(true)` when the focused window is secure, `Some(false)` when its flags were found
/// without it, `None` when the focused window or its flags are not in the dump. The focus is
/// the default display's ([`WindowDump::focus`]: its focus lines, else — Android 11+, whose
/// windows section prints none — the window the window manager focuses).
pub fn focused_window_secure(text: &str) -> Option<bool> {
    let dump = WindowDump::parse(text);
    let focus = dump.focus(DEFAULT_DISPLAY)?;
    dump.windows()
        .iter()
        .find(|w| w.window.title == focus.title)?
        .secure
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYMBOLIC: &str = "  Window #0 Window{a1 u0 com.bank/com.bank.Main}:\n    mAttrs={(0,0)(fillxfill) ty=BASE_APPLICATION fmt=TRANSLUCENT\n      fl=LAYOUT_IN_SCREEN SPLIT_TOUCH HARDWARE_ACCELERATED SECURE}\n  mCurrentFocus=Window{a1 u0 com.bank/com.bank.Main}\n";

    #[test]
    fn symbolic_and_hex_flags() {
        assert_eq!(focused_window_secure(SYMBOLIC), Some(true));
        let plain = SYMBOLIC.replace(" SECURE}", "}");
        assert_eq!(focused_window_secure(&plain), Some(false));
        let hex = "  Window #3 Window{b2 u0 com.x/com.x.A}:\n    mAttrs=WM.LayoutParams{(0,0)(fillxfill) ty=1 fl=#812100 fmt=-3}\n  mCurrentFocus=Window{b2 u0 com.x/com.x.A}\n";
        assert_eq!(focused_window_secure(hex), Some(true));
        assert_eq!(focused_window_secure("nothing here"), None);
    }

    /// Android 11+ print no focus line in the windows section: the focused window is the top
    /// one that can take keys (a NOT_FOCUSABLE status bar above it does not count).
    #[test]
    fn android11_window_list_without_focus_lines() {
        let t = "WINDOW MANAGER WINDOWS (dumpsys window windows)\n  Window #0 Window{s1 u0 StatusBar}:\n    mDisplayId=0 rootTaskId=1\n    mAttrs={(0,0)(fillx63) ty=STATUS_BAR fmt=TRANSLUCENT\n      fl=NOT_FOCUSABLE SPLIT_TOUCH HARDWARE_ACCELERATED\n    mViewVisibility=0x0 mHaveFrame=true mObscured=false\n  Window #1 Window{a1 u0 com.bank/com.bank.Main}:\n    mDisplayId=0 rootTaskId=7\n    mAttrs={(0,0)(fillxfill) ty=BASE_APPLICATION fmt=TRANSLUCENT\n      fl=LAYOUT_IN_SCREEN SPLIT_TOUCH HARDWARE_ACCELERATED SECURE\n      pfl=NO_MOVE_ANIMATION}\n    mViewVisibility=0x0 mHaveFrame=true mObscured=false\n    isOnScreen=true\n    isVisible=true\n\n  mTopFocusedDisplayId=0\n";
        assert_eq!(focused_window_secure(t), Some(true));
        assert_eq!(
            focused_window_secure(&t.replace(" SECURE\n", "\n")),
            Some(false)
        );
        let captured = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/window/appium-android12-emulator-dumpsys-window-windows.txt"
        ));
        assert_eq!(focused_window_secure(captured), Some(false));
    }
}
