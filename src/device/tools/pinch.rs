//! `android_pinch`: two fingers moving apart (zoom in, `scale` > 1) or together (zoom out,
//! `scale` < 1) about a point, written to the touchscreen's input device as multi-touch
//! protocol B ([`phone::touch`](super::phone::touch), slots 0 and 1). Where only `input` can
//! inject (one finger), the call is `unsupported`, naming why the touchscreen is not usable.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::display::{acting_geometry, check_on_display};
use super::phone::input::{gesture_deadline, INPUT_DEADLINE};
use super::phone::target::resolve_xy;
use super::phone::touch::{
    backend_schema, perform, timing_schema, Backend, Gesture, Stopwatch, Timing,
};
use super::{DeviceTool, LockRule, SideEffect, ToolCtx};
use crate::device::error::DeviceError;

/// Smallest and largest `scale`.
pub const SCALE_RANGE: (f64, f64) = (0.2, 5.0);
/// Smallest and largest `duration_ms`.
pub const DURATION_RANGE: (u64, u64) = (50, 5000);
/// Default duration, ms.
pub const PINCH_MS: u64 = 400;
/// The wider of the two finger spans (start or end), as a fraction of the display's shorter
/// side: far enough apart for a zoom, inside the display about a centred point.
const WIDE_SPAN: f64 = 0.8;
/// Fingers closer than this (px) would touch: ViewConfiguration's touch slop is 8 dp.
const MIN_SPAN_PX: f64 = 24.0;

/// Arguments of a pinch.
#[derive(Debug, Deserialize)]
pub struct PinchArgs {
    /// Centre X, px (display, or `screenshot_id`'s pixel space).
    pub x: i64,
    /// Centre Y, px.
    pub y: i64,
    /// End span ÷ start span (0.2–5.0).
    pub scale: f64,
    /// Duration, ms (50–5000, default [`PINCH_MS`]).
    pub duration_ms: Option<u64>,
    /// The screenshot whose pixel space `x`/`y` are in.
    pub screenshot_id: Option<String>,
}

/// Result of a pinch (display px).
#[derive(Debug, Serialize)]
pub struct PinchOutput {
    /// `[x, y]` centre.
    pub center: [i64; 2],
    /// As asked.
    pub scale: f64,
    /// Duration, ms.
    pub duration_ms: u64,
    /// `[[x, y], [x, y]]` where the two fingers went down.
    pub from: [[i64; 2]; 2],
    /// Where they lifted.
    pub to: [[i64; 2]; 2],
    /// How it reached the phone (always `evdev`).
    pub backend: Backend,
    /// Where the call's time went.
    pub timing: Timing,
}

/// Two fingers' points, display px.
type Fingers = [(i64, i64); 2];

/// The two fingers' start and end points: on a horizontal line through `c`, the wider span
/// [`WIDE_SPAN`] of the shorter side (less where `c` is near an edge). Too near an edge for
/// the narrower span to stay [`MIN_SPAN_PX`] apart: `invalid_arguments`.
fn fingers(c: (i64, i64), size: (u32, u32), scale: f64) -> Result<(Fingers, Fingers), DeviceError> {
    let (w, h) = (f64::from(size.0), f64::from(size.1));
    let room = (c.0 as f64).min(w - 1.0 - c.0 as f64);
    let wide_half = (WIDE_SPAN * w.min(h) / 2.0).min(room);
    let narrow_half = wide_half / scale.max(1.0 / scale);
    if narrow_half * 2.0 < MIN_SPAN_PX {
        return Err(DeviceError::InvalidArguments(format!(
            "invalid arguments: the pinch centre ({}, {}) is too near the display's left or right edge for two fingers (display {}x{}); move it inwards",
            c.0, c.1, size.0, size.1
        )));
    }
    let (start, end) = if scale >= 1.0 {
        (narrow_half, wide_half)
    } else {
        (wide_half, narrow_half)
    };
    let pair = |half: f64| {
        let d = half.round() as i64;
        [(c.0 - d, c.1), (c.0 + d, c.1)]
    };
    Ok((pair(start), pair(end)))
}

/// `android_pinch`.
pub struct Pinch;

impl DeviceTool for Pinch {
    const ID: &'static str = "android_pinch";
    const TITLE: &'static str = "Pinch";
    const DESCRIPTION: &'static str = "Two-finger pinch about (x, y) (display px, or the pixel space of screenshot_id): scale > 1 spreads the fingers (zoom in), < 1 brings them together (zoom out), over duration_ms (default 400). Needs the phone's touchscreen input device (backend evdev); where only `input` can inject it is refused with `unsupported`. While the lock screen shows or the screen is off nothing is done: device_locked says how to unlock.";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = super::phone::touch::GESTURE_BACKENDS;
    const RECEIPT: bool = true;
    const LOCK_RULE: LockRule = LockRule::Refused;
    type Args = PinchArgs;
    type Output = PinchOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["x", "y", "scale"], "properties": {
            "x": {"type": "integer", "minimum": 0, "maximum": 100000, "description": "Centre X in px (display input space, or the screenshot's pixel space when screenshot_id is given)."},
            "y": {"type": "integer", "minimum": 0, "maximum": 100000, "description": "Centre Y in px, same space as x."},
            "scale": {"type": "number", "minimum": SCALE_RANGE.0, "maximum": SCALE_RANGE.1, "description": "End distance between the fingers ÷ start distance: > 1 zooms in, < 1 zooms out."},
            "duration_ms": {"type": "integer", "minimum": DURATION_RANGE.0, "maximum": DURATION_RANGE.1, "description": "Duration in ms (default 400)."},
            "screenshot_id": {"type": "string", "maxLength": 64, "description": "The android_screenshot whose pixel space x/y are in (its scale is applied)."}
        }})
    }

    fn output_schema() -> Value {
        let pt =
            json!({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2});
        let pair = json!({"type": "array", "items": pt, "minItems": 2, "maxItems": 2});
        json!({"type": "object", "required": ["center", "scale", "duration_ms", "from", "to", "backend", "timing"], "properties": {
            "center": pt, "scale": {"type": "number"}, "duration_ms": {"type": "integer", "minimum": 1},
            "from": pair, "to": pair, "backend": backend_schema(), "timing": timing_schema()
        }})
    }

    fn deadline(args: &PinchArgs) -> Duration {
        INPUT_DEADLINE + gesture_deadline(args.duration_ms.unwrap_or(PINCH_MS))
    }

    async fn run(args: PinchArgs, ctx: &ToolCtx<'_>) -> Result<PinchOutput, DeviceError> {
        let ms = args.duration_ms.unwrap_or(PINCH_MS);
        if !(SCALE_RANGE.0..=SCALE_RANGE.1).contains(&args.scale)
            || !(DURATION_RANGE.0..=DURATION_RANGE.1).contains(&ms)
        {
            return Err(DeviceError::InvalidArguments(format!(
                "invalid arguments: scale must be {}–{} and duration_ms {}–{}",
                SCALE_RANGE.0, SCALE_RANGE.1, DURATION_RANGE.0, DURATION_RANGE.1
            )));
        }
        let mut watch = Stopwatch::start();
        let now = watch.phone(acting_geometry(ctx)).await?;
        let c = resolve_xy(args.x, args.y, args.screenshot_id.as_deref(), ctx, &now)?;
        check_on_display(&now, &[c])?;
        let (a, b) = fingers(c, now.size, args.scale)?;
        let done = perform(ctx, &now, Gesture::Pinch(a, b, ms)).await?;
        watch.add(&done);
        let arr = |p: [(i64, i64); 2]| [[p[0].0, p[0].1], [p[1].0, p[1].1]];
        Ok(PinchOutput {
            center: [c.0, c.1],
            scale: args.scale,
            duration_ms: ms,
            from: arr(a),
            to: arr(b),
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
    fn fingers_spread_for_zoom_in_and_stay_on_the_display() {
        let (a, b) = fingers((540, 1200), (1080, 2400), 2.0).unwrap();
        assert_eq!(b, [(540 - 432, 1200), (540 + 432, 1200)]);
        assert_eq!(a, [(540 - 216, 1200), (540 + 216, 1200)]);
        let (a, b) = fingers((540, 1200), (1080, 2400), 0.5).unwrap();
        assert!(
            a[1].0 - a[0].0 > b[1].0 - b[0].0,
            "zoom out brings them together"
        );
        // Near the left edge the span shrinks to the room there; at the edge it is refused.
        let (_, b) = fingers((100, 1200), (1080, 2400), 1.5).unwrap();
        assert!(b[0].0 >= 0);
        assert_eq!(
            fingers((3, 1200), (1080, 2400), 5.0).unwrap_err().code(),
            crate::protocol::ErrorCode::InvalidArguments
        );
    }

    #[test]
    fn outputs_match_the_schema() {
        assert_output::<Pinch>(&PinchOutput {
            center: [540, 1200],
            scale: 2.0,
            duration_ms: 400,
            from: [[324, 1200], [756, 1200]],
            to: [[108, 1200], [972, 1200]],
            backend: Backend::Evdev,
            timing: Timing::default(),
        });
    }
}
