//! What the connector remembers about phones, for `devices` and `check`: the bound channels
//! by phone serial, and the phones paired over Wi-Fi (flows `adb_pair_code`, `adb_qr_pair`),
//! which no adb server lists and no `--device` names.
//!
//! The store is SQLite in `locking_mode=EXCLUSIVE` ([`crate::store`]): while `serve` runs, no
//! other process can read it. So a running connector answers on a Unix socket in its data dir
//! ([`SOCKET_FILE`], mode 0600 inside the 0700 data dir: only the service user, or root, may
//! ask), and when no connector holds the data dir lock, the store is read directly.
//! The socket speaks one message: on connect, the connector writes
//! `{"bindings":[{"connector_channel_id":…,"serial":…},…],"paired":[{"serial":…,"addr":…},…]}`
//! and closes (`paired` is absent from older connectors' answers: none then; so is
//! `releases`, the phones' hand-backs: [`crate::connector::release::ReleaseView`], and
//! `direct`, the names of the direct phones the connector has seen: [`DirectName`], and
//! `seen`, the phones behind adb servers it has identified: [`SeenPhone`]; each binding
//! carries the `model` seen at its claim, and `fleet_lost` when the fleet fenced it).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::connector::release::ReleaseView;
use crate::connector::Connector;
use crate::store::phone_names::NameRecord;

/// The socket's file name in the data dir.
pub const SOCKET_FILE: &str = "operator.sock";
/// Deadline of one exchange on the socket (either side).
pub const SOCKET_DEADLINE: Duration = Duration::from_secs(5);
/// Largest answer read from the socket (bytes): 4096 channels × ~100 bytes fit.
const MAX_ANSWER: u64 = 1024 * 1024;

/// One binding on the wire (`model`: `ro.product.model` at the claim, absent from older
/// connectors' answers).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Binding {
    connector_channel_id: String,
    serial: String,
    #[serde(default)]
    model: String,
    /// Why the fleet fenced this binding (`fleet_binding_lost`: another box holds the phone,
    /// or its key went), absent while it holds (and from older connectors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fleet_lost: Option<String>,
}

/// A phone behind an adb server that the running connector has identified (online once),
/// whatever its state now: a survey that finds it `offline` (listed by its transport, no
/// model) still names it, with its model and so its binding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeenPhone {
    /// The adb server's label.
    pub adb_server: String,
    /// adb's serial of the transport (`R58N…`, `127.0.0.1:5555`).
    pub transport: String,
    /// Its name (`ro.serialno`, or `ro.serialno#N`).
    pub serial: String,
    /// `ro.serialno`.
    pub serialno: String,
    /// `ro.product.model` at the last reading.
    pub model: String,
}

/// A phone paired over Wi-Fi, as remembered: its `ro.serialno` and the last `HOST:PORT` of
/// its wireless-debugging (`STLS`) port (a running connector stores a new one it finds by
/// mDNS).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairedPhone {
    /// `ro.serialno`.
    pub serial: String,
    /// Last known `HOST:PORT` of its connect port.
    pub addr: String,
}

/// A direct-transport phone the running connector has identified: its transport
/// (`tcp:HOST:PORT`) and the name a claim takes, so a survey that cannot reach it now (an
/// unplugged phone) still lists it under that name, and with its binding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirectName {
    /// `tcp:HOST:PORT`.
    pub transport: String,
    /// Its name (`ro.serialno`, or `ro.serialno#N`).
    pub serial: String,
    /// `ro.serialno`.
    pub serialno: String,
}

/// The socket's message.
#[derive(Debug, Serialize, Deserialize)]
struct Answer {
    bindings: Vec<Binding>,
    #[serde(default)]
    paired: Vec<PairedPhone>,
    /// The names of phones sharing a serial (absent from older connectors' answers).
    #[serde(default)]
    names: Vec<NameRecord>,
    /// Phones being handed back and their last release (absent from older connectors).
    #[serde(default)]
    releases: Vec<ReleaseView>,
    /// The direct phones the connector has identified (absent from older connectors).
    #[serde(default)]
    direct: Vec<DirectName>,
    /// The phones behind adb servers the connector has identified (absent from older
    /// connectors).
    #[serde(default)]
    seen: Vec<SeenPhone>,
}

/// What [`read`] found.
#[derive(Debug, Clone, Default)]
pub struct Remembered {
    /// serial → bound channel id.
    pub bound: HashMap<String, String>,
    /// serial → `ro.product.model` at the claim, of the bound phones (may be empty).
    pub bound_models: HashMap<String, String>,
    /// Phones paired over Wi-Fi, sorted by serial.
    pub paired: Vec<PairedPhone>,
    /// The recorded names of phones sharing a serial (field bug 50), so the survey names
    /// them as the connector does.
    pub names: Vec<NameRecord>,
    /// serial → its hand-back (`[release]`): being released, or how the last one ended.
    pub releases: HashMap<String, ReleaseView>,
    /// The direct phones a running connector has identified (none from the store, which
    /// keeps no address of a `--device` phone).
    pub direct: Vec<DirectName>,
    /// The phones behind adb servers a running connector has identified (none from the store).
    pub seen: Vec<SeenPhone>,
    /// serial → why the fleet fenced its binding (`fleet_binding_lost`), from a running
    /// connector (none from the store: a stopped box re-checks its keys when it starts).
    pub fleet_lost: HashMap<String, String>,
}

fn releases_by_serial(views: Vec<ReleaseView>) -> HashMap<String, ReleaseView> {
    views.into_iter().map(|v| (v.serial.clone(), v)).collect()
}

fn paired_of(records: Vec<crate::store::WirelessPhoneRecord>) -> Vec<PairedPhone> {
    let mut paired: Vec<PairedPhone> = records
        .into_iter()
        .map(|r| PairedPhone {
            serial: r.serial,
            addr: r.addr,
        })
        .collect();
    paired.sort_by(|a, b| a.serial.cmp(&b.serial));
    paired
}

/// Errors reading the bindings.
#[derive(Debug, thiserror::Error)]
pub enum BindingsError {
    /// The socket or the store failed.
    #[error("cannot read the bound channels: {0}")]
    Read(String),
}

/// Binds [`SOCKET_FILE`] in `data_dir` (a stale file from a killed process is replaced: the
/// caller holds the data dir lock) and answers until `shutdown`. Errors: the bind failed.
pub fn spawn(
    data_dir: &Path,
    connector: Arc<Connector>,
    lifecycle: &crate::lifecycle::Lifecycle,
) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let path = data_dir.join(SOCKET_FILE);
    let _ = std::fs::remove_file(&path);
    let listener = tokio::net::UnixListener::bind(&path)?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    let shutdown: CancellationToken = lifecycle.shutdown().clone();
    let tasks = lifecycle.clone();
    lifecycle.spawn(async move {
        loop {
            let mut stream = tokio::select! {
                _ = shutdown.cancelled() => break,
                r = listener.accept() => match r {
                    Ok((s, _)) => s,
                    Err(e) => {
                        tracing::warn!(error = %e, "operator socket accept failed");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
            };
            let mut bindings: Vec<Binding> = connector
                .inspect(|s| s.binding_records())
                .into_iter()
                .map(|b| Binding {
                    fleet_lost: connector.fleet().and_then(|f| f.lost(&b.serial)),
                    connector_channel_id: b.channel_id,
                    serial: b.serial,
                    model: b.model,
                })
                .collect();
            bindings.sort_by(|a, b| a.serial.cmp(&b.serial));
            let names = connector.inventory().names().all();
            let releases = connector.release_views();
            let direct = direct_names(&connector);
            let seen = seen_phones(&connector);
            let store = connector.store().clone();
            tasks.spawn(async move {
                // The store's queue answers in order; a failed read lists no paired phone.
                let paired =
                    match tokio::time::timeout(SOCKET_DEADLINE, store.wireless_phone_all()).await {
                        Ok(Ok(records)) => paired_of(records),
                        _ => Vec::new(),
                    };
                let body = serde_json::to_vec(&Answer {
                    bindings,
                    paired,
                    names,
                    releases,
                    direct,
                    seen,
                })
                .unwrap_or_default();
                let _ = tokio::time::timeout(SOCKET_DEADLINE, stream.write_all(&body)).await;
            });
        }
        let _ = std::fs::remove_file(&path);
    });
    Ok(())
}

/// The direct phones `connector`'s inventory has identified (online once), whatever their
/// state now.
fn direct_names(connector: &Connector) -> Vec<DirectName> {
    connector
        .inventory()
        .list()
        .iter()
        .filter(|p| p.adb_server.is_none() && p.serial != p.transport)
        .map(|p| DirectName {
            transport: p.transport.clone(),
            serial: p.serial.clone(),
            serialno: p.serialno.clone(),
        })
        .collect()
}

/// The phones behind adb servers `connector`'s inventory has identified, whatever their
/// state now.
fn seen_phones(connector: &Connector) -> Vec<SeenPhone> {
    connector
        .inventory()
        .list()
        .iter()
        .filter(|p| p.identified)
        .filter_map(|p| {
            Some(SeenPhone {
                adb_server: p.adb_server.clone()?,
                transport: p.transport.clone(),
                serial: p.serial.clone(),
                serialno: p.serialno.clone(),
                model: p.model.clone(),
            })
        })
        .collect()
}

/// The bound channels and the paired phones, from the running connector's socket, else from
/// the store in `data_dir` (none when it does not exist yet). Errors: a connector holds the
/// store but its socket does not answer, or the store cannot be read.
pub async fn read(data_dir: &Path) -> Result<Remembered, BindingsError> {
    let err = |e: &dyn std::fmt::Display| BindingsError::Read(e.to_string());
    let socket = data_dir.join(SOCKET_FILE);
    if let Ok(Ok(stream)) =
        tokio::time::timeout(SOCKET_DEADLINE, tokio::net::UnixStream::connect(&socket)).await
    {
        let mut body = Vec::new();
        tokio::time::timeout(
            SOCKET_DEADLINE,
            stream.take(MAX_ANSWER).read_to_end(&mut body),
        )
        .await
        .map_err(|e| err(&e))?
        .map_err(|e| err(&e))?;
        let answer: Answer = serde_json::from_slice(&body).map_err(|e| err(&e))?;
        return Ok(Remembered {
            fleet_lost: answer
                .bindings
                .iter()
                .filter_map(|b| Some((b.serial.clone(), b.fleet_lost.clone()?)))
                .collect(),
            bound_models: answer
                .bindings
                .iter()
                .map(|b| (b.serial.clone(), b.model.clone()))
                .collect(),
            bound: answer
                .bindings
                .into_iter()
                .map(|b| (b.serial, b.connector_channel_id))
                .collect(),
            paired: answer.paired,
            names: answer.names,
            releases: releases_by_serial(answer.releases),
            direct: answer.direct,
            seen: answer.seen,
        });
    }
    let db = data_dir.join(crate::store::data_dir::DB_FILE);
    // An empty or foreign file is refused as `serve` refuses it (never opened: SQLite would
    // make a fresh database of an empty file).
    match crate::store::fault::check_existing(&db) {
        Ok(true) => {}
        Ok(false) => return Ok(Remembered::default()),
        Err(fault) => return Err(err(&fault)),
    }
    // No socket answered: take the data dir lock so a connector starting now waits for it,
    // then read the store (blocking SQLite, on the blocking pool).
    let dir = data_dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let _lock = crate::store::data_dir::lock(&dir).map_err(|e| err(&e))?;
        // Read-write open: a WAL database left by a killed connector needs recovery first.
        let conn = rusqlite::Connection::open(&db).map_err(|e| err(&e))?;
        let mut st = conn
            .prepare(crate::store::sql::BINDING_ALL)
            .map_err(|e| err(&e))?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(1)?,
                    (r.get::<_, String>(0)?, r.get::<_, String>(2)?),
                ))
            })
            .map_err(|e| err(&e))?;
        let rows = rows.collect::<Result<Vec<_>, _>>().map_err(|e| err(&e))?;
        let bound_models = rows
            .iter()
            .map(|(serial, (_, model))| (serial.clone(), model.clone()))
            .collect();
        let bound = rows
            .into_iter()
            .map(|(serial, (channel, _))| (serial, channel))
            .collect();
        let mut st = conn
            .prepare(crate::store::sql::WIRELESS_ALL)
            .map_err(|e| err(&e))?;
        let rows = st
            .query_map([], |r| {
                Ok(crate::store::WirelessPhoneRecord {
                    serial: r.get(0)?,
                    guid: r.get(1)?,
                    addr: r.get(2)?,
                    paired_ms: r.get(3)?,
                })
            })
            .map_err(|e| err(&e))?;
        let records = rows.collect::<Result<Vec<_>, _>>().map_err(|e| err(&e))?;
        Ok(Remembered {
            bound,
            paired: paired_of(records),
            names: stored_names(&conn),
            bound_models,
            releases: releases_by_serial(stored_releases(&conn)),
            direct: Vec::new(),
            seen: Vec::new(),
            fleet_lost: HashMap::new(),
        })
    })
    .await
    .map_err(|e| err(&e))?
}

/// The phones pending release and the last releases of a store; none from a data dir older
/// than the tables.
fn stored_releases(conn: &rusqlite::Connection) -> Vec<ReleaseView> {
    let pending = crate::store::release::pending_of(conn).unwrap_or_default();
    let outcomes = crate::store::release::outcomes_of(conn).unwrap_or_default();
    crate::connector::release::views_of(pending, outcomes)
}

/// The recorded phone names of a store; none from a data dir older than the table.
fn stored_names(conn: &rusqlite::Connection) -> Vec<NameRecord> {
    let Ok(mut st) = conn.prepare(crate::store::sql::PHONE_NAME_ALL) else {
        return Vec::new();
    };
    st.query_map([], |r| {
        Ok(NameRecord {
            serialno: r.get(0)?,
            second: r.get(1)?,
            name: r.get(2)?,
        })
    })
    .map(|rows| rows.flatten().collect())
    .unwrap_or_default()
}
