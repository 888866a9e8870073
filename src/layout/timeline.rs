//! Span timelines: rows for spans with start times, following the TiDB Dashboard's depth
//! rule (itself Datadog's), made overlap-free.
//!
//! The rule (see `../shared/seeds/001_*`): siblings are placed right to left (latest start
//! first). The rightmost sits one row under its parent. A sibling that overlaps its right
//! neighbour in time (comparing its *latest end over its whole subtree* with the
//! neighbour's start, or starting at the same time) goes one row under a leaf neighbour,
//! or two rows under the deepest descendant of a neighbour with children (the empty row
//! separates the two families); otherwise it sits one row under the parent. A span pushed
//! down more than one row below its parent gets a thin connector line back to it.
//!
//! The seed compares only with the adjacent right sibling, which lets a long span collide
//! with a sibling further right that was itself pushed down (A long, B short, C pushed
//! under D: A lands on C's row). Here a span goes below *every* right sibling it overlaps,
//! using a prefix-maximum (Fenwick) tree over the siblings already placed, which is the
//! seed's result whenever only the neighbour overlaps, and makes rows overlap-free by
//! induction: a parent's subtree stays within its own rows and time extent.
//!
//! Everything is iterative (explicit frames), so a million nested spans are fine.

use super::Row;
use crate::model::NO_PARENT;
use crate::model::spans::{SpanSet, SpanTree};

/// A thin vertical line from a span up to its parent, drawn where the span was pushed
/// down by an overlapping sibling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Connector {
    /// The pushed-down span.
    pub span: u32,
    /// The parent's row.
    pub from_row: u32,
    /// The span's row.
    pub to_row: u32,
    /// Where the line stands: the span's start (relative ns).
    pub at_ns: u64,
}

/// Spans placed in rows.
#[derive(Clone, Debug, Default)]
pub struct TimelineLayout {
    /// Row of each span.
    pub depth: Vec<u32>,
    /// Rows of spans sorted by start; `node` is the span index, and an instant (zero
    /// duration) span is one nanosecond wide so it can be found and drawn.
    pub rows: Vec<Row>,
    /// Connector lines.
    pub connectors: Vec<Connector>,
}

/// Prefix maximum over positions, for "deepest requirement among the right siblings this
/// span overlaps" (positions not yet placed hold 0).
struct PrefixMax(Vec<u32>);

impl PrefixMax {
    fn new(n: usize) -> Self {
        PrefixMax(vec![0; n + 1])
    }
    fn set(&mut self, pos: usize, v: u32) {
        let mut i = pos + 1;
        while i < self.0.len() {
            self.0[i] = self.0[i].max(v);
            i += i & i.wrapping_neg();
        }
    }
    fn max_upto(&self, pos: usize) -> u32 {
        let mut i = pos + 1;
        let mut m = 0;
        while i > 0 {
            m = m.max(self.0[i]);
            i -= i & i.wrapping_neg();
        }
        m
    }
}

struct Frame<'a> {
    kids: &'a [u32],
    /// Row of the first child: parent's row + 1 (0 for roots).
    base: u32,
    /// Next child to place, counting down (`kids.len()` when none placed yet).
    next: usize,
    /// Requirements of placed children: the row just below them (+1 more with children).
    need: PrefixMax,
    /// Deepest row seen in this group.
    deepest: u32,
    /// The span whose children these are (`NO_PARENT` for the roots).
    owner: u32,
}

/// Places `set`'s spans (linked by `tree`) in rows.
pub fn timeline_layout(set: &SpanSet, tree: &SpanTree) -> TimelineLayout {
    let n = set.len();
    let mut depth = vec![0u32; n];
    let mut max_child_depth = vec![0u32; n];
    let begin = |i: u32| set.start_ns[i as usize];

    let mut stack: Vec<Frame<'_>> = vec![Frame {
        kids: &tree.roots,
        base: 0,
        next: tree.roots.len(),
        need: PrefixMax::new(tree.roots.len()),
        deepest: 0,
        owner: NO_PARENT,
    }];

    while let Some(top) = stack.last_mut() {
        if top.next == 0 {
            // All children placed: finish the owner's subtree depth.
            let done = stack.pop().expect("non-empty");
            if done.owner == NO_PARENT {
                continue;
            }
            let o = done.owner as usize;
            let deepest = if done.kids.is_empty() {
                depth[o]
            } else {
                done.deepest
            };
            max_child_depth[o] = deepest.max(depth[o]);
            if let Some(parent) = stack.last_mut() {
                let pos = parent.next;
                let leaf = max_child_depth[o] == depth[o];
                parent
                    .need
                    .set(pos, max_child_depth[o] + if leaf { 1 } else { 2 });
                parent.deepest = parent.deepest.max(max_child_depth[o]);
            }
            continue;
        }
        top.next -= 1;
        let i = top.next;
        let cur = top.kids[i];
        let c = cur as usize;
        // Right siblings this span (with its descendants) overlaps in time.
        let reach = tree.max_end_ns[c].max(begin(cur) + 1);
        let m = top.kids.partition_point(|&k| begin(k) < reach);
        let required = if m > i + 1 {
            top.need.max_upto(m - 1)
        } else {
            0
        };
        depth[c] = top.base.max(required);
        top.deepest = top.deepest.max(depth[c]);
        let kids = tree.children(cur);
        stack.push(Frame {
            kids,
            base: depth[c] + 1,
            next: kids.len(),
            need: PrefixMax::new(kids.len()),
            deepest: depth[c] + 1,
            owner: cur,
        });
    }

    // Rows, each sorted by start.
    let rows_n = depth.iter().copied().max().map_or(0, |d| d as usize + 1);
    let mut per_row: Vec<Vec<u32>> = vec![Vec::new(); rows_n];
    for i in 0..n {
        per_row[depth[i] as usize].push(i as u32);
    }
    let rows = per_row
        .into_iter()
        .map(|mut spans| {
            spans.sort_by_key(|&s| (set.start_ns[s as usize], s));
            let mut r = Row::default();
            for s in spans {
                let x0 = set.start_ns[s as usize];
                r.x0.push(x0);
                r.x1.push(set.end_ns(s as usize).max(x0 + 1));
                r.name.push(set.name[s as usize]);
                r.node.push(s);
            }
            r
        })
        .collect();

    let connectors = (0..n)
        .filter_map(|i| {
            let p = tree.parent[i];
            (p != NO_PARENT && depth[i] > depth[p as usize] + 1).then(|| Connector {
                span: i as u32,
                from_row: depth[p as usize],
                to_row: depth[i],
                at_ns: set.start_ns[i],
            })
        })
        .collect();

    TimelineLayout {
        depth,
        rows,
        connectors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Names;
    use crate::model::Warnings;
    use crate::model::spans::{RawSpan, Track};

    fn set(spans: &[(u64, u64, u64, u64, &str)]) -> SpanSet {
        SpanSet::from_ids(
            Names::new(),
            spans
                .iter()
                .map(|&(id, parent, start, dur, name)| RawSpan {
                    id,
                    parent_id: (parent != 0).then_some(parent),
                    start_ns: start,
                    dur_ns: dur,
                    name: name.into(),
                    track: 0,
                })
                .collect(),
            vec![Track { name: "t".into() }],
            Warnings::default(),
        )
    }

    fn depth_of(s: &SpanSet, l: &TimelineLayout, name: &str) -> u32 {
        let i = (0..s.len())
            .find(|&i| s.names.get(s.name[i]) == name)
            .unwrap();
        l.depth[i]
    }

    fn check(s: &SpanSet, t: &SpanTree, l: &TimelineLayout) {
        for (d, row) in l.rows.iter().enumerate() {
            for i in 1..row.len() {
                assert!(
                    row.x0[i] >= row.x1[i - 1],
                    "row {d}: span {} overlaps {}",
                    row.node[i],
                    row.node[i - 1]
                );
            }
        }
        let mut expected = 0;
        for i in 0..s.len() {
            let p = t.parent[i];
            if p != NO_PARENT {
                assert!(
                    l.depth[i] > l.depth[p as usize],
                    "span {i} not below its parent"
                );
                if l.depth[i] > l.depth[p as usize] + 1 {
                    expected += 1;
                    assert!(l.connectors.iter().any(|c| c.span == i as u32));
                }
            }
        }
        assert_eq!(
            l.connectors.len(),
            expected,
            "connectors exactly where pushed down"
        );
    }

    /// The seed's c1/c2 example: overlapping leaf siblings; c2 (later) is placed first,
    /// c1 goes one row under it, with a connector to p.
    #[test]
    fn seed_c1_c2() {
        let s = set(&[
            (1, 0, 0, 100, "p"),
            (2, 1, 10, 50, "c1"),
            (3, 1, 40, 40, "c2"),
        ]);
        let t = SpanTree::build(&s);
        let l = timeline_layout(&s, &t);
        assert_eq!(depth_of(&s, &l, "p"), 0);
        assert_eq!(depth_of(&s, &l, "c2"), 1);
        assert_eq!(depth_of(&s, &l, "c1"), 2);
        assert_eq!(l.connectors.len(), 1);
        assert_eq!(l.connectors[0].from_row, 0);
        assert_eq!(l.connectors[0].at_ns, 10);
        check(&s, &t, &l);
    }

    /// The seed's b1/b2/c1/d1 example: b1 ends before b2 starts, but its child d1 does
    /// not, so b1 goes under b2's family with an empty row between.
    #[test]
    fn seed_b1_b2_c1_d1() {
        let s = set(&[
            (1, 0, 0, 100, "a"),
            (2, 1, 0, 30, "b1"),
            (3, 2, 10, 40, "d1"),
            (4, 1, 40, 50, "b2"),
            (5, 4, 45, 15, "c1"),
        ]);
        let t = SpanTree::build(&s);
        let l = timeline_layout(&s, &t);
        assert_eq!(depth_of(&s, &l, "b2"), 1);
        assert_eq!(depth_of(&s, &l, "c1"), 2);
        assert_eq!(
            depth_of(&s, &l, "b1"),
            4,
            "two rows under b2's deepest descendant"
        );
        assert_eq!(depth_of(&s, &l, "d1"), 5);
        check(&s, &t, &l);
    }

    #[test]
    fn non_overlapping_siblings_share_a_row() {
        let s = set(&[
            (1, 0, 0, 100, "p"),
            (2, 1, 0, 10, "x"),
            (3, 1, 20, 10, "y"),
            (4, 1, 40, 10, "z"),
        ]);
        let t = SpanTree::build(&s);
        let l = timeline_layout(&s, &t);
        assert_eq!(l.rows.len(), 2);
        assert_eq!(l.rows[1].len(), 3);
        assert!(l.connectors.is_empty());
    }

    /// Where the seed's neighbour-only rule would overlap: A spans B, C and D; C was pushed
    /// under D. A must go under C, not merely under B.
    #[test]
    fn a_long_span_goes_under_every_sibling_it_overlaps() {
        let s = set(&[
            (1, 0, 0, 200, "p"),
            (2, 1, 0, 100, "A"),
            (3, 1, 10, 10, "B"),
            (4, 1, 30, 10, "C"),
            (5, 1, 35, 15, "D"),
        ]);
        let t = SpanTree::build(&s);
        let l = timeline_layout(&s, &t);
        assert_eq!(depth_of(&s, &l, "D"), 1);
        assert_eq!(depth_of(&s, &l, "C"), 2);
        assert_eq!(depth_of(&s, &l, "B"), 1);
        assert_eq!(depth_of(&s, &l, "A"), 3);
        check(&s, &t, &l);
    }

    #[test]
    fn random_trees_keep_the_invariants() {
        let mut seed = 0x5eed_u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        for round in 0..60 {
            let n = 2 + next() % 300;
            let mut spans = vec![(1u64, 0u64, 0u64, 10_000u64, "root".to_string())];
            for id in 2..=n {
                let parent = 1 + next() % (id - 1);
                let (_, _, ps, pd, _) = spans[(parent - 1) as usize].clone();
                // Children mostly inside their parent, sometimes spilling out.
                let start = ps + next() % (pd.max(1));
                let dur = next() % (pd / 2 + 5) + if next() % 7 == 0 { pd } else { 0 };
                spans.push((id, parent, start, dur, format!("s{id}")));
            }
            let refs: Vec<(u64, u64, u64, u64, &str)> = spans
                .iter()
                .map(|(a, b, c, d, e)| (*a, *b, *c, *d, e.as_str()))
                .collect();
            let s = set(&refs);
            let t = SpanTree::build(&s);
            let l = timeline_layout(&s, &t);
            check(&s, &t, &l);
            let _ = round;
        }
    }

    #[test]
    fn a_million_nested_spans() {
        let spans: Vec<RawSpan> = (1..=1_000_000u64)
            .map(|i| RawSpan {
                id: i,
                parent_id: (i > 1).then_some(i - 1),
                start_ns: i,
                dur_ns: 3_000_000 - 2 * i,
                name: "f".into(),
                track: 0,
            })
            .collect();
        let s = SpanSet::from_ids(Names::new(), spans, vec![], Warnings::default());
        let t = SpanTree::build(&s);
        let l = timeline_layout(&s, &t);
        assert_eq!(l.rows.len(), 1_000_000);
        assert!(l.connectors.is_empty());
    }
}
