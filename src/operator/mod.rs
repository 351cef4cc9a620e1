//! Operator subcommands run beside (or instead of) `serve`, with the same configuration
//! (file, `XAGENT_ADB_*` environment, flags; [`crate::config::stack`]); neither needs the API
//! key (they look at phones, they do not serve):
//!
//! * [`check`]: is the config valid, is each adb server reachable (and its protocol
//!   version), is each phone usable — and, when not, the fix (exit status 1 on any problem);
//! * [`devices`]: the phones as a table or JSON, each with its bound channel.
//!
//! Both look at the phones themselves ([`survey`]: the adb servers' `host:devices-l`, an
//! identity probe of online phones, the direct-transport phones, the phones paired over Wi-Fi
//! at their last address), and [`bindings`] reads the bound channels and the paired phones
//! from the store, or from the running connector when it holds the store.

pub mod bindings;
pub mod check;
pub mod devices;
pub mod reach;
pub mod running;
pub mod table;

use std::time::Duration;

use crate::adb::{AdbError, AdbServerClient, DeviceLink, HostKeyFile};
use crate::config::same_server::{self, SameServer};
use crate::config::SurveyConfig;
use crate::device::inventory::{self, Inventory, NameBook};
use crate::device::parse::devices::{parse_devices_l, DeviceState, RouteKind};

/// Deadline of one adb server's answers in a survey (version, device list, probes).
pub const SURVEY_DEADLINE: Duration = Duration::from_secs(10);

/// What one adb server answered.
#[derive(Debug, Clone)]
pub struct ServerReport {
    /// The server's label (`NAME` or `host:port`, as configured).
    pub name: String,
    /// `host:version` (41 for current servers), or why the server could not be asked.
    pub version: Result<u32, String>,
}

/// One phone as the operator sees it.
#[derive(Debug, Clone)]
pub struct PhoneRow {
    /// The phone's name — its `ro.serialno` (`ro.serialno#N` for each further phone
    /// reporting the same serial) — when it answered, else the adb serial.
    pub serial: String,
    /// `ro.serialno` when the phone answered, else the adb serial.
    pub serialno: String,
    /// adb's transport id (`transport_id:N`), when the server gave one.
    pub transport_id: Option<u64>,
    /// Set when other phones report the same serial: how many, and their names.
    pub warning: Option<String>,
    /// `ro.product.model` (from the probe or adb's `model:` field; may be empty).
    pub model: String,
    /// Transport state.
    pub state: DeviceState,
    /// adb serial (`R58N…`, `127.0.0.1:5555`) or `tcp:HOST:PORT` for direct phones.
    pub transport: String,
    /// The adb server (label) carrying it; `None` for direct-transport phones.
    pub adb_server: Option<String>,
    /// Paired over Wi-Fi and remembered by the connector (reached at its last address).
    pub paired: bool,
    /// For a direct or paired phone the survey could not use (`offline`): what its address
    /// did when dialled again ([`dial`]); `None` otherwise.
    pub dialled: Option<Dialled>,
    /// Bound to a channel, but no adb server lists it and no direct or paired address reaches
    /// it now: listed from its binding (state [`MISSING`]), with what the binding and the last
    /// reading know (model, transport, adb server): the channel it is bound to. `None` for a
    /// phone the survey found.
    pub missing: Option<String>,
    /// Why the state is unknown: the phone refused a key, but the connector's own adb key
    /// (which the phone may trust) could not be used — no data dir, or it cannot be read.
    /// `None` when the state is what the phone said.
    pub unknown_why: Option<String>,
    /// A bound phone not listed because the adb server that carries it (or, when no reading
    /// says which, every configured one that is down) did not answer: its state is unknown,
    /// not gone (the names of those servers). Its binding is kept; the fix is the server's.
    pub server_down: Option<String>,
}

/// The state word of a phone whose state is unknown ([`PhoneRow::unknown_why`]).
pub const UNKNOWN: &str = "unknown";

/// The state word of a bound phone the survey did not find ([`PhoneRow::missing`]).
pub const MISSING: &str = "missing";

impl PhoneRow {
    /// The row of a phone a running connector sees (its inventory's preferred route): what
    /// the survey lists for it, without a fresh probe (the operator console).
    pub fn of_attached(p: &inventory::AttachedPhone) -> PhoneRow {
        PhoneRow {
            serial: p.serial.clone(),
            serialno: p.serialno.clone(),
            transport_id: p.transport_id,
            warning: None,
            model: p.model.clone(),
            state: p.state.clone(),
            transport: p.transport.clone(),
            adb_server: p.adb_server.clone(),
            paired: p.wifi_paired,
            dialled: None,
            missing: None,
            unknown_why: None,
            server_down: None,
        }
    }

    /// The state as `devices` and `check` print it: adb's word, or [`MISSING`].
    pub fn state_word(&self) -> &str {
        if self.missing.is_some() {
            MISSING
        } else if self.unknown_why.is_some() || self.server_down.is_some() {
            UNKNOWN
        } else {
            self.state.as_str()
        }
    }

    /// How the phone is reached, as a running connector routes it (the fix depends on it).
    pub fn route_kind(&self) -> RouteKind {
        match RouteKind::of(self.adb_server.as_deref(), &self.transport) {
            RouteKind::Direct if self.paired => RouteKind::WifiPaired,
            kind => kind,
        }
    }

    /// The fix for the phone, `None` when it is usable: what `check` prints under its
    /// PROBLEM line ([`check::dialled_problem`] when its address was dialled again, else
    /// [`check::fix_for`]).
    pub fn fix(&self) -> Option<String> {
        if self.missing.is_some() {
            return Some(check::missing_fix(self));
        }
        if let Some(servers) = &self.server_down {
            return Some(format!(
                "start adb server {servers} again (`adb -P PORT start-server`, or the service \
                 that runs it); the binding is kept and the phone is listed once it answers"
            ));
        }
        if self.unknown_why.is_some() {
            return Some(
                "run check with the connector's data dir (--data-dir, as the service user or \
                 root) to learn whether the phone trusts the connector's key"
                    .into(),
            );
        }
        match &self.dialled {
            Some(dialled) => Some(check::dialled_problem(self, dialled).1),
            None => check::fix_for(&self.state, self.route_kind()),
        }
    }
}

/// Gives every row whose serial other phones report too its warning, as the survey does
/// (the console's rows come from the connector's inventory).
pub fn warn_shared(rows: &mut [PhoneRow]) {
    warn_shared_serials(rows);
}

/// What a direct phone's address did on a plain TCP connect ([`dial`]), to tell an operator
/// why the phone reads `offline` (adb's state for a transport without `CNXN`, AOSP
/// `transport.cpp` kCsOffline, whatever the cause).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dialled {
    /// The connection was refused (`ECONNREFUSED`): nothing listens on that port.
    Refused,
    /// No answer within [`DIAL_DEADLINE`]: the host is off or off the network, the address is
    /// wrong, or a firewall drops the connection.
    NoAnswer,
    /// The connect failed otherwise (unknown host name, no route to the host): the OS's text.
    Unreachable(String),
    /// The port accepts connections, but the adb handshake (`CNXN`) did not complete: adbd
    /// hung or restarting, or not adbd on that port.
    NoAdbAnswer,
}

impl Dialled {
    /// What was seen at `addr` (`HOST:PORT`), for `check`'s PROBLEM line and `devices`.
    pub fn describe(&self, addr: &str) -> String {
        match self {
            Dialled::Refused => format!("connection refused: nothing listens on {addr}"),
            Dialled::NoAnswer => format!(
                "no answer: {addr} did not answer the connection within {} s",
                DIAL_DEADLINE.as_secs()
            ),
            Dialled::Unreachable(why) => format!("cannot connect to {addr}: {why}"),
            Dialled::NoAdbAnswer => {
                "accepts connections, but the adb handshake did not complete".into()
            }
        }
    }
}

/// Deadline of [`dial`]'s TCP connect.
pub const DIAL_DEADLINE: Duration = Duration::from_secs(3);

/// Opens (and closes) a TCP connection to `addr`, sending nothing: what the address does,
/// for a phone whose adb connect failed (the adb error says `offline` whatever happened).
pub async fn dial(addr: &str) -> Dialled {
    match tokio::time::timeout(DIAL_DEADLINE, tokio::net::TcpStream::connect(addr)).await {
        Err(_) => Dialled::NoAnswer,
        Ok(Ok(_)) => Dialled::NoAdbAnswer,
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => Dialled::Refused,
        Ok(Err(e)) => Dialled::Unreachable(e.to_string()),
    }
}

/// Everything the configured adb servers and direct phones show now.
#[derive(Debug, Clone, Default)]
pub struct Survey {
    /// One report per configured adb server, in config order.
    pub servers: Vec<ServerReport>,
    /// Every phone seen, sorted by serial then adb server.
    pub phones: Vec<PhoneRow>,
    /// adb servers listed again under another name, asked once ([`same_server::distinct`]).
    pub same_servers: Vec<SameServer>,
}

/// Asks every adb server of `config` (once each, however many names it is given under) and
/// probes every direct phone and every phone paired over Wi-Fi (`remembered.paired`, at its
/// last address; one a `--device` already names is probed once), each under
/// [`SURVEY_DEADLINE`]; phones reporting one serial are named as the connector names them
/// (`remembered.names`) and carry a warning. Never fails: an unreachable server is a [`ServerReport`] with an error.
pub async fn survey(config: &SurveyConfig, remembered: &bindings::Remembered) -> Survey {
    let paired = &remembered.paired;
    // One inventory for the whole survey, naming phones that share a serial as the connector
    // does (its recorded names first).
    let inv = Inventory::with_names(NameBook::new(remembered.names.clone(), None));
    let mut out = Survey::default();
    let (servers, same_servers) = same_server::distinct(&config.adb_servers).await;
    out.same_servers = same_servers;
    for (rank, spec) in servers.iter().enumerate() {
        let source = inventory::Source {
            label: spec.name.clone(),
            rank,
        };
        let client = AdbServerClient::new(spec.addr.clone());
        let version = match client.version().await {
            Ok(v) => Ok(v),
            Err(e) => Err(e.to_string()),
        };
        if version.is_ok() {
            let phones = server_phones(&inv, &client, &source, remembered);
            match tokio::time::timeout(SURVEY_DEADLINE, phones).await {
                Ok(Ok(rows)) => out.phones.extend(rows),
                Ok(Err(e)) => tracing::warn!(server = %spec.name, error = %e, "device list failed"),
                Err(_) => tracing::warn!(server = %spec.name, "device list timed out"),
            }
        }
        out.servers.push(ServerReport {
            name: spec.name.clone(),
            version,
        });
    }
    let key = key_access(config.data_dir.as_deref()).await;
    for addr in &config.direct_devices {
        let mut row = direct_phone(&inv, addr, &key).await;
        if row.state != DeviceState::Device {
            // Not answering: the name the running connector knows it by beats the address
            // (its binding is kept under that name).
            if let Some(name) = remembered
                .direct
                .iter()
                .find(|d| d.transport == row.transport)
            {
                row.serial = name.serial.clone();
                row.serialno = name.serialno.clone();
            }
        }
        out.phones.push(row);
    }
    for phone in paired
        .iter()
        .filter(|p| !config.direct_devices.contains(&p.addr))
    {
        let mut row = direct_phone(&inv, &phone.addr, &key).await;
        if row.state != DeviceState::Device {
            // Not answering: the name remembered at pairing beats the address.
            row.serial = phone.serial.clone();
        }
        row.paired = true;
        out.phones.push(row);
    }
    let down: Vec<String> = out
        .servers
        .iter()
        .filter(|r| r.version.is_err())
        .map(|r| r.name.clone())
        .collect();
    out.phones
        .extend(missing_phones(&out.phones, remembered, &down));
    out.phones
        .sort_by(|a, b| (&a.serial, &a.adb_server).cmp(&(&b.serial, &b.adb_server)));
    warn_shared_serials(&mut out.phones);
    out
}

/// The bound phones no row of `found` names: gone from every adb server and address
/// ([`PhoneRow::missing`]), listed from the binding with the model seen at the claim and,
/// when the running connector saw it, its last transport and adb server.
fn missing_phones(
    found: &[PhoneRow],
    remembered: &bindings::Remembered,
    down: &[String],
) -> Vec<PhoneRow> {
    let mut out: Vec<PhoneRow> = remembered
        .bound
        .keys()
        .filter(|serial| !found.iter().any(|p| &&p.serial == serial))
        .map(|serial| {
            let seen = remembered.seen.iter().find(|p| &p.serial == serial);
            let direct = remembered.direct.iter().find(|p| &p.serial == serial);
            let paired = remembered.paired.iter().find(|p| &p.serial == serial);
            let transport = match (seen, direct, paired) {
                (Some(p), _, _) => p.transport.clone(),
                (None, Some(d), _) => d.transport.clone(),
                (None, None, Some(p)) => format!("tcp:{}", p.addr),
                (None, None, None) => String::new(),
            };
            let model = match remembered.bound_models.get(serial) {
                Some(m) if !m.is_empty() => m.clone(),
                _ => seen.map(|p| p.model.clone()).unwrap_or_default(),
            };
            let serialno = seen
                .map(|p| p.serialno.clone())
                .or_else(|| direct.map(|d| d.serialno.clone()))
                .unwrap_or_else(|| match serial.rsplit_once('#') {
                    Some((base, n)) if n.chars().all(|c| c.is_ascii_digit()) => base.to_string(),
                    _ => serial.clone(),
                });
            // Carried by a server that did not answer (the one the connector saw it on; with
            // no reading, any down server unless the phone has its own address): not gone.
            let server_down = match (seen, direct.is_some() || paired.is_some()) {
                (Some(p), _) => down.contains(&p.adb_server).then(|| p.adb_server.clone()),
                (None, false) if !down.is_empty() => Some(down.join(", ")),
                _ => None,
            };
            let missing = match server_down {
                Some(_) => None,
                None => remembered.bound.get(serial).cloned(),
            };
            PhoneRow {
                serial: serial.clone(),
                serialno,
                transport_id: None,
                warning: None,
                model,
                state: DeviceState::Gone,
                transport,
                adb_server: seen.map(|p| p.adb_server.clone()),
                paired: paired.is_some(),
                dialled: None,
                missing,
                unknown_why: None,
                server_down,
            }
        })
        .collect();
    out.sort_by(|a, b| a.serial.cmp(&b.serial));
    out
}

/// Gives every row whose serial other phones report too its warning (the names are the
/// operator's own listing: whole).
fn warn_shared_serials(rows: &mut [PhoneRow]) {
    let mut names: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for r in rows.iter() {
        let of = names.entry(r.serialno.clone()).or_default();
        if !of.contains(&r.serial) {
            of.push(r.serial.clone());
        }
    }
    for r in rows.iter_mut() {
        let Some(of) = names.get(&r.serialno).filter(|n| n.len() > 1) else {
            continue;
        };
        let mut of = of.clone();
        of.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
        r.warning = Some(format!(
            "the serial is not unique: {} phones report {} (told apart by their Android ID; \
             claim each by its name: {})",
            of.len(),
            r.serialno,
            of.join(", ")
        ));
    }
}

/// The phones of one server: online ones probed for `ro.serialno`/model and named (as the
/// connector's tracker does, into `inv`), the others as adb lists them.
async fn server_phones(
    inv: &Inventory,
    client: &AdbServerClient,
    source: &inventory::Source,
    remembered: &bindings::Remembered,
) -> Result<Vec<PhoneRow>, AdbError> {
    let list = client.devices_l().await?;
    inventory::refresh_once(inv, client, source, &list).await;
    let probed = inv.routes();
    Ok(parse_devices_l(&list)
        .into_iter()
        .map(|e| {
            let found = probed.iter().find(|p| {
                p.adb_server.as_deref() == Some(source.label.as_str())
                    && p.transport == e.serial
                    && p.transport_id == e.transport_id
                    && p.identified
                    && p.state == DeviceState::Device
            });
            // Not answering now (`offline`: adb lists the transport, no model): the running
            // connector's last reading names it, so its model and binding show.
            let last = remembered
                .seen
                .iter()
                .find(|p| p.adb_server == source.label && p.transport == e.serial);
            let (serial, serialno, mut model) = match (found, last) {
                (Some(p), _) => (p.serial.clone(), p.serialno.clone(), p.model.clone()),
                (None, Some(p)) => (p.serial.clone(), p.serialno.clone(), p.model.clone()),
                (None, None) => (
                    e.serial.clone(),
                    e.serial.clone(),
                    e.model.clone().unwrap_or_default(),
                ),
            };
            if model.is_empty() {
                model = remembered
                    .bound_models
                    .get(&serial)
                    .cloned()
                    .unwrap_or_default();
            }
            PhoneRow {
                serial,
                serialno,
                transport_id: e.transport_id,
                warning: None,
                model,
                state: e.state,
                transport: e.serial,
                adb_server: Some(source.label.clone()),
                paired: false,
                dialled: None,
                missing: None,
                unknown_why: None,
                server_down: None,
            }
        })
        .collect())
}

/// The connector's adb key as a survey may use it.
enum KeyAccess {
    /// The key file, readable.
    Usable(HostKeyFile),
    /// The data dir holds no key yet (the connector never dialled a phone from it): no phone
    /// can trust it, so a refusal is what the phone says.
    Absent,
    /// The key cannot be used, and a phone refusing the survey's throwaway key may well trust
    /// it: why (no data dir, permission denied).
    Unknown(String),
}

/// How the connector's adb key in `data_dir` can be used (opened once, never created).
async fn key_access(data_dir: Option<&std::path::Path>) -> KeyAccess {
    let Some(dir) = data_dir else {
        return KeyAccess::Unknown(
            "no data dir configured (--data-dir), where the connector keeps the adb key the \
             phone may trust"
                .into(),
        );
    };
    let path = dir.join(crate::daemon::ADB_KEY_FILE);
    match tokio::fs::File::open(&path).await {
        Ok(_) => KeyAccess::Usable(HostKeyFile::new(path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => KeyAccess::Absent,
        Err(e) => KeyAccess::Unknown(format!(
            "the connector's adb key {} cannot be read ({e})",
            path.display()
        )),
    }
}

/// A direct-transport phone: identity when it answers; `unauthorized` when it refuses the
/// connector's key; `offline` otherwise, with what its address does when [`dial`]led again.
/// The connector's adb key (in the data dir, when one is configured) is used only if it
/// exists (a survey never creates it); a refusal while it cannot be used is an unknown state
/// ([`PhoneRow::unknown_why`]), never `unauthorized` with the prompt's fix.
async fn direct_phone(inv: &Inventory, addr: &str, key: &KeyAccess) -> PhoneRow {
    let transport = format!("tcp:{addr}");
    let link = match key {
        KeyAccess::Usable(key) => DeviceLink::direct_with_key(addr, key.clone()),
        KeyAccess::Absent | KeyAccess::Unknown(_) => DeviceLink::direct(addr),
    };
    let state = match tokio::time::timeout(
        SURVEY_DEADLINE,
        inventory::attach_direct(inv, &link, &transport),
    )
    .await
    {
        Ok(Ok(p)) => {
            return PhoneRow {
                serial: p.serial,
                serialno: p.serialno,
                transport_id: None,
                warning: None,
                model: p.model,
                state: DeviceState::Device,
                transport,
                adb_server: None,
                paired: false,
                dialled: None,
                missing: None,
                unknown_why: None,
                server_down: None,
            }
        }
        Ok(Err(AdbError::DeviceUnauthorized | AdbError::NotPaired)) => DeviceState::Unauthorized,
        _ => DeviceState::Offline,
    };
    let dialled = match state {
        DeviceState::Offline => Some(dial(addr).await),
        _ => None,
    };
    let unknown_why = match (&state, key) {
        (DeviceState::Unauthorized, KeyAccess::Unknown(why)) => Some(why.clone()),
        _ => None,
    };
    PhoneRow {
        serial: transport.clone(),
        serialno: transport.clone(),
        transport_id: None,
        warning: None,
        model: String::new(),
        state,
        transport,
        adb_server: None,
        paired: false,
        dialled,
        missing: None,
        unknown_why,
        server_down: None,
    }
}

/// `check` with the staged configuration (`config_file`, then `settings`): prints the report
/// on stdout. The phones are surveyed whenever the settings say where they are, even when the
/// rest of the configuration (e.g. the API key `serve` needs) is a problem. Errors: anything
/// needs the operator (exit status 1).
pub async fn run_check(
    config_file: Option<&std::path::Path>,
    settings: crate::config::Settings,
) -> anyhow::Result<()> {
    let (text, ok) = match crate::config::stack(config_file, settings) {
        Ok(stacked) => check::run(stacked).await,
        Err(e) => check::report(&Err(vec![e]), None),
    };
    print!("{text}");
    if !ok {
        anyhow::bail!("check found problems (see the lines marked PROBLEM)");
    }
    Ok(())
}

/// `devices [--json]` with the staged configuration: prints the phones (the paired ones
/// included) and their bound channels on stdout. Needs no API key and no data dir: without
/// one the bound channels (and the phones paired over Wi-Fi, which the store remembers) are
/// unknown, said on stderr and in the listing ([`devices::to_table`], [`devices::to_json`]).
/// Errors (exit status 1): the config is invalid, the bound channels cannot be read, or no
/// configured adb server answered (the listing, printed first, then lacks their phones).
pub async fn run_devices(
    config_file: Option<&std::path::Path>,
    settings: crate::config::Settings,
    as_json: bool,
) -> anyhow::Result<()> {
    let config = crate::config::stack(config_file, settings)?.survey_config()?;
    let dir_exists = match &config.data_dir {
        Some(dir) => tokio::fs::try_exists(dir).await.unwrap_or(true),
        None => false,
    };
    let remembered = match &config.data_dir {
        Some(dir) if !dir_exists => {
            tracing::warn!(
                "the data dir {} does not exist (--data-dir, data_dir, XAGENT_ADB_DATA_DIR): the \
                 bound channels are unknown and phones paired over Wi-Fi are not listed",
                dir.display()
            );
            None
        }
        Some(dir) => Some(bindings::read(dir).await?),
        None => {
            tracing::warn!(
                "no data dir configured (--data-dir, data_dir, XAGENT_ADB_DATA_DIR): the bound \
                 channels are unknown and phones paired over Wi-Fi are not listed"
            );
            None
        }
    };
    let seen = survey(&config, remembered.as_ref().unwrap_or(&Default::default())).await;
    let bound = remembered.as_ref().map(|r| &r.bound);
    let releases = remembered
        .as_ref()
        .map(|r| r.releases.clone())
        .unwrap_or_default();
    for same in &seen.same_servers {
        tracing::warn!("{}", same.describe());
    }
    for s in &seen.servers {
        if let Err(e) = &s.version {
            tracing::warn!(server = %s.name, error = %e, "adb server not reachable; its phones are not listed");
        }
    }
    if let Some(r) = &remembered {
        let mut lost: Vec<_> = r.fleet_lost.keys().collect();
        lost.sort();
        for serial in lost {
            tracing::warn!(
                serial_hint = %crate::protocol::descriptor::mask_serial(serial),
                channel = %r.bound.get(serial).map_or("-", String::as_str),
                "a binding is lost in the fleet (another box holds the phone, or its key went): every tool on it is refused; fix: auth.logout on that channel"
            );
        }
    }
    let mut warned = std::collections::HashSet::new();
    for p in &seen.phones {
        // Logs never carry a whole serial; the listing below names the phones.
        if p.warning.is_some() && warned.insert(p.serialno.clone()) {
            tracing::warn!(
                serial_hint = %crate::protocol::descriptor::mask_serial(&p.serialno),
                "the serial is not unique: several phones report it; they are listed as the serial and the serial followed by #2, #3 …, told apart by their Android ID"
            );
        }
        if let Some(channel) = &p.missing {
            tracing::warn!(
                serial_hint = %crate::protocol::descriptor::mask_serial(&p.serial),
                channel = %channel,
                "a bound phone is missing: no adb server lists it and no address reaches it; fix: {}",
                p.fix().unwrap_or_default()
            );
        }
        if let Some(dialled) = &p.dialled {
            let (what, fix) = check::dialled_problem(p, dialled);
            tracing::warn!("phone {} is offline: {what}; fix: {fix}", p.transport);
        }
    }
    if as_json {
        println!("{:#}", devices::to_json(&seen.phones, bound, &releases));
    } else {
        print!("{}", devices::to_table(&seen.phones, bound, &releases));
    }
    // Every adb server down: the listing lacks their phones, which an empty table would hide
    // from a script (exit status 1, as any error).
    let down: Vec<String> = seen
        .servers
        .iter()
        .filter_map(|s| s.version.as_ref().err().map(|e| format!("{}: {e}", s.name)))
        .collect();
    if !seen.servers.is_empty() && down.len() == seen.servers.len() {
        anyhow::bail!(
            "no adb server answered ({}); their phones are not listed: start the adb server \
             (`adb -P PORT start-server`, or the adb-server service), or correct --adb-server",
            down.join("; ")
        );
    }
    Ok(())
}

/// `devices --fleet [--json]`: every box's phones as the fleet store holds them
/// ([`crate::fleet::view`]), printed on stdout (JSON: an array of `{"box", "base_url",
/// "serial", "model", "state", "bound_on"}`). Needs `--fleet-etcd`, nothing else. Errors: no
/// store configured, a bad store setting, or etcd not reachable.
pub async fn run_fleet_devices(
    config_file: Option<&std::path::Path>,
    settings: crate::config::Settings,
    as_json: bool,
) -> anyhow::Result<()> {
    let stacked = crate::config::stack(config_file, settings)?;
    let Some((endpoints, tls)) = stacked.fleet_store()? else {
        anyhow::bail!(
            "devices --fleet reads the fleet store: name it with --fleet-etcd URL (fleet_etcd, XAGENT_ADB_FLEET_ETCD)"
        );
    };
    let client = crate::fleet::etcd::EtcdClient::new(endpoints, tls);
    let phones = crate::fleet::view::read(&client).await?;
    if as_json {
        println!("{:#}", serde_json::to_value(&phones)?);
    } else {
        print!("{}", crate::fleet::view::to_table(&phones));
    }
    Ok(())
}
