//! The element selector (`text`, `resource_id`, `content_desc`: exact matches on a UI dump)
//! shared by the targeted gestures and `android_wait_for` — one matcher, [`Selector::find`]. An
//! empty string selects nothing, so it counts as absent; a selector with every field absent or
//! empty is no selector at all and a tool that needs one refuses it with `invalid_arguments`
//! (fresh-user finding 3: `text: ""` matched the root element).
//!
//! A `resource_id` is `pkg:id/NAME` for a View and may be a bare `NAME` for a Jetpack Compose
//! test tag exposed with `testTagsAsResourceId` (kaeawc/auto-mobile#3852, field bug 42):
//! `pkg:id/NAME` and `NAME` select the same element, both ways. An exact match wins; a bare
//! name that names more than one id on screen (`a:id/NAME` and `b:id/NAME`) is
//! `invalid_arguments` listing the candidates. Two full ids of different packages never match.

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

    /// Whether `e`'s text and content description match exactly (the fields that are given).
    fn matches_words(&self, e: &SnapshotElement) -> bool {
        self.text.is_none_or(|t| e.text == t)
            && self.content_desc.is_none_or(|d| e.content_desc == d)
    }

    /// Whether `e` matches every given field exactly, or with its resource id in the other form
    /// (`pkg:id/NAME` ↔ `NAME`).
    pub fn matches(&self, e: &SnapshotElement) -> bool {
        self.matches_words(e) && self.resource_id.is_none_or(|r| same_id(r, &e.resource_id))
    }

    /// The element the selector picks among `elements` (document order): the first exact
    /// match, else the first whose resource id is the given one in the other form. A bare
    /// name naming several distinct ids is `invalid_arguments` listing them.
    pub fn find<'e>(
        &self,
        elements: &'e [SnapshotElement],
    ) -> Result<Option<&'e SnapshotElement>, DeviceError> {
        let exact = |e: &&SnapshotElement| {
            self.matches_words(e) && self.resource_id.is_none_or(|r| e.resource_id == r)
        };
        if let Some(e) = elements.iter().find(exact) {
            return Ok(Some(e));
        }
        let Some(wanted) = self.resource_id else {
            return Ok(None);
        };
        let others: Vec<&SnapshotElement> = elements.iter().filter(|e| self.matches(e)).collect();
        let mut ids: Vec<&SnapshotElement> = Vec::new();
        for e in &others {
            if !ids.iter().any(|seen| seen.resource_id == e.resource_id) {
                ids.push(e);
            }
        }
        if ids.len() > 1 {
            let listed: Vec<String> = ids
                .iter()
                .take(8)
                .map(|e| format!("`{}` ({})", e.resource_id, e.element_id))
                .collect();
            return Err(DeviceError::InvalidArguments(format!(
                "invalid argument /resource_id: `{wanted}` is ambiguous on this screen: it names {} different ids: {}; give the full id (pkg:id/NAME) of the one meant",
                ids.len(),
                listed.join(", ")
            )));
        }
        Ok(others.first().copied())
    }

    /// Elements that look like what the selector asked for but do not match it (a resource
    /// id or words differing in case or spaces, an id containing the name), at most 3, as
    /// `field `value` (eN)` for an `element_not_found` message.
    pub fn near_matches(&self, elements: &[SnapshotElement]) -> Vec<String> {
        let loose =
            |a: &str, b: &str| !b.is_empty() && a.trim().to_lowercase() == b.trim().to_lowercase();
        let mut out = Vec::new();
        for e in elements {
            let hit = if let Some(r) = self.resource_id {
                let (want, have) = (
                    id_name(r).to_lowercase(),
                    id_name(&e.resource_id).to_lowercase(),
                );
                (!have.is_empty() && (have == want || have.contains(&want) || want.contains(&have)))
                    .then(|| format!("resource_id `{}` ({})", e.resource_id, e.element_id))
            } else if self.text.is_some_and(|t| loose(t, &e.text)) {
                Some(format!("text `{}` ({})", e.text, e.element_id))
            } else if self.content_desc.is_some_and(|d| loose(d, &e.content_desc)) {
                Some(format!(
                    "content_desc `{}` ({})",
                    e.content_desc, e.element_id
                ))
            } else {
                None
            };
            out.extend(hit);
            if out.len() == 3 {
                break;
            }
        }
        out
    }
}

/// The `NAME` of `pkg:id/NAME` (a bare name is its own).
fn id_name(id: &str) -> &str {
    id.split_once(":id/").map_or(id, |(_, name)| name)
}

/// Whether resource ids `a` and `b` are the same id: equal, or one bare and the other
/// `pkg:id/` of the same name (two full ids of different packages differ).
pub fn same_id(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let bare = |id: &str| !id.contains(":id/");
    !a.is_empty() && !b.is_empty() && (bare(a) || bare(b)) && id_name(a) == id_name(b)
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

    fn el(id: &str, resource_id: &str) -> SnapshotElement {
        SnapshotElement {
            element_id: id.into(),
            bounds: Default::default(),
            text: String::new(),
            resource_id: resource_id.into(),
            content_desc: String::new(),
            class: "android.view.View".into(),
        }
    }

    #[test]
    fn a_bare_name_and_a_full_id_select_the_same_element_both_ways() {
        let screen = [
            el("e0", "com.example.people:id/title"),
            el("e1", "speedDial"),
        ];
        let full =
            Selector::from_fields(None, Some("com.example.people:id/speedDial"), None).unwrap();
        assert_eq!(full.find(&screen).unwrap().unwrap().element_id, "e1");
        let bare = Selector::from_fields(None, Some("title"), None).unwrap();
        assert_eq!(bare.find(&screen).unwrap().unwrap().element_id, "e0");
        let other = Selector::from_fields(None, Some("org.other:id/title"), None).unwrap();
        assert!(
            other.find(&screen).unwrap().is_none(),
            "another package's id differs"
        );
        assert_eq!(
            other.near_matches(&screen),
            vec!["resource_id `com.example.people:id/title` (e0)"]
        );
    }

    #[test]
    fn an_ambiguous_bare_name_lists_the_candidates_and_an_exact_one_wins() {
        let screen = [
            el("e0", "com.a:id/avatar"),
            el("e1", "com.b:id/avatar"),
            el("e2", "com.a:id/avatar"),
        ];
        let bare = Selector::from_fields(None, Some("avatar"), None).unwrap();
        let e = bare.find(&screen).unwrap_err();
        let m = e.to_string();
        assert!(
            m.contains("`com.a:id/avatar` (e0)") && m.contains("`com.b:id/avatar` (e1)"),
            "{m}"
        );
        let full = Selector::from_fields(None, Some("com.b:id/avatar"), None).unwrap();
        assert_eq!(full.find(&screen).unwrap().unwrap().element_id, "e1");
        // Rows sharing one id are one id: the first is picked, as for an exact id.
        let rows = [el("e0", "android:id/title"), el("e1", "android:id/title")];
        let title = Selector::from_fields(None, Some("title"), None).unwrap();
        assert_eq!(title.find(&rows).unwrap().unwrap().element_id, "e0");
    }
}
