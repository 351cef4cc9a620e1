//! `android_device_status`: model, release, battery, screen, display size and foreground app in
//! one shell round trip (`getprop; dumpsys battery; wm size; dumpsys power; dumpsys window`).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::command::SEP;
use super::phone::display::DisplayGeometry;
use super::phone::ui::TEXT_LIMIT;
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::parse::{battery, getprop, power, text, window, wm};

/// Deadline of the one compound shell command.
pub const STATUS_DEADLINE: Duration = Duration::from_secs(10);

/// `android_device_status`.
pub struct DeviceStatus;

/// No arguments.
#[derive(Debug, Deserialize)]
pub struct Args {}

/// A width and height, px.
#[derive(Debug, Serialize)]
pub struct Size {
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
}

impl From<(u32, u32)> for Size {
    fn from((width, height): (u32, u32)) -> Self {
        Size { width, height }
    }
}

/// The display: input-space size plus `wm size`'s physical and override sizes.
#[derive(Debug, Serialize)]
pub struct Display {
    /// Input-space width (override and rotation applied), px.
    pub width: Option<u32>,
    /// Input-space height, px.
    pub height: Option<u32>,
    /// `Physical size:`.
    pub physical: Option<Size>,
    /// `Override size:`.
    pub r#override: Option<Size>,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// `ro.product.model`.
    pub model: String,
    /// `ro.product.manufacturer`.
    pub manufacturer: String,
    /// `ro.build.version.release`.
    pub android_release: String,
    /// `ro.build.version.sdk`.
    pub sdk: Option<u32>,
    /// `level`×100/`scale` (field bug 18).
    pub battery_percent: Option<u32>,
    /// Whether the screen is on.
    pub screen_on: Option<bool>,
    /// Display sizes.
    pub display: Display,
    /// Package of the focused window.
    pub foreground_package: Option<String>,
}

impl DeviceTool for DeviceStatus {
    const ID: &'static str = "android_device_status";
    const TITLE: &'static str = "Android device status";
    const DESCRIPTION: &'static str = "Read the bound phone's model, manufacturer, Android release and SDK, battery percent, whether the screen is on, display size (px) and the foreground app package. No side effects.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "properties": {}})
    }

    fn output_schema() -> Value {
        let size = json!({"type": ["object", "null"], "required": ["width", "height"], "properties": {
            "width": {"type": "integer"}, "height": {"type": "integer"}}});
        json!({"type": "object",
        "required": ["model", "manufacturer", "android_release", "sdk", "battery_percent", "screen_on", "display", "foreground_package"],
        "properties": {
            "model": {"type": "string"}, "manufacturer": {"type": "string"},
            "android_release": {"type": "string"}, "sdk": {"type": ["integer", "null"]},
            "battery_percent": {"type": ["integer", "null"]}, "screen_on": {"type": ["boolean", "null"]},
            "display": {"type": "object", "required": ["width", "height", "physical", "override"], "properties": {
                "width": {"type": ["integer", "null"]}, "height": {"type": ["integer", "null"]},
                "physical": size, "override": size
            }},
            "foreground_package": {"type": ["string", "null"]}
        }})
    }

    async fn run(_: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let cmd = format!(
            "getprop; echo {SEP}; dumpsys battery; echo {SEP}; wm size; echo {SEP}; dumpsys power; echo {SEP}; dumpsys window"
        );
        let out = ctx.link.shell(&cmd, STATUS_DEADLINE, TEXT_LIMIT).await?;
        let text = text::decode_output(&out.stdout);
        let parts: Vec<&str> = text.split(&format!("{SEP}\n")).collect();
        let part = |i: usize| parts.get(i).copied().unwrap_or("");
        let props = getprop::parse_getprop(part(0));
        let prop = |k: &str| props.get(k).cloned().unwrap_or_default();
        let battery = battery::parse_dumpsys_battery(part(1));
        let size = wm::parse_wm_size(part(2));
        // The input space: `cur=` (override and rotation applied), else wm's effective size.
        let effective = window::parse_current_display_size(part(4))
            .or_else(|| size.as_ref().and_then(|s| s.effective()));
        if let Some(size) = effective {
            ctx.display.set(DisplayGeometry {
                size,
                rotation: window::parse_current_rotation(part(4)),
            });
        }
        Ok(Output {
            model: prop("ro.product.model"),
            manufacturer: prop("ro.product.manufacturer"),
            android_release: prop("ro.build.version.release"),
            sdk: prop("ro.build.version.sdk").parse::<u32>().ok(),
            battery_percent: battery.as_ref().and_then(|b| b.percent),
            screen_on: power::parse_screen_on(part(3)),
            display: Display {
                width: effective.map(|s| s.0),
                height: effective.map(|s| s.1),
                physical: size.as_ref().and_then(|s| s.physical).map(Size::from),
                r#override: size.as_ref().and_then(|s| s.override_size).map(Size::from),
            },
            foreground_package: window::parse_current_focus(part(4)).and_then(|f| f.package),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn outputs_match_the_schema() {
        let mut out = Output {
            model: "Pixel 7".into(),
            manufacturer: "Google".into(),
            android_release: "14".into(),
            sdk: Some(34),
            battery_percent: None,
            screen_on: Some(true),
            display: Display {
                width: Some(1080),
                height: Some(2400),
                physical: Some((1080, 2400).into()),
                r#override: None,
            },
            foreground_package: None,
        };
        assert_output::<DeviceStatus>(&out);
        out.display = Display {
            width: None,
            height: None,
            physical: None,
            r#override: Some((720, 1600).into()),
        };
        assert_output::<DeviceStatus>(&out);
    }
}
