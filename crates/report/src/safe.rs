//! What untrusted text becomes before it reaches a terminal, a spreadsheet or a web
//! page. Names, commands, versions, details and a contender's stderr come from plans and from servers:
//! an ESC in them would drive the terminal (colours, cursor moves, a rewritten title), a
//! CR would overwrite the line, a newline would break a table row; and a CSV cell that
//! starts with `=` is run as a formula by a spreadsheet.
//!
//! [`terminal_line`] is for text that must stay on one line (table cells, names in a
//! sentence); [`terminal_text`] for text of several lines (a stderr tail, a whole report).
//! Both show each control character escaped as Rust writes it (`\n`, `\r`, `\t`, `\u{1b}`),
//! so nothing is lost and nothing is interpreted. [`csv_text`] neutralises formulas;
//! [`html_text`] escapes text for HTML and SVG, for the HTML report and any table laid
//! out in HTML.

use std::borrow::Cow;

/// `s` with every control character (C0, DEL and C1: ESC, CR, LF, TAB, BEL, CSI …)
/// escaped, so that it prints as one inert line.
pub fn terminal_line(s: &str) -> Cow<'_, str> {
    escape_controls(s, false)
}

/// `s` with every control character but the line break escaped: lines stay lines, and
/// nothing else reaches the terminal as a control.
pub fn terminal_text(s: &str) -> Cow<'_, str> {
    escape_controls(s, true)
}

fn escape_controls(s: &str, keep_newlines: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && !(keep_newlines && c == '\n');
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A CSV text cell a spreadsheet will not run: a cell starting with `=`, `+`, `-`, `@`,
/// TAB or CR gets a leading `'` (OWASP's advice against CSV injection). Only for text
/// columns (names, workloads, commands): numbers such as `-5` are written as they are.
/// Quoting is still [`csv_record`](crate::grid::csv_record)'s job.
pub fn csv_text(s: &str) -> Cow<'_, str> {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        Cow::Owned(format!("'{s}"))
    } else {
        Cow::Borrowed(s)
    }
}

/// Escapes text for HTML element content and attribute values (and for SVG/XML text).
pub fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_shown_escaped_and_plain_text_is_untouched() {
        assert!(matches!(terminal_line("nginx 1.25 — ü"), Cow::Borrowed(_)));
        assert_eq!(
            terminal_line("a\nb\rc\td\u{1b}[31mred\u{7}\u{9b}2J\u{7f}"),
            r"a\nb\rc\td\u{1b}[31mred\u{7}\u{9b}2J\u{7f}"
        );
        assert_eq!(
            terminal_text("line 1\n\u{1b}]0;title\u{7}line 2\r\n"),
            "line 1\n\\u{1b}]0;title\\u{7}line 2\\r\n"
        );
    }

    #[test]
    fn csv_cells_that_a_spreadsheet_would_run_are_neutralised() {
        for (cell, want) in [
            ("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"),
            ("+1", "'+1"),
            ("-x", "'-x"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("nginx", "nginx"),
            ("a=b", "a=b"),
            ("", ""),
        ] {
            assert_eq!(csv_text(cell), want, "{cell:?}");
        }
    }

    #[test]
    fn html_text_covers_the_five_specials() {
        assert_eq!(
            html_text(r#"<a href="x">&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }
}
