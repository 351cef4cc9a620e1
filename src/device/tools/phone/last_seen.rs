//! What the agent last saw on a channel ([`LastSeen`]): the last UI snapshot (so `element_id`s
//! resolve to the bounds the agent read) and recent screenshots' geometry (so coordinates read
//! off a scaled screenshot map back to the display: the one coordinate contract, field bugs
//! 14–15), and the observations of `android_observe` (for `since`).

use std::collections::VecDeque;
use std::sync::Mutex;

use super::display::DisplayGeometry;
use super::observation::Observations;
use crate::device::parse::uiautomator::Bounds;

/// How many screenshots' geometry are remembered per channel.
pub const SHOTS_KEPT: usize = 16;

/// One element of a UI snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotElement {
    /// `e<N>`, stable within its snapshot.
    pub element_id: String,
    /// Bounds in display px.
    pub bounds: Bounds,
    /// Visible text.
    pub text: String,
    /// `resource-id`.
    pub resource_id: String,
    /// `content-desc`.
    pub content_desc: String,
    /// Widget class.
    pub class: String,
}

/// A UI snapshot returned by `android_ui_tree`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiSnapshot {
    /// `ui_<hex>`.
    pub snapshot_id: String,
    /// Its elements.
    pub elements: Vec<SnapshotElement>,
    /// The display geometry read with the dump (`None`: not read); an `element_id` of it is
    /// refused once the display's differs (its bounds are in this frame).
    pub frame: Option<DisplayGeometry>,
}

/// Geometry of a screenshot the agent received.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShotGeometry {
    /// Image size, px.
    pub image: (u32, u32),
    /// Input size of the captured display when taken, px (what image px map onto).
    pub display: (u32, u32),
    /// The display geometry read with it (`dumpsys window displays`: size and rotation): a
    /// point in this screenshot's pixels is refused once the geometry read for the call
    /// differs (field bug 25).
    pub frame: DisplayGeometry,
}

/// What the agent last saw on one channel.
#[derive(Debug, Default)]
pub struct LastSeen {
    ui: Mutex<Option<UiSnapshot>>,
    shots: Mutex<VecDeque<(String, ShotGeometry)>>,
    observations: Observations,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl LastSeen {
    /// Remembers the latest UI snapshot (replacing the previous one).
    pub fn set_ui(&self, snap: UiSnapshot) {
        *lock(&self.ui) = Some(snap);
    }

    /// The latest UI snapshot.
    pub fn ui(&self) -> Option<UiSnapshot> {
        lock(&self.ui).clone()
    }

    /// Remembers a screenshot's geometry.
    pub fn add_shot(&self, id: String, g: ShotGeometry) {
        let mut shots = lock(&self.shots);
        if shots.len() == SHOTS_KEPT {
            shots.pop_front();
        }
        shots.push_back((id, g));
    }

    /// The observations `android_observe` made on the channel (for `since`).
    pub fn observations(&self) -> &Observations {
        &self.observations
    }

    /// Geometry of a remembered screenshot.
    pub fn shot(&self, id: &str) -> Option<ShotGeometry> {
        lock(&self.shots)
            .iter()
            .find(|(s, _)| s == id)
            .map(|(_, g)| *g)
    }
}
