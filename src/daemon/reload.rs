//! SIGHUP: reload the claim policy, the claim codes, the device profiles, the QR codes'
//! validity, the API key (and the TLS certificate, when the listener has one) without a restart — phones, channels, bindings and open sockets
//! stay as they are. The whole configuration is loaded and validated again through the same
//! stages as at start ([`crate::config::load`]); if anything in it is invalid, nothing is
//! applied, the running configuration stays in force and the log says why (`SIGHUP` as
//! nginx, sshd and most Unix daemons use it).

use std::sync::Arc;

use crate::config::{ConfigError, ServeConfig};
use crate::connector::Connector;
use crate::lifecycle::Lifecycle;
use crate::server::auth::ApiKey;

/// Loads the configuration again (the file, the key file, the profiles directory); called on
/// the blocking pool.
pub type Reloader = Arc<dyn Fn() -> Result<ServeConfig, ConfigError> + Send + Sync>;

/// What a reload replaces in the running connector.
#[derive(Clone)]
pub struct Targets {
    /// Claim codes and device profiles.
    pub connector: Arc<Connector>,
    /// The system API key of the HTTP handlers.
    pub api_key: ApiKey,
    /// The listener's TLS certificate and key, when it serves TLS.
    pub tls: Option<crate::server::tls::TlsSlot>,
}

/// Listens for SIGHUP until shutdown; each one reloads through `reloader` and applies the
/// result to `targets` (see the module doc). `running` is the configuration at start, to
/// warn about changes that need a restart. Errors: the signal handler cannot be installed.
pub fn spawn(
    lifecycle: &Lifecycle,
    reloader: Reloader,
    running: &ServeConfig,
    targets: Targets,
) -> std::io::Result<()> {
    let mut hup = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())?;
    let shutdown = lifecycle.shutdown().clone();
    let fixed = RestartOnly::of(running);
    lifecycle.spawn(async move {
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                got = hup.recv() => if got.is_none() { return },
            }
            let load = Arc::clone(&reloader);
            let loaded = match tokio::task::spawn_blocking(move || load()).await {
                Ok(r) => r,
                Err(e) => {
                    tracing::error!(error = %e, "reload task failed; keeping the running configuration");
                    continue;
                }
            };
            // One log line per refusal, whatever the error (a TOML diagnostic spans several).
            let config = match loaded {
                Ok(c) => c,
                Err(e) => {
                    tracing::error!(error = %crate::config::one_line(&e), "SIGHUP: the new configuration is invalid; keeping the running one");
                    continue;
                }
            };
            if let Err(e) = apply(&config, &targets) {
                tracing::error!(error = %crate::config::one_line(&e), "SIGHUP: the new configuration is invalid; keeping the running one");
                continue;
            }
            let changed = fixed.changed(&RestartOnly::of(&config));
            if !changed.is_empty() {
                tracing::warn!(
                    settings = %changed.join(", "),
                    "SIGHUP: these settings changed but apply only on a restart; the running values stay"
                );
            }
            tracing::info!(
                claim_policy = %config.claim_policy,
                claim_codes = config.claim_codes.len(),
                qr_ttl_secs = config.qr_ttl.as_secs(),
                tls = targets.tls.is_some(),
                "SIGHUP: configuration reloaded (API key, claim policy, claim codes, device profiles, QR TTL)"
            );
            if crate::connector::claim_policy::no_claim_codes(
                config.claim_policy,
                config.claim_codes.len(),
            ) {
                tracing::warn!(
                    "SIGHUP: {}; fix: {}",
                    crate::connector::claim_policy::NO_CLAIM_CODES,
                    crate::connector::claim_policy::NO_CLAIM_CODES_FIX
                );
            }
        }
    });
    Ok(())
}

/// Applies a validated configuration: the TLS certificate first (the one step that can still
/// fail), then the key, claim codes and profiles.
fn apply(config: &ServeConfig, targets: &Targets) -> Result<(), ConfigError> {
    if let Some(slot) = &targets.tls {
        match &config.tls {
            Some(files) => slot.reload(files)?,
            None => return Err(ConfigError::Invalid(
                "the listener serves TLS: --tls-cert and --tls-key cannot be dropped on a reload"
                    .into(),
            )),
        }
    }
    targets.api_key.replace(config.api_key.clone());
    targets.connector.reload(crate::connector::Reloadable {
        claim_policy: config.claim_policy,
        claim_codes: config.claim_codes.clone(),
        profiles: config.profiles.clone(),
        qr_ttl: config.qr_ttl,
    });
    Ok(())
}

/// The settings a SIGHUP does not apply (they are read once at start), by config-file key.
#[derive(PartialEq)]
struct RestartOnly {
    listen: std::net::SocketAddr,
    data_dir: std::path::PathBuf,
    adb_servers: Vec<String>,
    direct_devices: Vec<String>,
    file_ttl: std::time::Duration,
    lease_grace: std::time::Duration,
    upload_max_bytes: u64,
    file_cache_max_bytes: u64,
    mdns_interfaces: Vec<String>,
    /// The console's password is read at start only (the console's routes exist or not).
    operator_key: Option<crate::secret::Secret>,
}

impl RestartOnly {
    fn of(config: &ServeConfig) -> RestartOnly {
        RestartOnly {
            listen: config.listen,
            data_dir: config.data_dir.clone(),
            adb_servers: config.adb_servers(),
            direct_devices: config.direct_devices.clone(),
            file_ttl: config.file_ttl,
            lease_grace: config.lease_grace,
            upload_max_bytes: config.upload_max_bytes,
            file_cache_max_bytes: config.file_cache_max_bytes,
            mdns_interfaces: config.mdns_interfaces.clone(),
            operator_key: config.operator_key.clone(),
        }
    }

    /// Config-file keys of the settings that differ in `new`.
    fn changed(&self, new: &RestartOnly) -> Vec<&'static str> {
        let mut keys = Vec::new();
        let mut note = |differs: bool, key: &'static str| {
            if differs {
                keys.push(key);
            }
        };
        note(self.listen != new.listen, "listen");
        note(self.data_dir != new.data_dir, "data_dir");
        note(self.adb_servers != new.adb_servers, "adb_server");
        note(self.direct_devices != new.direct_devices, "devices");
        note(self.file_ttl != new.file_ttl, "file_ttl_secs");
        note(self.lease_grace != new.lease_grace, "lease_grace");
        note(
            self.upload_max_bytes != new.upload_max_bytes,
            "upload_max_bytes",
        );
        note(
            self.file_cache_max_bytes != new.file_cache_max_bytes,
            "file_cache_max_bytes",
        );
        note(
            self.mdns_interfaces != new.mdns_interfaces,
            "mdns_interfaces",
        );
        note(self.operator_key != new.operator_key, "operator_key_file");
        keys
    }
}
