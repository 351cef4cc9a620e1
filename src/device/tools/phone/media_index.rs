//! Asking the phone's media store to index a file pushed into shared storage (field bug 41: a
//! pushed picture never shows in the gallery, because `adb push` is a plain file write).
//!
//! Ways, tried in order until one answers:
//! 1. `content call --uri content://media --method scan_file --arg PATH` — MediaProvider's
//!    `scan_file` call takes the path as its argument and scans it at once, for any caller, from
//!    Android 11 (AOSP `packages/providers/MediaProvider` `MediaProvider.callInternal` →
//!    `getResultForScanFile`, android-11.0.0_r1 through 2025); `content` prints
//!    `Result: Bundle[{android.intent.extra.STREAM=content://media/…}]` (AOSP
//!    `cmds/content/Content.java` `CallCommand`), `…STREAM=null` when the scanner kept the file
//!    out (a hidden or `.nomedia` folder). Android 10 reads the path from a Uri extra the shell
//!    cannot pass and older ones have no such call: both print `Error while accessing provider`
//!    and a Java exception.
//! 2. `am broadcast -a android.intent.action.MEDIA_SCANNER_SCAN_FILE -d file://PATH
//!    --receiver-include-background` — MediaProvider's `MediaReceiver` still takes this
//!    broadcast for `file:` URIs (its manifest, Android 10–16) and scans in the background;
//!    the flag lets a manifest receiver get an implicit broadcast from Android 8 on; a phone
//!    whose `am` does not know the flag (before Android 8) is asked again without it. The
//!    broadcast confirms nothing, so the result says "requested".
//!
//! `cmd media_scanner` is not used: no AOSP service has that name (a Pixel 8 on Android 16
//! answers `cmd: Can't find service: media_scanner`, Genymobile/scrcpy PR #6852). Indexing is
//! best effort: no answer of the media store fails the push, and a missing service here is never
//! read as a booting phone.

use std::time::Duration;

use super::command;
use crate::device::shared_storage::DevicePath;
use crate::device::shell_quote::command_line;
use crate::device::tools::ToolCtx;

/// Deadline of one media-store step (a scan of one file takes well under a second).
pub const INDEX_STEP: Duration = Duration::from_secs(20);

/// What the media store said about a pushed file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MediaIndex {
    /// The media store confirmed it indexed the file.
    pub indexed: bool,
    /// The `content://media/…` URI it gave the file, when confirmed.
    pub uri: Option<String>,
    /// How it was asked and what it answered (or why it was not asked).
    pub note: String,
}

impl MediaIndex {
    fn not_indexed(note: impl Into<String>) -> MediaIndex {
        MediaIndex {
            indexed: false,
            uri: None,
            note: note.into(),
        }
    }
}

/// What `content call … scan_file` printed: `Some(Some(uri))` indexed, `Some(None)` the media
/// store answered without a URI, `None` no `Result:` line (no such call, or an error).
pub fn parse_scan_file(stdout: &str) -> Option<Option<String>> {
    let line = stdout
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("Result: Bundle["))?;
    let value = line
        .split("android.intent.extra.STREAM=")
        .nth(1)
        .map(|v| v.split([',', '}', ' ']).next().unwrap_or("").to_string());
    Some(value.filter(|v| v.starts_with("content://")))
}

/// `file://` URI of an absolute path, percent-encoding what is not a path character (the
/// receiver decodes it with `Uri.getPath`).
pub fn file_uri(path: &str) -> String {
    let mut out = String::from("file://");
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Asks the media store to index `file` (see the module doc); never an error.
pub async fn index(ctx: &ToolCtx<'_>, file: &DevicePath) -> MediaIndex {
    let Some(dir) = file.media_dir() else {
        return MediaIndex::not_indexed(
            "not in a media directory of shared storage (Pictures, DCIM, Movies, Music, Download, Documents, …): the media store was not asked",
        );
    };
    let scan = command_line(&[
        "content",
        "call",
        "--uri",
        "content://media",
        "--method",
        "scan_file",
        "--arg",
        &file.canonical,
    ]);
    let failure = match run(ctx, &scan).await {
        Ok(out) => match parse_scan_file(&out.stdout) {
            Some(Some(uri)) => {
                return MediaIndex {
                    indexed: true,
                    uri: Some(uri),
                    note: format!("the media store indexed the file in {dir} (MediaStore scan_file)"),
                }
            }
            Some(None) => return MediaIndex::not_indexed(
                "the media store scanned the file and did not index it (it keeps files in hidden folders, or under a .nomedia file, out of galleries)",
            ),
            None => out.telling_line(),
        },
        Err(e) => e,
    };
    broadcast(ctx, file, &failure).await
}

async fn broadcast(ctx: &ToolCtx<'_>, file: &DevicePath, scan_failure: &str) -> MediaIndex {
    let uri = file_uri(&file.canonical);
    let mut argv = vec![
        "am",
        "broadcast",
        "-a",
        "android.intent.action.MEDIA_SCANNER_SCAN_FILE",
        "-d",
        &uri,
        "--receiver-include-background",
    ];
    let mut last = String::new();
    for _ in 0..2 {
        match run(ctx, &command_line(&argv)).await {
            Ok(out) if out.all().contains("Broadcast completed") => {
                return MediaIndex::not_indexed(format!(
                    "requested, not confirmed: this phone's media store takes no scan_file call ({}), so the scan was requested with the MEDIA_SCANNER_SCAN_FILE broadcast, which the media store serves in the background",
                    if scan_failure.is_empty() { "no answer" } else { scan_failure }
                ));
            }
            Ok(out) if out.all().contains("Unknown option") && argv.len() == 7 => {
                argv.pop(); // `am` before Android 8 has no --receiver-include-background.
                last = out.telling_line();
            }
            Ok(out) => {
                last = out.telling_line();
                break;
            }
            Err(e) => {
                last = e;
                break;
            }
        }
    }
    MediaIndex::not_indexed(format!(
        "the media store could not be asked to index the file (scan_file: {}; broadcast: {}); galleries show it after the phone's next media scan",
        if scan_failure.is_empty() { "no answer" } else { scan_failure },
        if last.is_empty() { "no answer" } else { &last }
    ))
}

/// Runs one step within the call's deadline; an error is told as text (indexing never fails the
/// call).
async fn run(ctx: &ToolCtx<'_>, line: &str) -> Result<command::Text, String> {
    command::run(ctx, line, INDEX_STEP, 64 * 1024)
        .await
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_file_answers() {
        assert_eq!(
            parse_scan_file("Result: Bundle[{android.intent.extra.STREAM=content://media/external_primary/images/media/1000000042}]\n"),
            Some(Some("content://media/external_primary/images/media/1000000042".into()))
        );
        assert_eq!(
            parse_scan_file("Result: Bundle[{android.intent.extra.STREAM=null}]\n"),
            Some(None)
        );
        assert_eq!(parse_scan_file("Result: Bundle[{}]\n"), Some(None));
        assert_eq!(
            parse_scan_file(
                "Error while accessing provider:media\njava.lang.NullPointerException\n"
            ),
            None
        );
        assert_eq!(parse_scan_file(""), None);
    }

    #[test]
    fn file_uris_are_encoded() {
        assert_eq!(
            file_uri("/storage/emulated/0/Download/Check-in confirmation#1?.pdf"),
            "file:///storage/emulated/0/Download/Check-in%20confirmation%231%3F.pdf"
        );
    }
}
