//! The pixel work of a screenshot, in its own crate so that it alone is built at opt-level 3
//! (the root `Cargo.toml` says why: the SIMD kernels of `fast_image_resize` are generic and are
//! compiled where they are instantiated, here). A PNG is decoded with `png` straight into one
//! RGBA buffer; frames are downscaled with `fast_image_resize` (SSE4.1/AVX2 on x86-64, NEON on
//! aarch64) and encoded with `jpeg-encoder` (RGBA read in place), `image-webp` (lossless WebP) or
//! `png`. No allocation besides the decoded frame, the downscaled copy and the output, and the
//! frame-sized ones are reused from one screenshot to the next ([`reuse`]).

use std::io::Cursor;

pub mod reuse;

use fast_image_resize::images::Image;
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions};

/// What went wrong with an image.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The phone's PNG does not decode (the connector answers `invalid_screenshot`).
    #[error("{0}")]
    Invalid(String),
    /// Resizing or encoding failed (`internal_error`).
    #[error("{0}")]
    Internal(String),
}

/// What [`reencode`] returns: the encoded bytes, the output size (px) and whether the frame is
/// all black.
pub type Encoded = (Vec<u8>, (u32, u32), bool);

/// Output encoding of [`reencode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// PNG, 8-bit RGB (a screenshot's alpha is opaque).
    Png,
    /// Baseline JPEG at a quality of 1–100 (IJG scale), 4:2:0, optimized Huffman tables.
    Jpeg,
    /// Lossless WebP.
    Webp,
}

/// A pixel counts as black when every channel is at most this.
const BLACK_LEVEL: u8 = 8;

/// Chroma subsampling of the JPEG: 4:2:0, as libjpeg's `cjpeg`, ImageMagick and `sips` use below
/// quality 90 (screens are mostly flat colour and text edges; halving chroma costs little).
const JPEG_SAMPLING: jpeg_encoder::SamplingFactor = jpeg_encoder::SamplingFactor::F_2_2;

/// A decoded frame: 8-bit RGBA, row-major, no padding.
pub struct Rgba {
    /// The pixels, 4 bytes each.
    pub pixels: Vec<u8>,
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
}

/// A frame's pixels wherever they live (a decoded PNG, a raw dump's payload, a downscaled copy):
/// 8-bit RGBA or RGBX, row-major, no padding.
#[derive(Clone, Copy)]
pub struct View<'a> {
    /// The pixels, 4 bytes each.
    pub pixels: &'a [u8],
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
}

impl Rgba {
    /// The frame as a [`View`].
    pub fn view(&self) -> View<'_> {
        View {
            pixels: &self.pixels,
            width: self.width,
            height: self.height,
        }
    }
}

/// Decodes a PNG of any colour type and depth into 8-bit RGBA. `screencap` writes 8-bit RGBA
/// (AOSP `screencap.cpp`), decoded in place; other layouts are expanded once after decoding.
pub fn decode(png: &[u8]) -> Result<Rgba, CodecError> {
    let bad = |e: png::DecodingError| CodecError::Invalid(format!("PNG does not decode: {e}"));
    let mut decoder = png::Decoder::new(Cursor::new(png));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = decoder.read_info().map_err(bad)?;
    let len = reader
        .output_buffer_size()
        .ok_or_else(|| CodecError::Invalid("PNG dimensions overflow the address space".into()))?;
    let mut buf = reuse::take_buffer(len);
    buf.resize(len, 0);
    let info = match reader.next_frame(&mut buf) {
        Ok(info) => info,
        Err(e) => {
            reuse::give_back(buf);
            return Err(bad(e));
        }
    };
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
pub fn is_blank_png(png: &[u8]) -> bool {
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
pub fn is_dark(px: &[u8], stride: usize, colors: usize) -> bool {
    px.chunks(stride)
        .all(|p| p.iter().take(colors).all(|c| *c <= BLACK_LEVEL))
}

/// The output size of fitting `size` into a `max`×`max` box, aspect ratio kept: the ratio of the
/// tighter side, each side rounded to the nearest px and at least 1 (the rule of `image`'s
/// `DynamicImage::resize`, which earlier versions used; the geometry contract depends on it).
pub fn fit(size: (u32, u32), max: u32) -> (u32, u32) {
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
fn downscale(src: View<'_>, to: (u32, u32)) -> Result<Rgba, CodecError> {
    let internal =
        |e: &dyn std::fmt::Display| CodecError::Internal(format!("image resizing failed: {e}"));
    let src_view = fast_image_resize::images::ImageRef::new(
        src.width,
        src.height,
        src.pixels,
        PixelType::U8x4,
    )
    .map_err(|e| internal(&e))?;
    let len = to.0 as usize * to.1 as usize * 4;
    let mut pixels = reuse::take_buffer(len);
    pixels.resize(len, 0);
    let mut dst =
        Image::from_vec_u8(to.0, to.1, pixels, PixelType::U8x4).map_err(|e| internal(&e))?;
    let options = ResizeOptions::new()
        .resize_alg(ResizeAlg::Convolution(FilterType::Bilinear))
        .use_alpha(false);
    let mut resizer = reuse::take_resizer();
    let resized = resizer.resize(&src_view, &mut dst, &options);
    reuse::give_back_resizer(resizer);
    resized.map_err(|e| internal(&e))?;
    Ok(Rgba {
        width: to.0,
        height: to.1,
        pixels: dst.into_vec(),
    })
}

/// Checks `frame` for all-black (stops at the first lit pixel), downscales it to fit a
/// `resize`×`resize` box if given (into a reused buffer, given back after encoding), and encodes
/// it. Returns the bytes, the output size (px) and
/// whether the frame is all black. Errors: [`CodecError::Internal`] (JPEG sides above 65 535 px).
pub fn reencode(
    frame: View<'_>,
    format: Encoding,
    resize: Option<u32>,
    quality: u8,
) -> Result<Encoded, CodecError> {
    // The frame is at hand: the check stops at the first lit pixel.
    let blank = is_dark(frame.pixels, 4, 3);
    let small = match resize {
        Some(m) => Some(downscale(frame, fit((frame.width, frame.height), m))?),
        None => None,
    };
    let frame = small.as_ref().map_or(frame, Rgba::view);
    let out_size = (frame.width, frame.height);
    let encoded = encode(frame, format, quality);
    if let Some(small) = small {
        reuse::give_back(small.pixels);
    }
    Ok((encoded?, out_size, blank))
}

fn encode(img: View<'_>, format: Encoding, quality: u8) -> Result<Vec<u8>, CodecError> {
    let failed =
        |e: &dyn std::fmt::Display| CodecError::Internal(format!("image encoding failed: {e}"));
    let mut out = Vec::new();
    match format {
        Encoding::Jpeg => {
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
        Encoding::Webp => {
            image_webp::WebPEncoder::new(&mut out)
                .encode(
                    img.pixels,
                    img.width,
                    img.height,
                    image_webp::ColorType::Rgba8,
                )
                .map_err(|e| failed(&e))?;
        }
        Encoding::Png => {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_keeps_the_aspect_ratio_like_image_resize() {
        assert_eq!(fit((1080, 2400), 1280), (576, 1280));
        assert_eq!(fit((1080, 2400), 1024), (461, 1024));
        assert_eq!(fit((2400, 1080), 1024), (1024, 461));
        assert_eq!(fit((5000, 1), 64), (64, 1));
    }

    #[test]
    fn jpeg_sides_above_65535_px_are_an_error_not_a_panic() {
        let px = vec![9u8; 70_000 * 4];
        let view = View {
            pixels: &px,
            width: 70_000,
            height: 1,
        };
        assert!(matches!(
            reencode(view, Encoding::Jpeg, None, 80),
            Err(CodecError::Internal(_))
        ));
    }
}
