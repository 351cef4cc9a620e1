//! `dumpsys power`: is the screen on?
//!
//! Sources, in order of trust (AOSP `PowerManagerService.dumpInternal`):
//! 1. `mWakefulness=Awake|Asleep|Dozing|Dreaming` (Android 4.2+; Samsung may print
//!    `mWakefulness: Awake`). `Awake` and `Dreaming` (a screensaver is showing) mean the screen is
//!    lit; `Asleep` and `Dozing` (ambient display at most) mean it is off.
//! 2. `Display Power: state=ON|OFF` (Samsung builds of the 4.x era). Lines such as
//!    `Display Power: com.android.server.power.PowerManagerService$1@63ab12d` carry no state.
//! 3. `mScreenOn=true|false` (Android ≤ 4.1 and the `Display Power State:` block).
//!
//! Captures: `power/phone-720x1612-dumpsys-power-awake-utf16le.txt` (decode with
//! [`super::text::decode_output`] first), `power/samsung-dumpsys-power-head-mixed-separators-PARTIAL.txt`,
//! `power/android4.4-display-power-state-fragment.txt`.

/// `Some(true)` when the screen is on, `Some(false)` when off, `None` when the dump says neither.
/// The first line of the most trusted kind decides.
pub fn parse_screen_on(text: &str) -> Option<bool> {
    let mut display_power = None;
    let mut screen_on = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = value_of(line, "mWakefulness") {
            match v {
                "Awake" | "Dreaming" => return Some(true),
                "Asleep" | "Dozing" => return Some(false),
                _ => {}
            }
        } else if let Some(rest) = line.strip_prefix("Display Power:") {
            if display_power.is_none() {
                display_power = match rest.trim().strip_prefix("state=") {
                    Some(s) if s.starts_with("ON") => Some(true),
                    Some(s) if s.starts_with("OFF") => Some(false),
                    _ => None,
                };
            }
        } else if let Some(v) = value_of(line, "mScreenOn") {
            if screen_on.is_none() {
                screen_on = v.parse::<bool>().ok();
            }
        }
    }
    display_power.or(screen_on)
}

/// `key=value` or `key: value` (exact key) → the first word of the value.
fn value_of<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(key)?;
    let rest = rest.strip_prefix('=').or_else(|| rest.strip_prefix(':'))?;
    rest.split_whitespace().next()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::parse::text::decode_output;

    const UTF16_AWAKE: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/power/phone-720x1612-dumpsys-power-awake-utf16le.txt"
    ));
    const SAMSUNG: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/power/samsung-dumpsys-power-head-mixed-separators-PARTIAL.txt"
    ));
    const ANDROID_44: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/power/android4.4-display-power-state-fragment.txt"
    ));

    #[test]
    fn utf16le_capture_awake() {
        assert_eq!(parse_screen_on(&decode_output(UTF16_AWAKE)), Some(true));
    }

    #[test]
    fn samsung_head_awake() {
        assert_eq!(parse_screen_on(SAMSUNG), Some(true));
        let asleep = SAMSUNG.replace("mWakefulness=Awake", "mWakefulness=Asleep");
        assert_eq!(parse_screen_on(&asleep), Some(false));
        // `mWakefulnessChanging=false` must not be read as the wakefulness.
        assert_eq!(
            parse_screen_on("  mWakefulnessChanging=false\n  mScreenOn=true"),
            Some(true)
        );
    }

    #[test]
    fn android_44_screen_on_flag() {
        assert_eq!(parse_screen_on(ANDROID_44), Some(true));
        assert_eq!(
            parse_screen_on(&ANDROID_44.replace("mScreenOn=true", "mScreenOn=false")),
            Some(false)
        );
    }

    #[test]
    fn other_forms() {
        assert_eq!(parse_screen_on("  mWakefulness=Dozing"), Some(false));
        assert_eq!(parse_screen_on("  mWakefulness: Dreaming"), Some(true));
        assert_eq!(
            parse_screen_on("Display Power: state=OFF\n  mScreenOn=true"),
            Some(false)
        );
        assert_eq!(parse_screen_on("Display Power: state=ON"), Some(true));
        assert_eq!(
            parse_screen_on("Display Power: com.android.server.power.PowerManagerService$1@1"),
            None
        );
        assert_eq!(parse_screen_on("mWakefulness=Weird\nmScreenOn=maybe"), None);
        assert_eq!(parse_screen_on(""), None);
    }
}
