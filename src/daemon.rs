//! Process assembly of `serve`: the connector and its shutdown (`demo` in [`crate::demo`]).
//!
//! Every task is tracked by one [`Lifecycle`] hanging off the shutdown token. On SIGTERM
//! (`shutdown`): accepting stops, sockets stop reading, tool calls in flight get up to
//! [`DRAIN_DEADLINE`] to finish and have their acks written, sockets close, calls still running
//! then are abandoned (journaled `running` → `tool_call_interrupted` on a repeat), the store
//! drains its queue and closes SQLite, and `serve` returns `Ok` (exit status 0).

pub mod reload;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio_util::sync::CancellationToken;

use crate::adb::{AdbServerClient, HostKeyFile};
use crate::config::ServeConfig;
use crate::connector::{Connector, ConnectorConfig};
use crate::device::inventory::{self, Inventory};
use crate::file_cache::FileCache;
use crate::lifecycle::{Lifecycle, DRAIN_DEADLINE};
use crate::server::{router, AppState};
use crate::store::{StorageFault, Store};

/// How long a side-effecting call stays in the journal (a repeat later than this runs again).
pub const JOURNAL_KEEP: Duration = Duration::from_secs(24 * 3600);
/// The connector's adb key in the data dir (PKCS#8 PEM, 0600; see [`crate::adb::host_key`]).
pub const ADB_KEY_FILE: &str = "adbkey";
/// How often expired files and journal entries are removed.
pub const FILE_CLEAN_PERIOD: Duration = Duration::from_secs(60);

/// Runs the connector until `shutdown`, then drains (see the module doc). Prints
/// `listening on http://ADDR` to stdout once bound (tests and the demo read it). Errors:
/// start-up failures (listen address, data dir, store).
pub async fn serve(config: ServeConfig, shutdown: CancellationToken) -> anyhow::Result<()> {
    serve_with_reload(config, None, shutdown).await
}

/// [`serve`], reloading the API key, claim codes, device profiles and TLS certificate through
/// `reloader` on each SIGHUP ([`reload`]). With `config.tls` the listener serves HTTPS/WSS and
/// prints `listening on https://ADDR`; a plain listener on a non-loopback address logs a
/// warning (the API key would cross the network in clear).
pub async fn serve_with_reload(
    config: ServeConfig,
    reloader: Option<reload::Reloader>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let listener = bind_listen(config.listen).await?;
    serve_on(listener, config, reloader, shutdown).await
}

/// Binds the `--listen` address. Errors: it cannot be bound (in use, not local, no
/// permission), named with the flag.
pub async fn bind_listen(listen: SocketAddr) -> anyhow::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("cannot listen on {listen} (--listen)"))
}

/// [`serve_with_reload`] on a listener bound already ([`bind_listen`]; `config.listen` is
/// not bound again).
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    config: ServeConfig,
    reloader: Option<reload::Reloader>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let tls = config
        .tls
        .as_ref()
        .map(crate::server::tls::TlsSlot::load)
        .transpose()?;
    let addr = listener.local_addr()?;
    let lifecycle = Lifecycle::new(shutdown);
    let scheme = if tls.is_some() { "https" } else { "http" };
    let state = build_state(&config, &lifecycle, format!("{scheme}://{addr}")).await?;
    let store = state.connector.store().clone();
    if let Some(reloader) = reloader {
        let targets = reload::Targets {
            connector: Arc::clone(&state.connector),
            api_key: state.api_key.clone(),
            tls: tls.clone(),
        };
        reload::spawn(&lifecycle, reloader, &config, targets)
            .context("cannot install the SIGHUP handler")?;
    }
    // Said before the address line, which tests and scripts wait for.
    if tls.is_none() && !addr.ip().is_loopback() {
        let console = if config.operator_key.is_some() {
            " and the operator console's password (HTTP Basic auth on /console)"
        } else {
            ""
        };
        tracing::warn!(%addr, "plain HTTP on a non-loopback address: the API key{console} and all traffic cross the network in clear; serve TLS with --tls-cert/--tls-key, or put the box behind a VPN");
    }
    if crate::connector::claim_policy::no_claim_codes(config.claim_policy, config.claim_codes.len())
    {
        tracing::warn!(
            "{}; fix: {}",
            crate::connector::claim_policy::NO_CLAIM_CODES,
            crate::connector::claim_policy::NO_CLAIM_CODES_FIX
        );
    }
    println!("listening on {scheme}://{addr}");
    tracing::info!(%addr, tls = tls.is_some(), "connector listening");
    // systemd (Type=notify): bound and store open = ready; watchdog pings; STOPPING on drain.
    crate::service_notify::start(addr, &lifecycle).await;
    let app = router(state);
    let (_, drained) = tokio::join!(
        crate::server::listen::serve_with_tls(listener, app, &lifecycle, tls),
        lifecycle.drain(DRAIN_DEADLINE),
    );
    tracing::info!(drained, "tasks stopped; closing the store");
    if let Err(e) = store.close().await {
        tracing::error!(error = %e, "closing the store failed");
    }
    Ok(())
}

/// Spawns the phone inventory trackers (one per adb server of `adb_servers`, and one per
/// direct phone of `config`) and the file/journal cleaner on `lifecycle`.
fn spawn_background(
    config: &ServeConfig,
    adb_servers: &[crate::config::AdbServerSpec],
    lifecycle: &Lifecycle,
    inventory: &Inventory,
    files: &FileCache,
    store: &Store,
    host_key: &HostKeyFile,
) {
    let shutdown = lifecycle.shutdown();
    for (rank, server) in adb_servers.iter().enumerate() {
        let client = AdbServerClient::new(server.addr.clone());
        let source = inventory::Source {
            label: server.name.clone(),
            rank,
        };
        lifecycle.spawn(inventory::run_adb_tracker_from(
            inventory.clone(),
            client,
            source,
            shutdown.clone(),
        ));
    }
    for addr in &config.direct_devices {
        lifecycle.spawn(inventory::run_direct_watch(
            inventory.clone(),
            addr.clone(),
            host_key.clone(),
            shutdown.clone(),
        ));
    }
    let cleaner = files.clone();
    let journal_store = store.clone();
    let stop = shutdown.clone();
    lifecycle.spawn(async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(FILE_CLEAN_PERIOD) => {
                    if let Err(e) = cleaner.clean_expired().await {
                        tracing::warn!(error = %e, "file cache cleaning failed");
                    }
                    let cutoff = crate::protocol::now_ms() - JOURNAL_KEEP.as_millis() as i64;
                    if let Err(e) = journal_store.journal_prune(cutoff).await {
                        tracing::warn!(error = %e, "tool journal pruning failed");
                    }
                }
            }
        }
    });
}

async fn build_state(
    config: &ServeConfig,
    lifecycle: &Lifecycle,
    base_url: String,
) -> anyhow::Result<AppState> {
    private_dir(&config.data_dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot create the data dir: {}",
            StorageFault::of_io(&config.data_dir, &e)
        )
    })?;
    let lock = crate::store::data_dir::lock(&config.data_dir)?;
    let db = config.data_dir.join(crate::store::data_dir::DB_FILE);
    // Blocking (SQLite, file checks): off the async workers.
    let store = tokio::task::spawn_blocking(move || Store::open(&db))
        .await
        .context("the store's opening task failed")?
        .context("cannot open the connector's database")?;
    let files = FileCache::open(
        store.clone(),
        config.data_dir.join("files"),
        config.file_ttl,
        config.file_cache_max_bytes,
    )
    .await?;
    // Names of phones that share a serial, as recorded (field bug 50): a phone keeps its name.
    let names = store.phone_name_all().await?;
    let recorder = store.clone();
    let inventory = Inventory::with_names(inventory::NameBook::new(
        names,
        Some(Arc::new(move |record| {
            if recorder.phone_name_record(record).is_err() {
                tracing::warn!("cannot store a phone name: the store is closed");
            }
        })),
    ));
    // The connector's adb key, read (or made) on first use by a direct link or a pairing.
    let host_key = HostKeyFile::new(config.data_dir.join(ADB_KEY_FILE));
    // One adb server under two names is followed once (each phone one route through it).
    let (adb_servers, same_servers) =
        crate::config::same_server::distinct(&config.adb_servers).await;
    for same in &same_servers {
        tracing::warn!("{}", same.describe());
    }
    spawn_background(
        config,
        &adb_servers,
        lifecycle,
        &inventory,
        &files,
        &store,
        &host_key,
    );
    let key_for_pairing = host_key.clone();
    // An existing key is loaded now (cheap), so the first AUTH of a phone finds it; a missing
    // one is made only when a phone or a pairing asks for it.
    if host_key.exists() {
        host_key.ready();
    }
    let paired = store.wireless_phone_all().await?;
    let connector = Connector::load(
        store,
        files,
        inventory,
        ConnectorConfig {
            claim_policy: config.claim_policy,
            claim_codes: config.claim_codes.clone(),
            lease_grace: config.lease_grace,
            profiles: config.profiles.clone(),
        },
        lifecycle.clone(),
    )
    .await?
    .with_host_key(key_for_pairing)
    .with_qr_pairing(crate::connector::qr_pairing::QrPairingConfig {
        mdns_interfaces: config.mdns_interfaces.clone(),
        qr_ttl: config.qr_ttl,
        // `host:mdns:services` is asked of the first adb server (the one on this box by default).
        adb_server: config.adb_servers.first().map(|server| server.addr.clone()),
    });
    // Phones paired over Wi-Fi earlier are followed again (last address, then by GUID).
    for phone in paired {
        if !config.direct_devices.contains(&phone.addr) {
            connector.follow_wireless_phone(phone);
        }
    }
    let connector = match &config.fleet {
        Some(config) => {
            // Restored bindings are adopted before the first registration reconciles them.
            let fleet = Arc::new(crate::fleet::Fleet::new(config.clone()));
            let connector = connector.with_fleet(Arc::clone(&fleet));
            spawn_presence(fleet, base_url, &connector, lifecycle);
            connector
        }
        None => connector,
    };
    let connector = Arc::new(connector);
    crate::operator::bindings::spawn(&config.data_dir, Arc::clone(&connector), lifecycle)
        .context("cannot open the operator socket in the data dir")?;
    // The lock lives as long as the process (one connector per data dir).
    std::mem::forget(lock);
    if connector.has_channels() {
        // Restored channels need an xAgent hello within the grace (spec §8.2).
        connector.start_grace_timer();
    }
    let state = AppState::new(connector, config.api_key.clone(), config.upload_max_bytes);
    Ok(match &config.operator_key {
        Some(key) => state.with_console(crate::server::console::Console::new(
            key.clone(),
            adb_servers.iter().map(|s| s.name.clone()).collect(),
        )),
        None => state,
    })
}

/// Spawns the presence loop of this box's fleet member (registration, keepalive, the phones
/// of the connector's inventory, reconciliation; `crate::fleet::presence`).
fn spawn_presence(
    fleet: Arc<crate::fleet::Fleet>,
    base_url: String,
    connector: &Connector,
    lifecycle: &Lifecycle,
) {
    use crate::fleet::presence;
    let inventory = connector.inventory().clone();
    let changes = inventory.subscribe();
    let phones: presence::PhoneList = Arc::new(move || {
        inventory
            .list()
            .into_iter()
            .filter(|p| p.identified)
            .map(|p| presence::PhonePresence {
                serial: p.serial,
                model: p.model,
                state: p.state.as_str().to_string(),
            })
            .collect()
    });
    let info = presence::BoxInfo {
        base_url,
        version: crate::protocol::CONNECTOR_VERSION.to_string(),
    };
    lifecycle.spawn(presence::run(
        fleet,
        info,
        phones,
        changes,
        lifecycle.shutdown().clone(),
    ));
}

/// Creates `dir` (and parents) readable by this user only (0700): it holds the database with
/// the signing key and cached screenshots.
pub(crate) fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    // Only when it differs: a data dir on a read-only mount that is 0700 already is fine to
    // read, and the store then names the read-only file system itself.
    if std::fs::metadata(dir)?.permissions().mode() & 0o7777 == 0o700 {
        return Ok(());
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}
