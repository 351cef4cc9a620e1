//! `xagent-adb-connector`: parses flags, loads config, starts tracing, runs the chosen command.
//! Every error becomes a message on stderr and exit code 1 (2 for usage errors, by clap).

#[cfg(feature = "sim")]
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;
use xagent_adb_connector::config;
use xagent_adb_connector::daemon;
#[cfg(feature = "sim")]
use xagent_adb_sim as sim;

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
// Parsed once per process; without `sim` only `Serve` carries fields.
#[cfg_attr(not(feature = "sim"), allow(clippy::large_enum_variant))]
enum Command {
    /// Run the connector server. Settings stack: built-in defaults → `--config` file →
    /// environment (`XAGENT_ADB_<FLAG>`) → flags.
    Serve {
        /// TOML config file (`print-default-config` prints a commented one).
        #[arg(long, env = "XAGENT_ADB_CONFIG")]
        config: Option<PathBuf>,
        #[command(flatten)]
        settings: config::Settings,
    },
    /// Run one simulated Android phone (device side of the ADB transport over TCP).
    #[cfg(feature = "sim")]
    Sim(SimArgs),
    /// Two simulated phones and the connector on them, for a first try.
    #[cfg(feature = "sim")]
    Demo {
        /// Connector listen address.
        #[arg(long, default_value = "127.0.0.1:8787")]
        listen: SocketAddr,
        /// Data directory (the API key file is created here).
        #[arg(long, default_value = "xagent-demo-data")]
        data_dir: PathBuf,
    },
    /// Pair the connector's adb key (`DATA_DIR/adbkey`) with an Android 11+ phone: on the phone,
    /// Developer options → Wireless debugging → Pair device with pairing code. Prints the GUID,
    /// and with `--connect` the phone's serial read over TLS (then serve it with
    /// `--device tcp:HOST:PORT`).
    Pair {
        /// The pairing dialog's address and code: `--code HOST:PORT CODE`.
        #[arg(long, num_args = 2, value_names = ["HOST:PORT", "CODE"], required = true)]
        code: Vec<String>,
        /// The phone's wireless-debugging address (Wireless debugging → IP address & Port).
        #[arg(long, value_name = "HOST:PORT")]
        connect: Option<String>,
        /// Data directory holding the connector's adb key (made there if missing).
        #[arg(long, env = "XAGENT_ADB_DATA_DIR")]
        data_dir: PathBuf,
    },
    /// Print a commented default config file.
    PrintDefaultConfig,
    /// Read a claim code on stdin and print its `sha256:` form for the config file.
    HashClaimCode,
}

/// Flags of `sim`.
#[cfg(feature = "sim")]
#[derive(clap::Args)]
struct SimArgs {
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
    /// Directory where accepted keys persist (adb_keys; with --wireless also the paired
    /// keys and the GUID).
    #[arg(long)]
    state_dir: Option<std::path::PathBuf>,
    /// Wireless debugging: an STLS connect port, pairing through the control API
    /// (POST /v1/pair).
    #[arg(long)]
    wireless: bool,
    /// Announce the wireless services over mDNS on this interface (repeatable); none = no
    /// mDNS.
    #[arg(long = "mdns-interface", value_name = "NAME", requires = "wireless")]
    mdns_interface: Vec<String>,
    /// Cost model: `instant` (answers at once) or `realistic` (the persona's phone-side costs
    /// and the link's bandwidth and latency; see docs/sim.md).
    #[arg(long, default_value = "instant", value_name = "instant|realistic")]
    timing: sim::timing::TimingMode,
    /// The link `--timing realistic` models.
    #[arg(long, default_value = "usb2", value_name = "usb2|usb3|wifi")]
    link: sim::timing::Link,
}

#[cfg(feature = "sim")]
impl SimArgs {
    /// The simulated phone's options.
    fn options(self) -> sim::SimOptions {
        sim::SimOptions {
            listen: self.listen,
            serial: self.serial,
            model: self.model,
            persona: self.persona,
            control: self.control,
            require_auth: self.require_auth,
            state_dir: self.state_dir,
            wireless: self.wireless,
            mdns_interfaces: self.mdns_interface,
            timing: self.timing,
            link: self.link,
        }
    }
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
            println!(
                "sha256:{}",
                xagent_adb_connector::secret::to_hex(
                    &xagent_adb_connector::secret::hash_claim_code(code)
                )
            );
            Ok(())
        }
        Command::Pair {
            code,
            connect,
            data_dir,
        } => block_on(|_| pair(code, connect, data_dir)),
        Command::Serve { config, settings } => {
            let cfg = config::load(config.as_deref(), settings)?;
            block_on(|shutdown| daemon::serve(cfg, shutdown))
        }
        #[cfg(feature = "sim")]
        Command::Sim(args) => block_on(|shutdown| async move {
            let handle = sim::start(args.options(), shutdown.clone()).await?;
            println!("simulated phone listening on tcp:{}", handle.adb_addr);
            if let Some(c) = handle.connect_addr {
                println!("wireless debugging connect port on tcp:{c}");
            }
            if let Some(c) = handle.control_addr {
                println!("control API on http://{c}");
            }
            shutdown.cancelled().await;
            Ok(())
        }),
        #[cfg(feature = "sim")]
        Command::Demo { listen, data_dir } => block_on(|shutdown| {
            xagent_adb_connector::demo::demo(
                xagent_adb_connector::demo::DemoOptions { listen, data_dir },
                shutdown,
            )
        }),
    }
}

/// `pair --code HOST:PORT CODE [--connect HOST:PORT]`: pairs, prints the GUID and the serial.
async fn pair(code: Vec<String>, connect: Option<String>, data_dir: PathBuf) -> anyhow::Result<()> {
    use xagent_adb_connector::adb::host_key::pair_with_phone;
    use xagent_adb_connector::adb::{DeviceLink, HostKeyFile};
    let [addr, code] = <[String; 2]>::try_from(code)
        .map_err(|_| anyhow::anyhow!("--code takes HOST:PORT and the code"))?;
    let code = zeroize::Zeroizing::new(code);
    let key_file = HostKeyFile::new(data_dir.join(daemon::ADB_KEY_FILE));
    let key = key_file.get().await?;
    let guid = pair_with_phone(
        &key,
        &addr,
        code.as_bytes(),
        xagent_adb_connector::connector::pairing::PAIR_DEADLINE,
    )
    .await?;
    println!("paired with {}", guid.as_str());
    if let Some(connect) = connect {
        let link = DeviceLink::direct_with_key(connect, key_file);
        let out = link
            .shell(
                "getprop ro.serialno",
                std::time::Duration::from_secs(10),
                1024,
            )
            .await?;
        println!("serial {}", out.stdout_text().trim());
    }
    Ok(())
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
