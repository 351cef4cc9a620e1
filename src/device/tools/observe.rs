//! `android_observe`: the UI tree ([`phone::tree`]), a screenshot ([`phone::capture`], the
//! arguments of `android_screenshot`) and the display geometry from one settled moment, under
//! one `observation_id`; with `since`, only what changed in the tree since that observation.
//!
//! The settle is the dump's own: `uiautomator dump` waits for the UI to be idle before it reads
//! the tree (AOSP `cmds/uiautomator/.../DumpCommand.java`: `waitForIdle(1000, 1000 * 10)`, one
//! second without accessibility events, ten at most). The capture runs inside that wait rather
//! than after the dump: it starts [`CAPTURE_AFTER`] into the dump (or at the dump's end when
//! that comes first), so an observation costs about one dump, not a dump plus a screenshot
//! (docs/performance.md). The window read made with the dump (at its start) and the one made
//! with the capture are compared: when display 0's focus or its size or rotation moved between
//! them, the moment was not settled and the observation is taken again, [`TAKES`] times at
//! most (`settled: false` when the last still moved).
//!
//! The `observation_id` is both the tree's `snapshot_id` (its `element_id`s resolve as a tree's
//! do, and it becomes the channel's latest snapshot) and the screenshot's `screenshot_id` (its
//! pixel coordinates map to the display): a gesture takes it wherever it takes either.
//!
//! [`phone::tree`]: super::phone::tree
//! [`phone::capture`]: super::phone::capture

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::capture::{self, DisplayId, Format};
use super::phone::display::Moment;
use super::phone::hints::UiDumpWay;
use super::phone::observation::{diff, Changes, Observation, OBSERVATIONS_KEPT};
use super::phone::tree::{self, TreeArgs};
use super::phone::ui_dump::UI_DUMP_BACKENDS;
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;

/// When the capture starts after the dump began: the dump's idle wait (AOSP `DumpCommand`'s
/// `waitForIdle(1000, …)`), so the frame is grabbed while the UI is idle, before the tree is
/// read out.
pub const CAPTURE_AFTER: Duration = Duration::from_millis(1000);
/// Observations taken at most when the screen keeps moving between tree and screenshot.
pub const TAKES: u32 = 3;
/// The call's deadline: every take's dump (at most `UI_TREE_DEADLINE` each, cut to this) and
/// capture.
pub const OBSERVE_DEADLINE: Duration = Duration::from_secs(60);

/// Arguments: the tree's, the screenshot's, and `since`.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// Most elements to list (default 300).
    pub max_nodes: Option<usize>,
    /// Also list elements with empty bounds.
    #[serde(default)]
    pub include_invisible: bool,
    /// Image format (default png).
    #[serde(default)]
    pub format: Format,
    /// Longer side at most this many px.
    pub max_dimension: Option<u32>,
    /// JPEG quality 1–100.
    pub quality: Option<u8>,
    /// Display to capture.
    pub display_id: Option<DisplayId>,
    /// An earlier `observation_id`: answer only what changed since.
    pub since: Option<String>,
}

/// The display at the observed moment.
#[derive(Debug, Serialize)]
pub struct ObservedDisplay {
    /// Input width, px.
    pub width: u32,
    /// Input height, px.
    pub height: u32,
    /// Quarter turns, `null` when the phone's dump names none.
    pub rotation: Option<u8>,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// Pass as `screenshot_id` (coordinates read off `screenshot`) or `snapshot_id` (with an
    /// `element_id`) to a gesture, or as `since` to a later observation.
    pub observation_id: String,
    /// Whether focus, size and rotation held between the tree and the screenshot.
    pub settled: bool,
    /// How many times the moment was taken (1 when it held the first time).
    pub takes: u32,
    /// The display's geometry at the moment.
    pub display: ObservedDisplay,
    /// The screenshot, as `android_screenshot` answers (its `screenshot_id` is the observation's).
    pub screenshot: capture::Output,
    /// The whole tree as `android_ui_tree` answers (its `snapshot_id` is the observation's);
    /// absent with `since`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<tree::Output>,
    /// The observation compared against (with `since`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// `true` when the listed elements are the same as at `since` (no `changes` then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unchanged: Option<bool>,
    /// What changed since `since`, by stable element key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changes: Option<Changes>,
    /// Meaningful elements on screen (with `since`; the tree says it otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element_count: Option<usize>,
}

/// Whether two window reads show the same moment: the same focused window and geometry.
fn same_moment(a: Option<&Moment>, b: &Moment) -> bool {
    a.is_none_or(|a| a.focus == b.focus && a.geometry == b.geometry)
}

/// One take: the dump, and the capture started inside its idle wait.
async fn take_once(
    args: &Args,
    ctx: &ToolCtx<'_>,
    id: &str,
) -> Result<(tree::TreeRead, capture::Taken), DeviceError> {
    let tree_args = TreeArgs {
        max_nodes: args.max_nodes,
        include_invisible: args.include_invisible,
    };
    let shot_args = capture::Args {
        format: args.format,
        max_dimension: args.max_dimension,
        quality: args.quality,
        display_id: args.display_id.clone(),
    };
    let (done, dumped) = tokio::sync::oneshot::channel::<()>();
    let tree = async {
        let read = tree::read(tree_args, ctx, id.to_string()).await;
        let _ = done.send(());
        read
    };
    let shot = async {
        tokio::select! {
            _ = tokio::time::sleep(CAPTURE_AFTER.min(ctx.deadline.left())) => {}
            _ = dumped => {}
        }
        capture::take(shot_args, ctx, id.to_string()).await
    };
    let (tree, shot) = tokio::join!(tree, shot);
    Ok((tree?, shot?))
}

/// `backend` of an observation: the tree's way and the screenshot's
/// ([`UI_DUMP_BACKENDS`] `+` [`capture::SCREENSHOT_BACKENDS`]).
pub const OBSERVE_BACKENDS: &[&str] = &[
    "uiautomator_tty+raw",
    "uiautomator_tty+png",
    "uiautomator_tty+jpeg_phone",
    "uiautomator_file+raw",
    "uiautomator_file+png",
    "uiautomator_file+jpeg_phone",
];

/// `android_observe`.
pub struct Observe;

impl DeviceTool for Observe {
    const ID: &'static str = "android_observe";
    const TITLE: &'static str = "Observe the screen";
    const DESCRIPTION: &'static str = "One settled observation of the bound phone: the UI tree (as android_ui_tree), a screenshot (as android_screenshot: format, max_dimension, quality, display_id) and the display geometry from the same moment, under one observation_id. Pass observation_id as screenshot_id (x/y read off the screenshot) or snapshot_id (with an element_id of the tree) to any gesture. With since: <an earlier observation_id> the tree is not repeated: changes {added, removed, changed} by stable element key (its ancestry path of resource-ids and class names), or unchanged: true. An unknown or expired since is stale_snapshot. No side effects.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    const BACKENDS: &'static [&'static str] = OBSERVE_BACKENDS;
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        let mut props = tree::args_properties();
        if let (Some(p), Value::Object(shot)) = (props.as_object_mut(), capture::args_properties())
        {
            p.extend(shot);
            p.insert(
                "since".into(),
                json!({"type": "string", "maxLength": 64, "description": "An earlier observation_id of this channel: return only the tree's changes since it (or unchanged: true)."}),
            );
        }
        json!({"type": "object", "properties": props})
    }

    fn output_schema() -> Value {
        let list = json!({"type": "array", "items": {"type": "object", "required": ["key", "element_id"]}});
        json!({"type": "object",
        "required": ["observation_id", "settled", "takes", "display", "screenshot"],
        "properties": {
            "observation_id": {"type": "string"},
            "settled": {"type": "boolean"},
            "takes": {"type": "integer", "minimum": 1},
            "display": {"type": "object", "required": ["width", "height", "rotation"], "properties": {
                "width": {"type": "integer"}, "height": {"type": "integer"},
                "rotation": {"type": ["integer", "null"], "minimum": 0, "maximum": 3}
            }},
            "screenshot": capture::output_schema(),
            "tree": tree::output_schema(),
            "since": {"type": "string"},
            "unchanged": {"const": true},
            "changes": {"type": "object", "required": ["added", "removed", "changed"], "properties": {
                "added": list, "removed": list, "changed": list
            }},
            "element_count": {"type": "integer", "minimum": 0}
        }})
    }

    fn deadline(_: &Args) -> Duration {
        OBSERVE_DEADLINE
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        // Refused before anything is read: the agent's `since` must still be kept.
        let before = match args.since.as_deref() {
            Some(id) => Some(ctx.last_seen.observations().get(id).ok_or_else(|| {
                DeviceError::UnknownObservation(format!(
                    "since names no observation this channel keeps (the last {OBSERVATIONS_KEPT} android_observe results are kept): call android_observe without since"
                ))
            })?),
            None => None,
        };
        let mut takes = 0;
        let (id, tree, shot, settled) = loop {
            takes += 1;
            let id = crate::protocol::random_id("obs");
            let (tree, shot) = take_once(&args, ctx, &id).await?;
            let settled = same_moment(tree.moment.as_ref(), &shot.moment);
            if settled || takes == TAKES || ctx.deadline.left().is_zero() {
                break (id, tree, shot, settled);
            }
            tracing::debug!(
                takes,
                "the screen moved between the tree and the screenshot; observing again"
            );
        };
        let elements: Vec<(String, Value)> = tree
            .keys
            .iter()
            .cloned()
            .zip(
                tree.output
                    .elements
                    .iter()
                    .map(|e| serde_json::to_value(e).unwrap_or(Value::Null)),
            )
            .collect();
        let changes = before.map(|b| diff(&b.elements, &elements));
        ctx.last_seen.observations().add(Observation {
            observation_id: id.clone(),
            elements,
        });
        // The tree's way and the screenshot's, in that order (their steps overlap).
        let tree_way = match ctx.hints.ui_dump() {
            UiDumpWay::File => UI_DUMP_BACKENDS[1],
            _ => UI_DUMP_BACKENDS[0],
        };
        if let Some(b) = OBSERVE_BACKENDS
            .iter()
            .find(|b| b.split_once('+') == Some((tree_way, shot.backend)))
        {
            crate::adb::meter::choose_backend(b);
        }
        let g = shot.moment.geometry;
        let mut out = Output {
            observation_id: id,
            settled,
            takes,
            display: ObservedDisplay {
                width: g.size.0,
                height: g.size.1,
                rotation: g.rotation,
            },
            screenshot: shot.output,
            tree: None,
            since: None,
            unchanged: None,
            changes: None,
            element_count: None,
        };
        match changes {
            None => out.tree = Some(tree.output),
            Some(c) => {
                out.since = args.since;
                out.element_count = Some(tree.output.element_count);
                if c.is_empty() {
                    out.unchanged = Some(true);
                } else {
                    out.changes = Some(c);
                }
            }
        }
        Ok(out)
    }
}
