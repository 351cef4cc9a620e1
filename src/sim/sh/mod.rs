//! A small mksh-compatible shell: parse a command line ([`parser`]), expand words
//! ([`expand`]), run builtins and the sim's programs with pipes and redirections ([`exec`]).
//! Output goes to a [`Sink`] as it is produced, tagged stdout/stderr.

pub mod exec;
pub mod expand;
pub mod lexer;
pub mod parser;

pub use exec::Shell;

/// Which output stream a chunk belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fd {
    /// Standard output.
    Out,
    /// Standard error.
    Err,
}

/// Where a shell writes its output chunks.
pub type Sink = tokio::sync::mpsc::UnboundedSender<(Fd, Vec<u8>)>;

/// The shell's standard input.
#[derive(Debug, Default)]
pub enum Stdin {
    /// Nothing (EOF at once).
    #[default]
    Empty,
    /// Bytes arriving from the host; the channel closing is EOF.
    Stream(tokio::sync::mpsc::UnboundedReceiver<Vec<u8>>),
}

/// Prefix of the shell's own error messages (`$0` of Android's mksh).
pub const SH: &str = "/system/bin/sh";
