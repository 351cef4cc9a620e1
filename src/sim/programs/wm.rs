//! `wm size [WxH|reset]`, `wm density [N|reset]` (AOSP `WindowManagerShellCommand`).
//! Formats: `fixtures/wm/samsung-s24-wm-size.txt` (`Physical size: 1440x3120`),
//! `samsung-s24-wm-density.txt` (`Physical density: 600`); an override adds
//! `Override size: WxH` / `Override density: N`.

use super::Output;
use crate::phone::Phone;

/// Runs `wm`.
pub fn run(phone: &Phone, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    phone.with(|s| match args.as_slice() {
        ["size"] => {
            let (w, h) = s.physical_size();
            let mut text = format!("Physical size: {w}x{h}\n");
            if let Some((ow, oh)) = s.override_size {
                text.push_str(&format!("Override size: {ow}x{oh}\n"));
            }
            Output::ok(text)
        }
        ["size", "reset"] => {
            s.override_size = None;
            Output::code(0)
        }
        ["size", spec] => match spec.split_once('x').and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?))) {
            Some((w, h)) if w > 0 && h > 0 => {
                s.set_override_size(w, h);
                Output::code(0)
            }
            _ => Output::err(255, format!("Error: bad size {spec}\n")),
        },
        ["density"] => {
            let mut text = format!("Physical density: {}\n", s.persona.displays[0].density);
            if let Some(d) = s.override_density {
                text.push_str(&format!("Override density: {d}\n"));
            }
            Output::ok(text)
        }
        ["density", "reset"] => {
            s.override_density = None;
            Output::code(0)
        }
        ["density", n] => match n.parse::<u32>() {
            Ok(d) if d > 0 => {
                s.override_density = Some(d);
                Output::code(0)
            }
            _ => Output::err(255, format!("Error: bad number {n}\n")),
        },
        _ => Output::err(255, "Window manager (window) commands:\n  help\n  size [reset|WxH|WdpxHdp] [-d DISPLAY_ID]\n  density [reset|DENSITY] [-d DISPLAY_ID]\n"),
    })
}
