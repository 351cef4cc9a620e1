//! Input methods: `ime list|enable|set` (AOSP `InputMethodManagerService` shell command) and
//! ADBKeyBoard's broadcasts (`senzhk/ADBKeyBoard` `AdbIME.java`): `ADB_INPUT_TEXT --es msg T`,
//! `ADB_INPUT_B64 --es msg BASE64`, `ADB_CLEAR_TEXT`. They type
//! only while ADBKeyBoard is installed, receiving (state `adb_keyboard_receives`, field bug 40)
//! and the selected IME; otherwise the broadcast still "completes" with nobody listening, as
//! on a real phone. State `ime_registration_pending: N` makes the next N `ime enable|set` of
//! ADBKeyBoard answer `Unknown input method` while `ime list -a` lists it (field bug 44).

use base64::Engine;

use super::Output;
use crate::apps::{ADB_KEYBOARD_IME, LATIN_IME, NOTE_FIELD};
use crate::phone::{Phone, PhoneState};

impl PhoneState {
    /// The selected input method id.
    pub fn current_ime(&self) -> String {
        let key = ("secure".to_string(), "default_input_method".to_string());
        self.settings
            .get(&key)
            .cloned()
            .unwrap_or_else(|| LATIN_IME.into())
    }

    /// The installed input methods (`ime list -a`).
    fn imes(&self) -> Vec<&'static str> {
        let mut v = vec![LATIN_IME];
        if self.adb_keyboard {
            v.push(ADB_KEYBOARD_IME);
        }
        v
    }

    /// The enabled ones (`ime list` without `-a`): the stock keyboard, and ADBKeyBoard once
    /// `ime enable` took.
    fn enabled_imes(&self) -> Vec<&'static str> {
        let mut v = self.imes();
        v.retain(|i| *i != ADB_KEYBOARD_IME || self.adb_keyboard_enabled);
        v
    }

    /// Whether the input method service does not know `id` for this command: not installed,
    /// or ADBKeyBoard while its registration is still pending (one pending answer used).
    fn unknown(&mut self, id: &str) -> bool {
        if !self.imes().contains(&id) {
            return true;
        }
        if id == ADB_KEYBOARD_IME && self.ime_registration_pending > 0 {
            self.ime_registration_pending -= 1;
            return true;
        }
        false
    }
}

/// Runs `ime` (AOSP `InputMethodManagerService` shell command: `Unknown input method ID cannot
/// be enabled|selected for user #0` on stderr, exit 255, for an id it does not know).
pub fn ime(phone: &Phone, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    phone.with(|s| match args.as_slice() {
        ["list", flags @ ..] => {
            let all = flags.contains(&"-a");
            let list = if all { s.imes() } else { s.enabled_imes() };
            Output::ok(list.iter().map(|i| format!("{i}\n")).collect::<String>())
        }
        ["enable", id] if !s.unknown(id) => {
            let was = s.enabled_imes().contains(id);
            if *id == ADB_KEYBOARD_IME {
                s.adb_keyboard_enabled = true;
            }
            let now = if was { "already enabled" } else { "now enabled" };
            Output::ok(format!("Input method {id}: {now} for user #0\n"))
        }
        ["set", id] if !s.unknown(id) => {
            s.settings.insert(("secure".into(), "default_input_method".into()), id.to_string());
            Output::ok(format!("Input method {id} selected for user #0\n"))
        }
        ["enable", id] => Output::err(255, format!("Unknown input method {id} cannot be enabled for user #0\n")),
        ["set", id] => Output::err(255, format!("Unknown input method {id} cannot be selected for user #0\n")),
        _ => Output::err(255, "ime <command>:\n  list [-a] [-s]\n  enable [--user <USER_ID>] <ID>\n  set [--user <USER_ID>] <ID>\n"),
    })
}

/// `am broadcast -a ACTION [--es K V] [--ei K N] …`.
pub fn broadcast(phone: &Phone, args: &[&str]) -> Output {
    let (mut action, mut extras) = (None, Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match *a {
            "-a" => action = it.next().copied(),
            "--es" | "--ei" => {
                if let (Some(k), Some(v)) = (it.next(), it.next()) {
                    extras.push((*k, *v));
                }
            }
            "-n" | "-p" | "--user" => {
                it.next();
            }
            _ => {}
        }
    }
    let action = action.unwrap_or("");
    let msg = extras.iter().find(|(k, _)| *k == "msg").map(|(_, v)| *v);
    phone.with(|s| {
        let listening = s.adb_keyboard
            && s.adb_keyboard_receives
            && s.current_ime() == ADB_KEYBOARD_IME
            && s.ui.focused.as_deref() == Some(NOTE_FIELD);
        if listening {
            deliver(s, action, msg);
        }
    });
    let has = if extras.is_empty() {
        ""
    } else {
        " (has extras)"
    };
    Output::ok(format!("Broadcasting: Intent {{ act={action} flg=0x400000{has} }}\nBroadcast completed: result=0\n"))
}

fn deliver(s: &mut PhoneState, action: &str, msg: Option<&str>) {
    match (action, msg) {
        ("ADB_INPUT_TEXT", Some(text)) => s.ui.note_text.push_str(text),
        ("ADB_INPUT_B64", Some(b64)) => {
            if let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(b64) {
                s.ui.note_text.push_str(&String::from_utf8_lossy(&bytes));
            }
        }
        ("ADB_CLEAR_TEXT", _) => s.ui.note_text.clear(),
        _ => {}
    }
}
