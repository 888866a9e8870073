//! Drawing a timeline frame's parts: the overview strip and its window, the time axis,
//! band headers, span labels, connectors, outlines, the cursor line and the details panel.
//! Each pushes rectangles and text into the frame's planes; the bars themselves are the
//! per-row ranges [`row_draws`](crate::view::draw::row_draws) gives.

use super::{AxisTicks, DETAIL_LINES, MAX_CONNECTORS, TimelineView, axis_ticks, format_axis_time};
use crate::color::{self, ColorMode};
use crate::geometry::timeline::TimelineGeometry;
use crate::geometry::{Camera, round_px};
use crate::model::units::write_duration_ns;
use crate::pick::BarRef;
use crate::view::draw::{
    BODY_COLOR, Frame, Label, LabelFit, MUTED_COLOR, Measure, NameFit, OverviewLayer, Rect,
    RowDraw, TITLE_COLOR, Text, line_height, outline, rgba, rgba8, single_bars,
};
use crate::view::labels::{LabelArea, label_slots, place_labels};
use crate::view::search::SearchResult;

/// What a frame of the timeline is drawn through: its geometry and camera.
pub(super) struct Sight<'g> {
    /// Where things go.
    pub(super) g: &'g TimelineGeometry,
    /// The horizontal view.
    pub(super) cam: Camera,
}

/// The connectors' grey.
const CONNECTOR: [u8; 3] = [110, 110, 110];

impl TimelineView {
    /// The overview strip and its shaded window.
    pub(super) fn draw_overview<'a>(&'a self, frame: &mut Frame<'a>, sight: &Sight<'_>) {
        let (g, cam) = (sight.g, &sight.cam);
        let line = g.scale.round().max(1.0);
        let ov = g.overview;
        let total = self.tracks.layout.total_ticks.max(1);
        let (t0, t1) = cam.visible_ticks(f64::from(g.graph.w));
        frame.overview = Some(OverviewLayer {
            rect: ov,
            scene: self.key,
            layout: &self.tracks.layout,
            lod: &self.lod,
            scale: g.scale,
            color: self.shader_color(),
            search: self.search.as_ref().map(SearchResult::flags),
        });
        let wl = g.overview_x(t0.min(total), total).round();
        let wr = g.overview_x(t1.min(total), total).round().max(wl + line);
        let shade = rgba([60, 60, 60], 0.22);
        frame
            .over
            .push(Rect::new([ov.x, ov.y, (wl - ov.x).max(0.0), ov.h], shade));
        frame.over.push(Rect::new(
            [wr, ov.y, (ov.x + ov.w - wr).max(0.0), ov.h],
            shade,
        ));
        let edge = rgba([40, 70, 140], 1.0);
        frame
            .over
            .push(Rect::new([wl - line, ov.y, 2.0 * line, ov.h], edge));
        frame
            .over
            .push(Rect::new([wr - line, ov.y, 2.0 * line, ov.h], edge));
        let border = rgba([200, 200, 200], 1.0);
        for r in outline([ov.x, ov.y, ov.w, ov.h], line) {
            frame.over.push(Rect::new(r, border));
        }
    }

    /// The time axis: background, marks, labels and faint grid lines through the bands.
    pub(super) fn draw_axis(
        &self,
        frame: &mut Frame<'_>,
        sight: &Sight<'_>,
        m: &mut dyn Measure,
    ) -> AxisTicks {
        let (g, cam) = (sight.g, &sight.cam);
        let px = |v: f32| (v * g.scale).round();
        let line = g.scale.round().max(1.0);
        let small = px(g.style.base.label_font);
        let ax = g.axis;
        let gx = g.graph.x;
        frame.under.push(Rect::new(
            [ax.x, ax.y, ax.w, ax.h],
            rgba([244, 244, 244], 1.0),
        ));
        frame.under.push(Rect::new(
            [ax.x, ax.y + ax.h - line, ax.w, line],
            rgba([200, 200, 200], 1.0),
        ));
        let ticks = axis_ticks(cam, f64::from(g.graph.w), f64::from(px(90.0)));
        let clip = [ax.x, ax.y, ax.x + ax.w, ax.y + ax.h];
        let label_line = line_height(small);
        for &(t, x) in &ticks.marks {
            let x = (gx + x as f32).round();
            if x < ax.x || x > ax.x + ax.w {
                continue;
            }
            frame.under.push(Rect::new(
                [x, ax.y + ax.h - px(6.0), line, px(6.0)],
                rgba([120, 120, 120], 1.0),
            ));
            frame.under.push(Rect::new(
                [x, g.graph.y, line, g.graph.h],
                rgba([235, 235, 235], 1.0),
            ));
            let label = format_axis_time(t, ticks.step_ns);
            if x + px(3.0) + m.width(&label, small) > ax.x + ax.w {
                continue;
            }
            frame.text.push(Text {
                text: label.into(),
                size: small,
                x: x + px(3.0),
                y: (ax.y + (ax.h - label_line) / 2.0).round() - px(2.0),
                clip,
                color: MUTED_COLOR,
            });
        }
        ticks
    }

    /// Band headers: background, track swatch, name and span count.
    pub(super) fn draw_band_headers(&self, frame: &mut Frame<'_>, g: &TimelineGeometry) {
        let px = |v: f32| (v * g.scale).round();
        let small = px(g.style.base.label_font);
        let label_line = line_height(small);
        let pad = px(g.style.base.label_pad);
        let gx = g.graph.x;
        let graph_right = g.graph.x + g.graph.w;
        for b in g.visible_bands() {
            let Some(band) = self.tracks.bands.get(b) else {
                continue;
            };
            let top = g.header_top(b);
            let slot = &g.bands[b];
            frame.under.push(Rect::new(
                [
                    0.0,
                    top.max(g.graph.y),
                    g.width_px as f32,
                    (top + g.header_px).min(g.graph.y + g.graph.h) - top.max(g.graph.y),
                ],
                rgba([236, 238, 242], 1.0),
            ));
            let mut x = gx + pad;
            if self.state.color == ColorMode::Track
                && let Some(t) = band.track
            {
                let sw = px(10.0);
                let sy = (top + (g.header_px - sw) / 2.0).round();
                if sy >= g.graph.y && sy + sw <= g.graph.y + g.graph.h {
                    frame
                        .under
                        .push(Rect::new([x, sy, sw, sw], rgba(color::track_color(t), 1.0)));
                }
                x += sw + pad;
            }
            let arrow = if slot.collapsed { "▸" } else { "▾" };
            frame.text.push(Text {
                text: format!(
                    "{arrow} {}   {} span{}{}",
                    band.name,
                    band.spans,
                    if band.spans == 1 { "" } else { "s" },
                    if slot.collapsed { " (collapsed)" } else { "" }
                )
                .into(),
                size: small,
                x,
                y: (top + (g.header_px - label_line) / 2.0).round(),
                clip: [
                    gx,
                    top.max(g.graph.y),
                    graph_right,
                    (top + g.header_px).min(g.graph.y + g.graph.h),
                ],
                color: TITLE_COLOR,
            });
        }
    }

    /// Span labels: `name … duration` when both fit, else the name (truncated if need
    /// be), else nothing.
    pub(super) fn draw_labels<'a>(
        &'a self,
        frame: &mut Frame<'a>,
        sight: &Sight<'_>,
        rows: &[RowDraw],
        m: &mut dyn Measure,
    ) {
        let (g, cam) = (sight.g, &sight.cam);
        if !self.labels {
            return;
        }
        let px = |v: f32| (v * g.scale).round();
        let small = px(g.style.base.label_font);
        let label_line = line_height(small);
        let pad = px(g.style.base.label_pad);
        let min_label = g.style.base.min_label_width * g.scale;
        let gx = g.graph.x;
        let graph_right = g.graph.x + g.graph.w;
        let spans = &self.trace.spans;
        m.names_ahead(&spans.names, small);
        // The f32 the shader's heat scale holds, so labels contrast with what is drawn.
        let max_dur = f64::from(self.max_dur_ns as f32);
        let matches = self.search.as_ref().map(|s| &s.name_matches[..]);
        // The duration's text, reused: only drawn labels allocate theirs.
        let mut dur = String::new();
        let gap = px(10.0);
        // Text colors of the backgrounds seen (palettes repeat a few dozen colors; the
        // contrast of each takes three powers).
        let mut fgs: Vec<([f32; 3], [u8; 3])> = Vec::new();
        let layout = &self.tracks.layout;
        let area = LabelArea {
            left: gx,
            right: graph_right,
            gap: g.gap_px,
            min_width: min_label,
        };
        let slots = label_slots(layout, &self.lod, rows, cam, area, m.labels_timed());
        frame.text.reserve(slots.len());
        place_labels(&slots, frame, m, |slot, frame, m| {
            let d = &rows[slot.draw as usize];
            let row = &layout.rows[d.row];
            let (i, top) = (slot.bar as usize, d.top);
            let (vx0, vx1) = (slot.x0, slot.x1);
            let s = row.node[i] as usize;
            let id = spans.name[s];
            let greyed = self.search.is_some()
                && matches.is_none_or(|m| m.get(spans.name[s] as usize) != Some(&true));
            let bg = self.span_color(s, max_dur, greyed);
            let fg = match fgs.iter().find(|(b, _)| *b == bg) {
                Some(&(_, f)) => f,
                None => {
                    let f = color::label_color(bg);
                    if fgs.len() < 32 {
                        fgs.push((bg, f));
                    }
                    f
                }
            };
            let avail = vx1 - vx0 - 2.0 * pad;
            let text_top = round_px(top + (g.bar_height_px - label_line) / 2.0);
            let clip = [vx0, top, vx1, top + g.bar_height_px];
            let mut put = |text: Label<'a>, x: f32| {
                frame.text.push(Text {
                    text,
                    size: small,
                    x,
                    y: text_top,
                    clip,
                    color: fg,
                })
            };
            let wn = match m.name_fit(LabelFit::Head, &spans.names, id, small, avail) {
                NameFit::Whole(w) => w,
                NameFit::Cut(t) => {
                    put(t, vx0 + pad);
                    frame.labels += 1;
                    return;
                }
                NameFit::Nothing => return,
            };
            put(Label::name(&spans.names, id), vx0 + pad);
            frame.labels += 1;
            if wn + gap < avail {
                dur.clear();
                write_duration_ns(spans.dur_ns[s] as f64, &mut dur);
                let wd = m.width(&dur, small);
                if wn + gap + wd <= avail {
                    put(Label::copied(&dur), vx1 - pad - wd);
                }
            }
        });
    }

    /// Spans made from samples: their start and end are known to within one sampling
    /// interval, so each end fades across it (in steps of the background laid over the
    /// bar), and a span of a single sample is veiled whole. Only when the interval is
    /// at least two pixels wide: zoomed out, the uncertainty is below what is drawn.
    pub(super) fn draw_uncertainty(
        &self,
        frame: &mut Frame<'_>,
        sight: &Sight<'_>,
        rows: &[RowDraw],
    ) {
        let Some(sm) = self
            .trace
            .sampling
            .as_ref()
            .filter(|s| !s.exact && s.interval_ns > 0)
        else {
            return;
        };
        let (g, cam) = (sight.g, &sight.cam);
        let gx = g.graph.x;
        let graph_right = g.graph.x + g.graph.w;
        const STEPS: usize = 4;
        let bg = frame.background;
        let veil = |a: f32| {
            [
                f32::from(bg[0]) / 255.0,
                f32::from(bg[1]) / 255.0,
                f32::from(bg[2]) / 255.0,
                a,
            ]
        };
        for d in rows {
            let row = &self.tracks.layout.rows[d.row];
            for i in single_bars(Some(&self.lod), d) {
                let s = row.node[i] as usize;
                let Some(n) = sm.samples_of(s) else {
                    continue;
                };
                let x0 = gx + cam.x_of(row.x0[i]) as f32;
                let x1 = gx + cam.x_of(row.x1[i]) as f32 - g.gap_px;
                let iv = (cam.x_of(row.x0[i].saturating_add(sm.interval_ns)) - cam.x_of(row.x0[i]))
                    as f32;
                if iv < 2.0 || x1 <= gx || x0 >= graph_right || x1 - x0 < 1.0 {
                    continue;
                }
                let (top, h) = (d.top, g.bar_height_px);
                let clip = |a: f32, b: f32| (a.max(gx), b.min(graph_right).min(x1));
                if n <= 1 {
                    let (a, b) = clip(x0, x1);
                    if b > a {
                        frame.over.push(Rect::new([a, top, b - a, h], veil(0.45)));
                    }
                    continue;
                }
                // Each end fades over at most half the bar.
                let w = iv.min((x1 - x0) / 2.0);
                let step = w / STEPS as f32;
                for k in 0..STEPS {
                    let alpha = 0.6 * (STEPS - k) as f32 / STEPS as f32;
                    let (a, b) = clip(x0 + step * k as f32, x0 + step * (k + 1) as f32);
                    if b > a {
                        frame.over.push(Rect::new([a, top, b - a, h], veil(alpha)));
                    }
                    let (a, b) = clip(x1 - step * (k + 1) as f32, x1 - step * k as f32);
                    if b > a {
                        frame.over.push(Rect::new([a, top, b - a, h], veil(alpha)));
                    }
                }
            }
        }
    }

    /// Connectors from a parent's row down to a pushed-down span's row, when at most
    /// [`MAX_CONNECTORS`] stand in the time in sight.
    pub(super) fn draw_connectors(&self, frame: &mut Frame<'_>, sight: &Sight<'_>) {
        let (g, cam) = (sight.g, &sight.cam);
        let line = g.scale.round().max(1.0);
        let (t0, t1) = cam.visible_ticks(f64::from(g.graph.w));
        let conns = &self.tracks.connectors;
        let by = &self.connectors_by_ns;
        let lo = by.partition_point(|&k| conns[k as usize].at_ns < t0);
        let hi = by.partition_point(|&k| conns[k as usize].at_ns < t1);
        // Too many in sight to read: none, rather than the first few thousand by time
        // (which drew a dark smear over the start of a big trace and nothing after it).
        if hi - lo > MAX_CONNECTORS {
            return;
        }
        let c = rgba(CONNECTOR, 1.0);
        for &k in &by[lo..hi] {
            let cn = &conns[k as usize];
            let (Some(a), Some(b)) = (
                g.row_top(cn.from_row as usize),
                g.row_top(cn.to_row as usize),
            ) else {
                continue;
            };
            let y0 = (a + g.bar_height_px).max(g.graph.y);
            let y1 = b.min(g.graph.y + g.graph.h);
            if y1 <= y0 {
                continue;
            }
            let x = (g.graph.x + cam.x_of(cn.at_ns) as f32).round();
            frame.over.push(Rect::new([x, y0, line, y1 - y0], c));
            // A short foot pointing into the span.
            frame
                .over
                .push(Rect::new([x, y1 - line, (4.0 * g.scale).round(), line], c));
        }
    }

    /// An outline `t` thick around `bar` (or the `ticks` of a merged run), clipped to
    /// the graph.
    pub(super) fn outline_bar(
        &self,
        frame: &mut Frame<'_>,
        sight: &Sight<'_>,
        bar: BarRef,
        ticks: Option<(u64, u64)>,
        (t, col): (f32, [f32; 4]),
    ) {
        let (g, cam) = (sight.g, &sight.cam);
        let line = g.scale.round().max(1.0);
        let gx = g.graph.x;
        let graph_right = g.graph.x + g.graph.w;
        let (t0, t1) = cam.visible_ticks(f64::from(g.graph.w));
        let Some(row) = self.tracks.layout.rows.get(bar.row) else {
            return;
        };
        if bar.index >= row.len() {
            return;
        }
        let Some(top) = g.row_top(bar.row) else {
            return;
        };
        if top + g.bar_height_px <= g.graph.y || top >= g.graph.y + g.graph.h {
            return;
        }
        let (a, b) = ticks.unwrap_or((row.x0[bar.index], row.x1[bar.index]));
        if b <= t0 || a >= t1 {
            return;
        }
        let x0 = (gx + cam.x_of(a) as f32).round().max(gx - t);
        let x1 = ((gx + cam.x_of(b) as f32).round() - g.gap_px)
            .min(graph_right + t)
            .max(x0 + 1.0);
        for r in outline(
            [
                x0 - t + line,
                top - t + line,
                x1 - x0 + 2.0 * (t - line),
                g.bar_height_px + 2.0 * (t - line),
            ],
            t,
        ) {
            frame.over.push(Rect::new(r, col));
        }
    }

    /// The cursor line through axis and bands, with its time in a box on the axis.
    pub(super) fn draw_cursor(
        &self,
        frame: &mut Frame<'_>,
        sight: &Sight<'_>,
        ticks: &AxisTicks,
        cx: f32,
        m: &mut dyn Measure,
    ) {
        let (g, cam) = (sight.g, &sight.cam);
        let px = |v: f32| (v * g.scale).round();
        let line = g.scale.round().max(1.0);
        let small = px(g.style.base.label_font);
        let pad = px(g.style.base.label_pad);
        let ax = g.axis;
        let gx = g.graph.x;
        let x = cx.round();
        let col = rgba([200, 40, 40], 0.85);
        frame.top.push(Rect::new(
            [x, ax.y, line, g.graph.y + g.graph.h - ax.y],
            col,
        ));
        let t = cam.tick_at(f64::from(cx - gx));
        let label = format_axis_time(t, (ticks.step_ns / 100).max(1));
        let w = m.width(&label, small) + 2.0 * pad;
        let lx = (x + px(2.0)).min(ax.x + ax.w - w);
        let bx = [lx, ax.y + line, w, ax.h - 2.0 * line];
        frame.top.push(Rect::new(bx, rgba([255, 255, 255], 1.0)));
        for r in outline(bx, line) {
            frame.top.push(Rect::new(r, col));
        }
        frame.top_text.push(Text {
            text: label.into(),
            size: small,
            x: lx + pad,
            y: (ax.y + (ax.h - line_height(small)) / 2.0).round(),
            clip: [ax.x, ax.y, ax.x + ax.w, ax.y + ax.h],
            color: [150, 20, 20],
        });
    }

    /// The selected span's details in a panel under the bands.
    pub(super) fn draw_details(&self, frame: &mut Frame<'_>, g: &TimelineGeometry, sp: u32) {
        let s = g.scale;
        let w = g.width_px as f32;
        let small = (g.style.base.label_font * s).round();
        let line = line_height(small);
        let pad = (8.0 * s).round();
        let p = g.details;
        frame
            .top
            .push(Rect::new([p.x, p.y, p.w, p.h], rgba8([248, 248, 250, 255])));
        frame.top.push(Rect::new(
            [p.x, p.y, p.w, s.round().max(1.0)],
            rgba8([200, 200, 205, 255]),
        ));
        for (i, l) in self
            .detail_lines(sp)
            .into_iter()
            .take(DETAIL_LINES)
            .enumerate()
        {
            frame.top_text.push(Text {
                text: l.into(),
                size: small,
                x: pad,
                y: p.y + pad / 2.0 + i as f32 * line,
                clip: [pad, p.y, w - pad, p.y + p.h],
                color: if i == 0 { TITLE_COLOR } else { BODY_COLOR },
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::spans::{RawSpan, SpanSet, Track};
    use crate::model::{Names, SourceFormat, Trace, Warnings};
    use crate::view::draw::FixedMeasure;
    use crate::view::{Purpose, View, ViewOptions, Viewport};
    use std::sync::Arc;

    /// A trace of `n` roots 10 µs apart, each with two children that overlap (the second
    /// pushed down a row, so one connector each).
    fn pushed_down(n: u64) -> TimelineView {
        let mut spans = Vec::new();
        for k in 0..n {
            let (id, t) = (3 * k + 1, k * 10_000);
            let span = |id, parent_id, start_ns, dur_ns| RawSpan {
                id,
                parent_id,
                start_ns,
                dur_ns,
                name: "s".into(),
                track: 0,
            };
            spans.push(span(id, None, t, 9_000));
            spans.push(span(id + 1, Some(id), t, 6_000));
            spans.push(span(id + 2, Some(id), t + 3_000, 6_000));
        }
        let tracks = vec![Track { name: "t".into() }];
        let set = SpanSet::from_ids(Names::new(), spans, tracks, Warnings::default());
        let trace = Trace::link(set, "t.json".into(), SourceFormat::ChromeTrace, false);
        let mut v = TimelineView::new(Arc::new(trace), &ViewOptions::default());
        v.set_viewport(Viewport {
            width_px: 1200,
            height_px: 600,
            scale: 1.0,
        });
        v
    }

    /// Connector lines and feet in the frame.
    fn connectors_drawn(v: &TimelineView) -> usize {
        let mut f = Frame::new(1200, 600, 1.0);
        v.draw(&mut f, &mut FixedMeasure { advance: 0.6 }, Purpose::Export);
        let c = rgba(CONNECTOR, 1.0);
        f.over.iter().filter(|r| r.color == c).count()
    }

    #[test]
    fn connectors_are_drawn_all_or_none_never_the_first_few() {
        let few = pushed_down(100);
        assert_eq!(few.tracks().connectors.len(), 100);
        assert_eq!(connectors_drawn(&few), 200, "a line and a foot each");
        let many = pushed_down(MAX_CONNECTORS as u64 + 1);
        assert_eq!(connectors_drawn(&many), 0);
    }
}
