//! The element selector (`text`, `resource_id`, `content_desc`: exact matches on a UI dump)
//! shared by the targeted gestures and `android_wait_for`. An empty string selects nothing, so
//! it counts as absent; a selector with every field absent or empty is no selector at all and a
//! tool that needs one refuses it with `invalid_arguments` (fresh-user finding 3: `text: ""`
//! matched the root element).

use super::last_seen::SnapshotElement;
use crate::device::error::DeviceError;

/// What the selector fields are called in error messages.
pub const SELECTOR_FIELDS: &str = "a selector (text, resource_id, content_desc)";

/// A selector with at least one non-empty field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selector<'a> {
    /// Exact visible text.
    pub text: Option<&'a str>,
    /// Exact resource-id.
    pub resource_id: Option<&'a str>,
    /// Exact content description.
    pub content_desc: Option<&'a str>,
}

/// `s` unless it is absent or empty.
pub fn given(s: Option<&str>) -> Option<&str> {
    s.filter(|s| !s.is_empty())
}

impl<'a> Selector<'a> {
    /// The selector the fields make, or `None` when every field is absent or empty.
    pub fn from_fields(
        text: Option<&'a str>,
        resource_id: Option<&'a str>,
        content_desc: Option<&'a str>,
    ) -> Option<Selector<'a>> {
        let s = Selector {
            text: given(text),
            resource_id: given(resource_id),
            content_desc: given(content_desc),
        };
        (s.text.is_some() || s.resource_id.is_some() || s.content_desc.is_some()).then_some(s)
    }

    /// [`Selector::from_fields`] for a tool that needs a selector: none is `invalid_arguments`
    /// naming the fields (`what_for` says what needs it, e.g. "condition appears").
    pub fn required(
        text: Option<&'a str>,
        resource_id: Option<&'a str>,
        content_desc: Option<&'a str>,
        what_for: &str,
    ) -> Result<Selector<'a>, DeviceError> {
        Self::from_fields(text, resource_id, content_desc).ok_or_else(|| {
            DeviceError::InvalidArguments(format!(
                "invalid arguments: {what_for} needs {SELECTOR_FIELDS} with at least one non-empty field (an empty selector would match any element)"
            ))
        })
    }

    /// Whether `e` matches every given field exactly.
    pub fn matches(&self, e: &SnapshotElement) -> bool {
        self.text.is_none_or(|t| e.text == t)
            && self.resource_id.is_none_or(|r| e.resource_id == r)
            && self.content_desc.is_none_or(|d| e.content_desc == d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_fields_make_no_selector() {
        assert_eq!(Selector::from_fields(None, None, None), None);
        assert_eq!(Selector::from_fields(Some(""), Some(""), Some("")), None);
        let s = Selector::from_fields(Some(""), Some("a:id/ok"), None).unwrap();
        assert_eq!((s.text, s.resource_id), (None, Some("a:id/ok")));
        assert!(Selector::required(Some(""), None, None, "x").is_err());
    }
}
