//! Open install sessions of the package manager (`pm install-create` … `install-commit`): the
//! APKs written into each, by name, until it is committed or abandoned (AOSP
//! `PackageInstallerService` / `PackageInstallerSession`; ids are random positive ints there,
//! sequential from a large base here).

use std::collections::BTreeMap;

/// First session id handed out.
const FIRST_ID: u64 = 1_168_432_000;

/// The open sessions.
#[derive(Clone, Debug, Default)]
pub struct InstallSessions {
    next: u64,
    open: BTreeMap<u64, Vec<(String, Vec<u8>)>>,
    /// Sessions created with `--bypass-low-target-sdk-block` (ids are never reused).
    bypass_low_target_sdk: std::collections::BTreeSet<u64>,
}

impl InstallSessions {
    /// Opens a session; its id. `bypass_low_target_sdk`: created with
    /// `--bypass-low-target-sdk-block` (`INSTALL_BYPASS_LOW_TARGET_SDK_BLOCK`, Android 14+).
    pub fn create(&mut self, bypass_low_target_sdk: bool) -> u64 {
        self.next = self.next.max(FIRST_ID) + 1;
        self.open.insert(self.next, Vec::new());
        if bypass_low_target_sdk {
            self.bypass_low_target_sdk.insert(self.next);
        }
        self.next
    }

    /// Whether session `id` was created with `--bypass-low-target-sdk-block`.
    pub fn bypasses_low_target_sdk(&self, id: u64) -> bool {
        self.bypass_low_target_sdk.contains(&id)
    }

    /// Writes `bytes` as `name` into session `id` (a name written again is replaced); `false`
    /// when no such session is open.
    pub fn write(&mut self, id: u64, name: &str, bytes: Vec<u8>) -> bool {
        let Some(files) = self.open.get_mut(&id) else {
            return false;
        };
        files.retain(|(n, _)| n != name);
        files.push((name.to_string(), bytes));
        true
    }

    /// Closes session `id` (commit or abandon); its APKs, `None` when no such session is open.
    pub fn take(&mut self, id: u64) -> Option<Vec<(String, Vec<u8>)>> {
        self.open.remove(&id)
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        self.open.len()
    }

    /// Whether none is open.
    pub fn is_empty(&self) -> bool {
        self.open.is_empty()
    }
}
