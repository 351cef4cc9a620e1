//! Device tools of profile `xagent.device.v1`, and the parsers of Android command output they use.

pub mod parse;
