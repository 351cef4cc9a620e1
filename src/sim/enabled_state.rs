//! Whether a package, or one of its components, is enabled (AOSP
//! `PackageManager.COMPONENT_ENABLED_STATE_*`, kept per user in `PackageUserState`). A disabled
//! package resolves no activity (`resolve-activity`: `No activity found`; `am start -n`:
//! `Error type 3` / `Activity class {…} does not exist.`) while `pm path` still lists it, and
//! `dumpsys package PKG` prints the state on its `User 0:` line (`enabled=N`) and the disabled
//! components under `disabledComponents:` (AOSP `Settings.dumpPackageLPr`).

use serde::{Deserialize, Serialize};

/// One package's enabled setting, as `pm` names it (`enabledSettingToString`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EnabledState {
    /// `COMPONENT_ENABLED_STATE_DEFAULT` (0): as the manifest says.
    #[default]
    Default,
    /// `COMPONENT_ENABLED_STATE_ENABLED` (1).
    Enabled,
    /// `COMPONENT_ENABLED_STATE_DISABLED` (2): by root, a device admin, or the system.
    Disabled,
    /// `COMPONENT_ENABLED_STATE_DISABLED_USER` (3): Settings → Apps → Disable, or
    /// `pm disable-user`.
    DisabledUser,
    /// `COMPONENT_ENABLED_STATE_DISABLED_UNTIL_USED` (4).
    DisabledUntilUsed,
}

impl EnabledState {
    /// The number `dumpsys package` prints after `enabled=`.
    pub fn number(self) -> u8 {
        match self {
            Self::Default => 0,
            Self::Enabled => 1,
            Self::Disabled => 2,
            Self::DisabledUser => 3,
            Self::DisabledUntilUsed => 4,
        }
    }

    /// `pm`'s word for it (`Package P new state: WORD`).
    pub fn word(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::Enabled => "enabled",
            Self::Disabled => "disabled",
            Self::DisabledUser => "disabled-user",
            Self::DisabledUntilUsed => "disabled-until-used",
        }
    }

    /// Whether the package's activities resolve.
    pub fn is_disabled(self) -> bool {
        matches!(
            self,
            Self::Disabled | Self::DisabledUser | Self::DisabledUntilUsed
        )
    }

    /// Whether the shell user may move a whole package from `self` to `to`: only between
    /// default, enabled and disabled-user (AOSP `PackageManagerService.setEnabledSettings`:
    /// "Shell cannot change component state for P/null to N" otherwise).
    pub fn shell_may_change_to(self, to: EnabledState) -> bool {
        let allowed =
            |s: EnabledState| matches!(s, Self::Default | Self::Enabled | Self::DisabledUser);
        allowed(self) && allowed(to)
    }
}
