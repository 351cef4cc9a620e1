//! Decoding of raw command output into clean text, and small text helpers shared by the parsers.
//!
//! Input: the bytes a device command printed (`adb shell …`, `exec:`/`shell,v2:` streams, or a
//! capture saved on a Windows host). Output: a `String` with `\n` line ends and no NUL characters.
//!
//! Seen in real captures (`tests/fixtures/`): UTF-16LE with BOM and CRLF written by PowerShell `>`
//! (`power/phone-720x1612-dumpsys-power-awake-utf16le.txt`), CRLF (`getprop/asus-tf201-…`), and
//! `\r\r\n` from a PTY whose `\n` became `\r\n` twice (`uiautomator/u2-landscape-game-…`).

/// Decodes command output to text: UTF-8 (BOM optional), UTF-16LE or UTF-16BE (with BOM, or
/// without BOM when the NUL pattern of ASCII text is unmistakable); invalid sequences become
/// U+FFFD. Line ends `\r\n`, `\r\r\n` (any run of `\r` before `\n`) become `\n`; a lone `\r` is
/// kept. NUL characters are removed.
pub fn decode_output(bytes: &[u8]) -> String {
    let decoded = if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        String::from_utf8_lossy(rest).into_owned()
    } else if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        decode_utf16(rest, false)
    } else if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        decode_utf16(rest, true)
    } else if let Some(big_endian) = sniff_utf16(bytes) {
        decode_utf16(bytes, big_endian)
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    };
    normalize_newlines(&decoded)
}

fn decode_utf16(bytes: &[u8], big_endian: bool) -> String {
    let units = bytes.chunks_exact(2).map(|pair| {
        if big_endian {
            u16::from_be_bytes([pair[0], pair[1]])
        } else {
            u16::from_le_bytes([pair[0], pair[1]])
        }
    });
    let mut out: String = char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
    if bytes.len() % 2 == 1 {
        out.push(char::REPLACEMENT_CHARACTER);
    }
    out
}

/// BOM-less UTF-16 guess: at least 8 code units of which ≥ 90 % in one byte half are NUL while the
/// other half has none (ASCII text in UTF-16). Returns `Some(true)` for big-endian.
fn sniff_utf16(bytes: &[u8]) -> Option<bool> {
    let head = &bytes[..bytes.len().min(256) & !1];
    let units = head.len() / 2;
    if units < 8 {
        return None;
    }
    let zeros = |offset: usize| {
        head.iter()
            .skip(offset)
            .step_by(2)
            .filter(|b| **b == 0)
            .count()
    };
    let (even, odd) = (zeros(0), zeros(1));
    if odd * 10 >= units * 9 && even == 0 {
        Some(false)
    } else if even * 10 >= units * 9 && odd == 0 {
        Some(true)
    } else {
        None
    }
}

fn push_crs(out: &mut String, count: usize) {
    for _ in 0..count {
        out.push('\r');
    }
}

fn normalize_newlines(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_cr = 0usize;
    for c in s.chars() {
        match c {
            '\r' => pending_cr += 1,
            '\0' => {}
            '\n' => {
                pending_cr = 0;
                out.push('\n');
            }
            other => {
                push_crs(&mut out, pending_cr);
                pending_cr = 0;
                out.push(other);
            }
        }
    }
    push_crs(&mut out, pending_cr);
    out
}

/// First code point (the digit zero) of Unicode decimal-digit blocks that Android locales print:
/// Arabic-Indic, Extended Arabic-Indic (Persian/Urdu), Devanagari, Bengali, Myanmar, Thai,
/// Khmer, Lao, Tibetan, Fullwidth.
const DIGIT_ZEROS: [u32; 10] = [
    0x0660, 0x06F0, 0x0966, 0x09E6, 0x1040, 0x0E50, 0x17E0, 0x0ED0, 0x0F20, 0xFF10,
];

/// Replaces non-ASCII decimal digits (e.g. `١٠٨٠` from an Arabic locale) with ASCII `0`–`9`;
/// every other character is kept.
pub fn normalize_digits(s: &str) -> String {
    s.chars()
        .map(|c| {
            let cp = c as u32;
            DIGIT_ZEROS
                .iter()
                .find(|zero| (**zero..**zero + 10).contains(&cp))
                .and_then(|zero| char::from_digit(cp - zero, 10))
                .unwrap_or(c)
        })
        .collect()
}

/// Parses an unsigned decimal after trimming and normalising non-ASCII digits.
pub fn parse_u32(s: &str) -> Option<u32> {
    normalize_digits(s.trim()).parse().ok()
}

/// Parses a signed decimal after trimming and normalising non-ASCII digits.
pub fn parse_i32(s: &str) -> Option<i32> {
    normalize_digits(s.trim()).parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const POWER_UTF16: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/power/phone-720x1612-dumpsys-power-awake-utf16le.txt"
    ));
    const ASUS_CRLF: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/getprop/asus-tf201-transformer-prime-ics-4.0.txt"
    ));
    const CRCRLF_XML: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/uiautomator/u2-landscape-game-1600x900-display-id.xml"
    ));

    #[test]
    fn utf16le_bom_crlf_powershell_capture() {
        let text = decode_output(POWER_UTF16);
        assert!(text.starts_with("POWER MANAGER (dumpsys power)\n"));
        assert!(text.contains("\n  mWakefulness=Awake\n"));
        assert!(!text.contains('\r'));
        assert!(!text.contains('\0'));
        assert!(!text.starts_with('\u{FEFF}'));
    }

    #[test]
    fn crlf_getprop_capture() {
        let text = decode_output(ASUS_CRLF);
        assert!(text.starts_with("[bt.version.driver]: [V9.26]\n[dalvik.vm.dexopt-flags]: [m=y]\n"));
        assert!(!text.contains('\r'));
        assert_eq!(text.lines().count(), 175);
    }

    #[test]
    fn cr_cr_lf_uiautomator_capture() {
        let text = decode_output(CRCRLF_XML);
        assert!(text.starts_with(
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n<hierarchy rotation=\"0\">\n"
        ));
        assert!(!text.contains('\r'));
    }

    #[test]
    fn utf16_variants_and_nuls() {
        let be: Vec<u8> = [0xFE, 0xFF, 0, b'O', 0, b'K', 0, b'\r', 0, b'\n'].to_vec();
        assert_eq!(decode_output(&be), "OK\n");
        let no_bom: Vec<u8> = "Physical size: 1080x2340\r\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(decode_output(&no_bom), "Physical size: 1080x2340\n");
        assert_eq!(decode_output(b"a\0b\r\r\nc\rd\r"), "ab\nc\rd\r");
        assert_eq!(decode_output(&[0xEF, 0xBB, 0xBF, b'x', 0xFF]), "x\u{FFFD}");
        assert_eq!(decode_output(&[0xFF, 0xFE, b'x']), "\u{FFFD}");
        assert_eq!(decode_output(b""), "");
    }

    #[test]
    fn non_ascii_digits() {
        assert_eq!(normalize_digits("١٠٨٠x٢٣٤٠"), "1080x2340");
        assert_eq!(normalize_digits("۴۸۰"), "480");
        assert_eq!(parse_u32(" ４２０ "), Some(420));
        assert_eq!(parse_i32("-12"), Some(-12));
        assert_eq!(parse_u32("x"), None);
    }
}
