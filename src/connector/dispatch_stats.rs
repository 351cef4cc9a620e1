//! Dispatch latency of the data plane, measured inside the connector so the figure is ours and
//! not a client's or the network's (budget: p99 ≤ 2 ms with 32 busy channels, see
//! `docs/performance.md`). Served on `GET /metrics`.
//!
//! Two histograms (µs, 2 significant digits, `hdrhistogram` crate):
//! * `control`: a packet the session answers without storage or phone work (`connector.hello`,
//!   `ping`, `connection.descriptor.get`, `channel.close`, `error` replies), from the frame's
//!   arrival to its reply written to the socket (`channel.open` waits for a SQLite commit and
//!   is not counted);
//! * `tool`: a `tool.invoke`, from the frame's arrival to the moment its task starts running
//!   the tool (the phone's own time is not dispatch).

use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde_json::{json, Value};

/// Highest recorded value (µs): 60 s; longer waits are clamped to it.
const MAX_US: u64 = 60_000_000;

/// The two histograms; cheap to record into from any task.
pub struct DispatchStats {
    control: Mutex<Histogram<u64>>,
    tool: Mutex<Histogram<u64>>,
}

impl Default for DispatchStats {
    fn default() -> Self {
        Self::new()
    }
}

fn histogram() -> Histogram<u64> {
    // 2 significant digits keep each histogram near 20 KiB (idle RSS budget).
    Histogram::new_with_bounds(1, MAX_US, 2).expect("static histogram bounds are valid")
}

fn record(h: &Mutex<Histogram<u64>>, elapsed: Duration) {
    let us = (elapsed.as_micros() as u64).clamp(1, MAX_US);
    h.lock()
        .unwrap_or_else(|e| e.into_inner())
        .saturating_record(us);
}

fn summary(h: &Mutex<Histogram<u64>>) -> Value {
    let h = h.lock().unwrap_or_else(|e| e.into_inner());
    json!({
        "count": h.len(),
        "p50_us": h.value_at_quantile(0.50),
        "p99_us": h.value_at_quantile(0.99),
        "max_us": h.max(),
    })
}

impl DispatchStats {
    /// Empty histograms.
    pub fn new() -> DispatchStats {
        DispatchStats {
            control: Mutex::new(histogram()),
            tool: Mutex::new(histogram()),
        }
    }

    /// Records a session-answered packet: arrival → reply written.
    pub fn record_control(&self, elapsed: Duration) {
        record(&self.control, elapsed);
    }

    /// Records a tool call: arrival → tool task running.
    pub fn record_tool(&self, elapsed: Duration) {
        record(&self.tool, elapsed);
    }

    /// `{"control": S, "tool": S}` with S = `{"count", "p50_us", "p99_us", "max_us"}` (µs since
    /// start; `0` everywhere while empty).
    pub fn snapshot(&self) -> Value {
        json!({"control": summary(&self.control), "tool": summary(&self.tool)})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_in_microseconds() {
        let s = DispatchStats::new();
        for ms in 1..=100u64 {
            s.record_control(Duration::from_micros(ms * 10));
        }
        s.record_tool(Duration::from_secs(3600)); // clamped, not lost
        let v = s.snapshot();
        assert_eq!(v["control"]["count"], 100);
        let p50 = v["control"]["p50_us"].as_u64().unwrap();
        let p99 = v["control"]["p99_us"].as_u64().unwrap();
        assert!((495..=510).contains(&p50), "{p50}");
        assert!((985..=1000).contains(&p99), "{p99}");
        assert_eq!(v["tool"]["count"], 1);
        assert!(v["tool"]["max_us"].as_u64().unwrap() >= 59_000_000);
    }
}
