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
}

impl Store {
    /// Begins a journaled call atomically.
    pub async fn journal_begin(
        &self,
        channel_id: String,
        tool_call_id: String,
        tool_id: String,
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
                now_ms
            ])?;
            let entry = if inserted == 1 {
                JournalEntry::New
            } else {
                let row: Option<(String, String, Option<String>)> = tx
                    .prepare_cached(sql::JOURNAL_GET)?
                    .query_row(params![channel_id, tool_call_id], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                    })
                    .optional()?;
                match row {
                    Some((t, _, _)) if t != tool_id => JournalEntry::OtherTool(t),
                    Some((_, state, Some(outcome))) if state == "done" => {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn repeats_are_answered_until_pruned() {
        let path =
            std::env::temp_dir().join(format!("xagent-journal-{}.sqlite3", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let store = Store::open(&path).unwrap();
        let begin =
            |t: i64| store.journal_begin("c".into(), "call".into(), "android_tap".into(), t);
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
}
