//! xagent-adb-connector: an xAgent Connector Server (Common Protocol 3.0, Device Profile
//! `xagent.device.v1`) that lets agents observe and control Android phones over ADB.
//!
//! # Map
//! - [`server`]: axum routes — card, skill, health, metrics, `/ws`, `/files/refs/{file_ref}`
//!   ([`server::file_refs`]), uploads, Prometheus [`server::metrics`];
//!   [`server::error::HttpError`] is the one mapping of HTTP errors to responses;
//!   [`server::listen`] is the capped accept loop, with TLS from [`server::tls`];
//!   [`server::console`] is the operator's browser console (`GET /console`, HTTP Basic).
//! - [`data_plane`]: one WebSocket — [`data_plane::socket`] (frames, deadlines, close, bounded
//!   [`data_plane::outbox`]), [`data_plane::session`] (hello gate, routing),
//!   [`data_plane::request::Request`] (decoded once), one handler file per packet family,
//!   typed [`data_plane::reply`] payloads, [`data_plane::error`] (errors → packets, once).
//! - [`connector`]: the core — one [`connector::state::State`] (identity, lease, channels,
//!   routes, bindings, auth sessions, runtimes) behind one lock, channel open/close, the
//!   `adb_device_claim` flow, the lease, descriptors, tool dispatch ([`connector::invoke`]).
//! - [`protocol`]: wire types (packet envelope, payloads, card, descriptor, error codes).
//! - [`device`]: the phone inventory, the device tools, parsers of Android output.
//! - [`adb`]: the adb-server client and the direct transport, behind [`adb::DeviceLink`]; the
//!   framing under them ([`adb::wire`], [`adb::shell_v2`], [`adb::sync_proto`]) is the
//!   `xagent-adb-wire` crate (`src/adb_wire/`), shared with the simulator.
//! - [`store`]: SQLite on its own thread, every statement behind a named method;
//!   [`file_cache`]: the signed file cache.
//! - [`secret`]: the API key and claim-code hashing.
//! - [`fleet`]: many boxes sharing presence and fleet-unique, fenced bindings through etcd
//!   (`--fleet-etcd`; `docs/fleet.md`).
//! - [`config`]: configuration in stages; [`daemon`]: process assembly of `serve` and its
//!   shutdown, SIGHUP reload ([`daemon::reload`]); [`operator`]: the `check` and `devices`
//!   subcommands; [`logging`]: text or JSON log lines; [`demo`] (feature `sim`): simulated
//!   phones and the connector; [`lifecycle`]: the task tracker and cancellation tokens every
//!   task hangs off; [`service_notify`]: systemd readiness, watchdog and stopping
//!   notifications under `Type=notify`.
//!
//! The simulated phone is its own crate, `xagent-adb-sim` (`src/sim/`), which depends on the
//! framing crate and on nothing here; this crate uses it only for the `sim` and `demo`
//! subcommands, behind the default cargo feature `sim`.
//!
//! # How a `tool.invoke` flows
//! WebSocket text frame → [`data_plane::socket`] → [`data_plane::session::Session`] decodes the
//! envelope ([`protocol::Packet::decode`]), checks hello and the envelope
//! `connector_channel_id` (known, open on this socket) → [`data_plane::request::Request`]
//! decodes the payload → [`data_plane::tool`] runs as a tracked task →
//! [`connector::Connector::invoke_tool`] resolves the channel's binding to a phone in the
//! [`device::inventory::Inventory`], validates the arguments against the tool's declared JSON
//! Schema, takes the channel's side-effect lock (journaling side effects in the [`store`]) →
//! the tool's entry in [`device::tools::registry()`] deserializes its typed arguments, builds
//! argv, quotes it once, and runs it over the phone's [`adb::DeviceLink`] (adb server or direct)
//! under the tool's deadline → `tool.invoke.ack` through [`data_plane::error::answer`] into the
//! socket's outbox.

pub mod adb;
pub mod config;
pub mod connector;
pub mod daemon;
pub mod data_plane;
#[cfg(feature = "sim")]
pub mod demo;
pub mod device;
pub mod file_cache;
pub mod fleet;
pub mod lifecycle;
pub mod logging;
pub mod operator;
pub mod protocol;
pub mod secret;
pub mod server;
pub mod service_notify;
pub mod store;
