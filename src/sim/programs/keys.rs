//! Key codes accepted by `input keyevent`, by number or by name with or without `KEYCODE_`
//! (AOSP `KeyEvent.keyCodeFromString`, values from `frameworks/base/core/java/android/view/KeyEvent.java`).

/// `KEYCODE_HOME`.
pub const HOME: u32 = 3;
/// `KEYCODE_BACK`.
pub const BACK: u32 = 4;
/// `KEYCODE_POWER`.
pub const POWER: u32 = 26;
/// `KEYCODE_DEL` (backspace).
pub const DEL: u32 = 67;
/// `KEYCODE_MENU` (dismisses an insecure keyguard).
pub const MENU: u32 = 82;
/// `KEYCODE_APP_SWITCH` (Recents).
pub const APP_SWITCH: u32 = 187;
/// `KEYCODE_SLEEP`.
pub const SLEEP: u32 = 223;
/// `KEYCODE_WAKEUP`.
pub const WAKEUP: u32 = 224;

const NAMED: &[(&str, u32)] = &[
    ("HOME", 3),
    ("BACK", 4),
    ("CALL", 5),
    ("ENDCALL", 6),
    ("STAR", 17),
    ("POUND", 18),
    ("DPAD_UP", 19),
    ("DPAD_DOWN", 20),
    ("DPAD_LEFT", 21),
    ("DPAD_RIGHT", 22),
    ("DPAD_CENTER", 23),
    ("VOLUME_UP", 24),
    ("VOLUME_DOWN", 25),
    ("POWER", 26),
    ("CAMERA", 27),
    ("CLEAR", 28),
    ("COMMA", 55),
    ("PERIOD", 56),
    ("TAB", 61),
    ("SPACE", 62),
    ("ENTER", 66),
    ("DEL", 67),
    ("MINUS", 69),
    ("EQUALS", 70),
    ("AT", 77),
    ("MENU", 82),
    ("SEARCH", 84),
    ("MEDIA_PLAY_PAUSE", 85),
    ("PAGE_UP", 92),
    ("PAGE_DOWN", 93),
    ("ESCAPE", 111),
    ("FORWARD_DEL", 112),
    ("MOVE_HOME", 122),
    ("MOVE_END", 123),
    ("VOLUME_MUTE", 164),
    ("APP_SWITCH", 187),
    ("SLEEP", 223),
    ("WAKEUP", 224),
];

/// Parses a key code argument; `None` when unknown.
pub fn parse(arg: &str) -> Option<u32> {
    if let Ok(n) = arg.parse::<u32>() {
        return Some(n);
    }
    let name = arg.strip_prefix("KEYCODE_").unwrap_or(arg);
    if let Some((_, code)) = NAMED.iter().find(|(n, _)| *n == name) {
        return Some(*code);
    }
    let mut chars = name.chars();
    match (chars.next(), chars.next()) {
        (Some(c @ 'A'..='Z'), None) => Some(29 + (c as u32 - 'A' as u32)),
        (Some(c @ '0'..='9'), None) => Some(7 + (c as u32 - '0' as u32)),
        _ => None,
    }
}

/// The character a key types into a text field, if any.
pub fn typed_char(code: u32) -> Option<char> {
    match code {
        7..=16 => char::from_digit(code - 7, 10),
        29..=54 => char::from_u32('a' as u32 + code - 29),
        55 => Some(','),
        56 => Some('.'),
        61 => Some('\t'),
        62 => Some(' '),
        66 => Some('\n'),
        69 => Some('-'),
        70 => Some('='),
        77 => Some('@'),
        _ => None,
    }
}
