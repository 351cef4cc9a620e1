//! `android_displays`: the phone's logical displays (id, name, size, rotation, power state,
//! type, whether it is the default one), read from `dumpsys display`
//! ([`super::phone::display_list`]), so a `display_id` can be found rather than guessed.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::display_list;
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::parse::displays::DEFAULT_DISPLAY;

/// No arguments.
#[derive(Debug, Deserialize)]
pub struct Args {}

/// One display.
#[derive(Debug, Serialize)]
pub struct DisplayOut {
    /// Logical display id (what `input -d`, `am start --display` take; 0 is the default).
    pub id: u32,
    /// Its name (`Built-in Screen`, a virtual display's name), `null` when not printed.
    pub name: Option<String>,
    /// Width, px, rotation applied.
    pub width: Option<u32>,
    /// Height, px, rotation applied.
    pub height: Option<u32>,
    /// Rotation, quarter turns.
    pub rotation: Option<u8>,
    /// Power state: `ON`, `OFF`, `DOZE`, … as Android prints it.
    pub state: Option<String>,
    /// `INTERNAL`, `EXTERNAL`, `WIFI`, `OVERLAY`, `VIRTUAL`.
    pub r#type: Option<String>,
    /// `local:<physical id>` for a panel (`screencap -d` takes the physical id on Android 12+),
    /// `virtual:…` for a virtual display.
    pub unique_id: Option<String>,
    /// Density, dpi.
    pub density: Option<u32>,
    /// The default display (id 0): where tools act unless told otherwise.
    pub default: bool,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// The displays in the order the phone lists them.
    pub displays: Vec<DisplayOut>,
}

/// `android_displays`.
pub struct Displays;

impl DeviceTool for Displays {
    const ID: &'static str = "android_displays";
    const TITLE: &'static str = "List the displays";
    const DESCRIPTION: &'static str = "List the bound phone's logical displays: id, name, width and height (px, rotation applied), rotation, state (ON, OFF, DOZE…), type (INTERNAL, EXTERNAL, VIRTUAL…), unique_id (local:<physical id> for a panel) and default (display 0, where tools act unless told otherwise). Use it to find a display_id rather than guess one. No side effects.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    const BACKENDS: &'static [&'static str] = &["dumpsys_display"];
    type Args = Args;
    type Output = Output;

    fn output_schema() -> Value {
        let text = json!({"type": ["string", "null"]});
        let int = json!({"type": ["integer", "null"], "minimum": 0});
        json!({"type": "object", "required": ["displays"], "properties": {
            "displays": {"type": "array", "minItems": 1, "items": {"type": "object",
                "required": ["id", "name", "width", "height", "rotation", "state", "type", "unique_id", "density", "default"],
                "properties": {
                    "id": {"type": "integer", "minimum": 0}, "name": text,
                    "width": int, "height": int,
                    "rotation": {"type": ["integer", "null"], "minimum": 0, "maximum": 3},
                    "state": text, "type": text, "unique_id": text, "density": int,
                    "default": {"type": "boolean"}
                }}}
        }})
    }

    async fn run(_: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let displays = display_list::read(ctx).await?;
        Ok(Output {
            displays: displays
                .into_iter()
                .map(|d| DisplayOut {
                    default: d.id == DEFAULT_DISPLAY,
                    id: d.id,
                    name: d.name,
                    width: d.size.map(|s| s.0),
                    height: d.size.map(|s| s.1),
                    rotation: d.rotation,
                    state: d.state,
                    r#type: d.kind,
                    unique_id: d.unique_id,
                    density: d.density,
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn outputs_match_the_schema() {
        assert_output::<Displays>(&Output {
            displays: vec![DisplayOut {
                id: 0,
                name: Some("Built-in Screen".into()),
                width: Some(1080),
                height: None,
                rotation: Some(1),
                state: Some("ON".into()),
                r#type: Some("INTERNAL".into()),
                unique_id: None,
                density: Some(420),
                default: true,
            }],
        });
    }
}
