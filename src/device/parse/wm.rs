//! `wm size` and `wm density`: display size in pixels and density in dpi.
//!
//! Output shape (AOSP `WindowManagerShellCommand.runDisplaySize` / `runDisplayDensity`):
//! `Physical size: 1080x2340`, then `Override size: 540x1170` only while an override is set;
//! `Physical density: 420`, then `Override density: 360` likewise. Sizes are width×height in
//! pixels of the natural (rotation 0) orientation; densities are dots per inch. Non-ASCII digits
//! are normalised. Captures: `wm/samsung-s24-wm-size.txt`, `wm/samsung-s24-wm-density.txt`,
//! `wm/oppo-coloros-wm-size-reset-securityexception.txt` (an error, not a size).

use super::text::{normalize_digits, parse_u32};

/// Result of `wm size`. Input coordinates (`input tap`) live in the *effective* size.
#[derive(Debug, Clone, PartialEq)]
pub struct DisplaySize {
    /// `Physical size:` — the panel's native resolution (pixels, width × height).
    pub physical: Option<(u32, u32)>,
    /// `Override size:` — set by `wm size WxH` or vendor resolution switching.
    pub override_size: Option<(u32, u32)>,
}

impl DisplaySize {
    /// The size apps and `input` use: the override when present, else the physical size
    /// (field bug 15: using `Physical size` while an override is active misplaces every tap).
    pub fn effective(&self) -> Option<(u32, u32)> {
        self.override_size.or(self.physical)
    }
}

/// Result of `wm density` (dpi).
#[derive(Debug, Clone, PartialEq)]
pub struct Density {
    /// `Physical density:` in dpi.
    pub physical: Option<u32>,
    /// `Override density:` in dpi, when set.
    pub override_density: Option<u32>,
}

impl Density {
    /// The density in force: the override when present, else the physical density.
    pub fn effective(&self) -> Option<u32> {
        self.override_density.or(self.physical)
    }
}

/// Parses `wm size` output. `None` when neither line is present (e.g. a `SecurityException`
/// stack trace, or an unknown command). The first occurrence of each line wins.
pub fn parse_wm_size(text: &str) -> Option<DisplaySize> {
    let size = DisplaySize {
        physical: find_value(text, "Physical size:").and_then(parse_dims),
        override_size: find_value(text, "Override size:").and_then(parse_dims),
    };
    (size.physical.is_some() || size.override_size.is_some()).then_some(size)
}

/// Parses `wm density` output; `None` when neither line is present.
pub fn parse_wm_density(text: &str) -> Option<Density> {
    let density = Density {
        physical: find_value(text, "Physical density:").and_then(parse_u32),
        override_density: find_value(text, "Override density:").and_then(parse_u32),
    };
    (density.physical.is_some() || density.override_density.is_some()).then_some(density)
}

fn find_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|line| line.trim().strip_prefix(key))
        .map(str::trim)
}

/// `1080x2340` → `(1080, 2340)`; zero or malformed dimensions → `None`.
fn parse_dims(value: &str) -> Option<(u32, u32)> {
    let value = normalize_digits(value);
    let (w, h) = value.split_once(['x', 'X', '×'])?;
    let (w, h) = (parse_u32(w)?, parse_u32(h)?);
    (w > 0 && h > 0).then_some((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    const S24_SIZE: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/wm/samsung-s24-wm-size.txt"
    ));
    const S24_DENSITY: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/wm/samsung-s24-wm-density.txt"
    ));
    const OPPO_EXCEPTION: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/wm/oppo-coloros-wm-size-reset-securityexception.txt"
    ));

    #[test]
    fn samsung_s24_physical_only() {
        let size = parse_wm_size(S24_SIZE).expect("size");
        assert_eq!(size.physical, Some((1440, 3120)));
        assert_eq!(size.override_size, None);
        assert_eq!(size.effective(), Some((1440, 3120)));
        let density = parse_wm_density(S24_DENSITY).expect("density");
        assert_eq!(density.physical, Some(600));
        assert_eq!(density.override_density, None);
        assert_eq!(density.effective(), Some(600));
    }

    #[test]
    fn field_bug_15_override_size_wins() {
        let size =
            parse_wm_size("Physical size: 1080x2340\nOverride size: 540x1170\n").expect("size");
        assert_eq!(size.physical, Some((1080, 2340)));
        assert_eq!(size.override_size, Some((540, 1170)));
        assert_eq!(size.effective(), Some((540, 1170)));
        let d = parse_wm_density("Physical density: 420\r\nOverride density: 360\r\n").expect("d");
        assert_eq!(d.effective(), Some(360));
        assert_eq!(d.physical, Some(420));
    }

    #[test]
    fn security_exception_is_not_a_size() {
        assert_eq!(parse_wm_size(OPPO_EXCEPTION), None);
        assert_eq!(parse_wm_density(OPPO_EXCEPTION), None);
    }

    #[test]
    fn malformed_and_localised_digits() {
        assert_eq!(parse_wm_size(""), None);
        assert_eq!(parse_wm_size("Physical size: 0x0"), None);
        assert_eq!(parse_wm_size("Physical size: 1080"), None);
        assert_eq!(parse_wm_size("Physical size: 99999999999x1"), None);
        let s = parse_wm_size("Physical size: ١٠٨٠x٢٣٤٠").expect("arabic digits");
        assert_eq!(s.physical, Some((1080, 2340)));
        assert_eq!(parse_wm_density("Physical density: abc"), None);
    }
}
