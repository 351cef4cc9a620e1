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
//! - [`call_deadline`]: one deadline shared by all the steps of a call, with a clean-up reserve.
//! - [`sync_refusal`]: what a sync `FAIL` (push/pull refused by adbd) means.
//! - [`media_index`]: asking the media store to index a pushed file.
//! - [`apk_bundle`]: one APK or a `.apks`/`.xapk` bundle of them; [`install_session`]: installing
//!   them (`pm install`, or one `install-create`/`-write`/`-commit` session), temp files removed.

pub mod apk_bundle;
pub mod call_deadline;
pub mod command;
pub mod display;
pub mod file_refs;
pub mod input;
pub mod install_session;
pub mod last_seen;
pub mod media_index;
pub mod packages;
pub mod readiness;
pub mod selector;
pub mod sync_refusal;
pub mod target;
pub mod ui;
