//! `sm list-volumes [all|public|private|emulated]` (AOSP `frameworks/base/cmds/sm/.../Sm.java`
//! `runListVolumes`): one `ID STATE FSUUID` line per volume — internal storage `private`, then
//! user 0's shared storage, `emulated` on Android 6–10 and `emulated;0` from Android 11 (vold's
//! per-user `EmulatedVolume`), its state the one set by the control API's `shared_storage`
//! (`mounted` unless told; field bug 68). Other subcommands answer `sm`'s usage error.

use super::Output;
use crate::phone::Phone;

/// Runs `sm`.
pub fn run(phone: &Phone, args: &[String]) -> Output {
    let (sdk, state) = phone.with(|s| (s.persona.sdk, s.shared_storage.clone()));
    match args.first().map(String::as_str) {
        Some("list-volumes") => {}
        _ => {
            return Output::err(
                1,
                "Error: unknown command\nusage: sm list-disks [adoptable]\n       sm list-volumes [public|private|emulated|stub|all]\n",
            )
        }
    }
    let filter = args.get(1).map_or("all", String::as_str);
    let shared = if sdk >= 30 { "emulated;0" } else { "emulated" };
    let mut out = String::new();
    if matches!(filter, "all" | "private") {
        out.push_str("private mounted null\n");
    }
    if matches!(filter, "all" | "emulated") {
        out.push_str(&format!("{shared} {state} null\n"));
    }
    Output::ok(out)
}
