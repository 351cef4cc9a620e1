//! Builds the command tree from tokens: `list := and_or ((';'|'&') and_or)*`,
//! `and_or := pipeline (('&&'|'||') pipeline)*`, `pipeline := command ('|' command)*`,
//! `command := (word | redirection)+`. Error texts follow mksh (`'X' unexpected`).

use super::lexer::{tokenize, LexError, RedirOp, Token, Word};

/// A redirection with its (unexpanded) target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Redir {
    /// Operator.
    pub op: RedirOp,
    /// Target word for `>`/`>>`/`<` (empty for `N>&M`).
    pub target: Word,
}

/// A simple command.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Command {
    /// Words (assignments first, then argv).
    pub words: Vec<Word>,
    /// Redirections, in order.
    pub redirs: Vec<Redir>,
}

/// Commands joined by `|`.
pub type Pipeline = Vec<Command>;

/// How an and-or element is joined to the previous one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Join {
    /// `&&`: run if the previous succeeded.
    And,
    /// `||`: run if the previous failed.
    Or,
}

/// Pipelines joined by `&&` / `||`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AndOr {
    /// The first pipeline.
    pub first: Pipeline,
    /// The rest, each with its join.
    pub rest: Vec<(Join, Pipeline)>,
}

/// A whole command line: and-or lists in sequence.
pub type List = Vec<AndOr>;

/// Parse errors (lexing errors included).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// From the tokeniser.
    #[error(transparent)]
    Lex(#[from] LexError),
    /// A token where it cannot stand.
    #[error("syntax error: '{0}' unexpected")]
    Unexpected(&'static str),
}

fn token_name(t: &Token) -> &'static str {
    match t {
        Token::Word(_) => "word",
        Token::Semi => ";",
        Token::Amp => "&",
        Token::AndIf => "&&",
        Token::OrIf => "||",
        Token::Pipe => "|",
        Token::Redir(_) => "redirection",
    }
}

/// Parses a command line.
pub fn parse(line: &str) -> Result<List, ParseError> {
    let tokens = tokenize(line)?;
    let mut p = Parser { tokens, pos: 0 };
    let mut list = Vec::new();
    while p.pos < p.tokens.len() {
        if matches!(p.peek(), Some(Token::Semi)) {
            p.pos += 1;
            continue;
        }
        list.push(p.and_or()?);
        match p.peek() {
            None | Some(Token::Semi | Token::Amp) => p.pos += 1,
            Some(t) => return Err(ParseError::Unexpected(token_name(t))),
        }
    }
    Ok(list)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn and_or(&mut self) -> Result<AndOr, ParseError> {
        let first = self.pipeline()?;
        let mut rest = Vec::new();
        loop {
            let join = match self.peek() {
                Some(Token::AndIf) => Join::And,
                Some(Token::OrIf) => Join::Or,
                _ => break,
            };
            self.pos += 1;
            while matches!(self.peek(), Some(Token::Semi)) {
                self.pos += 1;
            }
            rest.push((join, self.pipeline()?));
        }
        Ok(AndOr { first, rest })
    }

    fn pipeline(&mut self) -> Result<Pipeline, ParseError> {
        let mut cmds = vec![self.command()?];
        while matches!(self.peek(), Some(Token::Pipe)) {
            self.pos += 1;
            cmds.push(self.command()?);
        }
        Ok(cmds)
    }

    fn command(&mut self) -> Result<Command, ParseError> {
        let mut cmd = Command::default();
        while let Some(tok) = self.peek().cloned() {
            match tok {
                Token::Word(w) => {
                    cmd.words.push(w);
                    self.pos += 1;
                }
                Token::Redir(op) => {
                    self.pos += 1;
                    let target = match op {
                        RedirOp::Dup { .. } => Word::default(),
                        _ => match self.peek() {
                            Some(Token::Word(w)) => {
                                let w = w.clone();
                                self.pos += 1;
                                w
                            }
                            Some(t) => return Err(ParseError::Unexpected(token_name(t))),
                            None => return Err(ParseError::Unexpected("newline")),
                        },
                    };
                    cmd.redirs.push(Redir { op, target });
                }
                _ => break,
            }
        }
        if cmd.words.is_empty() && cmd.redirs.is_empty() {
            return Err(ParseError::Unexpected(
                self.peek().map_or("newline", token_name),
            ));
        }
        Ok(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::super::lexer::{Part, WordPart};
    use super::*;

    fn lit(word: &Word) -> String {
        word.0
            .iter()
            .map(|p| match &p.part {
                Part::Lit(s) => s.clone(),
                Part::Var(v) => format!("${v}"),
                Part::Subst(c) => format!("$({c})"),
            })
            .collect()
    }

    fn argv(cmd: &Command) -> Vec<String> {
        cmd.words.iter().map(lit).collect()
    }

    #[test]
    fn injection_inside_single_quotes_is_one_argument() {
        let list = parse("input text 'a;reboot'").unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(argv(&list[0].first[0]), ["input", "text", "a;reboot"]);
        let list = parse("input text a;reboot").unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(argv(&list[1].first[0]), ["reboot"]);
    }

    #[test]
    fn quotes_and_escapes() {
        let list = parse(r#"echo "a b" 'c"d' e\ f "\$x" 'it'\''s'"#).unwrap();
        assert_eq!(
            argv(&list[0].first[0]),
            ["echo", "a b", "c\"d", "e f", "$x", "it's"]
        );
        let w = &list[0].first[0].words[4];
        assert!(w
            .0
            .iter()
            .all(|p| p.quoted || p.part == Part::Lit(String::new())));
        assert_eq!(
            parse("echo 'x").unwrap_err().to_string(),
            "no closing quote"
        );
        assert_eq!(
            parse("echo \"x").unwrap_err().to_string(),
            "no closing quote"
        );
    }

    #[test]
    fn operators_pipes_and_redirections() {
        let list = parse("a && b || c; d | grep x > /sdcard/o 2>&1 &").unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(
            list[0].rest.iter().map(|(j, _)| *j).collect::<Vec<_>>(),
            [Join::And, Join::Or]
        );
        let pipe = &list[1].first;
        assert_eq!(pipe.len(), 2);
        assert_eq!(
            pipe[1].redirs.iter().map(|r| r.op).collect::<Vec<_>>(),
            [
                RedirOp::Out {
                    fd: 1,
                    append: false
                },
                RedirOp::Dup { fd: 2, to: 1 }
            ]
        );
        assert_eq!(lit(&pipe[1].redirs[0].target), "/sdcard/o");
        let list = parse("ls 2>>/e >> /o < /i").unwrap();
        let ops: Vec<RedirOp> = list[0].first[0].redirs.iter().map(|r| r.op).collect();
        assert_eq!(
            ops,
            [
                RedirOp::Out {
                    fd: 2,
                    append: true
                },
                RedirOp::Out {
                    fd: 1,
                    append: true
                },
                RedirOp::In { fd: 0 }
            ]
        );
        assert!(parse("| x").is_err());
        assert!(parse("x &&").is_err());
    }

    #[test]
    fn variables_and_substitutions() {
        let list = parse("echo $? ${HOME}x \"$A-b\" `id` $(echo (a))").unwrap();
        let words = &list[0].first[0].words;
        assert_eq!(
            words[1].0,
            vec![WordPart {
                part: Part::Var("?".into()),
                quoted: false
            }]
        );
        assert_eq!(lit(&words[2]), "$HOMEx");
        assert_eq!(lit(&words[3]), "$A-b");
        assert_eq!(lit(&words[4]), "$(id)");
        assert_eq!(lit(&words[5]), "$(echo (a))");
        assert_eq!(
            argv(&parse("echo a#b # comment").unwrap()[0].first[0]),
            ["echo", "a#b"]
        );
    }
}
