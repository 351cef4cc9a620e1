//! Issue 11, the operator's side of the edge box, through the real binary: log formats without
//! secrets, `check` and `devices` against real adb servers and simulated phones, SIGHUP reload,
//! TLS, several adb servers, Prometheus `/metrics`.

mod common;

use serde_json::{json, Value};

use common::procs::{ConnectorProc, Phones, SimPhone, TempDir};
use common::xagent::{connect, http_get};
use common::API_KEY;

fn code(p: &Value) -> &str {
    p["error"]["code"].as_str().unwrap_or("")
}

/// `--log-format json`: every stderr line is one JSON object; a claim with a code, a wrong key
/// and a wrong code leave neither the key nor a code in the log. `text` (the default) carries
/// no ANSI colour codes when stderr is a file (journald, log files).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_and_text_logs_carry_no_secrets() {
    let sim = SimPhone::start("SIMLOGFMT00011");
    for format in ["json", "text"] {
        let dir = TempDir::new("logfmt");
        let codes = dir.path().join("codes.toml");
        let claim_code = "claim-LOGFMT-739201";
        std::fs::write(
            &codes,
            format!("[claim_codes]\n{} = \"{claim_code}\"\n", sim.serial),
        )
        .unwrap();
        let conn = ConnectorProc::start_with(
            dir.path(),
            Phones::Direct(vec![sim.addr.clone()]),
            &[
                "--log-format",
                format,
                "--claim-policy",
                "code",
                "--config",
                codes.to_str().unwrap(),
            ],
        );
        let wrong_key = "wrong-key-LOGFMT-5550001";
        let (st, _, _) = http_get(&format!("{}/health", conn.base), Some(wrong_key));
        assert_eq!(st, 401);
        let mut x = connect(&conn.addr).await;
        x.hello("").await;
        let (ch, _) = x.open(None).await;
        let wrong = "guess-LOGFMT-000000";
        let e = x.request("auth.start", Some(&ch), json!({"flow_id": "adb_device_claim", "input": {"serial": sim.serial, "claim_code": wrong}})).await;
        assert_eq!(code(&e), "auth_failed", "{e}");
        let mut ok = Value::Null;
        for _ in 0..75 {
            ok = x.request("auth.start", Some(&ch), json!({"flow_id": "adb_device_claim", "input": {"serial": sim.serial, "claim_code": claim_code}})).await;
            if ok["payload"]["status"] == "authenticated" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        assert_eq!(ok["payload"]["status"], "authenticated", "{ok}");
        let logs = conn.logs();
        assert!(logs.contains("phone bound"), "the log is captured: {logs}");
        for secret in [API_KEY, claim_code, wrong, wrong_key] {
            assert!(!logs.contains(secret), "{format} log leaks {secret}");
        }
        assert!(!logs.contains('\u{1b}'), "{format} log has escape codes");
        let lines: Vec<&str> = logs.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(lines.len() >= 2, "{logs}");
        for line in lines {
            let parsed = serde_json::from_str::<Value>(line);
            if format == "json" {
                let v = parsed.unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                assert!(v["level"].is_string() && v["fields"].is_object(), "{line}");
            } else {
                assert!(parsed.is_err(), "text line is JSON: {line}");
            }
        }
    }
}
