//! Word expansion: a leading unquoted `~` (alone or before `/`) becomes `$HOME`, parameters
//! (`$?`, `$$`, `$VAR`), command substitution (output with trailing newlines removed), then
//! field splitting of unquoted results on blanks. No globbing, no `~user`.
//! Source: mksh `eval.c` semantics for the common subset (`tilde()`; the home substitution of
//! an unquoted `~/…` word is what mobile-next/mobile-mcp#447 measured, field bug 67).

use super::lexer::{Part, Word};
use super::{Fd, Shell};

impl Shell {
    /// Expands a word into zero or more fields.
    pub async fn expand(&mut self, word: &Word) -> Vec<String> {
        let mut fields = Vec::new();
        let mut cur: Option<String> = None;
        for (i, wp) in word.0.iter().enumerate() {
            let value = match &wp.part {
                Part::Lit(s) if i == 0 && !wp.quoted && tilde_prefix(s, word.0.len() == 1) => {
                    format!("{}{}", self.var("HOME"), &s[1..])
                }
                Part::Lit(s) => s.clone(),
                Part::Var(name) => self.var(name),
                Part::Subst(cmd) => self.substitute(cmd).await,
            };
            let splits = !wp.quoted && !matches!(wp.part, Part::Lit(_));
            if !splits {
                cur.get_or_insert_with(String::new).push_str(&value);
                continue;
            }
            if value.starts_with(char::is_whitespace) {
                fields.extend(cur.take());
            }
            for (i, piece) in value.split_whitespace().enumerate() {
                if i > 0 {
                    fields.extend(cur.take());
                }
                cur.get_or_insert_with(String::new).push_str(piece);
            }
            if value.ends_with(char::is_whitespace) {
                fields.extend(cur.take());
            }
        }
        fields.extend(cur);
        fields
    }

    /// Expands a word into one string (redirection targets, assignments).
    pub async fn expand_one(&mut self, word: &Word) -> String {
        self.expand(word).await.join(" ")
    }

    /// Value of a parameter (empty when unset).
    pub fn var(&self, name: &str) -> String {
        match name {
            "?" => self.status.to_string(),
            "$" => self.pid.to_string(),
            "#" => "0".into(),
            "0" => super::SH.into(),
            _ => self.vars.get(name).cloned().unwrap_or_default(),
        }
    }

    /// Runs `cmd` in a subshell and returns its stdout without trailing newlines; its stderr
    /// passes through.
    async fn substitute(&mut self, cmd: &str) -> String {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut sub = Shell::new(self.phone.clone(), tx, Default::default());
        sub.vars = self.vars.clone();
        sub.cwd = self.cwd.clone();
        sub.status = self.status;
        Box::pin(sub.run_line(cmd)).await;
        drop(sub);
        let mut out = Vec::new();
        while let Ok((fd, bytes)) = rx.try_recv() {
            match fd {
                Fd::Out => out.extend_from_slice(&bytes),
                Fd::Err => self.emit(Fd::Err, bytes),
            }
        }
        let text = String::from_utf8_lossy(&out).to_string();
        text.trim_end_matches('\n').to_string()
    }
}

/// Whether a word's unquoted leading literal starts with a `~` naming the user's home: `~/…`,
/// or `~` as the whole word (`alone`); `~'x'` or `~user` are left as they are.
fn tilde_prefix(s: &str, alone: bool) -> bool {
    s.starts_with("~/") || (alone && s == "~")
}
