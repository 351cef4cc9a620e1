//! The virtual phone's state behind a small cloneable handle. One `std::sync::Mutex` per phone;
//! it is only locked inside [`Phone::with`], never across an `.await`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use crate::apps;
use crate::auth::KeyStore;
use crate::enabled_state::EnabledState;
use crate::framework::{AppDialog, BatteryOverride, DialogKind, LockTask};
use crate::persona::Persona;
use crate::props;
use crate::script::{self, Script, ScriptAnswer};
use crate::ui::{Node, Rect, UiState};
use crate::vfs::Vfs;

/// Package of the framework activity that replaces a suspended app's (`SuspendedAppActivity`).
pub const SUSPENDED_APP_PACKAGE: &str = "android";
/// The activity shown instead of a suspended app (AOSP `core/java/com/android/internal/app/
/// SuspendedAppActivity.java`: "App paused" / "… isn't available right now").
pub const SUSPENDED_APP_ACTIVITY: &str = "com.android.internal.app.SuspendedAppActivity";

/// One executed program: its argv and exit status (for tests that prove what ran).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LogEntry {
    /// argv\[0\] is the program name as typed.
    pub argv: Vec<String>,
    /// Exit status.
    pub exit_code: i32,
}

/// What the ADB transport of this phone does (control API `POST /v1/transport`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TransportMode {
    /// Normal.
    Online,
    /// Connections stay open but no packet is answered (a frozen transport).
    Offline,
    /// Connections are dropped and new ones refused at once.
    Unplugged,
    /// New connections get AUTH tokens and are never accepted (`adb devices`: `unauthorized`).
    Unauthorized,
    /// Established connections stay open and fall silent: nothing more is read or sent (a hung
    /// adbd or USB stack — the adb server keeps listing the phone `device`); new connections
    /// are held silent as when `Offline`. Back `Online`, established connections carry on.
    Frozen,
    /// Established connections are dropped, and each new connection is accepted, read and
    /// never answered — for good, also after the mode changes: the phone's adbd lost it (a
    /// `CNXN` or its answer lost on a flaky Wi-Fi link, rpuxa/SuperWirelessAdb#3). adb has no
    /// handshake timeout, so its server lists the transport `offline` until it is disconnected
    /// and dialed again (`adb connect` answers `already connected`; mined row 65). Connections
    /// made after the mode leaves `Stalled` work.
    Stalled,
}

/// What `uiautomator dump /dev/tty` does (control API `ui_dump_tty`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TtyDump {
    /// The XML, then the status line (a shell with a controlling terminal).
    #[default]
    Xml,
    /// Only `UI hierchary dumped to: /dev/tty`, exit 0: the shell has no terminal to open, and
    /// AOSP `AccessibilityNodeInfoDumper.dumpWindowToFile` only logs the failed open while
    /// `DumpCommand` prints the line anyway (tytydraco/LADB#91, software-mansion/argent PR
    /// #580; API 30 and 36). Dumps into a file still work.
    StatusOnly,
}

/// Everything a phone knows.
#[derive(Debug)]
pub struct PhoneState {
    /// Device model data.
    pub persona: Persona,
    /// `ro.serialno`.
    pub serial: String,
    /// `ro.product.model`.
    pub model: String,
    /// System properties (`getprop`).
    pub props: BTreeMap<String, String>,
    /// `settings` values keyed by `(namespace, key)`.
    pub settings: BTreeMap<(String, String), String>,
    /// Files.
    pub vfs: Vfs,
    /// Apps and focus.
    pub ui: UiState,
    /// Display rotation 0..=3 (quarter turns).
    pub rotation: u32,
    /// `wm size WxH` override (pixels), if set.
    pub override_size: Option<(u32, u32)>,
    /// `wm density N` override (dpi), if set.
    pub override_density: Option<u32>,
    /// Display on (`dumpsys power`).
    pub screen_on: bool,
    /// Keyguard showing.
    pub locked: bool,
    /// The lock needs a credential (PIN, pattern, password): a swipe up or MENU only brings up
    /// the PIN pad, and only `POST /v1/state {"locked": false}` (the user) unlocks it.
    pub lock_secure: bool,
    /// System services not registered with `servicemanager` (a system server still starting
    /// or restarting): `dumpsys`, `cmd` and the `cmd` wrappers answer "Can't find service"
    /// for them ([`crate::programs`]).
    pub services_down: Vec<String>,
    /// Logical displays besides display 0 in `dumpsys window` (persona's, or the control
    /// API's).
    pub extra_displays: Vec<crate::persona::ExtraDisplay>,
    /// Battery percentage 0..=100.
    pub battery_level: u32,
    /// Values set with `dumpsys battery set|unplug` (`None`: the hardware's, updates running).
    pub battery_override: Option<BatteryOverride>,
    /// The framework's crash or ANR dialog over the screen.
    pub app_dialog: Option<AppDialog>,
    /// Packages that fail when started: `crash` (the process dies, the crash dialog shows:
    /// a repeated crash, or "Show first crash dialog" on) or `anr` (the activity shows, then
    /// the ANR dialog).
    pub app_faults: BTreeMap<String, DialogKind>,
    /// Lock task mode (kiosk or screen pinning).
    pub lock_task: Option<LockTask>,
    /// Packages whose enabled setting is not the default (`pm disable-user`, `pm enable`, or
    /// the control API for the states the shell cannot set).
    pub app_enabled: BTreeMap<String, EnabledState>,
    /// Suspended ("paused") packages (`pm suspend`; Digital Wellbeing's "Pause app", Focus
    /// mode): starting one shows the framework's `SuspendedAppActivity` instead.
    pub suspended: std::collections::BTreeSet<String>,
    /// Disabled components, `pkg/.Activity` (an app hiding its launcher icon with
    /// `setComponentEnabledSetting`, e.g. a "stealth mode").
    pub disabled_components: std::collections::BTreeSet<String>,
    /// Focused window has FLAG_SECURE: screenshots come out black (field bug 8).
    pub secure_window: bool,
    /// The state of user 0's shared storage volume as `sm list-volumes` prints it (`mounted`,
    /// `unmounted`, `checking`, …); anything but `mounted`/`mounted_ro` takes
    /// `/storage/emulated/0` away (field bug 68).
    /// Connections lost while the transport was `Stalled` (control view).
    pub lost_connections: u32,
    pub shared_storage: String,
    /// ADBKeyBoard is installed (its IME can then be selected with `ime set`).
    pub adb_keyboard: bool,
    /// ADBKeyBoard is enabled (`ime enable`): listed by `ime list` without `-a`.
    pub adb_keyboard_enabled: bool,
    /// ADBKeyBoard's broadcast receiver gets the shell's broadcasts. `false`: an old build on
    /// Android 16, which registers it without `RECEIVER_EXPORTED` (senzhk/ADBKeyBoard PR #84,
    /// field bug 40): `am broadcast` still answers `Broadcast completed: result=0`.
    pub adb_keyboard_receives: bool,
    /// The next this many `ime enable` / `ime set` of ADBKeyBoard answer `Unknown input method
    /// … cannot be enabled|selected for user #0`, exit 255, while `ime list -a` lists it: the
    /// input method service has not registered the keyboard yet (suyiiyii/AutoGLM-GUI#479,
    /// field bug 44).
    pub ime_registration_pending: u32,
    /// What `uiautomator dump /dev/tty` prints (field bug 39).
    pub ui_dump_tty: TtyDump,
    /// Every program executed, in order.
    pub log: Vec<LogEntry>,
    /// Scripted answers (control API).
    pub scripts: Vec<Script>,
    /// ADB keys (`--require-auth`).
    pub auth: KeyStore,
    /// Keys of hosts paired over wireless debugging (`--wireless`); only these may use the
    /// `STLS` connect port.
    pub paired: KeyStore,
    /// The cost model in force (`sim --timing realistic`); `None` answers at once.
    pub timing: Option<crate::timing::Model>,
    /// Files the media store has indexed (`content call … scan_file`, the scan broadcast).
    pub media: crate::media::MediaStore,
    /// Injected faults of the `sync:` service (control API `POST /v1/sync/fault`).
    pub sync_faults: Vec<crate::sync_fault::SyncFault>,
    /// Open `pm install-create` sessions.
    pub install_sessions: crate::install_sessions::InstallSessions,
    /// The input devices' capture (`--touchscreen`, `POST /v1/state {"touchscreen": …}`);
    /// `None`: no `/dev/input/event*` nodes at all.
    pub touchscreen: Option<&'static crate::evdev::Capture>,
    /// The shell user may write the input nodes (`true`: group `input` through adbd's
    /// supplementary groups and `allow shell input_device:chr_file rw_file_perms`); `false`
    /// models a build that withholds it (`Permission denied`).
    pub input_writable: bool,
    /// The touchscreen reader's slots and gesture in progress.
    pub touch_reader: Option<crate::evdev::Reader>,
    /// Gestures the touchscreen reader finished, oldest first (last 100).
    pub touches: Vec<crate::evdev::Touch>,
}

/// Seconds since the Unix epoch (mtimes).
pub fn now_secs() -> u32 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as u32)
        .unwrap_or(0)
}

/// Cloneable handle to one phone's state.
#[derive(Clone, Debug)]
pub struct Phone {
    state: Arc<Mutex<PhoneState>>,
    transport: Arc<tokio::sync::watch::Sender<TransportMode>>,
    /// Bumped whenever keys are accepted or revoked; connections re-check their key.
    keys_epoch: Arc<tokio::sync::watch::Sender<u64>>,
}

impl Phone {
    /// A freshly booted phone: launcher in front, screen on, unlocked, battery 80 %.
    pub fn new(persona: Persona, serial: &str, model: &str) -> Phone {
        let props = props::build(&persona, serial, model);
        let launcher = persona.launcher_component();
        let mut settings = BTreeMap::new();
        for (ns, k, v) in props::DEFAULT_SETTINGS {
            settings.insert((ns.to_string(), k.to_string()), v.to_string());
        }
        let extra_displays = persona.extra_displays.clone();
        settings.insert(
            ("secure".into(), "android_id".into()),
            props::fresh_android_id(),
        );
        let state = PhoneState {
            vfs: Vfs::with_defaults(now_secs(), &persona.system_bin()),
            persona,
            serial: serial.to_string(),
            model: model.to_string(),
            props,
            settings,
            ui: UiState {
                stack: vec![launcher],
                focused: None,
                note_text: String::new(),
            },
            rotation: 0,
            override_size: None,
            override_density: None,
            screen_on: true,
            locked: false,
            lock_secure: false,
            services_down: Vec::new(),
            extra_displays,
            battery_level: 80,
            battery_override: None,
            app_dialog: None,
            app_faults: BTreeMap::new(),
            lock_task: None,
            app_enabled: BTreeMap::new(),
            disabled_components: Default::default(),
            suspended: Default::default(),
            secure_window: false,
            shared_storage: "mounted".into(),
            lost_connections: 0,
            adb_keyboard: false,
            adb_keyboard_enabled: false,
            adb_keyboard_receives: true,
            ime_registration_pending: 0,
            ui_dump_tty: TtyDump::Xml,
            log: Vec::new(),
            scripts: Vec::new(),
            auth: KeyStore::default(),
            paired: KeyStore::default(),
            timing: None,
            media: Default::default(),
            sync_faults: Vec::new(),
            install_sessions: Default::default(),
            touchscreen: None,
            input_writable: true,
            touch_reader: None,
            touches: Vec::new(),
        };
        let (tx, _rx) = tokio::sync::watch::channel(TransportMode::Online);
        Phone {
            state: Arc::new(Mutex::new(state)),
            transport: Arc::new(tx),
            keys_epoch: Arc::new(tokio::sync::watch::channel(0).0),
        }
    }

    /// Runs `f` with the state locked. Never call `.await` inside `f`.
    pub fn with<R>(&self, f: impl FnOnce(&mut PhoneState) -> R) -> R {
        let mut guard = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }

    /// Appends to the command log.
    pub fn log(&self, argv: &[String], exit_code: i32) {
        self.with(|s| {
            s.log.push(LogEntry {
                argv: argv.to_vec(),
                exit_code,
            })
        });
    }

    /// A copy of the command log.
    pub fn command_log(&self) -> Vec<LogEntry> {
        self.with(|s| s.log.clone())
    }

    /// Current transport mode.
    pub fn transport_mode(&self) -> TransportMode {
        *self.transport.borrow()
    }

    /// Changes the transport mode; connections watching it react.
    pub fn set_transport_mode(&self, mode: TransportMode) {
        self.transport.send_replace(mode);
    }

    /// A receiver that changes whenever the accepted keys change.
    pub fn watch_keys(&self) -> tokio::sync::watch::Receiver<u64> {
        self.keys_epoch.subscribe()
    }

    /// Tells connections that the accepted keys changed.
    pub fn keys_changed(&self) {
        self.keys_epoch.send_modify(|n| *n += 1);
    }

    /// A receiver that sees transport mode changes.
    pub fn watch_transport(&self) -> tokio::sync::watch::Receiver<TransportMode> {
        self.transport.subscribe()
    }
}

impl PhoneState {
    /// Foreground `(package, activity)`.
    pub fn foreground(&self) -> (String, String) {
        self.ui
            .stack
            .last()
            .cloned()
            .unwrap_or_else(|| self.persona.launcher_component())
    }

    /// Installs the input devices of `capture` (`None`: removes them); the ABI props follow
    /// the capture's phone (a 32-bit userland is `armeabi-v7a`).
    pub fn set_touchscreen(&mut self, capture: Option<&'static crate::evdev::Capture>) {
        self.touchscreen = capture;
        self.touch_reader = capture.map(crate::evdev::Reader::new);
        let (abi, list) = match capture {
            Some(c) if c.userland_32 => ("armeabi-v7a", "armeabi-v7a,armeabi"),
            _ => ("arm64-v8a", "arm64-v8a,armeabi-v7a,armeabi"),
        };
        self.props.insert("ro.product.cpu.abi".into(), abi.into());
        self.props
            .insert("ro.product.cpu.abilist".into(), list.into());
    }

    /// Whether `path` is one of the phone's input device nodes.
    pub fn is_input_node(&self, path: &str) -> bool {
        self.touchscreen.is_some_and(|c| c.nodes.contains(&path))
    }

    /// One `write(2)` of `bytes` to input node `path` (see [`crate::evdev`]): the bytes taken
    /// and the gestures that ended, or [`crate::evdev::Einval`]. Writes to nodes other than the
    /// touchscreen are taken and change nothing (keys and sensors are not modelled). The
    /// caller applies the gestures to the UI (`programs::write_node`).
    pub fn write_input(
        &mut self,
        path: &str,
        bytes: &[u8],
    ) -> Result<(usize, Vec<crate::evdev::Touch>), crate::evdev::Einval> {
        let Some(c) = self.touchscreen else {
            return Err(crate::evdev::Einval);
        };
        if path != c.touch_node {
            return Ok((bytes.len(), Vec::new()));
        }
        let rotation = self.rotation;
        let natural = {
            let (w, h) = self.display_size();
            if rotation % 2 == 1 {
                (h, w)
            } else {
                (w, h)
            }
        };
        let reader = self
            .touch_reader
            .get_or_insert_with(|| crate::evdev::Reader::new(c));
        reader.write(bytes, rotation, natural)
    }

    /// Logical display size in pixels as apps see it: override size if set, rotated.
    pub fn display_size(&self) -> (u32, u32) {
        let d = &self.persona.displays[0];
        let (w, h) = self.override_size.unwrap_or((d.width, d.height));
        if self.rotation % 2 == 1 {
            (h, w)
        } else {
            (w, h)
        }
    }

    /// Sets the `wm size` override, clamped like `WindowManagerService.setForcedDisplaySize`
    /// (each side between 200 px and 3x the physical size).
    pub fn set_override_size(&mut self, w: u32, h: u32) {
        let (pw, ph) = self.physical_size();
        self.override_size = Some((w.clamp(200, pw * 3), h.clamp(200, ph * 3)));
    }

    /// Physical size of the default display (portrait), pixels.
    pub fn physical_size(&self) -> (u32, u32) {
        let d = &self.persona.displays[0];
        (d.width, d.height)
    }

    /// The package's enabled setting.
    pub fn enabled_state(&self, package: &str) -> EnabledState {
        self.app_enabled.get(package).copied().unwrap_or_default()
    }

    /// Whether `package/activity` (short or full class) resolves: its package is not disabled
    /// and the component is not (AOSP `ComputerEngine.isEnabledAndMatch`).
    pub fn activity_enabled(&self, package: &str, activity: &str) -> bool {
        let short = match activity.strip_prefix(package) {
            Some(rest) if rest.starts_with('.') => rest.to_string(),
            _ => activity.to_string(),
        };
        !self.enabled_state(package).is_disabled()
            && !self
                .disabled_components
                .contains(&format!("{package}/{short}"))
    }

    /// Brings `(pkg, activity)` to the front (an existing entry of the same package is replaced).
    pub fn launch(&mut self, package: &str, activity: &str) {
        let launcher = self.persona.launcher_package.clone();
        self.ui.focused = None;
        if package == launcher {
            self.ui.stack.truncate(1);
            return;
        }
        self.ui.stack.retain(|(p, _)| p != package);
        self.ui
            .stack
            .push((package.to_string(), activity.to_string()));
    }

    /// Starts `(package, activity)` as `am start` does (AOSP `ActivityStarter`): refused in
    /// lock task mode unless it is the locked task's package (`START_RETURN_LOCK_TASK_MODE_
    /// VIOLATION`, `LockTaskController.isLockTaskModeViolation`); a package in
    /// [`PhoneState::app_faults`] crashes (its activity is gone, the crash dialog shows) or
    /// stops responding (it shows, then the ANR dialog). `false` when refused.
    pub fn start_activity(&mut self, package: &str, activity: &str) -> bool {
        if self
            .lock_task
            .as_ref()
            .is_some_and(|t| t.package != package)
        {
            return false;
        }
        // A suspended package is intercepted: the framework's "App paused" dialog activity
        // comes up instead (AOSP `ActivityStartInterceptor.interceptSuspendedPackageIfNeeded`).
        if self.suspended.contains(package) {
            self.launch(SUSPENDED_APP_PACKAGE, SUSPENDED_APP_ACTIVITY);
            return true;
        }
        self.launch(package, activity);
        if let Some(kind) = self.app_faults.get(package).copied() {
            if kind == DialogKind::Crash {
                self.ui.stack.retain(|(p, _)| p != package);
            }
            self.app_dialog = Some(AppDialog {
                kind,
                process: package.to_string(),
            });
        }
        true
    }

    /// Removes a package's activities (`am force-stop`); its process dialog goes with it. Lock
    /// task mode stays (the locked task is relaunched by its kiosk app: RushB-fr/freekiosk#238
    /// shows `am start` refused right after `am force-stop` of the kiosk).
    pub fn force_stop(&mut self, package: &str) {
        if self
            .app_dialog
            .as_ref()
            .is_some_and(|d| d.package() == package)
        {
            self.app_dialog = None;
        }
        if package != self.persona.launcher_package {
            let before = self.ui.stack.len();
            self.ui.stack.retain(|(p, _)| p != package);
            if self.ui.stack.len() != before {
                self.ui.focused = None;
            }
        }
    }

    /// The first scripted answer (control API) matching the command `line`; see [`script::take`].
    pub fn take_script(&mut self, line: &str) -> Option<ScriptAnswer> {
        script::take(&mut self.scripts, line)
    }

    /// The UI tree of the current foreground screen at the logical display size (what
    /// `uiautomator dump` serialises, `screencap` draws and `input tap` hits).
    pub fn ui_tree(&self) -> Node {
        let (w, h) = self.display_size();
        let (w, h) = (w as i32, h as i32);
        let (pkg, _) = self.foreground();
        let screen = Rect::new(0, 0, w, h);
        let content = if !self.screen_on {
            Node::new("android.widget.FrameLayout", "com.android.systemui", screen)
                .fill([0, 0, 0, 255])
        } else if self.locked {
            apps::keyguard(screen)
        } else if pkg == self.persona.launcher_package {
            apps::launcher(&pkg, screen)
        } else {
            apps::screen(&pkg, &self.ui, self.battery_level, screen)
        };
        let root_pkg = content.package.clone();
        let mut layers = vec![content];
        if let Some(d) = self
            .app_dialog
            .as_ref()
            .filter(|_| self.screen_on && !self.locked)
        {
            let label = apps::find_any(d.package()).map_or(d.package(), |a| a.label);
            layers.push(d.view(label, screen));
        }
        Node::new("android.widget.FrameLayout", &root_pkg, screen).with(layers)
    }
}
