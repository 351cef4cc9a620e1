//! The display's geometry (input size in px and rotation), read from the phone for every call
//! that maps or checks coordinates: a rotation or a `wm size` change between two calls must
//! never be served from a cache (field bug 25, kind "geometry": nothing cached survives a
//! rotation or size change). The last geometry read is kept per channel only as a hint (the
//! screenshot's PNG passthrough choice), never to check or map a point.

use std::sync::Mutex;

use super::command;
use super::input::INPUT_DEADLINE;
use super::readiness::{self, Readiness};
use super::target::check_bounds;
use crate::device::error::DeviceError;
use crate::device::parse::displays::DEFAULT_DISPLAY;
use crate::device::parse::wm;
use crate::device::tools::ToolCtx;

/// The display's geometry at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DisplayGeometry {
    /// Input size (override and rotation applied), px.
    pub size: (u32, u32),
    /// Rotation in quarter turns (0–3); `None` when the phone's dump names none.
    pub rotation: Option<u8>,
}

impl DisplayGeometry {
    /// Whether coordinates read in `self`'s frame still mean the same points in `now`'s: same
    /// size, and the same rotation where both are known (a 180° turn keeps the size).
    pub fn same_frame(&self, now: &DisplayGeometry) -> bool {
        self.size == now.size
            && match (self.rotation, now.rotation) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    }

    /// `WxH rotation N` for messages.
    pub fn describe(&self) -> String {
        match self.rotation {
            Some(r) => format!("{}x{} rotation {r}", self.size.0, self.size.1),
            None => format!("{}x{}", self.size.0, self.size.1),
        }
    }
}

/// Last display geometry read on a channel: a hint for choices that cost nothing when wrong
/// (whether a PNG may pass through unscaled), never for checking or mapping a point.
#[derive(Debug, Default)]
pub struct DisplayCache {
    last: Mutex<Option<DisplayGeometry>>,
}

impl DisplayCache {
    /// The last size read, px (a hint: the phone may have rotated since).
    pub fn get(&self) -> Option<(u32, u32)> {
        self.last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map(|g| g.size)
    }
    /// Forgets the hint (after a rotation change this connector made).
    pub fn clear(&self) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
    /// Records a geometry just read.
    pub fn set(&self, g: DisplayGeometry) {
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(g);
    }
}

/// Checks `points` (display px) against `geometry`, read by the caller for this call.
pub fn check_on_display(
    geometry: &DisplayGeometry,
    points: &[(i64, i64)],
) -> Result<(), DeviceError> {
    for &(x, y) in points {
        check_bounds(x, y, geometry.size)?;
    }
    Ok(())
}

/// The default display's geometry and the phone's readiness, read from the phone now in one
/// shell round trip ([`readiness::read_window`]): the size from display 0's own block of
/// `dumpsys window displays` (`cur=`: override and rotation applied; never another display's
/// block, whatever order they are listed in: field bug 52), the rotation from the same block;
/// only when the dump names no `cur=` for display 0 a second round trip asks `wm size`
/// (Override wins over Physical). `wm` starts an `app_process` on older phones (≈ 100 ms),
/// `dumpsys` is one binder call: every gesture pays this read, so `wm` is the exception.
/// Errors: the link's; `device_booting` naming the service when the window service is not
/// up (on either command); `device_command_failed` when neither names a size.
pub async fn read_display(ctx: &ToolCtx<'_>) -> Result<(DisplayGeometry, Readiness), DeviceError> {
    read_moment(ctx).await.map(|m| (m.geometry, m.readiness))
}

/// What one window read says about the default display: its geometry, the readiness, and the
/// window and app in front (`android_observe` compares two of these to tell whether the screen
/// moved between its tree and its screenshot; receipts read `foreground_package` from it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Moment {
    /// Size and rotation.
    pub geometry: DisplayGeometry,
    /// Booting, screen, lock screen.
    pub readiness: Readiness,
    /// Title of display 0's focused window (`com.pkg/com.pkg.Act`, `NotificationShade`, …).
    pub focus: Option<String>,
    /// The app in front of display 0 (under a framework dialog, the app it covers: field bug 79).
    pub foreground_package: Option<String>,
}

/// [`read_display`] keeping the focus the same read names (no extra round trip).
pub async fn read_moment(ctx: &ToolCtx<'_>) -> Result<Moment, DeviceError> {
    let read = readiness::read_window(ctx).await?;
    let size = match read.dump.size(DEFAULT_DISPLAY) {
        Some(size) => Some(size),
        None => {
            let out = command::run(ctx, "wm size", INPUT_DEADLINE, 64 << 10).await?;
            if let Some(e) = out.service_missing() {
                return Err(e);
            }
            wm::parse_wm_size(&out.stdout).and_then(|s| s.effective())
        }
    }
    .ok_or_else(|| {
        DeviceError::CommandFailed(
            "could not read the display size (dumpsys window displays / wm size)".into(),
        )
    })?;
    let geometry = DisplayGeometry {
        size,
        rotation: read.dump.rotation(DEFAULT_DISPLAY),
    };
    ctx.display.set(geometry);
    let focus = read.dump.focus(DEFAULT_DISPLAY);
    let foreground_package = match focus.as_ref() {
        // As `android_device_status` tells it.
        Some(f) if f.dialog.is_some() => read
            .dump
            .app_under_focus(DEFAULT_DISPLAY)
            .and_then(|w| w.package),
        Some(f) => f.package.clone(),
        None => None,
    };
    Ok(Moment {
        geometry,
        readiness: read.readiness,
        focus: focus.map(|f| f.title),
        foreground_package,
    })
}

/// [`read_display`]'s geometry, for tools that only observe (a screenshot, the UI tree): the
/// readiness is recorded, and only a missing service refuses.
pub async fn display_geometry(ctx: &ToolCtx<'_>) -> Result<DisplayGeometry, DeviceError> {
    read_display(ctx).await.map(|(g, _)| g)
}

/// [`read_display`]'s geometry for a gesture that must land on the app: refused with
/// `device_locked` while the screen is off or the lock screen shows ([`Readiness::refusal`]),
/// before any point is checked or sent.
pub async fn acting_geometry(ctx: &ToolCtx<'_>) -> Result<DisplayGeometry, DeviceError> {
    let (geometry, readiness) = read_display(ctx).await?;
    match readiness.refusal() {
        Some(e) => Err(e),
        None => Ok(geometry),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_differs_by_size_or_by_a_known_rotation() {
        let at = |w, h, r| DisplayGeometry {
            size: (w, h),
            rotation: r,
        };
        assert!(at(1080, 2400, Some(0)).same_frame(&at(1080, 2400, Some(0))));
        // A quarter turn swaps the size; a half turn keeps it and only the rotation tells.
        assert!(!at(1080, 2400, Some(0)).same_frame(&at(2400, 1080, Some(1))));
        assert!(!at(1080, 2400, Some(0)).same_frame(&at(1080, 2400, Some(2))));
        // `wm size` override: same rotation, another size.
        assert!(!at(1080, 2400, Some(0)).same_frame(&at(720, 1600, Some(0))));
        // A dump naming no rotation is judged by its size alone.
        assert!(at(1080, 2400, None).same_frame(&at(1080, 2400, Some(2))));
        assert_eq!(at(1080, 2400, Some(1)).describe(), "1080x2400 rotation 1");
        assert_eq!(at(1080, 2400, None).describe(), "1080x2400");
    }
}
