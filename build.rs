//! Injects build identity (`version`, `git_tag`, `git_rev`, `build_time`) at compile time; the card
//! and `/health` both read these so they are identical (spec §4.1 / §4.3).
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!text.is_empty()).then_some(text)
}

fn main() {
    let rev = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let tag = git(&["describe", "--tags", "--abbrev=0"]).unwrap_or_default();
    // yyMMddHHmm in UTC, the format the spec's examples use ("2607241200").
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        });
    println!("cargo:rustc-env=XAGENT_GIT_REV={rev}");
    println!("cargo:rustc-env=XAGENT_GIT_TAG={tag}");
    println!("cargo:rustc-env=XAGENT_BUILD_TIME={}", yymmddhhmm(secs));
    // Watched: this checkout's HEAD and the ref it names, where git keeps them (in a linked
    // worktree `.git` is a file). Not `.git/refs`: every worktree shares it, and a watched path
    // that does not exist or changes with another checkout's commit rebuilds the crate each
    // time. A branch that is only in `packed-refs` at build time is seen through that file.
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    for what in ["HEAD", "packed-refs"].into_iter().chain(branch.as_deref()) {
        if let Some(path) = git(&["rev-parse", "--git-path", what]) {
            if std::path::Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
}

/// `yyMMddHHmm` (UTC) of Unix seconds, read off humantime's RFC 3339 form
/// (`2026-07-24T12:00:00Z` → `2607241200`).
fn yymmddhhmm(secs: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    let s = humantime::format_rfc3339_seconds(t).to_string();
    [&s[2..4], &s[5..7], &s[8..10], &s[11..13], &s[14..16]].concat()
}
