//! The UI tree as the agent reads it, the operation behind `android_ui_tree` and
//! `android_observe`: `uiautomator dump` (retried on transient failures, [`super::ui`]) as a
//! flat list of meaningful elements with ids stable within the snapshot, which becomes the
//! channel's latest (the one `element_id`s of gestures refer to); the display's geometry and
//! focus read alongside it; the regions the tree does not see into.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::command;
use super::display::{read_moment, Moment};
use super::last_seen::UiSnapshot;
use super::observation::element_keys;
use super::opaque;
use super::ui::{dump_with_retries, meaningful, snapshot_of, TEXT_LIMIT};
use crate::device::error::DeviceError;
use crate::device::parse::{power, uiautomator};
use crate::device::tools::ToolCtx;

/// Deadline of the `dumpsys power` check behind an empty tree.
const POWER_DEADLINE: std::time::Duration = std::time::Duration::from_secs(10);
/// Default `max_nodes`.
pub const DEFAULT_MAX_NODES: usize = 300;

/// What to read.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct TreeArgs {
    /// Most elements to return (default 300).
    pub max_nodes: Option<usize>,
    /// Also list elements with empty bounds.
    #[serde(default)]
    pub include_invisible: bool,
}

/// The properties of [`TreeArgs`] in a tool's input schema.
pub fn args_properties() -> Value {
    json!({
        "max_nodes": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "Most elements to return (default 300)."},
        "include_invisible": {"type": "boolean", "description": "Also list elements with empty bounds (default false)."}
    })
}

/// One element, token-lean: flags only when true, empty strings kept.
#[derive(Debug, Clone, Serialize)]
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
    /// The element of node `n` under id `id`.
    pub fn of(n: &uiautomator::UiNode, id: &str) -> Element {
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
    /// Large regions the tree does not see into (a web view whose page exposes nothing, a
    /// surface): where, and to use a screenshot and coordinates there (field bug 43). Absent
    /// when there is none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub opaque_regions: Vec<Opaque>,
}

/// A region of the screen the tree does not describe.
#[derive(Debug, Serialize)]
pub struct Opaque {
    /// `web_view` or `surface`.
    pub kind: &'static str,
    /// The view's class.
    pub class: String,
    /// `[left, top, right, bottom]`, display px.
    pub bounds: [i32; 4],
    /// The element of the view itself in `elements`, when it is listed.
    pub element_id: Option<String>,
    /// How many described elements lie inside it.
    pub described_descendants: usize,
    /// What it is and what to do there (screenshot, coordinates).
    pub hint: String,
}

impl Opaque {
    fn of(r: opaque::OpaqueRegion, snap: &UiSnapshot) -> Opaque {
        let b = r.bounds;
        Opaque {
            kind: r.kind.as_str(),
            element_id: snap
                .elements
                .iter()
                .find(|e| e.bounds == b && e.class == r.class)
                .map(|e| e.element_id.clone()),
            class: r.class,
            bounds: [b.left, b.top, b.right, b.bottom],
            described_descendants: r.described_descendants,
            hint: r.hint,
        }
    }
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

/// The schema of [`Output`] (`android_ui_tree`'s result; `android_observe`'s `tree`).
pub fn output_schema() -> Value {
    let pair = |n: u64| json!({"type": "array", "items": {"type": "integer"}, "minItems": n, "maxItems": n});
    let (string, boolean) = (json!({"type": "string"}), json!({"type": "boolean"}));
    json!({"type": "object", "required": ["snapshot_id", "rotation", "element_count", "truncated", "elements"], "properties": {
        "snapshot_id": string, "rotation": {"type": "integer", "minimum": 0, "maximum": 3},
        "element_count": {"type": "integer", "minimum": 0}, "truncated": boolean,
        "opaque_regions": {"type": "array", "items": {"type": "object",
            "required": ["kind", "class", "bounds", "element_id", "described_descendants", "hint"],
            "properties": {
                "kind": {"type": "string", "enum": ["web_view", "surface"]}, "class": string,
                "bounds": pair(4), "element_id": {"type": ["string", "null"]},
                "described_descendants": {"type": "integer", "minimum": 0}, "hint": string
            }}},
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

/// A tree read: the result, each listed element's stable key ([`element_keys`], aligned with
/// `output.elements`), and the window read made alongside the dump (`None` when it failed: the
/// snapshot is then unchecked against the display).
pub struct TreeRead {
    /// The result as `android_ui_tree` answers it.
    pub output: Output,
    /// Stable keys of `output.elements`, in the same order.
    pub keys: Vec<String>,
    /// Geometry and focus read with the dump.
    pub moment: Option<Moment>,
}

/// Reads the tree (the whole of `android_ui_tree`) under `snapshot_id`, which becomes the
/// channel's latest snapshot. Errors as documented for `android_ui_tree` in `docs/tools.md`.
pub async fn read(
    args: TreeArgs,
    ctx: &ToolCtx<'_>,
    snapshot_id: String,
) -> Result<TreeRead, DeviceError> {
    let max_nodes = args.max_nodes.unwrap_or(DEFAULT_MAX_NODES);
    let include_invisible = args.include_invisible;
    // The geometry is read alongside the dump (no round trip in series): an element_id of
    // this snapshot is refused after a rotation or size change (field bug 25). A failed
    // read leaves the snapshot unchecked rather than failing the tree — except a window
    // service that is not up: the phone is booting, and so is its UI (field bug 49).
    let (moment, dump) = tokio::join!(read_moment(ctx), dump_with_retries(ctx));
    if let Err(e @ DeviceError::ServiceMissing { .. }) = moment {
        return Err(e);
    }
    let dump = dump?;
    if !dump.nodes.iter().any(|n| meaningful(n, include_invisible)) {
        refuse_dark_screen(ctx).await?;
    }
    let mut snap = snapshot_of(&dump, include_invisible);
    let moment = moment.ok();
    snap.snapshot_id = snapshot_id;
    snap.frame = moment.as_ref().map(|m| m.geometry);
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
    let opaque_regions = opaque::opaque_regions(&dump)
        .into_iter()
        .map(|r| Opaque::of(r, &snap))
        .collect();
    let out = Output {
        snapshot_id: snap.snapshot_id.clone(),
        rotation: dump.rotation,
        element_count: total,
        truncated: total > elements.len(),
        elements,
        opaque_regions,
    };
    let keys = element_keys(&dump, include_invisible)
        .into_iter()
        .take(out.elements.len())
        .collect();
    ctx.last_seen.set_ui(snap);
    Ok(TreeRead {
        output: out,
        keys,
        moment,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
            opaque_regions: vec![Opaque {
                kind: "web_view",
                class: "android.webkit.WebView".into(),
                bounds: [0, 0, 100, 50],
                element_id: None,
                described_descendants: 0,
                hint: "take android_screenshot".into(),
            }],
        };
        let v = serde_json::to_value(&out).unwrap();
        let validator = jsonschema::validator_for(&output_schema()).unwrap();
        assert!(validator.is_valid(&v), "{v}");
    }
}
