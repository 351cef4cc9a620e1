//! Issue 8 §5 / issue 11: `serve` settings stack as compiled-in defaults → `--config` file →
//! environment (`XAGENT_ADB_<FLAG>`) → flags, through the real binary.

mod common;

use std::process::{Command, Stdio};

use common::procs::{bin, spawn_and_wait, TempDir};
use common::API_KEY;

/// The IP of `addr` (`IP:PORT`).
fn ip_of(addr: &str) -> String {
    addr.rsplit_once(':')
        .map(|(ip, _)| ip)
        .unwrap_or(addr)
        .to_string()
}

/// `serve` with no inherited `XAGENT_ADB_*` variables, plus `env` and `args`; returns the
/// address it says it listens on.
fn listen_addr_of(env: &[(&str, String)], args: &[String]) -> String {
    let mut cmd = Command::new(bin());
    cmd.arg("serve").args(args).stderr(Stdio::null());
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let (mut child, addr) = spawn_and_wait(cmd, "listening on http://");
    let _ = child.kill();
    let _ = child.wait();
    addr
}

#[test]
fn file_then_environment_then_flags() {
    let dir = TempDir::new("stages");
    let key = dir.path().join("api_key");
    std::fs::write(&key, format!("{API_KEY}\n")).unwrap();
    // Three loopback addresses, port 0: the stage that set `listen` shows in the IP the
    // connector says it listens on, and no port picked ahead can be taken meanwhile by
    // another test (a flake: `serve` exited 1 on a port in use).
    let (from_file, from_env, from_flag) = (
        "127.0.0.11:0".to_string(),
        "127.0.0.12:0".to_string(),
        "127.0.0.13:0".to_string(),
    );
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"{from_file}\"\nadb_server = \"\"\ndata_dir = \"{}\"\napi_key_file = \"{}\"\n",
            dir.path().join("data").display(),
            key.display()
        ),
    )
    .unwrap();
    let with_file = vec!["--config".to_string(), config.display().to_string()];

    assert_eq!(
        ip_of(&listen_addr_of(&[], &with_file)),
        ip_of(&from_file),
        "the file sets it"
    );
    let env = [("XAGENT_ADB_LISTEN", from_env.clone())];
    assert_eq!(
        ip_of(&listen_addr_of(&env, &with_file)),
        ip_of(&from_env),
        "the environment overrides the file"
    );
    let mut flags = with_file.clone();
    flags.extend(["--listen".to_string(), from_flag.clone()]);
    assert_eq!(
        ip_of(&listen_addr_of(&env, &flags)),
        ip_of(&from_flag),
        "a flag overrides the environment"
    );
    // The config file's path itself may come from the environment.
    let env = [("XAGENT_ADB_CONFIG", config.display().to_string())];
    assert_eq!(ip_of(&listen_addr_of(&env, &[])), ip_of(&from_file));
}

#[test]
fn required_settings_from_the_environment_alone() {
    let dir = TempDir::new("stages-env");
    let key = dir.path().join("api_key");
    std::fs::write(&key, format!("{API_KEY}\n")).unwrap();
    // Port 0 on an address of its own: nothing picked ahead that another test could take.
    let addr = "127.0.0.14:0".to_string();
    let env = [
        ("XAGENT_ADB_LISTEN", addr.clone()),
        (
            "XAGENT_ADB_DATA_DIR",
            dir.path().join("d").display().to_string(),
        ),
        ("XAGENT_ADB_API_KEY_FILE", key.display().to_string()),
        // No adb server on this port: the connector warns and keeps retrying, it does not fail.
        ("XAGENT_ADB_ADB_SERVER", "127.0.0.1:1".to_string()),
    ];
    assert_eq!(ip_of(&listen_addr_of(&env, &[])), ip_of(&addr));
}

#[test]
fn help_names_every_environment_variable_and_missing_settings_are_named() {
    let out = Command::new(bin())
        .args(["serve", "--help"])
        .output()
        .expect("help");
    let help = String::from_utf8_lossy(&out.stdout);
    for var in [
        "XAGENT_ADB_CONFIG",
        "XAGENT_ADB_LISTEN",
        "XAGENT_ADB_DATA_DIR",
        "XAGENT_ADB_API_KEY_FILE",
        "XAGENT_ADB_ADB_SERVER",
        "XAGENT_ADB_DEVICE",
        "XAGENT_ADB_CLAIM_POLICY",
        "XAGENT_ADB_LEASE_GRACE",
    ] {
        assert!(help.contains(var), "--help lacks {var}:\n{help}");
    }
    let mut cmd = Command::new(bin());
    cmd.arg("serve");
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
        cmd.env_remove(k);
    }
    let out = cmd.output().expect("serve");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--api-key-file is required"), "{err}");
}

/// A bad value in `XAGENT_ADB_*` is reported under the variable's name (the operator never
/// typed the flag); the same bad value typed as a flag is reported under the flag.
#[test]
fn environment_parse_errors_name_the_variable() {
    let serve = |env: &[(&str, &str)], args: &[&str]| {
        let mut cmd = Command::new(bin());
        cmd.arg("serve").args(args);
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
            cmd.env_remove(k);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("serve");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    for (var, value) in [
        ("XAGENT_ADB_LISTEN", "not-an-address"),
        ("XAGENT_ADB_FILE_TTL_SECS", "ten"),
        ("XAGENT_ADB_CLAIM_POLICY", "everyone"),
        ("XAGENT_ADB_LOG_FORMAT", "xml"),
    ] {
        let (status, err) = serve(&[(var, value)], &[]);
        assert_eq!(status, Some(2), "{err}");
        assert!(
            err.contains(&format!("environment variable {var}")),
            "{err}"
        );
        assert!(err.contains(value), "{err}");
    }
    let (status, err) = serve(
        &[("XAGENT_ADB_LISTEN", "127.0.0.1:1")],
        &["--listen", "not-an-address"],
    );
    assert_eq!(status, Some(2), "{err}");
    assert!(err.contains("'--listen <LISTEN>'"), "{err}");
    assert!(!err.contains("XAGENT_ADB_LISTEN"), "{err}");
}

/// `XAGENT_ADB_ADB_SERVER` takes a comma-separated list (as `--adb-server` repeated); a bad
/// item is named.
#[test]
fn adb_servers_from_the_environment_as_a_list() {
    let dir = TempDir::new("stages-servers");
    let key = dir.path().join("api_key");
    std::fs::write(&key, format!("{API_KEY}\n")).unwrap();
    let base = [
        (
            "XAGENT_ADB_DATA_DIR",
            dir.path().join("d").display().to_string(),
        ),
        ("XAGENT_ADB_API_KEY_FILE", key.display().to_string()),
    ];
    let mut env = base.to_vec();
    env.push((
        "XAGENT_ADB_ADB_SERVER",
        "box-a=127.0.0.1:1,127.0.0.1:2".into(),
    ));
    let mut cmd = Command::new(bin());
    cmd.arg("check");
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
        cmd.env_remove(k);
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    let out = cmd.output().expect("check");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("PROBLEM  adb server box-a:"), "{text}");
    assert!(text.contains("PROBLEM  adb server 127.0.0.1:2:"), "{text}");
    let mut cmd = Command::new(bin());
    cmd.arg("check");
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
        cmd.env_remove(k);
    }
    cmd.envs(base.iter().map(|(k, v)| (k, v)));
    cmd.env("XAGENT_ADB_ADB_SERVER", "127.0.0.1:1,nonsense");
    let out = cmd.output().expect("check");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\"nonsense\""), "{text}");
}

/// `log_format` is a file key like every flag's: `"json"` in the file makes every stderr line a
/// JSON object; `XAGENT_ADB_LOG_FORMAT` (and so the flag) wins over the file.
#[test]
fn log_format_from_the_file_and_the_environment_over_it() {
    let dir = TempDir::new("stages-logfmt");
    let key = dir.path().join("api_key");
    std::fs::write(&key, format!("{API_KEY}\n")).unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "log_format = \"json\"\nadb_server = \"\"\ndata_dir = \"{}\"\napi_key_file = \"{}\"\nlisten = \"127.0.0.1:0\"\n",
            dir.path().join("data").display(),
            key.display()
        ),
    )
    .unwrap();
    let logs_of = |env: &[(&str, &str)], tag: &str| {
        let log = dir.path().join(format!("{tag}.log"));
        let mut cmd = Command::new(bin());
        cmd.arg("serve")
            .arg("--config")
            .arg(&config)
            .stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
            cmd.env_remove(k);
        }
        cmd.env_remove("RUST_LOG");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let (mut child, _) = spawn_and_wait(cmd, "listening on http://");
        // The log line follows the stdout line: wait (≤ 10 s) for it before stopping.
        for _ in 0..100 {
            if std::fs::read_to_string(&log).is_ok_and(|t| t.contains("connector listening")) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        let _ = child.kill();
        let _ = child.wait();
        std::fs::read_to_string(&log).unwrap()
    };
    let json = logs_of(&[], "file");
    let lines: Vec<&str> = json.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        lines.iter().any(|l| l.contains("connector listening")),
        "{json}"
    );
    for line in &lines {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(v["fields"].is_object(), "{line}");
    }
    let text = logs_of(&[("XAGENT_ADB_LOG_FORMAT", "text")], "env");
    assert!(text.contains("connector listening"), "{text}");
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_err(),
            "the environment did not win: {line}"
        );
    }
    let default = Command::new(bin())
        .arg("print-default-config")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&default.stdout).contains("# log_format = \"text\""));
}

/// `--mdns-interface` naming an interface the box lacks stops `serve` at start (exit 1) with
/// the name and the interfaces that exist; one that exists (`lo`) is taken.
#[test]
fn an_unknown_mdns_interface_is_refused_at_start() {
    let dir = TempDir::new("stages-mdns");
    let key = dir.path().join("api_key");
    std::fs::write(&key, format!("{API_KEY}\n")).unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--adb-server", ""])
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--api-key-file")
        .arg(&key)
        .args(["--mdns-interface", "nosuchif0"]);
    for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
        cmd.env_remove(k);
    }
    let out = cmd.output().expect("serve");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("--mdns-interface \"nosuchif0\": no such network interface"),
        "{err}"
    );
    let listed = err.split("it has: ").nth(1).unwrap_or("");
    assert!(listed.split([',', ')']).any(|n| n.trim() == "lo"), "{err}");
    let addr = listen_addr_of(
        &[],
        &[
            "--listen".into(),
            "127.0.0.1:0".into(),
            "--adb-server".into(),
            String::new(),
            "--data-dir".into(),
            dir.path().join("data").display().to_string(),
            "--api-key-file".into(),
            key.display().to_string(),
            "--mdns-interface".into(),
            "lo".into(),
        ],
    );
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
}

/// A `lease_grace` that is no duration is refused naming the flag, the file key and the
/// variable, whichever of them gave it, by `check` and at start of `serve`. Before: all three
/// said only `bad duration "abc": expected number at 0`.
#[test]
fn a_lease_grace_that_is_no_duration_is_refused_by_name() {
    let dir = TempDir::new("stages-grace");
    let key = dir.path().join("api_key");
    std::fs::write(&key, format!("{API_KEY}\n")).unwrap();
    let file = dir.path().join("config.toml");
    let data = dir.path().join("data").display().to_string();
    let message = "--lease-grace (lease_grace, env XAGENT_ADB_LEASE_GRACE) must be a duration \
                   like 30s, 90min or 30days, got \"abc\"";
    for (file_text, flag, env) in [
        ("lease_grace = \"abc\"\n", None, None),
        ("", Some("abc"), None),
        ("", None, Some("abc")),
    ] {
        std::fs::write(&file, file_text).unwrap();
        for command in ["check", "serve"] {
            let mut cmd = Command::new(bin());
            cmd.arg(command);
            if command == "serve" {
                cmd.args(["--listen", "127.0.0.1:0"]);
            }
            cmd.args(["--adb-server", "", "--data-dir", &data, "--api-key-file"])
                .arg(&key)
                .arg("--config")
                .arg(&file);
            if let Some(value) = flag {
                cmd.args(["--lease-grace", value]);
            }
            for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
                cmd.env_remove(k);
            }
            if let Some(value) = env {
                cmd.env("XAGENT_ADB_LEASE_GRACE", value);
            }
            let out = cmd.output().expect("run");
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let case = format!("{command} file={file_text:?} flag={flag:?} env={env:?}");
            assert_eq!(out.status.code(), Some(1), "{case}: {said}");
            assert!(said.contains(message), "{case}: {said}");
        }
    }
}

/// Every numeric setting has a documented range and is refused outside it, by flag and file
/// key with the range, alike by `check`, at start of `serve` and on SIGHUP (the running
/// configuration stays); the extremes of each range are accepted. Before: `qr_ttl_secs =
/// 18446744073709551615` passed `check` and the first `adb_qr_pair` aborted the process,
/// `file_ttl_secs` that large made every file ref expire at once, `--lease-grace 0s` passed.
#[test]
fn numeric_settings_out_of_range_are_refused_by_name_with_the_range() {
    let dir = TempDir::new("stages-ranges");
    let key = dir.path().join("api_key");
    std::fs::write(&key, format!("{API_KEY}\n")).unwrap();
    let file = dir.path().join("config.toml");
    let data = dir.path().join("data").display().to_string();
    let base: Vec<String> = vec![
        "--adb-server".into(),
        String::new(),
        "--data-dir".into(),
        data.clone(),
        "--api-key-file".into(),
        key.display().to_string(),
        "--config".into(),
        file.display().to_string(),
    ];
    let run = |command: &str| {
        let mut args = vec![command.to_string()];
        if command == "serve" {
            args.extend(["--listen".into(), "127.0.0.1:0".into()]);
        }
        args.extend(base.iter().cloned());
        let mut cmd = Command::new(bin());
        cmd.args(&args);
        for (k, _) in std::env::vars().filter(|(k, _)| k.starts_with("XAGENT_ADB_")) {
            cmd.env_remove(k);
        }
        let out = cmd.output().expect("run");
        (
            out.status.code(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let refused = [
        (
            "qr_ttl_secs = 18446744073709551615",
            "--qr-ttl-secs (qr_ttl_secs) must be 1 to 3600 seconds, got 18446744073709551615",
        ),
        (
            "qr_ttl_secs = 3601",
            "--qr-ttl-secs (qr_ttl_secs) must be 1 to 3600 seconds, got 3601",
        ),
        (
            "file_ttl_secs = 18446744073709551615",
            "--file-ttl-secs (file_ttl_secs) must be 1 to 604800 seconds, got 18446744073709551615",
        ),
        (
            "file_ttl_secs = 0",
            "--file-ttl-secs (file_ttl_secs) must be 1 to 604800 seconds, got 0",
        ),
        (
            "lease_grace = \"0s\"",
            "--lease-grace (lease_grace) must be 1 to 2592000 seconds, got 0s",
        ),
        (
            "lease_grace = \"31days\"",
            "--lease-grace (lease_grace) must be 1 to 2592000 seconds, got 31days",
        ),
        (
            "upload_max_bytes = 68719476737",
            "--upload-max-bytes (upload_max_bytes) must be 1 to 68719476736 bytes, got 68719476737",
        ),
        (
            "file_cache_max_bytes = 18446744073709551615",
            "--file-cache-max-bytes (file_cache_max_bytes) must be 1 to 1099511627776 bytes, got 18446744073709551615",
        ),
    ];
    for (line, message) in refused {
        std::fs::write(&file, format!("{line}\n")).unwrap();
        let (code, out) = run("check");
        assert_eq!(code, Some(1), "check {line}: {out}");
        assert!(
            out.contains(&format!("PROBLEM  config: {message}")),
            "check {line}: {out}"
        );
        let (code, out) = run("serve");
        assert_eq!(code, Some(1), "serve {line}: {out}");
        assert!(out.contains(message), "serve {line}: {out}");
    }
    // The same refusal from a flag (and the environment), not only the file.
    std::fs::write(&file, "").unwrap();
    let (code, _, err) = common::procs::run_cli(&[
        "serve",
        "--adb-server",
        "",
        "--data-dir",
        &data,
        "--api-key-file",
        &key.display().to_string(),
        "--file-ttl-secs",
        "100000000000000000",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(
            "--file-ttl-secs (file_ttl_secs) must be 1 to 604800 seconds, got 100000000000000000"
        ),
        "{err}"
    );
    // Each range's ends are accepted.
    std::fs::write(
        &file,
        "qr_ttl_secs = 3600\nfile_ttl_secs = 604800\nlease_grace = \"30days\"\n\
         upload_max_bytes = 68719476736\nfile_cache_max_bytes = 1099511627776\n",
    )
    .unwrap();
    // Valid: the config is not a problem (whether a connector runs on this machine's default
    // port is `check`'s concern, not this test's).
    let (_, out) = run("check");
    assert!(out.starts_with("ok       config valid"), "{out}");
    assert!(!out.contains("PROBLEM  config: --"), "{out}");
    std::fs::write(
        &file,
        "qr_ttl_secs = 1\nfile_ttl_secs = 1\nlease_grace = \"1s\"\n\
         upload_max_bytes = 1\nfile_cache_max_bytes = 1\n",
    )
    .unwrap();
    let (_, out) = run("check");
    assert!(out.starts_with("ok       config valid"), "{out}");
    assert!(!out.contains("PROBLEM  config: --"), "{out}");

    // On SIGHUP: refused, logged by name with the range, and the running one stays.
    let conn = common::procs::ConnectorProc::start_with(
        dir.path(),
        common::procs::Phones::Direct(vec![]),
        &["--config", &file.display().to_string()],
    );
    std::fs::write(&file, "qr_ttl_secs = 18446744073709551615\n").unwrap();
    let status = Command::new("kill")
        .args(["-HUP", &conn.pid().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let needle = "--qr-ttl-secs (qr_ttl_secs) must be 1 to 3600 seconds, got 18446744073709551615";
    let mut logs = String::new();
    for _ in 0..100 {
        logs = conn.logs();
        if logs.contains(needle) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let line = logs
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no refusal logged: {logs}"));
    assert!(line.contains("keeping the running one"), "{line}");
    let (status, _, _) = common::xagent::http_get(&format!("{}/health", conn.base), Some(API_KEY));
    assert_eq!(status, 200, "the running configuration stays");
}

/// `pair --qr-ttl-secs` takes the same range as `serve`'s.
#[test]
fn pair_qr_ttl_out_of_range_is_refused() {
    let dir = TempDir::new("stages-pair-ttl");
    for bad in ["0", "3601", "18446744073709551615"] {
        let (code, _, err) = common::procs::run_cli(&[
            "pair",
            "--qr-ttl-secs",
            bad,
            "--data-dir",
            &dir.path().display().to_string(),
        ]);
        assert_eq!(code, Some(2), "{bad}: {err}");
        assert!(err.contains("--qr-ttl-secs"), "{bad}: {err}");
        assert!(err.contains("1..=3600"), "{bad}: {err}");
    }
}

/// A `--data-dir` that is a regular file is refused as "not a directory" (it was "cannot
/// create data dir …: File exists"), and a `--tls-key` holding no private key (the
/// certificate given twice) as "holds no private key" (it was rustls's "no items found"),
/// naming the flag and the file: at start of `serve` and by `check`.
#[test]
fn a_data_dir_file_and_a_key_file_without_a_key_are_named_for_what_they_are() {
    let dir = TempDir::new("stages-what");
    let key = dir.path().join("api_key");
    std::fs::write(&key, format!("{API_KEY}\n")).unwrap();
    let key = key.display().to_string();
    let plain_file = dir.path().join("not-a-dir");
    std::fs::write(&plain_file, "x").unwrap();
    let plain_file = plain_file.display().to_string();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert_pem = dir.path().join("cert.pem");
    std::fs::write(&cert_pem, cert.cert.pem()).unwrap();
    let cert_pem = cert_pem.display().to_string();
    let data = dir.path().join("data").display().to_string();
    let cases: [(Vec<&str>, String); 2] = [
        (
            vec!["--data-dir", &plain_file],
            format!("--data-dir {plain_file} is not a directory"),
        ),
        (
            vec![
                "--data-dir",
                &data,
                "--tls-cert",
                &cert_pem,
                "--tls-key",
                &cert_pem,
            ],
            format!("--tls-key {cert_pem}: holds no private key"),
        ),
    ];
    for (flags, message) in &cases {
        for command in ["serve", "check"] {
            let mut args = vec![
                command,
                "--adb-server",
                "",
                "--listen",
                "127.0.0.1:0",
                "--api-key-file",
                &key,
            ];
            args.extend(flags.iter().copied());
            let (code, out, err) = common::procs::run_cli(&args);
            let text = format!("{out}{err}");
            assert_eq!(code, Some(1), "{command} {flags:?}: {text}");
            assert!(
                text.contains(message.as_str()),
                "{command} {flags:?}: {text}"
            );
            assert!(!text.contains("File exists"), "{text}");
            assert!(!text.contains("no items found"), "{text}");
            if command == "check" {
                assert!(
                    text.contains(&format!("PROBLEM  config: {message}")),
                    "{text}"
                );
            }
        }
    }
}
