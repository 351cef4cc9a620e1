//! Typed records and the queries that read/write them.

use rusqlite::{params, OptionalExtension};

use super::{sql, Store, StoreError};

/// A channel ↔ phone binding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindingRecord {
    /// Channel id.
    pub channel_id: String,
    /// The phone's `ro.serialno` (never leaves the connector).
    pub serial: String,
    /// `ro.product.model` at claim time.
    pub model: String,
    /// When bound, Unix ms.
    pub bound_ms: i64,
}

/// A phone paired over wireless debugging (flow `adb_pair_code`): watched again after a
/// restart. The pairing outlives channels and leases (it is between the phone and the key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WirelessPhoneRecord {
    /// The phone's `ro.serialno`.
    pub serial: String,
    /// The GUID the phone sent while pairing (its mDNS instance is `adb-GUID`).
    pub guid: String,
    /// Last `HOST:PORT` of its wireless-debugging (`STLS`) port.
    pub addr: String,
    /// When paired, Unix ms.
    pub paired_ms: i64,
}

/// A stored file served under `/files/refs/{file_ref}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    /// Random id (the unguessable part of the ref).
    pub file_id: String,
    /// Owning channel.
    pub channel_id: String,
    /// Absolute path on disk.
    pub path: String,
    /// MIME type.
    pub mime: String,
    /// Suggested download name.
    pub filename: String,
    /// Size, bytes.
    pub byte_size: i64,
    /// Created, Unix ms.
    pub created_ms: i64,
    /// Expiry, Unix ms.
    pub expires_ms: i64,
    /// Served inline with its own `mime` (images and videos the connector made itself:
    /// screenshots, screen recordings); every other file is served as an attachment.
    pub served_inline: bool,
}

fn binding_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<BindingRecord> {
    Ok(BindingRecord {
        channel_id: r.get(0)?,
        serial: r.get(1)?,
        model: r.get(2)?,
        bound_ms: r.get(3)?,
    })
}

/// Meta key of the persisted connector id.
const CONNECTOR_ID_META: &str = "connector_id";

impl Store {
    /// Returns the meta value for `key`, inserting `init()` first if absent (atomic).
    pub async fn meta_get_or_init(
        &self,
        key: &'static str,
        init: Vec<u8>,
    ) -> Result<Vec<u8>, StoreError> {
        self.run(move |c| {
            c.execute(sql::META_INSERT, params![key, init])?;
            c.query_row(sql::META_GET, params![key], |r| r.get(0))
        })
        .await
    }

    /// The persisted connector id (meta `connector_id`), storing `fresh` first when there is
    /// none yet (first start of a data dir).
    pub async fn connector_id_or_init(&self, fresh: String) -> Result<String, StoreError> {
        let id = self
            .meta_get_or_init(CONNECTOR_ID_META, fresh.into_bytes())
            .await?;
        Ok(String::from_utf8_lossy(&id).into_owned())
    }

    /// Every persisted channel id.
    pub async fn channel_ids(&self) -> Result<Vec<String>, StoreError> {
        self.run(|c| {
            let mut st = c.prepare(sql::CHANNEL_ALL)?;
            let rows = st.query_map([], |r| r.get::<_, String>(0))?;
            rows.collect()
        })
        .await
    }

    /// The lease-expiry cascade (spec §8.2) in one transaction: every channel, binding and
    /// journal row is deleted, the phones in `releasing` (serial, channel) are marked pending
    /// release, and `new_connector_id` becomes the persisted connector id. File
    /// records are revoked separately ([`crate::file_cache::FileCache::revoke_channel`]).
    pub async fn deregister_all(
        &self,
        new_connector_id: String,
        releasing: Vec<(String, String)>,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.run(move |c| {
            let tx = c.transaction()?;
            for (serial, channel_id) in &releasing {
                tx.execute(
                    sql::RELEASE_PENDING_PUT,
                    params![serial, channel_id, now_ms],
                )?;
            }
            tx.execute_batch(sql::DEREGISTER_ALL)?;
            tx.execute(
                sql::META_SET,
                params![CONNECTOR_ID_META, new_connector_id.into_bytes()],
            )?;
            tx.commit()
        })
        .await
    }

    /// Deletes up to `count` channels that have no binding and are not in `keep`, oldest
    /// first, together with their journal rows and file records, in one transaction. Returns
    /// the deleted channel ids and the paths of their files (the caller removes the files).
    pub async fn channel_evict_idle(
        &self,
        keep: std::collections::HashSet<String>,
        count: usize,
    ) -> Result<(Vec<String>, Vec<String>), StoreError> {
        self.run(move |c| {
            let tx = c.transaction()?;
            let victims: Vec<String> = {
                let mut st = tx.prepare(sql::CHANNEL_UNBOUND_OLDEST)?;
                let ids = st.query_map([], |r| r.get::<_, String>(0))?;
                let mut out = Vec::new();
                for id in ids {
                    let id = id?;
                    if !keep.contains(&id) {
                        out.push(id);
                        if out.len() == count {
                            break;
                        }
                    }
                }
                out
            };
            let mut paths = Vec::new();
            for id in &victims {
                {
                    let mut st = tx.prepare_cached(sql::FILE_BY_CHANNEL)?;
                    let rows = st.query_map(params![id], |r| r.get::<_, String>(0))?;
                    for p in rows {
                        paths.push(p?);
                    }
                }
                tx.execute(sql::FILE_DELETE_CHANNEL, params![id])?;
                tx.execute(sql::JOURNAL_DELETE_CHANNEL, params![id])?;
                tx.execute(sql::CHANNEL_DELETE, params![id])?;
            }
            tx.commit()?;
            Ok((victims, paths))
        })
        .await
    }

    /// Persists a channel id.
    pub async fn channel_insert(
        &self,
        channel_id: String,
        connector_id: String,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.run(move |c| {
            c.execute(
                sql::CHANNEL_INSERT,
                params![channel_id, connector_id, now_ms],
            )
            .map(|_| ())
        })
        .await
    }

    /// Binds; `Ok(false)` when the serial is already bound to another channel.
    pub async fn binding_insert(&self, b: BindingRecord) -> Result<bool, StoreError> {
        self.run(move |c| {
            match c.execute(
                sql::BINDING_INSERT,
                params![b.channel_id, b.serial, b.model, b.bound_ms],
            ) {
                Ok(_) => Ok(true),
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::ConstraintViolation =>
                {
                    Ok(false)
                }
                Err(e) => Err(e),
            }
        })
        .await
    }

    /// The binding of a channel.
    pub async fn binding_by_channel(
        &self,
        channel_id: String,
    ) -> Result<Option<BindingRecord>, StoreError> {
        self.run(move |c| {
            c.query_row(sql::BINDING_BY_CHANNEL, params![channel_id], binding_row)
                .optional()
        })
        .await
    }

    /// Every binding.
    pub async fn binding_all(&self) -> Result<Vec<BindingRecord>, StoreError> {
        self.run(|c| {
            let mut st = c.prepare(sql::BINDING_ALL)?;
            let rows = st.query_map([], binding_row)?;
            rows.collect()
        })
        .await
    }

    /// Removes a channel's binding.
    pub async fn binding_delete(&self, channel_id: String) -> Result<(), StoreError> {
        self.run(move |c| {
            c.execute(sql::BINDING_DELETE, params![channel_id])
                .map(|_| ())
        })
        .await
    }

    /// Records a paired wireless phone (replacing the GUID and address of the same serial).
    pub async fn wireless_phone_upsert(&self, p: WirelessPhoneRecord) -> Result<(), StoreError> {
        self.run(move |c| {
            c.execute(
                sql::WIRELESS_UPSERT,
                params![p.serial, p.guid, p.addr, p.paired_ms],
            )
            .map(|_| ())
        })
        .await
    }

    /// Every paired wireless phone.
    pub async fn wireless_phone_all(&self) -> Result<Vec<WirelessPhoneRecord>, StoreError> {
        self.run(|c| {
            let mut st = c.prepare(sql::WIRELESS_ALL)?;
            let rows = st.query_map([], |r| {
                Ok(WirelessPhoneRecord {
                    serial: r.get(0)?,
                    guid: r.get(1)?,
                    addr: r.get(2)?,
                    paired_ms: r.get(3)?,
                })
            })?;
            rows.collect()
        })
        .await
    }

    /// Bytes of every cached file (`SUM(byte_size)` of the file refs), for `GET /metrics`.
    pub async fn file_total_bytes(&self) -> Result<u64, StoreError> {
        self.run(|c| {
            c.prepare_cached(sql::FILE_TOTAL_BYTES)?
                .query_row([], |r| r.get::<_, i64>(0))
                .map(|n| n.max(0) as u64)
        })
        .await
    }

    /// Looks up a file by id.
    pub async fn file_get(&self, file_id: String) -> Result<Option<FileRecord>, StoreError> {
        self.run(move |c| {
            c.query_row(sql::FILE_GET, params![file_id], |r| {
                Ok(FileRecord {
                    file_id: r.get(0)?,
                    channel_id: r.get(1)?,
                    path: r.get(2)?,
                    mime: r.get(3)?,
                    filename: r.get(4)?,
                    byte_size: r.get(5)?,
                    created_ms: r.get(6)?,
                    expires_ms: r.get(7)?,
                    served_inline: r.get(8)?,
                })
            })
            .optional()
        })
        .await
    }

    /// Records a stored file, then evicts the oldest records until the total is at most
    /// `max_bytes` (bytes), in one transaction and one trip to the storage thread; returns the
    /// evicted paths (the caller removes the files; the new file itself may be among them when
    /// it alone exceeds the capacity).
    pub async fn file_insert_evicting(
        &self,
        f: FileRecord,
        max_bytes: i64,
    ) -> Result<Vec<String>, StoreError> {
        self.run(move |c| {
            let tx = c.transaction()?;
            tx.prepare_cached(sql::FILE_INSERT)?.execute(params![
                f.file_id,
                f.channel_id,
                f.path,
                f.mime,
                f.filename,
                f.byte_size,
                f.created_ms,
                f.expires_ms,
                f.served_inline
            ])?;
            let mut total: i64 = tx
                .prepare_cached(sql::FILE_TOTAL_BYTES)?
                .query_row([], |r| r.get(0))?;
            let mut evicted = Vec::new();
            if total > max_bytes {
                let oldest: Vec<(String, String, i64)> = {
                    let mut st = tx.prepare(sql::FILE_OLDEST)?;
                    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                    rows.collect::<rusqlite::Result<_>>()?
                };
                for (id, path, size) in oldest {
                    if total <= max_bytes {
                        break;
                    }
                    tx.execute(sql::FILE_DELETE, params![id])?;
                    total -= size;
                    evicted.push(path);
                }
            }
            tx.commit()?;
            Ok(evicted)
        })
        .await
    }

    /// Deletes the file records of `channel_id` (all channels when `None`) and returns their
    /// paths (the caller removes the files).
    pub async fn file_take_channel(
        &self,
        channel_id: Option<String>,
    ) -> Result<Vec<String>, StoreError> {
        self.run(move |c| {
            let tx = c.transaction()?;
            let paths: Vec<String> = {
                let mut st = match &channel_id {
                    Some(_) => tx.prepare(sql::FILE_BY_CHANNEL)?,
                    None => tx.prepare(sql::FILE_ALL_PATHS)?,
                };
                let rows = match &channel_id {
                    Some(ch) => st
                        .query_map(params![ch], |r| r.get(0))?
                        .collect::<rusqlite::Result<Vec<String>>>()?,
                    None => st
                        .query_map([], |r| r.get(0))?
                        .collect::<rusqlite::Result<Vec<String>>>()?,
                };
                rows
            };
            match &channel_id {
                Some(ch) => tx.execute(sql::FILE_DELETE_CHANNEL, params![ch])?,
                None => tx.execute(sql::FILE_DELETE_ALL, [])?,
            };
            tx.commit()?;
            Ok(paths)
        })
        .await
    }

    /// Deletes expired file records and returns their paths (the caller removes the files).
    pub async fn file_take_expired(&self, now_ms: i64) -> Result<Vec<String>, StoreError> {
        self.run(move |c| {
            let tx = c.transaction()?;
            let expired: Vec<(String, String)> = {
                let mut st = tx.prepare(sql::FILE_EXPIRED)?;
                let rows = st.query_map(params![now_ms], |r| Ok((r.get(0)?, r.get(1)?)))?;
                rows.collect::<rusqlite::Result<_>>()?
            };
            for (id, _) in &expired {
                tx.execute(sql::FILE_DELETE, params![id])?;
            }
            tx.commit()?;
            Ok(expired.into_iter().map(|(_, p)| p).collect())
        })
        .await
    }
}
