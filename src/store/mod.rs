//! Persistence (SQLite via rusqlite, bundled): connector identity, channels, bindings, file refs.
//!
//! SQLite is blocking, so one dedicated thread owns the connection and async code reaches it over
//! a channel ([`Store::run`]); nothing blocks a tokio worker. SQL lives in named constants in
//! [`sql`]. The database is opened in WAL mode with `synchronous=NORMAL`: every commit survives
//! a crash or `kill -9` of the process (tested), the file is never corrupted, and only a power
//! cut can lose the last commits (SQLite "WAL mode" docs). FULL (an fsync per commit) doubled a
//! journaled tap's overhead (see `docs/performance.md`). `locking_mode=EXCLUSIVE`: the data dir
//! is already locked to one process, so the WAL index lives in heap memory instead of a shared
//! `-shm` mapping (about 50 µs less per journal write, measured); other processes cannot read
//! the database while the connector runs.

pub mod journal;
pub mod records;
pub mod sql;

use std::path::Path;
use std::sync::mpsc as std_mpsc;

use rusqlite::Connection;
use tokio::sync::oneshot;

pub use journal::JournalEntry;
pub use records::{BindingRecord, FileRecord};

/// Storage failures.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("storage error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The storage thread is gone (process shutting down).
    #[error("storage thread stopped")]
    Stopped,
}

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// Handle on the storage thread; cheap to clone.
#[derive(Clone)]
pub struct Store {
    jobs: std_mpsc::Sender<Job>,
}

impl Store {
    /// Opens (creating if needed) `path`, applies the schema, and starts the owner thread.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let mut conn = Connection::open(path)?;
        conn.execute_batch(sql::PRAGMAS)?;
        conn.execute_batch(sql::SCHEMA)?;
        let (tx, rx) = std_mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("sqlite".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job(&mut conn);
                }
            })
            .map_err(|e| {
                StoreError::Sqlite(rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
            })?;
        Ok(Store { jobs: tx })
    }

    /// Runs `f` on the storage thread and awaits its result.
    pub async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        self.jobs
            .send(Box::new(move |conn| {
                let _ = tx.send(f(conn));
            }))
            .map_err(|_| StoreError::Stopped)?;
        Ok(rx.await.map_err(|_| StoreError::Stopped)??)
    }

    /// Queues `f` on the storage thread without waiting for it. The thread runs jobs in the
    /// order they were queued, so any later [`Store::run`] observes this write; a failure is
    /// logged (`what` names the write; no row contents are logged). Errors: only
    /// [`StoreError::Stopped`] (the thread is gone), returned at once.
    pub fn submit<F>(&self, what: &'static str, f: F) -> Result<(), StoreError>
    where
        F: FnOnce(&mut Connection) -> rusqlite::Result<()> + Send + 'static,
    {
        self.jobs
            .send(Box::new(move |conn| {
                if let Err(e) = f(conn) {
                    tracing::error!(write = what, error = %e, "queued storage write failed");
                }
            }))
            .map_err(|_| StoreError::Stopped)
    }
}
