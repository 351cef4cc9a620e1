//! Touch gestures: `android_tap`, `android_long_press`, `android_double_tap`, `android_swipe`,
//! `android_scroll`. Targets resolve through [`super::target`] (coordinates, screenshot space,
//! element id, selector); every point is checked against the display; argv is quoted once.
//! `input swipe X Y X Y MS` is Android's long press (AOSP `InputShellCommand.java`: a swipe
//! with equal ends held for MS).

use std::time::Duration;

use serde_json::{json, Value};

use super::input::{display_size, run_input, INPUT_DEADLINE};
use super::target::{check_bounds, resolve, resolve_xy, target_properties};
use super::{ToolCtx, ToolError};
use crate::device::shell_quote::command_line;
use crate::protocol::card::ToolDecl;
use crate::protocol::ErrorCode;

/// Default long-press hold (ms): above ViewConfiguration's 400–500 ms long-press timeout.
pub const LONG_PRESS_MS: u64 = 800;
/// Default swipe duration (ms).
pub const SWIPE_MS: u64 = 300;
/// Default scroll distance as a fraction of the display (or element) extent.
pub const SCROLL_FRACTION: f64 = 0.5;

fn ms_arg(args: &Value, key: &str, default: u64) -> u64 {
    args.get(key).and_then(Value::as_u64).unwrap_or(default)
}

fn gesture_deadline(ms: u64) -> Duration {
    INPUT_DEADLINE + Duration::from_millis(ms)
}

/// `input tap X Y`.
pub async fn tap(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let size = display_size(ctx).await?;
    let at = resolve(args, ctx).await?;
    check_bounds(at.x, at.y, size)?;
    let cmd = command_line(&["input", "tap", &at.x.to_string(), &at.y.to_string()]);
    run_input(ctx, &cmd, INPUT_DEADLINE).await?;
    Ok(
        json!({"tapped": {"x": at.x, "y": at.y}, "element_id": at.element.map(|e| e.element_id),
              "display": {"width": size.0, "height": size.1}}),
    )
}

/// `input swipe X Y X Y MS` (a hold in place).
pub async fn long_press(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let size = display_size(ctx).await?;
    let at = resolve(args, ctx).await?;
    check_bounds(at.x, at.y, size)?;
    let ms = ms_arg(args, "duration_ms", LONG_PRESS_MS);
    let (x, y) = (at.x.to_string(), at.y.to_string());
    let cmd = command_line(&["input", "swipe", &x, &y, &x, &y, &ms.to_string()]);
    run_input(ctx, &cmd, gesture_deadline(ms)).await?;
    Ok(json!({"pressed": {"x": at.x, "y": at.y}, "duration_ms": ms}))
}

/// Two `input tap` in one shell round trip (≈ the double-tap timeout of 300 ms apart at most).
pub async fn double_tap(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let size = display_size(ctx).await?;
    let at = resolve(args, ctx).await?;
    check_bounds(at.x, at.y, size)?;
    let (x, y) = (at.x.to_string(), at.y.to_string());
    let one = command_line(&["input", "tap", &x, &y]);
    run_input(ctx, &format!("{one} && {one}"), INPUT_DEADLINE).await?;
    Ok(json!({"double_tapped": {"x": at.x, "y": at.y}}))
}

/// `input swipe X1 Y1 X2 Y2 MS` between two points.
pub async fn swipe(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let size = display_size(ctx).await?;
    let get = |k: &str| args.get(k).and_then(Value::as_i64).unwrap_or(-1);
    let shot = args.get("screenshot_id").and_then(Value::as_str);
    let (x1, y1) = resolve_xy(get("x1"), get("y1"), shot, ctx)?;
    let (x2, y2) = resolve_xy(get("x2"), get("y2"), shot, ctx)?;
    check_bounds(x1, y1, size)?;
    check_bounds(x2, y2, size)?;
    let ms = ms_arg(args, "duration_ms", SWIPE_MS);
    run_swipe(ctx, (x1, y1), (x2, y2), ms).await?;
    Ok(json!({"from": [x1, y1], "to": [x2, y2], "duration_ms": ms}))
}

async fn run_swipe(
    ctx: &ToolCtx<'_>,
    a: (i64, i64),
    b: (i64, i64),
    ms: u64,
) -> Result<(), ToolError> {
    let argv = [a.0, a.1, b.0, b.1].map(|v| v.to_string());
    let cmd = command_line(&[
        "input",
        "swipe",
        &argv[0],
        &argv[1],
        &argv[2],
        &argv[3],
        &ms.to_string(),
    ]);
    run_input(ctx, &cmd, gesture_deadline(ms)).await
}

/// Scrolls the content `direction` (content moves so that what is further `direction` comes
/// into view: `down` swipes the finger upwards), inside an element or the middle of the display.
pub async fn scroll(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let size = display_size(ctx).await?;
    let (l, t, r, b) = if args.get("element_id").is_some()
        || args.get("text").is_some()
        || args.get("resource_id").is_some()
        || args.get("content_desc").is_some()
    {
        let el = resolve(args, ctx).await?.element.ok_or_else(|| {
            ToolError::new(
                ErrorCode::InvalidArguments,
                "scroll inside an element needs element_id or a selector",
            )
        })?;
        (
            el.bounds.left.into(),
            el.bounds.top.into(),
            el.bounds.right.into(),
            el.bounds.bottom.into(),
        )
    } else {
        (0i64, 0i64, i64::from(size.0), i64::from(size.1))
    };
    let frac = args
        .get("distance")
        .and_then(Value::as_f64)
        .unwrap_or(SCROLL_FRACTION);
    let (cx, cy) = ((l + r) / 2, (t + b) / 2);
    let (dx, dy) = (
        ((r - l) as f64 * frac / 2.0) as i64,
        ((b - t) as f64 * frac / 2.0) as i64,
    );
    let dir = args
        .get("direction")
        .and_then(Value::as_str)
        .unwrap_or("down");
    let (from, to) = match dir {
        "down" => ((cx, cy + dy), (cx, cy - dy)),
        "up" => ((cx, cy - dy), (cx, cy + dy)),
        "right" => ((cx + dx, cy), (cx - dx, cy)),
        _ => ((cx - dx, cy), (cx + dx, cy)),
    };
    let clamp = |(x, y): (i64, i64)| {
        (
            x.clamp(0, i64::from(size.0) - 1),
            y.clamp(0, i64::from(size.1) - 1),
        )
    };
    let (from, to) = (clamp(from), clamp(to));
    let ms = ms_arg(args, "duration_ms", SWIPE_MS);
    run_swipe(ctx, from, to, ms).await?;
    Ok(json!({"direction": dir, "from": [from.0, from.1], "to": [to.0, to.1], "duration_ms": ms}))
}

fn with(mut base: Value, extra: Value) -> Value {
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            b.insert(k.clone(), v.clone());
        }
    }
    base
}

const TARGET_HELP: &str = "Target: x and y (display px; or the pixel space of screenshot_id), or element_id from the last android_ui_tree, or a selector (text / resource_id / content_desc, exact match). Coordinates outside the display are refused with out_of_bounds naming the valid range.";

/// Card declarations of the gestures.
pub fn decls() -> Vec<ToolDecl> {
    let duration = |default: u64, max: u64| json!({"type": "integer", "minimum": 1, "maximum": max, "description": format!("Duration in ms (default {default}).")});
    vec![
        ToolDecl {
            tool_id: "android_tap",
            title: "Tap",
            description: leak(format!("Tap once on the bound phone. {TARGET_HELP}")),
            side_effect: true,
            input_schema: json!({"type": "object", "properties": target_properties()}),
            output_schema: json!({"type": "object"}),
        },
        ToolDecl {
            tool_id: "android_long_press",
            title: "Long press",
            description: leak(format!("Press and hold. {TARGET_HELP}")),
            side_effect: true,
            input_schema: json!({"type": "object", "properties": with(target_properties(), json!({"duration_ms": duration(LONG_PRESS_MS, 10_000)}))}),
            output_schema: json!({"type": "object"}),
        },
        ToolDecl {
            tool_id: "android_double_tap",
            title: "Double tap",
            description: leak(format!("Tap twice quickly. {TARGET_HELP}")),
            side_effect: true,
            input_schema: json!({"type": "object", "properties": target_properties()}),
            output_schema: json!({"type": "object"}),
        },
        ToolDecl {
            tool_id: "android_swipe",
            title: "Swipe",
            description: "Swipe from (x1, y1) to (x2, y2) in display px (or in the pixel space of screenshot_id) over duration_ms.",
            side_effect: true,
            input_schema: json!({"type": "object", "required": ["x1", "y1", "x2", "y2"], "properties": {
                "x1": {"type": "integer", "minimum": 0, "maximum": 100000}, "y1": {"type": "integer", "minimum": 0, "maximum": 100000},
                "x2": {"type": "integer", "minimum": 0, "maximum": 100000}, "y2": {"type": "integer", "minimum": 0, "maximum": 100000},
                "screenshot_id": {"type": "string", "maxLength": 64},
                "duration_ms": duration(SWIPE_MS, 10_000)
            }}),
            output_schema: json!({"type": "object"}),
        },
        ToolDecl {
            tool_id: "android_scroll",
            title: "Scroll",
            description: "Scroll the content so that what lies in `direction` comes into view (down = see further down), by `distance` × the display (or element) extent (default 0.5), inside element_id / a selector's element, else mid-screen.",
            side_effect: true,
            input_schema: json!({"type": "object", "required": ["direction"], "properties": with(target_properties(), json!({
                "direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
                "distance": {"type": "number", "minimum": 0.1, "maximum": 0.9, "description": "Fraction of the extent (default 0.5)."},
                "duration_ms": duration(SWIPE_MS, 10_000)
            }))}),
            output_schema: json!({"type": "object"}),
        },
    ]
}

/// Card descriptions are built once per process; leaking them gives the `&'static str` the
/// declaration type wants.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}
