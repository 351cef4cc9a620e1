//! File tools: `android_file_pull` (device file → `file_ref`) and `android_file_push`
//! (`file_ref` from `POST /files/uploads` → device file), over the sync service (binary-safe).
//!
//! Both stay inside the device policy's `[files] roots`: the path must be absolute, free of NUL
//! and control characters and of `..` segments; it is normalised (`//` and `.` collapsed) and
//! must then lie strictly under one root (a root itself is a directory, refused as such). The
//! check is on the path text only: symlinks on the phone are not resolved (the sync service
//! follows them), so a link inside a root that points elsewhere is followed; roots must not
//! contain such links. Sizes are capped by
//! `files.max_pull_bytes` / `files.max_push_bytes` (`file_too_large`).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::file_refs::{self, read_upload, resolve_upload};
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::adb::AdbError;
use crate::device::error::DeviceError;
use crate::file_cache::{FileOrigin, IssuedFile};

/// Deadline of one pull or push (50 MiB over USB 2 takes ~3 s; slow Wi-Fi adb ~1 MB/s).
pub const FILE_DEADLINE: Duration = Duration::from_secs(120);
/// Longest device path (bytes; the sync protocol's limit is 1024).
pub const MAX_PATH_BYTES: usize = 1024;

/// Normalises `path` and checks it lies under one of `roots`; the error names the problem.
pub fn check_path(path: &str, roots: &[String]) -> Result<String, DeviceError> {
    let bad = |why: &str| DeviceError::Policy {
        rule: "files.roots",
        why: why.to_string(),
    };
    if path.len() > MAX_PATH_BYTES || path.chars().any(char::is_control) {
        return Err(bad(
            "the path is too long or contains NUL/control characters",
        ));
    }
    if !path.starts_with('/') {
        return Err(bad("the path must be absolute (start with /)"));
    }
    let mut parts = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => return Err(bad("`..` segments are not allowed")),
            s => parts.push(s),
        }
    }
    let norm = format!("/{}", parts.join("/"));
    let roots_trimmed = roots
        .iter()
        .map(|r| r.trim_end_matches('/'))
        .filter(|r| !r.is_empty());
    let inside = roots_trimmed
        .clone()
        .any(|r| norm.starts_with(r) && norm[r.len()..].starts_with('/'));
    if let Some(root) = roots_trimmed.clone().find(|r| *r == norm) {
        return Err(bad(&format!(
            "the path is the allowed directory {root} itself, not a file: name a file inside it ({root}/NAME)"
        )));
    }
    // The caller's path is not repeated (docs/protocol.md: refusals never echo a value).
    if !inside {
        return Err(bad(&format!(
            "the path is outside the allowed directories ({})",
            roots.join(", ")
        )));
    }
    Ok(norm)
}

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

const PATH_DESC: &str = "Absolute device path of a file inside the allowed directories of the device policy (default /sdcard/Download, /sdcard/Pictures, /sdcard/DCIM); no `..`.";

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
    const DESCRIPTION: &'static str = "Copy a file from the bound phone to the connector and return a file_ref with a relative download_url, byte_size (bytes), mime_type (guessed from the extension) and expires_at (Unix ms). Only paths inside the policy's allowed directories (policy_denied otherwise); files above files.max_pull_bytes (default 50 MiB) fail with file_too_large; a missing file gives file_not_found. No side effects.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
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

    async fn run(args: PullArgs, ctx: &ToolCtx<'_>) -> Result<PullOutput, DeviceError> {
        let path = check_path(&args.path, &ctx.policy.files.roots)?;
        let max = ctx.policy.files.max_pull_bytes;
        let limit = usize::try_from(max).unwrap_or(usize::MAX);
        let bytes = ctx
            .link
            .pull(&path, FILE_DEADLINE, limit)
            .await
            .map_err(|e| match e {
                AdbError::OutputTooLarge { .. } => DeviceError::FileTooLarge(format!(
                    "{path} is larger than files.max_pull_bytes ({max} bytes)"
                )),
                AdbError::Refused(m) if m.contains("No such file") => {
                    DeviceError::FileNotFound { path: path.clone() }
                }
                AdbError::Refused(m) if m.contains("ermission denied") => {
                    DeviceError::PermissionDenied(format!("the phone refused to read {path}: {m}"))
                }
                other => DeviceError::from(other),
            })?;
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
}

/// `android_file_push`: `file_ref` from `POST /files/uploads` → device file.
pub struct FilePush;

impl DeviceTool for FilePush {
    const ID: &'static str = "android_file_push";
    const TITLE: &'static str = "Upload a file to the phone";
    const DESCRIPTION: &'static str = "Write a file uploaded with POST /files/uploads (its file_ref, this channel) to a path on the bound phone, replacing an existing file. Only paths inside the policy's allowed directories (policy_denied otherwise); files above files.max_push_bytes (default 50 MiB) fail with file_too_large.";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    type Args = PushArgs;
    type Output = PushOutput;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["file_ref", "path"], "properties": {
            "file_ref": {"type": "string", "minLength": 1, "maxLength": 200, "description": "file_ref returned by POST /files/uploads on this channel."},
            "path": path_schema()
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["path", "byte_size"], "properties": {
            "path": {"type": "string"}, "byte_size": {"type": "integer", "minimum": 0}
        }})
    }

    async fn run(args: PushArgs, ctx: &ToolCtx<'_>) -> Result<PushOutput, DeviceError> {
        let path = check_path(&args.path, &ctx.policy.files.roots)?;
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
        ctx.link
            .push(&path, 0o660, &bytes, FILE_DEADLINE)
            .await
            .map_err(|e| match e {
                AdbError::Refused(m) => {
                    DeviceError::CommandFailed(format!("the phone refused to write {path}: {m}"))
                }
                other => DeviceError::from(other),
            })?;
        Ok(PushOutput {
            path,
            byte_size: bytes.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;
    use crate::protocol::ErrorCode;

    #[test]
    fn paths_stay_inside_roots() {
        let roots = vec!["/sdcard/Download".to_string(), "/sdcard/DCIM/".to_string()];
        assert_eq!(
            check_path("/sdcard//Download/./a.txt", &roots).unwrap(),
            "/sdcard/Download/a.txt"
        );
        assert_eq!(
            check_path("/sdcard/DCIM/x/y.jpg", &roots).unwrap(),
            "/sdcard/DCIM/x/y.jpg"
        );
        for bad in [
            "/sdcard/Download/../../data/x",
            "sdcard/Download/a",
            "/sdcard/Download",
            "/sdcard/Downloads/a",
            "/sdcard/Download/a\0b",
            "/data/local/tmp/a",
        ] {
            let e = check_path(bad, &roots).unwrap_err();
            assert_eq!(e.code(), ErrorCode::PolicyDenied, "{bad}");
            assert!(e.to_string().contains("files.roots"));
        }
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
        });
    }
}
