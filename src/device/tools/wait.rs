//! `android_wait_for`: polls the UI until an element matching a selector appears or disappears,
//! or until two consecutive snapshots are equal (the screen is stable), within a timeout.
//! Replaces guessed sleeps (peers.md §E gap 5). Observation only.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::memory::{SnapshotElement, UiSnapshot};
use super::{ToolCtx, ToolError};
use crate::protocol::card::ToolDecl;

/// Default timeout (ms).
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// Default pause between polls (ms).
pub const DEFAULT_INTERVAL_MS: u64 = 500;

fn matches(e: &SnapshotElement, args: &Value) -> bool {
    let want = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    want("text").is_none_or(|t| e.text == t)
        && want("resource_id").is_none_or(|r| e.resource_id == r)
        && want("content_desc").is_none_or(|d| e.content_desc == d)
}

fn same_screen(a: &UiSnapshot, b: &UiSnapshot) -> bool {
    a.elements.len() == b.elements.len()
        && a.elements.iter().zip(&b.elements).all(|(x, y)| {
            x.bounds == y.bounds
                && x.text == y.text
                && x.resource_id == y.resource_id
                && x.class == y.class
        })
}

/// The tool.
pub async fn wait_for(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let condition = args
        .get("condition")
        .and_then(Value::as_str)
        .unwrap_or("appears");
    let timeout = Duration::from_millis(
        args.get("timeout_ms")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_TIMEOUT_MS),
    );
    let interval = Duration::from_millis(
        args.get("interval_ms")
            .and_then(Value::as_u64)
            .unwrap_or(DEFAULT_INTERVAL_MS),
    );
    let started = Instant::now();
    let mut previous: Option<UiSnapshot> = None;
    let mut polls = 0u32;
    loop {
        polls += 1;
        let snap = super::observe::take_snapshot(ctx, false).await?;
        let found = snap.elements.iter().find(|e| matches(e, args)).cloned();
        let done = match condition {
            "disappears" => found.is_none(),
            "stable" => previous.as_ref().is_some_and(|p| same_screen(p, &snap)),
            _ => found.is_some(),
        };
        if done || started.elapsed() + interval > timeout {
            let elapsed_ms = started.elapsed().as_millis() as u64;
            return Ok(json!({
                "condition": condition,
                "satisfied": done,
                "elapsed_ms": elapsed_ms,
                "polls": polls,
                "element": found.map(|e| {
                    let (cx, cy) = e.bounds.center();
                    json!({"text": e.text, "resource_id": e.resource_id, "content_desc": e.content_desc,
                           "bounds": [e.bounds.left, e.bounds.top, e.bounds.right, e.bounds.bottom], "center": [cx, cy]})
                }),
                "element_count": snap.elements.len(),
            }));
        }
        previous = Some(snap);
        tokio::time::sleep(interval).await;
    }
}

/// Card declaration.
pub fn decl() -> ToolDecl {
    ToolDecl {
        tool_id: "android_wait_for",
        title: "Wait for the screen",
        description: "Wait (instead of sleeping) until an element matching the selector appears, or disappears, or until the screen is stable (two consecutive UI snapshots equal), polling every interval_ms up to timeout_ms. Returns satisfied (false on timeout), elapsed_ms, polls and the matching element (bounds/center in display px). No side effects.",
        side_effect: false,
        input_schema: json!({"type": "object", "required": ["condition"], "properties": {
            "condition": {"type": "string", "enum": ["appears", "disappears", "stable"]},
            "text": {"type": "string", "maxLength": 500, "description": "Selector: exact visible text."},
            "resource_id": {"type": "string", "maxLength": 300, "description": "Selector: exact resource-id."},
            "content_desc": {"type": "string", "maxLength": 500, "description": "Selector: exact content description."},
            "timeout_ms": {"type": "integer", "minimum": 100, "maximum": 60000, "description": "Give up after this many ms (default 10000)."},
            "interval_ms": {"type": "integer", "minimum": 100, "maximum": 10000, "description": "Pause between polls in ms (default 500)."}
        }}),
        output_schema: json!({"type": "object", "required": ["satisfied", "elapsed_ms"]}),
    }
}
