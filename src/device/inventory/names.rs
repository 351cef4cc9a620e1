//! Names of phones that report the same `ro.serialno` (field bug 50: two cheap tablets both
//! `0123456789ABCDEF`, the value of an unset serial in many vendor trees). The first phone
//! seen under a serial is named by it; each further phone with another second property (its
//! Android ID, below) is named `SERIAL#2`, `SERIAL#3`, … — the name claims, bindings,
//! descriptors and `devices` use. Once a serial has been seen on two phones, the book records
//! every one of its phones by (serial, digest of its Android ID) → name, and the record is
//! stored (`phone_names`, SQLite), so a phone keeps its name across unplugs (its transport id
//! changes on each re-plug) and connector restarts: a binding always reaches the phone it
//! was made with. A serial never shared costs nothing: no property is read, nothing stored.
//!
//! The second property is `settings get secure android_id`: 64 random bits per device (and
//! per user), chosen at first boot, kept across reboots, reset by a factory reset (AOSP
//! `frameworks/base/packages/SettingsProvider/.../SettingsProvider.java`, `generateSsaid`;
//! before Android 8 `ensureAndroidIdIsSet`, `SecureRandom`). Unlike `ro.build.fingerprint`
//! (the same for every unit of one firmware) it tells two identical tablets apart. Only a
//! SHA-256 digest of it is kept (the Android ID is a device identifier: not stored, not
//! logged, never sent).

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

pub use crate::store::phone_names::NameRecord;

/// Called with each new record (the daemon stores it); runs under no lock of the book.
pub type Persist = Arc<dyn Fn(NameRecord) + Send + Sync>;

/// The names of phones sharing a serial; cheap to clone.
#[derive(Clone, Default)]
pub struct NameBook {
    /// (serialno, second) → name.
    names: Arc<Mutex<BTreeMap<(String, String), String>>>,
    persist: Option<Persist>,
}

impl std::fmt::Debug for NameBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NameBook")
            .field("records", &self.all().len())
            .finish()
    }
}

/// The digest kept of an Android ID: the first 8 bytes of its SHA-256, in hex.
pub fn digest(android_id: &str) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, android_id.as_bytes());
    crate::secret::to_hex(&d.as_ref()[..8])
}

/// The name of the `n`-th phone (1-based) reporting `serialno`: the serial itself for the
/// first, `serialno#n` for the others.
pub fn nth_name(serialno: &str, n: usize) -> String {
    if n <= 1 {
        serialno.to_string()
    } else {
        format!("{serialno}#{n}")
    }
}

impl NameBook {
    /// A book holding `records` (read from the store at start), calling `persist` with each
    /// record added later.
    pub fn new(records: Vec<NameRecord>, persist: Option<Persist>) -> NameBook {
        let names = records
            .into_iter()
            .map(|r| ((r.serialno, r.second), r.name))
            .collect();
        NameBook {
            names: Arc::new(Mutex::new(names)),
            persist,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), String>> {
        self.names.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every record, sorted by serial then name (for the operator's `devices`).
    pub fn all(&self) -> Vec<NameRecord> {
        let mut all: Vec<NameRecord> = self
            .lock()
            .iter()
            .map(|((serialno, second), name)| NameRecord {
                serialno: serialno.clone(),
                second: second.clone(),
                name: name.clone(),
            })
            .collect();
        all.sort_by(|a, b| {
            (&a.serialno, a.name.len(), &a.name).cmp(&(&b.serialno, b.name.len(), &b.name))
        });
        all
    }

    /// Whether `serialno` has been seen on two phones (its phones are then told apart from
    /// the first sighting on).
    pub fn knows(&self, serialno: &str) -> bool {
        self.lock().keys().any(|(s, _)| s == serialno)
    }

    /// The recorded name of the phone (`serialno`, `second`), if any.
    pub fn lookup(&self, serialno: &str, second: &str) -> Option<String> {
        self.lock()
            .get(&(serialno.to_string(), second.to_string()))
            .cloned()
    }

    /// Records that the phone (`serialno`, `second`) is named `name` (a phone already named
    /// before the collision was seen); an existing record wins. Returns the recorded name.
    pub fn record(&self, serialno: &str, second: &str, name: &str) -> String {
        let added = {
            let mut names = self.lock();
            let key = (serialno.to_string(), second.to_string());
            if let Some(existing) = names.get(&key) {
                return existing.clone();
            }
            if names.iter().any(|((s, _), n)| s == serialno && n == name) {
                // The name belongs to another recorded phone: never two phones under one.
                None
            } else {
                names.insert(key, name.to_string());
                Some(NameRecord {
                    serialno: serialno.to_string(),
                    second: second.to_string(),
                    name: name.to_string(),
                })
            }
        };
        match added {
            Some(record) => {
                if let Some(persist) = &self.persist {
                    persist(record);
                }
                name.to_string()
            }
            None => self.assign(serialno, Some(second), &HashSet::new()),
        }
    }

    /// The name of the phone (`serialno`, `second`): its recorded one, else the first of
    /// `serialno`, `serialno#2`, … that no record of the serial and nothing in `in_use` (the
    /// names other phones of the serial have now) holds, recorded when `second` is known.
    pub fn assign(&self, serialno: &str, second: Option<&str>, in_use: &HashSet<String>) -> String {
        let (name, added) = {
            let mut names = self.lock();
            if let Some(existing) =
                second.and_then(|d| names.get(&(serialno.to_string(), d.to_string())))
            {
                return existing.clone();
            }
            let taken: HashSet<&String> = names
                .iter()
                .filter(|((s, _), _)| s == serialno)
                .map(|(_, n)| n)
                .chain(in_use.iter())
                .collect();
            let name = (1..)
                .map(|n| nth_name(serialno, n))
                .find(|candidate| !taken.contains(candidate))
                .unwrap_or_else(|| serialno.to_string());
            let added = second.map(|d| {
                names.insert((serialno.to_string(), d.to_string()), name.clone());
                NameRecord {
                    serialno: serialno.to_string(),
                    second: d.to_string(),
                    name: name.clone(),
                }
            });
            (name, added)
        };
        if let (Some(record), Some(persist)) = (added, &self.persist) {
            persist(record);
        }
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_phone_keeps_the_serial_and_the_others_get_numbers() {
        let stored = Arc::new(Mutex::new(Vec::new()));
        let sink = stored.clone();
        let book = NameBook::new(
            Vec::new(),
            Some(Arc::new(move |r| sink.lock().unwrap().push(r))),
        );
        let s = "0123456789ABCDEF";
        assert!(!book.knows(s));
        assert_eq!(book.record(s, "aa", s), s);
        assert_eq!(
            book.assign(s, Some("bb"), &HashSet::new()),
            "0123456789ABCDEF#2"
        );
        assert_eq!(
            book.assign(s, Some("cc"), &HashSet::new()),
            "0123456789ABCDEF#3"
        );
        // The same phone again (re-plugged: a new transport, the same Android ID).
        assert_eq!(
            book.assign(s, Some("bb"), &HashSet::new()),
            "0123456789ABCDEF#2"
        );
        assert_eq!(book.lookup(s, "cc").as_deref(), Some("0123456789ABCDEF#3"));
        assert!(book.knows(s));
        assert_eq!(stored.lock().unwrap().len(), 3);
        // A name in use by a phone whose ID cannot be read is skipped, and nothing stored.
        let busy: HashSet<String> = ["0123456789ABCDEF#4".to_string()].into();
        assert_eq!(book.assign(s, None, &busy), "0123456789ABCDEF#5");
        assert_eq!(stored.lock().unwrap().len(), 3);
    }

    #[test]
    fn records_read_at_start_name_the_phones_again() {
        let s = "SERIAL";
        let book = NameBook::new(
            vec![
                NameRecord {
                    serialno: s.into(),
                    second: "bb".into(),
                    name: "SERIAL#2".into(),
                },
                NameRecord {
                    serialno: s.into(),
                    second: "aa".into(),
                    name: s.into(),
                },
            ],
            None,
        );
        // Phone bb comes first after the restart: it is #2 still, not the bare serial.
        assert_eq!(book.assign(s, Some("bb"), &HashSet::new()), "SERIAL#2");
        assert_eq!(book.assign(s, Some("aa"), &HashSet::new()), "SERIAL");
        // A phone recorded under a name another phone holds is given the next free one.
        assert_eq!(book.record(s, "cc", s), "SERIAL#3");
        assert_eq!(
            book.all()
                .iter()
                .map(|r| r.name.as_str())
                .collect::<Vec<_>>(),
            ["SERIAL", "SERIAL#2", "SERIAL#3"]
        );
        assert_eq!(digest("9774d56d682e549c").len(), 16);
        assert_ne!(digest("9774d56d682e549c"), digest("9774d56d682e549d"));
    }
}
