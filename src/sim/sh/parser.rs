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
