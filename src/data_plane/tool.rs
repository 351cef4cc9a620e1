//! `tool.invoke` (spec §8.18–8.20): runs the call ([`Connector::invoke_tool`]) with progress
//! pushes correlated by `request_id`, and answers `tool.invoke.ack`.

use serde_json::Value;

use super::error::DataPlaneError;
use super::outbox::Outbox;
use super::reply::{to_payload, Reply, ToolInvokeAck, ToolProgressPush};
use crate::connector::{Connector, Ticket};
use crate::protocol::payloads::ToolInvokePayload;
use crate::protocol::{Packet, PacketType};

/// Runs one tool call on `channel`. Errors: the tool's code and message, in the ack with
/// `tool_id` — without a payload when the tool is not in the card (`tool_not_found`): the
/// caller's string is never repeated, nor logged.
pub async fn invoke(
    connector: &Connector,
    channel: &str,
    request_id: Option<String>,
    p: &ToolInvokePayload,
    ticket: Option<Ticket>,
    outbox: &Outbox,
) -> Result<Reply, DataPlaneError> {
    let known = connector.card_tools().contains(&p.tool_id.as_str());
    let logged_id = if known { p.tool_id.as_str() } else { "?" };
    let span = tracing::info_span!("tool", channel = channel, tool = %logged_id);
    let started = std::time::Instant::now();
    let progress = |fraction: f64, message: &str| {
        let mut push = Packet::new(PacketType::ToolProgressPush)
            .with_channel(Some(channel.to_string()))
            .with_payload(to_payload(&ToolProgressPush {
                tool_id: p.tool_id.clone(),
                status: "running",
                message: message.to_string(),
                progress: fraction,
            }));
        // Correlates the push with the call (spec §8.20 only recommends the payload).
        push.request_id = request_id.clone();
        outbox.push_progress(push);
    };
    let result = tracing::Instrument::instrument(
        connector.invoke_tool(crate::connector::invoke::ToolCall {
            channel_id: channel,
            payload: p,
            ticket,
            progress: &progress,
        }),
        span,
    )
    .await;
    tracing::debug!(tool = %logged_id, ms = started.elapsed().as_millis() as u64, ok = result.is_ok(), "tool call finished");
    let outcome = match &result {
        Ok(_) => "ok",
        Err(e) => e.code.as_str(),
    };
    connector
        .dispatch_stats()
        .record_call(&p.tool_id, outcome, started.elapsed());
    match result {
        Ok(v) => Ok(Reply::ToolInvokeAck(ack(p, Some(v)))),
        Err(e) if !known => Err(DataPlaneError::failed(e.code, e.message)),
        Err(e) => Err(DataPlaneError::failed_with(
            e.code,
            e.message,
            to_payload(&ack(p, None)),
        )),
    }
}

fn ack(p: &ToolInvokePayload, result: Option<Value>) -> ToolInvokeAck {
    ToolInvokeAck {
        tool_id: p.tool_id.clone(),
        result,
    }
}
