//! Text programs as toybox has them: `echo`, `printf`, `grep`, `head`, `tail`, `wc`.

use super::Output;
use crate::phone::Phone;
use crate::vfs::normalize;

/// `echo [-n] [-e] ARGS…` (toybox: `-e` interprets `\n \t \\ \c`).
pub fn echo(args: &[String]) -> Output {
    let (mut newline, mut escapes, mut i) = (true, false, 0);
    while let Some(flag) = args
        .get(i)
        .filter(|a| a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| "neE".contains(c)))
    {
        newline &= !flag.contains('n');
        escapes = flag.contains('e') || (escapes && !flag.contains('E'));
        i += 1;
    }
    let mut text = args[i..].join(" ");
    if escapes {
        match unescape(&text) {
            (t, true) => return Output::ok(t),
            (t, false) => text = t,
        }
    }
    if newline {
        text.push('\n');
    }
    Output::ok(text)
}

/// Interprets backslash escapes; the flag says `\c` cut the output short.
fn unescape(s: &str) -> (String, bool) {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('c') => return (out, true),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    (out, false)
}

/// `printf FORMAT ARGS…` with `%s`, `%d`, `%%` and backslash escapes.
pub fn printf(args: &[String]) -> Output {
    let Some(fmt) = args.first() else {
        return Output::err(1, "printf: Need 1 argument\n");
    };
    let (fmt, _) = unescape(fmt);
    let mut rest = args[1..].iter();
    let mut out = String::new();
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('s') => out.push_str(rest.next().map_or("", |s| s.as_str())),
            Some('d') => out.push_str(
                &rest
                    .next()
                    .and_then(|s| s.parse::<i64>().ok())
                    .unwrap_or(0)
                    .to_string(),
            ),
            Some(o) => {
                out.push('%');
                out.push(o);
            }
            None => out.push('%'),
        }
    }
    Output::ok(out)
}

fn read_inputs(
    prog: &str,
    phone: &Phone,
    cwd: &str,
    files: &[&String],
    stdin: &[u8],
) -> Result<Vec<u8>, Output> {
    if files.is_empty() {
        return Ok(stdin.to_vec());
    }
    let mut all = Vec::new();
    for f in files {
        let path = normalize(cwd, f);
        let bytes = phone.with(|s| s.vfs.read(&path).map(|b| b.to_vec()));
        match bytes {
            Ok(b) => all.extend_from_slice(&b),
            Err(e) => {
                return Err(Output::err(
                    if prog == "grep" { 2 } else { 1 },
                    format!("{prog}: {f}: {}\n", e.message()),
                ))
            }
        }
    }
    Ok(all)
}

/// `grep [-v -i -q -c -E -F -w -x] PATTERN [FILE…]`; status 0 if a line matched, 1 if none,
/// 2 on error.
pub fn grep(phone: &Phone, cwd: &str, args: &[String], stdin: &[u8]) -> Output {
    let mut flags = String::new();
    let mut rest = Vec::new();
    for a in args {
        match a.strip_prefix('-') {
            Some(f) if rest.is_empty() && !f.is_empty() => flags.push_str(f),
            _ => rest.push(a),
        }
    }
    let Some((pattern, files)) = rest.split_first() else {
        return Output::err(2, "usage: grep [-EFilnovwcqx] PATTERN [FILE...]\n");
    };
    let mut pat = if flags.contains('F') {
        regex::escape(pattern)
    } else {
        pattern.to_string()
    };
    if flags.contains('w') {
        pat = format!(r"\b(?:{pat})\b");
    }
    if flags.contains('x') {
        pat = format!("^(?:{pat})$");
    }
    let re = match regex::RegexBuilder::new(&pat)
        .case_insensitive(flags.contains('i'))
        .build()
    {
        Ok(r) => r,
        Err(_) => return Output::err(2, format!("grep: bad regex '{pattern}'\n")),
    };
    let input = match read_inputs("grep", phone, cwd, files, stdin) {
        Ok(b) => String::from_utf8_lossy(&b).to_string(),
        Err(e) => return e,
    };
    let invert = flags.contains('v');
    let hits: Vec<&str> = input.lines().filter(|l| re.is_match(l) != invert).collect();
    let code = if hits.is_empty() { 1 } else { 0 };
    let stdout = if flags.contains('q') {
        String::new()
    } else if flags.contains('c') {
        format!("{}\n", hits.len())
    } else {
        hits.iter().map(|l| format!("{l}\n")).collect()
    };
    Output {
        code,
        ..Output::ok(stdout)
    }
}

/// `head`/`tail` with `-n N`, `-N`, `-c BYTES` (default 10 lines).
pub fn head_tail(phone: &Phone, cwd: &str, head: bool, args: &[String], stdin: &[u8]) -> Output {
    let (mut n, mut bytes) = (10usize, None::<usize>);
    let mut files = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let num =
            |v: Option<&String>| v.and_then(|v| v.trim_start_matches(['+', '-']).parse().ok());
        match a.as_str() {
            "-n" => n = num(it.next()).unwrap_or(10),
            "-c" => bytes = num(it.next()),
            _ if a.starts_with("-c") => bytes = num(Some(&a[2..].to_string())),
            _ if a.starts_with("-n") => n = num(Some(&a[2..].to_string())).unwrap_or(10),
            _ if a.len() > 1 && a.starts_with('-') => n = num(Some(a)).unwrap_or(10),
            _ => files.push(a),
        }
    }
    let prog = if head { "head" } else { "tail" };
    let input = match read_inputs(prog, phone, cwd, &files, stdin) {
        Ok(b) => b,
        Err(e) => return e,
    };
    if let Some(c) = bytes {
        let c = c.min(input.len());
        return Output::ok(if head {
            input[..c].to_vec()
        } else {
            input[input.len() - c..].to_vec()
        });
    }
    let lines: Vec<&[u8]> = input.split_inclusive(|b| *b == b'\n').collect();
    let pick = if head {
        &lines[..n.min(lines.len())]
    } else {
        &lines[lines.len().saturating_sub(n)..]
    };
    Output::ok(pick.concat())
}

/// `wc [-l|-w|-c]` on stdin.
pub fn wc(args: &[String], stdin: &[u8]) -> Output {
    let lines = stdin.iter().filter(|b| **b == b'\n').count();
    let words = String::from_utf8_lossy(stdin).split_whitespace().count();
    let text = match args.first().map(String::as_str) {
        Some("-l") => format!("{lines}\n"),
        Some("-w") => format!("{words}\n"),
        Some("-c") => format!("{}\n", stdin.len()),
        _ => format!("{lines:>8} {words:>7} {:>7}\n", stdin.len()),
    };
    Output::ok(text)
}
