//! Parsers of real Android command output (placeholder, filled in by the parser work).
