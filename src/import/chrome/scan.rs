//! The JSON reader: skipping values, reading one trace event's members into a borrowed
//! [`Ev`], positions for messages.

use crate::import::ImportError;
use crate::import::text::one_line;
use std::borrow::Cow;

pub(super) fn err_at(
    file: &str,
    text: &[u8],
    at: usize,
    what: &str,
    message: String,
) -> ImportError {
    let (line, column) = line_col(text, at);
    ImportError::Invalid {
        file: file.to_string(),
        location: format!("{what} (line {line}, column {column})"),
        message,
    }
}

/// 1-based line and column (in bytes) of byte `at`.
pub(super) fn line_col(text: &[u8], at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let line = memchr::memchr_iter(b'\n', &text[..at]).count() + 1;
    let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
    (line, at - start + 1)
}

#[inline]
pub(super) fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && text[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// `i` is just after an opening quote; returns the index after the closing quote.
#[inline]
pub(super) fn skip_string(text: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let k = i + memchr::memchr2(b'"', b'\\', &text[i..])?;
        if text[k] == b'\\' {
            i = k + 2;
            if i > text.len() {
                return None;
            }
        } else {
            return Some(k + 1);
        }
    }
}

/// `text[i]` is `{` or `[`; returns the index after the matching close (brackets of
/// either kind are counted together: mismatches are left to the JSON parser).
pub(super) fn skip_nested(text: &[u8], mut i: usize) -> Option<usize> {
    let mut depth = 0usize;
    loop {
        match *text.get(i)? {
            b'"' => i = skip_string(text, i + 1)?,
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth -= 1;
                i += 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i += 1,
        }
    }
}

/// Skips any JSON value at `i`; `None` at the end of the input.
#[inline]
pub(super) fn skip_value(text: &[u8], i: usize) -> Option<usize> {
    match *text.get(i)? {
        b'"' => skip_string(text, i + 1),
        b'{' | b'[' => skip_nested(text, i),
        _ => {
            let n = text[i..]
                .iter()
                .position(|&b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
            Some(i + n)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Events.

/// An event's members, borrowed from the input: strings as text (unescaped only when
/// they hold escapes), numbers, ids and `args` as their raw JSON text.
#[derive(Default)]
pub(super) struct Ev<'a> {
    pub(super) ph: Option<Cow<'a, str>>,
    pub(super) name: Option<Cow<'a, str>>,
    pub(super) cat: Option<Cow<'a, str>>,
    pub(super) scope: Option<Cow<'a, str>>,
    pub(super) s: Option<Cow<'a, str>>,
    pub(super) ts: Option<&'a str>,
    pub(super) dur: Option<&'a str>,
    pub(super) tdur: Option<&'a str>,
    pub(super) pid: Option<&'a str>,
    pub(super) tid: Option<&'a str>,
    pub(super) id: Option<&'a str>,
    pub(super) id2: Option<&'a str>,
    pub(super) args: Option<&'a str>,
}

/// Why an event could not be read.
pub(super) enum ScanErr {
    /// The input ends inside it.
    Eof,
    /// Malformed JSON at a byte.
    Syntax(usize, String),
}

pub(super) fn found(text: &[u8], at: usize) -> String {
    match text.get(at) {
        Some(&b) if b.is_ascii_graphic() => format!("`{}`", char::from(b)),
        Some(&b) => format!("byte 0x{b:02x}"),
        None => "the end of the input".to_string(),
    }
}

/// A part of the input known to be UTF-8: `s` is the bytes from `at` on, checked once in
/// one pass, so that strings inside it are borrowed without checking each again (which
/// took a twentieth of the parse). Strings outside it are checked, so errors stay where
/// they were.
#[derive(Clone, Copy)]
pub(super) struct Valid<'a> {
    pub(super) s: &'a str,
    pub(super) at: usize,
}

impl<'a> Valid<'a> {
    /// The longest UTF-8 prefix of `text[from..to]`.
    pub(super) fn prefix(text: &'a [u8], from: usize, to: usize) -> Valid<'a> {
        let bytes = &text[from.min(text.len())..to.min(text.len())];
        let s = match std::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
        };
        Valid { s, at: from }
    }
}

#[inline]
pub(super) fn utf8<'a>(
    text: &'a [u8],
    valid: Valid<'a>,
    a: usize,
    b: usize,
) -> Result<&'a str, ScanErr> {
    if a >= valid.at
        && let Some(s) = valid.s.get(a - valid.at..b - valid.at)
    {
        return Ok(s);
    }
    std::str::from_utf8(&text[a..b])
        .map_err(|e| ScanErr::Syntax(a + e.valid_up_to(), "invalid UTF-8 in a string".to_string()))
}

/// The JSON string whose opening quote is at `i`: its text and the index after it.
#[inline]
pub(super) fn scan_string<'a>(
    text: &'a [u8],
    valid: Valid<'a>,
    i: usize,
) -> Result<(Cow<'a, str>, usize), ScanErr> {
    let mut j = i + 1;
    let mut escaped = false;
    loop {
        let k = j + memchr::memchr2(b'"', b'\\', text.get(j..).unwrap_or_default())
            .ok_or(ScanErr::Eof)?;
        if text[k] == b'\\' {
            escaped = true;
            j = k + 2;
            if j > text.len() {
                return Err(ScanErr::Eof);
            }
        } else {
            j = k + 1;
            break;
        }
    }
    if !escaped {
        return Ok((Cow::Borrowed(utf8(text, valid, i + 1, j - 1)?), j));
    }
    serde_json::from_slice::<String>(&text[i..j])
        .map(|s| (Cow::Owned(s), j))
        .map_err(|e| {
            ScanErr::Syntax(
                i + e.column().saturating_sub(1),
                crate::import::json_message(&e),
            )
        })
}

/// Any JSON value at `i` as raw text, and the index after it. Objects and arrays are
/// skipped by brackets and strings only; what is inside is checked where it is used.
#[inline]
pub(super) fn scan_raw<'a>(
    text: &'a [u8],
    valid: Valid<'a>,
    i: usize,
) -> Result<(&'a str, usize), ScanErr> {
    let end = match text.get(i) {
        None => return Err(ScanErr::Eof),
        Some(b'"') => scan_string(text, valid, i)?.1,
        Some(b'{' | b'[') => skip_nested(text, i).ok_or(ScanErr::Eof)?,
        Some(b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => {
            let n = text[i..]
                .iter()
                .position(|&b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
                .ok_or(ScanErr::Eof)?;
            i + n
        }
        Some(_) => {
            return Err(ScanErr::Syntax(
                i,
                format!("expected a value, found {}", found(text, i)),
            ));
        }
    };
    Ok((utf8(text, valid, i, end)?, end))
}

/// A member that must be a string (or null).
#[inline]
pub(super) fn scan_str<'a>(
    text: &'a [u8],
    valid: Valid<'a>,
    i: usize,
    key: &str,
) -> Result<(Option<Cow<'a, str>>, usize), ScanErr> {
    match text.get(i) {
        Some(b'"') => scan_string(text, valid, i).map(|(s, e)| (Some(s), e)),
        Some(b'n') if text[i..].starts_with(b"null") => Ok((None, i + 4)),
        None => Err(ScanErr::Eof),
        Some(_) => Err(ScanErr::Syntax(
            i,
            format!(
                "{}: expected a string, found {}",
                one_line(key),
                found(text, i)
            ),
        )),
    }
}

/// Reads the event object whose `{` is at `i`: its members and the index after it. A
/// hand-written reader for this one shape is several times faster than a generic
/// deserializer: member names are matched as bytes, values are borrowed slices.
#[inline]
pub(super) fn scan_event<'a>(
    text: &'a [u8],
    valid: Valid<'a>,
    i: usize,
) -> Result<(Ev<'a>, usize), ScanErr> {
    let mut ev = Ev::default();
    let mut i = skip_ws(text, i + 1);
    if text.get(i) == Some(&b'}') {
        return Ok((ev, i + 1));
    }
    loop {
        match text.get(i) {
            Some(b'"') => {}
            None => return Err(ScanErr::Eof),
            Some(_) => {
                return Err(ScanErr::Syntax(
                    i,
                    format!("expected a member name in quotes, found {}", found(text, i)),
                ));
            }
        }
        let (key, after) = scan_string(text, valid, i)?;
        i = skip_ws(text, after);
        match text.get(i) {
            Some(b':') => i = skip_ws(text, i + 1),
            None => return Err(ScanErr::Eof),
            Some(_) => {
                return Err(ScanErr::Syntax(
                    i,
                    format!(
                        "expected `:` after \"{}\", found {}",
                        one_line(&key),
                        found(text, i)
                    ),
                ));
            }
        }
        i = match key.as_bytes() {
            b"ph" | b"name" | b"cat" | b"scope" | b"s" => {
                let (v, e) = scan_str(text, valid, i, &key)?;
                match key.as_bytes() {
                    b"ph" => ev.ph = v,
                    b"name" => ev.name = v,
                    b"cat" => ev.cat = v,
                    b"scope" => ev.scope = v,
                    _ => ev.s = v,
                }
                e
            }
            _ => {
                let (raw, e) = scan_raw(text, valid, i)?;
                let raw = (raw != "null").then_some(raw);
                match key.as_bytes() {
                    b"ts" => ev.ts = raw,
                    b"dur" => ev.dur = raw,
                    b"tdur" => ev.tdur = raw,
                    b"pid" => ev.pid = raw,
                    b"tid" => ev.tid = raw,
                    b"id" => ev.id = raw,
                    b"id2" => ev.id2 = raw,
                    b"args" => ev.args = raw,
                    _ => {}
                }
                e
            }
        };
        i = skip_ws(text, i);
        match text.get(i) {
            Some(b',') => i = skip_ws(text, i + 1),
            Some(b'}') => return Ok((ev, i + 1)),
            None => return Err(ScanErr::Eof),
            Some(_) => {
                return Err(ScanErr::Syntax(
                    i,
                    format!(
                        "expected `,` or `}}` after a member, found {}",
                        found(text, i)
                    ),
                ));
            }
        }
    }
}
