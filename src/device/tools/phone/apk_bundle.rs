//! Reading what `android_app_install` was given: one APK, or a split-app bundle — `.apks`
//! (bundletool's `build-apks` output: `toc.pb` and `splits/*.apk`, with `standalones/*.apk`
//! for phones before Android 5; SAI's `.apks`: the APKs at the root) or `.xapk` (APKPure: the
//! APKs beside `manifest.json`) — all zips of APKs (zip crate). An APK is a zip too, told apart
//! by its `AndroidManifest.xml` entry; anything that is no zip is handed to the phone as an APK
//! (the package manager judges it).

use std::io::Read;

use crate::device::error::DeviceError;

/// Most APKs one install takes (bundletool's splits for one device are a handful).
pub const MAX_APKS: usize = 64;
/// Most bytes a bundle may unpack to (a zip bomb stops here).
pub const MAX_UNPACKED_BYTES: u64 = 1 << 30;

/// One APK to install.
#[derive(Debug, Clone)]
pub struct Apk {
    /// Its name in the install session (`base.apk`, `split_config.arm64_v8a.apk`, …): a safe
    /// file name, unique within the install.
    pub name: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// A safe, unique session name for the `index`-th APK from `raw` (a zip entry path or upload).
fn session_name(index: usize, raw: &str) -> String {
    let base = raw.rsplit('/').next().unwrap_or(raw);
    let clean: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    let clean = clean.trim_start_matches('.');
    let stem = clean.strip_suffix(".apk").unwrap_or(clean);
    format!("{index}_{}.apk", if stem.is_empty() { "apk" } else { stem })
}

/// The APKs in `bytes`: the bundle's APKs when it is a bundle, else `bytes` itself as one APK.
/// Errors: `invalid_arguments` for a bundle with no APK, too many, or too large.
pub fn unpack(bytes: Vec<u8>) -> Result<Vec<Apk>, DeviceError> {
    let Ok(mut zip) = zip::ZipArchive::new(std::io::Cursor::new(&bytes[..])) else {
        return Ok(vec![Apk {
            name: session_name(0, "base.apk"),
            bytes,
        }]);
    };
    let names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(|c| c.into_owned()))
        .collect();
    if names.iter().any(|n| n == "AndroidManifest.xml") {
        drop(zip);
        return Ok(vec![Apk {
            name: session_name(0, "base.apk"),
            bytes,
        }]);
    }
    let mut apks: Vec<String> = names
        .iter()
        .filter(|n| n.to_ascii_lowercase().ends_with(".apk") && !n.ends_with('/'))
        .cloned()
        .collect();
    // bundletool: the splits are for this Android; standalone APKs only for pre-Lollipop.
    if apks.iter().any(|n| n.starts_with("splits/")) {
        apks.retain(|n| !n.starts_with("standalones/"));
    }
    apks.sort();
    if apks.is_empty() {
        return Err(DeviceError::InvalidArguments(
            "the uploaded zip holds neither an AndroidManifest.xml (an APK) nor any .apk file (a .apks/.xapk bundle): upload the APK or the bundle".into(),
        ));
    }
    if apks.len() > MAX_APKS {
        return Err(DeviceError::InvalidArguments(format!(
            "the bundle holds {} APKs; at most {MAX_APKS} are installed at once",
            apks.len()
        )));
    }
    let mut out = Vec::with_capacity(apks.len());
    let mut total: u64 = 0;
    for (i, name) in apks.iter().enumerate() {
        let mut entry = zip.by_name(name).map_err(|e| {
            DeviceError::InvalidArguments(format!("cannot read an APK of the bundle: {e}"))
        })?;
        let mut data = Vec::new();
        let left = MAX_UNPACKED_BYTES.saturating_sub(total);
        (&mut entry)
            .take(left + 1)
            .read_to_end(&mut data)
            .map_err(|e| DeviceError::InvalidArguments(format!("cannot unpack the bundle: {e}")))?;
        total += data.len() as u64;
        if total > MAX_UNPACKED_BYTES {
            return Err(DeviceError::InvalidArguments(format!(
                "the bundle unpacks to more than {MAX_UNPACKED_BYTES} bytes"
            )));
        }
        out.push(Apk {
            name: session_name(i, name),
            bytes: data,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        for (name, data) in entries {
            w.start_file(*name, zip::write::SimpleFileOptions::default())
                .unwrap();
            w.write_all(data).unwrap();
        }
        w.finish().unwrap().into_inner()
    }

    #[test]
    fn bundles_apks_and_the_rest() {
        let bundle = zip_of(&[
            ("toc.pb", b"x"),
            ("splits/base-master.apk", b"base"),
            ("splits/base-arm64_v8a.apk", b"abi"),
            ("standalones/standalone-arm64_v8a.apk", b"old"),
        ]);
        let apks = unpack(bundle).unwrap();
        let names: Vec<&str> = apks.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["0_base-arm64_v8a.apk", "1_base-master.apk"]);
        assert_eq!(apks[1].bytes, b"base");
        let xapk = zip_of(&[
            ("manifest.json", b"{}"),
            ("com.a.b.apk", b"b"),
            ("config.en.apk", b"c"),
        ]);
        assert_eq!(unpack(xapk).unwrap().len(), 2);
        let apk = zip_of(&[("AndroidManifest.xml", b"m"), ("classes.dex", b"d")]);
        let one = unpack(apk.clone()).unwrap();
        assert_eq!((one.len(), one[0].bytes.len()), (1, apk.len()));
        let plain = unpack(b"PK\x03\x04 not really a zip".to_vec()).unwrap();
        assert_eq!(plain.len(), 1);
        let empty = zip_of(&[("readme.txt", b"hi")]);
        assert_eq!(
            unpack(empty).unwrap_err().code(),
            crate::protocol::ErrorCode::InvalidArguments
        );
        assert_eq!(session_name(3, "../../x y.apk"), "3_x_y.apk");
        assert_eq!(session_name(0, ".apk"), "0_apk.apk");
    }
}
