//! Why a `uiautomator dump` died by SIGKILL with nothing printed: the dumper's own uncaught
//! exception, logged to the crash buffer before its handler killed the process (AOSP
//! `RuntimeInit`: `FATAL EXCEPTION …`, then `Process.killProcess`, SIGKILL; field bug 66), or
//! none — something else killed it. Read only on that failure path, in one round trip: the
//! phone's clock and the end of the buffer, `date +%s; logcat -b crash -d -v epoch -t 200`.

use std::time::Duration;

use super::command;
use crate::device::parse::{crash_log, java_trace::JavaTrace};
use crate::device::tools::ToolCtx;

/// The crash buffer's lines read (the newest).
const TAIL: &str = "200";
/// Budget of the read (the call's deadline cuts it further).
const READ: Duration = Duration::from_secs(5);
/// Output cap (bytes).
const LIMIT: usize = 512 * 1024;

/// Whether a trace is the `uiautomator` command's own (its frames, or the dumper's).
fn of_the_dumper(t: &JavaTrace) -> bool {
    t.through("AccessibilityNodeInfoDumper")
        || t.frames
            .iter()
            .any(|f| f.class.starts_with("com.android.commands.uiautomator."))
}

/// The newest uncaught exception of the dumper logged at most `within` before the phone's
/// clock (a crash from an earlier dump is older than this call), if any; `None` too when the
/// buffer cannot be read.
pub async fn newest(ctx: &ToolCtx<'_>, within: Duration) -> Option<JavaTrace> {
    let budget = ctx.deadline.clip(READ).ok()?;
    let cmd = format!("date +%s; logcat -b crash -d -v epoch -t {TAIL}");
    let out = command::run(ctx, &cmd, budget, LIMIT).await.ok()?;
    let (now, log) = out.stdout.split_once('\n')?;
    let now: u64 = now.trim().parse().ok()?;
    let since = now.saturating_sub(within.as_secs());
    crash_log::parse_crashes(log)
        .into_iter()
        .rev()
        .find(|c| (since..=now + 1).contains(&c.at) && of_the_dumper(&c.trace))
        .map(|c| c.trace)
}
