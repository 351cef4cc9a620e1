//! `sm list-volumes [all|public|private|emulated]`: the storage volumes of the phone and their
//! states, one a line: `ID STATE FSUUID` (AOSP `frameworks/base/cmds/sm/.../Sm.java`
//! `runListVolumes`: `vol.getId() + " " + VolumeInfo.getEnvironmentForState(state) + " " +
//! vol.getFsUuid()`). Ids: `private` (internal storage), the shared storage of the users —
//! `emulated` on Android 6–10, one `emulated;USER` per user from Android 11 (AOSP
//! `VolumeInfo.ID_EMULATED_INTERNAL` and vold's per-user `EmulatedVolume`) — and `public:MAJ,MIN`
//! for SD cards and USB drives. States (`getEnvironmentForState`): `unmounted`, `checking`,
//! `mounted`, `mounted_ro`, `ejecting`, `unmountable`, `removed`, `bad_removal`. The UUID is
//! `null` for internal volumes. Shared storage is mounted by vold once the system server asks
//! (after boot; from Android 11, for a user only after that user's first unlock since boot,
//! `StorageManagerService` `onUnlockUser`); until then `/sdcard` leads nowhere
//! (ReactiveCircus/android-emulator-runner#102: `Unable to open '/storage/emulated/0/…': No such
//! file or directory`; field bug 68).

/// One volume line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Volume {
    /// `emulated;0`, `emulated`, `private`, `public:179,65`.
    pub id: String,
    /// `mounted`, `unmounted`, `checking`, …
    pub state: String,
}

impl Volume {
    /// Whether files can be read from it (`mounted` or `mounted_ro`).
    pub fn mounted(&self) -> bool {
        self.state == "mounted" || self.state == "mounted_ro"
    }
}

/// The volume lines of `sm list-volumes`: lines of three words whose first names a volume
/// (`private`, `emulated…`, `public:…`, `stub:…`); anything else (an error, a usage text) is
/// skipped.
pub fn parse_volumes(output: &str) -> Vec<Volume> {
    output
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let [id, state, _uuid] = words[..] else {
                return None;
            };
            let known = id == "private"
                || id == "emulated"
                || id.starts_with("emulated;")
                || id.starts_with("public:")
                || id.starts_with("stub:");
            let state_word = state.chars().all(|c| c.is_ascii_lowercase() || c == '_');
            (known && state_word).then(|| Volume {
                id: id.to_string(),
                state: state.to_string(),
            })
        })
        .collect()
}

/// User 0's shared storage among `volumes`: `emulated;0`, else the single-user `emulated`.
pub fn primary_shared(volumes: &[Volume]) -> Option<&Volume> {
    volumes
        .iter()
        .find(|v| v.id == "emulated;0")
        .or_else(|| volumes.iter().find(|v| v.id == "emulated"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_each_android_layout() {
        let eleven =
            "private mounted null\nemulated;0 unmounted null\npublic:179,65 mounted 1234-ABCD\n";
        let v = parse_volumes(eleven);
        assert_eq!(v.len(), 3);
        let shared = primary_shared(&v).unwrap();
        assert_eq!(shared.id, "emulated;0");
        assert!(!shared.mounted());
        let six = "private mounted null\nemulated checking null\n";
        let v = parse_volumes(six);
        assert_eq!(primary_shared(&v).unwrap().state, "checking");
        assert!(
            parse_volumes("private mounted null\nemulated mounted_ro null\n")
                .iter()
                .all(Volume::mounted)
        );
    }

    #[test]
    fn other_text_is_no_volume() {
        assert!(parse_volumes("/system/bin/sh: sm: not found\n").is_empty());
        assert!(parse_volumes("usage: sm list-disks [adoptable]\n").is_empty());
        assert!(primary_shared(&parse_volumes("emulated;10 mounted null\n")).is_none());
    }
}
