//! Running one quoted command line on the bound phone and reading its text: decoding shell
//! output, splitting a compound command's output into sections, judging `am` answers. Every call
//! takes its deadline and output cap from the caller.

use std::time::Duration;

use crate::device::error::DeviceError;
use crate::device::parse::text;
use crate::device::tools::ToolCtx;

/// Separator line printed between the parts of a compound command (`echo SEP`).
pub const SEP: &str = "__XAGENT_SECTION__";

/// Text output of one shell call.
#[derive(Debug, Clone, Default)]
pub struct Text {
    /// Decoded stdout (`\n` line ends).
    pub stdout: String,
    /// Decoded stderr (empty on legacy shell, where it is merged into stdout).
    pub stderr: String,
    /// Exit status (`None` on legacy shell).
    pub exit_code: Option<u8>,
}

impl Text {
    /// Decodes a shell call's raw output (`\n` line ends).
    pub fn decode(out: &crate::adb::ShellOutput) -> Text {
        Text {
            stdout: text::decode_output(&out.stdout),
            stderr: text::decode_output(&out.stderr),
            exit_code: out.exit_code,
        }
    }

    /// Stdout and stderr together (for error detection on legacy shell).
    pub fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }

    /// The first non-blank line of stderr, else of stdout (for error messages; never user text
    /// beyond what the phone printed).
    pub fn first_line(&self) -> String {
        self.stderr
            .lines()
            .chain(self.stdout.lines())
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .chars()
            .take(300)
            .collect()
    }
}

/// Runs an already quoted command line within `deadline` (cut to the call's,
/// [`super::deadline`]), reading at most `limit` bytes per stream, and decodes its output.
pub async fn run(
    ctx: &ToolCtx<'_>,
    cmd: &str,
    deadline: Duration,
    limit: usize,
) -> Result<Text, DeviceError> {
    let out = ctx.shell(cmd, deadline, limit).await?;
    Ok(Text::decode(&out))
}

/// Joins `steps` with ` && ` into as few command lines as fit in `max` bytes each, in order
/// (a step longer than `max` stands alone; the link refuses it). Run one after the other, a
/// failure stops the rest as `&&` would.
pub fn batched(steps: &[String], max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for step in steps {
        match lines.last_mut() {
            Some(line) if line.len() + 4 + step.len() <= max => {
                line.push_str(" && ");
                line.push_str(step);
            }
            _ => lines.push(step.clone()),
        }
    }
    lines
}

/// Joins command lines so that their outputs are separated by [`SEP`] lines.
pub fn compound(parts: &[String]) -> String {
    parts.join(&format!("; echo {SEP}; "))
}

/// Splits the output of a [`compound`] command into `n` sections (missing ones are empty).
pub fn sections(stdout: &str, n: usize) -> Vec<String> {
    let mut out: Vec<String> = vec![String::new()];
    for line in stdout.lines() {
        if line.trim() == SEP {
            out.push(String::new());
        } else if let Some(last) = out.last_mut() {
            last.push_str(line);
            last.push('\n');
        }
    }
    out.resize(n.max(out.len()), String::new());
    out
}

/// Longest command line of one [`run_batched`] call (bytes; adb host requests carry a
/// 4-hex-digit length, old adbd a 4 KiB payload).
pub const BATCH_BYTES: usize = 3500;

/// Runs `parts` (quoted command lines) as few [`compound`] calls as keep each line under
/// [`BATCH_BYTES`], each within `deadline`; returns one stdout section per part, in order.
pub async fn run_batched(
    ctx: &ToolCtx<'_>,
    parts: &[String],
    deadline: Duration,
    limit: usize,
) -> Result<Vec<String>, DeviceError> {
    let mut out = Vec::with_capacity(parts.len());
    let mut start = 0;
    let mut len = 0;
    for (i, part) in parts.iter().enumerate() {
        len += part.len() + SEP.len() + 10;
        if len >= BATCH_BYTES || i + 1 == parts.len() {
            let batch = &parts[start..=i];
            let text = run(ctx, &compound(batch), deadline, limit).await?;
            out.extend(
                sections(&text.stdout, batch.len())
                    .into_iter()
                    .take(batch.len()),
            );
            start = i + 1;
            len = 0;
        }
    }
    Ok(out)
}

/// Lines that tell why a command failed, most telling first: a missing service, a Java
/// exception, an error or usage line. Matched case-sensitively at any position of a line.
const TELLING: &[&str] = &[
    "Can't find service",
    "SecurityException",
    "Permission Denial",
    "Exception",
    "Error",
    "Unrecognized Option",
    "Unknown option",
    "unknown option",
    "inaccessible or not found",
    "not found",
    "usage:",
    "Usage:",
];

/// Permissions AOSP grants the shell user (uid 2000; `frameworks/base/packages/Shell/
/// AndroidManifest.xml`). A refusal naming one of them is the maker's build withholding it from
/// adb until a developer switch is on (field bugs 32, 70, 71), never a missing AOSP permission.
pub const SHELL_HELD: &[&str] = &[
    "INJECT_EVENTS",
    "WRITE_SECURE_SETTINGS",
    "WRITE_SETTINGS",
    "GRANT_RUNTIME_PERMISSIONS",
    "REVOKE_RUNTIME_PERMISSIONS",
    "MANAGE_APP_OPS_MODES",
    "INTERACT_ACROSS_USERS",
];

/// The fix named when the maker's build withholds a shell permission: each maker's switch
/// (Xiaomi: senzhk/ADBKeyBoard#78, field bug 32; OPPO/realme/OnePlus ColorOS "Disable
/// permission monitoring": zai-org/Open-AutoGLM#106, appium/appium#13802, field bugs 70–71).
pub const OEM_SHELL_FIX: &str = "the phone's maker withholds this permission from adb until a developer switch is on: Xiaomi/Redmi/POCO (MIUI, HyperOS) Developer options → \"USB debugging (Security settings)\" (needs a SIM and a Mi account; reboot after turning it on); OPPO/realme/OnePlus (ColorOS, realme UI, OxygenOS 12+) Developer options → \"Disable permission monitoring\" (then turn USB debugging off and on); then retry";

/// The withheld shell permission a refusal names (`INJECT_EVENTS`, …), if any.
pub fn withheld_permission(all: &str) -> Option<&'static str> {
    SHELL_HELD.iter().copied().find(|p| all.contains(p))
}

impl Text {
    /// The line that tells why the command failed: the first line of stderr, then of stdout,
    /// containing one of the [`TELLING`] markers (in their order), else the first non-blank
    /// line of stderr, then stdout; trimmed, at most 300 characters.
    pub fn telling_line(&self) -> String {
        let lines: Vec<&str> = self
            .stderr
            .lines()
            .chain(self.stdout.lines())
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        TELLING
            .iter()
            .find_map(|m| lines.iter().find(|l| l.contains(m)))
            .or(lines.first())
            .map(|l| l.chars().take(300).collect())
            .unwrap_or_default()
    }

    /// `Can't find service: NAME` anywhere in the output (`cmd`/`pm` on a phone whose system
    /// server is not up: still booting or restarting; dotnet/xharness#725, field bug 27), or
    /// the older `pm`'s `Error: Could not access the Package Manager.  Is the system running?`
    /// (AOSP `frameworks/base/cmds/pm/src/com/android/commands/pm/Pm.java`, `PM_NOT_RUNNING_ERR`,
    /// printed with exit 0): the typed, retryable [`DeviceError::ServiceMissing`]. Checked on
    /// compound lines too, where the exit status is only the last command's.
    pub fn service_missing(&self) -> Option<DeviceError> {
        const PM_NOT_RUNNING: &str = "Could not access the Package Manager";
        // `cmd`'s answer when the service died under the call (system server restarting):
        // `cmd: Failure calling service package: Broken pipe (32)` (AOSP `cmds/cmd/cmd.cpp`).
        const CALL_FAILED: &str = "Failure calling service ";
        let line = self.stderr.lines().chain(self.stdout.lines()).find(|l| {
            l.contains("Can't find service")
                || l.contains(PM_NOT_RUNNING)
                || l.contains(CALL_FAILED)
        })?;
        let service = if line.contains(PM_NOT_RUNNING) {
            "package".to_string()
        } else if let Some(rest) = line.split(CALL_FAILED).nth(1) {
            rest.split(':').next().unwrap_or("").trim().to_string()
        } else {
            line.rsplit("Can't find service:")
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        };
        Some(DeviceError::ServiceMissing {
            service,
            line: line.trim().chars().take(300).collect(),
        })
    }

    /// The outcome of a command, classified once from stdout, stderr and exit status together
    /// (issue 10): `None` when it succeeded. In order: a missing system service
    /// ([`Text::service_missing`]); a refusal (`SecurityException`, `Permission Denial`) →
    /// `device_permission_denied`, naming the fix where one is known; killed (exit 137 =
    /// SIGKILL, the low-memory killer or another client) → `device_command_failed` saying so;
    /// any other non-zero exit, Java exception or `Error` line → `device_command_failed`. No
    /// exit status (legacy shell without its marker) with clean output counts as success here;
    /// callers that need proof check it themselves. Messages are `WHAT failed (exit N): LINE`
    /// plus the fix.
    pub fn failure(&self, what: &str) -> Option<DeviceError> {
        if let Some(e) = self.service_missing() {
            return Some(e);
        }
        let all = self.all();
        let code = self.exit_code;
        let failed = code.is_some_and(|c| c != 0)
            || all.lines().any(|l| l.trim_start().starts_with("Error"))
            || all.contains("Exception");
        if !failed {
            return None;
        }
        let exit = code.map_or("none".to_string(), |c| c.to_string());
        let line = self.telling_line();
        if all.contains("SecurityException") || all.contains("Permission Denial") {
            let fix = if withheld_permission(&all).is_some() {
                OEM_SHELL_FIX
            } else {
                "the phone's security policy refuses this from adb; check the phone's developer and security settings"
            };
            return Some(DeviceError::PermissionDenied(format!(
                "{what} failed (exit {exit}): {line}; {fix}"
            )));
        }
        if let Some(signal) = code.and_then(killed_by) {
            return Some(DeviceError::CommandFailed(format!(
                "{what} was killed ({}){}",
                signal.explain(),
                if line.is_empty() {
                    String::new()
                } else {
                    format!(": {line}")
                }
            )));
        }
        Some(DeviceError::CommandFailed(format!(
            "{what} failed (exit {exit}): {line}"
        )))
    }
}

/// A command ended by a signal: the shell reports it as exit `128 + N` (mksh, toybox `sh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KilledBy {
    /// The exit status seen (129..=159).
    pub exit: u8,
    /// The signal number, `exit - 128`.
    pub signal: u8,
}

impl KilledBy {
    /// `exit 137 = SIGKILL: …`: the status, the signal's name and what usually sends it.
    pub fn explain(&self) -> String {
        let (name, who) = match self.signal {
            9 => (
                "SIGKILL",
                "the phone's low-memory killer or another tool ended it",
            ),
            15 => ("SIGTERM", "another tool or the system stopped it"),
            6 => ("SIGABRT", "it aborted (crashed)"),
            11 => ("SIGSEGV", "it crashed"),
            7 => ("SIGBUS", "it crashed"),
            1 => ("SIGHUP", "its session was hung up"),
            2 => ("SIGINT", "it was interrupted"),
            3 => ("SIGQUIT", "it was asked to quit"),
            13 => ("SIGPIPE", "its output was closed"),
            _ => ("a signal", "the phone ended it"),
        };
        if name == "a signal" {
            format!("exit {} = signal {}: {who}", self.exit, self.signal)
        } else {
            format!("exit {} = {name}: {who}", self.exit)
        }
    }
}

/// Whether exit status `code` means the command died of a signal (`128 + N`, N in 1..=31).
pub fn killed_by(code: u8) -> Option<KilledBy> {
    (129..=159).contains(&code).then(|| KilledBy {
        exit: code,
        signal: code - 128,
    })
}

/// Maps a failed `am` call to its device error (see [`Text::failure`]).
pub fn am_failure(out: &Text, what: &str) -> Option<DeviceError> {
    out.failure(what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_split_on_separator_lines() {
        let s = sections("a\nb\n__XAGENT_SECTION__\n\n__XAGENT_SECTION__\nc\n", 4);
        assert_eq!(s, vec!["a\nb\n", "\n", "c\n", ""]);
        assert_eq!(
            compound(&["x".into(), "y".into()]),
            "x; echo __XAGENT_SECTION__; y"
        );
    }

    fn text(stdout: &str, stderr: &str, code: u8) -> Text {
        Text {
            stdout: stdout.into(),
            stderr: stderr.into(),
            exit_code: Some(code),
        }
    }

    #[test]
    fn outcome_is_read_from_both_streams_and_the_status() {
        assert!(text("Events injected: 1\n", "", 0)
            .failure("input")
            .is_none());
        let e = text("", "cmd: Can't find service: package\n", 20)
            .failure("pm")
            .unwrap();
        assert_eq!(e.code(), crate::protocol::ErrorCode::DeviceBooting);
        assert!(e.to_string().contains("`package`"), "{e}");
        let old_pm = "Error: Could not access the Package Manager.  Is the system running?\n";
        let e = text(old_pm, "", 0).failure("pm").unwrap();
        assert_eq!(e.code(), crate::protocol::ErrorCode::DeviceBooting);
        assert!(e.to_string().contains("`package`"), "{e}");
        let trace = "\njava.lang.SecurityException: Injecting input events requires the caller (or the source of the instrumentation, if any) to have the INJECT_EVENTS permission.\n\tat android.os.Parcel.createExceptionOrNull(Parcel.java:3011)\n";
        let e = text("", trace, 255).failure("input").unwrap();
        assert_eq!(e.code(), crate::protocol::ErrorCode::DevicePermissionDenied);
        let m = e.to_string();
        assert!(
            m.contains("java.lang.SecurityException: Injecting input events"),
            "{m}"
        );
        assert!(m.contains("USB debugging (Security settings)"), "{m}");
        let e = text("", "", 137).failure("uiautomator dump").unwrap();
        assert!(e.to_string().contains("exit 137"), "{e}");
        // Any death by signal is told as such, with its status and signal.
        let e = text("", "", 143).failure("am start").unwrap();
        assert!(
            e.to_string().contains("was killed (exit 143 = SIGTERM"),
            "{e}"
        );
        let e = text("", "", 150).failure("am start").unwrap();
        assert!(e.to_string().contains("exit 150 = signal 22"), "{e}");
        assert!(killed_by(128).is_none() && killed_by(160).is_none());
        // The service dying under the call is the same retryable state as its absence.
        let e = text(
            "",
            "cmd: Failure calling service package: Broken pipe (32)\n",
            255,
        )
        .failure("pm")
        .unwrap();
        assert_eq!(e.code(), crate::protocol::ErrorCode::DeviceBooting);
        assert!(e.to_string().contains("`package`"), "{e}");
        let e = text("Unrecognized Option -\nUsage: logcat [options]\n", "", 1)
            .failure("logcat")
            .unwrap();
        assert!(e.to_string().ends_with("Unrecognized Option -"), "{e}");
    }
}
