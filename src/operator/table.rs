//! The operator commands' plain-text tables (`devices`, `devices --fleet`): columns padded to
//! their widest cell (counted in chars, so a model name in CJK or with accents keeps the
//! columns straight in a UTF-8 terminal), two spaces between, no trailing blanks.

/// `rows` (the header first) as aligned lines, each ending in `\n`. An empty `rows` is "".
pub fn aligned<const N: usize>(rows: &[[String; N]]) -> String {
    let widths: Vec<usize> = (0..N)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_pad_to_the_widest_cell_in_chars_without_trailing_blanks() {
        let rows = [
            ["SERIAL", "MODEL", ""].map(String::from),
            ["A1", "小米 13", "-"].map(String::from),
        ];
        assert_eq!(aligned(&rows), "SERIAL  MODEL\nA1      小米 13  -\n");
        assert_eq!(aligned::<2>(&[]), "");
    }
}
