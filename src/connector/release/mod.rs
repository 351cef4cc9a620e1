//! Phones handed back clean (issue 21 §3, device-profile section `[release]`): what tools
//! change on a bound phone is recorded as they run ([`changes`], persisted in
//! [`crate::store::release`]); when the binding ends (`auth.logout`, lease expiry) and the
//! phone's `[release]` policy has something to undo ([`steps::plan`]), the phone is marked
//! pending release in the same transaction that removes the binding, and a tracked task runs
//! the steps once the phone is attached. Until it finished, a claim of the phone is refused
//! with `device_releasing` (retryable). Each step has its own deadline inside the release's
//! one, is logged (masked serial), and its outcome is kept for `check`, `devices` and the
//! console ([`Releases::views`]). A restart (even `kill -9`) mid-binding or mid-release runs
//! the release again at start.
//!
//! Models: STF's device cleanup after a user releases a phone, AWS Device Farm's instance
//! profiles (reboot, app and package cleanup between sessions).

pub mod changes;
pub mod steps;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

use super::lock;
use crate::adb::DeviceLink;
use crate::device::inventory::Inventory;
use crate::device::parse::devices::DeviceState;
use crate::device::policy::{PhoneFacts, Profiles, ReleasePolicy};
use crate::lifecycle::Lifecycle;
use crate::protocol::descriptor::mask_serial;
use crate::protocol::now_ms;
use crate::store::release::{ChangeRecord, ReleaseOutcome, StepOutcome};
use crate::store::{Store, StoreError};

/// Deadline of reading a setting before a tool changes it (outside the tool's own deadline:
/// one short `settings get` the first time a key is changed on a binding).
pub const BEFORE_READ_DEADLINE: Duration = Duration::from_secs(3);
/// How often a pending release looks for its phone.
const ATTACH_POLL: Duration = Duration::from_millis(250);
/// Output read from one release command (bytes).
const OUTPUT_LIMIT: usize = 64 * 1024;

/// A phone's hand-back as `devices`, `check` and the console show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ReleaseView {
    /// The phone.
    pub serial: String,
    /// `releasing` (steps pending or running: not claimable), `clean` (the last release ran
    /// every step), `failed` (a step failed: see `failed_steps`).
    pub state: String,
    /// When the last release finished, Unix ms (`null` while releasing).
    pub finished_ms: Option<i64>,
    /// The failed steps of the last release, with why.
    pub failed_steps: Vec<StepOutcome>,
}

/// How long the failed steps of a phone's last release stay a problem in `check` (exit
/// status 1): a later release replaces them (clean, or its own failures); with none, after
/// this they are a note with their time, not a problem for ever.
pub const FAILURE_SHOWN: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

impl ReleaseView {
    /// Whether the failed steps are a problem at `now_ms` (Unix ms): some failed, within
    /// [`FAILURE_SHOWN`] of when the release finished.
    pub fn failure_current(&self, now_ms: i64) -> bool {
        let shown = i64::try_from(FAILURE_SHOWN.as_millis()).unwrap_or(i64::MAX);
        !self.failed_steps.is_empty()
            && self
                .finished_ms
                .is_some_and(|at| now_ms.saturating_sub(at) < shown)
    }
}

/// The releases of one connector; cheap to clone.
#[derive(Clone)]
pub struct Releases {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    inventory: Inventory,
    lifecycle: Lifecycle,
    /// serial → changes recorded (the store's rows, in memory).
    changes: Mutex<HashMap<String, Vec<ChangeRecord>>>,
    /// Phones whose release has not finished (not claimable).
    pending: Mutex<HashSet<String>>,
    /// serial → its last release.
    outcomes: Mutex<HashMap<String, ReleaseOutcome>>,
    /// The fleet this box is a member of: a release runs only while this box still holds the
    /// phone's fleet key ([`crate::fleet::Fleet::fence`]) and gives the key back when it ends.
    fleet: std::sync::OnceLock<Arc<crate::fleet::Fleet>>,
}

impl Releases {
    /// The releases restored from `store`: changes, pending phones and outcomes. Pending
    /// releases are started by [`Releases::resume`]. Errors: the store's.
    pub async fn load(
        store: Store,
        inventory: Inventory,
        lifecycle: Lifecycle,
    ) -> Result<Releases, StoreError> {
        let mut changes: HashMap<String, Vec<ChangeRecord>> = HashMap::new();
        for c in store.release_changes_all().await? {
            changes.entry(c.serial.clone()).or_default().push(c);
        }
        let pending = store
            .release_pending_all()
            .await?
            .into_iter()
            .map(|(s, _)| s)
            .collect();
        let outcomes = store
            .release_outcomes_all()
            .await?
            .into_iter()
            .map(|o| (o.serial.clone(), o))
            .collect();
        Ok(Releases {
            inner: Arc::new(Inner {
                store,
                inventory,
                lifecycle,
                changes: Mutex::new(changes),
                pending: Mutex::new(pending),
                outcomes: Mutex::new(outcomes),
                fleet: std::sync::OnceLock::new(),
            }),
        })
    }

    /// Makes releases fleet-aware (`--fleet-etcd`): a binding's fleet key is kept while its
    /// release runs, so other boxes see the phone bound (not free mid-hand-back), and a
    /// release whose key another box took (the binding was lost) runs no step on that box's
    /// phone. Set once, by [`super::Connector::with_fleet`].
    pub fn set_fleet(&self, fleet: Arc<crate::fleet::Fleet>) {
        let _ = self.inner.fleet.set(fleet);
    }

    /// Starts the releases a restart found pending.
    pub fn resume(&self, profiles: &Profiles) {
        let pending: Vec<String> = lock(&self.inner.pending).iter().cloned().collect();
        for serial in pending {
            tracing::info!(serial_hint = %mask_serial(&serial), "release pending since before the restart: running it");
            self.spawn(serial, profiles.clone());
        }
    }

    /// Whether `serial` is being released (a claim must be refused, `device_releasing`).
    pub fn is_releasing(&self, serial: &str) -> bool {
        lock(&self.inner.pending).contains(serial)
    }

    /// Whether ending a binding of `serial` needs a release under `profiles` (its policy
    /// has a step for what was recorded, or reboots).
    pub fn needed(&self, serial: &str, profiles: &Profiles) -> bool {
        let policy = policy_of(&self.inner.inventory, serial, profiles);
        let changes = lock(&self.inner.changes)
            .get(serial)
            .cloned()
            .unwrap_or_default();
        !steps::plan(&policy, &changes).is_empty()
    }

    /// Marks `serial` pending (the store already is, in the binding's removal) and runs its
    /// release on a tracked task. Call under the connector's write gate, before the binding
    /// leaves the memory, so no claim slips in between.
    pub fn begin(&self, serial: &str, profiles: &Profiles) {
        lock(&self.inner.pending).insert(serial.to_string());
        self.spawn(serial.to_string(), profiles.clone());
    }

    /// The settings a call is about to change that this phone has no value recorded for:
    /// read now (`settings get`, [`BEFORE_READ_DEADLINE`]) so the release can put them back.
    pub async fn read_before(
        &self,
        serial: &str,
        tool_id: &str,
        args: &Value,
        link: &DeviceLink,
    ) -> HashMap<String, Option<String>> {
        let mut out = HashMap::new();
        for (ns, key) in changes::settings_touched(tool_id, args) {
            let item = format!("{ns} {key}");
            let known = lock(&self.inner.changes).get(serial).is_some_and(|c| {
                c.iter()
                    .any(|c| c.kind == changes::Kind::Setting.as_str() && c.item == item)
            });
            if known {
                continue;
            }
            let cmd = crate::device::shell_quote::command_line(&["settings", "get", &ns, &key]);
            let value = match link.shell(&cmd, BEFORE_READ_DEADLINE, 4096).await {
                Ok(o) if o.exit_code.is_none_or(|c| c == 0) => {
                    let text = o.stdout_text();
                    let v = text.trim();
                    (!v.is_empty() && !v.contains(' ')).then(|| v.to_string())
                }
                _ => None,
            };
            out.insert(item, value);
        }
        out
    }

    /// Records what a finished call changed (`result`: its output, `None` if it failed), with
    /// the settings' values read before it ([`Releases::read_before`]). Committed to the store
    /// before it returns; a store failure is logged (the call already ran).
    pub async fn record(
        &self,
        serial: &str,
        channel_id: &str,
        tool_id: &str,
        args: &Value,
        result: Option<&Value>,
        before: &HashMap<String, Option<String>>,
    ) {
        // Any side-effecting call (only those are recorded) may have left another screen.
        let used = changes::Change {
            kind: changes::Kind::Used,
            item: String::new(),
        };
        for change in changes::changes_made(tool_id, args, result)
            .into_iter()
            .chain([used])
        {
            let record = ChangeRecord {
                serial: serial.to_string(),
                channel_id: channel_id.to_string(),
                kind: change.kind.as_str().to_string(),
                item: change.item.clone(),
                before: before.get(&change.item).cloned().flatten(),
                recorded_ms: now_ms(),
            };
            {
                let mut all = lock(&self.inner.changes);
                let list = all.entry(serial.to_string()).or_default();
                if list
                    .iter()
                    .any(|c| c.kind == record.kind && c.item == record.item)
                {
                    continue;
                }
                list.push(record.clone());
            }
            if let Err(e) = self.inner.store.release_change_record(record).await {
                tracing::error!(error = %e, tool = tool_id, "could not record a change for the release");
            }
        }
    }

    /// Every phone being released or released before, sorted by serial.
    pub fn views(&self) -> Vec<ReleaseView> {
        let pending = lock(&self.inner.pending).iter().cloned().collect();
        let outcomes = lock(&self.inner.outcomes).values().cloned().collect();
        views_of(pending, outcomes)
    }

    fn spawn(&self, serial: String, profiles: Profiles) {
        let me = self.clone();
        let shutdown = self.inner.lifecycle.shutdown().clone();
        self.inner.lifecycle.spawn(async move {
            tokio::select! {
                // Left pending in the store: the next start runs it again.
                _ = shutdown.cancelled() => {}
                _ = me.run(&serial, &profiles) => {}
            }
        });
    }

    /// Waits for the phone, runs the plan, records the outcome, and makes the phone claimable.
    async fn run(&self, serial: &str, profiles: &Profiles) {
        let hint = mask_serial(serial);
        let link = loop {
            match self.inner.inventory.get(serial) {
                Some(p) if p.state == DeviceState::Device => break p.link,
                _ => tokio::time::sleep(ATTACH_POLL).await,
            }
        };
        let policy = policy_of(&self.inner.inventory, serial, profiles);
        let changes = lock(&self.inner.changes)
            .get(serial)
            .cloned()
            .unwrap_or_default();
        let mut plan = steps::plan(&policy, &changes);
        let fleet = self.inner.fleet.get();
        if let Some(fleet) = fleet {
            if fleet.fence(serial).await.is_err() {
                // Another box holds the phone now: its user's session is not ours to clean.
                tracing::warn!(serial_hint = %hint, "release skipped: the fleet binding was lost, another box holds the phone");
                plan.clear();
            }
        }
        tracing::info!(serial_hint = %hint, steps = plan.len(), "release started");
        let outcome = ReleaseOutcome {
            serial: serial.to_string(),
            finished_ms: 0,
            steps: run_plan(&self.inner.inventory, serial, &link, &plan, &policy, &hint).await,
        };
        let outcome = ReleaseOutcome {
            finished_ms: now_ms(),
            ..outcome
        };
        let failed = outcome.failed().count();
        if let Err(e) = self.inner.store.release_finish(outcome.clone()).await {
            tracing::error!(serial_hint = %hint, error = %e, "could not record the release; it runs again at the next start");
        }
        lock(&self.inner.changes).remove(serial);
        lock(&self.inner.outcomes).insert(serial.to_string(), outcome);
        lock(&self.inner.pending).remove(serial);
        if let Some(fleet) = fleet {
            fleet.release(serial).await;
        }
        if failed == 0 {
            tracing::info!(serial_hint = %hint, "release finished: phone handed back clean");
        } else {
            tracing::warn!(serial_hint = %hint, failed, "release finished with failed steps (see `check`)");
        }
    }
}

/// The `[release]` policy of the phone `serial` (its facts from the inventory; the default
/// profile's when it is not attached).
fn policy_of(inventory: &Inventory, serial: &str, profiles: &Profiles) -> ReleasePolicy {
    let facts = inventory
        .get(serial)
        .map(|p| PhoneFacts {
            manufacturer: p.manufacturer,
            model: p.model,
            sdk: p.sdk,
        })
        .unwrap_or_default();
    profiles
        .for_phone(&facts)
        .map(|p| p.release)
        .unwrap_or_else(|_| profiles.card_policy().release)
}

/// Runs every step in order, each within `step_timeout_secs` and what is left of
/// `deadline_secs`; a step out of time is failed, the later ones too ("release deadline").
/// The reboot step ends when the phone is back ([`wait_back`], within what is left of
/// `deadline_secs`: a phone takes longer to boot than a step's deadline), so the phone is not
/// claimable while it boots.
async fn run_plan(
    inventory: &Inventory,
    serial: &str,
    link: &DeviceLink,
    plan: &[steps::Step],
    policy: &ReleasePolicy,
    hint: &str,
) -> Vec<StepOutcome> {
    let end = Instant::now() + Duration::from_secs(policy.deadline_secs.max(1));
    let mut out = Vec::with_capacity(plan.len());
    for step in plan {
        let started = Instant::now();
        let left = end.saturating_duration_since(started);
        let budget = left.min(Duration::from_secs(policy.step_timeout_secs.max(1)));
        let message = if budget.is_zero() {
            Some(format!(
                "not run: the release's deadline of {} s ran out",
                policy.deadline_secs
            ))
        } else {
            match run_step(link, step, started + budget).await {
                StepEnd::Done if step.is_reboot() => wait_back(inventory, serial, true, end).await,
                StepEnd::DoneAnswering if step.is_reboot() => {
                    wait_back(inventory, serial, false, end).await
                }
                StepEnd::Done | StepEnd::DoneAnswering => None,
                StepEnd::Failed(why) => Some(why),
            }
        };
        let ok = message.is_none();
        let elapsed_ms = started.elapsed().as_millis() as u64;
        match &message {
            None => {
                tracing::info!(serial_hint = %hint, step = step.name, elapsed_ms, "release step done")
            }
            Some(m) => {
                tracing::warn!(serial_hint = %hint, step = step.name, elapsed_ms, why = %m, "release step failed")
            }
        }
        out.push(StepOutcome {
            step: step.name.to_string(),
            ok,
            message,
        });
    }
    out
}

/// How a step's commands ended.
enum StepEnd {
    /// All succeeded (the reboot: the phone dropped its transport, as it does going down).
    Done,
    /// All succeeded and the phone answered the last one (a reboot not yet begun).
    DoneAnswering,
    /// The first failure's words.
    Failed(String),
}

/// How long [`wait_back`] gives one `getprop` on the phone.
const BOOT_PROBE_DEADLINE: Duration = Duration::from_secs(3);

/// Waits until phone `serial` is back from its reboot: it went down (`went_down`: its
/// transport already dropped; else seen gone, not `device`, or not answering), then its route
/// is `device` again and Android says it finished booting (`sys.boot_completed` = 1, set by
/// `ActivityManagerService.finishBooting` once the launcher can start; AOSP
/// `frameworks/base/services/core/java/com/android/server/am/ActivityManagerService.java`).
/// `None` when back; why not when `until` passed first.
async fn wait_back(
    inventory: &Inventory,
    serial: &str,
    mut went_down: bool,
    until: Instant,
) -> Option<String> {
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Some(if went_down {
                "reboot: the phone did not come back before the release's deadline".into()
            } else {
                "reboot: the phone never went down before the release's deadline".into()
            });
        }
        let booted = match inventory.get(serial) {
            Some(p) if p.state == DeviceState::Device => {
                match p
                    .link
                    .shell(
                        "getprop sys.boot_completed",
                        left.min(BOOT_PROBE_DEADLINE),
                        64,
                    )
                    .await
                {
                    Ok(out) => out.stdout_text().trim() == "1",
                    Err(_) => {
                        went_down = true;
                        false
                    }
                }
            }
            _ => {
                went_down = true;
                false
            }
        };
        if went_down && booted {
            return None;
        }
        tokio::time::sleep(ATTACH_POLL.min(left)).await;
    }
}

/// Runs a step's commands until `until`; the first failure's words (`None`: all succeeded).
async fn run_step(link: &DeviceLink, step: &steps::Step, until: Instant) -> StepEnd {
    let mut dropped = false;
    let mut first_failure = None;
    for cmd in &step.commands {
        let left = until.saturating_duration_since(Instant::now());
        let program = cmd
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_matches('\'');
        let failure = if left.is_zero() {
            Some(format!("{program}: the step's deadline ran out"))
        } else {
            match link.shell(cmd, left, OUTPUT_LIMIT).await {
                Ok(out) => refusal(&out).map(|line| format!("{program}: {line}")),
                // The phone drops its transport as it reboots (AOSP `reboot.c` never returns:
                // it sets `sys.powerctl` and waits to be killed): the order was given.
                Err(_) if step.is_reboot() => {
                    dropped = true;
                    None
                }
                Err(e) => Some(format!("{program}: {e}")),
            }
        };
        if first_failure.is_none() {
            first_failure = failure;
        }
    }
    match first_failure {
        Some(why) => StepEnd::Failed(why),
        None if dropped => StepEnd::Done,
        None => StepEnd::DoneAnswering,
    }
}

/// Why a command's output is a failure: a non-zero exit, or (legacy shell, no status) a
/// `Failure`/`Error`/`Exception` line as `pm` and `am` print them; `None` when it worked.
fn refusal(out: &crate::adb::ShellOutput) -> Option<String> {
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        out.stdout_text()
    );
    let line = || {
        text.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("no output")
            .chars()
            .take(200)
            .collect::<String>()
    };
    match out.exit_code {
        Some(0) => None,
        Some(code) => Some(format!("exit status {code}: {}", line())),
        None if text.contains("Failure")
            || text.contains("Error")
            || text.contains("Exception") =>
        {
            Some(line())
        }
        None => None,
    }
}

fn view_of(o: &ReleaseOutcome) -> ReleaseView {
    let failed: Vec<StepOutcome> = o.failed().cloned().collect();
    ReleaseView {
        serial: o.serial.clone(),
        state: if failed.is_empty() { "clean" } else { "failed" }.into(),
        finished_ms: Some(o.finished_ms),
        failed_steps: failed,
    }
}

fn releasing_view(serial: String) -> ReleaseView {
    ReleaseView {
        serial,
        state: "releasing".into(),
        finished_ms: None,
        failed_steps: Vec::new(),
    }
}

/// The views of a stopped connector's store: its pending phones and last outcomes
/// (`devices` / `check` read them when no connector answers on the operator socket).
pub fn views_of(pending: Vec<String>, outcomes: Vec<ReleaseOutcome>) -> Vec<ReleaseView> {
    let pending: HashSet<String> = pending.into_iter().collect();
    let mut views: Vec<ReleaseView> = outcomes
        .iter()
        .filter(|o| !pending.contains(&o.serial))
        .map(view_of)
        .collect();
    views.extend(pending.into_iter().map(releasing_view));
    views.sort_by(|a, b| a.serial.cmp(&b.serial));
    views
}
