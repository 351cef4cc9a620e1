//! One `uiautomator dump`, the way the bound phone takes it (field bug 39).
//!
//! `uiautomator dump FILE` writes the tree into `FILE` and then prints `UI hierchary dumped to:
//! FILE` (sic; AOSP `cmds/uiautomator/.../DumpCommand.java`). The write goes through a
//! `FileWriter` whose `IOException` `AccessibilityNodeInfoDumper.dumpWindowToFile` only logs, so
//! when `/dev/tty` cannot be opened (the shell has no controlling terminal; tytydraco/LADB#91,
//! software-mansion/argent PR #580, API 30 and 36) the command prints the status line alone,
//! exit 0. That signal ([`UiDumpError::StatusOnly`]) switches the phone to a private file:
//! `uiautomator dump /data/local/tmp/xagent-ui-<random>.xml; echo MARK$?; cat …; rm -f …` in one
//! round trip, the file read and removed whatever the dump did. The way that works is
//! remembered per phone ([`PhoneHints`](super::hints::PhoneHints)); `/dev/tty` is never tried
//! again on a phone where it printed nothing.

use std::time::{Duration, Instant};

use super::command::{self, Text};
use super::hints::UiDumpWay;
use crate::device::error::DeviceError;
use crate::device::parse::uiautomator::{parse_uiautomator_dump, UiDumpError};
use crate::device::shell_quote::command_line;
use crate::device::tools::ToolCtx;

/// Cap of text output of a UI dump (bytes).
pub const DUMP_LIMIT: usize = 8 * 1024 * 1024;
/// The dump to the shell's terminal: one round trip when the phone has one.
pub const TTY_DUMP: &str = "uiautomator dump /dev/tty";
/// Where the private dump files go: the shell user's own directory (`/sdcard` needs storage
/// permission on some builds and is seen by apps).
const PRIVATE_DIR: &str = "/data/local/tmp";
/// The line carrying the dump's exit status between its own output and the file's.
const STATUS_MARK: &str = "__XAGENT_DUMP_EXIT__";

/// Whether `out` is the status line of a dump with no tree: the way it used cannot work here.
pub fn printed_only_status(out: &Text) -> bool {
    matches!(
        parse_uiautomator_dump(&out.all()),
        Err(UiDumpError::StatusOnly { .. })
    )
}

/// `backend` of a tool whose phone step is a UI dump: `/dev/tty`, or the private file.
pub const UI_DUMP_BACKENDS: &[&str] = &["uiautomator_tty", "uiautomator_file"];

/// Runs one dump within `deadline` the way the phone takes it, learning the way on the first
/// call (`/dev/tty` first; its bare status line switches to a private file at once, in the same
/// attempt). Returns the output to parse: the XML on `stdout`, the dump's own messages after it,
/// and the dump's exit status.
pub async fn dump(ctx: &ToolCtx<'_>, deadline: Duration) -> Result<Text, DeviceError> {
    let way = ctx.hints.ui_dump();
    if way == UiDumpWay::File {
        return via_file(ctx, deadline).await;
    }
    let started = Instant::now();
    let out = command::run(ctx, TTY_DUMP, deadline, DUMP_LIMIT).await?;
    if printed_only_status(&out) {
        tracing::info!("uiautomator dump /dev/tty printed only its status line; this phone dumps into a private file from now on");
        ctx.hints.set_ui_dump(UiDumpWay::File);
        return via_file(ctx, deadline.saturating_sub(started.elapsed())).await;
    }
    if way == UiDumpWay::Unknown && out.stdout.contains("<hierarchy") {
        ctx.hints.set_ui_dump(UiDumpWay::Tty);
    }
    crate::adb::meter::note_backend(UI_DUMP_BACKENDS[0]);
    Ok(out)
}

/// The dump into a private file, read and removed in the same command line.
async fn via_file(ctx: &ToolCtx<'_>, deadline: Duration) -> Result<Text, DeviceError> {
    crate::adb::meter::note_backend(UI_DUMP_BACKENDS[1]);
    let path = format!(
        "{PRIVATE_DIR}/xagent-ui-{}.xml",
        crate::protocol::random_hex(8)
    );
    let cmd = format!(
        "{} ; echo {STATUS_MARK}$? ; {} 2>/dev/null ; {}",
        command_line(&["uiautomator", "dump", &path]),
        command_line(&["cat", &path]),
        command_line(&["rm", "-f", &path]),
    );
    let out = command::run(ctx, &cmd, deadline, DUMP_LIMIT).await?;
    Ok(split_file_dump(out))
}

/// Splits the output of [`via_file`]'s line: what the dump printed, its status, the file.
fn split_file_dump(out: Text) -> Text {
    let mut said = String::new();
    let mut file = String::new();
    let mut status = None;
    for line in out.stdout.lines() {
        match (status, line.trim().strip_prefix(STATUS_MARK)) {
            (None, Some(code)) => status = Some(code.trim().parse::<u8>().ok()),
            (None, None) => {
                said.push_str(line);
                said.push('\n');
            }
            (Some(_), _) => {
                file.push_str(line);
                file.push('\n');
            }
        }
    }
    Text {
        // The tree first; the dump's own words after it (its errors are classified from them
        // when the file holds no tree).
        stdout: format!("{file}{said}"),
        stderr: out.stderr,
        // No mark: the line was cut before it (the shell's own status stands).
        exit_code: status.flatten().or(out.exit_code),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(stdout: &str) -> Text {
        Text {
            stdout: stdout.into(),
            stderr: String::new(),
            exit_code: Some(0),
        }
    }

    #[test]
    fn the_file_dump_is_split_into_tree_words_and_status() {
        let out = split_file_dump(text(
            "UI hierchary dumped to: /data/local/tmp/x.xml\n__XAGENT_DUMP_EXIT__0\n<?xml version='1.0' ?><hierarchy rotation=\"0\"><node/></hierarchy>\n",
        ));
        assert!(out.stdout.starts_with("<?xml"), "{}", out.stdout);
        assert_eq!(out.exit_code, Some(0));
        let failed = split_file_dump(Text {
            stdout: "__XAGENT_DUMP_EXIT__137\n".into(),
            stderr: String::new(),
            exit_code: Some(0),
        });
        assert_eq!(failed.exit_code, Some(137));
    }

    #[test]
    fn only_a_bare_status_line_means_the_way_cannot_work() {
        assert!(printed_only_status(&text(
            "UI hierchary dumped to: /dev/tty\n"
        )));
        assert!(printed_only_status(&text(
            "\r\nUI hierarchy dumped to: /dev/tty\r\n"
        )));
        assert!(!printed_only_status(&text(
            "<?xml version='1.0' ?><hierarchy rotation=\"0\"><node/></hierarchy>UI hierchary dumped to: /dev/tty\n"
        )));
        assert!(!printed_only_status(&text(
            "ERROR: could not get idle state.\n"
        )));
    }
}
