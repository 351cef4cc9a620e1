//! `channel.open` and `channel.close` (spec §8.3–8.6).

use std::collections::HashMap;

use super::error::DataPlaneError;
use super::reply::{ChannelOpenAck, Reply};
use crate::connector::channels::OpenChannelError;
use crate::connector::{Connector, SessionId};
use crate::protocol::descriptor::ConnectionStatus;
use crate::protocol::ErrorCode;

/// Opens (or restores) a channel on `session`; its status becomes the session's baseline for
/// descriptor pushes. Errors in the ack: `too_many_channels` when the connector keeps
/// [`crate::connector::MAX_CHANNELS`] channels and none is idle; `internal_error` when the
/// channel cannot be persisted.
pub async fn open(
    connector: &Connector,
    session: SessionId,
    requested: Option<String>,
    last_status: &mut HashMap<String, ConnectionStatus>,
) -> Result<Reply, DataPlaneError> {
    let opened = connector
        .open_channel(requested.as_deref(), session)
        .await
        .map_err(|e| match e {
            OpenChannelError::Full { .. } => {
                DataPlaneError::failed(ErrorCode::TooManyChannels, e.to_string())
            }
            OpenChannelError::Store(e) => DataPlaneError::failed(
                ErrorCode::InternalError,
                format!("could not persist the channel: {e}"),
            ),
        })?;
    let d = connector.descriptor(&opened.channel_id);
    last_status.insert(opened.channel_id.clone(), d.connection.status);
    Ok(Reply::ChannelOpenAck(ChannelOpenAck {
        connector_channel_id: opened.channel_id,
        connection_descriptor: d,
        restored: opened.restored,
    }))
}

/// Stops routing `channel` on `session` (the binding is kept, §8.5).
pub fn close(
    connector: &Connector,
    session: SessionId,
    channel: &str,
    last_status: &mut HashMap<String, ConnectionStatus>,
) -> Reply {
    connector.close_channel(channel, session);
    last_status.remove(channel);
    Reply::ChannelCloseAck
}
