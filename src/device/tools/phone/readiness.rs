//! The bound phone's readiness, read from what the tools already read (field bugs 48, 49): a
//! system service that is not up (booting), the screen off, the lock screen showing and whether
//! it needs a credential. One [`Readiness`] per reading; the last one is kept per bound phone
//! ([`ReadinessCache`], in the channel's runtime: one phone per channel) for the descriptor
//! and for acting tools that make no window read of their own.
//!
//! Freshness: every gesture reads it with its geometry (`dumpsys window displays`, the one read
//! a gesture makes anyway: no extra round trip); on phones whose display dump carries no
//! keyguard lines (before Android 10) that read becomes the compound `dumpsys window displays;
//! echo SEP; dumpsys window policy`, learned once per binding. Other acting tools
//! ([`require_unlocked`]) reuse a reading at most [`READING_VALIDITY`] old, else read it.
//! Which tools refuse is each tool's [`crate::device::tools::LockRule`].

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::command::{self, compound};
use super::input::INPUT_DEADLINE;
use crate::device::error::DeviceError;
use crate::device::parse::displays::{WindowDump, DEFAULT_DISPLAY};
use crate::device::parse::keyguard::{parse_keyguard, KeyguardState};
use crate::device::parse::lock_task::LockTaskMode;
use crate::device::tools::ToolCtx;

/// How old a kept reading may be for an acting tool that reads no window state of its own.
pub const READING_VALIDITY: Duration = Duration::from_secs(2);
/// Output cap of the window read (bytes; a display dump is 10–200 KB).
const WINDOW_LIMIT: usize = 4 << 20;

/// One reading; `None` where the phone's answer did not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Readiness {
    /// A system service the read needed is not running (`Can't find service: window`).
    pub missing_service: Option<String>,
    /// The default display's policy is awake.
    pub screen_on: Option<bool>,
    /// The lock screen is showing on the default display and no app shows over it.
    pub locked: Option<bool>,
    /// The lock needs the PIN, pattern or password.
    pub lock_secure: Option<bool>,
}

impl Readiness {
    /// From one window (and keyguard) dump. The keyguard counts as in the way when it shows
    /// and is not occluded; where the dump does not say whether it is occluded, the default
    /// display's focus decides: an activity window there is shown over the lock screen (a call,
    /// the camera), while the lock screen's own windows (`NotificationShade` since Android 11,
    /// `StatusBar` before, `Keyguard` on 4.x) carry no activity.
    pub fn from_dumps(window: &WindowDump, keyguard: &KeyguardState) -> Readiness {
        let app_on_top = || {
            window
                .focus(DEFAULT_DISPLAY)
                .is_some_and(|f| f.activity.is_some())
        };
        let locked = keyguard.showing.map(|showing| {
            showing
                && match keyguard.occluded {
                    Some(occluded) => !occluded,
                    None => !app_on_top(),
                }
        });
        Readiness {
            missing_service: None,
            screen_on: window.awake(DEFAULT_DISPLAY),
            locked,
            lock_secure: keyguard.secure,
        }
    }

    /// Why an acting tool must not run now: the missing service (`device_booting`), else the
    /// screen off or the lock screen up (`device_locked`). `None` when nothing says so.
    pub fn refusal(&self) -> Option<DeviceError> {
        if let Some(service) = &self.missing_service {
            return Some(DeviceError::ServiceMissing {
                service: service.clone(),
                line: format!("Can't find service: {service}"),
            });
        }
        let screen_off = self.screen_on == Some(false);
        let locked = self.locked == Some(true);
        (screen_off || locked).then_some(DeviceError::Locked {
            screen_off,
            locked,
            secure: self.lock_secure,
            done: None,
        })
    }
}

/// Whether a phone's display dump carries keyguard lines, learned on the first read (0 while
/// unknown).
const IN_DISPLAYS: u8 = 1;
const NEEDS_POLICY: u8 = 2;

/// What the tools learned about the bound phone that outlives a reading and explains a later
/// refusal the phone itself cannot (field bug 80: an `unauthorized` phone answers nothing).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DeviceFacts {
    /// An Android TV build (`ro.build.characteristics` lists `tv`, AOSP
    /// `device/google/atv` products).
    pub tv: Option<bool>,
    /// Lock task mode at the last read of it (`dumpsys activity activities`).
    pub lock_task: Option<LockTaskMode>,
}

/// The last reading of the bound phone.
#[derive(Debug, Default)]
pub struct ReadinessCache {
    last: Mutex<Option<(Instant, Readiness)>>,
    keyguard_source: AtomicU8,
    facts: Mutex<DeviceFacts>,
}

impl ReadinessCache {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<(Instant, Readiness)>> {
        self.last.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `r` as the latest reading and returns it as kept: a reading that cannot tell
    /// whether the lock needs a credential keeps the last known answer (the lock type outlives
    /// a reading).
    pub fn record(&self, mut r: Readiness) -> Readiness {
        let mut slot = self.slot();
        if r.lock_secure.is_none() {
            r.lock_secure = slot.as_ref().and_then(|(_, old)| old.lock_secure);
        }
        *slot = Some((Instant::now(), r.clone()));
        r
    }

    /// The latest reading, however old (the descriptor shows it as of that read).
    pub fn last(&self) -> Option<Readiness> {
        self.slot().as_ref().map(|(_, r)| r.clone())
    }

    /// The `device_locked` message of the latest reading, when it said the lock screen is up
    /// or the screen is off (for the descriptor).
    pub fn locked_reason(&self) -> Option<String> {
        self.last()?
            .refusal()
            .filter(|e| matches!(e, DeviceError::Locked { .. }))
            .map(|e| e.to_string())
    }

    /// Notes what a read found (`None` fields leave the known value).
    pub fn note(&self, found: DeviceFacts) {
        let mut f = self.facts.lock().unwrap_or_else(|e| e.into_inner());
        f.tv = found.tv.or(f.tv);
        f.lock_task = found.lock_task.or(f.lock_task);
    }

    /// What is known about the phone.
    pub fn facts(&self) -> DeviceFacts {
        *self.facts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The latest reading if it is at most [`READING_VALIDITY`] old.
    pub fn fresh(&self) -> Option<Readiness> {
        self.slot()
            .as_ref()
            .filter(|(at, _)| at.elapsed() <= READING_VALIDITY)
            .map(|(_, r)| r.clone())
    }
}

/// A window read: the dump and the readiness it gave.
pub struct WindowRead {
    /// `dumpsys window displays` (and `policy`) as blocks.
    pub dump: WindowDump,
    /// The readiness read from it, already recorded.
    pub readiness: Readiness,
}

/// Reads `dumpsys window displays` (with `dumpsys window policy` on phones whose display dump
/// has no keyguard lines), records the readiness and returns it with the dump. A missing
/// window service is recorded and returned as `device_booting` naming it.
pub async fn read_window(ctx: &ToolCtx<'_>) -> Result<WindowRead, DeviceError> {
    let with_policy = ctx.readiness.keyguard_source.load(Ordering::Relaxed) == NEEDS_POLICY;
    let (dump, keyguard) = run_window_read(ctx, with_policy).await?;
    let (dump, keyguard) =
        if !with_policy && keyguard.showing.is_none() && !dump.display_ids().is_empty() {
            // Learned once: this phone's display dump says nothing about the keyguard.
            ctx.readiness
                .keyguard_source
                .store(NEEDS_POLICY, Ordering::Relaxed);
            run_window_read(ctx, true).await?
        } else {
            if !with_policy && keyguard.showing.is_some() {
                ctx.readiness
                    .keyguard_source
                    .store(IN_DISPLAYS, Ordering::Relaxed);
            }
            (dump, keyguard)
        };
    let readiness = ctx
        .readiness
        .record(Readiness::from_dumps(&dump, &keyguard));
    Ok(WindowRead { dump, readiness })
}

async fn run_window_read(
    ctx: &ToolCtx<'_>,
    with_policy: bool,
) -> Result<(WindowDump, KeyguardState), DeviceError> {
    let cmd = if with_policy {
        compound(&[
            "dumpsys window displays".to_string(),
            "dumpsys window policy".to_string(),
        ])
    } else {
        "dumpsys window displays".to_string()
    };
    let out = command::run(ctx, &cmd, INPUT_DEADLINE, WINDOW_LIMIT).await?;
    if let Some(e) = out.service_missing() {
        if let DeviceError::ServiceMissing { service, .. } = &e {
            let _ = ctx.readiness.record(Readiness {
                missing_service: Some(service.clone()),
                ..Readiness::default()
            });
        }
        return Err(e);
    }
    Ok((WindowDump::parse(&out.stdout), parse_keyguard(&out.stdout)))
}

/// For acting tools that read no window state of their own (typing, launching, opening a
/// link): refuses with `device_booting` / `device_locked` when the phone is not ready, from a
/// reading at most [`READING_VALIDITY`] old, else from a [`read_window`] made now.
pub async fn require_unlocked(ctx: &ToolCtx<'_>) -> Result<(), DeviceError> {
    let reading = match ctx.readiness.fresh() {
        Some(r) => r,
        None => read_window(ctx).await?.readiness,
    };
    match reading.refusal() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(text: &str) -> Readiness {
        Readiness::from_dumps(&WindowDump::parse(text), &parse_keyguard(text))
    }

    #[test]
    fn the_lock_screen_is_in_the_way_unless_an_app_shows_over_it() {
        let shade = "  Display: mDisplayId=0 rootTasks=1\n  mCurrentFocus=Window{1 u0 NotificationShade}\n    DisplayPolicy\n      mAwake=true mScreenOnEarly=true mScreenOnFully=true\n      isKeyguardShowing=true\n";
        let r = reading(shade);
        assert_eq!((r.locked, r.screen_on), (Some(true), Some(true)));
        let e = r.refusal().expect("refused");
        assert_eq!(e.code(), crate::protocol::ErrorCode::DeviceLocked);
        assert!(
            e.to_string().starts_with("the lock screen is showing: wake and unlock the phone, or swipe up on a swipe lock"),
            "{e}"
        );
        // The camera shown over the lock screen (occluding it) takes the input.
        let camera = shade.replace(
            "NotificationShade",
            "com.android.camera/com.android.camera.Camera",
        );
        assert_eq!(reading(&camera).locked, Some(false));
        // The shade pulled down on an unlocked phone is not a lock screen.
        let pulled = shade.replace("isKeyguardShowing=true", "isKeyguardShowing=false");
        assert_eq!(reading(&pulled).refusal().map(|e| e.code()), None);
        // Nothing said about the keyguard: unknown, never refused.
        assert_eq!(
            reading("  mCurrentFocus=Window{1 u0 StatusBar}\n")
                .refusal()
                .map(|e| e.code()),
            None
        );
    }

    #[test]
    fn screen_off_and_booting_refusals() {
        let off = Readiness {
            screen_on: Some(false),
            ..Readiness::default()
        };
        let m = off.refusal().unwrap().to_string();
        assert!(m.starts_with("the screen is off"), "{m}");
        let both = Readiness {
            screen_on: Some(false),
            locked: Some(true),
            lock_secure: Some(true),
            ..Readiness::default()
        };
        let m = both.refusal().unwrap().to_string();
        assert!(
            m.contains("PIN, pattern or password") && m.contains("\"wake\""),
            "{m}"
        );
        let booting = Readiness {
            missing_service: Some("window".into()),
            locked: Some(true),
            ..Readiness::default()
        };
        let e = booting.refusal().unwrap();
        assert_eq!(e.code(), crate::protocol::ErrorCode::DeviceBooting);
        assert!(e.to_string().contains("`service check window`"), "{e}");
        assert!(!e.to_string().contains("boot_completed"), "{e}");
    }

    #[test]
    fn the_lock_type_outlives_a_reading_that_cannot_tell() {
        let cache = ReadinessCache::default();
        cache.record(Readiness {
            locked: Some(true),
            lock_secure: Some(true),
            ..Readiness::default()
        });
        let kept = cache.record(Readiness {
            locked: Some(true),
            ..Readiness::default()
        });
        assert_eq!(kept.lock_secure, Some(true));
        assert_eq!(cache.fresh().unwrap().lock_secure, Some(true));
        assert_eq!(cache.last().unwrap().locked, Some(true));
    }
}
