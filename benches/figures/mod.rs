//! Figures shared by the bench binaries: percentiles, a one-line summary, a process's RSS.
#![allow(dead_code)]

/// The `p` quantile (0..=1) of an ascending slice, nearest rank; NaN when empty.
pub fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

/// Prints `name n= p50= p95= p99=` (ms) and returns the median.
pub fn summary(name: &str, mut ms: Vec<f64>) -> f64 {
    ms.sort_by(|a, b| a.total_cmp(b));
    let med = pct(&ms, 0.5);
    println!(
        "{name:<44} n={:<5} p50={med:>8.3} ms  p95={:>8.3} ms  p99={:>8.3} ms",
        ms.len(),
        pct(&ms, 0.95),
        pct(&ms, 0.99)
    );
    med
}

/// Resident set of a process, kB (`VmRSS` of `/proc/<pid>/status`, proc(5)); 0 if gone.
pub fn rss_kb(pid: u32) -> u64 {
    status_kb(pid, "VmRSS:")
}

/// Peak resident set of a process since it started, kB (`VmHWM`, proc(5)): the high-water mark
/// that 30 s samples of `VmRSS` miss; 0 if gone.
#[allow(dead_code)] // not every bench prints the peak
pub fn peak_rss_kb(pid: u32) -> u64 {
    status_kb(pid, "VmHWM:")
}

fn status_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// CPU time a process has used (user + system), ms: fields 14 and 15 of `/proc/<pid>/stat`
/// (proc(5)), counted after the `)` that ends the command name; 0 when unreadable.
pub fn cpu_ms(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|v| v.parse().unwrap_or(0))
        .collect();
    // After ')': state is index 0, so utime (field 14) is index 11 and stime index 12.
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    // SAFETY: sysconf reads a constant of the running system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    ticks as f64 * 1000.0 / if hz > 0 { hz as f64 } else { 100.0 }
}

/// The 1, 5 and 15 minute load averages (`/proc/loadavg`), printed beside each figure.
pub fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}
