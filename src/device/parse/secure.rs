//! Whether the focused window has `FLAG_SECURE`, from `dumpsys window windows`.
//!
//! The focused window's title comes from `mCurrentFocus` ([`super::window`]); its block
//! (`Window #N Window{hash u0 TITLE}:`) carries the layout flags either symbolically
//! (`fl=… SECURE …`, Android 10+) or as hex (`fl=#820100`, older releases), where
//! `FLAG_SECURE = 0x00002000` (AOSP `WindowManager.LayoutParams`).

use super::window::parse_current_focus;

/// `WindowManager.LayoutParams.FLAG_SECURE`.
pub const FLAG_SECURE: u32 = 0x0000_2000;

/// `Some(true)` when the focused window is secure, `Some(false)` when its flags were found
/// without it, `None` when the focused window or its flags are not in the dump.
pub fn focused_window_secure(text: &str) -> Option<bool> {
    let focus = parse_current_focus(text)?;
    let mut in_block = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("Window #") {
            in_block = t.contains(&focus.title) && t.ends_with(':');
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(pos) = t.find("fl=") {
            let flags = &t[pos + 3..];
            if let Some(hex) = flags.strip_prefix('#') {
                let hex: String = hex.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
                return u32::from_str_radix(&hex, 16)
                    .ok()
                    .map(|f| f & FLAG_SECURE != 0);
            }
            return Some(
                flags
                    .split(|c: char| c.is_whitespace() || c == '}')
                    .any(|w| w == "SECURE"),
            );
        }
    }
    None
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
}
