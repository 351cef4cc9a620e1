//! SQL text, one named constant per statement.

/// Records (or refreshes) a paired wireless phone by serial.
pub const WIRELESS_UPSERT: &str = "INSERT INTO wireless_phones (serial, guid, addr, paired_ms) VALUES (?1, ?2, ?3, ?4) ON CONFLICT(serial) DO UPDATE SET guid = excluded.guid, addr = excluded.addr, paired_ms = excluded.paired_ms";
/// Every paired wireless phone.
pub const WIRELESS_ALL: &str = "SELECT serial, guid, addr, paired_ms FROM wireless_phones";

/// Records the name of a phone that shares its serial (an existing record wins).
pub const PHONE_NAME_INSERT: &str =
    "INSERT OR IGNORE INTO phone_names (serialno, second, name) VALUES (?1, ?2, ?3)";
/// Every recorded phone name.
pub const PHONE_NAME_ALL: &str = "SELECT serialno, second, name FROM phone_names";

/// Connection settings: WAL, NORMAL sync (crash-safe, fsync at checkpoints), foreign keys.
pub const PRAGMAS: &str = "PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA busy_timeout=5000;";

/// Schema (idempotent).
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS channels (
    channel_id TEXT PRIMARY KEY,
    connector_id TEXT NOT NULL,
    created_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS bindings (
    channel_id TEXT PRIMARY KEY REFERENCES channels(channel_id) ON DELETE CASCADE,
    serial TEXT NOT NULL UNIQUE,
    model TEXT NOT NULL,
    bound_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS wireless_phones (
    serial TEXT PRIMARY KEY,
    guid TEXT NOT NULL,
    addr TEXT NOT NULL,
    paired_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS phone_names (
    serialno TEXT NOT NULL,
    second TEXT NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (serialno, second)
);
CREATE TABLE IF NOT EXISTS file_refs (
    file_id TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL,
    path TEXT NOT NULL,
    mime TEXT NOT NULL,
    filename TEXT NOT NULL,
    byte_size INTEGER NOT NULL,
    created_ms INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL,
    served_inline INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS file_refs_expiry ON file_refs(expires_ms);
CREATE TABLE IF NOT EXISTS claim_failures (
    serial TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    last_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS release_changes (
    serial TEXT NOT NULL,
    kind TEXT NOT NULL,
    item TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    before TEXT,
    recorded_ms INTEGER NOT NULL,
    PRIMARY KEY (serial, kind, item)
);
CREATE TABLE IF NOT EXISTS release_pending (
    serial TEXT PRIMARY KEY,
    channel_id TEXT NOT NULL,
    since_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS release_outcomes (
    serial TEXT PRIMARY KEY,
    finished_ms INTEGER NOT NULL,
    steps TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tool_journal (
    channel_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    tool_id TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('running', 'done')),
    outcome TEXT,
    created_ms INTEGER NOT NULL,
    args TEXT,
    PRIMARY KEY (channel_id, tool_call_id)
);
";

/// Whether the database has the connector's `meta` table (1) or is another program's (0).
pub const HAS_META_TABLE: &str =
    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'";
/// Whether `tool_journal` has its `args` column (a data dir from before it was added has not).
pub const JOURNAL_HAS_ARGS: &str =
    "SELECT COUNT(*) FROM pragma_table_info('tool_journal') WHERE name = 'args'";
/// Adds the `args` column to an older data dir's journal (its rows keep NULL: not compared).
pub const JOURNAL_ADD_ARGS: &str = "ALTER TABLE tool_journal ADD COLUMN args TEXT";

/// Every serial with wrong claim codes.
pub const CLAIM_FAILURES_ALL: &str = "SELECT serial, failures, last_ms FROM claim_failures";
/// Record a serial's wrong claim codes.
pub const CLAIM_FAILURE_UPSERT: &str = "INSERT INTO claim_failures (serial, failures, last_ms) VALUES (?1, ?2, ?3) ON CONFLICT(serial) DO UPDATE SET failures = excluded.failures, last_ms = excluded.last_ms";
/// Forget serials whose last wrong code is older than a cut-off.
pub const CLAIM_FAILURES_FORGET: &str = "DELETE FROM claim_failures WHERE last_ms < ?1";
/// Keep at most ?1 serials: the fewest failures, then the oldest, go first.
pub const CLAIM_FAILURES_TRIM: &str = "DELETE FROM claim_failures WHERE serial NOT IN (SELECT serial FROM claim_failures ORDER BY failures DESC, last_ms DESC LIMIT ?1)";
/// Whether `file_refs` has its `served_inline` column (a data dir from before it was added has
/// not).
pub const FILE_HAS_SERVED_INLINE: &str =
    "SELECT COUNT(*) FROM pragma_table_info('file_refs') WHERE name = 'served_inline'";
/// Adds `served_inline` to an older data dir's file refs: their rows keep 0 (served as
/// attachments, the safe side for files of unknown origin).
pub const FILE_ADD_SERVED_INLINE: &str =
    "ALTER TABLE file_refs ADD COLUMN served_inline INTEGER NOT NULL DEFAULT 0";

/// Read a meta value.
pub const META_GET: &str = "SELECT value FROM meta WHERE key = ?1";
/// Insert a meta value unless present.
pub const META_INSERT: &str = "INSERT OR IGNORE INTO meta (key, value) VALUES (?1, ?2)";
/// Upsert a meta value.
pub const META_SET: &str = "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value";

/// Insert a channel.
pub const CHANNEL_INSERT: &str =
    "INSERT OR IGNORE INTO channels (channel_id, connector_id, created_ms) VALUES (?1, ?2, ?3)";
/// All channels.
pub const CHANNEL_ALL: &str = "SELECT channel_id FROM channels";
/// Channels without a binding, oldest first (eviction candidates).
pub const CHANNEL_UNBOUND_OLDEST: &str = "SELECT channel_id FROM channels WHERE channel_id NOT IN (SELECT channel_id FROM bindings) ORDER BY created_ms, rowid";
/// Drop one channel (its binding cascades).
pub const CHANNEL_DELETE: &str = "DELETE FROM channels WHERE channel_id = ?1";

/// Bind a phone to a channel (fails on a second channel for the same serial: UNIQUE).
pub const BINDING_INSERT: &str =
    "INSERT INTO bindings (channel_id, serial, model, bound_ms) VALUES (?1, ?2, ?3, ?4)";
/// Binding of a channel.
pub const BINDING_BY_CHANNEL: &str =
    "SELECT channel_id, serial, model, bound_ms FROM bindings WHERE channel_id = ?1";
/// All bindings.
pub const BINDING_ALL: &str = "SELECT channel_id, serial, model, bound_ms FROM bindings";
/// Remove a channel's binding.
pub const BINDING_DELETE: &str = "DELETE FROM bindings WHERE channel_id = ?1";

/// Record a stored file.
pub const FILE_INSERT: &str = "INSERT INTO file_refs (file_id, channel_id, path, mime, filename, byte_size, created_ms, expires_ms, served_inline) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
/// Look up a file.
pub const FILE_GET: &str = "SELECT file_id, channel_id, path, mime, filename, byte_size, created_ms, expires_ms, served_inline FROM file_refs WHERE file_id = ?1";
/// Expired files (for the cleaner).
pub const FILE_EXPIRED: &str = "SELECT file_id, path FROM file_refs WHERE expires_ms <= ?1";
/// Total bytes of stored files.
pub const FILE_TOTAL_BYTES: &str = "SELECT COALESCE(SUM(byte_size), 0) FROM file_refs";
/// Files oldest first (for capacity eviction).
pub const FILE_OLDEST: &str =
    "SELECT file_id, path, byte_size FROM file_refs ORDER BY created_ms ASC, file_id ASC";
/// Files of one channel.
pub const FILE_BY_CHANNEL: &str = "SELECT path FROM file_refs WHERE channel_id = ?1";
/// Delete the file records of one channel.
pub const FILE_DELETE_CHANNEL: &str = "DELETE FROM file_refs WHERE channel_id = ?1";
/// Every file path (deregistration).
pub const FILE_ALL_PATHS: &str = "SELECT path FROM file_refs";
/// Delete every file record (deregistration).
pub const FILE_DELETE_ALL: &str = "DELETE FROM file_refs";
/// Delete a file record.
pub const FILE_DELETE: &str = "DELETE FROM file_refs WHERE file_id = ?1";

/// Claim a side-effecting call before running it (no-op when already journaled).
pub const JOURNAL_BEGIN: &str = "INSERT OR IGNORE INTO tool_journal (channel_id, tool_call_id, tool_id, state, outcome, created_ms, args) VALUES (?1, ?2, ?3, 'running', NULL, ?4, ?5)";
/// Read a journaled call.
pub const JOURNAL_GET: &str =
    "SELECT tool_id, state, outcome, args FROM tool_journal WHERE channel_id = ?1 AND tool_call_id = ?2";
/// Record the outcome of a call.
pub const JOURNAL_FINISH: &str = "UPDATE tool_journal SET state = 'done', outcome = ?3 WHERE channel_id = ?1 AND tool_call_id = ?2";
/// Drop journal rows older than a cut-off.
pub const JOURNAL_PRUNE: &str = "DELETE FROM tool_journal WHERE created_ms < ?1";
/// Drop a channel's journal (channel deregistered).
pub const JOURNAL_DELETE_CHANNEL: &str = "DELETE FROM tool_journal WHERE channel_id = ?1";

/// Shutdown: copy the WAL into the main database file and truncate it.
pub const CHECKPOINT: &str = "PRAGMA wal_checkpoint(TRUNCATE);";

/// Deregistration cascade: every channel (bindings cascade), the whole journal.
pub const DEREGISTER_ALL: &str =
    "DELETE FROM tool_journal; DELETE FROM bindings; DELETE FROM channels;";

/// Record a change a tool made (the first record of a phone, kind and item wins).
pub const RELEASE_CHANGE_INSERT: &str = "INSERT OR IGNORE INTO release_changes (serial, kind, item, channel_id, before, recorded_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
/// Every recorded change, oldest first.
pub const RELEASE_CHANGES_ALL: &str = "SELECT serial, kind, item, channel_id, before, recorded_ms FROM release_changes ORDER BY recorded_ms, rowid";
/// Forget a phone's changes (its release finished).
pub const RELEASE_CHANGES_DELETE: &str = "DELETE FROM release_changes WHERE serial = ?1";
/// Mark a phone pending release.
pub const RELEASE_PENDING_PUT: &str =
    "INSERT OR REPLACE INTO release_pending (serial, channel_id, since_ms) VALUES (?1, ?2, ?3)";
/// Every phone pending release.
pub const RELEASE_PENDING_ALL: &str = "SELECT serial, channel_id FROM release_pending";
/// A phone's release finished.
pub const RELEASE_PENDING_DELETE: &str = "DELETE FROM release_pending WHERE serial = ?1";
/// Record a phone's last release.
pub const RELEASE_OUTCOME_PUT: &str = "INSERT INTO release_outcomes (serial, finished_ms, steps) VALUES (?1, ?2, ?3) ON CONFLICT(serial) DO UPDATE SET finished_ms = excluded.finished_ms, steps = excluded.steps";
/// Every phone's last release.
pub const RELEASE_OUTCOMES_ALL: &str = "SELECT serial, finished_ms, steps FROM release_outcomes";
