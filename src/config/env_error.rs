//! Names the environment variable in a parse error when the bad value came from it.
//!
//! clap reads `XAGENT_ADB_<FLAG>` as the fallback of `--flag` and, when that value does not
//! parse, reports it under the flag (`invalid value 'x' for '--listen <LISTEN>'`), although the
//! operator never typed that flag: under systemd the value sits in an `Environment=` line or an
//! `EnvironmentFile=`. This rewrites such an error to name the variable (and still the flag).

use std::ffi::OsString;

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// The rendered error text of `err`, with the variable named when the value at fault came
/// from the environment: the flag is not among `args` (the process arguments, program name
/// first) and its `env` variable is set. Otherwise `err`'s own text, unchanged.
pub fn explain(err: &clap::Error, cmd: &clap::Command, args: &[OsString]) -> String {
    let text = err.render().to_string();
    if !matches!(
        err.kind(),
        ErrorKind::InvalidValue | ErrorKind::ValueValidation
    ) {
        return text;
    }
    let Some(ContextValue::String(shown)) = err.get(ContextKind::InvalidArg) else {
        return text;
    };
    // `--listen <LISTEN>` → `listen`.
    let Some(long) = shown
        .strip_prefix("--")
        .and_then(|s| s.split([' ', '=']).next())
    else {
        return text;
    };
    // The subcommand in use (the first argument naming one), else the top-level command.
    let used = args
        .iter()
        .skip(1)
        .find_map(|a| a.to_str().and_then(|a| cmd.find_subcommand(a)))
        .unwrap_or(cmd);
    // Global flags (`--log-format`) are declared on the top-level command.
    let Some(var) = env_of(used, long).or_else(|| env_of(cmd, long)) else {
        return text;
    };
    let flag = format!("--{long}");
    let typed = args.iter().skip(1).any(|a| {
        a.to_str()
            .is_some_and(|a| a == flag || a.starts_with(&format!("{flag}=")))
    });
    if typed || std::env::var_os(&var).is_none() {
        return text;
    }
    text.replacen(
        &format!("'{shown}'"),
        &format!("environment variable {var} (flag {flag})"),
        1,
    )
}

/// The `env` variable of `cmd`'s argument with long name `long`.
fn env_of(cmd: &clap::Command, long: &str) -> Option<String> {
    cmd.get_arguments()
        .find(|a| a.get_long() == Some(long))
        .and_then(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
}
