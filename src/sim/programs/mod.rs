//! The programs of the simulated `/system/bin`. Each takes argv (without the program name
//! where noted) and returns collected [`Output`]; only `sleep` and the renderers await.
//! Formats are pinned to real captures under `/work/shared/fixtures/` (named per program).

mod am;
mod dumpsys;
mod fs;
mod getevent;
mod getprop;
mod hash;
mod ime;
mod input;
mod install_session;
mod keys;
mod logcat;
mod media;
mod misc;
mod packages;
mod pm;
mod reboot;
mod screencap;
mod screenrecord;
mod settings;
mod sm;
mod text;
mod uiautomator;
mod window_dump;
mod wm;

pub use input::{apply_touch, write_node};

use crate::phone::Phone;
use crate::timing;

/// What a program produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// Standard output bytes.
    pub stdout: Vec<u8>,
    /// Standard error bytes.
    pub stderr: Vec<u8>,
    /// Exit status.
    pub code: i32,
    /// The program wrote its stderr before its stdout (screencap's warnings); matters where
    /// the two share one stream (`exec:`, legacy `shell:`, `2>&1`).
    pub stderr_first: bool,
}

impl Output {
    /// No output, this status.
    pub fn code(code: i32) -> Output {
        Output {
            code,
            ..Output::default()
        }
    }

    /// Status 0 with stdout.
    pub fn ok(stdout: impl Into<Vec<u8>>) -> Output {
        Output {
            stdout: stdout.into(),
            ..Output::default()
        }
    }

    /// A failure with a stderr message.
    pub fn err(code: i32, stderr: impl Into<Vec<u8>>) -> Output {
        Output {
            stderr: stderr.into(),
            code,
            ..Output::default()
        }
    }

    /// A Java exception as `cmd`-based tools print it (`BasicShellCommandHandler.exec`):
    /// `Exception occurred while executing 'VERB':` + trace on stderr, status 255.
    /// Source: `fixtures/wm/oppo-coloros-wm-size-reset-securityexception.txt`.
    pub fn java_exception(verb: &str, exception: &str, frame: &str) -> Output {
        let text = format!(
            "Exception occurred while executing '{verb}':\n{exception}\n\tat {frame}\n\tat android.os.BasicShellCommandHandler.exec(BasicShellCommandHandler.java:97)\n\tat android.os.ShellCommand.exec(ShellCommand.java:38)\n"
        );
        Output::err(255, text)
    }
}

/// A stable 7-hex-digit identity hash for a name (like `Integer.toHexString(identityHashCode)`).
pub fn ident(name: &str) -> String {
    let h = name.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    format!("{:07x}", h & 0x0fff_ffff)
}

/// How many stdin bytes a streamed install reads (`pm|cmd package install -S SIZE`): exactly
/// that many, without waiting for EOF (adb keeps the `exec:` stream open for the answer).
pub fn stdin_size(argv: &[String]) -> Option<usize> {
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let install = matches!(
        args.as_slice(),
        ["pm", "install", ..] | ["cmd", "package", "install", ..]
    );
    // `install-write -S SIZE ID NAME -`: the split streamed on stdin.
    let write = matches!(
        args.as_slice(),
        ["pm", "install-write", .., "-"] | ["cmd", "package", "install-write", .., "-"]
    );
    (install || write)
        .then(|| install_session::stream_size(&args))
        .flatten()
}

/// Whether the program reads standard input when no file is named.
pub fn wants_stdin(argv: &[String]) -> bool {
    let name = argv[0].rsplit('/').next().unwrap_or_default();
    let mut files = 0;
    let mut skip_value = false;
    for a in &argv[1..] {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        skip_value = matches!(a.as_str(), "-n" | "-c" | "-e");
        files += usize::from(!a.starts_with('-') || a == "-");
    }
    match name {
        "cat" | "head" | "tail" | "wc" | "sha1sum" => {
            files == 0 || argv[1..].iter().any(|a| a == "-")
        }
        "grep" => files <= 1,
        _ => false,
    }
}

/// Runs program `name`; `None` when no such program exists.
pub async fn run(
    phone: &Phone,
    cwd: &str,
    name: &str,
    argv: &[String],
    stdin: Vec<u8>,
) -> Option<Output> {
    let args = &argv[1..];
    // Phone-side start-up and work of the slow programs (`sim --timing realistic`): a floor
    // on the program's duration, the sim's own work included.
    let started = std::time::Instant::now();
    let modelled = phone.with(|s| {
        s.timing.and_then(|m| match name {
            "sha1sum" => Some(m.hash(stdin.len())),
            _ => m.program(name, args),
        })
    });
    if let Some(out) = misc::service_down(phone, name, args) {
        return Some(out);
    }
    let out = match name {
        "sleep" => misc::sleep(args).await,
        "reboot" => reboot::reboot(phone, args).await,
        "screencap" => screencap::run(phone, args).await,
        "screenrecord" => screenrecord::run(phone, cwd, args).await,
        "uiautomator" => uiautomator::run(phone, cwd, args),
        "echo" => text::echo(args),
        "printf" => text::printf(args),
        "grep" => text::grep(phone, cwd, args, &stdin),
        "head" | "tail" => text::head_tail(phone, cwd, name == "head", args, &stdin),
        "wc" => text::wc(args, &stdin),
        "cat" => fs::cat(phone, cwd, args, &stdin),
        "sha1sum" => hash::sha1sum(phone, cwd, args, &stdin),
        "ls" => fs::ls(phone, cwd, args),
        "rm" => fs::rm(phone, cwd, args),
        "mkdir" => fs::mkdir(phone, cwd, args),
        "touch" => fs::touch(phone, cwd, args),
        "pwd" => Output::ok(format!("{cwd}\n")),
        "true" => Output::code(0),
        "false" => Output::code(1),
        "test" | "[" => misc::test(phone, cwd, name, args),
        "id" | "whoami" | "uname" | "date" => misc::info(name, args),
        "getprop" => getprop::getprop(phone, args),
        "getevent" => getevent::run(phone, args),
        "service" => misc::service(phone, args),
        "setprop" => getprop::setprop(phone, args),
        "settings" => settings::run(phone, args),
        "sm" => sm::run(phone, args),
        "wm" => wm::run(phone, args),
        "dumpsys" => dumpsys::run(phone, args),
        "input" => input::run(phone, args),
        "ime" => ime::ime(phone, args),
        "am" => am::am(phone, args),
        "monkey" => am::monkey(phone, args),
        "pm" => pm::pm(phone, args, &stdin),
        "content" => media::content(phone, args),
        "cmd" => pm::cmd(phone, args, &stdin),
        "logcat" => logcat::logcat(phone, args),
        "pidof" => logcat::pidof(phone, args),
        "ps" => logcat::ps(phone, args),
        _ => return None,
    };
    if let Some(d) = modelled {
        timing::wait_rest(started, d).await;
    }
    Some(out)
}
