//! The local file cache behind `GET /files/refs/{file_ref}` (spec §5.2, Device Profile §6).
//!
//! A `file_ref` is `<file_id>.<sig>`: `file_id` is 128 random bits (hex), `sig` is the first
//! 128 bits of HMAC-SHA256(key, `file_id \n channel_id \n expires_ms`) in base64url. The key is
//! random per data dir, kept in SQLite, never logged. Files expire after a finite TTL and a
//! cleaner removes them. Lookup answers: unknown or expired → 404, bad signature or other
//! channel → 403.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use ring::hmac;
use serde::Serialize;

use crate::protocol::{now_ms, random_hex};
use crate::store::{Cause, FileRecord, StorageFault, Store, StoreError};

/// A stored file as reported to the agent.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct IssuedFile {
    /// Opaque signed reference.
    pub file_ref: String,
    /// Relative URL (`/files/refs/{file_ref}`), resolved by xAgent against the base URL.
    pub download_url: String,
    /// MIME type.
    pub mime_type: String,
    /// Size, bytes.
    pub byte_size: u64,
    /// Expiry, Unix ms.
    pub expires_at: i64,
}

/// Where a cached file came from; decides how `GET /files/refs/{file_ref}` serves it (issue 19
/// L2): only images and videos the connector made itself are shown inline, everything else
/// (uploads, files pulled from the phone) is an attachment, so a file an app left in Download
/// never becomes a page on the connector's address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileOrigin {
    /// A screenshot or screen recording the connector captured and encoded.
    Capture,
    /// Bytes pulled from the phone (`android_file_pull`): whatever an app wrote there.
    Pulled,
    /// An agent's `POST /files/uploads`.
    Upload,
}

/// MIME types the connector's own captures have (`android_screenshot`: PNG, JPEG, WebP;
/// `android_screen_record`: MP4); only these are ever served inline.
pub const CAPTURE_MIMES: &[&str] = &["image/png", "image/jpeg", "image/webp", "video/mp4"];

impl FileOrigin {
    /// Whether a file of this origin and `mime` is served inline under its own type.
    pub fn served_inline(self, mime: &str) -> bool {
        self == FileOrigin::Capture && CAPTURE_MIMES.contains(&mime)
    }
}

/// Why a ref cannot be served.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FileRefError {
    /// Unknown or expired (404).
    #[error("file_ref does not exist or expired")]
    NotFound,
    /// Tampered signature or another channel's file (403).
    #[error("file_ref does not match its signature or channel")]
    Forbidden,
    /// Storage failed (500): the cause and the path ([`crate::store::StorageFault`]).
    #[error("{0}")]
    Storage(String),
}

impl From<StoreError> for FileRefError {
    fn from(e: StoreError) -> Self {
        FileRefError::Storage(e.to_string())
    }
}

/// What [`FileCache::commit`] records about a written file.
#[derive(Debug, Clone, Copy)]
pub struct StoredFile<'a> {
    /// MIME type reported to the agent (and served, when inline).
    pub mime: &'a str,
    /// Suggested download name.
    pub filename: &'a str,
    /// Size, bytes.
    pub byte_size: u64,
    /// Where it came from.
    pub origin: FileOrigin,
}

/// The file cache; cheap to clone.
#[derive(Clone)]
pub struct FileCache {
    store: Store,
    key: hmac::Key,
    dir: PathBuf,
    ttl: Duration,
    capacity: u64,
}

/// Default capacity of the cache: 512 MiB (an SD card on a Pi is small); oldest files are evicted
/// first when a new one would exceed it.
pub const DEFAULT_CAPACITY_BYTES: u64 = 512 * 1024 * 1024;

const KEY_META: &str = "file_ref_hmac_key";

impl FileCache {
    /// Opens the cache under `dir` with `ttl` and `capacity` (bytes), creating the signing key on
    /// first use.
    pub async fn open(
        store: Store,
        dir: PathBuf,
        ttl: Duration,
        capacity: u64,
    ) -> Result<FileCache, StoreError> {
        use ring::rand::SecureRandom;
        let mut fresh = [0u8; 32];
        ring::rand::SystemRandom::new()
            .fill(&mut fresh)
            .map_err(|_| {
                StorageFault::new(
                    Cause::Other("no random bytes for the signing key".into()),
                    &dir,
                )
            })?;
        let key = store.meta_get_or_init(KEY_META, fresh.to_vec()).await?;
        std::fs::create_dir_all(&dir).map_err(|e| StorageFault::of_io(&dir, &e))?;
        Ok(FileCache {
            store,
            key: hmac::Key::new(hmac::HMAC_SHA256, &key),
            dir,
            ttl,
            capacity,
        })
    }

    /// The TTL of new files.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    fn sign(&self, file_id: &str, channel_id: &str, expires_ms: i64) -> String {
        let msg = format!("{file_id}\n{channel_id}\n{expires_ms}");
        let tag = hmac::sign(&self.key, msg.as_bytes());
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&tag.as_ref()[..16])
    }

    /// Stores `bytes` for `channel_id` and returns the signed reference; `origin` decides how
    /// the file is served ([`FileOrigin::served_inline`]).
    pub async fn put(
        &self,
        channel_id: &str,
        bytes: Vec<u8>,
        mime: &str,
        extension: &str,
        origin: FileOrigin,
    ) -> Result<IssuedFile, FileRefError> {
        let (file_id, path) = self.reserve(extension);
        let byte_size = bytes.len() as u64;
        if let Err(e) = tokio::fs::write(&path, bytes).await {
            // A short write on a full disk leaves a partial file: never kept.
            let _ = tokio::fs::remove_file(&path).await;
            return Err(FileRefError::Storage(format!(
                "cannot store the file: {}",
                StorageFault::of_io(&path, &e)
            )));
        }
        let filename = format!("{file_id}.{extension}");
        let stored = StoredFile {
            mime,
            filename: &filename,
            byte_size,
            origin,
        };
        self.commit(channel_id, &file_id, &path, stored).await
    }

    /// A fresh file id and the path its bytes go to (the caller writes them, then calls
    /// [`FileCache::commit`]).
    pub fn reserve(&self, extension: &str) -> (String, PathBuf) {
        let file_id = random_hex(16);
        let ext: String = extension
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .take(8)
            .collect();
        let path = self.dir.join(format!(
            "{file_id}.{}",
            if ext.is_empty() { "bin" } else { &ext }
        ));
        (file_id, path)
    }

    /// Bytes held by the cache now (the recorded sizes of its files). Errors: the store's.
    pub async fn total_bytes(&self) -> Result<u64, StoreError> {
        self.store.file_total_bytes().await
    }

    /// Records a written file and returns its signed reference.
    pub async fn commit(
        &self,
        channel_id: &str,
        file_id: &str,
        path: &std::path::Path,
        file: StoredFile<'_>,
    ) -> Result<IssuedFile, FileRefError> {
        let StoredFile {
            mime,
            filename,
            byte_size,
            origin,
        } = file;
        let now = now_ms();
        let expires_ms =
            now.saturating_add(i64::try_from(self.ttl.as_millis()).unwrap_or(i64::MAX));
        let evicted = self
            .store
            .file_insert_evicting(
                FileRecord {
                    file_id: file_id.to_string(),
                    channel_id: channel_id.to_string(),
                    path: path.to_string_lossy().into_owned(),
                    mime: mime.to_string(),
                    filename: filename.to_string(),
                    byte_size: byte_size as i64,
                    created_ms: now,
                    expires_ms,
                    served_inline: origin.served_inline(mime),
                },
                i64::try_from(self.capacity).unwrap_or(i64::MAX),
            )
            .await?;
        for evicted in evicted {
            let _ = tokio::fs::remove_file(evicted).await;
        }
        let file_ref = format!("{file_id}.{}", self.sign(file_id, channel_id, expires_ms));
        Ok(IssuedFile {
            download_url: format!("/files/refs/{file_ref}"),
            file_ref,
            mime_type: mime.to_string(),
            byte_size,
            expires_at: expires_ms,
        })
    }

    /// Resolves a ref; `channel` is the caller's `X-XAgent-Connector-Channel-ID`, if sent.
    pub async fn resolve(
        &self,
        file_ref: &str,
        channel: Option<&str>,
    ) -> Result<FileRecord, FileRefError> {
        let (file_id, sig) = file_ref.split_once('.').ok_or(FileRefError::NotFound)?;
        if file_id.len() != 32 || !file_id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(FileRefError::NotFound);
        }
        let rec = self
            .store
            .file_get(file_id.to_string())
            .await?
            .ok_or(FileRefError::NotFound)?;
        if rec.expires_ms <= now_ms() {
            return Err(FileRefError::NotFound);
        }
        let msg = format!("{}\n{}\n{}", rec.file_id, rec.channel_id, rec.expires_ms);
        let tag = hmac::sign(&self.key, msg.as_bytes());
        let expected = &tag.as_ref()[..16];
        let given = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(sig)
            .map_err(|_| FileRefError::Forbidden)?;
        if !ring_eq(expected, &given) {
            return Err(FileRefError::Forbidden);
        }
        if channel.is_some_and(|c| c != rec.channel_id) {
            return Err(FileRefError::Forbidden);
        }
        Ok(rec)
    }

    /// Revokes every file of `channel_id` (all channels when `None`): records and bytes.
    /// Called when a phone is released (`auth.logout`) or the lease expires, so a device's
    /// screenshots do not outlive the binding they were taken under.
    pub async fn revoke_channel(&self, channel_id: Option<&str>) -> Result<usize, StoreError> {
        let paths = self
            .store
            .file_take_channel(channel_id.map(str::to_string))
            .await?;
        for p in &paths {
            let _ = tokio::fs::remove_file(p).await;
        }
        Ok(paths.len())
    }

    /// Deletes expired files (records and bytes); returns how many.
    pub async fn clean_expired(&self) -> Result<usize, StoreError> {
        let paths = self.store.file_take_expired(now_ms()).await?;
        for p in &paths {
            let _ = tokio::fs::remove_file(p).await;
        }
        Ok(paths.len())
    }
}

fn ring_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq;
    a.len() == b.len() && bool::from(a.ct_eq(b))
}
