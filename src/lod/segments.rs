//! A row of hundreds of thousands of bars or more merged in segments: on the thread that
//! takes it from the row queue, or on all cores when it alone holds more than a core's
//! share of the bars.
//!
//! Following merge events ([`super::view_lod`]) costs a row of 100 k bars about 90 ns a
//! bar, and one of 25 M bars about 200–290 ns here: its runs' columns no longer stay in
//! the caches from one threshold to the next, so nearly every run a pass touches is a
//! miss. Such a row also ran alone on one core while the others had finished theirs (a
//! Pyroscope file's last level held 37 % of its 67 M bars).
//!
//! So a large row is cut into segments of about 64 Ki bars, each cut between the two
//! neighbours of highest level (the bit length of the widest of the two and their gap)
//! within a quarter segment of the nominal place. A pair of neighbours only ever gets
//! wider runs, so a cut of level `L` cannot merge below it: up to the lowest cut's level
//! minus one, every segment merges exactly as the whole row would there, by itself, in
//! its own slice of the row's scratch, on any thread, its columns staying in the caches.
//! (The lowest tenth of the cuts are dropped first: a stretch of narrow bars without
//! gaps would otherwise hold every segment back.) Which tiers are kept depends on the
//! whole row's count of runs after each threshold, known only once every segment is
//! done, so each segment records which threshold absorbed each of its bars and which
//! runs took another name, and its runs at the kept thresholds are read back from that
//! record. The last state is the whole row's at that threshold: the segments' ends are
//! linked, their pairs filed, and the rest of the thresholds are merged on one thread
//! with the usual passes, over the runs left (few, where the cuts are high).

use super::Tier;
use super::view_lod::{Part, Scratch, Work, continue_passes, pair_level, top_level, view_row};
use crate::layout::Row;

/// Rows of at least this many bars are merged in segments. A row merged whole misses
/// the caches once its columns (~30 bytes a bar) outgrow them: a random row of 1 Mi bars
/// took 384 ms whole (its passes unsorted) and 70 ms in segments (`cargo bench --bench
/// pipeline -- lod/build`);
/// below this, a row costs about as much either way, and rows run a thread each.
pub(super) const SEGMENTED: usize = 1 << 18;

/// Nominal bars per segment: a segment's columns (about 30 bytes a bar with the row's
/// ticks) fit in a core's 2 MiB second-level cache.
const SEGMENT: usize = 1 << 16;

/// The level of the pair of bars `i - 1` and `i`.
fn level_before(row: &Row, i: usize) -> u32 {
    let wa = row.x1[i - 1] - row.x0[i - 1];
    let wb = row.x1[i] - row.x0[i];
    pair_level(wa, wb, row.x0[i] - row.x1[i - 1])
}

/// Where segments start (the first at 0) and the highest threshold they can merge at
/// by themselves (0: none), for segments of about `segment` bars (at least 4).
fn cuts(row: &Row, segment: usize) -> (Vec<u32>, u32) {
    assert!(segment >= 4, "segments of {segment} bars");
    let n = row.len();
    let mut cuts: Vec<(u32, u32)> = Vec::new();
    let quarter = segment / 4;
    let mut at = segment;
    while at + segment <= n {
        let (from, to) = (at - quarter, at + quarter);
        let mut best = from;
        let mut best_level = 0;
        for i in from..to {
            let l = level_before(row, i);
            if l > best_level {
                best = i;
                best_level = l;
            }
        }
        cuts.push((best as u32, best_level));
        at = best + segment;
    }
    // The lowest tenth of the cuts dropped (their segments join their neighbours), so
    // that a few low ones do not hold all the others back.
    let mut levels: Vec<u32> = cuts.iter().map(|c| c.1).collect();
    levels.sort_unstable();
    let Some(&floor) = levels.get(levels.len() / 10) else {
        return (vec![0], 0);
    };
    let starts = std::iter::once(0)
        .chain(cuts.iter().filter(|c| c.1 >= floor).map(|c| c.0))
        .collect();
    (starts, floor.saturating_sub(1))
}

/// Runs `f` on every part, the parts shared out among `threads` threads (this one
/// included); results in part order.
fn on_parts<R: Send>(
    parts: &mut [Part],
    threads: usize,
    f: impl Fn(&mut Part, &mut Work) -> R + Sync,
) -> Vec<R> {
    let count = parts.len();
    let queue = std::sync::Mutex::new(parts.iter_mut().enumerate());
    let work = || {
        let mut w = Work::default();
        let mut done = Vec::new();
        loop {
            let Some((i, part)) = queue.lock().map_or(None, |mut q| q.next()) else {
                return done;
            };
            done.push((i, f(part, &mut w)));
        }
    };
    if threads <= 1 {
        // One thread takes the parts in order.
        return work().into_iter().map(|(_, r)| r).collect();
    }
    let mut out: Vec<Option<R>> = (0..count).map(|_| None).collect();
    std::thread::scope(|s| {
        let others: Vec<_> = (1..threads.min(count)).map(|_| s.spawn(work)).collect();
        let mine = work();
        for (i, r) in others.into_iter().flat_map(crate::par::join).chain(mine) {
            out[i] = Some(r);
        }
    });
    out.into_iter()
        .map(|r| r.expect("every part was taken"))
        .collect()
}

/// The tiers of one large row (as `view_row` gives them), merged in segments up to the
/// threshold the cuts allow (the segments shared out among `threads` threads), then
/// whole.
pub(super) fn segmented_row(
    row: &Row,
    ticks_per_px: f64,
    keep_all: bool,
    s: &mut Scratch,
    threads: usize,
) -> Vec<Tier> {
    #[cfg(test)]
    tests::SEGMENTED_ROWS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    segmented_with(row, ticks_per_px, keep_all, s, SEGMENT, threads)
}

fn segmented_with(
    row: &Row,
    ticks_per_px: f64,
    keep_all: bool,
    s: &mut Scratch,
    segment: usize,
    threads: usize,
) -> Vec<Tier> {
    let n = row.len();
    let top = top_level(ticks_per_px);
    let (starts, cut_level) = cuts(row, segment);
    // Thresholds the segments merge by themselves.
    let by_parts = cut_level.min(top);
    if starts.len() < 2 || by_parts == 0 {
        return view_row(row, ticks_per_px, keep_all, s);
    }
    let mut kept: Vec<Tier> = Vec::new();
    let mut kept_len = n;
    {
        let levels = by_parts as usize;
        // Each segment merged by itself up to `by_parts`, its runs counted after each
        // threshold.
        let mut parts = Part::split(s, row, &starts, top);
        let counts = on_parts(&mut parts, threads, |p, w| {
            p.init(&row.name);
            p.file_bars(w);
            (1..=by_parts)
                .map(|k| {
                    p.pass(k, w);
                    p.len
                })
                .collect::<Vec<usize>>()
        });
        // The thresholds whose tiers the whole row keeps.
        let mut keep = Vec::new();
        for k in 0..levels {
            let len: usize = counts.iter().map(|c| c[k]).sum();
            if len * 2 <= kept_len {
                kept_len = len;
                if !keep_all {
                    keep.clear();
                }
                keep.push((k as u32 + 1, len));
            }
        }
        let at: Vec<u32> = keep.iter().map(|k| k.0).collect();
        let pieces = on_parts(&mut parts, threads, |p, w| {
            (p.recorded_runs(&row.name, &at, &mut w.names), p.last, p.len)
        });
        for (j, &(k, len)) in keep.iter().enumerate() {
            let mut t = Tier::with_capacity(k, len);
            for (piece, _, _) in &pieces {
                t.first.extend_from_slice(&piece[j].first);
                t.name.extend_from_slice(&piece[j].name);
            }
            t.seal(n);
            kept.push(t);
        }
        // The segments' ends linked: the whole row's state after `by_parts`.
        let lasts: Vec<u32> = pieces.iter().map(|p| p.1).collect();
        let len = pieces.iter().map(|p| p.2).sum();
        drop(parts);
        let (mut whole, w) = s.whole(row, top);
        whole.len = len;
        whole.last = *lasts.last().expect("at least two segments");
        for (i, &lo) in starts.iter().enumerate().skip(1) {
            whole.link(lo, lasts[i - 1]);
        }
        whole.file_runs(w);
        continue_passes(
            &mut whole,
            w,
            by_parts,
            ticks_per_px,
            keep_all,
            kept_len,
            &mut kept,
        );
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::Rng;
    use crate::layout::Layout;
    use crate::lod::Lod;
    use crate::lod::view_lod::tests::random_row;

    /// Rows the row builders sent to segments (only `large_rows_are_built_in_segments`
    /// has rows that large).
    pub(super) static SEGMENTED_ROWS: std::sync::atomic::AtomicUsize =
        std::sync::atomic::AtomicUsize::new(0);

    /// Bars of width 2 without gaps: every pair, the cuts' included, merges at threshold
    /// 2, so the segments merge by themselves at threshold 1 only (a segment merging at
    /// its cuts' own level would keep a tier of one run per segment there).
    #[test]
    fn segments_stop_below_their_cuts_level() {
        let mut row = Row::default();
        for i in 0..40u64 {
            row.push(2 * i, 2 * i + 2, i as u32 % 3, i as u32);
        }
        let (starts, cut_level) = cuts(&row, 8);
        assert!(starts.len() >= 4, "{starts:?}");
        assert_eq!(cut_level, 1);
        let mut s = Scratch::default();
        let layout = Layout {
            rows: vec![row.clone()],
            total_ticks: 80,
        };
        let want = Lod::build_by_passes(&layout).rows[0].clone();
        assert_eq!(want[0].len(), 1, "{want:?}");
        assert_eq!(
            segmented_with(&row, f64::INFINITY, true, &mut s, 8, 2),
            want
        );
    }

    /// Cuts of the lowest tenth are dropped: a stretch of gapless 1-tick bars in a row of
    /// wide gaps does not hold back the other segments.
    #[test]
    fn low_cuts_are_dropped() {
        let mut row = Row::default();
        let mut x = 0;
        for i in 0..4000u64 {
            let gap = if (1000..1100).contains(&i) {
                0
            } else {
                1 << 20
            };
            x += gap;
            row.push(x, x + 1, 0, i as u32);
            x += 1;
        }
        let (starts, cut_level) = cuts(&row, 64);
        assert!(cut_level >= 20, "{cut_level}");
        assert!(starts.len() > 50, "{}", starts.len());
        let mut s = Scratch::default();
        let layout = Layout {
            rows: vec![row.clone()],
            total_ticks: x,
        };
        let want = Lod::build_by_passes(&layout).rows[0].clone();
        assert_eq!(
            segmented_with(&row, f64::INFINITY, true, &mut s, 64, 2),
            want
        );
    }

    /// Segments of 8 to 256 bars give each random row the tiers of the whole-row passes,
    /// bar for bar, for one view and for the whole pyramid; most rows have cuts that
    /// merge by themselves, and some of those keep tiers made of the segments' runs.
    #[test]
    fn segments_give_the_whole_rows_tiers() {
        let mut rng = Rng(11);
        let mut s = Scratch::default();
        let (mut by_parts_rows, mut tiers_from_parts, mut compared) = (0, 0, 0);
        for case in 0..240 {
            let n = [40, 300, 1000, 5000][case % 4];
            let segment = [8, 16, 64, 256][(case / 4) % 4];
            // On this thread alone (a big row in the row queue) and shared out.
            let threads = [1, 2, 3][(case / 16) % 3];
            let row = random_row(&mut rng, n);
            let (starts, cut_level) = cuts(&row, segment);
            if starts.len() > 1 && cut_level > 0 {
                by_parts_rows += 1;
            }
            let layout = Layout {
                rows: vec![row.clone()],
                total_ticks: 0,
            };
            for tpp in [1.0, 7.5, 1000.0, 1e5, 1e12] {
                let want = Lod::build_for_view(&layout, tpp);
                let got = segmented_with(&row, tpp, false, &mut s, segment, threads);
                assert_eq!(got, want.rows[0], "case {case} at {tpp}");
                compared += got.len();
            }
            let want = Lod::build_by_passes(&layout);
            let got = segmented_with(&row, f64::INFINITY, true, &mut s, segment, threads);
            assert_eq!(got, want.rows[0], "case {case}, whole pyramid");
            compared += got.len();
            tiers_from_parts += got
                .iter()
                .filter(|t| starts.len() > 1 && t.shift <= cut_level)
                .count();
        }
        assert!(
            by_parts_rows > 150,
            "{by_parts_rows} rows merged in segments"
        );
        assert!(
            tiers_from_parts > 100,
            "{tiers_from_parts} tiers from segments"
        );
        assert!(compared > 1000, "{compared} tiers compared");
    }

    /// A row of 256 Ki bars or more is built in segments by `Lod::build` and `view_lod`,
    /// with the tiers of the whole-row walk (the oracle's: the tests above and
    /// `view_lod`'s): a row holding most of the bars in segments on all cores, and two
    /// such rows of one layout (on two cores, neither more than a core's share) each in
    /// segments on the thread that takes it from the row queue.
    #[test]
    fn large_rows_are_built_in_segments() {
        let mut rng = Rng(5);
        // Segmented, and in many segments.
        let row = random_row(&mut rng, SEGMENTED.max(32 * SEGMENT) + 1000);
        let (starts, cut_level) = cuts(&row, SEGMENT);
        assert!(
            starts.len() > 16 && cut_level > 4,
            "{} {cut_level}",
            starts.len()
        );
        let small = random_row(&mut rng, 3000);
        let one_big = Layout {
            rows: vec![row.clone(), small.clone()],
            total_ticks: 0,
        };
        let two_big = Layout {
            rows: vec![small, row, random_row(&mut rng, SEGMENTED + 5)],
            total_ticks: 0,
        };
        let mut s = Scratch::default();
        for (layout, big) in [(&one_big, 1), (&two_big, 2)] {
            let walk = |tpp: f64, all: bool, s: &mut Scratch| -> Vec<Vec<Tier>> {
                layout
                    .rows
                    .iter()
                    .map(|r| view_row(r, tpp, all, s))
                    .collect()
            };
            let before = SEGMENTED_ROWS.load(std::sync::atomic::Ordering::Relaxed);
            assert_eq!(Lod::build(layout).rows, walk(f64::INFINITY, true, &mut s));
            let tpp = 3e4;
            assert_eq!(
                crate::lod::view_lod(layout, tpp).rows,
                walk(tpp, false, &mut s)
            );
            let after = SEGMENTED_ROWS.load(std::sync::atomic::Ordering::Relaxed);
            assert!(
                after >= before + 2 * big,
                "{before} → {after}: not in segments"
            );
        }
    }
}
