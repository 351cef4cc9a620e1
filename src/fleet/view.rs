//! The fleet view (`devices --fleet`): every box's phones as the store holds them, with the box
//! holding each phone's binding. Read in one range of [`super::PREFIX`], so the view is one
//! consistent revision.

use serde::Serialize;
use serde_json::Value;

use super::etcd::{EtcdClient, EtcdError};
use super::PREFIX;

/// One phone of the fleet view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FleetPhone {
    /// The box that sees the phone.
    #[serde(rename = "box")]
    pub box_name: String,
    /// That box's connector URL (`null` when the box key is missing).
    pub base_url: Option<String>,
    /// The phone's name.
    pub serial: String,
    /// Model (`null` while unknown).
    pub model: Option<String>,
    /// adb's state word.
    pub state: String,
    /// The box holding the phone's fleet binding, `null` when free.
    pub bound_on: Option<String>,
}

/// One box of the fleet view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FleetBox {
    /// Its `--box` name.
    pub name: String,
    /// Its connector URL (`null` when its box key is gone).
    pub base_url: Option<String>,
    /// Its connector's version (`null` when its box key is gone).
    pub version: Option<String>,
    /// Whether its lease is live: its box key is in the store (keys of a dead box leave with
    /// its lease; a phone key without its box key is the moment in between).
    pub alive: bool,
    /// The phones it sees, by serial.
    pub phones: Vec<FleetPhone>,
}

/// Reads the fleet view, sorted by box then serial. Errors: [`EtcdError`].
pub async fn read(client: &EtcdClient) -> Result<Vec<FleetPhone>, EtcdError> {
    Ok(read_boxes(client)
        .await?
        .into_iter()
        .flat_map(|b| b.phones)
        .collect())
}

/// Reads the fleet view by box (every box registered, with or without phones), sorted by
/// name, each box's phones by serial. Errors: [`EtcdError`].
pub async fn read_boxes(client: &EtcdClient) -> Result<Vec<FleetBox>, EtcdError> {
    let kvs = client.range_prefix(PREFIX).await?;
    let json = |v: &[u8]| serde_json::from_slice::<Value>(v).unwrap_or(Value::Null);
    let text = |v: &Value, f: &str| v.get(f).and_then(Value::as_str).map(str::to_string);
    let mut boxes: std::collections::BTreeMap<String, FleetBox> = Default::default();
    let mut bindings = std::collections::HashMap::new();
    for kv in &kvs {
        if let Some(name) = kv.key.strip_prefix(&format!("{PREFIX}boxes/")) {
            let v = json(&kv.value);
            boxes.insert(
                name.to_string(),
                FleetBox {
                    name: name.to_string(),
                    base_url: text(&v, "base_url"),
                    version: text(&v, "version"),
                    alive: true,
                    phones: Vec::new(),
                },
            );
        } else if let Some(hex) = kv.key.strip_prefix(&format!("{PREFIX}bindings/")) {
            bindings.insert(hex.to_string(), text(&json(&kv.value), "box"));
        }
    }
    for kv in &kvs {
        let Some(rest) = kv.key.strip_prefix(&format!("{PREFIX}phones/")) else {
            continue;
        };
        let Some((box_name, hex)) = rest.split_once('/') else {
            continue;
        };
        let v = json(&kv.value);
        let entry = boxes
            .entry(box_name.to_string())
            .or_insert_with(|| FleetBox {
                name: box_name.to_string(),
                base_url: None,
                version: None,
                alive: false,
                phones: Vec::new(),
            });
        entry.phones.push(FleetPhone {
            box_name: box_name.to_string(),
            base_url: entry.base_url.clone(),
            serial: text(&v, "serial").unwrap_or_default(),
            model: text(&v, "model").filter(|m| !m.is_empty()),
            state: text(&v, "state").unwrap_or_default(),
            bound_on: bindings.get(hex).cloned().flatten(),
        });
    }
    let mut boxes: Vec<FleetBox> = boxes.into_values().collect();
    for b in &mut boxes {
        b.phones.sort_by(|x, y| x.serial.cmp(&y.serial));
    }
    Ok(boxes)
}

/// The table form of the view: `BOX SERIAL MODEL STATE BOUND ON URL`, `-` for none.
pub fn to_table(phones: &[FleetPhone]) -> String {
    let mut rows = vec![["BOX", "SERIAL", "MODEL", "STATE", "BOUND ON", "URL"].map(String::from)];
    let dash = |s: Option<&String>| s.cloned().unwrap_or_else(|| "-".into());
    for p in phones {
        rows.push([
            p.box_name.clone(),
            p.serial.clone(),
            dash(p.model.as_ref()),
            p.state.clone(),
            dash(p.bound_on.as_ref()),
            dash(p.base_url.as_ref()),
        ]);
    }
    crate::operator::table::aligned(&rows)
}
