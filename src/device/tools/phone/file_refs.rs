//! The connector's file cache as tools see it: resolving a `file_ref` the agent uploaded on the
//! calling channel, and storing bytes pulled from the phone as a new `file_ref`.

use std::path::PathBuf;

use crate::device::error::DeviceError;
use crate::device::tools::ToolCtx;
use crate::file_cache::{FileOrigin, FileRefError, IssuedFile};

/// An uploaded file of the calling channel.
#[derive(Debug, Clone)]
pub struct Upload {
    /// Where its bytes are on this host.
    pub path: PathBuf,
    /// Its size, bytes.
    pub byte_size: u64,
    /// Its cache id (hex).
    pub file_id: String,
}

/// Resolves a `file_ref` of the calling channel (unknown, expired or another channel's ref:
/// [`DeviceError::UnknownFileRef`]).
pub async fn resolve_upload(ctx: &ToolCtx<'_>, file_ref: &str) -> Result<Upload, DeviceError> {
    match ctx.files.resolve(file_ref, Some(ctx.channel_id)).await {
        Ok(rec) => Ok(Upload {
            path: rec.path.into(),
            byte_size: rec.byte_size.max(0) as u64,
            file_id: rec.file_id,
        }),
        Err(FileRefError::Storage(why)) => Err(DeviceError::Internal(format!(
            "file cache unavailable: {why}"
        ))),
        Err(_) => Err(DeviceError::UnknownFileRef),
    }
}

/// Reads an upload's bytes (gone from the cache: [`DeviceError::UploadGone`]).
pub async fn read_upload(upload: &Upload) -> Result<Vec<u8>, DeviceError> {
    tokio::fs::read(&upload.path)
        .await
        .map_err(|_| DeviceError::UploadGone)
}

/// Stores `bytes` for the calling channel and returns the issued `file_ref`; `origin` decides
/// whether the file is served inline ([`FileOrigin::served_inline`]).
pub async fn store(
    ctx: &ToolCtx<'_>,
    bytes: Vec<u8>,
    mime: &str,
    extension: &str,
    origin: FileOrigin,
) -> Result<IssuedFile, DeviceError> {
    ctx.files
        .put(ctx.channel_id, bytes, mime, extension, origin)
        .await
        .map_err(|e| DeviceError::Internal(e.to_string()))
}
