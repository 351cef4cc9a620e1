//! Scripted answers: the control API can make a shell command (matched by regex) answer with
//! fixed output, a delay, or never (a hang), to replay field faults
//! (`/work/shared/cases/field-bugs.md` #6, #7, #9, #10, #20; `field-bugs-2.md` #21–#34).
//!
//! A script's `command_regex` is searched (unanchored, [`regex::Regex::is_match`]; `^…$`
//! anchors it) twice: first in the whole command line the host
//! sent (the script then answers for the whole line, no shell runs), then, while the shell runs
//! that line, against each simple command it executes — its expanded argv joined by single
//! spaces, unquoted (`'logcat' '-d'` is seen as `logcat -d`). A per-command match answers for
//! that command only: its stdout, stderr and exit status go through the command's pipes and
//! redirections, and the rest of a compound line (`a; echo SEP; b`, `a | b`, `a && b`) runs as
//! usual. Source of the need: `/work/shared/cases/field-bugs-2.md`, last section.

use std::time::Duration;

use base64::Engine;
use serde::{Deserialize, Serialize};

/// One scripted answer, as posted to `POST /v1/script`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Script {
    /// Regex searched in the whole command line the host sent (`shell:`/`exec:` payload), and
    /// else in each simple command the shell runs (argv joined by single spaces, unquoted).
    pub command_regex: String,
    /// Text written to stdout.
    #[serde(default)]
    pub stdout: String,
    /// Binary stdout, base64 (wins over `stdout`).
    #[serde(default)]
    pub stdout_base64: Option<String>,
    /// Text written to stderr.
    #[serde(default)]
    pub stderr: String,
    /// Exit status.
    #[serde(default)]
    pub exit_code: i32,
    /// Delay before answering, milliseconds.
    #[serde(default)]
    pub delay_ms: u64,
    /// Never answer nor close (until the host closes the stream).
    #[serde(default)]
    pub hang: bool,
    /// How many times it applies; absent = always.
    #[serde(default)]
    pub times: Option<u32>,
}

/// What a matched script makes the command do.
#[derive(Clone, Debug)]
pub struct ScriptAnswer {
    /// Bytes for stdout.
    pub stdout: Vec<u8>,
    /// Bytes for stderr.
    pub stderr: Vec<u8>,
    /// Exit status.
    pub exit_code: i32,
    /// Wait before answering.
    pub delay: Duration,
    /// Never finish.
    pub hang: bool,
}

impl Script {
    /// Checks the regex and base64; the error text is for the HTTP answer.
    pub fn validate(&self) -> Result<(), String> {
        regex::Regex::new(&self.command_regex).map_err(|e| format!("command_regex: {e}"))?;
        if let Some(b) = &self.stdout_base64 {
            base64::engine::general_purpose::STANDARD
                .decode(b)
                .map_err(|e| format!("stdout_base64: {e}"))?;
        }
        Ok(())
    }

    fn answer(&self) -> ScriptAnswer {
        let stdout = match &self.stdout_base64 {
            Some(b) => base64::engine::general_purpose::STANDARD
                .decode(b)
                .unwrap_or_default(),
            None => self.stdout.clone().into_bytes(),
        };
        ScriptAnswer {
            stdout,
            stderr: self.stderr.clone().into_bytes(),
            exit_code: self.exit_code,
            delay: Duration::from_millis(self.delay_ms),
            hang: self.hang,
        }
    }
}

impl ScriptAnswer {
    /// Waits the delay, and forever when `hang` (until the stream is dropped).
    pub async fn wait(&self) {
        tokio::time::sleep(self.delay).await;
        if self.hang {
            std::future::pending::<()>().await;
        }
    }
}

/// The first of `scripts` matching `line`, consuming one of its `times` (a used-up script is
/// removed).
pub fn take(scripts: &mut Vec<Script>, line: &str) -> Option<ScriptAnswer> {
    let idx = scripts.iter().position(|s| {
        s.times != Some(0) && regex::Regex::new(&s.command_regex).is_ok_and(|r| r.is_match(line))
    })?;
    let script = &mut scripts[idx];
    if let Some(t) = script.times.as_mut() {
        *t -= 1;
    }
    let answer = script.answer();
    scripts.retain(|s| s.times != Some(0));
    Some(answer)
}
