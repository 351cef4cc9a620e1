//! The captured frame, on the blocking pool: the all-black check, optional downscaling and
//! re-encoding with the `image` crate.

use std::io::Cursor;

use super::Format;
use crate::device::error::DeviceError;

/// A pixel counts as black when every channel is at most this.
const BLACK_LEVEL: u8 = 8;

fn decode(png: &[u8]) -> Result<image::DynamicImage, DeviceError> {
    image::load_from_memory_with_format(png, image::ImageFormat::Png)
        .map_err(|e| DeviceError::InvalidScreenshot(format!("PNG does not decode: {e}")))
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
        let dark = row
            .data()
            .chunks(stride)
            .all(|px| px.iter().take(colors).all(|c| *c <= BLACK_LEVEL));
        if !dark {
            return false;
        }
    }
    true
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
    let blank = is_blank_png(&png);
    let resize = max_dim.filter(|m| *m < size.0.max(size.1));
    if format == Format::Png && resize.is_none() {
        return Ok((png, size, blank));
    }
    let mut img = decode(&png)?;
    if let Some(m) = resize {
        img = img.resize(m, m, image::imageops::FilterType::Triangle);
    }
    let out_size = (img.width(), img.height());
    Ok((encode(&img, format, quality)?, out_size, blank))
}

fn encode(img: &image::DynamicImage, format: Format, quality: u8) -> Result<Vec<u8>, DeviceError> {
    let mut out = Cursor::new(Vec::new());
    let rgb = image::DynamicImage::ImageRgb8(img.to_rgb8());
    let res = match format {
        Format::Png => rgb.write_to(&mut out, image::ImageFormat::Png),
        Format::Webp => image::DynamicImage::ImageRgba8(img.to_rgba8())
            .write_to(&mut out, image::ImageFormat::WebP),
        Format::Jpeg => rgb.write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(
            &mut out, quality,
        )),
    };
    res.map_err(|e| DeviceError::Internal(format!("image encoding failed: {e}")))?;
    Ok(out.into_inner())
}
