//! Which bars carry labels, and in what order a frame places them.
//!
//! A flame graph or timeline labels every bar drawn alone that is wide enough
//! ([`label_slots`]). Exports, screenshots and a window at rest place every label. While
//! the view moves (a wheel zoom, a drag, an animation), the window gives a frame's labels
//! a deadline ([`Measure::labels_in_time`]): labels are then placed widest bar first, in
//! width classes of doubling widths (within a class in layout order, top row first), and
//! what the deadline leaves is reported ([`Measure::leave_labels`]) so the window draws
//! the frame again, unhurried, once the view rests. Zooming never waits on text: the
//! labels a fast zoom skips are the narrow bars' `ab…` stubs, and they appear a frame
//! after the wheel stops.

use super::draw::{Frame, Measure, RowDraw};
use crate::geometry::{Camera, round_px};
use crate::layout::Layout;
use crate::lod::{Lod, TierRef};

/// A bar that may carry a label: where its visible part lies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LabelSlot {
    /// Index into the frame's row draws.
    pub draw: u32,
    /// The bar's index in its layout row.
    pub bar: u32,
    /// Left edge of its visible part, rounded to a pixel.
    pub x0: f32,
    /// Right edge of its visible part (the gap taken off), rounded.
    pub x1: f32,
}

impl LabelSlot {
    /// Width of the visible part.
    pub fn width(&self) -> f32 {
        self.x1 - self.x0
    }
}

/// Where labels may go: the graph's horizontal extent, the gap between bars and the
/// narrowest bar that is labelled.
#[derive(Clone, Copy, Debug)]
pub struct LabelArea {
    /// Left edge of the graph.
    pub left: f32,
    /// Right edge of the graph.
    pub right: f32,
    /// Gap drawn at each bar's right end.
    pub gap: f32,
    /// Bars narrower than this carry no label.
    pub min_width: f32,
}

/// Width classes of [`label_slots`]' widest-first order: `min_width` × 2^k for k below
/// this, the last class open-ended.
const CLASSES: usize = 8;

/// The bars of `rows` (drawn alone, at least `area.min_width` wide, with some of them
/// visible) in the order labels are placed: layout order, or with `widest_first` by
/// width class, widest first (stable within a class).
pub fn label_slots(
    layout: &Layout,
    lod: &Lod,
    rows: &[RowDraw],
    cam: &Camera,
    area: LabelArea,
    widest_first: bool,
) -> Vec<LabelSlot> {
    let mut slots = Vec::new();
    // A bar narrower than this many pixels less one is narrower than `min_width` as
    // drawn too (a pixel more than rounding could ever take): most bars of a dense
    // frame are, and are left with one multiplication.
    let clearly_narrow = f64::from(area.min_width) - 1.0;
    let narrow = |ticks: u64| ticks as f64 * cam.px_per_tick < clearly_narrow;
    for (k, d) in rows.iter().enumerate() {
        let row = &layout.rows[d.row];
        let consider = |i: usize| {
            if narrow(row.x1[i].saturating_sub(row.x0[i])) {
                return;
            }
            let x0 = area.left + cam.x_of(row.x0[i]) as f32;
            let x1 = area.left + cam.x_of(row.x1[i]) as f32;
            if x1 - x0 < area.min_width {
                return;
            }
            let vx0 = round_px(x0.max(area.left));
            let vx1 = (round_px(x1) - area.gap).min(area.right);
            if vx1 <= vx0 {
                return;
            }
            slots.push(LabelSlot {
                draw: k as u32,
                bar: i as u32,
                x0: vx0,
                x1: vx1,
            });
        };
        // In blocks of 64 bars, by the widest bar of each: a zoomed-out frame of tens of
        // thousands of bars, all too narrow for a label, reads none of their ticks.
        match d.tier {
            TierRef::Tier(t) => {
                if let Some(tier) = lod.tier(d.row, t) {
                    tier.for_each_single(d.range.clone(), narrow, consider);
                }
            }
            TierRef::Row => lod.for_each_row_bar(d.row, d.range.clone(), narrow, consider),
        }
    }
    if widest_first {
        slots = by_width_class(slots, area.min_width);
    }
    slots
}

/// `slots` by width class (see [`CLASSES`]), widest first, in their order within a
/// class: a counting sort, one pass to count and one to place.
fn by_width_class(slots: Vec<LabelSlot>, min_width: f32) -> Vec<LabelSlot> {
    let unit = min_width.max(1.0);
    let class = |s: &LabelSlot| {
        let r = (s.width() / unit).max(1.0);
        // The exponent of a float ≥ 1 is floor(log2).
        let e = ((r.to_bits() >> 23) as i32 - 127).clamp(0, CLASSES as i32 - 1) as usize;
        CLASSES - 1 - e
    };
    let mut start = [0usize; CLASSES + 1];
    for s in &slots {
        start[class(s) + 1] += 1;
    }
    for c in 0..CLASSES {
        start[c + 1] += start[c];
    }
    let mut out = vec![
        LabelSlot {
            draw: 0,
            bar: 0,
            x0: 0.0,
            x1: 0.0,
        };
        slots.len()
    ];
    for s in slots {
        let c = class(&s);
        out[start[c]] = s;
        start[c] += 1;
    }
    out
}

/// How many slots a label loop places between two looks at the clock.
const CHECK_EVERY: usize = 16;

/// Calls `place` on each of `slots` in order, while the frame has time for labels
/// ([`Measure::labels_in_time`], asked every few slots with the texts placed since);
/// the slots left are reported with [`Measure::leave_labels`]. `place` adds a slot's
/// texts to the frame.
pub fn place_labels<'a, M: Measure + ?Sized>(
    slots: &[LabelSlot],
    frame: &mut Frame<'a>,
    m: &mut M,
    mut place: impl FnMut(&LabelSlot, &mut Frame<'a>, &mut M),
) {
    let mut texts = frame.text.len();
    for (k, s) in slots.iter().enumerate() {
        if k % CHECK_EVERY == 0 && k > 0 {
            let placed = frame.text.len() - texts;
            texts = frame.text.len();
            if !m.labels_in_time(placed) {
                m.leave_labels(slots.len() - k);
                return;
            }
        }
        place(s, frame, m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(x0: f32, x1: f32, bar: u32) -> LabelSlot {
        LabelSlot {
            draw: 0,
            bar,
            x0,
            x1,
        }
    }

    /// Every bar drawn alone, its ticks read one by one: what [`label_slots`] finds
    /// without reading the bars of blocks too narrow for a label.
    fn slots_bar_by_bar(
        layout: &Layout,
        lod: &Lod,
        rows: &[RowDraw],
        cam: &Camera,
        area: LabelArea,
    ) -> Vec<LabelSlot> {
        let mut slots = Vec::new();
        for (k, d) in rows.iter().enumerate() {
            let row = &layout.rows[d.row];
            for i in crate::view::draw::single_bars(Some(lod), d) {
                let x0 = area.left + cam.x_of(row.x0[i]) as f32;
                let x1 = area.left + cam.x_of(row.x1[i]) as f32;
                let vx0 = round_px(x0.max(area.left));
                let vx1 = (round_px(x1) - area.gap).min(area.right);
                if x1 - x0 >= area.min_width && vx1 > vx0 {
                    slots.push(LabelSlot {
                        draw: k as u32,
                        bar: i as u32,
                        x0: vx0,
                        x1: vx1,
                    });
                }
            }
        }
        slots
    }

    /// Rows of thousands of bars of widths over many orders of magnitude, seen whole and
    /// zoomed in up to 4096× at random places: the slots are those of reading every bar,
    /// from the rows' own bars and from their tiers alike.
    #[test]
    fn slots_found_by_blocks_are_those_of_every_bar_read() {
        use crate::layout::Row;
        use crate::view::draw::row_draws;
        let mut rng = crate::testing::Lcg::new(11);
        let mut rows = Vec::new();
        for r in 0..6 {
            let mut at = 0u64;
            let mut row = Row::with_capacity(0);
            for i in 0..500 + 1500 * r {
                // Mostly narrow bars, a few wide ones; gaps now and then.
                let w = 1 + rng.next_u64() % (1u64 << (rng.next_u64() % 14).saturating_sub(4));
                at += [0, 0, 0, 3, 200][rng.next_usize() % 5];
                row.x0.push(at);
                row.x1.push(at + w);
                row.name.push(i as u32 % 7);
                row.node.push(i as u32);
                at += w;
            }
            rows.push(row);
        }
        let total_ticks = rows.iter().map(|r| *r.x1.last().unwrap()).max().unwrap();
        let layout = Layout { rows, total_ticks };
        let lod = Lod::build(&layout);
        let width = 1200.0;
        let area = LabelArea {
            left: 10.0,
            right: 10.0 + width as f32,
            gap: 1.0,
            min_width: 22.0,
        };
        let (mut tiers, mut rows_drawn, mut labelled) = (0, 0, 0);
        for zoom in 0..13 {
            for _ in 0..6 {
                let px_per_tick = width / total_ticks as f64 * f64::from(1u32 << zoom);
                let cam = Camera {
                    start: rng.next_u64() % total_ticks,
                    start_frac: 0.25,
                    px_per_tick,
                };
                let draws = row_draws(
                    &layout,
                    Some(&lod),
                    (0..layout.rows.len()).map(|r| (r, r as f32 * 20.0)),
                    &cam,
                    width,
                    0,
                );
                for d in &draws {
                    match d.tier {
                        TierRef::Tier(_) => tiers += 1,
                        TierRef::Row => rows_drawn += 1,
                    }
                }
                let got = label_slots(&layout, &lod, &draws, &cam, area, false);
                let want = slots_bar_by_bar(&layout, &lod, &draws, &cam, area);
                assert_eq!(got, want, "zoom {zoom} camera {cam:?}");
                labelled += got.len();
            }
        }
        assert!(
            tiers > 50 && rows_drawn > 50 && labelled > 300,
            "{tiers} {rows_drawn} {labelled}"
        );
    }

    #[test]
    fn widest_classes_come_first_in_layout_order_within_a_class() {
        // min width 10: classes [10, 20), [20, 40), [40, 80), …
        let slots = vec![
            slot(0.0, 12.0, 0),
            slot(0.0, 300.0, 1),
            slot(0.0, 25.0, 2),
            slot(0.0, 15.0, 3),
            slot(0.0, 5000.0, 4),
            slot(0.0, 39.0, 5),
            slot(0.0, 310.0, 6),
        ];
        let order: Vec<u32> = by_width_class(slots, 10.0).iter().map(|s| s.bar).collect();
        assert_eq!(order, [4, 1, 6, 2, 5, 0, 3]);
    }

    struct Clock {
        ticks_left: usize,
        asked: usize,
        texts: usize,
        left: usize,
    }

    impl Measure for Clock {
        fn width(&mut self, text: &str, _size: f32) -> f32 {
            text.len() as f32
        }
        fn cut(
            &mut self,
            _part: crate::view::draw::LabelFit,
            _text: &str,
            _size: f32,
            _max_w: f32,
        ) -> Option<String> {
            None
        }
        fn labels_in_time(&mut self, texts: usize) -> bool {
            self.asked += 1;
            self.texts += texts;
            if self.ticks_left == 0 {
                return false;
            }
            self.ticks_left -= 1;
            true
        }
        fn leave_labels(&mut self, n: usize) {
            self.left += n;
        }
    }

    #[test]
    fn labels_stop_at_the_deadline_and_report_the_rest() {
        let slots: Vec<_> = (0..100).map(|i| slot(0.0, 50.0, i)).collect();
        // Each slot places a text, every third one two.
        let place = |s: &LabelSlot, f: &mut Frame<'_>, _: &mut Clock| {
            for _ in 0..1 + usize::from(s.bar.is_multiple_of(3)) {
                f.text.push(crate::view::draw::Text {
                    text: s.bar.to_string().into(),
                    size: 10.0,
                    x: s.x0,
                    y: 0.0,
                    clip: [s.x0, 0.0, s.x1, 10.0],
                    color: [0, 0, 0],
                });
            }
        };
        // Time for two looks at the clock: 3 × 16 slots placed, 52 left, and the clock
        // told of the texts of all 48.
        let mut m = Clock {
            ticks_left: 2,
            asked: 0,
            texts: 0,
            left: 0,
        };
        let mut f = Frame::new(100, 100, 1.0);
        place_labels(&slots, &mut f, &mut m, place);
        let placed: Vec<_> = f.text.iter().map(|t| t.text.to_string()).collect();
        let want: Vec<_> = (0..48u32)
            .flat_map(|b| vec![b.to_string(); 1 + usize::from(b.is_multiple_of(3))])
            .collect();
        assert_eq!(placed, want);
        assert_eq!((m.asked, m.texts, m.left), (3, 48 + 16, 52));
        // All the time needed: every slot, nothing left.
        let mut m = Clock {
            ticks_left: usize::MAX,
            asked: 0,
            texts: 0,
            left: 0,
        };
        let mut f = Frame::new(100, 100, 1.0);
        place_labels(&slots, &mut f, &mut m, place);
        assert_eq!((f.text.len(), m.left), (134, 0));
    }

    /// The bars a label may go on, as the exact test alone finds them.
    fn slots_exactly(
        layout: &Layout,
        rows: &[RowDraw],
        cam: &Camera,
        area: LabelArea,
    ) -> Vec<(u32, u32, f32, f32)> {
        let mut out = Vec::new();
        for (k, d) in rows.iter().enumerate() {
            let row = &layout.rows[d.row];
            for i in d.range.clone() {
                let x0 = area.left + cam.x_of(row.x0[i]) as f32;
                let x1 = area.left + cam.x_of(row.x1[i]) as f32;
                let vx0 = round_px(x0.max(area.left));
                let vx1 = (round_px(x1) - area.gap).min(area.right);
                if x1 - x0 >= area.min_width && vx1 > vx0 {
                    out.push((k as u32, i as u32, vx0, vx1));
                }
            }
        }
        out
    }

    #[test]
    fn narrow_bars_skipped_early_are_the_ones_the_exact_test_skips() {
        let mut rng = 0x1234_5678_u64;
        let mut next = move || {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            rng >> 33
        };
        for round in 0..40 {
            // A row of bars 1 to 10^4 ticks wide at 10^12 ticks and more.
            let mut row = crate::layout::Row::default();
            let mut t = 1_000_000_000_000 * (round % 3);
            for n in 0..2000u32 {
                let w = 1 + next() % 10_000;
                row.push(t, t + w, 0, n);
                t += w + next() % 3;
            }
            let layout = Layout {
                rows: vec![row],
                total_ticks: t,
            };
            let lod = Lod::build(&layout);
            let total = layout.total_ticks;
            for _ in 0..20 {
                let from = next() % total;
                let span = 1 + next() % (total - from).max(1);
                let cam = Camera::range(from, from + span, 1000.0);
                let rows = crate::view::draw::row_draws(&layout, None, [(0, 0.0)], &cam, 1000.0, 0);
                let area = LabelArea {
                    left: 7.0,
                    right: 1007.0,
                    gap: 1.0,
                    min_width: 22.0,
                };
                let got: Vec<_> = label_slots(&layout, &lod, &rows, &cam, area, false)
                    .iter()
                    .map(|s| (s.draw, s.bar, s.x0, s.x1))
                    .collect();
                assert_eq!(got, slots_exactly(&layout, &rows, &cam, area));
            }
        }
    }

    /// A measurer with time for `allowed` texts.
    struct Allowed {
        m: crate::view::draw::FixedMeasure,
        allowed: usize,
        texts: usize,
        left: usize,
    }

    impl Measure for Allowed {
        fn width(&mut self, text: &str, size: f32) -> f32 {
            self.m.width(text, size)
        }
        fn cut(
            &mut self,
            part: crate::view::draw::LabelFit,
            text: &str,
            size: f32,
            max_w: f32,
        ) -> Option<String> {
            self.m.cut(part, text, size, max_w)
        }
        fn labels_timed(&self) -> bool {
            true
        }
        fn labels_in_time(&mut self, texts: usize) -> bool {
            self.texts += texts;
            self.texts < self.allowed
        }
        fn leave_labels(&mut self, n: usize) {
            self.left += n;
        }
    }

    /// Each text of `f` as `(text, x, y, clip width)`, sorted.
    fn texts(f: &Frame<'_>) -> Vec<(String, i64, i64, i64)> {
        let mut t: Vec<_> = f
            .text
            .iter()
            .map(|t| {
                (
                    t.text.to_string(),
                    t.x as i64,
                    t.y as i64,
                    (t.clip[2] - t.clip[0]) as i64,
                )
            })
            .collect();
        t.sort();
        t
    }

    /// Checks a view's labels under deadlines: a deadline that leaves some places the
    /// widest bars' labels (all of those of bars at least twice as wide as the
    /// narrowest it placed) and reports the rest; one that leaves none places what an
    /// export does.
    fn check_deadlines(v: &dyn crate::view::View, allowed: usize) {
        use crate::view::{Purpose, compose};
        let fixed = crate::view::draw::FixedMeasure { advance: 0.6 };
        let full = compose(v, Purpose::Export, None, &mut fixed.clone());
        let mut m = Allowed {
            m: fixed,
            allowed,
            texts: 0,
            left: 0,
        };
        let timed = compose(v, Purpose::Export, None, &mut m);
        assert!(
            timed.labels < full.labels && m.left > 0,
            "{} of {} labels placed, {} bars left",
            timed.labels,
            full.labels,
            m.left
        );
        let (all, some) = (texts(&full), texts(&timed));
        let mut rest = all.clone();
        for t in &some {
            let at = rest.iter().position(|r| r == t);
            assert!(at.is_some(), "{t:?} is a label of the full frame");
            rest.remove(at.unwrap());
        }
        // Labels of bars wider than twice the narrowest placed are placed. (Titles and
        // axis marks come before the labels and are all in both.)
        let narrowest = some.iter().map(|t| t.3).filter(|&w| w > 0).min().unwrap();
        assert!(
            rest.iter().all(|r| r.3 < 2 * narrowest),
            "a wide bar left: {:?}",
            rest.iter().max_by_key(|r| r.3)
        );
        let mut m = Allowed {
            m: fixed,
            allowed: usize::MAX,
            texts: 0,
            left: 0,
        };
        let timed = compose(v, Purpose::Export, None, &mut m);
        assert_eq!((texts(&timed), m.left), (all, 0));
    }

    fn viewport(v: &mut dyn crate::view::View) {
        v.set_viewport(crate::view::Viewport {
            width_px: 1200,
            height_px: 700,
            scale: 1.0,
        });
    }

    #[test]
    fn a_moving_flame_graph_labels_its_widest_bars_first() {
        // Twenty narrow calls, then one wide call three deep: in layout order the
        // narrow ones come first.
        let mut text = String::new();
        for i in 0..20 {
            text.push_str(&format!("main;a_narrow_call_{i} 30\n"));
        }
        text.push_str("main;z_wide;wide_child;wide_grandchild 400\n");
        let p = crate::import::load_bytes("t.folded", text.as_bytes(), Default::default()).unwrap();
        let doc = crate::model::Document::Profile(std::sync::Arc::new(p));
        let mut v = crate::view::default_view(&doc, &Default::default());
        viewport(v.as_mut());
        check_deadlines(v.as_ref(), 16);
    }

    #[test]
    fn a_moving_timeline_labels_its_widest_spans_first() {
        // One thread of nested calls of many lengths.
        let mut events = Vec::new();
        let mut t = 0u64;
        for i in 0..40u64 {
            let dur = 5 + (i * 53) % 400;
            events.push(format!(
                r#"{{"name":"outer_{}","ph":"X","ts":{t},"dur":{dur},"pid":1,"tid":1}}"#,
                i % 17
            ));
            events.push(format!(
                r#"{{"name":"inner_call_{}","ph":"X","ts":{},"dur":{},"pid":1,"tid":1}}"#,
                i % 29,
                t + 1,
                dur / 2
            ));
            t += dur + 2;
        }
        let json = format!("[{}]", events.join(","));
        let doc = crate::model::Document::from(
            crate::import::load_any_bytes("t.json", json.as_bytes(), Default::default()).unwrap(),
        );
        let mut v = crate::view::default_view(&doc, &Default::default());
        assert_eq!(v.kind(), crate::view::ViewKind::TIMELINE);
        viewport(v.as_mut());
        check_deadlines(v.as_ref(), 16);
    }
}
