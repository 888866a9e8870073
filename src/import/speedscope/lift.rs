//! A big speedscope file's sampled stacks read without serde going through them.
//!
//! Nearly all of a sampled profile is its `samples`: arrays of frame indices, which serde
//! reads number by number through a visitor, on one core (10 s of a 1 GB file). Here each
//! `"samples": [` key's array is found by its brackets (memchr from bracket to bracket,
//! strings skipped), serde reads the document with `[]` in its place (frames, weights,
//! headers: the rest), and the arrays are read by hand from the file, in parts on all
//! cores, cut just after a stack (each part tells its distinct stacks apart; the parts'
//! few are matched when they are joined). A stack of plain indices (`[1,22,333]`, JSON white
//! space anywhere) is read directly; any other element (a fraction, an exponent, a
//! negative or ten-digit number, a string, a nested array) is handed to serde alone, as
//! the whole read would read it.
//!
//! The lifted arrays are used only where serde then finds them as profiles' `samples`,
//! each once; otherwise, or when an element does not read, `None`: the whole document goes
//! to serde, whose errors point into the file itself.

use super::{BAD_INDEX, Ev, FileJson, FlatStacks, StackSeed, events};
use crate::import::ImportError;
use crate::import::speedscope::head::find_key;
use serde::de::DeserializeSeed;
use serde_json::value::RawValue;

/// Arrays of at least this many bytes are read in parts, one per core.
pub(super) const PART_MIN: usize = 4 << 20;

/// Files below this size are read by serde whole (lifting would save nothing).
pub(super) const LIFT_MIN_BYTES: usize = 1 << 16;

/// A `samples` or `events` array in the file: `text[start]` is its `[`, `end` one past
/// its `]` (for events, as guessed: [`events::guess_end`]), and `cuts` are places just
/// after one of a `samples` array's elements, at least `part_min` bytes apart.
struct Lifted {
    start: usize,
    end: usize,
    cuts: Vec<usize>,
    events: bool,
}

/// The file's samples, with every `samples` and `events` array read by hand (parts of
/// `part_min` bytes or more); `None` where the whole document must go to serde.
pub(super) fn parse_lifted(
    file: &str,
    text: &[u8],
    part_min: usize,
) -> Option<Result<super::Samples, ImportError>> {
    let mut lifts = find_lifts(text, part_min)?;
    if lifts.is_empty() {
        return None;
    }
    // A key of one kind inside the other's array: serde's to read.
    lifts.sort_by_key(|l| l.start);
    if lifts.windows(2).any(|w| w[1].start < w[0].end) {
        return None;
    }
    // The document with `[]` in each array's place, and where each `[]` is.
    let lifted_bytes: usize = lifts.iter().map(|l| l.end - l.start).sum();
    let mut rest = Vec::with_capacity(text.len() - lifted_bytes + 2 * lifts.len());
    let mut places = Vec::with_capacity(lifts.len());
    let mut at = 0;
    for l in &lifts {
        rest.extend_from_slice(&text[at..l.start]);
        places.push(rest.len());
        rest.extend_from_slice(b"[]");
        at = l.end;
    }
    rest.extend_from_slice(&text[at..]);
    let json: FileJson<&RawValue, &RawValue> = serde_json::from_slice(&rest).ok()?;
    let mut claimed = vec![false; lifts.len()];
    // A `[]` of ours (of the kind asked for), or a value left in place (`null`, a string:
    // serde's).
    let mut ours = |raw: &RawValue, events: bool| -> Option<Option<&Lifted>> {
        let offset = (raw.get().as_ptr() as usize).wrapping_sub(rest.as_ptr() as usize);
        match places.binary_search(&offset) {
            Ok(k) if lifts[k].events == events => {
                claimed[k] = true;
                Some(Some(&lifts[k]))
            }
            Ok(_) => None,
            Err(_) => Some(None),
        }
    };
    let mut profiles = Vec::new();
    for p in json.profiles? {
        let stacks = match p.samples {
            None => None,
            Some(raw) => Some(match ours(raw, false)? {
                Some(l) => read_array(text, l)?,
                None => serde_json::from_str::<FlatStacks>(raw.get()).ok()?,
            }),
        };
        let events = match p.events {
            None => None,
            Some(raw) => Some(match ours(raw, true)? {
                Some(l) => events::read(text, l.start, l.end, part_min)?,
                None => serde_json::from_str::<Vec<Ev>>(raw.get()).ok()?,
            }),
        };
        profiles.push(p.with_read(stacks, events));
    }
    if claimed.contains(&false) {
        return None;
    }
    let json = FileJson {
        shared: json.shared,
        profiles: Some(profiles),
        name: json.name,
        active_profile_index: json.active_profile_index,
    };
    Some(super::read(file, json))
}

/// The file's `events` and `samples` arrays (`None` when one does not end).
fn find_lifts(text: &[u8], part_min: usize) -> Option<Vec<Lifted>> {
    // The events arrays first, then the `samples` keys between them: an evented file is
    // nearly all events, whose letters and quotes made the search for a `"samples"` that
    // is not there take 1 s of a 1 GB file (numbers, a sampled file's bulk, are passed
    // over fast by the search for `"events"`).
    let mut lifts = Vec::new();
    let mut from = 0;
    while let Some(start) = find_key(text, b"\"events\"", from, b'[') {
        let end = events::guess_end(text, start)?;
        from = end;
        lifts.push(Lifted {
            start,
            end,
            cuts: Vec::new(),
            events: true,
        });
    }
    let gaps: Vec<(usize, usize)> = (0..=lifts.len())
        .map(|k| {
            let from = k.checked_sub(1).map_or(0, |j| lifts[j].end);
            (from, lifts.get(k).map_or(text.len(), |l| l.start))
        })
        .collect();
    for (mut from, to) in gaps {
        while let Some(start) = find_key(&text[..to], b"\"samples\"", from, b'[') {
            let lifted = scan(text, start, part_min)?;
            from = lifted.end;
            lifts.push(lifted);
        }
    }
    Some(lifts)
}

/// The array at `text[start]` (a `[`): where it ends, and cuts after its elements
/// (arrays at depth 1) every `part_min` bytes or more. `None` if it does not end.
fn scan(text: &[u8], start: usize, part_min: usize) -> Option<Lifted> {
    let (end, cuts) = crate::import::chrome::scan::array_cuts(text, start, part_min)?;
    Some(Lifted {
        start,
        end,
        cuts,
        events: false,
    })
}

/// The stacks of a lifted array, its parts read on all cores and joined in order.
fn read_array(text: &[u8], l: &Lifted) -> Option<FlatStacks> {
    let threads = crate::par::cores();
    // The cuts nearest to even shares of the array, one part per core.
    let mut bounds = vec![l.start + 1];
    for t in 1..threads {
        let goal = l.start + (l.end - l.start) * t / threads;
        let k = l.cuts.partition_point(|&c| c < goal);
        if let Some(&c) = l.cuts.get(k)
            && c > *bounds.last().expect("non-empty")
        {
            bounds.push(c);
        }
    }
    bounds.push(l.end);
    let parts = crate::import::chunks::run(&bounds, |j, a, b| read_part(text, a, b, j == 0));
    let mut parts = parts.into_iter();
    let mut all = parts.next().flatten()?;
    for part in parts {
        all.append(&part?);
    }
    Some(all)
}

/// JSON's white space, skipped.
pub(super) use crate::import::chrome::scan::json_ws as ws;

/// The elements between `from` and `to`: `from` is just after the array's `[` (`first`)
/// or just after an element, `to` just after an element or one past the array's `]`.
fn read_part(text: &[u8], from: usize, to: usize, first: bool) -> Option<FlatStacks> {
    let mut out = FlatStacks::default();
    let mut i = from;
    if first {
        i = ws(text, i);
        if text.get(i) == Some(&b']') {
            return (i + 1 == to).then_some(out);
        }
        i = element(text, i, &mut out)?;
    }
    while i < to {
        i = ws(text, i);
        match text.get(i)? {
            b',' => i = element(text, ws(text, i + 1), &mut out)?,
            b']' => return (i + 1 == to).then_some(out),
            _ => return None,
        }
    }
    (i == to).then_some(out)
}

/// Reads the element at `text[i]` into `out`; the index after it.
fn element(text: &[u8], i: usize, out: &mut FlatStacks) -> Option<usize> {
    let mark = out.frames.len();
    if text.get(i) == Some(&b'[') {
        let mut j = ws(text, i + 1);
        if text.get(j) == Some(&b']') {
            out.end_sample(mark);
            return Some(j + 1);
        }
        while let Some((index, after)) = plain_index(text, j) {
            out.frames.push(index);
            j = ws(text, after);
            match text.get(j) {
                Some(b',') => j = ws(text, j + 1),
                Some(b']') => {
                    out.end_sample(mark);
                    return Some(j + 1);
                }
                _ => break,
            }
        }
        out.frames.truncate(mark);
    }
    by_serde(text, i, out)
}

/// A frame index of one to nine digits (no leading zero) at `text[j]`, not followed by
/// more of a number, and the index after it.
fn plain_index(text: &[u8], j: usize) -> Option<(u32, usize)> {
    let digits = text
        .get(j..)?
        .iter()
        .take(10)
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 || digits > 9 || (digits > 1 && text[j] == b'0') {
        return None;
    }
    if let Some(b'.' | b'e' | b'E' | b'0'..=b'9') = text.get(j + digits) {
        return None;
    }
    let v = text[j..j + digits]
        .iter()
        .fold(0u32, |v, &d| v * 10 + u32::from(d - b'0'));
    Some((v, j + digits))
}

/// The element at `text[i]` read by serde as the whole read reads it.
fn by_serde(text: &[u8], i: usize, out: &mut FlatStacks) -> Option<usize> {
    let end = crate::import::chrome::scan::skip_value(text, i)?;
    let mark = out.frames.len();
    let mut de = serde_json::Deserializer::from_slice(&text[i..end]);
    let is_array = StackSeed(&mut out.frames).deserialize(&mut de).ok()?;
    de.end().ok()?;
    if !is_array {
        out.frames.push(BAD_INDEX);
    }
    out.end_sample(mark);
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::samples::Samples;

    use crate::generator::Rng;

    /// JSON white space, often none.
    fn ws(r: &mut Rng) -> &'static str {
        [" ", "", "", "\n", "\t ", "\r\n", ""][r.below(7) as usize]
    }

    /// One element of a `samples` array: mostly plain stacks, sometimes what only serde
    /// reads (or refuses: a leading zero).
    fn element(r: &mut Rng, frames: u64) -> String {
        match r.below(40) {
            0 => "[]".into(),
            1 => "[1.0,2]".into(),
            2 => "[1e0]".into(),
            3 => "[-1]".into(),
            4 => "[1234567890]".into(),
            5 => "\"x\"".into(),
            6 => "null".into(),
            7 => "[[1]]".into(),
            8 => "{\"a\":[1]}".into(),
            9 => "[0]".into(),
            10 => format!("[{}]", frames + r.below(3)),
            _ => {
                let n = 1 + r.below(12);
                let idx: Vec<String> = (0..n)
                    .map(|_| format!("{}{}{}", ws(r), r.below(frames), ws(r)))
                    .collect();
                format!("[{}]", idx.join(","))
            }
        }
    }

    /// An evented profile's events: frames opened and closed in order at growing times,
    /// written plainly or in what only serde reads (an exponent, a sign, another key, an
    /// escape), sometimes out of order or with a bad frame.
    fn events(r: &mut Rng, frames: u64) -> String {
        let (mut open, mut at, mut out) = (Vec::new(), 0u64, Vec::new());
        for _ in 0..r.below(80) {
            at += r.below(3);
            let close = !open.is_empty() && r.below(2) == 0;
            let frame = if close {
                open.pop().expect("open")
            } else {
                let f = r.below(frames + 1);
                open.push(f);
                f
            };
            let kind = if close { "C" } else { "O" };
            let (w1, w2) = (ws(r), ws(r));
            out.push(match r.below(25) {
                0 => format!("{{\"type\":\"{kind}\",\"frame\":{frame},\"at\":{at}e0}}"),
                1 => format!("{{\"at\":{at}.25,{w1}\"frame\":{frame},\"type\":\"{kind}\"}}"),
                2 => format!("{{\"type\":\"{kind}\",\"frame\":{frame},\"at\":{at},\"x\":[1]}}"),
                3 => format!(
                    "{{\"type\":\"\\u004{}\",\"frame\":{frame},\"at\":{at}}}",
                    if close { "3" } else { "f" }
                ),
                4 => format!("{{\"type\":\"{kind}\",\"frame\":-{frame},\"at\":{at}}}"),
                5 => format!(
                    "{{\"type\":\"{kind}\",\"frame\":{frame},\"at\":{}}}",
                    at.saturating_sub(2)
                ),
                _ => format!("{{{w1}\"type\":\"{kind}\",\"frame\":{frame},{w2}\"at\":{at}}}"),
            });
        }
        while let Some(f) = open.pop() {
            at += 1;
            out.push(format!("{{\"type\":\"C\",\"frame\":{f},\"at\":{at}}}"));
        }
        let sep = format!(",{}", ws(r));
        out.join(&sep)
    }

    /// A file of one to three profiles (sampled, sometimes evented), frames first or last.
    fn document(r: &mut Rng) -> String {
        let frames = 1 + r.below(30);
        let names: Vec<String> = (0..frames)
            .map(|f| {
                if r.below(50) == 0 {
                    // A key of that name in a string, and in a frame object.
                    format!("{{\"name\":\"f{f} \\\"samples\\\": [\",\"samples\":[[1]]}}")
                } else {
                    format!("{{\"name\":\"f{f}\"}}")
                }
            })
            .collect();
        let shared = format!("\"shared\":{{\"frames\":[{}]}}", names.join(","));
        let mut profiles = Vec::new();
        for p in 0..1 + r.below(3) {
            if r.below(4) == 0 {
                profiles.push(format!(
                    "{{\"type\":\"evented\",\"name\":\"e{p}\",\"unit\":\"none\",\"startValue\":0,\
                     \"endValue\":9,\"events\":{}[{}]}}",
                    ws(r),
                    events(r, frames)
                ));
                continue;
            }
            let n = r.below(300);
            let samples: Vec<String> = (0..n).map(|_| element(r, frames)).collect();
            let weights = n + u64::from(r.below(30) == 0);
            let weights: Vec<String> = (0..weights)
                .map(|_| ["1", "0.5", "2", "0"][r.below(4) as usize].to_string())
                .collect();
            let sep = |r: &mut Rng| format!("{},{}", ws(r), ws(r));
            profiles.push(format!(
                "{{\"type\":\"sampled\",\"name\":\"p{p}\",\"unit\":\"milliseconds\",\
                 \"startValue\":0,\"endValue\":1,\"samples\":{}[{}{}]{},\"weights\":[{}]}}",
                ws(r),
                ws(r),
                samples
                    .iter()
                    .map(|e| format!("{e}{}", sep(r)))
                    .collect::<String>()
                    .trim_end_matches(|c: char| c == ',' || c.is_whitespace()),
                ws(r),
                weights.join(",")
            ));
        }
        let profiles = format!("\"profiles\":[{}]", profiles.join(","));
        if r.below(2) == 0 {
            format!("{{{shared},{profiles}}}")
        } else {
            format!("{{\"$schema\":\"x\",{profiles},{shared}}}")
        }
    }

    /// What a load gives, to compare: threads, streams (times, stacks, weights), the
    /// stacks' frames, the warnings.
    fn fingerprint(s: &Samples) -> String {
        let mut out = format!("{:?} timed {} exact {}\n", s, s.timed, s.exact);
        for t in &s.threads {
            out += &format!("thread {}\n", t.name);
        }
        for st in &s.streams {
            let w: Vec<u64> = (0..st.len()).map(|i| st.weight.get(i)).collect();
            out += &format!(
                "{} {} {:?} {:?} {:?}\n",
                st.thread, st.event, st.time, st.stack, w
            );
        }
        for k in 0..s.stacks.len() {
            out += &format!("{:?}\n", s.stacks.frames_of(k as u32));
        }
        out += &format!("{:?}", s.meta().warnings.notes);
        out
    }

    fn whole(text: &[u8]) -> Result<Samples, ImportError> {
        let json: FileJson<FlatStacks> =
            serde_json::from_slice(text).map_err(|e| ImportError::json("f.json", &e))?;
        super::super::read("f.json", json)
    }

    /// Lifted or whole, a file gives the same samples, warnings or error, in parts of
    /// any size; damaged files too, wherever the lifted read goes ahead.
    #[test]
    fn lifted_stacks_read_as_serde_reads_them() {
        let (mut lifted, mut declined, mut damaged_same) = (0, 0, 0);
        let mut lifted_events = 0;
        for seed in 1..400u64 {
            let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let doc = document(&mut r);
            let want = whole(doc.as_bytes());
            let part_min = [1, 16, 200, 1 << 20][r.below(4) as usize];
            match parse_lifted("f.json", doc.as_bytes(), part_min) {
                Some(got) => {
                    lifted += 1;
                    lifted_events += usize::from(doc.contains("\"events\""));
                    match (&got, &want) {
                        (Ok(g), Ok(w)) => assert_eq!(fingerprint(g), fingerprint(w), "{doc}"),
                        (Err(g), Err(w)) => assert_eq!(g.to_string(), w.to_string(), "{doc}"),
                        _ => panic!("lifted {:?}, whole {:?}: {doc}", got.is_ok(), want.is_ok()),
                    }
                }
                None => declined += 1,
            }
            let bytes = doc.as_bytes();
            for _ in 0..20 {
                let mut bad = bytes.to_vec();
                let i = r.below(bad.len() as u64) as usize;
                bad[i] = b"[]{},:\" 0-9e.\n\x0c"[r.below(15) as usize];
                let Some(got) = parse_lifted("f.json", &bad, part_min) else {
                    continue;
                };
                match (got, whole(&bad)) {
                    (Ok(g), Ok(w)) => assert_eq!(fingerprint(&g), fingerprint(&w)),
                    (Err(g), Err(w)) => {
                        assert_eq!(g.to_string(), w.to_string());
                        damaged_same += 1;
                    }
                    (g, w) => panic!(
                        "damaged: lifted {:?}, whole {:?}: {}",
                        g.map(|_| ()),
                        w.map(|_| ()),
                        String::from_utf8_lossy(&bad)
                    ),
                }
            }
        }
        assert!(
            lifted > 250 && declined > 5 && lifted_events > 100,
            "{lifted} lifted ({lifted_events} with events), {declined} declined"
        );
        assert!(damaged_same > 50, "{damaged_same}");
    }

    /// A recording in `data/recordings`, decompressed, lifted in parts of every size and
    /// whole, gives the same samples, with at least `threads` threads.
    fn lifted_as_whole(name: &str, threads: usize) {
        let path = format!("{}/data/recordings/{name}", env!("CARGO_MANIFEST_DIR"));
        let gz = std::fs::read(&path).expect("the recording");
        let text = crate::import::decode::decode(&path, &gz, crate::import::Limits::default())
            .expect("gzip")
            .text;
        assert!(text.len() >= LIFT_MIN_BYTES);
        let want = fingerprint(&whole(&text).expect("loads"));
        assert!(want.matches("thread ").count() >= threads, "{want}");
        for part_min in [1, 100, 1000, 1 << 20] {
            let got = parse_lifted("f.json", &text, part_min).expect("lifted");
            assert_eq!(fingerprint(&got.expect("loads")), want);
        }
    }

    /// A real recording: `py-spy record -r 1000 --format speedscope` of three Python
    /// threads (four profiles, `shared` last, 200 KB).
    #[test]
    fn a_py_spy_recording_reads_as_serde_reads_it() {
        lifted_as_whole("py-spy-threads.speedscope.json.gz", 4);
    }

    /// A real speedscope export (speedscope 1.25.0's Export of the perf recording of
    /// Python threads in `data/recordings`: 32 evented profiles, times in seconds as
    /// JavaScript writes them, `0.0005024999991292134`).
    #[test]
    fn a_speedscope_export_reads_as_serde_reads_it() {
        lifted_as_whole("speedscope-export-evented.speedscope.json.gz", 30);
    }

    /// A `samples` array that is not a profile's (a frame's member) sends the file to
    /// serde whole; so does one inside a string only when it is a key.
    #[test]
    fn only_profiles_samples_are_lifted() {
        let profile = r#"{"type":"sampled","unit":"none","samples":[[0],[0,1]],"weights":[1,2]}"#;
        let plain = format!(
            r#"{{"shared":{{"frames":[{{"name":"a"}},{{"name":"b"}}]}},"profiles":[{profile}]}}"#
        );
        assert!(parse_lifted("f.json", plain.as_bytes(), 1).is_some_and(|r| r.is_ok()));
        let in_frame = format!(
            r#"{{"shared":{{"frames":[{{"name":"a","samples":[1]}},{{"name":"b"}}]}},"profiles":[{profile}]}}"#
        );
        assert!(parse_lifted("f.json", in_frame.as_bytes(), 1).is_none());
        assert!(whole(in_frame.as_bytes()).is_ok());
        let in_string = format!(
            r#"{{"shared":{{"frames":[{{"name":"\"samples\": [x"}},{{"name":"b"}}]}},"profiles":[{profile}]}}"#
        );
        let got = parse_lifted("f.json", in_string.as_bytes(), 1).expect("lifted");
        assert_eq!(
            fingerprint(&got.unwrap()),
            fingerprint(&whole(in_string.as_bytes()).unwrap())
        );
        // Two `samples` in one profile: serde's error, from the whole file.
        let twice = plain.replace(r#""weights""#, r#""samples":[[1]],"weights""#);
        assert!(parse_lifted("f.json", twice.as_bytes(), 1).is_none());
        assert!(whole(twice.as_bytes()).is_err());
    }

    /// Parts are cut after whole stacks, and a big array is read in several.
    #[test]
    fn cuts_fall_after_stacks() {
        let text = br#"{"samples": [[1,2],"x",[3, [4]],[5]]}"#;
        let start = find_key(text, b"\"samples\"", 0, b'[').unwrap();
        let l = scan(text, start, 1).unwrap();
        assert_eq!(&text[l.start..l.end], br#"[[1,2],"x",[3, [4]],[5]]"#);
        let after: Vec<&[u8]> = l.cuts.iter().map(|&c| &text[c - 3..c]).collect();
        assert_eq!(after, [&b"1,2]"[1..], b"4]]", b"[5]"]);
        let stacks = read_array(text, &l).unwrap();
        assert_eq!(stacks.len(), 4);
        assert_eq!(stacks.get(0), [1, 2]);
        assert_eq!(stacks.get(1), [BAD_INDEX]);
        assert_eq!(stacks.get(2), [3, BAD_INDEX]);
        assert_eq!(stacks.get(3), [5]);
    }

    #[test]
    fn plain_indices_and_what_serde_must_read() {
        assert_eq!(plain_index(b"0,", 0), Some((0, 1)));
        assert_eq!(plain_index(b"123456789]", 0), Some((123_456_789, 9)));
        assert_eq!(plain_index(b"1234567890]", 0), None);
        assert_eq!(plain_index(b"01]", 0), None);
        assert_eq!(plain_index(b"1.0]", 0), None);
        assert_eq!(plain_index(b"1e3]", 0), None);
        assert_eq!(plain_index(b"-1]", 0), None);
        assert_eq!(plain_index(b"7", 0), Some((7, 1)));
    }

    /// `samples` arrays are found before, between and after `events` arrays (looked for
    /// only between them).
    #[test]
    fn samples_are_found_around_events() {
        let text = br#"{"profiles":[{"samples":[[0]]},{"events":[{"type":"O","frame":0,"at":1}]},{"samples":[[1]]},{"events":[]},{"samples":[[2]],"weights":[1]}]}"#;
        let lifts = find_lifts(text, 1).expect("arrays end");
        let mut kinds: Vec<(usize, bool)> = lifts.iter().map(|l| (l.start, l.events)).collect();
        kinds.sort_unstable();
        let kinds: Vec<bool> = kinds.into_iter().map(|k| k.1).collect();
        assert_eq!(kinds, [false, true, false, true, false]);
    }
}
