//! `android_open_url`: `am start -a android.intent.action.VIEW -d URL`, the URL passed as one
//! quoted argv element (no shell interpretation), its scheme checked against the device policy
//! (`[open_url] schemes`).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::phone::command;
use super::phone::lock_task::start_refusal;
use super::phone::readiness::require_unlocked;
use super::{DeviceTool, LockRule, SideEffect, ToolCtx};
use crate::device::error::DeviceError;
use crate::device::shell_quote::command_line;

/// Deadline of `am start` for a URL.
pub const OPEN_URL_DEADLINE: Duration = Duration::from_secs(10);
/// Longest accepted URL (characters).
pub const MAX_URL_CHARS: usize = 4096;

/// Why a URL is not acceptable.
#[derive(Debug, PartialEq, Eq)]
pub enum UrlError {
    /// Not a URL (message says why).
    Invalid(&'static str),
}

/// Strictly checks `url` and returns its lowercased scheme (RFC 3986 §3.1:
/// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` before the first `:`). Control characters and
/// whitespace are refused anywhere; `http`/`https` need a non-empty host after `//`.
pub fn url_scheme(url: &str) -> Result<String, UrlError> {
    if url.is_empty() || url.chars().count() > MAX_URL_CHARS {
        return Err(UrlError::Invalid("empty or too long"));
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(UrlError::Invalid(
            "contains whitespace or control characters (percent-encode them)",
        ));
    }
    let (scheme, rest) = url
        .split_once(':')
        .ok_or(UrlError::Invalid("no scheme (expected e.g. https://…)"))?;
    let mut chars = scheme.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !ok {
        return Err(UrlError::Invalid("the scheme is not valid"));
    }
    let scheme = scheme.to_ascii_lowercase();
    if scheme == "http" || scheme == "https" {
        let host = rest
            .strip_prefix("//")
            .ok_or(UrlError::Invalid("http(s) URLs need //host"))?
            .split(['/', '?', '#'])
            .next()
            .unwrap_or("");
        let host = host.rsplit('@').next().unwrap_or("");
        if host.is_empty() || host.starts_with(':') {
            return Err(UrlError::Invalid("http(s) URLs need a host"));
        }
    }
    Ok(scheme)
}

/// Arguments.
#[derive(Debug, Deserialize)]
pub struct Args {
    /// Absolute URL.
    pub url: String,
}

/// The result.
#[derive(Debug, Serialize)]
pub struct Output {
    /// The URL as given.
    pub url: String,
    /// Its scheme, lowercased.
    pub scheme: String,
    /// Always `true` (a failure is an error).
    pub opened: bool,
}

/// `android_open_url`.
pub struct OpenUrl;

impl DeviceTool for OpenUrl {
    const ID: &'static str = "android_open_url";
    const TITLE: &'static str = "Open a URL";
    const DESCRIPTION: &'static str = "Open a URL on the bound phone with the app that handles it (browser, deep link) via an ACTION_VIEW intent. The URL is passed as data, never interpreted by a shell. Only schemes allowed by the device policy (default http, https) are opened; others (javascript:, file:, intent:, …) are refused with policy_denied. Errors: invalid_arguments (not a URL), device_command_failed (no app handles it), device_locked (the lock screen is showing: nothing opened), device_lock_task (a kiosk or screen pinning keeps another app in front: nothing opened).";
    const SIDE_EFFECT: SideEffect = SideEffect::ChangesPhone;
    const BACKENDS: &'static [&'static str] = &["am_start_view"];
    const LOCK_RULE: LockRule = LockRule::Refused;
    type Args = Args;
    type Output = Output;

    fn input_schema() -> Value {
        json!({"type": "object", "required": ["url"], "properties": {
            "url": {"type": "string", "minLength": 3, "maxLength": MAX_URL_CHARS, "description": "Absolute URL, e.g. https://example.com/path?q=1 (percent-encode spaces)."}
        }})
    }

    fn output_schema() -> Value {
        json!({"type": "object", "required": ["url", "scheme", "opened"], "properties": {
            "url": {"type": "string"}, "scheme": {"type": "string"}, "opened": {"const": true}
        }})
    }

    async fn run(args: Args, ctx: &ToolCtx<'_>) -> Result<Output, DeviceError> {
        let url = args.url;
        let scheme = url_scheme(&url).map_err(|UrlError::Invalid(why)| {
            DeviceError::InvalidArguments(format!("invalid url: {why}"))
        })?;
        let allowed = &ctx.policy.open_url.schemes;
        if !allowed.iter().any(|s| s.eq_ignore_ascii_case(&scheme)) {
            return Err(DeviceError::Policy {
                rule: "open_url.schemes",
                why: format!(
                    "scheme `{scheme}` is not allowed (allowed: {})",
                    allowed.join(", ")
                ),
            });
        }
        // A link opened behind the lock screen is not shown to anyone (field bug 48).
        require_unlocked(ctx).await?;
        let cmd = command_line(&[
            "am",
            "start",
            "-a",
            "android.intent.action.VIEW",
            "-d",
            &url,
        ]);
        let out = command::run(ctx, &cmd, OPEN_URL_DEADLINE, 64 * 1024).await?;
        let refused = format!("opening the {scheme} link");
        if let Some(e) = start_refusal(ctx, &out, &refused).await {
            if out.all().contains("unable to resolve Intent") {
                return Err(
                    e.reword(|m| format!("no app on the phone handles {scheme}: URLs ({m})"))
                );
            }
            return Err(e);
        }
        Ok(Output {
            url,
            scheme,
            opened: true,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::tools::registry::assert_output;

    #[test]
    fn schemes_are_parsed_strictly() {
        assert_eq!(url_scheme("https://example.com/a?b=1#c").unwrap(), "https");
        assert_eq!(url_scheme("HTTP://x").unwrap(), "http");
        assert_eq!(url_scheme("javascript:alert(1)").unwrap(), "javascript");
        assert_eq!(url_scheme("file:///sdcard/x").unwrap(), "file");
        assert!(url_scheme("https://").is_err());
        assert!(url_scheme("https:example.com").is_err());
        assert!(url_scheme("-d x:y").is_err());
        assert!(url_scheme("https://a.com/\nreboot").is_err());
        assert!(url_scheme("1http://a").is_err());
        assert!(url_scheme("no-scheme").is_err());
        assert!(url_scheme("https://user@:80").is_err());
    }

    #[test]
    fn outputs_match_the_schema() {
        assert_output::<OpenUrl>(&Output {
            url: "https://example.com".into(),
            scheme: "https".into(),
            opened: true,
        });
    }
}
