//! Persistence (SQLite via rusqlite, bundled): connector identity, channels, bindings, file refs.
//!
//! SQLite is blocking, so one dedicated thread owns the connection and async code reaches it over
//! a channel (`Store::run`); nothing blocks a tokio worker. SQL lives in named constants in
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
pub use records::{BindingRecord, FileRecord, WirelessPhoneRecord};

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

/// What the storage thread receives: a job, or the order to finish.
enum Message {
    /// Run this on the connection.
    Job(Job),
    /// Stop taking jobs: checkpoint the WAL, close the connection, then answer.
    Close(oneshot::Sender<Result<(), StoreError>>),
}

/// Handle on the storage thread; cheap to clone.
#[derive(Clone)]
pub struct Store {
    jobs: std_mpsc::Sender<Message>,
}

impl Store {
    /// Opens (creating if needed) `path`, applies the schema, and starts the owner thread.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let mut conn = Connection::open(path)?;
        conn.execute_batch(sql::PRAGMAS)?;
        conn.execute_batch(sql::SCHEMA)?;
        let has_args: i64 = conn.query_row(sql::JOURNAL_HAS_ARGS, [], |r| r.get(0))?;
        if has_args == 0 {
            conn.execute_batch(sql::JOURNAL_ADD_ARGS)?;
        }
        let has_inline: i64 = conn.query_row(sql::FILE_HAS_SERVED_INLINE, [], |r| r.get(0))?;
        if has_inline == 0 {
            conn.execute_batch(sql::FILE_ADD_SERVED_INLINE)?;
        }
        let (tx, rx) = std_mpsc::channel::<Message>();
        std::thread::Builder::new()
            .name("sqlite".into())
            .spawn(move || {
                while let Ok(message) = rx.recv() {
                    match message {
                        Message::Job(job) => job(&mut conn),
                        Message::Close(done) => {
                            let _ = done.send(close_connection(conn));
                            return;
                        }
                    }
                }
            })
            .map_err(|e| {
                StoreError::Sqlite(rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
            })?;
        Ok(Store { jobs: tx })
    }

    /// Runs `f` on the storage thread and awaits its result. Private to the store: the rest of
    /// the crate calls named methods ([`records`], [`journal`]), never SQL.
    async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        self.jobs
            .send(Message::Job(Box::new(move |conn| {
                let _ = tx.send(f(conn));
            })))
            .map_err(|_| StoreError::Stopped)?;
        Ok(rx.await.map_err(|_| StoreError::Stopped)??)
    }

    /// Queues `f` on the storage thread without waiting for it. The thread runs jobs in the
    /// order they were queued, so any later [`Store::run`] observes this write; a failure is
    /// logged (`what` names the write; no row contents are logged). Errors: only
    /// [`StoreError::Stopped`] (the thread is gone), returned at once.
    fn submit<F>(&self, what: &'static str, f: F) -> Result<(), StoreError>
    where
        F: FnOnce(&mut Connection) -> rusqlite::Result<()> + Send + 'static,
    {
        self.jobs
            .send(Message::Job(Box::new(move |conn| {
                if let Err(e) = f(conn) {
                    tracing::error!(write = what, error = %e, "queued storage write failed");
                }
            })))
            .map_err(|_| StoreError::Stopped)
    }

    /// Flushes and closes the database at shutdown: the storage thread first runs every job
    /// queued before this call (FIFO, so queued `journal_finish` writes land), then
    /// checkpoints the WAL into the main file, closes SQLite and exits. Later calls on any
    /// clone fail with [`StoreError::Stopped`]. Errors: the checkpoint or close failed, or the
    /// thread was already gone.
    pub async fn close(&self) -> Result<(), StoreError> {
        let (tx, rx) = oneshot::channel();
        self.jobs
            .send(Message::Close(tx))
            .map_err(|_| StoreError::Stopped)?;
        rx.await.map_err(|_| StoreError::Stopped)?
    }
}

/// Checkpoints the WAL (so the main file alone is complete) and closes the connection.
fn close_connection(conn: Connection) -> Result<(), StoreError> {
    conn.execute_batch(sql::CHECKPOINT)?;
    conn.close().map_err(|(_, e)| StoreError::Sqlite(e))
}
