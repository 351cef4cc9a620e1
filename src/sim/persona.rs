//! Personas: the device model data (build props, displays, adbd features) a simulated phone
//! presents. Each persona is a TOML file under `personas/` (in this crate), compiled in with
//! `include_str!`.

use serde::Deserialize;

/// One physical display of a persona.
#[derive(Clone, Debug, Deserialize)]
pub struct DisplaySpec {
    /// Logical display id (`-d` of `screencap` on old builds, `display-id` in dumps).
    pub id: u32,
    /// 64-bit physical display id (`screencap -d` on Android 12+).
    pub physical_id: u64,
    /// Width in pixels (portrait).
    pub width: u32,
    /// Height in pixels (portrait).
    pub height: u32,
    /// Density in dpi (`wm density`).
    pub density: u32,
}

/// A logical display besides the default one, as `dumpsys window` lists it: a virtual display
/// of a casting or projection app (`mDisplayId=62`), a second screen whose system UI shows a
/// sub-home (`com.android.systemui/.SubHomeActivity`). It lives in the window dump only (no
/// panel of its own: `screencap` and `input` stay on display 0), which is what field bugs 52
/// and 53 are about. Persona TOML `[[extra_displays]]`, or `POST /v1/state
/// {"extra_displays": [...]}`.
#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ExtraDisplay {
    /// Logical display id (`Display: mDisplayId=<id>`); never 0.
    pub id: u32,
    /// Width, px.
    pub width: u32,
    /// Height, px.
    pub height: u32,
    /// Density, dpi.
    #[serde(default = "default_density")]
    pub density: u32,
    /// `package/.Activity` focused on it (`mCurrentFocus`/`mFocusedApp`), if any.
    #[serde(default)]
    pub focus: Option<String>,
    /// Printed before display 0 (AOSP prints `RootWindowContainer`'s children in their order,
    /// which puts a display added later first on some builds).
    #[serde(default)]
    pub listed_first: bool,
}

fn default_density() -> u32 {
    320
}

/// A device persona, read from TOML.
#[derive(Clone, Debug, Deserialize)]
pub struct Persona {
    /// Persona name, e.g. `pixel-android14`.
    pub name: String,
    /// `ro.product.manufacturer`.
    pub manufacturer: String,
    /// `ro.product.brand`.
    pub brand: String,
    /// `ro.product.name`.
    pub product: String,
    /// `ro.product.device`.
    pub device: String,
    /// Default `ro.product.model`.
    pub model: String,
    /// `ro.build.version.release`.
    pub release: String,
    /// `ro.build.version.sdk`.
    pub sdk: u32,
    /// `ro.build.id`.
    pub build_id: String,
    /// `ro.build.version.incremental`.
    pub incremental: String,
    /// `ro.build.version.security_patch`.
    pub security_patch: String,
    /// adbd features advertised in the CNXN banner (empty = legacy adbd, no shell_v2).
    pub features: Vec<String>,
    /// Launcher package name.
    pub launcher_package: String,
    /// Launcher activity (short form, starting with `.`).
    pub launcher_activity: String,
    /// `dumpsys battery` prints Android 14's `Charging state`/`Capacity level` lines.
    pub battery_capacity_level: bool,
    /// Raw `screencap` writes the 16-byte header with a colorspace word (Android 9+).
    pub screencap_colorspace: bool,
    /// Physical displays; the first is the default display.
    pub displays: Vec<DisplaySpec>,
    /// Some of `monkey`'s SYS_KEYS (HOME, BACK, CALL, ENDCALL, VOLUME_*, MUTE) exist as hardware
    /// keys (`KeyCharacterMap.deviceHasKey`). Phones have volume keys; key-less AVDs do not, and
    /// there `monkey` refuses to run (AOSP `MonkeySourceRandom.validateKeyCategory`).
    #[serde(default = "yes")]
    pub physical_sys_keys: bool,
    /// Programs this Android release has no `/system/bin` entry for (the shell answers
    /// "inaccessible or not found", 127): e.g. `cmd` arrived in Android 7.0 (AOSP
    /// `frameworks/native/cmds/cmd`, first in the N release).
    #[serde(default)]
    pub missing_programs: Vec<String>,
    /// Logical displays besides display 0 in `dumpsys window` (`[[extra_displays]]`).
    #[serde(default)]
    pub extra_displays: Vec<ExtraDisplay>,
    /// Phone-side costs for `sim --timing realistic` (`[timing]`; the file cites the sources).
    #[serde(default)]
    pub timing: crate::timing::PhoneCosts,
}

fn yes() -> bool {
    true
}

/// Programs a stock build installs in `/system/bin` (the sim's [`crate::programs`] runs each);
/// a persona's `missing_programs` removes some, see [`Persona::system_bin`].
pub const SYSTEM_BIN: &[&str] = &[
    "am",
    "cat",
    "cmd",
    "content",
    "date",
    "dumpsys",
    "echo",
    "false",
    "getevent",
    "getprop",
    "grep",
    "head",
    "id",
    "ime",
    "input",
    "logcat",
    "ls",
    "mkdir",
    "monkey",
    "pidof",
    "ps",
    "pm",
    "printf",
    "pwd",
    "rm",
    "screencap",
    "screenrecord",
    "service",
    "setprop",
    "settings",
    "sha1sum",
    "sleep",
    "sm",
    "tail",
    "test",
    "[",
    "touch",
    "true",
    "uiautomator",
    "uname",
    "wc",
    "whoami",
    "wm",
];

/// Name of the default persona.
pub const DEFAULT_PERSONA: &str = "pixel-android14";

const SOURCES: &[(&str, &str)] = &[
    (
        "pixel-android14",
        include_str!("personas/pixel-android14.toml"),
    ),
    (
        "samsung-android13",
        include_str!("personas/samsung-android13.toml"),
    ),
    (
        "foldable-android14",
        include_str!("personas/foldable-android14.toml"),
    ),
    (
        "legacy-android6",
        include_str!("personas/legacy-android6.toml"),
    ),
    (
        "emulator-android15",
        include_str!("personas/emulator-android15.toml"),
    ),
    (
        "pixel-android16",
        include_str!("personas/pixel-android16.toml"),
    ),
];

impl Persona {
    /// The programs this persona's `/system/bin` holds: [`SYSTEM_BIN`] minus
    /// `missing_programs`.
    pub fn system_bin(&self) -> Vec<&'static str> {
        SYSTEM_BIN
            .iter()
            .copied()
            .filter(|name| !self.missing_programs.iter().any(|m| m == name))
            .collect()
    }

    /// Loads a compiled-in persona by name. Errors name the known personas, or the `[timing]`
    /// figure its SDK's command paths need ([`crate::timing::PhoneCosts::check`]).
    pub fn load(name: &str) -> Result<Persona, String> {
        let known: Vec<&str> = SOURCES.iter().map(|(n, _)| *n).collect();
        let (_, text) = SOURCES
            .iter()
            .find(|(n, _)| *n == name)
            .ok_or_else(|| format!("unknown persona {name:?}; known: {}", known.join(", ")))?;
        let persona: Persona = toml::from_str(text).map_err(|e| format!("persona {name}: {e}"))?;
        if persona.displays.is_empty() {
            return Err(format!("persona {name}: no displays"));
        }
        persona
            .timing
            .check(persona.sdk)
            .map_err(|e| format!("persona {name}: {e}"))?;
        Ok(persona)
    }

    /// Whether adbd speaks shell protocol v2 (exit codes, split stderr).
    pub fn shell_v2(&self) -> bool {
        self.features.iter().any(|f| f == "shell_v2")
    }

    /// Whether the `stat_v2` sync requests (`STA2`/`LST2`) are advertised.
    pub fn has_feature(&self, feature: &str) -> bool {
        self.features.iter().any(|f| f == feature)
    }

    /// `ro.build.fingerprint`: `brand/product/device:release/id/incremental:user/release-keys`.
    pub fn fingerprint(&self) -> String {
        format!(
            "{}/{}/{}:{}/{}/{}:user/release-keys",
            self.brand, self.product, self.device, self.release, self.build_id, self.incremental
        )
    }

    /// Full launcher component `pkg/.Activity`.
    pub fn launcher_component(&self) -> (String, String) {
        (
            self.launcher_package.clone(),
            self.launcher_activity.clone(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_personas_load() {
        for (name, _) in SOURCES {
            let p = Persona::load(name).unwrap();
            assert_eq!(&p.name, name);
        }
        assert!(Persona::load("nope").is_err());
        assert!(!Persona::load("legacy-android6").unwrap().shell_v2());
        assert_eq!(
            Persona::load("foldable-android14").unwrap().displays.len(),
            2
        );
    }
}
