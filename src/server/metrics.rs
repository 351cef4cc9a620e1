//! `GET /metrics` (Bearer): the Prometheus text exposition (OpenMetrics 1.0 text, which
//! Prometheus and Grafana Agent scrape natively; encoded by the `prometheus-client` crate),
//! or the JSON dispatch summary with `?format=json` (as before this format existed). Another
//! `format` (or the parameter twice) is 400 `invalid_query`; other parameters are ignored.
//!
//! | series | type | labels |
//! |---|---|---|
//! | `xagent_adb_phones` | gauge | `state` (adb's word: `device`, `offline`, `unauthorized`, `no permissions`, …; `server unavailable`) |
//! | `xagent_adb_tool_calls_total` | counter | `tool`, `outcome` (`ok` or the error code) |
//! | `xagent_adb_tool_call_seconds` | histogram | `tool` |
//! | `xagent_adb_dispatch_seconds` | histogram | `kind` = `control` / `tool` ([`crate::connector::dispatch_stats`]) |
//! | `xagent_adb_file_cache_bytes` | gauge | — |
//! | `xagent_adb_channels` | gauge | — (channels known, bound or not) |

use std::collections::BTreeMap;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::Json;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use serde::Deserialize;
use serde_json::json;

use super::error::HttpError;
use super::{auth, AppState};

/// Content type of the OpenMetrics text format.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// `?format=` of `GET /metrics`.
#[derive(Debug, Deserialize)]
pub struct MetricsQuery {
    /// `json` for the JSON summary; absent: the text format; anything else is refused.
    pub format: Option<String>,
}

/// The refusal of a `format` other than `json` (never echoed).
const FORMATS: &str = "`format` must be `json` (the JSON dispatch summary) or absent (the OpenMetrics text, for Prometheus)";

/// Label of the phones gauge.
#[derive(Clone, Debug, Hash, PartialEq, Eq, prometheus_client::encoding::EncodeLabelSet)]
struct StateLabel {
    state: String,
}

/// The handler. 401 without the key (checked before the query); 400 (`invalid_query`) for
/// a `format` other than `json`; 500 (`internal_error`) when the store cannot be read.
pub async fn metrics(
    State(st): State<AppState>,
    headers: HeaderMap,
    query: Result<Query<MetricsQuery>, QueryRejection>,
) -> Result<Response, HttpError> {
    auth::require_bearer(&headers, &st.api_key.current())?;
    let Ok(Query(q)) = query else {
        return Err(HttpError::InvalidQuery(FORMATS));
    };
    match q.format.as_deref() {
        None => {}
        Some("json") => {
            return Ok(
                Json(json!({"dispatch": st.connector.dispatch_stats().snapshot()})).into_response(),
            )
        }
        Some(_) => return Err(HttpError::InvalidQuery(FORMATS)),
    }
    let text = render(&st).await?;
    Ok(([(header::CONTENT_TYPE, CONTENT_TYPE)], text).into_response())
}

/// Encodes the registry of this scrape: the recorded series plus the gauges read now.
async fn render(st: &AppState) -> Result<String, HttpError> {
    let connector = &st.connector;
    let mut registry = Registry::with_prefix("xagent_adb");
    let phones = Family::<StateLabel, Gauge>::default();
    let mut by_state: BTreeMap<String, i64> = BTreeMap::new();
    // Every usual state appears, at 0 when no phone is in it, so alerts see the series.
    for s in ["device", "offline", "unauthorized", "no permissions"] {
        by_state.insert(s.into(), 0);
    }
    for p in connector.inventory().list() {
        let state = match p.state {
            crate::device::parse::devices::DeviceState::ServerUnavailable => {
                "server unavailable".to_string()
            }
            other => other.as_str().to_string(),
        };
        *by_state.entry(state).or_default() += 1;
    }
    for (state, n) in by_state {
        phones.get_or_create(&StateLabel { state }).set(n);
    }
    registry.register("phones", "Phones the connector sees, by state", phones);
    let series = connector.dispatch_stats().series().clone();
    registry.register(
        "tool_calls",
        "Finished tool calls by tool and outcome (ok or the error code)",
        series.tool_calls,
    );
    registry.register(
        "tool_call_seconds",
        "Tool call duration from start to ack, seconds, by tool",
        series.tool_seconds,
    );
    registry.register(
        "dispatch_seconds",
        "Data-plane dispatch latency inside the connector, seconds, by kind",
        series.dispatch_seconds,
    );
    let bytes = connector.files().total_bytes().await.map_err(|e| {
        tracing::warn!(error = %e, "metrics: cannot read the file cache size");
        HttpError::Internal("cannot read the file cache size")
    })?;
    let cache = Gauge::<i64>::default();
    cache.set(i64::try_from(bytes).unwrap_or(i64::MAX));
    registry.register("file_cache_bytes", "Bytes held by the file cache", cache);
    let channels = Gauge::<i64>::default();
    channels.set(connector.inspect(|s| s.channel_count()) as i64);
    registry.register("channels", "Channels known to the connector", channels);
    let mut out = String::new();
    encode(&mut out, &registry).map_err(|_| HttpError::Internal("metrics encoding failed"))?;
    Ok(out)
}
