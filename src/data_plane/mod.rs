//! The data plane (spec §6–8): one WebSocket per xAgent connection carrying JSON packets.
//!
//! A frame flows [`socket`] (frames in/out, first-packet deadline, close) →
//! [`session::Session`] (envelope decode, hello gate, routing by envelope
//! `connector_channel_id`) → [`request::Request`] (payload decoded once) → one handler per
//! packet family ([`hello`], [`channel`], [`descriptor`], [`auth`], [`tool`]) returning
//! `Result<`[`reply::Reply`]`, `[`error::DataPlaneError`]`>` → [`error::answer`] (the one
//! mapping to an ack or `error` packet) → the socket's bounded [`outbox`].

pub mod auth;
pub mod channel;
pub mod descriptor;
pub mod error;
pub mod hello;
pub mod outbox;
pub mod reply;
pub mod request;
pub mod session;
pub mod socket;
pub mod tool;
