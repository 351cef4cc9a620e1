//! The captured frame, on the blocking pool: the all-black check, optional downscaling and
//! re-encoding. A raw `screencap` dump ([`super::raw`]) is used in place (no decode, no copy
//! for RGBA/RGBX); a PNG is decoded with `png` straight into one RGBA buffer. Both are downscaled with
//! `fast_image_resize` (SIMD: SSE4.1/AVX2 on x86-64, NEON on aarch64), and encoded with
//! `jpeg-encoder` (JPEG, RGBA read in place), `image-webp` (lossless WebP) or `png`. The PNG
//! passthrough (`png` without a smaller `max_dimension`) keeps the captured bytes untouched.
//! After re-encoding, the freed frame buffers are handed back to the OS (see [`release_memory`]).

use std::io::Cursor;

use fast_image_resize::images::Image;
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

use super::Format;
use crate::device::error::DeviceError;

/// A pixel counts as black when every channel is at most this.
const BLACK_LEVEL: u8 = 8;

/// Chroma subsampling of the JPEG: 4:2:0, as libjpeg's `cjpeg`, ImageMagick and `sips` use below
/// quality 90 (screens are mostly flat colour and text edges; halving chroma costs little).
const JPEG_SAMPLING: jpeg_encoder::SamplingFactor = jpeg_encoder::SamplingFactor::F_2_2;

/// A decoded frame: 8-bit RGBA, row-major, no padding.
struct Rgba {
    pixels: Vec<u8>,
    width: u32,
    height: u32,
}

/// A frame's pixels wherever they live (a decoded PNG, a raw dump's payload, a downscaled copy):
/// 8-bit RGBA or RGBX, row-major, no padding.
#[derive(Clone, Copy)]
struct View<'a> {
    pixels: &'a [u8],
    width: u32,
    height: u32,
}

impl Rgba {
    fn view(&self) -> View<'_> {
        View {
            pixels: &self.pixels,
            width: self.width,
            height: self.height,
        }
    }
}

/// Decodes a PNG of any colour type and depth into 8-bit RGBA. `screencap` writes 8-bit RGBA
/// (AOSP `screencap.cpp`), decoded in place; other layouts are expanded once after decoding.
fn decode(png: &[u8]) -> Result<Rgba, DeviceError> {
    let bad =
        |e: png::DecodingError| DeviceError::InvalidScreenshot(format!("PNG does not decode: {e}"));
    let mut decoder = png::Decoder::new(Cursor::new(png));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(bad)?;
    let len = reader.output_buffer_size().ok_or_else(|| {
        DeviceError::InvalidScreenshot("PNG dimensions overflow the address space".into())
    })?;
    let mut buf = vec![0u8; len];
    let info = reader.next_frame(&mut buf).map_err(bad)?;
    buf.truncate(info.buffer_size());
    let pixels = match info.color_type {
        png::ColorType::Rgba => buf,
        png::ColorType::Rgb => buf
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        png::ColorType::GrayscaleAlpha => buf
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        // Grayscale (indexed is expanded to RGB/RGBA by EXPAND).
        _ => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
    };
    Ok(Rgba {
        pixels,
        width: info.width,
        height: info.height,
    })
}

/// Whether every pixel is black (all colour channels ≤ [`BLACK_LEVEL`]). Decodes row by row
/// and stops at the first non-black pixel, so an ordinary frame costs one row, not a full decode.
fn is_blank_png(png: &[u8]) -> bool {
    let mut decoder = png::Decoder::new(Cursor::new(png));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let Ok(mut reader) = decoder.read_info() else {
        return false;
    };
    let (color, _) = reader.output_color_type();
    let (stride, colors) = match color {
        png::ColorType::Rgba => (4, 3),
        png::ColorType::Rgb => (3, 3),
        png::ColorType::GrayscaleAlpha => (2, 1),
        _ => (1, 1),
    };
    while let Ok(Some(row)) = reader.next_row() {
        if !is_dark(row.data(), stride, colors) {
            return false;
        }
    }
    true
}

/// Whether every pixel of `px` (`stride` bytes each, the first `colors` of them colour) is black.
fn is_dark(px: &[u8], stride: usize, colors: usize) -> bool {
    px.chunks(stride)
        .all(|p| p.iter().take(colors).all(|c| *c <= BLACK_LEVEL))
}

/// The output size of fitting `size` into a `max`×`max` box, aspect ratio kept: the ratio of the
/// tighter side, each side rounded to the nearest px and at least 1 (the rule of `image`'s
/// `DynamicImage::resize`, which earlier versions used; the geometry contract depends on it).
fn fit(size: (u32, u32), max: u32) -> (u32, u32) {
    let ratio = f64::min(
        f64::from(max) / f64::from(size.0),
        f64::from(max) / f64::from(size.1),
    );
    let side = |v: u32| ((f64::from(v) * ratio).round() as u32).max(1);
    (side(size.0), side(size.1))
}

/// Downscales with a bilinear (triangle) convolution whose support widens with the scale
/// factor, so every source pixel contributes (no aliasing of thin text strokes). Alpha is
/// treated as a plain channel: screenshots are opaque.
fn downscale(src: View<'_>, to: (u32, u32)) -> Result<Rgba, DeviceError> {
    let internal =
        |e: &dyn std::fmt::Display| DeviceError::Internal(format!("image resizing failed: {e}"));
    let src_view = fast_image_resize::images::ImageRef::new(
        src.width,
        src.height,
        src.pixels,
        PixelType::U8x4,
    )
    .map_err(|e| internal(&e))?;
    let mut dst = Image::new(to.0, to.1, PixelType::U8x4);
    let options = ResizeOptions::new()
        .resize_alg(ResizeAlg::Convolution(FilterType::Bilinear))
        .use_alpha(false);
    Resizer::new()
        .resize(&src_view, &mut dst, &options)
        .map_err(|e| internal(&e))?;
    Ok(Rgba {
        width: to.0,
        height: to.1,
        pixels: dst.into_vec(),
    })
}

/// A processed image: bytes, size in px, all-black.
pub type Processed = (Vec<u8>, (u32, u32), bool);

/// CPU-bound image work, run on the blocking pool: blank check, optional downscale/re-encode.
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
    let result = decode(&png).and_then(|frame| {
        drop(png);
        reencode(frame.view(), format, resize, quality)
    });
    release_memory();
    result
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
    let result = raw.into_rgba().and_then(|(buf, start)| {
        let view = View {
            pixels: &buf[start..],
            width,
            height,
        };
        reencode(view, format, resize, quality)
    });
    release_memory();
    result
}

fn reencode(
    frame: View<'_>,
    format: Format,
    resize: Option<u32>,
    quality: u8,
) -> Result<Processed, DeviceError> {
    // The frame is at hand: the check stops at the first lit pixel.
    let blank = is_dark(frame.pixels, 4, 3);
    let small;
    let frame = match resize {
        Some(m) => {
            small = downscale(frame, fit((frame.width, frame.height), m))?;
            small.view()
        }
        None => frame,
    };
    let out_size = (frame.width, frame.height);
    Ok((encode(frame, format, quality)?, out_size, blank))
}

fn encode(img: View<'_>, format: Format, quality: u8) -> Result<Vec<u8>, DeviceError> {
    let failed =
        |e: &dyn std::fmt::Display| DeviceError::Internal(format!("image encoding failed: {e}"));
    let mut out = Vec::new();
    match format {
        Format::Jpeg => {
            let too_big = || failed(&"JPEG sides are at most 65535 px");
            let w = u16::try_from(img.width).map_err(|_| too_big())?;
            let h = u16::try_from(img.height).map_err(|_| too_big())?;
            let mut enc = jpeg_encoder::Encoder::new(&mut out, quality);
            enc.set_sampling_factor(JPEG_SAMPLING);
            // Averaged chroma (not the top-left sample) keeps coloured text edges clean.
            enc.set_chroma_subsampling_method(jpeg_encoder::ChromaSubsamplingMethod::Average);
            // Huffman tables fitted to the image: 5–10 % fewer bytes for one more pass.
            enc.set_optimized_huffman_tables(true);
            enc.encode(img.pixels, w, h, jpeg_encoder::ColorType::Rgba)
                .map_err(|e| failed(&e))?;
        }
        Format::Webp => {
            image_webp::WebPEncoder::new(&mut out)
                .encode(
                    img.pixels,
                    img.width,
                    img.height,
                    image_webp::ColorType::Rgba8,
                )
                .map_err(|e| failed(&e))?;
        }
        Format::Png => {
            // RGB, as before: a screenshot's alpha is opaque and only costs bytes.
            let rgb: Vec<u8> = img
                .pixels
                .chunks_exact(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect();
            let mut enc = png::Encoder::new(&mut out, img.width, img.height);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            enc.write_header()
                .and_then(|mut w| {
                    w.write_image_data(&rgb)?;
                    w.finish()
                })
                .map_err(|e| failed(&e))?;
        }
    }
    Ok(out)
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

/// Hands the pages of freed image buffers back to the OS. A 1080x2400 frame is a 10 MB buffer;
/// glibc raises its mmap threshold after the first such buffer is freed, so later ones come from
/// the (per-thread) heap arenas and stay resident after `free` — 81 MB after 66 screenshots
/// before this. `malloc_trim(0)` releases the free pages of every arena (glibc ≥ 2.8);
/// `docs/performance.md` has the figures against the alternatives.
fn release_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks glibc's own free lists; no Rust object is touched.
    unsafe {
        libc::malloc_trim(0);
    }
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
    fn fit_keeps_the_aspect_ratio_like_image_resize() {
        assert_eq!(fit((1080, 2400), 1280), (576, 1280));
        assert_eq!(fit((1080, 2400), 1024), (461, 1024));
        assert_eq!(fit((2400, 1080), 1024), (1024, 461));
        assert_eq!(fit((5000, 1), 64), (64, 1));
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
