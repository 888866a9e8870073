//! The span set from the linked spans: spans track by track in display order, their
//! columns filled on two threads, names for unnamed spans, attributes in span order.

use super::events::{ArgStore, Doc, Extra, NO_NAME, Recs};
use super::link::{CLOSE_ARGS, Counts, HAS_ID, NamedTracks, OWN_ARGS, Pending, warnings};
use crate::model::NO_PARENT;
use crate::model::names::{NameId, Names};
use crate::model::spans::{SpanAttrs, SpanSet};

/// The span set: spans track by track in display order, times after the earliest start,
/// names, categories and attributes (pairs pointing into the arena the runs filled). The
/// columns are filled on two threads when there are many spans (each writing the spans
/// of its half, whatever their tracks); names for spans without one are interned after,
/// in the order a sequential pass meets them, and the attributes added in span order.
#[allow(clippy::too_many_arguments)]
pub(super) fn emit(
    recs: &Recs,
    extras: &[Extra<'_>],
    any_cat: bool,
    mut names: Names,
    store: ArgStore,
    pending: &[Vec<Pending>],
    named: NamedTracks,
    doc: Doc,
    c: &Counts,
    threads: usize,
) -> SpanSet {
    let total: usize = pending.iter().map(Vec::len).sum();
    let origin = pending.iter().flatten().map(|p| p.start).min().unwrap_or(0);
    let mut set = SpanSet {
        origin_ns: origin.max(0) as u64,
        ..SpanSet::default()
    };
    // Zeroed by the system: the filling threads fault the pages in.
    set.start_ns = vec![0; total];
    set.dur_ns = vec![0; total];
    set.parent = vec![0; total];
    set.name = vec![0; total];
    set.track = vec![0; total];
    if any_cat {
        set.category = vec![0; total];
    }
    // Each track's first span in the set, in display order.
    let mut base = Vec::with_capacity(named.order.len());
    let mut at = 0u32;
    for &t in &named.order {
        base.push(at);
        at += pending[t as usize].len() as u32;
    }
    let two = threads > 1 && crate::par::two_threads_for(total);
    let cut = if two { total / 2 } else { total };
    let (s0, s1) = set.start_ns.split_at_mut(cut);
    let (d0, d1) = set.dur_ns.split_at_mut(cut);
    let (p0, p1) = set.parent.split_at_mut(cut);
    let (n0, n1) = set.name.split_at_mut(cut);
    let (t0, t1) = set.track.split_at_mut(cut);
    let (c0, c1) = set.category.split_at_mut(if any_cat { cut } else { 0 });
    let fill = |from: usize, cols: Columns<'_>| {
        fill_columns(pending, &named.order, &base, origin, from, cols)
    };
    let first = Columns {
        start_ns: s0,
        dur_ns: d0,
        parent: p0,
        name: n0,
        track: t0,
        category: c0,
    };
    let second = Columns {
        start_ns: s1,
        dur_ns: d1,
        parent: p1,
        name: n1,
        track: t1,
        category: c1,
    };
    let (a, b) = if two {
        crate::par::both(|| fill(0, first), || fill(cut, second))
    } else {
        (fill(0, first), Filled::default())
    };
    // Spans without a name or a category: the names they get, interned in the order of
    // the first span needing each (a span's name before its category).
    let unnamed = a.unnamed.or(b.unnamed);
    let no_cat = a.no_cat.or(b.no_cat);
    let mut needed = [(unnamed, 0, "(unnamed)"), (no_cat, 1, "")];
    needed.sort_by_key(|&(first, k, _)| (first.unwrap_or(usize::MAX), k));
    for (first, k, text) in needed {
        if first.is_none() {
            continue;
        }
        let id = names.intern(text);
        let column = if k == 0 {
            &mut set.name
        } else {
            &mut set.category
        };
        for v in column.iter_mut().filter(|v| **v == NO_NAME) {
            *v = id;
        }
    }
    let ArgStore { keys, pairs, text } = store;
    let mut attrs = SpanAttrs::from_parts(keys, text);
    for (i, p) in a.with_attrs.into_iter().chain(b.with_attrs) {
        span_attrs(&mut attrs, i, p, recs, extras, &pairs);
    }
    attrs.finish();
    set.names = names;
    set.attrs = attrs;
    set.tracks = named.tracks;
    set.track_info = named.info;
    if let Some(u) = doc.display_time_unit {
        set.meta.push(("displayTimeUnit".to_string(), u));
    }
    set.warnings = warnings(c, doc.notes);
    set
}

/// The span set's columns, or a part of them (the category empty when no event has one).
struct Columns<'c> {
    start_ns: &'c mut [u64],
    dur_ns: &'c mut [u64],
    parent: &'c mut [u32],
    name: &'c mut [NameId],
    track: &'c mut [u32],
    category: &'c mut [NameId],
}

/// What filling a part of the columns found besides.
#[derive(Default)]
struct Filled<'p> {
    /// The first span without a name, and without a category (their columns hold
    /// [`NO_NAME`] there).
    unnamed: Option<usize>,
    no_cat: Option<usize>,
    /// The spans with attributes, in order.
    with_attrs: Vec<(u32, &'p Pending)>,
}

/// Fills `cols` with the spans from index `from` on (as many as `cols` holds): the
/// tracks' pending spans in display `order`, track `order[k]` starting at `base[k]`.
fn fill_columns<'p>(
    pending: &'p [Vec<Pending>],
    order: &[u32],
    base: &[u32],
    origin: i64,
    from: usize,
    cols: Columns<'_>,
) -> Filled<'p> {
    let mut out = Filled::default();
    let n = cols.start_ns.len();
    let any_cat = !cols.category.is_empty();
    // The track holding span `from`, and the position in it.
    let mut k = base
        .partition_point(|&b| b as usize <= from)
        .saturating_sub(1);
    let mut i = from;
    while i < from + n && k < order.len() {
        let list = &pending[order[k] as usize];
        let b = base[k] as usize;
        let upto = list.len().min(from + n - b);
        for (j, p) in list.iter().enumerate().take(upto).skip(i - b) {
            let at = b + j;
            let o = at - from;
            cols.start_ns[o] = p.start.abs_diff(origin);
            cols.dur_ns[o] = p.end.saturating_sub(p.start).max(0) as u64;
            cols.parent[o] = if p.parent == u32::MAX {
                NO_PARENT
            } else {
                b as u32 + p.parent
            };
            cols.name[o] = p.name;
            if p.name == NO_NAME && out.unnamed.is_none() {
                out.unnamed = Some(at);
            }
            cols.track[o] = k as u32;
            if any_cat {
                cols.category[o] = p.cat;
                if p.cat == NO_NAME && out.no_cat.is_none() {
                    out.no_cat = Some(at);
                }
            }
            if p.flags != 0 {
                out.with_attrs.push((at as u32, p));
            }
        }
        i = b + upto;
        k += 1;
    }
    out
}

/// Span `i`'s attributes: its async id, its opening event's args, its closing event's.
fn span_attrs(
    attrs: &mut SpanAttrs,
    i: u32,
    p: &Pending,
    recs: &Recs,
    extras: &[Extra<'_>],
    pairs: &[crate::model::spans::AttrPair],
) {
    attrs.begin(i);
    if p.flags & HAS_ID != 0
        && let Some((id, _)) = recs[p.rec as usize].id(extras)
    {
        let pair = attrs.intern_pair("id", id.as_str());
        attrs.push_pair(pair);
    }
    for (flag, k) in [(OWN_ARGS, p.rec), (CLOSE_ARGS, p.close)] {
        if p.flags & flag != 0 {
            let (first, n) = recs[k as usize].args;
            for &pair in &pairs[first as usize..(first + n) as usize] {
                attrs.push_pair(pair);
            }
        }
    }
}
