//! Validation of `screencap -p` output before it is handed to anyone as an image.
//!
//! Input: the bytes `screencap -p` wrote to stdout. Output: where the PNG starts and its IHDR
//! width × height in pixels. Two real failure modes (field bugs 6 and 7):
//! * text-mode transport (`adb shell` through a PTY, old Windows adb) turns every `0A` into
//!   `0D 0A`, so the signature reads `89 50 4E 47 0D 0D 0A 1A` (or the reverse, `0D 0A` → `0A`);
//! * foldables print `[Warning] Multiple displays were found…` on stdout before the PNG.
//!
//! Source: PNG spec (signature, IHDR layout, CRC-32), AOSP
//! `frameworks/base/cmds/screencap/screencap.cpp`; captures
//! `screencap/phone-720x1612-files-app-srgb-sbit.png`,
//! `screencap/rockchip-tvbox-android7-1280x720-sbit-only.png`.

use thiserror::Error;

/// Dimensions from the IHDR chunk, in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PngInfo {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Why the bytes are not a usable PNG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum PngError {
    /// No bytes at all.
    #[error("screencap returned no bytes")]
    Empty,
    /// The signature shows LF↔CRLF translation: the transport was not binary-safe.
    #[error("PNG mangled by CRLF translation (use exec-out / a raw stream)")]
    CrlfMangled,
    /// No PNG signature anywhere in the bytes.
    #[error("no PNG signature in screencap output")]
    BadSignature,
    /// The first chunk is not a valid 13-byte IHDR with non-zero size and a correct CRC.
    #[error("PNG header chunk (IHDR) is invalid")]
    BadIhdr,
    /// The data ends before the IHDR or without an `IEND` chunk.
    #[error("PNG data is truncated")]
    Truncated,
    /// A chunk's CRC does not match its bytes: damaged in transit (a translated or dropped
    /// byte inside the image data leaves the header intact).
    #[error("PNG chunk {0} is damaged (CRC mismatch)")]
    DamagedChunk(&'static str),
}

const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
/// `\n` → `\r\n` applied to the signature (field bug 6).
const SIG_LF_TO_CRLF: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0D, 0x0A, 0x1A];
/// `\r\n` → `\n` applied to the signature.
const SIG_CRLF_TO_LF: [u8; 7] = [0x89, b'P', b'N', b'G', 0x0A, 0x1A, 0x0A];

/// Finds the PNG in `bytes` and checks it: returns the offset of the signature (text may precede
/// it) and the IHDR dimensions. The IHDR CRC is verified, and walking the chunk list by its
/// length fields must reach an `IEND` chunk inside the bytes (bytes after `IEND` are tolerated),
/// every chunk's CRC matching its type and data (a damaged byte anywhere is caught, not only in
/// the header). Cost: one signature search plus one CRC-32 pass over the bytes (`crc32fast`,
/// several GB/s: about a millisecond for a phone screenshot).
pub fn find_png(bytes: &[u8]) -> Result<(usize, PngInfo), PngError> {
    if bytes.is_empty() {
        return Err(PngError::Empty);
    }
    let Some(offset) = find(bytes, &SIGNATURE) else {
        if find(bytes, &SIG_LF_TO_CRLF).is_some() || find(bytes, &SIG_CRLF_TO_LF).is_some() {
            return Err(PngError::CrlfMangled);
        }
        return Err(PngError::BadSignature);
    };
    let png = &bytes[offset..];
    let ihdr = png.get(8..33).ok_or(PngError::Truncated)?;
    let (len, kind, data, crc) = (&ihdr[0..4], &ihdr[4..8], &ihdr[8..21], &ihdr[21..25]);
    if len != [0, 0, 0, 13] || kind != b"IHDR" || crc32(&ihdr[4..21]).to_be_bytes() != crc {
        return Err(PngError::BadIhdr);
    }
    let width = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
    let height = u32::from_be_bytes([data[4], data[5], data[6], data[7]]);
    if width == 0 || height == 0 {
        return Err(PngError::BadIhdr);
    }
    check_chunks(png, 33)?;
    Ok((offset, PngInfo { width, height }))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Follows the chunk lengths from `pos` (PNG spec §5.3: length, type, data, CRC) up to an
/// `IEND` chunk lying wholly inside `png`, checking each chunk's CRC on the way.
fn check_chunks(png: &[u8], mut pos: usize) -> Result<(), PngError> {
    while let Some(header) = png.get(pos..pos + 8) {
        let len = u32::from_be_bytes([header[0], header[1], header[2], header[3]]) as usize;
        let Some(next) = pos.checked_add(12).and_then(|p| p.checked_add(len)) else {
            return Err(PngError::Truncated);
        };
        if next > png.len() {
            return Err(PngError::Truncated);
        }
        let crc = &png[next - 4..next];
        if crc32(&png[pos + 4..next - 4]).to_be_bytes() != crc {
            return Err(PngError::DamagedChunk(chunk_name(&header[4..8])));
        }
        if &header[4..8] == b"IEND" {
            return Ok(());
        }
        pos = next;
    }
    Err(PngError::Truncated)
}

/// The chunk type for a message: the common ones by name, any other as `other`.
fn chunk_name(kind: &[u8]) -> &'static str {
    match kind {
        b"IDAT" => "IDAT",
        b"IEND" => "IEND",
        b"PLTE" => "PLTE",
        b"sBIT" => "sBIT",
        b"sRGB" => "sRGB",
        b"tEXt" => "tEXt",
        _ => "other",
    }
}

/// CRC-32 as PNG uses it (ISO-HDLC), from the `crc32fast` crate.
fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PHONE: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/screencap/phone-720x1612-files-app-srgb-sbit.png"
    ));
    const TVBOX: &[u8] = include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/screencap/rockchip-tvbox-android7-1280x720-sbit-only.png"
    ));

    #[test]
    fn real_screencaps() {
        assert_eq!(
            find_png(PHONE),
            Ok((
                0,
                PngInfo {
                    width: 720,
                    height: 1612
                }
            ))
        );
        assert_eq!(
            find_png(TVBOX),
            Ok((
                0,
                PngInfo {
                    width: 1280,
                    height: 720
                }
            ))
        );
    }

    #[test]
    fn field_bug_7_warning_text_before_png() {
        let warning = b"[Warning] Multiple displays were found, but no display id was specified! \
            Defaulting to the first display found, however this default is not guaranteed to be \
            consistent across captures. A display id should be specified.\n\
            A display ID can be specified with the [-d display-id] option.\n\
            See \"dumpsys SurfaceFlinger --display-id\" for valid display IDs.\n";
        let mut bytes = warning.to_vec();
        bytes.extend_from_slice(PHONE);
        let (offset, info) = find_png(&bytes).expect("png after warning");
        assert_eq!(offset, warning.len());
        assert_eq!((info.width, info.height), (720, 1612));
        assert_eq!(&bytes[offset..], PHONE);
    }

    #[test]
    fn field_bug_6_crlf_mangled() {
        let mut lf_to_crlf = Vec::with_capacity(PHONE.len() + 1024);
        for &b in PHONE {
            if b == 0x0A {
                lf_to_crlf.push(0x0D);
            }
            lf_to_crlf.push(b);
        }
        assert_eq!(
            &lf_to_crlf[..8],
            &[0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0D, 0x0A, 0x1A]
        );
        assert_eq!(find_png(&lf_to_crlf), Err(PngError::CrlfMangled));
        let crlf_to_lf: Vec<u8> = PHONE
            .iter()
            .enumerate()
            .filter(|(i, b)| !(**b == 0x0D && PHONE.get(i + 1) == Some(&0x0A)))
            .map(|(_, b)| *b)
            .collect();
        assert_eq!(find_png(&crlf_to_lf), Err(PngError::CrlfMangled));
    }

    #[test]
    fn broken_inputs() {
        assert_eq!(find_png(&[]), Err(PngError::Empty));
        assert_eq!(
            find_png(b"Error: Capture failed"),
            Err(PngError::BadSignature)
        );
        assert_eq!(find_png(&PHONE[..20]), Err(PngError::Truncated));
        assert_eq!(
            find_png(&PHONE[..PHONE.len() - 100]),
            Err(PngError::Truncated)
        );
        let mut bad_crc = PHONE.to_vec();
        bad_crc[20] ^= 1; // height byte changed, CRC no longer matches
        assert_eq!(find_png(&bad_crc), Err(PngError::BadIhdr));
        // Header intact, a byte of the image data damaged (a variant of field bug 6).
        let mut damaged = PHONE.to_vec();
        let mid = damaged.len() / 2;
        damaged[mid] ^= 0x5a;
        assert_eq!(find_png(&damaged), Err(PngError::DamagedChunk("IDAT")));
        let mut not_ihdr = PHONE.to_vec();
        not_ihdr[12] = b'X';
        assert_eq!(find_png(&not_ihdr), Err(PngError::BadIhdr));
        let mut trailing = PHONE.to_vec();
        trailing.extend_from_slice(b"\n");
        assert!(find_png(&trailing).is_ok());
        assert_eq!(
            PngError::CrlfMangled.to_string(),
            "PNG mangled by CRLF translation (use exec-out / a raw stream)"
        );
    }
}
