//! `devices`: the phones with their bound channel, as a table or as JSON (`--json`).

use std::collections::HashMap;

use serde_json::{json, Value};

use super::PhoneRow;
use crate::connector::release::ReleaseView;

/// A phone's hand-back in a table cell: `-` (never released), `releasing`, `clean`, or
/// `failed: STEP,…`.
fn release_cell(view: Option<&ReleaseView>) -> String {
    match view {
        None => "-".into(),
        Some(v) if v.failed_steps.is_empty() => v.state.clone(),
        Some(v) => {
            let steps: Vec<&str> = v.failed_steps.iter().map(|s| s.step.as_str()).collect();
            format!("failed: {}", steps.join(","))
        }
    }
}

/// The JSON form: an array of `{"serial", "serialno", "transport_id", "warning", "model",
/// "state", "transport", "adb_server", "connector_channel_id", "paired_over_wifi"}` (`serial`
/// is the phone's name a claim takes: its `ro.serialno`, or `ro.serialno#N` when several
/// phones report one serial, which `serialno` gives and `warning` says; `transport_id` is
/// adb's, null for direct phones; `model`, `adb_server`, `warning` and
/// `connector_channel_id` null when unknown or none: a phone that has not authorized the key
/// has no model; `paired_over_wifi` true for a phone paired with flow `adb_pair_code` or
/// `adb_qr_pair`, probed at its last address), and `"connector_channel_known"`: false when
/// `bound` is `None` (no data dir: which channel holds the phone is unknown, and
/// `connector_channel_id` is null), and `"release"`: the phone's hand-back after its last
/// binding (`{"state": "releasing"|"clean"|"failed", "finished_ms", "failed_steps": [{"step",
/// "ok", "message"}]}`, `[release]` of the device profile), null when it was never released
/// or unknown (no data dir).
pub fn to_json(
    phones: &[PhoneRow],
    bound: Option<&HashMap<String, String>>,
    releases: &HashMap<String, ReleaseView>,
) -> Value {
    Value::Array(
        phones
            .iter()
            .map(|p| {
                json!({
                    "serial": p.serial,
                    "serialno": p.serialno,
                    "transport_id": p.transport_id,
                    "warning": p.warning,
                    "model": (!p.model.is_empty()).then_some(p.model.as_str()),
                    "state": p.state.as_str(),
                    "transport": p.transport,
                    "adb_server": p.adb_server,
                    "connector_channel_id": bound.and_then(|b| b.get(&p.serial)),
                    "connector_channel_known": bound.is_some(),
                    "paired_over_wifi": p.paired,
                    "release": releases.get(&p.serial).map(|r| json!({
                        "state": r.state,
                        "finished_ms": r.finished_ms,
                        "failed_steps": r.failed_steps,
                    })),
                })
            })
            .collect(),
    )
}

/// The table form: a header and one line per phone, columns padded to their widest cell;
/// `-` for no value. The last column, `WI-FI PAIRED`, says `yes` for a phone paired over Wi-Fi
/// (the JSON's `paired_over_wifi`); `CHANNEL` reads `unknown` when `bound` is `None` (no data
/// dir); `RELEASE` is the last hand-back ([`release_cell`]).
pub fn to_table(
    phones: &[PhoneRow],
    bound: Option<&HashMap<String, String>>,
    releases: &HashMap<String, ReleaseView>,
) -> String {
    let mut rows = vec![[
        "SERIAL".to_string(),
        "MODEL".into(),
        "STATE".into(),
        "TRANSPORT".into(),
        "ADB SERVER".into(),
        "CHANNEL".into(),
        "RELEASE".into(),
        "WI-FI PAIRED".into(),
    ]];
    let or_dash = |s: &str| {
        if s.is_empty() {
            "-".to_string()
        } else {
            s.to_string()
        }
    };
    for p in phones {
        rows.push([
            p.serial.clone(),
            or_dash(&p.model),
            p.state.as_str().to_string(),
            p.transport.clone(),
            or_dash(p.adb_server.as_deref().unwrap_or("")),
            match bound {
                Some(bound) => or_dash(bound.get(&p.serial).map(String::as_str).unwrap_or("")),
                None => "unknown".to_string(),
            },
            release_cell(releases.get(&p.serial)),
            if p.paired { "yes" } else { "-" }.to_string(),
        ]);
    }
    crate::operator::table::aligned(&rows)
}
