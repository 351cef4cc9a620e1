//! `xagent-adb-connector`: parses flags, loads config, starts tracing, runs the chosen command.
//! Every error becomes a message on stderr and exit code 1 (2 for usage errors, by clap).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;
use xagent_adb_connector::config::{self, ClaimPolicy, ServeConfig};
use xagent_adb_connector::{daemon, sim};

#[derive(Parser)]
#[command(
    name = "xagent-adb-connector",
    version,
    about = "xAgent connector for Android phones over ADB"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the connector server.
    Serve {
        /// HTTP/WebSocket listen address.
        #[arg(long)]
        listen: Option<SocketAddr>,
        /// Directory for the database and cached files.
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// File whose first line is the system API key (≥ 16 characters).
        #[arg(long)]
        api_key_file: Option<PathBuf>,
        /// adb server HOST:PORT (default 127.0.0.1:5037; "" disables).
        #[arg(long)]
        adb_server: Option<String>,
        /// A phone reached by the direct transport, `tcp:HOST:PORT` (repeatable).
        #[arg(long = "device")]
        devices: Vec<String>,
        /// Who may claim a phone.
        #[arg(long, value_enum)]
        claim_policy: Option<ClaimPolicy>,
        /// TOML config file (flags override it).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Connector lease grace after the last xAgent socket closes (e.g. `1h`, `5s`).
        #[arg(long)]
        lease_grace: Option<String>,
        /// Largest accepted upload in bytes (default 256 MiB).
        #[arg(long)]
        upload_max_bytes: Option<u64>,
        /// Directory of device policy profiles (default: the built-in default.toml).
        #[arg(long)]
        device_profiles: Option<PathBuf>,
    },
    /// Run one simulated Android phone (device side of the ADB transport over TCP).
    Sim {
        /// ADB transport listen address.
        #[arg(long)]
        listen: SocketAddr,
        /// The phone's ro.serialno.
        #[arg(long)]
        serial: String,
        /// ro.product.model.
        #[arg(long, default_value = "Pixel 8")]
        model: String,
        /// Persona (device data file).
        #[arg(long, default_value = "pixel-android14")]
        persona: String,
        /// Control API listen address (loopback only).
        #[arg(long)]
        control: Option<SocketAddr>,
        /// Demand ADB RSA authentication; accept keys with the control API (POST /v1/auth).
        #[arg(long)]
        require_auth: bool,
        /// Directory where accepted keys persist (adb_keys).
        #[arg(long)]
        state_dir: Option<std::path::PathBuf>,
    },
    /// Two simulated phones and the connector on them, for a first try.
    Demo {
        /// Connector listen address.
        #[arg(long, default_value = "127.0.0.1:8787")]
        listen: SocketAddr,
        /// Data directory (the API key file is created here).
        #[arg(long, default_value = "xagent-demo-data")]
        data_dir: PathBuf,
    },
    /// Print a commented default config file.
    PrintDefaultConfig,
    /// Read a claim code on stdin and print its `sha256:` form for the config file.
    HashClaimCode,
}

fn main() {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        // No colour codes in journald or log files.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    if let Err(e) = run(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(1);
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::PrintDefaultConfig => {
            print!("{}", config::DEFAULT_CONFIG_TOML);
            Ok(())
        }
        Command::HashClaimCode => {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)?;
            let code = line.trim_end_matches(['\r', '\n']);
            config::parse_claim_code("stdin", code)?;
            println!("sha256:{}", config::to_hex(&config::hash_claim_code(code)));
            Ok(())
        }
        Command::Serve {
            listen,
            data_dir,
            api_key_file,
            adb_server,
            devices,
            claim_policy,
            config: config_path,
            lease_grace,
            upload_max_bytes,
            device_profiles,
        } => {
            let file = match &config_path {
                Some(p) => config::read_config_file(p)?,
                None => config::ConfigFile::default(),
            };
            let key_file = api_key_file
                .or(file.api_key_file)
                .context("--api-key-file is required (a file whose first line is the API key)")?;
            let adb_server = adb_server
                .or(file.adb_server)
                .unwrap_or_else(|| config::DEFAULT_ADB_SERVER.to_string());
            let mut direct = Vec::new();
            for spec in file.devices.iter().chain(devices.iter()) {
                direct.push(config::parse_device_spec(spec)?);
            }
            let mut claim_codes = std::collections::HashMap::new();
            for (serial, code) in &file.claim_codes {
                claim_codes.insert(serial.clone(), config::parse_claim_code(serial, code)?);
            }
            let cfg = ServeConfig {
                listen: listen
                    .or(file.listen)
                    .unwrap_or_else(|| config::DEFAULT_LISTEN.parse().expect("valid default")),
                data_dir: data_dir
                    .or(file.data_dir)
                    .context("--data-dir is required")?,
                api_key: config::read_api_key(&key_file)?,
                adb_server: (!adb_server.is_empty()).then_some(adb_server),
                direct_devices: direct,
                claim_policy: claim_policy
                    .or(file.claim_policy)
                    .unwrap_or(ClaimPolicy::Code),
                claim_codes,
                file_ttl: file
                    .file_ttl_secs
                    .map(std::time::Duration::from_secs)
                    .unwrap_or(config::DEFAULT_FILE_TTL),
                lease_grace: match lease_grace.or(file.lease_grace) {
                    Some(text) => config::parse_duration(&text)?,
                    None => xagent_adb_connector::connector::lease::DEFAULT_LEASE_GRACE,
                },
                profiles: match device_profiles.or(file.device_profiles) {
                    Some(dir) => xagent_adb_connector::device::policy::Profiles::load_dir(&dir)?,
                    None => xagent_adb_connector::device::policy::Profiles::builtin(),
                },
                file_cache_max_bytes: file
                    .file_cache_max_bytes
                    .unwrap_or(xagent_adb_connector::file_cache::DEFAULT_CAPACITY_BYTES),
                upload_max_bytes: upload_max_bytes
                    .or(file.upload_max_bytes)
                    .unwrap_or(xagent_adb_connector::server::upload::DEFAULT_MAX_UPLOAD_BYTES),
            };
            block_on(|shutdown| daemon::serve(cfg, shutdown))
        }
        Command::Sim {
            listen,
            serial,
            model,
            persona,
            control,
            require_auth,
            state_dir,
        } => block_on(|shutdown| async move {
            let handle = sim::start(
                sim::SimOptions {
                    listen,
                    serial,
                    model,
                    persona,
                    control,
                    require_auth,
                    state_dir,
                },
                shutdown.clone(),
            )
            .await?;
            println!("simulated phone listening on tcp:{}", handle.adb_addr);
            if let Some(c) = handle.control_addr {
                println!("control API on http://{c}");
            }
            shutdown.cancelled().await;
            Ok(())
        }),
        Command::Demo { listen, data_dir } => {
            block_on(|shutdown| daemon::demo(daemon::DemoOptions { listen, data_dir }, shutdown))
        }
    }
}

/// Runs `f` on a two-worker runtime (the connector: one per core of a Pi-class box);
/// SIGINT/SIGTERM cancel the token.
fn block_on<F, Fut>(f: F) -> anyhow::Result<()>
where
    F: FnOnce(CancellationToken) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    run_until_signal(rt, f)
}

fn run_until_signal<F, Fut>(rt: tokio::runtime::Runtime, f: F) -> anyhow::Result<()>
where
    F: FnOnce(CancellationToken) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    rt.block_on(async {
        let shutdown = CancellationToken::new();
        let signal_token = shutdown.clone();
        tokio::spawn(async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = async { match term.as_mut() { Some(t) => { t.recv().await; } None => std::future::pending::<()>().await } } => {}
            }
            signal_token.cancel();
        });
        f(shutdown).await
    })
}
