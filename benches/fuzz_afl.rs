//! AFL++ harness of the fuzz targets in `tests/fuzz/targets.rs` (coverage-guided, stable Rust:
//! afl.rs instruments with LLVM's SanitizerCoverage, no nightly needed). See
//! `docs/reliability.md` for the procedure and the figures.
//!
//! - `cargo afl build --release --bench fuzz_afl` (own target dir, see the doc) builds the
//!   instrumented binary; `FUZZ_TARGET=<name> cargo afl fuzz -i <seeds> -o <out> <binary>` runs
//!   one target in persistent mode.
//! - Without `cargo afl` (`cargo bench --bench fuzz_afl -- …`, or the plain binary) it is a
//!   corpus tool: `seeds <target> <dir>` writes a target's seed corpus (the captures under
//!   `tests/fixtures/` and the synthetic wire seeds); `replay <target> <file>…` runs inputs
//!   (crash reproduction); `list` names the targets.

// `fuzzing` is set by `cargo afl build`, not by Cargo.
#![allow(unexpected_cfgs)]

#[path = "../tests/fuzz/targets.rs"]
mod targets;

#[cfg(fuzzing)]
fn main() {
    let name = std::env::var("FUZZ_TARGET").unwrap_or_default();
    let Some(target) = targets::target(&name) else {
        eprintln!("set FUZZ_TARGET to one of: {}", names());
        std::process::exit(2);
    };
    afl::fuzz!(|data: &[u8]| {
        (target.run)(data);
    });
}

#[cfg(not(fuzzing))]
fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["seeds", name, dir] => {
            let target = targets::target(name).unwrap_or_else(|| unknown(name));
            std::fs::create_dir_all(dir).expect("create the seed directory");
            for (i, seed) in targets::seeds(target).iter().enumerate() {
                std::fs::write(format!("{dir}/seed-{i:03}"), seed).expect("write a seed");
            }
        }
        ["replay", name, files @ ..] => {
            let target = targets::target(name).unwrap_or_else(|| unknown(name));
            for file in files {
                let data = std::fs::read(file).expect("read the input");
                (target.run)(&data);
                println!("{file}: ok");
            }
        }
        ["list"] => println!("{}", names()),
        // `cargo bench` with no arguments: replay every target's seeds once, a smoke run.
        _ => {
            for t in targets::TARGETS {
                for seed in targets::seeds(t) {
                    (t.run)(&seed);
                }
                println!("{}: seeds ok", t.name);
            }
        }
    }
}

#[cfg(not(fuzzing))]
fn unknown(name: &str) -> ! {
    eprintln!("unknown target {name}; targets: {}", names());
    std::process::exit(2);
}

fn names() -> String {
    targets::TARGETS
        .iter()
        .map(|t| t.name)
        .collect::<Vec<_>>()
        .join(" ")
}
