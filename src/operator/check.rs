//! `check`: the box's health as an operator reads it, one line per item, each problem with
//! its fix. Exit status 0 when all is well, 1 when anything needs the operator. A configuration
//! `serve` would refuse (e.g. no API key file, no data dir) is a problem, but the phones are
//! still checked whenever the settings say where they are (issue 21 §1: neither the API key
//! nor the data dir is needed to look at the phones).

use std::fmt::Write as _;

use crate::config::{ConfigError, ServeConfig, Settings};
use crate::connector::claim_policy;
use crate::device::parse::devices::{DeviceState, RouteKind};

use super::{survey, Survey};

/// Where the package installs the udev rule granting the service's group the ADB USB
/// interface (class ff, subclass 42, protocol 01).
pub const UDEV_RULE_PATH: &str = "/usr/lib/udev/rules.d/60-xagent-adb-connector.rules";

/// The fix for a phone in `state` reached through `route`, or `None` when it is usable; a
/// phone the connector dials itself (direct transport) gets no `adb`-server command and no
/// cable, one it paired over Wi-Fi ([`RouteKind::WifiPaired`]) the Wireless debugging fixes
/// (`DeviceState::remedy`, shared with claims and tool errors).
/// Sources: adb's own hints (AOSP `packages/modules/adb/transport.cpp`,
/// `UsbNoPermissionsShortHelpText`), Android's "Run apps on a hardware device" guide.
pub fn fix_for(state: &DeviceState, route: RouteKind) -> Option<String> {
    let usb = route == RouteKind::UsbAdbServer;
    Some(match state {
        DeviceState::Device => return None,
        DeviceState::Unauthorized if usb => {
            "on the phone, accept the \"Allow USB debugging?\" RSA key prompt \
             (tick \"Always allow from this computer\"); no prompt: unplug and re-plug, or revoke \
             USB debugging authorisations in Developer options"
                .into()
        }
        // One text for `check`, claims and tool errors (`DeviceState::remedy`).
        DeviceState::NoPermissions { .. } | DeviceState::Unauthorized | DeviceState::Gone => {
            state.remedy(route)?.to_string()
        }
        DeviceState::Offline if route == RouteKind::WifiAdbServer => {
            "the phone does not answer: wireless debugging is \
             probably off or the phone left the network — turn Developer options → Wireless \
             debugging on and connect again"
                .into()
        }
        DeviceState::Offline if usb => {
            "the phone does not answer: re-plug the cable, or toggle USB \
             debugging off and on in Developer options"
                .into()
        }
        DeviceState::Offline => state.remedy(route)?.to_string(),
        DeviceState::Authorizing | DeviceState::Connecting => {
            "the transport is still coming up: check again in a few seconds".into()
        }
        DeviceState::Bootloader | DeviceState::Recovery | DeviceState::Sideload => {
            "the phone is not running Android: reboot it into the system".into()
        }
        DeviceState::ServerUnavailable => "its adb server stopped answering: restart it".into(),
        DeviceState::ServerForgot { .. } => state.remedy(route)?.to_string(),
        DeviceState::Host | DeviceState::Unknown(_) => {
            "not a phone state the connector can use: reboot the phone".into()
        }
    })
}

/// What was seen at the address of a direct or paired phone `p` that reads `offline`, and the
/// fix: for a `--device` phone the one for what its address did (refused: adb over TCP/IP is
/// off or the port is wrong; no answer: the phone is away or the address is wrong; unknown
/// host or no route: the host is wrong), for a
/// phone paired over Wi-Fi the Wi-Fi fix (as its tool errors give it).
pub fn dialled_problem(p: &super::PhoneRow, dialled: &super::Dialled) -> (String, String) {
    use super::Dialled;
    let addr = p.transport.strip_prefix("tcp:").unwrap_or(&p.transport);
    let seen = dialled.describe(addr);
    let route = if p.paired {
        RouteKind::WifiPaired
    } else {
        RouteKind::Direct
    };
    let fix = match (dialled, route) {
        (Dialled::Refused, RouteKind::Direct) => {
            "on the phone, turn adb over TCP/IP on (`adb tcpip 5555` from a computer it is \
             plugged into; a reboot turns it off) and make sure --device names the port it \
             listens on (5555 after `adb tcpip 5555`; Wireless debugging shows its own port, \
             which changes each time it is turned on)"
                .to_string()
        }
        (Dialled::Unreachable(_), RouteKind::Direct) => {
            "check the host in --device (this box cannot resolve it or has no route to it) and \
             that the phone is on a network this box reaches"
                .to_string()
        }
        (Dialled::NoAnswer, RouteKind::Direct) => {
            "make sure the phone is on, awake and on a network this box reaches, and that \
             --device names its current IP address (the router may have given it another; a \
             DHCP reservation keeps it); a firewall between them may drop the connection"
                .to_string()
        }
        _ => fix_for(&p.state, route).unwrap_or_default(),
    };
    (seen, fix)
}

/// The fix for a bound phone the survey did not find ([`super::PhoneRow::missing`]): bring it
/// back the way it was reached, or end its binding.
pub fn missing_fix(p: &super::PhoneRow) -> String {
    let back = match p.route_kind() {
        RouteKind::UsbAdbServer => "plug it back in (check the cable and the hub's power)".to_string(),
        RouteKind::WifiAdbServer => format!(
            "reconnect it (`adb connect {}`; on the phone, Wireless debugging or adb over TCP/IP on)",
            p.transport
        ),
        RouteKind::WifiPaired => {
            "turn Developer options → Wireless debugging on, on the phone's network".to_string()
        }
        RouteKind::Direct if !p.transport.is_empty() => format!(
            "make sure it is on and reachable at {} (--device)",
            p.transport.strip_prefix("tcp:").unwrap_or(&p.transport)
        ),
        _ => "attach it again (USB, `adb connect`, or its --device address)".to_string(),
    };
    format!(
        "{back}; or, if it is gone for good, end the binding (auth.logout on channel {}) so the \
         channel is free",
        p.missing.as_deref().unwrap_or("-")
    )
}

/// The report of `check` for a loaded configuration (or every problem found in it:
/// [`Settings::resolve_all`]) and what the survey saw (`None`: the settings do not say where
/// the phones are); returns (text, all fine).
pub fn report(
    config: &Result<ServeConfig, Vec<ConfigError>>,
    seen: Option<&Survey>,
) -> (String, bool) {
    let mut out = String::new();
    let mut ok = true;
    match config {
        Ok(c) => {
            let scheme = if c.tls.is_some() { "https" } else { "http" };
            let _ = writeln!(
                out,
                "ok       config valid (listen {scheme}://{})",
                c.listen
            );
            // The key itself was read and checked by the resolve; never printed. A wildcard
            // listen address is no URL a browser opens: the box's addresses are printed.
            let _ = match &c.operator_key {
                Some(_) => writeln!(
                    out,
                    "ok       operator console at {} (user operator, the operator key file's \
                     first line as password)",
                    super::reach::reachable(c.listen)
                        .iter()
                        .map(|a| format!("{scheme}://{a}/console"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => writeln!(
                    out,
                    "note     no --operator-key-file (operator_key_file): the browser console \
                     /console is off"
                ),
            };
            if let Some(problem) = claim_code_problem(c) {
                ok = false;
                let _ = writeln!(out, "{problem}");
            }
        }
        Err(problems) => {
            for e in problems {
                let _ = writeln!(out, "PROBLEM  config: {}", config_problem(e));
            }
            ok = false;
        }
    }
    let Some(seen) = seen else {
        return (out, ok);
    };
    let configured_direct = seen
        .phones
        .iter()
        .any(|p| p.adb_server.is_none() && !p.paired);
    if seen.servers.is_empty() && !configured_direct {
        // Not a problem by itself: phones paired over Wi-Fi (`adb_pair_code`) need neither.
        let _ = writeln!(
            out,
            "note     no adb server and no --device phone configured: only phones paired over Wi-Fi will show"
        );
    }
    for same in &seen.same_servers {
        let _ = writeln!(out, "note     {}", same.describe());
    }
    for server in &seen.servers {
        match &server.version {
            Ok(v) => {
                let _ = writeln!(
                    out,
                    "ok       adb server {} reachable, protocol version {v}",
                    server.name
                );
            }
            Err(e) => {
                ok = false;
                let _ = writeln!(
                    out,
                    "PROBLEM  adb server {}: {e}\n         fix: start it (`adb -P PORT start-server`, \
                     or the adb-server service), or correct --adb-server",
                    server.name
                );
            }
        }
    }
    for p in &seen.phones {
        let via = match &p.adb_server {
            Some(s) => format!("{} via adb server {s}", p.transport),
            None if p.paired => format!("{} (paired over Wi-Fi)", p.transport),
            None => p.transport.clone(),
        };
        // The route a running connector gives the phone, so tool errors say the same.
        let seen = match &p.dialled {
            Some(dialled) => format!(" ({})", dialled_problem(p, dialled).0),
            None => String::new(),
        };
        if let Some(channel) = &p.missing {
            ok = false;
            let _ = writeln!(
                out,
                "PROBLEM  phone {} bound to channel {channel}: {} (no adb server lists it and no \
                 address reaches it; last seen {})\n         fix: {}",
                crate::protocol::descriptor::mask_serial(&p.serial),
                super::MISSING,
                if p.transport.is_empty() {
                    "nowhere this check knows".to_string()
                } else {
                    // A USB transport is named by the phone's serial: masked as the serial is.
                    let transport = match p.route_kind() {
                        RouteKind::UsbAdbServer => {
                            crate::protocol::descriptor::mask_serial(&p.transport)
                        }
                        _ => p.transport.clone(),
                    };
                    match &p.adb_server {
                        Some(s) => format!("as {transport} via adb server {s}"),
                        None => format!("at {transport}"),
                    }
                },
                p.fix().unwrap_or_default()
            );
            continue;
        }
        if let Some(servers) = &p.server_down {
            // The server's own PROBLEM line says what is wrong; the phone is not gone.
            let _ = writeln!(
                out,
                "note     bound phone {}: state {} (its adb server {servers} did not answer)\n         \
                 fix: {}",
                crate::protocol::descriptor::mask_serial(&p.serial),
                super::UNKNOWN,
                p.fix().unwrap_or_default()
            );
            continue;
        }
        if let Some(why) = &p.unknown_why {
            // Not said a problem: the phone may well trust the connector's key.
            let _ = writeln!(
                out,
                "note     phone {via}: state {} ({why}; it refused this check's own key)\n         \
                 fix: {}",
                super::UNKNOWN,
                p.fix().unwrap_or_default()
            );
            continue;
        }
        let fix = p.fix();
        match fix {
            None => {
                let _ = writeln!(
                    out,
                    "ok       phone {} ({}) {via}: device",
                    p.serial, p.model
                );
            }
            Some(fix) => {
                ok = false;
                // A direct phone never identified is listed under its transport: named once.
                let who = if p.serial == p.transport {
                    via
                } else {
                    format!("{} {via}", p.serial)
                };
                let _ = writeln!(
                    out,
                    "PROBLEM  phone {who}: {}{seen}\n         fix: {fix}",
                    p.state.as_str()
                );
            }
        }
    }
    // Not a problem (both phones work), but claim codes and bindings name phones by serial.
    let mut noted = std::collections::HashSet::new();
    for p in &seen.phones {
        if let Some(warning) = p.warning.as_ref().filter(|_| noted.insert(&p.serialno)) {
            let _ = writeln!(
                out,
                "note     {warning}; a `[claim_codes]` entry for the serial opens each of them \
                 unless a name has its own"
            );
        }
    }
    if ok && seen.phones.is_empty() {
        let _ = writeln!(out, "note     no phone attached yet");
    }
    (out, ok)
}

/// Bindings the fleet fenced (`fleet_binding_lost`, docs/fleet.md): each a problem naming the
/// channel and the masked serial, with the fix (end the binding: every tool on it is refused).
/// Returns whether there was none.
pub fn fleet_lost_lines(out: &mut String, remembered: &super::bindings::Remembered) -> bool {
    let mut lost: Vec<_> = remembered.fleet_lost.iter().collect();
    lost.sort();
    for (serial, why) in &lost {
        let channel = remembered.bound.get(*serial).map_or("-", String::as_str);
        let _ = writeln!(
            out,
            "PROBLEM  phone {} bound to channel {channel}: binding lost in the fleet ({})\n         \
             fix: auth.logout on channel {channel} (every tool on it is refused)",
            crate::protocol::descriptor::mask_serial(serial),
            why.strip_prefix("fleet_binding_lost: ").unwrap_or(why)
        );
    }
    lost.is_empty()
}

/// The phones' hand-backs (`[release]`): a phone being released is a note (claimable once it
/// finished), a failed step of the last release a problem with its fix and time — for
/// [`crate::connector::release::FAILURE_SHOWN`], then a note (a later release replaces it).
/// Returns whether none is a problem.
pub fn release_lines(
    out: &mut String,
    releases: &std::collections::HashMap<String, crate::connector::release::ReleaseView>,
) -> bool {
    let mut views: Vec<_> = releases.values().collect();
    views.sort_by(|a, b| a.serial.cmp(&b.serial));
    let mut ok = true;
    for v in views {
        if v.state == "releasing" {
            let _ = writeln!(
                out,
                "note     phone {}: being handed back clean after its last binding ([release] steps); claimable once they finish",
                v.serial
            );
        }
        let current = v.failure_current(crate::protocol::now_ms());
        let at = v
            .finished_ms
            .map(crate::server::console::view::when)
            .unwrap_or_else(|| "at an unknown time".into());
        for step in &v.failed_steps {
            let why = step.message.as_deref().unwrap_or("no reason given");
            if !current {
                // Aged out: said with its time, no longer a problem (no release since).
                let _ = writeln!(
                    out,
                    "note     phone {}: release step {} failed {at}, more than {} h ago with no \
                     release since (no longer counted a problem): {why}",
                    v.serial,
                    step.step,
                    crate::connector::release::FAILURE_SHOWN.as_secs() / 3600
                );
                continue;
            }
            ok = false;
            let _ = writeln!(
                out,
                "PROBLEM  phone {}: release step {} failed after the last binding, {at}: {why}
         fix: undo it by hand (or with adb), or set [release].{} = false in the device profile; the phone is claimable (the next release, or {} h, clears this)",
                v.serial,
                step.step,
                step.step,
                crate::connector::release::FAILURE_SHOWN.as_secs() / 3600
            );
        }
    }
    ok
}

/// Policy `code` (the default) with no `[claim_codes]`: no phone can be claimed (a claim
/// needs its phone's code), so `check` calls it a problem and `serve` warns at start and on
/// SIGHUP (it still starts: a SIGHUP adding codes makes the box usable without a restart).
/// Returns the PROBLEM line with its fix, `None` when claims can succeed.
pub fn claim_code_problem(c: &ServeConfig) -> Option<String> {
    claim_policy::no_claim_codes(c.claim_policy, c.claim_codes.len()).then(|| {
        format!(
            "PROBLEM  config: {}\n         fix: {}",
            claim_policy::NO_CLAIM_CODES,
            claim_policy::NO_CLAIM_CODES_FIX
        )
    })
}

/// What is invalid, on one line whatever the cause (a TOML error spans several):
/// "config: invalid configuration: …" said the same thing twice before saying it.
fn config_problem(e: &ConfigError) -> String {
    match e {
        ConfigError::Invalid(what) | ConfigError::Tls(crate::server::tls::TlsError(what)) => what
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(": "),
        other => crate::config::one_line(other),
    }
}

/// Runs `check` on the stacked settings: validates them as `serve` would, and surveys the
/// phones (paired ones included) when the settings say where they are; returns (text, all
/// fine).
pub async fn run(stacked: Settings) -> (String, bool) {
    let survey_config = stacked.survey_config();
    let config = stacked.resolve_all();
    let phones_at = match survey_config {
        Ok(phones_at) => phones_at,
        Err(e) => {
            let (mut text, _) = report(&config, None);
            // `serve` stops at its first problem (a missing API key file comes before the
            // phones' addresses); `check`, which needs no key, names a bad address too.
            let problem = config_problem(&e);
            if !text.contains(&problem) {
                let _ = writeln!(text, "PROBLEM  config: {problem}");
            }
            return (text, false);
        }
    };
    let Some(data_dir) = phones_at.data_dir.clone() else {
        // No data dir: the phones are surveyed all the same (the adb servers' and the
        // `--device` ones); the store's Wi-Fi-paired phones cannot be.
        let seen = survey(&phones_at, &Default::default()).await;
        let (mut text, _) = report(&config, Some(&seen));
        let missing = ConfigError::Missing("--data-dir is required");
        let problem = config_problem(&missing);
        if !text.contains(&problem) {
            let _ = writeln!(
                text,
                "PROBLEM  config: {problem} (serve keeps its database and adb key there)"
            );
        }
        let _ = writeln!(
            text,
            "note     phones paired over Wi-Fi not checked: they are remembered in the data dir"
        );
        return (text, false);
    };
    // A database `serve` would refuse (empty, not SQLite) is named before anything is read
    // from it.
    let db = data_dir.join(crate::store::data_dir::DB_FILE);
    let db_problem = tokio::task::spawn_blocking(move || crate::store::fault::check_existing(&db))
        .await
        .ok()
        .and_then(Result::err);
    let (remembered, read_problem) = match &db_problem {
        Some(_) => (Default::default(), None),
        None => match super::bindings::read(&data_dir).await {
            Ok(r) => (r, None),
            Err(e) => (Default::default(), Some(e)),
        },
    };
    let seen = survey(&phones_at, &remembered).await;
    let (mut text, mut ok) = report(&config, Some(&seen));
    ok &= release_lines(&mut text, &remembered.releases);
    ok &= fleet_lost_lines(&mut text, &remembered);
    if let Ok(c) = &config {
        let running = super::running::probe(Some(&data_dir), c.listen, c.tls.is_some()).await;
        let (line, up) = super::running::report(&running);
        text.push_str(&line);
        ok &= up;
    }
    if let Some(fault) = db_problem {
        ok = false;
        let _ = writeln!(
            text,
            "PROBLEM  database {}: {}; serve refuses to start on it\n         fix: {}",
            fault.path.display(),
            fault.what(),
            fault.fix()
        );
    }
    if let Some(e) = read_problem {
        // Not the box's problem: this user may not read the data dir (0700, service user).
        let _ = writeln!(
            text,
            "note     Wi-Fi-paired phones not checked ({e}): run check as the service user or root"
        );
    }
    (text, ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_permissions_names_the_packaged_rule_everywhere() {
        let state = DeviceState::NoPermissions {
            hint: String::new(),
        };
        assert!(state
            .remedy(RouteKind::UsbAdbServer)
            .unwrap()
            .contains(UDEV_RULE_PATH));
        assert!(fix_for(&state, RouteKind::UsbAdbServer)
            .unwrap()
            .contains(UDEV_RULE_PATH));
        // A direct phone's fix names no adb server command and no cable.
        let direct = fix_for(&DeviceState::Offline, RouteKind::Direct).unwrap();
        assert!(
            !direct.contains("adb ") && !direct.contains("cable"),
            "{direct}"
        );
    }
}
