//! The tool-call journal: every side-effecting call is recorded by
//! (`connector_channel_id`, `context.tool_call_id`) *before* it touches the phone, and its outcome
//! after, so a repeated call is answered from the journal instead of running twice — across
//! reconnects and `kill -9` alike (Device Profile §4: a network retry is not permission to
//! execute again).

use rusqlite::{params, OptionalExtension};

use super::{sql, Store, StoreError};

/// What the journal says about a call when it is begun.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JournalEntry {
    /// First time: the caller must run it and then call [`Store::journal_finish`].
    New,
    /// Already started and not finished (running now, or interrupted by a crash).
    Running,
    /// Finished: the recorded outcome JSON (`{"result": …}` or `{"error": …}`).
    Done(String),
    /// The id was used for another tool (refused: ids are per call).
    OtherTool(String),
    /// The id was used for the same tool with other arguments (refused, as an idempotency key
    /// reused with other parameters: answering the first call's outcome would report an effect
    /// the caller did not ask for).
    OtherArguments,
}

impl Store {
    /// Begins a journaled call atomically. `args` is the call's arguments as JSON text; a
    /// repeat is compared with the recorded ones as JSON values (key order does not matter).
    pub async fn journal_begin(
        &self,
        channel_id: String,
        tool_call_id: String,
        tool_id: String,
        args: String,
        now_ms: i64,
    ) -> Result<JournalEntry, StoreError> {
        self.run(move |c| {
            let tx = c.transaction()?;
            // Cached statements: this runs on every journaled call (prepared once per
            // connection, rusqlite's statement cache).
            let inserted = tx.prepare_cached(sql::JOURNAL_BEGIN)?.execute(params![
                channel_id,
                tool_call_id,
                tool_id,
                now_ms,
                args
            ])?;
            let entry = if inserted == 1 {
                JournalEntry::New
            } else {
                let row: Option<(String, String, Option<String>, Option<String>)> = tx
                    .prepare_cached(sql::JOURNAL_GET)?
                    .query_row(params![channel_id, tool_call_id], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                    })
                    .optional()?;
                match row {
                    Some((t, ..)) if t != tool_id => JournalEntry::OtherTool(t),
                    Some((_, _, _, Some(recorded))) if !same_json(&recorded, &args) => {
                        JournalEntry::OtherArguments
                    }
                    Some((_, state, Some(outcome), _)) if state == "done" => {
                        JournalEntry::Done(outcome)
                    }
                    _ => JournalEntry::Running,
                }
            };
            tx.commit()?;
            Ok(entry)
        })
        .await
    }

    /// Records the outcome JSON of a call begun with [`Store::journal_begin`], without waiting
    /// for the commit (`Store::submit`): the call's ack need not wait for it, and the storage
    /// thread's FIFO order makes every later `journal_begin` of the same id see it. If the
    /// process dies between the ack and this commit, a retry gets `tool_call_interrupted`
    /// (never a second execution). Errors: [`StoreError::Stopped`].
    pub fn journal_finish(
        &self,
        channel_id: String,
        tool_call_id: String,
        outcome: String,
    ) -> Result<(), StoreError> {
        self.submit("journal_finish", move |c| {
            c.prepare_cached(sql::JOURNAL_FINISH)?
                .execute(params![channel_id, tool_call_id, outcome])
                .map(|_| ())
        })
    }

    /// Deletes entries created before `cutoff_ms`.
    pub async fn journal_prune(&self, cutoff_ms: i64) -> Result<usize, StoreError> {
        self.run(move |c| c.execute(sql::JOURNAL_PRUNE, params![cutoff_ms]))
            .await
    }
}

/// Whether two JSON texts hold equal values (object key order aside); unparsable text is
/// compared as text.
fn same_json(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn repeats_are_answered_until_pruned() {
        let path =
            std::env::temp_dir().join(format!("xagent-journal-{}.sqlite3", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let store = Store::open(&path).unwrap();
        let args = r#"{"x":1,"y":2}"#;
        let begin = |t: i64| {
            store.journal_begin(
                "c".into(),
                "call".into(),
                "android_tap".into(),
                args.into(),
                t,
            )
        };
        assert_eq!(begin(1_000).await.unwrap(), JournalEntry::New);
        assert_eq!(begin(1_001).await.unwrap(), JournalEntry::Running);
        // Not awaited: the storage thread's FIFO order makes the next begin see it.
        store
            .journal_finish("c".into(), "call".into(), "{\"result\":1}".into())
            .unwrap();
        assert_eq!(
            begin(1_002).await.unwrap(),
            JournalEntry::Done("{\"result\":1}".into())
        );
        // The same arguments in another key order are the same call; others are refused.
        let repeat = |a: &str| {
            store.journal_begin(
                "c".into(),
                "call".into(),
                "android_tap".into(),
                a.into(),
                1_003,
            )
        };
        assert_eq!(
            repeat(r#"{"y":2,"x":1}"#).await.unwrap(),
            JournalEntry::Done("{\"result\":1}".into())
        );
        assert_eq!(
            repeat(r#"{"x":1,"y":3}"#).await.unwrap(),
            JournalEntry::OtherArguments
        );
        assert_eq!(
            store.journal_prune(500).await.unwrap(),
            0,
            "newer entries stay"
        );
        assert_eq!(store.journal_prune(2_000).await.unwrap(), 1);
        assert_eq!(
            begin(3_000).await.unwrap(),
            JournalEntry::New,
            "after pruning a call is new"
        );
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }

    /// A data dir from before the `args` column gets it at open; its old rows (NULL args) are
    /// still answered from the journal.
    #[tokio::test]
    async fn an_older_journal_gains_the_args_column() {
        let path =
            std::env::temp_dir().join(format!("xagent-journal-old-{}.sqlite3", std::process::id()));
        let _ = std::fs::remove_file(&path);
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            c.execute_batch(
                "CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL); \
                 CREATE TABLE tool_journal (channel_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, \
                 tool_id TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('running', 'done')), \
                 outcome TEXT, created_ms INTEGER NOT NULL, PRIMARY KEY (channel_id, tool_call_id)); \
                 INSERT INTO tool_journal VALUES ('c', 'old', 'android_tap', 'done', '{\"result\":7}', 1);",
            )
            .unwrap();
        }
        let store = Store::open(&path).unwrap();
        let begin = |id: &str| {
            store.journal_begin(
                "c".into(),
                id.into(),
                "android_tap".into(),
                r#"{"x":1}"#.into(),
                2,
            )
        };
        assert_eq!(
            begin("old").await.unwrap(),
            JournalEntry::Done("{\"result\":7}".into())
        );
        assert_eq!(begin("new").await.unwrap(), JournalEntry::New);
        drop(store);
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
}
