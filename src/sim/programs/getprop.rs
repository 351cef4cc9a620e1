//! `getprop` / `setprop`. Listing format `[key]: [value]`, sorted by key, as in
//! `fixtures/getprop/motorola-edge20-berlin-android13.txt`; a missing key prints an empty line.

use super::Output;
use crate::phone::Phone;

/// `getprop`, `getprop KEY [DEFAULT]`.
pub fn getprop(phone: &Phone, args: &[String]) -> Output {
    phone.with(|s| match args {
        [] => Output::ok(
            s.props
                .iter()
                .map(|(k, v)| format!("[{k}]: [{v}]\n"))
                .collect::<String>(),
        ),
        [key, rest @ ..] => {
            let value = s
                .props
                .get(key)
                .cloned()
                .or_else(|| rest.first().cloned())
                .unwrap_or_default();
            Output::ok(format!("{value}\n"))
        }
    })
}

/// `setprop KEY VALUE`: `ro.*` is write-once and refused for the shell user.
pub fn setprop(phone: &Phone, args: &[String]) -> Output {
    let [key, value] = args else {
        return Output::err(
            1,
            "usage: setprop NAME VALUE\n\nSets an Android system property.\n",
        );
    };
    if key.starts_with("ro.") {
        return Output::err(
            1,
            format!("Failed to set property '{key}' to '{value}'.\nSee dmesg for error reason.\n"),
        );
    }
    phone.with(|s| s.props.insert(key.clone(), value.clone()));
    Output::code(0)
}
