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
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
