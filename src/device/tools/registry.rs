//! The one registry of device tools: the [`DeviceTool`] trait each tool implements, and
//! [`RegisteredTool`], the adapter the card, argument validation and dispatch all read.
//!
//! A [`RegisteredTool`] compiles its tool's input schema (with `connector_channel_id` injected)
//! and output schema once, validates arguments against the first, deserializes them into the
//! tool's typed `Args`, runs it, serializes its typed `Output`, and — in debug builds, so in
//! every end-to-end test — checks the result against the second (a mismatch is a loud
//! `internal_error`).

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::phone::receipt::{self, RECEIPT_DEADLINE};
use super::phone::touch::{timing_schema, Timing};
use super::{ToolCtx, ToolError};
use crate::adb::meter;
use crate::device::error::DeviceError;
use crate::device::policy::Policy;
use crate::protocol::card::{tool_input_schema, SideEffect, ToolDecl};

/// One device tool: its wire id (a public contract), card text, typed arguments and result,
/// their JSON Schemas (the wire contract), its side-effect class, and `run`.
pub trait DeviceTool: 'static {
    /// Tool id (model function name, `^[A-Za-z0-9_.-]{1,256}$`); never renamed.
    const ID: &'static str;
    /// Short title for the card.
    const TITLE: &'static str;
    /// What it does, units and contract, for the model.
    const DESCRIPTION: &'static str;
    /// Whether it changes the phone.
    const SIDE_EFFECT: SideEffect;
    /// Arguments; unknown properties (such as `connector_channel_id`) are ignored.
    type Args: DeserializeOwned + Send;
    /// Result; serializes to an object matching [`DeviceTool::output_schema`].
    type Output: Serialize;
    /// Object schema of the model arguments, without `connector_channel_id`; every property is
    /// a field of `Args`, `required` ones exactly the fields without a default. The default is
    /// a tool without arguments (`args_match_input_schemas` holds every tool to its `Args`).
    fn input_schema() -> Value {
        serde_json::json!({"type": "object", "properties": {}})
    }
    /// Schema of the result object.
    fn output_schema() -> Value;
    /// What it does while the lock screen shows or the screen is off (docs/tools.md "Lock
    /// screen"): tools that would act on the app refuse with `device_locked`, and the
    /// descriptor lists them `unavailable` while the last reading says locked.
    const LOCK_RULE: LockRule = LockRule::Works;
    /// Whether it takes `receipt: true` (side-effecting gestures, keys, text, app launch): the
    /// registry adds `receipt` to its input and output schemas and, when asked, measures the
    /// phone before and after the run ([`super::phone::receipt`]) within the same deadline
    /// (extended by [`RECEIPT_DEADLINE`]).
    const RECEIPT: bool = false;
    /// The ways its phone steps can go (`backend` in its result, the enum of the result
    /// schema): the first is reported when no phone operation noted one
    /// ([`crate::adb::meter::note_backend`]; several noted are joined with `+`). A tool whose
    /// result carries its own `backend` (the gestures) lists the same values.
    const BACKENDS: &'static [&'static str];
    /// Whether the card offers it under `policy` (beyond `[tools].disabled`, which applies to
    /// every tool).
    fn in_card(policy: &Policy) -> bool {
        let _ = policy;
        true
    }
    /// The call's one deadline, covering every step (default [`DEFAULT_CALL_DEADLINE`]): the
    /// registry starts it when the run begins, every phone step is cut to what is left
    /// ([`super::phone::deadline`]), and a run still going at its end is stopped with
    /// `device_timeout`. Documented per tool in `docs/tools.md`.
    fn deadline(args: &Self::Args) -> Duration {
        let _ = args;
        DEFAULT_CALL_DEADLINE
    }
    /// Runs the tool with schema-checked arguments.
    fn run(
        args: Self::Args,
        ctx: &ToolCtx<'_>,
    ) -> impl Future<Output = Result<Self::Output, DeviceError>> + Send;
}

/// A tool's behaviour on a locked phone (lock screen showing, or screen off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockRule {
    /// Runs as usual: it observes (screenshot, UI tree, status, logs, files), needs no screen
    /// (install, stop, orientation, shell), or is how an agent wakes and unlocks the phone
    /// (`android_press_key`, `android_swipe`).
    Works,
    /// Refused with `device_locked` before it acts: it would land on the lock screen instead
    /// of the app (taps, scrolls, typing, launching, opening links).
    Refused,
}

/// The deadline of a tool call that declares none of its own.
pub const DEFAULT_CALL_DEADLINE: Duration = Duration::from_secs(30);
/// How long after its deadline a run is stopped from outside: its steps are cut to the
/// deadline and end first with a typed error naming the step; this only catches a wait that
/// is not a phone step.
const OUTER_GRACE: Duration = Duration::from_millis(100);

/// A boxed tool run.
type RunFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, ToolError>> + Send + 'a>>;
/// A tool's run, erased to JSON in and out.
type RunFn = for<'a> fn(&'a Value, &'a ToolCtx<'a>) -> RunFuture<'a>;

/// A registered tool: declaration, compiled schemas, and its erased `run`.
pub struct RegisteredTool {
    decl: ToolDecl,
    lock_rule: LockRule,
    receipt: bool,
    in_card: fn(&Policy) -> bool,
    input: jsonschema::Validator,
    output: jsonschema::Validator,
    run: RunFn,
    /// Checks `Args` against the input schema (see `args_shape`).
    #[cfg(test)]
    check_args: fn(&Value) -> Result<(), String>,
}

impl std::fmt::Debug for RegisteredTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("id", &self.decl.tool_id)
            .finish_non_exhaustive()
    }
}

fn run_erased<'a, T: DeviceTool>(args: &'a Value, ctx: &'a ToolCtx<'a>) -> RunFuture<'a> {
    Box::pin(reported(
        Box::pin(run_measured::<T>(args, ctx)),
        T::BACKENDS,
    ))
}

/// Runs `run` under a fresh link meter and adds its report ([`report`]). One copy for every
/// tool (the run comes boxed), not one per tool: binary size.
async fn reported(
    run: RunFuture<'_>,
    backends: &'static [&'static str],
) -> Result<Value, ToolError> {
    let began = std::time::Instant::now();
    let (out, reading) = meter::measure(run).await;
    let mut out = out?;
    if let Some(obj) = out.as_object_mut() {
        report(obj, backends, &reading, began.elapsed());
    }
    Ok(out)
}

/// Adds `timing` and `backend` to a result that does not carry its own (the gestures do):
/// the call's wall time split by the link meter ([`meter`]) into the phone's share, the bulk
/// transfer's and the connector's rest (the three sum to the call's time).
fn report(
    obj: &mut serde_json::Map<String, Value>,
    backends: &[&str],
    reading: &meter::Reading,
    took: Duration,
) {
    if !obj.contains_key("timing") {
        let ms = |d: Duration| (d.as_secs_f64() * 1e5).round() / 1e2;
        let busy = reading.busy.min(took);
        let transfer = reading.transfer.min(busy);
        let timing = Timing {
            phone_ms: ms(busy - transfer),
            transfer_ms: ms(transfer),
            connector_ms: ms(took - busy),
        };
        obj.insert(
            "timing".into(),
            serde_json::to_value(timing).unwrap_or(Value::Null),
        );
    }
    if !obj.contains_key("backend") {
        let backend = match reading.backends.is_empty() {
            true => backends.first().copied().unwrap_or("shell").to_string(),
            false => reading.backends.join("+"),
        };
        obj.insert("backend".into(), Value::String(backend));
    }
}

/// `schema` with `timing` and `backend` (one of `backends`) added and required, unless the
/// tool's own schema has them.
fn with_report(mut schema: Value, backends: &[&str]) -> Value {
    let props = [
        ("timing", timing_schema()),
        (
            "backend",
            serde_json::json!({"type": "string", "enum": backends}),
        ),
    ];
    for (name, property) in props {
        let has = schema["properties"].get(name).is_some();
        if has {
            continue;
        }
        schema = with_property(schema, name, property);
        if let Some(req) = schema.get_mut("required").and_then(Value::as_array_mut) {
            req.push(Value::String(name.into()));
        }
    }
    schema
}

/// The run of [`run_erased`] inside the call's meter.
async fn run_measured<'a, T: DeviceTool>(
    args: &'a Value,
    ctx: &'a ToolCtx<'a>,
) -> Result<Value, ToolError> {
    {
        // Reached only after `validate`: a failure here means `Args` and the schema disagree,
        // which the registry's unit test rules out. The serde message may quote the value
        // (user text), so it is not passed on. Whole numbers written as floats were made
        // integers before ([`integral_floats_as_integers`]).
        let wants_receipt = T::RECEIPT && args.get("receipt") == Some(&Value::Bool(true));
        let args = T::Args::deserialize(args).map_err(|_| {
            DeviceError::InvalidArguments(format!("invalid arguments: they do not fit {}", T::ID))
        })?;
        let mut budget = T::deadline(&args);
        if wants_receipt {
            budget += RECEIPT_DEADLINE;
        }
        // From when the call began: the connector's steps before the tool are in it.
        let deadline = ctx.deadline.started(budget);
        let ctx = ctx.with_deadline(deadline);
        let run = async {
            let before = match wants_receipt {
                true => Some(receipt::before(&ctx).await?),
                false => None,
            };
            let out = T::run(args, &ctx).await?;
            let acted = std::time::Instant::now();
            let mut out = serde_json::to_value(out)
                .map_err(|e| DeviceError::Internal(format!("result not serializable: {e}")))?;
            if let (Some(before), Some(obj)) = (before, out.as_object_mut()) {
                let r = receipt::after(&ctx, &before, acted).await;
                obj.insert(
                    "receipt".into(),
                    serde_json::to_value(r).unwrap_or(Value::Null),
                );
            }
            Ok::<Value, DeviceError>(out)
        };
        Ok(
            tokio::time::timeout(deadline.left().saturating_add(OUTER_GRACE), run)
                .await
                .map_err(|_| deadline.spent(T::ID))??,
        )
    }
}

/// `schema` with property `name` added (an object schema's `properties`).
fn with_property(mut schema: Value, name: &str, property: Value) -> Value {
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(name.into(), property);
    }
    schema
}

/// `value` with every float that is a whole number in `i64` range written as an integer, or
/// `None` when it has none. JSON Schema's `integer` takes a whole number written as a float
/// (`5.0`, `1e2`; Python's `json.dumps(5.0)`; draft 2020-12 §6.1.1) and serde's integers do
/// not, so tool arguments are normalised once, before validation, the journal and the run.
pub fn integral_floats_as_integers(value: &Value) -> Option<Value> {
    fn has(v: &Value) -> bool {
        match v {
            Value::Number(n) => n.is_f64(),
            Value::Array(a) => a.iter().any(has),
            Value::Object(m) => m.values().any(has),
            _ => false,
        }
    }
    fn convert(v: &Value) -> Value {
        match v {
            Value::Number(n) => match n.as_f64() {
                Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                    Value::from(f as i64)
                }
                _ => v.clone(),
            },
            Value::Array(a) => Value::Array(a.iter().map(convert).collect()),
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, v)| (k.clone(), convert(v))).collect())
            }
            _ => v.clone(),
        }
    }
    has(value).then(|| convert(value))
}

/// Compiles one of our own schemas; they are constants, so a failure is a programming error
/// (caught by the unit tests).
fn compile(schema: &Value, id: &str) -> jsonschema::Validator {
    jsonschema::validator_for(schema)
        .unwrap_or_else(|e| panic!("schema of {id} does not compile: {e}"))
}

impl RegisteredTool {
    /// Registers tool `T`.
    pub fn of<T: DeviceTool>() -> RegisteredTool {
        let (mut input_schema, mut output_schema) = (
            T::input_schema(),
            with_report(T::output_schema(), T::BACKENDS),
        );
        if T::RECEIPT {
            input_schema = with_property(input_schema, "receipt", receipt::argument_schema());
            output_schema = with_property(output_schema, "receipt", receipt::schema());
        }
        let decl = ToolDecl {
            tool_id: T::ID,
            title: T::TITLE,
            description: T::DESCRIPTION,
            side_effect: T::SIDE_EFFECT,
            input_schema,
            output_schema,
        };
        RegisteredTool {
            input: compile(&tool_input_schema(&decl), T::ID),
            output: compile(&decl.output_schema, T::ID),
            decl,
            lock_rule: T::LOCK_RULE,
            receipt: T::RECEIPT,
            in_card: T::in_card,
            run: run_erased::<T>,
            #[cfg(test)]
            check_args: super::args_shape::check::<T::Args>,
        }
    }

    /// The tool id.
    pub fn id(&self) -> &'static str {
        self.decl.tool_id
    }

    /// The card declaration (input schema without `connector_channel_id`; see
    /// [`tool_input_schema`]).
    pub fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    /// Whether it takes `receipt: true` ([`DeviceTool::RECEIPT`]).
    pub fn takes_receipt(&self) -> bool {
        self.receipt
    }

    /// What it does on a locked phone.
    pub fn lock_rule(&self) -> LockRule {
        self.lock_rule
    }

    /// Whether calling it changes the phone (then the connector serialises and journals it).
    pub fn side_effect(&self) -> SideEffect {
        self.decl.side_effect
    }

    /// Validates `args` (with `connector_channel_id` already set) against the input schema.
    /// `invalid_arguments` names the field (`/x`) and the rule, never the value (it may be
    /// user text).
    pub fn validate(&self, args: &Value) -> Result<(), ToolError> {
        self.input.validate(args).map_err(|e| {
            let path = e.instance_path().to_string();
            let field = if path.is_empty() {
                "arguments".to_string()
            } else {
                path
            };
            DeviceError::InvalidArguments(format!("invalid argument {field}: {}", e.masked()))
                .into()
        })
    }

    /// Runs the tool with arguments already [`validate`](Self::validate)d; returns its result
    /// object. Debug builds also check the result against the output schema.
    pub async fn run_json(&self, args: &Value, ctx: &ToolCtx<'_>) -> Result<Value, ToolError> {
        let out = (self.run)(args, ctx).await?;
        if cfg!(debug_assertions) {
            self.check_output(&out)?;
        }
        Ok(out)
    }

    /// Checks a result against the tool's output schema (`internal_error` naming the path).
    pub fn check_output(&self, out: &Value) -> Result<(), ToolError> {
        self.output.validate(out).map_err(|e| {
            DeviceError::Internal(format!(
                "{} returned a result that does not match its output_schema at {}: {}",
                self.id(),
                e.instance_path(),
                e.masked()
            ))
            .into()
        })
    }
}

/// Every tool this build implements, in card order.
#[derive(Debug)]
pub struct Registry {
    tools: Vec<RegisteredTool>,
}

impl Registry {
    /// The tool with wire id `id`, whether or not a policy keeps it out of the card.
    pub fn get(&self, id: &str) -> Option<&RegisteredTool> {
        self.tools.iter().find(|t| t.id() == id)
    }

    /// Every implemented tool, in card order.
    pub fn all(&self) -> &[RegisteredTool] {
        &self.tools
    }

    /// The card's tools under `policy`, in card order: implemented tools minus
    /// `[tools].disabled`, and those a tool keeps out itself (`android_shell` unless
    /// `[shell].enabled`: Device Profile §7, no arbitrary shell by default).
    pub fn card_tools(&self, policy: &Policy) -> Vec<&RegisteredTool> {
        self.tools
            .iter()
            .filter(|t| !policy.tools.disabled.iter().any(|d| d == t.id()))
            .filter(|t| (t.in_card)(policy))
            .collect()
    }

    /// Ids of [`Registry::card_tools`].
    pub fn card_ids(&self, policy: &Policy) -> Vec<&'static str> {
        self.card_tools(policy).iter().map(|t| t.id()).collect()
    }

    /// Declarations of [`Registry::card_tools`], for `protocol::card::build_card`.
    pub fn card_decls(&self, policy: &Policy) -> Vec<ToolDecl> {
        self.card_tools(policy)
            .iter()
            .map(|t| t.decl().clone())
            .collect()
    }
}

/// The registry (built and its schemas compiled on first use).
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Registry {
        tools: super::registered(),
    })
}

/// Asserts that `out` serializes to an object matching `T`'s output schema (the per-family
/// output tests).
#[cfg(test)]
pub(crate) fn assert_output<T: DeviceTool>(out: &T::Output) {
    let v = serde_json::to_value(out).expect("serializable");
    let schema = T::output_schema();
    let validator = jsonschema::validator_for(&schema).expect("output schema compiles");
    if let Err(e) = validator.validate(&v) {
        panic!(
            "{}: {v} does not match its output_schema at {}: {e}",
            T::ID,
            e.instance_path()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorCode;
    use serde_json::json;

    /// The tool ids in card order: a public contract.
    const CARD_ORDER: &[&str] = &[
        "android_device_status",
        "android_screenshot",
        "android_ui_tree",
        "android_tap",
        "android_long_press",
        "android_double_tap",
        "android_swipe",
        "android_scroll",
        "android_input_text",
        "android_press_key",
        "android_app_list",
        "android_app_launch",
        "android_app_stop",
        "android_app_install",
        "android_app_uninstall",
        "android_open_url",
        "android_file_pull",
        "android_file_push",
        "android_logcat",
        "android_wait_for",
        "android_set_orientation",
        "android_screen_record",
        "android_shell",
        "android_hide_keyboard",
        "android_displays",
        "android_pinch",
        "android_observe",
    ];

    #[test]
    fn ids_and_card_order_are_kept() {
        let ids: Vec<&str> = registry().all().iter().map(|t| t.id()).collect();
        assert_eq!(ids, CARD_ORDER);
    }

    #[test]
    fn args_match_input_schemas() {
        for t in registry().all() {
            // `receipt` is the registry's, not the tool's `Args`.
            let mut schema = t.decl().input_schema.clone();
            if t.takes_receipt() {
                schema["properties"]
                    .as_object_mut()
                    .expect("properties")
                    .remove("receipt");
            }
            if let Err(e) = (t.check_args)(&schema) {
                panic!("{}: {e}", t.id());
            }
        }
    }

    #[test]
    fn output_schemas_describe_objects_with_their_required_keys() {
        for t in registry().all() {
            let s = &t.decl().output_schema;
            assert_eq!(s["type"], "object", "{}", t.id());
            let props = s["properties"].as_object().expect("properties");
            let required = s["required"].as_array().expect("required");
            assert!(!required.is_empty(), "{}", t.id());
            for r in required {
                assert!(props.contains_key(r.as_str().unwrap()), "{}: {r}", t.id());
            }
        }
    }

    /// Every result carries `timing` and `backend` (issue 20 §5): the registry adds them to
    /// each schema, required; the gestures' own fields keep their schema.
    #[test]
    fn every_result_schema_requires_timing_and_a_backend_of_its_tool() {
        for t in registry().all() {
            let s = &t.decl().output_schema;
            let required = s["required"].as_array().expect("required");
            for key in ["timing", "backend"] {
                assert!(required.iter().any(|r| r == key), "{}: {key}", t.id());
            }
            let backends = s["properties"]["backend"]["enum"].as_array().expect("enum");
            assert!(!backends.is_empty(), "{}", t.id());
            assert_eq!(
                s["properties"]["timing"]["required"],
                json!(["phone_ms", "transfer_ms", "connector_ms"]),
                "{}",
                t.id()
            );
        }
    }

    #[test]
    fn the_report_splits_the_call_and_keeps_a_tools_own() {
        let reading = meter::Reading {
            busy: Duration::from_millis(30),
            transfer: Duration::from_millis(50),
            backends: vec!["uiautomator_file"],
        };
        let mut obj = serde_json::Map::new();
        report(
            &mut obj,
            &["uiautomator_tty"],
            &reading,
            Duration::from_millis(40),
        );
        assert_eq!(
            Value::Object(obj.clone()),
            json!({"backend": "uiautomator_file", "timing": {"phone_ms": 0.0, "transfer_ms": 30.0, "connector_ms": 10.0}})
        );
        // Nothing noted: the tool's first backend. A busy time past the call's is cut to it.
        let mut obj = serde_json::Map::new();
        let idle = meter::Reading {
            busy: Duration::from_millis(90),
            ..meter::Reading::default()
        };
        report(&mut obj, &["sync"], &idle, Duration::from_millis(40));
        assert_eq!(obj["backend"], "sync");
        assert_eq!(obj["timing"]["phone_ms"], 40.0);
        assert_eq!(obj["timing"]["connector_ms"], 0.0);
        // A gesture's own fields stay.
        let mut obj = serde_json::Map::new();
        obj.insert("backend".into(), json!("evdev"));
        obj.insert("timing".into(), json!({"phone_ms": 1.0}));
        report(&mut obj, &["evdev"], &reading, Duration::from_millis(40));
        assert_eq!(obj["backend"], "evdev");
        assert_eq!(obj["timing"], json!({"phone_ms": 1.0}));
    }

    #[test]
    fn shell_is_in_the_card_only_when_enabled() {
        let mut policy = crate::device::policy::Profiles::builtin().card_policy();
        assert!(!registry().card_ids(&policy).contains(&"android_shell"));
        policy.shell.enabled = true;
        policy.tools.disabled = vec!["android_tap".into()];
        let ids = registry().card_ids(&policy);
        assert!(ids.contains(&"android_shell") && !ids.contains(&"android_tap"));
    }

    /// Moved from `connector::invoke` (every tool schema compiles; errors name the field).
    #[test]
    fn every_tool_schema_compiles_and_names_the_bad_field() {
        assert_eq!(registry().all().len(), CARD_ORDER.len());
        let tap = registry().get("android_tap").unwrap();
        let err = tap
            .validate(&json!({"connector_channel_id": "c", "x": "ten", "y": 1}))
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArguments);
        assert!(err.message.contains("/x"), "{}", err.message);
        assert!(tap
            .validate(&json!({"connector_channel_id": "c", "x": 10, "y": 1}))
            .is_ok());
    }
}
