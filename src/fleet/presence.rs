//! Presence: the box registers itself (`boxes/<box>`: name, base URL, version) and its phones
//! (`phones/<box>/<hex serial>`: serial, model, state, bound) under one lease of the fleet TTL,
//! renewed every third of it. A phone key is written only when what it says changes, so a
//! steady box costs one keepalive per TTL/3 and nothing per phone (`docs/fleet.md`, sizing);
//! a box holding bindings also checks their keys each round, in one read-only transaction
//! ([`Fleet::check_held`]), so a binding whose key was deleted or taken over is known lost
//! (every tool refused) without an etcd read per tool call.
//!
//! While etcd does not answer, the loop retries every second (at most a third of the TTL); a
//! keepalive answered with no TTL means the lease expired (the box was cut off longer than
//! the TTL): a new lease is granted, everything is written again, and [`super::reconcile`]
//! takes the bindings' keys again — automatic re-registration, logged at `info` with the box's
//! name and the etcd endpoint that answered (never a key).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::etcd::{b64, kvs_of, Kv};
use super::{box_key, lock, phone_key, Fleet};

/// One phone as the box reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhonePresence {
    /// Its name (`ro.serialno`, or `ro.serialno#N`).
    pub serial: String,
    /// `ro.product.model` (empty while unknown).
    pub model: String,
    /// adb's word for its state (`device`, `offline`, `unauthorized`, …).
    pub state: String,
}

/// The phones the box sees now (from the inventory).
pub type PhoneList = Arc<dyn Fn() -> Vec<PhonePresence> + Send + Sync>;

/// What the box says of itself.
#[derive(Debug, Clone)]
pub struct BoxInfo {
    /// `http://HOST:PORT` (or https) of this box's connector.
    pub base_url: String,
    /// The connector's version.
    pub version: String,
}

/// Runs the presence of `fleet` until `shutdown`: register, keep alive, write phone changes
/// (also when `changes` ticks), re-register after an outage. On shutdown the lease is revoked,
/// so a box stopped cleanly leaves the fleet view at once.
pub async fn run(
    fleet: Arc<Fleet>,
    info: BoxInfo,
    phones: PhoneList,
    mut changes: tokio::sync::watch::Receiver<u64>,
    shutdown: CancellationToken,
) {
    let ttl = fleet.config.ttl;
    let period = (ttl / 3).max(Duration::from_millis(500));
    let retry = period.min(Duration::from_secs(1));
    let mut written: HashMap<String, Vec<u8>> = HashMap::new();
    loop {
        let ok = step(&fleet, &info, &phones, &mut written).await;
        let wait = if ok { period } else { retry };
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(wait) => {}
            // A phone came or went: written at once, keepalive included (cheap).
            changed = changes.changed() => if changed.is_err() {
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    _ = tokio::time::sleep(wait) => {}
                }
            },
        }
    }
    let lease = lock(&fleet.inner).lease.take();
    if let Some(lease) = lease {
        if fleet.client.lease_revoke(lease).await.is_ok() {
            tracing::info!(box_name = %fleet.box_name(), "left the fleet (lease revoked)");
        }
    }
}

/// One round: lease (grant or keepalive), reconcile after a return, phones. `false` when etcd
/// did not answer.
async fn step(
    fleet: &Arc<Fleet>,
    info: &BoxInfo,
    phones: &PhoneList,
    written: &mut HashMap<String, Vec<u8>>,
) -> bool {
    let (lease, was_online) = {
        let inner = lock(&fleet.inner);
        (inner.lease, inner.online)
    };
    let fresh_lease = match lease {
        Some(id) => match fleet.client.lease_keepalive(id, fleet.config.ttl / 3).await {
            Ok(ttl) if ttl > 0 => {
                if !was_online {
                    // Back after an outage shorter than the TTL: same lease, same keys.
                    tracing::info!(box_name = %fleet.box_name(), etcd = %fleet.client.answering(),
                        offline_secs = offline_secs(fleet),
                        "back in the fleet: etcd answers again, lease still alive; taking the bindings' keys again");
                }
                false
            }
            Ok(_) => {
                tracing::warn!(box_name = %fleet.box_name(), "fleet lease expired while etcd was not reachable: registering again");
                lock(&fleet.inner).lease = None;
                return register(fleet, info, written).await.is_some()
                    && finish(fleet, phones, written, true).await;
            }
            Err(e) => {
                fleet.set_offline(&e);
                return false;
            }
        },
        None => match register(fleet, info, written).await {
            Some(_) => true,
            None => return false,
        },
    };
    finish(fleet, phones, written, fresh_lease || !was_online).await
}

/// Grants a lease and writes the box key — only if no other connector holds it: the key is
/// created in one transaction comparing its create revision with 0, so a second connector
/// started with the same `--box` never takes over the first's presence or bindings (it stays
/// out of the fleet, [`Fleet::name_taken`], and registers once the holder's lease is gone —
/// within the TTL when the holder died). The lease id, or `None` when etcd did not answer or
/// the name is taken.
async fn register(
    fleet: &Arc<Fleet>,
    info: &BoxInfo,
    written: &mut HashMap<String, Vec<u8>>,
) -> Option<i64> {
    let client = &fleet.client;
    let key = box_key(fleet.box_name());
    // A look first, so a box waiting for its name grants no lease per round. The key of this
    // data dir's previous process (killed, restarted within the TTL) is taken over: compare
    // on its mod revision instead of its absence.
    let compare = match client.get(&key, super::etcd::REQUEST_DEADLINE).await {
        Ok(Some(kv)) if is_mine(fleet, &kv) => json!({"key": b64(key.as_bytes()), "target": "MOD",
            "result": "EQUAL", "mod_revision": kv.mod_revision.to_string()}),
        Ok(Some(kv)) => {
            name_taken(fleet, &kv);
            return None;
        }
        Ok(None) => json!({"key": b64(key.as_bytes()), "target": "CREATE", "result": "EQUAL",
                           "create_revision": "0"}),
        Err(e) => {
            fleet.set_offline(&e);
            return None;
        }
    };
    let id = match client.lease_grant(fleet.config.ttl.as_secs().max(1)).await {
        Ok(id) => id,
        Err(e) => {
            fleet.set_offline(&e);
            return None;
        }
    };
    let value = json!({"box": fleet.box_name(), "base_url": info.base_url,
                       "version": info.version, "ttl_secs": fleet.config.ttl.as_secs(),
                       "instance": fleet.instance()})
    .to_string();
    let created = client
        .txn(json!({
            "compare": [compare],
            "success": [{"request_put": {"key": b64(key.as_bytes()), "value": b64(value.as_bytes()),
                                         "lease": id.to_string()}}],
            "failure": [{"request_range": {"key": b64(key.as_bytes())}}]}))
        .await;
    match created {
        Ok((true, _, _)) => {}
        Ok((false, _, responses)) => {
            let _ = client.lease_revoke(id).await;
            if let Some(kv) = responses
                .first()
                .and_then(|r| kvs_of(&r["response_range"]).into_iter().next())
            {
                name_taken(fleet, &kv);
            }
            return None;
        }
        Err(e) => {
            let _ = client.lease_revoke(id).await;
            fleet.set_offline(&e);
            return None;
        }
    }
    written.clear();
    fleet.set_name_taken(None);
    let again = {
        let mut inner = lock(&fleet.inner);
        inner.lease = Some(id);
        inner
            .registered_at
            .replace(std::time::SystemTime::now())
            .is_some()
    };
    // The endpoint is a URL without credentials (`Endpoint::parse` refuses them); no key.
    if again {
        tracing::info!(box_name = %fleet.box_name(), etcd = %client.answering(),
            ttl_secs = fleet.config.ttl.as_secs(), offline_secs = offline_secs(fleet),
            "registered in the fleet again (new lease): taking the bindings' keys again");
    } else {
        tracing::info!(box_name = %fleet.box_name(), etcd = %client.answering(),
            ttl_secs = fleet.config.ttl.as_secs(), "registered in the fleet");
    }
    Some(id)
}

/// Seconds since etcd last answered a presence round (0 before it ever did).
fn offline_secs(fleet: &Fleet) -> u64 {
    lock(&fleet.inner)
        .last_answer
        .and_then(|t| t.elapsed().ok())
        .map_or(0, |d| d.as_secs())
}

/// Whether box key `kv` was written by this connector's data dir (a previous process of it).
fn is_mine(fleet: &Fleet, kv: &Kv) -> bool {
    let value = serde_json::from_slice::<serde_json::Value>(&kv.value).unwrap_or_default();
    !fleet.instance().is_empty()
        && value.get("instance").and_then(|v| v.as_str()) == Some(fleet.instance())
}

/// Records that `kv`, this box's key, is another connector's (etcd answered: online).
fn name_taken(fleet: &Fleet, kv: &Kv) {
    let holder = serde_json::from_slice::<serde_json::Value>(&kv.value).unwrap_or_default();
    let text = |f: &str| {
        holder
            .get(f)
            .and_then(|v| v.as_str())
            .unwrap_or("?")
            .to_string()
    };
    lock(&fleet.inner).online = true;
    fleet.set_name_taken(Some(format!(
        "box name {} is already registered in the fleet by another running connector ({}, version {}): this connector stays out of the fleet (no presence, no fleet claims) until that name is free; give each box its own --box name, or stop the other connector",
        fleet.box_name(),
        text("base_url"),
        text("version"),
    )));
}

/// Marks the box online, reconciles when it (re)joined — else checks that its bindings' keys
/// are still its own ([`Fleet::check_held`]: one read a round while it holds any) — and
/// writes the phones.
async fn finish(
    fleet: &Arc<Fleet>,
    phones: &PhoneList,
    written: &mut HashMap<String, Vec<u8>>,
    rejoined: bool,
) -> bool {
    {
        let mut inner = lock(&fleet.inner);
        inner.online = true;
        inner.last_error = None;
        inner.last_answer = Some(std::time::SystemTime::now());
    }
    if rejoined {
        super::reconcile::run(fleet).await;
    } else {
        fleet.check_held().await;
    }
    write_phones(fleet, phones, written).await
}

/// Writes the phone keys that changed and deletes those of phones gone. `false` when etcd did
/// not answer (the rest is written next round).
async fn write_phones(
    fleet: &Arc<Fleet>,
    phones: &PhoneList,
    written: &mut HashMap<String, Vec<u8>>,
) -> bool {
    let Some(lease) = lock(&fleet.inner).lease else {
        return false;
    };
    let bound = fleet.bound_serials();
    let mut want: HashMap<String, Vec<u8>> = HashMap::new();
    for p in phones() {
        let value = json!({"serial": p.serial, "model": p.model, "state": p.state,
                           "bound": bound.contains(&p.serial), "box": fleet.box_name()});
        want.insert(
            phone_key(fleet.box_name(), &p.serial),
            value.to_string().into_bytes(),
        );
    }
    for (key, value) in &want {
        if written.get(key) == Some(value) {
            continue;
        }
        if let Err(e) = fleet.client.put(key, value, lease).await {
            fleet.set_offline(&e);
            return false;
        }
        written.insert(key.clone(), value.clone());
    }
    let gone: Vec<String> = written
        .keys()
        .filter(|k| !want.contains_key(*k))
        .cloned()
        .collect();
    for key in gone {
        if let Err(e) = fleet.client.delete(&key).await {
            fleet.set_offline(&e);
            return false;
        }
        written.remove(&key);
    }
    true
}
