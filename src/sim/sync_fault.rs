//! Faults of the `sync:` service injected through the control API (`POST /v1/sync/fault`): the
//! refusals real adbd answers, with its exact `FAIL` texts (AOSP
//! `packages/modules/adb/daemon/file_sync_service.cpp`, `SendSyncFailErrno`: `REASON: strerror`):
//!
//! | `op` | `fault` | adbd's step | `FAIL` message |
//! |---|---|---|---|
//! | `send` | `fchown` | `fchown(fd, uid, gid)` after creating the file | `fchown failed: Operation not permitted` |
//! | `send` | `denied` | `adb_open_mode(path, O_WRONLY\|O_CREAT…)` | `couldn't create file: Permission denied` |
//! | `send` | `read_only` | the same open on a read-only mount | `couldn't create file: Read-only file system` |
//! | `send` | `no_space` | `WriteFdExactly` once `after_bytes` bytes are written (a short write: the disk filled) | `write failed: No space left on device` |
//! | `recv` | `denied` | `adb_open(path, O_RDONLY)` | `open failed: Permission denied` |
//! | `recv` | `io_error` | `adb_read` after `after_bytes` bytes were sent as `DATA` | `read failed: I/O error` |
//!
//! A failed `send` leaves no file: adbd unlinks a regular file it replaces before writing and
//! the partial file on failure (`send_impl` / `handle_send_file` `do_unlink`), and reads the
//! rest of the host's `DATA` until `DONE` before the session ends.

use serde::{Deserialize, Serialize};

/// Which sync request a fault applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncOp {
    /// `SEND` (a push).
    Send,
    /// `RECV` (a pull).
    Recv,
}

/// What goes wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// EPERM from `fchown` (send).
    Fchown,
    /// EACCES opening the file (send or recv).
    Denied,
    /// EROFS creating the file (send).
    ReadOnly,
    /// ENOSPC after `after_bytes` (send).
    NoSpace,
    /// EIO reading after `after_bytes` (recv).
    IoError,
}

/// One injected fault, as posted to `POST /v1/sync/fault`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SyncFault {
    /// `send` or `recv`.
    pub op: SyncOp,
    /// Regex searched in the device path of the request (as the host sent it).
    pub path_regex: String,
    /// What goes wrong.
    pub fault: FaultKind,
    /// Bytes written (`no_space`) or sent (`io_error`) before the fault.
    #[serde(default)]
    pub after_bytes: u64,
    /// How many requests it applies to; absent = every one.
    #[serde(default)]
    pub times: Option<u32>,
}

impl SyncFault {
    /// Checks the regex and that the fault exists for the op; the text is for the HTTP answer.
    pub fn validate(&self) -> Result<(), String> {
        regex::Regex::new(&self.path_regex).map_err(|e| format!("path_regex: {e}"))?;
        let ok = match self.op {
            SyncOp::Send => !matches!(self.fault, FaultKind::IoError),
            SyncOp::Recv => matches!(self.fault, FaultKind::Denied | FaultKind::IoError),
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "fault {:?} does not apply to op {:?} (send: fchown, denied, read_only, no_space; recv: denied, io_error)",
                self.fault, self.op
            ))
        }
    }

    /// adbd's `FAIL` message for this fault.
    pub fn message(&self) -> &'static str {
        match (self.op, self.fault) {
            (SyncOp::Send, FaultKind::Fchown) => "fchown failed: Operation not permitted",
            (SyncOp::Send, FaultKind::ReadOnly) => "couldn't create file: Read-only file system",
            (SyncOp::Send, FaultKind::NoSpace) => "write failed: No space left on device",
            (SyncOp::Send, _) => "couldn't create file: Permission denied",
            (SyncOp::Recv, FaultKind::IoError) => "read failed: I/O error",
            (SyncOp::Recv, _) => "open failed: Permission denied",
        }
    }
}

/// The first of `faults` for `op` matching `path`, consuming one of its `times` (a used-up fault
/// is removed).
pub fn take(faults: &mut Vec<SyncFault>, op: SyncOp, path: &str) -> Option<SyncFault> {
    let idx = faults.iter().position(|f| {
        f.op == op
            && f.times != Some(0)
            && regex::Regex::new(&f.path_regex).is_ok_and(|r| r.is_match(path))
    })?;
    let fault = faults[idx].clone();
    if let Some(t) = faults[idx].times.as_mut() {
        *t -= 1;
    }
    faults.retain(|f| f.times != Some(0));
    Some(fault)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_match_validate_and_run_out() {
        let mut faults = vec![SyncFault {
            op: SyncOp::Send,
            path_regex: "Pictures/".into(),
            fault: FaultKind::Fchown,
            after_bytes: 0,
            times: Some(1),
        }];
        assert!(faults[0].validate().is_ok());
        assert!(take(&mut faults, SyncOp::Recv, "/sdcard/Pictures/a").is_none());
        let f = take(&mut faults, SyncOp::Send, "/sdcard/Pictures/a").unwrap();
        assert_eq!(f.message(), "fchown failed: Operation not permitted");
        assert!(faults.is_empty());
        let bad = SyncFault {
            op: SyncOp::Recv,
            path_regex: ".".into(),
            fault: FaultKind::NoSpace,
            after_bytes: 0,
            times: None,
        };
        assert!(bad.validate().is_err());
    }
}
