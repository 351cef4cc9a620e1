//! `android_screen_record`: `screenrecord --time-limit N FILE` (AOSP
//! `frameworks/av/cmds/screenrecord/screenrecord.cpp`, at most 180 s) into the phone's app-temp
//! directory, progress pushed while it records (`tool.progress.push`, spec §8.20), then pulled
//! over sync into the file cache (`file_ref`, `video/mp4`) and deleted from the phone.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::{ToolCtx, ToolError};
use crate::device::shell_quote::command_line;
use crate::protocol::card::ToolDecl;
use crate::protocol::ErrorCode;

/// Longest recording (s), screenrecord's own limit.
pub const MAX_SECONDS: u64 = 180;
/// Largest recording pulled (bytes).
pub const MAX_BYTES: usize = 256 * 1024 * 1024;
/// How often progress is pushed.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// The tool.
pub async fn screen_record(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let secs = args
        .get("duration_s")
        .and_then(Value::as_u64)
        .unwrap_or(10)
        .clamp(1, MAX_SECONDS);
    let path = format!(
        "/data/local/tmp/xagent-rec-{}.mp4",
        crate::protocol::random_hex(6)
    );
    let cmd = command_line(&["screenrecord", "--time-limit", &secs.to_string(), &path]);
    let deadline = Duration::from_secs(secs + 20);
    let started = Instant::now();
    let record = ctx.link.shell(&cmd, deadline, 1 << 16);
    tokio::pin!(record);
    let out = loop {
        tokio::select! {
            r = &mut record => break r?,
            _ = tokio::time::sleep(PROGRESS_EVERY) => {
                let done = started.elapsed().as_secs_f64() / secs as f64;
                (ctx.progress)(done.min(0.95), "recording");
            }
        }
    };
    let cleanup = command_line(&["rm", "-f", &path]);
    if out.exit_code != Some(0) {
        let _ = ctx
            .link
            .shell(&cleanup, Duration::from_secs(5), 1 << 12)
            .await;
        let msg = String::from_utf8_lossy(&out.stderr)
            .lines()
            .next()
            .unwrap_or("")
            .to_string();
        return Err(ToolError::new(
            ErrorCode::DeviceCommandFailed,
            format!("screenrecord failed (exit {:?}): {msg}", out.exit_code),
        ));
    }
    (ctx.progress)(0.97, "downloading");
    let bytes = ctx
        .link
        .pull(&path, Duration::from_secs(60), MAX_BYTES)
        .await;
    let _ = ctx
        .link
        .shell(&cleanup, Duration::from_secs(5), 1 << 12)
        .await;
    let bytes = bytes?;
    let issued = ctx
        .files
        .put(ctx.channel_id, bytes, "video/mp4", "mp4")
        .await
        .map_err(|e| ToolError::new(ErrorCode::InternalError, e.to_string()))?;
    Ok(json!({
        "file_ref": issued.file_ref,
        "download_url": issued.download_url,
        "mime_type": issued.mime_type,
        "byte_size": issued.byte_size,
        "expires_at": issued.expires_at,
        "duration_s": secs,
    }))
}

/// Card declaration.
pub fn decl() -> ToolDecl {
    ToolDecl {
        tool_id: "android_screen_record",
        title: "Record the screen",
        description: "Record the bound phone's screen for duration_s seconds (1–180, default 10) as MP4; progress is pushed while recording; returns a file_ref and relative download_url (never inline bytes), byte_size (bytes) and expires_at (Unix ms).",
        side_effect: false,
        input_schema: json!({"type": "object", "properties": {
            "duration_s": {"type": "integer", "minimum": 1, "maximum": MAX_SECONDS, "description": "Recording length in seconds (default 10)."}
        }}),
        output_schema: json!({"type": "object", "required": ["file_ref", "download_url", "mime_type", "byte_size"]}),
    }
}
