//! Device paths of the file tools, checked against the policy's `[files] roots`: one spelling
//! of shared storage for the policy, whatever alias the caller (or the root) uses, and no way to
//! climb out of a root (field bug 45).
//!
//! Shared storage of the phone's user has four names on every Android since 6.0, all one
//! directory: `/sdcard` and `/mnt/sdcard` are links to `/storage/self/primary` (AOSP
//! `system/core/rootdir/init.rc`: `symlink /storage/self/primary /mnt/sdcard`, and the rootdir
//! build's `/sdcard` link), which points at `/storage/emulated/<user>` (AOSP
//! `system/vold/VolumeManager.cpp` `linkPrimary(userId)`). adbd's shell sees user 0's view
//! (`init.rc`: `mount none /mnt/user/0 /storage bind rec`), so `/storage/emulated/0` is the same
//! root and `/storage/emulated/10` (another user's storage) is not. A path in any of these
//! spellings is compared in one canonical form, [`SHARED`] + the rest.
//!
//! The check is on the path text, as before: the path must be absolute, free of NUL and control
//! characters, and of `..` segments (never resolved: the phone resolves links before `..`, so
//! `/sdcard/../x` is `/storage/emulated/x` on the phone, not `/x`); `//` and `.` collapse.
//! Comparison is case-sensitive: shared storage folds case only where the device enables it
//! (`external_storage.casefold.enabled`, off by default in AOSP `fs_mgr_format.cpp`; sdcardfs on
//! Android 8–10), so a case variant may name another directory and is refused.

use crate::device::error::DeviceError;

/// The canonical spelling of the phone's shared storage (user 0).
pub const SHARED: &str = "/storage/emulated/0";

/// Spellings of [`SHARED`] (longest first where one is a prefix of another).
pub const SHARED_ALIASES: &[&str] = &[
    "/storage/self/primary",
    "/storage/emulated/0",
    "/mnt/sdcard",
    "/sdcard",
];

/// Longest device path (bytes; the sync protocol's limit is 1024).
pub const MAX_PATH_BYTES: usize = 1024;

/// The top-level directories of shared storage the media store shows to apps (AOSP
/// `android.os.Environment` `STANDARD_DIRECTORIES`: music, podcasts, ringtones, alarms,
/// notifications, pictures, movies, downloads, DCIM, documents, and from API 29/31
/// audiobooks, screenshots, recordings).
pub const MEDIA_DIRS: &[&str] = &[
    "Music",
    "Podcasts",
    "Ringtones",
    "Alarms",
    "Notifications",
    "Pictures",
    "Movies",
    "Download",
    "DCIM",
    "Documents",
    "Audiobooks",
    "Screenshots",
    "Recordings",
];

/// A checked device path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevicePath {
    /// The caller's path, normalised (`//`, `.` collapsed, no trailing `/`): what the phone is
    /// asked for.
    pub path: String,
    /// The same path with a shared-storage alias replaced by [`SHARED`]: what the policy and the
    /// media store compare.
    pub canonical: String,
}

impl DevicePath {
    /// The media directory the file lies in (`Pictures`, …), when it lies in shared storage
    /// under one of [`MEDIA_DIRS`].
    pub fn media_dir(&self) -> Option<&'static str> {
        let rest = self.canonical.strip_prefix(SHARED)?.strip_prefix('/')?;
        let (top, file) = rest.split_once('/')?;
        (!file.is_empty())
            .then(|| MEDIA_DIRS.iter().copied().find(|d| *d == top))
            .flatten()
    }
}

/// `path` with a leading shared-storage alias replaced by [`SHARED`]; `path` must already be
/// normalised (absolute, no `//`, `.` or trailing `/`).
pub fn canonical(path: &str) -> String {
    for alias in SHARED_ALIASES {
        if let Some(rest) = path.strip_prefix(alias) {
            if rest.is_empty() || rest.starts_with('/') {
                return format!("{SHARED}{rest}");
            }
        }
    }
    path.to_string()
}

/// Normalises an absolute path: `//` and `.` collapse, a trailing `/` goes; `None` when a `..`
/// segment is present.
fn normalise(path: &str) -> Option<String> {
    let mut parts = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => return None,
            s => parts.push(s),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// What is wrong with a path holding a control character, named so the caller can fix it: a
/// line end at the end is one kept from another command's output (a `pm path` or `ls` line read
/// with its `\r\n`: quamotion/madb#211 `Failed to pull '…/base.apk\n'`; field bug 72), else the
/// character and its place. `None`: no control character.
fn control_character(path: &str) -> Option<String> {
    let (at, c) = path.char_indices().find(|(_, c)| c.is_control())?;
    let name = match c {
        '\0' => "NUL".to_string(),
        '\r' => "carriage return".to_string(),
        '\n' => "line feed".to_string(),
        '\t' => "tab".to_string(),
        c => format!("control character U+{:04X}", c as u32),
    };
    let rest = &path[at..];
    if rest.chars().all(|c| c == '\r' || c == '\n') {
        return Some(format!(
            "the path ends with a line end ({name}, U+{:04X}) — kept from another command's output line; strip it and call again",
            c as u32
        ));
    }
    Some(format!(
        "the path holds a {name} (U+{:04X}) at byte {at}: device paths here hold no control characters",
        c as u32
    ))
}

fn refused(why: impl Into<String>) -> DeviceError {
    DeviceError::Policy {
        rule: "files.roots",
        why: why.into(),
    }
}

/// Checks `path` against `roots` (each normalised and canonicalised the same way): it must lie
/// strictly under one root (a root itself is a directory, refused as such). Errors:
/// [`DeviceError::Policy`] `files.roots` naming the problem, never repeating the path.
pub fn check_path(path: &str, roots: &[String]) -> Result<DevicePath, DeviceError> {
    if path.len() > MAX_PATH_BYTES {
        return Err(refused(format!(
            "the path is too long ({} bytes; at most {MAX_PATH_BYTES})",
            path.len()
        )));
    }
    if let Some(why) = control_character(path) {
        return Err(refused(why));
    }
    if !path.starts_with('/') {
        return Err(refused("the path must be absolute (start with /)"));
    }
    let norm = normalise(path).ok_or_else(|| refused("`..` segments are not allowed"))?;
    let canon = canonical(&norm);
    let roots_canon: Vec<(String, &str)> = roots
        .iter()
        .filter_map(|r| {
            normalise(r)
                .filter(|n| n != "/")
                .map(|n| (canonical(&n), r.as_str()))
        })
        .collect();
    if let Some((_, root)) = roots_canon.iter().find(|(r, _)| *r == canon) {
        let root = root.trim_end_matches('/');
        return Err(refused(format!(
            "the path is the allowed directory {root} itself, not a file: name a file inside it ({root}/NAME)"
        )));
    }
    let inside = roots_canon.iter().any(|(r, _)| {
        canon
            .strip_prefix(r.as_str())
            .is_some_and(|rest| rest.starts_with('/'))
    });
    if !inside {
        // The caller's path is not repeated (docs/protocol.md: refusals never echo a value).
        return Err(refused(format!(
            "the path is outside the allowed directories ({}); shared storage may be named /sdcard, /mnt/sdcard, /storage/self/primary or /storage/emulated/0, and names are case-sensitive",
            roots.join(", ")
        )));
    }
    Ok(DevicePath {
        path: norm,
        canonical: canon,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorCode;

    fn roots() -> Vec<String> {
        vec![
            "/sdcard/Download".to_string(),
            "/sdcard/DCIM/".to_string(),
            "/storage/emulated/0/Pictures".to_string(),
        ]
    }

    #[test]
    fn every_alias_of_shared_storage_is_one_root() {
        for (path, canon) in [
            (
                "/storage/emulated/0/Download/Check-in confirmation.pdf",
                "/storage/emulated/0/Download/Check-in confirmation.pdf",
            ),
            ("/mnt/sdcard/Download/a", "/storage/emulated/0/Download/a"),
            (
                "/storage/self/primary//DCIM/./b.jpg",
                "/storage/emulated/0/DCIM/b.jpg",
            ),
            (
                "/sdcard/Pictures/x/y.png",
                "/storage/emulated/0/Pictures/x/y.png",
            ),
        ] {
            let p = check_path(path, &roots()).unwrap();
            assert_eq!(p.canonical, canon, "{path}");
            assert!(!p.path.contains("//") && !p.path.contains("/./"));
        }
        assert_eq!(
            check_path("/sdcard//Download/./a.txt", &roots())
                .unwrap()
                .path,
            "/sdcard/Download/a.txt"
        );
    }

    #[test]
    fn no_way_out_of_a_root() {
        for bad in [
            "/storage/self/primary/../../data/x",
            "/sdcard/Download/../../data/x",
            "/mnt/sdcard/Download/..",
            "sdcard/Download/a",
            "/sdcard/Download",
            "/storage/emulated/0/Download/",
            "/sdcard/Downloads/a",
            "/sdcard/download/a",
            "/storage/emulated/10/Download/a",
            "/storage/emulated/Download/a",
            "/sdcardX/Download/a",
            "/sdcard/Download/a\0b",
            "/data/local/tmp/a",
            "/data/media/0/Download/a",
        ] {
            let e = check_path(bad, &roots()).unwrap_err();
            assert_eq!(e.code(), ErrorCode::PolicyDenied, "{bad}");
            assert!(e.to_string().contains("files.roots"), "{bad}");
        }
    }

    #[test]
    fn control_characters_are_named_with_the_fix() {
        let why = |p: &str| check_path(p, &roots()).unwrap_err().to_string();
        let m = why("/sdcard/Download/base.apk\r\n");
        assert!(m.contains("line end") && m.contains("strip it"), "{m}");
        assert!(!m.contains("base.apk"), "never the path: {m}");
        let m = why("/sdcard/Download/a\nb.txt");
        assert!(m.contains("line feed (U+000A) at byte 18"), "{m}");
        assert!(why("/sdcard/Download/a\u{1b}b").contains("U+001B"));
        assert!(why(&format!("/sdcard/Download/{}", "a".repeat(1100))).contains("too long"));
    }

    #[test]
    fn media_dirs() {
        let dir = |p: &str| check_path(p, &["/sdcard".to_string()]).unwrap().media_dir();
        assert_eq!(dir("/sdcard/Pictures/receipt.png"), Some("Pictures"));
        assert_eq!(dir("/storage/emulated/0/Movies/a/b.mp4"), Some("Movies"));
        assert_eq!(dir("/mnt/sdcard/Download/c.pdf"), Some("Download"));
        assert_eq!(dir("/sdcard/Android/data/x"), None);
        assert_eq!(dir("/sdcard/note.txt"), None);
        assert_eq!(dir("/sdcard/pictures/x.png"), None);
    }
}
