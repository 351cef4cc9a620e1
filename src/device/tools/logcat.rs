//! `android_logcat`: recent lines of the phone's main log buffers, filtered on the phone.
//!
//! Command (AOSP `system/logging/logcat/logcat.cpp`): `logcat -d -v threadtime -t N` (the last N
//! lines) or `-t 'TIME'` (lines since TIME: `YYYY-MM-DD hh:mm:ss.mmm`, `MM-DD hh:mm:ss.mmm` or
//! epoch seconds `sssss.mmm`), `--pid=PID` for a package (PID from `pidof PKG`), and a filter
//! spec `-s TAG:LEVEL` or `*:LEVEL`. Output lines are `threadtime`:
//! `MM-DD hh:mm:ss.mmm  PID  TID L TAG: message`; `--------- beginning of main` markers are
//! dropped. The returned text is capped at [`RETURN_BYTES`], keeping the newest lines.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::command;
use super::phone::packages::package_schema;
use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::shell_quote::command_line;

/// Deadline of `logcat -d` (and of `pidof`).
pub const LOGCAT_DEADLINE: Duration = Duration::from_secs(15);
/// Default and largest `lines`.
pub const DEFAULT_LINES: u64 = 200;
/// Largest `lines`.
pub const MAX_LINES: u64 = 2000;
/// Bytes read from the phone at most (2000 lines × the 4 KiB logger payload limit).
pub const READ_LIMIT: usize = 10 * 1024 * 1024;
/// Bytes of log text returned at most (newest lines kept).
pub const RETURN_BYTES: usize = 256 * 1024;

const SINCE_PATTERN: &str =
    r"^(\d{4}-)?\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})?$|^\d{1,12}(\.\d{1,9})?$";
const TAG_PATTERN: &str = r"^[A-Za-z0-9_.\-/$]{1,64}$";

/// Minimum priority (logcat's letters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum Level {
    /// Verbose (everything; the default).
    #[default]
    V,
    /// Debug.
    D,
    /// Info.
    I,
    /// Warn.
    W,
    /// Error.
    E,
    /// Fatal.
    F,
}

impl Level {
    fn letter(self) -> &'static str {
        match self {
            Level::V => "V",
            Level::D => "D",
            Level::I => "I",
            Level::W => "W",
            Level::E => "E",
            Level::F => "F",
        }
    }
}

/// Arguments.
#[derive(Debug, Default, Deserialize)]
pub struct Args {
    /// Most lines (newest kept), default [`DEFAULT_LINES`].
    pub lines: Option<u64>,
    /// Only lines at or after this phone-local time.
    pub since: Option<String>,
    /// Minimum priority.
    #[serde(default)]
    pub level: Level,
    /// Only this tag.
    pub tag: Option<String>,
    /// Only this package's running process.
    pub package: Option<String>,
}

impl Args {
    fn max_lines(&self) -> u64 {
        self.lines.unwrap_or(DEFAULT_LINES).clamp(1, MAX_LINES)
    }
}

/// The logcat argv for the arguments (`pid` from `pidof`).
pub fn logcat_argv(args: &Args, pid: Option<u32>) -> Vec<String> {
    let mut argv: Vec<String> = ["logcat", "-d", "-v", "threadtime", "-t"]
        .map(String::from)
        .to_vec();
    match args.since.as_deref() {
        // logcat reads an all-digit -t argument as a line count: epoch seconds get a fraction.
        Some(since) if since.bytes().all(|b| b.is_ascii_digit()) => {
            argv.push(format!("{since}.000"))
        }
        Some(since) => argv.push(since.to_string()),
        None => argv.push(args.max_lines().to_string()),
    }
    if let Some(pid) = pid {
        argv.push(format!("--pid={pid}"));
    }
    let level = args.level.letter();
    match args.tag.as_deref() {
        Some(tag) => {
            argv.push("-s".into());
            argv.push(format!("{tag}:{level}"));
        }
        None if args.level != Level::V => argv.push(format!("*:{level}")),
        None => {}
    }
    argv
}

/// The newest log lines of `out` (at most `max_lines`, at most [`RETURN_BYTES`]) and whether any
/// were cut.
pub fn tail_lines(out: &str, max_lines: usize) -> (Vec<String>, bool) {
    let all: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("--------- ") && !l.trim().is_empty())
        .collect();
    let mut kept = Vec::new();
    let mut bytes = 0;
    for l in all.iter().rev().take(max_lines) {
        if bytes + l.len() + 1 > RETURN_BYTES {
            break;
        }
        bytes += l.len() + 1;
        kept.push(l.to_string());
    }
    let truncated = kept.len() < all.len();
    kept.reverse();
    (kept, truncated)
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// Lines, oldest first.
    pub lines: Vec<String>,
    /// Number of lines.
    pub count: usize,
    /// Whether older lines were cut.
    pub truncated: bool,
    /// The package's process, when filtered by package.
    pub pid: Option<u32>,
    /// Why nothing was read (package not running).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `android_logcat`.
pub struct Logcat;

impl DeviceTool for Logcat {
    const ID: &'static str = "android_logcat";
    const TITLE: &'static str = "Read the device log";
    const DESCRIPTION: &'static str = "Read recent lines of the bound phone's log (logcat, threadtime format: `MM-DD hh:mm:ss.mmm PID TID LEVEL TAG: message`), oldest first, newest last. Filters run on the phone: lines (last N, default 200, max 2000), since (a time), level (minimum priority), tag (only this tag), package (only its running process; empty result with pid null when it is not running). At most 256 KiB of text is returned (truncated: true when older lines were cut). No side effects.";
    const SIDE_EFFECT: SideEffect = SideEffect::None;
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "properties": {
            "lines": {"type": "integer", "minimum": 1, "maximum": MAX_LINES, "description": "Most lines to return (newest kept), default 200."},
            "since": {"type": "string", "pattern": SINCE_PATTERN, "description": "Only lines at or after this phone-local time: `YYYY-MM-DD hh:mm:ss.mmm`, `MM-DD hh:mm:ss.mmm`, or Unix epoch seconds (`1764410400.5`)."},
            "level": {"type": "string", "enum": ["V", "D", "I", "W", "E", "F"], "description": "Minimum priority: V(erbose), D(ebug), I(nfo), W(arn), E(rror), F(atal). Default V."},
            "tag": {"type": "string", "pattern": TAG_PATTERN, "description": "Only lines with exactly this tag (e.g. ActivityManager)."},
            "package": package_schema("Only lines of this package's running process (pidof).")
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["lines", "count", "truncated", "pid"], "properties": {
            "lines": {"type": "array", "items": {"type": "string"}},
            "count": {"type": "integer", "minimum": 0}, "truncated": {"type": "boolean"},
            "pid": {"type": ["integer", "null"]}, "note": {"type": "string"}
        }})
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let package = args.package.as_deref().unwrap_or("");
        let pid = if package.is_empty() {
            None
        } else {
            let out = command::run(
                ctx,
                &command_line(&["pidof", package]),
                LOGCAT_DEADLINE,
                64 * 1024,
            )
            .await?;
            match out
                .stdout
                .split_whitespace()
                .next()
                .and_then(|p| p.parse::<u32>().ok())
            {
                Some(pid) => Some(pid),
                None => {
                    return Ok(Output {
                        lines: vec![],
                        count: 0,
                        truncated: false,
                        pid: None,
                        note: Some(format!(
                            "{package} has no running process (pidof found none)"
                        )),
                    })
                }
            }
        };
        let argv = logcat_argv(&args, pid);
        let out = command::run(ctx, &command_line(&argv), LOGCAT_DEADLINE, READ_LIMIT).await?;
        if out.exit_code.is_some_and(|c| c != 0) {
            return Err(DeviceError::CommandFailed(format!(
                "logcat failed (exit {:?}): {}",
                out.exit_code,
                out.first_line()
            )));
        }
        let (lines, truncated) = tail_lines(&out.stdout, args.max_lines() as usize);
        Ok(Output {
            count: lines.len(),
            truncated,
            pid,
            lines,
            note: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    fn args(v: Value) -> Args {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn argv_and_tail() {
        let a = logcat_argv(
            &args(json!({"lines": 5, "level": "W", "tag": "ActivityManager"})),
            Some(42),
        );
        assert_eq!(
            a,
            [
                "logcat",
                "-d",
                "-v",
                "threadtime",
                "-t",
                "5",
                "--pid=42",
                "-s",
                "ActivityManager:W"
            ]
        );
        let a = logcat_argv(
            &args(json!({"since": "11-29 10:00:00.000", "level": "E"})),
            None,
        );
        assert_eq!(a[5], "11-29 10:00:00.000");
        assert_eq!(a[6], "*:E");
        assert_eq!(logcat_argv(&Args::default(), None).len(), 6);
        let (l, t) = tail_lines("--------- beginning of main\na\nb\nc\n", 2);
        assert_eq!(l, vec!["b", "c"]);
        assert!(t);
        let re = regex::Regex::new(SINCE_PATTERN).unwrap();
        for ok in [
            "2026-11-29 10:00:00.000",
            "11-29 10:00:00",
            "1764410400.5",
            "17",
        ] {
            assert!(re.is_match(ok), "{ok}");
        }
        assert!(!re.is_match("yesterday; reboot"));
    }

    #[test]
    fn outputs_match_the_schema() {
        let mut out = Output {
            lines: vec!["11-29 10:00:00.000  1  2 I Tag: hi".into()],
            count: 1,
            truncated: false,
            pid: Some(42),
            note: None,
        };
        assert_output::<Logcat>(&out);
        out.pid = None;
        out.note = Some("not running".into());
        assert_output::<Logcat>(&out);
    }
}
