//! A screenshot, the operation behind `android_screenshot` and `android_observe`: `exec:screencap -p` (binary-safe, never the text-mode shell: field bug 6),
//! PNG signature + IHDR verified, optional re-encoding (`png` | `jpeg` | `webp`) and downscaling
//! (`max_dimension`), honest flags (`blank` for an all-black frame, `secure_window` when the
//! focused window has FLAG_SECURE: field bug 8), and the geometry of the one coordinate contract
//! (image size, display size, scale, rotation, display id: field bugs 14–15). The result's
//! `screenshot_id` lets gestures take coordinates in the image's pixel space.

mod codec_thread;
mod frame;
mod jpeg;
mod raw;
mod source;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use frame::{process, process_raw};
use raw::RawFrame;
use source::Source;

use super::display::{read_moment, Moment};
use super::file_refs;
use super::last_seen::ShotGeometry;
use crate::adb::AdbError;
use crate::device::error::DeviceError;
use crate::device::inventory::LIVENESS_DEADLINE;
use crate::device::parse::devices::DeviceState;
use crate::device::parse::{png_check, secure, text};
use crate::device::shell_quote::command_line;
use crate::device::tools::ToolCtx;
use crate::file_cache::{FileOrigin, IssuedFile};

/// A PNG of the phone's default display (the display `android_screenshot` picks on a
/// multi-display phone), its longer side scaled down to at most `max_dim` px: the operator
/// console's thumbnail ([`crate::server::console`]), taken on the tool's own path (`exec:`
/// `screencap -p`, PNG checks, a capture cut short by an unplug told as `device_offline`,
/// the resize on the codec thread) under `ctx`'s deadline. Nothing is stored in the file cache
/// and no `screenshot_id` is made. Errors: as `android_screenshot`'s.
pub async fn thumbnail(ctx: &ToolCtx<'_>, max_dim: u32) -> Result<Vec<u8>, DeviceError> {
    let frame = match capture_right_display(ctx, None, Source::Png).await {
        Ok((frame, ..)) => frame,
        Err(e) => return Err(went_away_or(ctx, e).await),
    };
    let Captured::Png(png) = frame else {
        return Err(DeviceError::Internal(
            "a PNG capture returned a raw frame".into(),
        ));
    };
    let work = move || {
        let (_, info) =
            png_check::find_png(&png).map_err(|e| DeviceError::InvalidScreenshot(e.to_string()))?;
        process(
            png,
            (info.width, info.height),
            Format::Png,
            Some(max_dim),
            80,
        )
    };
    let _slot = source::frame_slot().await;
    let (bytes, _, _) = codec_thread::run(work).await??;
    Ok(bytes)
}

/// Deadline of the capture (`exec:screencap -p`).
pub const SCREENSHOT_DEADLINE: Duration = Duration::from_secs(15);
/// Cap of screenshot bytes (a 1440x3120 PNG is 2–6 MB).
pub const SCREENSHOT_LIMIT: usize = 32 * 1024 * 1024;
/// Cap of a raw framebuffer dump (a 3840x2160 RGBA frame is 33.2 MB).
pub const RAW_SCREENSHOT_LIMIT: usize = 64 * 1024 * 1024;
/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// PNG as captured (default).
    #[default]
    Png,
    /// JPEG at `quality`.
    Jpeg,
    /// Lossless WebP.
    Webp,
}

impl Format {
    fn mime(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Webp => "image/webp",
        }
    }
    fn ext(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Jpeg => "jpg",
            Format::Webp => "webp",
        }
    }
}

/// A display id as given: a number or a string (`screencap -d` takes either form).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum DisplayId {
    /// Numeric id (kept exact).
    Number(serde_json::Number),
    /// Id as text.
    Text(String),
}

impl DisplayId {
    fn into_arg(self) -> String {
        match self {
            DisplayId::Number(n) => n.to_string(),
            DisplayId::Text(s) => s,
        }
    }
}

/// Arguments.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// Image format (default png).
    #[serde(default)]
    pub format: Format,
    /// Longer side at most this many px.
    pub max_dimension: Option<u32>,
    /// JPEG quality 1–100 (default 80).
    pub quality: Option<u8>,
    /// Display to capture.
    pub display_id: Option<DisplayId>,
}

/// The captured display.
#[derive(Debug, Serialize)]
pub struct ShotDisplay {
    /// The `-d` id used, `null` for the default display.
    pub id: Option<String>,
    /// `requested` | `default` | `display_on` | `first_listed`.
    pub chosen_by: &'static str,
    /// Display input width, px.
    pub width: u32,
    /// Display input height, px.
    pub height: u32,
}

/// Display px per image px.
#[derive(Debug, Serialize)]
pub struct Scale {
    /// Horizontal.
    pub x: f64,
    /// Vertical.
    pub y: f64,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// Id to pass to gestures with coordinates in this image's pixel space.
    pub screenshot_id: String,
    /// The stored image (`file_ref`, `download_url`, `mime_type`, `byte_size`, `expires_at`).
    #[serde(flatten)]
    pub file: IssuedFile,
    /// Image width, px.
    pub width: u32,
    /// Image height, px.
    pub height: u32,
    /// The display captured.
    pub display: ShotDisplay,
    /// Display px per image px.
    pub scale: Scale,
    /// All-black frame.
    pub blank: bool,
    /// The focused window has FLAG_SECURE.
    pub secure_window: bool,
    /// Why the frame is black, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<&'static str>,
}

/// `screencap`'s warning on multi-display phones (AOSP `cmds/screencap/screencap.cpp`).
const MULTI_DISPLAY_WARNING: &[u8] = b"Multiple displays were found";

/// Physical display ids from `dumpsys SurfaceFlinger --display-id`
/// (`Display <id> (HWC display N): …` lines, AOSP `SurfaceFlinger::dumpDisplayIdentificationData`).
pub fn parse_display_ids(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("Display "))
        .filter_map(|rest| rest.split_whitespace().next())
        .filter(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

/// One physical display's block of `dumpsys display` (`Display Devices:` section): its
/// `DisplayDeviceInfo{… uniqueId="local:ID", W x H, …, state S}` line and the indented lines
/// under it (`mState=S`, …) up to the next device or section. AOSP
/// `DisplayDeviceInfo.toString`, `LocalDisplayAdapter.dumpLocked`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisplayBlock {
    /// The physical id (`local:` stripped).
    pub id: String,
    /// `ON`, `OFF`, `DOZE`, … (the block's `mState=`, else the info line's `state`).
    pub state: Option<String>,
    /// `W x H` of the info line (px, the panel's own orientation).
    pub size: Option<(u32, u32)>,
}

/// Parses each display's own block (field bug 22: a compact dump puts every display's state
/// near the others, so a state is only read from its display's block).
pub fn parse_display_blocks(text: &str) -> Vec<DisplayBlock> {
    let mut blocks: Vec<DisplayBlock> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if let Some(pos) = line.find("DisplayDeviceInfo{") {
            let info = &line[pos..];
            let id = info
                .split("uniqueId=\"local:")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("")
                .to_string();
            let size = info.split(", ").find_map(|part| {
                let (w, h) = part.trim().split_once(" x ")?;
                Some((w.trim().parse().ok()?, h.trim().parse().ok()?))
            });
            let state = info
                .split(", ")
                .find_map(|p| p.trim().trim_end_matches('}').strip_prefix("state "))
                .map(|st| st.split([',', '}', ' ']).next().unwrap_or("").to_string());
            blocks.push(DisplayBlock { id, state, size });
            open = true;
        } else if open && (line.starts_with("    ") || line.starts_with('\t')) {
            if let (Some(b), Some(st)) = (blocks.last_mut(), line.trim().strip_prefix("mState=")) {
                b.state = Some(st.split_whitespace().next().unwrap_or("").to_string());
            }
        } else {
            open = false;
        }
    }
    blocks
}

/// The display a multi-display phone should be captured from: the one whose own block of
/// `dumpsys display` says ON ([`parse_display_blocks`]), else the first listed (HWC display 0,
/// the primary panel). Returns the id, how it was chosen and the block's size (px) when known.
async fn pick_display(
    ctx: &ToolCtx<'_>,
) -> Result<(String, &'static str, Option<(u32, u32)>), DeviceError> {
    let deadline = Duration::from_secs(10);
    let ids_out = ctx
        .shell("dumpsys SurfaceFlinger --display-id", deadline, 1 << 20)
        .await?;
    let ids = parse_display_ids(&text::decode_output(&ids_out.stdout));
    let first = ids.first().cloned().ok_or_else(|| {
        DeviceError::CommandFailed(
            "the phone reports several displays but `dumpsys SurfaceFlinger --display-id` lists none; pass display_id".into(),
        )
    })?;
    let display = ctx.shell("dumpsys display", deadline, 8 << 20).await?;
    let blocks = parse_display_blocks(&text::decode_output(&display.stdout));
    let size_of = |id: &str| blocks.iter().find(|b| b.id == id).and_then(|b| b.size);
    for id in &ids {
        if blocks
            .iter()
            .any(|b| &b.id == id && b.state.as_deref() == Some("ON"))
        {
            return Ok((id.clone(), "display_on", size_of(id)));
        }
    }
    let size = size_of(&first);
    Ok((first, "first_listed", size))
}

/// After `screencap -d ID` gave no image: `invalid_arguments` naming the phone's displays when
/// `ID` is not one of them (`screencap` itself only exits 1, which `exec:` does not carry);
/// `None` when it is one, or the list cannot be read (the capture's own error then stands).
async fn unknown_display(ctx: &ToolCtx<'_>, id: &str) -> Option<DeviceError> {
    let out = ctx
        .shell(
            "dumpsys SurfaceFlinger --display-id",
            Duration::from_secs(10),
            1 << 20,
        )
        .await
        .ok()?;
    let ids = parse_display_ids(&text::decode_output(&out.stdout));
    if ids.is_empty() || ids.iter().any(|known| known == id) {
        return None;
    }
    // The id asked for is not repeated (docs/protocol.md: never echo a value that failed).
    Some(DeviceError::InvalidArguments(format!(
        "invalid argument /display_id: the phone has no display with that id; its displays (dumpsys SurfaceFlinger --display-id): {}",
        ids.join(", ")
    )))
}

/// What `screencap` gave.
enum Captured {
    /// `screencap -p`: the PNG (anything before its signature dropped).
    Png(Vec<u8>),
    /// `screencap`: the raw dump.
    Raw(RawFrame),
    /// `screencap -j`: the phone's JPEG (anything before its start dropped) and its size.
    Jpeg(Vec<u8>, (u32, u32)),
}

/// Captures the requested display, or the default one; when the phone warns that it has several
/// displays (field bug 7), captures again from the chosen display with `-d` and says which.
/// Also returns the captured display's size when it is not the default display (px; `None`:
/// the default display's input size applies).
async fn capture_right_display(
    ctx: &ToolCtx<'_>,
    requested: Option<String>,
    source: Source,
) -> Result<(Captured, Option<String>, &'static str, Option<(u32, u32)>), DeviceError> {
    if let Some(d) = requested {
        return match capture(ctx, Some(&d), source).await {
            Ok((_, frame)) => Ok((frame, Some(d), "requested", None)),
            Err(e @ DeviceError::InvalidScreenshot(_)) => {
                Err(unknown_display(ctx, &d).await.unwrap_or(e))
            }
            Err(e) => Err(e),
        };
    }
    let (warned, frame) = capture(ctx, None, source).await?;
    if !warned {
        return Ok((frame, None, "default", None));
    }
    drop(frame);
    let (id, how, size) = pick_display(ctx).await?;
    let (_, frame) = capture(ctx, Some(&id), source).await?;
    // The first listed display is the default one: its input size (rotation applied) holds.
    let size = if how == "first_listed" { None } else { size };
    Ok((frame, Some(id), how, size))
}

/// `err` as the truth: an `invalid_screenshot` whose capture ended short because the phone or
/// its transport went away (an unplug mid-capture: the stream just ends, fault soak) becomes
/// [`DeviceError::WentAway`] (`device_offline`); a phone that still answers (a `sync:` stream
/// opens within [`LIVENESS_DEADLINE`]) really sent a malformed image, and `err` stands. Other
/// errors are returned unchanged.
async fn went_away_or(ctx: &ToolCtx<'_>, err: DeviceError) -> DeviceError {
    let DeviceError::InvalidScreenshot(what) = &err else {
        return err;
    };
    let why = match tokio::time::timeout(LIVENESS_DEADLINE, ctx.link.open("sync:")).await {
        Ok(Ok(_)) => return err,
        Ok(Err(e)) => e.to_string(),
        Err(_) => format!("no answer within {} ms", LIVENESS_DEADLINE.as_millis()),
    };
    let fix = DeviceState::Gone
        .remedy(ctx.route)
        .unwrap_or("reconnect the phone");
    DeviceError::WentAway(format!(
        "the capture ended short because the phone went away during it (now: {why}; the partial frame: {what}); {fix}; then take the screenshot again"
    ))
}

/// Runs the capture (`screencap -p` or the raw `screencap`); returns whether the multi-display
/// warning preceded the frame, and the frame (text before it dropped or skipped, never copied).
async fn capture(
    ctx: &ToolCtx<'_>,
    display_id: Option<&str>,
    source: Source,
) -> Result<(bool, Captured), DeviceError> {
    let mut argv = vec!["screencap"];
    let limit = match source {
        Source::Png => {
            argv.push("-p");
            SCREENSHOT_LIMIT
        }
        Source::Jpeg => {
            argv.push(jpeg::FLAG);
            SCREENSHOT_LIMIT
        }
        Source::Raw => RAW_SCREENSHOT_LIMIT,
    };
    if let Some(d) = display_id {
        argv.extend(["-d", d]);
    }
    let command = command_line(&argv);
    let mut bytes = match source {
        Source::Png | Source::Jpeg => ctx.exec(&command, SCREENSHOT_DEADLINE, limit).await?,
        Source::Raw => match ctx
            .link
            .exec_announced(
                &command,
                ctx.deadline.clip(SCREENSHOT_DEADLINE)?,
                limit,
                raw::ANNOUNCE_HEAD,
                raw::announced_len,
                xagent_frame_codec::reuse::take_buffer,
            )
            .await
        {
            Ok(bytes) => bytes,
            Err(AdbError::OutputTooLarge { .. }) => return Err(frame_too_large(ctx)),
            Err(e) => return Err(e.into()),
        },
    };
    let warned_before = |bytes: &[u8], offset: usize| {
        bytes[..offset]
            .windows(MULTI_DISPLAY_WARNING.len())
            .any(|w| w == MULTI_DISPLAY_WARNING)
    };
    if source == Source::Raw {
        return match raw::find(bytes) {
            Ok(frame) => Ok((warned_before(&frame.bytes, frame.start), Captured::Raw(frame))),
            Err(bytes) => Err(DeviceError::InvalidScreenshot(format!(
                "screencap did not return a raw frame (a width, height, format header and exactly that many pixels; {} bytes); nothing was stored",
                bytes.len()
            ))),
        };
    }
    if source == Source::Jpeg {
        let offset = jpeg::find(&bytes)?;
        let warned = warned_before(&bytes, offset);
        bytes.drain(..offset);
        let size = jpeg::size(&bytes).ok_or_else(|| {
            DeviceError::InvalidScreenshot(format!(
                "screencap -j returned a JPEG without a frame header ({} bytes); nothing was stored",
                bytes.len()
            ))
        })?;
        return Ok((warned, Captured::Jpeg(bytes, size)));
    }
    let (offset, _) = png_check::find_png(&bytes).map_err(|e| {
        DeviceError::InvalidScreenshot(format!(
            "screencap did not return a valid PNG ({e}); nothing was stored"
        ))
    })?;
    let warned = warned_before(&bytes, offset);
    // In place: no second copy of the frame (nothing precedes the PNG on a single-display phone).
    bytes.drain(..offset);
    Ok((warned, Captured::Png(bytes)))
}

/// A raw frame announced over [`RAW_SCREENSHOT_LIMIT`] (a display over ~16 Mpx): refused before
/// its pixels are transferred. Re-encoding needs the whole frame in memory, and decoding the
/// phone's PNG of it would pass the same cap (the `png` crate's default decode limit is 64 MiB),
/// so the way that works is the phone's own PNG, passed through untouched.
fn frame_too_large(ctx: &ToolCtx<'_>) -> DeviceError {
    let display = ctx
        .display
        .get()
        .map(|(w, h)| format!(" ({w}x{h})"))
        .unwrap_or_default();
    DeviceError::InvalidArguments(format!(
        "invalid argument /format: the display{display} is too large to re-encode on the box (a frame over {} MiB); take format png without max_dimension, the phone's own PNG passed through",
        RAW_SCREENSHOT_LIMIT >> 20
    ))
}

async fn focused_secure(ctx: &ToolCtx<'_>) -> Option<bool> {
    let out = ctx
        .shell(
            "dumpsys window windows",
            Duration::from_secs(10),
            8 * 1024 * 1024,
        )
        .await
        .ok()?;
    secure::focused_window_secure(&text::decode_output(&out.stdout))
}

/// The properties of `android_screenshot`'s arguments (also `android_observe`'s).
pub fn args_properties() -> Value {
    json!({
        "format": {"type": "string", "enum": ["png", "jpeg", "webp"], "description": "Image format (default png)."},
        "max_dimension": {"type": "integer", "minimum": 64, "maximum": 8192, "description": "Downscale so the longer side is at most this many px."},
        "quality": {"type": "integer", "minimum": 1, "maximum": 100, "description": "JPEG quality (default 80)."},
        "display_id": {"type": ["integer", "string"], "description": "Display to capture (screencap -d); default: the phone's default display."}
    })
}

/// The schema of a screenshot's result (`android_screenshot`; `android_observe`'s `screenshot`).
pub fn output_schema() -> Value {
    let int = json!({"type": "integer"});
    json!({"type": "object",
    "required": ["screenshot_id", "file_ref", "download_url", "mime_type", "width", "height", "byte_size", "expires_at", "display", "scale", "blank", "secure_window"],
    "properties": {
        "screenshot_id": {"type": "string"}, "file_ref": {"type": "string"},
        "download_url": {"type": "string"}, "mime_type": {"type": "string"},
        "width": int, "height": int, "byte_size": int, "expires_at": int,
        "display": {"type": "object", "required": ["id", "chosen_by", "width", "height"], "properties": {
            "id": {"type": ["string", "null"]},
            "chosen_by": {"type": "string", "enum": ["requested", "default", "display_on", "first_listed"]},
            "width": int, "height": int
        }},
        "scale": {"type": "object", "required": ["x", "y"], "properties": {"x": {"type": "number"}, "y": {"type": "number"}}},
        "blank": {"type": "boolean"}, "secure_window": {"type": "boolean"},
        "hint": {"type": "string"}
    }})
}

/// `backend` of a screenshot: the raw dump, the phone's PNG, the phone's JPEG
/// ([`source::Source::backend`]).
pub const SCREENSHOT_BACKENDS: &[&str] = &["raw", "png", "jpeg_phone"];

/// A screenshot taken: the result, and the window read made with it (geometry and focus at
/// the capture).
pub struct Taken {
    /// The result as `android_screenshot` answers it.
    pub output: Output,
    /// The window read alongside the capture.
    pub moment: Moment,
    /// Where the frame came from (one of [`SCREENSHOT_BACKENDS`]).
    pub backend: &'static str,
}

/// Takes one screenshot (the whole of `android_screenshot`) and remembers its geometry under
/// `screenshot_id` (so gestures take coordinates in its pixel space). Errors as documented for
/// `android_screenshot` in `docs/tools.md`.
pub async fn take(
    args: Args,
    ctx: &ToolCtx<'_>,
    screenshot_id: String,
) -> Result<Taken, DeviceError> {
    let format = args.format;
    let max_dim = args.max_dimension;
    let quality = args.quality.unwrap_or(80).clamp(1, 100);
    let display_arg = args.display_id.map(DisplayId::into_arg);
    // Read fresh, never from the cache: a rotation or size change since the last read must
    // not survive into this screenshot's geometry (field bug 25). Read alongside the
    // capture, not before it: in series it added one shell round trip to every screenshot
    // (PNG passthrough 1.035x -> 1.067x of a bare `screencap -p`, docs/performance.md).
    // PNG passthrough: png, and no `max_dimension` below the last known display size (a
    // stale size only costs a re-encode, never a wrong image: `process*` check the frame).
    let passthrough = format == Format::Png
        && max_dim.is_none_or(|m| ctx.display.get().is_some_and(|(w, h)| m >= w.max(h)));
    let quirk = &ctx.policy.quirks.screenshot_capture;
    let at = source::attachment_of(ctx.link.kind(), ctx.route);
    let fallback = source::choose(at, quirk, passthrough);
    // The phone's JPEG as it is: jpeg, and no `max_dimension` below the display (as above).
    let jpeg_as_is = format == Format::Jpeg
        && max_dim.is_none_or(|m| ctx.display.get().is_some_and(|(w, h)| m >= w.max(h)));
    let (fingerprint, jpeg_verdict) = match source::wants_jpeg(at, quirk, jpeg_as_is) {
        true => jpeg::known(ctx).await,
        false => (None, Some(false)),
    };
    let first = match jpeg_verdict {
        Some(false) => fallback,
        _ => Source::Jpeg,
    };
    // The slot is held until the frame is processed (the end of this call).
    let (mut source, mut raw_slot) = source::with_raw_slot(first, quirk);
    let (geometry, mut captured) = tokio::join!(
        read_moment(ctx),
        capture_right_display(ctx, display_arg.clone(), source)
    );
    if source == Source::Jpeg {
        // The output's magic says whether this build knows `-j`: a JPEG, or its usage text
        // (then the old path, in this same call). Other failures (an unknown display id, the
        // link) say nothing about the build.
        match &captured {
            Ok(_) if jpeg_verdict.is_none() => jpeg::record(fingerprint.as_deref(), true),
            Err(DeviceError::InvalidScreenshot(_)) => {
                jpeg::record(fingerprint.as_deref(), false);
                (source, raw_slot) = source::with_raw_slot(fallback, quirk);
                captured = capture_right_display(ctx, display_arg, source).await;
            }
            _ => {}
        }
    }
    let moment = geometry?;
    let geometry = moment.geometry;
    let (frame, display_arg, display_choice, other_size) = match captured {
        Ok(c) => c,
        Err(e) => return Err(went_away_or(ctx, e).await),
    };
    let display = other_size.unwrap_or(geometry.size);
    crate::adb::meter::note_backend(source.backend());
    let work = move || match frame {
        Captured::Png(png) => {
            let (_, info) = png_check::find_png(&png)
                .map_err(|e| DeviceError::InvalidScreenshot(e.to_string()))?;
            process(png, (info.width, info.height), format, max_dim, quality)
        }
        Captured::Raw(raw) => process_raw(raw, format, max_dim, quality),
        // As it is; no decoder on the box to judge `blank` ([`jpeg`]).
        Captured::Jpeg(jpeg, size) => Ok((jpeg, size, false)),
    };
    let processed = {
        // A raw dump keeps the slot it was captured under; a passthrough only scans rows.
        let _slot = match raw_slot {
            Some(slot) => Some(slot),
            None if passthrough || source == Source::Jpeg => None,
            None => source::frame_slot().await,
        };
        if passthrough || source == Source::Jpeg {
            // Row scans only (the all-black check), or nothing (the phone's JPEG): not queued
            // behind others' encodes.
            tokio::task::spawn_blocking(work)
                .await
                .map_err(|_| DeviceError::Internal("image task failed".into()))?
        } else {
            codec_thread::run(work).await?
        }
    };
    let (bytes, size, blank) = match processed {
        Ok(p) => p,
        Err(e) => return Err(went_away_or(ctx, e).await),
    };
    let secure_window = if blank {
        focused_secure(ctx).await
    } else {
        None
    };
    let file =
        file_refs::store(ctx, bytes, format.mime(), format.ext(), FileOrigin::Capture).await?;
    ctx.last_seen.add_shot(
        screenshot_id.clone(),
        ShotGeometry {
            image: size,
            display,
            frame: geometry,
        },
    );
    let hint = blank.then_some(if secure_window == Some(true) {
        "the focused window is FLAG_SECURE: Android blacks it out of screenshots; read it with android_ui_tree"
    } else {
        "the frame is all black (screen off, or a protected surface); check android_device_status or use android_ui_tree"
    });
    let output = Output {
        screenshot_id,
        file,
        width: size.0,
        height: size.1,
        display: ShotDisplay {
            id: display_arg,
            chosen_by: display_choice,
            width: display.0,
            height: display.1,
        },
        scale: Scale {
            x: f64::from(display.0) / f64::from(size.0.max(1)),
            y: f64::from(display.1) / f64::from(size.1.max(1)),
        },
        blank,
        secure_window: secure_window.unwrap_or(false),
        hint,
    };
    Ok(Taken {
        output,
        moment,
        backend: source.backend(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_output_schema(out: &Output) {
        let v = serde_json::to_value(out).unwrap();
        let validator = jsonschema::validator_for(&output_schema()).unwrap();
        assert!(validator.is_valid(&v), "{v}");
    }

    #[test]
    fn display_ids_from_surfaceflinger() {
        let text = "Display 4619827259835644672 (HWC display 0): port=0 pnpId=GGL displayName=\"EMU_display_0\"\nDisplay 4619827551948147202 (HWC display 1): port=1\n";
        assert_eq!(
            parse_display_ids(text),
            vec!["4619827259835644672", "4619827551948147202"]
        );
        assert!(parse_display_ids("Display 0 (internal, primary)").contains(&"0".to_string()));
        assert!(parse_display_ids("garbage").is_empty());
    }

    #[test]
    fn each_display_state_from_its_own_block() {
        let compact = "Display Devices: size=2\n  DisplayDeviceInfo{\"Built-in Screen\": uniqueId=\"local:4619827551948147201\", 1840 x 2208, density 420, state OFF}\n    mState=OFF\n  DisplayDeviceInfo{\"Outer Screen\": uniqueId=\"local:4619827551948147202\", 1080 x 2092, density 420, state ON}\n    mState=ON\n\nLogical Displays: size=2\n    mState=ON\n";
        let b = parse_display_blocks(compact);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].id, "4619827551948147201");
        assert_eq!(b[0].state.as_deref(), Some("OFF"));
        assert_eq!(b[0].size, Some((1840, 2208)));
        assert_eq!(b[1].state.as_deref(), Some("ON"));
        assert_eq!(b[1].size, Some((1080, 2092)));
        let one_line =
            "  DisplayDeviceInfo{\"x\": uniqueId=\"local:1\", 10 x 20, density 1, state DOZE}\n";
        assert_eq!(
            parse_display_blocks(one_line)[0].state.as_deref(),
            Some("DOZE")
        );
    }

    #[test]
    fn outputs_match_the_schema() {
        let mut out = Output {
            screenshot_id: "shot_1".into(),
            file: IssuedFile {
                file_ref: "r".into(),
                download_url: "/files/refs/r".into(),
                mime_type: "image/png".into(),
                byte_size: 10,
                expires_at: 1,
            },
            width: 540,
            height: 1200,
            display: ShotDisplay {
                id: None,
                chosen_by: "default",
                width: 1080,
                height: 2400,
            },
            scale: Scale { x: 2.0, y: 2.0 },
            blank: false,
            secure_window: false,
            hint: None,
        };
        assert_output_schema(&out);
        out.blank = true;
        out.hint = Some("black");
        out.display.id = Some("0".into());
        assert_output_schema(&out);
    }
}
