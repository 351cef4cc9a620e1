//! One deadline for all the steps of a tool call ("every tool call has one deadline covering all
//! its steps"): each step gets what is left, capped by its own limit, and a small reserve is kept
//! for clean-up steps (removing temporary files, abandoning an install session) that must run
//! after a failure.

use std::time::{Duration, Instant};

use crate::adb::AdbError;
use crate::device::error::DeviceError;

/// Shortest time a step is given: a step that would get less is not started
/// ([`CallDeadline::step`] answers `device_timeout` at once).
pub const MIN_STEP: Duration = Duration::from_millis(50);

/// The deadline of one tool call.
#[derive(Debug, Clone, Copy)]
pub struct CallDeadline {
    end: Instant,
    total: Duration,
    reserve: Duration,
}

impl CallDeadline {
    /// A deadline `total` from now, keeping `reserve` of it for clean-up
    /// ([`CallDeadline::cleanup`]).
    pub fn new(total: Duration, reserve: Duration) -> CallDeadline {
        CallDeadline {
            end: Instant::now() + total,
            total,
            reserve: reserve.min(total / 2),
        }
    }

    /// Time left before the deadline.
    pub fn remaining(&self) -> Duration {
        self.end.saturating_duration_since(Instant::now())
    }

    /// The deadline of the next step: what is left minus the clean-up reserve, at most `cap`.
    /// Errors: `device_timeout` naming `what` when nothing useful is left.
    pub fn step(&self, what: &str, cap: Duration) -> Result<Duration, DeviceError> {
        let left = self.remaining().saturating_sub(self.reserve).min(cap);
        if left < MIN_STEP {
            return Err(DeviceError::Adb(AdbError::Timeout {
                step: format!(
                    "{what} (the call's {} s deadline was used up)",
                    self.total.as_secs()
                ),
                after: self.total,
            }));
        }
        Ok(left)
    }

    /// The deadline of a clean-up step: what is left (the reserve included), at most `cap`, at
    /// least [`MIN_STEP`] (clean-up is attempted even at the end).
    pub fn cleanup(&self, cap: Duration) -> Duration {
        self.remaining().min(cap).max(MIN_STEP)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_share_one_budget_and_keep_the_reserve() {
        let d = CallDeadline::new(Duration::from_secs(10), Duration::from_secs(2));
        let s = d.step("push", Duration::from_secs(60)).unwrap();
        assert!(s <= Duration::from_secs(8) && s > Duration::from_secs(7));
        assert_eq!(
            d.step("rm", Duration::from_secs(1)).unwrap(),
            Duration::from_secs(1)
        );
        assert!(d.cleanup(Duration::from_secs(60)) > Duration::from_secs(9));
        let spent = CallDeadline::new(Duration::from_millis(10), Duration::ZERO);
        let e = spent.step("commit", Duration::from_secs(5)).unwrap_err();
        assert_eq!(e.code(), crate::protocol::ErrorCode::DeviceTimeout);
        assert!(e.to_string().contains("commit"), "{e}");
        assert_eq!(
            spent.cleanup(Duration::from_secs(5)),
            MIN_STEP.max(spent.remaining())
        );
    }
}
