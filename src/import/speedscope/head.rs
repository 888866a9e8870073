//! The start of a big sampled speedscope file as a small document of its own, for a
//! preview: the file's `shared` frames, and the first profile's header, first samples
//! and as many of its weights.
//!
//! speedscope's own exports, py-spy's and most of the corpus' files write `shared` after
//! the profiles, and a profile's `weights` after its `samples`: the head of a big file holds
//! samples without their frames' names or their weights. Both are found without parsing
//! what lies between: inside a sampled profile's `samples` (arrays of numbers) no string
//! can occur, so the key `"weights"` after them is the profile's; `shared` is the last
//! top-level key of that name, found from the end of the file (or the first, when it is
//! written before the profiles). The samples taken are exact, as far as they go: the
//! preview is the profile's first samples, as a Chrome trace's is its first events.

use memchr::memmem;
use serde::de::IgnoredAny;

/// The document, and how many bytes of the input's samples it holds.
pub struct Head {
    /// `{"shared":…,"profiles":[{…,"samples":[…],"weights":[…]}]}`.
    pub doc: Vec<u8>,
    /// Bytes of samples taken.
    pub sample_bytes: usize,
}

/// The end of the JSON value starting at `text[at..]` (after white space), if it is whole.
fn value_end(text: &[u8], at: usize) -> Option<usize> {
    let mut values =
        serde_json::Deserializer::from_slice(text.get(at..)?).into_iter::<IgnoredAny>();
    values.next()?.ok()?;
    Some(at + values.byte_offset())
}

/// `at` past white space.
fn skip_ws(text: &[u8], mut at: usize) -> usize {
    while text.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// Where the value of the key `"name"` found at `key` starts (past `:` and white space),
/// when `key` is followed by a colon (a key, not a string value).
fn after_colon(text: &[u8], key: usize, name_len: usize) -> Option<usize> {
    let at = skip_ws(text, key + name_len);
    (text.get(at) == Some(&b':')).then(|| skip_ws(text, at + 1))
}

/// The value range of the first key `name` (quoted) at or after `from` whose value starts
/// with `open`.
fn find_key(text: &[u8], name: &[u8], from: usize, open: u8) -> Option<usize> {
    let finder = memmem::Finder::new(name);
    let mut at = from;
    while let Some(i) = finder.find(text.get(at..)?) {
        let key = at + i;
        if let Some(v) = after_colon(text, key, name.len())
            && text.get(v) == Some(&open)
        {
            return Some(v);
        }
        at = key + 1;
    }
    None
}

/// The document of the first profile's first samples (up to `budget` bytes of them, whole
/// samples), or `None` when the file is not laid out as expected (the first profile is
/// not sampled, has its weights before its samples, or the frames cannot be found).
pub fn head_document(text: &[u8], budget: usize) -> Option<Head> {
    // The profiles array and its first profile.
    let profiles = find_key(text, b"\"profiles\"", 0, b'[')?;
    let first = skip_ws(text, profiles + 1);
    if text.get(first) != Some(&b'{') {
        return None;
    }
    let samples = find_key(text, b"\"samples\"", first, b'[')?;
    // Everything of the profile before its samples: its type, name, unit, start and end
    // (whole values; the samples key's own quote is where it stops).
    let key = memmem::rfind(&text[first..samples], b"\"samples\"")? + first;
    let header = &text[first..key];
    if memmem::find(header, b"\"sampled\"").is_none()
        || memmem::find(header, b"\"weights\"").is_some()
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
    let mut w_end = weights + 1;
    for k in 0..taken {
        let rest = text.get(w_end..)?;
        let stop = memchr::memchr2(b',', b']', rest)?;
        if rest[stop] == b']' && k + 1 < taken {
            return None;
        }
        w_end += stop + 1;
    }
    // The frames: `shared` written after the profiles (the last such key in the file), or
    // before them.
    let shared = {
        let finder = memmem::FinderRev::new(b"\"shared\"");
        let mut to = text.len();
        loop {
            let key = finder.rfind(&text[..to])?;
            if let Some(v) = after_colon(text, key, 8)
                && text.get(v) == Some(&b'{')
            {
                break v;
            }
            to = key;
        }
    };
    let shared_end = value_end(text, shared)?;

    let mut doc = Vec::with_capacity(header.len() + (end - start) + (w_end - weights) + 64);
    doc.extend_from_slice(b"{\"shared\":");
    doc.extend_from_slice(&text[shared..shared_end]);
    doc.extend_from_slice(b",\"profiles\":[");
    doc.extend_from_slice(header);
    doc.extend_from_slice(b"\"samples\":[");
    doc.extend_from_slice(&text[start..end]);
    doc.extend_from_slice(b"],\"weights\":");
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
    /// profiles (and a second, evented profile after it).
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
            format!("{{\"$schema\":\"x\",\"shared\":{shared},\"profiles\":[{profile},{evented}]}}")
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
        assert!(head_document(evented_first.as_bytes(), 1 << 20).is_none());
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
