//! File tools: `android_file_pull` (device file → `file_ref`) and `android_file_push`
//! (`file_ref` from `POST /files/uploads` → device file), over the sync service (binary-safe).
//!
//! Both stay inside the device policy's `[files] roots`, checked by
//! [`crate::device::shared_storage::check_path`]: absolute, no NUL/control characters, no `..`,
//! strictly under one root, the aliases of shared storage (`/sdcard`, `/mnt/sdcard`,
//! `/storage/self/primary`, `/storage/emulated/0`) being one root (field bug 45). The check is
//! on the path text only: other symlinks on the phone are not resolved (the sync service
//! follows them), so roots must not contain links leading out of them. Sizes are capped by
//! `files.max_pull_bytes` / `files.max_push_bytes` (`file_too_large`). A refusal of adbd is
//! typed by its errno ([`sync_refusal`]); a missing path under shared storage is first checked
//! against the volume's mount state ([`storage_mount`], field bug 68). A push into a media directory asks the media store to
//! index the file and says whether it did ([`media_index`], field bug 41). Each call has one
//! deadline, [`FILE_DEADLINE`], for all its steps.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::file_refs::{self, read_upload, resolve_upload};
use super::phone::media_index;
use super::phone::storage_mount;
use super::phone::sync_refusal::{self, Direction};
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::adb::AdbError;
use crate::device::error::DeviceError;
use crate::device::shared_storage::{check_path, DevicePath, MAX_PATH_BYTES};
use crate::file_cache::{FileOrigin, IssuedFile};

/// Deadline of one pull or push call, every step included (50 MiB over USB 2 takes ~3 s; slow
/// Wi-Fi adb ~1 MB/s).
pub const FILE_DEADLINE: Duration = Duration::from_secs(120);
/// The call's time beyond the transfer (checks and queries around it).
const FILE_EXTRA: Duration = Duration::from_secs(30);

/// MIME type from the file extension (common types; else `application/octet-stream`).
pub fn mime_guess(path: &str) -> (&'static str, String) {
    let ext = path
        .rsplit('/')
        .next()
        .and_then(|n| n.rsplit_once('.'))
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let mime = match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "mp3" => "audio/mpeg",
        "ogg" => "audio/ogg",
        "txt" | "log" => "text/plain",
        "csv" => "text/csv",
        "json" => "application/json",
        "xml" => "application/xml",
        "html" | "htm" => "text/html",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        "apk" => "application/vnd.android.package-archive",
        _ => "application/octet-stream",
    };
    (mime, ext)
}

const PATH_DESC: &str = "Absolute device path of a file inside the allowed directories of the device policy (default /sdcard/Download, /sdcard/Pictures, /sdcard/DCIM; /sdcard, /mnt/sdcard, /storage/self/primary and /storage/emulated/0 are the same shared storage); no `..`; case-sensitive.";

/// Refuses a path written as a directory (`…/`, `…/.`): `adb push FILE DIR/` names the file
/// itself, the tools do not (scrcpy#4876 pushed to `/storage/emulated/0/Download/.`, field bug
/// 69); normalising the slash away would write a file named after the directory.
fn refuse_directory_form(path: &str) -> Result<(), DeviceError> {
    if path.ends_with('/') || path.ends_with("/.") {
        return Err(DeviceError::InvalidArguments(
            "path ends with `/` (a directory): give the full path of the file, e.g. /sdcard/Download/NAME".into(),
        ));
    }
    Ok(())
}

/// The typed error of a refused sync request: adbd's missing-path answer under shared storage
/// is first checked against the volume's mount state (an unmounted `/sdcard` says the same
/// words as a missing file, field bug 68), then the errno decides ([`sync_refusal`]).
async fn refusal(
    ctx: &ToolCtx<'_>,
    e: AdbError,
    direction: Direction,
    target: &DevicePath,
) -> DeviceError {
    if storage_mount::says_missing(&e) {
        let verb = match direction {
            Direction::Push => "written",
            Direction::Pull => "read",
        };
        if let Some(unmounted) = storage_mount::unmounted(ctx, target, verb).await {
            return unmounted;
        }
    }
    sync_refusal::classify(e, direction, &target.path)
}

fn path_schema() -> Value {
    json!({"type": "string", "minLength": 2, "maxLength": MAX_PATH_BYTES, "description": PATH_DESC})
}

/// Arguments of `android_file_pull`.
#[derive(Debug, Deserialize)]
pub struct PullArgs {
    /// Device path.
    pub path: String,
}

/// Result of `android_file_pull`.
#[derive(Debug, Serialize)]
pub struct PullOutput {
    /// The normalised device path.
    pub path: String,
    /// The stored copy (`file_ref`, `download_url`, `mime_type`, `byte_size`, `expires_at`).
    #[serde(flatten)]
    pub file: IssuedFile,
}

/// `android_file_pull`: device file → `file_ref`.
pub struct FilePull;

impl DeviceTool for FilePull {
    const ID: &'static str = "android_file_pull";
    const TITLE: &'static str = "Download a file from the phone";
    const DESCRIPTION: &'static str = "Copy a file from the bound phone to the connector and return a file_ref with a relative download_url, byte_size (bytes), mime_type (guessed from the extension) and expires_at (Unix ms). Only paths inside the policy's allowed directories (policy_denied otherwise); files above files.max_pull_bytes (default 50 MiB) fail with file_too_large; a missing file gives file_not_found (device_booting while shared storage is not mounted yet: after boot, or before the first unlock since boot); a directory (or a path ending with `/`) gives invalid_arguments. No side effects.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    const BACKENDS: &'static [&'static str] = &["sync"];
    type Args = PullArgs;
    type Output = PullOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["path"], "properties": {"path": path_schema()}})
    }

    fn output_schema() -> Value {
        let (string, int) = (json!({"type": "string"}), json!({"type": "integer"}));
        json!({"type": "object", "required": ["path", "file_ref", "download_url", "mime_type", "byte_size", "expires_at"], "properties": {
            "path": string, "file_ref": string, "download_url": string, "mime_type": string,
            "byte_size": int, "expires_at": int
        }})
    }

    fn deadline(_: &PullArgs) -> Duration {
        FILE_DEADLINE + FILE_EXTRA
    }

    async fn run(args: PullArgs, ctx: &ToolCtx<'_>) -> Result<PullOutput, DeviceError> {
        // A root itself is the policy's answer (it names the root); any other `…/` is this one.
        let target = check_path(&args.path, &ctx.policy.files.roots)?;
        let path = target.path.clone();
        refuse_directory_form(&args.path)?;
        let max = ctx.policy.files.max_pull_bytes;
        let limit = usize::try_from(max).unwrap_or(usize::MAX);
        let pulled = ctx
            .link
            .pull(&path, ctx.deadline.clip(FILE_DEADLINE)?, limit)
            .await;
        let bytes = match pulled {
            Ok(bytes) => bytes,
            Err(AdbError::OutputTooLarge { .. }) => {
                return Err(DeviceError::FileTooLarge(format!(
                    "{path} is larger than files.max_pull_bytes ({max} bytes)"
                )))
            }
            Err(e) => return Err(refusal(ctx, e, Direction::Pull, &target).await),
        };
        let (mime, ext) = mime_guess(&path);
        let file = file_refs::store(ctx, bytes, mime, &ext, FileOrigin::Pulled).await?;
        Ok(PullOutput { path, file })
    }
}

/// Arguments of `android_file_push`.
#[derive(Debug, Deserialize)]
pub struct PushArgs {
    /// The uploaded file.
    pub file_ref: String,
    /// Device path to write.
    pub path: String,
}

/// Result of `android_file_push`.
#[derive(Debug, Serialize)]
pub struct PushOutput {
    /// The normalised device path written.
    pub path: String,
    /// Bytes written.
    pub byte_size: usize,
    /// The media store confirmed it indexed the file (galleries and pickers show it).
    pub media_indexed: bool,
    /// The `content://media/…` URI the media store gave the file, when it confirmed.
    pub media_uri: Option<String>,
    /// How the media store was asked and what it answered, or why it was not asked.
    pub note: String,
}

/// `android_file_push`: `file_ref` from `POST /files/uploads` → device file.
pub struct FilePush;

impl DeviceTool for FilePush {
    const ID: &'static str = "android_file_push";
    const TITLE: &'static str = "Upload a file to the phone";
    const DESCRIPTION: &'static str = "Write a file uploaded with POST /files/uploads (its file_ref, this channel) to a path on the bound phone, replacing an existing file. Only paths inside the policy's allowed directories (policy_denied otherwise; /sdcard, /mnt/sdcard, /storage/self/primary and /storage/emulated/0 name the same shared storage); files above files.max_push_bytes (default 50 MiB) fail with file_too_large. A file pushed into a media directory (Pictures, DCIM, Movies, Music, Download, Documents, ...) is indexed by the media store so galleries show it: media_indexed says whether the media store confirmed it, note says how. Errors: invalid_arguments (the path ends with `/` or names a directory on the phone: give the file's full path), device_permission_denied (the phone refused the write, with the fix), device_command_failed (e.g. the phone's storage is full), device_booting (shared storage not mounted yet: after boot, or before the first unlock since boot; retry then).";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = &["sync"];
    type Args = PushArgs;
    type Output = PushOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["file_ref", "path"], "properties": {
            "file_ref": {"type": "string", "minLength": 1, "maxLength": 200, "description": "file_ref returned by POST /files/uploads on this channel."},
            "path": path_schema()
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["path", "byte_size", "media_indexed", "media_uri", "note"], "properties": {
            "path": {"type": "string"}, "byte_size": {"type": "integer", "minimum": 0},
            "media_indexed": {"type": "boolean"}, "media_uri": {"type": ["string", "null"]},
            "note": {"type": "string"}
        }})
    }

    fn deadline(_: &PushArgs) -> Duration {
        FILE_DEADLINE + FILE_EXTRA
    }

    async fn run(args: PushArgs, ctx: &ToolCtx<'_>) -> Result<PushOutput, DeviceError> {
        let target = check_path(&args.path, &ctx.policy.files.roots)?;
        refuse_directory_form(&args.path)?;
        let path = target.path.clone();
        let upload = resolve_upload(ctx, &args.file_ref).await?;
        let max = ctx.policy.files.max_push_bytes;
        if upload.byte_size > max {
            return Err(DeviceError::FileTooLarge(format!(
                "the file has {} bytes; files.max_push_bytes is {max}",
                upload.byte_size
            )));
        }
        let bytes = read_upload(&upload).await?;
        if bytes.len() as u64 > max {
            return Err(DeviceError::FileTooLarge(format!(
                "the file is larger than files.max_push_bytes ({max} bytes)"
            )));
        }
        let pushed = ctx
            .link
            .push(&path, 0o660, &bytes, ctx.deadline.clip(FILE_DEADLINE)?)
            .await;
        if let Err(e) = pushed {
            return Err(refusal(ctx, e, Direction::Push, &target).await);
        }
        let media = media_index::index(ctx, &target).await;
        Ok(PushOutput {
            path,
            byte_size: bytes.len(),
            media_indexed: media.indexed,
            media_uri: media.uri,
            note: media.note,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn mime_types() {
        assert_eq!(mime_guess("/a/b.JPG").0, "image/jpeg");
        assert_eq!(mime_guess("/a/b").0, "application/octet-stream");
    }

    #[test]
    fn outputs_match_the_schema() {
        assert_output::<FilePull>(&PullOutput {
            path: "/sdcard/Download/a.txt".into(),
            file: IssuedFile {
                file_ref: "r".into(),
                download_url: "/files/refs/r".into(),
                mime_type: "text/plain".into(),
                byte_size: 3,
                expires_at: 1,
            },
        });
        assert_output::<FilePush>(&PushOutput {
            path: "/sdcard/Download/a.txt".into(),
            byte_size: 3,
            media_indexed: true,
            media_uri: Some("content://media/external_primary/file/7".into()),
            note: "indexed".into(),
        });
        assert_output::<FilePush>(&PushOutput {
            path: "/sdcard/x.txt".into(),
            byte_size: 3,
            media_indexed: false,
            media_uri: None,
            note: "not in a media directory".into(),
        });
    }
}
