//! V8 CPU profiles: Chrome DevTools' `.cpuprofile` (what `node --cpu-prof` writes) and the
//! same profile inside Chrome performance traces (`Profile` + `ProfileChunk` events, older
//! traces' single `CpuProfile` event), as time-ordered samples.
//!
//! A profile is a tree of `nodes` (`id`, `callFrame {functionName, url, lineNumber,
//! columnNumber}`, and `parent` or `children`), `samples` (a node id per sample) and
//! `timeDeltas` (microseconds from the previous sample; the first from `startTime`).
//! A trace splits it: the `Profile` event (by `id`, on the sampled thread) gives
//! `startTime`, and `ProfileChunk` events with the same `id` add nodes, samples and deltas.
//!
//! Rules, as DevTools and speedscope read them: `(root)` is not a frame; `(program)`,
//! `(idle)` and `(garbage collector)` are; an empty function name is `(anonymous)`; a
//! frame with a script is named `name file:line` (the file's last path segment, 1-based
//! line) so two functions of one name in two files stay apart. Deltas can be negative
//! (samples out of order): the samples are sorted by time. A sample's weight is the time
//! until the next sample of its thread, in nanoseconds (the last one gets the median
//! interval), so totals read as time, as DevTools' self and total times do.
//!
//! Node ids are looked up in a map, never used as indices; the tree is walked with a loop
//! that gives up on cycles (counted), so nothing in the file sizes an allocation or
//! recursion.

use super::ImportError;
use crate::model::samples::{EMPTY_STACK, Samples, StackId, ThreadInfo};
use crate::model::units::{Unit, ValueFormat};
use crate::model::{SourceFormat, Warnings};
use serde::Deserialize;
use std::collections::HashMap;

/// A call frame.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallFrame {
    /// The function's name; empty for anonymous functions.
    #[serde(default)]
    pub function_name: String,
    /// The script's URL.
    #[serde(default)]
    pub url: String,
    /// 0-based line.
    #[serde(default)]
    pub line_number: Option<i64>,
}

/// A node of the profile's tree.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Node {
    /// Its id.
    pub id: u64,
    /// Its frame.
    #[serde(default)]
    pub call_frame: CallFrame,
    /// Its parent (newer profiles).
    #[serde(default)]
    pub parent: Option<u64>,
    /// Its children (older profiles).
    #[serde(default)]
    pub children: Option<Vec<u64>>,
    /// Samples that hit it (its self count), when the writer gives it.
    #[serde(default)]
    pub hit_count: u64,
}

/// The profile object (`.cpuprofile`, a trace's `cpuProfile`).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    /// The tree.
    #[serde(default)]
    pub nodes: Vec<Node>,
    /// Microseconds.
    #[serde(default)]
    pub start_time: Option<f64>,
    /// A node id per sample.
    #[serde(default)]
    pub samples: Vec<u64>,
    /// Microseconds from the previous sample.
    #[serde(default)]
    pub time_deltas: Vec<f64>,
}

/// One thread's profile being put together from a trace's events (or one file).
#[derive(Debug, Default)]
pub struct Assembly {
    /// Thread name.
    pub thread: ThreadInfo,
    /// Microseconds on the trace's clock.
    pub start_us: Option<f64>,
    /// Every node seen.
    pub nodes: Vec<Node>,
    /// `(node, delta µs)` per sample in file order.
    pub samples: Vec<(u64, f64)>,
}

impl Assembly {
    /// Adds a profile (or a chunk of one).
    pub fn add(&mut self, p: Profile, deltas_outside: Option<Vec<f64>>) {
        if self.start_us.is_none() {
            self.start_us = p.start_time;
        }
        self.nodes.extend(p.nodes);
        let deltas = deltas_outside.unwrap_or(p.time_deltas);
        let n = p.samples.len();
        self.samples.extend(
            p.samples
                .into_iter()
                .zip(deltas.into_iter().chain(std::iter::repeat(0.0)))
                .take(n),
        );
    }
}

/// Adds the samples of `a` as a thread of `out` (event "cpu", weights in nanoseconds);
/// damage is counted in `warnings`.
pub fn add_thread(out: &mut Samples, a: Assembly, warnings: &mut Warnings) {
    let event = out.event(
        "cpu",
        ValueFormat {
            unit: Unit::Nanoseconds,
            ..ValueFormat::default()
        },
    );
    let (index, stack) = node_stacks(out, &a.nodes, warnings);
    // Times: start + running sum of the deltas; then sorted, weighed by the gap to the
    // next sample.
    let start_ns = (a.start_us.unwrap_or(0.0) * 1000.0).max(0.0);
    let mut t = start_ns;
    let mut unknown = 0u64;
    let mut timed: Vec<(u64, StackId)> = Vec::with_capacity(a.samples.len());
    for &(node, delta) in &a.samples {
        if delta.is_finite() {
            t += delta * 1000.0;
        }
        let Some(&i) = index.get(&node) else {
            unknown += 1;
            continue;
        };
        timed.push((t.max(0.0).min(u64::MAX as f64 / 2.0) as u64, stack[i]));
    }
    if unknown > 0 {
        warnings.notes.push(format!(
            "{unknown} samples naming a node the profile does not have skipped"
        ));
    }
    timed.sort_by_key(|&(t, _)| t);
    let mut gaps: Vec<u64> = timed.windows(2).map(|w| w[1].0 - w[0].0).collect();
    let median = if gaps.is_empty() {
        0
    } else {
        let mid = gaps.len() / 2;
        *gaps.select_nth_unstable(mid).1
    };
    let thread = out.add_thread(a.thread);
    let s = out.stream(thread, event);
    for k in 0..timed.len() {
        let (time, st) = timed[k];
        let w = timed.get(k + 1).map_or(median, |n| n.0 - time).max(1);
        out.push(s, time, st, w);
    }
}

/// Each node's stack in `out` (by index in `nodes`), and the index of each node id.
fn node_stacks(
    out: &mut Samples,
    nodes: &[Node],
    warnings: &mut Warnings,
) -> (HashMap<u64, usize>, Vec<StackId>) {
    // Parents from `parent`, or from `children` lists.
    let index: HashMap<u64, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let mut parent: Vec<Option<usize>> = nodes
        .iter()
        .map(|n| n.parent.and_then(|p| index.get(&p).copied()))
        .collect();
    for (i, n) in nodes.iter().enumerate() {
        for c in n.children.iter().flatten() {
            if let Some(&ci) = index.get(c)
                && parent[ci].is_none()
                && ci != i
            {
                parent[ci] = Some(i);
            }
        }
    }
    // Each node's stack, resolved root first with an explicit path; a cycle is cut.
    const UNRESOLVED: StackId = StackId::MAX - 1;
    let mut stack = vec![UNRESOLVED; nodes.len()];
    let mut path = Vec::new();
    let mut cycles = 0u64;
    let mut on_path = vec![false; nodes.len()];
    for start in 0..nodes.len() {
        if stack[start] != UNRESOLVED {
            continue;
        }
        path.clear();
        let mut at = Some(start);
        let mut base = EMPTY_STACK;
        while let Some(i) = at {
            if stack[i] != UNRESOLVED {
                base = stack[i];
                break;
            }
            if on_path[i] {
                cycles += 1;
                break;
            }
            on_path[i] = true;
            path.push(i);
            at = parent[i];
        }
        for &i in path.iter().rev() {
            on_path[i] = false;
            let f = &nodes[i].call_frame;
            base = if f.function_name == "(root)" {
                base
            } else {
                let name = frame_name(f);
                let id = out.intern(&name);
                out.stacks.child(base, id)
            };
            stack[i] = base;
        }
    }
    if cycles > 0 {
        warnings
            .notes
            .push(format!("{cycles} cycles in the node tree cut"));
    }
    (index, stack)
}

/// The profile the `nodes` array at the head of a `.cpuprofile` gives by the nodes' own
/// `hitCount`s (each node's self samples, counted), without reading the samples: the
/// preview of a big profile, whose node list comes first and is small. `None` when the
/// head holds no complete `nodes` array or its nodes carry no hit counts.
pub fn hit_count_profile(file: &str, head: &[u8]) -> Option<crate::model::Profile> {
    let nodes = nodes_at_head(head)?;
    if nodes.iter().all(|n| n.hit_count == 0) {
        return None;
    }
    let mut out = Samples::new(file, SourceFormat::CpuProfile);
    let mut warnings = Warnings::default();
    let (_, stack) = node_stacks(&mut out, &nodes, &mut warnings);
    let event = out.event("cpu", ValueFormat::default());
    let thread = out.add_thread(ThreadInfo {
        name: "main".into(),
        ..ThreadInfo::default()
    });
    let s = out.stream(thread, event);
    for (k, n) in nodes.iter().enumerate() {
        if n.hit_count > 0 {
            out.push(s, k as u64, stack[k], n.hit_count);
        }
    }
    out.finish().aggregate(Default::default()).ok()
}

/// The top-level `"nodes": [...]` array of a JSON object in `head`, parsed, when it ends
/// within `head` (strings and escapes skipped while its brackets are matched).
fn nodes_at_head(head: &[u8]) -> Option<Vec<Node>> {
    let open = head.iter().position(|b| !b.is_ascii_whitespace())?;
    if head[open] != b'{' {
        return None;
    }
    let mut i = open + 1;
    let ws = |i: &mut usize| {
        while *i < head.len() && head[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    ws(&mut i);
    let rest = &head[i..];
    let key = b"\"nodes\"";
    if !rest.starts_with(key) {
        return None;
    }
    i += key.len();
    ws(&mut i);
    if head.get(i) != Some(&b':') {
        return None;
    }
    i += 1;
    ws(&mut i);
    if head.get(i) != Some(&b'[') {
        return None;
    }
    let start = i;
    let mut depth = 0usize;
    while i < head.len() {
        match head[i] {
            b'"' => {
                i += 1;
                while i < head.len() && head[i] != b'"' {
                    i += if head[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return serde_json::from_slice(&head[start..=i]).ok();
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `name file:line`, `(anonymous) file:line`, or the bare name for frames without a script.
fn frame_name(f: &CallFrame) -> String {
    let name = if f.function_name.is_empty() {
        "(anonymous)"
    } else {
        &f.function_name
    };
    if f.url.is_empty() {
        return name.to_string();
    }
    let file = f
        .url
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(&f.url);
    match f.line_number {
        Some(l) if l >= 0 => format!("{name} {file}:{}", l + 1),
        _ => format!("{name} {file}"),
    }
}

/// Parses a `.cpuprofile` file.
pub fn parse(file: &str, text: &[u8]) -> Result<Samples, ImportError> {
    let p: Profile = serde_json::from_slice(text).map_err(|e| ImportError::json(file, &e))?;
    if p.samples.is_empty() {
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail: format!(
                "the profile has {} nodes but an empty samples array",
                p.nodes.len()
            ),
        });
    }
    let mut out = Samples::new(file, SourceFormat::CpuProfile);
    let mut warnings = Warnings::default();
    let mut a = Assembly {
        thread: ThreadInfo {
            name: "main".into(),
            ..ThreadInfo::default()
        },
        ..Assembly::default()
    };
    if p.time_deltas.len() != p.samples.len() {
        warnings.notes.push(format!(
            "{} samples but {} timeDeltas: missing deltas count as 0",
            p.samples.len(),
            p.time_deltas.len()
        ));
    }
    a.add(p, None);
    add_thread(&mut out, a, &mut warnings);
    out.meta_mut().warnings = warnings;
    Ok(out.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROFILE: &str = r#"{"nodes":[
        {"id":1,"callFrame":{"functionName":"(root)","url":"","lineNumber":-1},"children":[2,4]},
        {"id":2,"callFrame":{"functionName":"main","url":"file:///a/app.js","lineNumber":9},"children":[3]},
        {"id":3,"callFrame":{"functionName":"","url":"file:///a/app.js","lineNumber":19}},
        {"id":4,"callFrame":{"functionName":"(idle)","url":""}}],
        "startTime":1000,"endTime":2000,
        "samples":[2,3,3,4,2],"timeDeltas":[100,100,100,100,200]}"#;

    #[test]
    fn a_cpuprofile_in_time_order_with_time_weights() {
        let s = parse("t.cpuprofile", PROFILE.as_bytes()).unwrap();
        let st = &s.streams[0];
        assert_eq!(s.origin_ns, 1_100_000);
        assert_eq!(st.time, [0, 100_000, 200_000, 300_000, 500_000]);
        // Each sample weighs the time to the next; the last the median gap.
        let w: Vec<u64> = (0..5).map(|i| st.weight.get(i)).collect();
        assert_eq!(w, [100_000, 100_000, 100_000, 200_000, 100_000]);
        let p = s.aggregate(Default::default()).unwrap();
        assert_eq!(
            p.folded_lines(),
            [
                "(idle) 200000",
                "main app.js:10 200000",
                "main app.js:10;(anonymous) app.js:20 200000"
            ]
        );
        assert_eq!(p.values.unit, Unit::Nanoseconds);
    }

    #[test]
    fn parents_negative_deltas_cycles_and_unknown_nodes() {
        let text = r#"{"nodes":[
            {"id":10,"callFrame":{"functionName":"(root)"}},
            {"id":11,"callFrame":{"functionName":"a"},"parent":10},
            {"id":12,"callFrame":{"functionName":"b"},"parent":13},
            {"id":13,"callFrame":{"functionName":"c"},"parent":12}],
            "startTime":0,"samples":[11,12,99,11],"timeDeltas":[10,20,5,-15]}"#;
        let s = parse("t.cpuprofile", text.as_bytes()).unwrap();
        let notes = &s.meta().warnings.notes;
        assert!(notes.iter().any(|n| n.contains("1 cycles")), "{notes:?}");
        assert!(
            notes.iter().any(|n| n.contains("1 samples naming")),
            "{notes:?}"
        );
        // Times 10, 30, (35 skipped), 20 µs: sorted.
        assert_eq!(s.streams[0].time, [0, 10_000, 20_000]);
    }

    /// The preview of a big profile: the node list's hit counts. In a real `node
    /// --cpu-prof` recording they count a few more ticks than the samples array holds
    /// (277 against 264 here: `(program)` has 14 hits and 1 sample), on the same stacks
    /// and more. A head that ends inside the node list gives no preview.
    #[test]
    fn the_node_lists_hit_counts_are_the_samples_aggregated() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/data/recordings/node-fib.cpuprofile"
        );
        let bytes = std::fs::read(path).unwrap();
        let hits = hit_count_profile("fib.cpuprofile", &bytes).unwrap();
        let p: Profile = serde_json::from_slice(&bytes).unwrap();
        let (h, n) = (hits.tree.grand_total(), p.samples.len() as u64);
        assert!(h >= n && h <= n + n / 10, "{h} hits, {n} samples");
        let paths = |p: &crate::model::Profile| -> std::collections::BTreeSet<String> {
            p.folded_lines()
                .iter()
                .map(|l| l.rsplit_once(' ').unwrap().0.to_string())
                .collect()
        };
        let full = parse("fib.cpuprofile", &bytes).unwrap();
        let full = full.aggregate(Default::default()).unwrap();
        assert!(paths(&full).is_subset(&paths(&hits)));
        // Cut inside the node list, or a list that is not the first key: no preview.
        let cut = memchr::memmem::find(&bytes, b"\"samples\"").unwrap() / 2;
        assert!(hit_count_profile("x", &bytes[..cut]).is_none());
        assert!(hit_count_profile("x", br#"{"startTime":1,"nodes":[]}"#).is_none());
        assert!(nodes_at_head(br#" {"nodes" : [{"id":1,"hitCount":2}], "x":1"#).is_some());
    }

    #[test]
    fn bad_json_and_no_samples_are_clear() {
        let e = parse("x.cpuprofile", b"{\"nodes\": [1,")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("x.cpuprofile: line 1, column"), "{e}");
        let e = parse("x.cpuprofile", br#"{"nodes":[],"samples":[]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty samples array"), "{e}");
    }
}
