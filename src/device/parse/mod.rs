//! Parsers of real Android command output.
//!
//! Every function here is pure, synchronous and panic-free: malformed input yields `None`, an empty
//! collection, or a typed error — never a panic. Each submodule handles one kind of output and its
//! rustdoc names the command, the output shape, the units and the sources (AOSP files and the
//! captures under `tests/fixtures/`, see `tests/fixtures/SOURCES.tsv`).
//!
//! Feed raw device bytes through [`text::decode_output`] first: captures come as UTF-8, UTF-16LE
//! with BOM (Windows PowerShell), with CRLF or `\r\r\n` line ends (PTY + Windows).

pub mod battery;
pub mod devices;
pub mod getprop;
pub mod package;
pub mod png_check;
pub mod power;
pub mod text;
pub mod uiautomator;
pub mod window;
pub mod wm;
