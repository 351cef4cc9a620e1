//! `connection.descriptor.get` (spec §8.15–8.16) and `connection.descriptor.push` (§8.17) when
//! a bound phone's status changes.

use std::collections::HashMap;

use super::reply::{descriptor_push, DescriptorPayload, Reply};
use crate::connector::{Connector, SessionId};
use crate::protocol::descriptor::ConnectionStatus;
use crate::protocol::Packet;

/// The channel's descriptor; its status becomes the baseline for pushes.
pub fn get(
    connector: &Connector,
    channel: &str,
    last_status: &mut HashMap<String, ConnectionStatus>,
) -> Reply {
    let d = connector.descriptor(channel);
    last_status.insert(channel.to_string(), d.connection.status);
    Reply::DescriptorGetAck(DescriptorPayload {
        connection_descriptor: d,
    })
}

/// A push for every channel open on `session` whose status changed since last told.
pub fn changes(
    connector: &Connector,
    session: SessionId,
    last_status: &mut HashMap<String, ConnectionStatus>,
) -> Vec<Packet> {
    let mut pushes = Vec::new();
    for channel in connector.channels_of(session) {
        let d = connector.descriptor(&channel);
        let status = d.connection.status;
        if last_status.get(&channel) == Some(&status) {
            continue;
        }
        last_status.insert(channel.clone(), status);
        pushes.push(descriptor_push(&channel, d));
    }
    pushes
}
