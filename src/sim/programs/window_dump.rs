//! `dumpsys window [policy|displays|windows]`, the keyguard part of `dumpsys activity
//! activities` and `dumpsys trust`, in AOSP's layouts, reduced to the lines tools read. What
//! the phone prints follows its state: the lock screen (`locked`, `lock_secure`), the screen
//! (`screen_on`), the extra logical displays (`extra_displays`, listed before or after display
//! 0). Per Android release, the line and its source:
//!
//! | lines | releases | source |
//! |---|---|---|
//! | `Display: mDisplayId=N rootTasks=K`, `init=… cur=WxH app=…`, `mCurrentFocus=`, `mFocusedApp=` per display | 10+ (before: `Display: mDisplayId=N`, focus in the windows section) | `DisplayContent.dump`; `fixtures/activity/mtk-tablet-android13-dumpsys-activity-activities.txt` |
//! | `DisplayPolicy` block: `mAwake=`, `mShowingDream= mDreamingLockscreen=`, `mStatusBar=`, `mExpandedPanel=`, `isKeyguardShowing=`, `mFocusedWindow=` | 11+ (API 30) | `DisplayPolicy.dump`; same capture |
//! | `DisplayRotation` block: `mRotation=N` | 10+ | `DisplayRotation.dump` |
//! | `KeyguardServiceDelegate`: `showing= inputRestricted= occluded= secure=` … (≤ 14), `trusted= simSecure=` (15+), nested `KeyguardStateMonitor` `mIsShowing=` | 6+ | `KeyguardServiceDelegate.dump`, `KeyguardStateMonitor.dump` |
//! | `mAwake=`, `mScreenOnEarly= mScreenOnFully=`, `mShowingLockscreen= mShowingDream= mDreamingLockscreen=` in the policy section | ≤ 7.1 | `PhoneWindowManager.dump`; openstf/stf#464 (Android 6 capture), appium/appium-adb#263 |
//! | focused window over the lock screen: `NotificationShade` (11+), `StatusBar` (≤ 10) | | appium/appium-adb#564, calabash/calabash-android#815, the capture above |
//! | `KeyguardController:` `mKeyguardShowing=` … and ` KeyguardShowing=… Occluded=… at display=0`, `isSleeping=true`, `mLastPausedActivity:` while locked (`ResumedActivity:` still names the app) | 12+ (API 31) | `KeyguardController.dump`, `ActivityTaskSupervisor.dump`; the capture above |
//! | ` User "Owner" (id=0, flags=0x13) (current): trusted=0, trustManaged=0, deviceLocked=N, strongAuthRequired=0x0` (`trustState=…`, `isActiveUnlockRunning=` from 14) | 5.1+ | `TrustManagerService` dump; appium/appium-adb#407 |
//!
//! `deviceLocked` is 1 only while a secure lock is up (a swipe lock reads 0, appium-adb#407).

use super::ident;
use crate::persona::ExtraDisplay;
use crate::phone::PhoneState;

/// `pkg/.Act` → `pkg/pkg.Act` (window titles use the full class name).
pub fn full_component(pkg: &str, act: &str) -> String {
    if let Some(rest) = act.strip_prefix('.') {
        format!("{pkg}/{pkg}.{rest}")
    } else {
        format!("{pkg}/{act}")
    }
}

/// `pkg/pkg.Act` → `pkg/.Act` (ActivityRecord short form).
pub fn short_component(pkg: &str, act: &str) -> String {
    match act.strip_prefix(pkg) {
        Some(rest) if rest.starts_with('.') => format!("{pkg}/{rest}"),
        _ => format!("{pkg}/{act}"),
    }
}

/// First SDK whose display blocks carry `DisplayPolicy` with `isKeyguardShowing=` (Android 11).
const POLICY_IN_DISPLAYS_SDK: u32 = 30;
/// First SDK whose `dumpsys activity activities` prints the display blocks and
/// `KeyguardController` (Android 12).
const KEYGUARD_IN_ACTIVITIES_SDK: u32 = 31;

/// The window the lock screen focuses: `NotificationShade` since Android 11, `StatusBar` before.
fn keyguard_window(s: &PhoneState) -> String {
    let title = if s.persona.sdk >= POLICY_IN_DISPLAYS_SDK {
        "NotificationShade"
    } else {
        "StatusBar"
    };
    format!("Window{{{} u0 {title}}}", ident(title))
}

/// The task id the dumps give `pkg`.
pub fn task_id(pkg: &str) -> u32 {
    10 + u32::from_str_radix(&ident(pkg)[..2], 16).unwrap_or(0) % 90
}

/// `ActivityRecord{hash u0 pkg/.Act tN}`.
pub fn activity_record(pkg: &str, act: &str) -> String {
    format!(
        "ActivityRecord{{{} u0 {} t{}}}",
        ident(pkg),
        short_component(pkg, act),
        task_id(pkg)
    )
}

/// The window holding display 0's focus: the lock screen's while locked or dark, else the
/// framework's crash/ANR dialog when one shows, else the foreground activity's.
fn focus_window(s: &PhoneState) -> String {
    let (pkg, act) = s.foreground();
    if s.locked || !s.screen_on {
        keyguard_window(s)
    } else if let Some(d) = &s.app_dialog {
        let title = d.title();
        format!("Window{{{} u0 {title}}}", ident(&title))
    } else {
        format!(
            "Window{{{} u0 {}}}",
            ident(&act),
            full_component(&pkg, &act)
        )
    }
}

/// `mCurrentFocus=` / `mFocusedApp=` of display 0 (the focused app stays the top activity
/// under a dialog or the lock screen).
fn focus_lines(s: &PhoneState, indent: &str) -> String {
    let (pkg, act) = s.foreground();
    format!(
        "{indent}mCurrentFocus={}\n{indent}mFocusedApp={}\n",
        focus_window(s),
        activity_record(&pkg, &act)
    )
}

/// One display's block of `DisplayContent.dump`: id, sizes, focus lines, and (Android 11+) its
/// `DisplayPolicy` and `DisplayRotation`.
struct Block {
    id: u32,
    init: (u32, u32),
    cur: (u32, u32),
    density: u32,
    focus: String,
    rotation: u32,
}

fn block(s: &PhoneState, b: &Block) -> String {
    let (iw, ih) = b.init;
    let (w, h) = b.cur;
    let modern = s.persona.sdk >= POLICY_IN_DISPLAYS_SDK;
    let mut t = if modern {
        format!("  Display: mDisplayId={} rootTasks=1\n", b.id)
    } else {
        format!("  Display: mDisplayId={}\n", b.id)
    };
    t.push_str(&format!(
        "    init={iw}x{ih} {}dpi cur={w}x{h} app={w}x{h} rng={w}x{w}-{h}x{h}\n    deferred=false mLayoutNeeded=false\n\n",
        b.density
    ));
    if !modern {
        return t;
    }
    t.push_str(&b.focus);
    let awake = s.screen_on;
    t.push_str(&format!(
        "\n  displayId={}\n\n  DisplayFrames w={w} h={h} r={}\n\n  DisplayPolicy\n    mCarDockEnablesAccelerometer=true mDeskDockEnablesAccelerometer=true\n    mDockMode=EXTRA_DOCK_STATE_UNDOCKED mLidState=LID_ABSENT\n    mAwake={awake} mScreenOnEarly={awake} mScreenOnFully={awake}\n    mKeyguardDrawComplete={awake} mWindowManagerDrawComplete={awake}\n    mHdmiPlugged=false\n    mShowingDream=false mDreamingLockscreen={}\n",
        b.id, b.rotation, s.locked
    ));
    if b.id == 0 {
        t.push_str(&format!(
            "    mStatusBar=Window{{{} u0 StatusBar}}\n    mExpandedPanel=Window{{{} u0 NotificationShade}}\n",
            ident("StatusBar"),
            ident("NotificationShade")
        ));
    }
    t.push_str(&format!("    isKeyguardShowing={}\n", s.locked));
    t.push_str(&format!(
        "    mTopIsFullscreen=false\n    mForceStatusBar=false mAllowLockscreenWhenOn=false\n\n  DisplayRotation\n    mCurrentAppOrientation=SCREEN_ORIENTATION_UNSPECIFIED\n    mRotation={} mDeferredRotationPauseCount=0\n\n",
        b.rotation
    ));
    t
}

/// The block of an extra logical display: its own size and focus (`null` when it names none).
fn extra_block(s: &PhoneState, d: &ExtraDisplay) -> String {
    let (focus, app) = match d.focus.as_deref().and_then(|f| f.split_once('/')) {
        Some((pkg, act)) => (
            format!("Window{{{} u0 {}}}", ident(act), full_component(pkg, act)),
            activity_record(pkg, act),
        ),
        None => ("null".to_string(), "null".to_string()),
    };
    block(
        s,
        &Block {
            id: d.id,
            init: (d.width, d.height),
            cur: (d.width, d.height),
            density: d.density,
            focus: format!("  mCurrentFocus={focus}\n  mFocusedApp={app}\n"),
            rotation: 0,
        },
    )
}

/// Every display's block in the order they are listed (extra displays marked `listed_first`
/// come before display 0).
pub fn display_blocks(s: &PhoneState) -> String {
    let (w, h) = s.display_size();
    let main = block(
        s,
        &Block {
            id: 0,
            init: s.physical_size(),
            cur: (w, h),
            density: s.persona.displays[0].density,
            focus: focus_lines(s, "  "),
            rotation: s.rotation,
        },
    );
    let extra = |first: bool| -> String {
        s.extra_displays
            .iter()
            .filter(|d| d.listed_first == first)
            .map(|d| extra_block(s, d))
            .collect()
    };
    format!("{}{main}{}", extra(true), extra(false))
}

/// `dumpsys window policy` (`PhoneWindowManager.dump`): the lines about the screen and the
/// keyguard.
pub fn policy(s: &PhoneState) -> String {
    let sdk = s.persona.sdk;
    let on = s.screen_on;
    let mut t = String::from("WINDOW MANAGER POLICY STATE (dumpsys window policy)\n    mSafeMode=false mSystemReady=true mSystemBooted=true\n");
    if sdk < 29 {
        // Before Android 10 the screen and keyguard flags live here, not in a DisplayPolicy.
        t.push_str(&format!(
            "    mAwake={on}\n    mScreenOnEarly={on} mScreenOnFully={on}\n    mShowingLockscreen={} mShowingDream=false mDreamingLockscreen={}\n    mStatusBar=Window{{{} u0 StatusBar}}\n",
            s.locked, s.locked, ident("StatusBar")
        ));
    }
    t.push_str(&format!(
        "    KeyguardServiceDelegate\n      showing={}\n      inputRestricted={}\n      occluded=false\n",
        s.locked, s.locked
    ));
    if sdk >= 35 {
        t.push_str("      trusted=false\n      simSecure=false\n");
    } else {
        t.push_str(&format!("      secure={}\n", s.lock_secure));
    }
    let (screen, interactive) = match (sdk >= 35, on) {
        (true, true) => ("SCREEN_STATE_ON", "INTERACTIVE_STATE_AWAKE"),
        (true, false) => ("SCREEN_STATE_OFF", "INTERACTIVE_STATE_SLEEP"),
        (false, true) => ("2", "2"),
        (false, false) => ("0", "0"),
    };
    t.push_str(&format!(
        "      dreaming=false\n      systemIsReady=true\n      deviceHasKeyguard=true\n      enabled=true\n      currentUser=0\n      bootCompleted=true\n      screenState={screen}\n      interactiveState={interactive}\n"
    ));
    if sdk < 35 {
        t.push_str(&format!(
            "      KeyguardStateMonitor\n        mIsShowing={}\n        mSimSecure=false\n        mInputRestricted={}\n        mTrusted=false\n        mCurrentUserId=0\n",
            s.locked, s.locked
        ));
    }
    t
}

/// `dumpsys window [SECTION]`: `policy`, `displays`, `windows`, or all three (no section).
pub fn window(s: &PhoneState, section: Option<&str>) -> String {
    match section {
        Some("policy" | "p") => policy(s),
        Some("displays" | "d") => displays(s),
        Some("windows" | "w") => windows(s),
        _ => format!("{}\n{}\n{}", policy(s), displays(s), windows(s)),
    }
}

fn displays(s: &PhoneState) -> String {
    format!(
        "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n{}",
        display_blocks(s)
    )
}

/// First SDK whose windows section prints no `mCurrentFocus=`/`mFocusedApp=` (only the
/// per-display blocks do): Android 11 (captures `fixtures/window/appium-android1{1,2,3}-…`;
/// openatx/uiautomator2#952, #1148; JeffLIrion/python-androidtv#271).
const NO_FOCUS_IN_WINDOWS_SDK: u32 = 30;

/// One block of the window list (`WindowState.dump`): header, display, owner, type and
/// flags, view visibility, and on Android 11+ `isOnScreen=`/`isVisible=`.
struct ListedWindow {
    title: String,
    owner: String,
    ty: &'static str,
    flags: String,
    visible: bool,
    activity: Option<String>,
}

fn listed(s: &PhoneState, n: usize, w: &ListedWindow) -> String {
    let (dw, dh) = s.display_size();
    let mut t = format!(
        "  Window #{n} Window{{{} u0 {}}}:\n    mDisplayId=0 rootTaskId=1 mSession=Session{{{} 12345:u0a10123}}\n    mOwnerUid=10123 showForAllUsers=false package={} appop=NONE\n    mAttrs={{(0,0)(fillxfill) sim={{adjust=resize}} ty={} fmt=TRANSLUCENT\n      fl={}}}\n",
        ident(&w.title), w.title, ident("session"), w.owner, w.ty, w.flags
    );
    if let Some(record) = &w.activity {
        t.push_str(&format!("    mActivityRecord={record}\n"));
    }
    t.push_str(&format!(
        "    mViewVisibility=0x{} mHaveFrame=true mObscured=false\n    mFrame=[0,0][{dw},{dh}]\n",
        if w.visible { 0 } else { 8 }
    ));
    if s.persona.sdk >= NO_FOCUS_IN_WINDOWS_SDK {
        t.push_str(&format!(
            "    isOnScreen={v}\n    isVisible={v}\n",
            v = w.visible
        ));
    }
    t
}

/// The windows top down: the crash/ANR dialog, the lock screen's window (or the
/// not-focusable status bar), then the activity stack (the top one shown, those below
/// `GONE`).
fn window_list(s: &PhoneState) -> Vec<ListedWindow> {
    let mut list = Vec::new();
    if let Some(d) = s.app_dialog.as_ref().filter(|_| s.screen_on && !s.locked) {
        list.push(ListedWindow {
            title: d.title(),
            owner: "android".into(),
            ty: "SYSTEM_ALERT",
            flags: "DIM_BEHIND ALT_FOCUSABLE_IM SPLIT_TOUCH HARDWARE_ACCELERATED".into(),
            visible: true,
            activity: None,
        });
    }
    let keyguard = s.locked || !s.screen_on;
    list.push(ListedWindow {
        title: if keyguard && s.persona.sdk >= POLICY_IN_DISPLAYS_SDK {
            "NotificationShade".into()
        } else {
            "StatusBar".into()
        },
        owner: "com.android.systemui".into(),
        ty: "STATUS_BAR",
        flags: if keyguard {
            "SPLIT_TOUCH HARDWARE_ACCELERATED".into()
        } else {
            "NOT_FOCUSABLE SPLIT_TOUCH HARDWARE_ACCELERATED".into()
        },
        visible: true,
        activity: None,
    });
    let secure = if s.secure_window { " SECURE" } else { "" };
    for (i, (pkg, act)) in s.ui.stack.iter().rev().enumerate() {
        list.push(ListedWindow {
            title: full_component(pkg, act),
            owner: pkg.clone(),
            ty: "BASE_APPLICATION",
            flags: format!(
                "LAYOUT_IN_SCREEN LAYOUT_INSET_DECOR SPLIT_TOUCH HARDWARE_ACCELERATED{}",
                if i == 0 { secure } else { "" }
            ),
            visible: i == 0,
            activity: Some(activity_record(pkg, act)),
        });
    }
    list
}

/// `WINDOW MANAGER WINDOWS`: the window list, then the tail (`mTopFocusedDisplayId`,
/// rotation; the focus lines only before Android 11).
fn windows(s: &PhoneState) -> String {
    let mut t = String::from("WINDOW MANAGER WINDOWS (dumpsys window windows)\n");
    for (n, w) in window_list(s).iter().enumerate() {
        t.push_str(&listed(s, n, w));
    }
    t.push_str("\n  mGlobalConfiguration={1.0 ?mcc?mnc [en_US] ldltr}\n  mHasPermanentDpad=false\n  mTopFocusedDisplayId=0\n");
    t.push_str(&format!(
        "  mCurrentRotation=ROTATION_{}\n",
        s.rotation * 90
    ));
    if s.persona.sdk < NO_FOCUS_IN_WINDOWS_SDK {
        t.push_str(&focus_lines(s, "  "));
    } else {
        t.push_str(&format!(
            "  mInputMethodTarget in display# 0 {}\n",
            focus_window(s)
        ));
    }
    t.push_str(&format!(
        "  mInputMethodWindow={}\n",
        if s.ui.focused.is_some() {
            "Window{ime u0 InputMethod}"
        } else {
            "null"
        }
    ));
    t
}

/// What `dumpsys activity activities` adds on Android 12+: `ActivityTaskSupervisor state:` with
/// the display blocks and `KeyguardController` (empty before).
pub fn activity_supervisor(s: &PhoneState) -> String {
    if s.persona.sdk < KEYGUARD_IN_ACTIVITIES_SDK {
        return String::new();
    }
    let k = s.locked;
    format!(
        "\nActivityTaskSupervisor state:\n{}  KeyguardController:\n    mKeyguardShowing={k}\n    mAodShowing=false\n    mKeyguardGoingAway=false\n   KeyguardShowing={k} AodShowing=false KeyguardGoingAway=false DismissalRequested=false  Occluded=false DismissingKeyguardActivity=null TurnScreenOnActivity=null at display=0\n    mDismissalRequested=false\n\n",
        display_blocks(s)
    )
}

/// `dumpsys trust` (`TrustManagerService`): the current user's `deviceLocked`.
pub fn trust(s: &PhoneState) -> String {
    let locked = u8::from(s.locked && s.lock_secure);
    let state = if s.persona.sdk >= 34 {
        format!("trustState=UNTRUSTED, trustManaged=0, deviceLocked={locked}, isActiveUnlockRunning=0, strongAuthRequired=0x0")
    } else {
        format!("trusted=0, trustManaged=0, deviceLocked={locked}, strongAuthRequired=0x0")
    };
    format!("Trust manager state:\n User \"Owner\" (id=0, flags=0x13) (current): {state}\n   Enabled agents:\n   Events:\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persona::Persona;
    use crate::phone::Phone;

    fn phone(persona: &str) -> Phone {
        Phone::new(Persona::load(persona).unwrap(), "SIMWD0001", "")
    }

    #[test]
    fn android14_lock_screen_in_every_section() {
        let p = phone("pixel-android14");
        p.with(|s| s.locked = true);
        let displays = p.with(|s| window(s, Some("displays")));
        assert!(
            displays.contains("    isKeyguardShowing=true\n"),
            "{displays}"
        );
        assert!(displays.contains("  mCurrentFocus=Window{"), "{displays}");
        assert!(displays.contains(" u0 NotificationShade}\n"), "{displays}");
        let policy = p.with(|s| window(s, Some("policy")));
        assert!(policy.contains("      showing=true\n      inputRestricted=true\n      occluded=false\n      secure=false\n"), "{policy}");
        assert!(policy.contains("        mIsShowing=true\n"), "{policy}");
        p.with(|s| s.lock_secure = true);
        assert!(p
            .with(|s| trust(s))
            .contains("deviceLocked=1, isActiveUnlockRunning=0"));
        let ats = p.with(|s| activity_supervisor(s));
        assert!(ats.contains("KeyguardShowing=true AodShowing=false KeyguardGoingAway=false DismissalRequested=false  Occluded=false DismissingKeyguardActivity=null TurnScreenOnActivity=null at display=0"), "{ats}");
        p.with(|s| s.locked = false);
        assert!(
            p.with(|s| trust(s)).contains("deviceLocked=0"),
            "a swipe or no lock reads 0"
        );
    }

    #[test]
    fn android15_and_android6_layouts() {
        let p = phone("emulator-android15");
        let policy = p.with(|s| window(s, Some("policy")));
        assert!(policy.contains("      simSecure=false\n") && !policy.contains("secure=false"));
        assert!(policy.contains("screenState=SCREEN_STATE_ON"), "{policy}");
        let old = phone("legacy-android6");
        old.with(|s| s.locked = true);
        let displays = old.with(|s| window(s, Some("displays")));
        assert!(!displays.contains("isKeyguardShowing") && !displays.contains("mCurrentFocus"));
        assert!(displays.contains("  Display: mDisplayId=0\n"), "{displays}");
        let policy = old.with(|s| window(s, Some("policy")));
        assert!(
            policy.contains("    mShowingLockscreen=true mShowingDream=false"),
            "{policy}"
        );
        let windows = old.with(|s| window(s, Some("windows")));
        assert!(windows.contains(" u0 StatusBar}\n"), "{windows}");
        assert_eq!(old.with(|s| activity_supervisor(s)), "");
    }

    #[test]
    fn windows_section_per_release_with_a_dialog_and_lock_task() {
        let p = phone("pixel-android14");
        p.with(|s| s.start_activity("com.example.notes", ".MainActivity"));
        let w = p.with(|s| window(s, Some("windows")));
        assert!(!w.contains("mCurrentFocus="), "Android 11+: {w}");
        let bar = w.find(" u0 StatusBar}:").expect("status bar");
        let app = w
            .find(" u0 com.example.notes/com.example.notes.MainActivity}:")
            .expect("app");
        assert!(bar < app && w.contains("fl=NOT_FOCUSABLE "), "{w}");
        assert!(
            w.contains("mViewVisibility=0x8"),
            "the launcher below is GONE: {w}"
        );
        p.with(|s| {
            s.app_faults.insert(
                "com.example.notes".into(),
                crate::framework::DialogKind::Anr,
            );
            s.start_activity("com.example.notes", ".MainActivity")
        });
        let w = p.with(|s| window(s, Some("windows")));
        assert!(
            w.starts_with("WINDOW MANAGER WINDOWS (dumpsys window windows)\n  Window #0 Window{")
                && w.contains(" u0 Application Not Responding: com.example.notes}:\n")
                && w.contains("package=android "),
            "{w}"
        );
        let d = p.with(|s| display_blocks(s));
        assert!(
            d.contains("Application Not Responding: com.example.notes}"),
            "{d}"
        );
        let old = phone("legacy-android6");
        assert!(old
            .with(|s| window(s, Some("windows")))
            .contains("  mCurrentFocus=Window{"));
        // Lock task mode keeps every other package out.
        p.with(|s| {
            s.lock_task = Some(crate::framework::LockTask {
                mode: crate::framework::LockTaskMode::Pinned,
                package: "com.example.notes".into(),
            })
        });
        assert!(!p.with(|s| s.start_activity("com.android.settings", ".Settings")));
        assert!(p.with(|s| s.start_activity("com.example.notes", ".MainActivity")));
    }

    #[test]
    fn extra_displays_keep_their_place_and_focus() {
        let p = phone("pixel-android14");
        p.with(|s| {
            s.extra_displays = vec![
                ExtraDisplay {
                    id: 62,
                    width: 1080,
                    height: 1920,
                    density: 320,
                    focus: Some("com.android.systemui/.SubHomeActivity".into()),
                    listed_first: true,
                },
                ExtraDisplay {
                    id: 5,
                    width: 640,
                    height: 480,
                    density: 160,
                    focus: None,
                    listed_first: false,
                },
            ]
        });
        let d = p.with(|s| display_blocks(s));
        let at = |needle: &str| d.find(needle).unwrap_or_else(|| panic!("{needle} in {d}"));
        assert!(
            at("mDisplayId=62 ") < at("mDisplayId=0 ") && at("mDisplayId=0 ") < at("mDisplayId=5 ")
        );
        assert!(d.contains("cur=1080x1920 ") && d.contains("cur=1080x2400 "));
        assert!(d.contains("com.android.systemui/com.android.systemui.SubHomeActivity}"));
    }
}
