//! `settings get|put|delete|list NAMESPACE …` (AOSP `SettingsService`): `get` of an unknown key
//! prints `null`; `list` prints `key=value` lines (`fixtures/other/redmi-9-power-settings-list-*.txt`).

use super::Output;
use crate::phone::Phone;

const USAGE: &str = "Settings provider (settings) commands:\n  help\n      Print this help text.\n  get [--user <USER_ID> | current] NAMESPACE KEY\n      Retrieve the current value of KEY.\n  put [--user <USER_ID> | current] NAMESPACE KEY VALUE [TAG] [default]\n      Change the contents of KEY to VALUE.\n  delete [--user <USER_ID> | current] NAMESPACE KEY\n      Delete the entry for KEY.\n  list [--user <USER_ID> | current] NAMESPACE\n      Print all defined keys.\n";

/// Runs `settings`.
pub fn run(phone: &Phone, args: &[String]) -> Output {
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    if let Some(i) = args.iter().position(|a| *a == "--user") {
        args.drain(i..(i + 2).min(args.len()));
    }
    let ns_ok = |ns: &str| matches!(ns, "system" | "secure" | "global");
    match args.as_slice() {
        ["get", ns, key] if ns_ok(ns) => phone.with(|s| {
            let v = s.settings.get(&(ns.to_string(), key.to_string())).cloned();
            Output::ok(format!("{}\n", v.unwrap_or_else(|| "null".into())))
        }),
        ["put", ns, key, value, ..] if ns_ok(ns) => {
            phone.with(|s| {
                s.settings
                    .insert((ns.to_string(), key.to_string()), value.to_string());
                // With auto-rotate off the window manager applies USER_ROTATION (AOSP
                // `DisplayRotation.SettingsObserver` / `Settings.System.USER_ROTATION`).
                let auto = s
                    .settings
                    .get(&("system".into(), "accelerometer_rotation".into()));
                if *ns == "system" && *key == "user_rotation" && auto.is_none_or(|a| a == "0") {
                    if let Ok(r) = value.parse::<u32>() {
                        s.rotation = r % 4;
                    }
                }
            });
            Output::code(0)
        }
        ["delete", ns, key] if ns_ok(ns) => {
            let n = phone.with(|s| {
                s.settings
                    .remove(&(ns.to_string(), key.to_string()))
                    .is_some() as u32
            });
            Output::ok(format!("Deleted {n} rows\n"))
        }
        ["list", ns] if ns_ok(ns) => phone.with(|s| {
            let lines: String = s
                .settings
                .iter()
                .filter(|((n, _), _)| n == ns)
                .map(|((_, k), v)| format!("{k}={v}\n"))
                .collect();
            Output::ok(lines)
        }),
        [_, ns, ..] if !ns_ok(ns) => Output::err(255, format!("Invalid namespace '{ns}'\n{USAGE}")),
        _ => Output::err(255, USAGE),
    }
}
