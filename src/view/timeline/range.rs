//! A time range on a timeline of samples: dragged on the time axis (or Shift+dragged in the
//! bands), it says which samples the aggregated views count, as Perfetto's area selection
//! and the Firefox Profiler's range selection do.
//!
//! The range is kept in the timeline's ticks (nanoseconds after the spans' origin) and
//! handed to the other views in the samples' own clock ([`TimelineView::sample_range`]):
//! a trace's own spans can start before its samples, so the two differ by a shift.

use super::TimelineView;
use super::paint::Sight;
use crate::model::units::format_duration_ns;
use crate::view::draw::{Frame, Measure, Rect, Text, line_height, rgba};

/// A range narrower than this many pixels when dragged is no range (a click).
const MIN_RANGE_PX: f32 = 2.0;

impl TimelineView {
    /// Ticks between the spans' origin and the samples' origin (`None` without samples).
    fn sample_shift(&self) -> Option<u64> {
        let s = self.trace.sampled.as_ref()?;
        Some(
            s.samples
                .origin_ns
                .saturating_sub(self.trace.spans.origin_ns),
        )
    }

    /// The selected range in ticks, when there is one.
    pub fn range(&self) -> Option<(u64, u64)> {
        self.range
    }

    /// Selects `[a, b)` in ticks (`None` clears); only a timeline of samples has ranges.
    pub fn set_range(&mut self, range: Option<(u64, u64)>) {
        self.range = match range {
            Some((a, b)) if self.sample_shift().is_some() && b > a => Some((a, b)),
            _ => None,
        };
    }

    /// The range as the samples' relative nanoseconds (what [`crate::model::samples::Selection`]
    /// holds).
    pub(super) fn range_in_samples(&self) -> Option<(u64, u64)> {
        let shift = self.sample_shift()?;
        let (a, b) = self.range?;
        Some((a.saturating_sub(shift), b.saturating_sub(shift)))
    }

    /// The range in ticks of a range in the samples' clock.
    pub(super) fn range_from_samples(&self, r: Option<(u64, u64)>) -> Option<(u64, u64)> {
        let shift = self.sample_shift()?;
        let (a, b) = r?;
        Some((a.saturating_add(shift), b.saturating_add(shift)))
    }

    /// Samples of the shown event inside the range.
    pub fn samples_in_range(&self) -> Option<usize> {
        let sampled = self.trace.sampled.as_ref()?;
        let (a, b) = self.range_in_samples()?;
        Some(
            sampled
                .samples
                .streams_of(sampled.selection.event)
                .map(|(_, s)| s.range(a, b).len())
                .sum(),
        )
    }

    /// The tick under `x` (clamped to the trace).
    pub(super) fn tick_at_x(&self, x: f32) -> u64 {
        let g = self.geometry(1.0);
        let x = f64::from((x - g.graph.x).clamp(0.0, g.graph.w));
        self.state
            .camera
            .tick_at(x)
            .min(self.tracks.layout.total_ticks)
    }

    /// A range drag from `anchor` is now at `x`.
    pub(super) fn drag_range(&mut self, anchor: (u64, f32), x: f32) {
        if (x - anchor.1).abs() < MIN_RANGE_PX {
            return;
        }
        let t = self.tick_at_x(x);
        self.set_range(Some((anchor.0.min(t), anchor.0.max(t))));
    }

    /// The status line while a range is selected: its length, where it is and how many
    /// samples it holds.
    pub(super) fn range_status(&self) -> Option<String> {
        let (a, b) = self.range?;
        let n = self.samples_in_range()?;
        Some(format!(
            "range {} from {} to {} · {n} sample{} · the other views (number keys) count only it · Esc clears",
            format_duration_ns((b - a) as f64),
            format_duration_ns(a as f64),
            format_duration_ns(b as f64),
            if n == 1 { "" } else { "s" },
        ))
    }

    /// The range: the bands outside it dimmed, its edges, and on the axis a band with its
    /// length; on the overview, where it is in the whole trace.
    pub(super) fn draw_range(&self, frame: &mut Frame<'_>, sight: &Sight<'_>, m: &mut dyn Measure) {
        let Some((a, b)) = self.range else { return };
        let (g, cam) = (sight.g, &sight.cam);
        let line = g.scale.round().max(1.0);
        let (gx, gr) = (g.graph.x, g.graph.x + g.graph.w);
        let xa = (gx + cam.x_of(a) as f32).round();
        let xb = (gx + cam.x_of(b) as f32).round().max(xa + line);
        let dim = rgba([120, 120, 130], 0.28);
        let edge = rgba([30, 90, 200], 0.9);
        let (top, h) = (g.axis.y, g.graph.y + g.graph.h - g.axis.y);
        if xa > gx {
            frame
                .over
                .push(Rect::new([gx, g.graph.y, xa.min(gr) - gx, g.graph.h], dim));
        }
        if xb < gr {
            frame.over.push(Rect::new(
                [xb.max(gx), g.graph.y, gr - xb.max(gx), g.graph.h],
                dim,
            ));
        }
        for x in [xa, xb] {
            if x >= gx && x <= gr {
                frame
                    .over
                    .push(Rect::new([x - line / 2.0, top, line, h], edge));
            }
        }
        // On the axis: the range as a band with its length.
        let (l, r) = (xa.max(gx), xb.min(gr));
        if r > l {
            let ax = g.axis;
            frame.top.push(Rect::new(
                [l, ax.y, r - l, ax.h - line],
                rgba([60, 120, 230], 0.30),
            ));
            let small = (g.style.base.label_font * g.scale).round();
            let label = format_duration_ns((b - a) as f64);
            let w = m.width(&label, small);
            if w + 8.0 * g.scale < r - l {
                frame.text.push(Text {
                    text: label.into(),
                    size: small,
                    x: ((l + r - w) / 2.0).round(),
                    y: (ax.y + (ax.h - line_height(small)) / 2.0).round(),
                    clip: [l, ax.y, r, ax.y + ax.h],
                    color: [20, 50, 140],
                });
            }
        }
        // On the overview.
        let total = self.tracks.layout.total_ticks.max(1);
        let ov = g.overview;
        let oa = g.overview_x(a.min(total), total).round();
        let ob = g.overview_x(b.min(total), total).round().max(oa + line);
        frame.over.push(Rect::new(
            [oa, ov.y, ob - oa, ov.h],
            rgba([60, 120, 230], 0.25),
        ));
    }
}
