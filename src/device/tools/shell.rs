//! `android_shell`: absent from the card unless the device policy enables it (Device Profile §7:
//! no arbitrary shell by default). Then argv only: `argv[0]` must be a program of a
//! `[[shell.allow]]` rule and each argument must match that rule's anchored regex at its position;
//! shell metacharacters are refused outright (the argv is also quoted once). Output is capped at
//! `max_output_bytes`. Refusals name the rule.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{DeviceTool, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::policy::Policy;
use crate::device::shell_quote::command_line;

/// Deadline of one command.
pub const SHELL_DEADLINE: Duration = Duration::from_secs(30);
/// Characters never accepted in an argument.
const METACHARACTERS: &[char] = &[
    ';', '&', '|', '$', '`', '>', '<', '(', ')', '\\', '"', '\'', '\n', '\r', '*', '?', '~', '#',
    '{', '}', '[', ']', '!',
];

fn deny(message: String) -> DeviceError {
    DeviceError::ShellRefused(message)
}

/// Checks `argv` against the policy; returns the rule index that allows it.
pub fn check(
    argv: &[String],
    policy: &crate::device::policy::ShellPolicy,
) -> Result<usize, DeviceError> {
    let program = argv.first().ok_or_else(|| deny("argv is empty".into()))?;
    if let Some(bad) = argv
        .iter()
        .find(|a| a.contains(METACHARACTERS) || a.contains('\0'))
    {
        let c = bad
            .chars()
            .find(|c| METACHARACTERS.contains(c))
            .unwrap_or('\0');
        return Err(deny(format!(
            "shell metacharacter {c:?} refused by policy rule [shell] (argv only)"
        )));
    }
    // The program asked for is not repeated (docs/protocol.md: never echo a value that failed).
    let mut last_reason = format!(
        "argv[0] is not a program of [[shell.allow]] (allowed: {})",
        allowed_programs(policy)
    );
    for (i, rule) in policy.allow.iter().enumerate() {
        if &rule.program != program {
            continue;
        }
        let args = &argv[1..];
        if args.len() > rule.args.len() {
            last_reason = format!(
                "[[shell.allow]] rule {i} ({}) allows at most {} arguments",
                rule.program,
                rule.args.len()
            );
            continue;
        }
        let ok = args.iter().zip(&rule.args).all(|(a, pat)| {
            regex::Regex::new(&format!("^(?:{pat})$")).is_ok_and(|re| re.is_match(a))
        });
        if ok {
            return Ok(i);
        }
        last_reason = format!(
            "an argument does not match [[shell.allow]] rule {i} ({})",
            rule.program
        );
    }
    Err(deny(last_reason))
}

/// The programs of `[[shell.allow]]`, comma-separated (from the policy, not the caller).
fn allowed_programs(policy: &crate::device::policy::ShellPolicy) -> String {
    let mut names: Vec<&str> = policy.allow.iter().map(|r| r.program.as_str()).collect();
    names.dedup();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// Arguments.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// Program and arguments.
    pub argv: Vec<String>,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// Exit status (`null` on legacy shell without a marker).
    pub exit_code: Option<u8>,
    /// Stdout, capped at `max_output_bytes` (lossy UTF-8).
    pub stdout: String,
    /// Stderr, capped likewise.
    pub stderr: String,
    /// Whether a stream was cut.
    pub truncated: bool,
    /// Index of the `[[shell.allow]]` rule that allowed it.
    pub rule: usize,
}

/// `android_shell`.
pub struct Shell;

impl DeviceTool for Shell {
    const ID: &'static str = "android_shell";
    const TITLE: &'static str = "Run an allow-listed command";
    const DESCRIPTION: &'static str = "Run one allow-listed program on the bound phone, given as argv (no shell syntax: metacharacters are refused). Only programs and argument patterns in the device policy's [[shell.allow]] rules run; refusals name the rule. Output is capped.";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = &["shell"];
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["argv"], "properties": {
            "argv": {"type": "array", "minItems": 1, "maxItems": 32, "items": {"type": "string", "maxLength": 1000}, "description": "Program and arguments."}
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["exit_code", "stdout", "stderr", "truncated", "rule"], "properties": {
            "exit_code": {"type": ["integer", "null"]}, "stdout": {"type": "string"},
            "stderr": {"type": "string"}, "truncated": {"type": "boolean"},
            "rule": {"type": "integer", "minimum": 0}
        }})
    }

    /// Device Profile §7: no arbitrary shell unless the policy enables it.
    fn in_card(policy: &Policy) -> bool {
        policy.shell.enabled
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let policy = &ctx.policy.shell;
        if !policy.enabled {
            return Err(deny(
                "android_shell is disabled by policy rule [shell].enabled = false".into(),
            ));
        }
        let rule = check(&args.argv, policy)?;
        let cap = policy.max_output_bytes as usize;
        let out = ctx
            .shell(&command_line(&args.argv), SHELL_DEADLINE, cap.max(1) * 4)
            .await?;
        let clip = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(cap)]).into_owned();
        Ok(Output {
            exit_code: out.exit_code,
            stdout: clip(&out.stdout),
            stderr: clip(&out.stderr),
            truncated: out.stdout.len() > cap || out.stderr.len() > cap,
            rule,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::policy::{ShellPolicy, ShellRule};
    use crate::device::tools::registry::assert_output;

    fn policy() -> ShellPolicy {
        ShellPolicy {
            enabled: true,
            max_output_bytes: 100,
            allow: vec![ShellRule {
                program: "getprop".into(),
                args: vec!["[a-z0-9._]+".into()],
            }],
        }
    }

    #[test]
    fn argv_rules_not_substring_deny_lists() {
        let p = policy();
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(check(&v(&["getprop", "ro.serialno"]), &p).unwrap(), 0);
        assert!(check(&v(&["getprop"]), &p).is_ok());
        assert!(check(&v(&["getprop", "ro.x", "extra"]), &p).is_err());
        assert!(check(&v(&["getprop", "RO.X"]), &p).is_err());
        assert!(check(&v(&["rm", "-r", "-f", "/sdcard"]), &p).is_err());
        let e = check(&v(&["getprop", "a;reboot"]), &p).unwrap_err();
        assert!(e.to_string().contains("metacharacter"));
    }

    #[test]
    fn outputs_match_the_schema() {
        assert_output::<Shell>(&Output {
            exit_code: None,
            stdout: "x".into(),
            stderr: String::new(),
            truncated: false,
            rule: 0,
        });
    }
}
