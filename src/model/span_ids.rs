//! Span ids resolved to positions, for [`SpanSet::from_ids`](super::spans::SpanSet::from_ids):
//! which spans repeat an earlier span's id (dropped), and each kept span's parent.
//!
//! One hash map of every id, probed once a span to insert it and once to find its
//! parent, misses the caches on nearly every probe once it outgrows them: 29 % of a
//! 200 MB TiDB trace's load (1.3 M spans) went to those two probes. Here the ids are first
//! dealt into partitions by a hash of the id (each partition's map stays within a core's
//! second-level cache), the partitions' maps are built on all cores, and the parent ids
//! are dealt out the same way and looked up in their partition's map. A span keeps the
//! position of the first span with its id, as the single map gave it.
//!
//! Ids `1..=n` in order (the collectors of Jaeger and OTLP number their spans so) need
//! no map at all.

use super::NO_PARENT;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

type Map = HashMap<u64, u32, foldhash::fast::FixedState>;

/// Inputs below this many spans use one map (the partitions would not pay).
const PARTITIONED_MIN: usize = 1 << 16;

/// Spans per partition, about: a map of 16 Ki ids is some 300 KiB.
const PER_PARTITION: usize = 1 << 14;

/// What [`resolve`] finds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// Per input span, whether it is kept (its id not seen on an earlier span); `None`
    /// when every span is kept.
    pub(crate) kept: Option<Vec<bool>>,
    /// Per kept span, in order: the kept position of its parent ([`NO_PARENT`] for none,
    /// or a parent id no span has).
    pub(crate) parent: Vec<u32>,
    /// Spans dropped for repeating an earlier id.
    pub(crate) duplicates: u64,
    /// Kept spans whose parent id no span has.
    pub(crate) orphans: u64,
}

/// Resolves `ids` (one per span) and `parents` (each span's parent id, `None` for a
/// root), on all cores for large inputs.
pub(crate) fn resolve(ids: &[u64], parents: &[Option<u64>]) -> Resolved {
    assert_eq!(ids.len(), parents.len(), "an id and a parent per span");
    let n = ids.len();
    if ids.iter().enumerate().all(|(i, &id)| id == i as u64 + 1) {
        return dense(parents);
    }
    if n < PARTITIONED_MIN {
        return one_map(ids, parents);
    }
    partitioned(ids, parents, crate::par::cores())
}

/// Ids `1..=n` in order: span `i`'s id is `i + 1`.
fn dense(parents: &[Option<u64>]) -> Resolved {
    let n = parents.len() as u64;
    let mut orphans = 0;
    let parent = parents
        .iter()
        .map(|p| match *p {
            None => NO_PARENT,
            Some(p) if (1..=n).contains(&p) => (p - 1) as u32,
            Some(_) => {
                orphans += 1;
                NO_PARENT
            }
        })
        .collect();
    Resolved {
        kept: None,
        parent,
        duplicates: 0,
        orphans,
    }
}

/// The reference: one map of every id.
fn one_map(ids: &[u64], parents: &[Option<u64>]) -> Resolved {
    let mut index = Map::with_capacity_and_hasher(ids.len(), Default::default());
    let mut kept = Vec::with_capacity(ids.len());
    let mut kept_len = 0u32;
    for &id in ids {
        let new = match index.entry(id) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(kept_len);
                kept_len += 1;
                true
            }
        };
        kept.push(new);
    }
    let mut orphans = 0;
    let parent = parents
        .iter()
        .zip(&kept)
        .filter(|&(_, &k)| k)
        .map(|(p, _)| match *p {
            None => NO_PARENT,
            Some(p) => index.get(&p).copied().unwrap_or_else(|| {
                orphans += 1;
                NO_PARENT
            }),
        })
        .collect();
    finish(kept, kept_len as usize, parent, orphans)
}

fn finish(kept: Vec<bool>, kept_len: usize, parent: Vec<u32>, orphans: u64) -> Resolved {
    let duplicates = (kept.len() - kept_len) as u64;
    Resolved {
        kept: (duplicates > 0).then_some(kept),
        parent,
        duplicates,
        orphans,
    }
}

/// The partition of an id, of `1 << bits` (the top bits of a multiplicative hash, which
/// the maps' own hash does not correlate with).
#[inline]
fn partition(id: u64, bits: u32) -> usize {
    (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// Items `(key, position)` dealt into `1 << bits` partitions by key, each partition's in
/// the order given: the items, and where each partition starts (one entry more).
fn deal(
    items: impl Iterator<Item = (u64, u32)> + Clone,
    bits: u32,
) -> (Vec<(u64, u32)>, Vec<usize>) {
    let parts = 1usize << bits;
    let mut start = vec![0usize; parts + 1];
    for (key, _) in items.clone() {
        start[partition(key, bits) + 1] += 1;
    }
    for p in 0..parts {
        start[p + 1] += start[p];
    }
    let mut at = start.clone();
    let mut out = vec![(0u64, 0u32); start[parts]];
    for (key, pos) in items {
        let p = partition(key, bits);
        out[at[p]] = (key, pos);
        at[p] += 1;
    }
    (out, start)
}

/// Runs `f(p)` for every partition `p` of `parts`, the partitions shared out among
/// `threads` threads in contiguous runs of about equal items (`start` as [`deal`] gives).
fn each_partition(start: &[usize], threads: usize, f: impl Fn(usize) + Sync) {
    let parts = start.len() - 1;
    let total = start[parts];
    let threads = threads.clamp(1, parts);
    if threads == 1 {
        (0..parts).for_each(&f);
        return;
    }
    let mut bounds = vec![0usize];
    for t in 1..threads {
        let at = start
            .partition_point(|&s| s < total * t / threads)
            .min(parts);
        bounds.push(at.max(*bounds.last().unwrap_or(&0)));
    }
    bounds.push(parts);
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = bounds
            .windows(2)
            .skip(1)
            .map(|w| {
                let (a, b) = (w[0], w[1]);
                s.spawn(move || (a..b).for_each(f))
            })
            .collect();
        (bounds[0]..bounds[1]).for_each(f);
        handles.into_iter().for_each(crate::par::join);
    });
}

/// [`one_map`]'s answer from maps per partition, built and probed on `threads` threads.
fn partitioned(ids: &[u64], parents: &[Option<u64>], threads: usize) -> Resolved {
    let n = ids.len();
    let bits = (n / PER_PARTITION)
        .max(2)
        .next_power_of_two()
        .trailing_zeros()
        .min(12);
    let (items, start) = deal(ids.iter().enumerate().map(|(i, &id)| (id, i as u32)), bits);
    let parts = start.len() - 1;
    // Each partition's map (id → first span with it), and whether each span is the first
    // with its id (written by the partition of its id).
    let maps: Vec<std::sync::Mutex<Map>> = (0..parts).map(|_| Default::default()).collect();
    let first: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(true)).collect();
    each_partition(&start, threads, |p| {
        let run = &items[start[p]..start[p + 1]];
        let mut map = Map::with_capacity_and_hasher(run.len(), Default::default());
        for &(id, i) in run {
            if let std::collections::hash_map::Entry::Vacant(v) = map.entry(id) {
                v.insert(i);
            } else {
                first[i as usize].store(false, Ordering::Relaxed);
            }
        }
        *maps[p].lock().unwrap_or_else(|e| e.into_inner()) = map;
    });
    drop(items);
    let kept: Vec<bool> = first.into_iter().map(AtomicBool::into_inner).collect();
    // Kept positions of the spans (only needed when some are dropped).
    let kept_len = kept.iter().filter(|&&k| k).count();
    let position: Option<Vec<u32>> = (kept_len < n).then(|| {
        let mut next = 0u32;
        kept.iter()
            .map(|&k| {
                let p = next;
                next += u32::from(k);
                p
            })
            .collect()
    });
    // The kept spans' parent ids, dealt out by id.
    let with_parent = parents
        .iter()
        .zip(&kept)
        .filter(|&(_, &k)| k)
        .enumerate()
        .filter_map(|(k, (p, _))| p.map(|p| (p, k as u32)));
    let (asks, ask_start) = deal(with_parent, bits);
    let parent: Vec<AtomicU32> = (0..kept_len).map(|_| AtomicU32::new(NO_PARENT)).collect();
    let orphans = AtomicU64::new(0);
    each_partition(&ask_start, threads, |p| {
        let map = maps[p].lock().unwrap_or_else(|e| e.into_inner());
        let mut lost = 0;
        for &(pid, k) in &asks[ask_start[p]..ask_start[p + 1]] {
            match map.get(&pid) {
                Some(&i) => {
                    let at = position.as_ref().map_or(i, |pos| pos[i as usize]);
                    parent[k as usize].store(at, Ordering::Relaxed);
                }
                None => lost += 1,
            }
        }
        orphans.fetch_add(lost, Ordering::Relaxed);
    });
    let parent = parent.into_iter().map(AtomicU32::into_inner).collect();
    finish(kept, kept_len, parent, orphans.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::Rng;

    /// Random spans: ids from a small range (so some repeat) or a wide one, parents
    /// among the ids, unknown ids, or none.
    fn random(rng: &mut Rng, n: usize, repeats: bool) -> (Vec<u64>, Vec<Option<u64>>) {
        let range = if repeats { n as u64 } else { u64::MAX };
        let ids: Vec<u64> = (0..n).map(|_| rng.next() % range).collect();
        let parents = (0..n)
            .map(|_| match rng.next() % 5 {
                0 => None,
                1 => Some(rng.next()),
                _ => Some(ids[(rng.next() % n as u64) as usize]),
            })
            .collect();
        (ids, parents)
    }

    #[test]
    fn partitions_give_the_one_maps_answer() {
        let mut rng = Rng(11);
        for (case, &n) in [1usize, 2, 7, 300, 5000, 70_000, 200_000]
            .iter()
            .enumerate()
        {
            for repeats in [false, true] {
                let (ids, parents) = random(&mut rng, n, repeats);
                let want = one_map(&ids, &parents);
                if repeats && n > 10 {
                    assert!(want.duplicates > 0, "case {case}");
                }
                assert!(n < 10 || want.orphans > 0, "case {case}");
                for threads in [1, 2, 3, 8] {
                    let got = partitioned(&ids, &parents, threads);
                    assert_eq!(got, want, "case {case}, {n} spans, {threads} threads");
                }
                assert_eq!(resolve(&ids, &parents), want, "case {case}");
            }
        }
    }

    #[test]
    fn dense_ids_need_no_map() {
        let ids: Vec<u64> = (1..=100_000).collect();
        let parents: Vec<Option<u64>> = (0..100_000u64)
            .map(|i| match i % 4 {
                0 => None,
                1 => Some(i / 2 + 1),
                2 => Some(0),
                _ => Some(200_000),
            })
            .collect();
        let want = one_map(&ids, &parents);
        assert_eq!(want.orphans, 50_000);
        assert_eq!(dense(&parents), want);
        assert_eq!(resolve(&ids, &parents), want);
        assert_eq!(partitioned(&ids, &parents, 2), want);
    }

    /// A parent id that a dropped span repeats resolves to the first span with it, in
    /// kept positions.
    #[test]
    fn parents_resolve_to_the_first_span_with_their_id() {
        let ids = [5, 9, 5, 7, 9, 3];
        let parents = [None, Some(5), Some(9), Some(9), None, Some(3)];
        let r = one_map(&ids, &parents);
        assert_eq!(r.kept, Some(vec![true, true, false, true, false, true]));
        assert_eq!(r.parent, vec![NO_PARENT, 0, 1, 3]);
        assert_eq!(r.duplicates, 2);
        // The same spans many times over, with distinct ids per copy, through partitions.
        let (mut big_ids, mut big_parents) = (Vec::new(), Vec::new());
        for copy in 0..20_000u64 {
            let base = copy * 10;
            big_ids.extend(ids.iter().map(|&id| base + id));
            big_parents.extend(parents.iter().map(|p| p.map(|p| base + p)));
        }
        let want = one_map(&big_ids, &big_parents);
        assert_eq!(want.duplicates, 40_000);
        assert_eq!(&want.parent[4..8], &[NO_PARENT, 4, 5, 7]);
        assert_eq!(partitioned(&big_ids, &big_parents, 2), want);
    }
}
