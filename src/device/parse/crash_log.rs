//! The crash buffer as `logcat -b crash -d -v epoch` prints it: one record a line, `SECONDS.MS
//! PID TID LEVEL TAG: MESSAGE` (AOSP `liblog/logprint.cpp`, `FORMAT_MODIFIER_EPOCH`). An
//! uncaught exception of a Java process is a run of `AndroidRuntime` lines of one pid: `***
//! FATAL EXCEPTION IN SYSTEM PROCESS: main` (a process with no application, such as an
//! `app_process` command run by the shell on Android before 8) or `FATAL EXCEPTION: main` /
//! `Process: NAME, PID: N`, then the trace (AOSP `RuntimeInit` `LoggingHandler`). After it the
//! process kills itself (`Process.killProcess`: SIGKILL, exit 137 to the shell) and prints
//! nothing on its own streams — `I/Process: Sending signal. PID: 1348 SIG: 9` (field bug 66).

use super::java_trace::{self, JavaTrace};

/// One uncaught exception of the buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crash {
    /// When it was logged (Unix seconds).
    pub at: u64,
    /// The crashed process.
    pub pid: u32,
    /// Its trace.
    pub trace: JavaTrace,
}

/// The first blank-separated word of `s` and the rest after it (leading blanks skipped).
fn word(s: &str) -> Option<(&str, &str)> {
    let s = s.trim_start();
    let end = s.find(char::is_whitespace).unwrap_or(s.len());
    (end > 0).then(|| (&s[..end], &s[end..]))
}

/// `(seconds, pid, tag, message)` of an epoch-format line.
fn record(line: &str) -> Option<(u64, u32, &str, &str)> {
    let (stamp, rest) = word(line)?;
    let (secs, ms) = stamp.split_once('.')?;
    if ms.is_empty() || !ms.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let at: u64 = secs.parse().ok()?;
    let (pid, rest) = word(rest)?;
    let pid: u32 = pid.parse().ok()?;
    let (tid, rest) = word(rest)?;
    tid.parse::<u32>().ok()?;
    let (level, rest) = word(rest)?;
    if level.len() != 1 {
        return None;
    }
    let (tag, message) = rest.split_once(':')?;
    Some((
        at,
        pid,
        tag.trim(),
        message.strip_prefix(' ').unwrap_or(message),
    ))
}

/// Every uncaught exception in `output`, oldest first: the `AndroidRuntime` lines of one pid
/// from its `FATAL EXCEPTION` line on, read as a trace ([`java_trace::first`]).
pub fn parse_crashes(output: &str) -> Vec<Crash> {
    let mut crashes = Vec::new();
    let mut open: Option<(u64, u32, String)> = None;
    let close = |open: &mut Option<(u64, u32, String)>, crashes: &mut Vec<Crash>| {
        if let Some((at, pid, text)) = open.take() {
            if let Some(trace) = java_trace::first(&text) {
                crashes.push(Crash { at, pid, trace });
            }
        }
    };
    for (at, pid, tag, message) in output.lines().filter_map(record) {
        if tag != "AndroidRuntime" {
            continue;
        }
        if message.contains("FATAL EXCEPTION") {
            close(&mut open, &mut crashes);
            open = Some((at, pid, String::new()));
            continue;
        }
        if let Some((_, open_pid, text)) = open.as_mut() {
            if *open_pid == pid {
                text.push_str(message);
                text.push('\n');
            }
        }
    }
    close(&mut open, &mut crashes);
    crashes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_uncaught_exceptions_by_process() {
        let log = "--------- beginning of crash\n1706000000.100  1348  1348 E AndroidRuntime: *** FATAL EXCEPTION IN SYSTEM PROCESS: main\n1706000000.101  1348  1348 E AndroidRuntime: java.lang.IllegalArgumentException: Illegal character (d83d)\n1706000000.102  1348  1348 E AndroidRuntime: \tat org.kxml2.io.KXmlSerializer.reportInvalidCharacter(KXmlSerializer.java:144)\n1706000000.103   999   999 E AndroidRuntime: \tat com.example.Other.run(Other.java:1)\n1706000100.000  2000  2000 E AndroidRuntime: FATAL EXCEPTION: main\n1706000100.001  2000  2000 E AndroidRuntime: Process: com.example, PID: 2000\n1706000100.002  2000  2000 E AndroidRuntime: java.lang.NullPointerException\n";
        let c = parse_crashes(log);
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].at, c[0].pid), (1_706_000_000, 1348));
        assert_eq!(c[0].trace.message, "Illegal character (d83d)");
        assert_eq!(c[0].trace.frames.len(), 1, "another pid's line is not its");
        assert_eq!(c[1].trace.exception, "java.lang.NullPointerException");
        assert!(parse_crashes("logcat: Unable to open log device '/dev/log/crash'\n").is_empty());
    }
}
