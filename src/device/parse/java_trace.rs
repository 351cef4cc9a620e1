//! A Java exception trace in a command's output (an `app_process` command such as
//! `uiautomator`, `am`, `input` dying on an exception), as `Throwable.printStackTrace` prints
//! it and as logcat's `AndroidRuntime` crash lines carry it: a head line `CLASS: MESSAGE` (or
//! `CLASS` alone), frames `\tat PKG.CLASS.METHOD(FILE:LINE)`, `... N more`, and `Caused by:`
//! heads. Logcat prefixes (`E/AndroidRuntime( 1348): `, threadtime `MM-DD … E AndroidRuntime: `)
//! and leading blanks are skipped. Sources: the trace of openatx/uiautomator2#135
//! (`java.lang.IllegalArgumentException: Illegal character (d83d)` / `\tat
//! org.kxml2.io.KXmlSerializer.reportInvalidCharacter(KXmlSerializer.java:144)`), the
//! `uiautomator dump` crash of `AccessibilityNodeInfoDumper.childNafCheck` in logcat form
//! (field bug 66's fixtures, `tests/fixtures/uiautomator/`).

/// One `at` frame: the method's class (fully qualified) and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// `org.kxml2.io.KXmlSerializer`.
    pub class: String,
    /// `reportInvalidCharacter`.
    pub method: String,
}

/// The first exception of a trace and the frames under its head (up to the next head).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaTrace {
    /// `java.lang.IllegalArgumentException`.
    pub exception: String,
    /// What follows `: ` on the head line (`Illegal character (d83d)`), or `""`.
    pub message: String,
    /// The head line as printed (without a logcat prefix), at most 300 characters.
    pub head: String,
    /// Its frames, innermost first.
    pub frames: Vec<Frame>,
}

impl JavaTrace {
    /// Whether any frame's class ends with `class_suffix` (a simple name such as
    /// `KXmlSerializer`, matched after a `.`, or a whole qualified name).
    pub fn through(&self, class_suffix: &str) -> bool {
        self.frames.iter().any(|f| {
            f.class == class_suffix
                || f.class
                    .strip_suffix(class_suffix)
                    .is_some_and(|p| p.ends_with('.'))
        })
    }

    /// Whether the innermost frame is `class_suffix.method` (see [`JavaTrace::through`]).
    pub fn thrown_by(&self, class_suffix: &str, method: &str) -> bool {
        self.frames.first().is_some_and(|f| {
            f.method == method
                && (f.class == class_suffix
                    || f.class
                        .strip_suffix(class_suffix)
                        .is_some_and(|p| p.ends_with('.')))
        })
    }
}

/// Strips a logcat prefix (`E/AndroidRuntime( 1348): `, `… E AndroidRuntime: `) and blanks.
fn body(line: &str) -> &str {
    let line = line.trim();
    match line.find("AndroidRuntime") {
        Some(at) => match line[at..].find(": ") {
            Some(colon) => line[at + colon + 2..].trim(),
            None => line,
        },
        None => line,
    }
}

/// `java.lang.IllegalArgumentException` (or `…Error`, `…Throwable`): a qualified class name
/// whose last segment names a throwable.
fn throwable_class(s: &str) -> bool {
    let Some((pkg, simple)) = s.rsplit_once('.') else {
        return false;
    };
    !pkg.is_empty()
        && pkg
            .split('.')
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        && simple
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && ["Exception", "Error", "Throwable"]
            .iter()
            .any(|e| simple.ends_with(e))
}

/// The exception a head line names, and its message.
fn head(line: &str) -> Option<(String, String)> {
    let line = line.strip_prefix("Caused by: ").unwrap_or(line);
    let (class, message) = match line.split_once(": ") {
        Some((c, m)) => (c.trim(), m.trim()),
        None => (line.trim_end_matches(':').trim(), ""),
    };
    throwable_class(class).then(|| (class.to_string(), message.to_string()))
}

/// `at PKG.CLASS.METHOD(…)` → the frame.
fn frame(line: &str) -> Option<Frame> {
    let rest = line.strip_prefix("at ")?;
    let call = rest.split('(').next()?.trim();
    let (class, method) = call.rsplit_once('.')?;
    (!class.is_empty() && !method.is_empty()).then(|| Frame {
        class: class.to_string(),
        method: method.to_string(),
    })
}

/// The first exception trace in `text` (its head and frames up to the next head), if any.
pub fn first(text: &str) -> Option<JavaTrace> {
    let mut trace: Option<JavaTrace> = None;
    for line in text.lines().map(body) {
        match trace.as_mut() {
            None => {
                if let Some((exception, message)) = head(line) {
                    trace = Some(JavaTrace {
                        exception,
                        message,
                        head: line.chars().take(300).collect(),
                        frames: Vec::new(),
                    });
                }
            }
            Some(t) => {
                if let Some(f) = frame(line) {
                    t.frames.push(f);
                } else if line.starts_with("Caused by:") || head(line).is_some() {
                    break;
                }
            }
        }
    }
    trace
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_head_and_frames_of_a_printed_trace() {
        let t = first("java.lang.IllegalArgumentException: Illegal character (d83d)\n\tat org.kxml2.io.KXmlSerializer.reportInvalidCharacter(KXmlSerializer.java:144)\n\tat org.kxml2.io.KXmlSerializer.writeEscaped(KXmlSerializer.java:130)\n").unwrap();
        assert_eq!(t.exception, "java.lang.IllegalArgumentException");
        assert_eq!(t.message, "Illegal character (d83d)");
        assert_eq!(t.frames.len(), 2);
        assert!(t.thrown_by("KXmlSerializer", "reportInvalidCharacter"));
        assert!(t.through("org.kxml2.io.KXmlSerializer"));
        assert!(!t.through("XmlSerializer"));
    }

    #[test]
    fn reads_logcat_lines_and_stops_at_the_next_head() {
        let t = first("D/AndroidRuntime( 1348): Shutting down VM\nE/AndroidRuntime( 1348): *** FATAL EXCEPTION IN SYSTEM PROCESS: main\nE/AndroidRuntime( 1348): java.lang.NullPointerException\nE/AndroidRuntime( 1348): \tat com.android.uiautomator.core.AccessibilityNodeInfoDumper.childNafCheck(AccessibilityNodeInfoDumper.java:200)\nE/AndroidRuntime( 1348): Error reporting crash\nE/AndroidRuntime( 1348): java.lang.NullPointerException\nE/AndroidRuntime( 1348): \tat com.android.internal.os.RuntimeInit$UncaughtHandler.uncaughtException(RuntimeInit.java:84)\n").unwrap();
        assert_eq!(t.exception, "java.lang.NullPointerException");
        assert_eq!(t.message, "");
        assert_eq!(t.frames.len(), 1);
        assert!(t.through("AccessibilityNodeInfoDumper"));
    }

    #[test]
    fn plain_text_is_no_trace() {
        assert!(first("ERROR: could not get idle state.\n").is_none());
        assert!(first("Error: foo.bar: baz\nException occurred while executing 'text':").is_none());
        assert!(first("").is_none());
    }
}
