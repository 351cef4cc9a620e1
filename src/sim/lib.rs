//! The simulated phone: the device side of ADB over TCP, a small mksh-like shell, Android's
//! observation programs in their real output formats, and a virtual UI that taps, text and
//! key events change. Many sims can run in one tokio runtime; nothing is global.
//!
//! Data flow: [`transport`] accepts a connection and routes `OPEN`ed streams
//! ([`stream`]) to [`services`] (`shell`, `exec`, `sync`). Shell services parse the command
//! line with [`sh`] and run [`programs`] against the [`phone::Phone`] state ([`vfs`] files,
//! [`ui`] tree built from [`apps`]' screens, drawn by [`render`]). The optional [`control`]
//! HTTP API reads and changes that state and injects faults ([`script`]).
//!
//! # Floors
//! Each module imports only from its own floor and the floors below (never up), and modules
//! on one floor do not import each other in a loop; the `floors` unit test checks this
//! against the source. Lowest first:
//!
//! 1. **model**: the parts of a phone as plain data and pure functions of them: [`persona`]
//!    (device data, the stock `/system/bin`), [`props`], [`vfs`], [`auth`] (adb keys),
//!    [`script`] (scripted answers), [`ui`] (the view tree), [`apps`] (their screens),
//!    [`screens`] (screens of Compose and web view apps),
//!    [`render`] and its bitmap font (pixels of a view tree), [`timing`] (the cost model),
//!    [`input_args`] (`input`'s argument grammar, shared by the `input` program and the model),
//!    [`media`] (what the media store has indexed), [`sync_fault`] (injected `sync:` refusals),
//!    [`install_sessions`] (open `pm install-create` sessions),
//!    [`framework`] (a crash/ANR dialog, lock task mode, battery overrides),
//!    [`enabled_state`] (a package's or component's enabled setting).
//! 2. **phone**: [`phone`], the aggregate: `PhoneState` owns the model parts, [`Phone`] is
//!    its cloneable, locked handle; it composes the foreground screen's UI tree.
//! 3. **programs**: [`programs`], Android's `/system/bin`, reading and changing a [`Phone`].
//! 4. **shell**: [`sh`], parses a command line and runs it, dispatching to [`programs`].
//! 5. **transport**: [`stream`] (one ADB stream), [`services`] (`shell:`, `exec:`, `sync:`
//!    over a stream), [`transport`] (the adbd side of a TCP connection), [`wireless`]
//!    (wireless debugging: pairing server and the `STLS` connect port) and [`mdns`] (its
//!    advertisements, on named interfaces only).
//! 6. **control**: [`control`] (the HTTP control API; its storage routes in
//!    [`control_storage`], its JSON bodies and errors in [`control_json`]) and this crate root ([`start`]).
//!
//! The crate shares only the ADB framing (crate `xagent_adb_wire`) and the pairing protocol
//! (crate `xagent_adb_pairing`) with the connector and depends on nothing of it: every parser
//! and formatter here is its own.

pub mod apps;
pub mod auth;
pub mod control;
pub mod control_json;
pub mod control_storage;
pub mod enabled_state;
pub mod evdev;
#[cfg(test)]
mod floors;
mod font;
pub mod framework;
pub mod input_args;
pub mod install_sessions;
pub mod mdns;
pub mod media;
pub mod persona;
pub mod phone;
pub mod programs;
pub mod props;
pub mod render;
pub mod screens;
pub mod script;
pub mod services;
pub mod sh;
pub mod stream;
pub mod sync_fault;
pub mod timing;
pub mod transport;
pub mod ui;
pub mod vfs;
pub mod wireless;

use std::net::SocketAddr;
use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

pub use phone::{LogEntry, Phone};

/// What to simulate and where to listen.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// ADB transport listener (port 0 allowed).
    pub listen: SocketAddr,
    /// `ro.serialno`.
    pub serial: String,
    /// `ro.product.model`; empty (the default) = the persona's `model`.
    pub model: String,
    /// Persona name, default `pixel-android14`.
    pub persona: String,
    /// Control API listener (loopback only).
    pub control: Option<SocketAddr>,
    /// Demand ADB RSA authentication (`ro.adb.secure=1`); see [`auth`].
    pub require_auth: bool,
    /// Where accepted keys persist (`adb_keys`, and with `wireless` the paired keys
    /// `adb_wifi_keys` and the GUID `adb_wifi_guid`); `None` keeps them in memory.
    pub state_dir: Option<PathBuf>,
    /// Wireless debugging ([`wireless`]): an `STLS` connect port on the `listen` IP, and
    /// pairing servers opened through the control API (`POST /v1/pair`).
    pub wireless: bool,
    /// Interfaces to announce `_adb-tls-*` services on over mDNS (only with `wireless`);
    /// empty = no mDNS at all.
    pub mdns_interfaces: Vec<String>,
    /// Cost model ([`timing`]): `Instant` (default) answers at once, `Realistic` applies the
    /// persona's phone-side costs and `link`'s bandwidth and latency.
    pub timing: timing::TimingMode,
    /// The link the cost model applies (only with `Realistic`).
    pub link: timing::Link,
    /// The input devices' capture ([`evdev::CAPTURES`] by name); `None`: no input nodes.
    pub touchscreen: Option<String>,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            serial: "SIM0001".into(),
            model: String::new(),
            persona: persona::DEFAULT_PERSONA.into(),
            control: None,
            require_auth: false,
            state_dir: None,
            wireless: false,
            mdns_interfaces: Vec::new(),
            timing: timing::TimingMode::Instant,
            link: timing::Link::Usb2,
            touchscreen: None,
        }
    }
}

/// Bound addresses of a running sim.
#[derive(Clone, Debug)]
pub struct SimHandle {
    /// Where the ADB transport listens.
    pub adb_addr: SocketAddr,
    /// Where the control API listens, if enabled.
    pub control_addr: Option<SocketAddr>,
    /// Where the wireless-debugging `STLS` connect port listens (`wireless` only).
    pub connect_addr: Option<SocketAddr>,
}

/// File of the phone's Android ID in `state_dir`: a phone keeps it across reboots.
pub const ANDROID_ID_FILE: &str = "android_id";

/// The Android ID kept in `dir` ([`ANDROID_ID_FILE`]), made and written on first use.
fn android_id_in(dir: &std::path::Path) -> std::io::Result<String> {
    let path = dir.join(ANDROID_ID_FILE);
    match std::fs::read_to_string(&path) {
        Ok(id) if !id.trim().is_empty() => Ok(id.trim().to_string()),
        Ok(_) => write_android_id(&path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => write_android_id(&path),
        Err(e) => Err(e),
    }
}

fn write_android_id(path: &std::path::Path) -> std::io::Result<String> {
    let id = props::fresh_android_id();
    std::fs::write(path, format!("{id}\n"))?;
    Ok(id)
}

/// Binds, spawns the serving tasks on the current tokio runtime, returns the bound addresses.
/// Errors: unknown persona or a blank serial (`InvalidInput`), a non-loopback control address
/// (`PermissionDenied`), an unreadable `state_dir`, bind failures.
pub async fn start(opts: SimOptions, shutdown: CancellationToken) -> std::io::Result<SimHandle> {
    let (handle, _phone) = start_with_phone(opts, shutdown).await?;
    Ok(handle)
}

/// Like [`start`], also returning the phone handle (for in-process tests and tools).
pub async fn start_with_phone(
    opts: SimOptions,
    shutdown: CancellationToken,
) -> std::io::Result<(SimHandle, Phone)> {
    let persona = persona::Persona::load(&opts.persona)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // adb and the connector name a phone by its serial: a blank one lists as nothing usable.
    if opts.serial.trim().is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "--serial must not be empty or blank (it is the phone's ro.serialno, which adb \
             lists it by)",
        ));
    }
    if opts.control.is_some_and(|c| !c.ip().is_loopback()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            "the sim control API listens on loopback only",
        ));
    }
    let model = if opts.model.is_empty() {
        persona.model.clone()
    } else {
        opts.model.clone()
    };
    let capture = match opts.touchscreen.as_deref() {
        None => None,
        Some(name) => Some(evdev::capture(name).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "unknown --touchscreen {name:?}; one of: {}",
                    evdev::CAPTURES
                        .iter()
                        .map(|c| c.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        })?),
    };
    let keys = auth::KeyStore::open(opts.require_auth, opts.state_dir.as_deref())?;
    let phone = Phone::new(persona, &opts.serial, &model);
    let android_id = match opts.state_dir.as_deref() {
        Some(dir) => Some(android_id_in(dir)?),
        None => None,
    };
    phone.with(|s| {
        if let Some(id) = android_id {
            s.settings
                .insert(("secure".into(), "android_id".into()), id);
        }
        s.auth = keys;
        s.set_touchscreen(capture);
        s.timing = (opts.timing == timing::TimingMode::Realistic).then(|| timing::Model {
            phone: s.persona.timing,
            sdk: s.persona.sdk,
            link: opts.link.spec(),
        });
    });
    let listener = tokio::net::TcpListener::bind(opts.listen)
        .await
        .map_err(|e| transport::bind_error(e, "--listen", opts.listen))?;
    let adb_addr = listener.local_addr()?;
    let wireless = match opts.wireless {
        true => Some(
            wireless::Wireless::start(
                phone.clone(),
                adb_addr.ip(),
                &opts.mdns_interfaces,
                opts.state_dir.as_deref(),
                shutdown.clone(),
            )
            .await?,
        ),
        false => None,
    };
    let connect_addr = wireless
        .as_ref()
        .map(|w| SocketAddr::new(adb_addr.ip(), w.view().connect_port));
    let control_addr = match opts.control {
        Some(addr) => {
            let state = control::ControlState {
                phone: phone.clone(),
                wireless,
            };
            Some(control::start(addr, state, shutdown.clone()).await?)
        }
        None => None,
    };
    tokio::spawn(transport::serve(listener, phone.clone(), shutdown));
    Ok((
        SimHandle {
            adb_addr,
            control_addr,
            connect_addr,
        },
        phone,
    ))
}

#[cfg(test)]
mod android_id_tests {
    use super::*;

    /// Two phones have two Android IDs (16 hex digits); one kept in a state dir is read back.
    #[test]
    fn each_phone_has_its_own_android_id_kept_in_its_state_dir() {
        let (a, b) = (props::fresh_android_id(), props::fresh_android_id());
        assert_ne!(a, b);
        assert!(
            a.len() == 16 && a.chars().all(|c| c.is_ascii_hexdigit()),
            "{a}"
        );
        let dir = std::env::temp_dir().join(format!("xagent-sim-aid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let first = android_id_in(&dir).unwrap();
        assert_eq!(android_id_in(&dir).unwrap(), first, "a reboot keeps it");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
