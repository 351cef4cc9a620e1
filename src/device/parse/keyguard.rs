//! Is the lock screen (keyguard) showing on the default display, is an app shown over it, and
//! does it need a credential — read from whatever window, activity or trust dump a tool already
//! has (field bug 48). Each source names its AOSP origin and the releases that print it; the
//! most direct one present decides:
//!
//! | rank | line | printed by | in |
//! |---|---|---|---|
//! | 1 | ` KeyguardShowing=true … KeyguardGoingAway=false … Occluded=false … at display=0` | `KeyguardController.KeyguardDisplayState.dumpStatus` (Android 10+) | `dumpsys activity activities` |
//! | 2 | `mKeyguardShowing=true` / `mKeyguardGoingAway=` | `KeyguardController.dump` (Android 8.0+) | `dumpsys activity activities` |
//! | 3 | `showing=` / `occluded=` / `secure=` (≤ Android 14) / `simSecure=` (15+) under `KeyguardServiceDelegate` | `KeyguardServiceDelegate.dump` (Android 6+) | `dumpsys window` (policy) |
//! | 4 | `mIsShowing=` | `KeyguardStateMonitor.dump` | `dumpsys window` (policy) |
//! | 5 | `isKeyguardShowing=` | `DisplayPolicy.dump` (Android 11+, Samsung One UI too) | `dumpsys window displays` |
//! | 6 | `mShowingLockscreen=` | `PhoneWindowManager.dump` (≤ Android 7.1) | `dumpsys window policy` |
//! | 7 | `isStatusBarKeyguard=` | `PhoneWindowManager.dump` (Android 8–9) | `dumpsys window policy` |
//! | 8 | `mDreamingLockscreen=true` (`false` says nothing) | `PhoneWindowManager`/`DisplayPolicy.dump` (keyguard up when the screen went to sleep; appium/appium#9228) | `dumpsys window` |
//! | — | `… (current): … deviceLocked=1 …` | `TrustManagerService` dump (Android 5.1+; `trusted=` ≤ 13, `trustState=` 14+) | `dumpsys trust` |
//!
//! `deviceLocked=1` means a secure keyguard is up for the current user; `0` with the keyguard
//! showing means a lock a swipe dismisses (no credential, or a trust agent keeps it unlocked).
//! Captures: `tests/fixtures/activity/mtk-tablet-android13-dumpsys-activity-activities.txt`
//! (KeyguardController, `isKeyguardShowing=true`, `mDreamingLockscreen=true`).

/// The keyguard as one dump tells it; `None` where the dump says nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyguardState {
    /// The keyguard is up (and not going away) on the default display, occluded or not.
    pub showing: Option<bool>,
    /// An activity that may show over the lock screen (a call, the camera) is on top of it.
    pub occluded: Option<bool>,
    /// Dismissing it needs the PIN, pattern or password.
    pub secure: Option<bool>,
}

/// A `KEY=value` word of `line` (commas and braces after the value dropped).
fn word<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key))
        .map(|v| v.trim_end_matches([',', '}']))
}

fn flag(line: &str, key: &str) -> Option<bool> {
    match word(line, key)? {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// Sources by rank (see the module table), each filled by its first line.
#[derive(Default)]
struct Ranked {
    showing: [Option<bool>; 8],
    occluded: [Option<bool>; 2],
    secure: Option<bool>,
    sim_secure: Option<bool>,
    device_locked: Option<bool>,
}

fn set(slot: &mut Option<bool>, v: Option<bool>) {
    if slot.is_none() {
        *slot = v;
    }
}

impl Ranked {
    fn read(&mut self, line: &str, in_delegate: bool) {
        if line.starts_with("KeyguardShowing=") && word(line, "display=") == Some("0") {
            let away = flag(line, "KeyguardGoingAway=");
            set(
                &mut self.showing[0],
                flag(line, "KeyguardShowing=").map(|s| s && away != Some(true)),
            );
            set(&mut self.occluded[0], flag(line, "Occluded="));
            return;
        }
        if let Some(showing) = flag(line, "mKeyguardShowing=") {
            set(&mut self.showing[1], Some(showing));
        }
        if flag(line, "mKeyguardGoingAway=") == Some(true) {
            self.showing[1] = self.showing[1].map(|_| false);
        }
        if in_delegate {
            set(&mut self.showing[2], flag(line, "showing="));
            set(&mut self.occluded[1], flag(line, "occluded="));
            if self.secure.is_none() {
                self.secure = flag(line, "secure=");
            }
            set(&mut self.sim_secure, flag(line, "simSecure="));
        }
        let keys = [
            (3, "mIsShowing="),
            (4, "isKeyguardShowing="),
            (5, "mShowingLockscreen="),
            (6, "isStatusBarKeyguard="),
        ];
        for (rank, key) in keys {
            set(&mut self.showing[rank], flag(line, key));
        }
        // Only as evidence that it shows: `false` also means "not dreaming when it went up".
        set(
            &mut self.showing[7],
            flag(line, "mDreamingLockscreen=").filter(|d| *d),
        );
        if line.starts_with("User ") && line.contains("(current)") {
            set(&mut self.device_locked, flag(line, "deviceLocked="));
        }
    }

    fn state(&self) -> KeyguardState {
        let showing = self
            .showing
            .iter()
            .flatten()
            .next()
            .copied()
            .or(self.device_locked.filter(|l| *l));
        let secure = self.secure.or(self.sim_secure.filter(|s| *s)).or(
            match (showing, self.device_locked) {
                (Some(true), Some(locked)) => Some(locked),
                _ => None,
            },
        );
        KeyguardState {
            showing,
            occluded: self.occluded.iter().flatten().next().copied(),
            secure,
        }
    }
}

/// Reads the keyguard from `text` (any mix of window, activity and trust dumps).
pub fn parse_keyguard(text: &str) -> KeyguardState {
    let mut ranked = Ranked::default();
    // Indent of the `KeyguardServiceDelegate` header while its block is open.
    let mut delegate: Option<usize> = None;
    for raw in text.lines() {
        let line = raw.trim();
        let indent = raw.len() - raw.trim_start().len();
        if delegate.is_some_and(|d| !line.is_empty() && indent <= d) {
            delegate = None;
        }
        if line == "KeyguardServiceDelegate" {
            delegate = Some(indent);
            continue;
        }
        ranked.read(line, delegate.is_some());
    }
    ranked.state()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn android13_capture_locked_screen_asleep() {
        let k = parse_keyguard(fixture!(
            "activity/mtk-tablet-android13-dumpsys-activity-activities.txt"
        ));
        assert_eq!(
            k,
            KeyguardState {
                showing: Some(true),
                occluded: Some(false),
                secure: None
            }
        );
    }

    #[test]
    fn the_most_direct_source_decides() {
        // KeyguardController's per-display line beats the DisplayPolicy line.
        let t = "    isKeyguardShowing=true\n   KeyguardShowing=false AodShowing=false KeyguardGoingAway=false DismissalRequested=false  Occluded=false DismissingKeyguardActivity=null TurnScreenOnActivity=null at display=0\n";
        assert_eq!(parse_keyguard(t).showing, Some(false));
        // Another display's line is not the default display's.
        let t = "   KeyguardShowing=true AodShowing=false KeyguardGoingAway=false DismissalRequested=false  Occluded=true DismissingKeyguardActivity=null TurnScreenOnActivity=null at display=2\n    isKeyguardShowing=false\n";
        assert_eq!(parse_keyguard(t).showing, Some(false));
        assert_eq!(parse_keyguard(t).occluded, None);
        // Going away is not showing.
        let t = "  KeyguardController:\n    mKeyguardShowing=true\n    mAodShowing=false\n    mKeyguardGoingAway=true\n";
        assert_eq!(parse_keyguard(t).showing, Some(false));
    }

    #[test]
    fn policy_delegate_blocks_of_android_6_14_and_15() {
        let a14 = "    KeyguardServiceDelegate\n      showing=true\n      inputRestricted=true\n      occluded=false\n      secure=true\n      dreaming=false\n      KeyguardStateMonitor\n        mIsShowing=true\n        mSimSecure=false\n    mShowingDream=false\n    showing=false\n";
        let k = parse_keyguard(a14);
        assert_eq!(
            (k.showing, k.occluded, k.secure),
            (Some(true), Some(false), Some(true))
        );
        // Android 15 prints no `secure=`: a swipe lock and a PIN read alike here.
        let a15 = "    KeyguardServiceDelegate\n      showing=true\n      inputRestricted=true\n      occluded=false\n      trusted=false\n      simSecure=false\n";
        assert_eq!(parse_keyguard(a15).secure, None);
        // …and `dumpsys trust` tells them apart while the keyguard shows.
        let trust = " User \"Owner\" (id=0, flags=0x13) (current): trustState=UNTRUSTED, trustManaged=0, deviceLocked=1, isActiveUnlockRunning=0, strongAuthRequired=0x0\n";
        assert_eq!(parse_keyguard(&format!("{a15}{trust}")).secure, Some(true));
        let swipe = trust.replace("deviceLocked=1", "deviceLocked=0");
        assert_eq!(parse_keyguard(&format!("{a15}{swipe}")).secure, Some(false));
        // `showing=` outside the delegate block is not the keyguard's.
        assert_eq!(parse_keyguard("  showing=true\n").showing, None);
    }

    #[test]
    fn legacy_policy_lines() {
        let m = "    mShowingLockscreen=true mShowingDream=false mDreamingLockscreen=false\n";
        assert_eq!(parse_keyguard(m).showing, Some(true));
        let o = "    mShowingDream=false mDreamingLockscreen=true mDreamingSleepToken=null\n";
        assert_eq!(parse_keyguard(o).showing, Some(true));
        // An Android 10 display policy without `isKeyguardShowing`: unknown, so the policy
        // section is read as well.
        let q = o.replace("mDreamingLockscreen=true", "mDreamingLockscreen=false");
        assert_eq!(parse_keyguard(&q).showing, None);
        let p = "    isStatusBarKeyguard=false mForceStatusBarFromKeyguard=false\n";
        assert_eq!(parse_keyguard(p).showing, Some(false));
        let old_trust = " User \"Owner\" (id=0, flags=0x13) (current): trusted=0, trustManaged=0, deviceLocked=1, strongAuthRequired=0x0\n";
        assert_eq!(
            parse_keyguard(old_trust),
            KeyguardState {
                showing: Some(true),
                occluded: None,
                secure: Some(true)
            }
        );
        assert_eq!(parse_keyguard(""), KeyguardState::default());
    }
}
