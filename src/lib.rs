//! xagent-adb-connector: an xAgent Connector Server (Common Protocol 3.0, Device Profile
//! `xagent.device.v1`) that lets agents observe and control Android phones over ADB.
//!
//! # Map
//! - [`server`]: axum routes — card, skill, health, metrics, `/ws`, `/files/refs/{file_ref}`
//!   ([`server::file_refs`]), uploads; [`server::error::HttpError`] is the one mapping of HTTP
//!   errors to responses; [`server::listen`] is the capped accept loop.
//! - [`data_plane`]: one WebSocket — [`data_plane::socket`] (frames, deadlines, close, bounded
//!   [`data_plane::outbox`]), [`data_plane::session`] (hello gate, routing),
//!   [`data_plane::request::Request`] (decoded once), one handler file per packet family,
//!   typed [`data_plane::reply`] payloads, [`data_plane::error`] (errors → packets, once).
//! - [`connector`]: the core — one [`connector::state::State`] (identity, lease, channels,
//!   routes, bindings, auth sessions, runtimes) behind one lock, channel open/close, the
//!   `adb_device_claim` flow, the lease, descriptors, tool dispatch ([`connector::invoke`]).
//! - [`protocol`]: wire types (packet envelope, payloads, card, descriptor, error codes).
//! - [`device`]: the phone inventory, the device tools, parsers of Android output.
//! - [`adb`]: ADB wire framing (shared with the simulator), the adb-server client and the direct
//!   transport, behind [`adb::DeviceLink`].
//! - [`store`]: SQLite on its own thread, every statement behind a named method;
//!   [`file_cache`]: the signed file cache.
//! - [`sim`]: the simulated phone (device side of the ADB transport).
//! - [`config`]: configuration; [`daemon`]: process assembly (`serve`, `demo`) and shutdown;
//!   [`lifecycle`]: the task tracker and cancellation tokens every task hangs off.
//!
//! # How a `tool.invoke` flows
//! WebSocket text frame → [`data_plane::socket`] → [`data_plane::session::Session`] decodes the
//! envelope ([`protocol::Packet::decode`]), checks hello and the envelope
//! `connector_channel_id` (known, open on this socket) → [`data_plane::request::Request`]
//! decodes the payload → [`data_plane::tool`] runs as a tracked task →
//! [`connector::Connector::invoke_tool`] resolves the channel's binding to a phone in the
//! [`device::inventory::Inventory`], validates the arguments against the tool's declared JSON
//! Schema, takes the channel's side-effect lock (journaling side effects in the [`store`]) →
//! [`device::tools::invoke`] builds argv, quotes it once, and runs it over the phone's
//! [`adb::DeviceLink`] (adb server or direct) under the tool's deadline → `tool.invoke.ack`
//! through [`data_plane::error::answer`] into the socket's outbox.

pub mod adb;
pub mod config;
pub mod connector;
pub mod daemon;
pub mod data_plane;
pub mod device;
pub mod file_cache;
pub mod lifecycle;
pub mod protocol;
pub mod server;
pub mod sim;
pub mod store;

/// Old name of [`file_cache`], kept until `src/device/` (rewritten in parallel) imports the new
/// one; remove on merge.
#[doc(hidden)]
pub use file_cache as files;
