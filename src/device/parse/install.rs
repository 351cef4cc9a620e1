//! The package manager's answers to installs and uninstalls: `Failure [REASON: message]` lines
//! and what each reason means and how it is fixed — one classifier for every `INSTALL_…` code,
//! not one string per phone.
//!
//! Forms (AOSP `PackageManagerShellCommand.doCommitSession` / `runInstall`: `Failure [` + the
//! status message + `]`, the message being `PackageManager.installStatusToString(code, msg)` =
//! `CODE: msg` or `CODE`; `adb install` prefixes `adb: failed to install FILE: `):
//! - `Failure [INSTALL_FAILED_MISSING_SPLIT: Missing split for net.easypark.android]`
//!   (EFForg/apkeep#188)
//! - `Failure [INSTALL_FAILED_USER_RESTRICTED: Install canceled by user]` (Xiaomi,
//!   RikkaApps/Shizuku#252), `Failure [INSTALL_CANCELED_BY_USER]` (older MIUI)
//! - `Failure [INSTALL_FAILED_ABORTED: User rejected permissions]` (vivo/iQOO, MIUI, Flyme:
//!   thundersdata-frontend/rn-template#36, xiaocong/android-uiautomator-server#40)
//! - `Failure [-3006: INSTALL_FAILED_BLOCKED_CROSS_DOWN]` (Samsung: the number first,
//!   k0mraid3/K0mraid3s-System-Shell-PREBUILT#2)
//! - `Failure [INSTALL_FAILED_VERSION_DOWNGRADE]`, `Failure [DELETE_FAILED_INTERNAL_ERROR]`
//!
//! Codes and their meaning: AOSP `core/java/android/content/pm/PackageManager.java`
//! (`INSTALL_FAILED_*` -1..-131, `INSTALL_PARSE_FAILED_*` -100..-109) and
//! `PackageInstallerSession.validateApkInstallLocked` (`Missing split for PKG` when the base
//! declares `isSplitRequired` and no split, or a required split type, was staged; `Full install
//! must include a base package`).

/// A `Failure [...]` (or `Error …`) line of `pm`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The reason code (`INSTALL_FAILED_MISSING_SPLIT`), empty when the line has none.
    pub code: String,
    /// The number an OEM build put before it (`-3006`), if any.
    pub number: Option<i32>,
    /// The text after the code (`Missing split for …`), maybe empty.
    pub message: String,
    /// The whole line, trimmed, at most 300 characters.
    pub line: String,
}

/// The first `Failure`/`Error` line of `out` (stdout and stderr together), parsed.
pub fn parse_failure(out: &str) -> Option<Failure> {
    let line = out.lines().map(str::trim).find(|l| {
        let l = l.strip_prefix("adb: failed to install").map_or(*l, |r| {
            r.split_once(": ").map_or(r, |(_, rest)| rest).trim_start()
        });
        l.starts_with("Failure") || l.starts_with("Error")
    })?;
    let inner = line
        .split_once('[')
        .map(|(_, r)| r.rsplit_once(']').map_or(r, |(i, _)| i))
        .unwrap_or("");
    let mut number = None;
    let mut code = String::new();
    let mut message = String::new();
    for (i, part) in inner.splitn(3, ':').enumerate() {
        let part = part.trim();
        if i == 0 && part.parse::<i32>().is_ok() {
            number = part.parse().ok();
        } else if code.is_empty() && is_code(part) {
            code = part.to_string();
        } else if !code.is_empty() {
            message = if message.is_empty() {
                part.to_string()
            } else {
                format!("{message}: {part}")
            };
        } else if i == 0 {
            // `Failure [INSTALL_FAILED_X some text]`: the first word is the code.
            let (first, rest) = part.split_once(' ').unwrap_or((part, ""));
            if is_code(first) {
                code = first.to_string();
                message = rest.trim().to_string();
            }
        }
    }
    Some(Failure {
        code,
        number,
        message,
        line: line.chars().take(300).collect(),
    })
}

fn is_code(s: &str) -> bool {
    s.len() >= 4
        && s.contains('_')
        && s.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// What an install failure means to the caller (each maps to one error code, see
/// `device::error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The app is split and parts are missing (`split_apks_required`).
    SplitMissing,
    /// The phone, its user or its maker's security settings refused the install
    /// (`device_permission_denied`).
    Refused,
    /// This phone cannot run the app: Android version, CPU ABI, a feature or library it lacks
    /// (`app_incompatible`; field rows 73, 74).
    Incompatible,
    /// Anything else the package manager refused (`device_command_failed`).
    Failed,
}

/// What an `INSTALL_FAILED_OLDER_SDK` line says the app needs (AOSP
/// `FrameworkParsingPackageUtils.computeMinSdkVersion`, `PackageParser` before Android 12).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MinSdk {
    /// `Requires newer sdk version #NEED (current version is #CURRENT)`: a released API level.
    Level {
        /// The app's minSdkVersion.
        need: u32,
        /// The phone's API level.
        current: u32,
    },
    /// `Requires development platform CODENAME but this is a release platform.` or `…
    /// (current platform is OTHER)`: the app was built against a preview SDK.
    Preview {
        /// The preview's codename (`VanillaIceCream`).
        codename: String,
    },
    /// The bare code (Android 6 and older print no message): the phone's level must be read.
    Unstated,
}

/// The app's need of an `INSTALL_FAILED_OLDER_SDK` failure, from its message wherever the
/// install path put it (`Failed parse during installPackageLI: PATH (at Binary XML file line
/// #7): Requires newer sdk version #29 (current version is #28)`, rom1v/sndcpy#10); `None` for
/// another code.
pub fn min_sdk(f: &Failure) -> Option<MinSdk> {
    if f.code != "INSTALL_FAILED_OLDER_SDK" {
        return None;
    }
    let number_after = |key: &str| -> Option<u32> {
        let (_, rest) = f.message.split_once(key)?;
        let digits: String = rest
            .trim_start()
            .trim_start_matches('#')
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    if let (Some(need), Some(current)) = (
        number_after("Requires newer sdk version"),
        number_after("current version is"),
    ) {
        return Some(MinSdk::Level { need, current });
    }
    if let Some((_, rest)) = f.message.split_once("Requires development platform") {
        let codename: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !codename.is_empty() {
            return Some(MinSdk::Preview { codename });
        }
    }
    Some(MinSdk::Unstated)
}

/// The Android release of API level `api` (AOSP `Build.VERSION_CODES`), for messages.
pub fn android_release(api: u32) -> Option<&'static str> {
    Some(match api {
        16 => "4.1",
        17 => "4.2",
        18 => "4.3",
        19 => "4.4",
        21 => "5.0",
        22 => "5.1",
        23 => "6.0",
        24 => "7.0",
        25 => "7.1",
        26 => "8.0",
        27 => "8.1",
        28 => "9",
        29 => "10",
        30 => "11",
        31 => "12",
        32 => "12L",
        33 => "13",
        34 => "14",
        35 => "15",
        36 => "16",
        _ => return None,
    })
}

/// Fix named for the on-phone install restrictions of the makers.
pub const OEM_INSTALL_FIX: &str = "on Xiaomi/Redmi/POCO (MIUI, HyperOS) turn on Developer options → \"Install via USB\" (it needs a SIM and a signed-in Mi account; also turn on \"USB debugging (Security settings)\"); on vivo/iQOO, OPPO/realme and OnePlus (ColorOS) unlock the phone and confirm the install prompt it shows within the call's deadline, or turn off Developer options → \"Verify apps over USB\"; a work profile or a user restricted from installing apps (UserManager DISALLOW_INSTALL_APPS) cannot install from adb";

/// Fix named for a package verifier's refusal.
pub const VERIFIER_FIX: &str = "the phone's package verifier refused the app: turn off Developer options → \"Verify apps over USB\" (or Play Protect's app scanning), and on Samsung One UI 6+ Settings → Security and privacy → Auto Blocker, then retry";

/// Fix named for an APK below the phone's target SDK floor (field row 59): Android 14 refuses a
/// `targetSdkVersion` below 23, Android 15 and later below 24 (AOSP `InstallPackageHelper`
/// `MIN_INSTALLABLE_TARGET_SDK`); `pm install --bypass-low-target-sdk-block` installs it anyway.
pub const LOW_TARGET_SDK_FIX: &str = "this Android refuses apps that target an older SDK than its floor (Android 14: 23, Android 15 and later: 24): rebuild the app with a newer targetSdkVersion, or install it anyway with allow_low_target_sdk: true (pm install --bypass-low-target-sdk-block)";

/// `(floor, found)` of `INSTALL_FAILED_DEPRECATED_SDK_VERSION: App package must target at least
/// SDK version N, but found M` (AOSP `InstallPackageHelper`; majido/clipper#15 on Android 14,
/// Lanchon/sigspoof-checker#14 on Android 15); `None` for any other failure or wording.
pub fn low_target_sdk(f: &Failure) -> Option<(u32, u32)> {
    if f.code != "INSTALL_FAILED_DEPRECATED_SDK_VERSION" {
        return None;
    }
    let number_after = |key: &str| -> Option<u32> {
        let (_, rest) = f.message.split_once(key)?;
        let digits: String = rest
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    Some((number_after("SDK version")?, number_after("but found")?))
}

/// The kind of `f` and its fix (a sentence), from the code: AOSP's list, plus the codes OEM
/// builds use. `split` says whether several APKs were installed as one session (a missing base
/// is then the caller's to fix).
pub fn classify(f: &Failure, split: bool) -> (Kind, &'static str) {
    use Kind::*;
    let code = f.code.as_str();
    let msg = f.message.as_str();
    match code {
        "INSTALL_FAILED_MISSING_SPLIT" => (SplitMissing, if split {
            "the APKs given do not include every split this app requires (a split of each required type: ABI, screen density, language): upload all the APKs of the app — every split_*.apk or config.*.apk beside base.apk — and pass all their file_refs in file_refs, or one .apks bundle"
        } else {
            "the app is split: this APK is its base, and the splits it requires were not given. Upload the base APK and every split APK (split_*.apk / config.*.apk, e.g. from `adb shell pm path PKG` on a phone that has it) and pass all their file_refs in `file_refs`, or upload one .apks bundle (a zip of the APKs) as `file_ref`"
        }),
        "INSTALL_FAILED_INVALID_APK" if msg.contains("must include a base package") => (SplitMissing,
            "the APKs given are splits without their base APK: add base.apk to file_refs (or use the whole .apks bundle)"),
        "INSTALL_FAILED_INVALID_APK" if msg.contains("Inconsistent package") || msg.contains("inconsistent") => (Failed,
            "the APKs belong to different apps or versions: give only the APKs of one build of one app"),
        "INSTALL_FAILED_INVALID_APK" if msg.contains("defined multiple times") => (Failed,
            "the same split was given twice: give each APK once"),
        "INSTALL_FAILED_USER_RESTRICTED" | "INSTALL_CANCELED_BY_USER" | "INSTALL_FAILED_ABORTED" => (Refused, OEM_INSTALL_FIX),
        "INSTALL_FAILED_VERIFICATION_FAILURE" | "INSTALL_FAILED_VERIFICATION_TIMEOUT" => (Refused, VERIFIER_FIX),
        "INSTALL_FAILED_INSUFFICIENT_STORAGE" => (Failed, "the phone has too little free storage for the app: free space on the phone, then retry"),
        "INSTALL_FAILED_UPDATE_INCOMPATIBLE" | "INSTALL_PARSE_FAILED_INCONSISTENT_CERTIFICATES" | "INSTALL_FAILED_SHARED_USER_INCOMPATIBLE" => (Failed,
            "an installed app of this package is signed with another key: uninstall it first (android_app_uninstall, allowed by gates.allow_uninstall), or sign the APK with the same key"),
        "INSTALL_FAILED_VERSION_DOWNGRADE" => (Failed, "the installed version is newer than this APK: uninstall it first, or upload a newer version"),
        "INSTALL_FAILED_OLDER_SDK" => (Incompatible, "the app needs a newer Android version than this phone's (its minSdkVersion is higher)"),
        "INSTALL_FAILED_NEWER_SDK" => (Incompatible, "the app only runs on older Android versions than this phone's (maxSdkVersion)"),
        "INSTALL_FAILED_DEPRECATED_SDK_VERSION" => (Failed, LOW_TARGET_SDK_FIX),
        "INSTALL_FAILED_NO_MATCHING_ABIS" | "INSTALL_FAILED_CPU_ABI_INCOMPATIBLE" | "INSTALL_FAILED_MULTI_ARCH_NOT_MATCH_ALL_NATIVE_ABIS" => (Incompatible,
            "the APK has no native code for this phone's CPU (getprop ro.product.cpu.abilist): upload the APK, or the ABI split, built for it"),
        "INSTALL_FAILED_MISSING_SHARED_LIBRARY" => (Incompatible, "the app needs a shared library this phone does not have (a <uses-library> it lacks)"),
        "INSTALL_FAILED_MISSING_FEATURE" => (Incompatible, "the app needs a hardware or software feature this phone does not have (<uses-feature required>)"),
        "INSTALL_FAILED_CONFLICTING_PROVIDER" | "INSTALL_FAILED_DUPLICATE_PERMISSION" | "INSTALL_FAILED_DUPLICATE_PACKAGE" => (Failed,
            "another installed app already defines the same content provider or permission: uninstall that app first"),
        "INSTALL_FAILED_TEST_ONLY" => (Failed, "the APK is test-only and the phone refused it"),
        "INSTALL_PARSE_FAILED_NO_CERTIFICATES" | "INSTALL_PARSE_FAILED_CERTIFICATE_ENCODING" | "INSTALL_FAILED_BAD_SIGNATURE" => (Failed,
            "the APK is not signed (or its signature is broken): sign it with apksigner (v2 or later scheme), then upload it again"),
        c if c.starts_with("INSTALL_PARSE_FAILED") || c == "INSTALL_FAILED_INVALID_APK" => (Failed,
            "the file is not a valid APK or is damaged: upload the APK file itself (a .apks/.xapk bundle is read as a zip of APKs; an encrypted .apkm is not)"),
        "INSTALL_FAILED_INTERNAL_ERROR" | "INSTALL_FAILED_CONTAINER_ERROR" | "INSTALL_FAILED_MEDIA_UNAVAILABLE" | "INSTALL_FAILED_DEXOPT" => (Failed,
            "the package manager failed internally: retry; if it persists, restart the phone"),
        "INSTALL_FAILED_SESSION_INVALID" => (Failed, "the install session ended early (the phone abandoned it): retry"),
        _ => (Failed, "this failure code is not one AOSP documents (a code of the phone's maker); the phone's line says why"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn low_target_sdk_floor_and_target() {
        let f = parsed("adb: failed to install ca.zgrs.clipper.apk: Failure [INSTALL_FAILED_DEPRECATED_SDK_VERSION: App package must target at least SDK version 23, but found 0]\n");
        assert_eq!(low_target_sdk(&f), Some((23, 0)));
        let f = parsed("Failure [INSTALL_FAILED_DEPRECATED_SDK_VERSION: App package must target at least SDK version 24, but found 23]\n");
        assert_eq!(low_target_sdk(&f), Some((24, 23)));
        assert_eq!(classify(&f, false).1, LOW_TARGET_SDK_FIX);
        // Another wording or code gives no numbers.
        assert_eq!(
            low_target_sdk(&parsed("Failure [INSTALL_FAILED_DEPRECATED_SDK_VERSION]\n")),
            None
        );
        assert_eq!(low_target_sdk(&parsed("Failure [INSTALL_FAILED_OLDER_SDK: Requires newer sdk version #35 (current version is #34)]\n")), None);
    }

    fn parsed(out: &str) -> Failure {
        parse_failure(out).unwrap()
    }

    #[test]
    fn failure_lines_of_every_shape() {
        let f = parsed(
            "Failure [INSTALL_FAILED_MISSING_SPLIT: Missing split for net.easypark.android]\n",
        );
        assert_eq!(f.code, "INSTALL_FAILED_MISSING_SPLIT");
        assert_eq!(f.message, "Missing split for net.easypark.android");
        let f = parsed("Performing Streamed Install\nFailure [INSTALL_FAILED_VERSION_DOWNGRADE]\n");
        assert_eq!(
            (f.code.as_str(), f.message.as_str()),
            ("INSTALL_FAILED_VERSION_DOWNGRADE", "")
        );
        let f = parsed("Failure [-3006: INSTALL_FAILED_BLOCKED_CROSS_DOWN]\n");
        assert_eq!(
            (f.number, f.code.as_str()),
            (Some(-3006), "INSTALL_FAILED_BLOCKED_CROSS_DOWN")
        );
        let f = parsed("adb: failed to install app.apk: Failure [INSTALL_FAILED_USER_RESTRICTED: Install canceled by user]\n");
        assert_eq!(f.code, "INSTALL_FAILED_USER_RESTRICTED");
        assert_eq!(f.message, "Install canceled by user");
        let f = parsed("Failure [INSTALL_PARSE_FAILED_NOT_APK: Failed to parse /data/app/vmdl1.tmp/base.apk: Not an APK]\n");
        assert_eq!(f.code, "INSTALL_PARSE_FAILED_NOT_APK");
        assert!(f.message.ends_with("Not an APK"), "{}", f.message);
        let f = parsed("Failure [DELETE_FAILED_INTERNAL_ERROR]\n");
        assert_eq!(f.code, "DELETE_FAILED_INTERNAL_ERROR");
        assert!(parse_failure("Success\n").is_none());
        let f = parsed("Error: APK content must be streamed\n");
        assert_eq!(f.code, "");
    }

    #[test]
    fn every_code_has_a_kind_and_a_fix() {
        let kind = |line: &str, split| classify(&parsed(line), split);
        assert_eq!(
            kind(
                "Failure [INSTALL_FAILED_MISSING_SPLIT: Missing split for a.b]",
                false
            )
            .0,
            Kind::SplitMissing
        );
        assert!(kind(
            "Failure [INSTALL_FAILED_MISSING_SPLIT: Missing split for a.b]",
            false
        )
        .1
        .contains("file_refs"));
        assert_eq!(
            kind(
                "Failure [INSTALL_FAILED_INVALID_APK: Full install must include a base package]",
                true
            )
            .0,
            Kind::SplitMissing
        );
        for refused in [
            "Failure [INSTALL_FAILED_USER_RESTRICTED: Install canceled by user]",
            "Failure [INSTALL_CANCELED_BY_USER]",
            "Failure [INSTALL_FAILED_ABORTED: User rejected permissions]",
        ] {
            let (k, fix) = kind(refused, false);
            assert_eq!(k, Kind::Refused, "{refused}");
            assert!(
                fix.contains("Install via USB") && fix.contains("vivo"),
                "{refused}"
            );
        }
        let (k, fix) = kind("Failure [INSTALL_FAILED_VERIFICATION_FAILURE]", false);
        assert_eq!(k, Kind::Refused);
        assert!(fix.contains("Verify apps over USB") && fix.contains("Auto Blocker"));
        let (k, fix) = kind("Failure [-3006: INSTALL_FAILED_BLOCKED_CROSS_DOWN]", false);
        assert_eq!(k, Kind::Failed);
        assert!(fix.contains("maker"));
        assert!(kind(
            "Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Package a.b signatures do not match]",
            false
        )
        .1
        .contains("uninstall"));
        assert!(kind(
            "Failure [INSTALL_PARSE_FAILED_NOT_APK: Failed to parse x]",
            false
        )
        .1
        .contains("not a valid APK"));
    }

    /// Row 73: the need is read wherever the install path put it, and the bare Android 6 code
    /// asks the phone.
    #[test]
    fn older_sdk_need_from_each_wording() {
        let need = |l: &str| min_sdk(&parse_failure(l).unwrap());
        assert_eq!(
            need("adb: failed to install sndcpy.apk: Failure [INSTALL_FAILED_OLDER_SDK: Failed parse during installPackageLI: /data/app/vmdl1780591467.tmp/base.apk (at Binary XML file line #7): Requires newer sdk version #29 (current version is #28)]"),
            Some(MinSdk::Level { need: 29, current: 28 })
        );
        assert_eq!(
            need("Failure [INSTALL_FAILED_OLDER_SDK: Requires development platform VanillaIceCream but this is a release platform.]"),
            Some(MinSdk::Preview { codename: "VanillaIceCream".into() })
        );
        assert_eq!(
            need("Failure [INSTALL_FAILED_OLDER_SDK]"),
            Some(MinSdk::Unstated)
        );
        assert_eq!(need("Failure [INSTALL_FAILED_NEWER_SDK]"), None);
        let f = parse_failure("Failure [INSTALL_FAILED_NO_MATCHING_ABIS: Failed to extract native libraries, res=-113]").unwrap();
        assert_eq!(classify(&f, false).0, Kind::Incompatible);
        assert_eq!(android_release(30), Some("11"));
    }
}
