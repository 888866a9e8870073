//! A big evented profile's `events` read without serde going through them.
//!
//! An evented profile is nearly all its `events`, objects of three members
//! (`{"type":"O","frame":12,"at":345}`), which serde reads key by key on one core (a 1 GB
//! file: 6 s of its 10). The array is lifted out of serde's reading as a `samples` array
//! is ([`super::lift`]), but found more cheaply: its end is guessed by counting brackets
//! alone (an event holds none; strings are not looked at), and it is cut into one part a
//! core where an event ends and the next begins (`},{`, found by looking near each share
//! of the array). The parts are read at once, each event by hand when it is plain (the
//! three keys, `"O"`, `"C"` or another plain string, numbers without a sign or an
//! exponent whose digits fit 64 bits, made into the `f64` serde makes of them) and by
//! serde alone otherwise.
//!
//! A guess is checked by the reading: the first part starts at the array's start, and
//! each part must end exactly where the next one starts, reading whole events; so each
//! start is an event's, and the last part must meet the array's `]` exactly at the guessed
//! end. Anything else (a bracket in a string, a `},{` inside one) gives `None`, and the
//! file goes to serde whole.

use super::Ev;
use super::EvKind;
use super::lift::ws;
use serde::Deserialize;

/// The powers of ten exact in an `f64` (to 1e22), as serde divides by them.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The end (one past its `]`) of the array at `text[start]` (a `[`), counting brackets
/// and nothing else; `None` when they do not balance before the end of the text.
pub(super) fn guess_end(text: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    loop {
        let k = i + memchr::memchr2(b'[', b']', text.get(i..)?)?;
        if text[k] == b'[' {
            depth += 1;
        } else {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(k + 1);
            }
        }
        i = k + 1;
    }
}

/// The first place at or after `from` and before `limit` just after a `}` that is
/// followed by `,` and `{` (JSON white space between): where a part may start.
fn boundary(text: &[u8], from: usize, limit: usize) -> Option<usize> {
    let mut i = from;
    while let Some(k) = memchr::memchr(b'}', text.get(i..limit)?) {
        let after = i + k + 1;
        let comma = ws(text, after);
        if text.get(comma) == Some(&b',') && text.get(ws(text, comma + 1)) == Some(&b'{') {
            return Some(after);
        }
        i = after;
    }
    None
}

/// The events of the array `text[start..end]` (`end` as [`guess_end`] gave it), in
/// parts of at least `part_min` bytes, one per core; `None` when the guess does not hold
/// or an event does not read.
pub(super) fn read(text: &[u8], start: usize, end: usize, part_min: usize) -> Option<Vec<Ev>> {
    let threads = crate::par::cores();
    let parts = ((end - start) / part_min.max(1)).clamp(1, threads);
    let mut bounds = vec![start + 1];
    for t in 1..parts {
        let goal = start + (end - start) * t / parts;
        let last = *bounds.last().expect("non-empty");
        if let Some(b) = boundary(text, goal.max(last + 1), end) {
            bounds.push(b);
        }
    }
    bounds.push(end);
    let last = bounds.len() - 2;
    let read =
        crate::import::chunks::run(&bounds, |j, a, b| read_part(text, a, b, j == 0, j == last));
    let mut read = read.into_iter();
    let mut all = read.next().flatten()?;
    for part in read {
        all.extend_from_slice(&part?);
    }
    Some(all)
}

/// The events between `from` and `to`: `from` is just after the array's `[` (`first`)
/// or just after an event, `to` one past the array's `]` (`last`) or just after an event.
fn read_part(text: &[u8], from: usize, to: usize, first: bool, last: bool) -> Option<Vec<Ev>> {
    // A plain event takes 30 bytes or more.
    let mut out = Vec::with_capacity((to - from) / 32);
    let mut i = from;
    if first {
        i = ws(text, i);
        if text.get(i) == Some(&b']') {
            return (last && i + 1 == to).then_some(out);
        }
        i = event(text, i, &mut out)?;
    }
    while i < to {
        i = ws(text, i);
        match text.get(i)? {
            b',' => i = event(text, ws(text, i + 1), &mut out)?,
            b']' => return (last && i + 1 == to).then_some(out),
            _ => return None,
        }
    }
    (!last && i == to).then_some(out)
}

/// Reads the event at `text[i]` into `out`; the index after it.
fn event(text: &[u8], i: usize, out: &mut Vec<Ev>) -> Option<usize> {
    if let Some((ev, end)) = plain_event(text, i) {
        out.push(ev);
        return Some(end);
    }
    let end = crate::import::chrome::scan::skip_value(text, i)?;
    let mut de = serde_json::Deserializer::from_slice(&text[i..end]);
    let ev = Ev::deserialize(&mut de).ok()?;
    de.end().ok()?;
    out.push(ev);
    Some(end)
}

/// An event of the keys `type`, `frame` and `at` (any of them, in any order), with plain
/// values, and the index after it; `None` for anything else.
fn plain_event(text: &[u8], i: usize) -> Option<(Ev, usize)> {
    if text.get(i) != Some(&b'{') {
        return None;
    }
    let mut ev = Ev {
        kind: EvKind::Other,
        frame: f64::NAN,
        at: f64::NAN,
    };
    let mut j = ws(text, i + 1);
    if text.get(j) == Some(&b'}') {
        return Some((ev, j + 1));
    }
    loop {
        let key = text.get(j..)?;
        let (field, len) = if key.starts_with(b"\"type\"") {
            (0, 6)
        } else if key.starts_with(b"\"frame\"") {
            (1, 7)
        } else if key.starts_with(b"\"at\"") {
            (2, 4)
        } else {
            return None;
        };
        j = ws(text, j + len);
        if text.get(j) != Some(&b':') {
            return None;
        }
        j = ws(text, j + 1);
        j = match field {
            0 => {
                let (kind, after) = plain_kind(text, j)?;
                ev.kind = kind;
                after
            }
            _ => {
                let (v, after) = plain_number(text, j)?;
                if field == 1 {
                    ev.frame = v;
                } else {
                    ev.at = v;
                }
                after
            }
        };
        j = ws(text, j);
        match text.get(j)? {
            b',' => j = ws(text, j + 1),
            b'}' => return Some((ev, j + 1)),
            _ => return None,
        }
    }
}

/// A string of printable ASCII without escapes at `text[j]` as an event type, and the
/// index after it.
fn plain_kind(text: &[u8], j: usize) -> Option<(EvKind, usize)> {
    if text.get(j) != Some(&b'"') {
        return None;
    }
    let len = text.get(j + 1..)?.iter().position(|&b| b == b'"')?;
    let s = &text[j + 1..j + 1 + len];
    if s.iter().any(|&b| !(0x20..0x7f).contains(&b) || b == b'\\') {
        return None;
    }
    let kind = match s {
        b"O" => EvKind::Open,
        b"C" => EvKind::Close,
        _ => EvKind::Other,
    };
    Some((kind, j + len + 2))
}

/// A number without a sign or an exponent whose digits fit 64 bits and whose fraction
/// has at most 22 digits, at `text[j]`, and the index after it: the `f64` serde reads
/// (its digits as an integer, rounded to an `f64`, divided by the exact power of ten; a
/// number of more digits, a sign or an exponent is left to serde).
fn plain_number(text: &[u8], mut j: usize) -> Option<(f64, usize)> {
    let mut sig = 0u64;
    let mut frac = 0;
    match *text.get(j)? {
        b'0' => j += 1,
        b'1'..=b'9' => {
            while let Some(&d @ b'0'..=b'9') = text.get(j) {
                sig = sig.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
                j += 1;
            }
        }
        _ => return None,
    }
    if text.get(j) == Some(&b'.') {
        j += 1;
        while let Some(&d @ b'0'..=b'9') = text.get(j) {
            sig = sig.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            frac += 1;
            j += 1;
        }
        if frac == 0 {
            return None;
        }
    }
    if matches!(text.get(j), Some(b'e' | b'E' | b'.' | b'0'..=b'9')) {
        return None;
    }
    Some((sig as f64 / *POW10.get(frac)?, j))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::Rng;

    fn by_serde(s: &str) -> Option<Ev> {
        serde_json::from_str::<Ev>(s).ok()
    }

    fn same(a: Option<Ev>, b: Option<Ev>) -> bool {
        match (a, b) {
            (Some(a), Some(b)) => {
                a.kind == b.kind
                    && a.frame.to_bits() == b.frame.to_bits()
                    && a.at.to_bits() == b.at.to_bits()
            }
            (a, b) => a.is_none() && b.is_none(),
        }
    }

    /// Whatever an event reads as by hand, serde reads it as, to the bit; what it leaves
    /// to serde is what serde's reading needs (exponents, signs, long numbers, escapes,
    /// other keys).
    #[test]
    fn plain_events_read_as_serde_reads_them() {
        let plain = [
            r#"{"type":"O","frame":0,"at":1}"#,
            r#"{ "at" : 12.5 , "frame" : 3 , "type" : "C" }"#,
            r#"{"type":"X","frame":7,"at":0.1}"#,
            r#"{}"#,
            r#"{"frame":1,"frame":2}"#,
            r#"{"at":999999999999999}"#,
            r#"{"at":0.00000000000001}"#,
            r#"{"at":123456.789012345}"#,
            // As speedscope writes JavaScript's numbers: 17 digits and more.
            r#"{"at":0.0005024999991292134}"#,
            r#"{"at":18446744073709551615}"#,
            r#"{"at":1844674407370955161.5}"#,
            r#"{"at":0.0000000000000000000001}"#,
        ];
        for s in plain {
            let got = plain_event(s.as_bytes(), 0).map(|(e, end)| {
                assert_eq!(end, s.len(), "{s}");
                e
            });
            assert!(got.is_some(), "{s} is plain");
            assert!(same(got, by_serde(s)), "{s}");
        }
        let to_serde = [
            r#"{"type":"O","frame":-1,"at":1}"#,
            r#"{"type":"O","frame":1,"at":1e3}"#,
            r#"{"type":"O","frame":1,"at":18446744073709551616}"#,
            r#"{"type":"O","frame":1,"at":1.8446744073709551616}"#,
            r#"{"type":"O","frame":1,"at":0.00000000000000000000001}"#,
            r#"{"type":"O","frame":1,"at":01}"#,
            r#"{"type":"O","frame":1,"at":1.}"#,
            r#"{"type":"\u004f","frame":1,"at":1}"#,
            r#"{"type":"O","frame":1,"at":1,"x":2}"#,
            r#"{"type":"O","frame":"1","at":1}"#,
            r#"{"type":null,"frame":1,"at":1}"#,
            r#"{"type":"O","frame":1,"at":1,}"#,
            r#"[1]"#,
        ];
        for s in to_serde {
            assert!(plain_event(s.as_bytes(), 0).is_none(), "{s} goes to serde");
        }
        // Random decimals, short and as long as JavaScript writes them: the same bits
        // as serde's.
        let (mut r, mut plain) = (Rng(5), 0);
        for _ in 0..50_000 {
            let int = r.next() % 10u64.pow(r.below(10) as u32 + 1);
            let frac_digits = r.below(20) as usize;
            let frac = r.next() % 10u64.pow(frac_digits.min(19) as u32);
            let s = if frac_digits == 0 {
                format!(r#"{{"at":{int}}}"#)
            } else {
                format!(r#"{{"at":{int}.{frac:0frac_digits$}}}"#)
            };
            if let Some((got, _)) = plain_event(s.as_bytes(), 0) {
                plain += 1;
                assert!(same(Some(got), by_serde(&s)), "{s}");
            }
        }
        // Those whose digits overflow 64 bits go to serde.
        assert!(plain > 30_000, "{plain}");
    }

    fn events_text(r: &mut Rng, n: usize) -> String {
        let ws = |r: &mut Rng| [" ", "", "", "\n", "\t "][r.below(5) as usize];
        let items: Vec<String> = (0..n)
            .map(|k| match r.below(30) {
                0 => r#"{"type":"O","frame":1,"at":1e1}"#.to_string(),
                1 => r#"{"type":"C","frame":1,"at":-2,"note":"},{"}"#.to_string(),
                2 => r#"{"type":"O","note":"[x","frame":2,"at":3}"#.to_string(),
                _ => format!(
                    r#"{{"type":"{}",{}"frame":{},"at":{}.{}}}"#,
                    ["O", "C"][r.below(2) as usize],
                    ws(r),
                    r.below(50),
                    k,
                    r.below(10)
                ),
            })
            .collect();
        let sep = format!(",{}", ws(r));
        format!("[{}]", items.join(&sep))
    }

    /// In parts of any size, an events array reads as serde reads it; a guess that a
    /// bracket in a string spoils is refused, not believed.
    #[test]
    fn events_in_parts_read_as_serde_reads_them() {
        let mut r = Rng(11);
        let mut refused = 0;
        for _ in 0..300 {
            let n = r.below(200) as usize;
            let text = events_text(&mut r, n);
            let want: Vec<Ev> = serde_json::from_str(&text).expect("events");
            let bytes = text.as_bytes();
            let Some(end) = guess_end(bytes, 0) else {
                refused += 1;
                continue;
            };
            for part_min in [1, 40, 1000, 1 << 20] {
                match read(bytes, 0, end, part_min) {
                    Some(got) => {
                        assert_eq!(got.len(), want.len(), "{text}");
                        for (g, w) in got.iter().zip(&want) {
                            assert!(same(Some(*g), Some(*w)), "{text}");
                        }
                    }
                    None => {
                        // Only where a string holds a bracket, or a `},{` a part
                        // could start at.
                        assert!(text.contains("[x") || text.contains(r#""},{""#), "{text}");
                        refused += 1;
                    }
                }
            }
        }
        assert!((1..1200).contains(&refused), "{refused}");
        // Cut short: refused.
        let text = br#"[{"type":"O","frame":1,"at":1},{"type":"C","frame":1,"at":2}]"#;
        let end = guess_end(text, 0).unwrap();
        assert_eq!(end, text.len());
        assert_eq!(read(text, 0, end, 1).map(|e| e.len()), Some(2));
        assert!(read(text, 0, end - 1, 1).is_none());
        // A part that starts in a string is refused by the part before it.
        let text = br#"[{"type":"O","note":"},{","frame":1,"at":1},{"type":"C","frame":1,"at":2}]"#;
        let inside = text.windows(3).position(|w| w == b"},{").unwrap() + 1;
        let end = guess_end(text, 0).unwrap();
        assert!(read_part(text, 1, inside, true, false).is_none());
        assert_eq!(
            read_part(text, 1, end, true, true).map(|e| e.len()),
            Some(2)
        );
    }
}
