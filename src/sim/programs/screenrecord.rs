//! `screenrecord [--time-limit SECS] [--size WxH] [--bit-rate BPS] [--verbose] FILE` (AOSP
//! `frameworks/av/cmds/screenrecord/screenrecord.cpp`): records until the time limit (default
//! and maximum 180 s) or until interrupted, then writes an MP4 file. The simulated recording is
//! an MP4 `ftyp` box followed by filler whose length grows with the duration; no video codec is
//! modelled.

use std::time::Duration;

use super::Output;
use crate::phone::{now_secs, Phone};
use crate::vfs::normalize;

/// `kMaxTimeLimitSec` in screenrecord.cpp.
const MAX_TIME_LIMIT: u64 = 180;

/// Runs `screenrecord`.
pub async fn run(phone: &Phone, cwd: &str, args: &[String]) -> Output {
    let mut limit = MAX_TIME_LIMIT;
    let mut file = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--time-limit" => match it.next().and_then(|v| v.parse::<u64>().ok()) {
                Some(v) if (1..=MAX_TIME_LIMIT).contains(&v) => limit = v,
                _ => {
                    return Output::err(
                        2,
                        format!("Time limit must be between 1 and {MAX_TIME_LIMIT} seconds\n"),
                    )
                }
            },
            "--size" | "--bit-rate" | "--display-id" => {
                it.next();
            }
            "--verbose" | "--bugreport" => {}
            other if other.starts_with("--") => {
                return Output::err(2, format!("Unrecognized option: {other}\n"))
            }
            path => file = Some(path.to_string()),
        }
    }
    let Some(file) = file else {
        return Output::err(2, "Must specify output file (see --help).\n");
    };
    tokio::time::sleep(Duration::from_secs(limit)).await;
    let mut bytes = b"\0\0\0\x18ftypmp42\0\0\0\0mp42isom".to_vec();
    bytes.resize(24 + (limit as usize) * 4096, 0);
    let path = normalize(cwd, &file);
    match phone.with(|s| s.vfs.write(&path, &bytes, false, now_secs())) {
        Ok(()) => Output::code(0),
        Err(e) => Output::err(1, format!("Unable to open '{file}': {}\n", e.message())),
    }
}
