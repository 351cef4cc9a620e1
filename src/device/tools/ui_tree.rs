//! `android_ui_tree`: the on-screen accessibility tree ([`phone::tree`]) as a flat list of
//! meaningful elements with ids stable within the snapshot, which becomes the channel's latest
//! (the one `element_id`s of gestures refer to).
//!
//! [`phone::tree`]: super::phone::tree

use serde_json::{json, Value};

use super::phone::tree::{self, Output, TreeArgs};
use super::phone::ui::UI_TREE_DEADLINE;
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;

/// `android_ui_tree`.
pub struct UiTree;

impl DeviceTool for UiTree {
    const ID: &'static str = "android_ui_tree";
    const TITLE: &'static str = "Read the UI tree";
    const DESCRIPTION: &'static str = "Dump the on-screen accessibility tree (uiautomator) as a flat list of meaningful elements: element_id (stable within this snapshot_id; pass it to tap/long_press/double_tap/scroll), class, text, content_desc, resource_id, bounds [left, top, right, bottom] and center [x, y] in display px, clickable, focusable, focused, enabled. opaque_regions (when present) lists large areas the tree cannot see into (a web view exposing no content, a game or video surface): use android_screenshot and coordinates there. No side effects. Transient failures are retried (bounded); a persistent one fails with ui_dump_failed and its reason (not_idle, null_root, automation_busy, parse_error) rather than returning an empty screen.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    const BACKENDS: &'static [&'static str] = super::phone::ui_dump::UI_DUMP_BACKENDS;
    type Args = TreeArgs;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "properties": tree::args_properties()})
    }

    fn output_schema() -> Value {
        tree::output_schema()
    }

    fn deadline(_: &TreeArgs) -> std::time::Duration {
        UI_TREE_DEADLINE
    }

    async fn run(args: TreeArgs, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let id = crate::protocol::random_id("ui");
        Ok(tree::read(args, ctx, id).await?.output)
    }
}
