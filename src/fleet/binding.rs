//! Fleet-unique bindings: the phone's key `/xagent-adb/v1/bindings/<hex serial>` is taken in
//! one etcd transaction that compares its create revision with 0 (no such key) and puts
//! `{"box": NAME, "channel": ID, "since_ms": MS}` attached to the box's lease. Whoever's put
//! created the key holds the phone; the key's **create revision** is the binding's fencing
//! token: it changes whenever the key is deleted (logout, lease expiry) and taken again, so a
//! box that finds another create revision (or another box) under the key no longer holds the
//! phone and stops side effects on it ([`check`]).

use serde_json::{json, Value};

use super::etcd::{b64, kvs_of, EtcdClient, EtcdError, Kv};

/// Why [`take`] did not take the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TakeError {
    /// Another box holds the phone: its name.
    Elsewhere(String),
    /// The store did not answer or refused.
    Store(EtcdError),
}

/// What [`check`] found under a held key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fence {
    /// The key is still this box's, with the same token.
    Held,
    /// The key is gone (`None`) or held by the named box / under another token.
    Lost(Option<String>),
}

/// The box named in a binding key's value (`?` when unreadable).
pub fn holder(kv: &Kv) -> String {
    serde_json::from_slice::<Value>(&kv.value)
        .ok()
        .and_then(|v| v.get("box").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

fn create_is(key: &str, revision: i64) -> Value {
    json!({"key": b64(key.as_bytes()), "target": "CREATE", "result": "EQUAL",
           "create_revision": revision.to_string()})
}

fn put(key: &str, value: &[u8], lease: i64) -> Value {
    json!({"request_put": {"key": b64(key.as_bytes()), "value": b64(value), "lease": lease.to_string()}})
}

fn range(key: &str) -> Value {
    json!({"request_range": {"key": b64(key.as_bytes())}})
}

/// Takes `key` for box `me` (channel `channel`) under `lease`; returns the fencing token (the
/// key's create revision). A key this box already holds (left by this box's previous lease,
/// e.g. across a restart within the TTL) is put again under `lease` keeping its token.
/// Errors: [`TakeError::Elsewhere`] naming the holder, [`TakeError::Store`].
pub async fn take(
    client: &EtcdClient,
    key: &str,
    me: &str,
    channel: &str,
    lease: i64,
) -> Result<i64, TakeError> {
    let value = json!({"box": me, "channel": channel, "since_ms": crate::protocol::now_ms()})
        .to_string()
        .into_bytes();
    // Two rounds: the key may vanish between a failed compare and the next look.
    for _ in 0..2 {
        let (won, revision, responses) = client
            .txn(
                json!({"compare": [create_is(key, 0)], "success": [put(key, &value, lease)],
                        "failure": [range(key)]}),
            )
            .await
            .map_err(TakeError::Store)?;
        if won {
            return Ok(revision);
        }
        let Some(kv) = responses
            .first()
            .map(|r| kvs_of(&r["response_range"]))
            .and_then(|kvs| kvs.into_iter().next())
        else {
            continue;
        };
        let owner = holder(&kv);
        if owner != me {
            return Err(TakeError::Elsewhere(owner));
        }
        if kv.lease == lease {
            return Ok(kv.create_revision);
        }
        let (kept, _, _) = client
            .txn(json!({"compare": [create_is(key, kv.create_revision)],
                        "success": [put(key, &value, lease)], "failure": []}))
            .await
            .map_err(TakeError::Store)?;
        if kept {
            return Ok(kv.create_revision);
        }
    }
    Err(TakeError::Store(EtcdError::Refused(
        "the binding key changed twice while it was taken; claim again".into(),
    )))
}

/// Deletes `key` if it still carries `token` (never another box's binding). Errors:
/// [`EtcdError`].
pub async fn release(client: &EtcdClient, key: &str, token: i64) -> Result<(), EtcdError> {
    let delete = json!({"request_delete_range": {"key": b64(key.as_bytes())}});
    client
        .txn(json!({"compare": [create_is(key, token)], "success": [delete], "failure": []}))
        .await
        .map(drop)
}

/// Whether box `me` still holds `key` under `token`, read within `deadline`. Errors:
/// [`EtcdError`] (the caller decides what an unreachable store means).
pub async fn check(
    client: &EtcdClient,
    key: &str,
    me: &str,
    token: i64,
    deadline: std::time::Duration,
) -> Result<Fence, EtcdError> {
    Ok(match client.get(key, deadline).await? {
        None => Fence::Lost(None),
        Some(kv) if kv.create_revision == token && holder(&kv) == me => Fence::Held,
        Some(kv) => Fence::Lost(Some(holder(&kv))),
    })
}

/// Most compares in one [`check_all`] transaction (etcd's `--max-txn-ops` is 128 by default;
/// each key takes one compare and one range).
const CHECK_CHUNK: usize = 64;

/// Whether box `me` still holds each of `held` (key, token), in one transaction per
/// [`CHECK_CHUNK`] keys: compares only when every key is held (the steady case), the ranges
/// of the keys when one is not. Returns the keys found lost, each with what [`check`] would
/// say. Errors: [`EtcdError`].
pub async fn check_all(
    client: &EtcdClient,
    me: &str,
    held: &[(String, i64)],
) -> Result<Vec<(String, Option<String>)>, EtcdError> {
    let mut lost = Vec::new();
    for chunk in held.chunks(CHECK_CHUNK) {
        let compare: Vec<Value> = chunk.iter().map(|(k, t)| create_is(k, *t)).collect();
        let failure: Vec<Value> = chunk.iter().map(|(k, _)| range(k)).collect();
        let (all_held, _, responses) = client
            .txn(json!({"compare": compare, "success": [], "failure": failure}))
            .await?;
        if all_held {
            continue;
        }
        for ((key, token), response) in chunk.iter().zip(&responses) {
            match kvs_of(&response["response_range"]).into_iter().next() {
                None => lost.push((key.clone(), None)),
                Some(kv) if kv.create_revision == *token && holder(&kv) == me => {}
                Some(kv) => lost.push((key.clone(), Some(holder(&kv)))),
            }
        }
    }
    Ok(lost)
}
