//! The console's pages: askama templates (`templates/console/`), each a struct of what it
//! shows. Every value is HTML-escaped by the template engine.

use askama::Template;

use super::view::{Farm, FleetView};

/// `GET /console`.
#[derive(Template)]
#[template(path = "console/index.html")]
pub struct FarmPage {
    /// What the farm shows now.
    pub farm: Farm,
    /// The fleet's boxes and phones, with `--fleet-etcd` only.
    pub fleet: Option<FleetView>,
    /// Show each usable phone's screen inline.
    pub screens: bool,
    /// Self-refresh period, seconds (0: none).
    pub refresh_secs: u32,
    /// The connector's version and build, for the header.
    pub build: String,
}

/// The console's pairing attempt, as the page shows it.
#[derive(Debug, Clone)]
pub struct PairAttempt {
    /// `pending`, `scanned`, `paired`, `expired`, `failed`, `canceled`.
    pub status: &'static str,
    /// What happened or what to do (never the password).
    pub message: String,
    /// Whether the QR image is shown (a phone may scan it).
    pub qr: bool,
    /// When the code expires (UTC).
    pub expires: String,
    /// Whether the attempt still runs (the page refreshes).
    pub running: bool,
}

/// `GET /console/pair`.
#[derive(Template)]
#[template(path = "console/pair.html")]
pub struct PairPage {
    /// The attempt, if one could be started.
    pub attempt: Option<PairAttempt>,
    /// Why none could be (no adb key).
    pub unavailable: String,
    /// Self-refresh period, seconds (0: none).
    pub refresh_secs: u32,
    /// The connector's version and build, for the header.
    pub build: String,
}

/// `xagent-adb-connector VERSION (rev GIT_REV, built BUILD_TIME)`.
pub fn build_line() -> String {
    let b = &crate::protocol::BUILD;
    format!(
        "xagent-adb-connector {} (rev {}, built {})",
        b.version, b.git_rev, b.build_time
    )
}
