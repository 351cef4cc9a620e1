//! `pm install-create|install-write|install-commit|install-abandon` (and the `cmd package`
//! forms), and the checks of a commit every install goes through.
//!
//! Sources: AOSP `PackageManagerShellCommand` — `runInstallCreate` prints `Success: created
//! install session [ID]`; `doWriteSplit` reads the APK from a path (opened with the shell's
//! rights; `Error: Unable to open file: PATH` when it cannot) or, with `-`, `-S SIZE` bytes of
//! stdin, and prints `Success: streamed N bytes`; `doCommitSession` prints `Success` or `Failure
//! [CODE: message]` (status 1); `doAbandonSession` prints `Success`. An unknown session id is
//! a `SecurityException: Caller has no access to session ID` (`PackageInstallerService
//! .openSession`). `PackageInstallerSession.validateApkInstallLocked`: APKs of several
//! packages → `INSTALL_FAILED_INVALID_APK: Inconsistent package …`; the same split twice →
//! `INSTALL_FAILED_INVALID_APK: Split NAME was defined multiple times`; no base →
//! `INSTALL_FAILED_INVALID_APK: Full install must include a base package`; a base with
//! `isSplitRequired` and no split, or without a split of each `requiredSplitTypes`, →
//! `INSTALL_FAILED_MISSING_SPLIT: Missing split for PKG`.

use std::collections::BTreeSet;

use super::packages::{parse_apk, SimApk, APP_DIR};
use super::Output;
use crate::phone::{now_secs, Phone, PhoneState};
use crate::vfs::normalize;

fn failure(line: String) -> Output {
    let mut out = Output::ok(format!("Failure [{line}]\n"));
    out.code = 1;
    out
}

fn no_session(verb: &str, id: &str) -> Output {
    Output::java_exception(
        verb,
        &format!("java.lang.SecurityException: Caller has no access to session {id}"),
        "com.android.server.pm.PackageInstallerService.openSession(PackageInstallerService.java:1021)",
    )
}

/// Checks `apks` (session name, bytes) as one install and stores the app; `path` names the
/// source in parse failures.
pub fn commit(
    s: &mut PhoneState,
    apks: Vec<(String, Vec<u8>)>,
    path: &str,
    replace: bool,
    bypass_low_target_sdk: bool,
) -> Output {
    if apks.is_empty() {
        return failure("INSTALL_FAILED_INVALID_APK: No packages staged".into());
    }
    let mut parsed: Vec<(String, SimApk, Vec<u8>)> = Vec::new();
    for (name, bytes) in apks {
        let Some(apk) = parse_apk(&bytes) else {
            return failure(format!(
                "INSTALL_PARSE_FAILED_NOT_APK: Failed to parse {path}"
            ));
        };
        parsed.push((name, apk, bytes));
    }
    let package = parsed[0].1.package.clone();
    if let Some((name, apk, _)) = parsed.iter().find(|(_, a, _)| a.package != package) {
        return failure(format!(
            "INSTALL_FAILED_INVALID_APK: Inconsistent package {} in {name}; expected {package}",
            apk.package
        ));
    }
    let mut seen = BTreeSet::new();
    for (_, apk, _) in &parsed {
        if !seen.insert(apk.split.clone()) {
            let split = apk.split.as_deref().unwrap_or("null");
            return failure(format!(
                "INSTALL_FAILED_INVALID_APK: Split {split} was defined multiple times"
            ));
        }
    }
    let Some(base) = parsed.iter().find(|(_, a, _)| a.split.is_none()) else {
        return failure(
            "INSTALL_FAILED_INVALID_APK: Full install must include a base package".into(),
        );
    };
    if let Some(line) = base
        .1
        .min_sdk
        .as_deref()
        .and_then(|m| older_sdk(s.persona.sdk, m, &package))
    {
        return failure(line);
    }
    if let (Some(floor), Some(target)) =
        (min_installable_target_sdk(s.persona.sdk), base.1.target_sdk)
    {
        if target < floor && !bypass_low_target_sdk {
            return failure(format!("INSTALL_FAILED_DEPRECATED_SDK_VERSION: App package must target at least SDK version {floor}, but found {target}"));
        }
    }
    let provided: BTreeSet<&String> = parsed.iter().flat_map(|(_, a, _)| &a.split_types).collect();
    let splits = parsed.len() - 1;
    let types_ok = base
        .1
        .required_split_types
        .iter()
        .all(|t| provided.contains(t));
    if base.1.split_required && (splits == 0 || !types_ok) {
        return failure(format!(
            "INSTALL_FAILED_MISSING_SPLIT: Missing split for {package}"
        ));
    }
    let carried: Vec<&String> = parsed.iter().flat_map(|(_, a, _)| &a.native_abis).collect();
    let supported = s
        .props
        .get("ro.product.cpu.abilist")
        .cloned()
        .unwrap_or_default();
    if !carried.is_empty()
        && !carried
            .iter()
            .any(|a| supported.split(',').any(|p| p == a.as_str()))
    {
        return failure(NO_MATCHING_ABIS.into());
    }
    let dir = format!("{APP_DIR}/{package}-1");
    if !replace && s.vfs.stat(&dir).is_ok() {
        return failure(format!("INSTALL_FAILED_ALREADY_EXISTS: Attempt to re-install {package} without first uninstalling."));
    }
    let _ = s.vfs.remove(&dir, true);
    let stored = s.vfs.mkdir(&dir, true, now_secs()).and_then(|()| {
        parsed.iter().try_for_each(|(_, apk, bytes)| {
            let file = match &apk.split {
                None => "base.apk".to_string(),
                Some(n) => format!("split_{n}.apk"),
            };
            s.vfs
                .write(&format!("{dir}/{file}"), bytes, false, now_secs())
        })
    });
    match stored {
        Ok(()) => Output::ok("Success\n"),
        Err(_) => failure("INSTALL_FAILED_INSUFFICIENT_STORAGE".into()),
    }
}

/// `NativeLibraryHelper.findSupportedAbi` found none of the APK's `lib/<abi>/` in
/// `Build.SUPPORTED_ABIS` (`NO_MATCHING_ABIS` = -113; anbox/anbox#33, #1366, the same line on
/// Android 7 to 13 images).
const NO_MATCHING_ABIS: &str =
    "INSTALL_FAILED_NO_MATCHING_ABIS: Failed to extract native libraries, res=-113";

/// The `INSTALL_FAILED_OLDER_SDK` message for an app whose `minSdkVersion` is `min` on a phone
/// at API `sdk`, or `None` when it installs. AOSP `computeMinSdkVersion`: a number above the
/// platform's → `Requires newer sdk version #N (current version is #M)`; a codename on a
/// release build → `Requires development platform X but this is a release platform.`; from
/// Android 7 the parse failure names the staged file (`Failed parse during installPackageLI:
/// /data/app/vmdlID.tmp/base.apk (at Binary XML file line #7): …`, rom1v/sndcpy#10 on 9,
/// txthinking/brook#734 on 7.1, Taewan-P/gpt_mobile#126 on 11); Android 6 and older print the
/// bare code (bk138/droidVNC-NG#23).
fn older_sdk(sdk: u32, min: &str, package: &str) -> Option<String> {
    let why = match min.parse::<u32>() {
        Ok(n) if n <= sdk => return None,
        Ok(n) => format!("Requires newer sdk version #{n} (current version is #{sdk})"),
        Err(_) => format!("Requires development platform {min} but this is a release platform."),
    };
    if sdk < 24 {
        return Some("INSTALL_FAILED_OLDER_SDK".into());
    }
    let id = package.bytes().fold(1_000_000_007u64, |h, b| {
        h.wrapping_mul(31).wrapping_add(b.into())
    }) % 2_000_000_000;
    Some(format!("INSTALL_FAILED_OLDER_SDK: Failed parse during installPackageLI: /data/app/vmdl{id}.tmp/base.apk (at Binary XML file line #7): {why}"))
}

/// The lowest `targetSdkVersion` the package manager installs on `sdk` without
/// `--bypass-low-target-sdk-block`: 23 on Android 14, 24 from Android 15 (AOSP
/// `InstallPackageHelper` `MIN_INSTALLABLE_TARGET_SDK`; majido/clipper#15 shows 23 on 14,
/// Lanchon/sigspoof-checker#14 24 on 15); no floor before Android 14.
fn min_installable_target_sdk(sdk: u32) -> Option<u32> {
    match sdk {
        0..=33 => None,
        34 => Some(23),
        _ => Some(24),
    }
}

/// The install flag that lifts the target SDK floor (`makeInstallParams`).
const BYPASS_LOW_TARGET_SDK: &str = "--bypass-low-target-sdk-block";

/// `pm install [-r] [-t] [-d] [-g] PATH` and `pm|cmd package install [-r] -S SIZE` (the APK
/// streamed on stdin: how `adb install` sends it when the device has `cmd`, AOSP
/// `client/adb_install.cpp install_app_streamed`, `PackageManagerShellCommand.runInstall`).
pub fn install(phone: &Phone, args: &[&str], stdin: &[u8]) -> Output {
    let replace = args.contains(&"-r");
    let bypass = args.contains(&BYPASS_LOW_TARGET_SDK);
    if let Some(size) = stream_size(args) {
        if stdin.len() < size {
            return Output::err(1, "Error: APK content must be streamed\n");
        }
        let apks = vec![("base.apk".to_string(), stdin[..size].to_vec())];
        return phone.with(|s| commit(s, apks, "-", replace, bypass));
    }
    let Some(path) = operands(args).last().copied() else {
        return Output::err(1, "Error: APK content must be streamed\n");
    };
    let path = normalize("/", path);
    match phone.with(|s| s.vfs.read(&path).map(<[u8]>::to_vec)) {
        Ok(b) => {
            let apks = vec![("base.apk".to_string(), b)];
            phone.with(|s| commit(s, apks, &path, replace, bypass))
        }
        Err(_) => Output::err(255, format!("Error: Can't open file: {path}\n")),
    }
}

/// The `-S SIZE` of a streamed install or write.
pub fn stream_size(args: &[&str]) -> Option<usize> {
    arg_after(args, "-S")?.parse().ok()
}

fn arg_after<'a>(args: &[&'a str], flag: &str) -> Option<&'a str> {
    args.iter()
        .position(|a| *a == flag)
        .and_then(|i| args.get(i + 1))
        .copied()
}

/// Operands: arguments that are neither flags nor a flag's value (`-S N`, `--user U`, `-i P`).
fn operands<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-S" | "--user" | "-i" | "-p" | "--install-location" | "--install-reason" => {
                it.next();
            }
            a if a.starts_with('-') && a != "-" => {}
            a => out.push(a),
        }
    }
    out
}

/// `pm install-create [-r] [-t] [--bypass-low-target-sdk-block] [-S TOTAL] …`.
pub fn create(phone: &Phone, args: &[&str]) -> Output {
    let bypass = args.contains(&BYPASS_LOW_TARGET_SDK);
    let id = phone.with(|s| s.install_sessions.create(bypass));
    Output::ok(format!("Success: created install session [{id}]\n"))
}

/// `pm install-write [-S SIZE] ID NAME PATH|-` (`-`: SIZE bytes of stdin).
pub fn write(phone: &Phone, args: &[&str], stdin: &[u8]) -> Output {
    let ops = operands(args);
    let (Some(id), Some(name)) = (ops.first(), ops.get(1)) else {
        return Output::err(255, "Error: must specify a session id and a split name\n");
    };
    let Ok(session) = id.parse::<u64>() else {
        return Output::java_exception(
            "install-write",
            &format!("java.lang.NumberFormatException: For input string: \"{id}\""),
            "java.lang.Integer.parseInt(Integer.java:747)",
        );
    };
    let bytes = match ops.get(2).copied().unwrap_or("-") {
        "-" => {
            let size = arg_after(args, "-S").and_then(|v| v.parse::<usize>().ok());
            match size {
                Some(n) if n > 0 && stdin.len() >= n => stdin[..n].to_vec(),
                _ => return Output::err(1, "Error: must specify a APK size\n"),
            }
        }
        path => {
            let path = normalize("/", path);
            match phone.with(|s| s.vfs.read(&path).map(<[u8]>::to_vec)) {
                Ok(b) => b,
                Err(_) => return Output::err(255, format!("Error: Unable to open file: {path}\nConsider using a file under /data/local/tmp/\n")),
            }
        }
    };
    let n = bytes.len();
    if phone.with(|s| s.install_sessions.write(session, name, bytes)) {
        Output::ok(format!("Success: streamed {n} bytes\n"))
    } else {
        no_session("install-write", id)
    }
}

/// Closes the session named by the first operand and answers with `then` (its APKs), or the
/// `SecurityException` of an unknown session for `verb`.
fn close_session(
    phone: &Phone,
    args: &[&str],
    verb: &str,
    then: impl FnOnce(&mut PhoneState, Vec<(String, Vec<u8>)>, &str) -> Output,
) -> Output {
    let id = operands(args).first().copied().unwrap_or("");
    phone.with(|s| {
        match id
            .parse::<u64>()
            .ok()
            .and_then(|n| s.install_sessions.take(n))
        {
            Some(apks) => then(s, apks, id),
            None => no_session(verb, id),
        }
    })
}

/// `pm install-commit ID`.
pub fn commit_session(phone: &Phone, args: &[&str]) -> Output {
    close_session(phone, args, "install-commit", |s, apks, id| {
        let bypass = id
            .parse()
            .is_ok_and(|n| s.install_sessions.bypasses_low_target_sdk(n));
        commit(s, apks, &format!("/data/app/vmdl{id}.tmp"), true, bypass)
    })
}

/// `pm install-abandon ID`.
pub fn abandon(phone: &Phone, args: &[&str]) -> Output {
    close_session(phone, args, "install-abandon", |_, _, _| {
        Output::ok("Success\n")
    })
}
