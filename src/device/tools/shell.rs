//! `android_shell`: absent from the card unless the device policy enables it (Device Profile §7:
//! no arbitrary shell by default). Then argv only: `argv[0]` must be a program of a
//! `[[shell.allow]]` rule and each argument must match that rule's anchored regex at its position;
//! shell metacharacters are refused outright (the argv is also quoted once). Output is capped at
//! `max_output_bytes`. Refusals name the rule.

use std::time::Duration;

use serde_json::{json, Value};

use super::{ToolCtx, ToolError};
use crate::device::shell_quote::command_line;
use crate::protocol::card::ToolDecl;
use crate::protocol::ErrorCode;

/// Deadline of one command.
pub const SHELL_DEADLINE: Duration = Duration::from_secs(30);
/// Characters never accepted in an argument.
const METACHARACTERS: &[char] = &[
    ';', '&', '|', '$', '`', '>', '<', '(', ')', '\\', '"', '\'', '\n', '\r', '*', '?', '~', '#',
    '{', '}', '[', ']', '!',
];

fn deny(message: String) -> ToolError {
    ToolError::new(ErrorCode::PolicyDenied, message)
}

/// Checks `argv` against the policy; returns the rule index that allows it.
pub fn check(
    argv: &[String],
    policy: &crate::device::policy::ShellPolicy,
) -> Result<usize, ToolError> {
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
    let mut last_reason = format!("program {program:?} is not in [[shell.allow]]");
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

/// The tool.
pub async fn shell(args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
    let policy = &ctx.policy.shell;
    if !policy.enabled {
        return Err(deny(
            "android_shell is disabled by policy rule [shell].enabled = false".into(),
        ));
    }
    let argv: Vec<String> = args
        .get("argv")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let rule = check(&argv, policy)?;
    let cap = policy.max_output_bytes as usize;
    let out = ctx
        .link
        .shell(&command_line(&argv), SHELL_DEADLINE, cap.max(1) * 4)
        .await?;
    let clip = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(cap)]).into_owned();
    Ok(json!({
        "exit_code": out.exit_code,
        "stdout": clip(&out.stdout),
        "stderr": clip(&out.stderr),
        "truncated": out.stdout.len() > cap || out.stderr.len() > cap,
        "rule": rule,
    }))
}

/// Card declaration.
pub fn decl() -> ToolDecl {
    ToolDecl {
        tool_id: "android_shell",
        title: "Run an allow-listed command",
        description: "Run one allow-listed program on the bound phone, given as argv (no shell syntax: metacharacters are refused). Only programs and argument patterns in the device policy's [[shell.allow]] rules run; refusals name the rule. Output is capped.",
        side_effect: true,
        input_schema: json!({"type": "object", "required": ["argv"], "properties": {
            "argv": {"type": "array", "minItems": 1, "maxItems": 32, "items": {"type": "string", "maxLength": 1000}, "description": "Program and arguments."}
        }}),
        output_schema: json!({"type": "object", "required": ["exit_code", "stdout", "stderr"]}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::policy::{ShellPolicy, ShellRule};

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
        assert!(e.message.contains("metacharacter"));
    }
}
