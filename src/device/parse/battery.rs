//! `dumpsys battery`: charge level, charging status, power sources, temperature.
//!
//! Output shape (AOSP `services/core/java/com/android/server/BatteryService.java`, `dumpInternal`):
//! a header `Current Battery Service state:` followed by indented `key: value` lines (`AC powered:
//! true`, `status: 2`, `level: 80`, `scale: 100`, `temperature: 364`, …). Android 14+ adds keys
//! such as `Capacity level: 4` and 1-space-indented `Time when …` lines; vendors append their own
//! sections after the first un-indented line (Samsung `LLB CAL:`, `[EventLogBuffer]` with
//! `level:74`, Xiaomi `MiuiBatteryService …`). Only the first section is read, and keys must match
//! exactly, so `Capacity level: 3` never overrides `level: 80` (field bug 18).
//! Captures: `battery/redmi-note14-hyperos3-miuibatteryservice.txt`,
//! `battery/samsung-oneui-2023-swelling-fields.txt`, `battery/samsung-s24-oneui-extended.txt`.

use super::text::{parse_i32, parse_u32};

/// Charging status, AOSP `BatteryManager.BATTERY_STATUS_*` (codes 1–5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatteryStatus {
    /// 1
    Unknown,
    /// 2
    Charging,
    /// 3
    Discharging,
    /// 4 (plugged in but not charging, e.g. charge limit reached)
    NotCharging,
    /// 5
    Full,
    /// Any other code a vendor prints.
    Other(i32),
}

impl BatteryStatus {
    /// Maps a `status:` code.
    pub fn from_code(code: i32) -> Self {
        match code {
            1 => Self::Unknown,
            2 => Self::Charging,
            3 => Self::Discharging,
            4 => Self::NotCharging,
            5 => Self::Full,
            other => Self::Other(other),
        }
    }

    /// Stable lower-case name (`charging`, `not_charging`, …; `other` for vendor codes).
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Charging => "charging",
            Self::Discharging => "discharging",
            Self::NotCharging => "not_charging",
            Self::Full => "full",
            Self::Other(_) => "other",
        }
    }
}

/// A power source reported as `… powered: true`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PowerSource {
    /// `AC powered`
    Ac,
    /// `USB powered`
    Usb,
    /// `Wireless powered`
    Wireless,
    /// `Dock powered` (Android 13+)
    Dock,
}

/// Parsed `dumpsys battery` (first section).
#[derive(Debug, Clone, PartialEq)]
pub struct Battery {
    /// `level:` — charge in units of `scale`.
    pub level: Option<u32>,
    /// `scale:` — the full-charge value of `level` (100 on every device seen).
    pub scale: Option<u32>,
    /// Charge in percent, `round(level * 100 / scale)`; `level` itself when `scale` is absent and
    /// `level <= 100`; capped at 100.
    pub percent: Option<u32>,
    /// `status:` code mapped to [`BatteryStatus`].
    pub status: Option<BatteryStatus>,
    /// Sources whose `… powered:` line is `true`, in dump order (AC, USB, Wireless, Dock).
    pub plugged: Vec<PowerSource>,
    /// `temperature:` in tenths of a degree Celsius (`364` = 36.4 °C).
    pub temperature_deci_c: Option<i32>,
    /// The section says `(UPDATES STOPPED -- use 'reset' to restart)`: the values were set
    /// with `dumpsys battery set|unplug` (AOSP `BatteryService.dumpInternal`, printed while
    /// `mUpdatesStopped`), not read from the hardware (field bug 82).
    pub overridden: bool,
}

/// The line `BatteryService` prints while its values are overridden from the shell.
pub const UPDATES_STOPPED: &str = "(UPDATES STOPPED -- use 'reset' to restart)";

/// Parses `dumpsys battery`. Reads the section after `Current Battery Service state:` (or from
/// the top when the header is missing) up to the first non-blank line without indentation; the
/// first occurrence of each exact key wins. `None` when none of `level`, `scale`, `status` or a
/// `powered` line is found (e.g. `Can't find service: battery`). A level outside `0..=scale`
/// (`dumpsys battery set level 999`: `BatteryService` takes any integer) gives no percent,
/// never a capped 100.
pub fn parse_dumpsys_battery(text: &str) -> Option<Battery> {
    let mut lines = text.lines();
    let had_header = text
        .lines()
        .any(|l| l.trim() == "Current Battery Service state:");
    if had_header {
        for line in lines.by_ref() {
            if line.trim() == "Current Battery Service state:" {
                break;
            }
        }
    }
    let mut battery = Battery {
        level: None,
        scale: None,
        percent: None,
        status: None,
        plugged: Vec::new(),
        temperature_deci_c: None,
        overridden: false,
    };
    let mut seen_powered = [false; 4];
    let mut found = false;
    for line in lines {
        if line.trim().is_empty() {
            continue;
        }
        if had_header && !line.starts_with([' ', '\t']) {
            break;
        }
        if line.trim() == UPDATES_STOPPED {
            battery.overridden = true;
            continue;
        }
        let Some((key, value)) = line.trim().split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key {
            "level" if battery.level.is_none() => battery.level = parse_u32(value),
            "scale" if battery.scale.is_none() => battery.scale = parse_u32(value),
            "status" if battery.status.is_none() => {
                battery.status = parse_i32(value).map(BatteryStatus::from_code)
            }
            "temperature" if battery.temperature_deci_c.is_none() => {
                battery.temperature_deci_c = parse_i32(value)
            }
            "AC powered" | "USB powered" | "Wireless powered" | "Dock powered" => {
                let (slot, source) = match key {
                    "AC powered" => (0, PowerSource::Ac),
                    "USB powered" => (1, PowerSource::Usb),
                    "Wireless powered" => (2, PowerSource::Wireless),
                    _ => (3, PowerSource::Dock),
                };
                if !seen_powered[slot] {
                    seen_powered[slot] = true;
                    if value == "true" {
                        battery.plugged.push(source);
                    }
                }
            }
            _ => continue,
        }
        found = true;
    }
    if !found {
        return None;
    }
    battery.percent = match (battery.level, battery.scale) {
        (Some(level), Some(scale)) if scale > 0 && level <= scale => {
            let pct = (u64::from(level) * 100 + u64::from(scale) / 2) / u64::from(scale);
            Some(pct as u32)
        }
        (Some(level), None) if level <= 100 => Some(level),
        _ => None,
    };
    Some(battery)
}

#[cfg(test)]
mod tests {
    use super::*;

    const REDMI: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/battery/redmi-note14-hyperos3-miuibatteryservice.txt"
    ));
    const SAMSUNG_2023: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/battery/samsung-oneui-2023-swelling-fields.txt"
    ));
    const S24: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/battery/samsung-s24-oneui-extended.txt"
    ));

    #[test]
    fn redmi_hyperos_capacity_level_after_level() {
        let b = parse_dumpsys_battery(REDMI).expect("battery");
        assert_eq!(b.level, Some(80));
        assert_eq!(b.scale, Some(100));
        assert_eq!(b.percent, Some(80));
        assert_eq!(b.status, Some(BatteryStatus::Charging));
        assert_eq!(b.plugged, vec![PowerSource::Ac]);
        assert_eq!(b.temperature_deci_c, Some(364));
    }

    #[test]
    fn field_bug_18_capacity_level_does_not_win() {
        let text = "Current Battery Service state:\n  AC powered: false\n  USB powered: true\n  \
                    status: 2\n  level: 80\n  scale: 100\n  temperature: 250\n  Capacity level: 3\n";
        let b = parse_dumpsys_battery(text).expect("battery");
        assert_eq!(b.level, Some(80));
        assert_eq!(b.percent, Some(80));
    }

    #[test]
    fn samsung_full_with_vendor_tail() {
        let b = parse_dumpsys_battery(SAMSUNG_2023).expect("battery");
        assert_eq!(b.level, Some(100));
        assert_eq!(b.percent, Some(100));
        assert_eq!(b.status, Some(BatteryStatus::Full));
        assert_eq!(b.plugged, vec![PowerSource::Usb]);
        assert_eq!(b.temperature_deci_c, Some(309));
    }

    #[test]
    fn samsung_s24_ignores_event_log_levels() {
        // The appended [BattActionChangedLogBuffer] holds `level:74` … `level:75` and
        // `temperature:362`; the first section says level 75, temperature 357.
        let b = parse_dumpsys_battery(S24).expect("battery");
        assert_eq!(b.level, Some(75));
        assert_eq!(b.percent, Some(75));
        assert_eq!(b.status, Some(BatteryStatus::Charging));
        assert_eq!(b.plugged, vec![PowerSource::Usb]);
        assert_eq!(b.temperature_deci_c, Some(357));
        assert_eq!(BatteryStatus::Charging.as_str(), "charging");
    }

    #[test]
    fn field_bug_82_overridden_and_out_of_range_levels() {
        // What `dumpsys battery set level 999` leaves (AOSP `BatteryService.dumpInternal`).
        let text = "Current Battery Service state:\n  (UPDATES STOPPED -- use 'reset' to restart)\n  AC powered: false\n  USB powered: true\n  status: 2\n  level: 999\n  scale: 100\n";
        let b = parse_dumpsys_battery(text).expect("battery");
        assert!(b.overridden);
        assert_eq!((b.level, b.percent), (Some(999), None));
        // Overridden within range: the value is kept, and flagged.
        let b = parse_dumpsys_battery(&text.replace("999", "15")).unwrap();
        assert_eq!((b.percent, b.overridden), (Some(15), true));
        // Another scale, over it; a negative level is no number.
        let b = parse_dumpsys_battery("level: 5\nscale: 4\n").unwrap();
        assert_eq!(b.percent, None);
        let b = parse_dumpsys_battery("level: -1\nscale: 100\n").unwrap();
        assert_eq!(b.percent, None);
        assert!(!parse_dumpsys_battery(REDMI).unwrap().overridden);
    }

    #[test]
    fn headerless_scaled_and_malformed() {
        let b =
            parse_dumpsys_battery("level: 3\nscale: 4\nstatus: 9\ntemperature: -50").expect("b");
        assert_eq!(b.percent, Some(75));
        assert_eq!(b.status, Some(BatteryStatus::Other(9)));
        assert_eq!(b.temperature_deci_c, Some(-50));
        let b = parse_dumpsys_battery("level: 55").expect("b");
        assert_eq!(b.percent, Some(55));
        let b = parse_dumpsys_battery("level: x\nscale: 0").expect("b");
        assert_eq!((b.level, b.percent), (None, None));
        assert_eq!(parse_dumpsys_battery("Can't find service: battery"), None);
        assert_eq!(parse_dumpsys_battery(""), None);
    }
}
