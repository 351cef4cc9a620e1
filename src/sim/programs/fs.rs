//! File programs over the VFS with toybox's messages: `cat`, `ls [-l] [-a] [-1]`,
//! `rm [-r] [-f]`, `mkdir [-p]`, `touch`.

use super::Output;
use crate::phone::{now_secs, Phone};
use crate::vfs::{normalize, Entry};

fn split_flags(args: &[String]) -> (String, Vec<&String>) {
    let mut flags = String::new();
    let mut paths = Vec::new();
    for a in args {
        match a.strip_prefix('-') {
            Some(f) if !f.is_empty() => flags.push_str(f),
            _ => paths.push(a),
        }
    }
    (flags, paths)
}

/// `cat [FILE…]` (no files or `-`: stdin).
pub fn cat(phone: &Phone, cwd: &str, args: &[String], stdin: &[u8]) -> Output {
    let (_, paths) = split_flags(args);
    if paths.is_empty() {
        return Output::ok(stdin.to_vec());
    }
    let mut out = Output::default();
    for p in paths {
        if p == "-" {
            out.stdout.extend_from_slice(stdin);
            continue;
        }
        let path = normalize(cwd, p);
        match phone.with(|s| s.vfs.read(&path).map(|b| b.to_vec())) {
            Ok(b) => out.stdout.extend_from_slice(&b),
            Err(e) => {
                out.stderr
                    .extend_from_slice(format!("cat: {p}: {}\n", e.message()).as_bytes());
                out.code = 1;
            }
        }
    }
    out
}

fn long_line(name: &str, e: &Entry) -> String {
    let kind = if e.is_link() {
        'l'
    } else if e.is_dir() {
        'd'
    } else {
        '-'
    };
    let mut perms = String::new();
    for shift in [6, 3, 0] {
        let bits = (e.mode >> shift) & 7;
        perms.push(if bits & 4 != 0 { 'r' } else { '-' });
        perms.push(if bits & 2 != 0 { 'w' } else { '-' });
        perms.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    let days = e.mtime / 86400;
    let (y, m, d) = civil_from_days(days as i64);
    let (hh, mm) = ((e.mtime % 86400) / 3600, (e.mtime % 3600) / 60);
    let target = match (&e.data, e.is_link()) {
        (Some(t), true) => format!(" -> {}", String::from_utf8_lossy(t)),
        _ => String::new(),
    };
    format!(
        "{kind}{perms} 1 root sdcard_rw {:>8} {y:04}-{m:02}-{d:02} {hh:02}:{mm:02} {name}{target}\n",
        e.size()
    )
}

/// Days since 1970-01-01 to (year, month, day), UTC (read off humantime's RFC 3339 form;
/// days before 1970 read as 1970-01-01, which no sim clock reaches).
pub(super) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let secs = u64::try_from(days).unwrap_or(0).saturating_mul(86_400);
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    let s = humantime::format_rfc3339_seconds(t).to_string();
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|v| v.parse().ok()).unwrap_or(1);
    (i64::from(num(0..4)), num(5..7), num(8..10))
}

/// `ls [-l] [-a] [-1] [PATH…]`.
pub fn ls(phone: &Phone, cwd: &str, args: &[String]) -> Output {
    let (flags, mut paths) = split_flags(args);
    let dot = cwd.to_string();
    if paths.is_empty() {
        paths.push(&dot);
    }
    let long = flags.contains('l');
    let mut out = Output::default();
    for p in paths {
        let path = normalize(cwd, p);
        let listing = phone.with(|s| match s.vfs.stat(&path) {
            Err(e) => Err(e),
            Ok(e) if !e.is_dir() => Ok(vec![(p.to_string(), e.clone())]),
            Ok(_) => s.vfs.list(&path),
        });
        match listing {
            Ok(entries) => {
                for (name, e) in entries {
                    let line = if long {
                        long_line(&name, &e)
                    } else {
                        format!("{name}\n")
                    };
                    out.stdout.extend_from_slice(line.as_bytes());
                }
            }
            Err(e) => {
                out.stderr
                    .extend_from_slice(format!("ls: {p}: {}\n", e.message()).as_bytes());
                out.code = 1;
            }
        }
    }
    out
}

/// `rm [-r|-R] [-f] PATH…`.
pub fn rm(phone: &Phone, cwd: &str, args: &[String]) -> Output {
    let (flags, paths) = split_flags(args);
    let recursive = flags.contains('r') || flags.contains('R');
    let force = flags.contains('f');
    let mut out = Output::default();
    for p in paths {
        let path = normalize(cwd, p);
        if let Err(e) = phone.with(|s| s.vfs.remove(&path, recursive)) {
            if force && e == crate::vfs::VfsError::NotFound {
                continue;
            }
            out.stderr
                .extend_from_slice(format!("rm: {p}: {}\n", e.message()).as_bytes());
            out.code = 1;
        }
    }
    out
}

/// `mkdir [-p] PATH…`.
pub fn mkdir(phone: &Phone, cwd: &str, args: &[String]) -> Output {
    let (flags, paths) = split_flags(args);
    let mut out = Output::default();
    for p in paths {
        let path = normalize(cwd, p);
        if let Err(e) = phone.with(|s| s.vfs.mkdir(&path, flags.contains('p'), now_secs())) {
            out.stderr
                .extend_from_slice(format!("mkdir: '{p}': {}\n", e.message()).as_bytes());
            out.code = 1;
        }
    }
    out
}

/// `touch PATH…`: creates empty files, updates mtimes.
pub fn touch(phone: &Phone, cwd: &str, args: &[String]) -> Output {
    let (_, paths) = split_flags(args);
    let mut out = Output::default();
    for p in paths {
        let path = normalize(cwd, p);
        if let Err(e) = phone.with(|s| s.vfs.write(&path, b"", true, now_secs())) {
            out.stderr
                .extend_from_slice(format!("touch: '{p}': {}\n", e.message()).as_bytes());
            out.code = 1;
        }
    }
    out
}
