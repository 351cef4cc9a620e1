//! The one deadline of a tool call (issue 19, M1: `android_input_text` ran 40–50 s against its
//! documented 30 s because each field read had its own 20 s deadline). The registry starts a
//! [`CallDeadline`] of the tool's budget ([`crate::device::tools::DeviceTool::deadline`]) when
//! the call begins and guards the whole run with it; every phone step (`shell`, `exec`, sync
//! pull/push) goes through [`ToolCtx`]'s methods here, which cut the step's own deadline to what
//! is left of the call's. A step cut short that times out is
//! [`DeviceError::DeadlineSpent`] (`device_timeout`), naming the step and the call's budget.
//! A step that must still run after a failure (restoring the IME, removing a temp file) is
//! kept time for with [`CallDeadline::reserving`]; a step that may take only a part of the
//! call (a field read before typing) with [`CallDeadline::within`].

use std::future::Future;
use std::time::{Duration, Instant};

use crate::adb::{AdbError, ShellOutput};
use crate::device::error::DeviceError;
use crate::device::tools::ToolCtx;

/// When a tool call must have finished, and its whole budget (for messages).
#[derive(Debug, Clone, Copy)]
pub struct CallDeadline {
    /// `None`: not started (a context built before the registry starts the tool's own).
    end: Option<Instant>,
    /// The call's budget.
    budget: Duration,
    /// When the call began, if before its budget was known ([`CallDeadline::begun_now`]):
    /// steps the connector runs before the tool (the fleet fence, the release's reads) count.
    begun: Option<Instant>,
}

impl CallDeadline {
    /// A deadline `budget` from now.
    pub fn start(budget: Duration) -> CallDeadline {
        CallDeadline {
            end: Instant::now().checked_add(budget),
            budget,
            begun: None,
        }
    }

    /// A call that begins now but whose budget the registry learns from its arguments: the
    /// connector's own steps before the tool (fleet fence, release reads) are then taken out
    /// of the tool's budget by [`CallDeadline::started`], so the call keeps one deadline.
    pub fn begun_now() -> CallDeadline {
        CallDeadline {
            begun: Some(Instant::now()),
            ..CallDeadline::not_started()
        }
    }

    /// The call's deadline once its budget is known: `budget` from when the call began
    /// ([`CallDeadline::begun_now`]), else from now.
    pub fn started(&self, budget: Duration) -> CallDeadline {
        let from = self.begun.unwrap_or_else(Instant::now);
        CallDeadline {
            end: from.checked_add(budget),
            budget,
            begun: None,
        }
    }

    /// No deadline yet: what the connector puts in a [`ToolCtx`] before the registry replaces
    /// it with the tool's own ([`crate::device::tools::DeviceTool::deadline`]).
    pub fn not_started() -> CallDeadline {
        CallDeadline {
            end: None,
            budget: Duration::MAX,
            begun: None,
        }
    }

    /// The call's whole budget.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Time left (`Duration::MAX` when not started).
    pub fn left(&self) -> Duration {
        self.end.map_or(Duration::MAX, |e| {
            e.saturating_duration_since(Instant::now())
        })
    }

    /// The same call's deadline, `reserve` earlier: what the steps before a step that must
    /// still run (a restore, a cleanup) may use.
    pub fn reserving(&self, reserve: Duration) -> CallDeadline {
        CallDeadline {
            end: self.end.map(|e| e.checked_sub(reserve).unwrap_or(e)),
            budget: self.budget,
            begun: self.begun,
        }
    }

    /// The same call's deadline, but at most `cap` from now: a step that may take only a part
    /// of the call.
    pub fn within(&self, cap: Duration) -> CallDeadline {
        let capped = Instant::now().checked_add(cap);
        CallDeadline {
            end: match (self.end, capped) {
                (Some(e), Some(c)) => Some(e.min(c)),
                (e, c) => e.or(c),
            },
            budget: self.budget,
            begun: self.begun,
        }
    }

    /// The error of a call whose time ran out during (or before) `step`.
    pub fn spent(&self, step: impl Into<String>) -> DeviceError {
        DeviceError::DeadlineSpent {
            step: step.into(),
            budget_ms: u64::try_from(self.budget.as_millis()).unwrap_or(u64::MAX),
        }
    }

    /// The deadline to give a step whose own is `want`: `want` cut to what is left of the
    /// call; nothing left is [`DeviceError::DeadlineSpent`]. For a step whose `AdbError` the
    /// caller reads itself (else use [`Self::bounded`]).
    pub fn clip(&self, want: Duration) -> Result<Duration, DeviceError> {
        match self.left() {
            l if l.is_zero() => Err(self.spent("the next step")),
            l => Ok(want.min(l)),
        }
    }

    /// Runs one phone step whose own deadline is `want`, cut to what is left of the call:
    /// `f` gets the deadline to pass to the link. Nothing left: [`DeviceError::DeadlineSpent`]
    /// without running it; a timeout of a step that was cut short: the same, naming the step.
    pub async fn bounded<T, F>(
        &self,
        want: Duration,
        f: impl FnOnce(Duration) -> F,
    ) -> Result<T, DeviceError>
    where
        F: Future<Output = Result<T, AdbError>>,
    {
        let left = self.left();
        if left.is_zero() {
            return Err(self.spent("the next step"));
        }
        let cut = left < want;
        match f(want.min(left)).await {
            Err(AdbError::Timeout { step, .. }) if cut => Err(self.spent(step)),
            other => other.map_err(DeviceError::from),
        }
    }
}

impl<'a> ToolCtx<'a> {
    /// This context with the call's deadline `deadline`.
    pub fn with_deadline(&self, deadline: CallDeadline) -> ToolCtx<'a> {
        ToolCtx {
            policy: self.policy,
            link: self.link,
            route: self.route,
            files: self.files,
            channel_id: self.channel_id,
            display: self.display,
            last_seen: self.last_seen,
            readiness: self.readiness,
            hints: self.hints,
            progress: self.progress,
            deadline,
        }
    }

    /// `shell` on the bound phone within `want`, cut to the call's deadline.
    pub async fn shell(
        &self,
        cmd: &str,
        want: Duration,
        limit: usize,
    ) -> Result<ShellOutput, DeviceError> {
        self.deadline
            .bounded(want, |d| self.link.shell(cmd, d, limit))
            .await
    }

    /// `exec` on the bound phone within `want`, cut to the call's deadline.
    pub async fn exec(
        &self,
        cmd: &str,
        want: Duration,
        limit: usize,
    ) -> Result<Vec<u8>, DeviceError> {
        self.deadline
            .bounded(want, |d| self.link.exec(cmd, d, limit))
            .await
    }

    /// Sync pull of `path` within `want`, cut to the call's deadline.
    pub async fn pull(
        &self,
        path: &str,
        want: Duration,
        limit: usize,
    ) -> Result<Vec<u8>, DeviceError> {
        self.deadline
            .bounded(want, |d| self.link.pull(path, d, limit))
            .await
    }

    /// Sync push of `data` to `path` within `want`, cut to the call's deadline.
    pub async fn push(
        &self,
        path: &str,
        mode: u32,
        data: &[u8],
        want: Duration,
    ) -> Result<(), DeviceError> {
        self.deadline
            .bounded(want, |d| self.link.push(path, mode, data, d))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_begun_call_counts_its_steps_before_the_budget_was_known() {
        let begun = CallDeadline::begun_now();
        assert_eq!(begun.left(), Duration::MAX);
        std::thread::sleep(Duration::from_millis(30));
        let d = begun.started(Duration::from_millis(100));
        assert!(d.left() <= Duration::from_millis(70));
        assert_eq!(d.budget(), Duration::from_millis(100));
        // Never begun: the budget runs from now.
        let fresh = CallDeadline::not_started().started(Duration::from_secs(5));
        assert!(fresh.left() > Duration::from_secs(4));
    }

    #[test]
    fn narrowed_deadlines_end_earlier_and_keep_the_budget() {
        let d = CallDeadline::start(Duration::from_secs(30));
        assert!(d.left() <= Duration::from_secs(30));
        let r = d.reserving(Duration::from_secs(5));
        assert!(r.left() <= Duration::from_secs(25));
        let w = d.within(Duration::from_secs(2));
        assert!(w.left() <= Duration::from_secs(2));
        assert_eq!((r.budget(), w.budget()), (d.budget(), d.budget()));
        assert_eq!(CallDeadline::not_started().left(), Duration::MAX);
        assert!(
            CallDeadline::not_started()
                .within(Duration::from_secs(1))
                .left()
                <= Duration::from_secs(1)
        );
        let e = d.spent("shell: 'uiautomator'");
        assert_eq!(e.code(), crate::protocol::ErrorCode::DeviceTimeout);
        assert!(e.to_string().contains("30000 ms"), "{e}");
    }

    #[tokio::test]
    async fn a_step_cut_by_the_call_names_the_step_and_the_budget() {
        let d = CallDeadline::start(Duration::from_millis(20));
        let e = d
            .bounded(Duration::from_secs(20), |after| async move {
                tokio::time::sleep(after + Duration::from_millis(5)).await;
                Err::<(), _>(AdbError::Timeout {
                    step: "shell: 'uiautomator'".into(),
                    after,
                })
            })
            .await
            .unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("shell: 'uiautomator'") && m.contains("20 ms"),
            "{m}"
        );
        let spent = d
            .bounded(Duration::from_secs(1), |_| async { Ok(()) })
            .await;
        assert!(spent.is_err(), "nothing left: the step does not run");
    }
}
