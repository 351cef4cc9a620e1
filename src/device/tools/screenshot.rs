//! `android_screenshot`: one capture of the bound phone's screen ([`phone::capture`]), stored
//! as a file ref, whose `screenshot_id` lets gestures take coordinates in the image's pixel
//! space.
//!
//! [`phone::capture`]: super::phone::capture

use serde_json::{json, Value};

use super::phone::capture::{self, Args, Output};
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;

/// `android_screenshot`.
pub struct Screenshot;

impl DeviceTool for Screenshot {
    const ID: &'static str = "android_screenshot";
    const TITLE: &'static str = "Take a screenshot";
    const DESCRIPTION: &'static str = "Capture the bound phone's screen. Returns screenshot_id, a file_ref and relative download_url (never inline bytes), mime_type, width/height of the image (px), display width/height (px, input space) and scale (display px per image px), byte_size (bytes), expires_at (Unix ms), blank (all-black frame) and secure_window (the focused window forbids capture). Coordinates read off this image can be passed to gestures with its screenshot_id. No side effects.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    const BACKENDS: &'static [&'static str] = capture::SCREENSHOT_BACKENDS;
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "properties": capture::args_properties()})
    }

    fn output_schema() -> Value {
        capture::output_schema()
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let id = crate::protocol::random_id("shot");
        Ok(capture::take(args, ctx, id).await?.output)
    }
}
