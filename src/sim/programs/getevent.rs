//! `getevent` (AOSP `system/core/toolbox/getevent.c`): with `-p` (and `-l`, `-i`-less) it
//! prints the phone's input devices and exits; the capture is printed as it was taken
//! ([`crate::evdev::CAPTURES`]). Without `-p` it would stream events until killed: the sim
//! answers that, and a node it does not know, with getevent's own messages.

use super::Output;
use crate::phone::Phone;

/// Runs `getevent`.
pub fn run(phone: &Phone, args: &[String]) -> Output {
    let capture = phone.with(|s| s.touchscreen);
    let flags: String = args
        .iter()
        .filter(|a| a.starts_with('-'))
        .flat_map(|a| a.chars().skip(1))
        .collect();
    let device = args.iter().find(|a| !a.starts_with('-'));
    if !flags.contains('p') {
        // Streaming is not modelled: nothing is touched, so nothing is printed, and it ends.
        return Output::code(0);
    }
    let Some(c) = capture else {
        return match device {
            Some(d) => Output::err(
                1,
                format!("could not open {d}, No such file or directory\n"),
            ),
            None => Output::code(0),
        };
    };
    match device {
        Some(d) if !c.nodes.contains(&d.as_str()) => Output::err(
            1,
            format!("could not open {d}, No such file or directory\n"),
        ),
        _ => Output::ok(c.getevent),
    }
}
