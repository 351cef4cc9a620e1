//! Operations on the bound phone that several tools share. Tool files call this module (and
//! `device::parse`, `device::shell_quote`, the registry types), never each other.
//!
//! - [`command`]: run a quoted command line, decode its text, split compound output, judge `am`.
//! - [`input`]: run `input …` with failures mapped.
//! - [`display`]: the display's input size and its per-channel cache.
//! - [`readiness`]: booting, screen off, lock screen: one reading per bound phone.
//! - [`ui`]: `uiautomator dump` with retries, snapshots, the focused node.
//! - [`target`]: where a gesture lands (coordinates, screenshot space, element, selector).
//! - [`selector`]: the `text`/`resource_id`/`content_desc` selector; empty fields select nothing.
//! - [`packages`]: package names, `pm path`, launcher categories.
//! - [`file_refs`]: uploads in and pulled files out of the connector's file cache.
//! - [`last_seen`]: what the agent last saw on the channel (UI snapshot, screenshot geometry).

pub mod command;
pub mod display;
pub mod file_refs;
pub mod input;
pub mod last_seen;
pub mod packages;
pub mod readiness;
pub mod selector;
pub mod target;
pub mod ui;
