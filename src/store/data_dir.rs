//! The data dir's fixed names: the SQLite database and the lock that keeps one process on it.
//! Shared by `serve` (which opens the store) and the operator commands (which read it while no
//! connector runs), so neither depends on the other.

use anyhow::Context;

use super::StorageFault;

/// The SQLite database in the data dir.
pub const DB_FILE: &str = "connector.sqlite3";

/// Takes an exclusive lock on `DIR/lock` so two processes never share one database.
/// Errors: another process holds it, or the file cannot be opened.
pub fn lock(dir: &std::path::Path) -> anyhow::Result<std::fs::File> {
    let path = dir.join("lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| {
            anyhow::anyhow!(
                "cannot lock the data dir: {}",
                StorageFault::of_io(&path, &e)
            )
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "data dir {} is in use by another xagent-adb-connector process",
            dir.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => Err(e).context("cannot lock the data dir"),
    }
}
