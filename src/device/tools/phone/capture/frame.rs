//! The captured frame, on the codec thread ([`super::codec_thread`]; a PNG passthrough on the
//! blocking pool): the all-black check, optional downscaling and
//! re-encoding through `xagent-frame-codec` (the pixel work, built at opt-level 3). A raw
//! `screencap` dump ([`super::raw`]) is used in place (no decode, no copy for RGBA/RGBX); a PNG is
//! decoded into one RGBA buffer. The PNG passthrough (`png` without a smaller `max_dimension`)
//! keeps the captured bytes untouched. Frame-sized buffers go back to
//! [`xagent_frame_codec::reuse`] for the next screenshot, which hands them to the OS once the
//! connector is idle.

use xagent_frame_codec::{decode, is_blank_png, reencode, reuse, CodecError, Encoding, View};

use super::Format;
use crate::device::error::DeviceError;

fn encoding(format: Format) -> Encoding {
    match format {
        Format::Png => Encoding::Png,
        Format::Jpeg => Encoding::Jpeg,
        Format::Webp => Encoding::Webp,
    }
}

fn device_error(e: CodecError) -> DeviceError {
    match e {
        CodecError::Invalid(m) => DeviceError::InvalidScreenshot(m),
        CodecError::Internal(m) => DeviceError::Internal(m),
    }
}

/// A processed image: bytes, size in px, all-black.
pub type Processed = xagent_frame_codec::Encoded;

/// CPU-bound image work, run on the codec thread: blank check, optional downscale/re-encode.
pub fn process(
    png: Vec<u8>,
    size: (u32, u32),
    format: Format,
    max_dim: Option<u32>,
    quality: u8,
) -> Result<Processed, DeviceError> {
    fixed_mmap_threshold();
    let resize = max_dim.filter(|m| *m < size.0.max(size.1));
    if format == Format::Png && resize.is_none() {
        let blank = is_blank_png(&png);
        return Ok((png, size, blank));
    }
    decode(&png)
        .and_then(|frame| {
            drop(png);
            let encoded = reencode(frame.view(), encoding(format), resize, quality);
            reuse::give_back(frame.pixels);
            encoded
        })
        .map_err(device_error)
}

/// CPU-bound work on a raw `screencap` dump ([`super::raw::RawFrame`]): the pixels are read
/// where they lie in the captured buffer (RGBA/RGBX; other layouts are converted once), then
/// checked, optionally downscaled and encoded as `format`.
pub fn process_raw(
    raw: super::raw::RawFrame,
    format: Format,
    max_dim: Option<u32>,
    quality: u8,
) -> Result<Processed, DeviceError> {
    fixed_mmap_threshold();
    let (width, height) = (raw.width, raw.height);
    let resize = max_dim.filter(|m| *m < width.max(height));
    raw.into_rgba().and_then(|(buf, start)| {
        let view = View {
            pixels: &buf[start..],
            width,
            height,
        };
        let encoded = reencode(view, encoding(format), resize, quality).map_err(device_error);
        reuse::give_back(buf);
        encoded
    })
}

/// Buffers from this size up are mapped on their own and unmapped on `free`: above the
/// transport's 1 MiB WRTE payloads (`MAX_PAYLOAD`), so those are recycled from the heap within
/// a capture instead of being mapped, faulted in and unmapped ten times per raw frame.
const MMAP_THRESHOLD: usize = 2 * 1024 * 1024;

/// Free heap top glibc keeps between frees (bytes): room for one recycled 1 MiB payload, so
/// the next WRTE reuses its pages. `malloc_trim` does not shrink a thread arena's top, so this
/// is also what each arena may keep idle (4 MiB here left idle RSS at 25-28 MB).
const TRIM_THRESHOLD: usize = 3 * 512 * 1024;

/// Fixes glibc's mmap and trim thresholds (process-wide, once): frames, their PNGs and the
/// downscaled copy are then their own mappings and go back to the OS on `free`, whichever
/// thread frees them. Left dynamic, glibc raises the threshold to the largest freed mapping (up
/// to 32 MB), and later frames land in per-thread heap arenas that stay resident.
fn fixed_mmap_threshold() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only sets glibc tunables; it takes the allocator's own lock.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD as libc::c_int);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png_of(width: u32, height: u32, px: [u8; 4]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let data: Vec<u8> = (0..width * height).flat_map(|_| px).collect();
        let mut w = enc.write_header().unwrap();
        w.write_image_data(&data).unwrap();
        w.finish().unwrap();
        out
    }

    #[test]
    fn jpeg_downscale_keeps_size_colour_and_blank_flag() {
        let png = png_of(300, 600, [200, 40, 40, 255]);
        let (bytes, size, blank) = process(png, (300, 600), Format::Jpeg, Some(100), 80).unwrap();
        assert_eq!(size, (50, 100));
        assert!(!blank);
        assert_eq!(&bytes[..2], &[0xFF, 0xD8]);
        let (bytes, size, blank) = process(
            png_of(64, 64, [0, 0, 0, 255]),
            (64, 64),
            Format::Webp,
            None,
            80,
        )
        .unwrap();
        assert_eq!(size, (64, 64));
        assert!(blank);
        assert_eq!(&bytes[..4], b"RIFF");
    }

    #[test]
    fn png_passthrough_is_the_same_buffer() {
        let png = png_of(8, 8, [1, 2, 3, 255]);
        let ptr = png.as_ptr();
        let (bytes, _, blank) = process(png, (8, 8), Format::Png, None, 80).unwrap();
        assert_eq!(bytes.as_ptr(), ptr);
        assert!(blank);
        let (bytes, size, _) = process(
            png_of(8, 8, [90, 2, 3, 255]),
            (8, 8),
            Format::Png,
            Some(4),
            80,
        )
        .unwrap();
        assert_eq!(size, (4, 4));
        assert_eq!(&bytes[1..4], b"PNG");
    }
}
