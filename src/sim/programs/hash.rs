//! `sha1sum [FILE…]` as toybox has it (`toys/lsb/md5sum.c`, which builds `md5sum` and
//! `sha1sum`; Android's shell tools are toybox since Android 6): one line per input,
//! `HASH  NAME`, `-` for standard input. The connector's receipts hash the frame with
//! `screencap | sha1sum` (its cost: [`crate::timing::Model::hash`]).

use sha1::{Digest, Sha1};

use super::Output;
use crate::phone::Phone;
use crate::vfs::normalize;

fn line(bytes: &[u8], name: &str) -> String {
    let digest = Sha1::digest(bytes);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}  {name}\n")
}

/// Runs `sha1sum`: standard input when no file is named (or `-`).
pub fn sha1sum(phone: &Phone, cwd: &str, args: &[String], stdin: &[u8]) -> Output {
    let files: Vec<&String> = args
        .iter()
        .filter(|a| !a.starts_with('-') || *a == "-")
        .collect();
    if files.is_empty() {
        return Output::ok(line(stdin, "-"));
    }
    let mut out = Output::default();
    for f in files {
        if f == "-" {
            out.stdout.extend_from_slice(line(stdin, "-").as_bytes());
            continue;
        }
        let path = normalize(cwd, f);
        match phone.with(|s| s.vfs.read(&path).map(|b| b.to_vec())) {
            Ok(bytes) => out.stdout.extend_from_slice(line(&bytes, f).as_bytes()),
            Err(e) => {
                out.stderr
                    .extend_from_slice(format!("sha1sum: {f}: {}\n", e.message()).as_bytes());
                out.code = 1;
            }
        }
    }
    out
}
