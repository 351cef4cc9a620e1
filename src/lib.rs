//! xagent-adb-connector: an xAgent Connector Server (Common Protocol 3.0, Device Profile
//! `xagent.device.v1`) that lets agents observe and control Android phones over ADB.
//!
//! # Map
//! - [`server`]: axum routes — card, skill, health, `/ws`, `/files/refs/{file_ref}`.
//! - [`connector`]: identity, channels, the `adb_device_claim` flow, descriptors, tool dispatch;
//!   [`connector::session`] runs one WebSocket.
//! - [`protocol`]: wire types (packet envelope, card, descriptor, error codes).
//! - [`device`]: the phone inventory, the device tools, parsers of Android output.
//! - [`adb`]: the adb-server client and the direct transport, behind [`adb::DeviceLink`]; the
//!   framing under them ([`adb::wire`], [`adb::shell_v2`], [`adb::sync_proto`]) is the
//!   `xagent-adb-wire` crate (`src/adb_wire/`), shared with the simulator.
//! - [`store`]: SQLite on its own thread; [`files`]: the signed file cache.
//! - [`config`], [`app`]: configuration and process assembly.
//!
//! The simulated phone is its own crate, `xagent-adb-sim` (`src/sim/`), which depends on the
//! framing crate and on nothing here; this crate uses it only for the `sim` and `demo`
//! subcommands, behind the default cargo feature `sim`.
//!
//! # How a `tool.invoke` flows
//! WebSocket text frame → [`protocol::Packet::decode`] → [`connector::session`] checks hello,
//! envelope `connector_channel_id` (known, open on this socket) → [`connector::Connector::invoke_tool`]
//! resolves the channel's binding to a phone in the [`device::inventory::Inventory`], validates
//! the arguments against the tool's declared JSON Schema, takes the channel's side-effect lock →
//! the tool's entry in [`device::tools::registry()`] deserializes its typed arguments, builds
//! argv, quotes it once, and runs it over the phone's [`adb::DeviceLink`] (adb server or direct)
//! under the tool's deadline → `tool.invoke.ack`.

pub mod adb;
// `demo` and its imports exist only with the `sim` feature (it starts simulated phones).
#[cfg_attr(not(feature = "sim"), allow(unused_imports))]
pub mod app;
pub mod config;
pub mod connector;
pub mod device;
pub mod files;
pub mod protocol;
pub mod secret;
pub mod server;
pub mod store;
