//! Helpers shared by the Jaeger and OTLP importers: span ids scoped by trace, times in
//! the formats those JSON encodings use (integers as numbers or digit strings, RFC 3339,
//! Go durations), attribute values as text, and errors that name a JSON path.
//!
//! Ids are compared as normalised text (hex lowercased without leading zeros; base64 of an
//! 8- or 16-byte id, as Jaeger's domain model and some OTLP exporters write them, decoded
//! to that hex first; any other id as the string it is), so `"0000000000000002"` and `"2"`
//! are the same span, `"s1"` and `"s10"` are not, and a 128-bit trace id costs nothing to
//! parse. Each distinct (trace, span) pair gets a small dense id for
//! [`SpanSet::from_ids_with`]: spans of different traces can never collide.
//!
//! A document is not read into a `serde_json::Value`: a tree of maps and strings takes
//! 10–12 times the file's size in memory and most of the load's time in allocating and
//! freeing it (a 100 MB Jaeger file took 1.2 GB and 2.3 s). The importers read it in
//! place instead: a document's outline in one pass with each span kept as its unparsed
//! text (a `&RawValue` slice of the input), then each span's members as an [`Obj`] of
//! such slices, and only the small values a span needs (ids, times, attributes) parsed.
//! An [`Obj`] answers `get` as a `Value` would (the last of repeated keys), and
//! [`raw_u64`], [`raw_text`] and [`raw_shown`] read a value as [`as_u64`], [`text_of`]
//! and [`shown`] read its `Value`. serde_json stops at 128 levels of nesting: the bounded
//! recursion below (attribute values) cannot run away.

use super::ImportError;
use super::text::line_col;
use crate::model::Warnings;
use crate::model::names::{NameId, Names};
use crate::model::spans::{IdColumns, IdSpan, SpanAttrs, SpanSet, Track, TrackInfo, TrackKind};
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::HashMap;

/// The document as text, checked to be UTF-8 in one pass (then nothing parsed from it
/// checks again); bytes that are not are an error at their line and column.
pub(crate) fn utf8_text<'a>(file: &str, text: &'a [u8]) -> Result<&'a str, ImportError> {
    match simdutf8::compat::from_utf8(text) {
        Ok(s) => Ok(s),
        Err(e) => {
            let (line, column) = line_col(text, e.valid_up_to());
            Err(ImportError::Json {
                file: file.to_string(),
                line,
                column,
                message: "invalid UTF-8 (the text must be UTF-8)".to_string(),
            })
        }
    }
}

/// serde_json's error `e` in reading `part` (a value within `text`), at its line and
/// column in `text`.
pub(crate) fn error_within(
    file: &str,
    text: &str,
    part: &str,
    e: &serde_json::Error,
) -> ImportError {
    let offset = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    let (line, column) = line_col(text.as_bytes(), offset);
    ImportError::Json {
        file: file.to_string(),
        line: line + e.line().saturating_sub(1),
        column: if e.line() <= 1 {
            column + e.column().saturating_sub(1)
        } else {
            e.column()
        },
        message: super::json_message(e),
    }
}

/// The start of a document cut anywhere, as text: cut back to the last whole UTF-8
/// character; `None` when what is before it is not UTF-8.
pub(crate) fn utf8_head(head: &[u8]) -> Option<&str> {
    match simdutf8::compat::from_utf8(head) {
        Ok(s) => Some(s),
        // Only a character cut at the end.
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok(),
        Err(_) => None,
    }
}

/// Reads the array at the start of `text` into `out`, each element (unparsed) as it
/// ends: an array cut anywhere leaves its whole elements before the cut in `out`, and
/// the error of the cut.
pub(crate) fn elements_into<'a>(
    text: &'a str,
    out: &mut Vec<&'a RawValue>,
) -> Result<(), serde_json::Error> {
    let seed = std::marker::PhantomData::<&RawValue>;
    EachInto::new(out, seed, |_: &&RawValue| {})
        .deserialize(&mut serde_json::Deserializer::from_str(text))
}

/// Reads an array into `out` with `seed`, each element as it ends (so that an array cut
/// anywhere keeps the elements before the cut), calling `each` on it first.
pub(crate) struct EachInto<'v, T, S, F> {
    out: &'v mut Vec<T>,
    seed: S,
    each: F,
}

impl<'v, T, S, F> EachInto<'v, T, S, F> {
    pub(crate) fn new(out: &'v mut Vec<T>, seed: S, each: F) -> Self {
        EachInto { out, seed, each }
    }
}

impl<'de, T, S: DeserializeSeed<'de, Value = T> + Copy, F: FnMut(&T)> DeserializeSeed<'de>
    for EachInto<'_, T, S, F>
{
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T, S: DeserializeSeed<'de, Value = T> + Copy, F: FnMut(&T)> Visitor<'de>
    for EachInto<'_, T, S, F>
{
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut a: A) -> Result<(), A::Error> {
        while let Some(e) = a.next_element_seed(self.seed)? {
            (self.each)(&e);
            self.out.push(e);
        }
        Ok(())
    }
}

/// An array's elements, unparsed.
pub(crate) fn raw_elements<'de, A: SeqAccess<'de>>(
    mut a: A,
) -> Result<Vec<&'de RawValue>, A::Error> {
    let mut v = Vec::with_capacity(a.size_hint().unwrap_or(0).min(1 << 16));
    while let Some(e) = a.next_element::<&RawValue>()? {
        v.push(e);
    }
    Ok(v)
}

/// The text from the value of `key` on, when `key` is the first member of the object at
/// the start of `text` and its value an array (a document's outline at its head, before
/// the rest is read).
pub(crate) fn first_member_array<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let rest = text.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest
        .strip_prefix('"')?
        .strip_prefix(key)?
        .strip_prefix('"')?;
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    rest.starts_with('[').then_some(rest)
}

/// Reports how far a document's reading is ([`Progress`](super::Progress), in bytes):
/// its outline pass as the first third of the bytes, the reading of its spans as the
/// other two thirds, each by where in the text it has got to (at most once a MiB).
pub(crate) struct Reporter<'p> {
    progress: Option<&'p super::Progress>,
    base: usize,
    len: u64,
    last: std::cell::Cell<u64>,
}

impl<'p> Reporter<'p> {
    pub(crate) fn new(progress: Option<&'p super::Progress>, text: &str) -> Reporter<'p> {
        Reporter {
            progress,
            base: text.as_ptr() as usize,
            len: text.len() as u64,
            last: std::cell::Cell::new(0),
        }
    }

    /// Where `raw` (a value of the text) ends, in bytes.
    fn end_of(&self, raw: &RawValue) -> u64 {
        (raw.get().as_ptr() as usize + raw.get().len()).saturating_sub(self.base) as u64
    }

    /// The outline pass has got past `raw`.
    pub(crate) fn outline(&self, raw: &RawValue) {
        self.set(self.end_of(raw) / 3);
    }

    /// The spans up to `raw` are read.
    pub(crate) fn reading(&self, raw: &RawValue) {
        self.set(self.len / 3 + self.end_of(raw).min(self.len) * 2 / 3);
    }

    fn set(&self, done: u64) {
        if let Some(p) = self.progress
            && done >= self.last.get() + (1 << 20)
        {
            self.last.set(done);
            p.set_done(done);
        }
    }
}

/// Parses `T` from the whole document, with JSON errors at a line and column.
pub(crate) fn read_doc<'a, T: Deserialize<'a>>(
    file: &str,
    text: &'a str,
) -> Result<T, ImportError> {
    serde_json::from_str(text).map_err(|e| ImportError::json(file, &e))
}

/// A string as it is in the file when it has no escapes, else unescaped.
pub(crate) struct Text<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Reads an object's members as an [`Obj`] (serde's reading, where [`Obj::of`] does
/// not read the text itself).
pub(crate) struct ObjVisitor;

impl<'de> Visitor<'de> for ObjVisitor {
    type Value = Obj<'de>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Obj<'de>, A::Error> {
        let mut members = Vec::with_capacity(a.size_hint().unwrap_or(8));
        while let Some(Text(k)) = a.next_key()? {
            members.push((k, a.next_value::<&RawValue>()?.get()));
        }
        Ok(Obj(members))
    }
}

/// A JSON object's members, each value its unparsed text (a slice of the input): one
/// pass over the object.
pub(crate) struct Obj<'a>(Vec<(Cow<'a, str>, &'a str)>);

impl<'a> Obj<'a> {
    /// `raw` (the text of a JSON value that serde has read: a [`RawValue`] or a part of
    /// one) read as an object; `None` when it is something else.
    ///
    /// The text is JSON already checked, so its members are found from quote to quote
    /// and bracket to bracket ([`super::chrome::scan`]) rather than by serde again: each
    /// span of a Jaeger or OTLP file is read so, with its tags and references, and serde
    /// going over the text once more for each was a third of their load. Keys with
    /// escapes are unescaped by serde; anything unexpected is left to serde's reading.
    pub(crate) fn of(raw: &'a str) -> Option<Obj<'a>> {
        if !raw.starts_with('{') {
            return None;
        }
        match Obj::members_at(raw, 0) {
            Some((members, _)) => Some(Obj(members)),
            None => Obj::by_serde(raw),
        }
    }

    /// serde's reading of the object `raw`.
    fn by_serde(raw: &'a str) -> Option<Obj<'a>> {
        serde_json::Deserializer::from_str(raw)
            .deserialize_map(ObjVisitor)
            .ok()
    }

    /// The members of the object at `raw[i]` (a `{`) and the index after it, found from
    /// quote to quote; `None` for anything else than plain members (keys with escapes
    /// unescaped) or a key that does not unescape: serde reads it then.
    #[allow(clippy::type_complexity)]
    fn members_at(raw: &'a str, mut i: usize) -> Option<(Vec<(Cow<'a, str>, &'a str)>, usize)> {
        use super::chrome::scan::{skip_string, skip_value, skip_ws};
        let t = raw.as_bytes();
        let mut members = Vec::with_capacity(8);
        i = skip_ws(t, i + 1);
        if t.get(i) == Some(&b'}') {
            return Some((members, i + 1));
        }
        loop {
            if t.get(i) != Some(&b'"') {
                return None;
            }
            let key_end = skip_string(t, i + 1)?;
            let key = &raw[i + 1..key_end - 1];
            let key = if key.contains('\\') {
                Cow::Owned(serde_json::from_str::<String>(&raw[i..key_end]).ok()?)
            } else {
                Cow::Borrowed(key)
            };
            i = skip_ws(t, key_end);
            if t.get(i) != Some(&b':') {
                return None;
            }
            i = skip_ws(t, i + 1);
            let end = skip_value(t, i).filter(|&e| e > i)?;
            members.push((key, &raw[i..end]));
            i = skip_ws(t, end);
            match t.get(i) {
                Some(b',') => i = skip_ws(t, i + 1),
                Some(b'}') => return Some((members, i + 1)),
                _ => return None,
            }
        }
    }

    /// The value of `key` (the last one, when the key repeats, as in a `Value`).
    pub(crate) fn get(&self, key: &str) -> Option<&'a str> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|&(_, v)| v)
    }

    /// The string value of the first of `keys` present (as `Value::as_str` of it).
    pub(crate) fn str_of(&self, keys: &[&str]) -> Option<Cow<'a, str>> {
        keys.iter().find_map(|k| self.get(k)).and_then(raw_str)
    }

    /// The members in file order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &'a str)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), *v))
    }
}

/// The text between the quotes of the string value `t` when it has no escapes (then it
/// is the string: serde would give the same).
fn plain_string(t: &str) -> Option<&str> {
    let inner = t.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('\\')).then_some(inner)
}

/// Whether `t` is an integer as JSON writes it (no leading zeros, no sign) that fits a
/// `u64`: its value is those digits, and serde writes it back so.
fn plain_u64(t: &str) -> Option<u64> {
    let b = t.as_bytes();
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) || (b.len() > 1 && b[0] == b'0') {
        return None;
    }
    t.parse().ok()
}

/// A string value (`raw`: its JSON text), unescaped; `None` for any other value (as
/// `Value::as_str`).
pub(crate) fn raw_str(t: &str) -> Option<Cow<'_, str>> {
    if !t.starts_with('"') {
        return None;
    }
    if let Some(s) = plain_string(t) {
        return Some(Cow::Borrowed(s));
    }
    // A string the strict reader refuses (a lone surrogate escape: the outline pass
    // skips strings without decoding them) is shown as written.
    Some(
        serde_json::from_str::<Text>(t).map_or_else(|_| Cow::Borrowed(&t[1..t.len() - 1]), |s| s.0),
    )
}

/// The elements of an array value (`raw`: its JSON text, read by serde before), each its
/// text; `None` for any other value.
pub(crate) fn raw_array(raw: &str) -> Option<Vec<&str>> {
    use super::chrome::scan::{skip_value, skip_ws};
    let t = raw.as_bytes();
    if t.first() != Some(&b'[') {
        return None;
    }
    let serde = || {
        serde_json::from_str::<Vec<&RawValue>>(raw)
            .ok()
            .map(|v| v.into_iter().map(RawValue::get).collect())
    };
    let mut out = Vec::new();
    let mut i = skip_ws(t, 1);
    if t.get(i) == Some(&b']') {
        return Some(out);
    }
    loop {
        let Some(end) = skip_value(t, i).filter(|&e| e > i) else {
            return serde();
        };
        out.push(&raw[i..end]);
        i = skip_ws(t, end);
        match t.get(i) {
            Some(b',') => i = skip_ws(t, i + 1),
            Some(b']') => return Some(out),
            _ => return serde(),
        }
    }
}

/// The elements of an array value read as objects ([`Obj::of`] of each; `None` for an
/// element that is not one), each object read once where it lies; `None` for any other
/// value than an array. What [`raw_array`] and [`Obj::of`] of its elements give.
pub(crate) fn raw_objects(raw: &str) -> Option<Vec<Option<Obj<'_>>>> {
    use super::chrome::scan::{skip_value, skip_ws};
    let t = raw.as_bytes();
    if t.first() != Some(&b'[') {
        return None;
    }
    let serde = || raw_array(raw).map(|v| v.into_iter().map(Obj::of).collect());
    let mut out = Vec::new();
    let mut i = skip_ws(t, 1);
    if t.get(i) == Some(&b']') {
        return Some(out);
    }
    loop {
        let read = (t.get(i) == Some(&b'{'))
            .then(|| Obj::members_at(raw, i))
            .flatten();
        let (obj, end) = match read {
            Some((members, end)) => (Some(Obj(members)), end),
            None => {
                let Some(end) = skip_value(t, i).filter(|&e| e > i) else {
                    return serde();
                };
                (Obj::of(&raw[i..end]), end)
            }
        };
        out.push(obj);
        i = skip_ws(t, end);
        match t.get(i) {
            Some(b',') => i = skip_ws(t, i + 1),
            Some(b']') => return Some(out),
            _ => return serde(),
        }
    }
}

/// A value parsed (for the small ones: numbers, attribute values, messages).
pub(crate) fn raw_value(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or(Value::Null)
}

/// [`as_u64`] of a value.
pub(crate) fn raw_u64(raw: &str) -> Option<u64> {
    if let Some(v) = plain_u64(raw) {
        return Some(v);
    }
    if let Some(s) = plain_string(raw) {
        // `as_u64` of a string.
        return s.trim().parse().ok();
    }
    as_u64(&raw_value(raw))
}

/// [`text_of`] of a value (a value the strict reader refuses, such as a number out of
/// range or nesting past its limit, as written).
pub(crate) fn raw_text(raw: &str) -> Cow<'_, str> {
    match raw_str(raw) {
        Some(s) => s,
        None if plain_u64(raw).is_some() || matches!(raw, "true" | "false" | "null") => {
            Cow::Borrowed(raw)
        }
        None => serde_json::from_str::<Value>(raw)
            .map_or(Cow::Borrowed(raw), |v| Cow::Owned(v.to_string())),
    }
}

/// `impl DeserializeSeed for $seed`: the seed is its own visitor, given any value.
macro_rules! seed_is_visitor {
    ($seed:ty => $value:ty) => {
        impl<'de> serde::de::DeserializeSeed<'de> for $seed {
            type Value = $value;
            fn deserialize<D: serde::de::Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<$value, D::Error> {
                d.deserialize_any(self)
            }
        }
    };
}
pub(crate) use seed_is_visitor;

/// A visitor's answer to every scalar (numbers, strings, booleans, null): `$value`.
macro_rules! scalars_are {
    ($value:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($value)
        }
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($value)
        }
    };
}
pub(crate) use scalars_are;

/// An array's elements, unparsed; `None` for any other value.
pub(crate) struct ElementsSeed;

seed_is_visitor!(ElementsSeed => Option<Vec<&'de RawValue>>);

impl<'de> Visitor<'de> for ElementsSeed {
    type Value = Option<Vec<&'de RawValue>>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an array")
    }
    scalars_are!(None);
    fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Self::Value, A::Error> {
        raw_elements(a).map(Some)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// A document's top level: an object's members or an array's elements, unparsed.
pub(crate) enum Top<'a> {
    Object(Obj<'a>),
    Array(Vec<&'a RawValue>),
    Other,
}

impl<'de> Deserialize<'de> for Top<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Top<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON document")
            }
            scalars_are!(Top::Other);
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Top<'de>, A::Error> {
                raw_elements(a).map(Top::Array)
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Top<'de>, A::Error> {
                ObjVisitor.visit_map(a).map(Top::Object)
            }
        }
        d.deserialize_any(V)
    }
}

/// [`shown`] of a value (as written when the strict reader refuses it).
pub(crate) fn raw_shown(raw: &str) -> String {
    match serde_json::from_str::<Value>(raw) {
        Ok(v) => shown(&v),
        Err(_) => {
            let s = raw;
            if s.chars().count() > 40 {
                format!("{}…", s.chars().take(40).collect::<String>())
            } else {
                s.to_string()
            }
        }
    }
}

/// An error at a JSON path.
pub(crate) fn invalid(file: &str, path: &str, message: impl Into<String>) -> ImportError {
    ImportError::Invalid {
        file: file.to_string(),
        location: path.to_string(),
        message: message.into(),
    }
}

/// A short rendering of a value for messages.
pub(crate) fn shown(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}

/// A non-negative integer given as a JSON number or a digit string.
pub(crate) fn as_u64(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1.8e19)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A JSON value as display text: strings unquoted, everything else as compact JSON.
pub(crate) fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Normalised id text: lowercase hex without leading zeros ("0" for all zeros). Other
/// text that is valid base64 of 8 or 16 bytes (a span or trace id) is decoded to that hex;
/// anything else is kept as it is, so ids that merely use base64's letters never collide.
pub(crate) fn norm_id(s: &str) -> String {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        let t = s.trim_start_matches('0');
        return if t.is_empty() {
            "0".to_string()
        } else {
            t.to_ascii_lowercase()
        };
    }
    match base64_decode(s) {
        Some(bytes) if bytes.len() == 8 || bytes.len() == 16 => {
            let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
            norm_id(&hex)
        }
        _ => s.to_string(),
    }
}

/// Standard or URL-safe base64, padding optional but right when present, and no bits
/// left over: `None` for text that is not the encoding of some bytes.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let data = s.trim_end_matches('=');
    let pad = s.len() - data.len();
    if data.len() % 4 == 1 || (pad > 0 && (!s.len().is_multiple_of(4) || pad > 2)) {
        return None;
    }
    let s = data;
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    (acc == 0).then_some(out)
}

/// A decimal number (`12`, `0.001`, `-3.5`) times `10^shift` (`shift` ≥ 0), rounded
/// half away from zero, from its digits (no float on the way): every digit within the
/// shift counts (`0.000005` seconds is 5000 ns).
pub(crate) fn decimal_scaled(s: &str, shift: i64) -> Option<i64> {
    let shift = usize::try_from(shift).ok()?;
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if int.len() + frac.len() == 0 || !digits(int) || !digits(frac) {
        return None;
    }
    let frac = frac.as_bytes();
    let mut v: i64 = 0;
    let int_digits = int.bytes().map(|b| b - b'0');
    let frac_digits = (0..shift).map(|k| frac.get(k).map_or(0, |b| b - b'0'));
    for d in int_digits.chain(frac_digits) {
        v = v.checked_mul(10)?.checked_add(i64::from(d))?;
    }
    if frac.get(shift).is_some_and(|&b| b >= b'5') {
        v = v.checked_add(1)?;
    }
    Some(if neg { -v } else { v })
}

/// A Go duration string (`"22938000ns"`, `"0.001s"`, `"1m30.5s"`, `"1.5ms"`, `"3µs"`) in
/// nanoseconds.
pub(crate) fn go_duration_ns(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(0);
    }
    let mut total: i64 = 0;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, tail) = rest.split_at(n);
        let u = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(u);
        let ns = match unit {
            "ns" => decimal_scaled(num, 0)?,
            "us" | "µs" | "μs" => decimal_scaled(num, 3)?,
            "ms" => decimal_scaled(num, 6)?,
            "s" => decimal_scaled(num, 9)?,
            "m" => decimal_scaled(num, 9)?.checked_mul(60)?,
            "h" => decimal_scaled(num, 9)?.checked_mul(3600)?,
            _ => return None,
        };
        total = total.checked_add(ns)?;
        rest = tail;
    }
    Some(if neg { -total } else { total })
}

/// RFC 3339 (`2017-01-26T16:46:31.639875-05:00`, `…Z`) as Unix nanoseconds.
pub(crate) fn rfc3339_ns(s: &str) -> Option<i64> {
    let b = s.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = b.get(r)?;
        if t.is_empty() || !t.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(t).ok()?.parse().ok()
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' ')) {
        return None;
    }
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac_ns = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let mut scale = 100_000_000i64;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            frac_ns += i64::from(c - b'0') * scale;
            scale /= 10;
            i += 1;
        }
    }
    let offset_s = match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => 0,
        Some(&sign @ (b'+' | b'-')) if i + 6 == b.len() => {
            let (oh, om) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
            let o = oh * 3600 + om * 60;
            if sign == b'+' { o } else { -o }
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_s;
    secs.checked_mul(1_000_000_000)?.checked_add(frac_ns)
}

/// A span id by value: ids whose normalised text ([`norm_id`]) is hex of up to 32 digits
/// (nearly all: 64- and 128-bit ids) as that number, any other as its normalised text.
/// Two ids are the same key exactly when their normalised texts are equal.
#[derive(Clone, PartialEq, Eq, Hash)]
enum IdKey {
    Hex(u128),
    Text(Box<str>),
}

impl IdKey {
    fn of(s: &str) -> IdKey {
        if let Some(v) = plain_hex(s) {
            return IdKey::Hex(v);
        }
        let hex = |t: &str| -> Option<u128> {
            let t = t.trim_start_matches('0');
            match t.len() {
                0 => Some(0),
                1..=32 => u128::from_str_radix(t, 16).ok(),
                _ => None,
            }
        };
        let t = s.trim();
        if !t.is_empty()
            && t.bytes().all(|b| b.is_ascii_hexdigit())
            && let Some(v) = hex(t)
        {
            return IdKey::Hex(v);
        }
        let n = norm_id(s);
        if !n.is_empty()
            && n.bytes().all(|b| b.is_ascii_hexdigit())
            && let Some(v) = hex(&n)
        {
            return IdKey::Hex(v);
        }
        IdKey::Text(n.into_boxed_str())
    }
}

/// `s` read as hex when it is nothing else (no spaces) and has at most 32 digits after
/// its leading zeros: [`IdKey::of`]'s answer for nearly every id, in one pass.
fn plain_hex(s: &str) -> Option<u128> {
    let mut v = 0u128;
    let mut digits = 0;
    for &c in s.as_bytes() {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        if digits > 0 || d > 0 {
            digits += 1;
            if digits > 32 {
                return None;
            }
            v = (v << 4) | u128::from(d);
        }
    }
    (!s.is_empty()).then_some(v)
}

/// A hash map with `foldhash` (fixed seed: the same order every run).
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::FixedState>;

/// Collects spans keyed by (trace, span) id and links them.
#[derive(Default)]
pub(crate) struct SpanCollector {
    /// Each (trace, span) key's first span (dense ids from 1).
    ids: FastMap<(u32, IdKey), u64>,
    /// Trace ids by their normalised text.
    traces: FastMap<String, u32>,
    /// The last trace id asked for, as written, and its number (spans of one trace come
    /// together).
    last_trace: Option<(String, u32)>,
    /// The spans (ids dense from 1), their names interned as they come.
    spans: IdColumns,
    names: Names,
    /// Parent keys of all spans, in order; span `i`'s are `parent_keys[parent_at[i]..
    /// parent_at[i + 1]]`, resolved in [`SpanCollector::finish`].
    parent_keys: Vec<(u32, IdKey)>,
    parent_at: Vec<u32>,
    attrs: SpanAttrs,
    tracks: Vec<Track>,
    track_info: Vec<TrackInfo>,
    track_of: FastMap<String, u32>,
    duplicates: u64,
    /// Extra notes.
    pub(crate) notes: Vec<String>,
}

impl SpanCollector {
    /// The service track called `name`.
    pub(crate) fn service_track(&mut self, name: &str) -> u32 {
        if let Some(&t) = self.track_of.get(name) {
            return t;
        }
        let t = self.tracks.len() as u32;
        self.tracks.push(Track::new(name));
        self.track_info.push(TrackInfo {
            kind: TrackKind::Service,
            ..TrackInfo::default()
        });
        self.track_of.insert(name.to_string(), t);
        t
    }

    /// The number of trace id `raw` (as written).
    fn trace(&mut self, raw: &str) -> u32 {
        if let Some((last, t)) = &self.last_trace
            && last == raw
        {
            return *t;
        }
        let next = self.traces.len() as u32;
        let t = *self.traces.entry(norm_id(raw)).or_insert(next);
        self.last_trace = Some((raw.to_string(), t));
        t
    }

    /// Adds a span. `parents` are candidate parent ids (trace, span) in order of
    /// preference (the first one present in the file wins). Spans sharing an id with an
    /// earlier one of the same trace are kept (Zipkin-style shared client/server spans)
    /// and counted; children link to the first.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push<K: AsRef<str>, V: AsRef<str>>(
        &mut self,
        trace: &str,
        span: &str,
        parents: &[(&str, &str)],
        start_ns: u64,
        dur_ns: u64,
        name: &str,
        track: u32,
        attrs: impl IntoIterator<Item = (K, V)>,
    ) {
        if self.parent_at.is_empty() {
            self.parent_at.push(0);
        }
        let dense = self.spans.len() as u64 + 1;
        let key = (self.trace(trace), IdKey::of(span));
        self.ids
            .entry(key)
            .and_modify(|_| self.duplicates += 1)
            .or_insert(dense);
        self.attrs.push(self.spans.len() as u32, attrs);
        let name = self.names.intern(name);
        self.spans.push(IdSpan {
            id: dense,
            parent_id: None,
            start_ns,
            dur_ns,
            name,
            track,
        });
        for &(t, s) in parents {
            let key = (self.trace(t), IdKey::of(s));
            self.parent_keys.push(key);
        }
        self.parent_at.push(self.parent_keys.len() as u32);
    }

    /// Number of spans so far.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// Links parents and builds the set.
    pub(crate) fn finish(mut self) -> SpanSet {
        self.resolve_parents();
        self.into_set()
    }

    /// Sets each span's parent to the first of its parent keys that a span has (the
    /// dense id of that key's first span), or to 0, which no span has, when none does:
    /// `from_ids` counts the orphan. A span that is its own parent keeps the link: the
    /// tree breaks it as a cycle.
    pub(crate) fn resolve_parents(&mut self) {
        for (i, parent) in self.spans.parent_id.iter_mut().enumerate() {
            let Some(keys) = self
                .parent_at
                .get(i..i + 2)
                .map(|at| &self.parent_keys[at[0] as usize..at[1] as usize])
                .filter(|keys| !keys.is_empty())
            else {
                continue;
            };
            *parent = Some(
                keys.iter()
                    .find_map(|k| self.ids.get(k).copied())
                    .unwrap_or(0),
            );
        }
        self.parent_keys = Vec::new();
        self.parent_at = Vec::new();
    }

    /// Joins collectors of consecutive parts of one document, each with its parents
    /// resolved ([`resolve_parents`](Self::resolve_parents)), into the collector that
    /// reading the parts one after another would have given, parents resolved; `None`
    /// when a trace id shows up in two parts (by its spans or by a reference), where a
    /// parent may be in another part: the caller reads the document in one go then.
    pub(crate) fn join(parts: Vec<SpanCollector>) -> Option<SpanCollector> {
        let mut seen: FastMap<&str, usize> = FastMap::default();
        for (p, part) in parts.iter().enumerate() {
            for t in part.traces.keys() {
                if seen.insert(t, p).is_some() {
                    return None;
                }
            }
        }
        drop(seen);
        let mut parts = parts.into_iter();
        let mut out = parts.next()?;
        out.ids = FastMap::default();
        for part in parts {
            out.append(part);
        }
        Some(out)
    }

    /// Appends a later part's spans (parents resolved within it).
    fn append(&mut self, part: SpanCollector) {
        let offset = self.spans.len() as u64;
        let names: Vec<NameId> = part
            .names
            .iter()
            .map(|(_, n)| self.names.intern(n))
            .collect();
        let tracks: Vec<u32> = part
            .tracks
            .iter()
            .map(|t| self.service_track(&t.name))
            .collect();
        self.attrs.append(&part.attrs, offset as u32);
        let s = part.spans;
        let shift = |d: u64| if d == 0 { 0 } else { d + offset };
        self.spans.id.extend(s.id.iter().map(|&d| shift(d)));
        self.spans
            .parent_id
            .extend(s.parent_id.iter().map(|p| p.map(shift)));
        self.spans.start_ns.extend_from_slice(&s.start_ns);
        self.spans.dur_ns.extend_from_slice(&s.dur_ns);
        self.spans
            .name
            .extend(s.name.iter().map(|&n| names[n as usize]));
        self.spans
            .track
            .extend(s.track.iter().map(|&t| tracks[t as usize]));
        self.duplicates += part.duplicates;
        self.notes.extend(part.notes);
    }

    /// The set of spans whose parents are resolved.
    fn into_set(self) -> SpanSet {
        let mut warnings = Warnings {
            notes: self.notes,
            ..Warnings::default()
        };
        if self.duplicates > 0 {
            warnings.notes.push(format!(
                "{} span{} share{} an id with an earlier span of the same trace (kept; children link to the first)",
                self.duplicates,
                if self.duplicates == 1 { "" } else { "s" },
                if self.duplicates == 1 { "s" } else { "" },
            ));
        }
        let mut set = SpanSet::from_id_columns_with(
            self.names,
            self.spans,
            self.tracks,
            warnings,
            self.attrs,
        );
        set.track_info = self.track_info;
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_normalise() {
        assert_eq!(norm_id("0000000000000002"), "2");
        assert_eq!(norm_id("00AB"), "ab");
        assert_eq!(norm_id("0000"), "0");
        // base64 of 8 bytes 00 00 00 00 00 64 7d 98.
        assert_eq!(norm_id("AAAAAABkfZg="), "647d98");
        assert_eq!(norm_id("not base64!"), "not base64!");
        // 16 bytes, padded and not.
        assert_eq!(
            norm_id("AAAAAAAAAAAAAAAAAAAAAQ=="),
            norm_id("00000000000000000000000000000001")
        );
        assert_eq!(norm_id("AAAAAAAAAAAAAAAAAAAAAQ"), "1");
    }

    /// Issue 14, failure 7: ids that are not hex were decoded as lenient base64, so `s1`
    /// and `s10` (and 28 more of `s0`..`s39`) were one span. Only base64 of 8 or 16 bytes,
    /// with right padding and no bits left over, is decoded.
    #[test]
    fn jaeger_ids_that_are_not_hex_collide() {
        let ids: Vec<String> = (0..40).map(|i| norm_id(&format!("s{i}"))).collect();
        let distinct: std::collections::HashSet<&String> = ids.iter().collect();
        assert_eq!(distinct.len(), 40, "{ids:?}");
        assert_eq!(ids[7], "s7");
        // Base64 of the wrong length, bad padding or bits left over is text.
        assert_eq!(norm_id("AAAAAABkfZg"), "647d98");
        assert_eq!(norm_id("AAAAAABkfQ=="), "AAAAAABkfQ==");
        assert_eq!(norm_id("AAAAAABkfZh="), "AAAAAABkfZh=");
        assert_eq!(norm_id("AAAAAABkfZg=="), "AAAAAABkfZg==");
    }

    /// Span keys are equal exactly when the ids' normalised texts are: hex of any case,
    /// leading zeros and length (past 32 digits too), base64 of 8 and 16 bytes, other text.
    #[test]
    fn id_keys_are_equal_when_normalised_ids_are() {
        let mut rng = crate::generator::Rng(9);
        let mut ids: Vec<String> = [
            "",
            "0",
            "00",
            "000000000000000000000000000000000",
            " 1 ",
            "1",
            "01",
            "A",
            "a",
            "AAAAAABkfZg=",
            "647d98",
            "00647D98",
            "AAAAAAAAAAAAAAAAAAAAAQ==",
            "s1",
            "s10",
            "ffffffffffffffffffffffffffffffff",
            "0ffffffffffffffffffffffffffffffff",
            "1ffffffffffffffffffffffffffffffff",
            "10000000000000000000000000000000",
            "010000000000000000000000000000000",
            "not base64!",
            "g",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for _ in 0..400 {
            let r = rng.next();
            let digits = 1 + (r % 36) as usize;
            let mut id: String = (0..digits)
                .map(|i| {
                    let x = rng.next();
                    // Mostly zeros up front, some upper case.
                    let v = if i < 3 && x.is_multiple_of(2) {
                        0
                    } else {
                        (x >> 8) % 16
                    };
                    let c = char::from_digit(v as u32, 16).unwrap_or('0');
                    if x.is_multiple_of(5) {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            if r.is_multiple_of(7) {
                id.push('x');
            }
            ids.push(id);
        }
        for a in &ids {
            for b in &ids {
                assert_eq!(
                    IdKey::of(a) == IdKey::of(b),
                    norm_id(a) == norm_id(b),
                    "{a:?} and {b:?}"
                );
            }
        }
    }

    /// An object read in place answers as a `Value` would: the last of repeated keys,
    /// strings unescaped, other values as their compact text.
    #[test]
    fn objects_read_in_place_answer_as_values() {
        let raw: &RawValue =
            serde_json::from_str(r#"{"a": 1, "b": "x\"y", "a": [1, 2], "c": {"d": 1.50}}"#)
                .unwrap();
        let o = Obj::of(raw.get()).unwrap();
        assert_eq!(o.get("a"), Some("[1, 2]"));
        assert_eq!(o.str_of(&["b"]).as_deref(), Some("x\"y"));
        assert_eq!(o.str_of(&["a", "b"]), None);
        assert_eq!(raw_text(o.get("c").unwrap()), r#"{"d":1.5}"#);
        assert_eq!(raw_text(o.get("a").unwrap()), "[1,2]");
        assert_eq!(raw_u64(o.get("a").unwrap()), None);
        assert!(Obj::of(o.get("a").unwrap()).is_none());
        assert_eq!(raw_array(o.get("a").unwrap()).map(|a| a.len()), Some(2));
    }

    /// A random JSON value of depth up to `depth`: objects (keys with escapes, repeated
    /// keys), arrays, strings with escapes, numbers of every form, literals, JSON's
    /// whitespace between tokens.
    fn random_value(rng: &mut crate::generator::Rng, depth: u32) -> String {
        let ws =
            |rng: &mut crate::generator::Rng| [" ", "", "\n", "\t", "\r\n "][rng.below(5) as usize];
        let strings = [
            r#""a""#,
            r#""""#,
            r#""x\"y""#,
            r#""\\""#,
            r#""\u0041b""#,
            r#""tab\tand\/""#,
            r#""}],{[""#,
            r#""\ud800""#,
            r#""é€""#,
        ];
        let numbers = [
            "0",
            "7",
            "200",
            "-3",
            "1.50",
            "1e3",
            "-0.0",
            "18446744073709551615",
            "18446744073709551616",
            "00",
            "12345678901234567890123",
        ];
        match rng.below(if depth == 0 { 3 } else { 5 }) {
            0 => strings[rng.below(strings.len() as u64) as usize].to_string(),
            1 => {
                let n = numbers[rng.below(numbers.len() as u64) as usize];
                // "00" is not JSON: a string of it instead.
                if n == "00" {
                    "\"00\"".to_string()
                } else {
                    n.to_string()
                }
            }
            2 => ["true", "false", "null", "\"12\"", "\" 42 \""][rng.below(5) as usize].to_string(),
            3 => {
                let items: Vec<String> = (0..rng.below(4))
                    .map(|_| format!("{}{}{}", ws(rng), random_value(rng, depth - 1), ws(rng)))
                    .collect();
                format!("[{}{}]", items.join(","), ws(rng))
            }
            _ => {
                let keys = ["a", "b", "k\\\"q", "\\u0061", "spanID", ""];
                let members: Vec<String> = (0..rng.below(5))
                    .map(|_| {
                        let k = keys[rng.below(keys.len() as u64) as usize];
                        let (w1, w2, w3) = (ws(rng), ws(rng), ws(rng));
                        format!(
                            "{w1}\"{k}\"{w2}:{w3}{}{}",
                            random_value(rng, depth - 1),
                            ws(rng)
                        )
                    })
                    .collect();
                format!("{{{}{}}}", members.join(","), ws(rng))
            }
        }
    }

    /// Objects and arrays found from quote to quote give serde's members and elements,
    /// and the values read from their text what the `Value` helpers read: on random
    /// values of every kind.
    #[test]
    fn objects_read_in_place_are_read_as_serde_reads_them() {
        let mut rng = crate::generator::Rng(31);
        let mut objects = 0;
        for _ in 0..3000 {
            let text = random_value(&mut rng, 4);
            let Ok(raw) = serde_json::from_str::<&RawValue>(&text) else {
                panic!("not JSON: {text}");
            };
            let raw = raw.get();
            let by_serde = || {
                serde_json::Deserializer::from_str(raw)
                    .deserialize_map(ObjVisitor)
                    .ok()
                    .map(|o| o.0)
            };
            let ours = Obj::of(raw).map(|o| o.0);
            if raw.starts_with('{') {
                assert_eq!(ours, by_serde(), "{raw}");
                objects += 1;
            } else {
                assert!(ours.is_none(), "{raw}");
            }
            let arr = serde_json::from_str::<Vec<&RawValue>>(raw)
                .ok()
                .map(|v| v.into_iter().map(RawValue::get).collect::<Vec<_>>());
            assert_eq!(raw_array(raw), arr, "{raw}");
            #[allow(clippy::type_complexity)]
            fn members<'a>(v: Vec<Option<Obj<'a>>>) -> Vec<Option<Vec<(Cow<'a, str>, &'a str)>>> {
                v.into_iter().map(|o| o.map(|o| o.0)).collect()
            }
            let by_elements = raw_array(raw).map(|v| v.into_iter().map(Obj::of).collect());
            assert_eq!(
                raw_objects(raw).map(members),
                by_elements.map(members),
                "{raw}"
            );
            let v: Option<Value> = serde_json::from_str(raw).ok();
            assert_eq!(raw_u64(raw), v.as_ref().and_then(as_u64), "{raw}");
            if let Some(v) = &v {
                assert_eq!(raw_text(raw), text_of(v), "{raw}");
                assert_eq!(raw_str(raw).as_deref(), v.as_str(), "{raw}");
            }
        }
        assert!(objects > 500, "{objects}");
    }

    #[test]
    fn times() {
        assert_eq!(
            rfc3339_ns("2017-01-26T16:46:31.639875-05:00"),
            Some(1_485_467_191_639_875_000)
        );
        assert_eq!(rfc3339_ns("1970-01-01T00:00:01Z"), Some(1_000_000_000));
        assert_eq!(rfc3339_ns("1970-01-01T00:00:01"), None);
        assert_eq!(rfc3339_ns("2017-13-01T00:00:00Z"), None);
        assert_eq!(go_duration_ns("22938000ns"), Some(22_938_000));
        assert_eq!(go_duration_ns("0.001s"), Some(1_000_000));
        assert_eq!(go_duration_ns("1m30.5s"), Some(90_500_000_000));
        assert_eq!(go_duration_ns("1.5µs"), Some(1500));
        assert_eq!(go_duration_ns("5 parsecs"), None);
        assert_eq!(go_duration_ns("99999999999999999999h"), None);
        assert_eq!(decimal_scaled("1.5", 0), Some(2));
        assert_eq!(decimal_scaled("7", 6), Some(7_000_000));
        // Every digit within the shift counts: proto3 JSON durations ("0.000005s") and
        // seconds with nanoseconds.
        assert_eq!(go_duration_ns("0.000005s"), Some(5000));
        assert_eq!(go_duration_ns("1.234567891s"), Some(1_234_567_891));
        assert_eq!(go_duration_ns("2.5000004ms"), Some(2_500_000));
        assert_eq!(go_duration_ns("2.5000005ms"), Some(2_500_001));
        assert_eq!(decimal_scaled("-0.25", 1), Some(-3));
        assert_eq!(decimal_scaled(".5", 2), Some(50));
        assert_eq!(decimal_scaled("1.", 0), Some(1));
        for bad in ["", ".", "1.2.3", "1e3", "--1", "9223372036854775808"] {
            assert_eq!(decimal_scaled(bad, 0), None, "{bad}");
        }
    }
}
