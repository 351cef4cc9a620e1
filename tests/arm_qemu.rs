//! Issue 11 (proof on ARM): the aarch64 release binary that `.ci/run` cross-builds
//! (`cargo build --release --target aarch64-unknown-linux-gnu`, linker from .cargo/config.toml)
//! runs under qemu-user (`qemu-aarch64-static -L /usr/aarch64-linux-gnu`) as the connector, and
//! an xAgent client drives a simulated phone through it over HTTP and WebSocket — card, hello,
//! claim, screenshot (PNG downloaded and decoded), UI tree, tap, text — through Debian's adb 29,
//! the adb the package depends on. Its stripped size is printed and held to the 15 MiB budget.
//! The armv7 binary, when built, answers `print-default-config` under `qemu-arm-static`.
//! Where .ci/run could not build a target (no rustup target, no cross linker) the test says so
//! and returns.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::adb_server::{AdbFlavor, AdbServer};
use common::procs::{bin, spawn_and_wait, SimPhone, TempDir};
use common::API_KEY;

/// Budget for the stripped aarch64 binary (docs/performance.md).
const SIZE_BUDGET: u64 = 15 * 1024 * 1024;

fn release_binary(target: &str) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
        .join(target)
        .join("release/xagent-adb-connector")
}

/// The ELF machine field (`e_machine`, offset 18, little-endian): 183 = AArch64, 40 = ARM.
fn elf_machine(path: &Path) -> u16 {
    let head = std::fs::read(path).expect("read binary");
    assert_eq!(&head[..4], b"\x7fELF", "not an ELF file");
    u16::from_le_bytes([head[18], head[19]])
}

/// `qemu-…-static -L SYSROOT BINARY` when all three exist; the reason otherwise.
fn emulated(target: &str, qemu: &str, sysroot: &str) -> Result<Command, String> {
    let binary = release_binary(target);
    if !binary.exists() {
        return Err(format!(
            "{} not built (.ci/run builds it when the {target} Rust target and linker are installed)",
            binary.display()
        ));
    }
    if Command::new(qemu).arg("--version").output().is_err() {
        return Err(format!("{qemu} not installed (qemu-user-static)"));
    }
    if !Path::new(sysroot).join("lib").exists() {
        return Err(format!("{sysroot} missing (the cross libc package)"));
    }
    let mut cmd = Command::new(qemu);
    cmd.arg("-L").arg(sysroot).arg(binary);
    Ok(cmd)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aarch64_connector_under_qemu_claims_screenshots_and_taps_a_phone() {
    let target = "aarch64-unknown-linux-gnu";
    let mut cmd = match emulated(target, "qemu-aarch64-static", "/usr/aarch64-linux-gnu") {
        Ok(cmd) => cmd,
        Err(reason) => {
            println!("SKIP: {reason}");
            return;
        }
    };
    let binary = release_binary(target);
    assert_eq!(elf_machine(&binary), 183, "an AArch64 binary");
    let size = std::fs::metadata(&binary).unwrap().len();
    println!(
        "aarch64 release binary: {size} bytes ({:.2} MiB, budget 15 MiB)",
        size as f64 / 1048576.0
    );
    assert!(size <= SIZE_BUDGET, "{size} bytes > 15 MiB");

    let sim = SimPhone::start("SIMARM0000064");
    let adb = AdbServer::start(AdbFlavor::Debian29);
    adb.connect(&sim.addr);
    let dir = TempDir::new("arm-qemu");
    let key_file = dir.path().join("api_key");
    std::fs::write(&key_file, format!("{API_KEY}\n")).unwrap();
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--claim-policy", "open"])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--api-key-file")
        .arg(&key_file)
        .args(["--adb-server", &adb.addr()])
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("connector.log")).unwrap(),
        ));
    let (mut child, addr) = spawn_and_wait(cmd, "listening on http://");
    let t = common::scenario::walking_skeleton(&addr, &sim.serial).await;
    println!(
        "aarch64 under qemu-user: screenshot round trip {:.1} ms, tap round trip {:.1} ms",
        t.screenshot_ms, t.tap_ms
    );
    let _ = child.kill();
    let _ = child.wait();
    let log = std::fs::read_to_string(dir.path().join("connector.log")).unwrap_or_default();
    assert!(!log.contains(API_KEY), "the API key reached the log");
}

#[test]
fn armv7_binary_runs_under_qemu() {
    let target = "armv7-unknown-linux-gnueabihf";
    let mut cmd = match emulated(target, "qemu-arm-static", "/usr/arm-linux-gnueabihf") {
        Ok(cmd) => cmd,
        Err(reason) => {
            println!("SKIP: {reason}");
            return;
        }
    };
    let binary = release_binary(target);
    assert_eq!(elf_machine(&binary), 40, "a 32-bit ARM binary");
    println!(
        "armv7 release binary: {} bytes",
        std::fs::metadata(&binary).unwrap().len()
    );
    let out = cmd
        .arg("print-default-config")
        .output()
        .expect("run qemu-arm");
    assert!(out.status.success(), "{out:?}");
    let host = Command::new(bin())
        .arg("print-default-config")
        .output()
        .unwrap();
    assert_eq!(out.stdout, host.stdout);
}
