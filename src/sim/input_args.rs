//! The argument grammar `input` shares across Android versions: `input [SOURCE] [-d DISPLAY]
//! VERB ARGS…` (AOSP `services/core/java/com/android/server/input/InputShellCommand.java`;
//! Android 6 `cmds/input/.../Input.java` the same for these). Used by the simulated `input`
//! and by the cost model, which counts the events a command injects.

/// The input sources `input` accepts before its verb.
pub const SOURCES: &[&str] = &[
    "keyboard",
    "mouse",
    "touchpad",
    "gamepad",
    "touchnavigation",
    "joystick",
    "touchscreen",
    "stylus",
    "trackball",
    "dpad",
];

/// `args` without the optional source and `-d DISPLAY`: the verb first, then its arguments;
/// empty when no verb is left.
pub fn verb_and_args(args: &[String]) -> Vec<&str> {
    let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
    if args.first().is_some_and(|a| SOURCES.contains(a)) {
        args.remove(0);
    }
    if args.first() == Some(&"-d") {
        args.drain(..2.min(args.len()));
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_and_display_come_off_before_the_verb() {
        let own = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            verb_and_args(&own(&["touchscreen", "-d", "2", "tap", "1", "2"])),
            ["tap", "1", "2"]
        );
        assert_eq!(verb_and_args(&own(&["-d"])), Vec::<&str>::new());
        assert_eq!(verb_and_args(&own(&["text", "hi"])), ["text", "hi"]);
    }
}
