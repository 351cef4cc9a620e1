//! Who is behind a route: the identity probe (`getprop`), and the phone's name when another
//! route reports the same serial — the same phone on a second route, or a second phone
//! ([`place`], field bug 50; [`super::names`]).

use std::collections::HashSet;
use std::time::Duration;

use super::names::{self, NameBook};
use super::{AttachedPhone, Inventory, RouteKey, PROBE_DEADLINE};
use crate::adb::{AdbError, DeviceLink};
use crate::device::parse::devices::DeviceState;
use crate::device::parse::text::decode_output;

/// Deadline of reading a phone's second property (`settings get secure android_id`, a
/// binder call to the settings provider: milliseconds on a running phone). A phone that does
/// not answer in time is compared by its routes only.
pub const SECOND_PROPERTY_DEADLINE: Duration = Duration::from_secs(2);

/// Identity of an online phone: (serial, model, manufacturer, sdk).
pub(super) struct Identity {
    pub(super) serialno: String,
    pub(super) model: String,
    pub(super) manufacturer: String,
    pub(super) sdk: Option<u32>,
}

pub(super) async fn probe(link: &DeviceLink) -> Result<Identity, AdbError> {
    let out = link
        .shell(
            "getprop ro.serialno; getprop ro.product.model; getprop ro.product.manufacturer; getprop ro.build.version.sdk",
            PROBE_DEADLINE,
            64 * 1024,
        )
        .await?;
    let text = decode_output(&out.stdout);
    let mut lines = text.lines().map(|l| l.trim().to_string());
    // ro.serialno byte-exact but for the line end (a serial may begin with a space; field bug 33).
    let serialno = text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_string();
    lines.next();
    let model = lines.next().unwrap_or_default();
    let manufacturer = lines.next().unwrap_or_default();
    let sdk = lines.next().and_then(|l| l.parse().ok());
    if serialno.is_empty() {
        return Err(AdbError::Protocol(
            "phone reported an empty ro.serialno".into(),
        ));
    }
    Ok(Identity {
        serialno,
        model,
        manufacturer,
        sdk,
    })
}

/// The digest of the Android ID of the phone behind `link` ([`names::digest`]), or `None`
/// when it cannot be read within [`SECOND_PROPERTY_DEADLINE`]: no `settings` command (before
/// Android 4.2), the settings provider not up yet (`cmd: Can't find service: settings`),
/// `null`, or anything that is not one hexadecimal token.
async fn read_second(link: &DeviceLink) -> Option<String> {
    let out = link
        .shell(
            "settings get secure android_id",
            SECOND_PROPERTY_DEADLINE,
            4096,
        )
        .await
        .ok()?;
    let text = decode_output(&out.stdout);
    let id = text.trim();
    let hex = !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_hexdigit());
    (hex && out.exit_code.unwrap_or(0) == 0).then(|| names::digest(&id.to_ascii_lowercase()))
}

impl Identity {
    /// The online route `key` (`link`) to the phone `placed` names.
    pub(super) fn route(
        self,
        placed: Placed,
        key: RouteKey,
        link: DeviceLink,
        rank: usize,
        wifi_paired: bool,
    ) -> AttachedPhone {
        AttachedPhone {
            serial: placed.name,
            serialno: self.serialno,
            second: placed.second,
            model: self.model,
            manufacturer: self.manufacturer,
            sdk: self.sdk,
            state: DeviceState::Device,
            link,
            transport: key.transport,
            transport_id: key.transport_id,
            adb_server: key.server,
            rank,
            wifi_paired,
            identified: true,
        }
    }
}

/// Where an identified route goes: the name of its phone and the phone's Android ID digest
/// (when read).
pub(super) struct Placed {
    pub(super) name: String,
    pub(super) second: Option<String>,
}

/// One phone already known under the probed serial, as [`place`] compares it.
struct Known {
    name: String,
    second: Option<String>,
    /// An online route to read its second property through.
    online: Option<DeviceLink>,
    /// Its only routes are earlier enumerations of the probed transport (same server and adb
    /// serial, another id, not listed now): most likely the same phone re-plugged.
    stale_same: bool,
    /// It is on the probed transport's server under the same adb serial with another id that
    /// is listed now: two transports at once, so another phone (two tablets on USB).
    listed_twice: bool,
}

/// The phones other than the route `key` that report `serialno`.
fn known_under(
    inv: &Inventory,
    serialno: &str,
    key: &RouteKey,
    listed: &HashSet<RouteKey>,
) -> Vec<Known> {
    let mut phones: Vec<Known> = Vec::new();
    for p in inv.routes() {
        if !p.identified || p.serialno != serialno || &p.key() == key {
            continue;
        }
        let pk = p.key();
        let same_transport = pk.same_transport(key);
        let stale = same_transport && !listed.contains(&pk);
        let twice = same_transport && listed.contains(&pk);
        let online = (p.state == DeviceState::Device).then(|| p.link.clone());
        match phones.iter_mut().find(|k| k.name == p.serial) {
            Some(k) => {
                k.second = k.second.take().or(p.second.clone());
                k.online = k.online.take().or(online);
                k.stale_same &= stale;
                k.listed_twice |= twice;
            }
            None => phones.push(Known {
                name: p.serial.clone(),
                second: p.second.clone(),
                online,
                stale_same: stale,
                listed_twice: twice,
            }),
        }
    }
    phones.sort_by(|a, b| super::name_order(&a.name).cmp(&super::name_order(&b.name)));
    phones
}

/// The name of the phone reporting `serialno` that was just identified through `key` (`link`;
/// `listed`: the keys its adb server lists now, empty for a direct route):
///
/// 1. a transport identified before with this serial keeps its name;
/// 2. a serial no other phone reports, and never seen on two phones, is the name — nothing is
///    read (the common case costs nothing);
/// 3. only earlier enumerations of this transport report it: the same phone re-plugged;
/// 4. otherwise the Android IDs decide (read from this phone and from every known phone of
///    the serial not read yet): the name recorded for this ID ([`NameBook`]); the phone with
///    the same ID (one phone, a second route: USB and Wi-Fi, two boxes); a phone whose ID
///    cannot be read and that is not provably another (two transports listed at once) is
///    taken to be this one, as before; else this is another phone reporting the serial: the
///    known phones are recorded under their names and this one gets the next
///    (`SERIAL#2`, …), with a warning that the serial is not unique.
pub(super) async fn place(
    inv: &Inventory,
    serialno: &str,
    key: &RouteKey,
    link: &DeviceLink,
    listed: &HashSet<RouteKey>,
) -> Placed {
    if let Some(p) = inv
        .route(key)
        .filter(|p| p.identified && p.serialno == serialno)
    {
        return Placed {
            name: p.serial,
            second: p.second,
        };
    }
    let book: &NameBook = inv.names();
    let mut known = known_under(inv, serialno, key, listed);
    let recorded = book.knows(serialno);
    if !recorded {
        if known.is_empty() {
            return Placed {
                name: serialno.to_string(),
                second: None,
            };
        }
        if known.iter().all(|k| k.stale_same) {
            return Placed {
                name: known.swap_remove(0).name,
                second: None,
            };
        }
    }
    let mine = read_second(link).await;
    read_known(inv, &mut known).await;
    decide(book, serialno, mine, &known)
}

/// Reads the Android ID of every phone of `known` not read yet, through its online route.
async fn read_known(inv: &Inventory, known: &mut [Known]) {
    for k in known.iter_mut().filter(|k| k.second.is_none()) {
        if let Some(online) = &k.online {
            if let Some(second) = read_second(online).await {
                inv.set_second(&k.name, &second);
                k.second = Some(second);
            }
        }
    }
}

/// Step 4 of [`place`]: the name of the phone whose Android ID digest is `mine` (`None`:
/// unreadable) among the `known` phones of `serialno`.
fn decide(book: &NameBook, serialno: &str, mine: Option<String>, known: &[Known]) -> Placed {
    let recorded = book.knows(serialno);
    if let Some(name) = mine.as_deref().and_then(|m| book.lookup(serialno, m)) {
        return Placed { name, second: mine };
    }
    // An ID unread on either side: the same phone unless provably another (as before).
    let same = known.iter().find(|k| match (&mine, &k.second) {
        (Some(m), Some(s)) => m == s,
        _ => !k.listed_twice,
    });
    if let Some(k) = same {
        if let (Some(m), true) = (&mine, recorded) {
            book.record(serialno, m, &k.name);
        }
        return Placed {
            name: k.name.clone(),
            second: mine.or(k.second.clone()),
        };
    }
    for k in known {
        if let Some(s) = &k.second {
            book.record(serialno, s, &k.name);
        }
    }
    let in_use: HashSet<String> = known.iter().map(|k| k.name.clone()).collect();
    let name = book.assign(serialno, mine.as_deref(), &in_use);
    warn_not_unique(serialno, &name, known.len() + 1, mine.is_some());
    Placed { name, second: mine }
}

/// The one warning of a serial found on another phone (masked: never the whole serial).
fn warn_not_unique(serialno: &str, name: &str, phones: usize, by_id: bool) {
    let masked = crate::protocol::descriptor::mask_serial(serialno);
    let suffix = name.strip_prefix(serialno).unwrap_or("");
    let how = if by_id {
        "their Android IDs differ"
    } else {
        "its adb server lists both transports at once"
    };
    tracing::warn!(
        serial_hint = %masked,
        phones,
        name_hint = %format!("{masked}{suffix}"),
        "the serial is not unique: another phone reports it ({how}); it is listed and claimed as the serial followed by `{suffix}`, and services are opened by transport id"
    );
}
