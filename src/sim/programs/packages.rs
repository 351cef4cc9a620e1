//! Package manager additions of the simulated phone: `pm install|uninstall`,
//! `cmd package query-activities`, `dumpsys package PKG`, and the ACTION_VIEW case of `am start`.
//!
//! Sources (formats): AOSP `frameworks/base/services/core/java/com/android/server/pm/
//! PackageManagerShellCommand.java` — `runInstall` prints `Success` or
//! `Failure [INSTALL_…: message]` (exit 1), `runUninstall` prints `Success` or
//! `Failure [DELETE_FAILED_INTERNAL_ERROR]` (also for unknown packages), `runQueryIntentActivities`
//! with `--brief` prints per match the `priority=… preferredOrder=… match=0x… specificIndex=…
//! isDefault=…` line and the short component, or `No activities found`;
//! `ComputerEngine.dumpPackagesLPr` prints `Package [PKG] (hash):` blocks with `versionName=`;
//! `am start -a android.intent.action.VIEW -d URL` prints `Starting: Intent { act=… dat=… }`
//! or `Error: Activity not started, unable to resolve Intent { … }`.
//!
//! Simulator simplification: an installed APK is kept in the VFS at `/data/app/PKG-1/base.apk`
//! (its splits beside it as `split_NAME.apk`; the VFS is the package database). The sim does not
//! parse binary XML: a file is an APK when it starts with the ZIP signature `PK\x03\x04`, and its
//! manifest facts are read from text in it — `package="…"`, `android:versionName="…"`,
//! `android.intent.category.LAUNCHER`, and for split apps the manifest attributes AOSP reads
//! (`ApkLiteParseUtils.parseApkLite`): on a base `android:isSplitRequired="true"` and
//! `android:requiredSplitTypes="a,b"`, on a split APK `split="NAME"` and
//! `android:splitTypes="a"`; `android:targetSdkVersion="N"` is held against the Android 14+
//! floor (`INSTALL_FAILED_DEPRECATED_SDK_VERSION`, lifted by `--bypass-low-target-sdk-block`);
//! `android:minSdkVersion="N"` (or a preview codename) against the persona's API level
//! (`INSTALL_FAILED_OLDER_SDK`), and the `lib/<abi>/` entries against `ro.product.cpu.abilist`
//! (`INSTALL_FAILED_NO_MATCHING_ABIS`), see `install_session.rs`. A base that requires splits installs only with a split of each
//! required type in the same session, else `INSTALL_FAILED_MISSING_SPLIT: Missing split for PKG`
//! (`PackageInstallerSession.validateApkInstallLocked`); see `install_session.rs`.

use super::Output;
use crate::apps;
use crate::phone::{Phone, PhoneState};

/// Where installed APKs live in the VFS.
pub const APP_DIR: &str = "/data/app";

/// Manifest facts of a sim APK.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimApk {
    /// `package="…"`.
    pub package: String,
    /// `android:versionName="…"`.
    pub version_name: Option<String>,
    /// Declares a LAUNCHER activity.
    pub launcher: bool,
    /// `split="NAME"`: this is a split APK, not a base.
    pub split: Option<String>,
    /// `android:isSplitRequired="true"` (a base that needs splits).
    pub split_required: bool,
    /// `android:requiredSplitTypes="…"` (comma-separated) of a base.
    pub required_split_types: Vec<String>,
    /// `android:splitTypes="…"` of a split.
    pub split_types: Vec<String>,
    /// `android:targetSdkVersion="N"`; `None` when the text has none (the sim's test APKs:
    /// no floor is checked for them).
    pub target_sdk: Option<u32>,
    /// `android:minSdkVersion="N"` (a number, or a preview's codename); `None` when the text
    /// has none.
    pub min_sdk: Option<String>,
    /// The ABIs of its `lib/<abi>/` entries (native code), AOSP's ABI names only.
    pub native_abis: Vec<String>,
}

/// ABI names AOSP knows (`Build.SUPPORTED_ABIS` values; NDK `abi` names).
const ABIS: &[&str] = &[
    "armeabi",
    "armeabi-v7a",
    "arm64-v8a",
    "x86",
    "x86_64",
    "riscv64",
    "mips",
    "mips64",
];

/// The ABIs named by `lib/<abi>/` in the APK's bytes (its zip entry names are stored as text).
fn lib_abis(text: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for (i, _) in text.match_indices("lib/") {
        let rest = &text[i + 4..];
        let Some(end) = rest.find('/') else { continue };
        let abi = &rest[..end];
        if ABIS.contains(&abi) && !found.iter().any(|a| a == abi) {
            found.push(abi.to_string());
        }
    }
    found
}

fn attr(text: &str, key: &str) -> Option<String> {
    let start = text.find(key)? + key.len();
    let end = text[start..].find('"')?;
    Some(text[start..start + end].to_string()).filter(|v| !v.is_empty())
}

/// Reads a sim APK: ZIP signature, then the manifest text.
pub fn parse_apk(bytes: &[u8]) -> Option<SimApk> {
    if !bytes.starts_with(b"PK\x03\x04") {
        return None;
    }
    let text = String::from_utf8_lossy(bytes);
    let list = |key: &str| -> Vec<String> {
        attr(&text, key)
            .map(|v| {
                v.split(',')
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    };
    Some(SimApk {
        package: attr(&text, "package=\"")?,
        version_name: attr(&text, "versionName=\""),
        launcher: text.contains("android.intent.category.LAUNCHER"),
        split: attr(&text, " split=\""),
        split_required: attr(&text, "isSplitRequired=\"").as_deref() == Some("true"),
        required_split_types: list("requiredSplitTypes=\""),
        split_types: list("splitTypes=\""),
        target_sdk: attr(&text, "targetSdkVersion=\"").and_then(|v| v.parse().ok()),
        min_sdk: attr(&text, "minSdkVersion=\""),
        native_abis: lib_abis(&text),
    })
}

/// Packages installed through `pm install` (read back from the VFS).
pub fn installed_apks(s: &PhoneState) -> Vec<SimApk> {
    let Ok(dirs) = s.vfs.list(APP_DIR) else {
        return Vec::new();
    };
    dirs.iter()
        .filter_map(|(name, _)| s.vfs.read(&format!("{APP_DIR}/{name}/base.apk")).ok())
        .filter_map(parse_apk)
        .collect()
}

fn last_operand<'a>(args: &[&'a str]) -> Option<&'a str> {
    args.iter().rev().find(|a| !a.starts_with('-')).copied()
}

/// `pm uninstall [-k] [--user N] PKG`: only packages installed with `pm install` can go.
pub fn uninstall(phone: &Phone, args: &[&str]) -> Output {
    let pkg = last_operand(args).unwrap_or("");
    let dir = format!("{APP_DIR}/{pkg}-1");
    let removed = phone.with(|s| {
        let ok = s.vfs.remove(&dir, true).is_ok();
        if ok {
            s.force_stop(pkg);
        }
        ok
    });
    if removed {
        Output::ok("Success\n")
    } else {
        let mut out = Output::ok("Failure [DELETE_FAILED_INTERNAL_ERROR]\n");
        out.code = 1;
        out
    }
}

/// `cmd package query-activities [--brief] [--components] -a ACTION -c CATEGORY [PACKAGE]`.
/// A trailing bare word is the intent's package (AOSP `Intent.parseCommandArgs`: no `:` and
/// no `/` → `setPackage`), which limits the answer to that package's activities.
pub fn query_activities(phone: &Phone, args: &[&str]) -> Output {
    let mut package = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-a" | "-c" | "-d" | "-t" | "-n" | "--user" => {
                it.next();
            }
            a if !a.starts_with('-') => package = Some(a),
            _ => {}
        }
    }
    let category = args
        .iter()
        .position(|a| *a == "-c")
        .and_then(|i| args.get(i + 1))
        .copied()
        .unwrap_or("");
    let components_only = args.contains(&"--components");
    let (launcher, extra) = phone.with(|s| (s.persona.launcher_component(), installed_apks(s)));
    let mut hits: Vec<String> = Vec::new();
    match category {
        "android.intent.category.LAUNCHER" => {
            hits.extend(
                apps::APPS
                    .iter()
                    .map(|a| format!("{}/{}", a.package, a.activity)),
            );
            hits.push(format!("{}/{}", launcher.0, launcher.1));
            hits.extend(
                extra
                    .iter()
                    .filter(|a| a.launcher)
                    .map(|a| format!("{}/.MainActivity", a.package)),
            );
        }
        "android.intent.category.LEANBACK_LAUNCHER" => {
            hits.extend(
                apps::LEANBACK_APPS
                    .iter()
                    .map(|a| format!("{}/{}", a.package, a.activity)),
            );
        }
        _ => {}
    }
    if let Some(p) = package {
        hits.retain(|c| c.split('/').next() == Some(p));
    }
    // A disabled package or component is no match (`isEnabledAndMatch`).
    phone.with(|s| {
        hits.retain(|c| {
            c.split_once('/')
                .is_some_and(|(p, a)| s.activity_enabled(p, a))
        })
    });
    if hits.is_empty() {
        return Output::ok("No activities found\n");
    }
    let mut out = String::new();
    for c in hits {
        if !components_only {
            out.push_str(
                "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n",
            );
        }
        out.push_str(&c);
        out.push('\n');
    }
    Output::ok(out)
}

/// versionName of the built-in packages.
fn builtin_version(pkg: &str) -> &'static str {
    match pkg {
        "com.example.notes" => "1.0.3",
        "com.example.tv" => "2.1.0",
        "com.android.deskclock" => "7.4.1",
        _ => "14",
    }
}

/// The `Activity Resolver Table:` of `dumpsys package PKG` for the package's launcher activity,
/// with filter details (`HASH PKG/CLS filter HASH` then `Action:` / `Category:` lines, as in
/// appium-adb's capture `tests/fixtures/packages/appium-adb-dumpsys-package-activity-resolver-filters.txt`,
/// at the real column 0 instead of the test's indentation). Launcher apps, the persona's launcher
/// and installed launcher APKs get `android.intent.category.LAUNCHER` (as `resolve-activity` and
/// `query-activities` answer here), TV apps `LEANBACK_LAUNCHER`; packages without either get no
/// table (AOSP prints none when no activity of the package has a filter).
fn activity_resolver_table(s: &PhoneState, pkg: &str) -> String {
    let launcher = s.persona.launcher_component();
    let apk = installed_apks(s)
        .into_iter()
        .any(|a| a.package == pkg && a.launcher);
    let found = if let Some(a) = apps::APPS.iter().find(|a| a.package == pkg) {
        Some((a.activity.to_string(), "LAUNCHER"))
    } else if let Some(a) = apps::LEANBACK_APPS.iter().find(|a| a.package == pkg) {
        Some((a.activity.to_string(), "LEANBACK_LAUNCHER"))
    } else if launcher.0 == pkg {
        Some((launcher.1.clone(), "LAUNCHER"))
    } else if apk {
        Some((".MainActivity".to_string(), "LAUNCHER"))
    } else {
        None
    };
    let Some((activity, category)) = found else {
        return String::new();
    };
    let act = super::ident(&format!("{pkg}/{activity}"));
    let filter = super::ident(&format!("{pkg}/{activity} MAIN"));
    format!("Activity Resolver Table:\n  Non-Data Actions:\n      android.intent.action.MAIN:\n        {act} {pkg}/{activity} filter {filter}\n          Action: \"android.intent.action.MAIN\"\n          Category: \"android.intent.category.{category}\"\n\n")
}

/// `dumpsys package PKG`: the Activity Resolver Table of its launcher activity and the `Packages:` block of one package (empty for unknown ones). A
/// system app (every package `pm list packages -3` leaves out) sits under `/system/priv-app/`
/// with `SYSTEM` in its `flags=[…]`, a user app under `/data/app/` without it (AOSP
/// `Settings.dumpPackageLPr`; captures `tests/fixtures/packages/*dumpsys-package*`).
pub fn dumpsys_package(s: &PhoneState, pkg: &str, installed: &[String]) -> String {
    if !installed.iter().any(|p| p == pkg) {
        return "Dexopt state:\n  Unable to find package: ".to_string() + pkg + "\n";
    }
    let added = installed_apks(s).into_iter().find(|a| a.package == pkg);
    let user = added.is_some() || pkg.starts_with("com.example.");
    let version = added
        .map(|a| a.version_name.unwrap_or_default())
        .unwrap_or_else(|| builtin_version(pkg).to_string());
    let hash = super::ident(pkg);
    let (code_path, system) = if user {
        (format!("/data/app/~~sim/{pkg}-1"), "")
    } else {
        (format!("/system/priv-app/{pkg}"), " SYSTEM")
    };
    let resolver = activity_resolver_table(s, pkg);
    let user = user_state(s, pkg);
    format!("{resolver}Packages:\n  Package [{pkg}] ({hash}):\n    userId=10123\n    pkg=Package{{{hash} {pkg}}}\n    codePath={code_path}\n    versionCode=1 minSdk=24 targetSdk=34\n    versionName={version}\n    flags=[{system} HAS_CODE ALLOW_CLEAR_USER_DATA ]\n{user}")
}

/// The package's `User 0:` block of `dumpsys package` (AOSP `Settings.dumpPackageLPr`, prefix
/// two spaces): the enabled setting as `enabled=N`; `lastDisabledCaller:` after a
/// `pm disable-user` (the shell's package); the disabled components as full class names under
/// `disabledComponents:`. Android 8+ print `ceDataInode=`, `suspended=` and the later fields;
/// Android 6 only `installed hidden stopped notLaunched enabled`.
fn user_state(s: &PhoneState, pkg: &str) -> String {
    let state = s.enabled_state(pkg);
    let enabled = state.number();
    let suspended = s.suspended.contains(pkg);
    let mut out = if s.persona.sdk >= 26 {
        format!("    User 0: ceDataInode=4032 installed=true hidden=false suspended={suspended} distractionFlags=0 stopped=false notLaunched=false enabled={enabled} instant=false virtual=false\n")
    } else {
        format!("    User 0: installed=true hidden=false stopped=false notLaunched=false enabled={enabled}\n")
    };
    if state == crate::enabled_state::EnabledState::DisabledUser {
        out.push_str("      lastDisabledCaller: com.android.shell\n");
    }
    let components: Vec<String> = s
        .disabled_components
        .iter()
        .filter_map(|c| c.split_once('/'))
        .filter(|(p, _)| *p == pkg)
        .map(|(p, a)| match a.strip_prefix('.') {
            Some(rest) => format!("{p}.{rest}"),
            None => a.to_string(),
        })
        .collect();
    if !components.is_empty() {
        out.push_str("      disabledComponents:\n");
        for c in components {
            out.push_str(&format!("        {c}\n"));
        }
    }
    out
}

/// `am start -a android.intent.action.VIEW -d URL` without a component: http(s) URLs open (the
/// sim has no browser screen, so the foreground stays), other schemes do not resolve.
pub fn view(data: &str) -> Output {
    let scheme = data.split(':').next().unwrap_or("").to_ascii_lowercase();
    let shown = match data.split_once("://") {
        Some((sch, rest)) => format!("{sch}://{}/...", rest.split('/').next().unwrap_or("")),
        None => format!("{scheme}:..."),
    };
    let intent = format!("act=android.intent.action.VIEW dat={shown}");
    if scheme == "http" || scheme == "https" {
        Output::ok(format!("Starting: Intent {{ {intent} }}\n"))
    } else {
        Output::err(255, format!("Starting: Intent {{ {intent} }}\nError: Activity not started, unable to resolve Intent {{ {intent} flg=0x10000000 }}\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sim_apks() {
        let apk = parse_apk(b"PK\x03\x04<manifest package=\"com.example.x\" android:versionName=\"3.1\"><category android:name=\"android.intent.category.LAUNCHER\"/>").unwrap();
        assert_eq!(apk.package, "com.example.x");
        assert_eq!(apk.version_name.as_deref(), Some("3.1"));
        assert!(apk.launcher);
        assert!(apk.split.is_none() && !apk.split_required);
        assert!(parse_apk(b"<manifest package=\"a.b\">").is_none());
        let base = parse_apk(b"PK\x03\x04<manifest package=\"a.b\" android:isSplitRequired=\"true\" android:requiredSplitTypes=\"base__abi, base__density\">").unwrap();
        assert!(base.split_required && base.split.is_none());
        assert_eq!(base.required_split_types, ["base__abi", "base__density"]);
        let split = parse_apk(b"PK\x03\x04<manifest package=\"a.b\" split=\"config.arm64_v8a\" android:splitTypes=\"base__abi\">").unwrap();
        assert_eq!(split.split.as_deref(), Some("config.arm64_v8a"));
        assert_eq!(split.split_types, ["base__abi"]);
        assert!(split.required_split_types.is_empty());
        assert!(view("https://example.com/a b")
            .stdout
            .starts_with(b"Starting"));
        assert_eq!(view("javascript:alert(1)").code, 255);
    }
}
