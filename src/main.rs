//! `xagent-adb-connector`: parses flags, loads config, starts tracing, runs the chosen command.
//! Every error becomes a one-line message on stderr and exit code 1 (2 for usage errors, by
//! clap).

#[cfg(feature = "sim")]
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;
use xagent_adb_connector::config;
use xagent_adb_connector::daemon;
use xagent_adb_connector::logging::LogFormat;
#[cfg(feature = "sim")]
use xagent_adb_sim as sim;

#[derive(Parser)]
#[command(
    name = "xagent-adb-connector",
    version,
    about = "xAgent connector for Android phones over ADB"
)]
struct Cli {
    /// Log line format on stderr: `text` (colour only on a terminal) or `json` (one object
    /// per line, for journald/Loki); over the config file's `log_format` [default: text].
    #[arg(long, global = true, value_enum, env = "XAGENT_ADB_LOG_FORMAT")]
    log_format: Option<LogFormat>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
// Parsed once per process; without `sim` only `Serve` carries fields.
#[cfg_attr(not(feature = "sim"), allow(clippy::large_enum_variant))]
enum Command {
    /// Run the connector server. Settings stack: built-in defaults → `--config` file (else
    /// /etc/xagent-adb-connector/config.toml when it exists) → environment
    /// (`XAGENT_ADB_<FLAG>`) → flags.
    Serve {
        /// TOML config file (`print-default-config` prints a commented one) [default:
        /// /etc/xagent-adb-connector/config.toml when it exists; /dev/null for none].
        #[arg(long, env = "XAGENT_ADB_CONFIG")]
        config: Option<PathBuf>,
        #[command(flatten)]
        settings: config::Settings,
    },
    /// Check the config, each adb server (reachable, protocol version) and each phone's state,
    /// with the fix for every problem: the phones first, then the config's problems. Exit
    /// status 1 when anything needs attention. Takes the same config file, environment and
    /// flags as `serve`; needs neither the API key nor the data dir.
    Check {
        /// TOML config file (as for `serve`).
        #[arg(long, env = "XAGENT_ADB_CONFIG")]
        config: Option<PathBuf>,
        #[command(flatten)]
        settings: config::Settings,
    },
    /// List the phones: serial, model, state, transport, adb server, bound channel (`unknown`
    /// without a data dir). Takes the same config file, environment and flags as `serve`.
    Devices {
        /// TOML config file (as for `serve`).
        #[arg(long, env = "XAGENT_ADB_CONFIG")]
        config: Option<PathBuf>,
        /// Print a JSON array instead of a table.
        #[arg(long)]
        json: bool,
        /// List every box's phones from the fleet store (`--fleet-etcd`) instead of this
        /// box's: box, serial, model, state, the box holding its binding, the box's URL.
        #[arg(long)]
        fleet: bool,
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
    /// Pair the connector's adb key (`DATA_DIR/adbkey`) with an Android 11+ phone. Without
    /// `--code`: draws a QR code here, on a terminal only (its payload holds the pairing
    /// password: never written to a file, pipe or journal); on the phone, Developer options →
    /// Wireless debugging → Pair device with QR code, scan it; the phone is found by mDNS,
    /// paired, and its serial printed with its connect address. With `--code HOST:PORT CODE`
    /// ("Pair device with pairing code", works anywhere): prints the GUID, and with
    /// `--connect` the serial read over TLS. Then serve the phone with `--device tcp:HOST:PORT`.
    Pair {
        /// The pairing dialog's address and code: `--code HOST:PORT CODE`.
        #[arg(long, num_args = 2, value_names = ["HOST:PORT", "CODE"])]
        code: Vec<String>,
        /// QR variant: interface to browse mDNS on (repeatable) [default: every interface].
        #[arg(
            long = "mdns-interface",
            value_name = "NAME",
            env = "XAGENT_ADB_MDNS_INTERFACE",
            value_delimiter = ','
        )]
        mdns_interface: Vec<String>,
        /// QR variant: how long to wait for the phone to scan, seconds (1 to 3600).
        #[arg(
            long,
            default_value_t = 180,
            value_parser = clap::value_parser!(u64)
                .range(config::QR_TTL_SECS.min..=config::QR_TTL_SECS.max)
        )]
        qr_ttl_secs: u64,
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
    /// ro.product.model; empty or absent = the persona's model.
    #[arg(long, default_value = "")]
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
    /// mDNS. A name the box has no interface for is refused, as `serve` refuses it.
    #[arg(long = "mdns-interface", value_name = "NAME", requires = "wireless")]
    mdns_interface: Vec<String>,
    /// Cost model: `instant` (answers at once) or `realistic` (the persona's phone-side costs
    /// and the link's bandwidth and latency; see docs/sim.md).
    #[arg(long, default_value = "instant", value_name = "instant|realistic")]
    timing: sim::timing::TimingMode,
    /// The link `--timing realistic` models.
    #[arg(long, default_value = "usb2", value_name = "usb2|usb3|wifi")]
    link: sim::timing::Link,
    /// Input devices from a real `getevent -lp` capture (mimix2, galaxy-s5, redmagic6): the
    /// touchscreen's node then takes protocol-B writes (docs/sim.md). Absent: no input nodes.
    #[arg(long, value_name = "CAPTURE")]
    touchscreen: Option<String>,
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
            touchscreen: self.touchscreen,
        }
    }
}

fn main() {
    let cli = parse_cli();
    xagent_adb_connector::logging::init(log_format(&cli));
    if let Err(e) = run(cli) {
        // One line (journald: one entry), causes joined by `: `, as `{e:#}` would, without a
        // TOML diagnostic's source excerpt ([`config::one_line`]).
        eprintln!("error: {}", config::one_line(&*e));
        std::process::exit(1);
    }
}

/// The log format: `--log-format` (or its environment variable), else the config file's
/// `log_format`, else text. The file is read here only for that key, before the first log
/// line; a file that does not read is reported by the command itself.
fn log_format(cli: &Cli) -> LogFormat {
    let file = match &cli.command {
        Command::Serve { config, .. }
        | Command::Check { config, .. }
        | Command::Devices { config, .. } => config::config_file(config.clone()),
        _ => None,
    };
    cli.log_format
        .or_else(|| {
            file.and_then(|path| config::read_config_file(&path).ok())
                .and_then(|settings| settings.log_format)
        })
        .unwrap_or_default()
}

/// Parses the arguments; a bad value read from an `XAGENT_ADB_*` variable is reported under
/// that variable's name ([`config::env_error`]). Usage errors exit 2, `--help` 0 (clap's codes).
fn parse_cli() -> Cli {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            use clap::CommandFactory;
            eprint!("{}", config::env_error::explain(&e, &Cli::command(), &args));
            std::process::exit(e.exit_code());
        }
        Err(e) => e.exit(),
    }
}

/// Short-lived report commands die quietly on a closed pipe (`devices | head`), as `ls` does:
/// Rust ignores SIGPIPE, so `println!` would panic on EPIPE instead (exit 134). The long-running
/// commands keep it ignored: a peer closing a socket must be an error, not a kill.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: restores the default action of one signal, before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    if matches!(
        cli.command,
        Command::PrintDefaultConfig
            | Command::HashClaimCode
            | Command::Check { .. }
            | Command::Devices { .. }
    ) {
        quiet_on_closed_pipe();
    }
    match cli.command {
        Command::PrintDefaultConfig => {
            print!("{}", config::DEFAULT_CONFIG_TOML);
            Ok(())
        }
        Command::HashClaimCode => {
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)?;
            let code = line.trim_end_matches(['\r', '\n']);
            if code.len() < 6 {
                anyhow::bail!("a claim code must be at least 6 characters (read from stdin)");
            }
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
            ..
        } if !code.is_empty() => block_on(|_| pair(code, connect, data_dir)),
        Command::Pair {
            data_dir,
            mdns_interface,
            qr_ttl_secs,
            ..
        } => block_on(|shutdown| pair_qr(data_dir, mdns_interface, qr_ttl_secs, shutdown)),
        Command::Serve { config, settings } => {
            let config = config::config_file(config);
            let cfg = config::load(config.as_deref(), settings.clone())?;
            // SIGHUP loads the same stages again (the environment as read at start).
            let reloader: daemon::reload::Reloader =
                std::sync::Arc::new(move || config::load(config.as_deref(), settings.clone()));
            block_on(|shutdown| daemon::serve_with_reload(cfg, Some(reloader), shutdown))
        }
        Command::Check { config, settings } => block_on(|_| async move {
            let config = config::config_file(config);
            xagent_adb_connector::operator::run_check(config.as_deref(), settings).await
        }),
        Command::Devices {
            config,
            json,
            fleet,
            settings,
        } => block_on(|_| async move {
            let config = config::config_file(config);
            if fleet {
                return xagent_adb_connector::operator::run_fleet_devices(
                    config.as_deref(),
                    settings,
                    json,
                )
                .await;
            }
            xagent_adb_connector::operator::run_devices(config.as_deref(), settings, json).await
        }),
        #[cfg(feature = "sim")]
        Command::Sim(args) => block_on(|shutdown| async move {
            // A name of no interface would announce nothing without a word (as `serve`).
            xagent_adb_connector::adb::mdns::check_interfaces(&args.mdns_interface)?;
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
    use xagent_adb_connector::adb::host_key::{pair_with_phone, PairWithPhoneError};
    use xagent_adb_connector::adb::HostKeyFile;
    use xagent_adb_pairing::PairingError;
    let [addr, code] = <[String; 2]>::try_from(code)
        .map_err(|_| anyhow::anyhow!("--code takes HOST:PORT and the code"))?;
    let code = zeroize::Zeroizing::new(code);
    check_pair_args(&addr, &code, connect.as_deref())?;
    let key_file = HostKeyFile::new(data_dir.join(daemon::ADB_KEY_FILE));
    let key = key_file.get().await?;
    let guid = pair_with_phone(
        &key,
        &addr,
        code.as_bytes(),
        xagent_adb_connector::connector::pairing::PAIR_DEADLINE,
    )
    .await
    .map_err(|e| match e {
        // Settings closes the pairing dialog on a failed attempt and shows "pairing failed"
        // (AOSP packages/apps/Settings `WirelessDebuggingFragment`, WIRELESS_STATUS_FAIL), so
        // the code typed is dead: a retry needs a new dialog (new code and port).
        PairWithPhoneError::Pairing(PairingError::WrongPassword) => anyhow::anyhow!(
            "pairing with {addr} failed: {e}; the phone closes its pairing dialog after a \
             failed attempt: tap \"Pair device with pairing code\" again and run `pair --code` \
             with the new port and code"
        ),
        e => anyhow::anyhow!("pairing with {addr} failed: {e}"),
    })?;
    println!("paired with {}", guid.as_str());
    if let Some(connect) = connect {
        print_paired_serial(&connect, key_file).await.map_err(|e| {
            anyhow::anyhow!("paired, but reading the serial at {connect} failed: {e}")
        })?;
    }
    Ok(())
}

/// Reads the serial of the phone just paired, over TLS at its connect address `addr`, and
/// prints it with the `--device` that serves it (both `pair` variants). Retries while adbd has
/// not yet recorded the key (`retry_until_key_recorded`).
async fn print_paired_serial(
    addr: &str,
    key_file: xagent_adb_connector::adb::HostKeyFile,
) -> anyhow::Result<()> {
    use xagent_adb_connector::adb::host_key::retry_until_key_recorded;
    let link = xagent_adb_connector::adb::DeviceLink::direct_with_key(addr.to_string(), key_file);
    let out = retry_until_key_recorded(|| {
        link.shell(
            "getprop ro.serialno",
            std::time::Duration::from_secs(10),
            1024,
        )
    })
    .await?;
    println!("serial {}", out.stdout_text().trim());
    println!("connect address tcp:{addr} (serve it with --device tcp:{addr})");
    Ok(())
}

/// Checks `pair --code HOST:PORT CODE [--connect HOST:PORT]` before anything is made or
/// dialled: the addresses are `HOST:PORT` (port 1–65535; an IPv6 host in brackets) and the
/// code is the 6 digits a phone shows ([`xagent_adb_pairing::valid_pairing_code`]). Errors
/// are one stable line naming neither value: swapped arguments would put the code where the
/// address goes.
fn check_pair_args(addr: &str, code: &str, connect: Option<&str>) -> anyhow::Result<()> {
    if !is_host_port(addr) {
        anyhow::bail!(
            "--code HOST:PORT CODE: the first value must be the HOST:PORT shown under \"Pair device with pairing code\" (e.g. 192.168.1.5:37123)"
        );
    }
    if !xagent_adb_pairing::valid_pairing_code(code) {
        anyhow::bail!(
            "--code HOST:PORT CODE: the pairing code must be {} digits (the number the phone shows under \"Pair device with pairing code\")",
            xagent_adb_pairing::PAIRING_CODE_LENGTH
        );
    }
    if connect.is_some_and(|c| !is_host_port(c)) {
        anyhow::bail!(
            "--connect must be HOST:PORT (Wireless debugging → IP address & Port, e.g. 192.168.1.5:41234)"
        );
    }
    Ok(())
}

/// Whether `s` is `HOST:PORT` with a port from 1 to 65535: a host without spaces, an IPv6
/// address only in brackets (`[fe80::1]:5555`).
fn is_host_port(s: &str) -> bool {
    let Some((host, port)) = s.rsplit_once(':') else {
        return false;
    };
    let host = match host.strip_prefix('[') {
        Some(inner) => match inner.strip_suffix(']') {
            Some(v6) if v6.parse::<std::net::Ipv6Addr>().is_ok() => v6,
            _ => return false,
        },
        None if host.contains(':') => return false,
        None => host,
    };
    !host.is_empty()
        && !host.contains(char::is_whitespace)
        && port.parse::<u16>().is_ok_and(|p| p > 0)
}

/// Why `pair` without `--code` stops when stdout is not a terminal, and what to do instead.
const QR_NEEDS_TERMINAL: &str = "the pairing QR code is drawn only on a terminal (it holds the \
pairing password, which must not reach a file, a pipe or the journal): run `pair` on a terminal, \
or pair with a code: on the phone, Wireless debugging → Pair device with pairing code, then \
`pair --data-dir DIR --code HOST:PORT CODE --connect HOST:PORT`";

/// `pair` without `--code`: draws the QR in the terminal (stdout must be one:
/// [`QR_NEEDS_TERMINAL`]), waits for the phone (mDNS), pairs,
/// connects over TLS and prints the GUID, the serial and the connect address.
async fn pair_qr(
    data_dir: PathBuf,
    mdns_interfaces: Vec<String>,
    ttl_secs: u64,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    use xagent_adb_connector::adb::HostKeyFile;
    use xagent_adb_connector::connector::qr_pairing::attempt::{pair_by_qr, QrStop};
    use xagent_adb_connector::connector::qr_pairing::{image, QrPairingConfig};
    // The QR payload holds the pairing password: drawn for eyes on a terminal, never into a
    // file, a pipe or journald (where anyone reading the log could pair their own key).
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        anyhow::bail!("{QR_NEEDS_TERMINAL}");
    }
    xagent_adb_connector::adb::mdns::check_interfaces(&mdns_interfaces)?;
    let key_file = HostKeyFile::new(data_dir.join(daemon::ADB_KEY_FILE));
    let key = key_file.get().await?;
    let offer = xagent_adb_pairing::QrPairing::generate();
    let ttl = std::time::Duration::from_secs(ttl_secs.max(1));
    println!("{}", image::terminal_text(&offer.text())?);
    println!(
        "On the phone: Developer options → Wireless debugging → Pair device with QR code, and scan this code (valid {} s).",
        ttl.as_secs()
    );
    let config = QrPairingConfig {
        mdns_interfaces: mdns_interfaces
            .into_iter()
            .filter(|n| !n.trim().is_empty())
            .collect(),
        qr_ttl: ttl,
        adb_server: None,
    };
    let (guid, addr) = pair_by_qr(&key, &offer, &config, ttl, &shutdown, || {
        println!("scanned; pairing")
    })
    .await
    .map_err(|e| match e {
        QrStop::Canceled => anyhow::anyhow!("interrupted"),
        QrStop::Expired => anyhow::anyhow!("no phone scanned the QR code in time"),
        QrStop::Failed(reason) => anyhow::anyhow!(reason),
        QrStop::NotAnnounced(_) => anyhow::anyhow!(
            xagent_adb_connector::connector::qr_pairing::attempt::not_announced_message()
        ),
    })?;
    println!("paired with {}", guid.as_str());
    print_paired_serial(&addr.to_string(), key_file).await
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
