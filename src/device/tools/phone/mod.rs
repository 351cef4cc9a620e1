//! Operations on the bound phone that several tools share. Tool files call this module (and
//! `device::parse`, `device::shell_quote`, the registry types), never each other.
//!
//! - [`capture`]: a screenshot (`screencap`, raw or PNG, processed, stored, its geometry kept).
//! - [`command`]: run a quoted command line, decode its text, split compound output, judge `am`.
//! - [`deadline`]: the call's one deadline, which every phone step is cut to.
//! - [`hints`]: what the connector learned about the phone (the way its UI dump works).
//! - [`ime`]: typing through ADBKeyboard (enable with a bounded retry, broadcasts, restore).
//! - [`input`]: run `input …` with failures mapped.
//! - [`touch`]: how a gesture reaches the phone (its touchscreen's input device through one
//!   long-lived stream, else `input`), chosen per phone; [`evdev`]: protocol-B records and the
//!   display-to-panel mapping.
//! - [`display`]: the display's input size and its per-channel cache.
//! - [`receipt`]: what an action did to the screen (frame hashes on the phone, the app in front).
//! - [`readiness`]: booting, screen off, lock screen: one reading per bound phone.
//! - [`field`]: the focused field read before and after typing, and whether it holds the text.
//! - [`lock_task`]: kiosk / screen pinning: `am start` refusals told by kind.
//! - [`ui`]: `uiautomator dump` with retries, snapshots, the focused node.
//! - [`ui_dump`]: one `uiautomator dump` the way the phone takes it (`/dev/tty`, or a private
//!   file read and removed).
//! - [`tree`]: the UI tree as the agent reads it (elements, opaque regions, keys).
//! - [`observation`]: stable element keys, a channel's observations, their differences.
//! - [`opaque`]: the large regions of a dump the tree does not see into (web views, surfaces).
//! - [`target`]: where a gesture lands (coordinates, screenshot space, element, selector).
//! - [`selector`]: the `text`/`resource_id`/`content_desc` selector; empty fields select nothing.
//! - [`packages`]: package names, `pm path`, launcher categories.
//! - [`app_state`]: an installed app that cannot start because it (or its launcher) is disabled.
//! - [`file_refs`]: uploads in and pulled files out of the connector's file cache.
//! - [`last_seen`]: what the agent last saw on the channel (UI snapshot, screenshot geometry).
//! - [`sync_refusal`]: what a sync `FAIL` (push/pull refused by adbd) means.
//! - [`media_index`]: asking the media store to index a pushed file.
//! - [`apk_bundle`]: one APK or a `.apks`/`.xapk` bundle of them; [`install_session`]: installing
//!   them (`pm install`, or one `install-create`/`-write`/`-commit` session), temp files removed;
//!   [`app_fit`]: why this phone cannot run an app it refused (API level, CPU ABIs).

pub mod apk_bundle;
pub mod app_fit;
pub mod app_state;
pub mod capture;
pub mod command;
pub mod deadline;
pub mod display;
pub mod display_list;
pub mod dumper_crash;
pub mod evdev;
pub mod field;
pub mod file_refs;
pub mod hints;
pub mod ime;
pub mod input;
pub mod install_session;
pub mod keyboard;
pub mod last_seen;
pub mod lock_task;
pub mod media_index;
pub mod observation;
pub mod opaque;
pub mod packages;
pub mod readiness;
pub mod receipt;
pub mod selector;
pub mod storage_mount;
pub mod sync_refusal;
pub mod target;
pub mod touch;
pub mod tree;
pub mod ui;
pub mod ui_dump;
