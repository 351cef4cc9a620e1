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

/// The two histograms; cheap to record into from any task. Beside them, the Prometheus series
/// of `GET /metrics` ([`Series`]).
pub struct DispatchStats {
    control: Mutex<Histogram<u64>>,
    tool: Mutex<Histogram<u64>>,
    series: Series,
}

/// Labels of a finished tool call: the tool id (`other` for ids not in the registry, so a
/// client cannot grow the series without bound) and `ok` or the error code.
#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
pub struct CallLabels {
    /// Tool id.
    pub tool: String,
    /// `ok` or the `error.code` of the ack.
    pub outcome: String,
}

/// Label of the dispatch histogram.
#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
pub struct KindLabel {
    /// The dispatch kind (`control`, `tool`).
    pub kind: String,
}

/// Label of the tool-call duration histogram.
#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
pub struct ToolLabel {
    /// Tool id (`other` for ids not in the registry).
    pub tool: String,
}

/// A histogram family with its bucket constructor.
type SecondsFamily<L> = prometheus_client::metrics::family::Family<
    L,
    prometheus_client::metrics::histogram::Histogram,
    fn() -> prometheus_client::metrics::histogram::Histogram,
>;

/// Prometheus series recorded as calls happen (prometheus-client; encoded by
/// [`crate::server::metrics`]). Clones share the values.
#[derive(Clone)]
pub struct Series {
    /// Finished tool calls by tool and outcome.
    pub tool_calls: prometheus_client::metrics::family::Family<
        CallLabels,
        prometheus_client::metrics::counter::Counter,
    >,
    /// Tool call duration (s) by tool, from the call's start to its ack.
    pub tool_seconds: SecondsFamily<ToolLabel>,
    /// Dispatch latency (s) by kind, as the hdr histograms above.
    pub dispatch_seconds: SecondsFamily<KindLabel>,
}

/// Buckets of tool call durations: 5 ms … ~82 s, doubling.
fn tool_buckets() -> prometheus_client::metrics::histogram::Histogram {
    prometheus_client::metrics::histogram::Histogram::new(
        prometheus_client::metrics::histogram::exponential_buckets(0.005, 2.0, 15),
    )
}

/// Buckets of dispatch latency: 50 µs … ~0.8 s, doubling (budget p99 ≤ 2 ms).
fn dispatch_buckets() -> prometheus_client::metrics::histogram::Histogram {
    prometheus_client::metrics::histogram::Histogram::new(
        prometheus_client::metrics::histogram::exponential_buckets(0.000_05, 2.0, 15),
    )
}

impl Series {
    fn new() -> Series {
        Series {
            tool_calls: Default::default(),
            tool_seconds: SecondsFamily::new_with_constructor(tool_buckets),
            dispatch_seconds: SecondsFamily::new_with_constructor(dispatch_buckets),
        }
    }
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
            series: Series::new(),
        }
    }

    /// The Prometheus series.
    pub fn series(&self) -> &Series {
        &self.series
    }

    /// Records a finished tool call of `tool_id` (known to the registry, else counted as
    /// `other`) with `outcome` (`ok` or an error code) that took `elapsed`.
    pub fn record_call(&self, tool_id: &str, outcome: &str, elapsed: Duration) {
        let tool = match crate::device::tools::registry().get(tool_id) {
            Some(t) => t.id().to_string(),
            None => "other".to_string(),
        };
        self.series
            .tool_calls
            .get_or_create(&CallLabels {
                tool: tool.clone(),
                outcome: outcome.to_string(),
            })
            .inc();
        self.series
            .tool_seconds
            .get_or_create(&ToolLabel { tool })
            .observe(elapsed.as_secs_f64());
    }

    /// Records a session-answered packet: arrival → reply written.
    pub fn record_control(&self, elapsed: Duration) {
        record(&self.control, elapsed);
        self.series
            .dispatch_seconds
            .get_or_create(&KindLabel {
                kind: "control".into(),
            })
            .observe(elapsed.as_secs_f64());
    }

    /// Records a tool call: arrival → tool task running.
    pub fn record_tool(&self, elapsed: Duration) {
        record(&self.tool, elapsed);
        self.series
            .dispatch_seconds
            .get_or_create(&KindLabel {
                kind: "tool".into(),
            })
            .observe(elapsed.as_secs_f64());
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
