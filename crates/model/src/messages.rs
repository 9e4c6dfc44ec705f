//! A list of WebSocket messages (`--ws-messages FILE`, a plan workload's `messages`): one
//! text message per line, each of which may hold the templated values of request lists
//! (`{seq}`, `{rand:LO-HI}`), drawn afresh for every message sent.
//!
//! Seams: no I/O here. [`MessageList::parse`] takes the file's text (the CLI reads it,
//! bounded by [`crate::requests::MAX_LIST_BYTES`]) and checks every line once; an error
//! names the file and line. The engine draws each message's values and checks an echo
//! against the same draw.

use crate::requests::{ListError, Order, Template, MAX_ENTRIES};

/// The most bytes one line of a message list may hold: 1 MiB. Drawn values are at most
/// four times the length of their template (`{seq}` becomes at most 20 digits), so a
/// message sent stays under [`crate::MAX_MESSAGE`].
pub const MAX_LIST_MESSAGE: usize = 1 << 20;

/// A list of text messages, sent in turn (or at random) instead of one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageList {
    /// Where it was read from, as the user named it.
    pub source: String,
    /// The lines as written (at least one), for the result file.
    pub lines: Vec<String>,
    /// Each line's pieces, in the same order.
    pub templates: Vec<Template>,
    /// Sequential or random.
    pub order: Order,
    /// Seeds the random order and `{rand:…}` values, so a run can be repeated.
    pub seed: u64,
}

impl MessageList {
    /// Reads a list: each non-empty line is one text message; lines starting with `#`
    /// are comments. At most [`MAX_ENTRIES`] messages of [`MAX_LIST_MESSAGE`] bytes.
    pub fn parse(
        source: &str,
        text: &str,
        order: Order,
        seed: u64,
    ) -> Result<MessageList, ListError> {
        let err = |line: usize, message: String| ListError {
            source_name: source.to_string(),
            line,
            message,
        };
        let mut lines = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            if lines.len() == MAX_ENTRIES {
                return Err(err(
                    n + 1,
                    format!("more than {MAX_ENTRIES} messages: split the list"),
                ));
            }
            lines.push(line.to_string());
        }
        Self::of_lines(source, lines, order, seed).map_err(|(line, message)| {
            // Lines are numbered in the file, comments and blank lines counted.
            let at = text
                .lines()
                .enumerate()
                .filter(|(_, l)| !(l.trim().is_empty() || l.starts_with('#')))
                .nth(line.saturating_sub(1))
                .map_or(0, |(n, _)| n + 1);
            err(at, message)
        })
    }

    /// A list of `lines` (messages, as written), each checked: at most
    /// [`MAX_LIST_MESSAGE`] bytes and well-formed templates. An error gives the message's
    /// number (1-based; 0 for the list as a whole) and what is wrong.
    pub fn of_lines(
        source: &str,
        lines: Vec<String>,
        order: Order,
        seed: u64,
    ) -> Result<MessageList, (usize, String)> {
        if lines.is_empty() {
            return Err((
                0,
                "no message in the list: write one text message per line".into(),
            ));
        }
        if lines.len() > MAX_ENTRIES {
            return Err((
                0,
                format!("more than {MAX_ENTRIES} messages: split the list"),
            ));
        }
        let mut templates = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            if line.len() > MAX_LIST_MESSAGE {
                return Err((
                    i + 1,
                    format!(
                        "a message of {} bytes, more than the {MAX_LIST_MESSAGE} (1 MiB) a list's message may have: send it alone with -p FILE",
                        line.len()
                    ),
                ));
            }
            templates.push(Template::parse(line.as_bytes()).map_err(|e| (i + 1, e.to_string()))?);
        }
        Ok(MessageList {
            source: source.to_string(),
            lines,
            templates,
            order,
            seed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requests::Piece;

    #[test]
    fn each_line_is_a_message_and_comments_and_blank_lines_are_not() {
        let l = MessageList::parse(
            "m.txt",
            "# chat\n{\"id\": {seq}}\n\nhello {rand:1-6}\n",
            Order::Seq,
            7,
        )
        .unwrap();
        assert_eq!(l.lines, ["{\"id\": {seq}}", "hello {rand:1-6}"]);
        assert_eq!(
            l.templates[1].0,
            [
                Piece::Text(b"hello ".to_vec()),
                Piece::Rand { lo: 1, hi: 6 }
            ]
        );
        assert_eq!((l.order, l.seed), (Order::Seq, 7));
    }

    #[test]
    fn errors_name_the_file_line_and_fix() {
        let e =
            MessageList::parse("m.txt", "# c\n\nok\nbad {rand:9-1}\n", Order::Seq, 1).unwrap_err();
        assert_eq!((e.source_name.as_str(), e.line), ("m.txt", 4));
        assert!(e.message.contains("{rand:LO-HI}"), "{e}");
        let e = MessageList::parse("m.txt", "# only a comment\n\n", Order::Seq, 1).unwrap_err();
        assert_eq!(e.line, 0);
        assert!(e.to_string().contains("one text message per line"), "{e}");
        let long = "x".repeat(MAX_LIST_MESSAGE + 1);
        let e = MessageList::parse("m.txt", &format!("a\n{long}\n"), Order::Seq, 1).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("-p FILE"), "{}", e.message);
    }
}
