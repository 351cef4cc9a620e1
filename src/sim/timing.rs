//! The cost model (`sim --timing realistic --link usb2|usb3|wifi`): how long a real phone takes
//! for what the simulated one answers at once. Two parts:
//! * **phone-side work**, per persona (`[timing]` table of `personas/*.toml`, sources cited
//!   there): PNG encoding per megapixel (`screencap -p`), the raw framebuffer dump per megapixel
//!   (`screencap` without `-p`), the start-up of `input` / `am` / `pm` / `cmd`, and
//!   `uiautomator dump`;
//! * **the link**, per run ([`Link`]): bandwidth and one-way latency applied to the bytes the
//!   phone sends on every ADB stream ([`Pacer`]).
//!
//! Every wait is an async `tokio::time` sleep (never a blocking one) and is only taken in
//! [`TimingMode::Realistic`]; the default [`TimingMode::Instant`] adds nothing anywhere. A
//! program's modelled time is a floor on its duration: the sim's own work counts towards it.

use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::Deserialize;

/// Whether the phone answers at once or with a real phone's costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimingMode {
    /// No modelled costs (tests, the default).
    #[default]
    Instant,
    /// The persona's phone-side costs and the link's bandwidth and latency.
    Realistic,
}

impl FromStr for TimingMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "instant" => Ok(TimingMode::Instant),
            "realistic" => Ok(TimingMode::Realistic),
            _ => Err(format!("unknown timing {s:?}; known: instant, realistic")),
        }
    }
}

/// The transport between the phone and the host, as the cost model sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Link {
    /// USB 2.0 high speed (the default of a phone on a Pi's USB 2 port).
    #[default]
    Usb2,
    /// USB 3.x SuperSpeed.
    Usb3,
    /// Wireless debugging over Wi-Fi.
    Wifi,
}

impl FromStr for Link {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "usb2" => Ok(Link::Usb2),
            "usb3" => Ok(Link::Usb3),
            "wifi" => Ok(Link::Wifi),
            _ => Err(format!("unknown link {s:?}; known: usb2, usb3, wifi")),
        }
    }
}

/// Bandwidth and latency of a [`Link`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    /// Payload bytes per second the phone can send to the host.
    pub bytes_per_sec: f64,
    /// One-way latency added once per stream, before its first bytes.
    pub latency: Duration,
}

impl Link {
    /// The link's figures. Sources (all host-observed `adb` throughput, not the bus's
    /// signalling rate):
    /// * usb2: 36 MB/s, 1 ms. USB 2.0 high speed signals 480 Mbit/s (USB 2.0 spec); after
    ///   protocol overhead `adb push`/`pull` sustain ~35–40 MB/s on it (issue 12's figure,
    ///   commonly reported for adb over USB 2). Latency: an ADB packet round trip over USB is
    ///   ~0.5–1 ms (estimate).
    /// * usb3: 120 MB/s, 0.5 ms. An estimate: published `adb push` runs on USB 3 phones reach
    ///   100–200 MB/s, limited by the phone's storage and adbd, not the bus.
    /// * wifi: 5 MB/s, 4 ms. An estimate for adb's TLS transport over a typical 2.4/5 GHz home
    ///   network (20–60 Mbit/s of useful TCP throughput, a few ms of round trip).
    pub fn spec(self) -> LinkSpec {
        let (mb_per_sec, latency_us) = match self {
            Link::Usb2 => (36.0, 1000),
            Link::Usb3 => (120.0, 500),
            Link::Wifi => (5.0, 4000),
        };
        LinkSpec {
            bytes_per_sec: mb_per_sec * 1e6,
            latency: Duration::from_micros(latency_us),
        }
    }
}

/// A persona's phone-side costs (`[timing]` in its TOML file; the file cites the sources).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
pub struct PhoneCosts {
    /// `screencap -p`: capture plus PNG encoding, ms per megapixel of the frame.
    pub png_encode_ms_per_mp: f64,
    /// `screencap` (raw): capture plus writing the RGBA dump, ms per megapixel.
    pub raw_dump_ms_per_mp: f64,
    /// `input …` start-up to done, ms.
    pub input_ms: f64,
    /// `am …` start-up to done, ms (`am start` adds the activity launch on top in reality;
    /// the model keeps it to the command).
    pub am_ms: f64,
    /// `pm …` / `cmd package …` start-up to done, ms.
    pub pm_ms: f64,
    /// `uiautomator dump`, ms.
    pub uiautomator_dump_ms: f64,
}

impl Default for PhoneCosts {
    /// A mid-range phone of 2022–2024 (the Pixel 8 persona's figures).
    fn default() -> Self {
        PhoneCosts {
            png_encode_ms_per_mp: 190.0,
            raw_dump_ms_per_mp: 25.0,
            input_ms: 90.0,
            am_ms: 90.0,
            pm_ms: 70.0,
            uiautomator_dump_ms: 1500.0,
        }
    }
}

/// The cost model in force on one phone: `None` in the phone state means instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Phone-side costs.
    pub phone: PhoneCosts,
    /// The link.
    pub link: LinkSpec,
}

fn ms(v: f64) -> Duration {
    Duration::from_secs_f64(v.max(0.0) / 1e3)
}

impl Model {
    /// The modelled duration of `screencap` for a frame of `pixels` px, `png` = `-p`.
    pub fn screencap(&self, pixels: u64, png: bool) -> Duration {
        let mp = pixels as f64 / 1e6;
        let per_mp = if png {
            self.phone.png_encode_ms_per_mp
        } else {
            self.phone.raw_dump_ms_per_mp
        };
        ms(per_mp * mp)
    }

    /// The modelled duration of program `name` with `args` (argv without the name), for the
    /// programs the model covers; `None` for the others (they answer at once). `screencap` is
    /// modelled by [`Model::screencap`], where the frame size is known.
    pub fn program(&self, name: &str, args: &[String]) -> Option<Duration> {
        let c = &self.phone;
        let first = args.first().map(String::as_str);
        match (name, first) {
            ("input", _) => Some(ms(c.input_ms)),
            ("am" | "monkey", _) => Some(ms(c.am_ms)),
            ("pm", _) | ("cmd", Some("package")) => Some(ms(c.pm_ms)),
            ("cmd", Some("activity")) => Some(ms(c.am_ms)),
            ("cmd", Some("input")) => Some(ms(c.input_ms)),
            ("uiautomator", Some("dump")) => Some(ms(c.uiautomator_dump_ms)),
            _ => None,
        }
    }
}

/// Waits out the rest of `modelled` since `started` (the sim's own work counts towards it).
pub async fn wait_rest(started: Instant, modelled: Duration) {
    tokio::time::sleep_until((started + modelled).into()).await;
}

/// Paces one stream's outgoing bytes to a link: the first bytes wait the link's latency, then
/// every chunk is released no faster than the bandwidth allows (a running schedule, so timer
/// granularity does not accumulate).
#[derive(Debug)]
pub struct Pacer {
    link: LinkSpec,
    next: Option<tokio::time::Instant>,
}

impl Pacer {
    /// A pacer for one stream.
    pub fn new(link: LinkSpec) -> Pacer {
        Pacer { link, next: None }
    }

    /// Waits until `bytes` more bytes may have crossed the link.
    pub async fn pace(&mut self, bytes: usize) {
        let now = tokio::time::Instant::now();
        // Continue the schedule, not the clock: a timer that fired late (ms granularity) must
        // not push every later chunk back. An idle gap longer than SLACK earns no credit.
        const SLACK: Duration = Duration::from_millis(5);
        let start = match self.next {
            Some(t) => t.max(now.checked_sub(SLACK).unwrap_or(now)),
            None => now + self.link.latency,
        };
        let next = start + Duration::from_secs_f64(bytes as f64 / self.link.bytes_per_sec);
        self.next = Some(next);
        tokio::time::sleep_until(next).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse() {
        assert_eq!("instant".parse(), Ok(TimingMode::Instant));
        assert_eq!("realistic".parse(), Ok(TimingMode::Realistic));
        assert!("fast".parse::<TimingMode>().is_err());
        assert_eq!("usb2".parse(), Ok(Link::Usb2));
        assert_eq!("usb3".parse(), Ok(Link::Usb3));
        assert_eq!("wifi".parse(), Ok(Link::Wifi));
        assert!("usb4".parse::<Link>().unwrap_err().contains("usb2"));
    }

    #[test]
    fn model_covers_the_slow_programs() {
        let m = Model {
            phone: PhoneCosts::default(),
            link: Link::Usb2.spec(),
        };
        let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            m.program("input", &argv("tap 1 1")),
            Some(Duration::from_millis(90))
        );
        assert_eq!(
            m.program("uiautomator", &argv("dump /sdcard/x.xml")),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(m.program("getprop", &[]), None);
        assert_eq!(m.program("uiautomator", &argv("events")), None);
        // 1080x2400 = 2.592 MP at 190 ms/MP.
        let png = m.screencap(1080 * 2400, true).as_secs_f64();
        assert!((png - 0.49248).abs() < 1e-6, "{png}");
        assert!(m.screencap(1080 * 2400, false) < m.screencap(1080 * 2400, true));
    }

    #[tokio::test(start_paused = true)]
    async fn pacer_holds_the_bandwidth_and_latency() {
        let link = Link::Usb2.spec();
        let mut p = Pacer::new(link);
        let t = tokio::time::Instant::now();
        for _ in 0..40 {
            p.pace(262_144).await;
        }
        // 10 485 760 bytes at 36 MB/s = 291.27 ms, + 1 ms latency.
        let took = t.elapsed().as_secs_f64();
        assert!((took - 0.292271).abs() < 0.001, "{took}");
    }
}
