//! Input methods: `ime list|enable|set` (AOSP `InputMethodManagerService` shell command) and
//! ADBKeyBoard's broadcasts (`senzhk/ADBKeyBoard` `AdbIME.java`): `ADB_INPUT_TEXT --es msg T`,
//! `ADB_INPUT_B64 --es msg BASE64`, `ADB_CLEAR_TEXT`. They type
//! only while ADBKeyBoard is installed and the selected IME; otherwise the broadcast still
//! "completes" with nobody listening, as on a real phone.

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

    fn imes(&self) -> Vec<&'static str> {
        let mut v = vec![LATIN_IME];
        if self.adb_keyboard {
            v.push(ADB_KEYBOARD_IME);
        }
        v
    }
}

/// Runs `ime`.
pub fn ime(phone: &Phone, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    phone.with(|s| match args.as_slice() {
        ["list", ..] => Output::ok(s.imes().iter().map(|i| format!("{i}\n")).collect::<String>()),
        ["enable", id] if s.imes().contains(id) => Output::ok(format!("Input method {id}: now enabled for user #0\n")),
        ["set", id] if s.imes().contains(id) => {
            s.settings.insert(("secure".into(), "default_input_method".into()), id.to_string());
            Output::ok(format!("Input method {id} selected for user #0\n"))
        }
        ["enable" | "set", id] => Output::err(255, format!("Unknown input method {id} cannot be selected for user #0\n")),
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
