//! Small helpers the text importers share.

use std::borrow::Cow;

/// `s` with its control characters escaped as Rust writes them (`\n`, `\r`, `\u{1b}`),
/// so that an excerpt of the input quoted in a message keeps the message on one line.
pub(crate) fn one_line(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A line shortened for messages: at most 80 characters, quoted, control characters
/// escaped.
pub(crate) fn preview(line: &[u8]) -> String {
    let s = String::from_utf8_lossy(line);
    let mut out: String = s.chars().take(80).collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    format!("'{}'", one_line(&out))
}

/// 1-based line and column (in bytes) of byte `at` of `text`.
pub(crate) fn line_col(text: &[u8], at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let line = memchr::memchr_iter(b'\n', &text[..at]).count() + 1;
    let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
    (line, at - start + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 14, failure 10: a quoted excerpt with a newline (or a carriage return, which
    /// rewrites the terminal's line) broke the message over two lines.
    #[test]
    fn a_quoted_excerpt_with_a_newline_breaks_the_message() {
        assert_eq!(preview(b"a\rb\n\tc\x1b"), r"'a\rb\n\tc\u{1b}'");
        assert_eq!(preview("héllo".as_bytes()), "'héllo'");
        assert!(matches!(one_line("plain"), Cow::Borrowed("plain")));
        let e = super::super::folded::parse("f.txt", b"a;b 1\nx\ry\n").unwrap();
        let w = e.meta.warnings.lines().join(" ");
        assert!(w.contains(r"'x\ry'"), "{w}");
    }
}
