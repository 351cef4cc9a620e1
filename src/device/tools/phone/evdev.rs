//! Touches as the kernel's multi-touch protocol B, packed as `input_event` records for a
//! touchscreen node (pure: bytes and coordinates, no I/O; the stream is [`super::touch`]).
//!
//! - Record: `struct input_event`, little-endian — a `struct timeval` (two `long`s), then
//!   `__u16 type`, `__u16 code`, `__s32 value`: 24 bytes from a 64-bit process, 16 from a
//!   32-bit one (`linux/input.h`; the kernel reads a 32-bit writer's records in the compat
//!   layout, `drivers/input/input-compat.c` `input_event_from_user`). The time is left zero:
//!   the input core stamps injected events itself (`drivers/input/evdev.c` `evdev_write` calls
//!   `input_inject_event`).
//! - Protocol B (`Documentation/input/multi-touch-protocol.rst`): `ABS_MT_SLOT` selects the
//!   contact, a fresh `ABS_MT_TRACKING_ID` starts it, `ABS_MT_POSITION_X/Y` move it, tracking id
//!   `-1` lifts it, `SYN_REPORT` ends each frame; `BTN_TOUCH` goes 1 with the first contact and
//!   0 with the last (`linux/input-event-codes.h` for every code).
//! - Display px → panel values: the inverse of Android's `TouchInputMapper` (AOSP
//!   `frameworks/native/services/inputflinger/reader/mapper/TouchInputMapper.cpp`): per axis
//!   scale `natural size / (max - min + 1)`, then the display rotation's swap and mirror. Each
//!   point aims at the middle of the panel values that map to the asked pixel.

use crate::device::parse::getevent::{
    AxisRange, ABS_MT_POSITION_X, ABS_MT_POSITION_Y, ABS_MT_SLOT, ABS_MT_TRACKING_ID,
};

const EV_SYN: u16 = 0x00;
const EV_KEY: u16 = 0x01;
const EV_ABS: u16 = 0x03;
const SYN_REPORT: u16 = 0x00;
const BTN_TOUCH: u16 = 0x14a;

/// The touchscreen the connector writes, as `getevent -lp` and `ro.product.cpu.abi` told it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panel {
    /// Device node, e.g. `/dev/input/event1`.
    pub node: String,
    /// `ABS_MT_POSITION_X` range.
    pub x: AxisRange,
    /// `ABS_MT_POSITION_Y` range.
    pub y: AxisRange,
    /// Contact slots (`ABS_MT_SLOT` max + 1).
    pub slots: u32,
    /// Record size of the phone's userland: 24 (64-bit) or 16 (32-bit).
    pub record: usize,
}

/// Record size for a primary ABI (`ro.product.cpu.abi`): 24 for `arm64-v8a`, `x86_64`,
/// `riscv64`; 16 for `armeabi-v7a`, `armeabi`, `x86`; `None` for anything else.
pub fn record_size(abi: &str) -> Option<usize> {
    match abi.trim() {
        "arm64-v8a" | "x86_64" | "riscv64" => Some(24),
        "armeabi-v7a" | "armeabi" | "x86" => Some(16),
        _ => None,
    }
}

/// A point in the display's current frame, px.
pub type Px = (i64, i64);

/// Maps display px to panel values, given the display's size in its current rotation (px)
/// and the rotation (quarter turns).
#[derive(Debug, Clone, Copy)]
pub struct Mapping<'a> {
    panel: &'a Panel,
    natural: (f64, f64),
    rotation: u8,
}

impl<'a> Mapping<'a> {
    /// The mapping of `panel` on a display of `size` px at `rotation` (unknown: 0).
    pub fn new(panel: &'a Panel, size: (u32, u32), rotation: Option<u8>) -> Mapping<'a> {
        let rotation = rotation.unwrap_or(0) & 3;
        let (w, h) = (f64::from(size.0), f64::from(size.1));
        let natural = if rotation % 2 == 1 { (h, w) } else { (w, h) };
        Mapping {
            panel,
            natural,
            rotation,
        }
    }

    /// Panel value for pixel index `d` along an axis of `extent` px: counted from `min`
    /// (`forward`) or back from `max`. The mapper floors `offset × scale`, so the offsets
    /// that land on `d` are `[d / scale, (d + 1) / scale)`: the one nearest its middle is
    /// taken (a panel coarser than the display may have none: the nearest then).
    fn axis(d: i64, extent: f64, r: AxisRange, forward: bool) -> i32 {
        let scale = extent / f64::from(r.max - r.min + 1);
        let (lo, hi) = (d as f64 / scale, (d + 1) as f64 / scale);
        let mid = (lo + hi) / 2.0;
        let mut u = mid.floor();
        if u < lo {
            u += 1.0;
        }
        if u >= hi {
            u = mid.round();
        }
        let v = if forward {
            f64::from(r.min) + u
        } else {
            f64::from(r.max) - u
        };
        v.clamp(f64::from(r.min), f64::from(r.max)) as i32
    }

    /// Panel `(x, y)` of display point `p`.
    pub fn raw(&self, p: Px) -> (i32, i32) {
        let (nw, nh) = self.natural;
        let (x, y) = (self.panel.x, self.panel.y);
        match self.rotation {
            0 => (Self::axis(p.0, nw, x, true), Self::axis(p.1, nh, y, true)),
            1 => (Self::axis(p.1, nw, x, false), Self::axis(p.0, nh, y, true)),
            2 => (Self::axis(p.0, nw, x, false), Self::axis(p.1, nh, y, false)),
            _ => (Self::axis(p.1, nw, x, true), Self::axis(p.0, nh, y, false)),
        }
    }
}

/// Builds protocol-B frames as record bytes.
#[derive(Debug)]
pub struct Frames {
    record: usize,
    bytes: Vec<u8>,
}

impl Frames {
    /// An empty batch of records of `record` bytes.
    pub fn new(record: usize) -> Frames {
        Frames {
            record,
            bytes: Vec::new(),
        }
    }

    fn push(&mut self, ty: u16, code: u16, value: i32) {
        self.bytes.resize(self.bytes.len() + self.record - 8, 0);
        self.bytes.extend_from_slice(&ty.to_le_bytes());
        self.bytes.extend_from_slice(&code.to_le_bytes());
        self.bytes.extend_from_slice(&value.to_le_bytes());
    }

    /// Contact `slot` goes down at panel `raw` with tracking id `id`; `first`: no other
    /// contact is down (`BTN_TOUCH` 1).
    pub fn down(&mut self, slot: u32, id: i32, raw: (i32, i32), first: bool) -> &mut Self {
        self.push(EV_ABS, ABS_MT_SLOT, slot as i32);
        self.push(EV_ABS, ABS_MT_TRACKING_ID, id);
        self.push(EV_ABS, ABS_MT_POSITION_X, raw.0);
        self.push(EV_ABS, ABS_MT_POSITION_Y, raw.1);
        if first {
            self.push(EV_KEY, BTN_TOUCH, 1);
        }
        self
    }

    /// Contact `slot` moves to panel `raw`.
    pub fn moved(&mut self, slot: u32, raw: (i32, i32)) -> &mut Self {
        self.push(EV_ABS, ABS_MT_SLOT, slot as i32);
        self.push(EV_ABS, ABS_MT_POSITION_X, raw.0);
        self.push(EV_ABS, ABS_MT_POSITION_Y, raw.1);
        self
    }

    /// Contact `slot` lifts; `last`: no other contact stays down (`BTN_TOUCH` 0).
    pub fn up(&mut self, slot: u32, last: bool) -> &mut Self {
        self.push(EV_ABS, ABS_MT_SLOT, slot as i32);
        self.push(EV_ABS, ABS_MT_TRACKING_ID, -1);
        if last {
            self.push(EV_KEY, BTN_TOUCH, 0);
        }
        self
    }

    /// Ends the frame (`SYN_REPORT`).
    pub fn sync(&mut self) -> &mut Self {
        self.push(EV_SYN, SYN_REPORT, 0);
        self
    }

    /// The records so far (whole records only).
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn panel(xmax: i32, ymax: i32) -> Panel {
        Panel {
            node: "/dev/input/event1".into(),
            x: AxisRange { min: 0, max: xmax },
            y: AxisRange { min: 0, max: ymax },
            slots: 10,
            record: 24,
        }
    }

    /// What `TouchInputMapper` makes of a raw point (the forward map the sim also applies).
    fn display(p: &Panel, raw: (i32, i32), size: (u32, u32), rot: u8) -> (i64, i64) {
        let (nw, nh) = if rot % 2 == 1 {
            (f64::from(size.1), f64::from(size.0))
        } else {
            (f64::from(size.0), f64::from(size.1))
        };
        let xs = nw / f64::from(p.x.max - p.x.min + 1);
        let ys = nh / f64::from(p.y.max - p.y.min + 1);
        let (x, y) = (f64::from(raw.0), f64::from(raw.1));
        let (xmax, ymax) = (f64::from(p.x.max), f64::from(p.y.max));
        let (dx, dy) = match rot {
            0 => (x * xs, y * ys),
            1 => (y * ys, (xmax - x) * xs),
            2 => ((xmax - x) * xs, (ymax - y) * ys),
            _ => ((ymax - y) * ys, x * xs),
        };
        (dx.floor() as i64, dy.floor() as i64)
    }

    #[test]
    fn every_rotation_maps_back_to_the_asked_pixel() {
        // Mi Mix 2 (panel = display), Galaxy S5 (4096 values for 1080/1920 px), Red Magic 6
        // (one value more than pixels).
        for (p, natural) in [
            (panel(1079, 2159), (1080, 2160)),
            (panel(4095, 4095), (1080, 1920)),
            (panel(1080, 2400), (1080, 2400)),
        ] {
            for rot in 0..4u8 {
                let size = if rot % 2 == 1 {
                    (natural.1, natural.0)
                } else {
                    natural
                };
                let m = Mapping::new(&p, size, Some(rot));
                for pt in [
                    (0, 0),
                    (1, 2),
                    (540, 700),
                    (i64::from(size.0) - 1, i64::from(size.1) - 1),
                ] {
                    assert_eq!(
                        display(&p, m.raw(pt), size, rot),
                        pt,
                        "{p:?} rot {rot} {pt:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn records_are_24_or_16_bytes_in_protocol_b_order() {
        assert_eq!(
            (record_size("arm64-v8a"), record_size("armeabi-v7a")),
            (Some(24), Some(16))
        );
        assert_eq!(record_size("mips"), None);
        for size in [24, 16] {
            let mut f = Frames::new(size);
            let tap = f
                .down(0, 1, (10, 20), true)
                .sync()
                .up(0, true)
                .sync()
                .take();
            // down: slot, id, x, y, BTN_TOUCH; SYN; up: slot, id -1, BTN_TOUCH; SYN.
            assert_eq!(tap.len(), 10 * size);
            let rec = |i: usize| {
                let r = &tap[i * size + size - 8..(i + 1) * size];
                (
                    u16::from_le_bytes([r[0], r[1]]),
                    u16::from_le_bytes([r[2], r[3]]),
                    i32::from_le_bytes([r[4], r[5], r[6], r[7]]),
                )
            };
            assert_eq!(rec(1), (EV_ABS, ABS_MT_TRACKING_ID, 1));
            assert_eq!(rec(2), (EV_ABS, ABS_MT_POSITION_X, 10));
            assert_eq!(rec(5), (EV_SYN, SYN_REPORT, 0));
            assert_eq!(rec(7), (EV_ABS, ABS_MT_TRACKING_ID, -1));
            assert!(
                tap[..size - 8].iter().all(|b| *b == 0),
                "the time is left zero"
            );
        }
    }
}
