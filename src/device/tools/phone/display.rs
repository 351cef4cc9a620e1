//! The display's input size (px), read from the phone and cached per channel for
//! [`DISPLAY_TTL`] so ms-scale gestures do not pay a `wm size` round trip each.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::command::SEP;
use super::input::INPUT_DEADLINE;
use super::target::check_bounds;
use crate::device::error::DeviceError;
use crate::device::parse::{text, window, wm};
use crate::device::tools::ToolCtx;

/// Last known display input size of a phone, reused for bounds checks for [`DISPLAY_TTL`].
#[derive(Debug, Default)]
pub struct DisplayCache {
    size: Mutex<Option<((u32, u32), Instant)>>,
}

/// How long a display size read from the phone is trusted (ms-scale taps must not pay a `wm size`
/// round trip each; rotation changes are picked up within this time or at the next observation).
pub const DISPLAY_TTL: Duration = Duration::from_secs(5);

impl DisplayCache {
    /// The cached size if fresh.
    pub fn get(&self) -> Option<(u32, u32)> {
        let guard = self.size.lock().unwrap_or_else(|e| e.into_inner());
        guard
            .filter(|(_, at)| at.elapsed() < DISPLAY_TTL)
            .map(|(s, _)| s)
    }
    /// Forgets the size (after a rotation change).
    pub fn clear(&self) {
        *self.size.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
    /// Records a size just read.
    pub fn set(&self, size: (u32, u32)) {
        *self.size.lock().unwrap_or_else(|e| e.into_inner()) = Some((size, Instant::now()));
    }
}

/// The display's input size (px) read from the phone now (the cache is refreshed): for
/// observations whose geometry later calls rely on (screenshots), so a rotation or size change
/// never survives in them (field bug 25).
pub async fn fresh_display_size(ctx: &ToolCtx<'_>) -> Result<(u32, u32), DeviceError> {
    ctx.display.clear();
    display_size(ctx).await
}

/// Checks `points` (display px) against the display; a refusal is never based on a cached size
/// alone: when a point falls outside the cached size, the size is read again first (the phone
/// may have rotated since). Returns the size checked against.
pub async fn check_on_display(
    ctx: &ToolCtx<'_>,
    points: &[(i64, i64)],
) -> Result<(u32, u32), DeviceError> {
    let size = display_size(ctx).await?;
    if points
        .iter()
        .all(|&(x, y)| check_bounds(x, y, size).is_ok())
    {
        return Ok(size);
    }
    let size = fresh_display_size(ctx).await?;
    for &(x, y) in points {
        check_bounds(x, y, size)?;
    }
    Ok(size)
}

/// The display's input size (px): from the cache, else `dumpsys window displays` `cur=` (override
/// and rotation applied), else `wm size` (Override wins over Physical).
pub async fn display_size(ctx: &ToolCtx<'_>) -> Result<(u32, u32), DeviceError> {
    if let Some(s) = ctx.display.get() {
        return Ok(s);
    }
    let cmd = format!("dumpsys window displays; echo {SEP}; wm size");
    let out = ctx.link.shell(&cmd, INPUT_DEADLINE, 4 << 20).await?;
    let text = text::decode_output(&out.stdout);
    let (displays, wm_part) = text.split_once(SEP).unwrap_or(("", text.as_str()));
    let size = window::parse_current_display_size(displays)
        .or_else(|| wm::parse_wm_size(wm_part).and_then(|s| s.effective()))
        .ok_or_else(|| {
            DeviceError::CommandFailed(
                "could not read the display size (dumpsys window displays / wm size)".into(),
            )
        })?;
    ctx.display.set(size);
    Ok(size)
}
