//! The phone's media store: which files of shared storage MediaProvider has indexed, with the
//! row id and collection its `scan_file` call answers (AOSP `packages/providers/MediaProvider`
//! `scan/ModernMediaScanner.java` `Scan.getFirstResult`: `content://media/<volume>/images|video|
//! audio/media/<id>`, else `content://media/<volume>/file/<id>`). Files under a folder whose name
//! starts with `.` or that holds a `.nomedia` file, and `Android/data|obb`, are kept out
//! (`ModernMediaScanner.shouldScanPathAndIsPathHidden`); a scan of such a file, of a missing
//! file, or of a path outside shared storage yields no row.

use std::collections::BTreeMap;

use serde::Serialize;

/// The volume name of primary shared storage.
pub const VOLUME: &str = "external_primary";
/// First row id (MediaProvider's ids on Android 11+ start at 1000000000).
const FIRST_ID: u64 = 1_000_000_000;

/// One indexed file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MediaRow {
    /// Row id.
    pub id: u64,
    /// `images`, `video`, `audio` or `file`.
    pub collection: &'static str,
}

/// Indexed files, keyed by resolved path (`/storage/emulated/0/…`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct MediaStore {
    rows: BTreeMap<String, MediaRow>,
    next: u64,
}

/// The collection of a file name, from its extension (MediaProvider's `MimeUtils`).
pub fn collection(path: &str) -> &'static str {
    let ext = std::path::Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref().unwrap_or("") {
        "png" | "jpg" | "jpeg" | "gif" | "webp" | "heic" | "heif" | "bmp" | "dng" => "images",
        "mp4" | "mkv" | "webm" | "3gp" | "mov" | "avi" => "video",
        "mp3" | "ogg" | "m4a" | "wav" | "flac" | "aac" | "opus" => "audio",
        _ => "file",
    }
}

impl MediaStore {
    /// Indexes `path` (resolved) and returns its `content://` URI, or `None` when the scanner
    /// keeps it out: `exists` false, `hidden` true, or not in shared storage `shared` (the
    /// resolved `/storage/emulated/0`).
    pub fn scan(&mut self, path: &str, shared: &str, exists: bool, hidden: bool) -> Option<String> {
        let inside = path
            .strip_prefix(shared)
            .is_some_and(|rest| rest.starts_with('/') && rest.len() > 1);
        if !inside || !exists || hidden {
            self.rows.remove(path);
            return None;
        }
        if self.next == 0 {
            self.next = FIRST_ID;
        }
        let collection = collection(path);
        let row = self.rows.entry(path.to_string()).or_insert_with(|| {
            self.next += 1;
            MediaRow {
                id: self.next,
                collection,
            }
        });
        Some(match row.collection {
            "file" => format!("content://media/{VOLUME}/file/{}", row.id),
            c => format!("content://media/{VOLUME}/{c}/media/{}", row.id),
        })
    }

    /// The indexed paths, sorted.
    pub fn paths(&self) -> Vec<String> {
        self.rows.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_uris() {
        let mut m = MediaStore::default();
        let shared = "/storage/emulated/0";
        let uri = m.scan("/storage/emulated/0/Pictures/a.png", shared, true, false);
        assert_eq!(
            uri.as_deref(),
            Some("content://media/external_primary/images/media/1000000001")
        );
        let again = m.scan("/storage/emulated/0/Pictures/a.png", shared, true, false);
        assert_eq!(uri, again, "one row per file");
        let pdf = m
            .scan("/storage/emulated/0/Download/c.pdf", shared, true, false)
            .unwrap();
        assert!(pdf.starts_with("content://media/external_primary/file/"));
        assert!(m
            .scan(
                "/storage/emulated/0/Pictures/.hidden/x.png",
                shared,
                true,
                true
            )
            .is_none());
        assert!(m
            .scan("/data/local/tmp/x.png", shared, true, false)
            .is_none());
        assert!(m
            .scan(
                "/storage/emulated/0/Pictures/gone.png",
                shared,
                false,
                false
            )
            .is_none());
        assert_eq!(m.paths().len(), 2);
    }
}
