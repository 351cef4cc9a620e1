//! The cost model (`sim --timing realistic --link usb2|usb3|wifi`): how long a real phone takes
//! for what the simulated one answers at once. Two parts:
//! * **phone-side work**, per persona (`[timing]` table of `personas/*.toml`, sources cited
//!   there): PNG encoding per megapixel (`screencap -p`), the raw framebuffer dump per megapixel
//!   (`screencap` without `-p`), `input` / `am` / `pm` / `cmd` by the path the persona's SDK takes
//!   (an `app_process` VM start on old releases, the native `cmd` and a binder call on newer
//!   ones, see [`Model::program`]), and `uiautomator dump`;
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

/// First SDK whose `/system/bin/input` is the script `cmd input "$@"` (AOSP
/// frameworks/base/cmds/input/input.sh, an `sh_binary` in cmds/input/Android.bp, Android 12);
/// up to API 30 it was `exec app_process $base/bin com.android.commands.input.Input "$@"`
/// (cmds/input/input).
pub const INPUT_VIA_CMD_SDK: u32 = 31;

/// First SDK whose `pm` is `cmd package "$@"` (AOSP frameworks/base/cmds/pm/pm) and whose `am` is
/// `cmd activity "$@"` except `am instrument`, which still execs `app_process` (cmds/am/am,
/// later am.sh): so in Android 9, while both `exec app_process …` in Android 6 and 7. Whether
/// `am` switched already in 8.x is not pinned down; no persona has an SDK in 24–30, so this
/// bound changes no persona's cost.
pub const AM_PM_VIA_CMD_SDK: u32 = 28;

/// First SDK with `/system/bin/cmd` (AOSP frameworks/native/cmds/cmd, Android 7.0).
pub const CMD_SDK: u32 = 24;

/// A persona's phone-side costs (`[timing]` in its TOML file; the file cites the sources). Which
/// figures a persona must give depends on its SDK, see [`PhoneCosts::check`].
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
pub struct PhoneCosts {
    /// `screencap -p`: capture plus PNG encoding, ms per megapixel of the frame.
    pub png_encode_ms_per_mp: f64,
    /// `screencap` (raw): capture plus writing the RGBA dump, ms per megapixel.
    pub raw_dump_ms_per_mp: f64,
    /// `input …` under `app_process` (SDK below [`INPUT_VIA_CMD_SDK`]), start-up to done, ms.
    #[serde(default)]
    pub input_ms: Option<f64>,
    /// A Java command under `app_process`, start-up to done, ms: `am …` below
    /// [`AM_PM_VIA_CMD_SDK`], and on every SDK `am instrument` and `monkey` (AOSP
    /// cmds/monkey/monkey execs `app_process`). `am start` adds the activity launch on top in
    /// reality; the model keeps it to the command.
    pub am_ms: f64,
    /// `pm …` under `app_process` (SDK below [`AM_PM_VIA_CMD_SDK`]), start-up to done, ms.
    #[serde(default)]
    pub pm_ms: Option<f64>,
    /// The native `cmd` path (SDK [`CMD_SDK`] and up), ms: the tool's `sh` wrapper, `cmd`'s
    /// start, the service lookup and the binder `shellCommand` round trip to system_server.
    /// The service's own work (an injection wait, an activity launch) is not in it.
    #[serde(default)]
    pub cmd_ms: Option<f64>,
    /// One input event injected with `INJECT_INPUT_EVENT_MODE_WAIT_FOR_FINISH` (AOSP
    /// services/core/java/com/android/server/input/InputShellCommand.java injects every motion
    /// and key event that way unless `keyevent --async`): dispatch to the focused window until
    /// the app's finished signal, ms. Charged per event on the `cmd input` path.
    #[serde(default)]
    pub inject_ms: Option<f64>,
    /// `uiautomator dump`, ms.
    pub uiautomator_dump_ms: f64,
    /// `sha1sum` throughput, MB (10^6 bytes) per second of input (default
    /// [`DEFAULT_SHA1_MB_PER_S`]).
    #[serde(default = "default_sha1")]
    pub sha1_mb_per_s: f64,
}

/// `sha1sum`'s throughput on a phone, MB/s: an estimate, not a measurement. Toybox's own SHA-1
/// (portable C in `toys/lsb/md5sum.c`, unless the build links a crypto library) runs at a few hundred MB/s on one
/// 2020s ARMv8 core (portable SHA-1 is ~4–8 cycles/byte at 2–3 GHz); one using the ARMv8
/// SHA-1 instructions is several times faster. 300 MB/s puts a 1080x2400 raw frame
/// (10.4 MB) at ~35 ms, on top of the raw dump.
pub const DEFAULT_SHA1_MB_PER_S: f64 = 300.0;

fn default_sha1() -> f64 {
    DEFAULT_SHA1_MB_PER_S
}

impl Default for PhoneCosts {
    /// A mid-range phone of 2022–2024 on Android 14 (the Pixel 8 persona's figures).
    fn default() -> Self {
        PhoneCosts {
            png_encode_ms_per_mp: 190.0,
            raw_dump_ms_per_mp: 25.0,
            input_ms: None,
            am_ms: 90.0,
            pm_ms: None,
            cmd_ms: Some(20.0),
            inject_ms: Some(2.5),
            uiautomator_dump_ms: 1500.0,
            sha1_mb_per_s: DEFAULT_SHA1_MB_PER_S,
        }
    }
}

impl PhoneCosts {
    /// Whether these costs cover every path a phone of `sdk` takes: `input_ms` below
    /// [`INPUT_VIA_CMD_SDK`], `pm_ms` below [`AM_PM_VIA_CMD_SDK`], `cmd_ms` from [`CMD_SDK`],
    /// `inject_ms` from [`INPUT_VIA_CMD_SDK`]. Errors name the missing `[timing]` key.
    pub fn check(&self, sdk: u32) -> Result<(), String> {
        let needed = [
            ("input_ms", self.input_ms, sdk < INPUT_VIA_CMD_SDK),
            ("pm_ms", self.pm_ms, sdk < AM_PM_VIA_CMD_SDK),
            ("cmd_ms", self.cmd_ms, sdk >= CMD_SDK),
            ("inject_ms", self.inject_ms, sdk >= INPUT_VIA_CMD_SDK),
        ];
        match needed.iter().find(|(_, v, need)| *need && v.is_none()) {
            Some((key, _, _)) => Err(format!("[timing] needs {key} for SDK {sdk}")),
            None => Ok(()),
        }
    }
}

/// The cost model in force on one phone: `None` in the phone state means instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Phone-side costs.
    pub phone: PhoneCosts,
    /// The persona's `ro.build.version.sdk`: picks the `app_process` or the `cmd` path.
    pub sdk: u32,
    /// The link.
    pub link: LinkSpec,
}

fn ms(v: f64) -> Duration {
    Duration::from_secs_f64(v.max(0.0) / 1e3)
}

/// One `write(2)` of input records to a touchscreen node by the shell's `cat`, ms: the pipe
/// hop from adbd to `cat`, `cat`'s read and write, and `evdev_write` injecting each record
/// (`drivers/input/evdev.c`: `input_inject_event` per record, nothing waits for the reader).
/// Estimate: a few syscalls and a context switch, well under the 5.6 ms a whole tap takes on
/// real hardware through mobilecli's resident injector (mobile-next/mobilecli #286, #412), which
/// also pays a socket round trip and Java's `injectInputEvent`.
pub const EVDEV_WRITE_MS: f64 = 0.3;

impl Model {
    /// The modelled duration of one write of input records to a touchscreen node
    /// ([`EVDEV_WRITE_MS`]).
    pub fn evdev_write(&self) -> Duration {
        ms(EVDEV_WRITE_MS)
    }

    /// The modelled duration of `screencap` for a frame of `pixels` px, `png` = an encoded
    /// frame: `-p`, or `-j` (Android 16), modelled at the PNG encode's cost per megapixel (no
    /// measured figure of `screencap -j` on a phone was at hand; both go through
    /// `AndroidBitmap_compress`, Skia's encoders).
    pub fn screencap(&self, pixels: u64, png: bool) -> Duration {
        let mp = pixels as f64 / 1e6;
        let per_mp = if png {
            self.phone.png_encode_ms_per_mp
        } else {
            self.phone.raw_dump_ms_per_mp
        };
        ms(per_mp * mp)
    }

    /// The modelled duration of `sha1sum` over `bytes` of input (the frame hash of the
    /// connector's receipts, `screencap | sha1sum`: the raw dump is [`Model::screencap`]).
    pub fn hash(&self, bytes: usize) -> Duration {
        ms(bytes as f64 / (self.phone.sha1_mb_per_s.max(1.0) * 1e3))
    }

    /// The modelled duration of program `name` with `args` (argv without the name), for the
    /// programs the model covers; `None` for the others (they answer at once). `screencap` is
    /// modelled by [`Model::screencap`], where the frame size is known.
    ///
    /// By SDK: `input` (and `cmd input`) from [`INPUT_VIA_CMD_SDK`] costs `cmd_ms` plus
    /// `inject_ms` per event it injects ([`injected_events`]), below it `input_ms`; `am` and `pm`
    /// from [`AM_PM_VIA_CMD_SDK`] cost `cmd_ms` (`am instrument` keeps `am_ms`), below it
    /// `am_ms` / `pm_ms`; `cmd package|activity` cost `cmd_ms`; `monkey` always `am_ms`. A
    /// figure the persona lacks counts as 0 ([`PhoneCosts::check`] refuses such personas).
    pub fn program(&self, name: &str, args: &[String]) -> Option<Duration> {
        let c = &self.phone;
        let cmd = c.cmd_ms.unwrap_or(0.0);
        let via_cmd = self.sdk >= AM_PM_VIA_CMD_SDK;
        let cmd_input = || cmd + c.inject_ms.unwrap_or(0.0) * injected_events(args) as f64;
        let first = args.first().map(String::as_str);
        let v = match (name, first) {
            ("input", _) if self.sdk >= INPUT_VIA_CMD_SDK => cmd_input(),
            ("input", _) => c.input_ms.unwrap_or(0.0),
            ("monkey", _) | ("am", Some("instrument")) => c.am_ms,
            ("am", _) if via_cmd => cmd,
            ("am", _) => c.am_ms,
            ("pm", _) if via_cmd => cmd,
            ("pm", _) => c.pm_ms.unwrap_or(0.0),
            ("cmd", _) if self.sdk < CMD_SDK => return None,
            ("cmd", Some("input")) if self.sdk >= INPUT_VIA_CMD_SDK => {
                cmd + c.inject_ms.unwrap_or(0.0) * injected_events(&args[1..]) as f64
            }
            ("cmd", Some("package" | "activity" | "input")) => cmd,
            ("uiautomator", Some("dump")) => c.uiautomator_dump_ms,
            _ => return None,
        };
        Some(ms(v))
    }
}

/// How many events `input` `args` inject with `WAIT_FOR_FINISH` (AOSP InputShellCommand.java):
/// `tap`/`press` a DOWN and an UP; `swipe`/`draganddrop` their DOWN and UP (the MOVE events
/// spread over the gesture's duration are not modelled); `roll` and `motionevent` one;
/// `keyevent` and `keycombination` a DOWN and an UP per key code (none with `--async`); `text` a
/// DOWN and an UP per character (shifted characters' extra SHIFT events are not counted). An optional source and `-d DISPLAY` come first. Anything else
/// (help, bad verbs) injects nothing.
pub fn injected_events(args: &[String]) -> usize {
    let args = crate::input_args::verb_and_args(args);
    let Some((verb, rest)) = args.split_first() else {
        return 0;
    };
    let keys = |rest: &[&str]| rest.iter().filter(|a| !a.starts_with('-')).count();
    match *verb {
        "tap" | "press" | "swipe" | "draganddrop" => 2,
        "roll" | "motionevent" => 1,
        "keyevent" if rest.contains(&"--async") => 0,
        // `--delay N` takes a value that is not a key code.
        "keyevent" => 2 * keys(rest).saturating_sub(usize::from(rest.contains(&"--delay"))),
        // `-t N` likewise.
        "keycombination" => 2 * keys(rest).saturating_sub(usize::from(rest.contains(&"-t"))),
        // `%s` is one space.
        "text" => {
            2 * rest
                .first()
                .map_or(0, |t| t.chars().count() - t.matches("%s").count())
        }
        _ => 0,
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

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    /// The model of a persona file, read here from its TOML (naming `crate::persona` would
    /// make a cycle of floors, see `floors.rs`).
    fn persona_model(name: &str) -> Model {
        #[derive(Deserialize)]
        struct File {
            sdk: u32,
            timing: PhoneCosts,
        }
        let text = match name {
            "pixel-android14" => include_str!("personas/pixel-android14.toml"),
            "samsung-android13" => include_str!("personas/samsung-android13.toml"),
            "foldable-android14" => include_str!("personas/foldable-android14.toml"),
            "emulator-android15" => include_str!("personas/emulator-android15.toml"),
            "legacy-android6" => include_str!("personas/legacy-android6.toml"),
            "pixel-android16" => include_str!("personas/pixel-android16.toml"),
            _ => panic!("no persona {name}"),
        };
        let f: File = toml::from_str(text).unwrap();
        f.timing.check(f.sdk).unwrap();
        Model {
            phone: f.timing,
            sdk: f.sdk,
            link: Link::Usb2.spec(),
        }
    }

    fn ms_of(d: Option<Duration>) -> f64 {
        (d.expect("modelled").as_secs_f64() * 1e3 * 1e6).round() / 1e6
    }

    #[test]
    fn model_covers_the_slow_programs() {
        let m = Model {
            phone: PhoneCosts::default(),
            sdk: 34,
            link: Link::Usb2.spec(),
        };
        // Android 14: `cmd` (20 ms) + a DOWN and an UP at 2.5 ms each.
        assert_eq!(ms_of(m.program("input", &argv("tap 1 1"))), 25.0);
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

    #[test]
    fn input_from_api_31_is_cmd_plus_the_injection_waits() {
        let m = persona_model("pixel-android14");
        assert_eq!(m.sdk, 34);
        // cmd_ms 20 + 2 events x 2.5 ms, and the same for `cmd input` and with a source/-d.
        for line in ["tap 5 5", "touchscreen -d 0 tap 5 5", "swipe 1 2 3 4 100"] {
            assert_eq!(ms_of(m.program("input", &argv(line))), 25.0, "{line}");
            let cmd = format!("input {line}");
            assert_eq!(ms_of(m.program("cmd", &argv(&cmd))), 25.0, "cmd {line}");
        }
        // Two key codes: two DOWN/UP pairs; `--async` waits for none.
        assert_eq!(
            ms_of(m.program("input", &argv("keyevent KEYCODE_A KEYCODE_B"))),
            30.0
        );
        assert_eq!(
            ms_of(m.program("input", &argv("keyevent --async KEYCODE_HOME"))),
            20.0
        );
        // `text abc`: a DOWN and an UP per character.
        assert_eq!(ms_of(m.program("input", &argv("text abc"))), 35.0);
        // No verb, nothing injected: the `cmd` start alone.
        assert_eq!(ms_of(m.program("input", &[])), 20.0);
        // Every Android 12+ persona: far below its `app_process` start (am_ms).
        for name in [
            "pixel-android14",
            "samsung-android13",
            "foldable-android14",
            "emulator-android15",
            "pixel-android16",
        ] {
            let m = persona_model(name);
            let tap = m.program("input", &argv("tap 1 1")).unwrap();
            let vm = Duration::from_secs_f64(m.phone.am_ms / 1e3);
            assert!(tap < vm, "{name}: tap {tap:?} vs app_process {vm:?}");
        }
    }

    #[test]
    fn am_and_pm_from_api_28_are_cmd_except_am_instrument_and_monkey() {
        let m = persona_model("samsung-android13");
        assert_eq!(ms_of(m.program("pm", &argv("list packages"))), 25.0);
        assert_eq!(
            ms_of(m.program("cmd", &argv("package list packages"))),
            25.0
        );
        assert_eq!(ms_of(m.program("am", &argv("start -n a/.B"))), 25.0);
        assert_eq!(
            ms_of(m.program("cmd", &argv("activity start -n a/.B"))),
            25.0
        );
        // `am instrument` and `monkey` still exec app_process.
        assert_eq!(ms_of(m.program("am", &argv("instrument -w a/b"))), 120.0);
        assert_eq!(ms_of(m.program("monkey", &argv("-p a 1"))), 120.0);
    }

    #[test]
    fn android_6_keeps_the_app_process_costs() {
        let m = persona_model("legacy-android6");
        assert_eq!(m.sdk, 23);
        assert_eq!(ms_of(m.program("input", &argv("tap 1 1"))), 350.0);
        // Per command, not per event: `app_process` dominates.
        assert_eq!(ms_of(m.program("input", &argv("text abcdef"))), 350.0);
        assert_eq!(ms_of(m.program("am", &argv("start -n a/.B"))), 350.0);
        assert_eq!(ms_of(m.program("pm", &argv("list packages"))), 300.0);
        // No `cmd` before API 24: nothing to model.
        assert_eq!(m.program("cmd", &argv("input tap 1 1")), None);
    }

    #[test]
    fn between_api_28_and_30_am_pm_are_cmd_but_input_is_app_process() {
        let m = Model {
            phone: PhoneCosts {
                input_ms: Some(110.0),
                pm_ms: None,
                ..PhoneCosts::default()
            },
            sdk: 30,
            link: Link::Usb2.spec(),
        };
        assert_eq!(m.phone.check(30), Ok(()));
        assert_eq!(ms_of(m.program("input", &argv("tap 1 1"))), 110.0);
        assert_eq!(ms_of(m.program("pm", &argv("path a"))), 20.0);
        assert_eq!(ms_of(m.program("am", &argv("force-stop a"))), 20.0);
        // Android 11 has no InputShellCommand: `cmd input` is the binder call alone.
        assert_eq!(ms_of(m.program("cmd", &argv("input tap 1 1"))), 20.0);
    }

    #[test]
    fn costs_missing_a_path_of_the_sdk_are_refused_by_key() {
        let c = PhoneCosts::default();
        assert_eq!(c.check(34), Ok(()));
        assert!(c.check(30).unwrap_err().contains("input_ms"));
        assert!(c.check(27).unwrap_err().contains("input_ms"));
        let c = PhoneCosts {
            input_ms: Some(1.0),
            ..PhoneCosts::default()
        };
        assert!(c.check(27).unwrap_err().contains("pm_ms"));
        let c = PhoneCosts {
            inject_ms: None,
            ..PhoneCosts::default()
        };
        assert!(c.check(31).unwrap_err().contains("inject_ms"));
        let c = PhoneCosts {
            cmd_ms: None,
            input_ms: Some(1.0),
            pm_ms: Some(1.0),
            inject_ms: None,
            ..PhoneCosts::default()
        };
        assert_eq!(c.check(23), Ok(()));
        assert!(c.check(24).unwrap_err().contains("cmd_ms"));
    }

    #[test]
    fn injected_events_follow_input_shell_command() {
        let n = |s: &str| injected_events(&argv(s));
        assert_eq!(n("tap 1 1"), 2);
        assert_eq!(n("trackball press"), 2);
        assert_eq!(n("roll 1 1"), 1);
        assert_eq!(n("motionevent DOWN 1 1"), 1);
        assert_eq!(n("keyevent --delay 50 3 4"), 4);
        assert_eq!(n("keycombination -t 100 113 29"), 4);
        assert_eq!(n("text h%sé"), 6);
        assert_eq!(n("help"), 0);
        assert_eq!(n("-d"), 0);
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
