//! Whether the soft keyboard is shown, from `dumpsys input_method`.
//!
//! `mInputShown=<bool>`: the system's record that it asked the IME to show its window (AOSP
//! `InputMethodManagerService.dump`, Android ≤ 13; `ImeVisibilityStateComputer.dump` from
//! Android 14, same key). `mIsInputViewShown=<bool>`: the IME's own view state
//! (`InputMethodService.dump`, printed inside the same dump when the IME answers). The system's
//! record is read first; the IME's only where the system's is missing (appium-adb's
//! `isSoftKeyboardPresent` reads the same two keys). The value is the token up to the first
//! space or end of line, so `mInputShown=true mInputHidden=…` style lines read too.

/// `Some(shown)` from the first `mInputShown=`, else the first `mIsInputViewShown=`; `None`
/// when neither is printed or the value is not `true`/`false`.
pub fn parse_keyboard_shown(text: &str) -> Option<bool> {
    flag(text, "mInputShown=").or_else(|| flag(text, "mIsInputViewShown="))
}

fn flag(text: &str, key: &str) -> Option<bool> {
    text.lines().find_map(|line| {
        let rest = &line[line.find(key)? + key.len()..];
        match rest.split([' ', ',', '}']).next()? {
            "true" => Some(true),
            "false" => Some(false),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_record_wins_over_the_ime_view() {
        // Android 13 layout (system record first) and Android 14 (inside ImeVisibilityStateComputer).
        let a13 = "Input method service state:\n  mCurMethodId=com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME\n  mInputShown=true\n";
        assert_eq!(parse_keyboard_shown(a13), Some(true));
        let a14 = "  ImeVisibilityStateComputer:\n    mRequestedShowExplicitly=false mShowForced=false\n    mInputShown=false\n  mIsInputViewShown=true\n";
        assert_eq!(parse_keyboard_shown(a14), Some(false));
        // Only the IME's view state printed (a grep'd dump, an OEM build).
        assert_eq!(
            parse_keyboard_shown("    mIsInputViewShown=true mIsVisible=true\n"),
            Some(true)
        );
        for none in [
            "",
            "Can't find service: input_method\n",
            "  mInputShown=maybe\n",
        ] {
            assert_eq!(parse_keyboard_shown(none), None, "{none:?}");
        }
    }
}
