//! Device side of the connector: the inventory of attached phones, the device tools of profile
//! `xagent.device.v1`, and the parsers of Android command output they use.

pub mod error;
pub mod inventory;
pub mod parse;
pub mod policy;
pub mod shared_storage;
pub mod shell_quote;
pub mod tools;
