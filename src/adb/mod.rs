//! ADB: the wire framing shared by host and simulated device, and the host-side clients.
//!
//! - [`wire`], [`shell_v2`], [`sync_proto`]: framing only (shared with [`crate::sim`]).

pub mod shell_v2;
pub mod sync_proto;
pub mod wire;
