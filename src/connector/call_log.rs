//! What the operator console shows of tool calls ([`crate::server::console`]): each phone's last
//! call and its outcome, and the most recent failed calls of all phones. Kept in memory for
//! the process (a restart starts empty; the counts and latencies are the Prometheus series of
//! [`super::dispatch_stats`]). Only registry tool ids are kept, never a caller's string, and
//! messages are the tool errors' own (which never carry a secret: docs/protocol.md).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

/// Failed calls kept for the console, newest first.
pub const RECENT_ERRORS: usize = 20;

/// One finished tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRecord {
    /// The phone's name (serial) the call ran on.
    pub serial: String,
    /// The channel it came from.
    pub channel_id: String,
    /// Tool id (from the registry).
    pub tool_id: &'static str,
    /// `ok` or the error code.
    pub outcome: String,
    /// The error message; empty for `ok`.
    pub message: String,
    /// When it finished, Unix ms.
    pub finished_ms: i64,
    /// How long it took, ms.
    pub elapsed_ms: u64,
}

/// The log; cheap to record into from any task (one short `std` lock, never across `.await`).
#[derive(Debug, Default)]
pub struct CallLog {
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Inner {
    last: HashMap<String, CallRecord>,
    errors: VecDeque<CallRecord>,
    calls: u64,
    failures: u64,
    /// Call durations, ms (1 ms to 1 h, 2 significant digits: ~10 KiB).
    elapsed: hdrhistogram::Histogram<u64>,
}

impl Default for Inner {
    fn default() -> Self {
        Inner {
            last: HashMap::new(),
            errors: VecDeque::new(),
            calls: 0,
            failures: 0,
            elapsed: hdrhistogram::Histogram::new_with_bounds(1, 3_600_000, 2)
                .expect("static histogram bounds are valid"),
        }
    }
}

/// The totals since start: what the console's metrics box shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallTotals {
    /// Finished tool calls.
    pub calls: u64,
    /// Those that failed (any error code).
    pub failures: u64,
    /// Median duration, ms (0 with no call).
    pub p50_ms: u64,
    /// 99th percentile duration, ms (0 with no call).
    pub p99_ms: u64,
}

impl CallLog {
    /// Records a finished call of `tool_id` on phone `serial` (ignored for an id the registry
    /// does not know): `Ok` or the error's code and message.
    pub fn record(
        &self,
        serial: &str,
        channel_id: &str,
        tool_id: &str,
        outcome: Result<(), (&str, &str)>,
        elapsed: Duration,
    ) {
        let Some(tool) = crate::device::tools::registry().get(tool_id) else {
            return;
        };
        let (outcome, message) = match outcome {
            Ok(()) => ("ok".to_string(), String::new()),
            Err((code, message)) => (code.to_string(), message.to_string()),
        };
        let record = CallRecord {
            serial: serial.to_string(),
            channel_id: channel_id.to_string(),
            tool_id: tool.id(),
            outcome,
            message,
            finished_ms: crate::protocol::now_ms(),
            elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        };
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.calls += 1;
        inner.elapsed.saturating_record(record.elapsed_ms.max(1));
        if record.outcome != "ok" {
            inner.failures += 1;
            inner.errors.push_front(record.clone());
            inner.errors.truncate(RECENT_ERRORS);
        }
        inner.last.insert(record.serial.clone(), record);
    }

    /// The last call on phone `serial`, if any since start.
    pub fn last(&self, serial: &str) -> Option<CallRecord> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.last.get(serial).cloned()
    }

    /// Calls, failures and the duration quantiles since start.
    pub fn totals(&self) -> CallTotals {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let quantile = |q: f64| {
            if inner.calls == 0 {
                0
            } else {
                inner.elapsed.value_at_quantile(q)
            }
        };
        CallTotals {
            calls: inner.calls,
            failures: inner.failures,
            p50_ms: quantile(0.5),
            p99_ms: quantile(0.99),
        }
    }

    /// The most recent failed calls, newest first (at most [`RECENT_ERRORS`]).
    pub fn recent_errors(&self) -> Vec<CallRecord> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.errors.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_call_per_phone_and_the_newest_failures() {
        let log = CallLog::default();
        log.record(
            "S1",
            "ch",
            "android_screenshot",
            Ok(()),
            Duration::from_millis(5),
        );
        log.record("S1", "ch", "not_a_tool", Ok(()), Duration::ZERO);
        assert_eq!(log.last("S1").unwrap().tool_id, "android_screenshot");
        for i in 0..RECENT_ERRORS + 3 {
            let message = format!("failure {i}");
            log.record(
                "S2",
                "ch",
                "android_tap",
                Err(("device_offline", &message)),
                Duration::ZERO,
            );
        }
        let errors = log.recent_errors();
        assert_eq!(errors.len(), RECENT_ERRORS);
        assert_eq!(errors[0].message, format!("failure {}", RECENT_ERRORS + 2));
        assert_eq!(log.last("S2").unwrap().outcome, "device_offline");
        assert_eq!(log.last("S1").unwrap().outcome, "ok");
        let totals = log.totals();
        assert_eq!(
            (totals.calls, totals.failures),
            (RECENT_ERRORS as u64 + 4, RECENT_ERRORS as u64 + 3)
        );
        assert!(totals.p99_ms >= 1, "{totals:?}");
    }
}
