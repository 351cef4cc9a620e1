//! What the connector learned about one phone that saves work on later calls: kept per phone
//! by the connector (by serial, shared by every channel that binds it), never needed for a
//! correct answer — a stale hint costs at most one extra step, after which it is corrected.

use std::sync::Mutex;

/// How `uiautomator dump` gives this phone's tree (field bug 39).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UiDumpWay {
    /// Not tried yet: `/dev/tty` first (one round trip when it works).
    #[default]
    Unknown,
    /// `uiautomator dump /dev/tty` prints the XML.
    Tty,
    /// `/dev/tty` printed only the status line (no controlling terminal for the shell, AOSP
    /// `AccessibilityNodeInfoDumper.dumpWindowToFile` logs the failed open and `DumpCommand`
    /// still prints `UI hierchary dumped to: /dev/tty`): dump into a private file, read it,
    /// remove it. `/dev/tty` is never tried again on this phone.
    File,
}

/// The hints of one phone.
#[derive(Debug, Default)]
pub struct PhoneHints {
    ui_dump: Mutex<UiDumpWay>,
    /// `ro.build.fingerprint`, read once (what `screencap -j` support is kept by:
    /// [`super::capture`]).
    fingerprint: Mutex<Option<String>>,
    /// The touch backend chosen for the phone and its open stream ([`super::touch`]); an
    /// async lock: a gesture holds it while it writes, so gestures on one phone never mix.
    touch: tokio::sync::Mutex<super::touch::TouchState>,
}

impl PhoneHints {
    /// The way `uiautomator dump` works on this phone, as far as known.
    pub fn ui_dump(&self) -> UiDumpWay {
        *self.ui_dump.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The touch backend state ([`super::touch`]).
    pub fn touch(&self) -> &tokio::sync::Mutex<super::touch::TouchState> {
        &self.touch
    }

    /// The phone's build fingerprint, once read.
    pub fn fingerprint(&self) -> Option<String> {
        self.fingerprint
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Keeps the phone's build fingerprint.
    pub fn set_fingerprint(&self, fingerprint: String) {
        *self.fingerprint.lock().unwrap_or_else(|e| e.into_inner()) = Some(fingerprint);
    }

    /// Records the way that worked (or the one that cannot).
    pub fn set_ui_dump(&self, way: UiDumpWay) {
        *self.ui_dump.lock().unwrap_or_else(|e| e.into_inner()) = way;
    }
}
