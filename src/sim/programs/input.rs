//! `input [SOURCE] [-d ID] text|keyevent|tap|swipe|press|roll …` (AOSP
//! `services/core/java/com/android/server/input/InputShellCommand.java`; Android 6 `Input.java`
//! behaves the same for these verbs). Usage text: `fixtures/input-usage/android6-7-unknown-command-help.txt`.

use super::{keys, Output};
use crate::framework::DialogKind;
use crate::phone::{Phone, PhoneState};
use crate::ui::{Action, DialogButton};

const USAGE: &str = "Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\nThe sources are: \n      dpad\n      keyboard\n      mouse\n      touchpad\n      gamepad\n      touchnavigation\n      joystick\n      touchscreen\n      stylus\n      trackball\n\nThe commands and default sources are:\n      text <string> (Default: keyboard)\n      keyevent [--longpress|--doubletap] <key code number or name> ... (Default: keyboard)\n      tap <x> <y> (Default: touchscreen)\n      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n      press (Default: trackball)\n      roll <dx> <dy> (Default: trackball)\n";

/// Runs `input`.
pub fn run(phone: &Phone, args: &[String]) -> Output {
    let args = crate::input_args::verb_and_args(args);
    let Some((verb, rest)) = args.split_first() else {
        return Output::err(255, USAGE);
    };
    match *verb {
        "text" => match rest.first() {
            Some(text) => text_cmd(phone, text),
            None => Output::err(
                255,
                format!("Error: Argument expected after \"text\"\n{USAGE}"),
            ),
        },
        "keyevent" => {
            let codes: Vec<u32> = rest
                .iter()
                .filter(|a| !a.starts_with("--"))
                .filter_map(|a| keys::parse(a))
                .collect();
            phone.with(|s| codes.iter().for_each(|c| key(s, *c)));
            Output::code(0)
        }
        "tap" => match coords(rest, 2) {
            Some(p) => {
                phone.with(|s| tap(s, p[0], p[1]));
                Output::code(0)
            }
            None => Output::err(255, USAGE),
        },
        "swipe" | "draganddrop" => match coords(rest, 4) {
            Some(p) => {
                phone.with(|s| swipe(s, p[1], p[3]));
                Output::code(0)
            }
            None => Output::err(255, USAGE),
        },
        "press" | "roll" | "motionevent" | "keycombination" => Output::code(0),
        other => Output::err(255, format!("Error: Unknown command: {other}\n{USAGE}")),
    }
}

fn coords(args: &[&str], n: usize) -> Option<Vec<f32>> {
    let v: Vec<f32> = args
        .iter()
        .take(n)
        .map(|a| a.parse::<f32>().ok())
        .collect::<Option<_>>()?;
    (v.len() == n).then_some(v)
}

/// AOSP `sendText`: `%s` becomes a space (no escape for a literal `%s`); characters the
/// virtual keyboard map cannot produce make `getEvents` return null → NullPointerException.
pub fn android_text(arg: &str) -> Result<String, ()> {
    let mut text: Vec<char> = arg.chars().collect();
    let (mut escape, mut i) = (false, 0usize);
    while i < text.len() {
        if escape {
            escape = false;
            if text[i] == 's' {
                text[i] = ' ';
                text.remove(i - 1);
                i -= 1;
            }
        }
        if text[i] == '%' {
            escape = true;
        }
        i += 1;
    }
    let ok = text.iter().all(|c| matches!(c, ' '..='~' | '\n' | '\t'));
    if ok {
        Ok(text.into_iter().collect())
    } else {
        Err(())
    }
}

fn text_cmd(phone: &Phone, arg: &str) -> Output {
    match android_text(arg) {
        Ok(text) => {
            phone.with(|s| {
                if s.screen_on
                    && !s.locked
                    && s.ui.focused.as_deref() == Some(crate::apps::NOTE_FIELD)
                {
                    s.ui.note_text.push_str(&text);
                }
            });
            Output::code(0)
        }
        Err(()) => Output::java_exception(
            "text",
            "java.lang.NullPointerException: Attempt to get length of null array",
            "com.android.server.input.InputShellCommand.sendText(InputShellCommand.java:407)",
        ),
    }
}

fn key(s: &mut PhoneState, code: u32) {
    match code {
        keys::POWER => s.screen_on = !s.screen_on,
        keys::WAKEUP => s.screen_on = true,
        keys::SLEEP => s.screen_on = false,
        _ if !s.screen_on => {}
        // MENU unlocks an insecure keyguard (SystemUI `KeyguardHostView.shouldEnableMenuKey`:
        // unless `config_disableMenuKeyInLockScreen`); a secure one stays.
        keys::MENU if s.locked && !s.lock_secure => s.locked = false,
        _ if s.locked => {}
        // The dialog has the key focus: BACK cancels the crash dialog (`AppErrorDialog` is
        // cancelable), the ANR dialog waits for its buttons; other keys but Home reach no app.
        keys::BACK if s.app_dialog.is_some() => {
            if s.app_dialog
                .as_ref()
                .is_some_and(|d| d.kind == DialogKind::Crash)
            {
                s.app_dialog = None;
            }
        }
        c if c != keys::HOME && s.app_dialog.is_some() => {}
        // Home and Recents do nothing in lock task mode ("App is pinned" toast; a kiosk has
        // them off: `LockTaskController`, `LOCK_TASK_FEATURE_HOME` unset).
        keys::HOME | keys::APP_SWITCH if s.lock_task.is_some() => {}
        keys::HOME => {
            let (p, a) = s.persona.launcher_component();
            s.launch(&p, &a);
        }
        keys::BACK
            if s.lock_task
                .as_ref()
                .is_some_and(|t| s.ui.stack.last().is_some_and(|(p, _)| *p == t.package)) => {}
        keys::BACK if s.ui.focused.is_some() => s.ui.focused = None,
        keys::BACK => {
            if s.ui.stack.len() > 1 {
                s.ui.stack.pop();
            }
        }
        keys::DEL if s.ui.focused.is_some() => {
            s.ui.note_text.pop();
        }
        _ => {
            if let (Some(c), Some(_)) = (keys::typed_char(code), s.ui.focused.as_ref()) {
                s.ui.note_text.push(c);
            }
        }
    }
}

/// An upward swipe (from `y1` to `y2`) dismisses a swipe lock; on a secure lock it only brings
/// up the PIN pad (SystemUI's bouncer; appium-adb's unlock swipes up for the same reason).
fn swipe(s: &mut PhoneState, y1: f32, y2: f32) {
    if s.locked && !s.lock_secure && s.screen_on && y2 < y1 {
        s.locked = false;
    }
}

/// What a gesture read from the touchscreen node does ([`crate::evdev`]): a tap as `input
/// tap`, a swipe as `input swipe`; a long press or a pinch reaches no modelled view.
pub fn apply_touch(s: &mut PhoneState, t: &crate::evdev::Touch) {
    use crate::evdev::TouchKind;
    match t.kind {
        TouchKind::Tap => tap(s, t.from[0] as f32, t.from[1] as f32),
        TouchKind::Swipe => swipe(s, t.from[1] as f32, t.to[1] as f32),
        TouchKind::LongPress | TouchKind::Pinch => {}
    }
}

/// One `write(2)` to input node `path` ([`PhoneState::write_input`]): the gestures that ended
/// act on the UI ([`apply_touch`]) and are recorded (`touches`, last 100).
pub fn write_node(
    s: &mut PhoneState,
    path: &str,
    bytes: &[u8],
) -> Result<usize, crate::evdev::Einval> {
    let (n, ended) = s.write_input(path, bytes)?;
    for t in ended {
        apply_touch(s, &t);
        s.touches.push(t);
    }
    let excess = s.touches.len().saturating_sub(100);
    s.touches.drain(..excess);
    Ok(n)
}

/// A tap at logical display coordinates; outside the display or on nothing: no effect.
fn tap(s: &mut PhoneState, x: f32, y: f32) {
    let (w, h) = s.display_size();
    if !s.screen_on || s.locked || x < 0.0 || y < 0.0 || x >= w as f32 || y >= h as f32 {
        return;
    }
    let tree = s.ui_tree();
    let action = tree.hit(x as i32, y as i32).map(|n| n.action.clone());
    if let Some(dialog) = s.app_dialog.clone() {
        // The dialog is modal: only its buttons take a tap.
        match action {
            Some(Action::Dialog(DialogButton::Close)) => s.force_stop(dialog.package()),
            Some(Action::Dialog(_)) => s.app_dialog = None,
            _ => {}
        }
        return;
    }
    match action {
        Some(Action::Launch(pkg, act)) => {
            s.start_activity(&pkg, &act);
        }
        Some(Action::Focus(id)) => s.ui.focused = Some(id),
        _ => s.ui.focused = None,
    }
}
