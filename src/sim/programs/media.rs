//! The media store as the shell reaches it: `content call --uri content://media --method
//! scan_file --arg PATH` and the `android.intent.action.MEDIA_SCANNER_SCAN_FILE` broadcast.
//!
//! Sources: AOSP `frameworks/base/cmds/content/.../Content.java` (`CallCommand` prints
//! `Result: ` + the Bundle, `Bundle[{android.intent.extra.STREAM=…}]`; a failure prints `Error
//! while accessing provider:AUTHORITY` and the exception's trace); AOSP
//! `packages/providers/MediaProvider` `MediaProvider.callInternal`: from Android 11 `scan_file`
//! scans the path given as `arg` for any caller and answers its URI (null when kept out); on
//! Android 10 it reads a Uri extra instead (`extras.getParcelable(EXTRA_STREAM)`, a
//! NullPointerException from the shell, which cannot pass one); before Android 10 there is no
//! such call (`call` answers null and `Content.java`'s `result.size()` throws). The broadcast
//! reaches MediaProvider's manifest `MediaReceiver` (`file:` scheme) on every release, but from
//! Android 8 only with `--receiver-include-background` (an implicit broadcast to a manifest
//! receiver is otherwise skipped, ActivityManager's background check); `am` before Android 8
//! has no such option (`Intent.parseCommandArgs`: `Unknown option`). There is no
//! `media_scanner` service: `cmd media_scanner` answers `cmd: Can't find service:
//! media_scanner` (Pixel 8, Android 16, Genymobile/scrcpy PR #6852).

use super::Output;
use crate::phone::{Phone, PhoneState};
use crate::vfs::SHARED_STORAGE;

const NPE_ANDROID_10: &str = "java.lang.NullPointerException: Attempt to invoke virtual method 'java.lang.String android.net.Uri.getPath()' on a null object reference\n\tat android.os.Parcel.createExceptionOrNull(Parcel.java:2373)\n\tat android.os.Parcel.createException(Parcel.java:2357)\n\tat android.os.Parcel.readException(Parcel.java:2340)\n\tat android.database.DatabaseUtils.readExceptionFromParcel(DatabaseUtils.java:190)\n\tat android.content.ContentProviderProxy.call(ContentProviderNative.java:658)\n\tat com.android.commands.content.Content$CallCommand.onExecute(Content.java:603)\n";
const NPE_OLD: &str = "java.lang.NullPointerException: Attempt to invoke virtual method 'int android.os.Bundle.size()' on a null object reference\n\tat com.android.commands.content.Content$CallCommand.onExecute(Content.java:539)\n\tat com.android.commands.content.Content$Command.execute(Content.java:474)\n\tat com.android.commands.content.Content.main(Content.java:686)\n";

/// Whether MediaProvider keeps `path` (resolved) out of its index: a folder on the way whose
/// name starts with `.`, a folder holding `.nomedia`, or `Android/data` / `Android/obb`.
fn hidden(s: &PhoneState, path: &str) -> bool {
    let Some(rest) = path.strip_prefix(SHARED_STORAGE) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    if parts.len() >= 2 && parts[0] == "Android" && matches!(parts[1], "data" | "obb") {
        return true;
    }
    let dirs = &parts[..parts.len().saturating_sub(1)];
    (0..=dirs.len()).any(|i| {
        let dir = format!("{SHARED_STORAGE}/{}", dirs[..i].join("/"));
        (i > 0 && dirs[i - 1].starts_with('.'))
            || s.vfs
                .stat(&format!("{}/.nomedia", dir.trim_end_matches('/')))
                .is_ok()
    })
}

/// Scans `path` into the media store; its URI, or `None` when it stays out.
fn scan(s: &mut PhoneState, path: &str) -> Option<String> {
    let resolved = s.vfs.resolve(path);
    let exists = s.vfs.stat(&resolved).is_ok_and(|e| !e.is_dir());
    let hidden = hidden(s, &resolved);
    s.media.scan(&resolved, SHARED_STORAGE, exists, hidden)
}

/// `content call --uri URI --method M [--arg A]` (other `content` commands: usage).
pub fn content(phone: &Phone, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| *a == name)
            .and_then(|i| args.get(i + 1))
            .copied()
    };
    if args.first() != Some(&"call") {
        return Output::err(1, "usage: adb shell content [subcommand] [options]\n\nusage: adb shell content call --uri <URI> --method <METHOD> [--arg <ARG>]\n       [--extra <BINDING> ...]\n");
    }
    let (Some(uri), Some(method)) = (value("--uri"), value("--method")) else {
        return Output::err(1, "Error: Content provider URI not specified\n");
    };
    let authority = uri
        .strip_prefix("content://")
        .and_then(|r| r.split('/').next())
        .unwrap_or("");
    let failed = |trace: &str| {
        Output::err(
            0,
            format!("Error while accessing provider:{authority}\n{trace}"),
        )
    };
    if authority != "media" {
        return failed(&format!(
            "java.lang.IllegalStateException: Could not find provider: {authority}\n"
        ));
    }
    let sdk = phone.with(|s| s.persona.sdk);
    match method {
        "scan_file" if sdk >= 30 => {
            let stream = value("--arg").and_then(|p| phone.with(|s| scan(s, p)));
            Output::ok(format!(
                "Result: Bundle[{{android.intent.extra.STREAM={}}}]\n",
                stream.as_deref().unwrap_or("null")
            ))
        }
        "scan_file" if sdk == 29 => failed(NPE_ANDROID_10),
        _ if sdk < 29 => failed(NPE_OLD),
        other => failed(&format!(
            "java.lang.UnsupportedOperationException: Unsupported call: {other}\n"
        )),
    }
}

/// Decodes `%XX` escapes (as `Uri.getPath` does).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).and_then(|c| hex(*c)),
            b.get(i + 2).and_then(|c| hex(*c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `am broadcast -a android.intent.action.MEDIA_SCANNER_SCAN_FILE -d file://PATH
/// [--receiver-include-background]`; `None` for any other broadcast.
pub fn scan_broadcast(phone: &Phone, args: &[&str]) -> Option<Output> {
    let at = |name: &str| {
        args.iter()
            .position(|a| *a == name)
            .and_then(|i| args.get(i + 1))
    };
    if at("-a") != Some(&"android.intent.action.MEDIA_SCANNER_SCAN_FILE") {
        return None;
    }
    let include_background = args.contains(&"--receiver-include-background");
    let sdk = phone.with(|s| s.persona.sdk);
    if include_background && sdk < 26 {
        return Some(Output::err(
            1,
            "Error: Unknown option: --receiver-include-background\n",
        ));
    }
    let data = at("-d").copied().unwrap_or("");
    let delivered = include_background || sdk < 26;
    if let (true, Some(path)) = (delivered, data.strip_prefix("file://")) {
        let path = percent_decode(path);
        phone.with(|s| scan(s, &path));
    }
    let flags = if include_background {
        "0x1400000"
    } else {
        "0x400000"
    };
    let dat = if data.is_empty() {
        String::new()
    } else {
        format!(" dat={data}")
    };
    Some(Output::ok(format!(
        "Broadcasting: Intent {{ act=android.intent.action.MEDIA_SCANNER_SCAN_FILE{dat} flg={flags} }}\nBroadcast completed: result=0\n"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding() {
        assert_eq!(percent_decode("/a%20b%2Fc%zz"), "/a b/c%zz");
    }
}
