//! `getevent -lp`: the phone's input devices, their absolute axes and input properties (AOSP
//! `system/core/toolbox/getevent.c`: one `add device N: PATH` block per `/dev/input/event*`,
//! `name:`, `events:` with one line per axis `NAME : value V, min A, max B, fuzz F, flat L,
//! resolution R` — the first after `ABS (0003):`, the rest continuing on their own lines — then
//! `input props:` with `INPUT_PROP_*` names or `<none>`). Without `-l` (or for codes the tool has
//! no name for) an axis is its hex code (`0035`), read as the same axis.
//!
//! Which device is the touchscreen follows Android's own rule (AOSP
//! `frameworks/native/services/inputflinger/reader/EventHub.cpp`: a device with
//! `ABS_MT_POSITION_X` and `ABS_MT_POSITION_Y` is a multi-touch device, and
//! `TouchInputMapper` treats it as a touchscreen when it has `INPUT_PROP_DIRECT`). A capture
//! without any `input props:` lines (an excerpt) counts the multi-touch axes alone.
//!
//! Captures: `tests/fixtures/getevent/` (Xiaomi Mi Mix 2 with seven devices, Samsung Galaxy S5
//! with a 0..4095 panel, nubia Red Magic 6 with a panel range one past the last pixel).

/// `ABS_MT_SLOT` (`linux/input-event-codes.h`).
pub const ABS_MT_SLOT: u16 = 0x2f;
/// `ABS_MT_POSITION_X`.
pub const ABS_MT_POSITION_X: u16 = 0x35;
/// `ABS_MT_POSITION_Y`.
pub const ABS_MT_POSITION_Y: u16 = 0x36;
/// `ABS_MT_TRACKING_ID`.
pub const ABS_MT_TRACKING_ID: u16 = 0x39;

/// The range of one absolute axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisRange {
    /// Minimum value.
    pub min: i32,
    /// Maximum value (inclusive).
    pub max: i32,
}

/// One `add device` block.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InputDevice {
    /// Device node, e.g. `/dev/input/event1`.
    pub path: String,
    /// `name:` without quotes.
    pub name: String,
    /// Absolute axes by code.
    pub axes: Vec<(u16, AxisRange)>,
    /// `INPUT_PROP_*` names under `input props:`.
    pub props: Vec<String>,
    /// Whether the block had an `input props:` section at all.
    pub has_props_section: bool,
}

impl InputDevice {
    /// The range of axis `code`.
    pub fn axis(&self, code: u16) -> Option<AxisRange> {
        self.axes.iter().find(|(c, _)| *c == code).map(|(_, r)| *r)
    }

    /// A touchscreen: both multi-touch position axes with a usable range, and
    /// `INPUT_PROP_DIRECT` (when the capture lists properties at all).
    pub fn is_touchscreen(&self) -> bool {
        let usable = |c| self.axis(c).is_some_and(|r| r.max > r.min);
        usable(ABS_MT_POSITION_X)
            && usable(ABS_MT_POSITION_Y)
            && (!self.has_props_section || self.props.iter().any(|p| p == "INPUT_PROP_DIRECT"))
    }

    /// Number of contact slots (`ABS_MT_SLOT` max + 1), `None` when the device reports no
    /// slots (protocol A only: nothing this connector writes).
    pub fn slots(&self) -> Option<u32> {
        self.axis(ABS_MT_SLOT)
            .and_then(|r| u32::try_from(r.max).ok())
            .map(|m| m + 1)
    }
}

/// The code of an axis label: a known `-l` name, or the hex code printed without `-l`.
fn axis_code(label: &str) -> Option<u16> {
    const NAMES: &[(&str, u16)] = &[
        ("ABS_X", 0x00),
        ("ABS_Y", 0x01),
        ("ABS_PRESSURE", 0x18),
        ("ABS_MT_SLOT", ABS_MT_SLOT),
        ("ABS_MT_TOUCH_MAJOR", 0x30),
        ("ABS_MT_TOUCH_MINOR", 0x31),
        ("ABS_MT_WIDTH_MAJOR", 0x32),
        ("ABS_MT_WIDTH_MINOR", 0x33),
        ("ABS_MT_ORIENTATION", 0x34),
        ("ABS_MT_POSITION_X", ABS_MT_POSITION_X),
        ("ABS_MT_POSITION_Y", ABS_MT_POSITION_Y),
        ("ABS_MT_TOOL_TYPE", 0x37),
        ("ABS_MT_BLOB_ID", 0x38),
        ("ABS_MT_TRACKING_ID", ABS_MT_TRACKING_ID),
        ("ABS_MT_PRESSURE", 0x3a),
        ("ABS_MT_DISTANCE", 0x3b),
    ];
    NAMES
        .iter()
        .find(|(n, _)| *n == label)
        .map(|(_, c)| *c)
        .or_else(|| {
            (label.len() == 4)
                .then(|| u16::from_str_radix(label, 16).ok())
                .flatten()
        })
}

/// `LABEL : value V, min A, max B, …` → the axis.
fn axis_line(line: &str) -> Option<(u16, AxisRange)> {
    let (head, tail) = line
        .split_once(" : ")
        .or_else(|| line.split_once(": value"))?;
    let label = head.rsplit(':').next()?.split_whitespace().last()?;
    let code = axis_code(label)?;
    let field = |name: &str| -> Option<i32> {
        tail.split(',')
            .map(str::trim)
            .find_map(|f| f.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
    };
    Some((
        code,
        AxisRange {
            min: field("min ")?,
            max: field("max ")?,
        },
    ))
}

/// Parses `getevent -lp` (or `-p`) output into its devices, in listing order. Lines that fit
/// no known shape are skipped.
pub fn parse_getevent(text: &str) -> Vec<InputDevice> {
    let mut out: Vec<InputDevice> = Vec::new();
    let mut in_props = false;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix("add device ") {
            let path = rest.split_once(':').map(|(_, p)| p.trim()).unwrap_or("");
            let path = path.split_whitespace().next().unwrap_or("");
            out.push(InputDevice {
                path: path.to_string(),
                ..InputDevice::default()
            });
            in_props = false;
            continue;
        }
        let Some(dev) = out.last_mut() else { continue };
        if let Some(name) = line.strip_prefix("name:") {
            dev.name = name.trim().trim_matches('"').to_string();
        } else if line.starts_with("input props:") {
            dev.has_props_section = true;
            in_props = true;
        } else if in_props {
            if line.starts_with("INPUT_PROP_") {
                dev.props.push(line.to_string());
            }
        } else if let Some(axis) = axis_line(line) {
            dev.axes.push(axis);
        }
    }
    out
}

/// The touchscreens among `devices` ([`InputDevice::is_touchscreen`]).
pub fn touchscreens(devices: &[InputDevice]) -> Vec<&InputDevice> {
    devices.iter().filter(|d| d.is_touchscreen()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mi_mix_2_touchscreen_is_found_among_seven_devices() {
        let all = parse_getevent(fixture!("getevent/xiaomi-mimix2-lineage17-getevent-pl.txt"));
        assert_eq!(all.len(), 7);
        let ts = touchscreens(&all);
        assert_eq!(
            ts.len(),
            1,
            "the fingerprint and key devices are not touchscreens"
        );
        assert_eq!(
            (ts[0].path.as_str(), ts[0].name.as_str()),
            ("/dev/input/event1", "synaptics_dsx")
        );
        assert_eq!(
            ts[0].axis(ABS_MT_POSITION_X),
            Some(AxisRange { min: 0, max: 1079 })
        );
        assert_eq!(
            ts[0].axis(ABS_MT_POSITION_Y),
            Some(AxisRange { min: 0, max: 2159 })
        );
        assert_eq!(ts[0].slots(), Some(10));
        assert!(all[0].props == ["INPUT_PROP_ACCELEROMETER"] && !all[0].is_touchscreen());
    }

    #[test]
    fn the_galaxy_s5_excerpt_keeps_its_tabs_and_its_4095_panel() {
        let all = parse_getevent(fixture!(
            "getevent/samsung-galaxy-s5-sec-touchscreen-getevent-lp-PARTIAL.txt"
        ));
        let ts = touchscreens(&all);
        assert_eq!(ts.len(), 1);
        assert_eq!(ts[0].path, "/dev/input/event2");
        assert_eq!(ts[0].axis(ABS_MT_POSITION_X).map(|r| r.max), Some(4095));
        assert_eq!(ts[0].axis(ABS_MT_POSITION_Y).map(|r| r.max), Some(4095));
        assert_eq!(ts[0].slots(), Some(10));
        // The unnamed code 003e is read by its hex code, not mistaken for a known axis.
        assert_eq!(ts[0].axis(0x3e), Some(AxisRange { min: 0, max: -1 }));
    }

    #[test]
    fn the_red_magic_panel_range_reaches_the_display_size() {
        let all = parse_getevent(fixture!(
            "getevent/nubia-redmagic6-nx669j-getevent-lp-event3.txt"
        ));
        let ts = touchscreens(&all);
        assert_eq!(ts.len(), 1);
        assert_eq!(ts[0].axis(ABS_MT_POSITION_X).map(|r| r.max), Some(1080));
        assert_eq!(ts[0].axis(ABS_MT_POSITION_Y).map(|r| r.max), Some(2400));
    }

    #[test]
    fn unlabelled_axes_and_garbage_are_read_or_skipped() {
        let text = "junk\nadd device 1: /dev/input/event3\n  name:     \"ts\"\n  events:\n    ABS (0003): 0035  : value 0, min 0, max 719, fuzz 0, flat 0, resolution 0\n                0036  : value 0, min 0, max 1279, fuzz 0, flat 0, resolution 0\n  input props:\n    <none>\n";
        let all = parse_getevent(text);
        assert_eq!(all[0].axis(ABS_MT_POSITION_Y).map(|r| r.max), Some(1279));
        // Properties listed, but not INPUT_PROP_DIRECT: a touchpad, not a touchscreen.
        assert!(touchscreens(&all).is_empty());
        assert!(parse_getevent("").is_empty());
        assert_eq!(parse_getevent("add device 1:").len(), 1);
        assert!(parse_getevent("add device").is_empty());
    }
}
