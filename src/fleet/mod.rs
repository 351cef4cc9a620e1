//! The fleet: many boxes, one etcd (issue 22, `docs/fleet.md`). Each box keeps its connector,
//! its SQLite, its phones and its tool traffic; etcd holds only what the boxes must agree on:
//!
//! - presence ([`presence`]): the box and its phones under a lease the box keeps alive, so a box
//!   that dies leaves the fleet view when the lease expires (TTL [`DEFAULT_TTL`]);
//! - fleet-unique bindings ([`binding`]): a claim or pairing takes the phone's key in one
//!   transaction before it binds locally; the key's create revision is the fencing token checked
//!   before every side-effecting call ([`Fleet::fence`]);
//! - what happens while etcd is unreachable and when it returns ([`reconcile`]).
//!
//! Keys (all under [`PREFIX`]): `boxes/<box>`, `phones/<box>/<hex serial>`,
//! `bindings/<hex serial>`; values are JSON. Without `--fleet-etcd` there is no [`Fleet`] and
//! nothing changes.

pub mod binding;
pub mod etcd;
pub mod presence;
pub mod reconcile;
pub mod view;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, SystemTime};

use crate::protocol::ErrorCode;

/// Prefix of every fleet key.
pub const PREFIX: &str = "/xagent-adb/v1/";
/// Lease TTL of a box's presence and bindings when `--fleet-ttl-secs` is not given: a box cut
/// off disappears from the fleet view, and its phones become claimable, within this.
pub const DEFAULT_TTL: Duration = Duration::from_secs(10);
/// How long a fence check before a side-effecting call waits for etcd before the call goes on
/// as it would with etcd unreachable.
pub const FENCE_DEADLINE: Duration = Duration::from_millis(500);

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Key of a box's presence.
pub fn box_key(box_name: &str) -> String {
    format!("{PREFIX}boxes/{box_name}")
}

/// Hex of a serial's bytes: any serial (spaces, `#`, `:`) becomes a plain key segment.
pub fn serial_hex(serial: &str) -> String {
    serial.bytes().map(|b| format!("{b:02x}")).collect()
}

/// Key of one phone a box sees.
pub fn phone_key(box_name: &str, serial: &str) -> String {
    format!("{PREFIX}phones/{box_name}/{}", serial_hex(serial))
}

/// Key of a phone's fleet-unique binding.
pub fn binding_key(serial: &str) -> String {
    format!("{PREFIX}bindings/{}", serial_hex(serial))
}

/// Checks a box name: 1 to 64 of `A-Z a-z 0-9 . _ -`. Errors: the rule, in words.
pub fn check_box_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "--box (box) must be 1 to 64 letters, digits, '.', '_' or '-'; got {name:?}"
        ))
    }
}

/// What a claim does while etcd is unreachable (`--fleet-claims`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FleetClaims {
    /// Refuse it with `fleet_unavailable` (retryable): no phone is ever bound on two boxes.
    #[default]
    Fleet,
    /// Bind locally and take the fleet key when etcd returns; a conflict then goes to the
    /// earlier revision and the loser's channel is told (`fleet_binding_lost`).
    Local,
}

/// The fleet settings of `serve`, validated.
#[derive(Clone)]
pub struct FleetConfig {
    /// etcd client endpoints (one cluster).
    pub endpoints: Vec<etcd::Endpoint>,
    /// TLS client config for https endpoints.
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// This box's name (`--box`).
    pub box_name: String,
    /// Lease TTL.
    pub ttl: Duration,
    /// Claims while etcd is unreachable.
    pub claims: FleetClaims,
}

impl std::fmt::Debug for FleetConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetConfig")
            .field("endpoints", &self.endpoints)
            .field("tls", &self.tls.is_some())
            .field("box_name", &self.box_name)
            .field("ttl", &self.ttl)
            .field("claims", &self.claims)
            .finish()
    }
}

/// A binding this box holds (or holds locally, waiting for etcd).
#[derive(Debug, Clone)]
struct Held {
    channel: String,
    /// The fencing token; `None` while bound locally only (taken offline, or restored at
    /// start before the first registration).
    token: Option<i64>,
    /// Set when the key turned out to be another box's: the message the channel is told.
    lost: Option<String>,
}

#[derive(Default)]
struct Inner {
    online: bool,
    lease: Option<i64>,
    held: HashMap<String, Held>,
    /// Keys released while etcd was unreachable: (serial, token), deleted on return.
    releases: Vec<(String, i64)>,
    /// Set while another live connector holds this box's name in the store
    /// ([`presence`]): the message claims are refused with (`fleet_box_name_taken`).
    name_taken: Option<String>,
    /// Why the last exchange with etcd failed (the reason `fleet_unavailable` gives, e.g. a
    /// TLS handshake refused before the first registration).
    last_error: Option<String>,
    /// When this box last registered in the fleet (a lease granted and its box key written);
    /// `None` before the first registration.
    registered_at: Option<SystemTime>,
    /// When etcd last answered a presence round: since then it has not, while offline.
    last_answer: Option<SystemTime>,
}

/// Why the fleet refused to bind a phone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TakeRefusal {
    /// Another box holds it: `phone_bound_elsewhere`, naming the box.
    BoundElsewhere(String),
    /// etcd is unreachable and `--fleet-claims fleet`: `fleet_unavailable` (retryable).
    Unavailable(String),
    /// Another live connector is registered under this box's `--box` name:
    /// `fleet_box_name_taken`, whatever `--fleet-claims` says (binding locally would take the
    /// other connector's phones behind its back).
    BoxNameTaken(String),
}

impl TakeRefusal {
    /// The protocol code and message.
    pub fn code_and_message(&self) -> (ErrorCode, String) {
        match self {
            TakeRefusal::BoundElsewhere(holder) => (
                ErrorCode::PhoneBoundElsewhere,
                format!(
                    "this phone is bound on box {holder} of the fleet; use it through that box's connector, or release it there (auth.logout) and claim again"
                ),
            ),
            TakeRefusal::Unavailable(why) => (
                ErrorCode::FleetUnavailable,
                format!(
                    "the fleet store (etcd) is not reachable, so the phone cannot be bound fleet-wide now: {why}; retry in a few seconds"
                ),
            ),
            TakeRefusal::BoxNameTaken(why) => (ErrorCode::FleetBoxNameTaken, why.clone()),
        }
    }
}

/// The fleet member of this box. Shared as `Arc<Fleet>` by the connector and the presence loop.
pub struct Fleet {
    config: FleetConfig,
    client: etcd::EtcdClient,
    inner: Mutex<Inner>,
    /// Called when a binding is found lost (the connector pushes descriptors again).
    on_lost: OnceLock<Box<dyn Fn() + Send + Sync>>,
    /// Who this connector is across restarts: its data dir's persisted connector id. A box
    /// key carrying it is this data dir's previous process (the data dir's lock lets only one
    /// run), so a restart within the TTL takes its key over instead of waiting it out.
    instance: OnceLock<String>,
}

impl Fleet {
    /// A fleet member with `config` (nothing is sent until [`presence::run`]).
    pub fn new(config: FleetConfig) -> Fleet {
        let client = etcd::EtcdClient::new(config.endpoints.clone(), config.tls.clone());
        Fleet {
            config,
            client,
            inner: Mutex::default(),
            on_lost: OnceLock::new(),
            instance: OnceLock::new(),
        }
    }

    /// Sets what to call when a binding is found lost (once; later calls are ignored).
    pub fn on_lost(&self, f: Box<dyn Fn() + Send + Sync>) {
        let _ = self.on_lost.set(f);
    }

    /// Sets this connector's identity across restarts (once; [`presence`] writes it in the
    /// box key).
    pub fn set_instance(&self, id: &str) {
        let _ = self.instance.set(id.to_string());
    }

    /// This connector's identity across restarts (empty when unset).
    pub fn instance(&self) -> &str {
        self.instance.get().map(String::as_str).unwrap_or("")
    }

    /// This box's name.
    pub fn box_name(&self) -> &str {
        &self.config.box_name
    }

    /// The settings.
    pub fn config(&self) -> &FleetConfig {
        &self.config
    }

    /// The etcd client.
    pub fn client(&self) -> &etcd::EtcdClient {
        &self.client
    }

    /// Whether the last exchange with etcd succeeded.
    pub fn online(&self) -> bool {
        lock(&self.inner).online
    }

    /// Why this box stays out of the fleet, while another live connector holds its name
    /// (`fleet_box_name_taken`'s message); `None` otherwise.
    pub fn name_taken(&self) -> Option<String> {
        lock(&self.inner).name_taken.clone()
    }

    /// Records (`Some`) or clears (`None`) that another connector holds this box's name;
    /// logged once when it starts.
    fn set_name_taken(&self, why: Option<String>) {
        let mut inner = lock(&self.inner);
        if let (Some(why), None) = (&why, &inner.name_taken) {
            tracing::error!(box_name = %self.config.box_name, "{why}");
        }
        inner.name_taken = why;
    }

    /// Why a claim cannot be bound fleet-wide now, `error` being the last etcd error: a box
    /// registered before says since when etcd has not answered and what still works; one never
    /// registered says it is not registered yet.
    fn unavailable_reason(&self, error: Option<&str>) -> String {
        let inner = lock(&self.inner);
        let error = error.or(inner.last_error.as_deref());
        let Some(registered) = inner.registered_at else {
            return match error {
                Some(why) => format!("this box is not registered in the fleet yet: {why}"),
                None => "this box is not registered in the fleet yet".to_string(),
            };
        };
        let at = |t: SystemTime| humantime::format_rfc3339_seconds(t).to_string();
        let since = match inner.last_answer {
            Some(t) => format!(
                "etcd has not answered since {} ({} s ago)",
                at(t),
                t.elapsed().unwrap_or_default().as_secs()
            ),
            None => "etcd has not answered since".to_string(),
        };
        format!(
            "box {} registered in the fleet at {}, but {since}; last etcd error: {}. Still working: the phones already bound on this box (their tools, fenced as before) and auth.logout (its release is sent to etcd when it returns); the box registers again by itself once etcd answers",
            self.config.box_name,
            at(registered),
            error.unwrap_or("none recorded"),
        )
    }

    fn set_offline(&self, why: &dyn std::fmt::Display) {
        let mut inner = lock(&self.inner);
        if inner.online {
            tracing::warn!(error = %why, "fleet store unreachable: bindings held go on; new claims {}",
                match self.config.claims { FleetClaims::Fleet => "are refused (fleet_unavailable)", FleetClaims::Local => "bind locally" });
        }
        inner.online = false;
        inner.last_error = Some(why.to_string());
    }

    /// Records a binding restored from this box's store at start: held locally until the first
    /// registration takes its key ([`reconcile`]).
    pub fn adopt(&self, serial: &str, channel: &str) {
        lock(&self.inner).held.insert(
            serial.to_string(),
            Held {
                channel: channel.to_string(),
                token: None,
                lost: None,
            },
        );
    }

    /// Takes `serial`'s fleet key for `channel` before the connector binds it. Errors:
    /// [`TakeRefusal`]; with `--fleet-claims local` an unreachable store binds locally.
    pub async fn take(&self, serial: &str, channel: &str) -> Result<(), TakeRefusal> {
        let lease = {
            let inner = lock(&self.inner);
            if let Some(why) = &inner.name_taken {
                return Err(TakeRefusal::BoxNameTaken(why.clone()));
            }
            inner.lease.filter(|_| inner.online)
        };
        let token = match lease {
            Some(lease) => {
                let taken = binding::take(
                    &self.client,
                    &binding_key(serial),
                    self.box_name(),
                    channel,
                    lease,
                )
                .await;
                match taken {
                    Ok(token) => Some(token),
                    Err(binding::TakeError::Elsewhere(holder)) => {
                        return Err(TakeRefusal::BoundElsewhere(holder))
                    }
                    Err(binding::TakeError::Store(e @ etcd::EtcdError::Unreachable(_))) => {
                        self.set_offline(&e);
                        self.unbound(channel, self.unavailable_reason(Some(&e.to_string())))?
                    }
                    Err(binding::TakeError::Store(e)) => self.unbound(channel, e.to_string())?,
                }
            }
            // Not registered yet, or etcd did not answer the last exchange.
            None => self.unbound(channel, self.unavailable_reason(None))?,
        };
        lock(&self.inner).held.insert(
            serial.to_string(),
            Held {
                channel: channel.to_string(),
                token,
                lost: None,
            },
        );
        Ok(())
    }

    /// What a claim does when the store could not take its key (`why`): refused with
    /// `fleet_unavailable` (`--fleet-claims fleet`), or bound locally with no token (`local`).
    fn unbound(&self, channel: &str, why: String) -> Result<Option<i64>, TakeRefusal> {
        if self.config.claims == FleetClaims::Fleet {
            return Err(TakeRefusal::Unavailable(why));
        }
        tracing::warn!(channel, "fleet store unreachable: phone bound locally (--fleet-claims local), to be reconciled when it returns");
        Ok(None)
    }

    /// Releases `serial`'s key (logout, or a local bind that failed after the take): deleted
    /// now if etcd answers, else when it returns. Never deletes another box's binding.
    pub async fn release(&self, serial: &str) {
        let held = lock(&self.inner).held.remove(serial);
        let Some(Held {
            token: Some(token),
            lost: None,
            ..
        }) = held
        else {
            return;
        };
        if let Err(e) = binding::release(&self.client, &binding_key(serial), token).await {
            self.set_offline(&e);
            lock(&self.inner).releases.push((serial.to_string(), token));
        }
    }

    /// Releases every binding but those of `releasing` (the connector's lease expired and
    /// dropped them all; a phone being handed back gives its key back when its release ends).
    pub async fn release_all_but(&self, releasing: &[String]) {
        let serials: Vec<String> = lock(&self.inner)
            .held
            .keys()
            .filter(|s| !releasing.contains(s))
            .cloned()
            .collect();
        for serial in serials {
            self.release(&serial).await;
        }
    }

    /// The message of a binding found lost (another box holds the phone now), if it is.
    pub fn lost(&self, serial: &str) -> Option<String> {
        lock(&self.inner)
            .held
            .get(serial)
            .and_then(|h| h.lost.clone())
    }

    /// Marks `serial`'s binding lost (`holder`: the box whose key it is now, `None`: the key
    /// is gone) — only while it still carries `token` when one is given, so a check that
    /// raced a logout and a new claim never fences the new binding. Logs it once (masked
    /// serial hint, channel) and has the descriptors pushed. Returns the message the channel's
    /// calls are refused with, or `None` when the binding changed meanwhile.
    fn mark_lost(&self, serial: &str, holder: Option<&str>, token: Option<i64>) -> Option<String> {
        let message = match holder {
            Some(holder) => format!(
                "fleet_binding_lost: box {holder} holds this phone in the fleet now (its binding came first); this channel's binding is fenced: every tool is refused, observations too; auth.logout, then claim again once box {holder} releases it"
            ),
            None => "fleet_binding_lost: this box's fleet binding of the phone is gone (its key was deleted, or went with an expired lease); every tool is refused, observations too; auth.logout and claim again".to_string(),
        };
        let channel = {
            let mut inner = lock(&self.inner);
            let h = inner.held.get_mut(serial)?;
            if let Some(already) = &h.lost {
                return Some(already.clone());
            }
            if token.is_some_and(|t| h.token != Some(t)) {
                return None;
            }
            h.lost = Some(message.clone());
            h.channel.clone()
        };
        tracing::warn!(
            box_holding = holder.unwrap_or("-"),
            serial_hint = %crate::protocol::descriptor::mask_serial(serial),
            channel = %channel,
            "fleet binding lost: every tool on it is refused"
        );
        if let Some(f) = self.on_lost.get() {
            f();
        }
        Some(message)
    }

    /// Checks every binding this box holds under a token against etcd (one transaction for
    /// all: [`binding::check_all`]) and marks the lost ones, so the channel of a binding whose
    /// key was deleted or taken over is refused every tool — observations included — without
    /// an etcd read per call. Run by the presence loop each round ([`presence`]). An etcd
    /// error marks the box offline and changes nothing.
    pub async fn check_held(&self) {
        let held: Vec<(String, String, i64)> = lock(&self.inner)
            .held
            .iter()
            .filter(|(_, h)| h.lost.is_none())
            .filter_map(|(s, h)| h.token.map(|t| (s.clone(), binding_key(s), t)))
            .collect();
        if held.is_empty() {
            return;
        }
        let keys: Vec<(String, i64)> = held.iter().map(|(_, k, t)| (k.clone(), *t)).collect();
        match binding::check_all(&self.client, self.box_name(), &keys).await {
            Ok(lost) => {
                for (key, holder) in lost {
                    if let Some((serial, _, token)) = held.iter().find(|(_, k, _)| *k == key) {
                        self.mark_lost(serial, holder.as_deref(), Some(*token));
                    }
                }
            }
            Err(e) => self.set_offline(&e),
        }
    }

    /// The fence before a side-effecting call on `serial`: `Err(message)` when this box no
    /// longer holds the phone's key (`fleet_binding_lost`), read from etcd (≤
    /// [`FENCE_DEADLINE`]). With etcd unreachable (or the binding still local, waiting for it)
    /// the call goes on: bindings that exist keep working. Observing calls read only
    /// [`Fleet::lost`] (no etcd read).
    pub async fn fence(&self, serial: &str) -> Result<(), String> {
        let (token, online) = {
            let inner = lock(&self.inner);
            match inner.held.get(serial) {
                Some(h) if h.lost.is_some() => return Err(h.lost.clone().unwrap_or_default()),
                Some(h) => (h.token, inner.online),
                // Bound before the fleet knew (cannot happen once adopted); nothing to fence.
                None => return Ok(()),
            }
        };
        let Some(token) = token.filter(|_| online) else {
            return Ok(());
        };
        match binding::check(
            &self.client,
            &binding_key(serial),
            self.box_name(),
            token,
            FENCE_DEADLINE,
        )
        .await
        {
            Ok(binding::Fence::Held) => Ok(()),
            Ok(binding::Fence::Lost(holder)) => {
                match self.mark_lost(serial, holder.as_deref(), Some(token)) {
                    Some(message) => Err(message),
                    // Released and taken again meanwhile: that binding is checked next call.
                    None => Ok(()),
                }
            }
            Err(e) => {
                self.set_offline(&e);
                Ok(())
            }
        }
    }

    /// Serials bound on this box and not lost (the presence's `bound`).
    fn bound_serials(&self) -> std::collections::HashSet<String> {
        lock(&self.inner)
            .held
            .iter()
            .filter(|(_, h)| h.lost.is_none())
            .map(|(s, _)| s.clone())
            .collect()
    }
}
