//! `android_logcat`: recent lines of the phone's main log buffers, filtered on the phone.
//!
//! Command (AOSP `system/logging/logcat/logcat.cpp`): `logcat -d -v threadtime -t N` (the last N
//! lines) or `-t 'TIME'` (lines since TIME: `YYYY-MM-DD hh:mm:ss.mmm`, `MM-DD hh:mm:ss.mmm` or
//! epoch seconds `sssss.mmm`), `--pid=PID` for a package (PID from `pidof PKG`, checked against
//! `ps`; on Android < 7, which has no `--pid`, the PID column is filtered here), and a filter
//! spec `-s TAG:LEVEL` or `*:LEVEL`. Output lines are `threadtime`:
//! `MM-DD hh:mm:ss.mmm  PID  TID L TAG: message`; `--------- beginning of main` markers are
//! dropped. The returned text is capped at [`RETURN_BYTES`], keeping the newest lines.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::command::{self, compound, sections};
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
    const BACKENDS: &'static [&'static str] = &["logcat"];
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
        let (sdk, pid) = if package.is_empty() {
            (None, None)
        } else {
            match package_pid(ctx, package).await? {
                (sdk, Ok(pid)) => (sdk, Some(pid)),
                (_, Err(note)) => {
                    return Ok(Output {
                        lines: vec![],
                        count: 0,
                        truncated: false,
                        pid: None,
                        note: Some(note),
                    })
                }
            }
        };
        // `--pid` is Android 7+ (SDK 24); older phones (and an unknown SDK that rejects it)
        // are filtered here by the PID column (field bug 30).
        let mut on_host = pid.is_some() && sdk.is_some_and(|s| s < PID_FLAG_SDK);
        let mut out = read_log(ctx, &args, pid, on_host).await?;
        if pid.is_some() && !on_host && rejected_pid_flag(&out) {
            on_host = true;
            out = read_log(ctx, &args, pid, on_host).await?;
        }
        if let Some(e) = out.failure("logcat") {
            return Err(e);
        }
        let text = match (pid, on_host) {
            (Some(p), true) => only_pid(&out.stdout, p),
            _ => out.stdout,
        };
        let (lines, truncated) = tail_lines(&text, args.max_lines() as usize);
        Ok(Output {
            count: lines.len(),
            truncated,
            pid,
            lines,
            note: None,
        })
    }
}

/// First SDK whose logcat has `--pid` (Android 7.0; `logcat.cpp` long options).
const PID_FLAG_SDK: u32 = 24;
/// First SDK whose `ps` is toybox's (lists only the session without `-A`; Android 8.0).
const TOYBOX_PS_SDK: u32 = 26;

/// Runs logcat for `args`: with `--pid` unless `on_host`, where the whole buffer (or since the
/// asked time) is read and the caller keeps `pid`'s lines.
async fn read_log(
    ctx: &ToolCtx<'_>,
    args: &Args,
    pid: Option<u32>,
    on_host: bool,
) -> Result<command::Text, DeviceError> {
    let mut argv = logcat_argv(args, if on_host { None } else { pid });
    if on_host && args.since.is_none() {
        // `-t N` would count other processes' lines too: read all, cut after filtering.
        argv.drain(4..6);
    }
    command::run(ctx, &command_line(&argv), LOGCAT_DEADLINE, READ_LIMIT).await
}

/// Whether logcat refused `--pid` (Android 6: `Unrecognized Option -` and its usage, exit 1;
/// NativeScript PR #3808; getopt's forms: `unrecognized option '--pid=N'`, `invalid option --
/// -`, `unknown option`).
fn rejected_pid_flag(out: &command::Text) -> bool {
    out.exit_code != Some(0)
        && [
            "Unrecognized Option",
            "unrecognized option",
            "invalid option",
            "nknown option",
            "Usage: logcat",
        ]
        .iter()
        .any(|m| out.all().contains(m))
}

/// The threadtime lines of `pid` (`MM-DD hh:mm:ss.mmm  PID  TID L TAG: msg`; the PID is the
/// third field); other lines (markers) are dropped.
pub fn only_pid(log: &str, pid: u32) -> String {
    let want = pid.to_string();
    log.lines()
        .filter(|l| l.split_whitespace().nth(2) == Some(want.as_str()))
        .flat_map(|l| [l, "\n"])
        .collect()
}

/// `(pid, name)` rows of `ps` output: the header names the PID column, the name is the last
/// field (toybox `ps -A -o PID,NAME`; toolbox `ps`, whose unheaded state column sits before
/// NAME). Empty when there is no header with `PID`.
pub fn parse_process_table(out: &str) -> Vec<(u32, String)> {
    let mut lines = out.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(col) = lines
        .next()
        .and_then(|h| h.split_whitespace().position(|c| c == "PID"))
    else {
        return Vec::new();
    };
    lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let pid = f.get(col)?.parse().ok()?;
            Some((pid, f.last()?.to_string()))
        })
        .collect()
}

/// The phone's SDK and the pid of `package`'s process: `pidof` first, each pid it printed
/// checked against the process table (`ps`), because some OEM builds' `pidof` prints every
/// pid (iGio90/Dwarf#30, field bug 31); a `pidof` that prints none (or is missing) is checked
/// the same way. `Err(note)` when the package has no process. A
/// table that cannot be read fails with `device_command_failed` quoting it: an unverified pid
/// is never used.
async fn package_pid(
    ctx: &ToolCtx<'_>,
    package: &str,
) -> Result<(Option<u32>, Result<u32, String>), DeviceError> {
    let cmd = compound(&[
        command_line(&["getprop", "ro.build.version.sdk"]),
        command_line(&["pidof", package]),
    ]);
    let out = command::run(ctx, &cmd, LOGCAT_DEADLINE, 64 * 1024).await?;
    let s = sections(&out.stdout, 2);
    let sdk = s[0].trim().parse::<u32>().ok();
    let claimed: Vec<u32> = s[1]
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    // `pidof` finding none is not trusted either (an OEM `pidof` may miss app processes, or
    // be absent: `pidof: not found`): the table decides; only an unreadable table leaves
    // pidof's "none" standing.
    let none = || format!("{package} has no running process (pidof found none)");
    // toybox `ps` needs `-A` (Android 8+); toolbox `ps` lists all and reads `-A` as a name
    // filter (header only), so an older or unknown phone falls back to the plain form.
    let forms: &[&[&str]] = if sdk.is_some_and(|s| s < TOYBOX_PS_SDK) {
        &[&["ps"]]
    } else {
        &[&["ps", "-A", "-o", "PID,NAME"], &["ps"]]
    };
    let mut procs = Vec::new();
    let mut said = String::new();
    for ps in forms {
        let table = command::run(ctx, &command_line(ps), LOGCAT_DEADLINE, READ_LIMIT).await?;
        if let Some(e) = table.failure("ps") {
            if claimed.is_empty() {
                return Ok((sdk, Err(none())));
            }
            return Err(e);
        }
        procs = parse_process_table(&table.stdout);
        if !procs.is_empty() {
            break;
        }
        said = format!("`{}` printed: {}", ps.join(" "), table.telling_line());
    }
    if procs.is_empty() && claimed.is_empty() {
        return Ok((sdk, Err(none())));
    }
    if procs.is_empty() {
        return Err(DeviceError::CommandFailed(format!(
            "pidof {package} printed {} but the process table could not be read to check it ({said}); no log was read",
            s[1].trim(),
        )));
    }
    let running: Vec<u32> = procs
        .iter()
        .filter(|(_, name)| name == package)
        .map(|(p, _)| *p)
        .collect();
    Ok((
        sdk,
        match claimed.iter().find(|p| running.contains(p)).or(running.first()) {
            Some(pid) => Ok(*pid),
            None if claimed.is_empty() => Err(none()),
            None => Err(format!(
                "{package} has no running process (the process table has none; this phone's pidof printed {}, which are other processes)",
                s[1].trim()
            )),
        },
    ))
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
        let toybox = "PID NAME\n1 init\n2345 com.example.notes\n";
        assert_eq!(
            parse_process_table(toybox),
            vec![(1, "init".into()), (2345, "com.example.notes".into())]
        );
        let toolbox = "USER      PID   PPID  VSIZE  RSS   WCHAN              PC  NAME\nroot      1     0     8904   708   SyS_epoll_ 0000000000 S /init\nu0_a77    2345  612   1024   512   SyS_epoll_ 0000000000 S com.example.notes\n";
        assert_eq!(
            parse_process_table(toolbox)[1],
            (2345, "com.example.notes".into())
        );
        assert!(parse_process_table("ps: bad -o\n").is_empty());
        let log = "--------- beginning of main\n11-29 10:00:00.000  2345  2345 I Notes: a\n11-29 10:00:00.001     1     1 I init: b\n";
        assert_eq!(
            only_pid(log, 2345),
            "11-29 10:00:00.000  2345  2345 I Notes: a\n"
        );
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
