//! The process's task tree: one [`TaskTracker`] holding every spawned task (sessions, tool
//! calls, lease timers, the file cleaner, inventory trackers) and two cancellation tokens:
//!
//! * `shutdown` (SIGTERM/SIGINT): accepting stops, sockets stop reading, loops and timers end;
//!   tool calls already running continue and their acks are written before their socket closes;
//! * `abandon` ([`DRAIN_DEADLINE`] after `shutdown`): tool calls still running are dropped. A
//!   dropped side-effecting call keeps its journal row `running`, so a repeat after the restart
//!   is answered `tool_call_interrupted` and never runs twice (`store::journal`).
//!
//! [`Lifecycle::drain`] runs that sequence; the daemon then closes the store.

use std::future::Future;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// How long shutdown lets running tool calls finish (their acks included).
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(10);
/// After [`DRAIN_DEADLINE`], how long abandoned tasks get to unwind and sockets to close.
pub const ABANDON_GRACE: Duration = Duration::from_secs(2);

/// Handle on the task tree; cheap to clone.
#[derive(Clone, Default)]
pub struct Lifecycle {
    tasks: TaskTracker,
    shutdown: CancellationToken,
    abandon: CancellationToken,
}

impl Lifecycle {
    /// A task tree that starts shutting down when `shutdown` is cancelled.
    pub fn new(shutdown: CancellationToken) -> Lifecycle {
        Lifecycle {
            tasks: TaskTracker::new(),
            shutdown,
            abandon: CancellationToken::new(),
        }
    }

    /// Spawns a tracked task (the drain waits for it).
    pub fn spawn<F>(&self, task: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.tasks.spawn(task)
    }

    /// A token counting as one tracked task while held (for tasks spawned by a library, such
    /// as axum's WebSocket upgrade).
    pub fn track(&self) -> tokio_util::task::task_tracker::TaskTrackerToken {
        self.tasks.token()
    }

    /// Cancelled when shutdown starts: stop accepting, stop reading, end loops.
    pub fn shutdown(&self) -> &CancellationToken {
        &self.shutdown
    }

    /// Cancelled when the drain deadline passed: drop work still running.
    pub fn abandon(&self) -> &CancellationToken {
        &self.abandon
    }

    /// Waits for `shutdown`, then up to `deadline` for every tracked task; past it, cancels
    /// `abandon` and waits [`ABANDON_GRACE`] more. Returns `true` when every task ended in time
    /// (`false`: some were abandoned, or did not even unwind).
    pub async fn drain(&self, deadline: Duration) -> bool {
        self.shutdown.cancelled().await;
        self.tasks.close();
        if tokio::time::timeout(deadline, self.tasks.wait())
            .await
            .is_ok()
        {
            return true;
        }
        tracing::warn!(
            tasks = self.tasks.len(),
            "drain deadline passed; abandoning running tool calls"
        );
        self.abandon.cancel();
        let _ = tokio::time::timeout(ABANDON_GRACE, self.tasks.wait()).await;
        false
    }
}
