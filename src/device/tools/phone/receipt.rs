//! Receipts: what an action did to the screen, measured without moving a frame across the link.
//!
//! A tool that takes `receipt: true` ([`crate::device::tools::DeviceTool::RECEIPT`]) is run
//! between two measurements of the phone ([`before`], [`after`]): a hash of the frame computed
//! **on the phone** — [`FRAME_HASH`], `screencap | sha1sum`: the raw frame (no PNG encode) piped
//! into toybox's `sha1sum` (`toys/lsb/md5sum.c`, which builds `md5sum` and `sha1sum`; Android's
//! shell tools are toybox since Android 6, AOSP `external/toybox`), so 41 bytes cross the link,
//! not a 10 MB frame — and the window read every gesture makes anyway (`dumpsys window
//! displays`: display 0's focus, [`super::display::read_moment`]), in parallel with the hash.
//!
//! After the action the frame is hashed again until it holds still: two equal hashes in a row,
//! [`SETTLE_HASHES`] hashes or [`SETTLE_WINDOW`] at most. One hash equal to the one before the
//! action is not taken as "nothing moved": `input` returns once the events are dispatched, and
//! the app draws its answer (a ripple, an activity start) a frame or more later, so a hash
//! taken at once can still show the old frame; a receipt that said "nothing happened" there
//! would have the agent tap again. `settled_ms` is the time
//! from the end of the action to the end of the hash that found it still (`null`: it was
//! still moving at the window's end, a video or an animation). `screen_changed` compares the
//! last hash with the one before; `foreground_changed` the apps in front. A value the phone
//! could not give (no `sha1sum`, a failed read) is `null`: the action has happened either way,
//! so a failed measurement never fails the call. A FLAG_SECURE window or a screen that is off
//! captures black (field bug 8): a change behind it is not seen.

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{json, Value};

use super::command;
use super::display::read_moment;
use crate::device::error::DeviceError;
use crate::device::tools::ToolCtx;

/// The frame hash, computed on the phone.
pub const FRAME_HASH: &str = "screencap | sha1sum";
/// What receipts add to a call's deadline: the measurement before, and the settle after.
pub const RECEIPT_DEADLINE: Duration = Duration::from_secs(8);
/// Deadline of one measurement (the hash and the window read).
const STEP_DEADLINE: Duration = Duration::from_secs(3);
/// How long after the action the frame is watched for settling.
pub const SETTLE_WINDOW: Duration = Duration::from_secs(2);
/// Hashes after the action at most.
pub const SETTLE_HASHES: u32 = 8;

/// The measurement before the action.
#[derive(Debug, Clone)]
pub struct Before {
    hash: Option<String>,
    /// The app in front; `None`: the window read failed.
    foreground: Option<Option<String>>,
}

/// The receipt in a tool's result.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Receipt {
    /// The settled frame differs from the frame before the action (`null`: not measured).
    pub screen_changed: Option<bool>,
    /// The app in front changed (`null`: not read).
    pub foreground_changed: Option<bool>,
    /// The app in front after the action.
    pub foreground_package: Option<String>,
    /// Ms from the action's end until the frame was seen still (`null`: still moving at the
    /// end of the settle window, or not measured).
    pub settled_ms: Option<u64>,
}

/// The schema of [`Receipt`] (merged into each receipt tool's output schema).
pub fn schema() -> Value {
    json!({"type": "object",
    "required": ["screen_changed", "foreground_changed", "foreground_package", "settled_ms"],
    "properties": {
        "screen_changed": {"type": ["boolean", "null"]},
        "foreground_changed": {"type": ["boolean", "null"]},
        "foreground_package": {"type": ["string", "null"]},
        "settled_ms": {"type": ["integer", "null"], "minimum": 0}
    }})
}

/// The property `receipt` of a receipt tool's input schema.
pub fn argument_schema() -> Value {
    json!({"type": "boolean", "description": "Also answer receipt {screen_changed, foreground_changed, foreground_package, settled_ms}: the frame hashed on the phone before and after (costs about three frame hashes on the phone; default false)."})
}

/// The hash `sha1sum` printed (40 hex digits first on its line), if any.
pub fn parse_hash(stdout: &str) -> Option<String> {
    let word = stdout.split_whitespace().next()?;
    (word.len() == 40 && word.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| word.to_ascii_lowercase())
}

async fn frame_hash(ctx: &ToolCtx<'_>) -> Result<Option<String>, DeviceError> {
    let out = command::run(ctx, FRAME_HASH, STEP_DEADLINE, 4096).await?;
    Ok(parse_hash(&out.stdout))
}

/// Measures before the action. A phone that does not answer fails the call (nothing was done);
/// a hash or read the phone cannot give is `None`.
pub async fn before(ctx: &ToolCtx<'_>) -> Result<Before, DeviceError> {
    let (hash, moment) = tokio::join!(frame_hash(ctx), read_moment(ctx));
    Ok(Before {
        hash: hash?,
        foreground: moment.ok().map(|m| m.foreground_package),
    })
}

/// Measures after the action that ended at `acted` (see the module docs); never fails.
pub async fn after(ctx: &ToolCtx<'_>, before: &Before, acted: Instant) -> Receipt {
    let mut last: Option<String> = None;
    let mut settled_ms = None;
    let mut foreground = None;
    let mut read_any = false;
    for _ in 0..SETTLE_HASHES {
        if ctx.deadline.left() < STEP_DEADLINE.min(Duration::from_millis(200)) {
            break;
        }
        let (hash, moment) = tokio::join!(frame_hash(ctx), read_moment(ctx));
        if let Ok(m) = moment {
            read_any = true;
            foreground = m.foreground_package;
        }
        let Ok(Some(hash)) = hash else {
            last = None;
            break;
        };
        let still = last.as_ref() == Some(&hash);
        last = Some(hash);
        if still {
            settled_ms = Some(acted.elapsed().as_millis() as u64);
            break;
        }
        if acted.elapsed() >= SETTLE_WINDOW {
            break;
        }
    }
    Receipt {
        screen_changed: match (&before.hash, &last) {
            (Some(a), Some(b)) => Some(a != b),
            _ => None,
        },
        foreground_changed: match &before.foreground {
            Some(was) if read_any => Some(*was != foreground),
            _ => None,
        },
        foreground_package: foreground,
        settled_ms: settled_ms.filter(|_| last.is_some()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_the_first_word_of_sha1sum() {
        assert_eq!(
            parse_hash("DA39A3EE5E6B4B0D3255BFEF95601890AFD80709  -\n").as_deref(),
            Some("da39a3ee5e6b4b0d3255bfef95601890afd80709")
        );
        assert_eq!(
            parse_hash("/system/bin/sh: sha1sum: inaccessible or not found\n"),
            None
        );
        assert_eq!(parse_hash(""), None);
    }
}
