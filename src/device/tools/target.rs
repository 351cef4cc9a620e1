//! Where a gesture lands: coordinates (display px, or px of a screenshot the agent saw, via its
//! `screenshot_id`), an `element_id` of the last UI snapshot, or a selector (`text`,
//! `resource_id`, `content_desc`) matched on a fresh UI dump. Every result is checked against the
//! display.

use serde_json::{json, Value};

use super::memory::SnapshotElement;
use super::{ToolCtx, ToolError};
use crate::protocol::ErrorCode;

/// JSON Schema properties shared by every targeted gesture.
pub fn target_properties() -> Value {
    json!({
        "x": {"type": "integer", "minimum": 0, "maximum": 100000, "description": "X in px (display input space, or the screenshot's pixel space when screenshot_id is given)."},
        "y": {"type": "integer", "minimum": 0, "maximum": 100000, "description": "Y in px, same space as x."},
        "screenshot_id": {"type": "string", "maxLength": 64, "description": "The android_screenshot whose pixel space x/y are in (its scale is applied)."},
        "element_id": {"type": "string", "maxLength": 16, "description": "An element_id from the last android_ui_tree result (its center is used)."},
        "snapshot_id": {"type": "string", "maxLength": 64, "description": "The snapshot_id element_id belongs to; refused if a newer snapshot replaced it."},
        "text": {"type": "string", "maxLength": 500, "description": "Selector: exact visible text."},
        "resource_id": {"type": "string", "maxLength": 300, "description": "Selector: exact resource-id."},
        "content_desc": {"type": "string", "maxLength": 500, "description": "Selector: exact content description."}
    })
}

/// A resolved point in display px, and how it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// X, display px.
    pub x: i64,
    /// Y, display px.
    pub y: i64,
    /// The element it came from, if any.
    pub element: Option<SnapshotElement>,
}

fn text_arg<'a>(args: &'a Value, key: &str) -> Option<&'a str> {
    args.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Scales a screenshot point to the display (rounding to nearest px).
pub fn scale_point(x: i64, y: i64, image: (u32, u32), display: (u32, u32)) -> (i64, i64) {
    let sx = f64::from(display.0) / f64::from(image.0.max(1));
    let sy = f64::from(display.1) / f64::from(image.1.max(1));
    (
        (x as f64 * sx).round() as i64,
        (y as f64 * sy).round() as i64,
    )
}

/// Resolves the target of `args` (prefix `""`; swipes use `from_`/`to_` via [`resolve_xy`]).
pub async fn resolve(args: &Value, ctx: &ToolCtx<'_>) -> Result<Resolved, ToolError> {
    if let (Some(x), Some(y)) = (
        args.get("x").and_then(Value::as_i64),
        args.get("y").and_then(Value::as_i64),
    ) {
        let (x, y) = resolve_xy(x, y, text_arg(args, "screenshot_id"), ctx)?;
        return Ok(Resolved {
            x,
            y,
            element: None,
        });
    }
    if let Some(eid) = text_arg(args, "element_id") {
        let snap = ctx.memory.ui().ok_or_else(|| {
            ToolError::new(
                ErrorCode::ElementNotFound,
                "no UI snapshot yet: call android_ui_tree first",
            )
        })?;
        if let Some(want) = text_arg(args, "snapshot_id") {
            if want != snap.snapshot_id {
                return Err(ToolError::new(
                    ErrorCode::StaleSnapshot,
                    "snapshot_id is not the latest android_ui_tree result; read the UI tree again",
                ));
            }
        }
        let el = snap
            .elements
            .into_iter()
            .find(|e| e.element_id == eid)
            .ok_or_else(|| {
                ToolError::new(
                    ErrorCode::ElementNotFound,
                    format!("no element {eid} in the last UI snapshot"),
                )
            })?;
        let (x, y) = el.bounds.center();
        return Ok(Resolved {
            x: x.into(),
            y: y.into(),
            element: Some(el),
        });
    }
    let (text, rid, desc) = (
        text_arg(args, "text"),
        text_arg(args, "resource_id"),
        text_arg(args, "content_desc"),
    );
    if text.is_none() && rid.is_none() && desc.is_none() {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            "invalid arguments: give x and y, or element_id, or a selector (text, resource_id, content_desc)",
        ));
    }
    let snap = super::observe::take_snapshot(ctx, true).await?;
    let el = snap
        .elements
        .into_iter()
        .find(|e| {
            text.is_none_or(|t| e.text == t)
                && rid.is_none_or(|r| e.resource_id == r)
                && desc.is_none_or(|d| e.content_desc == d)
        })
        .ok_or_else(|| {
            ToolError::new(
                ErrorCode::ElementNotFound,
                "no on-screen element matches the selector",
            )
        })?;
    let (x, y) = el.bounds.center();
    Ok(Resolved {
        x: x.into(),
        y: y.into(),
        element: Some(el),
    })
}

/// Maps (x, y) given in a screenshot's pixel space (when `screenshot_id` is set) to display px.
pub fn resolve_xy(
    x: i64,
    y: i64,
    screenshot_id: Option<&str>,
    ctx: &ToolCtx<'_>,
) -> Result<(i64, i64), ToolError> {
    match screenshot_id {
        None => Ok((x, y)),
        Some(id) => {
            let g = ctx.memory.shot(id).ok_or_else(|| {
                ToolError::new(
                    ErrorCode::InvalidArguments,
                    "unknown screenshot_id (take a new screenshot)",
                )
            })?;
            if x >= i64::from(g.image.0) || y >= i64::from(g.image.1) {
                return Err(ToolError::new(
                    ErrorCode::OutOfBounds,
                    format!(
                        "({x}, {y}) is outside screenshot {id}: x must be in 0..={}, y in 0..={} (px)",
                        g.image.0.saturating_sub(1),
                        g.image.1.saturating_sub(1)
                    ),
                ));
            }
            Ok(scale_point(x, y, g.image, g.display))
        }
    }
}

/// Refuses a point outside the display `(w, h)`.
pub fn check_bounds(x: i64, y: i64, (w, h): (u32, u32)) -> Result<(), ToolError> {
    if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
        return Err(ToolError::new(
            ErrorCode::OutOfBounds,
            format!(
                "({x}, {y}) is outside the display: x must be in 0..={}, y in 0..={} (px)",
                w.saturating_sub(1),
                h.saturating_sub(1)
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_bug_14_scaled_screenshot_maps_to_display() {
        assert_eq!(
            scale_point(270, 600, (540, 1200), (1080, 2400)),
            (540, 1200)
        );
        assert_eq!(scale_point(0, 0, (540, 1200), (1080, 2400)), (0, 0));
    }
}
