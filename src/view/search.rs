//! Search: which names match a query, which bars show them, and how much of the profile
//! they account for.
//!
//! The query runs over the interned names, not over the bars: a profile with 100 M bars
//! and 20 k names runs the regex 20 k times. The result is a per-name flag (uploaded for
//! the shader to highlight matches and dim the rest), the matching bars in reading order
//! (left to right, then root to leaf) for `n`/`N`, and the share of the total: the sum of
//! matched nodes that have no matched ancestor, so recursion is not counted twice.
//!
//! A query is a case-insensitive regular expression when it compiles as one, and plain
//! text otherwise (so `foo(` still finds `foo(int)`).

use crate::layout::Layout;
use crate::model::{NO_PARENT, Profile};
use crate::pick::BarRef;
use regex::RegexBuilder;

/// The outcome of a query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchResult {
    /// The query as typed.
    pub query: String,
    /// True when the query was used as a regex, false when taken literally.
    pub is_regex: bool,
    /// Per name id: does it match?
    pub name_matches: Vec<bool>,
    /// Matching bars, left to right, then root to leaf.
    pub bars: Vec<BarRef>,
    /// Ticks covered by matched nodes (no double counting under recursion).
    pub matched_ticks: u64,
    /// `matched_ticks` as a fraction of the grand total.
    pub share: f64,
    /// Different for every result (the GPU's copy of the flags is keyed by it).
    pub generation: u64,
}

static GENERATION: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl SearchResult {
    /// The per-name flags as the bar shader takes them.
    pub fn flags(&self) -> crate::view::draw::NameFlags<'_> {
        crate::view::draw::NameFlags {
            generation: self.generation,
            flags: &self.name_matches,
        }
    }

    /// "12 matches, 34.5 % of total".
    pub fn summary(&self) -> String {
        format!(
            "{} match{}, {} of total",
            self.bars.len(),
            if self.bars.len() == 1 { "" } else { "es" },
            crate::model::units::format_percent(self.share)
        )
    }

    /// Index into `bars` of the first match at or after `(row, tick)` in reading order,
    /// wrapping around; `backwards` finds the last one before it.
    pub fn next_from(
        &self,
        layout: &Layout,
        current: Option<BarRef>,
        backwards: bool,
    ) -> Option<usize> {
        if self.bars.is_empty() {
            return None;
        }
        let key = |b: &BarRef| (layout.rows[b.row].x0[b.index], b.row);
        let Some(cur) = current else {
            return Some(if backwards { self.bars.len() - 1 } else { 0 });
        };
        let k = key(&cur);
        if backwards {
            let i = self.bars.partition_point(|b| key(b) < k);
            Some(if i == 0 { self.bars.len() - 1 } else { i - 1 })
        } else {
            let i = self.bars.partition_point(|b| key(b) <= k);
            Some(if i >= self.bars.len() { 0 } else { i })
        }
    }
}

/// The query as a case-insensitive regex, or as literal text when it is not one.
fn matcher(query: &str) -> (regex::Regex, bool) {
    match RegexBuilder::new(query).case_insensitive(true).build() {
        Ok(r) => (r, true),
        Err(_) => (
            RegexBuilder::new(&regex::escape(query))
                .case_insensitive(true)
                .build()
                .expect("an escaped literal is a valid regex"),
            false,
        ),
    }
}

/// The result's query, regex flag and per-name flags for `query` over `names` (every
/// flag false for an empty query), before anything is counted.
pub(crate) fn match_names(names: &crate::model::Names, query: &str) -> SearchResult {
    let mut out = SearchResult {
        query: query.to_string(),
        generation: GENERATION.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        ..Default::default()
    };
    if query.is_empty() {
        out.name_matches = vec![false; names.len()];
        return out;
    }
    let (re, is_regex) = matcher(query);
    out.is_regex = is_regex;
    out.name_matches = names.iter().map(|(_, n)| re.is_match(n)).collect();
    out
}

/// The bars of `layout` whose name matches, left to right, then root to leaf.
fn matching_bars(layout: &Layout, name_matches: &[bool]) -> Vec<BarRef> {
    let mut bars = Vec::new();
    for (row, r) in layout.rows.iter().enumerate() {
        for i in 0..r.len() {
            if name_matches[r.name[i] as usize] {
                bars.push(BarRef { row, index: i });
            }
        }
    }
    bars.sort_by_key(|b| (layout.rows[b.row].x0[b.index], b.row));
    bars
}

/// Runs `query` over a trace's span names: per-name flags, the matching spans in `layout`
/// by start time, and the time they cover (a matching span inside a matching span counts
/// once) as a share of the trace's duration per track (`share` can pass 1 when tracks run
/// in parallel).
pub fn search_spans(
    spans: &crate::model::spans::SpanSet,
    parent: &[u32],
    layout: &Layout,
    query: &str,
) -> SearchResult {
    let mut out = match_names(&spans.names, query);
    if query.is_empty() {
        return out;
    }
    let hit = |i: usize| out.name_matches[spans.name[i] as usize];
    // Covered by a matching ancestor: resolved along parent chains with memo, iteratively.
    const UNKNOWN: u8 = 2;
    let n = spans.len();
    let mut covered = vec![UNKNOWN; n];
    let mut chain = Vec::new();
    let mut ticks = 0u64;
    for i in 0..n {
        let mut v = i;
        while covered[v] == UNKNOWN {
            chain.push(v);
            let p = parent.get(v).copied().unwrap_or(NO_PARENT);
            if p == NO_PARENT {
                break;
            }
            v = p as usize;
        }
        // `v` is resolved, or a root still unknown (the last on the chain).
        let mut above = if covered[v] == UNKNOWN {
            0
        } else {
            covered[v] | u8::from(hit(v))
        };
        while let Some(u) = chain.pop() {
            covered[u] = above;
            above |= u8::from(hit(u));
        }
        if covered[i] == 0 && hit(i) {
            ticks += spans.dur_ns[i];
        }
    }
    out.matched_ticks = ticks;
    out.share = ticks as f64 / layout.total_ticks.max(1) as f64;
    out.bars = matching_bars(layout, &out.name_matches);
    out
}

/// Runs `query` over `profile`'s names and `layout`'s bars. An empty query matches
/// nothing.
pub fn search(profile: &Profile, layout: &Layout, query: &str) -> SearchResult {
    let out = match_names(&profile.names, query);
    if query.is_empty() {
        return out;
    }
    count_matches(profile, layout, out)
}

/// The result of a search that matches exactly the function `f` (a table row selected
/// beside the flame graph): its bars, and its total with recursion counted once. The
/// query reads as the function's name.
pub fn search_function(
    profile: &Profile,
    layout: &Layout,
    f: crate::model::NameId,
) -> SearchResult {
    let mut out = match_names(&profile.names, "");
    out.query = profile.names.get(f).to_string();
    if let Some(m) = out.name_matches.get_mut(f as usize) {
        *m = true;
    }
    count_matches(profile, layout, out)
}

/// Fills in the bars and the time covered of a result whose name flags are set.
fn count_matches(profile: &Profile, layout: &Layout, mut out: SearchResult) -> SearchResult {
    let tree = &profile.tree;
    // Parents come before children in id order: one pass marks matched ancestors.
    let mut under_match = vec![false; tree.len()];
    let mut ticks = 0u64;
    for n in 0..tree.len() as u32 {
        let p = tree.parent(n);
        let covered =
            p != NO_PARENT && (under_match[p as usize] || out.name_matches[tree.name(p) as usize]);
        under_match[n as usize] = covered;
        if !covered && out.name_matches[tree.name(n) as usize] {
            ticks += tree.total(n);
        }
    }
    out.matched_ticks = ticks;
    out.share = ticks as f64 / tree.grand_total().max(1) as f64;

    out.bars = matching_bars(layout, &out.name_matches);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Limits, load_bytes};
    use crate::layout::flame_layout;

    fn prof(s: &str) -> (Profile, Layout) {
        let p = load_bytes("t", s.as_bytes(), Limits::default()).unwrap();
        let l = flame_layout(&p.tree);
        (p, l)
    }

    #[test]
    fn span_search_counts_nested_matches_once() {
        use crate::layout::timeline::{BandMode, track_layout};
        use crate::model::spans::{RawSpan, SpanSet, SpanTree, Track};
        let raw = |id, parent_id, start_ns, dur_ns, name: &str| RawSpan {
            id,
            parent_id,
            start_ns,
            dur_ns,
            name: name.into(),
            track: 0,
        };
        let s = SpanSet::from_ids(
            crate::model::Names::new(),
            vec![
                raw(1, None, 0, 100, "request"),
                raw(2, Some(1), 10, 50, "db.query"),
                raw(3, Some(2), 20, 10, "db.query"),
                raw(4, Some(1), 70, 20, "render"),
            ],
            vec![Track { name: "t".into() }],
            crate::model::Warnings::default(),
        );
        let t = SpanTree::build(&s);
        let l = track_layout(&s, &t, BandMode::OneTree);
        let r = search_spans(&s, l.parents(&s), &l.layout, "DB\\.");
        assert!(r.is_regex);
        assert_eq!(r.bars.len(), 2);
        assert_eq!(
            r.matched_ticks, 50,
            "the nested query is inside the outer one"
        );
        assert!((r.share - 0.5).abs() < 1e-9);
        let r = search_spans(&s, l.parents(&s), &l.layout, "render(");
        assert!(!r.is_regex);
        assert_eq!(r.bars.len(), 0);
        let r = search_spans(&s, l.parents(&s), &l.layout, "render");
        assert_eq!(r.matched_ticks, 20);
    }

    #[test]
    fn regex_and_literal_queries() {
        let (p, l) = prof("main;work 6\nmain;foo(int) 2\nmain;Work2 2\n");
        let r = search(&p, &l, "^work");
        assert!(r.is_regex);
        assert_eq!(r.bars.len(), 2, "case-insensitive: work and Work2");
        assert!((r.share - 0.8).abs() < 1e-12);
        let lit = search(&p, &l, "foo(");
        assert!(!lit.is_regex);
        assert_eq!(lit.bars.len(), 1);
        assert_eq!(lit.summary(), "1 match, 20% of total");
        assert!(search(&p, &l, "").bars.is_empty());
    }

    #[test]
    fn recursion_is_not_counted_twice() {
        let (p, l) = prof("a;rec;rec;rec 5\na;rec 3\na;b 2\n");
        let r = search(&p, &l, "rec");
        assert_eq!(r.bars.len(), 3);
        assert_eq!(r.matched_ticks, 8);
        assert!((r.share - 0.8).abs() < 1e-12);
    }

    #[test]
    fn next_and_previous_wrap_in_reading_order() {
        let (p, l) = prof("a;x 1\nb;x 1\nc;x;x 1\n");
        let r = search(&p, &l, "x");
        assert_eq!(r.bars.len(), 4);
        let first = r.next_from(&l, None, false).unwrap();
        assert_eq!(first, 0);
        let mut cur = r.bars[first];
        let mut seen = vec![cur];
        for _ in 0..3 {
            cur = r.bars[r.next_from(&l, Some(cur), false).unwrap()];
            seen.push(cur);
        }
        // Left to right; at the same x, root side first.
        let xs: Vec<(u64, usize)> = seen
            .iter()
            .map(|b| (l.rows[b.row].x0[b.index], b.row))
            .collect();
        let mut sorted = xs.clone();
        sorted.sort();
        assert_eq!(xs, sorted);
        // Wraps around, and backwards undoes forwards.
        assert_eq!(r.next_from(&l, Some(cur), false), Some(0));
        let back = r.next_from(&l, Some(r.bars[0]), true).unwrap();
        assert_eq!(back, 3);
    }
}
