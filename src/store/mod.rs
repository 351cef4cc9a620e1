//! Persistence (SQLite via rusqlite, bundled): connector identity, channels, bindings, file refs,
//! the names of phones sharing a serial, what tools changed on bound phones and their release.
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

pub mod claim_failures;
pub mod data_dir;
pub mod fault;
pub mod journal;
pub mod phone_names;
pub mod records;
pub mod release;
pub mod sql;

use std::path::{Path, PathBuf};
use std::sync::mpsc as std_mpsc;

use rusqlite::Connection;
use tokio::sync::oneshot;

pub use fault::{Cause, StorageFault};
pub use journal::JournalEntry;
pub use records::{BindingRecord, FileRecord, WirelessPhoneRecord};

/// Storage failures.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A storage operation failed: its cause (disk full, read-only, locked, not a database …)
    /// and the path ([`StorageFault`]).
    #[error("storage error: {0}")]
    Fault(#[from] StorageFault),
    /// The storage thread is gone (process shutting down).
    #[error("storage thread stopped")]
    Stopped,
}

impl StoreError {
    /// The fault's cause, if this is one.
    pub fn cause(&self) -> Option<&Cause> {
        match self {
            StoreError::Fault(f) => Some(&f.cause),
            StoreError::Stopped => None,
        }
    }
}

type Job = Box<dyn FnOnce(&mut Connection, &Path) + Send>;

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
    /// Opens `path`, applies the schema, and starts the owner thread. A database that does not
    /// exist yet is made whole under a temporary name and renamed into place
    /// ([`create_fresh`]), so a file at `path` is always a complete connector database; one
    /// that is empty, not SQLite, or another program's SQLite database is refused (SQLite
    /// itself would open a zero-length file as a fresh database: a new `connector_id`, every
    /// binding gone). Errors: [`StoreError::Fault`] naming the cause and the path.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if !fault::check_existing(path)? {
            create_fresh(path)?;
        }
        let sqlite = |e: rusqlite::Error| StorageFault::of_sqlite(path, &e);
        let mut conn = Connection::open(path).map_err(sqlite)?;
        // A lock another process holds briefly (a backup) is waited for, as for every statement.
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(sqlite)?;
        // Before any pragma or schema statement writes to a file that is not ours.
        let ours: i64 = conn
            .query_row(sql::HAS_META_TABLE, [], |r| r.get(0))
            .map_err(sqlite)?;
        if ours == 0 {
            return Err(StorageFault::new(Cause::NotConnectorDatabase, path).into());
        }
        prepare(&mut conn).map_err(sqlite)?;
        let has_inline: i64 = conn
            .query_row(sql::FILE_HAS_SERVED_INLINE, [], |r| r.get(0))
            .map_err(sqlite)?;
        if has_inline == 0 {
            conn.execute_batch(sql::FILE_ADD_SERVED_INLINE)
                .map_err(sqlite)?;
        }
        let (tx, rx) = std_mpsc::channel::<Message>();
        let db: PathBuf = path.to_path_buf();
        std::thread::Builder::new()
            .name("sqlite".into())
            .spawn(move || {
                while let Ok(message) = rx.recv() {
                    match message {
                        Message::Job(job) => job(&mut conn, &db),
                        Message::Close(done) => {
                            let _ = done.send(close_connection(conn, &db));
                            return;
                        }
                    }
                }
            })
            .map_err(|e| {
                StorageFault::new(
                    Cause::Other(format!("cannot start the storage thread: {e}")),
                    path,
                )
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
            .send(Message::Job(Box::new(move |conn, db| {
                let _ = tx.send(f(conn).map_err(|e| StorageFault::of_sqlite(db, &e)));
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
            .send(Message::Job(Box::new(move |conn, db| {
                if let Err(e) = f(conn) {
                    let e = StorageFault::of_sqlite(db, &e);
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

/// Applies the connection settings and the schema (idempotent), adding the journal's `args`
/// column to a data dir from before it.
fn prepare(conn: &mut Connection) -> rusqlite::Result<()> {
    conn.execute_batch(sql::PRAGMAS)?;
    conn.execute_batch(sql::SCHEMA)?;
    let has_args: i64 = conn.query_row(sql::JOURNAL_HAS_ARGS, [], |r| r.get(0))?;
    if has_args == 0 {
        conn.execute_batch(sql::JOURNAL_ADD_ARGS)?;
    }
    Ok(())
}

/// Makes a new database at `path`: built under `PATH-new` (schema applied, WAL checkpointed,
/// closed), then renamed into place and the directory synced. A crash on the way leaves no
/// file at `path` (the next start builds it again), never a half-made database that a later
/// start would mistake for a damaged one.
fn create_fresh(path: &Path) -> Result<(), StoreError> {
    let mut name = path.as_os_str().to_os_string();
    name.push("-new");
    let temp = PathBuf::from(name);
    for suffix in ["", "-wal", "-shm"] {
        let mut stale = temp.as_os_str().to_os_string();
        stale.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(stale));
    }
    let sqlite = |e: rusqlite::Error| StorageFault::of_sqlite(&temp, &e);
    let mut conn = Connection::open(&temp).map_err(sqlite)?;
    prepare(&mut conn).map_err(sqlite)?;
    close_connection(conn, &temp)?;
    std::fs::rename(&temp, path).map_err(|e| StorageFault::of_io(path, &e))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        // The rename is durable once the directory is (rename(2), fsync(2)).
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| StorageFault::of_io(dir, &e))?;
    }
    Ok(())
}

/// Checkpoints the WAL (so the main file alone is complete) and closes the connection.
fn close_connection(conn: Connection, db: &Path) -> Result<(), StoreError> {
    let sqlite = |e: rusqlite::Error| StoreError::from(StorageFault::of_sqlite(db, &e));
    conn.execute_batch(sql::CHECKPOINT).map_err(sqlite)?;
    conn.close().map_err(|(_, e)| sqlite(e))
}
