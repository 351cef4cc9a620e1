//! Lock task mode as the acting tools meet it (field bug 81): `am start` of another app is
//! refused with a start code `am` has no message for (`parse::lock_task`), and the state that
//! explains it is read once, then, from `dumpsys activity activities` (filtered on the phone:
//! the full dump can be ~1 MB).

use std::time::Duration;

use super::command::{self, am_failure, Text};
use super::readiness::DeviceFacts;
use crate::device::error::DeviceError;
use crate::device::parse::lock_task::{
    is_lock_task_violation, parse_lock_task, unknown_start_code, LockTaskMode, LockTaskState,
};
use crate::device::tools::ToolCtx;

/// The lines of `dumpsys activity activities` that say the lock task state: the mode, the
/// locked tasks (`#0 Task{…}` / `#0 TaskRecord{…}`, only under `mLockTaskModeTasks=`) and the
/// allowlist (`u0:[…]`). One ERE, as toybox `grep -E` takes it.
pub const LOCK_TASK_READ: &str = r"dumpsys activity activities | grep -E 'mLockTaskModeState=|#[0-9]+ Task(Record)?\{|u[0-9]+:\['";

/// Deadline of that read.
const READ_DEADLINE: Duration = Duration::from_secs(5);

/// The phone's lock task state now; `None` when it cannot be read (the read's own failure is
/// not the call's: it only explains a refusal).
pub async fn read_lock_task(ctx: &ToolCtx<'_>) -> Option<LockTaskState> {
    let out = command::run(ctx, LOCK_TASK_READ, READ_DEADLINE, 64 * 1024)
        .await
        .ok()?;
    let state = parse_lock_task(&out.stdout)?;
    ctx.readiness.note(DeviceFacts {
        tv: None,
        lock_task: Some(state.mode),
    });
    Some(state)
}

/// `am start`'s failure, told by kind: a lock task violation (its code, or any refusal while
/// the phone reads `LOCKED`/`PINNED`) is [`DeviceError::LockTask`] naming the locked app;
/// anything else is [`am_failure`]'s answer. `refused` names what was started.
pub async fn start_refusal(ctx: &ToolCtx<'_>, out: &Text, refused: &str) -> Option<DeviceError> {
    let failure = am_failure(out, "am start")?;
    let code = unknown_start_code(&out.all())?;
    let state = read_lock_task(ctx).await;
    let locked = state.as_ref().is_some_and(|s| s.mode != LockTaskMode::None);
    // 101 means a lock task violation on every release that prints it (Android 8.0+); 5 only
    // before, so it needs the state to agree.
    if !(locked || code == 101) || !is_lock_task_violation(code) {
        return Some(failure);
    }
    Some(lock_task_error(state.filter(|_| locked), refused))
}

/// [`DeviceError::LockTask`] from a reading (`None`: the mode could not be read).
pub fn lock_task_error(state: Option<LockTaskState>, refused: &str) -> DeviceError {
    DeviceError::LockTask {
        mode: state.as_ref().map(|s| s.mode),
        package: state.and_then(|s| s.package),
        refused: refused.to_string(),
    }
}
