//! `screencap [-p] [-d DISPLAY_ID] [FILE]` (AOSP `frameworks/base/cmds/screencap/screencap.cpp`):
//! PNG with `-p` or a `.png` file name, else the raw dump (`fixtures/screencap/RAW_HEADER_NOTES.md`).
//! From Android 16 (SDK [`JPEG_SDK`]) also `-j` / `--jpeg` or a `.jpg`/`.jpeg` file name: JPEG at
//! quality 100 (that release's `getopt_long(…, "apjhd:", …)`; its usage text still reads
//! `[-ahp]`), and `-p` with `-j` is "Ambiguous file type"; before it `-j` is an unknown option:
//! getopt's complaint, the usage on stderr, exit 1.
//! Several displays without `-d` print AOSP's warning on stderr first (field bug 7); a secure
//! window or a screen that is off captures black (field bug 8).

use super::Output;
use crate::phone::{now_secs, Phone};
use crate::render;
use crate::timing;
use crate::ui;
use crate::vfs::normalize;

const MULTI_DISPLAY_WARNING: &str = "[Warning] Multiple displays were found, but no display id was specified! Defaulting to the first display found, however this default is not guaranteed to be consistent across captures. A display id should be specified.\nA display ID can be specified with the [-d display-id] option.\nSee \"dumpsys SurfaceFlinger --display-id\" for valid display IDs.\n";

/// First SDK whose `screencap` takes `-j` (Android 16).
pub const JPEG_SDK: u32 = 36;

struct Args {
    png: bool,
    jpeg: bool,
    display: Option<u64>,
    file: Option<String>,
}

fn parse(args: &[String], sdk: u32) -> Result<Args, String> {
    let mut out = Args {
        png: false,
        jpeg: false,
        display: None,
        file: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-p" | "--png" => out.png = true,
            "-j" | "--jpeg" if sdk >= JPEG_SDK => out.jpeg = true,
            "-d" => {
                let v = it.next().ok_or("-d needs a display id")?;
                out.display = Some(v.parse().map_err(|_| format!("Invalid display id '{v}'"))?);
            }
            "-a" => {}
            f if !f.starts_with('-') => out.file = Some(f.to_string()),
            f => {
                return Err(format!(
                    "screencap: invalid option -- '{}'",
                    f.trim_start_matches('-')
                ))
            }
        }
    }
    if out.file.as_deref().is_some_and(|f| f.ends_with(".png")) {
        out.png = true;
    }
    let jpeg_name = |f: &str| f.ends_with(".jpg") || f.ends_with(".jpeg");
    if sdk >= JPEG_SDK && out.file.as_deref().is_some_and(jpeg_name) {
        out.jpeg = true;
    }
    if out.png && out.jpeg {
        return Err("Ambiguous file type".into());
    }
    Ok(out)
}

/// What to draw, copied out of the phone under its lock.
struct Shot {
    tree: ui::Node,
    width: u32,
    height: u32,
    black: bool,
    warn: bool,
    colorspace: bool,
}

fn snapshot(phone: &Phone, display: Option<u64>) -> Option<Shot> {
    phone.with(|s| {
        let displays = &s.persona.displays;
        let i = match display {
            None => 0,
            Some(id) => displays
                .iter()
                .position(|d| u64::from(d.id) == id || d.physical_id == id)?,
        };
        let (width, height) = if i == 0 {
            s.display_size()
        } else {
            (displays[i].width, displays[i].height)
        };
        Some(Shot {
            tree: s.ui_tree(),
            width,
            height,
            black: i != 0 || s.secure_window || !s.screen_on,
            warn: display.is_none() && displays.len() > 1,
            colorspace: s.persona.screencap_colorspace,
        })
    })
}

/// Runs `screencap`.
pub async fn run(phone: &Phone, args: &[String]) -> Output {
    let sdk = phone.with(|s| s.persona.sdk);
    let args = match parse(args, sdk) {
        Ok(a) => a,
        Err(e) if e.starts_with("Ambiguous") => return Output::err(1, e),
        Err(e) => {
            return Output::err(
                1,
                format!("{e}\nusage: screencap [-hp] [-d display-id] [FILENAME]\n"),
            )
        }
    };
    let Some(shot) = snapshot(phone, args.display) else {
        return Output::err(
            1,
            format!("Display Id '{}' is not valid.\n", args.display.unwrap_or(0)),
        );
    };
    let (png, jpeg, warn) = (args.png, args.jpeg, shot.warn);
    let started = std::time::Instant::now();
    let modelled = phone.with(|s| {
        s.timing
            .map(|m| m.screencap(u64::from(shot.width) * u64::from(shot.height), png || jpeg))
    });
    let encoded = tokio::task::spawn_blocking(move || {
        let frame = render::draw(&shot.tree, shot.width, shot.height, shot.black);
        if png {
            frame.to_png(shot.colorspace)
        } else if jpeg {
            frame.to_jpeg()
        } else {
            frame.to_raw(shot.colorspace)
        }
    })
    .await
    .unwrap_or_default();
    if let Some(d) = modelled {
        timing::wait_rest(started, d).await;
    }
    let mut out = Output::default();
    if warn {
        out.stderr = MULTI_DISPLAY_WARNING.as_bytes().to_vec();
        out.stderr_first = true;
    }
    match args.file {
        None => out.stdout = encoded,
        Some(f) => {
            let path = normalize("/", &f);
            if let Err(e) = phone.with(|s| s.vfs.write(&path, &encoded, false, now_secs())) {
                out.stderr.extend_from_slice(
                    format!("Error opening file: {f} ({})\n", e.message()).as_bytes(),
                );
                out.code = 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn minus_j_is_a_jpeg_from_android_16_and_unknown_before() {
        let a = parse(&argv(&["-j"]), 36).unwrap();
        assert!(a.jpeg && !a.png);
        assert!(parse(&argv(&["--jpeg", "-d", "0"]), 36).unwrap().jpeg);
        assert!(parse(&argv(&["/sdcard/x.jpg"]), 36).unwrap().jpeg);
        assert_eq!(
            parse(&argv(&["-p", "-j"]), 36).err().as_deref(),
            Some("Ambiguous file type")
        );
        let e = parse(&argv(&["-j"]), 34).err().unwrap();
        assert!(e.contains("invalid option"), "{e}");
        // Before Android 16 a .jpg name is not a format: the raw dump goes into it.
        let a = parse(&argv(&["/sdcard/x.jpg"]), 34).unwrap();
        assert!(!a.jpeg && !a.png);
    }
}
