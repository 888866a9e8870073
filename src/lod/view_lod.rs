//! Level-of-detail tiers built by merge events instead of whole-row passes: the one
//! tier per row an export's frame draws, and the whole pyramid a window keeps.
//!
//! [`Lod::build_for_view`] finds a row's tier by merging the whole row again at every
//! threshold `2^k` up to the frame's ticks per pixel (each pass merges the runs of
//! neighbours that are both narrower than `2^k` with a gap narrower than `2^k`), keeping
//! the last result that halves the previous kept one. A deep row of a large profile
//! needs about ten such passes, each copying nearly the whole row, because at the first
//! thresholds only a few neighbours merge.
//!
//! [`view_lod`] gives the same tiers, bar for bar, by following only what changes. Each
//! pair of neighbours merges at the first threshold `k` with `2^k` above both widths and
//! the gap: its level, the largest of their bit lengths. Pairs wait in buckets by level;
//! a pass at threshold `k` takes the pairs of levels up to `k` (all of them neighbours
//! before the pass, as in a whole-row pass), merges each run they chain into one bar (its
//! name the widest member's, the first one on a tie), and files the pairs the new bars
//! form with their neighbours for later passes. A row is a linked list of runs of
//! consecutive bars, so a bar is known by its first bar's index, its end by the next
//! run's. A pass costs what it merges, a kept tier what it holds: about two passes over
//! the row in all, instead of one per threshold. The whole pyramid ([`Lod::build`]) is
//! the same walk with no threshold limit, keeping a snapshot of the runs at every pass
//! that halves the last kept tier (all snapshots together hold at most the row's count).

use super::{Lod, Tier};
use crate::layout::{Layout, Row};
use crate::model::NameId;

/// The tiers [`Lod::build_for_view`] builds for `ticks_per_px`, with the same bars;
/// large layouts on all cores, a row per thread at a time.
pub fn view_lod(layout: &Layout, ticks_per_px: f64) -> Lod {
    Lod {
        rows: super::per_row(layout, |row, scratch: &mut Scratch| {
            view_row(row, ticks_per_px, false, scratch)
        }),
    }
}

/// The whole pyramid (every tier that halves the last kept one; [`Lod::build`]), with
/// the bars [`Lod::build_by_passes`] gives, by the same merge events.
pub(super) fn pyramid(layout: &Layout) -> Lod {
    Lod {
        rows: super::per_row(layout, |row, scratch: &mut Scratch| {
            view_row(row, f64::INFINITY, true, scratch)
        }),
    }
}

/// Buffers a thread reuses from row to row.
#[derive(Default)]
struct Scratch {
    /// Per run (by its first bar): the first bar of the next run (`n` after the last).
    next: Vec<u32>,
    /// Per run: the first bar of the previous run.
    prev: Vec<u32>,
    /// Per run: its name (the widest member's).
    name: Vec<NameId>,
    /// Per run: whether it merges with the next run in the current pass.
    joins: Vec<bool>,
    /// Per run: the level of the pair it forms with the next run, as last filed.
    filed: Vec<u8>,
    /// Pairs (by their left run) waiting by level; stale entries are skipped.
    buckets: Vec<Vec<u32>>,
    /// The left runs of the pairs merging in the current pass.
    taken: Vec<u32>,
}

/// Bit length: the smallest `k` with `v < 2^k`.
fn bits(v: u64) -> u32 {
    64 - v.leading_zeros()
}

/// One row's tier (or none, when the frame draws the row itself), as `build_row` of
/// `crate::lod` gives it; with `keep_all`, every tier it keeps, as for the whole pyramid.
fn view_row(row: &Row, ticks_per_px: f64, keep_all: bool, s: &mut Scratch) -> Vec<Tier> {
    let n = row.len();
    if n < 2 {
        return Vec::new();
    }
    let within = |shift: u32| crate::lod::folds_at(shift, ticks_per_px);
    let (x0, x1) = (&row.x0[..], &row.x1[..]);
    s.next.clear();
    s.next.extend(1..=n as u32);
    s.prev.clear();
    s.prev.extend((0..n as u32).map(|i| i.wrapping_sub(1)));
    s.name.clear();
    s.name.extend_from_slice(&row.name);
    s.joins.clear();
    s.joins.resize(n, false);
    s.buckets.resize_with(65, Vec::new);
    for b in &mut s.buckets {
        b.clear();
    }
    // The level of the pair (run `a`, the run after it), in the current state.
    let level = |next: &[u32], a: u32| -> u32 {
        let b = next[a as usize];
        let wa = x1[b as usize - 1] - x0[a as usize];
        let wb = x1[next[b as usize] as usize - 1] - x0[b as usize];
        let gap = x0[b as usize] - x1[b as usize - 1];
        bits(wa.max(wb).max(gap))
    };
    // Pairs above the highest threshold the frame reaches never merge: not filed.
    let top = (0..64u32).take_while(|&k| within(k)).last().unwrap_or(0) as usize;
    s.filed.clear();
    s.filed.resize(n, u8::MAX);
    for a in 0..n as u32 - 1 {
        let l = level(&s.next, a) as usize;
        if l <= top {
            s.filed[a as usize] = l as u8;
            s.buckets[l].push(a);
        }
    }
    // A filed pair holds while its left run still exists and the pair was last filed at
    // that level (a run's pair is filed again whenever it changes).
    let holds = |prev: &[u32], filed: &[u8], a: u32, l: usize| -> bool {
        (a == 0 || prev[a as usize] != u32::MAX) && filed[a as usize] as usize == l
    };
    let mut len = n;
    let mut kept_len = n;
    let mut kept: Vec<Tier> = Vec::new();
    let mut shift = 0u32;
    loop {
        // The next threshold that merges anything: the lowest level with a pair that
        // holds, and above the last threshold.
        let mut lowest = None;
        for l in 1..s.buckets.len() {
            while let Some(&a) = s.buckets[l].last() {
                if holds(&s.prev, &s.filed, a, l) {
                    break;
                }
                s.buckets[l].pop();
            }
            if !s.buckets[l].is_empty() {
                lowest = Some(l as u32);
                break;
            }
        }
        let Some(lowest) = lowest else {
            break;
        };
        shift = lowest.max(shift + 1);
        if shift >= 64 || !within(shift) {
            break;
        }
        // Every pair of the current state at or below this threshold merges.
        s.taken.clear();
        for l in 1..=shift as usize {
            while let Some(a) = s.buckets[l].pop() {
                if holds(&s.prev, &s.filed, a, l) && !s.joins[a as usize] {
                    s.joins[a as usize] = true;
                    s.taken.push(a);
                }
            }
        }
        len -= s.taken.len();
        // Each run of joined pairs becomes one bar, starting at a run whose left
        // neighbour does not join it.
        let mut heads = std::mem::take(&mut s.taken);
        heads.retain(|&a| a == 0 || !s.joins[s.prev[a as usize] as usize]);
        for &head in &heads {
            let mut best = head;
            let mut best_w = x1[s.next[head as usize] as usize - 1] - x0[head as usize];
            let mut cur = head;
            while s.joins[cur as usize] {
                s.joins[cur as usize] = false;
                let b = s.next[cur as usize];
                // `b` is absorbed: no run starts there any more.
                s.prev[b as usize] = u32::MAX;
                let w = x1[s.next[b as usize] as usize - 1] - x0[b as usize];
                if w > best_w {
                    best = b;
                    best_w = w;
                }
                cur = b;
            }
            let after = s.next[cur as usize];
            s.next[head as usize] = after;
            if (after as usize) < n {
                s.prev[after as usize] = head;
            }
            s.name[head as usize] = s.name[best as usize];
        }
        // The pairs the new bars form, for later thresholds (a bar that reached the end
        // of the row has no pair on its right any more).
        for &head in &heads {
            let after = s.next[head as usize] as usize;
            if after >= n {
                s.filed[head as usize] = u8::MAX;
            }
            let left = (head > 0).then(|| s.prev[head as usize]);
            let right = (after < n).then_some(head);
            for a in left.into_iter().chain(right) {
                let l = level(&s.next, a) as usize;
                if l <= top {
                    s.filed[a as usize] = l as u8;
                    s.buckets[l].push(a);
                } else {
                    s.filed[a as usize] = u8::MAX;
                }
            }
        }
        s.taken = heads;
        if len * 2 <= kept_len {
            kept_len = len;
            if !keep_all {
                kept.clear();
            }
            kept.push(snapshot(row, s, shift, len));
        }
        if len <= 1 {
            break;
        }
    }
    kept
}

/// The current runs of a row as a tier.
fn snapshot(row: &Row, s: &Scratch, shift: u32, len: usize) -> Tier {
    let n = row.len();
    let mut t = Tier::with_capacity(shift, len);
    let mut a = 0usize;
    while a < n {
        t.push(a as u32, s.name[a]);
        a = s.next[a] as usize;
    }
    t.seal(n);
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Limits, load_bytes};
    use crate::layout::flame_layout;

    use crate::generator::Rng;

    /// Random rows: runs of narrow bars with narrow or wide gaps, some wide bars, widths
    /// and gaps spread over many bit lengths, ties in width, a few names.
    fn random_row(rng: &mut Rng, n: usize) -> Row {
        let mut row = Row::default();
        let mut x = rng.next() % 50;
        for i in 0..n {
            let r = rng.next();
            let width = match r % 7 {
                0 => 1 + (r >> 8) % 3,
                1 => 1 << ((r >> 8) % 20),
                2 => 4,
                _ => 1 + (r >> 8) % (1 << ((r >> 32) % 14)),
            };
            let gap = match (r >> 40) % 5 {
                0 | 1 => 0,
                2 => 1 + (r >> 44) % 5,
                _ => (r >> 44) % (1 << ((r >> 50) % 16)),
            };
            x += gap;
            row.push(x, x + width, (i as u32 * 7 + (r as u32 % 5)) % 23, i as u32);
            x += width;
        }
        row
    }

    #[test]
    fn same_tiers_as_whole_row_passes_on_random_rows() {
        let mut rng = Rng(42);
        let mut tiers_seen = 0;
        let mut pyramid_tiers = 0;
        for case in 0..300 {
            let n = [2, 3, 5, 17, 100, 1000, 5000][case % 7];
            let layout = Layout {
                rows: vec![random_row(&mut rng, n), random_row(&mut rng, n / 2 + 1)],
                total_ticks: 0,
            };
            for tpp in [
                0.5,
                1.0,
                2.0,
                3.0,
                7.5,
                64.0,
                1000.0,
                1e5,
                1e7,
                1e12,
                f64::MAX,
            ] {
                let want = Lod::build_for_view(&layout, tpp);
                let got = view_lod(&layout, tpp);
                for r in 0..layout.rows.len() {
                    assert_eq!(got.rows[r], want.rows[r], "case {case} row {r} at {tpp}");
                    tiers_seen += want.rows[r].len();
                }
            }
            let (want, got) = (Lod::build_by_passes(&layout), Lod::build(&layout));
            for r in 0..layout.rows.len() {
                assert_eq!(
                    got.rows[r], want.rows[r],
                    "case {case} row {r}, whole pyramid"
                );
                pyramid_tiers += want.rows[r].len();
            }
        }
        assert!(tiers_seen > 1000, "only {tiers_seen} tiers compared");
        assert!(
            pyramid_tiers > 1000,
            "only {pyramid_tiers} pyramid tiers compared"
        );
    }

    #[test]
    fn same_tiers_as_whole_row_passes_on_a_profile() {
        let mut text = String::new();
        let mut rng = Rng(7);
        for i in 0..20_000u64 {
            let r = rng.next();
            let depth = 1 + r % 9;
            let frames: Vec<String> = (0..depth)
                .map(|d| format!("f{}", (i >> d) % (3 + d * 11)))
                .collect();
            text.push_str(&format!(
                "main;{} {}\n",
                frames.join(";"),
                1 + (r >> 20) % 40
            ));
        }
        let p = load_bytes("t.folded", text.as_bytes(), Limits::default()).unwrap();
        let layout = flame_layout(&p.tree);
        let total = layout.total_ticks as f64;
        for px in [100.0, 1200.0, 3840.0, 20_000.0] {
            let tpp = total / px;
            let want = Lod::build_for_view(&layout, tpp);
            let got = view_lod(&layout, tpp);
            assert_eq!(got.rows, want.rows, "{px} px");
        }
        assert_eq!(Lod::build(&layout).rows, Lod::build_by_passes(&layout).rows);
    }
}
