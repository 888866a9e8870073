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
//! These documents are small next to Chrome traces (a Jaeger UI trace holds thousands of
//! spans, not millions), so they are read into a `serde_json::Value`, whose parser stops
//! at 128 levels of nesting: the bounded recursion below (attribute values) cannot run
//! away.

use super::ImportError;
use crate::model::Warnings;
use crate::model::names::Names;
use crate::model::spans::{RawSpan, SpanAttrs, SpanSet, Track, TrackInfo, TrackKind};
use serde_json::Value;
use std::collections::HashMap;

/// Reads the whole document as a `Value`, with JSON errors at a line and column.
pub(crate) fn read_value(file: &str, text: &[u8]) -> Result<Value, ImportError> {
    serde_json::from_slice(text).map_err(|e| ImportError::json(file, &e))
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

/// A decimal number (`12`, `0.001`, `-3.5`) times `10^shift`, rounded half away from
/// zero, from its digits (no float on the way).
pub(crate) fn decimal_scaled(s: &str, shift: i64) -> Option<i64> {
    // The Chrome importer's parser does exactly this for shift 3 (µs → ns).
    let ns = super::chrome::micros_to_ns(s)?;
    match shift {
        3 => Some(ns),
        k if k > 3 => ns.checked_mul(10i64.checked_pow((k - 3) as u32)?),
        k => {
            // Fewer than 3: divide with rounding (only used for ns, shift 0).
            let p = 10i64.checked_pow((3 - k) as u32)?;
            let q = ns / p;
            let r = ns % p;
            Some(if r.abs() * 2 >= p { q + ns.signum() } else { q })
        }
    }
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

/// Collects spans keyed by (trace, span) id text and links them.
#[derive(Default)]
pub(crate) struct SpanCollector {
    ids: HashMap<(String, String), u64>,
    spans: Vec<RawSpan>,
    /// Parent key of each span, resolved in [`SpanCollector::finish`].
    parent_keys: Vec<Vec<(String, String)>>,
    attrs: SpanAttrs,
    tracks: Vec<Track>,
    track_info: Vec<TrackInfo>,
    track_of: HashMap<String, u32>,
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

    /// Adds a span. `parents` are candidate parent ids in order of preference (the first
    /// one present in the file wins). Spans sharing an id with an earlier one of the same
    /// trace are kept (Zipkin-style shared client/server spans) and counted; children link
    /// to the first.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn push(
        &mut self,
        trace: &str,
        span: &str,
        parents: Vec<(String, String)>,
        start_ns: u64,
        dur_ns: u64,
        name: String,
        track: u32,
        attrs: Vec<(String, String)>,
    ) {
        let dense = self.spans.len() as u64 + 1;
        let key = (norm_id(trace), norm_id(span));
        match self.ids.entry(key) {
            std::collections::hash_map::Entry::Occupied(_) => self.duplicates += 1,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(dense);
            }
        }
        self.attrs.push(self.spans.len() as u32, attrs);
        self.spans.push(RawSpan {
            id: dense,
            parent_id: None,
            start_ns,
            dur_ns,
            name,
            track,
        });
        self.parent_keys.push(
            parents
                .into_iter()
                .map(|(t, s)| (norm_id(&t), norm_id(&s)))
                .collect(),
        );
    }

    /// Number of spans so far.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// Links parents and builds the set.
    pub(crate) fn finish(mut self) -> SpanSet {
        for (s, keys) in self.spans.iter_mut().zip(&self.parent_keys) {
            if keys.is_empty() {
                continue;
            }
            // Unknown parent: id 0, which no span has, so `from_ids` counts the orphan. A
            // span that is its own parent keeps the link: the tree breaks it as a cycle.
            s.parent_id = Some(
                keys.iter()
                    .find_map(|k| self.ids.get(k).copied())
                    .unwrap_or(0),
            );
        }
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
        let mut set =
            SpanSet::from_ids_with(Names::new(), self.spans, self.tracks, warnings, self.attrs);
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
    }
}
