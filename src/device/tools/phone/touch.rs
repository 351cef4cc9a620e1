//! How gestures reach the bound phone: its touchscreen input device (`evdev`, nothing
//! installed) through one long-lived stream, or `input …` (`cmd_input` / `input`) where that
//! is not possible. Chosen per phone on its first gesture, remembered in [`PhoneHints`]
//! (shared by every channel bound to the phone) and reported in every gesture's result.
//!
//! The probe (two shell round trips, once per phone): `getevent -lp` (AOSP toolbox
//! `getevent.c`, parsed by [`crate::device::parse::getevent`]) names the touchscreen, its
//! ranges and slots; `getprop ro.product.cpu.abi` gives the record size ([`evdev::record_size`])
//! and `ro.build.version.sdk` the fallback's kind; `test -w NODE` whether the shell user may
//! write it. It may on AOSP builds: `/dev/input/*` is `0660 root input` (`system/core/rootdir/
//! ueventd.rc`), adbd drops to uid `shell` keeping the supplementary group `input`
//! (`packages/modules/adb/daemon/main.cpp` `drop_privileges`: `AID_INPUT` among the groups),
//! and SELinux lets the shell domain write input devices (`system/sepolicy/private/shell.te`:
//! `allow shell input_device:chr_file rw_file_perms;`). `test -w` is `access(2)`, which
//! SELinux also answers, so a maker's build that withholds it shows here.
//!
//! Fallback to `input …` when: no touchscreen, several that cannot be told apart, the node is
//! not writable, protocol A only (no slots), an ABI of unknown word size, or the stream is
//! refused when opened (the shell's `can't create …: Permission denied`).
//!
//! The stream is `exec:cat > NODE` (adbd's raw `exec:` service, no pty to mangle bytes, the
//! host's writes fed to `cat`'s stdin; toybox `cat` writes each read of at most 4096 bytes,
//! so every write here stays a whole number of records well under that). A stream that died
//! (the phone unplugged, `cat` ended) is seen before the next gesture by a poll that returns
//! at once, dropped, and opened again; every write is cut to the call's one deadline.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::command::{self, sections};
use super::display::DisplayGeometry;
use super::evdev::{self, Frames, Mapping, Panel, Px};
use super::hints::PhoneHints;
use super::input::run_input;
use crate::adb::error::with_deadline;
use crate::adb::stream::ServiceStream;
use crate::device::error::DeviceError;
use crate::device::parse::getevent::{
    parse_getevent, touchscreens, ABS_MT_POSITION_X, ABS_MT_POSITION_Y,
};
use crate::device::shell_quote::{command_line, quote};
use crate::device::tools::ToolCtx;

/// First SDK whose `/system/bin/input` is the script `cmd input "$@"` (AOSP
/// `frameworks/base/cmds/input/input.sh`, Android 12); before it `input` starts `app_process`.
pub const INPUT_VIA_CMD_SDK: u32 = 31;

/// How long a freshly opened stream is watched for the shell's refusal before the first
/// write (a redirect refused answers with text and closes within a round trip).
const OPEN_SETTLE: Duration = Duration::from_millis(40);

/// Interval between move frames of a moving gesture (a 100 Hz panel's report rate).
pub const FRAME_MS: u64 = 10;

/// Gap between the two taps of a double tap, ms: above ViewConfiguration's
/// `DOUBLE_TAP_MIN_TIME` (40 ms, a second tap sooner is ignored) and well under
/// `DOUBLE_TAP_TIMEOUT` (300 ms).
pub const DOUBLE_TAP_GAP_MS: u64 = 100;

/// The way a gesture reached the phone (`backend` in results).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// Records written to the touchscreen's input device.
    Evdev,
    /// `input …`, which from Android 12 is `cmd input "$@"`: one binder call to the input
    /// service.
    CmdInput,
    /// `input …` under `app_process` (Android 11 and older): a VM start per call.
    Input,
}

/// Where the time of a tool call went (`timing` in results), ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Timing {
    /// Waiting on the phone: shell round trips (display read, probe, `input`), and the time the
    /// gesture itself takes on the phone (its holds and moves). Includes the link's latency of
    /// those round trips, which the connector cannot tell apart from the phone's work.
    pub phone_ms: f64,
    /// Writing the gesture's records to the touchscreen stream (0 for `input`).
    pub transfer_ms: f64,
    /// The rest of the call: the connector's own work.
    pub connector_ms: f64,
}

/// JSON Schema of [`Timing`].
pub fn timing_schema() -> serde_json::Value {
    serde_json::json!({"type": "object", "required": ["phone_ms", "transfer_ms", "connector_ms"], "properties": {
        "phone_ms": {"type": "number", "minimum": 0}, "transfer_ms": {"type": "number", "minimum": 0},
        "connector_ms": {"type": "number", "minimum": 0}}})
}

/// The values of [`Backend`] (`backend` of a gesture).
pub const GESTURE_BACKENDS: &[&str] = &["evdev", "cmd_input", "input"];

/// JSON Schema of [`Backend`] for gestures.
pub fn backend_schema() -> serde_json::Value {
    serde_json::json!({"type": "string", "enum": GESTURE_BACKENDS})
}

/// Measures a tool call: started when the call starts, phone and transfer time added as the
/// steps run.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    start: Instant,
    phone: Duration,
    transfer: Duration,
}

impl Default for Stopwatch {
    fn default() -> Self {
        Stopwatch::start()
    }
}

impl Stopwatch {
    /// Starts now.
    pub fn start() -> Stopwatch {
        Stopwatch {
            start: Instant::now(),
            phone: Duration::ZERO,
            transfer: Duration::ZERO,
        }
    }

    /// Runs `f` and counts its time as the phone's.
    pub async fn phone<T>(&mut self, f: impl std::future::Future<Output = T>) -> T {
        let t = Instant::now();
        let out = f.await;
        self.phone += t.elapsed();
        out
    }

    /// Adds a finished gesture's split.
    pub fn add(&mut self, done: &Done) {
        self.phone += done.phone;
        self.transfer += done.transfer;
    }

    /// The split so far.
    pub fn timing(&self) -> Timing {
        let ms = |d: Duration| (d.as_secs_f64() * 1e5).round() / 1e2;
        let total = self.start.elapsed();
        Timing {
            phone_ms: ms(self.phone),
            transfer_ms: ms(self.transfer),
            connector_ms: ms(total.saturating_sub(self.phone + self.transfer)),
        }
    }
}

/// A gesture in display px of the frame `geometry` was read in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gesture {
    /// One tap.
    Tap(Px),
    /// Two taps [`DOUBLE_TAP_GAP_MS`] apart.
    DoubleTap(Px),
    /// Down, held `ms`, up.
    Hold(Px, u64),
    /// Down at `from`, moved to `to` over `ms`, up.
    Swipe(Px, Px, u64),
    /// Two fingers from `from` points to `to` points over `ms` (`[finger 0, finger 1]`).
    Pinch([Px; 2], [Px; 2], u64),
}

/// How a gesture went.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Done {
    /// The way it took.
    pub backend: Backend,
    /// Phone time (round trips, the gesture's own duration).
    pub phone: Duration,
    /// Stream write time.
    pub transfer: Duration,
}

/// The choice made for one phone.
#[derive(Debug, Clone)]
pub enum Choice {
    /// Its touchscreen, and the fallback's kind should it refuse the stream.
    Evdev(Panel, Backend),
    /// `input …`, and why not evdev.
    Fallback {
        /// `cmd_input` or `input`.
        backend: Backend,
        /// Why evdev is not used (for `unsupported` messages).
        reason: String,
    },
}

/// One phone's touch state: the choice (once made) and the open stream.
#[derive(Default)]
pub struct TouchState {
    choice: Option<Choice>,
    stream: Option<ServiceStream>,
    next_id: i32,
}

impl std::fmt::Debug for TouchState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TouchState")
            .field("choice", &self.choice)
            .field("stream_open", &self.stream.is_some())
            .finish()
    }
}

/// The fallback's kind on a phone of `sdk`.
fn fallback_of(sdk: Option<u32>) -> Backend {
    match sdk {
        Some(s) if s >= INPUT_VIA_CMD_SDK => Backend::CmdInput,
        _ => Backend::Input,
    }
}

/// Probes the phone (module docs): the choice for it.
async fn probe(ctx: &ToolCtx<'_>, watch: &mut Duration) -> Result<Choice, DeviceError> {
    let t = Instant::now();
    let parts = [
        "getevent -lp".to_string(),
        "getprop ro.product.cpu.abi".to_string(),
        "getprop ro.build.version.sdk".to_string(),
    ];
    let out = command::run(
        ctx,
        &command::compound(&parts),
        super::input::INPUT_DEADLINE,
        1 << 20,
    )
    .await?;
    let s = sections(&out.stdout, 3);
    let sdk = s[2].trim().parse::<u32>().ok();
    let fallback = |reason: String| Choice::Fallback {
        backend: fallback_of(sdk),
        reason,
    };
    let devices = parse_getevent(&s[0]);
    let found = touchscreens(&devices);
    let choice = match found.as_slice() {
        [] => fallback(
            "getevent -lp lists no touchscreen (INPUT_PROP_DIRECT with ABS_MT_POSITION_X/Y)".into(),
        ),
        [one] => {
            // Both axes are there (`is_touchscreen`); kept as an error, never a panic.
            let (Some(x), Some(y)) = (one.axis(ABS_MT_POSITION_X), one.axis(ABS_MT_POSITION_Y))
            else {
                return Err(DeviceError::Internal("touchscreen without its axes".into()));
            };
            match (one.slots(), evdev::record_size(&s[1])) {
                (None, _) => fallback(format!(
                    "{} reports no contact slots (multi-touch protocol A only)",
                    one.path
                )),
                (_, None) => fallback(format!("unknown word size of ABI {:?}", s[1].trim())),
                (Some(slots), Some(record)) => {
                    let w = command::run(
                        ctx,
                        &format!("test -w {} && echo writable", quote(&one.path)),
                        super::input::INPUT_DEADLINE,
                        4096,
                    )
                    .await?;
                    if w.stdout.contains("writable") {
                        Choice::Evdev(
                            Panel {
                                node: one.path.clone(),
                                x,
                                y,
                                slots,
                                record,
                            },
                            fallback_of(sdk),
                        )
                    } else {
                        fallback(format!("the shell user may not write {}", one.path))
                    }
                }
            }
        }
        several => fallback(format!(
            "several touchscreens cannot be told apart: {}",
            several
                .iter()
                .map(|d| format!("{} ({})", d.path, d.name))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    };
    *watch += t.elapsed();
    Ok(choice)
}

/// The `input …` command lines of a gesture (one-finger only).
fn input_lines(g: Gesture) -> Option<String> {
    let s = |v: i64| v.to_string();
    Some(match g {
        Gesture::Tap((x, y)) => command_line(&["input", "tap", &s(x), &s(y)]),
        Gesture::DoubleTap((x, y)) => {
            let one = command_line(&["input", "tap", &s(x), &s(y)]);
            format!("{one} && {one}")
        }
        Gesture::Hold((x, y), ms) => {
            command_line(&["input", "swipe", &s(x), &s(y), &s(x), &s(y), &s(ms as i64)])
        }
        Gesture::Swipe(a, b, ms) => command_line(&[
            "input",
            "swipe",
            &s(a.0),
            &s(a.1),
            &s(b.0),
            &s(b.1),
            &s(ms as i64),
        ]),
        Gesture::Pinch(..) => return None,
    })
}

/// The gesture's own duration, ms.
fn duration_ms(g: Gesture) -> u64 {
    match g {
        Gesture::Tap(_) => 0,
        Gesture::DoubleTap(_) => DOUBLE_TAP_GAP_MS,
        Gesture::Hold(_, ms) | Gesture::Swipe(_, _, ms) | Gesture::Pinch(_, _, ms) => ms,
    }
}

/// The writes of a gesture: `(offset from the start, record bytes)`.
fn plan(g: Gesture, m: &Mapping<'_>, record: usize, id: &mut i32) -> Vec<(Duration, Vec<u8>)> {
    let mut f = Frames::new(record);
    let mut fresh = || {
        *id = id.wrapping_add(1) & 0x7fff_ffff;
        *id
    };
    let at = |ms: u64| Duration::from_millis(ms);
    let lerp = |a: Px, b: Px, t: f64| {
        (
            a.0 + ((b.0 - a.0) as f64 * t).round() as i64,
            a.1 + ((b.1 - a.1) as f64 * t).round() as i64,
        )
    };
    match g {
        Gesture::Tap(p) => {
            let bytes = f
                .down(0, fresh(), m.raw(p), true)
                .sync()
                .up(0, true)
                .sync()
                .take();
            vec![(at(0), bytes)]
        }
        Gesture::DoubleTap(p) => {
            let one = f
                .down(0, fresh(), m.raw(p), true)
                .sync()
                .up(0, true)
                .sync()
                .take();
            let two = f
                .down(0, fresh(), m.raw(p), true)
                .sync()
                .up(0, true)
                .sync()
                .take();
            vec![(at(0), one), (at(DOUBLE_TAP_GAP_MS), two)]
        }
        Gesture::Hold(p, ms) => vec![
            (at(0), f.down(0, fresh(), m.raw(p), true).sync().take()),
            (at(ms), f.up(0, true).sync().take()),
        ],
        Gesture::Swipe(a, b, ms) => {
            let mut out = vec![(at(0), f.down(0, fresh(), m.raw(a), true).sync().take())];
            let steps = (ms / FRAME_MS).max(1);
            for i in 1..=steps {
                let p = lerp(a, b, i as f64 / steps as f64);
                f.moved(0, m.raw(p)).sync();
                if i == steps {
                    f.up(0, true).sync();
                }
                out.push((at(ms * i / steps), f.take()));
            }
            out
        }
        Gesture::Pinch(a, b, ms) => {
            let (ia, ib) = (fresh(), fresh());
            f.down(0, ia, m.raw(a[0]), true)
                .down(1, ib, m.raw(a[1]), false)
                .sync();
            let mut out = vec![(at(0), f.take())];
            let steps = (ms / FRAME_MS).max(1);
            for i in 1..=steps {
                let t = i as f64 / steps as f64;
                f.moved(0, m.raw(lerp(a[0], b[0], t)))
                    .moved(1, m.raw(lerp(a[1], b[1], t)))
                    .sync();
                if i == steps {
                    f.up(0, false).up(1, true).sync();
                }
                out.push((at(ms * i / steps), f.take()));
            }
            out
        }
    }
}

/// Whether an open stream is still usable: one poll of a read, no timer; EOF or any answer
/// (`cat`'s error) means it ended. (A zero `tokio::time::timeout` is not "at once": its timer
/// fires on the driver's next 1 ms tick, which was 1.1 ms of every warm tap: docs/performance.md.)
/// Dropping the pending read loses nothing (both stream kinds' reads are cancel-safe).
async fn alive(stream: &mut ServiceStream) -> bool {
    let mut read = std::pin::pin!(stream.read_chunk());
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(std::future::Future::poll(read.as_mut(), cx).is_pending())
    })
    .await
}

/// What opening the stream found.
enum Opened {
    Ready(ServiceStream),
    /// The shell refused the node (its message).
    Refused(String),
}

/// Opens `exec:cat > NODE` within the call's deadline and watches it for [`OPEN_SETTLE`].
async fn open(ctx: &ToolCtx<'_>, node: &str) -> Result<Opened, DeviceError> {
    let service = format!("exec:cat > {}", quote(node));
    let want = super::input::INPUT_DEADLINE;
    let mut stream = ctx
        .deadline
        .bounded(want, |d| {
            with_deadline(|| "exec: cat".into(), d, ctx.link.open(&service))
        })
        .await?;
    let settle = ctx.deadline.clip(OPEN_SETTLE)?;
    match tokio::time::timeout(settle, stream.read_chunk()).await {
        Err(_) => Ok(Opened::Ready(stream)),
        Ok(Ok(Some(text))) => Ok(Opened::Refused(
            String::from_utf8_lossy(&text)
                .trim()
                .chars()
                .take(200)
                .collect(),
        )),
        Ok(Ok(None)) => Ok(Opened::Refused("the stream closed at once".into())),
        Ok(Err(e)) => Err(e.into()),
    }
}

/// Performs `g` on the bound phone through its chosen backend (module docs). `geometry` is
/// the display read for this call (it maps the points). Errors: the link's; `unsupported` for
/// a pinch where only `input` can inject; `device_timeout` when a write outlives the call.
pub async fn perform(
    ctx: &ToolCtx<'_>,
    geometry: &DisplayGeometry,
    g: Gesture,
) -> Result<Done, DeviceError> {
    let hints: &PhoneHints = ctx.hints;
    let mut state = hints.touch().lock().await;
    let mut phone = Duration::ZERO;
    if state.choice.is_none() {
        state.choice = Some(probe(ctx, &mut phone).await?);
    }
    if let Some(Choice::Evdev(panel, kind)) = state.choice.clone() {
        let stale = match state.stream.as_mut() {
            Some(s) => !alive(s).await,
            None => true,
        };
        if stale {
            state.stream = None;
            let t = Instant::now();
            let opened = open(ctx, &panel.node).await;
            phone += t.elapsed();
            match opened? {
                Opened::Ready(mut s) => {
                    // Lift what an earlier, interrupted gesture may have left down (a lift of
                    // an empty slot changes nothing: the input core drops repeated values).
                    let mut f = Frames::new(panel.record);
                    f.up(0, false).up(1, true).sync();
                    let left = ctx.deadline.clip(super::input::INPUT_DEADLINE)?;
                    match tokio::time::timeout(left, s.write_all(&f.take())).await {
                        Ok(Ok(())) => state.stream = Some(s),
                        Ok(Err(e)) => return Err(e.into()),
                        Err(_) => {
                            return Err(ctx.deadline.spent(format!("writing to {}", panel.node)))
                        }
                    }
                }
                Opened::Refused(why) => {
                    state.choice = Some(Choice::Fallback {
                        backend: kind,
                        reason: format!("opening {} was refused: {why}", panel.node),
                    });
                }
            }
        }
        let m = Mapping::new(&panel, geometry.size, geometry.rotation);
        let mut id = state.next_id;
        let writes = plan(g, &m, panel.record, &mut id);
        state.next_id = id;
        if let Some(stream) = state.stream.as_mut() {
            let start = Instant::now();
            let mut transfer = Duration::ZERO;
            let mut failed = None;
            for (offset, bytes) in writes {
                if let Some(wait) = offset.checked_sub(start.elapsed()) {
                    match ctx.deadline.clip(wait) {
                        Ok(wait) => tokio::time::sleep(wait).await,
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
                let t = Instant::now();
                let wrote = match ctx.deadline.clip(super::input::INPUT_DEADLINE) {
                    Ok(left) => tokio::time::timeout(left, stream.write_all(&bytes)).await,
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                };
                transfer += t.elapsed();
                match wrote {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        failed = Some(e.into());
                        break;
                    }
                    Err(_) => {
                        failed = Some(ctx.deadline.spent(format!("writing to {}", panel.node)));
                        break;
                    }
                }
            }
            if let Some(e) = failed {
                // A half-sent gesture may leave a contact down: the next call opens a fresh
                // stream, whose first write lifts every slot this connector uses.
                state.stream = None;
                return Err(e);
            }
            let total = start.elapsed();
            return Ok(Done {
                backend: Backend::Evdev,
                phone: phone + total.saturating_sub(transfer),
                transfer,
            });
        }
    }
    let Some(Choice::Fallback { backend, reason }) = state.choice.clone() else {
        return Err(DeviceError::Internal("no touch backend chosen".into()));
    };
    drop(state);
    let Some(cmd) = input_lines(g) else {
        return Err(DeviceError::Unsupported(format!(
            "a two-finger gesture needs the touchscreen's input device, and this phone's is not usable ({reason}); `input` injects one finger only"
        )));
    };
    let t = Instant::now();
    run_input(ctx, &cmd, super::input::gesture_deadline(duration_ms(g))).await?;
    phone += t.elapsed();
    Ok(Done {
        backend,
        phone,
        transfer: Duration::ZERO,
    })
}

/// The backend chosen for the phone, if its first gesture ran (for messages and tests).
pub async fn chosen(hints: &PhoneHints) -> Option<Backend> {
    match hints.touch().lock().await.choice.as_ref()? {
        Choice::Evdev(..) => Some(Backend::Evdev),
        Choice::Fallback { backend, .. } => Some(*backend),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::parse::getevent::AxisRange;

    fn panel() -> Panel {
        Panel {
            node: "/dev/input/event1".into(),
            x: AxisRange { min: 0, max: 1079 },
            y: AxisRange { min: 0, max: 2159 },
            slots: 10,
            record: 24,
        }
    }

    #[test]
    fn plans_pace_their_frames_and_end_lifted() {
        let p = panel();
        let m = Mapping::new(&p, (1080, 2160), Some(0));
        let mut id = 0;
        let tap = plan(Gesture::Tap((5, 6)), &m, 24, &mut id);
        assert_eq!(tap.len(), 1, "a tap is one write");
        assert_eq!(id, 1);
        let swipe = plan(Gesture::Swipe((0, 0), (100, 0), 300), &m, 24, &mut id);
        assert_eq!(swipe.len(), 31);
        assert_eq!(swipe.last().map(|w| w.0), Some(Duration::from_millis(300)));
        let pinch = plan(
            Gesture::Pinch([(10, 10), (20, 20)], [(0, 0), (30, 30)], 50),
            &m,
            16,
            &mut id,
        );
        assert_eq!(pinch.len(), 6);
        assert!(pinch
            .iter()
            .all(|(_, b)| b.len() % 16 == 0 && b.len() < 4096));
        assert_eq!(
            input_lines(Gesture::Pinch([(0, 0); 2], [(0, 0); 2], 50)),
            None
        );
        assert_eq!(
            input_lines(Gesture::Hold((1, 2), 800)).as_deref(),
            Some("'input' 'swipe' '1' '2' '1' '2' '800'")
        );
    }

    #[test]
    fn the_fallback_kind_follows_the_sdk() {
        assert_eq!(fallback_of(Some(34)), Backend::CmdInput);
        assert_eq!(fallback_of(Some(23)), Backend::Input);
        assert_eq!(fallback_of(None), Backend::Input);
        assert_eq!(
            serde_json::to_value(Backend::CmdInput).unwrap(),
            "cmd_input"
        );
    }
}
