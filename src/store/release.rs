//! What tools changed on a bound phone, and the phone's hand-back (`[release]`,
//! [`crate::connector::release`]): the changes recorded as the tools ran (`release_changes`),
//! the phones whose binding ended and whose release has not finished (`release_pending`,
//! written in the same transaction that removes the binding), and each phone's last release
//! (`release_outcomes`, for `check`, `devices` and the console). All three outlive restarts,
//! so a connector killed mid-binding or mid-release still hands the phone back clean.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::{sql, Store, StoreError};

/// One change a tool made on a phone, to undo when its binding ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeRecord {
    /// The phone (its name as the inventory knows it).
    pub serial: String,
    /// The channel whose tool made the change.
    pub channel_id: String,
    /// What kind of change (`connector::release::changes::Kind` wire names: `app_launched`,
    /// `app_installed`, `file_pushed`, `setting`, `wm_size`, `wm_density`).
    pub kind: String,
    /// The package, the device path, `NAMESPACE KEY` of a setting, or empty.
    pub item: String,
    /// A setting's value before the first change (`null` when it was not set); `None` when it
    /// could not be read (the setting is then left as it is).
    pub before: Option<String>,
    /// When recorded, Unix ms.
    pub recorded_ms: i64,
}

/// How one release step ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepOutcome {
    /// The step (`[release]` key: `force_stop_apps`, `uninstall_apps`, …).
    pub step: String,
    /// Whether every command of the step succeeded.
    pub ok: bool,
    /// Why it failed (the phone's first line, or the deadline), never a secret or a serial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// A phone's last finished release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReleaseOutcome {
    /// The phone.
    pub serial: String,
    /// When it finished, Unix ms.
    pub finished_ms: i64,
    /// Every step that ran, in order.
    pub steps: Vec<StepOutcome>,
}

impl ReleaseOutcome {
    /// The steps that failed.
    pub fn failed(&self) -> impl Iterator<Item = &StepOutcome> {
        self.steps.iter().filter(|s| !s.ok)
    }
}

impl Store {
    /// Records a change unless one of the same phone, kind and item is recorded (the first
    /// `before` is the one put back). Committed before it returns.
    pub async fn release_change_record(&self, r: ChangeRecord) -> Result<(), StoreError> {
        self.run(move |c| {
            c.execute(
                sql::RELEASE_CHANGE_INSERT,
                params![
                    r.serial,
                    r.kind,
                    r.item,
                    r.channel_id,
                    r.before,
                    r.recorded_ms
                ],
            )
            .map(|_| ())
        })
        .await
    }

    /// Every recorded change (read once at start).
    pub async fn release_changes_all(&self) -> Result<Vec<ChangeRecord>, StoreError> {
        self.run(|c| {
            let mut st = c.prepare(sql::RELEASE_CHANGES_ALL)?;
            let rows = st.query_map([], |r| {
                Ok(ChangeRecord {
                    serial: r.get(0)?,
                    kind: r.get(1)?,
                    item: r.get(2)?,
                    channel_id: r.get(3)?,
                    before: r.get(4)?,
                    recorded_ms: r.get(5)?,
                })
            })?;
            rows.collect()
        })
        .await
    }

    /// `auth.logout`'s write: removes the channel's binding and marks its phone pending
    /// release, in one transaction. Returns the phone, `None` when nothing was bound.
    pub async fn binding_delete_for_release(
        &self,
        channel_id: String,
        now_ms: i64,
    ) -> Result<Option<String>, StoreError> {
        self.run(move |c| {
            let tx = c.transaction()?;
            let serial: Option<String> = {
                let mut st = tx.prepare(sql::BINDING_BY_CHANNEL)?;
                let mut rows = st.query(params![channel_id])?;
                match rows.next()? {
                    Some(r) => Some(r.get(1)?),
                    None => None,
                }
            };
            tx.execute(sql::BINDING_DELETE, params![channel_id])?;
            if let Some(serial) = &serial {
                tx.execute(
                    sql::RELEASE_PENDING_PUT,
                    params![serial, channel_id, now_ms],
                )?;
            }
            tx.commit()?;
            Ok(serial)
        })
        .await
    }

    /// Phones whose release has not finished: (serial, channel id).
    pub async fn release_pending_all(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.run(|c| {
            let mut st = c.prepare(sql::RELEASE_PENDING_ALL)?;
            let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })
        .await
    }

    /// A release finished: its phone's changes and pending mark go, its outcome replaces the
    /// last one, in one transaction.
    pub async fn release_finish(&self, outcome: ReleaseOutcome) -> Result<(), StoreError> {
        self.run(move |c| {
            let tx = c.transaction()?;
            tx.execute(sql::RELEASE_CHANGES_DELETE, params![outcome.serial])?;
            tx.execute(sql::RELEASE_PENDING_DELETE, params![outcome.serial])?;
            let steps = serde_json::to_string(&outcome.steps).unwrap_or_else(|_| "[]".into());
            tx.execute(
                sql::RELEASE_OUTCOME_PUT,
                params![outcome.serial, outcome.finished_ms, steps],
            )?;
            tx.commit()
        })
        .await
    }

    /// Every phone's last release.
    pub async fn release_outcomes_all(&self) -> Result<Vec<ReleaseOutcome>, StoreError> {
        self.run(|c| outcomes_of(c)).await
    }
}

/// Every phone's last release, read from `conn` (also by `devices` on a stopped connector's
/// store).
pub fn outcomes_of(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<ReleaseOutcome>> {
    let mut st = conn.prepare(sql::RELEASE_OUTCOMES_ALL)?;
    let rows = st.query_map([], |r| {
        let steps: String = r.get(2)?;
        Ok(ReleaseOutcome {
            serial: r.get(0)?,
            finished_ms: r.get(1)?,
            steps: serde_json::from_str(&steps).unwrap_or_default(),
        })
    })?;
    rows.collect()
}

/// Phones whose release has not finished, read from `conn` (`devices` on a stopped
/// connector's store).
pub fn pending_of(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<String>> {
    let mut st = conn.prepare(sql::RELEASE_PENDING_ALL)?;
    let rows = st.query_map([], |r| r.get(0))?;
    rows.collect()
}
