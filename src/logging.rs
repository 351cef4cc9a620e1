//! Log output of every subcommand: `tracing` events on stderr, as plain text or as one JSON
//! object per line (`--log-format`, env `XAGENT_ADB_LOG_FORMAT`). The text form carries ANSI
//! colour codes only when stderr is a terminal, so journald and log files get clean lines
//! (systemd.exec(5): a service's stderr goes to the journal). Secrets never reach the log:
//! they are held in [`crate::secret::Secret`], whose `Debug`/`Display` print a placeholder.
//! A phone is named by the field `serial_hint`, always masked
//! ([`crate::protocol::descriptor::mask_serial`]: the serial is an identifier the logs never
//! carry whole); a wireless GUID, which holds the serial, by `guid`, masked the same way.

/// Log line format (flag `--log-format`, config key `log_format`: `"text"` or `"json"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// `TIMESTAMP LEVEL target: message key=value…` (tracing-subscriber's default format).
    #[default]
    Text,
    /// One JSON object per line: `timestamp`, `level`, `target`, `fields` (with `message`)
    /// and the span list (tracing-subscriber's `json` format).
    Json,
}

/// Installs the global subscriber: level from `RUST_LOG` (default `info`), lines on stderr
/// in `format`. Call once, before any event.
pub fn init(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder
            // No colour codes in journald or log files.
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        LogFormat::Json => builder.json().with_ansi(false).init(),
    }
}
