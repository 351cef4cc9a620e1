//! The phone's virtual file system: an in-memory tree of directories and files with Unix modes
//! and mtimes, enough for `sync:` (push/pull/ls), redirections and `cat`/`ls`/`rm`/`mkdir`.
//! Error texts are bionic's `strerror` strings.

use std::collections::BTreeMap;

/// `S_IFDIR`.
pub const S_IFDIR: u32 = 0o040000;
/// `S_IFREG`.
pub const S_IFREG: u32 = 0o100000;

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

    /// Size in bytes (4096 for directories, like ext4/f2fs).
    pub fn size(&self) -> u64 {
        self.data.as_ref().map_or(4096, |d| d.len() as u64)
    }
}

/// The in-memory tree, keyed by normalised absolute path.
#[derive(Clone, Debug, Default)]
pub struct Vfs {
    entries: BTreeMap<String, Entry>,
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
    /// A phone's default tree: `/sdcard` (+ `Download`, `DCIM`, `Pictures`), `/data/local/tmp`,
    /// `/system/bin` holding one empty executable per program name in `programs`.
    pub fn with_defaults(now: u32, programs: &[&str]) -> Vfs {
        let mut vfs = Vfs::default();
        let dirs = [
            "/",
            "/sdcard",
            "/sdcard/Download",
            "/sdcard/DCIM",
            "/sdcard/Pictures",
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

    /// The entry at an absolute path (`lstat`).
    pub fn stat(&self, path: &str) -> Result<&Entry, VfsError> {
        self.entries
            .get(&normalize("/", path))
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
        let path = normalize("/", path);
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
        if let Some(e) = self.entries.get_mut(&normalize("/", path)) {
            e.mode = (e.mode & !0o7777) | (perm & 0o7777);
            e.mtime = mtime;
        }
    }

    /// `mkdir` (`parents` = `mkdir -p`: no error if it exists, creates ancestors).
    pub fn mkdir(&mut self, path: &str, parents: bool, now: u32) -> Result<(), VfsError> {
        let path = normalize("/", path);
        if let Some(e) = self.entries.get(&path) {
            return match (parents, e.is_dir()) {
                (true, true) => Ok(()),
                (_, false) if parents => Err(VfsError::NotDir),
                _ => Err(VfsError::Exists),
            };
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
        let path = normalize("/", path);
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
        let path = normalize("/", path);
        let entry = self.stat(&path)?;
        if !entry.is_dir() {
            return Err(VfsError::NotDir);
        }
        let prefix = if path == "/" {
            "/".to_string()
        } else {
            format!("{path}/")
        };
        Ok(self
            .entries
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, _)| k.len() > prefix.len() && !k[prefix.len()..].contains('/'))
            .map(|(k, e)| (k[prefix.len()..].to_string(), e.clone()))
            .collect())
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
}
