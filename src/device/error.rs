//! [`DeviceError`]: why a device tool failed, mapped once ([`DeviceError::code`]) to the stable
//! protocol [`ErrorCode`]s listed in `docs/protocol.md`. Messages never carry user text beyond
//! what the phone printed, nor secrets; where there is a fix, they name it.

use crate::adb::AdbError;
use crate::device::parse::devices::{DeviceState, RouteKind};
use crate::protocol::ErrorCode;

/// A device-side failure of a tool call.
#[derive(Debug, thiserror::Error)]
pub enum DeviceError {
    /// Arguments the schema lets through but the tool cannot use (the message names the field).
    #[error("{0}")]
    InvalidArguments(String),
    /// No element matches the `element_id` or selector (message says which).
    #[error("{0}")]
    ElementNotFound(String),
    /// `snapshot_id` is not the channel's latest UI snapshot.
    #[error("snapshot_id is not the latest android_ui_tree result; read the UI tree again")]
    StaleSnapshot,
    /// `since` names no observation the channel still keeps (never made on this channel, or
    /// older than the last few): the message says how many are kept and to observe again.
    #[error("{0}")]
    UnknownObservation(String),
    /// An observation (a `screenshot_id`, the UI snapshot of an `element_id`) made in another
    /// display frame than the current one (the display rotated or changed size since): its
    /// coordinates no longer land where they did (field bug 25). Same code as a stale UI
    /// snapshot: the observation is out of date.
    #[error("{what} was taken at {taken} but the display is now {now} (it rotated or changed size): {fix}")]
    StaleFrame {
        /// What is stale (`screenshot_id`, `the UI snapshot of element_id`).
        what: &'static str,
        /// The geometry recorded with it (`WxH rotation N`).
        taken: String,
        /// The display's geometry now.
        now: String,
        /// How to observe again.
        fix: &'static str,
    },
    /// A point outside the display or a screenshot (`area`), with the valid range (px).
    #[error(
        "({x}, {y}) is outside {area}: x must be in 0..={}, y in 0..={} (px)",
        .width.saturating_sub(1),
        .height.saturating_sub(1)
    )]
    OutOfBounds {
        /// X asked for, px.
        x: i64,
        /// Y asked for, px.
        y: i64,
        /// `the display` or `screenshot <id>`.
        area: String,
        /// Width of the area, px.
        width: u32,
        /// Height of the area, px.
        height: u32,
    },
    /// Text the available input method cannot type (message names the fix).
    #[error("{0}")]
    UnsupportedText(String),
    /// The phone offers no way to do this (`unsupported`): the message names what is missing
    /// and what works instead.
    #[error("{0}")]
    Unsupported(String),
    /// `uiautomator dump` gave no tree (message starts `ui_dump_failed (reason: …)`).
    #[error("{0}")]
    UiDumpFailed(String),
    /// `screencap` did not return a usable PNG.
    #[error("{0}")]
    InvalidScreenshot(String),
    /// `pm path` lists no APK for the package.
    #[error("{package} is not installed on the bound phone{hint}")]
    AppNotInstalled {
        /// The package asked for.
        package: String,
        /// Extra advice appended to the message (may be empty).
        hint: &'static str,
    },
    /// Installed, but no LAUNCHER / LEANBACK_LAUNCHER activity.
    #[error("{package} is installed but has no LAUNCHER or LEANBACK_LAUNCHER activity; it cannot be opened from a launcher")]
    NoLauncherActivity {
        /// The package asked for.
        package: String,
    },
    /// Installed, but disabled — the whole package or its launcher activity — so nothing
    /// resolves (`resolve-activity`: `No activity found`; `am start -n`: `Error type 3` /
    /// `Activity class {…} does not exist.`). The message names the state and who can enable it
    /// (`phone::app_state::disabled_refusal`).
    #[error("{0}")]
    AppDisabled(String),
    /// A device command failed; the message carries the telling line the phone printed.
    #[error("{0}")]
    CommandFailed(String),
    /// The package manager refused an APK because it is one part of a split app and the other
    /// parts it needs were not given (`INSTALL_FAILED_MISSING_SPLIT`); the message says what to
    /// upload (field bug 46).
    #[error("{0}")]
    SplitApksRequired(String),
    /// The package manager refused an APK this phone cannot run: an Android older than the
    /// app's minSdkVersion (`INSTALL_FAILED_OLDER_SDK`), no native code for its CPU
    /// (`INSTALL_FAILED_NO_MATCHING_ABIS`), a missing feature or library; the message names
    /// what the app needs and what the phone has (field rows 73, 74).
    #[error("{0}")]
    AppIncompatible(String),
    /// A system service the command needs is not running: the phone is still booting or its
    /// system server is restarting (`cmd: Can't find service: package`, exit 20; field bug 27).
    /// Retryable.
    /// The readiness it names is the service itself (`service check NAME` printing `found`),
    /// never `sys.boot_completed`: a system server restarting after boot prints `1` there all
    /// along (field bug 49).
    #[error("the phone's `{service}` service is not running ({line}): the phone is still booting or its system server is restarting; retry in a few seconds (it is ready when `service check {service}` prints `Service {service}: found`)")]
    ServiceMissing {
        /// The service name the phone printed (`package`).
        service: String,
        /// The phone's line, trimmed.
        line: String,
    },
    /// The phone's shared storage (`/sdcard`, `/storage/emulated/0`) is not mounted: `sm
    /// list-volumes` shows user 0's `emulated` volume in another state than `mounted` — right
    /// after boot, or (Android 11+) before the first unlock since boot; a file call under it finds
    /// nothing there (ReactiveCircus/android-emulator-runner#102, field bug 68). Retryable.
    #[error("the phone's shared storage is not mounted (`sm list-volumes`: `{volume} {state}`), so {path} cannot be {verb} yet: the phone has just booted, or (Android 11+) has not been unlocked since it booted; unlock it once (or wait for boot to finish), then retry — it is ready when `sm list-volumes` shows `{volume} mounted`")]
    StorageNotMounted {
        /// The volume's id (`emulated;0`, `emulated`).
        volume: String,
        /// Its state (`unmounted`, `checking`, …).
        state: String,
        /// The device path of the call.
        path: String,
        /// `written` or `read`.
        verb: &'static str,
    },
    /// The lock screen is showing on the default display (not occluded by an app), or the
    /// screen is off: an acting tool would land on the lock screen, so it did not run
    /// (field bug 48). `secure`: the lock needs a credential (`None`: not readable).
    #[error("{}", locked_message(*.screen_off, *.locked, *.secure, .done.as_deref()))]
    Locked {
        /// The screen is off (asleep or dozing).
        screen_off: bool,
        /// The keyguard is showing.
        locked: bool,
        /// Whether the lock needs the PIN, pattern or password.
        secure: Option<bool>,
        /// What did run before the lock screen was seen (`None`: nothing).
        done: Option<String>,
    },
    /// The phone is in lock task mode (a kiosk app's, or the user's screen pinning): `am start`
    /// of any other app is refused (`unknown error code 101`, field bug 81). `mode` and
    /// `package` as read from `dumpsys activity activities` (`None`: not readable).
    #[error("{}", lock_task_message(*.mode, .package.as_deref(), .refused.as_str()))]
    LockTask {
        /// Kiosk or pinning.
        mode: Option<crate::device::parse::lock_task::LockTaskMode>,
        /// The locked app.
        package: Option<String>,
        /// What was refused (`com.x/.Main`, `the link https://…`).
        refused: String,
    },
    /// A framework crash, ANR or debugger dialog holds the focus after a launch (field bug
    /// 79): the app did not come up usable. `launched` is the package started, `started` what
    /// ran (`PKG/ACTIVITY was started`).
    #[error("{}", app_dialog_message(.dialog, .launched.as_str(), .started.as_str()))]
    AppDialog {
        /// The dialog and whose process it is about.
        dialog: crate::device::parse::window::AppDialog,
        /// The package the tool launched.
        launched: String,
        /// What ran before the dialog was seen.
        started: String,
    },
    /// The phone refused (SecurityException, permission denied, user restriction).
    #[error("{0}")]
    PermissionDenied(String),
    /// The device policy refuses the call; `rule` names the policy key.
    #[error("refused by device policy rule `{rule}`: {why}")]
    Policy {
        /// The policy key, e.g. `gates.allow_install`.
        rule: &'static str,
        /// Why, with the fix where there is one.
        why: String,
    },
    /// The `[shell]` policy refuses an argv (its own wording names the rule).
    #[error("{0}")]
    ShellRefused(String),
    /// A file exceeds `files.max_pull_bytes` / `max_push_bytes`.
    #[error("{0}")]
    FileTooLarge(String),
    /// The device path does not exist.
    #[error("{path} does not exist on the phone")]
    FileNotFound {
        /// The normalised device path.
        path: String,
    },
    /// A `file_ref` argument that does not resolve for the calling channel.
    #[error("file_ref is unknown, expired or belongs to another channel; upload the file with POST /files/uploads on this channel")]
    UnknownFileRef,
    /// An uploaded file whose bytes vanished from the cache before use.
    #[error("the uploaded file is gone")]
    UploadGone,
    /// The phone or its transport went away during the call, which ended short (a capture cut
    /// by an unplug); the message names what was cut and the fix. `device_offline`.
    #[error("{0}")]
    WentAway(String),
    /// The tool call's one deadline ran out during `step` (issue 19 M1: every step of a call
    /// shares the call's budget, [`crate::device::tools::phone::deadline`]). `device_timeout`.
    #[error("{step} did not finish before the call's deadline of {budget_ms} ms ran out; the phone did not answer in time (retry, or check that the phone is responsive)")]
    DeadlineSpent {
        /// What was running (`shell: 'uiautomator'`, `the next step`), never user text.
        step: String,
        /// The call's whole budget, ms.
        budget_ms: u64,
    },
    /// The transport or the adb server failed (offline, unauthorized, timeout, …).
    #[error(transparent)]
    Adb(#[from] AdbError),
    /// A failure of this process (file cache, image encoding), not of the phone.
    #[error("{0}")]
    Internal(String),
}

impl DeviceError {
    /// The one mapping to protocol error codes.
    pub fn code(&self) -> ErrorCode {
        match self {
            DeviceError::InvalidArguments(_)
            | DeviceError::UnknownFileRef
            | DeviceError::UploadGone => ErrorCode::InvalidArguments,
            DeviceError::ElementNotFound(_) => ErrorCode::ElementNotFound,
            DeviceError::StaleSnapshot
            | DeviceError::StaleFrame { .. }
            | DeviceError::UnknownObservation(_) => ErrorCode::StaleSnapshot,
            DeviceError::OutOfBounds { .. } => ErrorCode::OutOfBounds,
            DeviceError::UnsupportedText(_) => ErrorCode::UnsupportedText,
            DeviceError::Unsupported(_) => ErrorCode::Unsupported,
            DeviceError::UiDumpFailed(_) => ErrorCode::UiDumpFailed,
            DeviceError::InvalidScreenshot(_) => ErrorCode::InvalidScreenshot,
            DeviceError::AppNotInstalled { .. } => ErrorCode::AppNotInstalled,
            DeviceError::NoLauncherActivity { .. } => ErrorCode::NoLauncherActivity,
            DeviceError::AppDisabled(_) => ErrorCode::AppDisabled,
            DeviceError::CommandFailed(_) => ErrorCode::DeviceCommandFailed,
            DeviceError::SplitApksRequired(_) => ErrorCode::SplitApksRequired,
            DeviceError::AppIncompatible(_) => ErrorCode::AppIncompatible,
            DeviceError::ServiceMissing { .. } | DeviceError::StorageNotMounted { .. } => {
                ErrorCode::DeviceBooting
            }
            DeviceError::Locked { .. } => ErrorCode::DeviceLocked,
            DeviceError::LockTask { .. } => ErrorCode::DeviceLockTask,
            DeviceError::AppDialog { dialog, .. } => match dialog.kind {
                crate::device::parse::window::DialogKind::Crash => ErrorCode::AppCrashed,
                _ => ErrorCode::AppNotResponding,
            },
            DeviceError::PermissionDenied(_) => ErrorCode::DevicePermissionDenied,
            DeviceError::Policy { .. } | DeviceError::ShellRefused(_) => ErrorCode::PolicyDenied,
            DeviceError::FileTooLarge(_) => ErrorCode::FileTooLarge,
            DeviceError::FileNotFound { .. } => ErrorCode::FileNotFound,
            DeviceError::WentAway(_) => ErrorCode::DeviceOffline,
            DeviceError::DeadlineSpent { .. } => ErrorCode::DeviceTimeout,
            DeviceError::Adb(e) => adb_code(e),
            DeviceError::Internal(_) => ErrorCode::InternalError,
        }
    }

    /// A command failure, or a permission refusal when `denied` (the phone's answer said so).
    pub fn command(denied: bool, message: String) -> DeviceError {
        if denied {
            DeviceError::PermissionDenied(message)
        } else {
            DeviceError::CommandFailed(message)
        }
    }

    /// The same failure with its message rewritten by `f` (for the two command-failure kinds;
    /// other kinds are returned unchanged).
    pub fn reword(self, f: impl FnOnce(String) -> String) -> DeviceError {
        match self {
            DeviceError::CommandFailed(m) => DeviceError::CommandFailed(f(m)),
            DeviceError::PermissionDenied(m) => DeviceError::PermissionDenied(f(m)),
            other => other,
        }
    }
}

/// The message of [`DeviceError::Locked`]: what is in the way and what unlocks it, for the
/// agent. It opens with the documented sentence (docs/protocol.md `device_locked`), then names
/// the steps this connector's tools can take: `android_press_key` `wake` lights the screen, an
/// `android_swipe` up dismisses a swipe lock (or brings up the PIN pad), and a lock with a
/// credential needs the user.
pub fn locked_message(
    screen_off: bool,
    locked: bool,
    secure: Option<bool>,
    done: Option<&str>,
) -> String {
    const WAKE: &str = "wake it with android_press_key {\"key\": \"wake\"}";
    const SWIPE: &str = "android_swipe from near the bottom of the display to near its top";
    let done = done.unwrap_or("Nothing was done (it would have landed on the lock screen)");
    if !locked {
        return format!("the screen is off. {done}; {WAKE}, then retry");
    }
    let lead = "the lock screen is showing: wake and unlock the phone, or swipe up on a swipe lock";
    let wake = if screen_off {
        format!("the screen is off: {WAKE}; then ")
    } else {
        String::new()
    };
    let how = match secure {
        Some(true) => format!("this lock needs the PIN, pattern or password: {wake}ask the user to unlock the phone (an {SWIPE} only brings up the PIN pad)"),
        Some(false) => format!("this is a swipe lock (no PIN): {wake}unlock it with an {SWIPE}"),
        None => format!("{wake}a swipe lock opens with an {SWIPE}; a PIN, pattern or password lock needs the user"),
    };
    format!("{lead}. {done}; {how}, then retry")
}

/// The message of [`DeviceError::LockTask`]: what lock task mode holds the phone, what was
/// refused, and who can end it (screen pinning: the user, with the unpin gesture; a kiosk: its
/// app, the device owner's — not adb).
pub fn lock_task_message(
    mode: Option<crate::device::parse::lock_task::LockTaskMode>,
    package: Option<&str>,
    refused: &str,
) -> String {
    use crate::device::parse::lock_task::LockTaskMode;
    let app = package.map_or("one app".to_string(), |p| p.to_string());
    let (what, fix) = match mode {
        Some(LockTaskMode::Pinned) => (
            format!("the screen is pinned to {app} (screen pinning)"),
            "unpin it on the phone (hold Back and Overview, or swipe up and hold, as the \"App is pinned\" notice says), then retry",
        ),
        Some(LockTaskMode::Locked) => (
            format!("the device is in lock task mode: a kiosk keeps {app} in front"),
            "leave kiosk mode in that app (only the kiosk app, the device owner, can end it; Home and Recents are off meanwhile), then retry",
        ),
        _ => (
            "the device is in lock task mode (kiosk or screen pinning)".to_string(),
            "leave kiosk mode or unpin the screen on the phone, then retry",
        ),
    };
    format!("{what}: {refused} was refused (am start: lock task mode violation); {fix}")
}

/// The message of [`DeviceError::AppDialog`]: which dialog, about whom, what ran, and the
/// buttons that clear it (the dialog's own: AOSP `AppErrorDialog` "Close app" / "App info",
/// `AppNotRespondingDialog` "Close app" / "Wait").
pub fn app_dialog_message(
    dialog: &crate::device::parse::window::AppDialog,
    launched: &str,
    started: &str,
) -> String {
    use crate::device::parse::window::DialogKind;
    let own = dialog.package == launched;
    let who = if own {
        launched.to_string()
    } else {
        format!("{} (another app)", dialog.process)
    };
    let (state, window, fix) = match dialog.kind {
        DialogKind::Crash => (
            "crashed: the system's \"keeps stopping\" dialog",
            "Application Error",
            "close it (android_tap on \"Close app\", or android_press_key back); android_logcat shows the crash",
        ),
        DialogKind::NotResponding => (
            "is not responding: the system's \"isn't responding\" dialog",
            "Application Not Responding",
            "android_tap \"Wait\" to give it time or \"Close app\" to stop it",
        ),
        DialogKind::WaitingForDebugger => (
            "waits for a debugger (`am set-debug-app -w` is set): the \"Waiting For Debugger\" dialog",
            "Waiting For Debugger",
            "attach a debugger, or run `am clear-debug-app` and relaunch",
        ),
    };
    format!(
        "{who} {state} (window `{window}: {}`) holds the focus; {started}, not verified. {fix}, then retry",
        dialog.process
    )
}

/// Why a phone in `state`, reached through `route`, cannot take a claim or a tool call: its
/// protocol code and a message saying what the state means and naming the fix for that route
/// (no `adb` command for a direct phone, no cable for a Wi-Fi one) — the one mapping of
/// inventory states, used at claim time and before every tool call (field bug 28: `no
/// permissions` is `device_no_permissions` with the udev fix at both). `None` when the phone
/// is usable.
pub fn state_refusal(state: &DeviceState, route: RouteKind) -> Option<(ErrorCode, String)> {
    let remedy = state.remedy(route)?;
    let (code, what) = match state {
        DeviceState::Unauthorized => (
            ErrorCode::DeviceUnauthorized,
            "the phone has not accepted this host's ADB key".to_string(),
        ),
        DeviceState::NoPermissions { hint } => (
            ErrorCode::DeviceNoPermissions,
            format!("the host may not open the phone's USB device (adb: no permissions {hint})"),
        ),
        DeviceState::ServerUnavailable => (
            ErrorCode::AdbServerUnavailable,
            "the adb server is not reachable (the phone may be fine)".to_string(),
        ),
        other => (ErrorCode::DeviceOffline, other.meaning(route)),
    };
    Some((code, format!("{}; {remedy}", what.trim_end())))
}

/// What leads a `device_unauthorized` message when the connector learned, while the phone
/// still answered, why it may show no "Allow USB debugging?" prompt (field bug 80): an
/// Android TV build (none for a network connection until Network debugging is toggled:
/// dwaan/homebridge-adb#71, `tests/fixtures/device-state/nvidia-shield-tcp-failed-to-authenticate-unauthorized.txt`)
/// or lock task mode (the prompt cannot show over a kiosk: RushB-fr/freekiosk#268). `None`
/// when nothing is known, or the route's own fix is the whole answer (USB, a phone paired over
/// Wi-Fi).
pub fn unauthorized_lead(
    route: RouteKind,
    tv: Option<bool>,
    lock_task: Option<crate::device::parse::lock_task::LockTaskMode>,
) -> Option<&'static str> {
    use crate::device::parse::lock_task::LockTaskMode;
    if matches!(route, RouteKind::UsbAdbServer | RouteKind::WifiPaired) {
        return None;
    }
    if matches!(lock_task, Some(LockTaskMode::Locked | LockTaskMode::Pinned)) {
        return Some("this device was in lock task mode (a kiosk or screen pinning) when last read: the \"Allow USB debugging?\" prompt cannot show until that mode ends (leave kiosk mode or unpin first)");
    }
    (tv == Some(true)).then_some("this device is an Android TV build, which shows no prompt for a network connection: on the TV open Developer options, revoke the debugging authorisations, switch Network debugging off and on, and accept the prompt that then shows on the TV")
}

/// Protocol code of a transport failure.
fn adb_code(e: &AdbError) -> ErrorCode {
    match e {
        AdbError::ServerUnavailable { .. } => ErrorCode::AdbServerUnavailable,
        AdbError::DeviceNotFound | AdbError::DeviceOffline => ErrorCode::DeviceOffline,
        // Passing states and a stale stream: a retry (after the prompt) is the fix.
        AdbError::TransportSettingUp { authorizing: true } => ErrorCode::DeviceUnauthorized,
        AdbError::TransportSettingUp { authorizing: false } | AdbError::ServiceClosed { .. } => {
            ErrorCode::DeviceOffline
        }
        AdbError::DeviceUnauthorized | AdbError::NotPaired => ErrorCode::DeviceUnauthorized,
        AdbError::NoPermissions => ErrorCode::DeviceNoPermissions,
        AdbError::Timeout { .. } => ErrorCode::DeviceTimeout,
        // The caller's input made the request too long for this phone: shorter input fixes it.
        AdbError::RequestTooLong { .. } => ErrorCode::InvalidArguments,
        AdbError::OutputTooLarge { .. }
        | AdbError::Refused(_)
        | AdbError::Protocol(_)
        | AdbError::Io(_) => ErrorCode::DeviceCommandFailed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_keep_their_wording() {
        let e = DeviceError::OutOfBounds {
            x: 5000,
            y: 1,
            area: "the display".into(),
            width: 1080,
            height: 2400,
        };
        assert_eq!(e.code(), ErrorCode::OutOfBounds);
        assert_eq!(
            e.to_string(),
            "(5000, 1) is outside the display: x must be in 0..=1079, y in 0..=2399 (px)"
        );
        let e = DeviceError::Policy {
            rule: "gates.allow_install",
            why: "off".into(),
        };
        assert_eq!(
            e.to_string(),
            "refused by device policy rule `gates.allow_install`: off"
        );
        assert_eq!(
            DeviceError::from(AdbError::DeviceUnauthorized).code(),
            ErrorCode::DeviceUnauthorized
        );
    }

    #[test]
    fn field_bugs_79_80_81_messages_name_the_way_out() {
        use crate::device::parse::lock_task::LockTaskMode;
        use crate::device::parse::window::app_dialog;
        let e = DeviceError::AppDialog {
            dialog: app_dialog("Application Error: com.x.y").unwrap(),
            launched: "com.x.y".into(),
            started: "com.x.y/.Main was started".into(),
        };
        assert_eq!(e.code(), ErrorCode::AppCrashed);
        let m = e.to_string();
        assert!(
            m.starts_with("com.x.y crashed") && m.contains("\"Close app\""),
            "{m}"
        );
        let e = DeviceError::AppDialog {
            dialog: app_dialog("Application Not Responding: com.o:bg").unwrap(),
            launched: "com.x.y".into(),
            started: "com.x.y/.Main was started".into(),
        };
        assert_eq!(e.code(), ErrorCode::AppNotResponding);
        assert!(e
            .to_string()
            .starts_with("com.o:bg (another app) is not responding"));
        let e = DeviceError::LockTask {
            mode: Some(LockTaskMode::Pinned),
            package: Some("com.k".into()),
            refused: "com.x.y/.Main".into(),
        };
        assert_eq!(e.code(), ErrorCode::DeviceLockTask);
        assert!(
            e.to_string().starts_with("the screen is pinned to com.k"),
            "{e}"
        );
        // The lead of an unauthorized refusal: lock task first, then a TV; never on USB or
        // a Wi-Fi-paired phone, whose fixes are their own.
        let lead = |r, tv, lt| unauthorized_lead(r, tv, lt);
        assert!(lead(RouteKind::Direct, Some(true), None)
            .unwrap()
            .contains("Android TV"));
        assert!(lead(
            RouteKind::WifiAdbServer,
            Some(true),
            Some(LockTaskMode::Locked)
        )
        .unwrap()
        .contains("lock task mode"));
        assert_eq!(lead(RouteKind::UsbAdbServer, Some(true), None), None);
        assert_eq!(lead(RouteKind::WifiPaired, Some(true), None), None);
        assert_eq!(
            lead(RouteKind::Direct, Some(false), Some(LockTaskMode::None)),
            None
        );
    }

    #[test]
    fn every_state_maps_once() {
        let usb = RouteKind::UsbAdbServer;
        assert!(state_refusal(&DeviceState::Device, usb).is_none());
        let (code, msg) = state_refusal(
            &DeviceState::from_adb(
                "no permissions (missing udev rules? user is in the plugdev group); see [url]",
            ),
            usb,
        )
        .unwrap();
        assert_eq!(code, ErrorCode::DeviceNoPermissions);
        assert!(msg.contains("udev") && msg.contains("plugdev"), "{msg}");
        let (code, _) = state_refusal(&DeviceState::ServerUnavailable, usb).unwrap();
        assert_eq!(code, ErrorCode::AdbServerUnavailable);
        let (code, msg) = state_refusal(&DeviceState::Offline, usb).unwrap();
        assert_eq!(code, ErrorCode::DeviceOffline);
        assert!(msg.contains("adb reconnect"), "{msg}");
    }

    /// The fix depends on how the phone is reached: no `adb` command for a direct phone, no
    /// cable for a Wi-Fi one; an unplugged phone is never called frozen.
    #[test]
    fn fixes_follow_the_route() {
        for state in [
            DeviceState::Offline,
            DeviceState::Gone,
            DeviceState::Unauthorized,
            DeviceState::Connecting,
            DeviceState::Unknown("rescue".into()),
        ] {
            let (_, direct) = state_refusal(&state, RouteKind::Direct).unwrap();
            for box_side in [
                "adb reconnect",
                "adb connect",
                "adb disconnect",
                "replug",
                "adb server",
            ] {
                assert!(!direct.contains(box_side), "{state:?}: {direct}");
            }
            // A phone paired over Wi-Fi: the phone's Wireless debugging screen, no `adb tcpip`.
            let (_, paired) = state_refusal(&state, RouteKind::WifiPaired).unwrap();
            for box_side in [
                "adb tcpip",
                "adb connect",
                "adb reconnect",
                "replug",
                "cable",
            ] {
                assert!(!paired.contains(box_side), "{state:?}: {paired}");
            }
            let (_, wifi) = state_refusal(&state, RouteKind::WifiAdbServer).unwrap();
            assert!(
                !wifi.contains("cable") && !wifi.contains("replug"),
                "{state:?}: {wifi}"
            );
        }
        for route in [
            RouteKind::UsbAdbServer,
            RouteKind::WifiAdbServer,
            RouteKind::Emulator,
            RouteKind::Direct,
            RouteKind::WifiPaired,
        ] {
            let (code, msg) = state_refusal(&DeviceState::Gone, route).unwrap();
            assert_eq!(code, ErrorCode::DeviceOffline);
            assert!(!msg.contains("frozen"), "{msg}");
        }
        let (_, usb) = state_refusal(&DeviceState::Gone, RouteKind::UsbAdbServer).unwrap();
        assert!(usb.contains("unplugged") && usb.contains("cable"), "{usb}");
    }
}
