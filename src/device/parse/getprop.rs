//! `getprop` (no arguments): every system property as `[name]: [value]`.
//!
//! Output shape: one property per line, sorted by name; a value may span several lines (e.g.
//! `persist.sys.boot.reason.history` holds one reboot reason per line) and then the closing `]`
//! sits on the value's last line. Values may be empty (`[]`) or contain `]`. Source: AOSP
//! `system/core/toolbox/getprop.cpp` (`"[%s]: [%s]\n"`); captures `getprop/asus-tf201-…` (Android
//! 4.0, CRLF) and `getprop/xiaomi-poco-f6-…` (Android 15, multi-line and non-ASCII values).

use std::collections::BTreeMap;

/// Parses `getprop` output into name → value. A property starts on a line of the form
/// `[name]: [` (name without whitespace or `]`); its value runs until the next such line, and the
/// final `]` is removed. Lines before the first property are ignored; a property whose value never
/// closes keeps the text it has. Later duplicates win. Expects `\n` line ends (see
/// [`super::text::decode_output`]); a stray `\r` before a line end is tolerated.
pub fn parse_getprop(text: &str) -> BTreeMap<String, String> {
    let mut props = BTreeMap::new();
    let mut current: Option<(String, String)> = None;
    for raw in text.split('\n') {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some((name, first)) = property_start(line) {
            if let Some((k, v)) = current.take() {
                props.insert(k, close_value(v));
            }
            current = Some((name.to_string(), first.to_string()));
        } else if let Some((_, value)) = current.as_mut() {
            value.push('\n');
            value.push_str(line);
        }
    }
    if let Some((k, v)) = current {
        props.insert(k, close_value(v));
    }
    props
}

/// `[name]: [rest` → `(name, rest)`.
fn property_start(line: &str) -> Option<(&str, &str)> {
    let inner = line.strip_prefix('[')?;
    let close = inner.find(']')?;
    let name = &inner[..close];
    if name.is_empty() || name.chars().any(char::is_whitespace) {
        return None;
    }
    let rest = inner[close..].strip_prefix("]: [")?;
    Some((name, rest))
}

/// Drops the closing `]` (and blank lines a trailing newline left after it).
fn close_value(value: String) -> String {
    let trimmed = value.trim_end_matches(['\n', '\r']);
    match trimmed.strip_suffix(']') {
        Some(v) => v.to_string(),
        None => trimmed.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::parse::text::decode_output;

    const ASUS: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/getprop/asus-tf201-transformer-prime-ics-4.0.txt"
    ));
    const POCO: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/getprop/xiaomi-poco-f6-peridot-lineage-android15.txt"
    ));

    #[test]
    fn android_4_crlf_capture() {
        let props = parse_getprop(&decode_output(ASUS));
        assert_eq!(props.len(), 175);
        assert_eq!(props["ro.product.model"], "TF201");
        assert_eq!(props["ro.build.version.sdk"], "15");
        assert_eq!(props["ro.build.version.release"], "4.0.3");
        assert_eq!(props["bt.version.driver"], "V9.26");
        // Raw CRLF text (not decoded first) gives the same values.
        let raw = parse_getprop(&String::from_utf8_lossy(ASUS));
        assert_eq!(raw, props);
    }

    #[test]
    fn android_15_multiline_empty_and_unicode_values() {
        let props = parse_getprop(POCO);
        assert_eq!(props.len(), 1067);
        assert_eq!(props["ro.product.model"], "24069PC21I");
        assert_eq!(props["ro.build.version.sdk"], "35");
        assert_eq!(props["ro.serialno"], "XXXXXXXX");
        assert_eq!(props["bluetooth.device.default_name"], "POCO F6");
        assert_eq!(
            props["persist.sys.boot.reason.history"],
            "reboot,,1745935181\nshutdown,userrequested,1745815614\nreboot,,1745768086\nreboot,,1745686927"
        );
        assert_eq!(
            props["persist.device_config.aconfig_flags.bluetooth.location_denylist_mac"],
            ""
        );
        assert!(props
            ["persist.device_config.aconfig_flags.bluetooth.location_denylist_advertising_data"]
            .starts_with("⊈0016AAFE40/"));
        assert_eq!(props["vold.has_reserved"], "1");
    }

    #[test]
    fn malformed_input_never_panics() {
        assert!(parse_getprop("").is_empty());
        assert!(parse_getprop("garbage\n[\n[]: [x]\n[a b]: [c]").is_empty());
        let props = parse_getprop("noise\n[k]: [v]x]\n[open]: [never closed");
        assert_eq!(props["k"], "v]x");
        assert_eq!(props["open"], "never closed");
    }
}
