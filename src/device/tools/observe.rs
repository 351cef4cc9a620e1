//! Observation tools: `android_device_status`, `android_screenshot`, `android_ui_tree`.

use std::time::Duration;

use serde_json::{json, Value};

use super::memory::{SnapshotElement, UiSnapshot};
use super::{ToolCtx, ToolError};
use crate::device::parse::{battery, getprop, power, text, uiautomator, window, wm};
use crate::protocol::card::ToolDecl;
use crate::protocol::ErrorCode;

/// Deadline of `android_device_status` (one compound shell command).
pub const STATUS_DEADLINE: Duration = Duration::from_secs(10);
/// Deadline of `android_ui_tree` (`uiautomator dump` can take seconds on busy screens).
pub const UI_TREE_DEADLINE: Duration = Duration::from_secs(20);
/// Cap of text output of observation commands (bytes).
pub const TEXT_LIMIT: usize = 8 * 1024 * 1024;

/// Separator line between the parts of the compound status command.
const SEP: &str = "__XAGENT_SECTION__";

/// One shell round trip: getprop, battery, wm size, power, window focus.
pub async fn device_status(ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let cmd = format!(
        "getprop; echo {SEP}; dumpsys battery; echo {SEP}; wm size; echo {SEP}; dumpsys power; echo {SEP}; dumpsys window"
    );
    let out = ctx.link.shell(&cmd, STATUS_DEADLINE, TEXT_LIMIT).await?;
    let text = text::decode_output(&out.stdout);
    let parts: Vec<&str> = text.split(&format!("{SEP}\n")).collect();
    let part = |i: usize| parts.get(i).copied().unwrap_or("");
    let props = getprop::parse_getprop(part(0));
    let prop = |k: &str| props.get(k).cloned().unwrap_or_default();
    let battery = battery::parse_dumpsys_battery(part(1));
    let size = wm::parse_wm_size(part(2));
    // The input space: `cur=` (override and rotation applied), else wm's effective size.
    let effective = window::parse_current_display_size(part(4))
        .or_else(|| size.as_ref().and_then(|s| s.effective()));
    if let Some(s) = effective {
        ctx.display.set(s);
    }
    let focus = window::parse_current_focus(part(4));
    Ok(json!({
        "model": prop("ro.product.model"),
        "manufacturer": prop("ro.product.manufacturer"),
        "android_release": prop("ro.build.version.release"),
        "sdk": prop("ro.build.version.sdk").parse::<u32>().ok(),
        "battery_percent": battery.as_ref().and_then(|b| b.percent),
        "screen_on": power::parse_screen_on(part(3)),
        "display": {
            "width": effective.map(|s| s.0),
            "height": effective.map(|s| s.1),
            "physical": size.as_ref().and_then(|s| s.physical).map(|(w, h)| json!({"width": w, "height": h})),
            "override": size.as_ref().and_then(|s| s.override_size).map(|(w, h)| json!({"width": w, "height": h})),
        },
        "foreground_package": focus.and_then(|f| f.package),
    }))
}

/// Default `max_nodes`.
const DEFAULT_MAX_NODES: usize = 300;
/// Attempts of `uiautomator dump` for transient failures (not idle, null root, busy).
pub const UI_DUMP_ATTEMPTS: u32 = 4;
/// Pause between attempts (ms): lets an animation settle.
pub const UI_DUMP_BACKOFF: Duration = Duration::from_millis(250);

/// The typed reason of a failed dump (field bugs 9, 10).
fn dump_reason(e: &uiautomator::UiDumpError) -> &'static str {
    match e {
        uiautomator::UiDumpError::NotIdle => "not_idle",
        uiautomator::UiDumpError::NullRoot => "null_root",
        uiautomator::UiDumpError::AutomationBusy => "automation_busy",
        _ => "parse_error",
    }
}

/// Dumps the UI with bounded, time-boxed retries (never an empty tree reported as a screen).
pub(super) async fn dump_with_retries(ctx: &ToolCtx<'_>) -> Result<uiautomator::UiDump, ToolError> {
    let started = std::time::Instant::now();
    let mut last = None;
    for attempt in 1..=UI_DUMP_ATTEMPTS {
        let left = UI_TREE_DEADLINE.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        let out = ctx
            .link
            .shell("uiautomator dump /dev/tty", left, TEXT_LIMIT)
            .await?;
        let output = text::decode_output(&out.stdout);
        match uiautomator::parse_uiautomator_dump(&output) {
            Ok(dump) => return Ok(dump),
            Err(e) => {
                tracing::debug!(attempt, reason = dump_reason(&e), "uiautomator dump failed");
                last = Some(e);
            }
        }
        if attempt < UI_DUMP_ATTEMPTS {
            tokio::time::sleep(UI_DUMP_BACKOFF).await;
        }
    }
    let reason = last.as_ref().map(dump_reason).unwrap_or("timeout");
    Err(ToolError::new(
        ErrorCode::UiDumpFailed,
        format!(
            "ui_dump_failed (reason: {reason}) after {UI_DUMP_ATTEMPTS} attempts: {}; wait for the screen to settle or use android_screenshot",
            last.map(|e| e.to_string()).unwrap_or_default()
        ),
    ))
}

fn meaningful(n: &uiautomator::UiNode, include_invisible: bool) -> bool {
    let visible = n.bounds.right > n.bounds.left && n.bounds.bottom > n.bounds.top;
    (visible || include_invisible)
        && (!n.text.is_empty()
            || !n.content_desc.is_empty()
            || !n.resource_id.is_empty()
            || n.clickable
            || n.focusable
            || n.scrollable
            || n.long_clickable)
}

/// Dumps the UI and builds a snapshot of its meaningful elements; `remember` stores it as the
/// channel's latest (the one `element_id`s refer to).
pub async fn take_snapshot(ctx: &ToolCtx<'_>, remember: bool) -> Result<UiSnapshot, ToolError> {
    let dump = dump_with_retries(ctx).await?;
    let snap = snapshot_of(&dump, false);
    if remember {
        ctx.memory.set_ui(snap.clone());
    }
    Ok(snap)
}

fn snapshot_of(dump: &uiautomator::UiDump, include_invisible: bool) -> UiSnapshot {
    UiSnapshot {
        snapshot_id: crate::protocol::random_id("ui"),
        elements: dump
            .nodes
            .iter()
            .filter(|n| meaningful(n, include_invisible))
            .enumerate()
            .map(|(i, n)| SnapshotElement {
                element_id: format!("e{i}"),
                bounds: n.bounds,
                text: n.text.clone(),
                resource_id: n.resource_id.clone(),
                content_desc: n.content_desc.clone(),
                class: n.class.clone(),
            })
            .collect(),
    }
}

/// An empty tree while the screen is off is not a screen: fail with the reason instead.
async fn refuse_dark_screen(ctx: &ToolCtx<'_>) -> Result<(), ToolError> {
    let out = ctx
        .link
        .shell("dumpsys power", STATUS_DEADLINE, TEXT_LIMIT)
        .await?;
    if power::parse_screen_on(&text::decode_output(&out.stdout)) == Some(false) {
        return Err(ToolError::new(
            ErrorCode::UiDumpFailed,
            "ui_dump_failed (reason: screen_off): the screen is off, so there is no UI to read; press the `wake` key first",
        ));
    }
    Ok(())
}

/// `android_ui_tree`: compact list of meaningful elements with stable ids for this snapshot.
pub async fn ui_tree(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let max_nodes = args
        .get("max_nodes")
        .and_then(Value::as_u64)
        .map(|n| n as usize)
        .unwrap_or(DEFAULT_MAX_NODES);
    let include_invisible = args
        .get("include_invisible")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let dump = dump_with_retries(ctx).await?;
    if !dump.nodes.iter().any(|n| meaningful(n, include_invisible)) {
        refuse_dark_screen(ctx).await?;
    }
    let snap = snapshot_of(&dump, include_invisible);
    let nodes: Vec<&uiautomator::UiNode> = dump
        .nodes
        .iter()
        .filter(|n| meaningful(n, include_invisible))
        .collect();
    let total = nodes.len();
    let elements: Vec<Value> = nodes
        .iter()
        .zip(&snap.elements)
        .take(max_nodes)
        .map(|(n, e)| element_json(n, &e.element_id))
        .collect();
    let out = json!({
        "snapshot_id": snap.snapshot_id,
        "rotation": dump.rotation,
        "element_count": total,
        "truncated": total > elements.len(),
        "elements": elements,
    });
    ctx.memory.set_ui(snap);
    Ok(out)
}

/// One element, token-lean: flags only when true, empty strings omitted.
fn element_json(n: &uiautomator::UiNode, id: &str) -> Value {
    let (cx, cy) = n.bounds.center();
    let mut e = json!({
        "element_id": id,
        "class": n.class,
        "text": n.text,
        "content_desc": n.content_desc,
        "resource_id": n.resource_id,
        "bounds": [n.bounds.left, n.bounds.top, n.bounds.right, n.bounds.bottom],
        "center": [cx, cy],
        "clickable": n.clickable,
        "focusable": n.focusable,
        "focused": n.focused,
        "enabled": n.enabled,
    });
    if n.scrollable {
        e["scrollable"] = json!(true);
    }
    if n.checkable {
        e["checked"] = json!(n.checked);
    }
    if n.password {
        e["password"] = json!(true);
    }
    e
}

/// Card declarations of the observation tools.
pub fn decls() -> Vec<ToolDecl> {
    vec![
        ToolDecl {
            tool_id: "android_device_status",
            title: "Android device status",
            description: "Read the bound phone's model, manufacturer, Android release and SDK, battery percent, whether the screen is on, display size (px) and the foreground app package. No side effects.",
            side_effect: false,
            input_schema: json!({"type": "object", "properties": {}}),
            output_schema: json!({"type": "object", "properties": {
                "model": {"type": "string"}, "manufacturer": {"type": "string"},
                "android_release": {"type": "string"}, "sdk": {"type": ["integer", "null"]},
                "battery_percent": {"type": ["integer", "null"]}, "screen_on": {"type": ["boolean", "null"]},
                "display": {"type": "object"}, "foreground_package": {"type": ["string", "null"]}
            }}),
        },
        super::screenshot::decl(),
        ToolDecl {
            tool_id: "android_ui_tree",
            title: "Read the UI tree",
            description: "Dump the on-screen accessibility tree (uiautomator) as a flat list of meaningful elements: element_id (stable within this snapshot_id; pass it to tap/long_press/double_tap/scroll), class, text, content_desc, resource_id, bounds [left, top, right, bottom] and center [x, y] in display px, clickable, focusable, focused, enabled. No side effects. Transient failures are retried (bounded); a persistent one fails with ui_dump_failed and its reason (not_idle, null_root, automation_busy, parse_error) rather than returning an empty screen.",
            side_effect: false,
            input_schema: json!({"type": "object", "properties": {
                "max_nodes": {"type": "integer", "minimum": 1, "maximum": 2000, "description": "Most elements to return (default 300)."},
                "include_invisible": {"type": "boolean", "description": "Also list elements with empty bounds (default false)."}
            }}),
            output_schema: json!({"type": "object", "required": ["elements"]}),
        },
    ]
}
