//! Third-party Python ADB clients against the sim: `adbutils` (PyPI, talks to an adb server)
//! through a private Google adb 34 server, and `adb-shell` (PyPI, speaks the device transport
//! itself) straight to a `--require-auth` sim with an RSA key made by `adb_shell.auth.keygen`,
//! accepted through the control API. The venv lives at `target/tools/venv` (or
//! `$XAGENT_TOOLS_DIR/venv`); `.ci/install-test-deps` makes it, and this test makes it too when
//! missing (that needs PyPI once).

#[path = "sim_rig.rs"]
mod sim_rig;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use sim_rig::adb_server::{AdbFlavor, AdbServer};
use xagent_adb_sim::SimOptions;

/// `python` of the venv, created (and the peers installed) if missing.
fn venv_python() -> PathBuf {
    let tools = std::env::var_os("XAGENT_TOOLS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/tools"));
    let venv = tools.join("venv");
    let python = venv.join("bin/python");
    let ready = |p: &PathBuf| {
        Command::new(p)
            .args(["-c", "import adbutils, adb_shell.auth.keygen, rsa"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !ready(&python) {
        if !python.exists() {
            let ok = Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status()
                .expect("python3");
            assert!(ok.success(), "python3 -m venv failed");
        }
        let ok = Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["adbutils", "adb-shell", "rsa"])
            .status()
            .expect("pip");
        assert!(ok.success(), "pip install adbutils adb-shell rsa failed");
    }
    python
}

fn python(script: &str, args: &[&str]) -> std::process::Child {
    Command::new(venv_python())
        .arg("-c")
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python")
}

fn finish(child: std::process::Child) -> (String, Output) {
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "python failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (text, out)
}

const ADBUTILS: &str = r#"
import sys, adbutils
port, target = int(sys.argv[1]), sys.argv[2]
c = adbutils.AdbClient(host="127.0.0.1", port=port)
print("connect:", c.connect(target, timeout=10))
d = c.device(serial=target)
print("serial:", d.shell("getprop ro.serialno").strip())
print("model:", d.prop.model)
png = d.shell(["screencap", "-p"], encoding=None)
print("png:", png[:8].hex(), len(png))
print("size:", d.window_size())
"#;

#[test]
fn adbutils_through_adb34_server() {
    let sim = sim_rig::start(SimOptions {
        serial: "PYUTILS".into(),
        ..SimOptions::default()
    });
    let adb = AdbServer::start(AdbFlavor::Google34);
    let port = adb.port.to_string();
    let (out, _) = finish(python(ADBUTILS, &[&port, &sim.target]));
    assert!(out.contains("serial: PYUTILS"), "{out}");
    assert!(out.contains("model: Pixel 8"), "{out}");
    assert!(out.contains("png: 89504e470d0a1a0a"), "{out}");
    assert!(
        out.contains("size: WindowSize(width=1080, height=2400)"),
        "{out}"
    );
    let _ = adb.run(&["disconnect", &sim.target]);
}

const ADB_SHELL: &str = r#"
import sys, os
from adb_shell.adb_device import AdbDeviceTcp
from adb_shell.auth.keygen import keygen
from adb_shell.auth.sign_pythonrsa import PythonRSASigner
host, port, keyfile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if not os.path.exists(keyfile):
    keygen(keyfile)
signer = PythonRSASigner(open(keyfile + ".pub").read(), open(keyfile).read())
dev = AdbDeviceTcp(host, port, default_transport_timeout_s=10.)
# The first connect offers the public key and waits for the user (the control API) to accept.
print("connected:", dev.connect(rsa_keys=[signer], auth_timeout_s=20.), flush=True)
print("serial:", dev.shell("getprop ro.serialno").strip())
png = dev.exec_out("screencap -p", decode=False)
print("png:", png[:8].hex(), len(png))
dev.close()
# A second connection signs the token with the now accepted key: no prompt.
dev2 = AdbDeviceTcp(host, port, default_transport_timeout_s=10.)
print("again:", dev2.connect(rsa_keys=[signer], auth_timeout_s=0.5))
print("rc:", dev2.shell("exit 3; echo no").strip() or "(empty)")
dev2.close()
"#;

#[test]
fn adb_shell_direct_with_rsa_auth() {
    let sim = sim_rig::start(SimOptions {
        serial: "PYSHELL".into(),
        require_auth: true,
        ..SimOptions::default()
    });
    let dir = std::env::temp_dir().join(format!("sim-pykey-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("adbkey");
    let _ = std::fs::remove_file(&key);
    let (host, port) = sim.target.rsplit_once(':').unwrap();
    let child = python(ADB_SHELL, &[host, port, key.to_str().unwrap()]);
    // Accept once the host has offered its key (pending), like a user tapping "Allow".
    let deadline = Instant::now() + Duration::from_secs(60);
    while sim.get("/v1/auth")["pending"] != 1 {
        assert!(Instant::now() < deadline, "adb-shell never offered its key");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(sim.get("/v1/auth")["accepted"], 0);
    sim.post("/v1/auth", json!({"action": "accept"}));
    let (out, _) = finish(child);
    assert!(out.contains("connected: True"), "{out}");
    assert!(out.contains("serial: PYSHELL"), "{out}");
    assert!(out.contains("png: 89504e470d0a1a0a"), "{out}");
    assert!(out.contains("again: True"), "{out}");
    assert_eq!(sim.get("/v1/auth")["accepted"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}
