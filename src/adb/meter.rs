//! Where one tool call's time went on the link, and which way its phone steps took: a meter
//! scoped to the call's task ([`measure`]) that every [`DeviceLink`](super::DeviceLink) shell,
//! exec and sync step reports to by itself, so no tool measures its own steps.
//!
//! - busy: the union of the intervals in which at least one link step was in flight (steps
//!   run at the same time count once, so busy never exceeds the call's wall time);
//! - transfer: within busy, the time bytes moved in bulk — from the first chunk of a reply to
//!   its end, and the sending of a pushed file (the link's latency and the phone's own work
//!   before its first byte stay "phone");
//! - backends: the ways the phone steps went (`raw`, `uiautomator_file`, …), in order, each
//!   once, noted by the phone operation that chose it ([`note_backend`]).
//!
//! Outside a [`measure`] scope (the inventory's liveness probes, the console) every report is
//! a no-op.

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant};

tokio::task_local! {
    static METER: Meter;
}

/// Most backends one call reports (an observation: the tree's and the screenshot's).
const MAX_BACKENDS: usize = 2;

#[derive(Debug, Default)]
struct Meter {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    busy: Duration,
    in_flight: u32,
    since: Option<Instant>,
    transfer: Duration,
    backends: Vec<&'static str>,
}

/// What a call's meter read when it ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// Time with at least one link step in flight.
    pub busy: Duration,
    /// Of `busy`, bulk bytes moving (at most `busy`).
    pub transfer: Duration,
    /// The backends noted, in order, each once.
    pub backends: Vec<&'static str>,
}

/// Runs `f` with a fresh meter and returns its output with what the meter read.
pub async fn measure<F: Future>(f: F) -> (F::Output, Reading) {
    METER
        .scope(Meter::default(), async move {
            let out = f.await;
            let reading = METER
                .try_with(|m| {
                    let s = m.state.lock().unwrap_or_else(|e| e.into_inner());
                    let busy = s.busy + s.since.map_or(Duration::ZERO, |t| t.elapsed());
                    Reading {
                        busy,
                        transfer: s.transfer.min(busy),
                        backends: s.backends.clone(),
                    }
                })
                .unwrap_or_default();
            (out, reading)
        })
        .await
}

/// Marks a link step in flight until the guard drops (also when the step's future is
/// dropped at a deadline).
#[must_use]
pub struct Busy(());

/// A link step begins (see [`Busy`]).
pub fn busy() -> Busy {
    let _ = METER.try_with(|m| {
        let mut s = m.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.in_flight == 0 {
            s.since = Some(Instant::now());
        }
        s.in_flight += 1;
    });
    Busy(())
}

impl Drop for Busy {
    fn drop(&mut self) {
        let _ = METER.try_with(|m| {
            let mut s = m.state.lock().unwrap_or_else(|e| e.into_inner());
            s.in_flight = s.in_flight.saturating_sub(1);
            if s.in_flight == 0 {
                if let Some(t) = s.since.take() {
                    s.busy += t.elapsed();
                }
            }
        });
    }
}

/// Counts `d` of a link step as bulk transfer.
pub fn transfer(d: Duration) {
    let _ = METER.try_with(|m| m.state.lock().unwrap_or_else(|e| e.into_inner()).transfer += d);
}

/// Notes the way a phone step went (once per call; at most [`MAX_BACKENDS`] kept).
pub fn note_backend(backend: &'static str) {
    let _ = METER.try_with(|m| {
        let mut s = m.state.lock().unwrap_or_else(|e| e.into_inner());
        if !s.backends.contains(&backend) && s.backends.len() < MAX_BACKENDS {
            s.backends.push(backend);
        }
    });
}

/// Replaces what was noted with the one way the call's action took (typing's method, over the
/// UI dumps that read the field around it).
pub fn choose_backend(backend: &'static str) {
    let _ = METER.try_with(|m| {
        let mut s = m.state.lock().unwrap_or_else(|e| e.into_inner());
        s.backends.clear();
        s.backends.push(backend);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn overlapping_steps_count_once_and_outside_a_scope_nothing_is_kept() {
        let ((), r) = measure(async {
            let a = busy();
            let b = busy();
            tokio::time::sleep(Duration::from_millis(20)).await;
            drop(a);
            drop(b);
            transfer(Duration::from_secs(5));
            note_backend("raw");
            note_backend("raw");
            note_backend("uiautomator_tty");
            note_backend("png");
        })
        .await;
        assert!(r.busy >= Duration::from_millis(20), "{r:?}");
        assert_eq!(r.transfer, r.busy);
        assert_eq!(r.backends, ["raw", "uiautomator_tty"]);
        drop(busy());
        note_backend("raw");
    }

    #[tokio::test]
    async fn a_chosen_backend_replaces_the_notes() {
        let ((), r) = measure(async {
            note_backend("uiautomator_tty");
            choose_backend("ime_broadcast");
        })
        .await;
        assert_eq!(r.backends, ["ime_broadcast"]);
        assert_eq!(r.busy, Duration::ZERO);
    }
}
