//! What a sync `FAIL` means. adbd answers a refused `SEND`/`RECV` with `FAIL` and
//! `REASON: strerror(errno)` (AOSP `packages/modules/adb/daemon/file_sync_service.cpp`,
//! `SendSyncFailErrno`): `couldn't create file: …`, `fchown failed: …`, `secure_mkdirs
//! failed: …`, `write failed: …` on a push; `open failed: …`, `read failed: …` on a pull. A
//! failed push leaves nothing behind: adbd unlinks the file it was writing (`send_impl`
//! `do_unlink`, also a regular file it replaced). The errno text decides the error, not the
//! step, so every step's refusal maps the same way.

use crate::adb::AdbError;
use crate::device::error::DeviceError;

/// Which way the bytes went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `SEND` (a push).
    Push,
    /// `RECV` (a pull).
    Pull,
}

/// Fix named for a refusal of the shell user's access (EACCES, EPERM, EROFS).
const ACCESS_FIX: &str = "adb's shell user may not write or read there on this phone (app-private folders such as Android/data, or a folder another app owns, are refused from Android 11); use a shared folder such as Download, Pictures or DCIM";

/// Maps a sync refusal of `path` to its typed error: ENOENT on a pull → `file_not_found`;
/// EACCES/EPERM/EROFS → `device_permission_denied` naming the fix; ENOSPC/EDQUOT →
/// `device_command_failed` saying the phone's storage is full; EISDIR/ENOTDIR (the path names a
/// directory, or a parent is a file) → `invalid_arguments` naming the fix; anything else →
/// `device_command_failed` quoting adbd's line. Other [`AdbError`]s map as usual.
pub fn classify(e: AdbError, direction: Direction, path: &str) -> DeviceError {
    let AdbError::Refused(line) = e else {
        return DeviceError::from(e);
    };
    let line: String = line.trim().chars().take(300).collect();
    let verb = match direction {
        Direction::Push => "write",
        Direction::Pull => "read",
    };
    let left = match direction {
        Direction::Push => " (adbd removed the partial file)",
        Direction::Pull => "",
    };
    if line.contains("No such file or directory") && direction == Direction::Pull {
        return DeviceError::FileNotFound {
            path: path.to_string(),
        };
    }
    // The path's shape does not fit the phone's tree: the caller's argument to fix, and adbd
    // removed nothing (scrcpy#4876 / #3423 `couldn't create file: Is a directory`, field bug 69).
    if line.contains("Is a directory") {
        return DeviceError::InvalidArguments(format!(
            "{path} is a directory on the phone ({line}): give the full path of a file in it, e.g. {path}/NAME"
        ));
    }
    if line.contains("Not a directory") {
        return DeviceError::InvalidArguments(format!(
            "a parent of {path} is a file on the phone, not a directory ({line}): give a path whose parents are directories"
        ));
    }
    if [
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
    ]
    .iter()
    .any(|m| line.contains(m))
    {
        return DeviceError::PermissionDenied(format!(
            "the phone refused to {verb} {path} ({line}){left}: {ACCESS_FIX}"
        ));
    }
    if line.contains("No space left on device") || line.contains("Disk quota exceeded") {
        return DeviceError::CommandFailed(format!(
            "the phone's storage is full ({line}){left}: free space on the phone, then retry"
        ));
    }
    DeviceError::CommandFailed(format!("the phone refused to {verb} {path}: {line}{left}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorCode;

    fn code(line: &str, d: Direction) -> (ErrorCode, String) {
        let e = classify(AdbError::Refused(line.into()), d, "/sdcard/Download/a");
        (e.code(), e.to_string())
    }

    #[test]
    fn refusals_by_errno() {
        let (c, m) = code("fchown failed: Operation not permitted", Direction::Push);
        assert_eq!(c, ErrorCode::DevicePermissionDenied);
        assert!(m.contains("fchown failed") && m.contains("Download"), "{m}");
        let (c, _) = code(
            "couldn't create file: Read-only file system",
            Direction::Push,
        );
        assert_eq!(c, ErrorCode::DevicePermissionDenied);
        let (c, m) = code("write failed: No space left on device", Direction::Push);
        assert_eq!(c, ErrorCode::DeviceCommandFailed);
        assert!(m.contains("storage is full") && m.contains("removed the partial file"));
        let (c, _) = code("open failed: No such file or directory", Direction::Pull);
        assert_eq!(c, ErrorCode::FileNotFound);
        let (c, _) = code("open failed: Permission denied", Direction::Pull);
        assert_eq!(c, ErrorCode::DevicePermissionDenied);
        let (c, m) = code("read failed: I/O error", Direction::Pull);
        assert_eq!(c, ErrorCode::DeviceCommandFailed);
        assert!(m.contains("read failed: I/O error"), "{m}");
        let (c, m) = code("couldn't create file: Is a directory", Direction::Push);
        assert_eq!(c, ErrorCode::InvalidArguments);
        assert!(
            m.contains("/sdcard/Download/a/NAME") && !m.contains("removed"),
            "{m}"
        );
        let (c, _) = code("read failed: Is a directory", Direction::Pull);
        assert_eq!(c, ErrorCode::InvalidArguments);
        let (c, m) = code("couldn't create file: Not a directory", Direction::Push);
        assert_eq!(c, ErrorCode::InvalidArguments);
        assert!(m.contains("parent"), "{m}");
        let e = classify(AdbError::DeviceOffline, Direction::Pull, "/x");
        assert_eq!(e.code(), ErrorCode::DeviceOffline);
    }
}
