//! SIGHUP: reload the claim codes, the device profiles, the API key (and the TLS certificate,
//! when the listener has one) without a restart — phones, channels, bindings and open sockets
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
    let fixed = (
        running.listen,
        running.data_dir.clone(),
        running.adb_servers(),
    );
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
            if (config.listen, config.data_dir.clone(), config.adb_servers()) != fixed {
                tracing::warn!("SIGHUP: listen, data_dir and adb servers change only on a restart");
            }
            tracing::info!(
                claim_codes = config.claim_codes.len(),
                tls = targets.tls.is_some(),
                "SIGHUP: configuration reloaded (API key, claim codes, device profiles)"
            );
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
    targets
        .connector
        .reload(config.claim_codes.clone(), config.profiles.clone());
    Ok(())
}
