//! ADB: the wire framing shared by host and simulated device, and the host-side clients.
//!
//! - [`wire`], [`shell_v2`], [`sync_proto`]: framing only (shared with [`crate::sim`]).
//! - [`server_client`]: async client of an adb server (`host:*` services, transports by serial).
//! - [`direct`]: host side of the adbd transport over TCP, no adb binary needed.
//! - [`link`]: [`DeviceLink`], one phone reached either way, with shell / exec / sync on top.
//! - [`error`]: [`AdbError`], typed failures with deadlines.

pub mod direct;
pub mod error;
pub mod link;
pub mod server_client;
pub mod shell_v2;
pub mod stream;
pub mod sync_proto;
pub mod wire;

pub use error::AdbError;
pub use link::{DeviceLink, ShellOutput};
pub use server_client::AdbServerClient;
