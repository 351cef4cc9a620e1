//! Configuration in stages: compiled-in defaults → TOML file (`--config`) → environment
//! (`XAGENT_ADB_<FLAG>`) → command-line flags, merged and validated once into [`ServeConfig`]
//! ([`load`], [`Settings`]). Secrets (API key, claim codes) are held in [`Secret`] /
//! hashed form and never printed.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

pub mod env_error;
pub mod same_server;

pub use crate::connector::claim_policy::ClaimPolicy;
#[cfg(test)]
use crate::secret::to_hex;
use crate::secret::{hash_claim_code, CodeHash, Secret};

/// One layer of `serve` settings; every field optional. The same struct is read from the TOML
/// file (`--config`, keys as named here) and from the command line, where clap fills each field
/// from its flag or, when the flag is absent, from its `XAGENT_ADB_<FLAG>` environment variable.
/// [`Settings::overlay`] stacks layers and [`Settings::resolve`] applies the compiled-in defaults
/// and validates: the one place a [`ServeConfig`] is made (`serve` and `demo` alike).
#[derive(Debug, Default, Clone, Deserialize, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// HTTP/WebSocket listen address [default: 127.0.0.1:8787].
    #[arg(long, env = "XAGENT_ADB_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Directory for the database and cached files (required).
    #[arg(long, env = "XAGENT_ADB_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// File whose first line is the system API key, at least 16 characters (required).
    #[arg(long, env = "XAGENT_ADB_API_KEY_FILE")]
    pub api_key_file: Option<PathBuf>,
    /// File whose first line is the operator key, at least 16 characters: the password of the
    /// browser console (`GET /console`, HTTP Basic user `operator`). Without it the console
    /// is off (404). Read at start only.
    #[arg(long, env = "XAGENT_ADB_OPERATOR_KEY_FILE")]
    pub operator_key_file: Option<PathBuf>,
    /// adb server to follow with `host:track-devices`, `HOST:PORT` or `NAME=HOST:PORT` (the
    /// name shows in descriptors and `devices`) [default: 127.0.0.1:5037]. Repeatable (a list
    /// in the file, comma-separated in the environment); a later stage replaces an earlier
    /// one's list; an empty value disables the adb server.
    #[arg(long, env = "XAGENT_ADB_ADB_SERVER", value_delimiter = ',')]
    #[serde(default, deserialize_with = "adb_server_list")]
    pub adb_server: Vec<String>,
    /// A phone reached by the direct transport, `tcp:HOST:PORT` (repeatable; comma-separated
    /// in the environment). The file's list and these add up.
    #[arg(long = "device", env = "XAGENT_ADB_DEVICE", value_delimiter = ',')]
    #[serde(default)]
    pub devices: Vec<String>,
    /// Who may claim a phone [default: code].
    #[arg(long, value_enum, env = "XAGENT_ADB_CLAIM_POLICY")]
    pub claim_policy: Option<ClaimPolicy>,
    /// serial → claim code, `sha256:<64 hex>` or the plain code (hashed on load). File only:
    /// codes never go on a command line or into the environment.
    #[arg(skip)]
    #[serde(default)]
    pub claim_codes: HashMap<String, String>,
    /// How long a `file_ref` stays downloadable, seconds, 1 to 604800 (7 days) [default: 900].
    #[arg(long, env = "XAGENT_ADB_FILE_TTL_SECS")]
    pub file_ttl_secs: Option<u64>,
    /// Connector lease grace after the last xAgent socket closes, e.g. `1h`, `5s` (humantime
    /// syntax), 1s to 30days [default: 1h].
    #[arg(long, env = "XAGENT_ADB_LEASE_GRACE")]
    pub lease_grace: Option<String>,
    /// Largest accepted upload, bytes, 1 to 68719476736 (64 GiB) [default: 268435456 = 256
    /// MiB].
    #[arg(long, env = "XAGENT_ADB_UPLOAD_MAX_BYTES")]
    pub upload_max_bytes: Option<u64>,
    /// File cache capacity, bytes, 1 to 1099511627776 (1 TiB); the oldest files are evicted
    /// first [default: 536870912 = 512 MiB].
    #[arg(long, env = "XAGENT_ADB_FILE_CACHE_MAX_BYTES")]
    pub file_cache_max_bytes: Option<u64>,
    /// Directory of device policy profiles (`default.toml` + refinements) [default: the
    /// built-in default.toml].
    #[arg(long, env = "XAGENT_ADB_DEVICE_PROFILES")]
    pub device_profiles: Option<PathBuf>,
    /// PEM certificate chain (leaf first): serve HTTPS/WSS instead of plain HTTP; needs
    /// --tls-key. Reloaded on SIGHUP.
    #[arg(long, env = "XAGENT_ADB_TLS_CERT")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, env = "XAGENT_ADB_TLS_KEY")]
    pub tls_key: Option<PathBuf>,
    /// Network interface to browse mDNS on for QR pairing (repeatable; comma-separated in the
    /// environment) [default: every interface of the box]. The file's list and these add up.
    #[arg(
        long = "mdns-interface",
        env = "XAGENT_ADB_MDNS_INTERFACE",
        value_delimiter = ','
    )]
    #[serde(default)]
    pub mdns_interfaces: Vec<String>,
    /// How long a QR pairing code is valid, seconds, 1 to 3600 [default: 180].
    #[arg(long, env = "XAGENT_ADB_QR_TTL_SECS")]
    pub qr_ttl_secs: Option<u64>,
    /// Log line format, `text` or `json` [default: text]. The flag is the global
    /// `--log-format` (env `XAGENT_ADB_LOG_FORMAT`), which wins over this file key; read once
    /// at start, before the first log line (a SIGHUP does not change it).
    #[arg(skip)]
    pub log_format: Option<crate::logging::LogFormat>,
    /// etcd client URL of the fleet store, `http://HOST:PORT` or `https://HOST:PORT`
    /// (repeatable: the members of one cluster; comma-separated in the environment). Without
    /// it the box is on its own and nothing of the fleet runs (docs/fleet.md).
    #[arg(
        long = "fleet-etcd",
        env = "XAGENT_ADB_FLEET_ETCD",
        value_delimiter = ','
    )]
    #[serde(default, deserialize_with = "one_or_many")]
    pub fleet_etcd: Vec<String>,
    /// This box's name in the fleet (required with --fleet-etcd): 1 to 64 letters, digits,
    /// '.', '_' or '-'. Descriptors name it in `target.location`.
    #[arg(long = "box", env = "XAGENT_ADB_BOX")]
    #[serde(default, rename = "box")]
    pub box_name: Option<String>,
    /// What a claim does while etcd is unreachable: `fleet` refuses it (`fleet_unavailable`,
    /// retryable), `local` binds on this box and reconciles when etcd returns [default: fleet].
    #[arg(long, value_enum, env = "XAGENT_ADB_FLEET_CLAIMS")]
    pub fleet_claims: Option<crate::fleet::FleetClaims>,
    /// Lease TTL of this box's fleet presence and bindings, seconds, 2 to 60 [default: 10]: a
    /// box cut off leaves the fleet view, and its phones become claimable, within it.
    #[arg(long, env = "XAGENT_ADB_FLEET_TTL_SECS")]
    pub fleet_ttl_secs: Option<u64>,
    /// PEM CA certificate of etcd's https endpoints.
    #[arg(long, env = "XAGENT_ADB_FLEET_ETCD_CA")]
    pub fleet_etcd_ca: Option<PathBuf>,
    /// PEM client certificate for etcd's client-certificate authentication (with
    /// --fleet-etcd-key).
    #[arg(long, env = "XAGENT_ADB_FLEET_ETCD_CERT")]
    pub fleet_etcd_cert: Option<PathBuf>,
    /// PEM private key of --fleet-etcd-cert.
    #[arg(long, env = "XAGENT_ADB_FLEET_ETCD_KEY")]
    pub fleet_etcd_key: Option<PathBuf>,
}

impl Settings {
    /// Stacks `over` on `self`: each field `over` sets wins; direct-transport phones and claim
    /// codes add up (a code in `over` replaces the same serial's).
    pub fn overlay(self, over: Settings) -> Settings {
        let mut devices = self.devices;
        devices.extend(over.devices);
        let mut claim_codes = self.claim_codes;
        claim_codes.extend(over.claim_codes);
        let mut mdns_interfaces = self.mdns_interfaces;
        mdns_interfaces.extend(over.mdns_interfaces);
        Settings {
            listen: over.listen.or(self.listen),
            data_dir: over.data_dir.or(self.data_dir),
            api_key_file: over.api_key_file.or(self.api_key_file),
            operator_key_file: over.operator_key_file.or(self.operator_key_file),
            adb_server: if over.adb_server.is_empty() {
                self.adb_server
            } else {
                over.adb_server
            },
            devices,
            claim_policy: over.claim_policy.or(self.claim_policy),
            claim_codes,
            file_ttl_secs: over.file_ttl_secs.or(self.file_ttl_secs),
            lease_grace: over.lease_grace.or(self.lease_grace),
            upload_max_bytes: over.upload_max_bytes.or(self.upload_max_bytes),
            file_cache_max_bytes: over.file_cache_max_bytes.or(self.file_cache_max_bytes),
            device_profiles: over.device_profiles.or(self.device_profiles),
            tls_cert: over.tls_cert.or(self.tls_cert),
            tls_key: over.tls_key.or(self.tls_key),
            mdns_interfaces,
            qr_ttl_secs: over.qr_ttl_secs.or(self.qr_ttl_secs),
            log_format: over.log_format.or(self.log_format),
            fleet_etcd: if over.fleet_etcd.is_empty() {
                self.fleet_etcd
            } else {
                over.fleet_etcd
            },
            box_name: over.box_name.or(self.box_name),
            fleet_claims: over.fleet_claims.or(self.fleet_claims),
            fleet_ttl_secs: over.fleet_ttl_secs.or(self.fleet_ttl_secs),
            fleet_etcd_ca: over.fleet_etcd_ca.or(self.fleet_etcd_ca),
            fleet_etcd_cert: over.fleet_etcd_cert.or(self.fleet_etcd_cert),
            fleet_etcd_key: over.fleet_etcd_key.or(self.fleet_etcd_key),
        }
    }

    /// The fleet store's endpoints and TLS client config, `None` without `--fleet-etcd` (or
    /// with only empty items). Errors: a malformed URL, an https URL without a usable CA,
    /// client certificate or key files that do not load.
    #[allow(clippy::type_complexity)]
    pub fn fleet_store(
        &self,
    ) -> Result<
        Option<(
            Vec<crate::fleet::etcd::Endpoint>,
            Option<std::sync::Arc<rustls::ClientConfig>>,
        )>,
        ConfigError,
    > {
        let mut endpoints = Vec::new();
        for url in self.fleet_etcd.iter().filter(|u| !u.trim().is_empty()) {
            let ep = crate::fleet::etcd::Endpoint::parse(url)
                .map_err(|why| ConfigError::Invalid(format!("--fleet-etcd (fleet_etcd): {why}")))?;
            endpoints.push(ep);
        }
        if endpoints.is_empty() {
            return Ok(None);
        }
        let tls = if endpoints.iter().any(|e| e.tls) {
            let tls = crate::fleet::etcd::EtcdTls {
                ca: self.fleet_etcd_ca.clone(),
                cert: self.fleet_etcd_cert.clone(),
                key: self.fleet_etcd_key.clone(),
            };
            Some(tls.client_config().map_err(ConfigError::Invalid)?)
        } else {
            None
        };
        Ok(Some((endpoints, tls)))
    }

    /// The fleet settings of `serve`, `None` without `--fleet-etcd`. Errors: those of
    /// [`Settings::fleet_store`], no or a bad `--box`, `--box` without `--fleet-etcd`, a TTL
    /// out of range.
    pub fn fleet_config(&self) -> Result<Option<crate::fleet::FleetConfig>, ConfigError> {
        let Some((endpoints, tls)) = self.fleet_store()? else {
            // A box name with no fleet is a forgotten `--fleet-etcd`, not a plain box.
            if self.box_name.is_some() {
                return Err(ConfigError::Missing(
                    "--box (box, env XAGENT_ADB_BOX) names this box in a fleet, but no \
                     --fleet-etcd (fleet_etcd, env XAGENT_ADB_FLEET_ETCD) is given: add the \
                     fleet's etcd, or drop --box",
                ));
            }
            return Ok(None);
        };
        let box_name = self.box_name.clone().ok_or(ConfigError::Missing(
            "--box (box, env XAGENT_ADB_BOX) is required with --fleet-etcd: this box's name in the fleet",
        ))?;
        crate::fleet::check_box_name(&box_name).map_err(ConfigError::Invalid)?;
        let ttl = match self.fleet_ttl_secs {
            Some(secs) => Duration::from_secs(FLEET_TTL_SECS.check(secs)?),
            None => crate::fleet::DEFAULT_TTL,
        };
        Ok(Some(crate::fleet::FleetConfig {
            endpoints,
            tls,
            box_name,
            ttl,
            claims: self.fleet_claims.unwrap_or_default(),
        }))
    }

    /// Applies the compiled-in defaults and validates every value (reads the API key file and
    /// the device profiles). Errors name the flag or key at fault, never a secret: the first
    /// problem ([`Settings::resolve_all`] gives each).
    pub fn resolve(self) -> Result<ServeConfig, ConfigError> {
        self.resolve_all()
            .map_err(|mut problems| problems.remove(0))
    }

    /// [`Settings::resolve`], with every problem found (`check` names them all in one run):
    /// each setting is validated on its own, so one bad value does not hide the next. The
    /// list is never empty.
    pub fn resolve_all(self) -> Result<ServeConfig, Vec<ConfigError>> {
        let mut problems = Vec::new();
        let key_file = keep(
            &mut problems,
            self.api_key_file.clone().ok_or(ConfigError::Missing(
                "--api-key-file is required (a file whose first line is the API key)",
            )),
        );
        let survey = keep(&mut problems, self.survey_config());
        let data_dir = match &survey {
            Some(s) => keep(
                &mut problems,
                s.data_dir
                    .clone()
                    .ok_or(ConfigError::Missing("--data-dir is required")),
            ),
            None => None,
        };
        let fleet = keep(&mut problems, self.fleet_config());
        let claim_codes = keep(
            &mut problems,
            self.claim_codes
                .iter()
                .map(|(serial, code)| Ok((serial.clone(), parse_claim_code(serial, code)?)))
                .collect::<Result<_, ConfigError>>(),
        );
        for (setting, value) in [
            (&FILE_TTL_SECS, self.file_ttl_secs),
            (&UPLOAD_MAX_BYTES, self.upload_max_bytes),
            (&FILE_CACHE_MAX_BYTES, self.file_cache_max_bytes),
            (&QR_TTL_SECS, self.qr_ttl_secs),
        ] {
            if let Some(value) = value {
                keep(&mut problems, setting.check(value));
            }
        }
        let lease_grace = keep(&mut problems, self.lease_grace());
        let mdns_interfaces = keep(&mut problems, self.mdns_interfaces());
        let tls = keep(&mut problems, self.tls_files());
        let api_key = match &key_file {
            Some(path) => keep(&mut problems, read_api_key(path)),
            None => None,
        };
        let operator_key = keep(
            &mut problems,
            self.operator_key_file
                .as_deref()
                .map(read_operator_key)
                .transpose(),
        );
        let profiles = keep(
            &mut problems,
            match &self.device_profiles {
                Some(dir) => crate::device::policy::Profiles::load_dir(dir).map_err(Into::into),
                None => Ok(crate::device::policy::Profiles::builtin()),
            },
        );
        let (
            Some(api_key),
            Some(survey),
            Some(data_dir),
            Some(fleet),
            Some(claim_codes),
            Some(lease_grace),
            Some(mdns_interfaces),
            Some(tls),
            Some(operator_key),
            Some(profiles),
        ) = (
            api_key,
            survey,
            data_dir,
            fleet,
            claim_codes,
            lease_grace,
            mdns_interfaces,
            tls,
            operator_key,
            profiles,
        )
        else {
            return Err(problems);
        };
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(ServeConfig {
            fleet,
            tls,
            listen: self
                .listen
                .unwrap_or_else(|| DEFAULT_LISTEN.parse().expect("valid default")),
            data_dir,
            api_key,
            operator_key,
            adb_servers: survey.adb_servers,
            direct_devices: survey.direct_devices,
            claim_policy: self.claim_policy.unwrap_or(ClaimPolicy::Code),
            claim_codes,
            file_ttl: self
                .file_ttl_secs
                .map(Duration::from_secs)
                .unwrap_or(DEFAULT_FILE_TTL),
            lease_grace,
            upload_max_bytes: self
                .upload_max_bytes
                .unwrap_or(crate::server::upload::DEFAULT_MAX_UPLOAD_BYTES),
            file_cache_max_bytes: self
                .file_cache_max_bytes
                .unwrap_or(crate::file_cache::DEFAULT_CAPACITY_BYTES),
            mdns_interfaces,
            qr_ttl: self
                .qr_ttl_secs
                .map(Duration::from_secs)
                .unwrap_or(crate::connector::qr_pairing::DEFAULT_QR_TTL),
            profiles,
        })
    }

    /// `--lease-grace`, in range, or the default.
    fn lease_grace(&self) -> Result<Duration, ConfigError> {
        let Some(text) = &self.lease_grace else {
            return Ok(crate::connector::lease::DEFAULT_LEASE_GRACE);
        };
        // Named by flag, file key and variable: the value may come from any of them.
        let grace = humantime::parse_duration(text.trim()).map_err(|e| {
            ConfigError::Invalid(format!(
                "--lease-grace (lease_grace, env XAGENT_ADB_LEASE_GRACE) must be a \
                 duration like 30s, 90min or 30days, got {text:?}: {e}"
            ))
        })?;
        // Refused by the same range, in the flag's own syntax.
        let range = LEASE_GRACE_SECS.range();
        if grace < Duration::from_secs(*range.start()) || grace > Duration::from_secs(*range.end())
        {
            return Err(LEASE_GRACE_SECS.refusal(text));
        }
        Ok(grace)
    }

    /// The mDNS interfaces named, each one the box has.
    fn mdns_interfaces(&self) -> Result<Vec<String>, ConfigError> {
        // An empty item (e.g. `XAGENT_ADB_MDNS_INTERFACE=`) names no interface; a name the
        // box lacks is refused now, not browsed silently on nothing.
        let mdns_interfaces: Vec<String> = self
            .mdns_interfaces
            .iter()
            .map(|name| name.trim().to_string())
            .filter(|name| !name.is_empty())
            .collect();
        crate::adb::mdns::check_interfaces(&mdns_interfaces)
            .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        Ok(mdns_interfaces)
    }

    /// The TLS certificate and key, validated, or none.
    fn tls_files(&self) -> Result<Option<crate::server::tls::TlsFiles>, ConfigError> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => {
                let files = crate::server::tls::TlsFiles {
                    cert: cert.clone(),
                    key: key.clone(),
                };
                // Validated now, so `check` and a SIGHUP report a bad pair before it is used.
                crate::server::tls::server_config(&files)?;
                Ok(Some(files))
            }
            (None, None) => Ok(None),
            _ => Err(ConfigError::Invalid(
                "--tls-cert and --tls-key go together".into(),
            )),
        }
    }
}

/// The value of `r`, or `None` with its error added to `problems`.
fn keep<T>(problems: &mut Vec<ConfigError>, r: Result<T, ConfigError>) -> Option<T> {
    r.map_err(|e| problems.push(e)).ok()
}

impl Settings {
    /// The part of the settings that says where the phones are ([`SurveyConfig`]), validated
    /// as [`Settings::resolve`] does; the API key is neither needed nor read, and the data dir
    /// is optional (without one, the bound channels and Wi-Fi-paired phones are unknown).
    /// Errors: a `--data-dir` that is not a directory, a malformed `--adb-server` or
    /// `--device`.
    pub fn survey_config(&self) -> Result<SurveyConfig, ConfigError> {
        let data_dir = self.data_dir.clone();
        // Made at start when missing; something else by that name is refused now, by name
        // (creating it said only "File exists").
        if let Some(dir) = data_dir.as_ref().filter(|d| d.exists() && !d.is_dir()) {
            return Err(ConfigError::Invalid(format!(
                "--data-dir {} is not a directory",
                dir.display()
            )));
        }
        let adb_servers = if self.adb_server.is_empty() {
            vec![parse_adb_server(DEFAULT_ADB_SERVER)?]
        } else {
            // `""` (alone or as an item) means none, not a malformed server.
            let mut list = Vec::new();
            for item in self.adb_server.iter().filter(|s| !s.trim().is_empty()) {
                let server = parse_adb_server(item)?;
                if list.iter().any(|s: &AdbServerSpec| s.name == server.name) {
                    return Err(ConfigError::Invalid(format!(
                        "--adb-server {:?} is listed twice",
                        server.name
                    )));
                }
                list.push(server);
            }
            list
        };
        // An empty item (e.g. `XAGENT_ADB_DEVICE=`) means no phone, not a malformed one.
        let mut direct_devices: Vec<String> = Vec::new();
        for spec in self.devices.iter().filter(|spec| !spec.trim().is_empty()) {
            let addr = parse_device_spec(spec)?;
            // Host names are case-insensitive (RFC 4343): one phone dialled twice would be
            // listed twice and watched by two transports.
            if direct_devices.iter().any(|a| a.eq_ignore_ascii_case(&addr)) {
                return Err(ConfigError::Invalid(format!(
                    "--device (devices) tcp:{addr} is listed twice"
                )));
            }
            direct_devices.push(addr);
        }
        Ok(SurveyConfig {
            data_dir,
            adb_servers,
            direct_devices,
        })
    }
}

/// Where the phones are, for the operator commands (`check`, `devices`), which look at phones
/// and never serve: no API key in it.
#[derive(Debug, Clone)]
pub struct SurveyConfig {
    /// Directory of the database (bindings, paired phones) and the connector's adb key;
    /// `None` when no data dir is configured (the operator commands then cannot say which
    /// channel holds a phone).
    pub data_dir: Option<PathBuf>,
    /// adb servers to ask, in config order.
    pub adb_servers: Vec<AdbServerSpec>,
    /// Direct-transport phones (`HOST:PORT`).
    pub direct_devices: Vec<String>,
}

/// Where the `.deb` installs the settings (`systemd/deb/config.toml`, with the data dir and the
/// API key path in it): `serve`, `check` and `devices` read it when it exists and no
/// `--config` (or `XAGENT_ADB_CONFIG`) names another file, so on the box they run with no
/// flags (issue 21 §1).
pub const PACKAGED_CONFIG_PATH: &str = "/etc/xagent-adb-connector/config.toml";

/// The config file a command reads: `explicit` (`--config` / `XAGENT_ADB_CONFIG`;
/// `/dev/null` reads as an empty file: no settings), else [`PACKAGED_CONFIG_PATH`] when that
/// file exists, else none.
pub fn config_file(explicit: Option<PathBuf>) -> Option<PathBuf> {
    config_file_or(explicit, Path::new(PACKAGED_CONFIG_PATH))
}

fn config_file_or(explicit: Option<PathBuf>, packaged: &Path) -> Option<PathBuf> {
    explicit.or_else(|| packaged.is_file().then(|| packaged.to_path_buf()))
}

/// The stacked settings of `config_file` (if any) under `cli`, not yet resolved. Errors: the
/// file cannot be read or parsed.
pub fn stack(config_file: Option<&Path>, cli: Settings) -> Result<Settings, ConfigError> {
    let file = match config_file {
        Some(path) => read_config_file(path)?,
        None => Settings::default(),
    };
    Ok(file.overlay(cli))
}

/// The staged configuration of `serve`: compiled-in defaults → the TOML file at `config_file`
/// (if any) → `cli` (flags, each falling back to its `XAGENT_ADB_*` environment variable).
pub fn load(config_file: Option<&Path>, cli: Settings) -> Result<ServeConfig, ConfigError> {
    stack(config_file, cli)?.resolve()
}

/// Validated settings of `serve`.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// HTTP/WebSocket listen address.
    pub listen: SocketAddr,
    /// Directory for the database and cached files.
    pub data_dir: PathBuf,
    /// System API key (Bearer) shared with xAgent's backend.
    pub api_key: Secret,
    /// The operator key (`--operator-key-file`): the password of the browser console
    /// ([`crate::server::console`]); `None`: the console answers 404.
    pub operator_key: Option<Secret>,
    /// adb servers to track devices on, in config order (the first is preferred when one
    /// serial shows on several).
    pub adb_servers: Vec<AdbServerSpec>,
    /// Direct-transport phones (`HOST:PORT`).
    pub direct_devices: Vec<String>,
    /// Claim policy.
    pub claim_policy: ClaimPolicy,
    /// serial → SHA-256 of its claim code.
    pub claim_codes: HashMap<String, CodeHash>,
    /// How long a `file_ref` stays downloadable.
    pub file_ttl: Duration,
    /// Connector lease grace after the last authenticated socket closes (spec §8.2).
    pub lease_grace: Duration,
    /// Largest accepted `POST /files/uploads` body file, bytes.
    pub upload_max_bytes: u64,
    /// File cache capacity, bytes (oldest evicted first).
    pub file_cache_max_bytes: u64,
    /// Device policy profiles (`device-profiles/`).
    pub profiles: crate::device::policy::Profiles,
    /// TLS certificate and key of the listener; `None`: plain HTTP.
    pub tls: Option<crate::server::tls::TlsFiles>,
    /// Interfaces the QR pairing flow browses mDNS on; empty: every interface.
    pub mdns_interfaces: Vec<String>,
    /// How long a QR pairing code is valid.
    pub qr_ttl: Duration,
    /// The fleet (`--fleet-etcd`, `--box`); `None`: this box is on its own.
    pub fleet: Option<crate::fleet::FleetConfig>,
}

impl ServeConfig {
    /// The adb servers' labels, in config order (none when disabled).
    pub fn adb_servers(&self) -> Vec<String> {
        self.adb_servers.iter().map(|s| s.name.clone()).collect()
    }
}

/// One configured adb server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdbServerSpec {
    /// Its label: the `NAME=` given, else `addr`.
    pub name: String,
    /// `host:port` of the server.
    pub addr: String,
}

/// Parses `HOST:PORT` or `NAME=HOST:PORT`. Errors: an address [`check_host_port`] refuses, or a
/// bad name.
pub fn parse_adb_server(text: &str) -> Result<AdbServerSpec, ConfigError> {
    let text = text.trim();
    let (name, addr) = match text.split_once('=') {
        Some((name, addr)) => (name.trim(), addr.trim()),
        None => (text, text),
    };
    let bad = |why: &str| {
        ConfigError::Invalid(format!(
            "--adb-server (adb_server) must be HOST:PORT or NAME=HOST:PORT, {HOST_FORMS}; got \
             {text:?}{why}"
        ))
    };
    check_host_port(addr).map_err(|why| bad(&format!(": {why}")))?;
    if name.is_empty() || name.chars().any(|c| c.is_control()) {
        return Err(bad(""));
    }
    Ok(AdbServerSpec {
        name: name.to_string(),
        addr: addr.to_string(),
    })
}

/// A TOML value that is one string or a list of strings.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}

/// `adb_server` in the file: one string or a non-empty list. `adb_server = []` is refused:
/// it reads as "no adb server" but an absent or empty list meant the default one, so the file
/// says which it wants — left out (the default), `""` (none) or a list of servers.
fn adb_server_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    let list = one_or_many(d)?;
    if list.is_empty() {
        return Err(serde::de::Error::custom(EMPTY_ADB_SERVER_LIST));
    }
    Ok(list)
}

/// Why `adb_server = []` is refused ([`adb_server_list`]).
pub const EMPTY_ADB_SERVER_LIST: &str = "adb_server = [] names no adb server: leave adb_server \
     out for the default (127.0.0.1:5037), write adb_server = \"\" for none, or list the servers";

/// Default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";
/// Default adb server.
pub const DEFAULT_ADB_SERVER: &str = "127.0.0.1:5037";
/// Default file TTL: 15 minutes.
pub const DEFAULT_FILE_TTL: Duration = Duration::from_secs(15 * 60);

/// The accepted range of one numeric setting (inclusive), refused outside it at start, by
/// `check` and on SIGHUP with its flag, file key and range in the message.
#[derive(Debug)]
pub struct SettingRange {
    /// The flag, e.g. `--qr-ttl-secs`.
    pub flag: &'static str,
    /// The config file key, e.g. `qr_ttl_secs`.
    pub key: &'static str,
    /// Smallest accepted value.
    pub min: u64,
    /// Largest accepted value.
    pub max: u64,
    /// What the number counts (`seconds`, `bytes`).
    pub unit: &'static str,
}

impl SettingRange {
    /// `min..=max`.
    pub fn range(&self) -> std::ops::RangeInclusive<u64> {
        self.min..=self.max
    }

    /// `value` if it lies in the range. Errors: [`ConfigError::Invalid`] naming the setting,
    /// the range and `value`.
    pub fn check(&self, value: u64) -> Result<u64, ConfigError> {
        if self.range().contains(&value) {
            Ok(value)
        } else {
            Err(self.refusal(value))
        }
    }

    /// The refusal of `value` (as given).
    fn refusal(&self, value: impl std::fmt::Display) -> ConfigError {
        ConfigError::Invalid(format!(
            "{} ({}) must be {} to {} {}, got {value}",
            self.flag, self.key, self.min, self.max, self.unit
        ))
    }
}

/// `--file-ttl-secs`: 1 s to 7 days.
pub const FILE_TTL_SECS: SettingRange = SettingRange {
    flag: "--file-ttl-secs",
    key: "file_ttl_secs",
    min: 1,
    max: 7 * 24 * 3600,
    unit: "seconds",
};
/// `--qr-ttl-secs` (also of `pair`): 1 s to 1 h.
pub const QR_TTL_SECS: SettingRange = SettingRange {
    flag: "--qr-ttl-secs",
    key: "qr_ttl_secs",
    min: 1,
    max: 3600,
    unit: "seconds",
};
/// `--lease-grace`: 1 s to 30 days (humantime syntax, e.g. `1s`, `30days`).
pub const LEASE_GRACE_SECS: SettingRange = SettingRange {
    flag: "--lease-grace",
    key: "lease_grace",
    min: 1,
    max: 30 * 24 * 3600,
    unit: "seconds",
};
/// `--upload-max-bytes`: 1 byte to 64 GiB.
pub const UPLOAD_MAX_BYTES: SettingRange = SettingRange {
    flag: "--upload-max-bytes",
    key: "upload_max_bytes",
    min: 1,
    max: 64 << 30,
    unit: "bytes",
};
/// `--file-cache-max-bytes`: 1 byte to 1 TiB.
pub const FILE_CACHE_MAX_BYTES: SettingRange = SettingRange {
    flag: "--file-cache-max-bytes",
    key: "file_cache_max_bytes",
    min: 1,
    max: 1 << 40,
    unit: "bytes",
};

/// `--fleet-ttl-secs`: 2 s (etcd's smallest lease TTL with its default election timeout) to
/// 60 s.
pub const FLEET_TTL_SECS: SettingRange = SettingRange {
    flag: "--fleet-ttl-secs",
    key: "fleet_ttl_secs",
    min: 2,
    max: 60,
    unit: "seconds",
};

/// Errors of configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {setting} {path}")]
    Read {
        /// The flag that names the file (`--config`, `--api-key-file`).
        setting: &'static str,
        /// Path.
        path: PathBuf,
        /// Cause.
        #[source]
        source: std::io::Error,
    },
    /// The TOML is malformed.
    #[error("invalid config file {path}: {message}")]
    Toml {
        /// Path.
        path: PathBuf,
        /// Parser message.
        message: String,
    },
    /// A value is invalid.
    #[error("invalid configuration: {0}")]
    Invalid(String),
    /// The TLS certificate and key do not make a server config (the message names the file).
    #[error("invalid configuration: {0}")]
    Tls(#[from] crate::server::tls::TlsError),
    /// The device profiles do not load.
    #[error(transparent)]
    Profiles(#[from] crate::device::policy::PolicyError),
    /// A required setting is missing (the message names its flag).
    #[error("{0}")]
    Missing(&'static str),
}

/// Reads and parses the TOML config file.
pub fn read_config_file(path: &Path) -> Result<Settings, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        setting: "--config",
        path: path.into(),
        source,
    })?;
    let settings = parse_settings(&text).map_err(|message| ConfigError::Toml {
        path: path.into(),
        message,
    })?;
    // TOML puts every key after a `[table]` header into that table, so a top-level key
    // appended at the end of the file lands in `[claim_codes]` as a code for a "serial"
    // named like the key. Refused by name only: the value may be a code.
    let mut strays: Vec<&str> = settings
        .claim_codes
        .keys()
        .map(String::as_str)
        .filter(|serial| settings_keys().contains(serial))
        .collect();
    if !strays.is_empty() {
        strays.sort_unstable();
        return Err(ConfigError::Toml {
            path: path.into(),
            message: format!(
                "`{}` is under [claim_codes] (read as a claim code); top-level keys must come \
                 before any [table] header",
                strays.join("`, `")
            ),
        });
    }
    Ok(settings)
}

/// Parses the text of a config file. Errors: one line for the log and `check`. A TOML syntax
/// error keeps the parser's words without the source excerpt ([`one_line`]); a value of the
/// wrong type or out of its set is named by its key (`claim_codes.SERIAL`, `qr_ttl_secs`) with
/// what it must be, and never quoted: serde's own message carries the value (`invalid type:
/// integer `123456`, expected a string`), and a claim code written without quotes is still a
/// secret.
fn parse_settings(text: &str) -> Result<Settings, String> {
    let document = toml::Deserializer::parse(text).map_err(|e| one_line(&e))?;
    serde_path_to_error::deserialize(document).map_err(|e| {
        let key = e.path().to_string();
        let inner = e.into_inner();
        let mut line = String::new();
        if let Some(span) = inner.span() {
            let before = text.get(..span.start).unwrap_or(text);
            let row = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            line = format!("TOML parse error at line {row}, column {column}: ");
        }
        let named = !key.is_empty() && key != "." && key != "?";
        match without_value(inner.message()) {
            Some(must) if named => format!("{line}`{key}` {must}"),
            Some(must) => format!("{line}a value {must}"),
            None if named => format!("{line}`{key}`: {}", inner.message()),
            None => format!("{line}{}", inner.message()),
        }
    })
}

/// serde's messages that quote the value at fault (`invalid type: integer `5`, expected a
/// string`, `invalid value: …`, `unknown variant `x`, expected one of …`) as `must be …` without
/// it; `None` for other messages (a missing or unknown key, a custom message), which carry no
/// value and are kept as they are.
fn without_value(message: &str) -> Option<String> {
    // The value may itself hold ", expected ": the expectation is after the last one.
    let (head, expected) = message.rsplit_once(", expected ")?;
    // `integer `5``, `floating point `1.5``, `string "abc"`, `sequence`: the kind, before any
    // quoted value.
    let kind = |found: &str| {
        found
            .split(['`', '"'])
            .next()
            .unwrap_or("")
            .trim()
            .to_string()
    };
    if let Some(found) = head.strip_prefix("invalid type: ") {
        Some(format!("must be {expected} (found: {})", kind(found)))
    } else if let Some(found) = head.strip_prefix("invalid value: ") {
        Some(format!(
            "must be {expected} (found: an invalid {})",
            kind(found)
        ))
    } else if head.starts_with("unknown variant ") {
        Some(format!("must be {expected}"))
    } else {
        None
    }
}

/// The TOML keys of [`Settings`], as its `Deserialize` derive names them (so a key added
/// later is covered): a probe deserializer records the field list serde passes to
/// `deserialize_struct` and stops there.
fn settings_keys() -> &'static [&'static str] {
    use serde::de::{Error as _, Visitor};
    struct Probe<'a>(&'a mut &'static [&'static str]);
    impl<'de> serde::Deserializer<'de> for Probe<'_> {
        type Error = serde::de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(Self::Error::custom("field probe"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(Self::Error::custom("field probe"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    static KEYS: std::sync::OnceLock<&'static [&'static str]> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let mut fields: &'static [&'static str] = &[];
        let _ = Settings::deserialize(Probe(&mut fields));
        fields
    })
}

/// `e` and its causes on one line (`cause: its cause: …`), for the log and `check`: a journal
/// line per event. Multi-line messages (a TOML diagnostic) keep their text lines and drop the
/// quoted source excerpt (`2 | key = …`, `|   ^`), which may hold a plain claim code.
pub fn one_line(e: &(dyn std::error::Error + 'static)) -> String {
    // `12 | text` or `| ^^^`: a line of a diagnostic's source excerpt.
    let excerpt = |line: &str| match line.split_once('|') {
        Some((before, _)) => before.trim().chars().all(|c| c.is_ascii_digit()),
        None => false,
    };
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        let text = err.to_string();
        let joined = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !excerpt(l))
            .collect::<Vec<_>>()
            .join(": ");
        // A transparent wrapper repeats its cause's text.
        if !joined.is_empty() && !parts.last().is_some_and(|p| p.ends_with(&joined)) {
            parts.push(joined);
        }
        next = err.source();
    }
    parts.join(": ")
}

/// Reads the API key file (first line, trimmed); it must be at least 16 characters.
pub fn read_api_key(path: &Path) -> Result<Secret, ConfigError> {
    read_key_file(path, "--api-key-file", "API key")
}

/// Reads the operator key file (`--operator-key-file`: first line, trimmed), as the API key
/// file is read; it must be at least 16 characters. Errors name the flag and the path, never
/// the key.
pub fn read_operator_key(path: &Path) -> Result<Secret, ConfigError> {
    read_key_file(path, "--operator-key-file", "operator key")
}

/// The first line of `path`, trimmed, of at least 16 characters (`setting` names the flag and
/// `what` the key in errors).
fn read_key_file(path: &Path, setting: &'static str, what: &str) -> Result<Secret, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        setting,
        path: path.into(),
        source,
    })?;
    let key = text.lines().next().unwrap_or("").trim().to_string();
    if key.len() < 16 {
        return Err(ConfigError::Invalid(format!(
            "the {what} in {} ({setting}) must be at least 16 characters",
            path.display()
        )));
    }
    Ok(Secret::new(key))
}

/// Parses a claim code entry (`sha256:<hex>` or plain) into its hash.
pub fn parse_claim_code(serial: &str, value: &str) -> Result<CodeHash, ConfigError> {
    if let Some(hex) = value.strip_prefix("sha256:") {
        let bytes: Option<Vec<u8>> = (0..hex.len())
            .step_by(2)
            .map(|i| {
                hex.get(i..i + 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
            })
            .collect();
        match bytes {
            Some(b) if b.len() == 32 => {
                let mut out = [0u8; 32];
                out.copy_from_slice(&b);
                Ok(out)
            }
            _ => Err(ConfigError::Invalid(format!(
                "claim code for serial {} must be `sha256:` + 64 hex digits",
                crate::protocol::descriptor::mask_serial(serial)
            ))),
        }
    } else if value.len() < 6 {
        Err(ConfigError::Invalid(format!(
            "claim code for serial {} must be at least 6 characters",
            crate::protocol::descriptor::mask_serial(serial)
        )))
    } else {
        Ok(hash_claim_code(value))
    }
}

/// Parses a `--device` value `tcp:HOST:PORT` into `HOST:PORT`. Errors: no `tcp:`, or an
/// address [`check_host_port`] refuses; the message names the flag and the file key.
pub fn parse_device_spec(spec: &str) -> Result<String, ConfigError> {
    let bad = |why: &str| {
        ConfigError::Invalid(format!(
            "--device (devices) must be tcp:HOST:PORT, {HOST_FORMS}; got {spec:?}{why}"
        ))
    };
    let addr = spec.strip_prefix("tcp:").ok_or_else(|| bad(""))?;
    check_host_port(addr).map_err(|why| bad(&format!(": {why}")))?;
    Ok(addr.to_string())
}

/// What HOST may be, in the refusals of [`check_host_port`]'s callers.
const HOST_FORMS: &str = "HOST a host name, an IPv4 address or an [IPv6] address";

/// Checks `HOST:PORT` as the connector will dial it: PORT 1 to 65535; HOST an IPv4 address
/// (four numbers 0 to 255: a name whose last label is a number is one, as URL hosts are read,
/// WHATWG URL §3.5), an IPv6 address in brackets (or bare, as `std` resolves it), or a host
/// name (RFC 1123 §2.1 labels of letters, digits, `-`, `_`; 1 to 63 characters; 253 in all;
/// one trailing `.` allowed). Errors: why, naming the part at fault (the address is not a
/// secret).
pub fn check_host_port(addr: &str) -> Result<(), String> {
    let Some((host, port)) = addr.rsplit_once(':') else {
        return Err("no :PORT".into());
    };
    match port.parse::<u16>() {
        Ok(0) => return Err("port 0 cannot be dialled (1 to 65535)".into()),
        Ok(_) => {}
        Err(_) => return Err(format!("port {port:?} is not a number 1 to 65535")),
    }
    if host.is_empty() {
        return Err("no HOST before :PORT".into());
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return match inner.parse::<std::net::Ipv6Addr>() {
            Ok(_) => Ok(()),
            Err(_) => Err(format!("{inner} is not an IPv6 address")),
        };
    }
    if host.parse::<std::net::Ipv6Addr>().is_ok() {
        return Ok(());
    }
    let name = host.strip_suffix('.').unwrap_or(host);
    let last = name.rsplit('.').next().unwrap_or(name);
    if !last.is_empty() && last.chars().all(|c| c.is_ascii_digit()) {
        return match name.parse::<std::net::Ipv4Addr>() {
            Ok(_) => Ok(()),
            Err(_) => Err(format!(
                "{host} is not an IPv4 address (four numbers 0 to 255, like 192.168.1.20)"
            )),
        };
    }
    let label_ok = |l: &str| {
        (1..=63).contains(&l.len())
            && l.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    if name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(format!(
            "{host} is not a host name (letters, digits and '-' between dots)"
        ));
    }
    Ok(())
}

/// The default config file text (`print-default-config`).
pub const DEFAULT_CONFIG_TOML: &str = r#"# xagent-adb-connector configuration. The environment (XAGENT_ADB_<FLAG>, e.g.
# XAGENT_ADB_LISTEN) overrides these values, and flags override the environment.
# The package's paths: serve, check and devices read this file by default
# (/etc/xagent-adb-connector/config.toml), so on the box they need no flags.
data_dir = "/var/lib/xagent-adb-connector"
api_key_file = "/etc/xagent-adb-connector/api_key"
# The password of the browser console (http://BOX:8787/console, user "operator"); made at
# install. Remove the line to turn the console off.
operator_key_file = "/etc/xagent-adb-connector/operator_key"
# listen = "127.0.0.1:8787"
# adb_server = "127.0.0.1:5037"      # "" disables the adb server; a list for several boxes:
# adb_server = ["127.0.0.1:5037", "box-b=10.8.0.2:5037"]   # NAME=HOST:PORT names a box
# devices = ["tcp:192.168.1.20:5555"] # phones reached by the direct transport
# claim_policy = "code"               # or "open"
# file_ttl_secs = 900                 # 1 to 604800 (7 days)
# upload_max_bytes = 268435456        # 256 MiB; 1 to 68719476736 (64 GiB)
# file_cache_max_bytes = 536870912    # 512 MiB, oldest files evicted first; 1 to 1099511627776 (1 TiB)
# device_profiles = "/etc/xagent-adb-connector/device-profiles"
# lease_grace = "1h"                  # channels are removed after this long with no xAgent connected; 1s to 30days
# tls_cert = "/etc/xagent-adb-connector/tls/cert.pem" # serve https/wss (reloaded on SIGHUP)
# tls_key = "/etc/xagent-adb-connector/tls/key.pem"
# mdns_interfaces = ["wlan0"]         # QR pairing browses mDNS here; default: every interface
# qr_ttl_secs = 180                   # how long a QR pairing code is valid; 1 to 3600
# log_format = "text"                 # or "json": one JSON object per stderr line
# fleet_etcd = ["http://10.8.0.1:2379"] # many boxes, one etcd (docs/fleet.md); needs box:
# box = "rack1-pi3"                   # this box's name in the fleet
# fleet_claims = "fleet"              # or "local": bind while etcd is down, reconcile later
# fleet_ttl_secs = 10                 # presence/binding lease TTL; 2 to 60
# fleet_etcd_ca = "/etc/xagent-adb-connector/etcd/ca.pem"     # for https:// endpoints
# fleet_etcd_cert = "/etc/xagent-adb-connector/etcd/box.pem"  # client cert auth (with key)
# fleet_etcd_key = "/etc/xagent-adb-connector/etcd/box-key.pem"
#
# Tables last: every key after a [table] header belongs to that table.
# [claim_codes]                       # serial = code; prefer the hashed form (under "code"
#                                     # with none, no phone can be claimed: `check` says so):
# R58N12ABCDEF = "sha256:<64 hex digits>"   # from `xagent-adb-connector hash-claim-code`
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_claim_code_names_the_serial_masked() {
        for bad in ["short", "sha256:12"] {
            let e = parse_claim_code("SIM0002XYZ", bad).unwrap_err().to_string();
            assert!(!e.contains("SIM0002XYZ") && e.contains("SIM…2XYZ"), "{e}");
        }
    }

    #[test]
    fn settings_keys_come_from_the_derive() {
        let keys = settings_keys();
        for key in [
            "listen",
            "devices",
            "claim_codes",
            "mdns_interfaces",
            "log_format",
        ] {
            assert!(keys.contains(&key), "{key} missing from {keys:?}");
        }
        // Every documented key of the default config is one of them.
        for line in DEFAULT_CONFIG_TOML.lines() {
            if let Some((key, _)) = line.strip_prefix("# ").and_then(|l| l.split_once(" = ")) {
                if key.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                    assert!(keys.contains(&key), "{key} missing from {keys:?}");
                }
            }
        }
    }

    #[test]
    fn the_packaged_config_is_read_only_when_nothing_else_is_named() {
        let dir = std::env::temp_dir().join(format!("xagent-packaged-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let packaged = dir.join("config.toml");
        assert_eq!(config_file_or(None, &packaged), None, "absent: none");
        std::fs::write(&packaged, "").unwrap();
        assert_eq!(config_file_or(None, &packaged), Some(packaged.clone()));
        let mine = PathBuf::from("/srv/mine.toml");
        assert_eq!(config_file_or(Some(mine.clone()), &packaged), Some(mine));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn claim_codes_hash_either_form() {
        let plain = parse_claim_code("S", "123456").unwrap();
        let hashed = parse_claim_code("S", &format!("sha256:{}", to_hex(&plain))).unwrap();
        assert_eq!(plain, hashed);
        assert!(parse_claim_code("S", "sha256:zz").is_err());
        assert!(parse_claim_code("S", "12").is_err());
    }

    #[test]
    fn one_line_keeps_the_words_and_drops_the_source_excerpt() {
        let err = toml::from_str::<Settings>("[claim_codes]\nS1 = \"plain-code-123\n").unwrap_err();
        assert!(err.to_string().lines().count() > 1, "{err}");
        let line = one_line(&err);
        assert!(!line.contains('\n'), "{line}");
        assert!(line.contains("line 2"), "{line}");
        assert!(!line.contains("plain-code-123"), "{line}");
        let read = ConfigError::Read {
            setting: "--api-key-file",
            path: "/nonexistent".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(
            one_line(&read),
            "cannot read --api-key-file /nonexistent: entity not found"
        );
    }

    #[test]
    fn a_value_error_names_the_key_and_never_the_value() {
        for (text, key, must) in [
            (
                "[claim_codes]\nS1 = 987654321\n",
                "`claim_codes.S1`",
                "must be a string (found: integer)",
            ),
            (
                "[claim_codes]\nS1 = 98765.4321\n",
                "`claim_codes.S1`",
                "must be a string (found: floating point)",
            ),
            (
                "qr_ttl_secs = \"987654321\"\n",
                "`qr_ttl_secs`",
                "must be u64 (found: string)",
            ),
            (
                "file_ttl_secs = -987654321\n",
                "`file_ttl_secs`",
                "must be u64 (found: an invalid integer)",
            ),
            (
                "claim_policy = \"987654321, expected x\"\n",
                "`claim_policy`",
                "must be `open` or `code`",
            ),
        ] {
            let line = parse_settings(text).unwrap_err();
            assert!(line.contains(key), "{line}");
            assert!(line.contains(must), "{line}");
            assert!(line.contains("line "), "{line}");
            assert!(!line.contains("987654321"), "{line}");
            assert!(!line.contains("98765"), "{line}");
        }
    }

    #[test]
    fn device_specs() {
        assert_eq!(
            parse_device_spec("tcp:127.0.0.1:5555").unwrap(),
            "127.0.0.1:5555"
        );
        assert!(parse_device_spec("127.0.0.1:5555").is_err());
        assert!(parse_device_spec("tcp:host:notaport").is_err());
        for good in [
            "10.0.0.1:5555",
            "[fe80::1]:5555",
            "::1:5555",
            "localhost:5037",
            "pixel-8.lan.:5555",
            "adb-R58N_x.local:37000",
        ] {
            assert_eq!(check_host_port(good), Ok(()), "{good}");
        }
        for (bad, why) in [
            ("999.1.1.1:5555", "999.1.1.1 is not an IPv4 address"),
            ("1.2.3:5555", "1.2.3 is not an IPv4 address"),
            ("host.123:5555", "host.123 is not an IPv4 address"),
            ("[::g]:5555", "::g is not an IPv6 address"),
            ("[::1:5555", "[::1 is not a host name"),
            ("a..b:5555", "a..b is not a host name"),
            ("h:0", "port 0"),
            ("h:65536", "port \"65536\""),
            (":5555", "no HOST"),
        ] {
            let e = check_host_port(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn adb_servers_one_or_many_named_or_not() {
        let one: Settings = toml::from_str("adb_server = \"127.0.0.1:5037\"\n").unwrap();
        assert_eq!(one.adb_server, ["127.0.0.1:5037"]);
        let many: Settings =
            toml::from_str("adb_server = [\"127.0.0.1:5037\", \"box-b=10.8.0.2:5037\"]\n").unwrap();
        let spec = parse_adb_server(&many.adb_server[1]).unwrap();
        assert_eq!(
            (spec.name.as_str(), spec.addr.as_str()),
            ("box-b", "10.8.0.2:5037")
        );
        let plain = parse_adb_server("10.0.0.1:5037").unwrap();
        assert_eq!(plain.name, plain.addr);
        for bad in ["nohost", "box=", "=h:1", "h:notaport"] {
            assert!(parse_adb_server(bad).is_err(), "{bad}");
        }
        // A later stage's list replaces the earlier one's.
        let merged = many.overlay(Settings {
            adb_server: vec!["h:1".into()],
            ..Default::default()
        });
        assert_eq!(merged.adb_server, ["h:1"]);
    }

    #[test]
    fn layers_stack_later_wins_and_lists_add_up() {
        let file: Settings = toml::from_str(
            "listen = \"127.0.0.1:1\"\nclaim_policy = \"open\"\ndevices = [\"tcp:h:1\"]\nlease_grace = \"5s\"\n",
        )
        .unwrap();
        let cli = Settings {
            listen: Some("127.0.0.1:2".parse().unwrap()),
            devices: vec!["tcp:h:2".into()],
            ..Default::default()
        };
        let merged = file.overlay(cli);
        assert_eq!(merged.listen, Some("127.0.0.1:2".parse().unwrap()));
        assert_eq!(merged.claim_policy, Some(ClaimPolicy::Open));
        assert_eq!(merged.devices, ["tcp:h:1", "tcp:h:2"]);
        assert_eq!(merged.lease_grace.as_deref(), Some("5s"));
    }

    #[test]
    fn a_box_name_and_a_fleet_store_go_together() {
        let lone_box = Settings {
            box_name: Some("rack1-pi3".into()),
            ..Default::default()
        };
        let err = lone_box.fleet_config().unwrap_err().to_string();
        assert!(
            err.contains("--box") && err.contains("no --fleet-etcd"),
            "{err}"
        );
        let lone_store = Settings {
            fleet_etcd: vec!["http://127.0.0.1:2379".into()],
            ..Default::default()
        };
        let err = lone_store.fleet_config().unwrap_err().to_string();
        assert!(err.contains("--box") && err.contains("required"), "{err}");
        assert!(Settings::default().fleet_config().unwrap().is_none());
    }

    #[test]
    fn resolve_applies_defaults_and_names_what_is_missing() {
        let err = Settings::default().resolve().unwrap_err();
        assert!(
            err.to_string().contains("--api-key-file is required"),
            "{err}"
        );
        let dir = std::env::temp_dir().join(format!("xagent-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("key");
        std::fs::write(&key, "0123456789abcdef0123\n").unwrap();
        let cfg = Settings {
            data_dir: Some(dir.clone()),
            api_key_file: Some(key),
            ..Default::default()
        }
        .resolve()
        .unwrap();
        assert_eq!(cfg.listen.to_string(), DEFAULT_LISTEN);
        assert_eq!(cfg.adb_servers(), [DEFAULT_ADB_SERVER]);
        assert_eq!(cfg.claim_policy, ClaimPolicy::Code);
        assert_eq!(cfg.file_ttl, DEFAULT_FILE_TTL);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn zero_limits_are_refused_and_empty_device_items_ignored() {
        let dir = std::env::temp_dir().join(format!("xagent-config-zero-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let key = dir.join("key");
        std::fs::write(&key, "0123456789abcdef0123\n").unwrap();
        let base = || Settings {
            data_dir: Some(dir.clone()),
            api_key_file: Some(key.clone()),
            ..Default::default()
        };
        let err = Settings {
            upload_max_bytes: Some(0),
            ..base()
        }
        .resolve()
        .unwrap_err();
        assert!(
            err.to_string().contains(
                "--upload-max-bytes (upload_max_bytes) must be 1 to 68719476736 bytes, got 0"
            ),
            "{err}"
        );
        let cfg = Settings {
            devices: vec![String::new()],
            ..base()
        }
        .resolve()
        .unwrap();
        assert!(cfg.direct_devices.is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
