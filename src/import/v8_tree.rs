//! V8 profiles written as one nested tree under `head`, each node holding its `children`:
//! - the sampling heap profile: DevTools' Memory panel ("Allocation sampling", saved as
//!   `.heapprofile`), `node --heap-prof`, the inspector's `HeapProfiler.stopSampling`.
//!   Nodes carry a `callFrame` and `selfSize` (bytes allocated there and still sampled);
//!   the profile is a call tree in bytes, as speedscope shows it;
//! - the old `.cpuprofile` of V8's C++ API (v8-profiler-node8, Node before 10,
//!   Chrome before 58): nodes carry `functionName`, `url`, `lineNumber`, `id` and
//!   `hitCount` themselves, and the samples' times are `timestamps` (microseconds) with
//!   `startTime` in seconds. It is turned into the current form (a node list, deltas)
//!   and read as any `.cpuprofile` ([`cpuprofile::from_profile`]): time-ordered samples.
//!
//! The tree is read with an explicit stack, not by recursion: serde would stop at 128
//! levels, and a stack thousands of frames deep is a tree thousands of objects deep.
//! Each node's other members are read by serde from their own bytes (so every byte is
//! checked, and members of unknown names too); errors give the line and the column (a
//! node without the id the samples need, its path: `head.children[2].children[0]`).

use super::ImportError;
use super::chrome::scan::{json_ws, skip_string, skip_value};
use super::cpuprofile::{self, CallFrame};
use crate::model::samples::Samples;
use crate::model::units::{Unit, ValueFormat};
use crate::model::{CallTreeBuilder, ChildOrder, Names, Profile, ProfileMeta, SourceFormat};
use crate::model::{NodeId, Warnings};
use serde::de::IgnoredAny;

/// No parent (the head).
const NONE: usize = usize::MAX;

/// A node as read, in preorder (a parent before its children).
#[derive(Debug, Default)]
struct TreeNode {
    /// Index of the parent in the list, [`NONE`] for the head.
    parent: usize,
    /// Which child of its parent it is (for error paths).
    nth: usize,
    id: Option<u64>,
    frame: CallFrame,
    hit_count: u64,
    self_size: u64,
}

/// The document: the tree, and the raw bytes of the top-level members besides `head`.
struct Read<'a> {
    nodes: Vec<TreeNode>,
    members: Vec<(String, &'a [u8], usize)>,
}

impl Read<'_> {
    fn member(&self, key: &str) -> Option<(&[u8], usize)> {
        self.members
            .iter()
            .rev()
            .find(|(k, _, _)| k == key)
            .map(|&(_, v, at)| (v, at))
    }
}

/// Whether the JSON object in `text` is a V8 profile with its tree under `head` (and no
/// `nodes` list, which the current `.cpuprofile` has).
pub fn has_head_tree(text: &[u8]) -> bool {
    let keys = super::detect::top_level_keys(text);
    keys.iter().any(|k| k == "head") && !keys.iter().any(|k| k == "nodes")
}

/// Parses a sampling heap profile into a call tree in bytes.
pub fn parse_heap(file: &str, text: &[u8]) -> Result<Profile, ImportError> {
    let read = read(file, text)?;
    let mut names = Names::new();
    let mut b = CallTreeBuilder::new(&mut names, false);
    let overflow = || ImportError::whole_file(file, "the sizes add up to more than 2^64 bytes");
    // Subtrees that allocated nothing would be bars of no width: left out. Children come
    // after their parent, so one backward pass sums the subtrees.
    let mut total: Vec<u64> = read.nodes.iter().map(|n| n.self_size).collect();
    for k in (0..read.nodes.len()).rev() {
        let p = read.nodes[k].parent;
        if p != NONE {
            total[p] = total[p].checked_add(total[k]).ok_or_else(overflow)?;
        }
    }
    let mut tree_node: Vec<NodeId> = Vec::with_capacity(read.nodes.len());
    for (k, n) in read.nodes.iter().enumerate() {
        // The head is V8's `(root)`, not a frame: the tree's own root.
        let id = if n.parent == NONE {
            0
        } else if total[k] == 0 {
            tree_node.push(0);
            continue;
        } else {
            let name = names.intern(&cpuprofile::frame_name(&n.frame));
            b.child(tree_node[n.parent], name)
        };
        tree_node.push(id);
        b.add_self(id, n.self_size).map_err(|_| overflow())?;
    }
    let tree = b
        .finish(&names, ChildOrder::ByName)
        .map_err(|_| overflow())?;
    if tree.grand_total() == 0 {
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail: format!(
                "the heap profile's {} nodes have no selfSize above 0",
                read.nodes.len()
            ),
        });
    }
    Ok(Profile {
        names,
        tree,
        values: ValueFormat {
            unit: Unit::Bytes,
            ..ValueFormat::default()
        },
        meta: ProfileMeta::new(file, SourceFormat::HeapProfile, Warnings::default()),
    })
}

/// Parses an old-format `.cpuprofile` into time-ordered samples.
pub fn parse_cpu(file: &str, text: &[u8]) -> Result<Samples, ImportError> {
    let read = read(file, text)?;
    let mut nodes: Vec<cpuprofile::Node> = Vec::with_capacity(read.nodes.len());
    for (k, n) in read.nodes.iter().enumerate() {
        let Some(id) = n.id else {
            return Err(ImportError::Invalid {
                file: file.to_string(),
                location: path(&read.nodes, k),
                message: "a node without an `id` (the samples name nodes by id)".to_string(),
            });
        };
        nodes.push(cpuprofile::Node {
            id,
            call_frame: n.frame.clone(),
            parent: None,
            children: Some(Vec::new()),
            hit_count: n.hit_count,
        });
        if n.parent != NONE {
            nodes[n.parent]
                .children
                .get_or_insert_with(Vec::new)
                .push(id);
        }
    }
    let number = |key: &str| -> Result<Option<f64>, ImportError> {
        Ok(read
            .member(key)
            .map(|(v, at)| from_bytes::<Option<f64>>(file, text, v, at))
            .transpose()?
            .flatten())
    };
    let list = |key: &str| -> Result<Vec<f64>, ImportError> {
        Ok(read
            .member(key)
            .map(|(v, at)| from_bytes::<Option<Vec<f64>>>(file, text, v, at))
            .transpose()?
            .flatten()
            .unwrap_or_default())
    };
    // `startTime` is in seconds here, the timestamps in microseconds.
    let start_us = number("startTime")?.map(|s| s * 1e6);
    let samples: Vec<u64> = match read.member("samples") {
        Some((v, at)) => from_bytes::<Option<Vec<u64>>>(file, text, v, at)?.unwrap_or_default(),
        None => Vec::new(),
    };
    let stamps = list("timestamps")?;
    let mut deltas = Vec::with_capacity(stamps.len());
    let mut last = start_us.or(stamps.first().copied()).unwrap_or(0.0);
    for &t in &stamps {
        deltas.push(t - last);
        last = t;
    }
    let profile = cpuprofile::Profile {
        nodes,
        start_time: start_us,
        samples,
        time_deltas: deltas,
    };
    cpuprofile::from_profile(file, profile, "timestamps")
}

/// `head.children[i].children[j]…` of node `k`.
fn path(nodes: &[TreeNode], mut k: usize) -> String {
    let mut steps = Vec::new();
    while k != NONE && nodes[k].parent != NONE {
        steps.push(nodes[k].nth);
        k = nodes[k].parent;
    }
    let mut p = "head".to_string();
    for n in steps.iter().rev() {
        p.push_str(&format!(".children[{n}]"));
    }
    p
}

/// A JSON syntax error at byte `at`.
fn syntax(file: &str, text: &[u8], at: usize, message: impl Into<String>) -> ImportError {
    let (line, column) = super::text::line_col(text, at);
    ImportError::Json {
        file: file.to_string(),
        line,
        column,
        message: message.into(),
    }
}

/// `value` (the bytes of a member's value, starting at byte `at` of `text`) read by
/// serde; its errors placed in the whole text.
fn from_bytes<'de, T: serde::Deserialize<'de>>(
    file: &str,
    text: &[u8],
    value: &'de [u8],
    at: usize,
) -> Result<T, ImportError> {
    serde_json::from_slice(value).map_err(|e| {
        let (line0, col0) = super::text::line_col(text, at);
        let (line, column) = if e.line() <= 1 {
            (line0, col0 + e.column().saturating_sub(1))
        } else {
            (line0 + e.line() - 1, e.column())
        };
        ImportError::Json {
            file: file.to_string(),
            line,
            column,
            message: super::json_message(&e),
        }
    })
}

/// An object key at `i` (a `"`): the key and the index after it.
fn key(file: &str, text: &[u8], i: usize) -> Result<(String, usize), ImportError> {
    if text.get(i) != Some(&b'"') {
        return Err(syntax(file, text, i, "expected a member name in quotes"));
    }
    let end = skip_string(text, i + 1)
        .ok_or_else(|| syntax(file, text, i, "EOF while parsing a string"))?;
    let k = from_bytes::<String>(file, text, &text[i..end], i)?;
    Ok((k, end))
}

/// The index after `c` (with white space before it skipped), or an error naming what was
/// expected.
fn expect(file: &str, text: &[u8], i: usize, c: u8, what: &str) -> Result<usize, ImportError> {
    let i = json_ws(text, i);
    match text.get(i) {
        Some(&b) if b == c => Ok(i + 1),
        Some(_) => Err(syntax(file, text, i, format!("expected {what}"))),
        None => Err(syntax(file, text, i, format!("EOF while expecting {what}"))),
    }
}

/// The value at `i` (after white space): its bytes and where they start.
fn value<'a>(file: &str, text: &'a [u8], i: usize) -> Result<(&'a [u8], usize), ImportError> {
    let s = json_ws(text, i);
    let e =
        skip_value(text, s).ok_or_else(|| syntax(file, text, s, "EOF while parsing a value"))?;
    if e == s {
        return Err(syntax(file, text, s, "expected a value"));
    }
    Ok((&text[s..e], s))
}

/// Reads one member of a node (other than `children`) from its value's bytes.
fn node_member(
    file: &str,
    text: &[u8],
    node: &mut TreeNode,
    key: &str,
    v: &[u8],
    at: usize,
) -> Result<(), ImportError> {
    match key {
        "callFrame" => node.frame = from_bytes(file, text, v, at)?,
        "functionName" => node.frame.function_name = from_bytes(file, text, v, at)?,
        "url" => node.frame.url = from_bytes(file, text, v, at)?,
        "lineNumber" => node.frame.line_number = from_bytes(file, text, v, at)?,
        "id" => node.id = Some(from_bytes(file, text, v, at)?),
        "hitCount" => node.hit_count = from_bytes(file, text, v, at)?,
        "selfSize" => {
            // A JavaScript number: integral sizes, perhaps written as floats.
            let s: f64 = from_bytes(file, text, v, at)?;
            if !(0.0..1.8e19).contains(&s) {
                return Err(syntax(
                    file,
                    text,
                    at,
                    format!("selfSize {s} is not a size"),
                ));
            }
            node.self_size = s.round() as u64;
        }
        _ => {
            from_bytes::<IgnoredAny>(file, text, v, at)?;
        }
    }
    Ok(())
}

/// Reads the document: the top-level object, the tree under `head` node by node.
fn read<'a>(file: &str, text: &'a [u8]) -> Result<Read<'a>, ImportError> {
    let mut i = expect(file, text, 0, b'{', "a JSON object")?;
    let mut nodes = Vec::new();
    let mut members = Vec::new();
    let mut head_seen = false;
    i = json_ws(text, i);
    if text.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            let (k, after) = key(file, text, json_ws(text, i))?;
            i = expect(file, text, after, b':', "`:` after a member name")?;
            if k == "head" {
                if head_seen {
                    return Err(syntax(file, text, i, "a second `head`"));
                }
                head_seen = true;
                i = read_tree(file, text, json_ws(text, i), &mut nodes)?;
            } else {
                let (v, at) = value(file, text, i)?;
                from_bytes::<IgnoredAny>(file, text, v, at)?;
                i = at + v.len();
                members.push((k, v, at));
            }
            i = json_ws(text, i);
            match text.get(i) {
                Some(b',') => i += 1,
                Some(b'}') => {
                    i += 1;
                    break;
                }
                Some(_) => return Err(syntax(file, text, i, "expected `,` or `}`")),
                None => return Err(syntax(file, text, i, "EOF while parsing an object")),
            }
        }
    }
    let end = json_ws(text, i);
    if end < text.len() {
        return Err(syntax(file, text, end, "trailing characters"));
    }
    if !head_seen {
        return Err(ImportError::Invalid {
            file: file.to_string(),
            location: "the top-level object".to_string(),
            message: "no `head` tree".to_string(),
        });
    }
    Ok(Read { nodes, members })
}

/// Reads the tree whose head object starts at `i`, in preorder, into `nodes`; returns
/// the index after the head's closing brace. One loop over the states of the reading,
/// with a stack of the nodes whose `children` array is open.
fn read_tree(
    file: &str,
    text: &[u8],
    mut i: usize,
    nodes: &mut Vec<TreeNode>,
) -> Result<usize, ImportError> {
    enum At {
        /// A node's `{`.
        Node,
        /// A member name of node `k` (white space skipped).
        Member(usize),
        /// After a member of node `k`: `,` or `}`.
        AfterMember(usize),
        /// After a node's `}`.
        Closed,
    }
    // Nodes whose children are being read, innermost last, each with the number of
    // children read so far.
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut at = At::Node;
    loop {
        at = match at {
            At::Node => {
                if text.get(i) != Some(&b'{') {
                    return Err(syntax(file, text, i, "expected a node object"));
                }
                let (parent, nth) = open.last().copied().unwrap_or((NONE, 0));
                let k = nodes.len();
                nodes.push(TreeNode {
                    parent,
                    nth,
                    ..TreeNode::default()
                });
                i = json_ws(text, i + 1);
                if text.get(i) == Some(&b'}') {
                    i += 1;
                    At::Closed
                } else {
                    At::Member(k)
                }
            }
            At::Member(k) => {
                let (name, after) = key(file, text, i)?;
                i = expect(file, text, after, b':', "`:` after a member name")?;
                if name == "children" {
                    i = expect(file, text, i, b'[', "an array of child nodes")?;
                    i = json_ws(text, i);
                    if text.get(i) == Some(&b']') {
                        i += 1;
                        At::AfterMember(k)
                    } else {
                        open.push((k, 0));
                        At::Node
                    }
                } else {
                    let (v, start) = value(file, text, i)?;
                    node_member(file, text, &mut nodes[k], &name, v, start)?;
                    i = start + v.len();
                    At::AfterMember(k)
                }
            }
            At::AfterMember(k) => {
                i = json_ws(text, i);
                match text.get(i) {
                    Some(b',') => {
                        i = json_ws(text, i + 1);
                        At::Member(k)
                    }
                    Some(b'}') => {
                        i += 1;
                        At::Closed
                    }
                    Some(_) => return Err(syntax(file, text, i, "expected `,` or `}` in a node")),
                    None => return Err(syntax(file, text, i, "EOF inside a node")),
                }
            }
            At::Closed => {
                let Some((p, n)) = open.last_mut() else {
                    return Ok(i);
                };
                *n += 1;
                let p = *p;
                i = json_ws(text, i);
                match text.get(i) {
                    Some(b',') => {
                        i = json_ws(text, i + 1);
                        At::Node
                    }
                    Some(b']') => {
                        open.pop();
                        i += 1;
                        At::AfterMember(p)
                    }
                    Some(_) => {
                        return Err(syntax(
                            file,
                            text,
                            i,
                            "expected `,` or `]` after a child node",
                        ));
                    }
                    None => return Err(syntax(file, text, i, "EOF inside `children`")),
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::Rng;
    use crate::import::cpuprofile::tests::summary;
    use crate::import::{Imported, Limits, load_any_bytes};

    /// A random tree of `n` nodes (parent before child), each with a frame drawn from a
    /// few names, scripts and lines (so siblings sometimes share a name), and a size.
    struct Tree {
        parent: Vec<usize>,
        frame: Vec<(String, String, i64)>,
        size: Vec<u64>,
    }

    fn random_tree(rng: &mut Rng, n: usize) -> Tree {
        let mut t = Tree {
            parent: vec![NONE],
            frame: vec![("(root)".into(), String::new(), -1)],
            size: vec![rng.below(3)],
        };
        for k in 1..n {
            // Mostly deep chains, sometimes a sibling of an earlier node.
            let p = if rng.below(3) == 0 {
                rng.below(k as u64) as usize
            } else {
                k - 1
            };
            t.parent.push(p);
            let name = ["", "run", "tick", "emit", "(program)"][rng.below(5) as usize];
            let url = ["", "file:///app/main.js", "node:internal/timers"][rng.below(3) as usize];
            t.frame.push((name.into(), url.into(), rng.below(4) as i64));
            t.size.push(if rng.below(3) == 0 {
                0
            } else {
                rng.below(5000)
            });
        }
        t
    }

    /// Node `k`'s children, in order.
    fn children(t: &Tree, k: usize) -> Vec<usize> {
        (0..t.parent.len()).filter(|&c| t.parent[c] == k).collect()
    }

    /// `t` as nested JSON, written with an explicit stack; `node` writes a node's own
    /// members (before its `children`, or after them when `children_first`).
    fn nested(t: &Tree, children_first: bool, node: &dyn Fn(usize) -> String) -> String {
        let mut out = String::new();
        // (node, next child position); the node's `{` is written when pushed.
        let mut stack = vec![(0usize, 0usize)];
        out.push('{');
        if !children_first {
            out.push_str(&node(0));
            out.push(',');
        }
        out.push_str("\"children\":[");
        while let Some((k, next)) = stack.last_mut() {
            let kids = children(t, *k);
            if *next < kids.len() {
                let c = kids[*next];
                if *next > 0 {
                    out.push(',');
                }
                *next += 1;
                out.push_str("\n {");
                if !children_first {
                    out.push_str(&node(c));
                    out.push(',');
                }
                out.push_str("\"children\": [");
                stack.push((c, 0));
            } else {
                let k = *k;
                out.push(']');
                if children_first {
                    out.push(',');
                    out.push_str(&node(k));
                }
                out.push('}');
                stack.pop();
            }
        }
        out
    }

    fn call_frame(t: &Tree, k: usize) -> String {
        let (name, url, line) = &t.frame[k];
        format!(
            r#""callFrame":{{"functionName":"{name}","scriptId":"7","url":"{url}","lineNumber":{line},"columnNumber":3}}"#
        )
    }

    /// The folded stacks of `t`'s sizes (root excluded), named as the importers name
    /// frames.
    fn folded(t: &Tree) -> String {
        let mut out = String::new();
        for k in 1..t.parent.len() {
            if t.size[k] == 0 {
                continue;
            }
            let mut path = Vec::new();
            let mut c = k;
            while c != 0 {
                let (name, url, line) = &t.frame[c];
                path.push(cpuprofile::frame_name(&CallFrame {
                    function_name: name.clone(),
                    url: url.clone(),
                    line_number: Some(*line),
                }));
                c = t.parent[c];
            }
            path.reverse();
            out.push_str(&format!("{} {}\n", path.join(";"), t.size[k]));
        }
        out
    }

    /// Every node of a profile as (path, total, self), sorted.
    fn rows(p: &Profile) -> Vec<(String, u64, u64)> {
        let mut v: Vec<_> = (1..p.tree.len() as NodeId)
            .map(|n| {
                (
                    p.tree.path_text(&p.names, n),
                    p.tree.total(n),
                    p.tree.self_ticks(n),
                )
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_heap_profile_is_the_tree_of_its_sizes() {
        let mut rng = Rng(0x5eed_4ea9);
        for round in 0..40 {
            let n = 1 + rng.below(60) as usize;
            let t = random_tree(&mut rng, n);
            let children_first = round % 2 == 1;
            let doc = format!(
                r#"{{"head": {}, "samples": [{{"size": 16, "nodeId": 1, "ordinal": 1}}]}}"#,
                nested(&t, children_first, &|k| format!(
                    r#"{}, "selfSize": {}, "id": {}, "extra": [{{"x": null}}]"#,
                    call_frame(&t, k),
                    t.size[k],
                    k + 1
                ))
            );
            assert_eq!(
                crate::import::detect::detect(doc.as_bytes(), None),
                Ok(SourceFormat::HeapProfile)
            );
            let want = folded(&t);
            match load_any_bytes("h.heapprofile", doc.as_bytes(), Limits::default()) {
                Ok(Imported::Profile(p)) => {
                    assert_eq!(p.values.unit, Unit::Bytes);
                    assert_eq!(p.meta.format, SourceFormat::HeapProfile);
                    let f = crate::import::folded::parse("f", want.as_bytes())
                        .expect("the folded form reads");
                    assert_eq!(rows(&p), rows(&f), "round {round}:\n{doc}");
                }
                Ok(_) => panic!("round {round}: not a profile"),
                Err(e) if want.is_empty() || t.size.iter().skip(1).all(|&s| s == 0) => {
                    assert!(e.to_string().contains("no selfSize above 0"), "{e}");
                }
                Err(e) => panic!("round {round}: {e}\n{doc}"),
            }
        }
    }

    /// The same profile as an old-format `.cpuprofile` (a nested tree, `timestamps`,
    /// `startTime` in seconds) and as a current one (a node list, `timeDeltas`): the
    /// same samples, times, weights and stacks.
    #[test]
    fn an_old_cpuprofile_reads_as_the_current_form() {
        let mut rng = Rng(0x01d_c0de);
        for round in 0..40 {
            let n = 2 + rng.below(40) as usize;
            let t = random_tree(&mut rng, n);
            let n = t.parent.len();
            let start_s = 1000 + rng.below(1000);
            let mut stamp = start_s * 1_000_000 + rng.below(1000);
            let mut samples = Vec::new();
            let mut stamps = Vec::new();
            for _ in 0..rng.below(50) + 1 {
                samples.push(1 + rng.below(n as u64 - 1) + 1);
                stamp += rng.below(2000);
                stamps.push(stamp);
            }
            let join = |v: &[u64]| {
                v.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let old = format!(
                r#"{{"head": {}, "startTime": {start_s}, "endTime": {}, "samples": [{}], "timestamps": [{}]}}"#,
                nested(&t, round % 2 == 1, &|k| {
                    let (name, url, line) = &t.frame[k];
                    format!(
                        r#""functionName":"{name}","url":"{url}","lineNumber":{line},"bailoutReason":"","id":{},"scriptId":0,"hitCount":{}"#,
                        k + 1,
                        t.size[k] % 7
                    )
                }),
                start_s + 1,
                join(&samples),
                join(&stamps)
            );
            let nodes: Vec<String> = (0..n)
                .map(|k| {
                    let kids: Vec<u64> = children(&t, k).iter().map(|&c| c as u64 + 1).collect();
                    format!(
                        r#"{{"id":{},{},"hitCount":0,"children":[{}]}}"#,
                        k + 1,
                        call_frame(&t, k),
                        join(&kids)
                    )
                })
                .collect();
            let mut last = start_s * 1_000_000;
            let deltas: Vec<String> = stamps
                .iter()
                .map(|&s| {
                    let d = s - last;
                    last = s;
                    d.to_string()
                })
                .collect();
            let new = format!(
                r#"{{"nodes":[{}],"startTime":{},"samples":[{}],"timeDeltas":[{}]}}"#,
                nodes.join(","),
                start_s * 1_000_000,
                join(&samples),
                deltas.join(",")
            );
            assert_eq!(
                crate::import::detect::detect(old.as_bytes(), None),
                Ok(SourceFormat::CpuProfile)
            );
            let a = cpuprofile::parse("old", old.as_bytes()).expect("the old form reads");
            let b = cpuprofile::parse("new", new.as_bytes()).expect("the new form reads");
            assert_eq!(summary(&a), summary(&b), "round {round}:\n{old}\n{new}");
        }
    }

    /// A chain 20 000 nodes deep (serde stops at 128) reads without recursion, and an
    /// error at its bottom is placed there.
    #[test]
    fn a_deep_tree_reads_and_errors_are_placed() {
        let depth = 20_000;
        let mut doc = String::from("{\"head\":");
        for k in 0..depth {
            doc.push_str(&format!(
                "{{\"callFrame\":{{\"functionName\":\"f{}\",\"url\":\"\"}},\"selfSize\":{},\"children\":[\n",
                k % 10,
                k % 3
            ));
        }
        doc.push_str("{\"callFrame\":{\"functionName\":\"leaf\"},\"selfSize\":5,\"children\":[]}");
        for _ in 0..depth {
            doc.push_str("]}");
        }
        doc.push('}');
        let p = parse_heap("deep", doc.as_bytes()).expect("a deep tree reads");
        assert_eq!(p.tree.max_depth(), depth as u32);
        let sum: u64 = (1..depth as u64).map(|k| k % 3).sum::<u64>() + 5;
        assert_eq!(p.tree.grand_total(), sum);

        let bad = doc.replacen("\"selfSize\":5", "\"selfSize\":\"5\"", 1);
        let e = parse_heap("deep", bad.as_bytes()).unwrap_err().to_string();
        assert!(e.contains(&format!("line {}", depth + 1)), "{e}");
        assert!(e.contains("invalid type"), "{e}");
    }

    #[test]
    fn damaged_documents_are_errors_with_places() {
        let head = r#"{"callFrame":{"functionName":"a"},"selfSize":1,"children":[]}"#;
        let cases: &[(&str, &str)] = &[
            (r#"{"samples": []}"#, "no `head` tree"),
            (r#"{"head": [1]}"#, "expected a node object"),
            (r#"{"head": {"children": {}}}"#, "an array of child nodes"),
            (
                r#"{"head": {"children": [{"selfSize": 1} {"selfSize": 2}]}}"#,
                "`,` or `]`",
            ),
            (r#"{"head": {"selfSize": -4}}"#, "not a size"),
            (
                r#"{"head": {"selfSize": 1, "children": [{"selfSize": 2, }]}}"#,
                "member name",
            ),
            (
                r#"{"head": {"selfSize": 1, "children": [{"selfSize": 2"#,
                "EOF",
            ),
            (
                r#"{"head": {"selfSize": 1, "junk": [1,}]}"#,
                "line 1, column",
            ),
        ];
        for (doc, want) in cases {
            let e = parse_heap("bad.heapprofile", doc.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("bad.heapprofile") && e.contains(want),
                "{doc}: {e}"
            );
        }
        let trailing = format!(r#"{{"head": {head}}} x"#);
        let e = parse_heap("t", trailing.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("trailing characters"), "{e}");
        let twice = format!(r#"{{"head": {head}, "head": {head}}}"#);
        let e = parse_heap("t", twice.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("a second `head`"), "{e}");
        // An old `.cpuprofile` node without an id is named by its path.
        let old = r#"{"head": {"functionName":"(root)","id":1,"children":[{"functionName":"a","id":2,"children":[{"functionName":"b","hitCount":1,"children":[]}]}]}, "startTime": 1, "samples": [2], "timestamps": [1000001]}"#;
        let e = cpuprofile::parse("old", old.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("head.children[0].children[0]") && e.contains("without an `id`"),
            "{e}"
        );
        // `null` members read as absent, as serde reads the current form's.
        let nulls = old
            .replace(
                r#"[{"functionName":"b","#,
                r#"[{"id":3,"functionName":"b","#,
            )
            .replace(r#""startTime": 1"#, r#""startTime": null"#);
        let s = cpuprofile::parse("old", nulls.as_bytes()).expect("a null startTime reads");
        assert_eq!(s.streams[0].len(), 1);
    }
}
