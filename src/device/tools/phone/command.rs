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

/// Runs an already quoted command line within `deadline`, reading at most `limit` bytes per
/// stream, and decodes its output.
pub async fn run(
    ctx: &ToolCtx<'_>,
    cmd: &str,
    deadline: Duration,
    limit: usize,
) -> Result<Text, DeviceError> {
    let out = ctx.link.shell(cmd, deadline, limit).await?;
    Ok(Text {
        stdout: text::decode_output(&out.stdout),
        stderr: text::decode_output(&out.stderr),
        exit_code: out.exit_code,
    })
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

/// Maps a failed `am` call (non-zero exit, `Error:` or an exception in its output) to
/// `device_permission_denied` (SecurityException, Permission Denial) or
/// `device_command_failed`, naming `what` and the telling line.
pub fn am_failure(out: &Text, what: &str) -> Option<DeviceError> {
    let all = out.all();
    let failed = out.exit_code.is_some_and(|c| c != 0)
        || all.lines().any(|l| l.trim_start().starts_with("Error"))
        || all.contains("Exception");
    failed.then(|| {
        let denied = all.contains("SecurityException") || all.contains("Permission Denial");
        let first = all
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with("Error") || l.contains("Exception"))
            .unwrap_or("")
            .chars()
            .take(300)
            .collect::<String>();
        DeviceError::command(
            denied,
            format!("{what} failed (exit {:?}): {first}", out.exit_code),
        )
    })
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
}
