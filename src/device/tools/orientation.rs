//! `android_set_orientation`: locks the display rotation (auto-rotate off, then
//! `Settings.System.USER_ROTATION` = 0..3) or hands it back to the sensor (`auto`). Source: AOSP
//! `Settings.System.ACCELEROMETER_ROTATION` / `USER_ROTATION`, applied by the window manager's
//! `DisplayRotation`. The display-size cache is dropped so the next bounds check re-reads it.

use serde_json::{json, Value};

use super::input::{run_input, INPUT_DEADLINE};
use super::{ToolCtx, ToolError};
use crate::device::shell_quote::command_line;
use crate::protocol::card::ToolDecl;

/// The tool.
pub async fn set_orientation(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let which = args
        .get("orientation")
        .and_then(Value::as_str)
        .unwrap_or("portrait");
    let rotation = match which {
        "portrait" => Some("0"),
        "landscape" => Some("1"),
        "reverse_portrait" => Some("2"),
        "reverse_landscape" => Some("3"),
        _ => None,
    };
    let cmd = match rotation {
        Some(r) => format!(
            "{} && {}",
            command_line(&["settings", "put", "system", "accelerometer_rotation", "0"]),
            command_line(&["settings", "put", "system", "user_rotation", r])
        ),
        None => command_line(&["settings", "put", "system", "accelerometer_rotation", "1"]),
    };
    run_input(ctx, &cmd, INPUT_DEADLINE).await?;
    ctx.display.clear();
    Ok(
        json!({"orientation": which, "user_rotation": rotation.map(|r| r.parse::<u8>().unwrap_or(0))}),
    )
}

/// Card declaration.
pub fn decl() -> ToolDecl {
    ToolDecl {
        tool_id: "android_set_orientation",
        title: "Set screen orientation",
        description: "Lock the bound phone's screen to portrait, landscape, reverse_portrait or reverse_landscape (auto-rotate off), or give rotation back to the sensor with auto. Coordinates follow the new orientation: observe again before tapping.",
        side_effect: true,
        input_schema: json!({"type": "object", "required": ["orientation"], "properties": {
            "orientation": {"type": "string", "enum": ["portrait", "landscape", "reverse_portrait", "reverse_landscape", "auto"]}
        }}),
        output_schema: json!({"type": "object"}),
    }
}
