//! Point gestures: `android_tap`, `android_long_press`, `android_double_tap`. Targets resolve
//! through [`phone::target`](super::phone::target) (coordinates, screenshot space, element id,
//! selector); every point is checked against the display. They reach the phone through
//! [`phone::touch`](super::phone::touch): its touchscreen's input device where it can, else
//! `input` (argv quoted once; `input swipe X Y X Y MS` is the long press there, AOSP
//! `InputShellCommand.java`: a swipe with equal ends held for MS). Every result says which
//! (`backend`) and where the time went (`timing`).

use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};

use super::phone::display::DisplayGeometry;
use super::phone::display::{acting_geometry, check_on_display};
use super::phone::input::{duration_schema, gesture_deadline, INPUT_DEADLINE};
use super::phone::target::{
    resolve, target_args, target_properties, with_target_properties, Resolved, TargetSpec,
};
use super::phone::touch::{
    backend_schema, perform, timing_schema, Backend, Gesture, Stopwatch, Timing, DOUBLE_TAP_GAP_MS,
};
use super::{DeviceTool, LockRule, SideEffect, ToolCtx};
use crate::device::error::DeviceError;

/// Default long-press hold (ms): above ViewConfiguration's 400–500 ms long-press timeout.
pub const LONG_PRESS_MS: u64 = 800;

/// The card's help on targets, shared by the three descriptions.
macro_rules! target_help {
    () => {
        "Target: x and y (display px; or the pixel space of screenshot_id), or element_id from the last android_ui_tree, or a selector (text / resource_id / content_desc, exact match). Coordinates outside the display are refused with out_of_bounds naming the valid range. While the lock screen shows or the screen is off nothing is done: device_locked says how to unlock."
    };
}

target_args! {
    /// Arguments of tap and double tap: a target.
    pub struct TargetArgs {}
}

target_args! {
    /// Arguments of long press: a target and the hold.
    pub struct LongPressArgs {
        /// Hold, ms (default [`LONG_PRESS_MS`]).
        pub duration_ms: Option<u64>,
    }
}

/// A point, display px.
#[derive(Debug, Serialize, PartialEq)]
pub struct Point {
    /// X, px.
    pub x: i64,
    /// Y, px.
    pub y: i64,
}

/// Display size, px.
#[derive(Debug, Serialize)]
pub struct DisplaySize {
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
}

/// Result of a tap.
#[derive(Debug, Serialize)]
pub struct TapOutput {
    /// Where, display px.
    pub tapped: Point,
    /// The element used, if any.
    pub element_id: Option<String>,
    /// The display the point was checked against.
    pub display: DisplaySize,
    /// How the tap reached the phone.
    pub backend: Backend,
    /// Where the call's time went.
    pub timing: Timing,
}

/// Result of a long press.
#[derive(Debug, Serialize)]
pub struct LongPressOutput {
    /// Where, display px.
    pub pressed: Point,
    /// Hold, ms.
    pub duration_ms: u64,
    /// How the press reached the phone.
    pub backend: Backend,
    /// Where the call's time went.
    pub timing: Timing,
}

/// Result of a double tap.
#[derive(Debug, Serialize)]
pub struct DoubleTapOutput {
    /// Where, display px.
    pub double_tapped: Point,
    /// How the taps reached the phone.
    pub backend: Backend,
    /// Where the call's time went.
    pub timing: Timing,
}

fn point_schema() -> Value {
    json!({"type": "object", "required": ["x", "y"], "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}}})
}

/// The display size and the resolved, bounds-checked target. The geometry is read from the
/// phone for this call (never cached: a rotation or size change since the last call must not
/// map or check the point, field bug 25), with the phone's readiness: a lock screen or a dark
/// screen refuses the gesture with `device_locked` before anything lands (field bug 48).
async fn locate(
    target: TargetSpec<'_>,
    ctx: &ToolCtx<'_>,
    watch: &mut Stopwatch,
) -> Result<(DisplayGeometry, Resolved), DeviceError> {
    let now = watch.phone(acting_geometry(ctx)).await?;
    let at = watch.phone(resolve(target, ctx, &now)).await?;
    check_on_display(&now, &[(at.x, at.y)])?;
    Ok((now, at))
}

/// `android_tap`: one touch down and up at the point (evdev), else `input tap X Y`.
pub struct Tap;

impl DeviceTool for Tap {
    const ID: &'static str = "android_tap";
    const TITLE: &'static str = "Tap";
    const DESCRIPTION: &'static str = concat!("Tap once on the bound phone. ", target_help!());
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = super::phone::touch::GESTURE_BACKENDS;
    const RECEIPT: bool = true;
    const LOCK_RULE: LockRule = LockRule::Refused;
    type Args = TargetArgs;
    type Output = TapOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "properties": target_properties()})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["tapped", "element_id", "display", "backend", "timing"], "properties": {
            "tapped": point_schema(), "element_id": {"type": ["string", "null"]},
            "display": {"type": "object", "required": ["width", "height"], "properties": {
                "width": {"type": "integer"}, "height": {"type": "integer"}}},
            "backend": backend_schema(), "timing": timing_schema()
        }})
    }

    fn deadline(args: &TargetArgs) -> Duration {
        args.target().call_deadline(INPUT_DEADLINE)
    }

    async fn run(args: TargetArgs, ctx: &ToolCtx<'_>) -> Result<TapOutput, DeviceError> {
        let mut watch = Stopwatch::start();
        let (now, at) = locate(args.target(), ctx, &mut watch).await?;
        let done = perform(ctx, &now, Gesture::Tap((at.x, at.y))).await?;
        watch.add(&done);
        Ok(TapOutput {
            tapped: Point { x: at.x, y: at.y },
            element_id: at.element.map(|e| e.element_id),
            display: DisplaySize {
                width: now.size.0,
                height: now.size.1,
            },
            backend: done.backend,
            timing: watch.timing(),
        })
    }
}

/// `android_long_press`: a touch held in place for MS (evdev), else `input swipe X Y X Y MS`.
pub struct LongPress;

impl DeviceTool for LongPress {
    const ID: &'static str = "android_long_press";
    const TITLE: &'static str = "Long press";
    const DESCRIPTION: &'static str = concat!("Press and hold. ", target_help!());
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = super::phone::touch::GESTURE_BACKENDS;
    const RECEIPT: bool = true;
    const LOCK_RULE: LockRule = LockRule::Refused;
    type Args = LongPressArgs;
    type Output = LongPressOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "properties": with_target_properties(json!({"duration_ms": duration_schema(LONG_PRESS_MS, 10_000)}))})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["pressed", "duration_ms", "backend", "timing"], "properties": {
            "pressed": point_schema(), "duration_ms": {"type": "integer", "minimum": 1},
            "backend": backend_schema(), "timing": timing_schema()
        }})
    }

    fn deadline(args: &LongPressArgs) -> Duration {
        args.target()
            .call_deadline(gesture_deadline(args.duration_ms.unwrap_or(LONG_PRESS_MS)))
    }

    async fn run(args: LongPressArgs, ctx: &ToolCtx<'_>) -> Result<LongPressOutput, DeviceError> {
        let mut watch = Stopwatch::start();
        let (now, at) = locate(args.target(), ctx, &mut watch).await?;
        let ms = args.duration_ms.unwrap_or(LONG_PRESS_MS);
        let done = perform(ctx, &now, Gesture::Hold((at.x, at.y), ms)).await?;
        watch.add(&done);
        Ok(LongPressOutput {
            pressed: Point { x: at.x, y: at.y },
            duration_ms: ms,
            backend: done.backend,
            timing: watch.timing(),
        })
    }
}

/// `android_double_tap`: two taps [`DOUBLE_TAP_GAP_MS`] apart on the touchscreen (evdev), else
/// two `input tap` in one shell round trip (≈ the double-tap timeout of 300 ms apart at most).
pub struct DoubleTap;

impl DeviceTool for DoubleTap {
    const ID: &'static str = "android_double_tap";
    const TITLE: &'static str = "Double tap";
    const DESCRIPTION: &'static str = concat!("Tap twice quickly. ", target_help!());
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = super::phone::touch::GESTURE_BACKENDS;
    const RECEIPT: bool = true;
    const LOCK_RULE: LockRule = LockRule::Refused;
    type Args = TargetArgs;
    type Output = DoubleTapOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "properties": target_properties()})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["double_tapped", "backend", "timing"], "properties": {
            "double_tapped": point_schema(), "backend": backend_schema(), "timing": timing_schema()}})
    }

    fn deadline(args: &TargetArgs) -> Duration {
        args.target()
            .call_deadline(gesture_deadline(DOUBLE_TAP_GAP_MS))
    }

    async fn run(args: TargetArgs, ctx: &ToolCtx<'_>) -> Result<DoubleTapOutput, DeviceError> {
        let mut watch = Stopwatch::start();
        let (now, at) = locate(args.target(), ctx, &mut watch).await?;
        let done = perform(ctx, &now, Gesture::DoubleTap((at.x, at.y))).await?;
        watch.add(&done);
        Ok(DoubleTapOutput {
            double_tapped: Point { x: at.x, y: at.y },
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
        let p = || Point { x: 1, y: 2 };
        let t = Timing::default;
        let display = || DisplaySize {
            width: 1080,
            height: 2400,
        };
        for element_id in [None, Some("e1".to_string())] {
            assert_output::<Tap>(&TapOutput {
                tapped: p(),
                element_id,
                display: display(),
                backend: Backend::Evdev,
                timing: t(),
            });
        }
        assert_output::<LongPress>(&LongPressOutput {
            pressed: p(),
            duration_ms: 800,
            backend: Backend::CmdInput,
            timing: t(),
        });
        assert_output::<DoubleTap>(&DoubleTapOutput {
            double_tapped: p(),
            backend: Backend::Input,
            timing: t(),
        });
    }
}
