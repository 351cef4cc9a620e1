//! Quoting for the phone's `/system/bin/sh` (mksh; `sh -c` of adbd's shell service).
//!
//! The only quoting used anywhere: every argument is wrapped in single quotes, with `'` written
//! as `'\''`. Inside single quotes mksh interprets nothing (`$`, `` ` ``, `\`, `;`, newline), so
//! no character of an argument can start a second command. Source: POSIX XCU §2.2.2, mksh(1)
//! "Quoting".

/// Quotes one argument for `sh`.
pub fn quote(arg: &str) -> String {
    let mut out = String::with_capacity(arg.len() + 2);
    out.push('\'');
    for c in arg.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// Builds a command line from argv: every element quoted, joined by spaces.
pub fn command_line<S: AsRef<str>>(argv: &[S]) -> String {
    argv.iter()
        .map(|a| quote(a.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metacharacters_stay_inside_one_argument() {
        assert_eq!(quote("a;reboot"), "'a;reboot'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote("x`id`y $HOME"), "'x`id`y $HOME'");
        assert_eq!(
            command_line(&["input", "text", "a b"]),
            "'input' 'text' 'a b'"
        );
    }
}
