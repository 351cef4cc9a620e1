//! `sleep`, `test`/`[`, and identity programs (`id`, `whoami`, `uname`, `date`) as toybox
//! prints them on Android 10+.

use std::time::Duration;

use super::Output;
use crate::phone::Phone;
use crate::vfs::normalize;

/// `sleep SECONDS` (fractions allowed); cancelled when the stream goes away (the future is
/// dropped).
pub async fn sleep(args: &[String]) -> Output {
    let secs = args
        .first()
        .and_then(|a| a.trim_end_matches('s').parse::<f64>().ok());
    match secs {
        Some(s) if s >= 0.0 && s.is_finite() => {
            tokio::time::sleep(Duration::from_secs_f64(s.min(1e6))).await;
            Output::code(0)
        }
        _ => Output::err(1, "sleep: Need 1 argument\n"),
    }
}

/// `id`, `whoami`, `uname`, `date` as the `shell` user on toybox.
pub fn info(name: &str, args: &[String]) -> Output {
    match name {
        "id" => Output::ok("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),1028(sdcard_r),1078(ext_data_rw),1079(ext_obb_rw),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats),3009(readproc),3011(uhid),3012(readtracefs) context=u:r:shell:s0\n"),
        "whoami" => Output::ok("shell\n"),
        "uname" if args.iter().any(|a| a == "-a") => {
            Output::ok("Linux localhost 5.15.137-android14-11 #1 SMP PREEMPT Mon Jan 1 00:00:00 UTC 2024 aarch64 Toybox\n")
        }
        "uname" => Output::ok("Linux\n"),
        _ => {
            let secs = crate::phone::now_secs();
            if args.iter().any(|a| a == "+%s") {
                return Output::ok(format!("{secs}\n"));
            }
            let (y, m, d) = super::fs::civil_from_days(i64::from(secs / 86400));
            let t = secs % 86400;
            let (hh, mm, ss) = (t / 3600, (t % 3600) / 60, t % 60);
            Output::ok(format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02} UTC\n"))
        }
    }
}

/// `test EXPR` / `[ EXPR ]`: `-e -f -d -s -z -n`, `=`, `!=`, `-eq -ne -lt -gt -le -ge`, `!`.
pub fn test(phone: &Phone, cwd: &str, name: &str, args: &[String]) -> Output {
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    if name == "[" {
        if args.last() != Some(&"]") {
            return Output::err(2, "[: missing ]\n");
        }
        args.pop();
    }
    let (negate, args) = match args.split_first() {
        Some((&"!", rest)) => (true, rest.to_vec()),
        _ => (false, args),
    };
    let result = match args.as_slice() {
        [] => Some(false),
        [s] => Some(!s.is_empty()),
        [op, path] if op.len() == 2 && op.starts_with('-') => file_test(phone, cwd, op, path),
        [a, op, b] => compare(a, op, b),
        _ => None,
    };
    match result {
        Some(r) => Output::code(if r != negate { 0 } else { 1 }),
        None => Output::err(2, format!("{name}: syntax error\n")),
    }
}

fn file_test(phone: &Phone, cwd: &str, op: &str, arg: &str) -> Option<bool> {
    let path = normalize(cwd, arg);
    // The input nodes: character devices `0660 root input` (AOSP `ueventd.rc`
    // `/dev/input/* 0660 root input`), which the shell writes through group `input`.
    let node = phone.with(|s| s.is_input_node(&path).then_some(s.input_writable));
    if let Some(writable) = node {
        return Some(match op {
            "-e" | "-c" | "-r" => true,
            "-w" => writable,
            "-z" => arg.is_empty(),
            "-n" => !arg.is_empty(),
            "-f" | "-d" | "-s" | "-x" => false,
            _ => return None,
        });
    }
    let entry = phone.with(|s| s.vfs.stat(&path).ok().cloned());
    Some(match op {
        "-z" => arg.is_empty(),
        "-n" => !arg.is_empty(),
        "-e" => entry.is_some(),
        "-f" => entry.is_some_and(|e| !e.is_dir()),
        "-d" => entry.is_some_and(|e| e.is_dir()),
        "-s" => entry.is_some_and(|e| e.size() > 0),
        "-r" | "-w" | "-x" => entry.is_some(),
        "-c" => false,
        _ => return None,
    })
}

fn compare(a: &str, op: &str, b: &str) -> Option<bool> {
    let num = |s: &str| s.trim().parse::<i64>().ok();
    Some(match op {
        "=" | "==" => a == b,
        "!=" => a != b,
        "-eq" => num(a)? == num(b)?,
        "-ne" => num(a)? != num(b)?,
        "-lt" => num(a)? < num(b)?,
        "-gt" => num(a)? > num(b)?,
        "-le" => num(a)? <= num(b)?,
        "-ge" => num(a)? >= num(b)?,
        _ => return None,
    })
}

/// Services the simulated system server registers with `servicemanager` (the ones its
/// programs talk to).
const SERVICES: &[&str] = &[
    "SurfaceFlinger",
    "activity",
    "battery",
    "display",
    "input",
    "input_method",
    "package",
    "power",
    "settings",
    "trust",
    "window",
];

/// Which service a program needs and how it says one is missing: `dumpsys NAME` prints
/// `Can't find service: NAME` on stderr and exits 0 (AOSP `frameworks/native/cmds/dumpsys/
/// dumpsys.cpp`), `cmd NAME` prints `cmd: Can't find service: NAME` and exits 20
/// (`cmds/cmd/cmd.cpp`), and so do the `cmd` wrappers: `wm` (`cmd window`, Android 10+), `input`
/// (`cmd input`, Android 12+, `cmds/input/input.sh`), `am`/`pm` (`cmd activity`/`cmd package`,
/// Android 9+). Older releases run those as `app_process` programs: not modelled.
pub fn service_down(phone: &Phone, name: &str, args: &[String]) -> Option<Output> {
    let (down, sdk) = phone.with(|s| (s.services_down.clone(), s.persona.sdk));
    if down.is_empty() {
        return None;
    }
    let (service, via_cmd) = match name {
        "dumpsys" => (args.first()?.as_str(), false),
        "cmd" => (args.first()?.as_str(), true),
        "wm" if sdk >= 29 => ("window", true),
        "input" if sdk >= 31 => ("input", true),
        "am" if sdk >= 28 => ("activity", true),
        "pm" if sdk >= 28 => ("package", true),
        _ => return None,
    };
    if !down.iter().any(|d| d == service) {
        return None;
    }
    Some(if via_cmd {
        Output::err(20, format!("cmd: Can't find service: {service}\n"))
    } else {
        Output::err(0, format!("Can't find service: {service}\n"))
    })
}

/// `service check NAME` / `service list` (AOSP `frameworks/native/cmds/service/service.cpp`):
/// `Service NAME: found` or `Service NAME: not found`; the list as `N\tNAME: []` lines.
pub fn service(phone: &Phone, args: &[String]) -> Output {
    let down = phone.with(|s| s.services_down.clone());
    let up = |name: &str| SERVICES.contains(&name) && !down.iter().any(|d| d == name);
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["check", name] => {
            let found = if up(name) { "found" } else { "not found" };
            Output::ok(format!("Service {name}: {found}\n"))
        }
        ["list"] => {
            let names: Vec<&&str> = SERVICES.iter().filter(|n| up(n)).collect();
            let mut t = format!("Found {} services:\n", names.len());
            for (i, n) in names.iter().enumerate() {
                t.push_str(&format!("{i}\t{n}: []\n"));
            }
            Output::ok(t)
        }
        _ => Output::err(
            0,
            "Usage: service [-h|-?]\n       service list\n       service check SERVICE\n",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persona::Persona;

    #[test]
    fn services_down_answer_as_aosp_programs_do() {
        let p = Phone::new(Persona::load("pixel-android14").unwrap(), "SIMSV0001", "");
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(service_down(&p, "dumpsys", &argv(&["window"])).is_none());
        p.with(|s| s.services_down = vec!["window".into(), "input".into()]);
        let d = service_down(&p, "dumpsys", &argv(&["window", "displays"])).unwrap();
        assert_eq!(
            (d.code, d.stderr.as_slice()),
            (0, &b"Can't find service: window\n"[..])
        );
        let i = service_down(&p, "input", &argv(&["tap", "1", "2"])).unwrap();
        assert_eq!(
            (i.code, i.stderr.as_slice()),
            (20, &b"cmd: Can't find service: input\n"[..])
        );
        assert!(service_down(&p, "wm", &argv(&["size"])).is_some());
        assert!(service_down(&p, "dumpsys", &argv(&["power"])).is_none());
        let check = service(&p, &argv(&["check", "window"]));
        assert_eq!(check.stdout, b"Service window: not found\n");
        let check = service(&p, &argv(&["check", "power"]));
        assert_eq!(check.stdout, b"Service power: found\n");
    }
}
