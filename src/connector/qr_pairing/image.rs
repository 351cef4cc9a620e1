//! The QR code of a pairing offer, drawn two ways: a PNG (as a data URL for the frontend,
//! `qr_code_image`, spec §8.8; as an image of the operator console) and Unicode half blocks for a terminal (`pair` CLI). The module
//! matrix comes from the `qrcode` crate (error correction M, as Android Studio's pairing QR).

use base64::Engine;
use qrcode::render::unicode::Dense1x2;
use qrcode::{Color, EcLevel, QrCode};

/// Pixels per QR module in the PNG: a version-3 code (29 modules + 2×4 quiet zone) is 296 px,
/// which a phone camera reads from a screen at arm's length.
pub const PNG_MODULE_PX: usize = 8;
/// Quiet zone around the code, modules (ISO/IEC 18004 asks for 4).
const QUIET_ZONE: usize = 4;

/// Why a QR code cannot be drawn (the text is too long for any QR version).
#[derive(Debug, thiserror::Error)]
#[error("the QR code cannot be drawn: {0}")]
pub struct QrImageError(String);

fn matrix(text: &str) -> Result<QrCode, QrImageError> {
    QrCode::with_error_correction_level(text.as_bytes(), EcLevel::M)
        .map_err(|e| QrImageError(e.to_string()))
}

/// `data:image/png;base64,…` of `text`'s QR code ([`png`]). Errors: [`QrImageError`].
pub fn png_data_url(text: &str) -> Result<String, QrImageError> {
    Ok(format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png(text)?)
    ))
}

/// The PNG of `text`'s QR code: 8-bit grey, black on white, with the quiet zone,
/// [`PNG_MODULE_PX`] pixels a module (the frontend's data URL, the operator console's image).
/// Errors: [`QrImageError`].
pub fn png(text: &str) -> Result<Vec<u8>, QrImageError> {
    let code = matrix(text)?;
    let modules = code.width();
    let colors = code.to_colors();
    let side = (modules + 2 * QUIET_ZONE) * PNG_MODULE_PX;
    let mut pixels = vec![0xffu8; side * side];
    for y in 0..modules {
        for x in 0..modules {
            if colors[y * modules + x] != Color::Dark {
                continue;
            }
            for dy in 0..PNG_MODULE_PX {
                let row = (y + QUIET_ZONE) * PNG_MODULE_PX + dy;
                let start = row * side + (x + QUIET_ZONE) * PNG_MODULE_PX;
                pixels[start..start + PNG_MODULE_PX].fill(0);
            }
        }
    }
    let mut out = Vec::new();
    let px = u32::try_from(side).map_err(|e| QrImageError(e.to_string()))?;
    let mut enc = png::Encoder::new(&mut out, px, px);
    enc.set_color(png::ColorType::Grayscale);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
        .and_then(|mut w| {
            w.write_image_data(&pixels)?;
            w.finish()
        })
        .map_err(|e| QrImageError(e.to_string()))?;
    Ok(out)
}

/// `text`'s QR code as lines of Unicode half blocks (two modules a character), light on dark
/// inverted so it scans from a dark terminal too: the quiet zone is drawn light. Errors:
/// [`QrImageError`].
pub fn terminal_text(text: &str) -> Result<String, QrImageError> {
    Ok(matrix(text)?
        .render::<Dense1x2>()
        .dark_color(Dense1x2::Light)
        .light_color(Dense1x2::Dark)
        .quiet_zone(true)
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_is_a_decodable_square_of_the_expected_size() {
        let url = png_data_url("WIFI:T:ADB;S:xagent-AbCdE12345;P:0123456789abcdef;;").unwrap();
        let b64 = url.strip_prefix("data:image/png;base64,").unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let reader = decoder.read_info().unwrap();
        let info = reader.info();
        assert_eq!(info.width, info.height);
        assert!(info.width >= 200, "big enough to scan: {}", info.width);
        assert_eq!(info.width as usize % PNG_MODULE_PX, 0);
    }

    #[test]
    fn terminal_drawing_has_one_line_per_two_modules() {
        let text = terminal_text("WIFI:T:ADB;S:xagent-AbCdE12345;P:0123456789abcdef;;").unwrap();
        let code = matrix("WIFI:T:ADB;S:xagent-AbCdE12345;P:0123456789abcdef;;").unwrap();
        let rows = (code.width() + 2 * QUIET_ZONE).div_ceil(2);
        assert_eq!(text.lines().count(), rows);
    }
}
