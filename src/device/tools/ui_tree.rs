//! `android_ui_tree`: the on-screen accessibility tree (`uiautomator dump`, retried on transient
//! failures) as a flat list of meaningful elements with ids stable within the snapshot, which
//! becomes the channel's latest (the one `element_id`s of gestures refer to).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::command;
use super::phone::display::display_geometry;
use super::phone::ui::{dump_with_retries, meaningful, snapshot_of, TEXT_LIMIT};
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::parse::{power, uiautomator};

/// Deadline of the `dumpsys power` check behind an empty tree.
const POWER_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);
/// Default `max_nodes`.
const DEFAULT_MAX_NODES: usize = 300;

/// `android_ui_tree`.
pub struct UiTree;

/// Arguments.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// Most elements to return (default 300).
    pub max_nodes: Option<usize>,
    /// Also list elements with empty bounds.
    #[serde(default)]
    pub include_invisible: bool,
}

/// One element, token-lean: flags only when true, empty strings kept.
#[derive(Debug, Serialize)]
pub struct Element {
    /// `e<N>`, stable within the snapshot.
    pub element_id: String,
    /// Widget class.
    pub class: String,
    /// Visible text.
    pub text: String,
    /// `content-desc`.
    pub content_desc: String,
    /// `resource-id`.
    pub resource_id: String,
    /// `[left, top, right, bottom]`, display px.
    pub bounds: [i32; 4],
    /// `[x, y]`, display px.
    pub center: [i32; 2],
    /// Clickable.
    pub clickable: bool,
    /// Focusable.
    pub focusable: bool,
    /// Focused.
    pub focused: bool,
    /// Enabled.
    pub enabled: bool,
    /// `true` when scrollable (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scrollable: Option<bool>,
    /// Checked state of a checkable element (absent when not checkable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    /// `true` for password fields (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password: Option<bool>,
}

impl Element {
    fn of(n: &uiautomator::UiNode, id: &str) -> Element {
        let (cx, cy) = n.bounds.center();
        let b = n.bounds;
        Element {
            element_id: id.to_string(),
            class: n.class.clone(),
            text: n.text.clone(),
            content_desc: n.content_desc.clone(),
            resource_id: n.resource_id.clone(),
            bounds: [b.left, b.top, b.right, b.bottom],
            center: [cx, cy],
            clickable: n.clickable,
            focusable: n.focusable,
            focused: n.focused,
            enabled: n.enabled,
            scrollable: n.scrollable.then_some(true),
            checked: n.checkable.then_some(n.checked),
            password: n.password.then_some(true),
        }
    }
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// `ui_<hex>`.
    pub snapshot_id: String,
    /// Quarter turns (0–3).
    pub rotation: u32,
    /// Meaningful elements on screen (before `max_nodes`).
    pub element_count: usize,
    /// Whether `max_nodes` cut the list.
    pub truncated: bool,
    /// The elements.
    pub elements: Vec<Element>,
}

/// An empty tree while the screen is off is not a screen: fail with the reason instead.
async fn refuse_dark_screen(ctx: &ToolCtx<'_>) -> Result<(), DeviceError> {
    let out = command::run(ctx, "dumpsys power", POWER_DEADLINE, TEXT_LIMIT)
        .await?
        .stdout;
    if power::parse_screen_on(&out) == Some(false) {
        return Err(DeviceError::UiDumpFailed(
            "ui_dump_failed (reason: screen_off): the screen is off, so there is no UI to read; press the `wake` key first".into(),
        ));
    }
    Ok(())
}

impl DeviceTool for UiTree {
    const ID: &'static str = "android_ui_tree";
    const TITLE: &'static str = "Read the UI tree";
    const DESCRIPTION: &'static str = "Dump the on-screen accessibility tree (uiautomator) as a flat list of meaningful elements: element_id (stable within this snapshot_id; pass it to tap/long_press/double_tap/scroll), class, text, content_desc, resource_id, bounds [left, top, right, bottom] and center [x, y] in display px, clickable, focusable, focused, enabled. No side effects. Transient failures are retried (bounded); a persistent one fails with ui_dump_failed and its reason (not_idle, null_root, automation_busy, parse_error) rather than returning an empty screen.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "properties": {
            "max_nodes": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "Most elements to return (default 300)."},
            "include_invisible": {"type": "boolean", "description": "Also list elements with empty bounds (default false)."}
        }})
    }

    fn output_schema() -> Value {
        let pair = |n: u64| json!({"type": "array", "items": {"type": "integer"}, "minItems": n, "maxItems": n});
        let (string, boolean) = (json!({"type": "string"}), json!({"type": "boolean"}));
        json!({"type": "object", "required": ["snapshot_id", "rotation", "element_count", "truncated", "elements"], "properties": {
            "snapshot_id": string, "rotation": {"type": "integer", "minimum": 0, "maximum": 3},
            "element_count": {"type": "integer", "minimum": 0}, "truncated": boolean,
            "elements": {"type": "array", "items": {"type": "object",
                "required": ["element_id", "class", "text", "content_desc", "resource_id", "bounds", "center", "clickable", "focusable", "focused", "enabled"],
                "properties": {
                    "element_id": string, "class": string, "text": string, "content_desc": string, "resource_id": string,
                    "bounds": pair(4), "center": pair(2),
                    "clickable": boolean, "focusable": boolean, "focused": boolean, "enabled": boolean,
                    "scrollable": {"const": true}, "checked": boolean, "password": {"const": true}
                }}}
        }})
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let max_nodes = args.max_nodes.unwrap_or(DEFAULT_MAX_NODES);
        let include_invisible = args.include_invisible;
        // The geometry is read alongside the dump (no round trip in series): an element_id of
        // this snapshot is refused after a rotation or size change (field bug 25). A failed
        // read leaves the snapshot unchecked rather than failing the tree — except a window
        // service that is not up: the phone is booting, and so is its UI (field bug 49).
        let (geometry, dump) = tokio::join!(display_geometry(ctx), dump_with_retries(ctx));
        if let Err(e @ DeviceError::ServiceMissing { .. }) = geometry {
            return Err(e);
        }
        let dump = dump?;
        if !dump.nodes.iter().any(|n| meaningful(n, include_invisible)) {
            refuse_dark_screen(ctx).await?;
        }
        let mut snap = snapshot_of(&dump, include_invisible);
        snap.frame = geometry.ok();
        let nodes: Vec<&uiautomator::UiNode> = dump
            .nodes
            .iter()
            .filter(|n| meaningful(n, include_invisible))
            .collect();
        let total = nodes.len();
        let elements: Vec<Element> = nodes
            .iter()
            .zip(&snap.elements)
            .take(max_nodes)
            .map(|(n, e)| Element::of(n, &e.element_id))
            .collect();
        let out = Output {
            snapshot_id: snap.snapshot_id.clone(),
            rotation: dump.rotation,
            element_count: total,
            truncated: total > elements.len(),
            elements,
        };
        ctx.last_seen.set_ui(snap);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn outputs_match_the_schema() {
        let xml = r#"<hierarchy rotation="1"><node index="0" text="OK" resource-id="a:id/ok" class="android.widget.Button" package="a" content-desc="" checkable="true" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="true" long-clickable="false" password="true" selected="false" bounds="[0,0][100,50]"/></hierarchy>"#;
        let dump = uiautomator::parse_uiautomator_dump(xml).unwrap();
        let snap = snapshot_of(&dump, false);
        let el = Element::of(&dump.nodes[0], &snap.elements[0].element_id);
        assert_eq!(
            (el.scrollable, el.checked, el.password),
            (Some(true), Some(false), Some(true))
        );
        let out = Output {
            snapshot_id: snap.snapshot_id,
            rotation: dump.rotation,
            element_count: 1,
            truncated: false,
            elements: vec![el],
        };
        assert_output::<UiTree>(&out);
    }
}
