//! Whether a file call that found nothing under shared storage met an unmounted volume (field
//! bug 68). adbd answers a push under `/sdcard` while user 0's emulated volume is not mounted
//! with `secure_mkdirs failed: No such file or directory` (the `/sdcard` link leads into an
//! empty `/storage/emulated`), a pull with `open failed: No such file or directory` — the same
//! words as a missing file or folder. One `sm list-volumes all` (AOSP `cmds/sm`, Android 6+;
//! [`crate::device::parse::volumes`]) tells them apart; it runs only on that failure path.

use std::time::Duration;

use super::command;
use crate::adb::AdbError;
use crate::device::error::DeviceError;
use crate::device::parse::volumes;
use crate::device::shared_storage::{DevicePath, SHARED};
use crate::device::tools::ToolCtx;

/// Budget of the volume listing (it answers at once; the call's deadline cuts it further).
const PROBE: Duration = Duration::from_secs(5);
/// The listing's output cap (bytes): a few lines per volume.
const PROBE_LIMIT: usize = 64 * 1024;

/// Whether `e` is adbd saying a path (or a parent) does not exist.
pub fn says_missing(e: &AdbError) -> bool {
    matches!(e, AdbError::Refused(line) if line.contains("No such file or directory"))
}

/// The [`DeviceError::StorageNotMounted`] a missing-path refusal of `target` (under shared
/// storage) stands for, when `sm list-volumes` shows user 0's shared volume in another state
/// than mounted; `None` when it is mounted, the path lies elsewhere, or the phone cannot say
/// (no `sm`, a refused listing, no time left): the refusal keeps its own answer.
pub async fn unmounted(
    ctx: &ToolCtx<'_>,
    target: &DevicePath,
    verb: &'static str,
) -> Option<DeviceError> {
    if target.canonical != SHARED && !target.canonical.starts_with(&format!("{SHARED}/")) {
        return None;
    }
    let budget = ctx.deadline.clip(PROBE).ok()?;
    let out = command::run(ctx, "sm list-volumes all", budget, PROBE_LIMIT)
        .await
        .ok()?;
    let all = volumes::parse_volumes(&out.stdout);
    let shared = volumes::primary_shared(&all)?;
    (!shared.mounted()).then(|| DeviceError::StorageNotMounted {
        volume: shared.id.clone(),
        state: shared.state.clone(),
        path: target.path.clone(),
        verb,
    })
}
