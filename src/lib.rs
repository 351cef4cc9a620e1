//! xagent-adb-connector: an xAgent Connector Server (Common Protocol 3.0, Device Profile
//! `xagent.device.v1`) that lets agents observe and control Android phones over ADB.

pub mod adb;
pub mod device;
pub mod sim;
