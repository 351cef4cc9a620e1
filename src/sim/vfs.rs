//! The phone's virtual file system: an in-memory tree of directories and files with Unix modes
//! and mtimes, enough for `sync:` (push/pull/ls), redirections and `cat`/`ls`/`rm`/`mkdir`.
//! Error texts are bionic's `strerror` strings.
//!
//! Symbolic links are followed wherever a path is used ([`Vfs::resolve`]). The default tree has
//! the links of shared storage every Android since 6.0 has: `/sdcard` and `/mnt/sdcard` →
//! `/storage/self/primary` (AOSP `system/core/rootdir/init.rc` `symlink /storage/self/primary
//! /mnt/sdcard`, and the rootdir build's `/sdcard` link) → `/storage/emulated/0` (AOSP
//! `system/vold/VolumeManager.cpp` `linkPrimary`: `/mnt/user/<user>/primary` →
//! `/storage/emulated/<user>`, bound over `/storage/self` for user 0). Simplification: `..` is
//! taken on the text before links are followed (as mksh's logical `cd` does), where the kernel
//! would follow the link first.

use std::collections::BTreeMap;

/// `S_IFDIR`.
pub const S_IFDIR: u32 = 0o040000;
/// `S_IFREG`.
pub const S_IFREG: u32 = 0o100000;
/// `S_IFLNK`.
pub const S_IFLNK: u32 = 0o120000;
/// `S_IFMT`.
pub const S_IFMT: u32 = 0o170000;
/// Links followed at most (Linux `MAXSYMLINKS`, then ELOOP).
const MAX_LINKS: usize = 40;
/// Shared storage of user 0: the directory the `/sdcard` aliases lead to.
pub const SHARED_STORAGE: &str = "/storage/emulated/0";
/// The folders a fresh phone's shared storage has (AOSP `android.os.Environment`
/// `STANDARD_DIRECTORIES`, made by MediaProvider on first boot, plus `Android`).
pub const SHARED_DIRS: &[&str] = &[
    "Alarms",
    "Android",
    "DCIM",
    "Documents",
    "Download",
    "Movies",
    "Music",
    "Notifications",
    "Pictures",
    "Podcasts",
    "Ringtones",
];

/// A file system error, with its errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VfsError {
    /// ENOENT (2).
    NotFound,
    /// EISDIR (21).
    IsDir,
    /// ENOTDIR (20).
    NotDir,
    /// EEXIST (17).
    Exists,
    /// ENOTEMPTY (39).
    NotEmpty,
    /// EACCES (13): read-only areas such as `/system`.
    Denied,
}

impl VfsError {
    /// Linux errno value (what `STA2` carries).
    pub fn errno(self) -> u32 {
        match self {
            VfsError::NotFound => 2,
            VfsError::Denied => 13,
            VfsError::Exists => 17,
            VfsError::NotDir => 20,
            VfsError::IsDir => 21,
            VfsError::NotEmpty => 39,
        }
    }

    /// bionic `strerror` text.
    pub fn message(self) -> &'static str {
        match self {
            VfsError::NotFound => "No such file or directory",
            VfsError::Denied => "Permission denied",
            VfsError::Exists => "File exists",
            VfsError::NotDir => "Not a directory",
            VfsError::IsDir => "Is a directory",
            VfsError::NotEmpty => "Directory not empty",
        }
    }
}

/// One file system entry.
#[derive(Clone, Debug)]
pub struct Entry {
    /// Contents; `None` for a directory.
    pub data: Option<Vec<u8>>,
    /// Full `st_mode` (type bits | permission bits).
    pub mode: u32,
    /// Modification time, seconds since the epoch.
    pub mtime: u32,
}

impl Entry {
    /// Whether this is a directory.
    pub fn is_dir(&self) -> bool {
        self.data.is_none()
    }

    /// Whether this is a symbolic link (as [`Vfs::list`] shows links; `data` is the target).
    pub fn is_link(&self) -> bool {
        self.mode & S_IFMT == S_IFLNK
    }

    /// Size in bytes (4096 for directories, like ext4/f2fs).
    pub fn size(&self) -> u64 {
        self.data.as_ref().map_or(4096, |d| d.len() as u64)
    }
}

/// The in-memory tree, keyed by normalised absolute path, and its symbolic links.
#[derive(Clone, Debug, Default)]
pub struct Vfs {
    entries: BTreeMap<String, Entry>,
    /// Link path → absolute target.
    links: BTreeMap<String, String>,
    /// Shared storage's tree while its volume is not mounted (`None`: mounted). vold mounts
    /// user 0's emulated volume over `/storage/emulated` once the system server asks (after
    /// boot; Android 11+ after the user's first unlock): until then `/storage/emulated/0` does
    /// not exist and the `/sdcard` links lead nowhere (field bug 68).
    unmounted: Option<BTreeMap<String, Entry>>,
}

/// Normalises `path` against `cwd`: absolute, no `.`/`..`/empty components, no trailing `/`.
pub fn normalize(cwd: &str, path: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{cwd}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

impl Vfs {
    /// A phone's default tree: shared storage `/storage/emulated/0` (+ [`SHARED_DIRS`]) with its
    /// aliases `/sdcard`, `/mnt/sdcard`, `/storage/self/primary`, `/data/local/tmp`,
    /// `/system/bin` holding one empty executable per program name in `programs`.
    pub fn with_defaults(now: u32, programs: &[&str]) -> Vfs {
        let mut vfs = Vfs::default();
        let dirs = [
            "/",
            "/mnt",
            "/storage/emulated",
            "/storage/emulated/0",
            "/storage/self",
            "/data",
            "/data/local",
            "/data/local/tmp",
            "/system",
            "/system/bin",
            "/dev",
            "/proc",
            "/storage",
            "/vendor",
        ];
        for d in dirs {
            vfs.entries.insert(
                d.to_string(),
                Entry {
                    data: None,
                    mode: S_IFDIR | 0o771,
                    mtime: now,
                },
            );
        }
        for d in SHARED_DIRS {
            vfs.entries.insert(
                format!("{SHARED_STORAGE}/{d}"),
                Entry {
                    data: None,
                    mode: S_IFDIR | 0o771,
                    mtime: now,
                },
            );
        }
        for (link, target) in [
            ("/storage/self/primary", SHARED_STORAGE),
            ("/sdcard", "/storage/self/primary"),
            ("/mnt/sdcard", "/storage/self/primary"),
        ] {
            vfs.links.insert(link.to_string(), target.to_string());
        }
        for p in programs {
            let entry = Entry {
                data: Some(Vec::new()),
                mode: S_IFREG | 0o755,
                mtime: now,
            };
            vfs.entries.insert(format!("/system/bin/{p}"), entry);
        }
        vfs
    }

    /// Mounts (`true`) or unmounts shared storage: its tree is kept aside while unmounted and
    /// comes back as it was.
    pub fn set_shared_mounted(&mut self, mounted: bool) {
        let under = |p: &str| {
            p == SHARED_STORAGE
                || p.strip_prefix(SHARED_STORAGE)
                    .is_some_and(|rest| rest.starts_with('/'))
        };
        match (mounted, self.unmounted.take()) {
            (true, Some(tree)) => self.entries.extend(tree),
            (false, None) => {
                let keys: Vec<String> = self.entries.keys().filter(|k| under(k)).cloned().collect();
                let tree = keys
                    .into_iter()
                    .filter_map(|k| self.entries.remove(&k).map(|e| (k, e)))
                    .collect();
                self.unmounted = Some(tree);
            }
            (_, kept) => self.unmounted = kept,
        }
    }

    /// Whether shared storage is mounted.
    pub fn shared_mounted(&self) -> bool {
        self.unmounted.is_none()
    }

    /// `path` normalised with every symbolic link on it followed (at most 40, then the path
    /// as it stands).
    pub fn resolve(&self, path: &str) -> String {
        let mut path = normalize("/", path);
        for _ in 0..MAX_LINKS {
            let hit = self.links.iter().find(|(link, _)| {
                path.strip_prefix(link.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            });
            let Some((link, target)) = hit else {
                return path;
            };
            path = normalize("/", &format!("{target}{}", &path[link.len()..]));
        }
        path
    }

    /// The entry at an absolute path, links followed (`stat`).
    pub fn stat(&self, path: &str) -> Result<&Entry, VfsError> {
        self.entries
            .get(&self.resolve(path))
            .ok_or(VfsError::NotFound)
    }

    /// Contents of a regular file.
    pub fn read(&self, path: &str) -> Result<&[u8], VfsError> {
        let entry = self.stat(path)?;
        entry.data.as_deref().ok_or(VfsError::IsDir)
    }

    fn check_parent(&self, path: &str) -> Result<(), VfsError> {
        match self.entries.get(parent(path)) {
            None => Err(VfsError::NotFound),
            Some(e) if !e.is_dir() => Err(VfsError::NotDir),
            Some(_) if path.starts_with("/system/") || path.starts_with("/proc/") => {
                Err(VfsError::Denied)
            }
            Some(_) => Ok(()),
        }
    }

    /// Creates or replaces (or appends to) a regular file; the parent must exist.
    pub fn write(
        &mut self,
        path: &str,
        bytes: &[u8],
        append: bool,
        now: u32,
    ) -> Result<(), VfsError> {
        let path = self.resolve(path);
        self.check_parent(&path)?;
        match self.entries.get_mut(&path) {
            Some(e) if e.is_dir() => Err(VfsError::IsDir),
            Some(e) => {
                let data = e.data.get_or_insert_with(Vec::new);
                if !append {
                    data.clear();
                }
                data.extend_from_slice(bytes);
                e.mtime = now;
                Ok(())
            }
            None => {
                let entry = Entry {
                    data: Some(bytes.to_vec()),
                    mode: S_IFREG | 0o660,
                    mtime: now,
                };
                self.entries.insert(path, entry);
                Ok(())
            }
        }
    }

    /// Sets permission bits and mtime of an existing file (after `SEND`).
    pub fn set_meta(&mut self, path: &str, perm: u32, mtime: u32) {
        let path = self.resolve(path);
        if let Some(e) = self.entries.get_mut(&path) {
            e.mode = (e.mode & !0o7777) | (perm & 0o7777);
            e.mtime = mtime;
        }
    }

    /// `mkdir` (`parents` = `mkdir -p`: no error if it exists, creates ancestors).
    pub fn mkdir(&mut self, path: &str, parents: bool, now: u32) -> Result<(), VfsError> {
        let path = self.resolve(path);
        if let Some(e) = self.entries.get(&path) {
            return match (parents, e.is_dir()) {
                (true, true) => Ok(()),
                (_, false) if parents => Err(VfsError::NotDir),
                _ => Err(VfsError::Exists),
            };
        }
        // Only vold creates the volume's mount point.
        if self.unmounted.is_some() && path == SHARED_STORAGE {
            return Err(VfsError::NotFound);
        }
        if parents && path != "/" {
            self.mkdir(parent(&path), true, now)?;
        }
        self.check_parent(&path)?;
        self.entries.insert(
            path,
            Entry {
                data: None,
                mode: S_IFDIR | 0o771,
                mtime: now,
            },
        );
        Ok(())
    }

    /// Removes a file, or a directory tree when `recursive`.
    pub fn remove(&mut self, path: &str, recursive: bool) -> Result<(), VfsError> {
        let path = self.resolve(path);
        let entry = self.entries.get(&path).ok_or(VfsError::NotFound)?;
        if path.starts_with("/system") || path == "/" {
            return Err(VfsError::Denied);
        }
        if entry.is_dir() {
            let prefix = format!("{path}/");
            let has_children = self.entries.keys().any(|k| k.starts_with(&prefix));
            if !recursive {
                return Err(VfsError::IsDir);
            }
            if has_children {
                self.entries.retain(|k, _| !k.starts_with(&prefix));
            }
        }
        self.entries.remove(&path);
        Ok(())
    }

    /// Direct children of a directory, sorted by name.
    pub fn list(&self, path: &str) -> Result<Vec<(String, Entry)>, VfsError> {
        let path = self.resolve(path);
        let entry = self.stat(&path)?;
        if !entry.is_dir() {
            return Err(VfsError::NotDir);
        }
        let prefix = if path == "/" {
            "/".to_string()
        } else {
            format!("{path}/")
        };
        let child = |k: &String| {
            k.len() > prefix.len() && k.starts_with(&prefix) && !k[prefix.len()..].contains('/')
        };
        let mut out: Vec<(String, Entry)> = self
            .entries
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| child(k))
            .map(|(k, e)| (k[prefix.len()..].to_string(), e.clone()))
            .collect();
        out.extend(self.links.iter().filter(|(k, _)| child(k)).map(|(k, t)| {
            let entry = Entry {
                data: Some(t.clone().into_bytes()),
                mode: S_IFLNK | 0o777,
                mtime: entry.mtime,
            };
            (k[prefix.len()..].to_string(), entry)
        }));
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_read_list_remove() {
        let mut v = Vfs::with_defaults(1, &["ls"]);
        assert_eq!(
            normalize("/sdcard", "../data/./local//tmp/"),
            "/data/local/tmp"
        );
        v.write("/sdcard/a.txt", b"hi", false, 2).unwrap();
        v.write("/sdcard/a.txt", b"!", true, 2).unwrap();
        assert_eq!(v.read("/sdcard/a.txt").unwrap(), b"hi!");
        assert_eq!(v.write("/nope/x", b"", false, 2), Err(VfsError::NotFound));
        v.mkdir("/sdcard/x/y", true, 3).unwrap();
        let names: Vec<String> = v
            .list("/sdcard")
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert!(names.contains(&"a.txt".to_string()) && names.contains(&"x".to_string()));
        assert!(!names.contains(&"y".to_string()));
        assert_eq!(v.remove("/sdcard/x", false), Err(VfsError::IsDir));
        v.remove("/sdcard/x", true).unwrap();
        assert!(v.stat("/sdcard/x/y").is_err());
        assert_eq!(v.read("/system/bin/ls").unwrap(), b"");
    }

    #[test]
    fn shared_storage_has_its_aliases() {
        let mut v = Vfs::with_defaults(1, &[]);
        v.write("/sdcard/Pictures/a.png", b"png", false, 2).unwrap();
        for alias in [
            "/sdcard/Pictures/a.png",
            "/mnt/sdcard/Pictures/a.png",
            "/storage/self/primary/Pictures/a.png",
            "/storage/emulated/0/Pictures/a.png",
            "/storage/self/primary//Pictures/./a.png",
        ] {
            assert_eq!(v.read(alias).unwrap(), b"png", "{alias}");
        }
        assert_eq!(
            v.resolve("/mnt/sdcard/Download"),
            "/storage/emulated/0/Download"
        );
        assert!(v.read("/storage/emulated/10/Pictures/a.png").is_err());
        let root: Vec<(String, bool)> = v
            .list("/")
            .unwrap()
            .into_iter()
            .map(|(n, e)| (n, e.is_link()))
            .collect();
        assert!(root.contains(&("sdcard".to_string(), true)), "{root:?}");
        let shared: Vec<String> = v
            .list("/sdcard")
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert!(shared.contains(&"Movies".to_string()) && shared.contains(&"Download".to_string()));
    }
}
