//! The phone's own JPEG (`screencap -j`, `backend: "jpeg_phone"`) for screenshots over slow
//! links.
//!
//! Android 16's `screencap` takes `-j` / `--jpeg` (AOSP `frameworks/base/cmds/screencap/
//! screencap.cpp`: `getopt_long(argc, argv, "apjhd:", …)`, `AndroidBitmap_compress(…,
//! ANDROID_BITMAP_COMPRESS_FORMAT_JPEG, 100, …)`) though its usage text still reads `[-ahp]`;
//! earlier builds answer `-j` with getopt's complaint and the usage, exit 1. So the SDK number
//! is not asked (a maker may backport or drop it): whether a build has it is seen once, on the
//! first capture that asks, by the output's JPEG magic (`FF D8 FF`), and kept box-wide per
//! build fingerprint (`ro.build.fingerprint`, read once per phone into its hints): every phone
//! of a build that lacks it takes the old path at once, without the failed try.
//!
//! A JPEG frame of a 1080x2400 UI is a fraction of the raw dump (10.4 MB) and of the phone's
//! PNG, so over Wi-Fi it moves in a fraction of the time; it is used only when the result can
//! be the phone's JPEG as it is (format `jpeg`, no downscale): the box has no JPEG decoder to
//! re-encode or resize it. Its size comes from the frame header (SOF); without the pixels the
//! box does not judge `blank`.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::device::error::DeviceError;
use crate::device::tools::ToolCtx;

/// `screencap`'s flag.
pub const FLAG: &str = "-j";
/// Bytes of output searched for the JPEG's start (text such as the multi-display warning may
/// precede it).
const SEARCH: usize = 4096;

/// Verdicts by build fingerprint: whether its `screencap` answers `-j` with a JPEG.
fn verdicts() -> &'static Mutex<HashMap<String, bool>> {
    static V: OnceLock<Mutex<HashMap<String, bool>>> = OnceLock::new();
    V.get_or_init(Mutex::default)
}

/// The bound phone's build fingerprint (read once per phone) and what is known of its
/// `screencap -j` (`None`: not tried yet). A failed read is "unknown fingerprint", which asks.
pub async fn known(ctx: &ToolCtx<'_>) -> (Option<String>, Option<bool>) {
    let fp = match ctx.hints.fingerprint() {
        Some(fp) => Some(fp),
        None => {
            let read = ctx
                .shell("getprop ro.build.fingerprint", Duration::from_secs(5), 4096)
                .await;
            let fp = read
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
                .filter(|f| !f.is_empty());
            if let Some(f) = &fp {
                ctx.hints.set_fingerprint(f.clone());
            }
            fp
        }
    };
    let verdict = fp.as_ref().and_then(|f| {
        verdicts()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(f)
            .copied()
    });
    (fp, verdict)
}

/// Records whether the build `fingerprint` answered `-j` with a JPEG.
pub fn record(fingerprint: Option<&str>, jpeg: bool) {
    if let Some(f) = fingerprint {
        if jpeg {
            tracing::info!(
                "this build's screencap takes -j (JPEG): screenshots over slow links use it"
            );
        } else {
            tracing::info!("this build's screencap does not take -j: screenshots keep the PNG");
        }
        verdicts()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(f.to_string(), jpeg);
    }
}

/// Where the JPEG starts in `screencap -j` output (its SOI and the next marker's `FF`), or the
/// error to fall back on.
pub fn find(bytes: &[u8]) -> Result<usize, DeviceError> {
    bytes[..bytes.len().min(SEARCH)]
        .windows(3)
        .position(|w| w == [0xFF, 0xD8, 0xFF])
        .ok_or_else(|| {
            DeviceError::InvalidScreenshot(format!(
                "screencap -j did not return a JPEG ({} bytes without its FF D8 FF start); nothing was stored",
                bytes.len()
            ))
        })
}

/// Width and height (px) from the first start-of-frame segment (SOF0–SOF15 but DHT `C4`, JPG
/// `C8` and DAC `CC`; ITU T.81 B.2.2), walking the marker segments from SOI.
pub fn size(jpeg: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    while i + 4 <= jpeg.len() {
        if jpeg[i] != 0xFF {
            return None;
        }
        let marker = jpeg[i + 1];
        if marker == 0xFF {
            i += 1; // fill byte
            continue;
        }
        let len = usize::from(u16::from_be_bytes([jpeg[i + 2], jpeg[i + 3]]));
        let sof = (0xC0..=0xCF).contains(&marker) && ![0xC4, 0xC8, 0xCC].contains(&marker);
        if sof {
            let seg = jpeg.get(i + 4..i + 2 + len)?;
            let h = u32::from(u16::from_be_bytes([*seg.get(1)?, *seg.get(2)?]));
            let w = u32::from(u16::from_be_bytes([*seg.get(3)?, *seg.get(4)?]));
            return (w > 0 && h > 0).then_some((w, h));
        }
        if marker == 0xDA || len < 2 {
            return None; // scan data before any frame header
        }
        i += 2 + len;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jpeg(w: u32, h: u32) -> Vec<u8> {
        let pixels = vec![200u8; (w * h * 4) as usize];
        let view = xagent_frame_codec::View {
            pixels: &pixels,
            width: w,
            height: h,
        };
        xagent_frame_codec::reencode(view, xagent_frame_codec::Encoding::Jpeg, None, 100)
            .unwrap()
            .0
    }

    #[test]
    fn the_frame_header_gives_the_size_after_text_and_markers() {
        let j = jpeg(108, 240);
        assert_eq!(find(&j).unwrap(), 0);
        assert_eq!(size(&j), Some((108, 240)));
        let mut warned = b"[Warning] Multiple displays were found\n".to_vec();
        warned.extend_from_slice(&j);
        let at = find(&warned).unwrap();
        assert_eq!(size(&warned[at..]), Some((108, 240)));
    }

    #[test]
    fn usage_text_and_other_images_are_not_a_jpeg() {
        let usage = b"screencap: invalid option -- 'j'\nusage: screencap [-hp] [-d display-id] [FILENAME]\n";
        assert!(find(usage).is_err());
        assert!(find(b"\x89PNG\r\n\x1a\n").is_err());
        assert!(find(&[]).is_err());
        // Truncated or scan-first data has no size.
        assert_eq!(size(&[0xFF, 0xD8, 0xFF, 0xDA, 0, 2]), None);
        assert_eq!(size(&jpeg(8, 8)[..20]), None);
    }
}
