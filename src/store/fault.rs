//! What went wrong with storage, said so an operator can act: the cause (disk full, read-only,
//! locked by another process, not a database) and the path, with the fix.
//!
//! SQLite reports an I/O failure by its own code only (an immutable database reads "I/O error in
//! the advisory file locking layer", `SQLITE_IOERR_LOCK`), without the system error behind it.
//! So an ambiguous SQLite failure is diagnosed by looking at the path: the filesystem's flags
//! and free space (`statvfs(3)`), and whether the database, its `-wal`/`-shm` files and its
//! directory can be opened for writing. An I/O error of our own file writes carries the errno
//! itself (`ENOSPC`, `EDQUOT`, `EROFS`, `EPERM`, `EACCES`: errno(3)).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The first 16 bytes of every SQLite 3 database file (sqlite.org "Database File Format" §1.3).
pub const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Why storage failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// No space left on the filesystem (or the user's quota is used up).
    DiskFull,
    /// The filesystem is mounted read-only.
    ReadOnlyFilesystem,
    /// The file or directory may not be written: immutable or append-only attribute (`EPERM`).
    Immutable,
    /// The file or directory is not writable by this user (`EACCES`).
    PermissionDenied,
    /// Another process holds the SQLite lock on the database.
    Locked,
    /// The database file exists but is empty (0 bytes).
    Empty,
    /// The file does not start with the SQLite header.
    NotSqlite,
    /// An SQLite database, but not this connector's (no `meta` table).
    NotConnectorDatabase,
    /// SQLite reports the database damaged.
    Damaged,
    /// Anything else: the system's or SQLite's own words.
    Other(String),
}

/// A storage failure: its cause and the path it concerns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {}; {}", describe(.cause), fix(.cause), path = .path.display())]
pub struct StorageFault {
    /// Why.
    pub cause: Cause,
    /// The file or directory concerned.
    pub path: PathBuf,
}

fn describe(cause: &Cause) -> String {
    match cause {
        Cause::DiskFull => "the disk is full (no space left on the filesystem holding it)".into(),
        Cause::ReadOnlyFilesystem => "cannot be written: its filesystem is mounted read-only".into(),
        Cause::Immutable => {
            "cannot be written: the file or its directory is immutable or append-only (`lsattr` shows `i` or `a`)".into()
        }
        Cause::PermissionDenied => {
            "cannot be written: permission denied to this user".into()
        }
        Cause::Locked => "the database is locked by another process".into(),
        Cause::Empty => "the database file exists but is empty (0 bytes)".into(),
        Cause::NotSqlite => {
            "the database file is not an SQLite database (its header is not \"SQLite format 3\")".into()
        }
        Cause::NotConnectorDatabase => {
            "the file is an SQLite database, but not this connector's (it has no `meta` table)".into()
        }
        Cause::Damaged => "the database is damaged (SQLite: malformed)".into(),
        Cause::Other(said) => said.clone(),
    }
}

fn fix(cause: &Cause) -> &'static str {
    match cause {
        Cause::DiskFull => "free space on that filesystem (or lower file_cache_max_bytes), then retry",
        Cause::ReadOnlyFilesystem => "remount it read-write, or point --data-dir at a writable filesystem",
        Cause::Immutable => "clear the attribute (`chattr -i -a PATH`)",
        Cause::PermissionDenied => "give the service user write access (the data dir is owned by it, mode 0700)",
        Cause::Locked => "stop the other process using it (an `sqlite3` shell, a backup tool), then start again",
        Cause::Empty | Cause::NotSqlite | Cause::NotConnectorDatabase | Cause::Damaged => {
            "the connector's identity and bindings are not in it; restore the file from a backup, or move it away to start afresh as a new connector (new connector_id, every binding gone)"
        }
        Cause::Other(_) => "check the disk and the data dir",
    }
}

impl StorageFault {
    /// A fault of `path`.
    pub fn new(cause: Cause, path: impl Into<PathBuf>) -> StorageFault {
        StorageFault {
            cause,
            path: path.into(),
        }
    }

    /// What is wrong, without the path ("the disk is full (…)").
    pub fn what(&self) -> String {
        describe(&self.cause)
    }

    /// What the operator does about it.
    pub fn fix(&self) -> &'static str {
        fix(&self.cause)
    }

    /// An I/O error of a file operation on `path`, classified by its errno.
    pub fn of_io(path: &Path, e: &std::io::Error) -> StorageFault {
        let cause = match e.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => Cause::DiskFull,
            Some(libc::EROFS) => Cause::ReadOnlyFilesystem,
            Some(libc::EPERM) => Cause::Immutable,
            Some(libc::EACCES) => Cause::PermissionDenied,
            _ if e.kind() == ErrorKind::StorageFull => Cause::DiskFull,
            _ => Cause::Other(e.to_string()),
        };
        StorageFault::new(cause, path)
    }

    /// An SQLite error on the database `db`: classified by its code, and by looking at the
    /// path when the code does not tell (I/O, cannot open, read-only). Blocking (file system
    /// calls): run it on the storage thread or at start-up.
    pub fn of_sqlite(db: &Path, e: &rusqlite::Error) -> StorageFault {
        use rusqlite::ErrorCode as C;
        let code = match e {
            rusqlite::Error::SqliteFailure(f, _) => Some(f.code),
            _ => None,
        };
        let cause = match code {
            Some(C::DiskFull) => Cause::DiskFull,
            Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => Cause::Locked,
            Some(C::NotADatabase) => Cause::NotSqlite,
            Some(C::DatabaseCorrupt) => Cause::Damaged,
            Some(C::SystemIoFailure)
            | Some(C::CannotOpen)
            | Some(C::ReadOnly)
            | Some(C::PermissionDenied) => {
                return diagnose(db)
                    .unwrap_or_else(|| StorageFault::new(Cause::Other(e.to_string()), db))
            }
            _ => Cause::Other(e.to_string()),
        };
        StorageFault::new(cause, db)
    }
}

/// Why `db` (with its `-wal`/`-shm` files and its directory) cannot be written, if anything
/// on the path says so: read-only filesystem, a file or the directory not writable, no space.
pub fn diagnose(db: &Path) -> Option<StorageFault> {
    let dir = db
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Some(vfs) = statvfs(dir) {
        if vfs.f_flag & libc::ST_RDONLY != 0 {
            return Some(StorageFault::new(Cause::ReadOnlyFilesystem, dir));
        }
    }
    for path in companions(db) {
        match std::fs::OpenOptions::new().write(true).open(&path) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Some(StorageFault::of_io(&path, &e)),
        }
    }
    // The directory must take new files (SQLite makes `-wal` and `-shm` there).
    let probe = dir.join(format!(".write-probe-{}", std::process::id()));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
        }
        Err(e) if e.kind() != ErrorKind::AlreadyExists => {
            return Some(StorageFault::of_io(dir, &e))
        }
        Err(_) => {}
    }
    let vfs = statvfs(dir)?;
    (vfs.f_bavail == 0).then(|| StorageFault::new(Cause::DiskFull, dir))
}

/// `db` and the files SQLite keeps beside it in WAL mode.
fn companions(db: &Path) -> [PathBuf; 3] {
    let with = |suffix: &str| {
        let mut name = db.as_os_str().to_os_string();
        name.push(suffix);
        PathBuf::from(name)
    };
    [db.to_path_buf(), with("-wal"), with("-shm")]
}

fn statvfs(dir: &Path) -> Option<libc::statvfs> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut out = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c` is a NUL-terminated path and `out` a writable statvfs; on success the call
    // has filled it (statvfs(3)).
    let rc = unsafe { libc::statvfs(c.as_ptr(), out.as_mut_ptr()) };
    // SAFETY: rc == 0: initialised by the call.
    (rc == 0).then(|| unsafe { out.assume_init() })
}

/// Checks an existing database file before SQLite opens it (SQLite opens a zero-length file
/// as a new, empty database, and would start a fresh connector on it): `Ok(true)` when `db`
/// exists and starts with the SQLite header (or is empty with a non-empty `-wal` beside it,
/// which SQLite recovers), `Ok(false)` when there is no file yet. Errors: [`Cause::Empty`],
/// [`Cause::NotSqlite`], or the I/O error reading it.
pub fn check_existing(db: &Path) -> Result<bool, StorageFault> {
    use std::io::Read;
    let meta = match std::fs::metadata(db) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(StorageFault::of_io(db, &e)),
    };
    if meta.len() == 0 {
        let wal = &companions(db)[1];
        let recoverable = std::fs::metadata(wal).is_ok_and(|m| m.len() > 0);
        return if recoverable {
            Ok(true)
        } else {
            Err(StorageFault::new(Cause::Empty, db))
        };
    }
    let mut header = [0u8; 16];
    let read = std::fs::File::open(db).and_then(|mut f| f.read_exact(&mut header));
    match read {
        Ok(()) if &header == SQLITE_HEADER => Ok(true),
        Ok(()) => Err(StorageFault::new(Cause::NotSqlite, db)),
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => {
            Err(StorageFault::new(Cause::NotSqlite, db))
        }
        Err(e) => Err(StorageFault::of_io(db, &e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existing_files_are_told_apart() {
        let dir = std::env::temp_dir().join(format!("xagent-fault-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let db = dir.join("connector.sqlite3");
        assert_eq!(check_existing(&db), Ok(false));
        std::fs::write(&db, b"").unwrap();
        assert_eq!(check_existing(&db).unwrap_err().cause, Cause::Empty);
        std::fs::write(&db, b"PK\x03\x04 a zip, not a database").unwrap();
        assert_eq!(check_existing(&db).unwrap_err().cause, Cause::NotSqlite);
        std::fs::write(&db, b"SQLite").unwrap();
        assert_eq!(check_existing(&db).unwrap_err().cause, Cause::NotSqlite);
        let mut real = SQLITE_HEADER.to_vec();
        real.resize(4096, 0);
        std::fs::write(&db, real).unwrap();
        assert_eq!(check_existing(&db), Ok(true));
        // An empty main file with a WAL holding its pages is SQLite's to recover.
        std::fs::write(&db, b"").unwrap();
        std::fs::write(dir.join("connector.sqlite3-wal"), b"wal frames").unwrap();
        assert_eq!(check_existing(&db), Ok(true));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn messages_name_the_path_the_cause_and_the_fix() {
        let e = std::io::Error::from_raw_os_error(libc::ENOSPC);
        let said = StorageFault::of_io(Path::new("/data/files/x.png"), &e).to_string();
        assert!(
            said.starts_with("/data/files/x.png: the disk is full"),
            "{said}"
        );
        assert!(said.contains("free space"), "{said}");
        let e = std::io::Error::from_raw_os_error(libc::EROFS);
        let said = StorageFault::of_io(Path::new("/data"), &e).to_string();
        assert!(said.contains("read-only"), "{said}");
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        let said = StorageFault::of_sqlite(Path::new("/data/connector.sqlite3"), &busy);
        assert_eq!(said.cause, Cause::Locked);
        let full = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        );
        let said = StorageFault::of_sqlite(Path::new("/data/connector.sqlite3"), &full);
        assert_eq!(said.cause, Cause::DiskFull);
    }
}
