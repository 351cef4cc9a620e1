//! Where a gesture lands: coordinates (display px, or px of a screenshot the agent saw, via its
//! `screenshot_id`), an `element_id` of the last UI snapshot, or a selector (`text`,
//! `resource_id`, `content_desc`) matched on a fresh UI dump. Every result is checked against the
//! display.

use serde_json::{json, Value};

use super::display::DisplayGeometry;
use super::input::INPUT_DEADLINE;
use super::last_seen::SnapshotElement;
use super::selector::{given, Selector, SELECTOR_FIELDS};
use super::ui::{take_snapshot, UI_TREE_DEADLINE};
use crate::device::error::DeviceError;
use crate::device::tools::ToolCtx;
use std::time::Duration;

/// JSON Schema properties shared by every targeted gesture (the fields of `target_args!`).
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

/// [`target_properties`] plus a tool's own `extra` properties.
pub fn with_target_properties(extra: Value) -> Value {
    let mut all = target_properties();
    if let (Some(all), Value::Object(extra)) = (all.as_object_mut(), extra) {
        all.extend(extra);
    }
    all
}

/// Declares a gesture's argument struct: the target fields of [`target_properties`] followed by
/// the tool's own fields, with `target()` giving the [`TargetSpec`].
macro_rules! target_args {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[$fmeta:meta])* pub $field:ident : $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Debug, serde::Deserialize)]
        pub struct $name {
            /// X, px (display, or `screenshot_id`'s pixel space).
            pub x: Option<i64>,
            /// Y, px, same space as `x`.
            pub y: Option<i64>,
            /// The screenshot whose pixel space `x`/`y` are in.
            pub screenshot_id: Option<String>,
            /// An element of the last UI snapshot.
            pub element_id: Option<String>,
            /// The snapshot `element_id` belongs to.
            pub snapshot_id: Option<String>,
            /// Selector: exact visible text.
            pub text: Option<String>,
            /// Selector: exact resource-id.
            pub resource_id: Option<String>,
            /// Selector: exact content description.
            pub content_desc: Option<String>,
            $($(#[$fmeta])* pub $field: $ty,)*
        }

        impl $name {
            /// The target part of the arguments.
            pub fn target(&self) -> $crate::device::tools::phone::target::TargetSpec<'_> {
                $crate::device::tools::phone::target::TargetSpec {
                    x: self.x,
                    y: self.y,
                    screenshot_id: self.screenshot_id.as_deref(),
                    element_id: self.element_id.as_deref(),
                    snapshot_id: self.snapshot_id.as_deref(),
                    text: self.text.as_deref(),
                    resource_id: self.resource_id.as_deref(),
                    content_desc: self.content_desc.as_deref(),
                }
            }
        }
    };
}
pub(crate) use target_args;

/// The target of a gesture as the agent gave it (borrowed from its arguments).
#[derive(Debug, Clone, Copy, Default)]
pub struct TargetSpec<'a> {
    /// X, px.
    pub x: Option<i64>,
    /// Y, px.
    pub y: Option<i64>,
    /// Screenshot whose pixel space x/y are in.
    pub screenshot_id: Option<&'a str>,
    /// Element of the last UI snapshot.
    pub element_id: Option<&'a str>,
    /// Snapshot `element_id` belongs to.
    pub snapshot_id: Option<&'a str>,
    /// Selector: exact visible text.
    pub text: Option<&'a str>,
    /// Selector: exact resource-id.
    pub resource_id: Option<&'a str>,
    /// Selector: exact content description.
    pub content_desc: Option<&'a str>,
}

impl TargetSpec<'_> {
    /// The selector part, `None` when every selector field is absent or empty.
    fn selector(&self) -> Option<Selector<'_>> {
        Selector::from_fields(self.text, self.resource_id, self.content_desc)
    }

    /// The one deadline of a gesture call at this target whose injection takes `gesture`: the
    /// display read ([`INPUT_DEADLINE`]), a UI dump when a selector picks the element
    /// ([`UI_TREE_DEADLINE`]), then the gesture.
    pub fn call_deadline(&self, gesture: Duration) -> Duration {
        let dump = if self.selector().is_some() {
            UI_TREE_DEADLINE
        } else {
            Duration::ZERO
        };
        INPUT_DEADLINE + dump + gesture
    }
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

/// Scales a screenshot point to the display (rounding to nearest px).
pub fn scale_point(x: i64, y: i64, image: (u32, u32), display: (u32, u32)) -> (i64, i64) {
    let sx = f64::from(display.0) / f64::from(image.0.max(1));
    let sy = f64::from(display.1) / f64::from(image.1.max(1));
    (
        (x as f64 * sx).round() as i64,
        (y as f64 * sy).round() as i64,
    )
}

fn at_element(el: SnapshotElement) -> Resolved {
    let (x, y) = el.bounds.center();
    Resolved {
        x: x.into(),
        y: y.into(),
        element: Some(el),
    }
}

/// The kinds of target given (`x`/`y`, `element_id`, a selector), in that order.
fn kinds_given(t: &TargetSpec<'_>) -> Vec<&'static str> {
    let selector = t.selector().is_some();
    [
        (t.x.is_some() || t.y.is_some(), "x/y"),
        (given(t.element_id).is_some(), "element_id"),
        (selector, SELECTOR_FIELDS),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect()
}

/// Resolves a target: coordinates (mapped from `screenshot_id`'s pixel space against `now`, the
/// geometry read for this call), or `element_id`, or a selector on a fresh dump (which becomes
/// the channel's latest snapshot). Exactly one kind: two kinds at once (x/y and an element_id
/// that may be elsewhere) are `invalid_arguments`, never a silent pick of one.
pub async fn resolve(
    t: TargetSpec<'_>,
    ctx: &ToolCtx<'_>,
    now: &DisplayGeometry,
) -> Result<Resolved, DeviceError> {
    let kinds = kinds_given(&t);
    if kinds.len() > 1 {
        return Err(DeviceError::InvalidArguments(format!(
            "invalid arguments: give one target, not {}: x and y, or element_id, or a selector (text, resource_id, content_desc)",
            kinds.join(" and ")
        )));
    }
    if let (Some(x), Some(y)) = (t.x, t.y) {
        let (x, y) = resolve_xy(x, y, given(t.screenshot_id), ctx, now)?;
        return Ok(Resolved {
            x,
            y,
            element: None,
        });
    }
    if let Some(eid) = given(t.element_id) {
        let snap = ctx.last_seen.ui().ok_or_else(|| {
            DeviceError::ElementNotFound("no UI snapshot yet: call android_ui_tree first".into())
        })?;
        if given(t.snapshot_id).is_some_and(|want| want != snap.snapshot_id) {
            return Err(DeviceError::StaleSnapshot);
        }
        // Its bounds are in the frame the dump was read in.
        if let Some(taken) = snap.frame.filter(|f| !f.same_frame(now)) {
            return Err(DeviceError::StaleFrame {
                what: "the UI snapshot of element_id",
                taken: taken.describe(),
                now: now.describe(),
                fix: "read the UI tree again (android_ui_tree) and use its element_ids",
            });
        }
        let el = snap
            .elements
            .into_iter()
            .find(|e| e.element_id == eid)
            .ok_or_else(|| {
                DeviceError::ElementNotFound(
                    "no element with that element_id in the last UI snapshot (ids are e<N> from android_ui_tree)".into(),
                )
            })?;
        return Ok(at_element(el));
    }
    let Some(selector) = t.selector() else {
        return Err(DeviceError::InvalidArguments(format!(
            "invalid arguments: give x and y, or element_id, or {SELECTOR_FIELDS} with at least one non-empty field"
        )));
    };
    let snap = take_snapshot(ctx, Some(*now)).await?;
    let el = selector.find(&snap.elements)?.cloned().ok_or_else(|| {
        let near = selector.near_matches(&snap.elements);
        DeviceError::ElementNotFound(if near.is_empty() {
            "no on-screen element matches the selector".into()
        } else {
            format!(
                "no on-screen element matches the selector; near matches: {}",
                near.join(", ")
            )
        })
    })?;
    Ok(at_element(el))
}

/// Maps (x, y) given in a screenshot's pixel space (when `screenshot_id` is set) to display px.
/// A screenshot taken in another frame than `now` (the display rotated or changed size since)
/// is refused with [`DeviceError::StaleScreenshot`]: its pixels no longer show where a point
/// lands (field bug 25).
pub fn resolve_xy(
    x: i64,
    y: i64,
    screenshot_id: Option<&str>,
    ctx: &ToolCtx<'_>,
    now: &DisplayGeometry,
) -> Result<(i64, i64), DeviceError> {
    let Some(id) = screenshot_id else {
        return Ok((x, y));
    };
    let g = ctx.last_seen.shot(id).ok_or_else(|| {
        DeviceError::InvalidArguments("unknown screenshot_id (take a new screenshot)".into())
    })?;
    if !g.frame.same_frame(now) {
        return Err(DeviceError::StaleFrame {
            what: "screenshot_id",
            taken: g.frame.describe(),
            now: now.describe(),
            fix: "take a new screenshot and read the coordinates off it",
        });
    }
    if x >= i64::from(g.image.0) || y >= i64::from(g.image.1) {
        return Err(DeviceError::OutOfBounds {
            x,
            y,
            area: format!("screenshot {id}"),
            width: g.image.0,
            height: g.image.1,
        });
    }
    Ok(scale_point(x, y, g.image, g.display))
}

/// Refuses a point outside the display `(w, h)`.
pub fn check_bounds(x: i64, y: i64, (w, h): (u32, u32)) -> Result<(), DeviceError> {
    if x < 0 || y < 0 || x >= i64::from(w) || y >= i64::from(h) {
        return Err(DeviceError::OutOfBounds {
            x,
            y,
            area: "the display".into(),
            width: w,
            height: h,
        });
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
