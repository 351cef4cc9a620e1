//! `dumpsys battery|window|power|activity|display|input_method` in AOSP's formats, reduced to the
//! lines tools read.
//! Sources: `fixtures/battery/redmi-note14-hyperos3-miuibatteryservice.txt` (BatteryService
//! keys, Android 14+ `Charging state`/`Capacity level`),
//! `fixtures/window/android8-grep-mcurrentfocus-mfocusedapp-appwindowtoken.txt` and
//! `fixtures/activity/mtk-tablet-android13-dumpsys-activity-activities.txt` (`mCurrentFocus`,
//! `mFocusedApp`, `ResumedActivity:`), `fixtures/power/phone-720x1612-dumpsys-power-awake-utf16le.txt`
//! (`mWakefulness=Awake`), AOSP `PowerManagerService.dumpInternal` (`Display Power: state=ON`).

use super::window_dump::{self, activity_record, task_id};
use super::{ident, Output};
use crate::phone::{Phone, PhoneState};

/// Runs `dumpsys SERVICE [ARGS]`.
pub fn run(phone: &Phone, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    if let ["package", pkg] = args.as_slice() {
        let installed = super::pm::installed(phone);
        return phone.with(|s| Output::ok(super::packages::dumpsys_package(s, pkg, &installed)));
    }
    if let ["battery", sub, rest @ ..] = args.as_slice() {
        if *sub != "-a" {
            return phone.with(|s| battery_command(s, sub, rest));
        }
    }
    phone.with(|s| match args.first().copied() {
        Some("battery") => Output::ok(battery(s)),
        Some("window") => Output::ok(window_dump::window(s, args.get(1).copied())),
        Some("trust") => Output::ok(window_dump::trust(s)),
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
        None => Output::ok(format!(
            "{}{}{}",
            battery(s),
            power(s),
            window_dump::window(s, None)
        )),
    })
}

/// `dumpsys battery set [-f] KEY VALUE`, `unplug [-f]`, `reset [-f]` (AOSP `BatteryService`
/// `Shell.onCommand`): `set` and `unplug` stop the hardware updates and override the values,
/// `reset` restores them. `set level` takes any integer (no range check: `set level 999` is
/// printed as `level: 999`, brevent/Brevent#1399). Prints nothing on success.
fn battery_command(s: &mut PhoneState, sub: &str, rest: &[&str]) -> Output {
    let rest: Vec<&str> = rest.iter().copied().filter(|a| *a != "-f").collect();
    match (sub, rest.as_slice()) {
        ("reset", []) => {
            s.battery_override = None;
            Output::code(0)
        }
        ("unplug", []) => {
            let o = s.battery_override.get_or_insert_with(Default::default);
            (o.ac, o.usb, o.wireless) = (Some(false), Some(false), Some(false));
            Output::code(0)
        }
        ("set", [key, value]) => {
            let Ok(n) = value.parse::<i64>() else {
                return Output::err(255, format!("Bad value: {value}\n"));
            };
            let o = s.battery_override.get_or_insert_with(Default::default);
            match *key {
                "level" => o.level = Some(n),
                "status" => o.status = Some(n),
                "ac" => o.ac = Some(n != 0),
                "usb" => o.usb = Some(n != 0),
                "wireless" => o.wireless = Some(n != 0),
                other => return Output::err(255, format!("Unknown set option: {other}\n")),
            }
            Output::code(0)
        }
        _ => Output::err(255, "Battery service (battery) commands:\n  help\n    Print this help text.\n  set [-f] [ac|usb|wireless|status|level|temp|present|invalid] <value>\n    Force a battery property value, freezing battery state.\n  unplug [-f]\n    Force battery unplugged, freezing battery state.\n  reset [-f]\n    Unfreeze battery state, returning to current hardware values.\n"),
    }
}

fn battery(s: &PhoneState) -> String {
    let level = s.battery_level;
    let o = s.battery_override.clone().unwrap_or_default();
    let flag = |v: Option<bool>, real: bool| v.unwrap_or(real).to_string();
    let shown_level = o.level.unwrap_or(i64::from(level));
    let status = o
        .status
        .unwrap_or(if level >= 100 { 5 } else { 2 })
        .to_string();
    let mut t = String::from("Current Battery Service state:\n");
    if s.battery_override.is_some() {
        t.push_str("  (UPDATES STOPPED -- use 'reset' to restart)\n");
    }
    for (k, v) in [
        ("AC powered", flag(o.ac, false)),
        ("USB powered", flag(o.usb, true)),
        ("Wireless powered", flag(o.wireless, false)),
        ("Dock powered", "false".into()),
        ("Max charging current", "500000".into()),
        ("Max charging voltage", "5000000".into()),
        ("Charge counter", (level * 46_000).to_string()),
        ("status", status),
        ("health", "2".into()),
        ("present", "true".into()),
        ("level", shown_level.to_string()),
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

/// `dumpsys activity activities`: tasks top to bottom, the resumed activity, and on Android
/// 12+ the supervisor's display blocks and `KeyguardController`. While the lock screen is up the
/// tasks sleep (`isSleeping=true`) and the top one names its `mLastPausedActivity`, yet the
/// `Resumed:`/`ResumedActivity:` lines keep naming the app — as the locked capture
/// `fixtures/activity/mtk-tablet-android13-dumpsys-activity-activities.txt` does.
fn activity(s: &PhoneState) -> String {
    let mut t = String::from("ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to bottom):\n");
    for (i, (pkg, act)) in s.ui.stack.iter().rev().enumerate() {
        let top = i == 0;
        t.push_str(&format!(
            "  * Task{{{} #{} type={} A=10123:{pkg} U=0 visible={top} visibleRequested={top} mode=fullscreen translucent=false sz=1}}\n",
            ident(&format!("task{pkg}")), task_id(pkg), if i + 1 == s.ui.stack.len() { "home" } else { "standard" }
        ));
        if top && s.locked {
            t.push_str(&format!(
                "    mLastPausedActivity: {}\n",
                activity_record(pkg, act)
            ));
        } else if top {
            t.push_str(&format!(
                "    mResumedActivity: {}\n",
                activity_record(pkg, act)
            ));
        }
        if s.locked {
            t.push_str("    isSleeping=true\n");
        }
        t.push_str(&format!("    * Hist  #0: {}\n", activity_record(pkg, act)));
    }
    let (pkg, act) = s.foreground();
    t.push_str(&format!(
        "\n  Resumed activities in task display areas (from top to bottom):\n    Resumed: {}\n\n  ResumedActivity: {}\n",
        activity_record(&pkg, &act), activity_record(&pkg, &act)
    ));
    t.push_str(&window_dump::activity_supervisor(s));
    t.push_str(&lock_task(s));
    t
}

/// `LockTaskController.dump` (AOSP; the layout of the locked Android 13 capture
/// `fixtures/activity/mtk-tablet-android13-dumpsys-activity-activities.txt`, where it reads
/// `NONE`): the mode, the locked tasks (`Task{…}` since Android 12, `TaskRecord{…}` before)
/// and the packages allowed to lock (a kiosk's; empty for screen pinning).
fn lock_task(s: &PhoneState) -> String {
    let mode = s.lock_task.as_ref().map_or("NONE", |t| t.mode.as_dump());
    let mut t = format!(
        "\n  LockTaskController:\n    mLockTaskModeState={mode}\n    mLockTaskModeTasks=\n"
    );
    let mut allowed = String::new();
    if let Some(lock) = &s.lock_task {
        let pkg = &lock.package;
        let task = if s.persona.sdk >= 31 {
            format!("Task{{{} #{} type=standard A=10123:{pkg} U=0 visible=true visibleRequested=true mode=fullscreen translucent=false sz=1}}", ident(&format!("task{pkg}")), task_id(pkg))
        } else {
            format!(
                "TaskRecord{{{} #{} A={pkg} U=0 StackId=1 sz=1}}",
                ident(&format!("task{pkg}")),
                task_id(pkg)
            )
        };
        t.push_str(&format!("      #0 {task}\n"));
        if lock.mode == crate::framework::LockTaskMode::Locked {
            allowed = pkg.clone();
        }
    }
    t.push_str(&format!(
        "    mLockTaskPackages (userId:packages)=\n      u0:[{allowed}]\n"
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
    t.push_str(&logical_displays(s, state));
    t
}

/// The `Logical Displays:` section (AOSP `LogicalDisplayMapper.dumpLocked`, the shape of the
/// capture `tests/fixtures/display/mtk-tablet-android13-dumpsys-display-off.txt`): each panel
/// with its base info (the device's power state) and the window manager's override (size and
/// rotation as apps see them; its `state` stays `ON`, as in the capture), then the extra
/// logical displays as virtual ones.
fn logical_displays(s: &PhoneState, state: &str) -> String {
    let info = |name: &str,
                id: u32,
                (w, h): (u32, u32),
                rotation: u32,
                state: &str,
                kind: &str,
                unique: &str,
                density: u32| {
        format!("DisplayInfo{{\"{name}\", displayId {id}\", displayGroupId 0, FLAG_TRUSTED, real {w} x {h}, largest app {w} x {h}, smallest app {w} x {h}, rotation {rotation}, state {state}, type {kind}, uniqueId \"{unique}\", app {w} x {h}, density {density} ({density}.0 x {density}.0) dpi, layerStack {id}}}")
    };
    let count = s.persona.displays.len() + s.extra_displays.len();
    let mut t = format!("\n  Logical Displays: size={count}\n");
    for (i, d) in s.persona.displays.iter().enumerate() {
        let unique = format!("local:{}", d.physical_id);
        let (size, rotation) = if i == 0 {
            (s.display_size(), s.rotation)
        } else {
            ((d.width, d.height), 0)
        };
        t.push_str(&format!(
            "  Display {id}:\n    mDisplayId={id}\n    mPrimaryDisplayDevice=Built-in Screen\n    mBaseDisplayInfo={}\n    mOverrideDisplayInfo={}\n",
            info("Built-in Screen", d.id, (d.width, d.height), 0, state, "INTERNAL", &unique, d.density),
            info("Built-in Screen", d.id, size, rotation, "ON", "INTERNAL", &unique, d.density),
            id = d.id
        ));
    }
    for d in &s.extra_displays {
        let unique = format!("virtual:com.android.systemui,1000,sim-{},0", d.id);
        t.push_str(&format!(
            "  Display {id}:\n    mDisplayId={id}\n    mBaseDisplayInfo={}\n",
            info(
                "Virtual display",
                d.id,
                (d.width, d.height),
                0,
                "ON",
                "VIRTUAL",
                &unique,
                d.density
            ),
            id = d.id
        ));
    }
    t.push_str("  \n  DeviceStateToLayoutMap:\n    Registered Layouts:\n");
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persona::Persona;

    fn run_on(p: &Phone, line: &str) -> Output {
        let args: Vec<String> = line.split(' ').map(str::to_string).collect();
        run(p, &args)
    }

    #[test]
    fn battery_set_unplug_reset_and_lock_task_dump() {
        let p = Phone::new(Persona::load("pixel-android14").unwrap(), "SIMDS0001", "");
        let text = |o: Output| String::from_utf8(o.stdout).unwrap();
        assert!(!text(run_on(&p, "battery")).contains("UPDATES STOPPED"));
        assert_eq!(run_on(&p, "battery set level 999").code, 0);
        let t = text(run_on(&p, "battery"));
        assert!(
            t.starts_with(
                "Current Battery Service state:\n  (UPDATES STOPPED -- use 'reset' to restart)\n"
            ) && t.contains("  level: 999\n"),
            "{t}"
        );
        assert_eq!(run_on(&p, "battery set volume 3").code, 255);
        run_on(&p, "battery unplug");
        assert!(text(run_on(&p, "battery")).contains("  USB powered: false\n"));
        run_on(&p, "battery reset");
        let t = text(run_on(&p, "battery"));
        assert!(
            !t.contains("UPDATES STOPPED") && t.contains("  level: 80\n"),
            "{t}"
        );
        assert!(text(run_on(&p, "activity activities")).contains("    mLockTaskModeState=NONE\n"));
        p.with(|s| {
            s.lock_task = Some(crate::framework::LockTask {
                mode: crate::framework::LockTaskMode::Locked,
                package: "com.example.notes".into(),
            })
        });
        let t = text(run_on(&p, "activity activities"));
        assert!(
            t.contains("    mLockTaskModeState=LOCKED\n    mLockTaskModeTasks=\n      #0 Task{")
                && t.contains("A=10123:com.example.notes ")
                && t.contains("      u0:[com.example.notes]\n"),
            "{t}"
        );
    }
}
