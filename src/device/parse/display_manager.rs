//! The logical displays of `dumpsys display` (its `Logical Displays: size=N` section): the ids
//! `input -d`, `am start --display` and the window dump use, each with its name, size,
//! rotation, power state, type and unique id.
//!
//! Shape (AOSP `LogicalDisplayMapper.dumpLocked` → `LogicalDisplay.dumpLocked`, Android 10+;
//! `DisplayManagerService.dumpInternal` before): a `  Display <id>:` header, then indented
//! `mDisplayId=<id>`, `mBaseDisplayInfo=DisplayInfo{"<name>", displayId <id>", …, real W x H,
//! …, rotation R, state S, type T, uniqueId "<id>", …, density D (x y) dpi, …}` and, once the
//! window manager has set one, `mOverrideDisplayInfo=DisplayInfo{…}` (`DisplayInfo.toString`).
//! The size and rotation come from the override (what apps see: rotation applied), the power
//! state from the base info, which the display device updates (the override's `state` is the
//! window manager's stale copy: the capture `display/mtk-tablet-android13-dumpsys-display-off.txt`
//! reads `state OFF` in the base and `state ON` in the override with the screen off).

/// One logical display.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogicalDisplay {
    /// Logical display id (`mDisplayId=`; 0 is `Display.DEFAULT_DISPLAY`).
    pub id: u32,
    /// Name (`"Built-in Screen"`, a virtual display's owner's name).
    pub name: Option<String>,
    /// `real W x H`, px, rotation applied.
    pub size: Option<(u32, u32)>,
    /// Rotation, quarter turns (0–3).
    pub rotation: Option<u8>,
    /// Power state: `ON`, `OFF`, `DOZE`, `DOZE_SUSPEND`, `VR`, `ON_SUSPEND`, `UNKNOWN`.
    pub state: Option<String>,
    /// `INTERNAL`, `EXTERNAL`, `WIFI`, `OVERLAY`, `VIRTUAL`.
    pub kind: Option<String>,
    /// `local:<physical id>` for a panel (the id `screencap -d` takes), `virtual:…` otherwise.
    pub unique_id: Option<String>,
    /// Density, dpi.
    pub density: Option<u32>,
}

/// The fields one `DisplayInfo{…}` gives.
#[derive(Default)]
struct Info {
    name: Option<String>,
    size: Option<(u32, u32)>,
    rotation: Option<u8>,
    state: Option<String>,
    kind: Option<String>,
    unique_id: Option<String>,
    density: Option<u32>,
}

fn parse_info(text: &str) -> Info {
    let body = text.split_once("DisplayInfo{").map_or("", |(_, b)| b);
    let name = body
        .strip_prefix('"')
        .and_then(|rest| rest.split_once('"'))
        .map(|(name, _)| name.to_string());
    let mut info = Info {
        name,
        ..Info::default()
    };
    for part in body.split(", ") {
        let part = part.trim().trim_end_matches('}');
        let word = |key: &str| {
            part.strip_prefix(key)
                .and_then(|v| v.split_whitespace().next())
                .map(str::to_string)
        };
        if let Some(size) = part.strip_prefix("real ") {
            info.size = size.split_once(" x ").and_then(|(w, h)| {
                Some((
                    w.trim().parse().ok()?,
                    h.split_whitespace().next()?.parse().ok()?,
                ))
            });
        } else if let Some(r) = word("rotation ") {
            info.rotation = r.parse::<u8>().ok().filter(|r| *r < 4);
        } else if let Some(s) = word("state ") {
            info.state = Some(s);
        } else if let Some(t) = word("type ") {
            info.kind = Some(t);
        } else if let Some(u) = part.strip_prefix("uniqueId \"") {
            info.unique_id = u.split('"').next().map(str::to_string);
        } else if let Some(d) = word("density ") {
            info.density = d.parse().ok();
        }
    }
    info
}

/// The logical displays listed, in dump order; empty when the section is missing (builds
/// before Android 4.2 have one display and no such section).
pub fn parse_logical_displays(text: &str) -> Vec<LogicalDisplay> {
    let mut out: Vec<LogicalDisplay> = Vec::new();
    let mut in_section = false;
    let mut base = Info::default();
    let mut over: Option<Info> = None;
    let flush = |out: &mut Vec<LogicalDisplay>, base: &mut Info, over: &mut Option<Info>| {
        let (base, over) = (std::mem::take(base), over.take().unwrap_or_default());
        if let Some(d) = out.last_mut() {
            d.name = base.name.or(over.name);
            d.size = over.size.or(base.size);
            d.rotation = over.rotation.or(base.rotation);
            d.state = base.state.or(over.state);
            d.kind = base.kind.or(over.kind);
            d.unique_id = base.unique_id.or(over.unique_id);
            d.density = over.density.or(base.density);
        }
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("Logical Displays:") {
            in_section = true;
            continue;
        }
        if !in_section || trimmed.is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if let Some(id) = trimmed
            .strip_prefix("Display ")
            .and_then(|r| r.strip_suffix(':'))
            .and_then(|id| id.parse::<u32>().ok())
        {
            flush(&mut out, &mut base, &mut over);
            out.push(LogicalDisplay {
                id,
                ..LogicalDisplay::default()
            });
            continue;
        }
        if out.is_empty() || indent <= 2 {
            // The next part of the dump (`DeviceStateToLayoutMap:`, a top-level section).
            if !out.is_empty() {
                break;
            }
            continue;
        }
        if let Some(id) = trimmed.strip_prefix("mDisplayId=") {
            if let (Some(d), Ok(id)) = (out.last_mut(), id.trim().parse::<u32>()) {
                d.id = id;
            }
        } else if trimmed.starts_with("mBaseDisplayInfo=") {
            base = parse_info(trimmed);
        } else if trimmed.starts_with("mOverrideDisplayInfo=") {
            over = Some(parse_info(trimmed));
        }
    }
    flush(&mut out, &mut base, &mut over);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_capture_reads_its_one_display_with_the_base_state() {
        let displays = parse_logical_displays(fixture!(
            "display/mtk-tablet-android13-dumpsys-display-off.txt"
        ));
        assert_eq!(displays.len(), 1, "{displays:?}");
        let d = &displays[0];
        assert_eq!(d.id, 0);
        assert_eq!(d.name.as_deref(), Some("Built-in Screen"));
        assert_eq!(d.size, Some((480, 800)));
        assert_eq!(d.rotation, Some(0));
        // The screen is off: the base info says so, the override's copy does not.
        assert_eq!(d.state.as_deref(), Some("OFF"));
        assert_eq!(d.kind.as_deref(), Some("INTERNAL"));
        assert_eq!(d.unique_id.as_deref(), Some("local:0"));
        assert_eq!(d.density, Some(240));
    }

    #[test]
    fn several_displays_each_from_their_own_block() {
        // A rotated panel and a virtual display (cast), no override on the second one; the
        // virtual one is listed first, as a dump of a display added later may be.
        let text = "  Logical Displays: size=2\n  Display 2:\n    mDisplayId=2\n    mBaseDisplayInfo=DisplayInfo{\"Cast\", displayId 2\", displayGroupId 1, real 1280 x 720, largest app 1280 x 720, rotation 0, state ON, type VIRTUAL, uniqueId \"virtual:com.example.cast,10123,cast,0\", app 1280 x 720, density 213 (213.0 x 213.0) dpi}\n  \n  Display 0:\n    mDisplayId=0\n    mBaseDisplayInfo=DisplayInfo{\"Built-in Screen\", displayId 0\", real 1080 x 2400, rotation 0, state ON, type INTERNAL, uniqueId \"local:4619827259835644672\", app 1080 x 2400, density 420 (409.4 x 411.9) dpi}\n    mOverrideDisplayInfo=DisplayInfo{\"Built-in Screen\", displayId 0\", real 2400 x 1080, rotation 1, state ON, type INTERNAL, uniqueId \"local:4619827259835644672\", app 2400 x 1017, density 420 (409.4 x 411.9) dpi}\n  DeviceStateToLayoutMap:\n  Display 9:\n";
        let displays = parse_logical_displays(text);
        assert_eq!(displays.iter().map(|d| d.id).collect::<Vec<_>>(), [2, 0]);
        assert_eq!(displays[0].kind.as_deref(), Some("VIRTUAL"));
        assert_eq!(displays[0].size, Some((1280, 720)));
        assert_eq!(displays[1].size, Some((2400, 1080)), "rotation applied");
        assert_eq!(displays[1].rotation, Some(1));
        assert_eq!(
            displays[1].unique_id.as_deref(),
            Some("local:4619827259835644672")
        );
    }

    #[test]
    fn no_section_no_displays() {
        assert!(parse_logical_displays("").is_empty());
        assert!(parse_logical_displays("Display Devices: size=1\n  Display 0:\n").is_empty());
        assert!(parse_logical_displays(
            "Logical Displays: size=1\n  Display x:\n    mBaseDisplayInfo=DisplayInfo{\n"
        )
        .is_empty());
    }
}
