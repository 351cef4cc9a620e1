//! `android_screen_record`: `screenrecord --time-limit N FILE` (AOSP
//! `frameworks/av/cmds/screenrecord/screenrecord.cpp`, at most 180 s) into the phone's app-temp
//! directory, progress pushed while it records (`tool.progress.push`, spec §8.20), then pulled
//! over sync into the file cache (`file_ref`, `video/mp4`) and deleted from the phone.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::{command, file_refs};
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::shell_quote::command_line;
use crate::file_cache::{FileOrigin, IssuedFile};

/// Longest recording (s), screenrecord's own limit.
pub const MAX_SECONDS: u64 = 180;
/// Largest recording pulled (bytes).
pub const MAX_BYTES: usize = 256 * 1024 * 1024;
/// How often progress is pushed.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

/// Arguments.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// Recording length, s (default 10).
    pub duration_s: Option<u64>,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// The recording (`file_ref`, `download_url`, `mime_type`, `byte_size`, `expires_at`).
    #[serde(flatten)]
    pub file: IssuedFile,
    /// Recorded length asked for, s.
    pub duration_s: u64,
}

/// `android_screen_record`.
pub struct ScreenRecord;

impl DeviceTool for ScreenRecord {
    const ID: &'static str = "android_screen_record";
    const TITLE: &'static str = "Record the screen";
    const DESCRIPTION: &'static str = "Record the bound phone's screen for duration_s seconds (1–180, default 10) as MP4; progress is pushed while recording; returns a file_ref and relative download_url (never inline bytes), byte_size (bytes) and expires_at (Unix ms).";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    const BACKENDS: &'static [&'static str] = &["screenrecord"];
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "properties": {
            "duration_s": {"type": "integer", "minimum": 1, "maximum": MAX_SECONDS, "description": "Recording length in seconds (default 10)."}
        }})
    }

    fn output_schema() -> Value {
        let (string, int) = (json!({"type": "string"}), json!({"type": "integer"}));
        json!({"type": "object", "required": ["file_ref", "download_url", "mime_type", "byte_size", "expires_at", "duration_s"], "properties": {
            "file_ref": string, "download_url": string, "mime_type": {"const": "video/mp4"},
            "byte_size": int, "expires_at": int, "duration_s": {"type": "integer", "minimum": 1, "maximum": MAX_SECONDS}
        }})
    }

    /// The recording (its length + 20 s), the pull (60 s) and the removals.
    fn deadline(args: &Args) -> Duration {
        Duration::from_secs(args.duration_s.unwrap_or(10).clamp(1, MAX_SECONDS) + 90)
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let secs = args.duration_s.unwrap_or(10).clamp(1, MAX_SECONDS);
        let path = format!(
            "/data/local/tmp/xagent-rec-{}.mp4",
            crate::protocol::random_hex(6)
        );
        let cmd = command_line(&["screenrecord", "--time-limit", &secs.to_string(), &path]);
        let deadline = Duration::from_secs(secs + 20);
        let started = Instant::now();
        let record = ctx.shell(&cmd, deadline, 1 << 16);
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
        let text = command::Text::decode(&out);
        // No status (legacy shell without its marker) is not a success either.
        let failure = text.failure("screenrecord").or_else(|| {
            text.exit_code.is_none().then(|| {
                DeviceError::CommandFailed(format!(
                    "screenrecord failed (exit none): {}",
                    text.telling_line()
                ))
            })
        });
        if let Some(e) = failure {
            let _ = ctx.shell(&cleanup, Duration::from_secs(5), 1 << 12).await;
            return Err(e);
        }
        (ctx.progress)(0.97, "downloading");
        let bytes = ctx.pull(&path, Duration::from_secs(60), MAX_BYTES).await;
        let _ = ctx.shell(&cleanup, Duration::from_secs(5), 1 << 12).await;
        let file = file_refs::store(ctx, bytes?, "video/mp4", "mp4", FileOrigin::Capture).await?;
        Ok(Output {
            file,
            duration_s: secs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn outputs_match_the_schema() {
        assert_output::<ScreenRecord>(&Output {
            file: IssuedFile {
                file_ref: "r".into(),
                download_url: "/files/refs/r".into(),
                mime_type: "video/mp4".into(),
                byte_size: 10,
                expires_at: 1,
            },
            duration_s: 10,
        });
    }
}
