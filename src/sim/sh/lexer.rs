//! Tokeniser for the mksh subset the sim understands: blanks, `'…'`, `"…"` (with `\$ \` \" \\`
//! escapes), backslash escapes, `$VAR`/`${VAR}`/`$?`/`$$`, `$(…)` and `` `…` `` command
//! substitution, `;` `&` `&&` `||` `|` newline, `#` comments, redirections `>` `>>` `<` `N>`
//! `N>>` `N>&M`. Source: mksh `lex.c` (Android's `/system/bin/sh`).

/// A piece of a word before expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    /// Literal text.
    Lit(String),
    /// Parameter expansion by name (`?`, `$`, `0`…, or an identifier).
    Var(String),
    /// Command substitution: the inner command line.
    Subst(String),
}

/// A part plus whether it was quoted (quoted parts are not field-split).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordPart {
    /// The part.
    pub part: Part,
    /// Inside `'…'` or `"…"` (or escaped).
    pub quoted: bool,
}

/// A shell word: concatenated parts.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Word(pub Vec<WordPart>);

/// Redirection operator with its file descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedirOp {
    /// `N>` / `N>>` to a file (target word follows).
    Out {
        /// Descriptor (default 1).
        fd: u32,
        /// `>>`.
        append: bool,
    },
    /// `N<` from a file (target word follows).
    In {
        /// Descriptor (default 0).
        fd: u32,
    },
    /// `N>&M`: make `fd` a copy of `to`.
    Dup {
        /// Descriptor changed.
        fd: u32,
        /// Descriptor copied.
        to: u32,
    },
}

/// One token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    /// A word.
    Word(Word),
    /// `;` or newline.
    Semi,
    /// `&` (run in background; the sim runs it in the foreground).
    Amp,
    /// `&&`.
    AndIf,
    /// `||`.
    OrIf,
    /// `|`.
    Pipe,
    /// A redirection.
    Redir(RedirOp),
}

/// Lexing errors, worded like mksh.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LexError {
    /// Unterminated `'`, `"` or `` ` ``.
    #[error("no closing quote")]
    NoClosingQuote,
    /// Unterminated `$(` or `${`.
    #[error("syntax error: unexpected EOF")]
    UnexpectedEof,
    /// A construct the sim does not implement (here-documents, `(`, `{`).
    #[error("syntax error: '{0}' unexpected")]
    Unexpected(String),
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
}

/// Splits a command line into tokens.
pub fn tokenize(line: &str) -> Result<Vec<Token>, LexError> {
    let mut lx = Lexer {
        chars: line.chars().collect(),
        pos: 0,
    };
    let mut out = Vec::new();
    while let Some(c) = lx.peek() {
        match c {
            ' ' | '\t' | '\r' => lx.pos += 1,
            '\n' | ';' => {
                lx.pos += 1;
                out.push(Token::Semi);
            }
            '&' => out.push(if lx.eat2('&') {
                Token::AndIf
            } else {
                lx.single(Token::Amp)
            }),
            '|' => out.push(if lx.eat2('|') {
                Token::OrIf
            } else {
                lx.single(Token::Pipe)
            }),
            '>' | '<' => out.push(Token::Redir(lx.redir(None)?)),
            '#' => lx.skip_comment(),
            '(' | ')' | '{' | '}' if lx.is_lone(c) => {
                return Err(LexError::Unexpected(c.to_string()))
            }
            _ => {
                let word = lx.word()?;
                match (lx.peek(), fd_number(&word)) {
                    (Some('>' | '<'), Some(fd)) => out.push(Token::Redir(lx.redir(Some(fd))?)),
                    _ => out.push(Token::Word(word)),
                }
            }
        }
    }
    Ok(out)
}

fn fd_number(word: &Word) -> Option<u32> {
    match word.0.as_slice() {
        [WordPart {
            part: Part::Lit(s),
            quoted: false,
        }] if s.len() == 1 => s.parse().ok(),
        _ => None,
    }
}

fn is_meta(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>')
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    fn single(&mut self, t: Token) -> Token {
        self.pos += 1;
        t
    }

    /// Consumes a doubled operator character (`&&`, `||`).
    fn eat2(&mut self, c: char) -> bool {
        if self.peek_at(1) == Some(c) {
            self.pos += 2;
            true
        } else {
            false
        }
    }

    fn is_lone(&self, _c: char) -> bool {
        self.peek_at(1).map_or(true, |n| is_meta(n) || n == ' ')
    }

    fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                break;
            }
            self.pos += 1;
        }
    }

    fn redir(&mut self, fd: Option<u32>) -> Result<RedirOp, LexError> {
        let c = self.peek().unwrap_or('>');
        self.pos += 1;
        if c == '<' {
            if self.peek() == Some('<') {
                return Err(LexError::Unexpected("<<".into()));
            }
            return Ok(RedirOp::In {
                fd: fd.unwrap_or(0),
            });
        }
        let fd = fd.unwrap_or(1);
        match self.peek() {
            Some('>') => {
                self.pos += 1;
                Ok(RedirOp::Out { fd, append: true })
            }
            Some('|') => {
                self.pos += 1;
                Ok(RedirOp::Out { fd, append: false })
            }
            Some('&') => match self.peek_at(1).and_then(|d| d.to_digit(10)) {
                Some(to) => {
                    self.pos += 2;
                    Ok(RedirOp::Dup { fd, to })
                }
                None => Err(LexError::Unexpected(">&".into())),
            },
            _ => Ok(RedirOp::Out { fd, append: false }),
        }
    }

    fn word(&mut self) -> Result<Word, LexError> {
        let mut parts: Vec<WordPart> = Vec::new();
        let mut lit = String::new();
        let flush = |lit: &mut String, parts: &mut Vec<WordPart>, quoted: bool| {
            if !lit.is_empty() || quoted {
                parts.push(WordPart {
                    part: Part::Lit(std::mem::take(lit)),
                    quoted,
                });
            }
        };
        while let Some(c) = self.peek() {
            if is_meta(c) {
                break;
            }
            self.pos += 1;
            match c {
                '\\' => match self.peek() {
                    Some('\n') => self.pos += 1,
                    Some(n) => {
                        self.pos += 1;
                        flush(&mut lit, &mut parts, false);
                        parts.push(WordPart {
                            part: Part::Lit(n.to_string()),
                            quoted: true,
                        });
                    }
                    None => lit.push('\\'),
                },
                '\'' => {
                    flush(&mut lit, &mut parts, false);
                    let text = self.until('\'')?;
                    parts.push(WordPart {
                        part: Part::Lit(text),
                        quoted: true,
                    });
                }
                '"' => {
                    flush(&mut lit, &mut parts, false);
                    parts.extend(self.double_quoted()?);
                }
                '$' | '`' => match self.dollar(c)? {
                    Some(part) => {
                        flush(&mut lit, &mut parts, false);
                        parts.push(WordPart {
                            part,
                            quoted: false,
                        });
                    }
                    None => lit.push('$'),
                },
                _ => lit.push(c),
            }
        }
        flush(&mut lit, &mut parts, false);
        Ok(Word(parts))
    }

    /// Text up to (not including) the closing `end`, which is consumed.
    fn until(&mut self, end: char) -> Result<String, LexError> {
        let mut s = String::new();
        loop {
            match self.peek() {
                None => return Err(LexError::NoClosingQuote),
                Some(c) if c == end => {
                    self.pos += 1;
                    return Ok(s);
                }
                Some(c) => {
                    s.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn double_quoted(&mut self) -> Result<Vec<WordPart>, LexError> {
        let mut parts = vec![WordPart {
            part: Part::Lit(String::new()),
            quoted: true,
        }];
        let mut lit = String::new();
        loop {
            let c = self.peek().ok_or(LexError::NoClosingQuote)?;
            self.pos += 1;
            match c {
                '"' => break,
                '\\' if matches!(self.peek(), Some('$' | '`' | '"' | '\\' | '\n')) => {
                    let n = self.peek().unwrap_or('\\');
                    self.pos += 1;
                    if n != '\n' {
                        lit.push(n);
                    }
                }
                '$' | '`' => match self.dollar(c)? {
                    Some(part) => {
                        parts.push(WordPart {
                            part: Part::Lit(std::mem::take(&mut lit)),
                            quoted: true,
                        });
                        parts.push(WordPart { part, quoted: true });
                    }
                    None => lit.push('$'),
                },
                _ => lit.push(c),
            }
        }
        parts.push(WordPart {
            part: Part::Lit(lit),
            quoted: true,
        });
        Ok(parts)
    }

    /// After `$` or `` ` ``: a variable or substitution; `None` for a lone `$`.
    fn dollar(&mut self, c: char) -> Result<Option<Part>, LexError> {
        if c == '`' {
            return self.until('`').map(|s| Some(Part::Subst(s)));
        }
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                self.paren_body().map(|s| Some(Part::Subst(s)))
            }
            Some('{') => {
                self.pos += 1;
                let name = self.until('}').map_err(|_| LexError::UnexpectedEof)?;
                Ok(Some(Part::Var(name)))
            }
            Some(d @ ('?' | '$' | '#' | '!' | '0'..='9')) => {
                self.pos += 1;
                Ok(Some(Part::Var(d.to_string())))
            }
            Some(a) if a == '_' || a.is_ascii_alphabetic() => {
                let mut name = String::new();
                while let Some(n) = self
                    .peek()
                    .filter(|n| *n == '_' || n.is_ascii_alphanumeric())
                {
                    name.push(n);
                    self.pos += 1;
                }
                Ok(Some(Part::Var(name)))
            }
            _ => Ok(None),
        }
    }

    /// Body of `$( … )` with nested parentheses and quotes respected.
    fn paren_body(&mut self) -> Result<String, LexError> {
        let (mut depth, mut s, mut quote) = (1, String::new(), None::<char>);
        loop {
            let c = self.peek().ok_or(LexError::UnexpectedEof)?;
            self.pos += 1;
            match (quote, c) {
                (Some(q), _) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '\'' | '"') => quote = Some(c),
                (None, '(') => depth += 1,
                (None, ')') => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(s);
                    }
                }
                _ => {}
            }
            s.push(c);
        }
    }
}
