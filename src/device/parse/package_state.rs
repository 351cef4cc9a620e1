//! A package's per-user state from `dumpsys package PKG` (AOSP `Settings.dumpPackageLPr`): the
//! `User N:` line of each user (`enabled=N`, `suspended=`, `hidden=`, `installed=`), then, indented
//! under it, `lastDisabledCaller:` and the `disabledComponents:` list (full class names, one a
//! line). The line's fields vary by release — Android 4.4 `User 0:  installed=true blocked=false
//! stopped=false notLaunched=false enabled=3`, Android 14 `User 0: ceDataInode=… installed=true
//! hidden=false suspended=false distractionFlags=0 stopped=false notLaunched=false enabled=3 …`,
//! a Pixel on Android 16 adds `pccCeDataInode=`, `appLockEnabled=`, `quarantined=` — so fields
//! are read by name. Captures: `tests/fixtures/install-launch/pixel9a-dumpsys-package-user0-enabled-3.txt`.
//!
//! `enabled=` holds `PackageManager.COMPONENT_ENABLED_STATE_*`: 0 default, 1 enabled,
//! 2 disabled, 3 disabled by the user, 4 disabled until used.

/// The enabled setting of a package for one user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnabledSetting {
    /// 0 or 1: its activities resolve.
    Enabled,
    /// 2 (`COMPONENT_ENABLED_STATE_DISABLED`): by root, a device admin, or the system.
    Disabled,
    /// 3 (`COMPONENT_ENABLED_STATE_DISABLED_USER`): Settings → Apps → Disable, or
    /// `pm disable-user`.
    DisabledUser,
    /// 4 (`COMPONENT_ENABLED_STATE_DISABLED_UNTIL_USED`).
    DisabledUntilUsed,
}

impl EnabledSetting {
    /// `enabled=N`'s value; `None` for a number AOSP does not define.
    pub fn from_number(n: u8) -> Option<EnabledSetting> {
        Some(match n {
            0 | 1 => Self::Enabled,
            2 => Self::Disabled,
            3 => Self::DisabledUser,
            4 => Self::DisabledUntilUsed,
            _ => return None,
        })
    }

    /// `pm`'s word for the state (`enabledSettingToString`).
    pub fn word(self) -> &'static str {
        match self {
            Self::Enabled => "enabled",
            Self::Disabled => "disabled",
            Self::DisabledUser => "disabled-user",
            Self::DisabledUntilUsed => "disabled-until-used",
        }
    }
}

/// One user's block of a package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserState {
    /// The user id (`User 0:`).
    pub user: u32,
    /// `enabled=`; `None` when the line has none or an unknown number.
    pub enabled: Option<EnabledSetting>,
    /// `suspended=true` (Digital Wellbeing's "App paused", a device admin).
    pub suspended: bool,
    /// `lastDisabledCaller:` (who disabled it: `com.android.shell`, `shell:0`, Settings).
    pub last_disabled_caller: Option<String>,
    /// `disabledComponents:`, fully qualified class names.
    pub disabled_components: Vec<String>,
}

/// Parses every `User N:` block of `dumpsys package PKG` (the first package's; a second
/// `Package [` header ends it). Empty when there is none (an unknown package, error text).
pub fn parse_user_states(text: &str) -> Vec<UserState> {
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut out: Vec<UserState> = Vec::new();
    // The user line's indent, and whether the next deeper lines are disabled components.
    let mut user_indent: Option<usize> = None;
    let mut in_components: Option<usize> = None;
    let mut packages = 0;
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if t.starts_with("Package [") {
            packages += 1;
            if packages > 1 {
                break;
            }
            user_indent = None;
            in_components = None;
            continue;
        }
        if let Some(user) = user_line(t) {
            out.push(user);
            user_indent = Some(indent(line));
            in_components = None;
            continue;
        }
        let (Some(ui), Some(cur)) = (user_indent, out.last_mut()) else {
            continue;
        };
        if indent(line) <= ui {
            user_indent = None;
            in_components = None;
            continue;
        }
        if let Some(ci) = in_components {
            if indent(line) > ci && !t.contains(char::is_whitespace) && !t.ends_with(':') {
                cur.disabled_components.push(t.to_string());
                continue;
            }
            in_components = None;
        }
        if t == "disabledComponents:" {
            in_components = Some(indent(line));
        } else if let Some(caller) = t.strip_prefix("lastDisabledCaller:") {
            cur.last_disabled_caller = Some(caller.trim().to_string());
        }
    }
    out
}

/// `User N: k=v k=v …` → its state; `None` for any other line.
fn user_line(t: &str) -> Option<UserState> {
    let rest = t.strip_prefix("User ")?;
    let (id, fields) = rest.split_once(':')?;
    let user = id.trim().parse().ok()?;
    let field = |name: &str| {
        fields
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    // A `User 0:` line always carries `installed=`; without it this is another list.
    field("installed")?;
    Some(UserState {
        user,
        enabled: field("enabled")
            .and_then(|v| v.parse().ok())
            .and_then(EnabledSetting::from_number),
        suspended: field("suspended") == Some("true"),
        last_disabled_caller: None,
        disabled_components: Vec::new(),
    })
}

/// The state of `user`, else of the first user listed.
pub fn user_state(states: &[UserState], user: u32) -> Option<&UserState> {
    states
        .iter()
        .find(|s| s.user == user)
        .or_else(|| states.first())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixel_android16_line_read_by_name() {
        let states = parse_user_states(fixture!(
            "install-launch/pixel9a-dumpsys-package-user0-enabled-3.txt"
        ));
        let s = user_state(&states, 0).unwrap();
        assert_eq!(s.enabled, Some(EnabledSetting::DisabledUser));
        assert!(!s.suspended);
    }

    #[test]
    fn kitkat_line_caller_and_components() {
        let text = "Packages:\n  Package [com.android.provision] (41986af8):\n    userId=10013 gids=[]\n    pkgFlags=[ SYSTEM HAS_CODE ]\n    User 0:  installed=true blocked=false stopped=false notLaunched=false enabled=3\n      lastDisabledCaller: shell:0\n    grantedPermissions:\n      android.permission.WRITE_SETTINGS\n";
        let states = parse_user_states(text);
        assert_eq!(states.len(), 1);
        assert_eq!(states[0].last_disabled_caller.as_deref(), Some("shell:0"));
        // grantedPermissions belongs to the package, not the user.
        assert!(states[0].disabled_components.is_empty());
        let text = "  Package [ru.meefik.linuxdeploy] (1a):\n    User 0: ceDataInode=1 installed=true hidden=false suspended=false stopped=false notLaunched=false enabled=0 instant=false virtual=false\n      gids=[3003]\n      disabledComponents:\n        ru.meefik.linuxdeploy.MainActivity\n        ru.meefik.linuxdeploy.Launcher\n      enabledComponents:\n        ru.meefik.linuxdeploy.Stealth\n    User 10: ceDataInode=0 installed=false hidden=false suspended=true stopped=true notLaunched=true enabled=2 instant=false virtual=false\n  Package [other] (2b):\n    User 0: installed=true enabled=3\n";
        let states = parse_user_states(text);
        assert_eq!(states.len(), 2, "{states:?}");
        assert_eq!(states[0].enabled, Some(EnabledSetting::Enabled));
        assert_eq!(
            states[0].disabled_components,
            [
                "ru.meefik.linuxdeploy.MainActivity",
                "ru.meefik.linuxdeploy.Launcher"
            ]
        );
        assert_eq!(
            (states[1].enabled, states[1].suspended),
            (Some(EnabledSetting::Disabled), true)
        );
        assert_eq!(user_state(&states, 10).unwrap().user, 10);
        assert_eq!(user_state(&states, 7).unwrap().user, 0);
    }

    #[test]
    fn no_user_line_or_odd_values() {
        assert!(parse_user_states("Unable to find package: x\n").is_empty());
        let s = parse_user_states("    User 0: installed=true enabled=9\n");
        assert_eq!(s[0].enabled, None);
        // A permissions list that names users is not a user line.
        assert!(parse_user_states("    User 0: granted=true\n").is_empty());
    }
}
