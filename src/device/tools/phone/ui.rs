//! Reading the UI: `uiautomator dump` with bounded, time-boxed retries (field bugs 9, 10), the
//! way the phone takes it (field bug 39), within the call's deadline; the meaningful elements
//! of a dump as a snapshot with stable `element_id`s, and the focused node.

use std::time::{Duration, Instant};

use super::command;
use super::display::DisplayGeometry;
use super::last_seen::{SnapshotElement, UiSnapshot};
use crate::device::error::DeviceError;
use crate::device::parse::uiautomator;
use crate::device::tools::ToolCtx;

/// Deadline of one UI read over all attempts (`uiautomator dump` can take seconds on busy
/// screens); never more than what is left of the call's deadline.
pub const UI_TREE_DEADLINE: Duration = Duration::from_secs(20);
/// Cap of text output of observation commands (bytes).
pub const TEXT_LIMIT: usize = 8 * 1024 * 1024;
/// Attempts of `uiautomator dump` for transient failures (not idle, null root, busy).
pub const UI_DUMP_ATTEMPTS: u32 = 4;
/// Pause between attempts (ms): lets an animation settle.
pub const UI_DUMP_BACKOFF: Duration = Duration::from_millis(250);

/// The typed reason of a failed dump (field bugs 9, 10, 23, 24, 39).
fn dump_reason(e: &uiautomator::UiDumpError) -> &'static str {
    match e {
        uiautomator::UiDumpError::NotIdle => "not_idle",
        uiautomator::UiDumpError::NullRoot => "null_root",
        uiautomator::UiDumpError::AutomationBusy => "automation_busy",
        uiautomator::UiDumpError::StatusOnly { .. } => "no_output",
        uiautomator::UiDumpError::UnwritableText { .. } => "unwritable_text",
        uiautomator::UiDumpError::DumperCrashed { .. } => "dumper_crashed",
        _ => "parse_error",
    }
}

/// Whether another attempt can help: the screen settling (not idle, no window yet) or a
/// truncated answer. Another automation client holding the service does not let go within a
/// dump's retries (uiautomator2#1013), a dump that wrote its tree nowhere does the same
/// again (field bug 39), and a text the dumper cannot write stays on screen (field bug 66), so
/// none of them is retried.
fn worth_retrying(e: &uiautomator::UiDumpError) -> bool {
    !matches!(
        e,
        uiautomator::UiDumpError::AutomationBusy
            | uiautomator::UiDumpError::StatusOnly { .. }
            | uiautomator::UiDumpError::UnwritableText { .. }
    )
}

/// Parses a dump's output: stdout first; what stdout lacked may be on stderr (legacy shell
/// merges them anyway).
fn parse(out: &command::Text) -> Result<uiautomator::UiDump, uiautomator::UiDumpError> {
    match uiautomator::parse_uiautomator_dump(&out.stdout) {
        Ok(dump) => Ok(dump),
        Err(e) => match uiautomator::parse_uiautomator_dump(&out.all()) {
            Err(uiautomator::UiDumpError::NoXml { .. }) | Ok(_) => Err(e),
            Err(from_both) => Err(from_both),
        },
    }
}

/// The error of a dump that no retry can help, or `None` when retrying may.
fn final_failure(out: &command::Text, e: &uiautomator::UiDumpError) -> Option<DeviceError> {
    let killed = out.exit_code.and_then(command::killed_by);
    let line = match out.telling_line() {
        l if l.is_empty() => String::new(),
        // A cut-off tree is no message: say how much of it came.
        l if l.starts_with('<') => match out.stdout.find("<hierarchy") {
            Some(at) => format!(
                ": the tree was cut off after {} bytes",
                out.stdout.len() - at
            ),
            None => String::new(),
        },
        l => format!(": {l}"),
    };
    Some(DeviceError::UiDumpFailed(match (killed, e) {
        // Killed before or while it wrote the tree (a cut-off `<hierarchy>` then `Killed`,
        // dtmilano/AndroidViewClient#140): the kill is the cause, not the XML.
        (
            Some(k),
            uiautomator::UiDumpError::NoXml { .. } | uiautomator::UiDumpError::Xml(_),
        ) => format!(
            "ui_dump_failed (reason: killed): `uiautomator dump` was killed ({}){line}; not retried — free memory or stop the other tool, then retry, or use android_screenshot",
            k.explain()
        ),
        (_, uiautomator::UiDumpError::AutomationBusy) => format!(
            "ui_dump_failed (reason: automation_busy): another UiAutomation client holds the phone's accessibility automation ({}) — usually a uiautomator2 or Appium server, or another test runner; stop that client (end its session, or `am force-stop` its package) and retry; nothing was killed",
            out.telling_line()
        ),
        // The dumper's XML writer refused a character of a text on screen (field bug 66).
        (_, uiautomator::UiDumpError::UnwritableText { character, line }) => format!(
            "ui_dump_failed (reason: unwritable_text): the phone's `uiautomator dump` could not write the screen's text as XML ({line}){}; not retried: it fails the same while that text is on screen — scroll or navigate so it is off screen (or close the app showing it), then retry, or use android_screenshot and coordinates",
            character.map_or(String::new(), |u| format!(
                ": U+{u:04X} is {}",
                uiautomator::describe_refused_unit(u)
            ))
        ),
        (_, uiautomator::UiDumpError::StatusOnly { path }) => format!(
            "ui_dump_failed (reason: no_output): `uiautomator dump` said `dumped to: {path}` but gave no tree, to /dev/tty nor to a private file under /data/local/tmp (the phone's dumper could not write it: storage full or locked down?); not retried — use android_screenshot and coordinates"
        ),
        _ => return None,
    }))
}

/// The cause of a dump that died by SIGKILL printing no tree (at most the shell's `Killed`):
/// the dumper's own uncaught exception in the crash buffer, logged since this call began
/// ([`super::dumper_crash`]; its handler kills the process, field bug 66), classified as a
/// printed one is. `None`: not such a death, or nothing of the dumper's there.
async fn self_killed(
    ctx: &ToolCtx<'_>,
    out: &command::Text,
    e: &uiautomator::UiDumpError,
    running: Duration,
) -> Option<uiautomator::UiDumpError> {
    let sigkill = out
        .exit_code
        .and_then(command::killed_by)
        .is_some_and(|k| k.signal == 9);
    let silent = out
        .all()
        .lines()
        .all(|l| l.trim().is_empty() || l.trim() == "Killed");
    if !sigkill || !silent || !matches!(e, uiautomator::UiDumpError::NoXml { .. }) {
        return None;
    }
    // The phone's clock may lag the call's start by the round trips: a little slack.
    let trace = super::dumper_crash::newest(ctx, running + Duration::from_secs(5)).await?;
    uiautomator::dumper_exception(&trace)
}

/// Dumps the UI with bounded, time-boxed retries (never an empty tree reported as a screen),
/// the way the phone takes it ([`super::ui_dump::dump`]: `/dev/tty`, or a private file where
/// `/dev/tty` gives only the status line, field bug 39), within [`UI_TREE_DEADLINE`] and the
/// call's deadline. The outcome is read from stdout, stderr and the exit status together: a
/// missing system service is `device_booting`; `already registered!` on either stream is
/// `automation_busy` (field bug 23: the trace goes to stderr, exit 1 or 0), not retried and
/// nothing killed; a death by signal (exit 128 + N: 137 SIGKILL, 143 SIGTERM, 139 SIGSEGV, …)
/// with no XML is `killed` naming the status and signal (field bug 24), not retried.
pub async fn dump_with_retries(ctx: &ToolCtx<'_>) -> Result<uiautomator::UiDump, DeviceError> {
    let started = Instant::now();
    let mut last = None;
    let mut attempts = 0;
    for attempt in 1..=UI_DUMP_ATTEMPTS {
        // Cut to the call's deadline by the step itself (which then names the call's budget).
        let left = UI_TREE_DEADLINE.saturating_sub(started.elapsed());
        if left.is_zero() || ctx.deadline.left().is_zero() {
            if attempts == 0 {
                return Err(ctx.deadline.spent("uiautomator dump"));
            }
            break;
        }
        attempts = attempt;
        let out = super::ui_dump::dump(ctx, left).await?;
        if let Some(e) = out.service_missing() {
            return Err(e);
        }
        let e = match parse(&out) {
            Ok(dump) => return Ok(dump),
            Err(e) => e,
        };
        let e = match self_killed(ctx, &out, &e, started.elapsed()).await {
            Some(cause) => cause,
            None => e,
        };
        let crashed = matches!(e, uiautomator::UiDumpError::DumperCrashed { .. });
        if !worth_retrying(&e) || (!crashed && out.exit_code.and_then(command::killed_by).is_some())
        {
            if let Some(fail) = final_failure(&out, &e) {
                return Err(fail);
            }
        }
        tracing::debug!(attempt, reason = dump_reason(&e), exit = ?out.exit_code, "uiautomator dump failed");
        last = Some(e);
        if attempt < UI_DUMP_ATTEMPTS {
            tokio::time::sleep(UI_DUMP_BACKOFF.min(ctx.deadline.left())).await;
        }
    }
    let reason = last.as_ref().map(dump_reason).unwrap_or("timeout");
    Err(DeviceError::UiDumpFailed(format!(
        "ui_dump_failed (reason: {reason}) after {attempts} attempts: {}; wait for the screen to settle or use android_screenshot",
        last.map(|e| e.to_string()).unwrap_or_default()
    )))
}

/// Whether a node is worth showing the agent: visible (or `include_invisible`) and carrying
/// text, a description, an id, or an interaction.
pub fn meaningful(n: &uiautomator::UiNode, include_invisible: bool) -> bool {
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

/// Dumps the UI and builds a snapshot of its meaningful elements; with `remember` (the display
/// geometry read for this call) it is stored as the channel's latest, the one `element_id`s
/// refer to.
pub async fn take_snapshot(
    ctx: &ToolCtx<'_>,
    remember: Option<DisplayGeometry>,
) -> Result<UiSnapshot, DeviceError> {
    let dump = dump_with_retries(ctx).await?;
    let mut snap = snapshot_of(&dump, false);
    if let Some(frame) = remember {
        snap.frame = Some(frame);
        ctx.last_seen.set_ui(snap.clone());
    }
    Ok(snap)
}

/// The snapshot of a dump: its meaningful nodes numbered `e0`, `e1`, … in document order.
pub fn snapshot_of(dump: &uiautomator::UiDump, include_invisible: bool) -> UiSnapshot {
    UiSnapshot {
        snapshot_id: crate::protocol::random_id("ui"),
        frame: None,
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

/// The focused node of a fresh dump, if any.
pub async fn focused_node(ctx: &ToolCtx<'_>) -> Result<Option<uiautomator::UiNode>, DeviceError> {
    let dump = dump_with_retries(ctx).await?;
    Ok(dump.nodes.into_iter().find(|n| n.focused))
}
