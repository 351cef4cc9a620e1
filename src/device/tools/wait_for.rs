//! `android_wait_for`: polls the UI until an element matching a selector appears or disappears,
//! or until two consecutive snapshots are equal (the screen is stable), within a timeout.
//! Replaces guessed sleeps (peers.md §E gap 5). Observation only.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::last_seen::{SnapshotElement, UiSnapshot};
use super::phone::selector::Selector;
use super::phone::ui::take_snapshot;
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;

/// Default timeout (ms).
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// Default pause between polls (ms).
pub const DEFAULT_INTERVAL_MS: u64 = 500;
/// The least a wait allows its last poll beyond `timeout_ms`: one UI dump of a real phone
/// (1.5 s on a Pixel 8, 3 s on Android 6: `docs/sim.md`, timing model).
pub const LAST_POLL_ALLOWANCE: Duration = Duration::from_secs(3);

/// The wait's timeout and the allowance of its last poll (its interval, at least
/// [`LAST_POLL_ALLOWANCE`]) from the arguments.
fn timings(args: &Args) -> (Duration, Duration) {
    let timeout = Duration::from_millis(args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS));
    let interval = Duration::from_millis(args.interval_ms.unwrap_or(DEFAULT_INTERVAL_MS));
    (timeout, interval)
}

/// What ends the wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// An element matches the selector.
    Appears,
    /// No element matches the selector.
    Disappears,
    /// Two consecutive snapshots are equal.
    Stable,
}

/// Arguments.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// What ends the wait.
    pub condition: Condition,
    /// Selector: exact visible text.
    pub text: Option<String>,
    /// Selector: exact resource-id.
    pub resource_id: Option<String>,
    /// Selector: exact content description.
    pub content_desc: Option<String>,
    /// Give up after this many ms.
    pub timeout_ms: Option<u64>,
    /// Pause between polls, ms.
    pub interval_ms: Option<u64>,
}

impl Args {
    /// The selector `appears` / `disappears` wait for (required: an empty one would match the
    /// root element); `stable` takes none (an optional one only picks the reported element).
    fn selector(&self) -> Result<Option<Selector<'_>>, DeviceError> {
        let fields = (
            self.text.as_deref(),
            self.resource_id.as_deref(),
            self.content_desc.as_deref(),
        );
        match self.condition {
            Condition::Stable => Ok(Selector::from_fields(fields.0, fields.1, fields.2)),
            Condition::Appears => {
                Selector::required(fields.0, fields.1, fields.2, "condition `appears`").map(Some)
            }
            Condition::Disappears => {
                Selector::required(fields.0, fields.1, fields.2, "condition `disappears`").map(Some)
            }
        }
    }
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

/// The matching element (display px).
#[derive(Debug, Serialize)]
pub struct Found {
    /// Visible text.
    pub text: String,
    /// `resource-id`.
    pub resource_id: String,
    /// `content-desc`.
    pub content_desc: String,
    /// `[left, top, right, bottom]`.
    pub bounds: [i32; 4],
    /// `[x, y]`.
    pub center: [i32; 2],
}

impl From<SnapshotElement> for Found {
    fn from(e: SnapshotElement) -> Self {
        let (cx, cy) = e.bounds.center();
        let b = e.bounds;
        Found {
            text: e.text,
            resource_id: e.resource_id,
            content_desc: e.content_desc,
            bounds: [b.left, b.top, b.right, b.bottom],
            center: [cx, cy],
        }
    }
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// As asked.
    pub condition: Condition,
    /// `false` on timeout.
    pub satisfied: bool,
    /// Time waited, ms.
    pub elapsed_ms: u64,
    /// UI reads.
    pub polls: u32,
    /// The matching element of the last read, if any.
    pub element: Option<Found>,
    /// Elements of the last read.
    pub element_count: usize,
}

/// The answer of a wait whose time ran out with `seen` the last screen read.
fn timed_out(
    args: &Args,
    selector: Option<Selector<'_>>,
    seen: UiSnapshot,
    started: Instant,
    polls: u32,
) -> Output {
    let element = selector
        .and_then(|s| s.find(&seen.elements).ok().flatten().cloned())
        .map(Found::from);
    Output {
        condition: args.condition,
        // Had the previous poll satisfied the condition, the wait would have ended there.
        satisfied: false,
        elapsed_ms: started.elapsed().as_millis() as u64,
        polls: polls.max(1),
        element,
        element_count: seen.elements.len(),
    }
}

/// `android_wait_for`.
pub struct WaitFor;

impl DeviceTool for WaitFor {
    const ID: &'static str = "android_wait_for";
    const TITLE: &'static str = "Wait for the screen";
    const DESCRIPTION: &'static str = "Wait (instead of sleeping) until an element matching the selector appears, or disappears, or until the screen is stable (two consecutive UI snapshots equal), polling every interval_ms up to timeout_ms. Returns satisfied (false on timeout), elapsed_ms, polls and the matching element (bounds/center in display px). No side effects.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    const BACKENDS: &'static [&'static str] = super::phone::ui_dump::UI_DUMP_BACKENDS;
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["condition"], "properties": {
            "condition": {"type": "string", "enum": ["appears", "disappears", "stable"]},
            "text": {"type": "string", "maxLength": 500, "description": "Selector: exact visible text."},
            "resource_id": {"type": "string", "maxLength": 300, "description": "Selector: exact resource-id."},
            "content_desc": {"type": "string", "maxLength": 500, "description": "Selector: exact content description."},
            "timeout_ms": {"type": "integer", "minimum": 100, "maximum": 60000, "description": "Give up after this many ms (default 10000)."},
            "interval_ms": {"type": "integer", "minimum": 100, "maximum": 10000, "description": "Pause between polls in ms (default 500)."}
        }})
    }

    fn output_schema() -> Value {
        let (string, int) = (json!({"type": "string"}), json!({"type": "integer"}));
        let list = |n: u64| json!({"type": "array", "items": int, "minItems": n, "maxItems": n});
        json!({"type": "object", "required": ["condition", "satisfied", "elapsed_ms", "polls", "element", "element_count"], "properties": {
            "condition": {"type": "string", "enum": ["appears", "disappears", "stable"]},
            "satisfied": {"type": "boolean"}, "elapsed_ms": {"type": "integer", "minimum": 0},
            "polls": {"type": "integer", "minimum": 1}, "element_count": {"type": "integer", "minimum": 0},
            "element": {"type": ["object", "null"], "required": ["text", "resource_id", "content_desc", "bounds", "center"], "properties": {
                "text": string, "resource_id": string, "content_desc": string, "bounds": list(4), "center": list(2)
            }}
        }})
    }

    /// `timeout_ms` plus one poll (L4: a hung dump made a 1 s wait take 20 s): every dump is
    /// cut to it, so the wait ends by then whatever the phone does.
    fn deadline(args: &Args) -> Duration {
        let (timeout, interval) = timings(args);
        timeout + interval.max(LAST_POLL_ALLOWANCE)
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let (timeout, interval) = timings(&args);
        let selector = args.selector()?;
        let started = Instant::now();
        let mut previous: Option<UiSnapshot> = None;
        let mut polls = 0u32;
        loop {
            polls += 1;
            let snap = match take_snapshot(ctx, None).await {
                Ok(snap) => snap,
                // The last poll ran out of the wait's time: the wait timed out on what the
                // previous poll saw (the first poll's failure is the answer itself).
                Err(e @ DeviceError::DeadlineSpent { .. }) => match previous {
                    Some(seen) => return Ok(timed_out(&args, selector, seen, started, polls - 1)),
                    None => return Err(e),
                },
                Err(e) => return Err(e),
            };
            let found = match selector {
                Some(s) => s.find(&snap.elements)?.cloned(),
                None => None,
            };
            let done = match args.condition {
                Condition::Disappears => found.is_none(),
                Condition::Stable => previous.as_ref().is_some_and(|p| same_screen(p, &snap)),
                Condition::Appears => found.is_some(),
            };
            // Polls until the timeout itself: the last pause is cut to what is left, so an
            // element that appears in the last stretch is still seen (the last poll starts at
            // `timeout_ms` at the latest and may end a UI dump later).
            let left = timeout.saturating_sub(started.elapsed());
            if done || left.is_zero() {
                return Ok(Output {
                    condition: args.condition,
                    satisfied: done,
                    elapsed_ms: started.elapsed().as_millis() as u64,
                    polls,
                    element: found.map(Found::from),
                    element_count: snap.elements.len(),
                });
            }
            previous = Some(snap);
            tokio::time::sleep(interval.min(left)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::parse::uiautomator::Bounds;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn outputs_match_the_schema() {
        let el = SnapshotElement {
            element_id: "e0".into(),
            bounds: Bounds {
                left: 0,
                top: 0,
                right: 10,
                bottom: 10,
            },
            text: "OK".into(),
            resource_id: String::new(),
            content_desc: String::new(),
            class: "android.widget.Button".into(),
        };
        let mut out = Output {
            condition: Condition::Appears,
            satisfied: true,
            elapsed_ms: 0,
            polls: 1,
            element: Some(el.into()),
            element_count: 1,
        };
        assert_output::<WaitFor>(&out);
        out.element = None;
        out.condition = Condition::Stable;
        assert_output::<WaitFor>(&out);
    }
}
