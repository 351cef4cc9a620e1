//! Why this phone cannot run the app an install was refused for (field rows 73, 74): what the
//! app needs against what the phone is — its API level against the app's minSdkVersion
//! (`INSTALL_FAILED_OLDER_SDK`), its CPU's ABIs against the APK's native code
//! (`INSTALL_FAILED_NO_MATCHING_ABIS`) — read once from the phone's properties and the APKs'
//! zip entries, so the answer names both sides, whatever wording the phone's release printed.
//!
//! Sources: AOSP `FrameworkParsingPackageUtils.computeMinSdkVersion` (the `Requires newer sdk
//! version #N (current version is #M)` / `Requires development platform X` messages; Android 6
//! and older print the bare code: bk138/droidVNC-NG#23), `NativeLibraryHelper.findSupportedAbi`
//! (the APK's `lib/<abi>/*.so` entries against `Build.SUPPORTED_ABIS` =
//! `ro.product.cpu.abilist`; none matching: `NO_MATCHING_ABIS` = -113, printed `Failed to
//! extract native libraries, res=-113`: anbox/anbox#33).

use std::collections::BTreeSet;
use std::time::Duration;

use super::apk_bundle::Apk;
use super::command;
use crate::device::parse::install::{android_release, min_sdk, Failure, MinSdk};
use crate::device::tools::ToolCtx;

/// Longest wait for the phone's properties after a refusal (cut to the call's deadline).
const READ_STEP: Duration = Duration::from_secs(10);

/// What the phone is, for an incompatible app.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhoneFit {
    /// `ro.build.version.sdk`.
    pub sdk: Option<u32>,
    /// `ro.product.cpu.abilist` (`ro.product.cpu.abi` on phones without the list), in the
    /// phone's order of preference.
    pub abis: Vec<String>,
}

/// Whether `code` is one [`explain`] reads the phone for.
fn reads_phone(code: &str) -> bool {
    matches!(
        code,
        "INSTALL_FAILED_OLDER_SDK"
            | "INSTALL_FAILED_NO_MATCHING_ABIS"
            | "INSTALL_FAILED_CPU_ABI_INCOMPATIBLE"
            | "INSTALL_FAILED_MULTI_ARCH_NOT_MATCH_ALL_NATIVE_ABIS"
    )
}

/// Reads the phone's API level and ABIs in one shell call; `None` when it does not answer
/// (the refusal's own line then stands alone).
pub async fn read(ctx: &ToolCtx<'_>) -> Option<PhoneFit> {
    let out = command::run(
        ctx,
        "getprop ro.build.version.sdk; getprop ro.product.cpu.abilist; getprop ro.product.cpu.abi",
        READ_STEP,
        4096,
    )
    .await
    .ok()?;
    Some(parse_props(&out.stdout))
}

/// The three `getprop` lines of [`read`].
fn parse_props(stdout: &str) -> PhoneFit {
    let mut lines = stdout.lines().map(str::trim);
    let sdk = lines.next().and_then(|l| l.parse().ok());
    let list = lines.next().unwrap_or("");
    let single = lines.next().unwrap_or("");
    let abis = if list.is_empty() { single } else { list };
    PhoneFit {
        sdk,
        abis: abis
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
            .map(String::from)
            .collect(),
    }
}

/// The ABIs the APKs carry native code for: their `lib/<abi>/<name>.so` entries (a file that
/// is no zip carries none the connector can read).
pub fn native_abis(apks: &[Apk]) -> BTreeSet<String> {
    let mut abis = BTreeSet::new();
    for apk in apks {
        let Ok(zip) = zip::ZipArchive::new(std::io::Cursor::new(&apk.bytes[..])) else {
            continue;
        };
        for name in zip.file_names().filter_map(Result::ok) {
            let mut parts = name.split('/');
            if let (Some("lib"), Some(abi), Some(file)) = (parts.next(), parts.next(), parts.next())
            {
                if !abi.is_empty() && file.ends_with(".so") && parts.next().is_none() {
                    abis.insert(abi.to_string());
                }
            }
        }
    }
    abis
}

/// `Android 9 (API 28)`, or `API 28` for a level without a known release.
fn level(api: u32) -> String {
    match android_release(api) {
        Some(r) => format!("Android {r} (API {api})"),
        None => format!("API {api}"),
    }
}

/// What the app needs and what the phone has, for the refusal `f` of `apks`: a sentence to
/// put after the phone's line; `None` when the failure's kind is not one read here, or
/// neither side could be read (the classifier's fix stands).
pub fn explain(f: &Failure, apks: &[Apk], phone: Option<&PhoneFit>) -> Option<String> {
    if let Some(need) = min_sdk(f) {
        return match (need, phone.and_then(|p| p.sdk)) {
            (MinSdk::Level { need, current }, _) => Some(format!(
                "the app needs {} or later (its minSdkVersion is {need}) and this phone runs {}: install it on a phone with API {need} or later, or use a build of the app whose minSdkVersion is {current} or lower",
                level(need),
                level(current)
            )),
            (MinSdk::Preview { codename }, _) => Some(format!(
                "the app was built against the preview SDK {codename} (its minSdkVersion is a codename, not a number), which only that preview's own builds install: rebuild it against a released SDK with a numeric minSdkVersion"
            )),
            (MinSdk::Unstated, Some(sdk)) => Some(format!(
                "the app's minSdkVersion is above this phone's {}: install it on a phone with a newer Android, or use a build of the app whose minSdkVersion is {sdk} or lower",
                level(sdk)
            )),
            (MinSdk::Unstated, None) => None,
        };
    }
    if !reads_phone(&f.code) {
        return None;
    }
    let carried: Vec<String> = native_abis(apks).into_iter().collect();
    let phone_abis = phone.map(|p| p.abis.clone()).unwrap_or_default();
    let apk_side = if carried.is_empty() {
        "the APKs given carry no native code the connector could read (no lib/ABI/*.so entry)"
            .to_string()
    } else {
        format!(
            "the APK carries native code for {} only (lib/{}/)",
            carried.join(", "),
            carried.join("/, lib/")
        )
    };
    let phone_side = if phone_abis.is_empty() {
        "this phone's ABIs could not be read (adb shell getprop ro.product.cpu.abilist)".to_string()
    } else {
        format!(
            "this phone's CPU runs {} (ro.product.cpu.abilist)",
            phone_abis.join(", ")
        )
    };
    let want = phone_abis
        .first()
        .map_or("this phone's ABI".to_string(), Clone::clone);
    let translation = if phone_abis.iter().any(|a| a.starts_with("x86"))
        && carried.iter().any(|a| a.starts_with("arm"))
    {
        "; an x86/x86_64 emulator or box runs ARM-only apps only on a system image with ARM translation (an arm64 image, or a Google Play x86_64 image of Android 11 or later)"
    } else {
        ""
    };
    Some(format!(
        "{apk_side} and {phone_side}: upload a build of the app for {want} (a universal APK, or the app's {want} ABI split with its base){translation}"
    ))
}

/// [`explain`] after reading the phone when the failure's kind needs it.
pub async fn explain_on(ctx: &ToolCtx<'_>, f: &Failure, apks: &[Apk]) -> Option<String> {
    let needs_phone = reads_phone(&f.code)
        && !matches!(
            min_sdk(f),
            Some(MinSdk::Level { .. } | MinSdk::Preview { .. })
        );
    let phone = if needs_phone { read(ctx).await } else { None };
    explain(f, apks, phone.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::parse::install::parse_failure;
    use std::io::Write;

    fn zip_of(names: &[&str]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for n in names {
            w.start_file(*n, zip::write::SimpleFileOptions::default())
                .unwrap();
            w.write_all(b"x").unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    fn apk(names: &[&str]) -> Apk {
        Apk {
            name: "0_base.apk".into(),
            bytes: zip_of(names),
        }
    }

    #[test]
    fn native_abis_are_lib_entries_only() {
        let a = apk(&[
            "AndroidManifest.xml",
            "lib/arm64-v8a/libgame.so",
            "lib/armeabi-v7a/libgame.so",
            "lib/readme.txt",
            "assets/lib/x86/libfake.so",
            "lib/x86/sub/libdeep.so",
        ]);
        assert_eq!(
            native_abis(&[a]).into_iter().collect::<Vec<_>>(),
            ["arm64-v8a", "armeabi-v7a"]
        );
        let plain = Apk {
            name: "0_base.apk".into(),
            bytes: b"PK\x03\x04 not a zip".to_vec(),
        };
        assert!(native_abis(&[plain]).is_empty());
    }

    #[test]
    fn props_fall_back_to_the_single_abi() {
        assert_eq!(
            parse_props("30\nx86_64,x86\nx86_64\n"),
            PhoneFit {
                sdk: Some(30),
                abis: vec!["x86_64".into(), "x86".into()]
            }
        );
        assert_eq!(parse_props("19\n\narmeabi-v7a\n").abis, ["armeabi-v7a"]);
    }

    #[test]
    fn both_sides_are_named() {
        let f = parse_failure("Failure [INSTALL_FAILED_NO_MATCHING_ABIS: Failed to extract native libraries, res=-113]").unwrap();
        let phone = parse_props("30\nx86_64,x86\n\n");
        let m = explain(&f, &[apk(&["lib/arm64-v8a/libq.so"])], Some(&phone)).unwrap();
        assert!(
            m.contains("arm64-v8a only")
                && m.contains("runs x86_64, x86")
                && m.contains("ARM translation"),
            "{m}"
        );
        let f = parse_failure("Failure [INSTALL_FAILED_OLDER_SDK]").unwrap();
        let m = explain(&f, &[], Some(&parse_props("23\narm64-v8a\n\n"))).unwrap();
        assert!(m.contains("Android 6.0 (API 23)"), "{m}");
        assert_eq!(explain(&f, &[], None), None);
        let f = parse_failure("Failure [INSTALL_FAILED_VERSION_DOWNGRADE]").unwrap();
        assert_eq!(explain(&f, &[], Some(&phone)), None);
    }
}
