//! Moving gestures: `android_swipe` (between two points) and `android_scroll` (content in a
//! direction, inside an element or mid-screen), with every point checked against (or clamped
//! to) the display. Both reach the phone through [`phone::touch`](super::phone::touch): one
//! finger moved across the touchscreen's input device, frame by frame, where it can, else
//! `input swipe X1 Y1 X2 Y2 MS`; the result says which (`backend`) and where the time went.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::display::{acting_geometry, check_on_display, read_display, DisplayGeometry};
use super::phone::input::{duration_schema, gesture_deadline, INPUT_DEADLINE};
use super::phone::target::{
    check_bounds, resolve, resolve_xy, target_args, with_target_properties,
};
use super::phone::touch::{
    backend_schema, perform, timing_schema, Backend, Done, Gesture, Stopwatch, Timing,
};
use super::{DeviceTool, LockRule, SideEffect, ToolCtx};
use crate::device::error::DeviceError;

/// Default swipe duration (ms).
pub const SWIPE_MS: u64 = 300;
/// Default scroll distance as a fraction of the display (or element) extent.
pub const SCROLL_FRACTION: f64 = 0.5;

/// One finger from `a` to `b` over `ms` ([`perform`]).
async fn run_swipe(
    ctx: &ToolCtx<'_>,
    now: &DisplayGeometry,
    a: (i64, i64),
    b: (i64, i64),
    ms: u64,
) -> Result<Done, DeviceError> {
    perform(ctx, now, Gesture::Swipe(a, b, ms)).await
}

fn point_schema() -> Value {
    json!({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2})
}

/// Arguments of a swipe.
#[derive(Debug, Deserialize)]
pub struct SwipeArgs {
    /// Start X, px.
    pub x1: i64,
    /// Start Y, px.
    pub y1: i64,
    /// End X, px.
    pub x2: i64,
    /// End Y, px.
    pub y2: i64,
    /// Screenshot whose pixel space the points are in.
    pub screenshot_id: Option<String>,
    /// Duration, ms (default [`SWIPE_MS`]).
    pub duration_ms: Option<u64>,
}

/// Result of a swipe (display px).
#[derive(Debug, Serialize)]
pub struct SwipeOutput {
    /// `[x, y]` start.
    pub from: [i64; 2],
    /// `[x, y]` end.
    pub to: [i64; 2],
    /// Duration, ms.
    pub duration_ms: u64,
    /// The lock screen was showing (or the screen off) when the swipe ran: it landed there,
    /// not on an app (a swipe up dismisses a swipe lock or brings up the PIN pad).
    pub lock_screen: bool,
    /// How the swipe reached the phone.
    pub backend: Backend,
    /// Where the call's time went.
    pub timing: Timing,
}

/// `android_swipe`: the one gesture that runs on the lock screen — a swipe up is how a swipe
/// lock is dismissed (docs/tools.md "Lock screen"); its result says where it landed.
pub struct Swipe;

impl DeviceTool for Swipe {
    const ID: &'static str = "android_swipe";
    const TITLE: &'static str = "Swipe";
    const DESCRIPTION: &'static str = "Swipe from (x1, y1) to (x2, y2) in display px (or in the pixel space of screenshot_id) over duration_ms. It also runs while the lock screen shows (lock_screen: true in the result): a swipe from near the bottom to near the top dismisses a swipe lock, or brings up the PIN pad.";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = super::phone::touch::GESTURE_BACKENDS;
    const RECEIPT: bool = true;
    type Args = SwipeArgs;
    type Output = SwipeOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["x1", "y1", "x2", "y2"], "properties": {
            "x1": {"type": "integer", "minimum": 0, "maximum": 100000}, "y1": {"type": "integer", "minimum": 0, "maximum": 100000},
            "x2": {"type": "integer", "minimum": 0, "maximum": 100000}, "y2": {"type": "integer", "minimum": 0, "maximum": 100000},
            "screenshot_id": {"type": "string", "maxLength": 64},
            "duration_ms": duration_schema(SWIPE_MS, 10_000)
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["from", "to", "duration_ms", "lock_screen", "backend", "timing"], "properties": {
            "from": point_schema(), "to": point_schema(), "duration_ms": {"type": "integer", "minimum": 1},
            "lock_screen": {"type": "boolean"}, "backend": backend_schema(), "timing": timing_schema()
        }})
    }

    fn deadline(args: &SwipeArgs) -> std::time::Duration {
        INPUT_DEADLINE + gesture_deadline(args.duration_ms.unwrap_or(SWIPE_MS))
    }

    async fn run(args: SwipeArgs, ctx: &ToolCtx<'_>) -> Result<SwipeOutput, DeviceError> {
        let mut watch = Stopwatch::start();
        let shot = args.screenshot_id.as_deref();
        // Read for this call: a rotation or size change since must not map or check the
        // points (field bug 25). Only a missing service refuses: a swipe is how a lock goes.
        let (now, readiness) = watch.phone(read_display(ctx)).await?;
        if let Some(e @ DeviceError::ServiceMissing { .. }) = readiness.refusal() {
            return Err(e);
        }
        let (x1, y1) = resolve_xy(args.x1, args.y1, shot, ctx, &now)?;
        let (x2, y2) = resolve_xy(args.x2, args.y2, shot, ctx, &now)?;
        check_on_display(&now, &[(x1, y1), (x2, y2)])?;
        let ms = args.duration_ms.unwrap_or(SWIPE_MS);
        let done = run_swipe(ctx, &now, (x1, y1), (x2, y2), ms).await?;
        watch.add(&done);
        Ok(SwipeOutput {
            from: [x1, y1],
            to: [x2, y2],
            duration_ms: ms,
            lock_screen: readiness.refusal().is_some(),
            backend: done.backend,
            timing: watch.timing(),
        })
    }
}

/// Which side's content comes into view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// See further up (finger moves down).
    Up,
    /// See further down (finger moves up).
    Down,
    /// See further left.
    Left,
    /// See further right.
    Right,
}

target_args! {
    /// Arguments of a scroll: an optional element target, direction, distance, duration.
    pub struct ScrollArgs {
        /// The side whose content comes into view.
        pub direction: Direction,
        /// Fraction of the extent (default [`SCROLL_FRACTION`]).
        pub distance: Option<f64>,
        /// Duration, ms (default [`SWIPE_MS`]).
        pub duration_ms: Option<u64>,
    }
}

/// Result of a scroll (display px).
#[derive(Debug, Serialize)]
pub struct ScrollOutput {
    /// As asked.
    pub direction: Direction,
    /// `[x, y]` where the finger started.
    pub from: [i64; 2],
    /// `[x, y]` where it ended.
    pub to: [i64; 2],
    /// Duration, ms.
    pub duration_ms: u64,
    /// How the scroll reached the phone.
    pub backend: Backend,
    /// Where the call's time went.
    pub timing: Timing,
}

/// `android_scroll`: scrolls the content `direction` (content moves so that what is further
/// `direction` comes into view: `down` swipes the finger upwards), inside an element or the
/// middle of the display.
pub struct Scroll;

impl DeviceTool for Scroll {
    const ID: &'static str = "android_scroll";
    const TITLE: &'static str = "Scroll";
    const DESCRIPTION: &'static str = "Scroll the content so that what lies in `direction` comes into view (down = see further down), by `distance` × the display (or element) extent (default 0.5), inside element_id / a selector's element, or centred on x/y (display px, or screenshot_id's pixel space), else mid-screen. While the lock screen shows or the screen is off nothing is done: device_locked says how to unlock.";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = super::phone::touch::GESTURE_BACKENDS;
    const RECEIPT: bool = true;
    const LOCK_RULE: LockRule = LockRule::Refused;
    type Args = ScrollArgs;
    type Output = ScrollOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["direction"], "properties": with_target_properties(json!({
            "direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
            "distance": {"type": "number", "minimum": 0.1, "maximum": 0.9, "description": "Fraction of the extent (default 0.5)."},
            "duration_ms": duration_schema(SWIPE_MS, 10_000)
        }))})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["direction", "from", "to", "duration_ms", "backend", "timing"], "properties": {
            "direction": {"type": "string", "enum": ["up", "down", "left", "right"]},
            "from": point_schema(), "to": point_schema(), "duration_ms": {"type": "integer", "minimum": 1},
            "backend": backend_schema(), "timing": timing_schema()
        }})
    }

    fn deadline(args: &ScrollArgs) -> std::time::Duration {
        args.target()
            .call_deadline(gesture_deadline(args.duration_ms.unwrap_or(SWIPE_MS)))
    }

    async fn run(args: ScrollArgs, ctx: &ToolCtx<'_>) -> Result<ScrollOutput, DeviceError> {
        let mut watch = Stopwatch::start();
        let now = watch.phone(acting_geometry(ctx)).await?;
        let size = now.size;
        // Any element argument, even empty, asks to scroll inside an element; x/y (in display
        // px, or in screenshot_id's pixel space, checked against the display now) centre the
        // scroll on that point. None of them: mid-screen. A target is never silently ignored.
        let target = args.target();
        let aimed = target.x.is_some() || target.y.is_some() || target.screenshot_id.is_some();
        let (l, t, r, b) = if args.element_id.is_some()
            || args.text.is_some()
            || args.resource_id.is_some()
            || args.content_desc.is_some()
        {
            let el = watch
                .phone(resolve(target, ctx, &now))
                .await?
                .element
                .ok_or_else(|| {
                    DeviceError::InvalidArguments(
                        "scroll inside an element needs element_id or a selector".into(),
                    )
                })?;
            (
                el.bounds.left.into(),
                el.bounds.top.into(),
                el.bounds.right.into(),
                el.bounds.bottom.into(),
            )
        } else if aimed {
            let at = watch.phone(resolve(target, ctx, &now)).await?;
            check_bounds(at.x, at.y, size)?;
            let (w, h) = (i64::from(size.0), i64::from(size.1));
            (at.x - w / 2, at.y - h / 2, at.x + w / 2, at.y + h / 2)
        } else {
            (0i64, 0i64, i64::from(size.0), i64::from(size.1))
        };
        let frac = args.distance.unwrap_or(SCROLL_FRACTION);
        let (cx, cy) = ((l + r) / 2, (t + b) / 2);
        let (dx, dy) = (
            ((r - l) as f64 * frac / 2.0) as i64,
            ((b - t) as f64 * frac / 2.0) as i64,
        );
        let (from, to) = match args.direction {
            Direction::Down => ((cx, cy + dy), (cx, cy - dy)),
            Direction::Up => ((cx, cy - dy), (cx, cy + dy)),
            Direction::Right => ((cx + dx, cy), (cx - dx, cy)),
            Direction::Left => ((cx - dx, cy), (cx + dx, cy)),
        };
        let clamp = |(x, y): (i64, i64)| {
            (
                x.clamp(0, i64::from(size.0) - 1),
                y.clamp(0, i64::from(size.1) - 1),
            )
        };
        let (from, to) = (clamp(from), clamp(to));
        let ms = args.duration_ms.unwrap_or(SWIPE_MS);
        let done = run_swipe(ctx, &now, from, to, ms).await?;
        watch.add(&done);
        Ok(ScrollOutput {
            direction: args.direction,
            from: [from.0, from.1],
            to: [to.0, to.1],
            duration_ms: ms,
            backend: done.backend,
            timing: watch.timing(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn outputs_match_the_schema() {
        assert_output::<Swipe>(&SwipeOutput {
            from: [1, 2],
            to: [3, 4],
            duration_ms: 300,
            lock_screen: false,
            backend: Backend::Evdev,
            timing: Timing::default(),
        });
        assert_output::<Scroll>(&ScrollOutput {
            direction: Direction::Down,
            from: [540, 1800],
            to: [540, 600],
            duration_ms: 300,
            backend: Backend::CmdInput,
            timing: Timing::default(),
        });
    }
}
