//! Tables and cell formatting shared by the shootout reports and comparisons: aligned
//! plain-text tables for terminals, GitHub pipe tables for Markdown (with the escaping that
//! keeps a `|` in a contender's name from breaking a row), RFC 4180 CSV records, a cell's
//! name, and a few number and date formats.
//!
//! Everything here is a pure function of its arguments; callers decide the columns.

use crate::safe::{html_text, terminal_line};
use crate::units::rfc3339;
use std::borrow::Cow;
use std::fmt::Write;
use std::time::SystemTime;

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Names and labels.
    Left,
    /// Numbers.
    Right,
}

/// A table's cells, built once and laid out per format by [`Table::text`],
/// [`Table::markdown`] and [`Table::html`].
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Column labels.
    pub header: Vec<String>,
    /// How each column lines up.
    pub align: Vec<Align>,
    /// The cells, row by row.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// Appends the table as [`text_table`] lays it out.
    pub fn text(&self, out: &mut String, indent: &str) {
        text_table(out, indent, &self.header_strs(), &self.align, &self.rows);
    }

    /// Appends the table as [`markdown_table`] lays it out.
    pub fn markdown(&self, out: &mut String) {
        markdown_table(out, &self.header_strs(), &self.align, &self.rows);
    }

    /// Appends the table as an HTML `<table>` (every cell escaped; left-aligned columns
    /// get the page's `l` class), wrapped in a `<div class="tw">` that scrolls sideways
    /// when the page is narrower than the table.
    pub fn html(&self, out: &mut String) {
        let class = |i: usize| match self.align.get(i) {
            Some(Align::Left) => " class=\"l\"",
            _ => "",
        };
        out.push_str("<div class=\"tw\"><table>\n<tr>");
        for (i, h) in self.header.iter().enumerate() {
            let _ = write!(out, "<th{}>{}</th>", class(i), html_text(h));
        }
        out.push_str("</tr>\n");
        for r in &self.rows {
            out.push_str("<tr>");
            for (i, c) in r.iter().enumerate() {
                let _ = write!(out, "<td{}>{}</td>", class(i), html_text(c));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table></div>\n");
    }

    fn header_strs(&self) -> Vec<&str> {
        self.header.iter().map(String::as_str).collect()
    }
}

/// Appends an aligned text table: every line starts with `indent`, columns are two blanks
/// apart, the header is aligned like its column, trailing blanks are trimmed. Control
/// characters in a cell (a newline in a name) are shown escaped: one row stays one line.
pub fn text_table(
    out: &mut String,
    indent: &str,
    header: &[&str],
    align: &[Align],
    rows: &[Vec<String>],
) {
    let header: Vec<Cow<str>> = header.iter().map(|h| terminal_line(h)).collect();
    let header: Vec<&str> = header.iter().map(|h| h.as_ref()).collect();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| terminal_line(c).into_owned()).collect())
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|r| r[i].chars().count())
                .chain([header[i].chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: Vec<&str>| -> String {
        let mut l = String::from(indent);
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            let w = widths[i];
            match align[i] {
                Align::Left => {
                    let _ = write!(l, "{c:<w$}");
                }
                Align::Right => {
                    let _ = write!(l, "{c:>w$}");
                }
            }
        }
        l.trim_end().to_string()
    };
    out.push_str(&line(header.to_vec()));
    out.push('\n');
    for r in &rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
        out.push('\n');
    }
}

/// Appends a GitHub pipe table. Cells are escaped with [`md_escape`]; numeric columns are
/// right-aligned (`---:`).
pub fn markdown_table(out: &mut String, header: &[&str], align: &[Align], rows: &[Vec<String>]) {
    let row = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    out.push_str(&row(header.iter().map(|h| md_escape(h)).collect()));
    out.push_str(&row(align
        .iter()
        .map(|a| match a {
            Align::Left => "---".to_string(),
            Align::Right => "---:".to_string(),
        })
        .collect()));
    for r in rows {
        out.push_str(&row(r.iter().map(|c| md_escape(c)).collect()));
    }
}

/// Text made safe for a Markdown paragraph or table cell as GitHub renders it: `|` (which
/// would end a table cell), `\`, `` ` ``, `*`, `_`, `[`, `]`, `<`, `>` and a leading `#`
/// are backslash-escaped; line breaks become blanks, other control characters are shown
/// escaped ([`terminal_line`]).
pub fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        match c {
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' => {
                out.push('\\');
                out.push(c);
            }
            '#' if i == 0 => out.push_str("\\#"),
            '\r' | '\n' => out.push(' '),
            c if c.is_control() => out.extend(c.escape_debug()),
            _ => out.push(c),
        }
    }
    out
}

/// Lines shown verbatim in Markdown: a fenced code block whose fence is longer than any
/// run of backticks in the text, indented by `indent` (to sit inside a list item).
pub fn md_code_block(out: &mut String, indent: &str, text: &str) {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let _ = writeln!(out, "{indent}{fence}");
    for l in text.lines() {
        let _ = writeln!(out, "{indent}{}", terminal_line(l));
    }
    let _ = writeln!(out, "{indent}{fence}");
}

/// One CSV record as RFC 4180 wants it: fields containing a comma, a double quote, CR or LF
/// are quoted, quotes doubled; the record ends with CRLF.
pub fn csv_record(out: &mut String, fields: &[String]) {
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if f.contains([',', '"', '\r', '\n']) {
            out.push('"');
            out.push_str(&f.replace('"', "\"\""));
            out.push('"');
        } else {
            out.push_str(f);
        }
    }
    out.push_str("\r\n");
}

/// `2023-11-14 22:13:20 UTC`.
pub fn utc_seconds(t: SystemTime) -> String {
    let s = rfc3339(t);
    format!("{} {} UTC", &s[..10], &s[11..19])
}

/// A signed percentage with one decimal: `+4.2%`, `-20.0%`, `+0.0%`.
pub fn signed_percent(x: f64) -> String {
    let x = if x.abs() < 0.05 { 0.0 } else { x };
    format!("{}{:.1}%", if x < 0.0 { "-" } else { "+" }, x.abs())
}

/// `n thing` or `n things`.
pub fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `nginx · hello · c=8`.
pub fn cell_label(contender: &str, workload: &str, level: shootout_model::LoadLevel) -> String {
    format!("{contender} · {workload} · {level}")
}

/// [`cell_label`] of a warning's cell.
pub(crate) fn at_label(at: &shootout_analysis::CellAt) -> String {
    cell_label(&at.contender, &at.workload, at.level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_escapes_what_would_break_a_table() {
        assert_eq!(md_escape("a|b"), "a\\|b");
        assert_eq!(md_escape("my_app *fast*"), "my\\_app \\*fast\\*");
        assert_eq!(md_escape("#1 <b>"), "\\#1 \\<b\\>");
        assert_eq!(md_escape("x#y\nz"), "x#y z");
        let mut t = String::new();
        markdown_table(
            &mut t,
            &["name", "req/s"],
            &[Align::Left, Align::Right],
            &[vec!["a|b".into(), "12".into()]],
        );
        assert_eq!(t, "| name | req/s |\n| --- | ---: |\n| a\\|b | 12 |\n");
    }

    #[test]
    fn csv_quotes_only_what_needs_it() {
        let mut s = String::new();
        csv_record(
            &mut s,
            &[
                "plain".into(),
                "a,b".into(),
                "say \"hi\"".into(),
                "x\ny".into(),
            ],
        );
        assert_eq!(s, "plain,\"a,b\",\"say \"\"hi\"\"\",\"x\ny\"\r\n");
    }

    #[test]
    fn code_fences_outgrow_backticks_in_the_text() {
        let mut s = String::new();
        md_code_block(&mut s, "  ", "a ```b``` c");
        assert!(s.starts_with("  ````\n"), "{s}");
    }

    #[test]
    fn text_tables_align_and_trim() {
        let mut t = String::new();
        text_table(
            &mut t,
            "  ",
            &["name", "n"],
            &[Align::Left, Align::Right],
            &[
                vec!["long name".into(), "1".into()],
                vec!["x".into(), "".into()],
            ],
        );
        assert_eq!(t, "  name       n\n  long name  1\n  x\n");
    }

    #[test]
    fn signed_percentages() {
        assert_eq!(signed_percent(-20.0), "-20.0%");
        assert_eq!(signed_percent(-0.01), "+0.0%");
        assert_eq!(signed_percent(4.25), "+4.2%");
    }
}
