//! The start of a big speedscope file as a small document of its own, for a preview: the
//! file's `shared` frames, and the first profile's header with its first samples and as
//! many of its weights (sampled), or its first events and a close at the last one's time
//! for each frame still open there (evented).
//!
//! speedscope's own exports, py-spy's and most of the corpus' files write `shared` after
//! the profiles, and a profile's `weights` after its `samples`: the head of a big file holds
//! samples without their frames' names or their weights. Both are found without parsing
//! what lies between: inside a sampled profile's `samples` (arrays of numbers) no string
//! can occur, so the key `"weights"` after them is the profile's; `shared` is the last
//! top-level key of that name, found from the end of the file (or the first, when it is
//! written before the profiles). The samples taken are exact, as far as they go: the
//! preview is the profile's first samples, as a Chrome trace's is its first events.

use crate::import::chrome::scan::skip_ws;
use memchr::memmem;
use serde::de::IgnoredAny;

/// The document, and how many bytes of the input's samples or events it holds.
pub struct Head {
    /// `{"shared":…,"profiles":[{…,"samples":[…],"weights":[…]}]}`, or with `"events"`.
    pub doc: Vec<u8>,
    /// Bytes of samples or events taken.
    pub sample_bytes: usize,
}

/// The end of the JSON value starting at `text[at..]` (after white space), if it is whole.
pub(in crate::import) fn value_end(text: &[u8], at: usize) -> Option<usize> {
    let mut values =
        serde_json::Deserializer::from_slice(text.get(at..)?).into_iter::<IgnoredAny>();
    values.next()?.ok()?;
    Some(at + values.byte_offset())
}

/// Where the value of the key `"name"` found at `key` starts (past `:` and white space),
/// when `key` is followed by a colon (a key, not a string value).
fn after_colon(text: &[u8], key: usize, name_len: usize) -> Option<usize> {
    let at = skip_ws(text, key + name_len);
    (text.get(at) == Some(&b':')).then(|| skip_ws(text, at + 1))
}

/// Where the value of the first key `name` (quoted) at or after `from` starts, when it
/// starts with `open` (a key: the quote before it is not escaped, a colon follows).
pub(in crate::import) fn find_key(
    text: &[u8],
    name: &[u8],
    from: usize,
    open: u8,
) -> Option<usize> {
    let finder = memmem::Finder::new(name);
    let mut at = from;
    while let Some(i) = finder.find(text.get(at..)?) {
        let key = at + i;
        if (key == 0 || text[key - 1] != b'\\')
            && let Some(v) = after_colon(text, key, name.len())
            && text.get(v) == Some(&open)
        {
            return Some(v);
        }
        at = key + 1;
    }
    None
}

/// The document of the first profile's first samples or events (up to `budget` bytes of
/// them, whole ones), or `None` when the file is not laid out as expected (a sampled
/// profile's weights before its samples, an evented one's events not the last of its
/// members, events that do not nest, no frames).
pub fn head_document(text: &[u8], budget: usize) -> Option<Head> {
    // The profiles array and its first profile.
    let profiles = find_key(text, b"\"profiles\"", 0, b'[')?;
    let first = skip_ws(text, profiles + 1);
    if text.get(first) != Some(&b'{') {
        return None;
    }
    // Its members up to the first array, which is its samples or its events.
    let arrays = [&b"\"samples\""[..], b"\"events\""];
    let (key, is_events) = arrays
        .iter()
        .enumerate()
        .filter_map(|(i, name)| Some((memmem::find(&text[first..], name)? + first, i == 1)))
        .min()?;
    if is_events {
        evented(text, first, key, budget)
    } else {
        sampled(text, first, budget)
    }
}

/// `text[from..to]` without the white space and commas around it, if it is a list of
/// object members (`"k": value, …`; empty is fine): what a profile holds between the end
/// of its samples or events and its next member or its end, such as the `startValue`,
/// `type` and `unit` of a writer that sorts keys.
fn members(text: &[u8], from: usize, to: usize) -> Option<&[u8]> {
    let part = text.get(from..to)?;
    let trim = |b: &u8| b.is_ascii_whitespace() || *b == b',';
    let a = part.iter().position(|b| !trim(b)).unwrap_or(part.len());
    let z = part.iter().rposition(|b| !trim(b)).map_or(a, |z| z + 1);
    let part = &part[a..z];
    let mut obj = Vec::with_capacity(part.len() + 2);
    obj.push(b'{');
    obj.extend_from_slice(part);
    obj.push(b'}');
    serde_json::from_slice::<IgnoredAny>(&obj).ok()?;
    Some(part)
}

/// The end of the object whose members continue at `at` (just past one member's value):
/// the index of its `}`, each further member skipped whole.
fn object_end(text: &[u8], mut at: usize) -> Option<usize> {
    loop {
        at = skip_ws(text, at);
        match text.get(at)? {
            b'}' => return Some(at),
            b',' => {
                let key = skip_ws(text, at + 1);
                let colon = skip_ws(text, value_end(text, key)?);
                if text.get(colon) != Some(&b':') {
                    return None;
                }
                at = value_end(text, skip_ws(text, colon + 1))?;
            }
            _ => return None,
        }
    }
}

/// The frames: `shared` written before the profiles (a top-level member ahead of
/// `profiles`, as many writers put it), or after them (speedscope's own exports, py-spy
/// and rbspy: the last such key in the file, found from its end); its value's range.
fn shared(text: &[u8]) -> Option<std::ops::Range<usize>> {
    if let Some(ahead) = shared_ahead(text) {
        return ahead;
    }
    let finder = memmem::FinderRev::new(b"\"shared\"");
    let mut to = text.len();
    let start = loop {
        let key = finder.rfind(&text[..to])?;
        if let Some(v) = after_colon(text, key, 8)
            && text.get(v) == Some(&b'{')
        {
            break v;
        }
        to = key;
    };
    Some(start..value_end(text, start)?)
}

/// `shared` among the top-level members before `profiles`, walked one by one from the
/// start of the document: `Some` of its value's range (`Some(None)` for a value that is
/// not a whole object), or `None` when `profiles` comes first or the head is not plain
/// JSON members, and then `shared` is looked for from the end. Walking the members reads
/// only those ahead of `profiles`; looking from the end would read the whole file (0.4 s
/// of a 1 GB file's preview) and could take a member of that name inside a later profile.
fn shared_ahead(text: &[u8]) -> Option<Option<std::ops::Range<usize>>> {
    let mut at = skip_ws(text, 0);
    if text.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = skip_ws(text, at);
        if text.get(at) != Some(&b'"') {
            return None;
        }
        let key_end = value_end(text, at)?;
        let value = after_colon(text, at, key_end - at)?;
        match &text[at..key_end] {
            b"\"profiles\"" => return None,
            b"\"shared\"" => {
                let whole = (text.get(value) == Some(&b'{'))
                    .then(|| value_end(text, value))
                    .flatten();
                return Some(whole.map(|end| value..end));
            }
            _ => {}
        }
        at = skip_ws(text, value_end(text, value)?);
        if text.get(at) != Some(&b',') {
            return None;
        }
        at += 1;
    }
}

/// An evented profile whose `events` key is at `key`: its first whole events, then a close
/// for each frame left open, innermost first, at the last event's time.
fn evented(text: &[u8], first: usize, key: usize, budget: usize) -> Option<Head> {
    let header = &text[first..key];
    let events = after_colon(text, key, 8).filter(|&v| text.get(v) == Some(&b'['))?;
    let mut at = events + 1;
    let start = at;
    let mut end = at;
    let mut open: Vec<f64> = Vec::new();
    let mut last_at = None;
    let mut closed_array = false;
    loop {
        at = skip_ws(text, at);
        match text.get(at) {
            Some(b',') => at += 1,
            Some(b'{') => {
                if end - start >= budget {
                    break;
                }
                // Events are flat objects: the first `}` ends one.
                let close = at + memchr::memchr(b'}', text.get(at..)?)?;
                let ev: super::Ev = serde_json::from_slice(&text[at..=close]).ok()?;
                match ev.kind {
                    super::EvKind::Open => open.push(ev.frame),
                    // Only the innermost frame closes (the reader refuses the rest).
                    super::EvKind::Close if open.pop() != Some(ev.frame) => return None,
                    _ => {}
                }
                last_at = Some(ev.at);
                at = close + 1;
                end = at;
            }
            Some(b']') => {
                closed_array = true;
                break;
            }
            _ => return None,
        }
    }
    let last_at = last_at?;
    // The members after the events, where a writer that sorts keys puts `name`,
    // `startValue`, `type` and `unit` (events hold no arrays: theirs ends at the next
    // `]`). Looked for when the header does not say the type, or when the events ended
    // within the budget; else the rest of the events is not read.
    let typed = memmem::find(header, b"\"evented\"").is_some();
    let tail = if closed_array || !typed {
        let close = if closed_array {
            at
        } else {
            end + memchr::memchr(b']', &text[end..])?
        };
        members(text, close + 1, object_end(text, close + 1)?)?
    } else {
        &[]
    };
    if !typed && memmem::find(tail, b"\"evented\"").is_none() {
        return None;
    }
    let shared = shared(text)?;
    let mut doc = Vec::with_capacity(header.len() + (end - start) + open.len() * 48 + 64);
    doc.extend_from_slice(b"{\"shared\":");
    doc.extend_from_slice(&text[shared]);
    doc.extend_from_slice(b",\"profiles\":[");
    doc.extend_from_slice(header);
    doc.extend_from_slice(b"\"events\":[");
    doc.extend_from_slice(&text[start..end]);
    for frame in open.iter().rev() {
        doc.extend_from_slice(
            format!(",{{\"type\":\"C\",\"frame\":{frame},\"at\":{last_at}}}").as_bytes(),
        );
    }
    doc.push(b']');
    if !tail.is_empty() {
        doc.push(b',');
        doc.extend_from_slice(tail);
    }
    doc.extend_from_slice(b"}]}");
    Some(Head {
        doc,
        sample_bytes: end - start,
    })
}

/// A sampled profile starting at `first`: its first whole samples and as many weights.
fn sampled(text: &[u8], first: usize, budget: usize) -> Option<Head> {
    let samples = find_key(text, b"\"samples\"", first, b'[')?;
    // Everything of the profile before its samples: its type, name, unit, start and end
    // (whole values; the samples key's own quote is where it stops).
    let key = memmem::rfind(&text[first..samples], b"\"samples\"")? + first;
    let header = &text[first..key];
    if memmem::find(header, b"\"weights\"").is_some()
        || memmem::find(header, b"\"events\"").is_some()
    {
        return None;
    }
    // Whole samples, each `[numbers]`, while the budget lasts.
    let mut at = samples + 1;
    let mut taken = 0usize;
    let start = at;
    let mut end = at;
    let mut all = false;
    loop {
        at = skip_ws(text, at);
        match text.get(at) {
            Some(b',') => at += 1,
            Some(b'[') => {
                if end - start >= budget {
                    break;
                }
                let close = at + memchr::memchr(b']', text.get(at..)?)?;
                taken += 1;
                at = close + 1;
                end = at;
            }
            Some(b']') => {
                all = true;
                at += 1;
                break;
            }
            _ => return None,
        }
    }
    if taken == 0 {
        return None;
    }
    // Their weights: the first `taken` numbers of the profile's weights array.
    let weights = find_key(text, b"\"weights\"", if all { at } else { end }, b'[')?;
    // The members between the samples and the weights (a writer that sorts keys puts
    // `startValue`, `type` and `unit` there): the samples end at the last `]` before the
    // weights' key.
    let w_key = memmem::rfind(&text[end..weights], b"\"weights\"")? + end;
    let close = end + memchr::memrchr(b']', &text[end..w_key])?;
    let tail = members(text, close + 1, w_key)?;
    if memmem::find(header, b"\"sampled\"").is_none()
        && memmem::find(tail, b"\"sampled\"").is_none()
    {
        return None;
    }
    let mut w_end = weights + 1;
    for k in 0..taken {
        let rest = text.get(w_end..)?;
        let stop = memchr::memchr2(b',', b']', rest)?;
        if rest[stop] == b']' && k + 1 < taken {
            return None;
        }
        w_end += stop + 1;
    }
    let shared = shared(text)?;

    let mut doc = Vec::with_capacity(header.len() + (end - start) + (w_end - weights) + 64);
    doc.extend_from_slice(b"{\"shared\":");
    doc.extend_from_slice(&text[shared]);
    doc.extend_from_slice(b",\"profiles\":[");
    doc.extend_from_slice(header);
    doc.extend_from_slice(b"\"samples\":[");
    doc.extend_from_slice(&text[start..end]);
    doc.push(b']');
    if !tail.is_empty() {
        doc.push(b',');
        doc.extend_from_slice(tail);
    }
    doc.extend_from_slice(b",\"weights\":");
    doc.extend_from_slice(&text[weights..w_end - 1]);
    doc.extend_from_slice(b"]}]}");
    Some(Head {
        doc,
        sample_bytes: end - start,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::Rng;
    use serde_json::{Value, json};

    /// A sampled profile of `n` samples over 50 frames, weights 1..9, its members in
    /// the order speedscope and py-spy write them, with `shared` before or after the
    /// profiles (and a second, evented profile after it; with `shared` first, that one
    /// has a member of that name too, which a search from the end would take).
    fn file(n: usize, shared_first: bool, seed: u64) -> (Value, Vec<u8>) {
        let mut rng = Rng(seed);
        let frames: Vec<Value> = (0..50)
            .map(|i| json!({"name": format!("f{i}"), "file": "a.py", "line": i}))
            .collect();
        let samples: Vec<Vec<u64>> = (0..n)
            .map(|_| (0..1 + rng.next() % 12).map(|_| rng.next() % 50).collect())
            .collect();
        let weights: Vec<u64> = (0..n).map(|_| 1 + rng.next() % 9).collect();
        let (s, w) = (json!(samples), json!(weights));
        let profile = format!(
            "{{\"type\":\"sampled\",\"name\":\"main\",\"unit\":\"milliseconds\",\
             \"startValue\":0,\"endValue\":100,\"samples\":{s},\n\"weights\":{w}}}"
        );
        let evented = r#"{"type":"evented","name":"ev","unit":"milliseconds","startValue":0,
            "endValue":10,"events":[{"type":"O","frame":1,"at":0},{"type":"C","frame":1,"at":10}]}"#;
        let shared = json!({"frames": frames});
        let text = if shared_first {
            let decoy = evented.replace(
                "\"events\"",
                "\"shared\":{\"frames\":[{\"name\":\"decoy\"}]},\"events\"",
            );
            format!("{{\"$schema\":\"x\",\"shared\":{shared},\"profiles\":[{profile},{decoy}]}}")
        } else {
            format!(
                "{{\"exporter\":\"t\",\"profiles\":[{profile},{evented}],\"shared\":{shared},\
                 \"name\":\"shared\"}}"
            )
        };
        let v = json!({"shared": shared, "profile": {"type": "sampled", "name": "main",
            "unit": "milliseconds", "startValue": 0, "endValue": 100,
            "samples": s, "weights": w}});
        (v, text.into_bytes())
    }

    /// The first `k` samples and weights of `v`'s profile as a file of their own.
    fn first(v: &Value, k: usize) -> Vec<u8> {
        let mut p = v["profile"].clone();
        let s: Vec<Value> = p["samples"].as_array().unwrap()[..k].to_vec();
        let w: Vec<Value> = p["weights"].as_array().unwrap()[..k].to_vec();
        p["samples"] = Value::Array(s);
        p["weights"] = Value::Array(w);
        serde_json::to_vec(&json!({"shared": v["shared"], "profiles": [p]})).unwrap()
    }

    fn profile(doc: &[u8]) -> crate::model::Profile {
        super::super::parse("t.json", doc)
            .unwrap()
            .aggregate(Default::default())
            .unwrap()
    }

    /// The document holds exactly the first samples the budget allows, their weights and
    /// every frame, whether `shared` comes first or last: its profile is that of a file
    /// of those samples alone.
    #[test]
    fn the_head_is_the_first_samples_with_their_frames_and_weights() {
        for (shared_first, seed) in [(false, 1), (true, 2), (false, 3)] {
            let (v, text) = file(3000, shared_first, seed);
            for budget in [1, 500, 20_000, 1 << 30] {
                let h = head_document(&text, budget).expect("a head");
                let got = profile(&h.doc);
                let doc: Value = serde_json::from_slice(&h.doc).unwrap();
                let k = doc["profiles"][0]["samples"].as_array().unwrap().len();
                assert_eq!(doc["profiles"][0]["weights"].as_array().unwrap().len(), k);
                assert_eq!(doc["profiles"].as_array().unwrap().len(), 1);
                let want = profile(&first(&v, k));
                assert_eq!(got.tree.grand_total(), want.tree.grand_total());
                assert_eq!(got.tree.len(), want.tree.len());
                for n in 0..got.tree.len() as u32 {
                    assert_eq!(got.tree.total(n), want.tree.total(n), "node {n}");
                    assert_eq!(
                        got.names.get(got.tree.name(n)),
                        want.names.get(want.tree.name(n))
                    );
                }
                match budget {
                    1 => assert_eq!(k, 1),
                    b if b >= 1 << 30 => assert_eq!(k, 3000),
                    b => assert!(
                        h.sample_bytes >= b && h.sample_bytes < b + 64 && k < 3000,
                        "{} bytes, {k} samples for {b}",
                        h.sample_bytes
                    ),
                }
            }
        }
    }

    /// An evented profile (speedscope's export of a trace): `n` nested opens and closes
    /// over 30 frames, every frame closed by the end.
    fn evented_file(n: usize, seed: u64) -> (Value, Vec<u8>) {
        let mut rng = Rng(seed);
        let mut open: Vec<u64> = Vec::new();
        let mut events = Vec::new();
        let mut t = 0u64;
        for _ in 0..n {
            t += rng.next() % 3;
            if open.is_empty() || (open.len() < 20 && rng.next().is_multiple_of(2)) {
                let f = rng.next() % 30;
                open.push(f);
                events.push(json!({"type": "O", "frame": f, "at": t}));
            } else {
                let f = open.pop().unwrap();
                events.push(json!({"type": "C", "at": t, "frame": f}));
            }
        }
        while let Some(f) = open.pop() {
            t += 1;
            events.push(json!({"type": "C", "frame": f, "at": t}));
        }
        let frames: Vec<Value> = (0..30).map(|i| json!({"name": format!("g{i}")})).collect();
        let shared = json!({"frames": frames});
        let ev = json!(events);
        let text = format!(
            "{{\"profiles\":[{{\"type\":\"evented\",\"name\":\"t\",\"unit\":\"microseconds\",\
             \"startValue\":0,\"endValue\":{t},\"events\":{ev}}}],\"shared\":{shared}}}"
        );
        (
            json!({"shared": shared, "events": ev, "end": t}),
            text.into_bytes(),
        )
    }

    /// The first `k` events of `v`, each frame still open closed at the last one's time.
    fn first_events(v: &Value, k: usize) -> Vec<u8> {
        let mut evs: Vec<Value> = v["events"].as_array().unwrap()[..k].to_vec();
        let mut open = Vec::new();
        for e in &evs {
            if e["type"] == "O" {
                open.push(e["frame"].clone());
            } else {
                open.pop();
            }
        }
        let at = evs[k - 1]["at"].clone();
        while let Some(f) = open.pop() {
            evs.push(json!({"type": "C", "frame": f, "at": at}));
        }
        serde_json::to_vec(
            &json!({"shared": v["shared"], "profiles": [{"type": "evented",
            "name": "t", "unit": "microseconds", "startValue": 0, "endValue": v["end"],
            "events": evs}]}),
        )
        .unwrap()
    }

    /// An evented profile's head is its first events with the frames open there closed
    /// at the last one: the profile of a file of those events alone; all of them, the
    /// whole profile.
    #[test]
    fn an_evented_head_closes_what_is_open_at_its_end() {
        for seed in [5, 6] {
            let (v, text) = evented_file(4000, seed);
            let whole = profile(&text);
            let all = v["events"].as_array().unwrap().len();
            for budget in [200, 700, 30_000, 1 << 30] {
                let h = head_document(&text, budget).expect("a head");
                let doc: Value = serde_json::from_slice(&h.doc).unwrap();
                let got_events = doc["profiles"][0]["events"].as_array().unwrap();
                // The events taken are whole and in order; the closes come after them.
                let k = (1..=all)
                    .rev()
                    .find(|&k| got_events.get(..k) == v["events"].as_array().unwrap().get(..k))
                    .unwrap();
                let got = profile(&h.doc);
                let want = profile(&first_events(&v, k));
                assert_eq!(got.tree.grand_total(), want.tree.grand_total());
                assert_eq!(got.tree.len(), want.tree.len());
                for n in 0..got.tree.len() as u32 {
                    assert_eq!(got.tree.total(n), want.tree.total(n), "node {n}");
                }
                if budget >= 1 << 30 {
                    assert_eq!(k, all);
                    assert_eq!(got.tree.grand_total(), whole.tree.grand_total());
                } else {
                    assert!(k < all && h.sample_bytes >= budget, "{k} events");
                }
            }
        }
        // Events that do not nest: none.
        let bad = r#"{"profiles":[{"type":"evented","events":[{"type":"O","frame":0,"at":0},
            {"type":"C","frame":1,"at":1}]}],"shared":{"frames":[{"name":"a"},{"name":"b"}]}}"#;
        assert!(head_document(bad.as_bytes(), 1 << 20).is_none());
    }

    /// A writer that sorts keys (Go maps, Python's `sort_keys`) puts `startValue`, `type`
    /// and `unit` after the samples or events: they are carried over.
    #[test]
    fn sorted_keys_are_read_too() {
        let (v, _) = file(2000, false, 8);
        let sorted =
            serde_json::to_vec(&json!({"profiles": [v["profile"]], "shared": v["shared"]}))
                .unwrap();
        let text = String::from_utf8(sorted.clone()).unwrap();
        assert!(text.find("\"type\"").unwrap() > text.find("\"samples\"").unwrap());
        let h = head_document(&sorted, 3000).expect("a sampled head");
        let doc: Value = serde_json::from_slice(&h.doc).unwrap();
        let k = doc["profiles"][0]["samples"].as_array().unwrap().len();
        assert!(k > 10 && k < 2000, "{k}");
        assert_eq!(doc["profiles"][0]["unit"], "milliseconds");
        let (got, want) = (profile(&h.doc), profile(&first(&v, k)));
        assert_eq!(got.tree.grand_total(), want.tree.grand_total());
        assert_eq!(got.tree.len(), want.tree.len());

        let (v, _) = evented_file(3000, 9);
        let p = json!({"type": "evented", "name": "t", "unit": "microseconds", "startValue": 0,
            "endValue": v["end"], "events": v["events"]});
        let sorted = serde_json::to_vec(&json!({"profiles": [p], "shared": v["shared"]})).unwrap();
        for budget in [2000, 1 << 30] {
            let h = head_document(&sorted, budget).expect("an evented head");
            let doc: Value = serde_json::from_slice(&h.doc).unwrap();
            assert_eq!(doc["profiles"][0]["unit"], "microseconds");
            let k = doc["profiles"][0]["events"]
                .as_array()
                .unwrap()
                .iter()
                .zip(v["events"].as_array().unwrap())
                .take_while(|(a, b)| a == b)
                .count();
            let (got, want) = (profile(&h.doc), profile(&first_events(&v, k)));
            assert_eq!(got.tree.grand_total(), want.tree.grand_total());
            assert_eq!(got.tree.len(), want.tree.len());
        }
    }

    /// Damage anywhere (bytes changed, the file cut short) gives no head or one the
    /// reader reads or refuses, never a panic.
    #[test]
    fn damaged_files_never_panic() {
        let (_, sampled) = file(300, false, 10);
        let (_, shared_first) = file(300, true, 13);
        let (_, evented) = evented_file(600, 11);
        let mut rng = Rng(12);
        let mut heads = 0;
        for round in 0..4500u32 {
            let mut t = match round % 3 {
                0 => sampled.clone(),
                1 => shared_first.clone(),
                _ => evented.clone(),
            };
            for _ in 0..1 + rng.next() % 4 {
                let i = (rng.next() % t.len() as u64) as usize;
                t[i] = b"[]{},:\" 0123456789\\aOC"[(rng.next() % 22) as usize];
            }
            if rng.next().is_multiple_of(3) {
                t.truncate((rng.next() % t.len() as u64) as usize);
            }
            let budget = [1, 100, 5000, 1 << 30][(rng.next() % 4) as usize];
            if let Some(h) = head_document(&t, budget) {
                heads += 1;
                let _ = super::super::parse("t.json", &h.doc);
            }
        }
        assert!(heads > 450, "{heads} heads");
    }

    /// Laid out otherwise: no head (the full load reads it).
    #[test]
    fn other_layouts_get_none() {
        let (_, text) = file(100, false, 4);
        let s = String::from_utf8(text).unwrap();
        // The evented profile first.
        let evented_first = r#"{"profiles":[{"type":"evented","name":"ev","unit":"none",
            "startValue":0,"endValue":10,"events":[{"type":"O","frame":0,"at":0},
            {"type":"C","frame":0,"at":10}]},{"type":"sampled","samples":[[0]],"weights":[1]}],
            "shared":{"frames":[{"name":"a"}]}}"#;
        assert!(serde_json::from_str::<Value>(evented_first).is_ok());
        // Previewed as its events (the sampled profile after it is left out).
        let h = head_document(evented_first.as_bytes(), 1 << 20).expect("evented head");
        let doc: Value = serde_json::from_slice(&h.doc).unwrap();
        assert_eq!(doc["profiles"].as_array().unwrap().len(), 1);
        assert_eq!(doc["profiles"][0]["events"].as_array().unwrap().len(), 2);
        // Weights before samples.
        let w = r#"{"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","weights":[1,2],"samples":[[0],[0]]}]}"#;
        assert!(head_document(w.as_bytes(), 1 << 20).is_none());
        // Cut inside the samples: no weights to find.
        assert!(head_document(&s.as_bytes()[..s.len() / 3], 1 << 20).is_none());
        // Fewer weights than samples.
        let few = r#"{"profiles":[{"type":"sampled","samples":[[0],[0],[0]],"weights":[1,2]}],"shared":{"frames":[{"name":"a"}]}}"#;
        assert!(head_document(few.as_bytes(), 1 << 20).is_none());
        // No frames.
        let none = r#"{"profiles":[{"type":"sampled","samples":[[0]],"weights":[1]}]}"#;
        assert!(head_document(none.as_bytes(), 1 << 20).is_none());
    }
}
