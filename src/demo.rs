//! `demo`: two simulated phones (crate `xagent-adb-sim`) and the connector on them, through the
//! same staged configuration as `serve` ([`crate::config::Settings`]). Built with the `sim`
//! feature only.

use std::net::SocketAddr;

use tokio_util::sync::CancellationToken;

use crate::config::ClaimPolicy;
use crate::daemon::{bind_listen, private_dir, serve_on};

/// Options of `demo`.
#[derive(Debug, Clone)]
pub struct DemoOptions {
    /// Connector listen address.
    pub listen: SocketAddr,
    /// Data dir (API key file is created here if absent).
    pub data_dir: std::path::PathBuf,
}

/// Starts two simulated phones and the connector on them (direct transport, claim policy open).
/// The listen address is bound first, so a busy one is refused (naming it and `--listen`)
/// before anything is printed.
pub async fn demo(opts: DemoOptions, shutdown: CancellationToken) -> anyhow::Result<()> {
    let listener = bind_listen(opts.listen).await?;
    let listen = listener.local_addr()?;
    private_dir(&opts.data_dir)?;
    let key_path = opts.data_dir.join("api_key");
    if !key_path.exists() {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .create_new(true)
            .write(true)
            .mode(0o600)
            .open(&key_path)?;
        writeln!(f, "{}", crate::protocol::random_hex(24))?;
    }
    let mut devices = Vec::new();
    for (serial, model) in [("SIM0000000001", "Pixel 8"), ("SIM0000000002", "Pixel 8")] {
        let handle = xagent_adb_sim::start(
            xagent_adb_sim::SimOptions {
                listen: "127.0.0.1:0".parse()?,
                serial: serial.into(),
                model: model.into(),
                persona: "pixel-android14".into(),
                control: None,
                ..Default::default()
            },
            shutdown.clone(),
        )
        .await?;
        devices.push(format!("tcp:{}", handle.adb_addr));
        println!(
            "simulated phone {serial} ({model}) on tcp:{}",
            handle.adb_addr
        );
    }
    // The same staged config as `serve`, with the demo's layer on the defaults.
    let config = crate::config::Settings {
        listen: Some(opts.listen),
        data_dir: Some(opts.data_dir.clone()),
        api_key_file: Some(key_path.clone()),
        adb_server: vec![String::new()],
        devices,
        claim_policy: Some(ClaimPolicy::Open),
        ..Default::default()
    }
    .resolve()?;
    print_demo_help(listen, &key_path);
    serve_on(listener, config, None, shutdown).await
}

fn print_demo_help(listen: SocketAddr, key_path: &std::path::Path) {
    let base = format!("http://{listen}");
    println!("base URL: {base}");
    println!("API key file: {}", key_path.display());
    println!(
        "try: curl -s -H \"Authorization: Bearer $(cat {})\" {base}/health",
        key_path.display()
    );
    println!("card: curl -s {base}/connector-card.json");
    println!("phones to claim (flow adb_device_claim, field serial): SIM0000000001, SIM0000000002");
}
