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

pub(super) use crate::import::text::line_col;

/// The index of the first byte from `i` on that is not JSON's white space (space, tab,
/// newline, carriage return: not the form feed or vertical tab `is_ascii_whitespace` and
/// `str::trim_start` also take, which serde refuses). Readers that must read exactly
/// what serde reads skip with this one.
#[inline]
pub(in crate::import) fn json_ws(text: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = text.get(i) {
        i += 1;
    }
    i
}

#[inline]
pub(in crate::import) fn skip_ws(text: &[u8], mut i: usize) -> usize {
    while i < text.len() && text[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The first `"` or `\\` in `t`. Most strings in a trace are short (member names,
/// event names), where a call into `memchr2` and its setup cost more than the scan: the
/// first 32 bytes are looked at eight at a time in a register.
#[inline]
pub(super) fn find_quote(t: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut j = 0;
    while j + 8 <= t.len() && j < 32 {
        let w = u64::from_le_bytes(t[j..j + 8].try_into().unwrap_or_default());
        let q = w ^ (ONES * u64::from(b'"'));
        let b = w ^ (ONES * u64::from(b'\\'));
        // A byte of `q` or `b` is zero where `w` holds a quote or a backslash; the lowest
        // flagged byte is exact (a borrow only flags bytes above a true zero).
        let m = ((q.wrapping_sub(ONES) & !q) | (b.wrapping_sub(ONES) & !b)) & HIGH;
        if m != 0 {
            return Some(j + (m.trailing_zeros() / 8) as usize);
        }
        j += 8;
    }
    if j < 32 {
        return t[j..]
            .iter()
            .position(|&c| c == b'"' || c == b'\\')
            .map(|k| j + k);
    }
    memchr::memchr2(b'"', b'\\', &t[j..]).map(|k| j + k)
}

/// `i` is just after an opening quote; returns the index after the closing quote.
#[inline]
pub(in crate::import) fn skip_string(text: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let k = i + find_quote(&text[i..])?;
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

/// The end (one past its `]`) of the array at `text[start]` (a `[`), found from bracket
/// to bracket (memchr; strings skipped), and cuts just after its elements that are arrays,
/// at least `every` bytes apart (`usize::MAX`: none). `None` if it does not end.
pub(in crate::import) fn array_cuts(
    text: &[u8],
    start: usize,
    every: usize,
) -> Option<(usize, Vec<usize>)> {
    let mut cuts = Vec::new();
    let mut last = start;
    let mut depth = 0usize;
    let mut i = start;
    loop {
        let k = i + memchr::memchr3(b'[', b']', b'"', text.get(i..)?)?;
        match text[k] {
            b'[' => {
                depth += 1;
                i = k + 1;
            }
            b']' => {
                depth = depth.checked_sub(1)?;
                i = k + 1;
                if depth == 0 {
                    return Some((i, cuts));
                }
                if depth == 1 && i - last >= every {
                    cuts.push(i);
                    last = i;
                }
            }
            _ => i = skip_string(text, k + 1)?,
        }
    }
}

/// `text[i]` is `{` or `[`; returns the index after the matching close (brackets of
/// either kind are counted together: mismatches are left to the JSON parser). Bytes
/// that are neither a quote nor a bracket are passed over a word at a time, a run longer
/// than 64 bytes (an array of numbers) by `memchr`, and strings by [`skip_string`]: a
/// byte at a time, or a `memchr` call per string and bracket, made format detection
/// 12-20 % of a big Jaeger file's load.
pub(in crate::import) fn skip_nested(text: &[u8], mut i: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Whether any byte of `w` is `c` (exact: the borrow only flags bytes above a true
    // match).
    let has = |w: u64, c: u8| {
        let x = w ^ (ONES * u64::from(c));
        x.wrapping_sub(ONES) & !x & HIGH != 0
    };
    let mut depth = 0usize;
    loop {
        let mut words = 0;
        while let Some(word) = text.get(i..i + 8) {
            let w = u64::from_le_bytes(word.try_into().unwrap_or_default());
            if has(w, b'"') || has(w, b'{') || has(w, b'}') || has(w, b'[') || has(w, b']') {
                break;
            }
            i += 8;
            words += 1;
            if words == 8 {
                let t = &text[i..];
                let a = memchr::memchr3(b'"', b'[', b']', t).unwrap_or(t.len());
                i += memchr::memchr2(b'{', b'}', &t[..a]).unwrap_or(a);
                break;
            }
        }
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

/// The bytes that end a number or a literal: `,`, `}`, `]` and JSON's whitespace (and
/// the other ASCII whitespace `is_ascii_whitespace` accepts, as before).
const SCALAR_END: [bool; 256] = {
    let mut t = [false; 256];
    let ends = [b',', b'}', b']', b' ', b'\t', b'\n', b'\r', 0x0c];
    let mut k = 0;
    while k < ends.len() {
        t[ends[k] as usize] = true;
        k += 1;
    }
    t
};

/// The index of the first byte after the number or literal at `i` (one table lookup a
/// byte); `None` if the input ends first.
#[inline]
fn scalar_end(text: &[u8], i: usize) -> Option<usize> {
    let n = text[i..].iter().position(|&b| SCALAR_END[usize::from(b)])?;
    Some(i + n)
}

/// Skips any JSON value at `i`; `None` at the end of the input.
#[inline]
pub(in crate::import) fn skip_value(text: &[u8], i: usize) -> Option<usize> {
    match *text.get(i)? {
        b'"' => skip_string(text, i + 1),
        b'{' | b'[' => skip_nested(text, i),
        _ => scalar_end(text, i),
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
        // The fast check says only whether; std's finds where the valid part ends.
        let s = match simdutf8::basic::from_utf8(bytes) {
            Ok(s) => s,
            Err(_) => match std::str::from_utf8(bytes) {
                Ok(s) => s,
                Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
            },
        };
        Valid { s, at: from }
    }
}

// Always inlined: called for every string and number, where the call cost more than
// the slicing it does (callgrind, 20 MB W6: 942 M → 907 M instructions).
#[inline(always)]
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
        let k = j + find_quote(text.get(j..).unwrap_or_default()).ok_or(ScanErr::Eof)?;
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
        Some(b'-' | b'0'..=b'9' | b't' | b'f' | b'n') => scalar_end(text, i).ok_or(ScanErr::Eof)?,
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

/// The event members the reader keeps.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Key {
    Ph,
    Name,
    Cat,
    Scope,
    S,
    Ts,
    Dur,
    Tdur,
    Pid,
    Tid,
    Id,
    Id2,
    Args,
    Other,
}

impl Key {
    const ALL: [(Key, &'static str); 13] = [
        (Key::Ph, "ph"),
        (Key::Name, "name"),
        (Key::Cat, "cat"),
        (Key::Scope, "scope"),
        (Key::S, "s"),
        (Key::Ts, "ts"),
        (Key::Dur, "dur"),
        (Key::Tdur, "tdur"),
        (Key::Pid, "pid"),
        (Key::Tid, "tid"),
        (Key::Id, "id"),
        (Key::Id2, "id2"),
        (Key::Args, "args"),
    ];

    fn of(name: &str) -> Key {
        Key::ALL
            .iter()
            .find(|(_, n)| *n == name)
            .map_or(Key::Other, |&(k, _)| k)
    }

    /// The member's name (messages), read from [`Key::ALL`] by position: the order of
    /// the enum's variants.
    fn text(self) -> &'static str {
        Key::ALL.get(self as usize).map_or("", |&(_, n)| n)
    }
}

/// A member name written plainly (`"ts"`: no escapes), recognised from its first bytes
/// without scanning for the closing quote: the key and the index after the quote.
#[inline]
fn quick_key(text: &[u8], i: usize) -> Option<(Key, usize)> {
    let t = text.get(i + 1..i + 6).unwrap_or_default();
    let (key, len) = match t {
        [b'p', b'h', b'"', ..] => (Key::Ph, 2),
        [b't', b's', b'"', ..] => (Key::Ts, 2),
        [b'p', b'i', b'd', b'"', ..] => (Key::Pid, 3),
        [b't', b'i', b'd', b'"', ..] => (Key::Tid, 3),
        [b'd', b'u', b'r', b'"', ..] => (Key::Dur, 3),
        [b'c', b'a', b't', b'"', ..] => (Key::Cat, 3),
        [b'i', b'd', b'"', ..] => (Key::Id, 2),
        [b'n', b'a', b'm', b'e', b'"'] => (Key::Name, 4),
        [b'a', b'r', b'g', b's', b'"'] => (Key::Args, 4),
        _ => return None,
    };
    Some((key, i + len + 2))
}

/// A member name for a message, from its opening quote to the index after its closing one.
fn member_name(text: &[u8], from: usize, to: usize) -> String {
    let raw = String::from_utf8_lossy(&text[from..to.min(text.len())]);
    one_line(&raw).to_string()
}

/// Reads the event object whose `{` is at `i`: its members and the index after it. A
/// hand-written reader for this one shape is several times faster than a generic
/// deserializer: member names are matched as bytes, values are borrowed slices.
#[inline]
pub(super) fn scan_event<'a>(
    text: &'a [u8],
    valid: Valid<'a>,
    i: usize,
    ev: &mut Ev<'a>,
) -> Result<usize, ScanErr> {
    *ev = Ev::default();
    let mut i = skip_ws(text, i + 1);
    if text.get(i) == Some(&b'}') {
        return Ok(i + 1);
    }
    loop {
        let i0 = i;
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
        let (key, after) = match quick_key(text, i) {
            Some(quick) => quick,
            None => {
                let (name, after) = scan_string(text, valid, i)?;
                (Key::of(&name), after)
            }
        };
        i = skip_ws(text, after);
        match text.get(i) {
            Some(b':') => i = skip_ws(text, i + 1),
            None => return Err(ScanErr::Eof),
            Some(_) => {
                return Err(ScanErr::Syntax(
                    i,
                    format!(
                        "expected `:` after {}, found {}",
                        member_name(text, i0, after),
                        found(text, i)
                    ),
                ));
            }
        }
        i = match key {
            Key::Ph | Key::Name | Key::Cat | Key::Scope | Key::S => {
                let (v, e) = scan_str(text, valid, i, key.text())?;
                match key {
                    Key::Ph => ev.ph = v,
                    Key::Name => ev.name = v,
                    Key::Cat => ev.cat = v,
                    Key::Scope => ev.scope = v,
                    _ => ev.s = v,
                }
                e
            }
            _ => {
                let (raw, e) = scan_raw(text, valid, i)?;
                let raw = (raw != "null").then_some(raw);
                match key {
                    Key::Ts => ev.ts = raw,
                    Key::Dur => ev.dur = raw,
                    Key::Tdur => ev.tdur = raw,
                    Key::Pid => ev.pid = raw,
                    Key::Tid => ev.tid = raw,
                    Key::Id => ev.id = raw,
                    Key::Id2 => ev.id2 = raw,
                    Key::Args => ev.args = raw,
                    _ => {}
                }
                e
            }
        };
        i = skip_ws(text, i);
        match text.get(i) {
            Some(b',') => i = skip_ws(text, i + 1),
            Some(b'}') => return Ok(i + 1),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_quote_finds_the_first_quote_or_backslash_at_any_offset() {
        for len in 0..80 {
            for at in 0..=len {
                for mark in [b'"', b'\\'] {
                    // Bytes that differ from a quote or a backslash by one bit, and
                    // multi-byte UTF-8, around the mark; a second mark after it.
                    let mut t: Vec<u8> = (0..len)
                        .map(|k| [b'#', b']', 0xc3, 0xa9, b'a', 0xdc][k % 6])
                        .collect();
                    if at < len {
                        t[at] = mark;
                        if at + 3 < len {
                            t[at + 3] = b'"';
                        }
                    }
                    let naive = t.iter().position(|&c| c == b'"' || c == b'\\');
                    assert_eq!(find_quote(&t), naive, "len {len}, at {at}");
                }
            }
        }
    }

    #[test]
    fn quick_keys_read_as_scanned_keys() {
        for (k, (key, name)) in Key::ALL.iter().enumerate() {
            assert_eq!((*key as usize, key.text()), (k, *name));
        }
        for (key, name) in Key::ALL {
            let text = format!("\"{name}\":1");
            let (scanned, after) = scan_string(text.as_bytes(), Valid::prefix(b"", 0, 0), 0)
                .ok()
                .unwrap();
            assert_eq!(Key::of(&scanned), key);
            if let Some((quick, quick_after)) = quick_key(text.as_bytes(), 0) {
                assert_eq!((quick, quick_after), (key, after), "{name}");
            }
        }
        // Longer names sharing a prefix, an escaped name, a cut-off input.
        for text in [
            "\"phase\":1",
            "\"tsx\":1",
            "\"na\\u006de\":1",
            "\"nam",
            "\"ts",
        ] {
            assert_eq!(quick_key(text.as_bytes(), 0), None, "{text}");
        }
        assert_eq!(Key::of("na\u{6d}e"), Key::Name);
        assert_eq!(Key::of("phase"), Key::Other);
    }

    #[test]
    fn numbers_end_where_they_did() {
        for (text, end) in [
            ("12.5,", Some(4)),
            ("7}", Some(1)),
            ("-3]", Some(2)),
            ("1\t", Some(1)),
            ("1e9", None),
            ("true\n", Some(4)),
        ] {
            assert_eq!(scalar_end(text.as_bytes(), 0), end, "{text:?}");
        }
    }
}
