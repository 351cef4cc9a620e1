//! Who may bind a channel to a phone through `adb_device_claim` (`--claim-policy`, config key
//! `claim_policy`), and the pause that throttles guessing of claim codes under policy `code`.

use std::collections::HashMap;
use std::time::Duration;

use serde::Deserialize;

use crate::store::claim_failures::ClaimFailureRecord;
use crate::store::Store;

/// The claim policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ClaimPolicy {
    /// Any attached phone may be claimed (demos, tests, single-tenant boxes).
    Open,
    /// A phone is claimed only with the admin-issued code for its serial (`[claim_codes]`).
    Code,
}

impl ClaimPolicy {
    /// The spelling of the config key `claim_policy` and of `--claim-policy`: `open`, `code`.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimPolicy::Open => "open",
            ClaimPolicy::Code => "code",
        }
    }
}

impl std::fmt::Display for ClaimPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether `policy` with `codes` claim codes lets no phone be claimed: policy `code` (the
/// default) with an empty `[claim_codes]` (`check` calls it a problem, `serve` warns at start
/// and on SIGHUP, and still starts: a reload adding codes makes the box usable).
pub fn no_claim_codes(policy: ClaimPolicy, codes: usize) -> bool {
    policy == ClaimPolicy::Code && codes == 0
}

/// What is wrong when [`no_claim_codes`] holds (`check`'s PROBLEM line, `serve`'s warning).
pub const NO_CLAIM_CODES: &str =
    "claim_policy is \"code\" (the default) and [claim_codes] is empty: no phone can be claimed";

/// The fix of [`NO_CLAIM_CODES`].
pub const NO_CLAIM_CODES_FIX: &str = "give each phone a code at the end of the config file \
     (`[claim_codes]`, then `SERIAL = \"sha256:…\"` from `echo -n CODE | xagent-adb-connector \
     hash-claim-code`) and reload (`systemctl reload xagent-adb-connector`), or set \
     claim_policy = \"open\" (--claim-policy open) on a trusted network";

/// Wrong claim codes allowed per serial before a pause.
pub const CLAIM_FAILURES_ALLOWED: u32 = 5;
/// Pause after too many wrong codes; doubles with each further failure, up to [`CLAIM_PAUSE_MAX`].
pub const CLAIM_PAUSE: Duration = Duration::from_secs(30);
/// Longest pause.
pub const CLAIM_PAUSE_MAX: Duration = Duration::from_secs(3600);
/// A serial with no wrong code for this long starts again from zero.
pub const CLAIM_FAILURES_FORGET: Duration = Duration::from_secs(24 * 3600);
/// Serials remembered at most (the fewest failures, then the oldest, are forgotten first, so a
/// flood of made-up serials cannot push out one that is paused).
pub const CLAIM_FAILURES_KEPT: usize = 4096;

/// How long a serial with `failures` wrong codes is paused after the last one, if at all:
/// none below [`CLAIM_FAILURES_ALLOWED`], then [`CLAIM_PAUSE`] doubling per further failure,
/// at most [`CLAIM_PAUSE_MAX`].
pub fn pause_after(failures: u32) -> Option<Duration> {
    let over = failures.checked_sub(CLAIM_FAILURES_ALLOWED)?;
    Some((CLAIM_PAUSE * 2u32.pow(over.min(7))).min(CLAIM_PAUSE_MAX))
}

/// Throttles guessing of claim codes per serial. The figures (wrong codes, time of the last, in
/// wall-clock Unix ms so that they mean the same after a restart) live in memory, which decides,
/// and are written through to the store, from which a restart reads them back: a restart gives
/// no fresh attempts and keeps the doubling (issue 19, L1). A failed write is logged; the
/// memory still throttles until the process ends.
#[derive(Default)]
pub struct ClaimGuard {
    failures: std::sync::Mutex<HashMap<String, (u32, i64)>>,
    store: Option<Store>,
}

impl ClaimGuard {
    /// The guard over `store`, holding the `records` read from it at start.
    pub fn restored(store: Store, records: Vec<ClaimFailureRecord>) -> ClaimGuard {
        let failures = records
            .into_iter()
            .map(|r| (r.serial, (r.failures, r.last_ms)))
            .collect();
        ClaimGuard {
            failures: std::sync::Mutex::new(failures),
            store: Some(store),
        }
    }

    /// How long `serial` is still paused at `now_ms`, if it is. A clock set back counts as no
    /// time passed (the pause runs again from now, never ends early).
    pub fn blocked_for(&self, serial: &str, now_ms: i64) -> Option<Duration> {
        let map = super::lock(&self.failures);
        let (count, last_ms) = *map.get(serial)?;
        let elapsed = Duration::from_millis(now_ms.saturating_sub(last_ms).max(0) as u64);
        if elapsed >= CLAIM_FAILURES_FORGET {
            return None;
        }
        pause_after(count)?
            .checked_sub(elapsed)
            .filter(|d| !d.is_zero())
    }

    /// Records a wrong code for `serial` at `now_ms`, and writes it through to the store (a
    /// failed write is logged; the memory counts it anyway).
    pub async fn failed(&self, serial: &str, now_ms: i64) {
        let forget_before = now_ms.saturating_sub(CLAIM_FAILURES_FORGET.as_millis() as i64);
        let record = {
            let mut map = super::lock(&self.failures);
            let entry = map.entry(serial.to_string()).or_insert((0, now_ms));
            if entry.1 < forget_before {
                entry.0 = 0;
            }
            entry.0 = entry.0.saturating_add(1);
            entry.1 = now_ms;
            let record = ClaimFailureRecord {
                serial: serial.to_string(),
                failures: entry.0,
                last_ms: entry.1,
            };
            trim(&mut map, forget_before);
            record
        };
        if let Some(store) = &self.store {
            let put = store.claim_failure_put(record, forget_before, CLAIM_FAILURES_KEPT);
            if let Err(e) = put.await {
                tracing::warn!(error = %e, "cannot record the wrong claim code");
            }
        }
    }
}

/// Forgets serials quiet since before `forget_before`, then the least-guessed ones past
/// [`CLAIM_FAILURES_KEPT`] (as the store's trim does).
fn trim(map: &mut HashMap<String, (u32, i64)>, forget_before: i64) {
    if map.len() <= CLAIM_FAILURES_KEPT {
        return;
    }
    map.retain(|_, (_, last)| *last >= forget_before);
    while map.len() > CLAIM_FAILURES_KEPT {
        let Some(victim) = map
            .iter()
            .min_by_key(|(_, (count, last))| (*count, *last))
            .map(|(serial, _)| serial.clone())
        else {
            return;
        };
        map.remove(&victim);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// Each policy displays as the config file and the flag spell it, and reads back.
    #[test]
    fn display_is_the_config_spelling() {
        #[derive(Deserialize)]
        struct File {
            claim_policy: ClaimPolicy,
        }
        for policy in ClaimPolicy::value_variants() {
            let flag = policy.to_possible_value().unwrap();
            assert_eq!(policy.to_string(), flag.get_name());
            let text = format!("claim_policy = \"{policy}\"\n");
            let file: File = toml::from_str(&text).unwrap();
            assert_eq!(file.claim_policy, *policy);
        }
    }

    /// Five wrong codes are free, then 30 s doubling per failure up to an hour; a serial
    /// quiet for a day starts again.
    #[tokio::test]
    async fn the_pause_doubles_and_is_forgotten_after_a_day() {
        assert_eq!(pause_after(4), None);
        assert_eq!(pause_after(5), Some(CLAIM_PAUSE));
        assert_eq!(pause_after(6), Some(CLAIM_PAUSE * 2));
        assert_eq!(pause_after(40), Some(CLAIM_PAUSE_MAX));
        let guard = ClaimGuard::default();
        let t0 = 1_000_000_000;
        for _ in 0..6 {
            guard.failed("S", t0).await;
        }
        assert_eq!(
            guard.blocked_for("S", t0 + 1_000),
            Some(Duration::from_secs(59))
        );
        // A clock set back does not end the pause early.
        assert_eq!(guard.blocked_for("S", t0 - 5_000), Some(CLAIM_PAUSE * 2));
        assert_eq!(guard.blocked_for("S", t0 + 60_000), None);
        let day = CLAIM_FAILURES_FORGET.as_millis() as i64;
        guard.failed("S", t0 + day + 1).await;
        assert_eq!(
            guard.blocked_for("S", t0 + day + 2),
            None,
            "counting again from one"
        );
        assert_eq!(guard.blocked_for("other", t0), None);
    }
}
