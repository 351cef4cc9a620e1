//! Lock task mode (kiosk or screen pinning) from `dumpsys activity activities`, and `am
//! start`'s refusal codes (field bug 81).
//!
//! `LockTaskController.dump` (AOSP `services/core/java/com/android/server/wm/`, Android 8.1+;
//! `ActivityStackSupervisor` printed the same key before) prints `mLockTaskModeState=NONE |
//! LOCKED | PINNED`, then `mLockTaskModeTasks=` with one `#N Task{… A=UID:AFFINITY …}`
//! (`TaskRecord{… A=AFFINITY …}` before Android 12) per locked task, then `mLockTaskPackages
//! (userId:packages)=` with `u0:[pkg, …]` (the packages a device owner allows to lock).
//! Capture: `tests/fixtures/activity/mtk-tablet-android13-dumpsys-activity-activities.txt`
//! (`NONE`).
//!
//! A start refused in lock task mode returns `ActivityManager.START_RETURN_LOCK_TASK_MODE_
//! VIOLATION`, which `am` has no message for: `Error: Activity not started, unknown error code
//! 101` (`FIRST_START_NON_FATAL_ERROR_CODE + 1` since Android 8.0; 5 before), printed with exit
//! status 0 (RushB-fr/freekiosk#238, LineageOS 11 on an Echo Show 5:
//! `tests/fixtures/device-state/lineageos11-echo-show5-lock-task-am-start-error-101.txt`).

/// Which lock task mode the phone is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockTaskMode {
    /// `NONE`: apps start freely.
    None,
    /// `LOCKED`: a device owner's kiosk app locked its task (`startLockTask` while allowlisted).
    Locked,
    /// `PINNED`: the user pinned the screen to one app.
    Pinned,
}

impl LockTaskMode {
    /// Stable lower-case name (`none`, `locked`, `pinned`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Locked => "locked",
            Self::Pinned => "pinned",
        }
    }
}

/// What the dump says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockTaskState {
    /// The mode.
    pub mode: LockTaskMode,
    /// The package of the locked task (its affinity), else the first allowlisted package.
    pub package: Option<String>,
}

/// Reads the lock task state; `None` when the text has no `mLockTaskModeState=` line (a
/// failed read, or a build that does not print it).
pub fn parse_lock_task(text: &str) -> Option<LockTaskState> {
    let mut mode = None;
    let mut task_package = None;
    let mut allowed = None;
    for line in text.lines().map(str::trim) {
        if let Some(v) = line.strip_prefix("mLockTaskModeState=") {
            mode = mode.or(match v.trim() {
                "NONE" => Some(LockTaskMode::None),
                "LOCKED" => Some(LockTaskMode::Locked),
                "PINNED" => Some(LockTaskMode::Pinned),
                _ => None,
            });
        } else if line.starts_with('#') && line.contains("Task") && task_package.is_none() {
            task_package = affinity(line);
        } else if let Some(rest) = line.strip_prefix('u').and_then(|r| r.split_once(":[")) {
            if allowed.is_none() && rest.0.bytes().all(|b| b.is_ascii_digit()) {
                allowed = rest
                    .1
                    .trim_end_matches(']')
                    .split(',')
                    .map(str::trim)
                    .find(|p| !p.is_empty())
                    .map(str::to_string);
            }
        }
    }
    let mode = mode?;
    let package = (mode != LockTaskMode::None)
        .then(|| task_package.or(allowed))
        .flatten();
    Some(LockTaskState { mode, package })
}

/// `A=10123:com.pkg` (Android 12+) or `A=com.pkg` → `com.pkg`.
fn affinity(line: &str) -> Option<String> {
    let v = line.split_whitespace().find_map(|w| w.strip_prefix("A="))?;
    let v = v.trim_end_matches('}');
    let v = match v.split_once(':') {
        Some((uid, pkg)) if uid.bytes().all(|b| b.is_ascii_digit()) => pkg,
        _ => v,
    };
    (!v.is_empty()).then(|| v.to_string())
}

/// The code of `am start`'s `Error: Activity not started, unknown error code N` line, on
/// either stream.
pub fn unknown_start_code(text: &str) -> Option<i32> {
    text.lines().find_map(|l| {
        l.split("unknown error code ")
            .nth(1)?
            .trim()
            .parse::<i32>()
            .ok()
    })
}

/// Whether `code` is `START_RETURN_LOCK_TASK_MODE_VIOLATION` on some release: 101 (Android
/// 8.0+) or 5 (before; there 5 is no other start result `am` could print this way).
pub fn is_lock_task_violation(code: i32) -> bool {
    code == 101 || code == 5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn android13_capture_reads_none() {
        let t = fixture!("activity/mtk-tablet-android13-dumpsys-activity-activities.txt");
        assert_eq!(
            parse_lock_task(t),
            Some(LockTaskState {
                mode: LockTaskMode::None,
                package: None
            })
        );
    }

    #[test]
    fn field_bug_81_locked_and_pinned_tasks_name_their_package() {
        let locked = "  LockTaskController:\n    mLockTaskModeState=LOCKED\n    mLockTaskModeTasks=\n      #0 Task{1c7e0a3 #12 type=standard A=10123:com.freekiosk U=0 visible=true sz=1}\n    mLockTaskPackages (userId:packages)=\n      u0:[com.freekiosk]\n";
        let s = parse_lock_task(locked).unwrap();
        assert_eq!(
            (s.mode, s.package.as_deref()),
            (LockTaskMode::Locked, Some("com.freekiosk"))
        );
        let old = "  mLockTaskModeState=PINNED\n  mLockTaskModeTasks=\n    #0 TaskRecord{4a1 #7 A=com.example.notes U=0 StackId=1 sz=1}\n  mLockTaskPackages (userId:packages)=\n    u0:[]\n";
        let s = parse_lock_task(old).unwrap();
        assert_eq!(
            (s.mode, s.package.as_deref()),
            (LockTaskMode::Pinned, Some("com.example.notes"))
        );
        // No task line (a grep that kept the allowlist only): the allowlisted package.
        let s = parse_lock_task("mLockTaskModeState=LOCKED\n  u0:[com.kiosk.app, com.other]\n")
            .unwrap();
        assert_eq!(s.package.as_deref(), Some("com.kiosk.app"));
        assert_eq!(parse_lock_task("Can't find service: activity"), None);
    }

    #[test]
    fn start_codes_on_either_stream() {
        let t = fixture!("device-state/lineageos11-echo-show5-lock-task-am-start-error-101.txt");
        assert_eq!(unknown_start_code(t), Some(101));
        assert!(is_lock_task_violation(101) && is_lock_task_violation(5));
        assert!(!is_lock_task_violation(102));
        assert_eq!(
            unknown_start_code("Error: Activity not started, unknown error code -96\n"),
            Some(-96)
        );
        assert_eq!(unknown_start_code("Starting: Intent { cmp=a/.B }\n"), None);
    }
}
