//! Draws the UI tree into an RGBA frame and encodes it the way `screencap` does.
//! PNG layout follows the real captures in `fixtures/screencap/*.png`: 8-bit RGBA,
//! `IHDR sRGB sBIT IDAT… IEND` (Android 8+). Raw layout: `fixtures/screencap/RAW_HEADER_NOTES.md`
//! (AOSP `frameworks/base/cmds/screencap/screencap.cpp`).

use crate::font;
use crate::ui::Node;

/// An RGBA8 frame, row-major, `width * height * 4` bytes.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Pixels.
    pub rgba: Vec<u8>,
}

impl Frame {
    fn fill_rect(&mut self, x1: i32, y1: i32, x2: i32, y2: i32, rgba: [u8; 4]) {
        let (w, h) = (self.width as i32, self.height as i32);
        let (x1, x2) = (x1.clamp(0, w), x2.clamp(0, w));
        let (y1, y2) = (y1.clamp(0, h), y2.clamp(0, h));
        if x1 >= x2 {
            return;
        }
        for y in y1..y2 {
            let row = (y * w) as usize * 4;
            for px in self.rgba[row + x1 as usize * 4..row + x2 as usize * 4].chunks_exact_mut(4) {
                px.copy_from_slice(&rgba);
            }
        }
    }

    /// Colour of one pixel.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        let i = ((y * self.width + x) * 4) as usize;
        [
            self.rgba[i],
            self.rgba[i + 1],
            self.rgba[i + 2],
            self.rgba[i + 3],
        ]
    }
}

/// Paints `root` on a black frame of `width` x `height`. Text is drawn with the
/// crate's 5x7 bitmap font (`font.rs`) in the node's ink colour. `black` paints nothing
/// (FLAG_SECURE windows come out all black, field bug 8).
pub fn draw(root: &Node, width: u32, height: u32, black: bool) -> Frame {
    let mut frame = Frame {
        width,
        height,
        rgba: [0, 0, 0, 255].repeat((width * height) as usize),
    };
    if !black {
        paint(&mut frame, root);
    }
    frame
}

fn paint(frame: &mut Frame, node: &Node) {
    let b = node.bounds;
    if let Some(c) = node.fill {
        frame.fill_rect(b.x1, b.y1, b.x2, b.y2, c);
    }
    if node.focused {
        let t = 6;
        let c = [0x1a, 0x73, 0xe8, 0xff];
        frame.fill_rect(b.x1, b.y2 - t, b.x2, b.y2, c);
    }
    if !node.text.is_empty() {
        let longest = node
            .text
            .lines()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(1)
            .max(1) as i32;
        let fit = (b.x2 - b.x1 - 24) / (6 * longest);
        let scale = ((b.y2 - b.y1) / 24).min(fit).clamp(2, 6);
        let x = b.x1 + 12;
        let y = b.y1 + ((b.y2 - b.y1) - 7 * scale) / 2;
        let mut put = |x, y, rgba| frame.put(x, y, rgba);
        font::draw_text(&mut put, x, y.max(b.y1), scale, &node.text, node.ink, b.x2);
    }
    for child in &node.children {
        paint(frame, child);
    }
}

impl Frame {
    /// Sets one pixel if inside the frame (used by the font).
    pub fn put(&mut self, x: i32, y: i32, rgba: [u8; 4]) {
        if x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height {
            let i = ((y as u32 * self.width + x as u32) * 4) as usize;
            self.rgba[i..i + 4].copy_from_slice(&rgba);
        }
    }

    /// `screencap -p`: PNG, RGBA8, with `sRGB` (when `srgb`) and `sBIT` chunks.
    pub fn to_png(&self, srgb: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let mut enc = png::Encoder::new(&mut out, self.width, self.height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        if srgb {
            enc.set_source_srgb(png::SrgbRenderingIntent::Perceptual);
        }
        let written = enc.write_header().and_then(|mut w| {
            w.write_chunk(png::chunk::sBIT, &[8, 8, 8, 8])?;
            w.write_image_data(&self.rgba)?;
            w.finish()
        });
        if written.is_err() {
            out.clear();
        }
        out
    }

    /// `screencap -j` (Android 16): a baseline JFIF at quality 100, as `saveImage` asks
    /// `AndroidBitmap_compress` for (AOSP `frameworks/base/cmds/screencap/screencap.cpp`).
    pub fn to_jpeg(&self) -> Vec<u8> {
        let view = xagent_frame_codec::View {
            pixels: &self.rgba,
            width: self.width,
            height: self.height,
        };
        xagent_frame_codec::reencode(view, xagent_frame_codec::Encoding::Jpeg, None, 100)
            .map(|(bytes, _, _)| bytes)
            .unwrap_or_default()
    }

    /// `screencap` without `-p`: header `width, height, format=1 (RGBA_8888)` and, when
    /// `colorspace`, a fourth word `1` (sRGB), all u32 LE, then the pixels.
    pub fn to_raw(&self, colorspace: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.rgba.len());
        let mut words = vec![self.width, self.height, 1];
        if colorspace {
            words.push(1);
        }
        for w in words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(&self.rgba);
        out
    }
}
