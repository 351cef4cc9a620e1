//! Which `screencap` output a screenshot is made from: the phone's PNG (`screencap -p`), its
//! raw framebuffer dump (`screencap`, [`super::raw`]) or, over a slow link, its JPEG
//! (`screencap -j`, Android 16: [`super::jpeg`]).
//!
//! A re-encoded screenshot (jpeg/webp, or png with `max_dimension`) needs the pixels, not the
//! phone's PNG. The raw dump skips the phone's PNG encode (~0.5 s on a 1080x2400 handset) and
//! the connector's PNG decode (the bulk of the connector's CPU per call), at the price of
//! moving `w*h*4` bytes (10.4 MB for 1080x2400) instead of a 1–3 MB PNG. Over USB 2 (~36 MB/s)
//! that is ~0.29 s against ~0.5 s + 0.05 s: raw wins, more so on USB 3 and local links
//! (emulators, the simulated phone). Over Wi-Fi (~5 MB/s) it is ~2 s against ~0.8 s: PNG wins.
//! Figures: `docs/performance.md` (cost model of `sim --timing realistic`).
//!
//! The link is known from how the phone is reached, without any extra round trip:
//! * adb server transports: the serial's shape — `host:port` (`adb connect`, wireless debugging
//!   after pairing) or an mDNS instance name (`adb-<id>._adb-tls-connect._tcp`) is a network
//!   link, unless the host is loopback (emulators' `127.0.0.1:5555`, forwarded ports);
//!   `emulator-NNNN` is local; any other serial is a USB device (adb's own rule for
//!   `adb devices -l`: USB transports are listed with `usb:`, network ones by address);
//! * direct transports: loopback addresses are local, anything else is a network link;
//! * a phone paired over Wi-Fi (wireless debugging, [`RouteKind::WifiPaired`]) is a network
//!   link whatever address it is dialled at (Android's wireless debugging runs only over
//!   Wi-Fi; a loopback address is a forwarded port).
//!
//! The device profile's `quirks.screenshot_capture` (`auto` | `raw` | `png`) overrides this
//! (a phone whose raw dump is broken, a USB-attached phone on a slow hub).
//!
//! Memory bounds the raw dump too: each one holds `w*h*4` bytes for its whole transfer, so it
//! needs one of the box's [`FRAME_SLOTS`] ([`with_raw_slot`]); with none free, an `auto` capture
//! takes the phone's PNG, whose bytes are small on the wire and whose decoded frame lives only
//! for the ~10 ms of processing.

use crate::adb::link::LinkKind;
use crate::device::parse::devices::RouteKind;

/// Where the frame comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `screencap -p`.
    Png,
    /// `screencap` (raw framebuffer).
    Raw,
    /// `screencap -j` (the phone's JPEG, Android 16).
    Jpeg,
}

impl Source {
    /// `backend` of a screenshot taken from it.
    pub fn backend(self) -> &'static str {
        match self {
            Source::Raw => "raw",
            Source::Png => "png",
            Source::Jpeg => "jpeg_phone",
        }
    }
}

/// How the phone is attached, as far as bandwidth goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attachment {
    /// A USB transport.
    Usb,
    /// Same machine (emulator, simulated phone, a forwarded port).
    Local,
    /// A network transport (Wi-Fi, Ethernet, wireless debugging).
    Network,
}

fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `host:port` → host (IPv6 in brackets or bare), when the text has that shape.
fn host_of(addr: &str) -> Option<&str> {
    let (host, port) = addr.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    (!host.is_empty()).then_some(host)
}

/// The attachment of a link (see the module docs for the rule).
pub fn attachment(link: &LinkKind) -> Attachment {
    match link {
        LinkKind::Server { adb_serial, .. } => {
            if adb_serial.contains("._adb-tls-connect._tcp") || adb_serial.contains("._adb._tcp") {
                Attachment::Network
            } else if let Some(host) = host_of(adb_serial) {
                if is_loopback_host(host) {
                    Attachment::Local
                } else {
                    Attachment::Network
                }
            } else if adb_serial.starts_with("emulator-") {
                Attachment::Local
            } else {
                Attachment::Usb
            }
        }
        LinkKind::Direct { addr } => match host_of(addr) {
            Some(host) if is_loopback_host(host) => Attachment::Local,
            _ => Attachment::Network,
        },
    }
}

/// The attachment of a phone reached over `link` by `route` (a paired wireless-debugging phone
/// is on the network, see the module docs).
pub fn attachment_of(link: &LinkKind, route: RouteKind) -> Attachment {
    match route {
        RouteKind::WifiPaired => Attachment::Network,
        _ => attachment(link),
    }
}

/// Whether to ask for the phone's JPEG ([`super::jpeg`]): the result may be it as it is
/// (`jpeg_as_is`: format jpeg, no downscale), the link is slow (the network) and the profile's
/// `quirk` does not force a source. Whether the build has `-j` is asked of its fingerprint.
pub fn wants_jpeg(at: Attachment, quirk: &str, jpeg_as_is: bool) -> bool {
    jpeg_as_is && at == Attachment::Network && !matches!(quirk, "raw" | "png")
}

/// The source of a screenshot: PNG for the passthrough (`passthrough`: png without
/// `max_dimension`), else the profile's `quirk` (`raw` | `png`), else by attachment (raw over
/// USB and local links, PNG over the network). Unknown quirk values count as `auto`.
pub fn choose(at: Attachment, quirk: &str, passthrough: bool) -> Source {
    if passthrough {
        return Source::Png;
    }
    match quirk {
        "raw" => Source::Raw,
        "png" => Source::Png,
        _ => match at {
            Attachment::Usb | Attachment::Local => Source::Raw,
            Attachment::Network => Source::Png,
        },
    }
}

/// Frames in the connector's memory at once, box-wide: raw dumps from the start of their
/// transfer to the end of their processing, decoded PNGs during processing. A 1080x2400 frame
/// with its resize intermediate and downscaled copy is ~19 MB, and a raw dump is held for its
/// whole transfer (~0.3 s over USB 2). Unbounded, a 32-phone farm's peak RSS (VmHWM) reached
/// 353 MB in 3 minutes; the 64 MB budget of issue 12 leaves room for two (`docs/performance.md`,
/// fourth pass). The work is CPU-bound, so more at once would not finish sooner on a Pi either.
pub const FRAME_SLOTS: usize = 2;

/// A held frame slot, given back when dropped.
pub type FrameSlot = tokio::sync::SemaphorePermit<'static>;

fn slots() -> &'static tokio::sync::Semaphore {
    static SLOTS: std::sync::OnceLock<tokio::sync::Semaphore> = std::sync::OnceLock::new();
    SLOTS.get_or_init(|| tokio::sync::Semaphore::new(FRAME_SLOTS))
}

/// Waits for a frame slot (others' processing, or a raw transfer: ≤ ~0.3 s over USB 2). `None`
/// only if the semaphore were closed, which nothing does.
pub async fn frame_slot() -> Option<FrameSlot> {
    slots().acquire().await.ok()
}

/// The source to capture from after the frame bound: a chosen raw dump takes a slot at once
/// (held by the caller until the frame is processed); with none free it becomes the phone's
/// PNG, whose bytes are small on the wire and wait for a slot only to be processed. A profile
/// forcing `raw` (`quirk`) goes ahead without a slot and waits for one to process.
pub fn with_raw_slot(source: Source, quirk: &str) -> (Source, Option<FrameSlot>) {
    match source {
        Source::Png | Source::Jpeg => (source, None),
        Source::Raw => match slots().try_acquire() {
            Ok(slot) => (Source::Raw, Some(slot)),
            Err(_) if quirk == "raw" => (Source::Raw, None),
            Err(_) => (Source::Png, None),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adb::AdbServerClient;

    fn server(serial: &str) -> LinkKind {
        LinkKind::Server {
            client: AdbServerClient::new("127.0.0.1:5037"),
            adb_serial: serial.into(),
            transport_id: None,
        }
    }
    fn direct(addr: &str) -> LinkKind {
        LinkKind::Direct { addr: addr.into() }
    }

    #[test]
    fn attachment_from_the_serial_or_address() {
        assert_eq!(attachment(&server("R58N12ABCDE")), Attachment::Usb);
        assert_eq!(attachment(&server("emulator-5554")), Attachment::Local);
        assert_eq!(attachment(&server("127.0.0.1:5555")), Attachment::Local);
        assert_eq!(
            attachment(&server("192.168.1.20:37155")),
            Attachment::Network
        );
        assert_eq!(attachment(&server("[fe80::1]:5555")), Attachment::Network);
        assert_eq!(
            attachment(&server("adb-R58N12ABCDE-xYz._adb-tls-connect._tcp")),
            Attachment::Network
        );
        assert_eq!(attachment(&direct("127.0.0.1:40000")), Attachment::Local);
        assert_eq!(attachment(&direct("localhost:5555")), Attachment::Local);
        assert_eq!(attachment(&direct("[::1]:5555")), Attachment::Local);
        assert_eq!(attachment(&direct("10.0.0.7:5555")), Attachment::Network);
    }

    #[test]
    fn raw_dumps_past_the_bound_take_the_png_unless_forced() {
        // The only test touching the box-wide counter (tests of one binary run in parallel).
        let slots: Vec<_> = (0..FRAME_SLOTS)
            .map(|_| with_raw_slot(Source::Raw, "auto"))
            .collect();
        assert!(slots
            .iter()
            .all(|(s, slot)| *s == Source::Raw && slot.is_some()));
        assert_eq!(with_raw_slot(Source::Raw, "auto").0, Source::Png);
        let forced = with_raw_slot(Source::Raw, "raw");
        assert_eq!((forced.0, forced.1.is_none()), (Source::Raw, true));
        let png = with_raw_slot(Source::Png, "auto");
        assert_eq!((png.0, png.1.is_none()), (Source::Png, true));
        drop(slots);
        let (source, slot) = with_raw_slot(Source::Raw, "auto");
        assert_eq!((source, slot.is_some()), (Source::Raw, true));
    }

    #[test]
    fn passthrough_and_quirks_win() {
        let usb = server("R58N12ABCDE");
        let wifi = direct("10.0.0.7:5555");
        let (usb, wifi) = (attachment(&usb), attachment(&wifi));
        assert_eq!(choose(usb, "auto", true), Source::Png);
        assert_eq!(choose(usb, "auto", false), Source::Raw);
        assert_eq!(choose(wifi, "auto", false), Source::Png);
        assert_eq!(choose(wifi, "raw", false), Source::Raw);
        assert_eq!(choose(usb, "png", false), Source::Png);
        assert_eq!(choose(usb, "bogus", false), Source::Raw);
    }

    #[test]
    fn the_phones_jpeg_over_the_network_only_as_it_is() {
        let paired_on_loopback = attachment_of(&direct("127.0.0.1:40000"), RouteKind::WifiPaired);
        assert_eq!(paired_on_loopback, Attachment::Network);
        assert_eq!(
            attachment_of(&direct("127.0.0.1:40000"), RouteKind::Direct),
            Attachment::Local
        );
        assert!(wants_jpeg(Attachment::Network, "auto", true));
        assert!(!wants_jpeg(Attachment::Network, "auto", false));
        assert!(!wants_jpeg(Attachment::Usb, "auto", true));
        assert!(!wants_jpeg(Attachment::Local, "auto", true));
        assert!(!wants_jpeg(Attachment::Network, "png", true));
    }
}
