//! What `android_observe` keeps and compares: each listed element's **stable key**, the
//! observations of a channel (the last [`OBSERVATIONS_KEPT`]), and the difference between two
//! of them.
//!
//! The key of an element is its ancestry path in the dump, one step per ancestor and itself,
//! each step the node's `resource-id` when it has one, else its class's simple name (after the
//! last `.`), followed by `[N]` when N > 0 earlier siblings under the same parent have the same
//! step: `/FrameLayout/LinearLayout/com.example.notes:id/title[1]`. It holds neither text,
//! bounds nor state, so an element whose text or position changes keeps its key (a `changed`
//! entry), and ids named by the app keep a sibling's insertion from renaming everything after
//! it. Keys are unique within one dump (the sibling index tells equal steps apart). Where an
//! app names no ids, inserting a sibling of the same class renames the later ones (they show as
//! `changed`/`added`): the price of a key that needs nothing but the dump.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;
use serde_json::{Map, Value};

use super::ui::meaningful;
use crate::device::parse::uiautomator::UiDump;

/// How many observations a channel keeps for `since` (older ones are expired).
pub const OBSERVATIONS_KEPT: usize = 8;

/// The key of every meaningful node of `dump` (the elements `android_ui_tree` lists, in the
/// same order; see the module docs for the shape).
pub fn element_keys(dump: &UiDump, include_invisible: bool) -> Vec<String> {
    let mut stack: Vec<(u32, String)> = Vec::new();
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    let mut keys = Vec::new();
    for n in &dump.nodes {
        while stack.last().is_some_and(|(d, _)| *d >= n.depth) {
            stack.pop();
        }
        let parent = stack.last().map(|(_, k)| k.clone()).unwrap_or_default();
        let step = if n.resource_id.is_empty() {
            n.class.rsplit('.').next().unwrap_or_default().to_string()
        } else {
            n.resource_id.clone()
        };
        let count = seen.entry((parent.clone(), step.clone())).or_insert(0);
        let key = match *count {
            0 => format!("{parent}/{step}"),
            i => format!("{parent}/{step}[{i}]"),
        };
        *count += 1;
        if meaningful(n, include_invisible) {
            keys.push(key.clone());
        }
        stack.push((n.depth, key));
    }
    keys
}

/// One observation as kept for `since`: its listed elements (as serialized for the agent) by
/// key.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// `obs_<hex>`.
    pub observation_id: String,
    /// `(key, element)` in document order.
    pub elements: Vec<(String, Value)>,
}

/// The observations of one channel, newest last.
#[derive(Debug, Default)]
pub struct Observations {
    kept: std::sync::Mutex<VecDeque<Observation>>,
}

impl Observations {
    /// Keeps `o` (dropping the oldest beyond [`OBSERVATIONS_KEPT`]).
    pub fn add(&self, o: Observation) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() == OBSERVATIONS_KEPT {
            kept.pop_front();
        }
        kept.push_back(o);
    }

    /// The kept observation `id`, if it is still kept.
    pub fn get(&self, id: &str) -> Option<Observation> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().find(|o| o.observation_id == id).cloned()
    }
}

/// What changed between two observations, by key.
#[derive(Debug, Default, Serialize, PartialEq)]
pub struct Changes {
    /// Elements whose key is new: the whole element (its `element_id` of the new observation)
    /// and `key`.
    pub added: Vec<Value>,
    /// Keys gone: `{key, element_id}` (the id it had in the `since` observation).
    pub removed: Vec<Value>,
    /// Elements whose key stayed and whose fields changed: `{key, element_id}` (the new id) and
    /// each changed field with its new value (`null` for an optional flag that went away).
    pub changed: Vec<Value>,
}

impl Changes {
    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// Fields not compared: the id is per observation, the center follows the bounds.
const NOT_COMPARED: [&str; 2] = ["element_id", "center"];

fn with_key(key: &str, element_id: &Value, rest: Map<String, Value>) -> Value {
    let mut m = Map::new();
    m.insert("key".into(), Value::String(key.to_string()));
    m.insert("element_id".into(), element_id.clone());
    m.extend(rest);
    Value::Object(m)
}

/// The changes from `old` to `new` (each `(key, element)` as [`Observation::elements`]).
pub fn diff(old: &[(String, Value)], new: &[(String, Value)]) -> Changes {
    let before: HashMap<&str, &Value> = old.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let now: HashMap<&str, &Value> = new.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut changes = Changes::default();
    for (key, el) in new {
        let Some(prev) = before.get(key.as_str()) else {
            let mut whole = el.as_object().cloned().unwrap_or_default();
            whole.insert("key".into(), Value::String(key.clone()));
            changes.added.push(Value::Object(whole));
            continue;
        };
        let (Some(a), Some(b)) = (prev.as_object(), el.as_object()) else {
            continue;
        };
        let mut fields = Map::new();
        for (f, v) in b {
            if !NOT_COMPARED.contains(&f.as_str()) && a.get(f) != Some(v) {
                fields.insert(f.clone(), v.clone());
            }
        }
        for f in a.keys() {
            if !NOT_COMPARED.contains(&f.as_str()) && !b.contains_key(f) {
                fields.insert(f.clone(), Value::Null);
            }
        }
        if !fields.is_empty() {
            let id = b.get("element_id").cloned().unwrap_or(Value::Null);
            changes.changed.push(with_key(key, &id, fields));
        }
    }
    for (key, el) in old {
        if !now.contains_key(key.as_str()) {
            let id = el.get("element_id").cloned().unwrap_or(Value::Null);
            changes.removed.push(with_key(key, &id, Map::new()));
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::parse::uiautomator::parse_uiautomator_dump;
    use serde_json::json;

    const DUMP: &str = r#"<hierarchy rotation="0"><node class="android.widget.FrameLayout" bounds="[0,0][100,100]"><node class="android.widget.TextView" text="A" bounds="[0,0][10,10]"/><node class="android.widget.TextView" text="B" bounds="[0,10][10,20]"/><node class="android.widget.Button" resource-id="p:id/ok" text="OK" clickable="true" bounds="[0,20][10,30]"/></node></hierarchy>"#;

    #[test]
    fn keys_follow_ancestry_ids_and_sibling_order() {
        let dump = parse_uiautomator_dump(DUMP).unwrap();
        assert_eq!(
            element_keys(&dump, false),
            vec![
                "/FrameLayout/TextView",
                "/FrameLayout/TextView[1]",
                "/FrameLayout/p:id/ok"
            ]
        );
    }

    #[test]
    fn a_diff_names_only_what_changed() {
        let old = vec![
            (
                "/a".to_string(),
                json!({"element_id": "e0", "text": "x", "center": [1, 1]}),
            ),
            (
                "/b".to_string(),
                json!({"element_id": "e1", "text": "y", "checked": true}),
            ),
        ];
        let new = vec![
            (
                "/a".to_string(),
                json!({"element_id": "e0", "text": "x", "center": [1, 1]}),
            ),
            ("/b".to_string(), json!({"element_id": "e1", "text": "z"})),
            ("/c".to_string(), json!({"element_id": "e2", "text": "new"})),
        ];
        let d = diff(&old, &new);
        assert_eq!(
            d.added,
            vec![json!({"element_id": "e2", "text": "new", "key": "/c"})]
        );
        assert_eq!(
            d.changed,
            vec![json!({"key": "/b", "element_id": "e1", "text": "z", "checked": null})]
        );
        assert!(d.removed.is_empty());
        let back = diff(&new, &old);
        assert_eq!(back.removed, vec![json!({"key": "/c", "element_id": "e2"})]);
        assert!(diff(&old, &old).is_empty());
    }
}
