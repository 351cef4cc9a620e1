//! `tool.invoke` (spec §8.18–8.19, Device Profile §4–5): resolve the bound phone, validate the
//! arguments against the tool's declared `input_schema` (with the `jsonschema` crate), serialise
//! side-effecting tools per channel, run the tool.

use serde_json::{json, Value};
use tokio::sync::watch;

use std::future::Future;

use super::{lock, CallKey, Connector, InFlightCall, Ticket};
use crate::adb::AdbError;
use crate::device::error::{state_refusal, unauthorized_lead};
use crate::device::parse::devices::{DeviceState, RouteKind};
use crate::device::tools::{
    integral_floats_as_integers, registry, CallDeadline, SideEffect, ToolCtx, ToolError,
};
use crate::protocol::payloads::ToolInvokePayload;
use crate::protocol::{now_ms, ErrorCode};
use crate::store::JournalEntry;

/// One `tool.invoke` as the data plane hands it to [`Connector::invoke_tool`].
pub struct ToolCall<'a> {
    /// The calling channel (already checked open on the calling session).
    pub channel_id: &'a str,
    /// The packet's payload.
    pub payload: &'a ToolInvokePayload,
    /// The call's place in the channel's arrival order, when taken as the packet was read.
    pub ticket: Option<Ticket>,
    /// Reports progress (fraction 0–1, message) as `tool.progress.push`.
    pub progress: &'a (dyn Fn(f64, &str) + Send + Sync),
}

impl Connector {
    /// The place in `channel_id`'s arrival order of a call of `tool_id`, for a side-effecting
    /// tool of the card (`None` for any other: observations run concurrently). Taken where the
    /// packets are read, in their order, so back-to-back calls run as they were sent.
    pub fn side_effect_ticket(&self, channel_id: &str, tool_id: &str) -> Option<Ticket> {
        registry()
            .get(tool_id)
            .filter(|t| self.card_tools.contains(&t.id()))
            .filter(|t| t.side_effect() != SideEffect::None)
            .map(|_| self.runtime(channel_id).arrival.ticket())
    }

    /// Runs one tool call for `channel_id` (already checked open on the calling session). A
    /// call that ends in `device_timeout` has the phones' liveness checked at once (a frozen
    /// phone behind an adb server goes `offline` and later calls fail fast); a call whose
    /// readings found the lock screen newly up or gone has the descriptors pushed again.
    ///
    /// The call's `ticket` is its place in the channel's arrival order
    /// ([`Self::side_effect_ticket`], taken when the packet was read); a side-effecting call
    /// without one takes it here.
    pub async fn invoke_tool(&self, call: ToolCall<'_>) -> Result<Value, ToolError> {
        let readiness = self.runtime(call.channel_id);
        let was_locked = readiness.readiness.locked_reason().is_some();
        let (channel_id, payload) = (call.channel_id, call.payload);
        let started = std::time::Instant::now();
        let outcome = self.invoke_bound(call).await;
        if let Some(binding) = self.binding(channel_id) {
            self.call_log.record(
                &binding.serial,
                channel_id,
                &payload.tool_id,
                outcome
                    .as_ref()
                    .map(|_| ())
                    .map_err(|e| (e.code.as_str(), e.message.as_str())),
                started.elapsed(),
            );
        }
        if readiness.readiness.locked_reason().is_some() != was_locked {
            // The descriptor's tool availability follows the lock screen: sessions re-project.
            self.inventory.announce();
        }
        if outcome
            .as_ref()
            .is_err_and(|e| e.code == ErrorCode::DeviceTimeout)
        {
            self.inventory.suspect();
        }
        outcome
    }

    /// [`Self::invoke_tool`] without the liveness hook.
    async fn invoke_bound(&self, call: ToolCall<'_>) -> Result<Value, ToolError> {
        let ToolCall {
            channel_id,
            payload,
            ticket,
            progress,
        } = call;
        let tool = registry()
            .get(&payload.tool_id)
            .filter(|t| self.card_tools.contains(&t.id()))
            .ok_or_else(|| {
                ToolError::new(
                    ErrorCode::ToolNotFound,
                    "tool_id is not in this connector's card",
                )
            })?;
        let binding = self.binding(channel_id).ok_or_else(|| {
            ToolError::new(
                ErrorCode::ConnectionNotAuthenticated,
                "no phone is bound to this channel; complete adb_device_claim first",
            )
        })?;
        // A binding the fleet knows lost (issue 22): the phone is another box's now, or its key
        // is gone, so nothing of it — not even a screenshot — goes to this channel. Read from
        // the fleet's own state (fence, reconcile, presence rounds): no etcd read per call.
        if let Some(message) = self.fleet.as_ref().and_then(|f| f.lost(&binding.serial)) {
            return Err(ToolError::new(ErrorCode::FleetBindingLost, message));
        }
        let phone = self.inventory.get(&binding.serial).ok_or_else(|| {
            ToolError::new(ErrorCode::DeviceOffline, "the bound phone is not attached")
        })?;
        if let Some((code, message)) = state_refusal(&phone.state, phone.route_kind()) {
            // What the tools learned while the phone answered explains a missing prompt.
            let facts = self.runtime(channel_id).readiness.facts();
            let lead = (code == ErrorCode::DeviceUnauthorized)
                .then(|| unauthorized_lead(phone.route_kind(), facts.tv, facts.lock_task))
                .flatten();
            let message = match lead {
                Some(lead) => format!("{lead}. {message}"),
                None => message,
            };
            return Err(ToolError::new(code, message));
        }
        // The model's copy of connector_channel_id is ignored: routing uses the envelope (§10).
        let mut args = match &payload.arguments {
            Value::Object(m) => Value::Object(m.clone()),
            Value::Null => Value::Object(Default::default()),
            _ => {
                return Err(ToolError::new(
                    ErrorCode::InvalidArguments,
                    "arguments must be a JSON object",
                ))
            }
        };
        args["connector_channel_id"] = Value::String(channel_id.to_string());
        if let Some(whole) = integral_floats_as_integers(&args) {
            args = whole;
        }
        tool.validate(&args)?;
        let runtime = self.runtime(channel_id);
        if !lock(&runtime.rate).take() {
            return Err(ToolError::new(
                ErrorCode::RateLimited,
                format!(
                    "more than {} tool calls per second on this channel; slow down",
                    super::RATE_PER_SEC
                ),
            ));
        }
        let policy = self.policy_of(&phone)?;
        let hints = self.phone_hints(&binding.serial);
        let ctx = ToolCtx {
            policy: &policy,
            link: &phone.link,
            route: phone.route_kind(),
            files: &self.files,
            channel_id,
            display: &runtime.display,
            readiness: &runtime.readiness,
            last_seen: &runtime.last_seen,
            hints: &hints,
            progress,
            deadline: CallDeadline::not_started(),
        };
        let route = ctx.route;
        if tool.side_effect() == SideEffect::None {
            return tool
                .run_json(&args, &ctx)
                .await
                .map_err(|e| with_route_fix(e, route));
        }
        // Held to the end of the call: the next side-effecting call of the channel waits for it.
        let ticket = ticket.unwrap_or_else(|| runtime.arrival.ticket());
        ticket.turn().await;
        // The call's one deadline begins with its turn: the fence and the release's reads
        // below are taken out of the tool's budget (`CallDeadline::begun_now`).
        let ctx = ctx.with_deadline(CallDeadline::begun_now());
        // The fence (issue 22): the binding's fleet key must still be this box's, checked
        // after the wait for the channel's turn, right before the side effect.
        if let Some(fleet) = &self.fleet {
            fleet
                .fence(&binding.serial)
                .await
                .map_err(|message| ToolError::new(ErrorCode::FleetBindingLost, message))?;
        }
        // The release hook: settings read before the call changes them, and what it changed
        // recorded after (`connector::release`), so the phone can be handed back clean.
        let before = self
            .releases
            .read_before(&binding.serial, tool.id(), &args, &phone.link)
            .await;
        let result = match payload
            .context
            .as_ref()
            .and_then(|c| c.tool_call_id.as_deref())
        {
            Some(call_id) if !call_id.is_empty() => {
                let key = (channel_id.to_string(), call_id.to_string());
                // Not polled unless the journal says this is a new call.
                let run = tool.run_json(&args, &ctx);
                self.run_journaled(key, tool.id(), &args, run)
                    .await
                    .map_err(|e| with_route_fix(e, route))
            }
            // No tool_call_id: treated as a new call every time.
            _ => tool
                .run_json(&args, &ctx)
                .await
                .map_err(|e| with_route_fix(e, route)),
        };
        let output = result.as_ref().ok();
        self.releases
            .record(
                &binding.serial,
                channel_id,
                tool.id(),
                &args,
                output,
                &before,
            )
            .await;
        result
    }

    /// Runs a side-effecting call at most once per (channel, tool_call_id): a repeat of a finished
    /// call returns the recorded outcome, a repeat while it runs waits for it, a repeat of a call
    /// interrupted by a restart is refused with `tool_call_interrupted`, and a repeat with other
    /// arguments (`args`, compared as JSON values) is refused with `invalid_arguments`.
    async fn run_journaled(
        &self,
        key: CallKey,
        tool_id: &'static str,
        args: &Value,
        run: impl Future<Output = Result<Value, ToolError>>,
    ) -> Result<Value, ToolError> {
        let waiter = {
            let mut inflight = lock(&self.inflight);
            match inflight.get(&key) {
                Some(call) if call.args != *args => return Err(other_arguments()),
                Some(call) => Some(call.outcome.subscribe()),
                None => {
                    let call = InFlightCall {
                        args: args.clone(),
                        outcome: watch::channel(None).0,
                    };
                    inflight.insert(key.clone(), call);
                    None
                }
            }
        };
        if let Some(mut rx) = waiter {
            let outcome = rx
                .wait_for(Option::is_some)
                .await
                .ok()
                .and_then(|o| o.clone());
            return match outcome {
                Some(json) => outcome_from_json(&json),
                None => Err(ToolError::new(
                    ErrorCode::InternalError,
                    "the first attempt vanished",
                )),
            };
        }
        let result = self.begin_and_run(&key, tool_id, args, run).await;
        if let Some(call) = lock(&self.inflight).remove(&key) {
            call.outcome.send_replace(Some(outcome_to_json(&result)));
        }
        result
    }

    /// Begins the journal entry of `key`; runs `run` only for a new call and records its
    /// outcome.
    async fn begin_and_run(
        &self,
        (channel_id, call_id): &CallKey,
        tool_id: &'static str,
        args: &Value,
        run: impl Future<Output = Result<Value, ToolError>>,
    ) -> Result<Value, ToolError> {
        let storage = |e: crate::store::StoreError| {
            ToolError::new(
                ErrorCode::InternalError,
                format!("tool journal unavailable: {e}"),
            )
        };
        let entry = self
            .store
            .journal_begin(
                channel_id.clone(),
                call_id.clone(),
                tool_id.into(),
                args.to_string(),
                now_ms(),
            )
            .await
            .map_err(storage)?;
        match entry {
            JournalEntry::New => {
                let result = run.await;
                self.store
                    .journal_finish(channel_id.clone(), call_id.clone(), outcome_to_json(&result))
                    .map_err(storage)?;
                result
            }
            JournalEntry::Done(json) => outcome_from_json(&json),
            JournalEntry::Running => Err(ToolError::new(
                ErrorCode::ToolCallInterrupted,
                "an earlier attempt of this tool_call_id was interrupted by a connector restart; its effect on the phone is unknown, so it is not run again — observe the phone, then call with a new tool_call_id",
            )),
            JournalEntry::OtherTool(_) => Err(ToolError::new(
                ErrorCode::InvalidArguments,
                "context.tool_call_id was already used for another tool",
            )),
            JournalEntry::OtherArguments => Err(other_arguments()),
        }
    }
}

/// The refusal of a repeated `tool_call_id` whose arguments differ from the first call's.
fn other_arguments() -> ToolError {
    ToolError::new(
        ErrorCode::InvalidArguments,
        "context.tool_call_id was already used for this tool with other arguments; a repeat must carry the same arguments (it is answered from the journal), a new call needs a new tool_call_id",
    )
}

/// Journal form of an outcome: `{"result": …}` or `{"error": {"code", "message"}}`.
fn outcome_to_json(result: &Result<Value, ToolError>) -> String {
    match result {
        Ok(v) => json!({"result": v}).to_string(),
        Err(e) => json!({"error": {"code": e.code, "message": e.message}}).to_string(),
    }
}

/// A transport refusal worded bare by the adb server or the transport (`device offline`,
/// `device 'X' not found`) while the inventory still listed the phone `device` — adb's list
/// lags, or a Wi-Fi transport went stale (vidstige/jadb#152, LmeSzinc/AzurLaneAutoScript PR
/// #997; field bug 56) — gets the fix of that state for the phone's route, the same text the
/// inventory's state gives (`state_refusal`): `offline`, or for `not found` the phone gone.
fn with_route_fix(e: ToolError, route: RouteKind) -> ToolError {
    if e.code != ErrorCode::DeviceOffline {
        return e;
    }
    let state = if e.message == AdbError::DeviceOffline.to_string() {
        DeviceState::Offline
    } else if e.message == AdbError::DeviceNotFound.to_string() {
        DeviceState::Gone
    } else {
        return e;
    };
    match state_refusal(&state, route) {
        Some((code, message)) => ToolError::new(
            code,
            format!("the phone's transport answered `{}`: {message}", e.message),
        ),
        None => e,
    }
}

fn outcome_from_json(json: &str) -> Result<Value, ToolError> {
    let v: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    if let Some(r) = v.get("result") {
        return Ok(r.clone());
    }
    let code = v
        .pointer("/error/code")
        .cloned()
        .and_then(|c| serde_json::from_value(c).ok())
        .unwrap_or(ErrorCode::ToolInvokeFailed);
    let message = v
        .pointer("/error/message")
        .and_then(Value::as_str)
        .unwrap_or("recorded failure")
        .to_string();
    Err(ToolError::new(code, message))
}
