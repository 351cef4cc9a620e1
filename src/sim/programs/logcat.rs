//! `logcat` and `pidof` of the simulated phone.
//!
//! `logcat` (AOSP `system/logging/logcat/logcat.cpp`, `liblog/logprint.cpp`): supports `-d`,
//! `-v threadtime`, `-b main|crash` (the crash buffer is empty), `-t N` (last N lines; an all-digit argument is a count) / `-t 'TIME'`
//! (`YYYY-MM-DD hh:mm:ss.mmm`, `MM-DD hh:mm:ss.mmm` or epoch `sssss.mmm`), `--pid=PID` /
//! `--pid PID`, `-s` (default filter silent) and filter specs `TAG:L` / `*:L` with levels
//! `V D I W E F S`. Lines print as threadtime: `MM-DD hh:mm:ss.mmm %5d %5d L TAG     : msg`
//! (`%-8s` tag), after a `--------- beginning of main` marker. Times are UTC.
//!
//! The buffer is synthesized: boot lines at fixed offsets from the boot time (the mtime of
//! `/system` in the VFS) and, for every app in the task stack, `ActivityManager: Start proc`
//! plus two lines from the app's own pid. `pidof NAME` (toybox) prints the pids of running
//! processes with that name — system processes and the apps in the task stack — or exits 1;
//! `ps` prints the same process table.

use super::Output;
use crate::phone::{Phone, PhoneState};

/// One log record.
struct Rec {
    ms: u64,
    pid: u32,
    level: char,
    tag: String,
    msg: String,
}

const SYSTEM_SERVER: u32 = 1187;

/// The pid of a running process name, if it runs.
fn pid_of(s: &PhoneState, name: &str) -> Option<u32> {
    let fixed = [
        ("init", 1),
        ("zygote64", 612),
        ("surfaceflinger", 547),
        ("system_server", SYSTEM_SERVER),
    ];
    if let Some((_, p)) = fixed.iter().find(|(n, _)| *n == name) {
        return Some(*p);
    }
    let running = name == "com.android.systemui"
        || name == s.persona.launcher_package
        || s.ui.stack.iter().any(|(p, _)| p == name);
    running.then(|| 2000 + u32::from_str_radix(&super::ident(name)[..4], 16).unwrap_or(0) % 28000)
}

/// Every running process as `(pid, name)`, pid order: the fixed system processes, SystemUI,
/// the launcher and the apps in the task stack.
fn processes(s: &PhoneState) -> Vec<(u32, String)> {
    let mut names: Vec<String> = ["init", "zygote64", "surfaceflinger", "system_server"]
        .map(String::from)
        .to_vec();
    names.push("com.android.systemui".into());
    names.push(s.persona.launcher_package.clone());
    names.extend(s.ui.stack.iter().map(|(p, _)| p.clone()));
    let mut all: Vec<(u32, String)> = names
        .into_iter()
        .filter_map(|n| pid_of(s, &n).map(|p| (p, n)))
        .collect();
    all.sort();
    all.dedup();
    all
}

/// `ps`: the process table, as the phone's `ps` prints it (field bug 31 checks `pidof` against
/// it). SDK ≥ 26 (toybox `ps`, AOSP `external/toybox/toys/posix/ps.c`): only this session's
/// processes unless `-A`; `-o PID,NAME` (any of `USER`, `PID`, `PPID`, `NAME`) picks columns,
/// default `USER PID PPID VSZ RSS WCHAN ADDR S NAME`. Older (toolbox `ps`, AOSP
/// `system/core/toolbox/ps.c`): always every process, `USER PID PPID VSIZE RSS WCHAN PC NAME`
/// with an unheaded state column before NAME; a non-option argument filters by name or pid,
/// so `-A` there matches nothing (header only).
pub fn ps(phone: &Phone, args: &[String]) -> Output {
    let (sdk, procs) = phone.with(|s| (s.persona.sdk, processes(s)));
    let user = |pid: u32| if pid < 2000 { "root" } else { "u0_a77" };
    let ppid = |pid: u32| match pid {
        1 => 0,
        p if p < 1000 => 1,
        _ => 612,
    };
    if sdk < 26 {
        let filter = args
            .iter()
            .find(|a| !a.starts_with("-t") && a.as_str() != "-x");
        let mut out =
            String::from("USER      PID   PPID  VSIZE  RSS   WCHAN              PC  NAME\n");
        for (pid, name) in procs {
            if filter.is_some_and(|f| *f != name && *f != pid.to_string()) {
                continue;
            }
            out.push_str(&format!(
                "{:<9} {:<5} {:<5} 1024   512   SyS_epoll_ 0000000000 S {name}\n",
                user(pid),
                pid,
                ppid(pid)
            ));
        }
        return Output::ok(out);
    }
    let all = args.iter().any(|a| a == "-A" || a == "-e");
    let cols: Vec<String> = match args.iter().position(|a| a == "-o") {
        Some(i) => match args.get(i + 1) {
            Some(c) => c.split(',').map(|c| c.to_ascii_uppercase()).collect(),
            None => return Output::err(1, "ps: Missing argument to -o (see \"ps --help\")\n"),
        },
        None => [
            "USER", "PID", "PPID", "VSZ", "RSS", "WCHAN", "ADDR", "S", "NAME",
        ]
        .map(String::from)
        .to_vec(),
    };
    let rows: Vec<(u32, String)> = if all {
        procs
    } else {
        vec![(4000, "sh".into()), (4001, "ps".into())]
    };
    let cell = |c: &str, pid: u32, name: &str| match c {
        "USER" => user(pid).to_string(),
        "PID" => pid.to_string(),
        "PPID" => ppid(pid).to_string(),
        "NAME" | "CMD" | "ARGS" => name.to_string(),
        "S" => "S".into(),
        _ => "0".into(),
    };
    let mut out = cols.join(" ");
    out.push('\n');
    for (pid, name) in rows {
        let line: Vec<String> = cols.iter().map(|c| cell(c, pid, &name)).collect();
        out.push_str(&line.join(" "));
        out.push('\n');
    }
    Output::ok(out)
}

/// `pidof NAME…`.
pub fn pidof(phone: &Phone, args: &[String]) -> Output {
    let pids: Vec<String> = phone.with(|s| {
        args.iter()
            .filter_map(|n| pid_of(s, n))
            .map(|p| p.to_string())
            .collect()
    });
    if pids.is_empty() {
        Output::code(1)
    } else {
        Output::ok(format!("{}\n", pids.join(" ")))
    }
}

impl Rec {
    /// A record at `ms` since the epoch.
    fn at(ms: u64, pid: u32, level: char, tag: &str, msg: String) -> Rec {
        Rec {
            ms,
            pid,
            level,
            tag: tag.into(),
            msg,
        }
    }
}

/// The fixed boot-time records (offsets in ms from boot).
fn boot_records(boot: u64, ui: u32, launcher: &str) -> Vec<Rec> {
    let rec = |off: u64, pid: u32, level: char, tag: &str, msg: String| {
        Rec::at(boot + off, pid, level, tag, msg)
    };
    vec![
        rec(100, 1, 'I', "init", "starting service 'zygote'...".into()),
        rec(1_250, 612, 'I', "Zygote", "Preloading classes...".into()),
        rec(
            3_000,
            SYSTEM_SERVER,
            'D',
            "SystemServerTiming",
            "StartPackageManagerService".into(),
        ),
        rec(
            4_200,
            SYSTEM_SERVER,
            'I',
            "ActivityManager",
            "System now ready".into(),
        ),
        rec(
            4_500,
            SYSTEM_SERVER,
            'W',
            "PackageManager",
            "Not granting permission android.permission.READ_LOGS to package com.example.notes"
                .into(),
        ),
        rec(
            5_100,
            ui,
            'E',
            "BluetoothAdapter",
            "Bluetooth binder is null".into(),
        ),
        rec(
            5_300,
            4321,
            'E',
            "AndroidRuntime",
            "FATAL EXCEPTION: main".into(),
        ),
        rec(
            5_301,
            4321,
            'F',
            "libc",
            "Fatal signal 6 (SIGABRT), code -1 (SI_QUEUE) in tid 4321 (main)".into(),
        ),
        rec(
            6_000,
            SYSTEM_SERVER,
            'I',
            "ActivityTaskManager",
            format!("Displayed {launcher}: +812ms"),
        ),
    ]
}

fn records(s: &PhoneState) -> Vec<Rec> {
    let boot = u64::from(s.vfs.stat("/system").map(|e| e.mtime).unwrap_or(0)) * 1000;
    let ui = pid_of(s, "com.android.systemui").unwrap_or(0);
    let launcher = s.persona.launcher_package.clone();
    let rec = |off: u64, pid: u32, level: char, tag: &str, msg: String| {
        Rec::at(boot + off, pid, level, tag, msg)
    };
    let mut v = boot_records(boot, ui, &launcher);
    let apps = s.ui.stack.iter().filter(|(p, _)| *p != launcher);
    for (i, (pkg, act)) in apps.enumerate() {
        let pid = pid_of(s, pkg).unwrap_or(0);
        let off = 10_000 + i as u64 * 2_000;
        v.push(rec(
            off,
            SYSTEM_SERVER,
            'I',
            "ActivityManager",
            format!("Start proc {pid}:{pkg}/u0a123 for top-activity {{{pkg}/{act}}}"),
        ));
        v.push(rec(
            off + 40,
            pid,
            'I',
            "ActivityThread",
            format!("handleBindApplication {pkg}"),
        ));
        v.push(rec(
            off + 90,
            pid,
            'W',
            "Choreographer",
            "Skipped 31 frames!  The application may be doing too much work on its main thread."
                .into(),
        ));
    }
    v
}

fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// Parses a `-t` time to epoch ms (`year` used for `MM-DD` forms).
fn parse_time(t: &str, year: i64) -> Option<u64> {
    if let Ok(secs) = t.parse::<f64>() {
        return Some((secs * 1000.0) as u64);
    }
    let (date, time) = t.split_once(' ')?;
    let parts: Vec<&str> = date.split('-').collect();
    let (y, m, d) = match parts.as_slice() {
        [y, m, d] => (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?),
        [m, d] => (year, m.parse().ok()?, d.parse().ok()?),
        _ => return None,
    };
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let hms: Vec<u64> = hms
        .split(':')
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let [h, mi, sec] = hms.as_slice() else {
        return None;
    };
    let ms: u64 = format!("{frac:0<3}")[..3].parse().ok()?;
    let days = u64::try_from(days_from_civil(y, m, d)).ok()?;
    Some(days * 86_400_000 + h * 3_600_000 + mi * 60_000 + sec * 1000 + ms)
}

fn format_line(r: &Rec) -> String {
    let (y, m, d) = super::fs::civil_from_days((r.ms / 86_400_000) as i64);
    let _ = y;
    let t = r.ms % 86_400_000;
    format!(
        "{m:02}-{d:02} {:02}:{:02}:{:02}.{:03} {:5} {:5} {} {:<8}: {}\n",
        t / 3_600_000,
        (t / 60_000) % 60,
        (t / 1000) % 60,
        t % 1000,
        r.pid,
        r.pid,
        r.level,
        r.tag,
        r.msg
    )
}

fn rank(level: char) -> u8 {
    "VDIWEFS".find(level).map_or(0, |i| i as u8)
}

/// `logcat …`.
pub fn logcat(phone: &Phone, args: &[String]) -> Output {
    let (mut count, mut since, mut pid) = (None, None, None);
    let (mut default, mut specs) = ('V', Vec::new());
    let mut it = args.iter().map(String::as_str);
    while let Some(a) = it.next() {
        match a {
            "-d" => {}
            "-v" => {
                it.next();
            }
            "-s" => default = 'S',
            // The crash buffer (Android 5+) holds the uncaught exceptions of processes; nothing
            // crashes on the sim, so it prints nothing (scripts put a crash there, field bug 66).
            "-b" => {
                if it.next() == Some("crash") {
                    return Output::ok("");
                }
            }
            "-t" | "-T" => match it.next() {
                Some(v) if v.bytes().all(|b| b.is_ascii_digit()) => count = v.parse::<usize>().ok(),
                Some(v) => since = Some(v.to_string()),
                None => return Output::err(1, "logcat: option requires an argument -- t\n"),
            },
            // `--pid` came with Android 7 (logcat.cpp's long options); Android 6's getopt reads
            // `--pid=N` as an unknown option: `Unrecognized Option -`, the help, exit 1 (on
            // stderr). Source: NativeScript PR #3808 (field bug 30).
            a if a.starts_with("--pid") && phone.with(|s| s.persona.sdk) < 24 => {
                return Output::err(
                    1,
                    "Unrecognized Option -\nUsage: logcat [options] [filterspecs]\noptions include:\n  -s              Set default filter to silent.\n",
                )
            }
            "--pid" => pid = it.next().and_then(|p| p.parse::<u32>().ok()),
            a if a.starts_with("--pid=") => pid = a[6..].parse::<u32>().ok(),
            a if a.starts_with('-') => {
                return Output::err(1, format!("logcat: unknown option -- {a}\n"))
            }
            spec => match spec.rsplit_once(':') {
                Some((tag, l)) if l.len() == 1 => {
                    specs.push((tag.to_string(), l.chars().next().unwrap_or('V')))
                }
                _ => return Output::err(1, format!("Invalid filter expression '{spec}'\n")),
            },
        }
    }
    let recs = phone.with(|s| records(s));
    let year = recs.first().map_or(1970, |r| {
        super::fs::civil_from_days((r.ms / 86_400_000) as i64).0
    });
    let since_ms = match since.as_deref().map(|t| parse_time(t, year)) {
        Some(None) => return Output::err(1, "logcat: -t \"<time>\" format incorrect\n"),
        Some(Some(ms)) => Some(ms),
        None => None,
    };
    if let Some((_, l)) = specs.iter().find(|(t, _)| t == "*") {
        default = *l;
    }
    let pass = |r: &Rec| {
        let min = specs
            .iter()
            .find(|(t, _)| *t == r.tag)
            .map_or(default, |(_, l)| *l);
        min != 'S'
            && rank(r.level) >= rank(min)
            && pid.is_none_or(|p| p == r.pid)
            && since_ms.is_none_or(|s| r.ms >= s)
    };
    let lines: Vec<String> = recs.iter().filter(|r| pass(r)).map(format_line).collect();
    let skip = count.map_or(0, |n| lines.len().saturating_sub(n));
    let mut out = String::from("--------- beginning of main\n");
    out.extend(lines.into_iter().skip(skip));
    Output::ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times() {
        assert_eq!(parse_time("1970-01-02 00:00:01.5", 1970), Some(86_401_500));
        assert_eq!(parse_time("01-02 00:00:01.500", 1970), Some(86_401_500));
        assert_eq!(parse_time("86401.5", 1970), Some(86_401_500));
        assert_eq!(parse_time("yesterday", 1970), None);
    }
}
