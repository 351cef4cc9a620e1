//! Shared helpers of the integration tests: the real binary as a process (connector, simulated
//! phone), an xAgent-like WebSocket client, HTTP, and the official JSON Schemas.
#![allow(dead_code)]

pub mod adb_server;
pub mod etcd;
pub mod netns;
pub mod procs;
pub mod scenario;
pub mod schemas;
pub mod usb_listing;
pub mod wireless;
pub mod xagent;

/// Reads the API key the test wrote.
pub const API_KEY: &str = "test-api-key-0123456789abcdef";
