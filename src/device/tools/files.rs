//! File tools: `android_file_pull` (device file → `file_ref`) and `android_file_push`
//! (`file_ref` from `POST /files/uploads` → device file), over the sync service (binary-safe).
//!
//! Both stay inside the device policy's `[files] roots`: the path must be absolute, free of NUL
//! and control characters and of `..` segments; it is normalised (`//` and `.` collapsed) and
//! must then lie strictly under one root. Symlinks on the phone are not resolved (the sync
//! service follows them), so roots should not contain links that leave them. Sizes are capped by
//! `files.max_pull_bytes` / `files.max_push_bytes` (`file_too_large`).

use std::time::Duration;

use serde_json::{json, Value};

use super::apps::resolve_ref;
use super::util::{self, arg_str};
use super::{ToolCtx, ToolError};
use crate::adb::AdbError;
use crate::protocol::card::ToolDecl;
use crate::protocol::ErrorCode;

/// Deadline of one pull or push (50 MiB over USB 2 takes ~3 s; slow Wi-Fi adb ~1 MB/s).
pub const FILE_DEADLINE: Duration = Duration::from_secs(120);
/// Longest device path (bytes; the sync protocol's limit is 1024).
pub const MAX_PATH_BYTES: usize = 1024;

/// Normalises `path` and checks it lies under one of `roots`; the error names the problem.
pub fn check_path(path: &str, roots: &[String]) -> Result<String, ToolError> {
    let bad = |why: &str| util::denied("files.roots", why);
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
    let inside = roots.iter().any(|r| {
        let r = r.trim_end_matches('/');
        !r.is_empty() && norm.starts_with(r) && norm[r.len()..].starts_with('/')
    });
    if !inside {
        return Err(bad(&format!(
            "{norm} is outside the allowed directories ({})",
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

/// `android_file_pull`.
pub async fn file_pull(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let path = check_path(arg_str(args, "path"), &ctx.policy.files.roots)?;
    let max = ctx.policy.files.max_pull_bytes;
    let limit = usize::try_from(max).unwrap_or(usize::MAX);
    let bytes = ctx
        .link
        .pull(&path, FILE_DEADLINE, limit)
        .await
        .map_err(|e| match e {
            AdbError::OutputTooLarge { .. } => ToolError::new(
                ErrorCode::FileTooLarge,
                format!("{path} is larger than files.max_pull_bytes ({max} bytes)"),
            ),
            AdbError::Refused(m) if m.contains("No such file") => ToolError::new(
                ErrorCode::FileNotFound,
                format!("{path} does not exist on the phone"),
            ),
            AdbError::Refused(m) if m.contains("ermission denied") => ToolError::new(
                ErrorCode::DevicePermissionDenied,
                format!("the phone refused to read {path}: {m}"),
            ),
            other => ToolError::from(other),
        })?;
    let (mime, ext) = mime_guess(&path);
    let issued = ctx
        .files
        .put(ctx.channel_id, bytes, mime, &ext)
        .await
        .map_err(|e| ToolError::new(ErrorCode::InternalError, e.to_string()))?;
    Ok(json!({
        "path": path,
        "file_ref": issued.file_ref,
        "download_url": issued.download_url,
        "mime_type": issued.mime_type,
        "byte_size": issued.byte_size,
        "expires_at": issued.expires_at,
    }))
}

/// `android_file_push`.
pub async fn file_push(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let path = check_path(arg_str(args, "path"), &ctx.policy.files.roots)?;
    let (local, size, _) = resolve_ref(ctx, arg_str(args, "file_ref")).await?;
    let max = ctx.policy.files.max_push_bytes;
    if size > max {
        return Err(ToolError::new(
            ErrorCode::FileTooLarge,
            format!("the file has {size} bytes; files.max_push_bytes is {max}"),
        ));
    }
    let bytes = tokio::fs::read(&local)
        .await
        .map_err(|_| ToolError::new(ErrorCode::InvalidArguments, "the uploaded file is gone"))?;
    if bytes.len() as u64 > max {
        return Err(ToolError::new(
            ErrorCode::FileTooLarge,
            format!("the file is larger than files.max_push_bytes ({max} bytes)"),
        ));
    }
    ctx.link
        .push(&path, 0o660, &bytes, FILE_DEADLINE)
        .await
        .map_err(|e| match e {
            AdbError::Refused(m) => ToolError::new(
                ErrorCode::DeviceCommandFailed,
                format!("the phone refused to write {path}: {m}"),
            ),
            other => ToolError::from(other),
        })?;
    Ok(json!({"path": path, "byte_size": bytes.len()}))
}

const PATH_DESC: &str = "Absolute device path of a file inside the allowed directories of the device policy (default /sdcard/Download, /sdcard/Pictures, /sdcard/DCIM); no `..`.";

/// Card declarations of the file tools.
pub fn decls() -> Vec<ToolDecl> {
    vec![
        ToolDecl {
            tool_id: "android_file_pull",
            title: "Download a file from the phone",
            description: "Copy a file from the bound phone to the connector and return a file_ref with a relative download_url, byte_size (bytes), mime_type (guessed from the extension) and expires_at (Unix ms). Only paths inside the policy's allowed directories (policy_denied otherwise); files above files.max_pull_bytes (default 50 MiB) fail with file_too_large; a missing file gives file_not_found. No side effects.",
            side_effect: false,
            input_schema: json!({"type": "object", "required": ["path"], "properties": {
                "path": {"type": "string", "minLength": 2, "maxLength": MAX_PATH_BYTES, "description": PATH_DESC}
            }}),
            output_schema: json!({"type": "object", "required": ["file_ref", "download_url", "byte_size", "mime_type"]}),
        },
        ToolDecl {
            tool_id: "android_file_push",
            title: "Upload a file to the phone",
            description: "Write a file uploaded with POST /files/uploads (its file_ref, this channel) to a path on the bound phone, replacing an existing file. Only paths inside the policy's allowed directories (policy_denied otherwise); files above files.max_push_bytes (default 50 MiB) fail with file_too_large.",
            side_effect: true,
            input_schema: json!({"type": "object", "required": ["file_ref", "path"], "properties": {
                "file_ref": {"type": "string", "minLength": 1, "maxLength": 200, "description": "file_ref returned by POST /files/uploads on this channel."},
                "path": {"type": "string", "minLength": 2, "maxLength": MAX_PATH_BYTES, "description": PATH_DESC}
            }}),
            output_schema: json!({"type": "object", "required": ["path", "byte_size"]}),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(e.code, ErrorCode::PolicyDenied, "{bad}");
            assert!(e.message.contains("files.roots"));
        }
        assert_eq!(mime_guess("/a/b.JPG").0, "image/jpeg");
        assert_eq!(mime_guess("/a/b").0, "application/octet-stream");
    }
}
