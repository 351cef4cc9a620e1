//! What the console's pages show, read from the running connector: the phones as the operator
//! commands list them ([`crate::operator::PhoneRow`], with `check`'s fix), their bound channel
//! and since when, their last tool call; the adb servers and whether they answer; the recent
//! failed calls; the call totals. Built once per request, then rendered by [`super::page`].

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::connector::call_log::{CallRecord, CallTotals};
use crate::connector::Connector;
use crate::operator::PhoneRow;
use crate::protocol::now_ms;

/// One phone's row.
#[derive(Debug, Clone)]
pub struct PhoneView {
    /// The phone's name (what a claim takes).
    pub serial: String,
    /// `ro.product.model`, `-` when unknown.
    pub model: String,
    /// adb's state word (`device`, `unauthorized`, …).
    pub state: String,
    /// Whether the phone is usable (`device`).
    pub online: bool,
    /// The fix for a phone that is not usable, as `check` gives it.
    pub fix: Option<String>,
    /// Set when other phones report the same serial.
    pub warning: Option<String>,
    /// adb serial or `tcp:HOST:PORT`.
    pub transport: String,
    /// The adb server's label, `direct` for the direct transport.
    pub adb_server: String,
    /// The channel the phone is bound to.
    pub channel: Option<String>,
    /// Since when it is bound (UTC, and how long ago).
    pub bound_since: Option<String>,
    /// Paired over Wi-Fi by the connector.
    pub paired: bool,
    /// Its last tool call since start.
    pub last_call: Option<CallView>,
}

/// One tool call.
#[derive(Debug, Clone)]
pub struct CallView {
    /// Tool id.
    pub tool_id: String,
    /// `ok` or the error code.
    pub outcome: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// The error message, empty on success.
    pub message: String,
    /// The phone it ran on.
    pub serial: String,
    /// When it finished (UTC, and how long ago).
    pub when: String,
    /// How long it took, ms.
    pub elapsed_ms: u64,
}

/// One adb server.
#[derive(Debug, Clone)]
pub struct ServerView {
    /// Its label (`NAME` or `host:port`).
    pub name: String,
    /// Whether it answers now (the connector's tracker is connected to it).
    pub reachable: bool,
    /// Phones it carries now.
    pub phones: usize,
}

/// Everything the main page shows.
#[derive(Debug, Clone)]
pub struct Farm {
    /// Every phone, sorted by name then adb server.
    pub phones: Vec<PhoneView>,
    /// The configured adb servers, in config order.
    pub servers: Vec<ServerView>,
    /// The recent failed calls, newest first.
    pub errors: Vec<CallView>,
    /// Calls, failures and latency since start.
    pub totals: CallTotals,
    /// Usable phones.
    pub online: usize,
    /// Channels known to the connector.
    pub channels: usize,
    /// When the page was made (UTC).
    pub generated: String,
}

/// `ms` (Unix ms) as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn at(ms: i64) -> String {
    let at = UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_seconds(at).to_string()
}

/// `ms` (Unix ms, in the past) as `YYYY-MM-DDTHH:MM:SSZ (N ago)`.
pub fn when(ms: i64) -> String {
    let ago = Duration::from_secs(u64::try_from(now_ms().saturating_sub(ms) / 1000).unwrap_or(0));
    let ago = if ago.is_zero() {
        "just now".to_string()
    } else {
        format!("{} ago", humantime::format_duration(ago))
    };
    format!("{} ({ago})", at(ms))
}

fn call_view(c: CallRecord) -> CallView {
    CallView {
        tool_id: c.tool_id.to_string(),
        ok: c.outcome == "ok",
        outcome: c.outcome,
        message: c.message,
        serial: c.serial,
        when: when(c.finished_ms),
        elapsed_ms: c.elapsed_ms,
    }
}

/// Reads the farm from `connector`; `adb_servers` are the configured servers' labels.
pub fn farm(connector: &Connector, adb_servers: &[String]) -> Farm {
    let mut rows: Vec<PhoneRow> = connector
        .inventory()
        .list()
        .iter()
        .map(PhoneRow::of_attached)
        .collect();
    rows.sort_by(|a, b| (&a.serial, &a.adb_server).cmp(&(&b.serial, &b.adb_server)));
    crate::operator::warn_shared(&mut rows);
    let bindings = connector.inspect(|s| s.bindings_by_serial());
    let log = connector.call_log();
    let phones: Vec<PhoneView> = rows
        .into_iter()
        .map(|r| {
            let binding = bindings.get(&r.serial);
            PhoneView {
                model: if r.model.is_empty() {
                    "-".into()
                } else {
                    r.model.clone()
                },
                state: r.state.as_str().to_string(),
                online: r.fix().is_none(),
                fix: r.fix(),
                warning: r.warning.clone(),
                transport: r.transport.clone(),
                adb_server: r.adb_server.clone().unwrap_or_else(|| "direct".into()),
                channel: binding.map(|b| b.channel_id.clone()),
                bound_since: binding.map(|b| when(b.bound_ms)),
                paired: r.paired,
                last_call: log.last(&r.serial).map(call_view),
                serial: r.serial,
            }
        })
        .collect();
    let down = connector.inventory().servers_down();
    let servers = adb_servers
        .iter()
        .map(|name| ServerView {
            name: name.clone(),
            reachable: !down.contains(name),
            phones: phones.iter().filter(|p| &p.adb_server == name).count(),
        })
        .collect();
    Farm {
        online: phones.iter().filter(|p| p.online).count(),
        channels: connector.inspect(|s| s.channel_count()),
        errors: log.recent_errors().into_iter().map(call_view).collect(),
        totals: log.totals(),
        generated: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
        servers,
        phones,
    }
}

/// One phone of another (or this) box, as the fleet store holds it.
#[derive(Debug, Clone)]
pub struct FleetPhoneView {
    /// The serial, masked ([`crate::protocol::descriptor::mask_serial`]): the console shows
    /// the fleet, not other boxes' identifiers.
    pub serial: String,
    /// Model, `-` when unknown.
    pub model: String,
    /// adb's state word.
    pub state: String,
    /// Whether it is usable (`device`).
    pub online: bool,
    /// The box holding its fleet binding, `None` when free.
    pub bound_on: Option<String>,
}

/// One box of the fleet.
#[derive(Debug, Clone)]
pub struct FleetBoxView {
    /// Its `--box` name.
    pub name: String,
    /// Its connector URL, `-` when unknown.
    pub base_url: String,
    /// Its connector's version, `-` when unknown.
    pub version: String,
    /// Whether its lease is live.
    pub alive: bool,
    /// Whether it is the box serving this page.
    pub this_box: bool,
    /// Its phones.
    pub phones: Vec<FleetPhoneView>,
}

/// The fleet section of the main page (only with `--fleet-etcd`).
#[derive(Debug, Clone)]
pub struct FleetView {
    /// This box's name.
    pub this_box: String,
    /// Why the view is missing or this box is out of the fleet (etcd not reachable, the box
    /// name held by another connector); `None` when all is well.
    pub problem: Option<String>,
    /// Every box registered (empty when etcd did not answer).
    pub boxes: Vec<FleetBoxView>,
}

/// Reads the fleet section from the store (one range read, its deadline
/// [`crate::fleet::etcd::REQUEST_DEADLINE`]).
pub async fn fleet(fleet: &crate::fleet::Fleet) -> FleetView {
    use crate::protocol::descriptor::mask_serial;
    let this_box = fleet.box_name().to_string();
    let (boxes, mut problem) = match crate::fleet::view::read_boxes(fleet.client()).await {
        Ok(boxes) => (boxes, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    if let Some(why) = fleet.name_taken() {
        problem = Some(format!("fleet_box_name_taken: {why}"));
    }
    let dash = |s: Option<String>| s.unwrap_or_else(|| "-".into());
    let boxes = boxes
        .into_iter()
        .map(|b| FleetBoxView {
            this_box: b.name == this_box && b.alive && problem.is_none(),
            base_url: dash(b.base_url),
            version: dash(b.version),
            alive: b.alive,
            phones: b
                .phones
                .into_iter()
                .map(|p| FleetPhoneView {
                    serial: mask_serial(&p.serial),
                    model: dash(p.model),
                    online: p.state == "device",
                    state: p.state,
                    bound_on: p.bound_on,
                })
                .collect(),
            name: b.name,
        })
        .collect();
    FleetView {
        this_box,
        problem,
        boxes,
    }
}
