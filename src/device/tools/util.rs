//! Helpers shared by the app, file and logcat tool families: running a quoted command line and
//! reading its text, splitting a compound command's output into sections, and common errors.

use std::time::Duration;

use super::{ToolCtx, ToolError};
use crate::device::parse::text;
use crate::protocol::ErrorCode;

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
) -> Result<Text, ToolError> {
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

/// A `policy_denied` error naming the rule.
pub fn denied(rule: &str, why: &str) -> ToolError {
    ToolError::new(
        ErrorCode::PolicyDenied,
        format!("refused by device policy rule `{rule}`: {why}"),
    )
}

/// Whether `name` is a syntactically valid Android package name (AOSP
/// `FrameworkParsingPackageUtils.validateName`: dot-separated segments of `[A-Za-z][A-Za-z0-9_]*`,
/// at least two segments), at most 255 bytes.
pub fn valid_package(name: &str) -> bool {
    let segs: Vec<&str> = name.split('.').collect();
    name.len() <= 255
        && segs.len() >= 2
        && segs.iter().all(|s| {
            let mut c = s.chars();
            c.next().is_some_and(|f| f.is_ascii_alphabetic())
                && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        })
}

/// The `package` argument, checked with [`valid_package`] (defence in depth behind the schema).
pub fn package_arg(args: &serde_json::Value) -> Result<&str, ToolError> {
    let p = arg_str(args, "package");
    if valid_package(p) {
        Ok(p)
    } else {
        Err(ToolError::new(
            ErrorCode::InvalidArguments,
            "package must be an Android package name such as com.android.settings",
        ))
    }
}

/// The JSON Schema regex of a package name (same rule as [`valid_package`]).
pub const PACKAGE_PATTERN: &str = r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$";

/// Reads a string argument (schema-validated before; absent → empty).
pub fn arg_str<'a>(args: &'a serde_json::Value, key: &str) -> &'a str {
    args.get(key)
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
}

/// Fails with `app_not_installed` unless `pm path PKG` lists an APK.
pub async fn require_installed(
    ctx: &ToolCtx<'_>,
    pkg: &str,
    deadline: std::time::Duration,
) -> Result<(), ToolError> {
    let out = run(
        ctx,
        &crate::device::shell_quote::command_line(&["pm", "path", pkg]),
        deadline,
        64 * 1024,
    )
    .await?;
    if out.stdout.lines().any(|l| l.trim().starts_with("package:")) {
        Ok(())
    } else {
        Err(ToolError::new(
            ErrorCode::AppNotInstalled,
            format!("{pkg} is not installed on the bound phone"),
        ))
    }
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

    #[test]
    fn package_names() {
        assert!(valid_package("com.android.settings"));
        assert!(valid_package("com.example.tv_2"));
        assert!(!valid_package("settings"));
        assert!(!valid_package("com..x"));
        assert!(!valid_package("com.1x"));
        assert!(!valid_package("com.x;reboot"));
        let re = regex::Regex::new(PACKAGE_PATTERN).unwrap();
        assert!(re.is_match("com.android.settings") && !re.is_match("a;b.c"));
    }
}
