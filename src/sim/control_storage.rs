//! Control API routes of the phone's storage: sync faults and the media store.
//!
//! | method | path | body | effect |
//! |---|---|---|---|
//! | POST | `/v1/sync/fault` | [`SyncFault`] `{"op":"send"\|"recv","path_regex","fault","after_bytes"?,"times"?}` | the next matching sync requests fail as adbd's do ([`crate::sync_fault`]); answers `{"sync_faults": N}` |
//! | DELETE | `/v1/sync/fault` | – | removes all sync faults |
//! | GET | `/v1/media` | – | `{"indexed": [PATH…]}`: the files the media store has indexed (resolved paths) |

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use crate::control_json::{bad, ApiError, JsonBody};
use crate::phone::Phone;
use crate::sync_fault::SyncFault;

/// `POST /v1/sync/fault`.
pub async fn post_sync_fault(
    State(phone): State<Phone>,
    JsonBody(fault): JsonBody<SyncFault>,
) -> Result<Json<serde_json::Value>, ApiError> {
    fault.validate().map_err(bad)?;
    let n = phone.with(|s| {
        s.sync_faults.push(fault);
        s.sync_faults.len()
    });
    Ok(Json(serde_json::json!({ "sync_faults": n })))
}

/// `DELETE /v1/sync/fault`.
pub async fn delete_sync_faults(State(phone): State<Phone>) -> StatusCode {
    phone.with(|s| s.sync_faults.clear());
    StatusCode::NO_CONTENT
}

/// `GET /v1/media`.
pub async fn get_media(State(phone): State<Phone>) -> Json<serde_json::Value> {
    let indexed = phone.with(|s| s.media.paths());
    Json(serde_json::json!({ "indexed": indexed }))
}
