//! Issue 11 (package): the amd64 `.deb` that `.ci/run` builds with cargo-deb
//! (`target/debian/xagent-adb-connector_*_amd64.deb`), checked without changing this machine:
//! `dpkg-deb -I/-c/-x` (control, conffiles, files, owners, modes), the packaged config equal to
//! `print-default-config`, lintian free of errors, shellcheck on the maintainer scripts — and
//! the maintainer scripts themselves run against a scratch root: their `/etc`, `/var/lib` and
//! `/run` paths are rewritten into it, and the commands that would touch the machine
//! (`adduser`, `chown`, `deb-systemd-helper`, `deb-systemd-invoke`, `systemctl`, `udevadm`) are
//! stand-ins that record their arguments. Install without systemd running (chroot, container),
//! install with systemd, upgrade, remove and purge are each played.
//! When the .deb was not built (a bare `cargo test`), each test says so and returns.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::procs::{bin, TempDir};

/// The amd64 .deb .ci/run built, if any.
fn deb() -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
    let dir = target.join("debian");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("xagent-adb-connector_") && n.ends_with("_amd64.deb")
            })
        })
        .collect();
    found.sort();
    found.pop()
}

macro_rules! deb_or_skip {
    () => {
        match deb() {
            Some(path) => path,
            None => {
                println!(
                    "SKIP: no target/debian/xagent-adb-connector_*_amd64.deb — .ci/run builds it \
                     (cargo build --release && cargo-deb --no-build)"
                );
                return;
            }
        }
    };
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn control_conffiles_files_owners_and_modes() {
    let deb = deb_or_skip!();
    let size = std::fs::metadata(&deb).unwrap().len();
    println!("{}: {size} bytes", deb.display());
    let info = run(Command::new("dpkg-deb").arg("-I").arg(&deb));
    for needle in [
        "Package: xagent-adb-connector",
        "Architecture: amd64",
        "Section: net",
    ] {
        assert!(info.contains(needle), "control lacks {needle:?}:\n{info}");
    }
    let depends = info
        .lines()
        .find(|l| l.trim_start().starts_with("Depends:"))
        .expect("Depends");
    for dep in ["adb", "adduser", "libc6"] {
        assert!(depends.contains(dep), "{depends}");
    }
    let name = run(Command::new("dpkg-deb").arg("-f").arg(&deb).arg("Package"));
    assert_eq!(name.trim(), "xagent-adb-connector");
    let ctl = TempDir::new("deb-ctl");
    run(Command::new("dpkg-deb").arg("-e").arg(&deb).arg(ctl.path()));
    assert_eq!(
        std::fs::read_to_string(ctl.path().join("conffiles")).unwrap(),
        "/etc/xagent-adb-connector/config.toml\n"
    );
    for script in ["postinst", "prerm", "postrm"] {
        let mode = std::fs::metadata(ctl.path().join(script))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755, "{script} mode {mode:o}");
    }

    // `dpkg-deb -c`: "MODE OWNER/GROUP SIZE DATE TIME PATH".
    let listing = run(Command::new("dpkg-deb").arg("-c").arg(&deb));
    let entry = |path: &str| -> (String, String) {
        let line = listing
            .lines()
            .find(|l| l.ends_with(&format!(" ./{path}")) || l.ends_with(&format!(" {path}")))
            .unwrap_or_else(|| panic!("{path} not in the package:\n{listing}"));
        let cols: Vec<&str> = line.split_whitespace().collect();
        (cols[0].to_string(), cols[1].to_string())
    };
    for (path, mode) in [
        ("usr/bin/xagent-adb-connector", "-rwxr-xr-x"),
        ("etc/xagent-adb-connector/config.toml", "-rw-r-----"),
        (
            "usr/lib/udev/rules.d/60-xagent-adb-connector.rules",
            "-rw-r--r--",
        ),
        (
            "lib/systemd/system/xagent-adb-connector.service",
            "-rw-r--r--",
        ),
        ("lib/systemd/system/xagent-adb-server.service", "-rw-r--r--"),
        ("usr/share/doc/xagent-adb-connector/copyright", "-rw-r--r--"),
        (
            "usr/share/doc/xagent-adb-connector/changelog.Debian.gz",
            "-rw-r--r--",
        ),
    ] {
        let (got_mode, owner) = entry(path);
        assert_eq!(got_mode, mode, "{path}");
        assert!(
            owner == "root/root" || owner == "0/0",
            "{path} owned by {owner}"
        );
    }
    // Nothing made at run time is shipped: no API key, no state.
    assert!(!listing.contains("api_key"), "{listing}");
    assert!(!listing.contains("operator_key"), "{listing}");
    assert!(!listing.contains("var/lib"), "{listing}");
}

#[test]
fn payload_matches_the_repo_and_the_binary_runs() {
    let deb = deb_or_skip!();
    let root = TempDir::new("deb-x");
    run(Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(root.path()));
    let packaged = root.path().join("usr/bin/xagent-adb-connector");
    let version = run(Command::new(&packaged).arg("--version"));
    assert!(version.starts_with("xagent-adb-connector "), "{version}");
    // The conffile is exactly what the binary prints (and the repo's copy is too).
    let default = run(Command::new(bin()).arg("print-default-config"));
    let conf =
        std::fs::read_to_string(root.path().join("etc/xagent-adb-connector/config.toml")).unwrap();
    assert_eq!(
        conf, default,
        "packaged config.toml != print-default-config"
    );
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (packaged, source) in [
        (
            "lib/systemd/system/xagent-adb-connector.service",
            "systemd/xagent-adb-connector.service",
        ),
        (
            "lib/systemd/system/xagent-adb-server.service",
            "systemd/xagent-adb-server.service",
        ),
        (
            "usr/lib/udev/rules.d/60-xagent-adb-connector.rules",
            "systemd/deb/60-xagent-adb-connector.rules",
        ),
    ] {
        assert_eq!(
            std::fs::read(root.path().join(packaged)).unwrap(),
            std::fs::read(repo.join(source)).unwrap(),
            "{packaged} differs from {source}"
        );
    }
}

#[test]
fn repo_config_is_print_default_config() {
    // Runs without the .deb: the conffile's source stays in step with the binary.
    let default = run(Command::new(bin()).arg("print-default-config"));
    let repo = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("systemd/deb/config.toml"),
    )
    .unwrap();
    assert_eq!(
        repo, default,
        "regenerate: cargo run -- print-default-config > systemd/deb/config.toml"
    );
}

#[test]
fn udev_rule_keys_on_the_adb_interface_and_grants_the_service_group() {
    let rule = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("systemd/deb/60-xagent-adb-connector.rules"),
    )
    .unwrap();
    let rules: Vec<&str> = rule
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    assert!(
        rules.contains(
            &"ENV{ID_USB_INTERFACES}==\"*:ff4201:*\", GROUP=\"xagent-adb-connector\", MODE=\"0660\""
        ),
        "{rule}"
    );
    assert!(!rule.contains("idVendor"), "no vendor list: {rule}");
    // `udevadm verify` exists from systemd 254 on.
    match Command::new("udevadm").args(["verify", "--help"]).output() {
        Ok(out) if out.status.success() => {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("systemd/deb/60-xagent-adb-connector.rules");
            run(Command::new("udevadm").arg("verify").arg(path));
        }
        Ok(out) => println!(
            "SKIP udevadm verify: this udevadm has no `verify` (systemd < 254): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => println!("SKIP udevadm verify: udevadm not installed ({e})"),
    }
}

#[test]
fn lintian_finds_no_error_and_scripts_pass_shellcheck() {
    let deb = deb_or_skip!();
    if have("lintian") {
        let out = Command::new("lintian")
            .args(["--fail-on", "error", "--tag-display-limit", "0"])
            .arg(&deb)
            .output()
            .expect("lintian");
        let text = String::from_utf8_lossy(&out.stdout);
        println!("lintian:\n{text}");
        assert!(out.status.success(), "lintian errors:\n{text}");
        assert!(!text.lines().any(|l| l.starts_with("E:")), "{text}");
    } else {
        println!("SKIP lintian: not installed (.ci/install-test-deps installs it)");
    }
    let ctl = TempDir::new("deb-sc");
    run(Command::new("dpkg-deb").arg("-e").arg(&deb).arg(ctl.path()));
    for script in ["postinst", "prerm", "postrm"] {
        let path = ctl.path().join(script);
        run(Command::new("sh").arg("-n").arg(&path));
        if have("shellcheck") {
            run(Command::new("shellcheck").args(["-s", "sh"]).arg(&path));
        } else {
            println!("SKIP shellcheck {script}: not installed");
        }
    }
}

/// A scratch root holding the unpacked package, the maintainer scripts rewritten to act on it,
/// and stand-ins for the commands that would change the machine.
struct Scratch {
    _dir: TempDir,
    root: PathBuf,
    scripts: PathBuf,
    bin: PathBuf,
    log: PathBuf,
}

impl Scratch {
    fn new(deb: &Path) -> Scratch {
        let dir = TempDir::new("deb-root");
        let root = dir.path().join("root");
        let scripts = dir.path().join("scripts");
        let bin = dir.path().join("bin");
        let log = dir.path().join("calls.log");
        for d in [&root, &scripts, &bin] {
            std::fs::create_dir_all(d).unwrap();
        }
        run(Command::new("dpkg-deb").arg("-x").arg(deb).arg(&root));
        let ctl = dir.path().join("ctl");
        run(Command::new("dpkg-deb").arg("-e").arg(deb).arg(&ctl));
        let r = root.display().to_string();
        for name in ["postinst", "prerm", "postrm"] {
            let text = std::fs::read_to_string(ctl.join(name)).unwrap();
            let text = text
                .replace(
                    "/etc/xagent-adb-connector",
                    &format!("{r}/etc/xagent-adb-connector"),
                )
                .replace(
                    "/var/lib/xagent-adb-connector",
                    &format!("{r}/var/lib/xagent-adb-connector"),
                )
                .replace("/run/", &format!("{r}/run/"));
            // Nothing left that names the machine's own /etc, /var or /run.
            for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
                for prefix in [" /etc/", " /var/", " /run/", "\"/etc/", "\"/var/", "=/etc/"] {
                    assert!(
                        !line.contains(prefix),
                        "{name} still touches the machine: {line}"
                    );
                }
            }
            let path = scripts.join(name);
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let log_s = log.display();
        let record = format!("echo \"$(basename \"$0\") $*\" >> '{log_s}'\n");
        let stubs = [
            ("adduser", format!("{record}touch '{r}/.user-made'\n")),
            // getent passwd USER: known once adduser ran.
            ("getent", format!("{record}[ -e '{r}/.user-made' ]\n")),
            ("chown", record.clone()),
            ("deb-systemd-helper", record.clone()),
            ("deb-systemd-invoke", record.clone()),
            ("systemctl", record.clone()),
            ("udevadm", record.clone()),
            // `install -o/-g` needs the user: drop those, keep the rest.
            (
                "install",
                format!(
                    "{record}args=''\nwhile [ $# -gt 0 ]; do case \"$1\" in -o|-g) shift 2;; \
                     *) args=\"$args '$1'\"; shift;; esac; done\neval exec /usr/bin/install $args\n"
                ),
            ),
        ];
        for (name, body) in stubs {
            let path = bin.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        Scratch {
            _dir: dir,
            root,
            scripts,
            bin,
            log,
        }
    }

    /// Runs maintainer script `name` with `args`; returns its stdout+stderr and the commands
    /// it called (stand-ins only) during this run.
    fn script(&self, name: &str, args: &[&str]) -> (String, Vec<String>) {
        let _ = std::fs::remove_file(&self.log);
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = Command::new("sh")
            .arg(self.scripts.join(name))
            .args(args)
            .env("PATH", path)
            .output()
            .expect("run script");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{name} {args:?} failed: {text}");
        let calls = std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        (text, calls)
    }

    fn etc(&self, file: &str) -> PathBuf {
        self.root.join("etc/xagent-adb-connector").join(file)
    }
}

/// Whether a recorded call starts with `command` and names `unit` among its arguments
/// (cargo-deb's snippets pass all units to one call).
fn called_for(calls: &[String], command: &str, unit: &str) -> bool {
    calls.iter().any(|c| {
        c.strip_prefix(command)
            .is_some_and(|rest| rest.starts_with(' ') && rest.split(' ').any(|w| w == unit))
    })
}

#[test]
fn maintainer_scripts_install_upgrade_remove_purge_in_a_scratch_root() {
    let deb = deb_or_skip!();
    let s = Scratch::new(&deb);

    // Fresh install in a chroot/container: no /run/systemd/system, no udev.
    let (output, calls) = s.script("postinst", &["configure"]);
    assert!(
        calls
            .iter()
            .any(|c| c.starts_with("adduser --quiet --system --group")
                && c.ends_with(" xagent-adb-connector")),
        "{calls:?}"
    );
    let key_path = s.etc("api_key");
    let key = std::fs::read_to_string(&key_path).expect("API key made");
    let key = key.trim_end();
    assert!(key.len() >= 40, "256-bit key, base64: {} chars", key.len());
    assert!(
        key.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '+' || c == '/'),
        "one line of base64"
    );
    let mode = std::fs::metadata(&key_path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "key mode {mode:o}");
    assert!(
        calls
            .iter()
            .any(|c| c.starts_with("chown xagent-adb-connector:xagent-adb-connector ")),
        "the key is given to the service user: {calls:?}"
    );
    assert!(!output.contains(key), "postinst printed the key");
    assert!(
        !calls.iter().any(|c| c.contains(key)),
        "the key reached a command line"
    );
    // The key is accepted by the connector's own reader (≥ 16 characters).
    xagent_adb_connector::config::read_api_key(&key_path).expect("a valid API key");
    // The operator key (the console's password), made the same way, another key.
    let operator_path = s.etc("operator_key");
    let operator = std::fs::read_to_string(&operator_path).expect("operator key made");
    let operator = operator.trim_end().to_string();
    assert!(operator.len() >= 40 && operator != key, "a key of its own");
    let mode = std::fs::metadata(&operator_path)
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "operator key mode {mode:o}");
    assert!(
        !output.contains(&operator),
        "postinst printed the operator key"
    );
    assert!(!calls.iter().any(|c| c.contains(&operator)));
    xagent_adb_connector::config::read_operator_key(&operator_path).expect("a valid operator key");
    for unit in ["xagent-adb-server.service", "xagent-adb-connector.service"] {
        assert!(
            called_for(&calls, "deb-systemd-helper enable", unit),
            "{calls:?}"
        );
    }
    assert!(
        !calls
            .iter()
            .any(|c| c.starts_with("systemctl") || c.starts_with("deb-systemd-invoke")),
        "no systemd running: nothing started: {calls:?}"
    );
    assert!(!calls.iter().any(|c| c.starts_with("udevadm")), "{calls:?}");
    assert!(s.root.join("var/lib/xagent-adb-connector").is_dir());

    // Upgrade on a booted box: the key stays, no new user, both units restarted, udev reloaded.
    std::fs::create_dir_all(s.root.join("run/systemd/system")).unwrap();
    std::fs::create_dir_all(s.root.join("run/udev")).unwrap();
    let control = std::os::unix::net::UnixListener::bind(s.root.join("run/udev/control")).unwrap();
    std::fs::write(
        s.root
            .join("var/lib/xagent-adb-connector/connector.sqlite3"),
        b"bindings",
    )
    .unwrap();
    std::fs::write(
        s.root.join("var/lib/xagent-adb-connector/adbkey"),
        b"adb key",
    )
    .unwrap();
    let (_, calls) = s.script("postinst", &["configure", "0.1.0-1"]);
    assert_eq!(std::fs::read_to_string(&key_path).unwrap().trim_end(), key);
    assert_eq!(
        std::fs::read_to_string(&operator_path).unwrap().trim_end(),
        operator
    );
    assert!(!calls.iter().any(|c| c.starts_with("adduser")), "{calls:?}");
    for unit in ["xagent-adb-server.service", "xagent-adb-connector.service"] {
        assert!(
            called_for(&calls, "deb-systemd-invoke restart", unit),
            "{calls:?}"
        );
    }
    assert!(
        calls.contains(&"udevadm control --reload-rules".to_string()),
        "{calls:?}"
    );
    drop(control);

    // Remove keeps key, config and state; units stopped.
    let (_, calls) = s.script("prerm", &["remove"]);
    for unit in ["xagent-adb-server.service", "xagent-adb-connector.service"] {
        assert!(
            called_for(&calls, "deb-systemd-invoke stop", unit),
            "{calls:?}"
        );
    }
    s.script("postrm", &["remove"]);
    assert!(key_path.exists());
    assert!(s.root.join("var/lib/xagent-adb-connector/adbkey").exists());
    assert!(s.etc("config.toml").exists());

    // Purge removes the key and the state (bindings, adb keys).
    let (_, calls) = s.script("postrm", &["purge"]);
    assert!(!key_path.exists(), "key removed on purge");
    assert!(!operator_path.exists(), "operator key removed on purge");
    assert!(
        !s.root.join("var/lib/xagent-adb-connector").exists(),
        "state removed on purge"
    );
    for unit in ["xagent-adb-server.service", "xagent-adb-connector.service"] {
        assert!(
            called_for(&calls, "deb-systemd-helper purge", unit),
            "{calls:?}"
        );
    }
}
