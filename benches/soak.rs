//! The long fault soak (issue 10; figures in `docs/reliability.md`): `cargo bench --bench soak`.
//! 16 simulated phones by default (`SOAK_PHONES`), `SOAK_SECS` seconds (default 600), seed
//! `SOAK_SEED`, a fault every `SOAK_FAULT_MS` ms on average (default 1500). Prints the report and
//! exits 1 on any invariant violation. Not part of `cargo test`; `tests/soak_short.rs` is.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/soak/mod.rs"]
mod soak;

use std::time::{Duration, Instant};

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let cfg = soak::Config {
        phones: env("SOAK_PHONES", 16) as usize,
        duration: Duration::from_secs(env("SOAK_SECS", 600)),
        seed: env("SOAK_SEED", 10),
        fault_every: Duration::from_millis(env("SOAK_FAULT_MS", 1500)),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let started = Instant::now();
    let report = rt.block_on(soak::run(cfg.clone()));
    report.print(&cfg, started.elapsed());
    if !report.violations.is_empty() {
        std::process::exit(1);
    }
}
