//! The names of phones that report one serial (`phone_names`): (serial, digest of the
//! Android ID) → `SERIAL` / `SERIAL#N`, so a phone keeps its name — and its binding — across
//! re-plugs and restarts ([`crate::device::inventory::names`]). Records outlive leases, as
//! the phones do.

use rusqlite::params;

use super::{sql, Store, StoreError};

/// One recorded name: a phone reporting `serialno` whose Android ID digest is `second`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NameRecord {
    /// `ro.serialno` as the phone reports it.
    pub serialno: String,
    /// Digest of its Android ID (`device::inventory::names::digest`: 16 hex digits).
    pub second: String,
    /// Its name: `serialno`, or `serialno#N` (N ≥ 2).
    pub name: String,
}

impl Store {
    /// Queues one record (an existing one for the same phone wins); a failure is logged
    /// (the name then holds until the connector restarts). Errors: the storage thread is gone.
    pub fn phone_name_record(&self, r: NameRecord) -> Result<(), StoreError> {
        self.submit("phone name", move |c| {
            c.execute(
                sql::PHONE_NAME_INSERT,
                params![r.serialno, r.second, r.name],
            )
            .map(|_| ())
        })
    }

    /// Every record.
    pub async fn phone_name_all(&self) -> Result<Vec<NameRecord>, StoreError> {
        self.run(|c| {
            let mut st = c.prepare(sql::PHONE_NAME_ALL)?;
            let rows = st.query_map([], |r| {
                Ok(NameRecord {
                    serialno: r.get(0)?,
                    second: r.get(1)?,
                    name: r.get(2)?,
                })
            })?;
            rows.collect()
        })
        .await
    }
}
