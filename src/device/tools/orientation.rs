//! `android_set_orientation`: locks the display rotation (auto-rotate off, then
//! `Settings.System.USER_ROTATION` = 0..3) or hands it back to the sensor (`auto`). Source: AOSP
//! `Settings.System.ACCELEROMETER_ROTATION` / `USER_ROTATION`, applied by the window manager's
//! `DisplayRotation`. The display-geometry hint is dropped; coordinate tools read the geometry
//! for every call anyway (field bug 25).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::input::{run_input, INPUT_DEADLINE};
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::shell_quote::command_line;

/// A locked rotation, or the sensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Orientation {
    /// `USER_ROTATION` 0.
    Portrait,
    /// `USER_ROTATION` 1.
    Landscape,
    /// `USER_ROTATION` 2.
    ReversePortrait,
    /// `USER_ROTATION` 3.
    ReverseLandscape,
    /// Auto-rotate on.
    Auto,
}

impl Orientation {
    /// `USER_ROTATION` quarter turns, `None` for `auto`.
    fn user_rotation(self) -> Option<u8> {
        match self {
            Orientation::Portrait => Some(0),
            Orientation::Landscape => Some(1),
            Orientation::ReversePortrait => Some(2),
            Orientation::ReverseLandscape => Some(3),
            Orientation::Auto => None,
        }
    }
}

/// Arguments.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// The orientation.
    pub orientation: Orientation,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// As asked.
    pub orientation: Orientation,
    /// The locked rotation (quarter turns), `null` for `auto`.
    pub user_rotation: Option<u8>,
}

/// `android_set_orientation`.
pub struct SetOrientation;

impl DeviceTool for SetOrientation {
    const ID: &'static str = "android_set_orientation";
    const TITLE: &'static str = "Set screen orientation";
    const DESCRIPTION: &'static str = "Lock the bound phone's screen to portrait, landscape, reverse_portrait or reverse_landscape (auto-rotate off), or give rotation back to the sensor with auto. Coordinates follow the new orientation: observe again before tapping.";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = &["settings"];
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["orientation"], "properties": {
            "orientation": {"type": "string", "enum": ["portrait", "landscape", "reverse_portrait", "reverse_landscape", "auto"]}
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["orientation", "user_rotation"], "properties": {
            "orientation": {"type": "string", "enum": ["portrait", "landscape", "reverse_portrait", "reverse_landscape", "auto"]},
            "user_rotation": {"type": ["integer", "null"], "minimum": 0, "maximum": 3}
        }})
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let rotation = args.orientation.user_rotation();
        let cmd = match rotation {
            Some(r) => format!(
                "{} && {}",
                command_line(&["settings", "put", "system", "accelerometer_rotation", "0"]),
                command_line(&["settings", "put", "system", "user_rotation", &r.to_string()])
            ),
            None => command_line(&["settings", "put", "system", "accelerometer_rotation", "1"]),
        };
        run_input(ctx, &cmd, INPUT_DEADLINE).await?;
        ctx.display.clear();
        Ok(Output {
            orientation: args.orientation,
            user_rotation: rotation,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn outputs_match_the_schema() {
        for o in [Orientation::ReverseLandscape, Orientation::Auto] {
            assert_output::<SetOrientation>(&Output {
                orientation: o,
                user_rotation: o.user_rotation(),
            });
        }
    }
}
