//! The start of a big gecko profile (the Firefox profiler's own format, as Firefox writes
//! it) completed into a small document of its own, for a preview.
//!
//! Firefox writes each thread's `samples` and `markers` first and its tables after them
//! (`stackTable`, `frameTable`, `stringTable`): the head of a big profile holds samples
//! whose stacks it cannot name. The head is scanned for where it stops (the containers
//! open at the cut, which members each has finished, and where its last whole element
//! ends); the thread it stops in is closed after its last whole sample (or marker) and
//! given the tables it lacks, found after the cut by their keys without parsing what lies
//! between: a gecko table's key followed by a colon cannot occur inside a string (the
//! quote that ends it would have to be escaped), and a thread's tables follow its own
//! samples before any later thread begins. Everything still open is then closed. The
//! samples taken are exact, as far as they go: the preview is the threads before the cut
//! whole and the first samples of the one it stops in.

use super::chrome::scan::{skip_string, skip_ws};
use super::speedscope::head::{find_key, value_end};

/// The document, and how many bytes of the input it takes as they are.
pub struct Head {
    /// The input up to the cut, the closers of what was open inside the thread, the
    /// thread's tables, and the closers of everything around it.
    pub doc: Vec<u8>,
    /// Bytes of the input taken before the cut.
    pub head_bytes: usize,
}

/// The tables a gecko thread needs besides its samples, as their keys are written.
const TABLES: [&[u8]; 3] = [b"\"stackTable\"", b"\"frameTable\"", b"\"stringTable\""];

/// A container open at the cut.
struct Open {
    obj: bool,
    /// Its key in the enclosing object (a range of the text, quotes excluded).
    key: Option<(usize, usize)>,
    /// Just past its last whole element (past its opening bracket while it has none).
    last: usize,
    /// Whether it has a whole element.
    has: bool,
    /// Whether it is a thread: an object that is an element of a `threads` array.
    thread: bool,
}

/// What the scan of a head found.
#[derive(Default)]
struct Scan {
    open: Vec<Open>,
    /// Whole members of the innermost open thread, by key.
    thread_keys: Vec<(usize, usize)>,
    /// Some `samples` object has a `schema`: gecko's rows, not the processed format's
    /// columns.
    gecko: bool,
}

/// Scans `head` for the containers open where it ends. `None` when it is not JSON from
/// its start as far as it goes.
fn scan(head: &[u8]) -> Option<Scan> {
    let mut s = Scan::default();
    // The key of the member whose value comes next, in the innermost object.
    let mut key: Option<(usize, usize)> = None;
    let mut i = skip_ws(head, 0);
    if head.get(i) != Some(&b'{') {
        return None;
    }
    // A value (scalar or container) ended at `end`: its container gains a whole element.
    fn done(s: &mut Scan, key: &mut Option<(usize, usize)>, end: usize, head: &[u8]) {
        let Some(top) = s.open.last_mut() else {
            return;
        };
        top.last = end;
        top.has = true;
        if top.obj {
            let k = key.take();
            if top.thread
                && let Some(k) = k
            {
                s.thread_keys.push(k);
            }
            if let (Some((a, b)), Some((pa, pb))) = (k, top.key)
                && &head[a..b] == b"schema"
                && &head[pa..pb] == b"samples"
            {
                s.gecko = true;
            }
        }
    }
    while i < head.len() {
        match head[i] {
            b'{' | b'[' => {
                let obj = head[i] == b'{';
                let parent_is_threads = s.open.last().is_some_and(|p| {
                    !p.obj && p.key.is_some_and(|(a, b)| &head[a..b] == b"threads")
                });
                let thread = obj && parent_is_threads;
                if thread {
                    s.thread_keys.clear();
                }
                s.open.push(Open {
                    obj,
                    key: if s.open.last().is_some_and(|p| p.obj) {
                        key.take()
                    } else {
                        None
                    },
                    last: i + 1,
                    has: false,
                    thread,
                });
                i += 1;
            }
            b'}' | b']' => {
                let closed = s.open.pop()?;
                if closed.obj != (head[i] == b'}') {
                    return None;
                }
                if s.open.is_empty() {
                    // The document ended inside the head: nothing was cut.
                    return None;
                }
                key = closed.key;
                done(&mut s, &mut key, i + 1, head);
                i += 1;
            }
            b'"' => {
                // A string the head cuts ends the scan, as a number does.
                let Some(end) = skip_string(head, i + 1) else {
                    break;
                };
                let top = s.open.last()?;
                if top.obj && key.is_none() {
                    key = Some((i + 1, end - 1));
                    let colon = skip_ws(head, end);
                    if head.get(colon) != Some(&b':') {
                        return (colon >= head.len()).then_some(s);
                    }
                    i = colon + 1;
                } else {
                    done(&mut s, &mut key, end, head);
                    i = end;
                }
            }
            b',' | b' ' | b'\n' | b'\r' | b'\t' => i += 1,
            _ => {
                // A number or a literal: up to the next delimiter; cut when the head ends
                // first (it may have been cut short).
                let mut j = i + 1;
                while j < head.len()
                    && !matches!(head[j], b',' | b']' | b'}' | b' ' | b'\n' | b'\r' | b'\t')
                {
                    j += 1;
                }
                if j == head.len() {
                    break;
                }
                done(&mut s, &mut key, j, head);
                i = j;
            }
        }
    }
    Some(s)
}

fn closer(o: &Open) -> u8 {
    if o.obj { b'}' } else { b']' }
}

/// The document of a gecko profile cut at `budget` bytes, its last thread closed after
/// its last whole sample and given the tables it lacks; `None` when the whole input is
/// within the budget, the cut is not inside a gecko thread, the thread's tables are all
/// before the cut (the head reads as it is), or they cannot be found.
pub fn head_document(text: &[u8], budget: usize) -> Option<Head> {
    if text.len() <= budget {
        return None;
    }
    let s = scan(&text[..budget])?;
    if !s.gecko {
        return None;
    }
    let j = s.open.iter().rposition(|o| o.thread)?;
    // Key ranges exclude the quotes; `name` may be quoted.
    let key_is = |k: (usize, usize), name: &[u8]| {
        let name = name
            .strip_prefix(b"\"")
            .and_then(|n| n.strip_suffix(b"\""))
            .unwrap_or(name);
        &text[k.0..k.1] == name
    };
    let missing: Vec<&[u8]> = TABLES
        .iter()
        .copied()
        .filter(|t| !s.thread_keys.iter().any(|&k| key_is(k, t)))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let thread = &s.open[j];
    // Where to cut, what to close inside the thread, and whether it keeps a member: cut
    // inside the samples' rows, after the last whole one; cut inside any other member
    // (markers, a table), without that member (a table is found whole below).
    let is = |o: Option<&Open>, name: &[u8]| o.and_then(|o| o.key).is_some_and(|k| key_is(k, name));
    let (cut, inside, has) = if is(s.open.get(j + 1), b"samples") && is(s.open.get(j + 2), b"data")
    {
        (s.open[j + 2].last, &s.open[j + 1..j + 3], true)
    } else {
        (thread.last, &s.open[j + 1..j + 1], thread.has)
    };
    let mut tables = Vec::with_capacity(missing.len());
    for t in &missing {
        let open = if *t == TABLES[2] { b'[' } else { b'{' };
        let v = find_key(text, t, cut, open)?;
        tables.push((*t, (v, value_end(text, v)?)));
    }
    let size = cut
        + tables
            .iter()
            .map(|(t, (a, b))| t.len() + 2 + b - a)
            .sum::<usize>()
        + s.open.len();
    let mut doc = Vec::with_capacity(size);
    doc.extend_from_slice(&text[..cut]);
    doc.extend(inside.iter().rev().map(closer));
    for (k, (name, (a, b))) in tables.iter().enumerate() {
        if has || k > 0 {
            doc.push(b',');
        }
        doc.extend_from_slice(name);
        doc.push(b':');
        doc.extend_from_slice(&text[*a..*b]);
    }
    doc.extend(s.open[..=j].iter().rev().map(closer));
    Some(Head {
        doc,
        head_bytes: cut,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::Rng;

    /// A gecko thread as Firefox writes it (samples, markers, then tables), or with its
    /// tables first; its names differ from thread to thread, so a head given another
    /// thread's tables names its stacks wrongly.
    fn thread(k: usize, stacks: &[u32], markers: usize, tables_first: bool) -> String {
        let names: Vec<String> = (0..5).map(|i| format!("\"t{k}f{i}\"")).collect();
        let tables = format!(
            "\"stackTable\":{{\"schema\":{{\"prefix\":0,\"frame\":1}},\"data\":[[null,0],[0,1],[1,2],[1,3],[3,4]]}},\n\
             \"frameTable\":{{\"schema\":{{\"location\":0,\"line\":1}},\"data\":[[0,null],[1,2],[2],[3],[4,9]]}},\n\
             \"stringTable\":[{},\"DOMEvent\"]",
            names.join(",")
        );
        let rows: Vec<String> = stacks
            .iter()
            .enumerate()
            .map(|(i, s)| format!("[{s},{}.5,0]", 10 + i))
            .collect();
        let marks: Vec<String> = (0..markers)
            .map(|i| {
                format!(
                    "[5,{i}.0,{i}.5,1,3,{{\"type\":\"DOMEvent\",\"eventType\":\"a \\\"stackTable\\\": [{i}] }}\"}}]"
                )
            })
            .collect();
        let body = format!(
            "\"samples\":{{\"schema\":{{\"stack\":0,\"time\":1,\"eventDelay\":2}},\"data\":[{}]}},\n\
             \"markers\":{{\"schema\":{{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,\"category\":4,\"data\":5}},\"data\":[{}]}}",
            rows.join(","),
            marks.join(",")
        );
        let (a, b) = if tables_first {
            (tables, body)
        } else {
            (body, tables)
        };
        format!(
            "{{\"processType\":\"default\",\"name\":\"T{k}\",\"tid\":{k},\"pid\":1,\"registerTime\":0,\n{a},\n{b}}}"
        )
    }

    fn document(threads: &[String]) -> String {
        format!(
            "{{\"meta\":{{\"version\":27,\"startTime\":1000,\"interval\":1,\
             \"configuration\":{{\"threads\":[\"GeckoMain\"]}}}},\"libs\":[],\n\"threads\":[{}],\
             \"pausedRanges\":[],\"processes\":[]}}",
            threads.join(",\n")
        )
    }

    fn profile(doc: &[u8]) -> Option<crate::model::Profile> {
        let (samples, _) = crate::import::firefox::parse_head("g.json", doc)?;
        samples.aggregate(Default::default()).ok()
    }

    fn same(got: &crate::model::Profile, want: &crate::model::Profile, what: &str) {
        assert_eq!(got.tree.grand_total(), want.tree.grand_total(), "{what}");
        assert_eq!(got.tree.len(), want.tree.len(), "{what}");
        for n in 0..got.tree.len() as u32 {
            assert_eq!(got.tree.total(n), want.tree.total(n), "{what}: node {n}");
            assert_eq!(
                got.names.get(got.tree.name(n)),
                want.names.get(want.tree.name(n)),
                "{what}: node {n}"
            );
        }
    }

    /// Cut anywhere inside a thread, the head is the threads before it whole and its
    /// first whole samples with its own tables: the profile of a file of those alone.
    #[test]
    fn the_head_is_the_first_samples_with_their_threads_tables() {
        let mut rng = Rng(5);
        let stacks: Vec<Vec<u32>> = (0..3)
            .map(|_| (0..200).map(|_| (rng.next() % 5) as u32).collect())
            .collect();
        let threads: Vec<String> = (0..3).map(|k| thread(k, &stacks[k], 30, false)).collect();
        let text = document(&threads);
        let starts: Vec<usize> = (0..3)
            .map(|k| {
                text.find(&format!("{{\"processType\":\"default\",\"name\":\"T{k}\""))
                    .unwrap()
            })
            .collect();
        let mut heads = 0;
        for budget in (1..text.len() + 10).step_by(7) {
            let Some(h) = head_document(text.as_bytes(), budget) else {
                // Only before the first samples' schema (what tells gecko rows from
                // processed columns) or past the last thread's tables.
                let schema = text.find("\"eventDelay\":2}").unwrap() + 15;
                let last_tables = text.rfind("\"stackTable\"").unwrap();
                assert!(
                    budget < schema || budget > last_tables,
                    "no head at {budget}"
                );
                continue;
            };
            heads += 1;
            assert!(h.head_bytes <= budget);
            let doc: serde_json::Value = serde_json::from_slice(&h.doc)
                .unwrap_or_else(|e| panic!("{budget}: {e}: {}", String::from_utf8_lossy(&h.doc)));
            let th = doc["threads"].as_array().unwrap();
            let j = th.len() - 1;
            assert_eq!(
                j,
                starts.iter().filter(|&&s| s < budget).count() - 1,
                "{budget}"
            );
            let k = th[j]["samples"]["data"].as_array().map_or(0, Vec::len);
            let mut want: Vec<String> = (0..j).map(|i| thread(i, &stacks[i], 0, false)).collect();
            want.push(thread(j, &stacks[j][..k], 0, false));
            match (profile(&h.doc), profile(document(&want).as_bytes())) {
                (Some(got), Some(want)) => same(&got, &want, &format!("cut at {budget}")),
                // Cut before the first sample: nothing to draw either way.
                (None, None) => assert_eq!((j, k), (0, 0), "{budget}"),
                (None, Some(want)) if want.tree.grand_total() == 0 => {
                    assert_eq!((j, k), (0, 0), "{budget}")
                }
                (got, want) => panic!(
                    "cut at {budget}: head {} profile, its samples alone {}",
                    got.is_some(),
                    want.is_some()
                ),
            }
        }
        assert!(heads > 200, "{heads} heads");
    }

    /// Tables written before the samples (the head reads as it is), the whole document
    /// within the budget, a processed profile's columns, text that is not a profile:
    /// no head.
    #[test]
    fn no_head_where_the_head_reads_as_it_is() {
        let s: Vec<u32> = vec![1, 2, 3, 4];
        let first = document(&[thread(0, &s, 5, true), thread(1, &s, 5, true)]);
        let inside = first.find("[3,12.5,0]").unwrap();
        assert!(head_document(first.as_bytes(), inside).is_none());
        let last = document(&[thread(0, &s, 5, false)]);
        assert!(head_document(last.as_bytes(), last.len()).is_none());
        assert!(head_document(last.as_bytes(), last.find("[3,12.5").unwrap()).is_some());
        let processed = r#"{"meta":{"preprocessedProfileVersion":48},"threads":[{"samples":{"stack":[1,2,3],"time":[1,2,3]},"stackTable":{}}]}"#;
        assert!(head_document(processed.as_bytes(), 60).is_none());
        for junk in [&b"not json at all"[..], b"[1,2,3]", b"{\"a\":}", b""] {
            assert!(head_document(junk, 3).is_none());
        }
    }

    /// Cut and damaged documents never panic; what comes back is JSON.
    #[test]
    fn damaged_documents_never_panic() {
        let s: Vec<u32> = (0..50).map(|i| i % 5).collect();
        let text = document(&[thread(0, &s, 20, false), thread(1, &s, 20, false)]).into_bytes();
        let mut rng = Rng(9);
        for case in 0..3000 {
            let mut t = text.clone();
            for _ in 0..1 + case % 4 {
                if t.is_empty() {
                    break;
                }
                crate::testing::damage(&mut rng, &mut t, b"{}[]\",:\\ 0a");
            }
            let budget = (rng.next() % (t.len() as u64 + 1)) as usize;
            if let Some(h) = head_document(&t, budget) {
                assert!(h.head_bytes <= budget);
                let _ = crate::import::firefox::parse_head("g.json", &h.doc);
            }
        }
    }
}
