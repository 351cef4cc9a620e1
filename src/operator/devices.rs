//! `devices`: the phones with their bound channel, as a table or as JSON (`--json`).

use std::collections::HashMap;

use serde_json::{json, Value};

use super::PhoneRow;
use crate::connector::release::ReleaseView;
use crate::device::parse::devices::DeviceState;

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

/// The channel holding `p`: `Some(Some(id))` bound, `Some(None)` bound to none, `None`
/// unknown — no bindings read (`bound` is `None`), or `p` was never identified (listed under
/// its transport: a direct phone not answering, that no running connector named) while a
/// binding names a phone no row shows (it may be this one).
fn channel_of<'a>(
    p: &PhoneRow,
    phones: &[PhoneRow],
    bound: Option<&'a HashMap<String, String>>,
) -> Option<Option<&'a str>> {
    let bound = bound?;
    if let Some(id) = bound.get(&p.serial) {
        return Some(Some(id));
    }
    let unidentified = p.serial == p.transport && p.state != DeviceState::Device;
    // A bound phone no survey found is listed `missing`; it may be this one.
    let unmatched = phones.iter().any(|q| q.missing.is_some())
        || bound
            .keys()
            .any(|serial| !phones.iter().any(|q| &q.serial == serial));
    if unidentified && unmatched {
        None
    } else {
        Some(None)
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
/// which channel holds the phone is unknown (no data dir, or a phone listed under its
/// transport that may be a bound one: [`channel_of`]; `connector_channel_id` is then null), and `"release"`: the phone's hand-back after its last
/// binding (`{"state": "releasing"|"clean"|"failed", "finished_ms", "failed_steps": [{"step",
/// "ok", "message"}]}`, `[release]` of the device profile), null when it was never released
/// or unknown (no data dir). `state` is adb's word, `missing` for a bound phone the survey did
/// not find ([`PhoneRow::missing`]; `transport` null when no reading says where it was) or
/// `unknown` when the connector's key could not be used ([`PhoneRow::unknown_why`]) or the adb
/// server carrying a bound phone did not answer ([`PhoneRow::server_down`]).
pub fn to_json(
    phones: &[PhoneRow],
    bound: Option<&HashMap<String, String>>,
    releases: &HashMap<String, ReleaseView>,
) -> Value {
    Value::Array(
        phones
            .iter()
            .map(|p| {
                let channel = channel_of(p, phones, bound);
                json!({
                    "serial": p.serial,
                    "serialno": p.serialno,
                    "transport_id": p.transport_id,
                    "warning": p.warning,
                    "model": (!p.model.is_empty()).then_some(p.model.as_str()),
                    "state": p.state_word(),
                    "transport": (!p.transport.is_empty()).then_some(p.transport.as_str()),
                    "adb_server": p.adb_server,
                    "connector_channel_id": channel.flatten(),
                    "connector_channel_known": channel.is_some(),
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
/// (the JSON's `paired_over_wifi`); `CHANNEL` reads `unknown` when which channel holds the
/// phone is unknown ([`channel_of`]: no data dir, or a phone that may be a bound one); `RELEASE` is the last hand-back ([`release_cell`]);
/// `STATE` as in [`to_json`] (`missing`, `unknown` included).
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
            p.state_word().to_string(),
            or_dash(&p.transport),
            or_dash(p.adb_server.as_deref().unwrap_or("")),
            match channel_of(p, phones, bound) {
                Some(channel) => or_dash(channel.unwrap_or("")),
                None => "unknown".to_string(),
            },
            release_cell(releases.get(&p.serial)),
            if p.paired { "yes" } else { "-" }.to_string(),
        ]);
    }
    crate::operator::table::aligned(&rows)
}
