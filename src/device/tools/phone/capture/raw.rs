//! The raw `screencap` dump (no `-p`): a header of little-endian u32 words — width, height,
//! pixel format, and from Android 9 on a colour-space word — then exactly
//! `width * height * bytes_per_pixel` bytes, row padding removed. Source: AOSP
//! `frameworks/base/cmds/screencap/screencap.cpp` (`write(fd, &w, 4)` … then the rows), notes in
//! `/work/shared/fixtures/screencap/RAW_HEADER_NOTES.md`. The header size is told by the length
//! (12 or 16 bytes before a payload of the announced size), not by the Android release.

use crate::device::error::DeviceError;

/// Android `PixelFormat` values `screencap` writes (`system/graphics.h`, `PixelFormat.java`).
const RGBA_8888: u32 = 1;
const RGBX_8888: u32 = 2;
const RGB_888: u32 = 3;
const RGB_565: u32 = 4;
const BGRA_8888: u32 = 5;

/// Largest side a raw header may announce (px); more is not a phone's frame.
const MAX_SIDE: u32 = 16_384;

/// A raw frame as captured: the whole buffer (anything before the header kept, so nothing is
/// copied) and where its pixels start.
#[derive(Debug)]
pub struct RawFrame {
    /// The captured bytes.
    pub bytes: Vec<u8>,
    /// Offset of the first pixel in `bytes`.
    pub start: usize,
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
    /// Android pixel format (1 RGBA_8888, 2 RGBX_8888, 3 RGB_888, 4 RGB_565, 5 BGRA_8888).
    pub format: u32,
}

fn bytes_per_pixel(format: u32) -> Option<usize> {
    match format {
        RGBA_8888 | RGBX_8888 | BGRA_8888 => Some(4),
        RGB_888 => Some(3),
        RGB_565 => Some(2),
        _ => None,
    }
}

fn word(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// How far into the output a header is looked for after text (the multi-display warning that
/// `screencap` prints first on foldables, field bug 7, is ~400 bytes).
const TEXT_BEFORE_MAX: usize = 4096;

/// Finds the dump in `bytes`: at the start, else right after a line of text in the first
/// [`TEXT_BEFORE_MAX`] bytes. Returns the frame, or the bytes back when there is none.
pub fn find(bytes: Vec<u8>) -> Result<RawFrame, Vec<u8>> {
    let mut bytes = match parse_at(bytes, 0) {
        Ok(f) => return Ok(f),
        Err(b) => b,
    };
    let scan = bytes.len().min(TEXT_BEFORE_MAX);
    let newlines: Vec<usize> = (0..scan).filter(|&i| bytes[i] == b'\n').collect();
    for nl in newlines.into_iter().rev() {
        bytes = match parse_at(bytes, nl + 1) {
            Ok(f) => return Ok(f),
            Err(b) => b,
        };
    }
    Err(bytes)
}

/// Bytes of header [`announced_len`] needs (width, height, format).
pub const ANNOUNCE_HEAD: usize = 12;

/// The whole dump's length (bytes) as announced by a header at the very start of `head`, taking
/// the longer (16-byte) header; `None` when the start is no header (text first, a PNG), so the
/// capture is read without a size. Used only to size the read buffer, never trusted for parsing.
pub fn announced_len(head: &[u8]) -> Option<usize> {
    let (w, h, f) = (word(head, 0)?, word(head, 4)?, word(head, 8)?);
    if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE {
        return None;
    }
    (w as usize)
        .checked_mul(h as usize)?
        .checked_mul(bytes_per_pixel(f)?)?
        .checked_add(16)
}

/// Reads the header at `at` of `bytes`: the frame when a 16- or 12-byte header there
/// announces a known pixel format and exactly the payload that follows, else the bytes back.
pub fn parse_at(bytes: Vec<u8>, at: usize) -> Result<RawFrame, Vec<u8>> {
    let header = (|| {
        let (w, h, f) = (
            word(&bytes, at)?,
            word(&bytes, at + 4)?,
            word(&bytes, at + 8)?,
        );
        if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE {
            return None;
        }
        let payload = (w as usize)
            .checked_mul(h as usize)?
            .checked_mul(bytes_per_pixel(f)?)?;
        let rest = bytes.len().checked_sub(at)?;
        [16, 12]
            .into_iter()
            .find(|hdr| rest.checked_sub(*hdr) == Some(payload))
            .map(|hdr| (w, h, f, at + hdr))
    })();
    match header {
        Some((width, height, format, start)) => Ok(RawFrame {
            bytes,
            start,
            width,
            height,
            format,
        }),
        None => Err(bytes),
    }
}

impl RawFrame {
    /// The pixels as 8-bit RGBA (alpha of RGBX/RGB/565 frames is not meaningful): returns the
    /// buffer and where the pixels start. RGBA/RGBX stay where they are; BGRA is swapped in
    /// place; RGB_888 and RGB_565 are expanded into a new buffer (the captured one is freed).
    pub fn into_rgba(self) -> Result<(Vec<u8>, usize), DeviceError> {
        let RawFrame {
            mut bytes,
            start,
            format,
            ..
        } = self;
        match format {
            RGBA_8888 => Ok((bytes, start)),
            RGBX_8888 => {
                // X is undefined; WebP would keep it as alpha.
                for px in bytes[start..].chunks_exact_mut(4) {
                    px[3] = 255;
                }
                Ok((bytes, start))
            }
            BGRA_8888 => {
                for px in bytes[start..].chunks_exact_mut(4) {
                    px.swap(0, 2);
                }
                Ok((bytes, start))
            }
            RGB_888 => Ok((
                bytes[start..]
                    .chunks_exact(3)
                    .flat_map(|p| [p[0], p[1], p[2], 255])
                    .collect(),
                0,
            )),
            RGB_565 => Ok((
                bytes[start..]
                    .chunks_exact(2)
                    .flat_map(|p| {
                        let v = u16::from_le_bytes([p[0], p[1]]);
                        let (r, g, b) = ((v >> 11) & 0x1f, (v >> 5) & 0x3f, v & 0x1f);
                        // Bit replication: 5/6-bit channels to the full 8-bit range.
                        [
                            ((r << 3) | (r >> 2)) as u8,
                            ((g << 2) | (g >> 4)) as u8,
                            ((b << 3) | (b >> 2)) as u8,
                            255,
                        ]
                    })
                    .collect(),
                0,
            )),
            other => Err(DeviceError::InvalidScreenshot(format!(
                "raw screencap pixel format {other} is not supported"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(w: u32, h: u32, f: u32, colorspace: bool, px: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for v in [w, h, f] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        if colorspace {
            out.extend_from_slice(&1u32.to_le_bytes());
        }
        for _ in 0..w * h {
            out.extend_from_slice(px);
        }
        out
    }

    #[test]
    fn both_header_sizes_by_length() {
        let f = parse_at(dump(3, 2, 1, true, &[1, 2, 3, 255]), 0).unwrap();
        assert_eq!((f.width, f.height, f.format, f.start), (3, 2, 1, 16));
        let f = parse_at(dump(3, 2, 1, false, &[1, 2, 3, 255]), 0).unwrap();
        assert_eq!(f.start, 12);
        let (buf, start) = f.into_rgba().unwrap();
        assert_eq!(&buf[start..start + 4], &[1, 2, 3, 255]);
    }

    #[test]
    fn other_layouts_become_rgba() {
        let bgra = parse_at(dump(1, 1, 5, true, &[10, 20, 30, 255]), 0).unwrap();
        let (buf, start) = bgra.into_rgba().unwrap();
        assert_eq!(&buf[start..], &[30, 20, 10, 255]);
        let rgb = parse_at(dump(2, 1, 3, true, &[7, 8, 9]), 0).unwrap();
        assert_eq!(
            rgb.into_rgba().unwrap(),
            (vec![7, 8, 9, 255, 7, 8, 9, 255], 0)
        );
        // Pure red in 565 is 0xF800.
        let red = parse_at(dump(1, 1, 4, false, &[0x00, 0xF8]), 0).unwrap();
        assert_eq!(red.into_rgba().unwrap().0, vec![255, 0, 0, 255]);
    }

    #[test]
    fn truncated_or_unknown_is_refused_with_the_bytes_back() {
        let mut short = dump(3, 2, 1, true, &[1, 2, 3, 255]);
        short.pop();
        assert_eq!(parse_at(short.clone(), 0).unwrap_err(), short);
        assert!(parse_at(dump(1, 1, 99, true, &[0; 4]), 0).is_err());
        assert!(parse_at(Vec::new(), 0).is_err());
        assert!(parse_at(dump(0, 0, 1, true, &[]), 0).is_err());
        // A PNG is not a raw dump.
        assert!(parse_at(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec(), 0).is_err());
    }

    #[test]
    fn announced_len_takes_the_long_header_and_refuses_text() {
        let d = dump(3, 2, 1, true, &[1, 2, 3, 255]);
        assert_eq!(announced_len(&d[..ANNOUNCE_HEAD]), Some(d.len()));
        let d = dump(3, 2, 4, false, &[0, 0]);
        assert_eq!(announced_len(&d), Some(16 + 12));
        assert_eq!(announced_len(b"[Warning] Multiple displays"), None);
        assert_eq!(announced_len(&dump(1, 1, 99, true, &[0; 4])), None);
        assert_eq!(announced_len(&[1, 0, 0]), None);
    }

    #[test]
    fn header_after_a_warning() {
        let mut bytes = b"[Warning] Multiple displays were found\n".to_vec();
        let at = bytes.len();
        bytes.extend(dump(2, 2, 1, true, &[0, 0, 0, 255]));
        let f = find(bytes).unwrap();
        assert_eq!(f.start, at + 16);
        assert!(find(b"no frame here\n".to_vec()).is_err());
    }
}
