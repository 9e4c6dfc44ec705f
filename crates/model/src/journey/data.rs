//! A journey's data file: CSV (RFC 4180: quoted fields, `""` inside quotes, CRLF or LF
//! line ends) whose first row names the columns. Read whole when the journey file is read,
//! bounded: at most [`MAX_DATA`] bytes, [`MAX_COLUMNS`] columns, every row as wide as the
//! header.

/// The largest data file: 64 MiB.
pub const MAX_DATA: usize = 64 << 20;
/// The most columns of a data file.
pub const MAX_COLUMNS: usize = 1024;

/// A data file's rows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Table {
    /// Column names, from the header row.
    pub columns: Vec<String>,
    /// Rows, each as wide as `columns`.
    pub rows: Vec<Vec<String>>,
}

/// A data file that cannot be read, with its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvError {
    /// Line of the data file.
    pub line: usize,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl Table {
    /// Index of the column `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }

    /// Parses CSV text with a header row.
    pub fn parse(bytes: &[u8]) -> Result<Table, CsvError> {
        if bytes.len() > MAX_DATA {
            return Err(CsvError {
                line: 1,
                message: format!(
                    "the file has {} bytes, more than the {MAX_DATA} a data file may have: split it",
                    bytes.len()
                ),
            });
        }
        let text = std::str::from_utf8(bytes).map_err(|e| CsvError {
            line: bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1,
            message: "not UTF-8 text: save the file as UTF-8".into(),
        })?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut records = Records {
            rest: text,
            line: 1,
        };
        let columns = match records.next() {
            Some(r) => r?.1,
            None => {
                return Err(CsvError {
                    line: 1,
                    message: "the file is empty: its first row must name the columns".into(),
                })
            }
        };
        if columns.len() > MAX_COLUMNS {
            return Err(CsvError {
                line: 1,
                message: format!("more than {MAX_COLUMNS} columns"),
            });
        }
        for (i, c) in columns.iter().enumerate() {
            if c.is_empty() {
                return Err(CsvError {
                    line: 1,
                    message: format!("column {} of the header has no name: name it", i + 1),
                });
            }
            if columns[..i].contains(c) {
                return Err(CsvError {
                    line: 1,
                    message: format!("the header names column \"{c}\" twice: rename one"),
                });
            }
        }
        let mut rows = Vec::new();
        for r in records {
            let (line, row) = r?;
            if row.len() == 1 && row[0].is_empty() {
                continue; // a blank line
            }
            if row.len() != columns.len() {
                return Err(CsvError {
                    line,
                    message: format!(
                        "this row has {} fields, the header {}: give every row one field per column",
                        row.len(),
                        columns.len()
                    ),
                });
            }
            rows.push(row);
        }
        if rows.is_empty() {
            return Err(CsvError {
                line: 2,
                message: "the file has a header but no rows: add one row per user".into(),
            });
        }
        Ok(Table { columns, rows })
    }
}

/// CSV records with the line each starts on.
struct Records<'a> {
    rest: &'a str,
    line: usize,
}

impl Iterator for Records<'_> {
    type Item = Result<(usize, Vec<String>), CsvError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let start = self.line;
        let mut fields = Vec::new();
        let mut field = String::new();
        let mut chars = self.rest.char_indices().peekable();
        let mut quoted = false;
        let mut was_quoted = false;
        let mut end = self.rest.len();
        while let Some((i, c)) = chars.next() {
            if quoted {
                match c {
                    '"' if chars.peek().map(|p| p.1) == Some('"') => {
                        chars.next();
                        field.push('"');
                    }
                    '"' => quoted = false,
                    '\n' => {
                        self.line += 1;
                        field.push(c)
                    }
                    _ => field.push(c),
                }
                continue;
            }
            match c {
                '"' if field.is_empty() && !was_quoted => {
                    quoted = true;
                    was_quoted = true;
                }
                '"' => {
                    return Some(Err(CsvError {
                        line: self.line,
                        message: "a quote inside an unquoted field: quote the field and double the quote (\"a \"\"b\"\"\")".into(),
                    }))
                }
                ',' => {
                    fields.push(std::mem::take(&mut field));
                    was_quoted = false;
                }
                '\r' if chars.peek().map(|p| p.1) == Some('\n') => {}
                '\n' => {
                    end = i + 1;
                    self.line += 1;
                    break;
                }
                _ if was_quoted => {
                    return Some(Err(CsvError {
                        line: self.line,
                        message: "text after a closing quote: put the whole field in quotes".into(),
                    }))
                }
                _ => field.push(c),
            }
        }
        if quoted {
            return Some(Err(CsvError {
                line: start,
                message: "a quoted field is never closed: close its quote".into(),
            }));
        }
        fields.push(field);
        self.rest = &self.rest[end..];
        Some(Ok((start, fields)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_quotes_and_line_ends() {
        let t = Table::parse(b"\xef\xbb\xbfname,pass\r\nann,\"a,\"\"b\"\"\"\n\nbob,\"x\ny\"\n")
            .unwrap();
        assert_eq!(t.columns, ["name", "pass"]);
        assert_eq!(t.rows, [vec!["ann", "a,\"b\""], vec!["bob", "x\ny"]]);
        assert_eq!(t.column("pass"), Some(1));
    }

    #[test]
    fn errors_name_the_line() {
        let e = Table::parse(b"a,b\n1,2\n3\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("1 fields, the header 2"));
        assert_eq!(Table::parse(b"a\n\"x\n").unwrap_err().line, 2);
        assert!(Table::parse(b"a,a\n1,2\n")
            .unwrap_err()
            .message
            .contains("twice"));
        assert!(Table::parse(b"a\n")
            .unwrap_err()
            .message
            .contains("no rows"));
        assert!(Table::parse(b"").is_err());
        assert!(Table::parse(b"a\nx\"y\n").is_err());
        assert!(Table::parse(b"a\n\"x\"y\n").is_err());
        assert_eq!(Table::parse(b"a\n\xff\n").unwrap_err().line, 2);
    }
}
