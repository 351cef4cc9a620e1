//! Package names and the package manager: the name rule shared by schemas and code, whether a
//! package is installed, and the launcher categories app tools query.

use std::time::Duration;

use serde_json::{json, Value};

use super::command;
use crate::device::error::DeviceError;
use crate::device::shell_quote::command_line;
use crate::device::tools::ToolCtx;

/// Intent category of phone launchers.
pub const LAUNCHER: &str = "android.intent.category.LAUNCHER";
/// Intent category of TV launchers (field bug 17).
pub const LEANBACK: &str = "android.intent.category.LEANBACK_LAUNCHER";

/// The JSON Schema regex of a package name (same rule as [`valid_package`]).
pub const PACKAGE_PATTERN: &str = r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$";

/// Whether `name` is a syntactically valid Android package name (AOSP
/// `FrameworkParsingPackageUtils.validateName`: dot-separated segments of `[A-Za-z][A-Za-z0-9_]*`,
/// at least two segments), at most 255 bytes.
pub fn valid_package(name: &str) -> bool {
    let segs: Vec<&str> = name.split('.').collect();
    name.len() <= 255
        && segs.len() >= 2
        && segs.iter().all(|s| {
            let mut c = s.chars();
            c.next().is_some_and(|f| f.is_ascii_alphabetic())
                && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
        })
}

/// Checks a `package` argument with [`valid_package`] (defence in depth behind the schema).
pub fn check_package(name: &str) -> Result<&str, DeviceError> {
    if valid_package(name) {
        Ok(name)
    } else {
        Err(DeviceError::InvalidArguments(
            "package must be an Android package name such as com.android.settings".into(),
        ))
    }
}

/// Schema of a `package` argument; `description` completes "Android package name …".
pub fn package_schema(description: &str) -> Value {
    json!({"type": "string", "minLength": 3, "maxLength": 255, "pattern": PACKAGE_PATTERN,
           "description": description})
}

/// Whether the output says the command itself is missing (Android < 7 has no `cmd package`).
pub fn cmd_unsupported(t: &str) -> bool {
    t.contains("Unknown command")
        || t.contains("Can't find service")
        || t.contains("not found")
        || t.contains("inaccessible")
}

/// Fails with `app_not_installed` unless `pm path PKG` lists an APK.
pub async fn require_installed(
    ctx: &ToolCtx<'_>,
    pkg: &str,
    deadline: Duration,
) -> Result<(), DeviceError> {
    let out = command::run(
        ctx,
        &command_line(&["pm", "path", pkg]),
        deadline,
        64 * 1024,
    )
    .await?;
    if out.stdout.lines().any(|l| l.trim().starts_with("package:")) {
        Ok(())
    } else {
        Err(DeviceError::AppNotInstalled {
            package: pkg.to_string(),
            hint: "",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names() {
        assert!(valid_package("com.android.settings"));
        assert!(valid_package("com.example.tv_2"));
        assert!(!valid_package("settings"));
        assert!(!valid_package("com..x"));
        assert!(!valid_package("com.1x"));
        assert!(!valid_package("com.x;reboot"));
        let re = regex::Regex::new(PACKAGE_PATTERN).unwrap();
        assert!(re.is_match("com.android.settings") && !re.is_match("a;b.c"));
    }
}
