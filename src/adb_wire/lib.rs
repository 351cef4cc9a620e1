//! ADB framing shared by the host side (the connector's clients) and the device side (the
//! simulated phone). Framing only: no sockets, no services, no host clients, no parsers of
//! Android output. Both sides depend on this crate and on nothing of each other, so the
//! workspace keeps them apart at compile time.
//!
//! - [`wire`]: transport messages (`CNXN`, `AUTH`, `OPEN`, `OKAY`, `WRTE`, `CLSE`, `STLS`).
//! - [`shell_v2`]: shell protocol v2 packets (stdin/stdout/stderr/exit inside `WRTE`).
//! - [`sync_proto`]: the `sync:` service's requests and replies.

pub mod shell_v2;
pub mod sync_proto;
pub mod wire;
