//! The focused field read before and after typing (`android_input_text`, field bugs 21, 40,
//! and issue 19 M1): a dump that fails or times out is a [`FieldRead::Failed`] the call reports
//! (never "no focused field"), and a dump that timed out is not waited for twice in one call.

use super::ui::focused_node;
use crate::device::error::DeviceError;
use crate::device::parse::uiautomator::UiNode;
use crate::device::tools::ToolCtx;

/// What a read of the focused field gave.
#[derive(Debug, Clone)]
pub enum FieldRead {
    /// The focused node.
    Focused(UiNode),
    /// The dump has no focused node.
    NoFocus,
    /// Not read (a cleared field needs no "before").
    Skipped,
    /// The dump failed or ran out of time.
    Failed {
        /// Why, for the warning.
        why: String,
        /// It ran out of time (the dump hangs: not tried again in this call).
        timed_out: bool,
    },
}

impl FieldRead {
    /// The field's text when it was read and is readable (not a password field).
    pub fn text(&self) -> Option<&str> {
        match self {
            FieldRead::Focused(n) if !n.password => Some(&n.text),
            _ => None,
        }
    }
}

/// Reads the focused field within `ctx`'s deadline. A dump that fails or times out is a
/// [`FieldRead::Failed`] saying so (the call goes on); a phone that went away is an error.
pub async fn read_field(ctx: &ToolCtx<'_>) -> Result<FieldRead, DeviceError> {
    let failed = |why: String, timed_out| Ok(FieldRead::Failed { why, timed_out });
    match focused_node(ctx).await {
        Ok(Some(n)) => Ok(FieldRead::Focused(n)),
        Ok(None) => Ok(FieldRead::NoFocus),
        Err(e @ DeviceError::UiDumpFailed(_)) => failed(e.to_string(), false),
        // The read's share of the call ran out.
        Err(DeviceError::DeadlineSpent { step, .. }) => failed(
            format!("{step} timed out: the UI dump did not answer within its share of the call"),
            true,
        ),
        Err(DeviceError::Adb(crate::adb::AdbError::Timeout { step, after })) => failed(
            format!("{step} timed out after {} ms", after.as_millis()),
            true,
        ),
        Err(e) => Err(e),
    }
}

/// The read back after typing, unless the read before already timed out (the same dump would
/// hang again: the call says so instead of waiting for it twice).
pub async fn read_back(ctx: &ToolCtx<'_>, before: &FieldRead) -> Result<FieldRead, DeviceError> {
    match before {
        FieldRead::Failed {
            why,
            timed_out: true,
        } => Ok(FieldRead::Failed {
            why: format!("not read back: the read before typing failed ({why})"),
            timed_out: true,
        }),
        _ => read_field(ctx).await,
    }
}

/// Whether the field's text after typing shows that `text` went in: `text` exactly after a
/// clear; else the field changed and holds exactly `text` (it was empty, showing its hint), or
/// grew by exactly `text`'s characters and holds `text` (typed at the end, or at the cursor
/// inside). When the text before is unknown, the field must end with `text` (the best evidence
/// left).
pub fn read_back_holds(before: Option<&str>, after: &str, text: &str, cleared: bool) -> bool {
    if cleared {
        return after == text;
    }
    match before {
        // An empty field showing its hint reads back as the hint (Android 8+ puts the hint in
        // the node's text while `isShowingHintText`, AOSP `TextView.java`
        // `onInitializeAccessibilityNodeInfoInternal`), so "before" may be a hint: a field that
        // changed and now holds exactly the typed text holds it.
        Some(before) => {
            after != before
                && (after == text
                    || (after.chars().count() == before.chars().count() + text.chars().count()
                        && (after == format!("{before}{text}") || after.contains(text))))
        }
        None => after.ends_with(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_back_compares_before_and_after() {
        // Field bug 21: the field already held `abc` and the IME dropped the new `abc`.
        assert!(!read_back_holds(Some("abc"), "abc", "abc", false));
        assert!(read_back_holds(Some("abc"), "abcabc", "abc", false));
        assert!(read_back_holds(Some(""), "abc", "abc", false));
        // An empty field whose node text was its hint.
        assert!(read_back_holds(
            Some("Write a note"),
            "hello",
            "hello",
            false
        ));
        assert!(!read_back_holds(
            Some("Write a note"),
            "Write a note",
            "hello",
            false
        ));
        assert!(read_back_holds(Some("hello"), "helXlo", "X", false));
        assert!(!read_back_holds(Some("hello"), "hello!!", "!", false));
        assert!(read_back_holds(None, "xabc", "abc", false));
        assert!(read_back_holds(None, "abc", "abc", true));
        assert!(!read_back_holds(None, "abcd", "abc", true));
    }
}
