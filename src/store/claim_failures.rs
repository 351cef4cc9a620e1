//! Wrong claim codes per serial (policy `code`), persisted so that a restart neither gives a
//! guesser fresh attempts nor resets the doubling of the pause
//! ([`crate::connector::claim_policy::ClaimGuard`] keeps the same figures in memory and is
//! the one that decides).

use rusqlite::params;

use super::{sql, Store, StoreError};

/// The wrong claim codes recorded for one serial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimFailureRecord {
    /// The serial the codes were tried on (as the claim named it).
    pub serial: String,
    /// Wrong codes so far.
    pub failures: u32,
    /// When the last wrong code came, Unix ms.
    pub last_ms: i64,
}

impl Store {
    /// Every recorded serial (read once at start).
    pub async fn claim_failures_all(&self) -> Result<Vec<ClaimFailureRecord>, StoreError> {
        self.run(|c| {
            let mut st = c.prepare(sql::CLAIM_FAILURES_ALL)?;
            let rows = st.query_map([], |r| {
                Ok(ClaimFailureRecord {
                    serial: r.get(0)?,
                    failures: r.get::<_, i64>(1)?.clamp(0, u32::MAX as i64) as u32,
                    last_ms: r.get(2)?,
                })
            })?;
            rows.collect()
        })
        .await
    }

    /// Records `record` (replacing the serial's row), then forgets rows whose last wrong code
    /// is older than `forget_before_ms` and keeps at most `keep` rows (those with the fewest
    /// failures, then the oldest, go first: a flood of other serials cannot push out a serial
    /// that is paused). Committed before it returns: the refusal of a wrong code is answered
    /// only once it is counted on disk, so not even a `kill -9` right after gives the attempt
    /// back. Errors: the store's.
    pub async fn claim_failure_put(
        &self,
        record: ClaimFailureRecord,
        forget_before_ms: i64,
        keep: usize,
    ) -> Result<(), StoreError> {
        self.run(move |c| {
            let tx = c.transaction()?;
            tx.execute(
                sql::CLAIM_FAILURE_UPSERT,
                params![record.serial, i64::from(record.failures), record.last_ms],
            )?;
            tx.execute(sql::CLAIM_FAILURES_FORGET, params![forget_before_ms])?;
            tx.execute(sql::CLAIM_FAILURES_TRIM, params![keep as i64])?;
            tx.commit()
        })
        .await
    }
}
