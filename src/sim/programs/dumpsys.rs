//! `dumpsys battery|window|power|activity|display|input_method` in AOSP's formats, reduced to the
//! lines tools read.
//! Sources: `fixtures/battery/redmi-note14-hyperos3-miuibatteryservice.txt` (BatteryService
//! keys, Android 14+ `Charging state`/`Capacity level`),
//! `fixtures/window/android8-grep-mcurrentfocus-mfocusedapp-appwindowtoken.txt` and
//! `fixtures/activity/mtk-tablet-android13-dumpsys-activity-activities.txt` (`mCurrentFocus`,
//! `mFocusedApp`, `ResumedActivity:`), `fixtures/power/phone-720x1612-dumpsys-power-awake-utf16le.txt`
//! (`mWakefulness=Awake`), AOSP `PowerManagerService.dumpInternal` (`Display Power: state=ON`).

use super::{ident, Output};
use crate::phone::{Phone, PhoneState};

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

/// Runs `dumpsys SERVICE [ARGS]`.
pub fn run(phone: &Phone, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    if let ["package", pkg] = args.as_slice() {
        let installed = super::pm::installed(phone);
        return phone.with(|s| Output::ok(super::packages::dumpsys_package(s, pkg, &installed)));
    }
    phone.with(|s| match args.first().copied() {
        Some("battery") => Output::ok(battery(s)),
        Some("window") => Output::ok(window(s, args.get(1).copied())),
        Some("power") => Output::ok(power(s)),
        Some("activity") => Output::ok(activity(s)),
        Some("display") => Output::ok(display(s)),
        Some("input") => Output::ok(input(s)),
        Some("SurfaceFlinger") if args.get(1) == Some(&"--display-id") => {
            Output::ok(display_ids(s))
        }
        Some("input_method") => Output::ok(format!(
            "Input method service state:\n  mCurMethodId={}\n  mInputShown={}\n",
            "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME",
            s.ui.focused.is_some()
        )),
        Some(other) => Output::err(0, format!("Can't find service: {other}\n")),
        None => Output::ok(format!("{}{}{}", battery(s), power(s), window(s, None))),
    })
}

fn battery(s: &PhoneState) -> String {
    let level = s.battery_level;
    let mut t = String::from("Current Battery Service state:\n");
    for (k, v) in [
        ("AC powered", "false".to_string()),
        ("USB powered", "true".into()),
        ("Wireless powered", "false".into()),
        ("Dock powered", "false".into()),
        ("Max charging current", "500000".into()),
        ("Max charging voltage", "5000000".into()),
        ("Charge counter", (level * 46_000).to_string()),
        ("status", if level >= 100 { "5" } else { "2" }.into()),
        ("health", "2".into()),
        ("present", "true".into()),
        ("level", level.to_string()),
        ("scale", "100".into()),
        ("voltage", "4123".into()),
        ("temperature", "285".into()),
        ("technology", "Li-ion".into()),
    ] {
        t.push_str(&format!("  {k}: {v}\n"));
    }
    if s.persona.battery_capacity_level {
        let cap = match level {
            0..=5 => 1,
            6..=15 => 2,
            16..=84 => 3,
            85..=99 => 4,
            _ => 5,
        };
        t.push_str(&format!(
            "  Charging state: 1\n  Charging policy: 1\n  Capacity level: {cap}\n"
        ));
    }
    t
}

fn focus_lines(s: &PhoneState) -> String {
    let (pkg, act) = s.foreground();
    let record = format!(
        "ActivityRecord{{{} u0 {} t{}}}",
        ident(&pkg),
        short_component(&pkg, &act),
        task_id(&pkg)
    );
    let focus = if s.locked || !s.screen_on {
        format!(
            "Window{{{} u0 NotificationShade}}",
            ident("NotificationShade")
        )
    } else {
        format!(
            "Window{{{} u0 {}}}",
            ident(&act),
            full_component(&pkg, &act)
        )
    };
    format!("  mCurrentFocus={focus}\n  mFocusedApp={record}\n")
}

fn task_id(pkg: &str) -> u32 {
    10 + u32::from_str_radix(&ident(pkg)[..2], 16).unwrap_or(0) % 90
}

fn window(s: &PhoneState, section: Option<&str>) -> String {
    let (pkg, act) = s.foreground();
    let (w, h) = s.display_size();
    let secure = if s.secure_window { " SECURE" } else { "" };
    let mut t = String::from("WINDOW MANAGER WINDOWS (dumpsys window windows)\n");
    t.push_str(&format!(
        "  Window #0 Window{{{} u0 {}}}:\n",
        ident(&act),
        full_component(&pkg, &act)
    ));
    t.push_str(&format!(
        "    mDisplayId=0 rootTaskId={} mSession=Session{{{} 12345:u0a10123}}\n",
        task_id(&pkg),
        ident("session")
    ));
    t.push_str(&format!(
        "    mOwnerUid=10123 showForAllUsers=false package={pkg} appop=NONE\n"
    ));
    t.push_str(&format!(
        "    mAttrs={{(0,0)(fillxfill) sim={{adjust=resize}} ty=BASE_APPLICATION fmt=TRANSLUCENT\n      fl=LAYOUT_IN_SCREEN LAYOUT_INSET_DECOR SPLIT_TOUCH HARDWARE_ACCELERATED{secure}}}\n"
    ));
    t.push_str(&format!(
        "    mFrame=[0,0][{w},{h}]\n    isOnScreen=true\n    isVisible=true\n\n"
    ));
    t.push_str("  mGlobalConfiguration={1.0 ?mcc?mnc [en_US] ldltr}\n  mHasPermanentDpad=false\n  mTopFocusedDisplayId=0\n");
    if section != Some("windows") {
        t.insert_str(0, &format!("WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n  Display: mDisplayId=0 rootTasks=1\n    init={}x{} {}dpi cur={w}x{h}\n\n", s.physical_size().0, s.physical_size().1, s.persona.displays[0].density));
    }
    t.push_str(&format!(
        "  mCurrentRotation=ROTATION_{}\n",
        s.rotation * 90
    ));
    t.push_str(&focus_lines(s));
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

fn power(s: &PhoneState) -> String {
    let (wake, state) = if s.screen_on {
        ("Awake", "ON")
    } else {
        ("Asleep", "OFF")
    };
    format!(
        "POWER MANAGER (dumpsys power)\n\nPower Manager State:\n  mDirty=0x0\n  mWakefulness={wake}\n  mWakefulnessChanging=false\n  mIsPowered=true\n  mPlugType=2\n  mBatteryLevel={}\n  mHoldingDisplaySuspendBlocker={}\n  mIsInteractive={}\n\nDisplay Power: state={state}\n",
        s.battery_level, s.screen_on, s.screen_on
    )
}

fn activity(s: &PhoneState) -> String {
    let mut t = String::from("ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to bottom):\n");
    let record = |pkg: &str, act: &str| {
        format!(
            "ActivityRecord{{{} u0 {} t{}}}",
            ident(pkg),
            short_component(pkg, act),
            task_id(pkg)
        )
    };
    for (i, (pkg, act)) in s.ui.stack.iter().rev().enumerate() {
        let top = i == 0;
        t.push_str(&format!(
            "  * Task{{{} #{} type={} A=10123:{pkg} U=0 visible={top} visibleRequested={top} mode=fullscreen translucent=false sz=1}}\n",
            ident(&format!("task{pkg}")), task_id(pkg), if i + 1 == s.ui.stack.len() { "home" } else { "standard" }
        ));
        if top {
            t.push_str(&format!("    mResumedActivity: {}\n", record(pkg, act)));
        }
        t.push_str(&format!("    * Hist  #0: {}\n", record(pkg, act)));
    }
    let (pkg, act) = s.foreground();
    t.push_str(&format!(
        "\n  Resumed activities in task display areas (from top to bottom):\n    Resumed: {}\n\n  ResumedActivity: {}\n",
        record(&pkg, &act), record(&pkg, &act)
    ));
    t
}

/// `dumpsys display`: power state, devices, and the default viewport (`mViewports=`, AOSP
/// `DisplayViewport.toString`, whose `orientation=` adbutils' `rotation()` reads).
fn display(s: &PhoneState) -> String {
    let state = if s.screen_on { "ON" } else { "OFF" };
    let d = &s.persona.displays[0];
    let (w, h) = s.display_size();
    let (dw, dh) = if s.rotation % 2 == 1 {
        (d.height, d.width)
    } else {
        (d.width, d.height)
    };
    let viewport = format!(
        "  mViewports=[DisplayViewport{{type=INTERNAL, valid=true, isActive=true, displayId=0, uniqueId='local:{}', physicalPort=0, orientation={}, logicalFrame=Rect(0, 0 - {w}, {h}), physicalFrame=Rect(0, 0 - {dw}, {dh}), deviceWidth={dw}, deviceHeight={dh}}}]\n",
        d.physical_id, s.rotation
    );
    let mut t = format!("DISPLAY MANAGER (dumpsys display)\n  mOnlyCore=false\n{viewport}\nDisplay Power Controller Locked State:\n  mScreenState={state}\n\nDisplay Devices: size={}\n", s.persona.displays.len());
    for d in &s.persona.displays {
        t.push_str(&format!(
            "  DisplayDeviceInfo{{\"Built-in Screen\": uniqueId=\"local:{}\", {} x {}, density {}, state {state}}}\n",
            d.physical_id, d.width, d.height, d.density
        ));
    }
    t
}

/// `dumpsys SurfaceFlinger --display-id` (the list `screencap`'s multi-display warning points
/// to; AOSP `SurfaceFlinger::dumpDisplayIdentificationData`): one line per physical display.
fn display_ids(s: &PhoneState) -> String {
    s.persona
        .displays
        .iter()
        .enumerate()
        .map(|(hwc, d)| {
            format!(
                "Display {} (HWC display {hwc}): port={hwc} pnpId=GGL displayName=\"Common Panel\"\n",
                d.physical_id
            )
        })
        .collect()
}

/// `dumpsys input`: the viewport and touchscreen orientation lines tools grep
/// (`SurfaceOrientation`, AOSP `TouchInputMapper::dump`).
fn input(s: &PhoneState) -> String {
    let d = &s.persona.displays[0];
    let (w, h) = s.display_size();
    format!(
        "INPUT MANAGER (dumpsys input)\n\nInput Manager State:\n  Viewports:\n    displayId=0, uniqueId=local:{}, port=0, orientation={}, isActive=true, logicalFrame=[0, 0, {w}, {h}], deviceSize=[{}, {}]\n\nInput Reader State:\n  Device 4: sec_touchscreen\n    Touch Input Mapper (mode - DIRECT):\n      SurfaceOrientation: {}\n      SurfaceWidth: {w}px\n      SurfaceHeight: {h}px\n",
        d.physical_id, s.rotation, d.width, d.height, s.rotation
    )
}
