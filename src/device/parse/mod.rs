//! Parsers of real Android command output.
//!
//! Every function here is pure, synchronous and panic-free: malformed input yields `None`, an empty
//! collection, or a typed error — never a panic. Each submodule handles one kind of output and its
//! rustdoc names the command, the output shape, the units and the sources (AOSP files and the
//! captures under `tests/fixtures/`, see `tests/fixtures/SOURCES.tsv`).
//!
//! Feed raw device bytes through [`text::decode_output`] first: captures come as UTF-8, UTF-16LE
//! with BOM (Windows PowerShell), with CRLF or `\r\r\n` line ends (PTY + Windows).

/// A text capture under `tests/fixtures/` (path relative to it), for the parsers' unit tests.
#[cfg(test)]
macro_rules! fixture {
    ($path:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/",
            $path
        ))
    };
}

pub mod battery;
pub mod crash_log;
pub mod devices;
pub mod display_manager;
pub mod displays;
pub mod getevent;
pub mod getprop;
pub mod install;
pub mod java_trace;
pub mod keyboard;
pub mod keyguard;
pub mod lock_task;
pub mod package;
pub mod package_state;
pub mod png_check;
pub mod power;
pub mod secure;
pub mod text;
pub mod uiautomator;
pub mod volumes;
pub mod window;
pub mod window_list;
pub mod wm;

#[cfg(test)]
mod tests {
    //! Robustness: every parser on every copied text capture and on many truncations of it must
    //! return (a value, `None` or an error) without panicking.
    use super::*;

    macro_rules! fixture_bytes {
        ($path:literal) => {
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/",
                $path
            ))
            .as_slice()
        };
    }

    fn run_all(text: &str) -> usize {
        let mut hits = 0;
        hits += getprop::parse_getprop(text).len();
        hits += usize::from(wm::parse_wm_size(text).is_some());
        hits += usize::from(wm::parse_wm_density(text).is_some());
        hits += usize::from(battery::parse_dumpsys_battery(text).is_some());
        hits += usize::from(displays::parse_current_focus(text).is_some());
        hits += usize::from(window::parse_resumed_activity(text).is_some());
        hits += displays::WindowDump::parse(text).display_ids().len();
        hits += window_list::parse_window_list(text).len();
        hits += usize::from(keyguard::parse_keyguard(text).showing.is_some());
        hits += usize::from(power::parse_screen_on(text).is_some());
        hits += devices::parse_devices_l(text).len();
        hits += package::parse_pm_list_packages(text).len();
        hits += usize::from(package::parse_resolve_activity_brief(text).is_some());
        hits += usize::from(uiautomator::parse_uiautomator_dump(text).is_ok());
        hits += usize::from(png_check::find_png(text.as_bytes()).is_ok());
        hits
    }

    #[test]
    fn no_parser_panics_on_captures_or_their_truncations() {
        let captures: [&[u8]; 10] = [
            fixture_bytes!("power/samsung-dumpsys-power-head-mixed-separators-PARTIAL.txt"),
            fixture_bytes!("battery/samsung-s24-oneui-extended.txt"),
            fixture_bytes!("getprop/asus-tf201-transformer-prime-ics-4.0.txt"),
            fixture_bytes!("window/avc-dumpsys-window-windows-jb-emulator.txt"),
            fixture_bytes!("window/appium-android13-emulator-dumpsys-window-windows.txt"),
            fixture_bytes!("devices/huawei-mate10-devices-l-usb-transport-id.txt"),
            fixture_bytes!("wm/samsung-s24-wm-size.txt"),
            fixture_bytes!("packages/appium-adb-pm-list-packages-show-versioncode.txt"),
            fixture_bytes!("uiautomator/huawei-launcher-minidom-pretty-naf.xml"),
            fixture_bytes!("screencap/phone-720x1612-files-app-srgb-sbit.png"),
        ];
        let mut total_hits = 0;
        for bytes in captures {
            let step = bytes.len() / 60 + 1;
            for cut in (0..=bytes.len()).step_by(step) {
                total_hits += run_all(&text::decode_output(&bytes[..cut]));
                let _ = png_check::find_png(&bytes[..cut]);
            }
            total_hits += run_all(&text::decode_output(bytes));
        }
        // Whole captures parse: getprop's 175 properties alone exceed this.
        assert!(total_hits > 175, "{total_hits}");
    }
}
