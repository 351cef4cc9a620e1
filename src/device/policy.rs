//! Device policy (`device-profiles/*.toml`): which tools a phone offers, destructive-tool gates,
//! URL schemes, file roots, the shell allow-list, high-risk app patterns and device quirks.
//!
//! `default.toml` applies to every phone; every other profile whose `[match]` fits the phone
//! (manufacturer / model globs, SDK range) is merged over it in file-name order, key by key.
//! Source of the boundaries: Device Profile v1 §4 and §7.

use std::path::Path;

use serde::Deserialize;

/// The built-in default profile (also the fallback when no directory is given).
pub const DEFAULT_PROFILE: &str = include_str!("../../device-profiles/default.toml");

/// Effective policy of one phone.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Tool availability.
    pub tools: ToolsPolicy,
    /// Destructive-tool gates.
    pub gates: Gates,
    /// `android_open_url`.
    pub open_url: OpenUrlPolicy,
    /// `android_file_pull` / `android_file_push`.
    pub files: FilesPolicy,
    /// `android_shell`.
    pub shell: ShellPolicy,
    /// High-risk apps.
    pub risk: RiskPolicy,
    /// Device quirks.
    pub quirks: Quirks,
    /// What is undone when a binding ends (`[release]`; every key has a default, so a
    /// profile without the section hands phones back with the defaults).
    #[serde(default)]
    pub release: ReleasePolicy,
    /// Present in non-default profiles only.
    #[serde(default, rename = "match")]
    pub matcher: Option<Matcher>,
}

/// `[tools]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ToolsPolicy {
    /// Tool ids left out of the card.
    pub disabled: Vec<String>,
}

/// `[gates]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Gates {
    /// `android_app_install` allowed.
    pub allow_install: bool,
    /// `android_app_uninstall` allowed.
    pub allow_uninstall: bool,
}

/// `[open_url]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OpenUrlPolicy {
    /// Allowed URL schemes (lowercase).
    pub schemes: Vec<String>,
}

/// `[files]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FilesPolicy {
    /// Allowed device directory trees (absolute).
    pub roots: Vec<String>,
    /// Largest pull, bytes.
    pub max_pull_bytes: u64,
    /// Largest push, bytes.
    pub max_push_bytes: u64,
}

/// `[shell]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShellPolicy {
    /// Whether `android_shell` is in the card at all.
    pub enabled: bool,
    /// Output cap, bytes.
    pub max_output_bytes: u64,
    /// Allowed programs and argument patterns.
    #[serde(default)]
    pub allow: Vec<ShellRule>,
}

/// One `[[shell.allow]]` rule.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ShellRule {
    /// Program name (`argv[0]`).
    pub program: String,
    /// Anchored regexes, one per argument position.
    #[serde(default)]
    pub args: Vec<String>,
}

/// `[risk]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RiskPolicy {
    /// Package globs.
    pub refuse_packages: Vec<String>,
    /// `package/activity` globs.
    pub refuse_activities: Vec<String>,
}

/// `[quirks]`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Quirks {
    /// `"auto"` or a display id.
    pub capture_display: toml::Value,
    /// `"auto"`, `"input"` or `"adbkeyboard"`.
    pub text_input: String,
    /// How re-encoded screenshots are captured: `"auto"` (raw framebuffer over USB and local
    /// links, PNG over the network: `docs/performance.md`), `"raw"` or `"png"`. The PNG
    /// passthrough (`format: png`, no `max_dimension`) always captures PNG.
    #[serde(default = "auto")]
    pub screenshot_capture: String,
}

/// `[release]`: the steps run when a binding ends (`auth.logout`, lease expiry), before the
/// phone can be claimed again (issue 21 §3; STF's device cleanup and AWS Device Farm's instance
/// profiles are the models). Each step undoes only what tools did on the ending binding's
/// channel (recorded as they ran, `connector::release`), except `go_home` and `reboot`. Every
/// key is optional; the defaults are the ones below.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ReleasePolicy {
    /// `am force-stop` every app `android_app_launch` started (default true).
    pub force_stop_apps: bool,
    /// `pm uninstall` every package `android_app_install` added (new packages only, never an
    /// update of an app that was there; default true).
    pub uninstall_apps: bool,
    /// `rm -f` every file `android_file_push` wrote (default true).
    pub remove_files: bool,
    /// Put `accelerometer_rotation` / `user_rotation` back to what they were before the first
    /// change (default true).
    pub reset_orientation: bool,
    /// `wm size reset` / `wm density reset` after an override through `android_shell`
    /// (default true).
    pub reset_display: bool,
    /// Select the input method that was selected before a tool switched it (default true).
    pub reset_ime: bool,
    /// Put the animation scales changed through `android_shell` back (default true).
    pub reset_animation_scales: bool,
    /// Press HOME at the end (default true).
    pub go_home: bool,
    /// Reboot the phone at the end (default false).
    pub reboot: bool,
    /// Deadline of one step, seconds (default 20).
    pub step_timeout_secs: u64,
    /// Deadline of the whole release, seconds (default 120); a step gets what is left of it
    /// when that is less than its own.
    pub deadline_secs: u64,
}

impl Default for ReleasePolicy {
    fn default() -> Self {
        ReleasePolicy {
            force_stop_apps: true,
            uninstall_apps: true,
            remove_files: true,
            reset_orientation: true,
            reset_display: true,
            reset_ime: true,
            reset_animation_scales: true,
            go_home: true,
            reboot: false,
            step_timeout_secs: 20,
            deadline_secs: 120,
        }
    }
}

fn auto() -> String {
    "auto".into()
}

/// `[match]` of a profile.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// Glob on `ro.product.manufacturer`.
    pub manufacturer: Option<String>,
    /// Glob on `ro.product.model`.
    pub model: Option<String>,
    /// Lowest SDK.
    pub sdk_min: Option<u32>,
    /// Highest SDK.
    pub sdk_max: Option<u32>,
}

/// What a phone is, for matching.
#[derive(Debug, Clone, Default)]
pub struct PhoneFacts {
    /// `ro.product.manufacturer`.
    pub manufacturer: String,
    /// `ro.product.model`.
    pub model: String,
    /// `ro.build.version.sdk`.
    pub sdk: Option<u32>,
}

/// Errors loading profiles.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// A file could not be read.
    #[error("cannot read device profile {0}: {1}")]
    Read(String, std::io::Error),
    /// A file is not valid TOML or has unknown keys.
    #[error("invalid device profile {0}: {1}")]
    Invalid(String, String),
}

/// The loaded profiles: the default table and the refinements with their matchers.
#[derive(Debug, Clone)]
pub struct Profiles {
    default: toml::Table,
    refinements: Vec<(String, Matcher, toml::Table)>,
}

impl Profiles {
    /// The built-in default only.
    pub fn builtin() -> Profiles {
        let default = DEFAULT_PROFILE.parse::<toml::Table>().unwrap_or_default();
        Profiles {
            default,
            refinements: Vec::new(),
        }
    }

    /// Loads `dir/default.toml` (or the built-in one) and every other `*.toml` in `dir`.
    pub fn load_dir(dir: &Path) -> Result<Profiles, PolicyError> {
        let mut out = Profiles::builtin();
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| PolicyError::Read(dir.display().to_string(), e))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        names.sort();
        for path in names {
            let name = path.display().to_string();
            let text =
                std::fs::read_to_string(&path).map_err(|e| PolicyError::Read(name.clone(), e))?;
            let table: toml::Table = text
                .parse()
                .map_err(|e: toml::de::Error| PolicyError::Invalid(name.clone(), e.to_string()))?;
            if path.file_name().is_some_and(|f| f == "default.toml") {
                out.default = table;
            } else {
                let matcher: Matcher = table
                    .get("match")
                    .cloned()
                    .map(|m| m.try_into())
                    .transpose()
                    .map_err(|e: toml::de::Error| {
                        PolicyError::Invalid(name.clone(), e.to_string())
                    })?
                    .unwrap_or_default();
                out.refinements.push((name, matcher, table));
            }
        }
        out.for_phone(&PhoneFacts::default())?;
        Ok(out)
    }

    /// The effective policy of a phone.
    pub fn for_phone(&self, phone: &PhoneFacts) -> Result<Policy, PolicyError> {
        let mut merged = self.default.clone();
        for (_, matcher, table) in &self.refinements {
            if matches(matcher, phone) {
                merge(&mut merged, table);
            }
        }
        merged.remove("match");
        toml::Value::Table(merged)
            .try_into()
            .map_err(|e: toml::de::Error| {
                PolicyError::Invalid("merged profile".into(), e.to_string())
            })
    }

    /// Policy used for the card (which tools exist at all): the default profile.
    pub fn card_policy(&self) -> Policy {
        self.for_phone(&PhoneFacts::default())
            .or_else(|_| Profiles::builtin().for_phone(&PhoneFacts::default()))
            .expect("the built-in default profile is valid")
    }
}

fn merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

fn matches(m: &Matcher, p: &PhoneFacts) -> bool {
    m.manufacturer
        .as_deref()
        .is_none_or(|g| glob(g, &p.manufacturer))
        && m.model.as_deref().is_none_or(|g| glob(g, &p.model))
        && m.sdk_min.is_none_or(|min| p.sdk.is_some_and(|s| s >= min))
        && m.sdk_max.is_none_or(|max| p.sdk.is_some_and(|s| s <= max))
}

/// Case-insensitive glob with `*` (any run) and `?` (one char).
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_default_is_valid_and_safe() {
        let p = Profiles::builtin().card_policy();
        assert!(!p.shell.enabled);
        assert!(!p.gates.allow_uninstall);
        assert_eq!(p.open_url.schemes, vec!["http", "https"]);
        assert!(p.files.roots.contains(&"/sdcard/Download".to_string()));
        assert_eq!(
            p.release,
            ReleasePolicy::default(),
            "the file states the defaults"
        );
        let mut without: toml::Table = DEFAULT_PROFILE.parse().unwrap();
        without.remove("release");
        let p: Policy = toml::Value::Table(without).try_into().unwrap();
        assert_eq!(
            p.release,
            ReleasePolicy::default(),
            "an absent section is the defaults"
        );
    }

    #[test]
    fn refinements_apply_only_to_matching_phones() {
        let dir = std::env::temp_dir().join(format!("xagent-profiles-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("samsung.toml"),
            "[match]\nmanufacturer = \"samsung\"\nsdk_min = 30\n[gates]\nallow_uninstall = true\n",
        )
        .unwrap();
        let profiles = Profiles::load_dir(&dir).unwrap();
        let samsung = PhoneFacts {
            manufacturer: "Samsung".into(),
            model: "SM-S921B".into(),
            sdk: Some(34),
        };
        let old = PhoneFacts {
            sdk: Some(28),
            ..samsung.clone()
        };
        let pixel = PhoneFacts {
            manufacturer: "Google".into(),
            model: "Pixel 8".into(),
            sdk: Some(34),
        };
        assert!(profiles.for_phone(&samsung).unwrap().gates.allow_uninstall);
        assert!(!profiles.for_phone(&old).unwrap().gates.allow_uninstall);
        assert!(!profiles.for_phone(&pixel).unwrap().gates.allow_uninstall);
        assert!(
            profiles.for_phone(&samsung).unwrap().gates.allow_install,
            "other keys kept"
        );
        std::fs::write(dir.join("bad.toml"), "[gates]\nallow_everything = true\n").unwrap();
        assert!(
            Profiles::load_dir(&dir).is_err(),
            "unknown keys are refused"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn globs() {
        assert!(glob("SM-S9*", "sm-s921b"));
        assert!(glob("com.*.bank*", "com.example.bankapp"));
        assert!(!glob("com.*.bank", "com.example.bankapp"));
        assert!(glob("*", ""));
    }
}
