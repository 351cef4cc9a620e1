//! Configuration: compiled-in defaults → TOML file (`--config`) → command-line flags, validated
//! once into [`ServeConfig`]. Secrets (API key, claim codes) are held in [`Secret`] /
//! hashed form and never printed.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// A secret string whose `Debug`/`Display` never show the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    /// The value, for comparison only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// Who may bind a channel to a phone (`--claim-policy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ClaimPolicy {
    /// Any attached phone may be claimed (demos, tests, single-tenant boxes).
    Open,
    /// A phone is claimed only with the admin-issued code for its serial (`[claim_codes]`).
    Code,
}

/// SHA-256 of a claim code; the plain code is never kept.
pub type CodeHash = [u8; 32];

/// SHA-256 of `code`.
pub fn hash_claim_code(code: &str) -> CodeHash {
    let d = ring::digest::digest(&ring::digest::SHA256, code.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(d.as_ref());
    out
}

/// Lowercase hex.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The optional TOML file (every key optional; see `print-default-config`).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Listen address.
    pub listen: Option<SocketAddr>,
    /// Data directory.
    pub data_dir: Option<PathBuf>,
    /// File holding the API key.
    pub api_key_file: Option<PathBuf>,
    /// adb server `host:port`; empty string disables it.
    pub adb_server: Option<String>,
    /// Direct-transport phones, `tcp:HOST:PORT`.
    #[serde(default)]
    pub devices: Vec<String>,
    /// Claim policy.
    pub claim_policy: Option<ClaimPolicy>,
    /// serial → claim code, either `sha256:<64 hex>` or the plain code (hashed on load).
    #[serde(default)]
    pub claim_codes: HashMap<String, String>,
    /// File cache TTL, seconds.
    pub file_ttl_secs: Option<u64>,
    /// Connector lease grace, e.g. `"1h"` (humantime syntax).
    pub lease_grace: Option<String>,
    /// Largest accepted upload, bytes.
    pub upload_max_bytes: Option<u64>,
    /// File cache capacity, bytes.
    pub file_cache_max_bytes: Option<u64>,
    /// Directory of device profiles (`default.toml` + refinements).
    pub device_profiles: Option<PathBuf>,
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
    /// adb server to track devices on, if any.
    pub adb_server: Option<String>,
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
}

/// Default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8787";
/// Default adb server.
pub const DEFAULT_ADB_SERVER: &str = "127.0.0.1:5037";
/// Default file TTL: 15 minutes.
pub const DEFAULT_FILE_TTL: Duration = Duration::from_secs(15 * 60);

/// Errors of configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {path}")]
    Read {
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
}

/// Reads and parses the TOML config file.
pub fn read_config_file(path: &Path) -> Result<ConfigFile, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.into(),
        source,
    })?;
    toml::from_str(&text).map_err(|e| ConfigError::Toml {
        path: path.into(),
        message: e.to_string(),
    })
}

/// Reads the API key file (first line, trimmed); it must be at least 16 characters.
pub fn read_api_key(path: &Path) -> Result<Secret, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.into(),
        source,
    })?;
    let key = text.lines().next().unwrap_or("").trim().to_string();
    if key.len() < 16 {
        return Err(ConfigError::Invalid(format!(
            "the API key in {} must be at least 16 characters",
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
                "claim code for serial {serial} must be `sha256:` + 64 hex digits"
            ))),
        }
    } else if value.len() < 6 {
        Err(ConfigError::Invalid(format!(
            "claim code for serial {serial} must be at least 6 characters"
        )))
    } else {
        Ok(hash_claim_code(value))
    }
}

/// Parses a duration like `5s`, `500ms`, `1h` (humantime syntax).
pub fn parse_duration(text: &str) -> Result<Duration, ConfigError> {
    humantime::parse_duration(text.trim())
        .map_err(|e| ConfigError::Invalid(format!("bad duration {text:?}: {e}")))
}

/// Parses a `--device` value `tcp:HOST:PORT` into `HOST:PORT`.
pub fn parse_device_spec(spec: &str) -> Result<String, ConfigError> {
    let addr = spec.strip_prefix("tcp:").ok_or_else(|| {
        ConfigError::Invalid(format!(
            "--device must look like tcp:HOST:PORT, got {spec:?}"
        ))
    })?;
    match addr.rsplit_once(':') {
        Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
            Ok(addr.to_string())
        }
        _ => Err(ConfigError::Invalid(format!(
            "--device must look like tcp:HOST:PORT, got {spec:?}"
        ))),
    }
}

/// The default config file text (`print-default-config`).
pub const DEFAULT_CONFIG_TOML: &str = r#"# xagent-adb-connector configuration. Flags override these values.
# listen = "127.0.0.1:8787"
# data_dir = "/var/lib/xagent-adb-connector"
# api_key_file = "/etc/xagent-adb-connector/api_key"
# adb_server = "127.0.0.1:5037"      # "" disables the adb server
# devices = ["tcp:192.168.1.20:5555"] # phones reached by the direct transport
# claim_policy = "code"               # or "open"
# file_ttl_secs = 900
# upload_max_bytes = 268435456        # 256 MiB
# file_cache_max_bytes = 536870912    # 512 MiB, oldest files evicted first
# device_profiles = "/etc/xagent-adb-connector/device-profiles"
# lease_grace = "1h"                  # channels are removed after this long with no xAgent connected
#
# [claim_codes]                       # serial = code; prefer the hashed form:
# R58N12ABCDEF = "sha256:<64 hex digits>"   # from `xagent-adb-connector hash-claim-code`
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_do_not_print() {
        assert_eq!(
            format!("{:?}", Secret::new("topsecret")),
            "Secret([redacted])"
        );
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
    fn device_specs() {
        assert_eq!(
            parse_device_spec("tcp:127.0.0.1:5555").unwrap(),
            "127.0.0.1:5555"
        );
        assert!(parse_device_spec("127.0.0.1:5555").is_err());
        assert!(parse_device_spec("tcp:host:notaport").is_err());
    }
}
