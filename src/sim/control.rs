//! Control API: JSON over HTTP/1.1 on loopback, to inspect the phone and inject faults.
//!
//! | method | path | body | effect |
//! |---|---|---|---|
//! | GET | `/v1/state` | – | [`StateView`]: phone state and the command log |
//! | POST | `/v1/state` | [`StatePatch`] (all fields optional) | changes state, returns the new [`StateView`] |
//! | DELETE | `/v1/log` | – | clears the command log |
//! | POST | `/v1/script` | [`Script`] | adds a scripted answer (first match wins) |
//! | DELETE | `/v1/script` | – | removes all scripts |
//! | POST | `/v1/transport` | `{"state":"online"\|"offline"\|"frozen"\|"stalled"\|"unplugged"\|"unauthorized"}` | see [`TransportMode`] |
//! | GET | `/v1/auth` | – | [`AuthView`]: `{"required","accepted","pending"}` (key counts) |
//! | POST | `/v1/auth` | `{"action":"accept"\|"revoke"}` | accept pending keys / forget all keys (the wireless-debugging pairings too) and drop the connections they let in; returns [`AuthView`] |
//! | POST | `/v1/wireless/move` | optional [`MoveBody`]: `{"conflict_suffix": N, "keep_stale": true}` | `--wireless` only: the phone's Wi-Fi toggled: the connect port closes (with its connections) and reopens on a new port, announced again over mDNS under the same GUID (replacing its record), or as `<GUID> (N)` with `conflict_suffix` (a DNS-SD conflict rename; the earlier record withdrawn), the earlier record left at the dead port with `keep_stale`; answers [`MovedPort`] `{"connect_port":N,"instance":"…"\|null}` |
//! | POST/DELETE | `/v1/sync/fault` | see [`crate::control_storage`] | sync push/pull refusals as adbd's |
//! | GET | `/v1/media` | – | files the media store indexed ([`crate::control_storage`]) |
//! | POST | `/v1/pair` | [`PairBody`]: `{"qr_code_text":"WIFI:T:ADB;S:…;P:…;;"}` or `{"code":"123456"}` (6 digits, else 400), optional `"wrong_password": true`, `"leave_after": "tls"\|"spake2"`, `"delay_ms": N` | `--wireless` only: the user scanned the QR code (or opened "Pair with code"); opens a one-shot pairing server, answers [`PairingPorts`] `{"pairing_port","connect_port","guid"}` |
//!
//! Errors answer 400 with `{"error": "…"}` — a body that is not JSON or does not fit its shape
//! too ([`JsonBody`]). Passwords and codes are never echoed. A path not in the table answers
//! 404 and a method its path does not take 405 (with the `Allow` header), each with the same
//! `{"error": "…"}` body naming the method and path (405: and the methods the path takes).

use std::net::SocketAddr;

use axum::extract::{FromRef, State};
use axum::http::{Method, StatusCode, Uri};
use axum::routing::{get, post, MethodRouter};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::apps;
use crate::control_json::{api_error, bad, ApiError, JsonBody, OptionalJsonBody};
use crate::control_storage;
use crate::enabled_state::EnabledState;
use crate::framework::{AppDialog, BatteryOverride, DialogKind, LockTask};
use crate::persona::ExtraDisplay;
use crate::phone::{LogEntry, Phone, PhoneState, TransportMode, TtyDump};
use crate::script::Script;
use crate::wireless::{MoveRequest, MovedPort, PairRequest, PairingPorts, Wireless, WirelessView};
use xagent_adb_pairing::exchange::Stage;
use xagent_adb_pairing::QrPairing;

/// What the handlers share: the phone, and its wireless debugging when `--wireless` is on.
#[derive(Clone, Debug)]
pub struct ControlState {
    /// The phone.
    pub phone: Phone,
    /// Wireless debugging (`--wireless`).
    pub wireless: Option<Wireless>,
}

impl FromRef<ControlState> for Phone {
    fn from_ref(state: &ControlState) -> Phone {
        state.phone.clone()
    }
}

/// What `GET /v1/state` returns.
#[derive(Debug, Serialize)]
pub struct StateView {
    /// `ro.serialno`.
    pub serial: String,
    /// `ro.product.model`.
    pub model: String,
    /// Persona name.
    pub persona: String,
    /// Foreground `package`.
    pub foreground: String,
    /// Foreground activity (short form).
    pub activity: String,
    /// Focused input field resource-id.
    pub focused: Option<String>,
    /// Text in the Notes field.
    pub note_text: String,
    /// Rotation, quarter turns.
    pub rotation: u32,
    /// `[w, h]` override, if set.
    pub override_size: Option<(u32, u32)>,
    /// Display on.
    pub screen_on: bool,
    /// Keyguard showing.
    pub locked: bool,
    /// The keyguard needs a credential (a swipe does not dismiss it).
    pub lock_secure: bool,
    /// Services not registered with `servicemanager` ("Can't find service").
    pub services_down: Vec<String>,
    /// Logical displays besides display 0 in `dumpsys window`.
    pub extra_displays: Vec<ExtraDisplay>,
    /// Battery percent.
    pub battery_level: u32,
    /// Values set with `dumpsys battery set|unplug` (`null`: updates running).
    pub battery_override: Option<BatteryOverride>,
    /// The framework's crash or ANR dialog over the screen.
    pub app_dialog: Option<AppDialog>,
    /// Packages that crash or stop responding when started.
    pub app_faults: std::collections::BTreeMap<String, DialogKind>,
    /// Lock task mode (kiosk or screen pinning).
    pub lock_task: Option<LockTask>,
    /// Packages whose enabled setting is not the default.
    pub app_enabled: std::collections::BTreeMap<String, EnabledState>,
    /// Disabled components (`pkg/.Activity`).
    pub disabled_components: Vec<String>,
    /// Suspended ("paused") packages (`pm suspend`).
    pub suspended: Vec<String>,
    /// FLAG_SECURE on the focused window.
    pub secure_window: bool,
    /// Transport mode.
    pub transport: TransportMode,
    /// Connections the phone lost while `stalled` (held open, never answered).
    pub lost_connections: u32,
    /// User 0's shared storage volume state (`sm list-volumes`; field bug 68).
    pub shared_storage: String,
    /// ADBKeyBoard installed.
    pub adb_keyboard: bool,
    /// `settings get secure default_input_method`.
    pub input_method: String,
    /// ADBKeyBoard enabled (`ime enable`).
    pub adb_keyboard_enabled: bool,
    /// ADBKeyBoard's receiver gets shell broadcasts (field bug 40).
    pub adb_keyboard_receives: bool,
    /// `ime enable|set` of ADBKeyBoard still to answer `Unknown input method` (field bug 44).
    pub ime_registration_pending: u32,
    /// What `uiautomator dump /dev/tty` prints: `xml` or `status_only` (field bug 39).
    pub ui_dump_tty: TtyDump,
    /// Number of active scripts.
    pub scripts: usize,
    /// Every program run so far.
    pub command_log: Vec<LogEntry>,
    /// Wireless debugging (`null` without `--wireless`).
    pub wireless: Option<WirelessView>,
    /// The input devices' capture name (`null`: no input nodes).
    pub touchscreen: Option<String>,
    /// The shell may write the input nodes.
    pub input_writable: bool,
    /// Gestures read from the touchscreen node, oldest first ([`crate::evdev::Touch`]).
    pub touches: Vec<crate::evdev::Touch>,
}

/// `POST /v1/state` body; absent fields stay as they are.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatePatch {
    /// 0..=3.
    pub rotation: Option<u32>,
    /// `"WxH"` to set, `"reset"` or `""` to clear.
    pub override_size: Option<String>,
    /// Display on/off.
    pub screen_on: Option<bool>,
    /// Keyguard.
    pub locked: Option<bool>,
    /// The keyguard needs a PIN, pattern or password: swipes and MENU no longer dismiss it.
    pub lock_secure: Option<bool>,
    /// Replaces the services not registered with `servicemanager` (`[]`: all up).
    pub services_down: Option<Vec<String>>,
    /// Replaces the extra logical displays of `dumpsys window` (`[]`: display 0 only).
    pub extra_displays: Option<Vec<ExtraDisplay>>,
    /// 0..=100.
    pub battery_level: Option<u32>,
    /// A crash or ANR dialog over the screen (`{"kind":"crash"|"anr","process":"com.pkg"}`);
    /// `null` dismisses it.
    #[serde(default, deserialize_with = "present")]
    pub app_dialog: Option<Option<AppDialog>>,
    /// Replaces the packages that fail when started (`{"com.pkg": "crash"|"anr"}`).
    pub app_faults: Option<std::collections::BTreeMap<String, DialogKind>>,
    /// Lock task mode (`{"mode":"locked"|"pinned","package":"com.pkg"}`, the package brought
    /// to the front); `null` ends it.
    #[serde(default, deserialize_with = "present")]
    pub lock_task: Option<Option<LockTask>>,
    /// Sets packages' enabled setting (`{"com.pkg": "disabled"|"disabled-user"|
    /// "disabled-until-used"|"enabled"|"default"}`; others keep theirs): what root, a device
    /// admin or Settings did, including the states `pm` refuses the shell.
    pub app_enabled: Option<std::collections::BTreeMap<String, EnabledState>>,
    /// Replaces the disabled components (`["com.pkg/.Activity"]`: an app that hid its
    /// launcher activity).
    pub disabled_components: Option<Vec<String>>,
    /// Replaces the suspended ("paused") packages (Digital Wellbeing's "Pause app", Focus
    /// mode; `pm suspend` from the shell does the same).
    pub suspended: Option<Vec<String>>,
    /// `package` or `package/.Activity` to bring to the front.
    pub foreground: Option<String>,
    /// FLAG_SECURE on the focused window.
    pub secure_window: Option<bool>,
    /// Replaces the Notes field text.
    pub note_text: Option<String>,
    /// User 0's shared storage volume state (`mounted`, `unmounted`, `checking`, …, as `sm
    /// list-volumes` prints it): not mounted takes `/storage/emulated/0` away (field bug 68).
    pub shared_storage: Option<String>,
    /// Replaces the CPU ABIs the phone runs (`ro.product.cpu.abilist`, its first also
    /// `ro.product.cpu.abi`): `["x86_64","x86"]` for an x86_64 emulator image or Android-x86
    /// box (AOSP `TARGET_CPU_ABI_LIST`), native code of no listed ABI is refused at install.
    pub cpu_abilist: Option<Vec<String>>,
    /// Installs (or removes) ADBKeyBoard; selecting it stays a shell step (`ime set`).
    pub adb_keyboard: Option<bool>,
    /// `false`: ADBKeyBoard no longer receives the shell's broadcasts (an old build on Android
    /// 16, field bug 40).
    pub adb_keyboard_receives: Option<bool>,
    /// The next N `ime enable|set` of ADBKeyBoard answer `Unknown input method` (field bug 44).
    pub ime_registration_pending: Option<u32>,
    /// `status_only`: `uiautomator dump /dev/tty` prints only its status line (field bug 39).
    pub ui_dump_tty: Option<TtyDump>,
    /// Input devices of this capture ([`crate::evdev::CAPTURES`] name); `null` removes them.
    #[serde(default, deserialize_with = "present")]
    pub touchscreen: Option<Option<String>>,
    /// `false`: the shell may not write the input nodes (`Permission denied`).
    pub input_writable: Option<bool>,
    /// `true`: forgets the gestures read so far.
    pub clear_touches: Option<bool>,
}

/// What `GET`/`POST /v1/auth` return.
#[derive(Debug, Serialize)]
pub struct AuthView {
    /// `--require-auth`.
    pub required: bool,
    /// Accepted keys (`adb_keys` lines).
    pub accepted: usize,
    /// Keys offered by hosts, waiting for "Allow USB debugging?".
    pub pending: usize,
}

/// `POST /v1/auth` body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AuthBody {
    action: AuthAction,
}

/// What the user does on the phone.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
enum AuthAction {
    /// "Always allow from this computer" for every pending key.
    Accept,
    /// Developer options → "Revoke USB debugging authorizations".
    Revoke,
}

#[derive(Debug, Deserialize)]
struct TransportBody {
    state: TransportMode,
}

/// 404 for a path not in the table (axum's own answer has an empty body).
async fn no_such_path(method: Method, uri: Uri) -> ApiError {
    api_error(
        StatusCode::NOT_FOUND,
        format!(
            "no such path: {method} {}; the control API serves /v1/state, /v1/log, /v1/script, \
             /v1/transport, /v1/auth, /v1/pair, /v1/wireless/move, /v1/sync/fault and /v1/media",
            uri.path()
        ),
    )
}

/// `methods` answering 405 `{"error": …}` naming `allowed` for any other method (axum adds
/// the `Allow` header; its own answer has an empty body). Set after the methods it routes.
fn only(methods: MethodRouter<ControlState>, allowed: &'static str) -> MethodRouter<ControlState> {
    methods.fallback(move |method: Method, uri: Uri| async move {
        api_error(
            StatusCode::METHOD_NOT_ALLOWED,
            format!(
                "{method} is not allowed on {}: it takes {allowed}",
                uri.path()
            ),
        )
    })
}

fn view(phone: &Phone, wireless: Option<&Wireless>) -> StateView {
    let transport = phone.transport_mode();
    let wireless = wireless.map(Wireless::view);
    phone.with(|s| {
        let (foreground, activity) = s.foreground();
        StateView {
            serial: s.serial.clone(),
            model: s.model.clone(),
            persona: s.persona.name.clone(),
            foreground,
            activity,
            focused: s.ui.focused.clone(),
            note_text: s.ui.note_text.clone(),
            rotation: s.rotation,
            override_size: s.override_size,
            screen_on: s.screen_on,
            locked: s.locked,
            lock_secure: s.lock_secure,
            services_down: s.services_down.clone(),
            extra_displays: s.extra_displays.clone(),
            battery_level: s.battery_level,
            battery_override: s.battery_override.clone(),
            app_dialog: s.app_dialog.clone(),
            app_faults: s.app_faults.clone(),
            lock_task: s.lock_task.clone(),
            app_enabled: s.app_enabled.clone(),
            disabled_components: s.disabled_components.iter().cloned().collect(),
            suspended: s.suspended.iter().cloned().collect(),
            secure_window: s.secure_window,
            transport,
            lost_connections: s.lost_connections,
            shared_storage: s.shared_storage.clone(),
            adb_keyboard: s.adb_keyboard,
            input_method: s.current_ime(),
            adb_keyboard_enabled: s.adb_keyboard_enabled,
            adb_keyboard_receives: s.adb_keyboard_receives,
            ime_registration_pending: s.ime_registration_pending,
            ui_dump_tty: s.ui_dump_tty,
            scripts: s.scripts.len(),
            command_log: s.log.clone(),
            wireless,
            touchscreen: s.touchscreen.map(|c| c.name.to_string()),
            input_writable: s.input_writable,
            touches: s.touches.clone(),
        }
    })
}

/// A field given (`null` included) is `Some`; an absent one stays `None` (`#[serde(default)]`).
fn present<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// A package name as Android accepts it (`[A-Za-z0-9_.]`, a `:` process suffix for dialogs).
fn plausible_package(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':'))
}

/// Extra displays must be other displays than 0, each id once, with a size and a focus of the
/// form `package/activity` when one is given.
fn check_extra_displays(extra: &[ExtraDisplay]) -> Result<(), String> {
    for (i, d) in extra.iter().enumerate() {
        if d.id == 0 {
            return Err("extra_displays: id 0 is the default display; give other ids".into());
        }
        if extra[..i].iter().any(|e| e.id == d.id) {
            return Err(format!("extra_displays: id {} is listed twice", d.id));
        }
        if d.width == 0 || d.height == 0 || d.density == 0 {
            return Err(format!(
                "extra_displays: display {} needs a width, height and density above 0",
                d.id
            ));
        }
        if d.focus.as_deref().is_some_and(|f| !f.contains('/')) {
            return Err(format!(
                "extra_displays: display {}'s focus must be package/activity",
                d.id
            ));
        }
    }
    Ok(())
}

/// Smallest side of a `wm size` override, px (`WindowManagerService.setForcedDisplaySize`).
pub const MIN_OVERRIDE_SIDE: u32 = 200;

/// Applies `p` to `s` all or nothing: every field is checked first, so a refused patch changes
/// nothing (a 400 never leaves the phone half-changed).
fn apply(s: &mut PhoneState, p: StatePatch) -> Result<(), String> {
    if p.rotation.is_some_and(|r| r > 3) {
        return Err("rotation must be 0..=3".into());
    }
    if p.battery_level.is_some_and(|level| level > 100) {
        return Err("battery_level must be 0..=100".into());
    }
    if let Some(extra) = &p.extra_displays {
        check_extra_displays(extra)?;
    }
    if let Some(Some(d)) = &p.app_dialog {
        if !plausible_package(&d.process) {
            return Err(
                "app_dialog: process must be a package name (com.pkg or com.pkg:name)".into(),
            );
        }
    }
    if let Some(bad) = p
        .app_faults
        .iter()
        .flat_map(|f| f.keys())
        .find(|k| !plausible_package(k) || k.contains(':'))
    {
        return Err(format!("app_faults: {bad} is not a package name"));
    }
    if let Some(bad) = p
        .app_enabled
        .iter()
        .flat_map(|m| m.keys())
        .find(|k| !plausible_package(k) || k.contains(':'))
    {
        return Err(format!("app_enabled: {bad} is not a package name"));
    }
    if let Some(bad) = p.disabled_components.iter().flatten().find(|c| {
        c.split_once('/')
            .is_none_or(|(p, a)| !plausible_package(p) || p.contains(':') || a.is_empty())
    }) {
        return Err(format!(
            "disabled_components: {bad} is not a component (com.pkg/.Activity)"
        ));
    }
    if let Some(bad) = p
        .suspended
        .iter()
        .flatten()
        .find(|k| !plausible_package(k) || k.contains(':'))
    {
        return Err(format!("suspended: {bad} is not a package name"));
    }
    let locked_task = match &p.lock_task {
        Some(Some(t)) => {
            let component = if t.package == s.persona.launcher_package {
                s.persona.launcher_component()
            } else {
                let app = apps::find_any(&t.package)
                    .ok_or_else(|| format!("lock_task: unknown package {}", t.package))?;
                (app.package.to_string(), app.activity.to_string())
            };
            Some(Some((t.clone(), component)))
        }
        Some(None) => Some(None),
        None => None,
    };
    // `Some(None)`: back to the physical size.
    let size = match p.override_size.as_deref() {
        None => None,
        Some("" | "reset") => Some(None),
        Some(spec) => {
            let parsed = spec
                .split_once('x')
                .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)));
            let (w, h): (u32, u32) = parsed.ok_or("override_size must be WxH or reset")?;
            // `wm size` on a phone clamps; the control API refuses instead, so a test never
            // runs on a size it did not ask for.
            let (pw, ph) = s.physical_size();
            let (max_w, max_h) = (pw.saturating_mul(3), ph.saturating_mul(3));
            if !(MIN_OVERRIDE_SIDE..=max_w).contains(&w)
                || !(MIN_OVERRIDE_SIDE..=max_h).contains(&h)
            {
                return Err(format!(
                    "override_size out of range: width {MIN_OVERRIDE_SIDE}..={max_w}, height {MIN_OVERRIDE_SIDE}..={max_h} (200 px to 3x the physical {pw}x{ph}, as WindowManagerService allows)"
                ));
            }
            Some(Some((w, h)))
        }
    };
    let foreground = match p.foreground {
        None => None,
        Some(fg) => Some(match fg.split_once('/') {
            Some((p, a)) => (p.to_string(), a.to_string()),
            None if fg == s.persona.launcher_package => s.persona.launcher_component(),
            None => {
                let app = apps::find(&fg).ok_or_else(|| format!("unknown package {fg}"))?;
                (app.package.to_string(), app.activity.to_string())
            }
        }),
    };
    // `VolumeInfo.getEnvironmentForState`'s words.
    const VOLUME_STATES: &[&str] = &[
        "unmounted",
        "checking",
        "mounted",
        "mounted_ro",
        "ejecting",
        "unmountable",
        "removed",
        "bad_removal",
    ];
    if let Some(state) = &p.shared_storage {
        if !VOLUME_STATES.contains(&state.as_str()) {
            return Err(format!(
                "shared_storage {state:?}: one of {}",
                VOLUME_STATES.join(", ")
            ));
        }
    }
    let capture = match &p.touchscreen {
        Some(Some(name)) => Some(Some(crate::evdev::capture(name).ok_or_else(|| {
            format!(
                "touchscreen: unknown capture {name}; one of: {}",
                crate::evdev::CAPTURES
                    .iter()
                    .map(|c| c.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?)),
        Some(None) => Some(None),
        None => None,
    };
    // Checked: from here nothing fails.
    if let Some(c) = capture {
        s.set_touchscreen(c);
    }
    s.input_writable = p.input_writable.unwrap_or(s.input_writable);
    if p.clear_touches == Some(true) {
        s.touches.clear();
    }
    s.rotation = p.rotation.unwrap_or(s.rotation);
    match size {
        Some(Some((w, h))) => s.set_override_size(w, h),
        Some(None) => s.override_size = None,
        None => {}
    }
    s.battery_level = p.battery_level.unwrap_or(s.battery_level);
    if let Some((pkg, act)) = foreground {
        s.launch(&pkg, &act);
    }
    s.screen_on = p.screen_on.unwrap_or(s.screen_on);
    s.locked = p.locked.unwrap_or(s.locked);
    s.lock_secure = p.lock_secure.unwrap_or(s.lock_secure);
    if let Some(down) = p.services_down {
        s.services_down = down;
    }
    if let Some(extra) = p.extra_displays {
        s.extra_displays = extra;
    }
    if let Some(faults) = p.app_faults {
        s.app_faults = faults;
    }
    if let Some(dialog) = p.app_dialog {
        s.app_dialog = dialog;
    }
    match locked_task {
        Some(Some((task, (pkg, act)))) => {
            s.launch(&pkg, &act);
            s.lock_task = Some(task);
        }
        Some(None) => s.lock_task = None,
        None => {}
    }
    for (pkg, state) in p.app_enabled.into_iter().flatten() {
        if state == EnabledState::Default {
            s.app_enabled.remove(&pkg);
        } else {
            s.app_enabled.insert(pkg, state);
        }
    }
    if let Some(suspended) = p.suspended {
        s.suspended = suspended.into_iter().collect();
    }
    if let Some(components) = p.disabled_components {
        s.disabled_components = components.into_iter().collect();
    }
    s.secure_window = p.secure_window.unwrap_or(s.secure_window);
    if let Some(state) = p.shared_storage {
        let mounted = state == "mounted" || state == "mounted_ro";
        s.vfs.set_shared_mounted(mounted);
        s.shared_storage = state;
    }
    if let Some(abis) = p.cpu_abilist.filter(|a| !a.is_empty()) {
        s.props.insert("ro.product.cpu.abi".into(), abis[0].clone());
        s.props
            .insert("ro.product.cpu.abilist".into(), abis.join(","));
    }
    s.adb_keyboard = p.adb_keyboard.unwrap_or(s.adb_keyboard);
    s.adb_keyboard_enabled &= s.adb_keyboard;
    s.adb_keyboard_receives = p.adb_keyboard_receives.unwrap_or(s.adb_keyboard_receives);
    s.ime_registration_pending = p
        .ime_registration_pending
        .unwrap_or(s.ime_registration_pending);
    s.ui_dump_tty = p.ui_dump_tty.unwrap_or(s.ui_dump_tty);
    if let Some(t) = p.note_text {
        s.ui.note_text = t;
    }
    Ok(())
}

async fn get_state(State(state): State<ControlState>) -> Json<StateView> {
    Json(view(&state.phone, state.wireless.as_ref()))
}

async fn post_state(
    State(state): State<ControlState>,
    JsonBody(patch): JsonBody<StatePatch>,
) -> Result<Json<StateView>, ApiError> {
    state.phone.with(|s| apply(s, patch)).map_err(bad)?;
    Ok(Json(view(&state.phone, state.wireless.as_ref())))
}

async fn clear_log(State(phone): State<Phone>) -> StatusCode {
    phone.with(|s| s.log.clear());
    StatusCode::NO_CONTENT
}

async fn post_script(
    State(phone): State<Phone>,
    JsonBody(script): JsonBody<Script>,
) -> Result<Json<serde_json::Value>, ApiError> {
    script.validate().map_err(bad)?;
    let n = phone.with(|s| {
        s.scripts.push(script);
        s.scripts.len()
    });
    Ok(Json(serde_json::json!({ "scripts": n })))
}

async fn delete_scripts(State(phone): State<Phone>) -> StatusCode {
    phone.with(|s| s.scripts.clear());
    StatusCode::NO_CONTENT
}

async fn post_transport(
    State(phone): State<Phone>,
    JsonBody(body): JsonBody<TransportBody>,
) -> Json<serde_json::Value> {
    phone.set_transport_mode(body.state);
    Json(serde_json::json!({ "state": body.state }))
}

fn auth_view(phone: &Phone) -> AuthView {
    phone.with(|s| AuthView {
        required: s.auth.required,
        accepted: s.auth.accepted.len(),
        pending: s.auth.pending.len(),
    })
}

async fn get_auth(State(phone): State<Phone>) -> Json<AuthView> {
    Json(auth_view(&phone))
}

async fn post_auth(
    State(phone): State<Phone>,
    JsonBody(body): JsonBody<AuthBody>,
) -> Result<Json<AuthView>, ApiError> {
    let saved = phone.with(|s| match body.action {
        AuthAction::Accept => s.auth.accept_pending().map(|_| ()),
        // As Android's "Revoke USB debugging authorisations": wireless pairings go too.
        AuthAction::Revoke => s.auth.revoke().and_then(|()| s.paired.revoke()),
    });
    phone.keys_changed();
    saved.map_err(|e| bad(format!("adb_keys: {e}")))?;
    Ok(Json(auth_view(&phone)))
}

/// `POST /v1/pair` body: exactly one of `qr_code_text` and `code`, then optional faults.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PairBody {
    /// The scanned text, `WIFI:T:ADB;S:<name>;P:<password>;;`.
    pub qr_code_text: Option<String>,
    /// The pairing code the phone shows ("Pair device with pairing code").
    pub code: Option<String>,
    /// The phone drops the connection after this stage.
    pub leave_after: Option<LeaveAfter>,
    /// The phone uses another password than the host (a mistyped code).
    #[serde(default)]
    pub wrong_password: bool,
    /// The phone waits this long after each connection, milliseconds.
    #[serde(default)]
    pub delay_ms: u64,
}

/// Where a phone leaves a pairing (`"tls"` or `"spake2"`).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LeaveAfter {
    /// Right after the TLS handshake.
    Tls,
    /// Right after the SPAKE2 messages crossed.
    Spake2,
}

/// The pairing code's shape, shared with the host side (one definition in the pairing crate).
pub use xagent_adb_pairing::{valid_pairing_code, PAIRING_CODE_LENGTH};

fn pair_request(body: PairBody) -> Result<PairRequest, String> {
    let (password, service_name) = match (body.qr_code_text, body.code) {
        (Some(text), None) => {
            let qr = QrPairing::parse(&text).map_err(|e| e.to_string())?;
            let password = zeroize::Zeroizing::new(qr.password().to_string());
            (password, Some(qr.service_name().to_string()))
        }
        (None, Some(code)) => {
            let code = zeroize::Zeroizing::new(code);
            if !valid_pairing_code(&code) {
                return Err(format!("code must be the {PAIRING_CODE_LENGTH} digits the phone shows under \"Pair device with pairing code\""));
            }
            (code, None)
        }
        _ => return Err("give exactly one of qr_code_text and code".into()),
    };
    Ok(PairRequest {
        password,
        service_name,
        wrong_password: body.wrong_password,
        leave_after: body.leave_after.map(|l| match l {
            LeaveAfter::Tls => Stage::Tls,
            LeaveAfter::Spake2 => Stage::Spake2,
        }),
        delay: std::time::Duration::from_millis(body.delay_ms),
    })
}

/// `POST /v1/wireless/move` body (optional; empty: a plain move under the GUID).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    /// Announce the new port as `<GUID> (N)`, N from 2 to 999 (a DNS-SD conflict rename).
    pub conflict_suffix: Option<u32>,
    /// Leave the earlier announcement registered at its now closed port.
    #[serde(default)]
    pub keep_stale: bool,
}

async fn post_wireless_move(
    State(state): State<ControlState>,
    OptionalJsonBody(body): OptionalJsonBody<MoveBody>,
) -> Result<Json<MovedPort>, ApiError> {
    let wireless = state
        .wireless
        .ok_or_else(|| bad("wireless debugging is off: start the sim with --wireless"))?;
    if body
        .conflict_suffix
        .is_some_and(|n| !(2..=999).contains(&n))
    {
        return Err(bad(
            "conflict_suffix must be from 2 to 999 (a renamed instance is `<GUID> (2)`, `(3)`…)",
        ));
    }
    let how = MoveRequest {
        conflict_suffix: body.conflict_suffix,
        keep_stale: body.keep_stale,
    };
    let moved = wireless
        .move_connect_port(&how)
        .await
        .map_err(|e| bad(format!("cannot move the connect port: {e}")))?;
    Ok(Json(moved))
}

async fn post_pair(
    State(state): State<ControlState>,
    JsonBody(body): JsonBody<PairBody>,
) -> Result<Json<PairingPorts>, ApiError> {
    let wireless = state
        .wireless
        .ok_or_else(|| bad("wireless debugging is off: start the sim with --wireless"))?;
    let request = pair_request(body).map_err(bad)?;
    let ports = wireless
        .open_pairing(request)
        .await
        .map_err(|e| bad(format!("pairing server: {e}")))?;
    Ok(Json(ports))
}

/// The router (exposed for in-process tests).
pub fn router(state: ControlState) -> Router {
    Router::new()
        .route(
            "/v1/state",
            only(get(get_state).post(post_state), "GET, POST"),
        )
        .route("/v1/log", only(axum::routing::delete(clear_log), "DELETE"))
        .route(
            "/v1/script",
            only(post(post_script).delete(delete_scripts), "POST, DELETE"),
        )
        .route("/v1/transport", only(post(post_transport), "POST"))
        .route("/v1/auth", only(get(get_auth).post(post_auth), "GET, POST"))
        .route("/v1/pair", only(post(post_pair), "POST"))
        .route("/v1/wireless/move", only(post(post_wireless_move), "POST"))
        .route(
            "/v1/sync/fault",
            only(
                post(control_storage::post_sync_fault).delete(control_storage::delete_sync_faults),
                "POST, DELETE",
            ),
        )
        .route("/v1/media", only(get(control_storage::get_media), "GET"))
        .fallback(no_such_path)
        .with_state(state)
}

/// Binds the control API on `addr` (loopback) and serves it until `shutdown`.
pub async fn start(
    addr: SocketAddr,
    state: ControlState,
    shutdown: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| crate::transport::bind_error(e, "--control", addr))?;
    let bound = listener.local_addr()?;
    let app = router(state);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await;
    });
    Ok(bound)
}
