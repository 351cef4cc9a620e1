//! The phone's touchscreen input device: `/dev/input/eventN` nodes whose `getevent -lp` is a
//! real capture (`tests/fixtures/getevent/`), and the records written to the touchscreen's node
//! read the way the kernel and Android's input reader read them.
//!
//! - Writing (`drivers/input/evdev.c` `evdev_write`): a write shorter than one `input_event` is
//!   `EINVAL`; otherwise every whole record is injected and the count of whole bytes returned
//!   (a trailing partial record makes the writer's retry of the rest `EINVAL`). A record is
//!   `struct input_event` — `struct timeval` (two longs) + `__u16 type` + `__u16 code` +
//!   `__s32 value`: 24 bytes from a 64-bit process, 16 from a 32-bit one (the compat layout of
//!   `drivers/input/input-compat.c` `input_event_from_user`). The time written is ignored: the
//!   input core stamps injected events itself.
//! - Multi-touch protocol B (`Documentation/input/multi-touch-protocol.rst`): `ABS_MT_SLOT`
//!   selects a slot (an out-of-range slot is ignored, `input_handle_abs_event`), a
//!   non-negative `ABS_MT_TRACKING_ID` starts a contact in it, `-1` lifts it, positions update
//!   the slot's contact, and nothing happens until `SYN_REPORT` ends the frame. Events before a
//!   `SYN_REPORT` that never comes change nothing, as on a phone.
//! - Raw panel values become display px the way `TouchInputMapper` maps them: scale
//!   `natural size / (max - min + 1)` per axis, then the display's rotation (AOSP
//!   `frameworks/native/services/inputflinger/reader/mapper/TouchInputMapper.cpp`, the
//!   `DISPLAY_ORIENTATION_90/180/270` cases of `cookPointerData`).
//! - Finished gestures (every contact lifted) are told apart by ViewConfiguration's numbers
//!   (`frameworks/base/core/java/android/view/ViewConfiguration.java`: touch slop 8 dp, long
//!   press timeout 400–500 ms): one finger that stayed within the slop is a tap (a long press
//!   from 500 ms), one that moved a swipe, two fingers a pinch. They act on the virtual UI as
//!   `input tap` / `input swipe` do and are recorded for the control API (`touches`).

use serde::Serialize;

/// `EV_SYN`, `EV_KEY`, `EV_ABS` (`linux/input-event-codes.h`).
const EV_SYN: u16 = 0;
const EV_ABS: u16 = 3;
const SYN_REPORT: u16 = 0;
const ABS_MT_SLOT: u16 = 0x2f;
const ABS_MT_POSITION_X: u16 = 0x35;
const ABS_MT_POSITION_Y: u16 = 0x36;
const ABS_MT_TRACKING_ID: u16 = 0x39;

/// A touchscreen capture the sim can present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capture {
    /// Name for `--touchscreen` / `POST /v1/state {"touchscreen": …}`.
    pub name: &'static str,
    /// `getevent -lp` as captured.
    pub getevent: &'static str,
    /// Every `/dev/input/event*` node of the capture.
    pub nodes: &'static [&'static str],
    /// The touchscreen's node.
    pub touch_node: &'static str,
    /// `ABS_MT_POSITION_X` min, max.
    pub x: (i32, i32),
    /// `ABS_MT_POSITION_Y` min, max.
    pub y: (i32, i32),
    /// `ABS_MT_SLOT` max + 1.
    pub slots: i32,
    /// The phone's userland is 32-bit (`ro.product.cpu.abi` `armeabi-v7a`): 16-byte records.
    pub userland_32: bool,
}

/// The captures (`tests/fixtures/getevent/`, rows in `SOURCES.tsv`).
pub const CAPTURES: &[Capture] = &[
    Capture {
        name: "mimix2",
        getevent: include_str!("../../tests/fixtures/getevent/xiaomi-mimix2-lineage17-getevent-pl.txt"),
        nodes: &[
            "/dev/input/event0",
            "/dev/input/event1",
            "/dev/input/event2",
            "/dev/input/event3",
            "/dev/input/event4",
            "/dev/input/event5",
            "/dev/input/event6",
        ],
        touch_node: "/dev/input/event1",
        x: (0, 1079),
        y: (0, 2159),
        slots: 10,
        userland_32: false,
    },
    Capture {
        name: "galaxy-s5",
        getevent: include_str!(
            "../../tests/fixtures/getevent/samsung-galaxy-s5-sec-touchscreen-getevent-lp-PARTIAL.txt"
        ),
        nodes: &["/dev/input/event2"],
        touch_node: "/dev/input/event2",
        x: (0, 4095),
        y: (0, 4095),
        slots: 10,
        userland_32: true,
    },
    Capture {
        name: "redmagic6",
        getevent: include_str!(
            "../../tests/fixtures/getevent/nubia-redmagic6-nx669j-getevent-lp-event3.txt"
        ),
        nodes: &["/dev/input/event3"],
        touch_node: "/dev/input/event3",
        x: (0, 1080),
        y: (0, 2400),
        slots: 10,
        userland_32: false,
    },
];

/// The capture named `name`.
pub fn capture(name: &str) -> Option<&'static Capture> {
    CAPTURES.iter().find(|c| c.name == name)
}

/// `EINVAL` of `write(2)` to an input node: fewer bytes than one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Einval;

/// What kind of gesture the reader saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TouchKind {
    /// One finger, within the slop, under 500 ms.
    Tap,
    /// One finger, within the slop, 500 ms or more.
    LongPress,
    /// One finger that moved.
    Swipe,
    /// Two fingers.
    Pinch,
}

/// A finished gesture as the control API lists it (display px, in the rotation of its frames).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Touch {
    /// Kind.
    pub kind: TouchKind,
    /// Where the (first) finger went down, `[x, y]` px.
    pub from: [i32; 2],
    /// Where it lifted.
    pub to: [i32; 2],
    /// First down to last lift, ms (wall clock of the frames).
    pub duration_ms: u64,
    /// Fingers.
    pub fingers: u32,
    /// Pinch: distance between the two fingers at the end ÷ at the start.
    pub scale: Option<f64>,
    /// The node written.
    pub node: String,
}

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    id: Option<i32>,
    x: Option<i32>,
    y: Option<i32>,
}

#[derive(Debug, Clone)]
struct Track {
    first: (f64, f64),
    last: (f64, f64),
    max_move: f64,
}

/// The reader's state of one touchscreen: slots as the kernel keeps them, changes of the frame
/// in progress, and the gesture since the first finger went down.
#[derive(Debug, Clone)]
pub struct Reader {
    capture: &'static Capture,
    slot: usize,
    slots: Vec<Slot>,
    pending: Vec<Slot>,
    pending_slot: usize,
    started: Option<std::time::Instant>,
    tracks: Vec<Option<Track>>,
    fingers: u32,
}

/// What a frame did: a gesture ended.
pub type Ended = Option<Touch>;

impl Reader {
    /// A reader of `capture`'s touchscreen with no contacts.
    pub fn new(capture: &'static Capture) -> Reader {
        let n = capture.slots.max(1) as usize;
        Reader {
            capture,
            slot: 0,
            slots: vec![Slot::default(); n],
            pending: vec![Slot::default(); n],
            pending_slot: 0,
            started: None,
            tracks: vec![None; n],
            fingers: 0,
        }
    }

    /// Record size written by this phone's userland, bytes.
    pub fn record_size(&self) -> usize {
        if self.capture.userland_32 {
            16
        } else {
            24
        }
    }

    /// Feeds one write: [`Einval`] for fewer bytes than one record, else the whole
    /// records are read and the bytes taken returned with the gestures that ended; a trailing
    /// partial record is left to the writer (whose retry of it is then `EINVAL`).
    pub fn write(
        &mut self,
        bytes: &[u8],
        rotation: u32,
        natural: (u32, u32),
    ) -> Result<(usize, Vec<Touch>), Einval> {
        let size = self.record_size();
        if bytes.len() < size {
            return Err(Einval);
        }
        let mut ended = Vec::new();
        let whole = bytes.len() / size * size;
        for rec in bytes[..whole].chunks_exact(size) {
            let t = &rec[size - 8..];
            let ty = u16::from_le_bytes([t[0], t[1]]);
            let code = u16::from_le_bytes([t[2], t[3]]);
            let value = i32::from_le_bytes([t[4], t[5], t[6], t[7]]);
            if let Some(touch) = self.event(ty, code, value, rotation, natural) {
                ended.push(touch);
            }
        }
        Ok((whole, ended))
    }

    fn event(&mut self, ty: u16, code: u16, value: i32, rot: u32, natural: (u32, u32)) -> Ended {
        match (ty, code) {
            (EV_ABS, ABS_MT_SLOT) => {
                if value >= 0 && (value as usize) < self.pending.len() {
                    self.pending_slot = value as usize;
                }
                None
            }
            (EV_ABS, ABS_MT_TRACKING_ID) => {
                let s = &mut self.pending[self.pending_slot];
                s.id = (value >= 0).then_some(value);
                if value < 0 {
                    s.x = None;
                    s.y = None;
                }
                None
            }
            (EV_ABS, ABS_MT_POSITION_X) => {
                self.pending[self.pending_slot].x = Some(value);
                None
            }
            (EV_ABS, ABS_MT_POSITION_Y) => {
                self.pending[self.pending_slot].y = Some(value);
                None
            }
            (EV_SYN, SYN_REPORT) => self.sync(rot, natural),
            _ => None,
        }
    }

    /// Display px of a raw panel point (`TouchInputMapper`'s scale and rotation).
    pub fn to_display(&self, raw: (i32, i32), rot: u32, natural: (u32, u32)) -> (f64, f64) {
        let (xmin, xmax) = self.capture.x;
        let (ymin, ymax) = self.capture.y;
        let xs = f64::from(natural.0) / f64::from(xmax - xmin + 1);
        let ys = f64::from(natural.1) / f64::from(ymax - ymin + 1);
        let (x, y) = (raw.0, raw.1);
        match rot & 3 {
            0 => (f64::from(x - xmin) * xs, f64::from(y - ymin) * ys),
            1 => (f64::from(y - ymin) * ys, f64::from(xmax - x) * xs),
            2 => (f64::from(xmax - x) * xs, f64::from(ymax - y) * ys),
            _ => (f64::from(ymax - y) * ys, f64::from(x - xmin) * xs),
        }
    }

    fn sync(&mut self, rot: u32, natural: (u32, u32)) -> Ended {
        self.slot = self.pending_slot;
        self.slots.clone_from(&self.pending);
        let slop = 24.0; // 8 dp at 3x density.
        let mut active = 0;
        for i in 0..self.slots.len() {
            let s = self.slots[i];
            // A contact with no position yet (or none at all) takes no part.
            if let (Some(_), Some(x), Some(y)) = (s.id, s.x, s.y) {
                active += 1;
                let p = self.to_display((x, y), rot, natural);
                match &mut self.tracks[i] {
                    Some(t) => {
                        t.last = p;
                        let d = ((p.0 - t.first.0).powi(2) + (p.1 - t.first.1).powi(2)).sqrt();
                        t.max_move = t.max_move.max(d);
                    }
                    None => {
                        self.started.get_or_insert_with(std::time::Instant::now);
                        self.tracks[i] = Some(Track {
                            first: p,
                            last: p,
                            max_move: 0.0,
                        });
                        self.fingers += 1;
                    }
                }
            }
        }
        if active > 0 || self.started.is_none() {
            return None;
        }
        // Every finger lifted: the gesture ends.
        let started = self.started.take()?;
        let tracks: Vec<Track> = self.tracks.iter_mut().filter_map(Option::take).collect();
        let fingers = std::mem::take(&mut self.fingers);
        if tracks.is_empty() {
            return None;
        }
        let ms = started.elapsed().as_millis() as u64;
        let at = |p: (f64, f64)| [p.0.floor() as i32, p.1.floor() as i32];
        let node = self.capture.touch_node.to_string();
        if tracks.len() >= 2 {
            let dist =
                |a: (f64, f64), b: (f64, f64)| ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt();
            let d0 = dist(tracks[0].first, tracks[1].first);
            let d1 = dist(tracks[0].last, tracks[1].last);
            return Some(Touch {
                kind: TouchKind::Pinch,
                from: at(tracks[0].first),
                to: at(tracks[0].last),
                duration_ms: ms,
                fingers,
                scale: (d0 > 0.0).then(|| d1 / d0),
                node,
            });
        }
        let t = &tracks[0];
        let kind = if t.max_move > slop {
            TouchKind::Swipe
        } else if ms >= 500 {
            TouchKind::LongPress
        } else {
            TouchKind::Tap
        };
        Some(Touch {
            kind,
            from: at(t.first),
            to: at(t.last),
            duration_ms: ms,
            fingers,
            scale: None,
            node,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(size: usize, ty: u16, code: u16, value: i32) -> Vec<u8> {
        let mut v = vec![0u8; size - 8];
        v.extend_from_slice(&ty.to_le_bytes());
        v.extend_from_slice(&code.to_le_bytes());
        v.extend_from_slice(&value.to_le_bytes());
        v
    }

    fn tap(size: usize, x: i32, y: i32) -> Vec<u8> {
        [
            rec(size, EV_ABS, ABS_MT_SLOT, 0),
            rec(size, EV_ABS, ABS_MT_TRACKING_ID, 7),
            rec(size, EV_ABS, ABS_MT_POSITION_X, x),
            rec(size, EV_ABS, ABS_MT_POSITION_Y, y),
            rec(size, EV_SYN, SYN_REPORT, 0),
            rec(size, EV_ABS, ABS_MT_TRACKING_ID, -1),
            rec(size, EV_SYN, SYN_REPORT, 0),
        ]
        .concat()
    }

    #[test]
    fn captures_hold_the_ranges_they_are_read_with() {
        for c in CAPTURES {
            let max = |axis: &str| {
                c.getevent
                    .lines()
                    .find(|l| l.contains(axis))
                    .and_then(|l| l.split("max ").nth(1))
                    .and_then(|r| r.split(',').next())
                    .and_then(|v| v.trim().parse::<i32>().ok())
            };
            assert_eq!(max("ABS_MT_POSITION_X"), Some(c.x.1), "{}", c.name);
            assert_eq!(max("ABS_MT_POSITION_Y"), Some(c.y.1), "{}", c.name);
            assert_eq!(max("ABS_MT_SLOT"), Some(c.slots - 1), "{}", c.name);
            assert!(c.getevent.contains(c.touch_node), "{}", c.name);
        }
    }

    #[test]
    fn a_protocol_b_tap_is_a_tap_at_the_mapped_point() {
        let mut r = Reader::new(capture("mimix2").unwrap());
        let (n, ended) = r.write(&tap(24, 300, 700), 0, (1080, 2160)).unwrap();
        assert_eq!(n, 7 * 24);
        assert_eq!(ended.len(), 1);
        assert_eq!((ended[0].kind, ended[0].from), (TouchKind::Tap, [300, 700]));
        // Rotation 1: display x is the panel's y, display y counts down from the panel's x max.
        let ended = r.write(&tap(24, 300, 700), 1, (1080, 2160)).unwrap().1;
        assert_eq!(ended[0].from, [700, 1079 - 300]);
        // A 32-bit phone reads 16-byte records; 24-byte ones are garbage to it.
        let mut r32 = Reader::new(capture("galaxy-s5").unwrap());
        let ended = r32.write(&tap(16, 2048, 2048), 0, (1080, 1920)).unwrap().1;
        assert_eq!(ended[0].from, [540, 960]);
        assert!(r32
            .write(&tap(24, 2048, 2048), 0, (1080, 1920))
            .unwrap()
            .1
            .is_empty());
    }

    #[test]
    fn malformed_sequences_do_nothing() {
        let c = capture("mimix2").unwrap();
        let mut r = Reader::new(c);
        let n = (1080, 2160);
        // Shorter than one record: EINVAL.
        assert!(r.write(&[0u8; 10], 0, n).is_err());
        // No SYN_REPORT: nothing is delivered, whatever follows later in another slot.
        let no_syn = [
            rec(24, EV_ABS, ABS_MT_TRACKING_ID, 1),
            rec(24, EV_ABS, ABS_MT_POSITION_X, 10),
            rec(24, EV_ABS, ABS_MT_POSITION_Y, 10),
        ]
        .concat();
        assert!(r.write(&no_syn, 0, n).unwrap().1.is_empty());
        let mut r = Reader::new(c);
        // A lift of a slot that holds no contact, positions without a tracking id.
        let stray = [
            rec(24, EV_ABS, ABS_MT_SLOT, 3),
            rec(24, EV_ABS, ABS_MT_TRACKING_ID, -1),
            rec(24, EV_SYN, SYN_REPORT, 0),
            rec(24, EV_ABS, ABS_MT_POSITION_X, 10),
            rec(24, EV_ABS, ABS_MT_POSITION_Y, 10),
            rec(24, EV_SYN, SYN_REPORT, 0),
            // An out-of-range slot is ignored.
            rec(24, EV_ABS, ABS_MT_SLOT, 99),
            rec(24, EV_SYN, SYN_REPORT, 0),
        ]
        .concat();
        assert!(r.write(&stray, 0, n).unwrap().1.is_empty());
        // A trailing partial record is not taken.
        let mut bytes = tap(24, 5, 5);
        bytes.extend_from_slice(&[1, 2, 3]);
        assert_eq!(r.write(&bytes, 0, n).unwrap().0, 7 * 24);
    }
}
