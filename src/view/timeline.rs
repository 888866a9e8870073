//! The timeline view's geometry and pure interactions: where the overview strip, the time
//! axis, the bands of rows and the details panel go; which span is under the pointer;
//! the axis' tick marks; and what dragging in the overview does to the visible window.
//!
//! Layout of a frame, top to bottom (all in physical pixels, snapped to whole pixels):
//!
//! ```text
//! title band
//! overview strip   the whole trace, drawn once into a texture; the visible window shaded
//! time axis        ticks at 1-2-5 steps that suit the zoom, labels relative to the start
//! graph            bands: a header line per track, then its rows (none when collapsed)
//! details panel    the selected span (only when one is selected)
//! status line      (windows only)
//! ```
//!
//! Bands stack vertically and scroll together (`scroll_px`); the horizontal camera is the
//! same [`Camera`] the flame graph uses, shared by the overview's window.

use super::{Camera, RectPx, Style};
use crate::layout::timeline::Band;
use crate::layout::{Layout, Row};
use crate::pick::BarRef;

/// Logical heights of the timeline's own parts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelineStyle {
    /// Row pitch, title, fonts, margins, status line.
    pub base: Style,
    /// Height of the overview strip.
    pub overview_height: f32,
    /// Height of the time axis.
    pub axis_height: f32,
    /// Height of a band's header line.
    pub header_height: f32,
    /// Height of the details panel when a span is selected.
    pub details_height: f32,
    /// Pointer distance (logical px) within which an overview edge is grabbed.
    pub edge_grab: f32,
}

impl Default for TimelineStyle {
    fn default() -> Self {
        TimelineStyle {
            base: Style::default(),
            overview_height: 56.0,
            axis_height: 22.0,
            header_height: 22.0,
            details_height: 0.0,
            edge_grab: 5.0,
        }
    }
}

/// Where a band goes, in content coordinates (0 = top of the first band, before scroll).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BandSlot {
    /// Top of the header line.
    pub top: f32,
    /// First row of the band in the layout.
    pub first_row: u32,
    /// Rows drawn (0 when collapsed).
    pub rows_shown: u32,
    /// Collapsed to its header.
    pub collapsed: bool,
}

/// What lies under a point of the graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphHit {
    /// A band's header line.
    Header(usize),
    /// A row of spans.
    Row(usize),
}

/// Where everything goes on a timeline image.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineGeometry {
    /// Image width in physical pixels.
    pub width_px: u32,
    /// Image height in physical pixels.
    pub height_px: u32,
    /// Device pixels per logical pixel.
    pub scale: f32,
    /// Title band.
    pub title: RectPx,
    /// Overview strip (the whole trace).
    pub overview: RectPx,
    /// Time axis.
    pub axis: RectPx,
    /// Bands of rows.
    pub graph: RectPx,
    /// Details of the selected span (zero height when none).
    pub details: RectPx,
    /// Status line (zero height in exports).
    pub status: RectPx,
    /// Row pitch (whole pixels).
    pub row_pitch_px: f32,
    /// Bar height (pitch minus the separator).
    pub bar_height_px: f32,
    /// Separator width.
    pub gap_px: f32,
    /// Band header height.
    pub header_px: f32,
    /// Vertical scroll of the bands.
    pub scroll_px: f32,
    /// The bands.
    pub bands: Vec<BandSlot>,
    /// Height of all bands.
    pub content_h: f32,
    /// The sizes this was derived from.
    pub style: TimelineStyle,
}

impl TimelineGeometry {
    /// Logical height that shows every band without scrolling.
    pub fn needed_height(bands: &[Band], style: &TimelineStyle) -> f32 {
        let b = &style.base;
        let rows: u32 = bands.iter().map(|b| b.rows).sum();
        b.title_height
            + style.overview_height
            + style.axis_height
            + b.margin * 3.0
            + bands.len() as f32 * style.header_height
            + rows as f32 * b.row_pitch
            + style.details_height
            + b.status_height
    }

    /// Geometry for `width_px` × `height_px` physical pixels; `collapsed[b]` hides band
    /// `b`'s rows.
    pub fn new(
        width_px: u32,
        height_px: u32,
        scale: f32,
        bands: &[Band],
        collapsed: &[bool],
        style: TimelineStyle,
    ) -> TimelineGeometry {
        let scale = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
        let px = |v: f32| (v * scale).round();
        let b = &style.base;
        let margin = px(b.margin);
        let gap = scale.round().max(1.0);
        let pitch = px(b.row_pitch).max(gap + 1.0);
        let header = px(style.header_height).max(pitch);
        let (w, h) = (width_px as f32, height_px as f32);
        let inner_w = (w - 2.0 * margin).max(1.0);
        let title = RectPx {
            x: 0.0,
            y: 0.0,
            w,
            h: px(b.title_height),
        };
        let overview = RectPx {
            x: margin,
            y: title.h,
            w: inner_w,
            h: px(style.overview_height),
        };
        let axis = RectPx {
            x: margin,
            y: overview.y + overview.h + margin,
            w: inner_w,
            h: px(style.axis_height),
        };
        let status_h = px(b.status_height);
        let details_h = px(style.details_height);
        let graph_y = axis.y + axis.h;
        let graph = RectPx {
            x: margin,
            y: graph_y,
            w: inner_w,
            h: (h - graph_y - details_h - status_h - margin).max(0.0),
        };
        let details = RectPx {
            x: 0.0,
            y: graph.y + graph.h + margin.min(details_h),
            w,
            h: (details_h - margin.min(details_h)).max(0.0),
        };
        let status = RectPx {
            x: 0.0,
            y: h - status_h,
            w,
            h: status_h,
        };
        let mut slots = Vec::with_capacity(bands.len());
        let mut y = 0.0f32;
        for (i, band) in bands.iter().enumerate() {
            let c = collapsed.get(i).copied().unwrap_or(false);
            let shown = if c { 0 } else { band.rows };
            slots.push(BandSlot {
                top: y,
                first_row: band.first_row,
                rows_shown: shown,
                collapsed: c,
            });
            y += header + shown as f32 * pitch;
        }
        TimelineGeometry {
            width_px,
            height_px,
            scale,
            title,
            overview,
            axis,
            graph,
            details,
            status,
            row_pitch_px: pitch,
            bar_height_px: pitch - gap,
            gap_px: gap,
            header_px: header,
            scroll_px: 0.0,
            bands: slots,
            content_h: y,
            style,
        }
    }

    /// How far the bands can scroll.
    pub fn max_scroll(&self) -> f32 {
        (self.content_h - self.graph.h).max(0.0)
    }

    /// Screen top of band `b`'s header.
    pub fn header_top(&self, b: usize) -> f32 {
        self.graph.y + self.bands[b].top - self.scroll_px
    }

    /// The band whose rows include `row` (collapsed or not).
    fn band_holding(&self, row: usize) -> Option<usize> {
        let i = self
            .bands
            .partition_point(|s| s.first_row as usize <= row)
            .checked_sub(1)?;
        Some(i)
    }

    /// Screen top of `row`, or `None` when its band is collapsed or it is past the band.
    pub fn row_top(&self, row: usize) -> Option<f32> {
        let b = self.band_holding(row)?;
        let s = &self.bands[b];
        let k = row - s.first_row as usize;
        (k < s.rows_shown as usize)
            .then(|| self.header_top(b) + self.header_px + k as f32 * self.row_pitch_px)
    }

    /// What is at screen `y` inside the graph.
    pub fn hit(&self, y: f32) -> Option<GraphHit> {
        if y < self.graph.y || y >= self.graph.y + self.graph.h {
            return None;
        }
        let cy = y - self.graph.y + self.scroll_px;
        let b = self.bands.partition_point(|s| s.top <= cy).checked_sub(1)?;
        let s = &self.bands[b];
        let off = cy - s.top;
        if off < self.header_px {
            return Some(GraphHit::Header(b));
        }
        let k = ((off - self.header_px) / self.row_pitch_px).floor() as usize;
        (k < s.rows_shown as usize).then_some(GraphHit::Row(s.first_row as usize + k))
    }

    /// Bands whose header or rows intersect the graph area.
    pub fn visible_bands(&self) -> std::ops::Range<usize> {
        let top = self.scroll_px;
        let bottom = self.scroll_px + self.graph.h;
        let first = self
            .bands
            .partition_point(|s| s.top <= top)
            .saturating_sub(1);
        let end = self.bands.partition_point(|s| s.top < bottom);
        first..end.max(first)
    }

    /// Rows visible in the graph, with their screen tops, band by band.
    pub fn visible_rows(&self) -> Vec<(usize, f32)> {
        let mut out = Vec::new();
        let (lo, hi) = (self.graph.y, self.graph.y + self.graph.h);
        for b in self.visible_bands() {
            let s = self.bands[b];
            let rows_top = self.header_top(b) + self.header_px;
            if s.rows_shown == 0 {
                continue;
            }
            let skip = ((lo - rows_top) / self.row_pitch_px).floor().max(0.0) as u32;
            for k in skip..s.rows_shown {
                let top = rows_top + k as f32 * self.row_pitch_px;
                if top >= hi {
                    break;
                }
                out.push(((s.first_row + k) as usize, top));
            }
        }
        out
    }

    /// Horizontal pixel of `ns` in the overview (which always shows `[0, total_ns)`).
    pub fn overview_x(&self, ns: u64, total_ns: u64) -> f32 {
        self.overview.x + (ns as f64 / total_ns.max(1) as f64 * f64::from(self.overview.w)) as f32
    }

    /// The time under overview pixel `x`, clamped to the trace.
    pub fn overview_ns(&self, x: f32, total_ns: u64) -> u64 {
        let f = (f64::from(x - self.overview.x) / f64::from(self.overview.w)).clamp(0.0, 1.0);
        (f * total_ns as f64).round() as u64
    }
}

/// The span under `(x, y)`: the exact bar at the pointer's time or, failing that, the
/// nearest one within `slop_px` (instants and sub-pixel spans are hard to hit exactly).
pub fn pick_span(
    layout: &Layout,
    geom: &TimelineGeometry,
    cam: &Camera,
    x: f32,
    y: f32,
    slop_px: f32,
) -> Option<BarRef> {
    if !geom.graph.contains(x, y) {
        return None;
    }
    let Some(GraphHit::Row(row)) = geom.hit(y) else {
        return None;
    };
    let r = layout.rows.get(row)?;
    let gx = f64::from(x - geom.graph.x);
    let tick = cam.tick_at(gx);
    if let Some(index) = r.bar_at(tick) {
        return Some(BarRef { row, index });
    }
    nearest(r, cam, gx, f64::from(slop_px)).map(|index| BarRef { row, index })
}

fn nearest(r: &Row, cam: &Camera, gx: f64, slop: f64) -> Option<usize> {
    // Bars in a row are sorted and disjoint, so the nearest one to a point in a gap is
    // the last bar before it or the first after it: one binary search, whatever the
    // number of (sub-pixel) bars within the slop.
    let tick = cam.tick_at(gx);
    let i = r.x1.partition_point(|&x| x <= tick);
    let before = i.checked_sub(1).map(|j| (gx - cam.x_of(r.x1[j]), j));
    let after = (i < r.len()).then(|| (cam.x_of(r.x0[i]) - gx, i));
    [before, after]
        .into_iter()
        .flatten()
        .map(|(d, j)| (d.max(0.0), j))
        .filter(|&(d, _)| d <= slop)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, j)| j)
}

/// Tick marks for a time axis.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisTicks {
    /// Distance between two marks, ns.
    pub step_ns: u64,
    /// The marks: time (ns after the trace's start) and pixel relative to the axis' left.
    pub marks: Vec<(u64, f64)>,
}

/// Marks every 1, 2 or 5 × 10^k ns, the smallest step at least `min_spacing_px` apart.
pub fn axis_ticks(cam: &Camera, width_px: f64, min_spacing_px: f64) -> AxisTicks {
    let ns_per_px = 1.0 / cam.px_per_tick;
    let want = (min_spacing_px * ns_per_px).max(1.0);
    let mut step: u64 = 1;
    'outer: loop {
        for m in [1u64, 2, 5] {
            let s = step.saturating_mul(m);
            if s as f64 >= want || s == u64::MAX {
                step = s;
                break 'outer;
            }
        }
        match step.checked_mul(10) {
            Some(s) => step = s,
            None => break,
        }
    }
    let (t0, t1) = cam.visible_ticks(width_px);
    let mut marks = Vec::new();
    let mut t = t0.div_ceil(step).saturating_mul(step);
    while t <= t1 && marks.len() < 10_000 {
        marks.push((t, cam.x_of(t)));
        match t.checked_add(step) {
            Some(n) => t = n,
            None => break,
        }
    }
    AxisTicks {
        step_ns: step,
        marks,
    }
}

/// A time on the axis, with as many decimals as the step needs: `0`, `250 µs`, `1.5 ms`,
/// `2 s`.
pub fn format_axis_time(ns: u64, step_ns: u64) -> String {
    if ns == 0 {
        return "0".to_string();
    }
    // The unit is chosen by the step so all marks read alike.
    // The unit is the largest the step is at least a tenth of (one decimal at most for
    // 1-2-5 steps): `1.5 ms` rather than `1500 µs`.
    let (div, unit) = match step_ns {
        0..100 => (1.0, "ns"),
        100..100_000 => (1e3, "µs"),
        100_000..100_000_000 => (1e6, "ms"),
        _ => (1e9, "s"),
    };
    let v = ns as f64 / div;
    let step = step_ns as f64 / div;
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    format!("{v:.decimals$} {unit}")
}

/// Which part of the overview's window the pointer grabbed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BrushGrab {
    /// The left edge: dragging resizes the window's start.
    Left,
    /// The right edge: dragging resizes its end.
    Right,
    /// Inside: dragging moves the window.
    Inside,
    /// Outside: dragging selects a new window.
    Outside,
}

/// What a press at overview pixel `x` grabs, given the window `[t0, t1)`.
pub fn brush_grab(geom: &TimelineGeometry, window: (u64, u64), total_ns: u64, x: f32) -> BrushGrab {
    let l = geom.overview_x(window.0, total_ns);
    let r = geom.overview_x(window.1, total_ns);
    let grab = geom.style.edge_grab * geom.scale;
    // A window narrower than two grab zones: the nearer edge wins, outside the window.
    if (x - l).abs() <= grab && (x <= (l + r) / 2.0 || (x - l).abs() < (x - r).abs()) {
        BrushGrab::Left
    } else if (x - r).abs() <= grab {
        BrushGrab::Right
    } else if x > l && x < r {
        BrushGrab::Inside
    } else {
        BrushGrab::Outside
    }
}

/// The window after dragging from `press_x` to `x` with `grab`, starting from `window`.
/// Windows never get narrower than `min_ns` and never leave `[0, total_ns)`.
pub fn brush_drag(
    geom: &TimelineGeometry,
    grab: BrushGrab,
    window: (u64, u64),
    total_ns: u64,
    press_x: f32,
    x: f32,
    min_ns: u64,
) -> (u64, u64) {
    let total = total_ns.max(1);
    let min_ns = min_ns.clamp(1, total);
    let at = geom.overview_ns(x, total);
    match grab {
        BrushGrab::Left => (at.min(window.1.saturating_sub(min_ns)), window.1),
        BrushGrab::Right => (window.0, at.max(window.0 + min_ns).min(total)),
        BrushGrab::Inside => {
            let from = geom.overview_ns(press_x, total) as i128;
            let delta = at as i128 - from;
            let w = (window.1 - window.0) as i128;
            let start = (window.0 as i128 + delta).clamp(0, total as i128 - w);
            (start as u64, (start + w) as u64)
        }
        BrushGrab::Outside => {
            let a = geom.overview_ns(press_x, total);
            let (lo, hi) = (a.min(at), a.max(at));
            if hi - lo >= min_ns {
                (lo, hi)
            } else {
                let lo = lo.min(total - min_ns);
                (lo, lo + min_ns)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bands() -> Vec<Band> {
        vec![
            Band {
                name: "a".into(),
                track: Some(0),
                first_row: 0,
                rows: 3,
                spans: 5,
            },
            Band {
                name: "b".into(),
                track: Some(1),
                first_row: 3,
                rows: 2,
                spans: 2,
            },
        ]
    }

    fn geom(collapsed: &[bool]) -> TimelineGeometry {
        TimelineGeometry::new(
            1000,
            600,
            1.0,
            &bands(),
            collapsed,
            TimelineStyle::default(),
        )
    }

    #[test]
    fn bands_stack_with_headers_and_collapse() {
        let g = geom(&[]);
        let p = g.row_pitch_px;
        let h = g.header_px;
        assert_eq!(g.row_top(0), Some(g.graph.y + h));
        assert_eq!(g.row_top(2), Some(g.graph.y + h + 2.0 * p));
        assert_eq!(g.row_top(3), Some(g.graph.y + 2.0 * h + 3.0 * p));
        assert_eq!(g.hit(g.graph.y + 1.0), Some(GraphHit::Header(0)));
        assert_eq!(g.hit(g.graph.y + h + p + 1.0), Some(GraphHit::Row(1)));
        assert_eq!(
            g.hit(g.graph.y + 2.0 * h + 3.0 * p + 1.0),
            Some(GraphHit::Row(3))
        );
        assert_eq!(g.content_h, 2.0 * h + 5.0 * p);
        let rows: Vec<usize> = g.visible_rows().iter().map(|r| r.0).collect();
        assert_eq!(rows, vec![0, 1, 2, 3, 4]);

        let c = geom(&[true, false]);
        assert_eq!(c.row_top(1), None);
        assert_eq!(c.row_top(3), Some(c.graph.y + 2.0 * h));
        assert_eq!(c.hit(c.graph.y + h + 1.0), Some(GraphHit::Header(1)));
        let rows: Vec<usize> = c.visible_rows().iter().map(|r| r.0).collect();
        assert_eq!(rows, vec![3, 4]);
    }

    #[test]
    fn scrolling_hides_rows_above() {
        let mut g = TimelineGeometry::new(1000, 200, 1.0, &bands(), &[], TimelineStyle::default());
        g.scroll_px = g.header_px + g.row_pitch_px;
        let rows = g.visible_rows();
        assert_eq!(rows[0].0, 1, "row 0 scrolled away");
        assert_eq!(rows[0].1, g.graph.y);
        assert!(rows.iter().all(|&(_, top)| top < g.graph.y + g.graph.h));
        assert_eq!(g.hit(g.graph.y), Some(GraphHit::Row(1)));
    }

    #[test]
    fn axis_steps_are_1_2_5_and_suit_the_zoom() {
        let cam = Camera::range(0, 1_000_000, 1000.0); // 1 ms over 1000 px
        let t = axis_ticks(&cam, 1000.0, 80.0);
        assert_eq!(t.step_ns, 100_000);
        assert_eq!(t.marks.first().map(|m| m.0), Some(0));
        assert_eq!(t.marks.len(), 11);
        assert!((t.marks[1].1 - 100.0).abs() < 1e-6);
        let cam = Camera::range(1_000, 1_300, 1000.0);
        let t = axis_ticks(&cam, 1000.0, 80.0);
        assert_eq!(t.step_ns, 50);
        assert_eq!(t.marks[0].0, 1_000);
        // The step at any zoom keeps marks at least the spacing apart.
        for (a, b) in [(0u64, 7u64), (0, 3_000_000_000), (5, 10_000_000_000_000)] {
            let cam = Camera::range(a, b, 777.0);
            let t = axis_ticks(&cam, 777.0, 70.0);
            for w in t.marks.windows(2) {
                assert!(w[1].1 - w[0].1 >= 70.0 - 1e-6);
            }
        }
        assert_eq!(format_axis_time(0, 100), "0");
        assert_eq!(format_axis_time(250_000, 50_000), "250 µs");
        assert_eq!(format_axis_time(1_500_000, 500_000), "1.5 ms");
        assert_eq!(format_axis_time(1_200_000, 200_000), "1.2 ms");
        assert_eq!(format_axis_time(2_000_000_000, 1_000_000_000), "2 s");
        assert_eq!(format_axis_time(1_050, 50), "1050 ns");
    }

    #[test]
    fn overview_brush_grabs_and_drags() {
        let g = geom(&[]);
        let total = 1_000_000;
        let ov = g.overview;
        let window = (250_000, 500_000);
        let xl = g.overview_x(window.0, total);
        let xr = g.overview_x(window.1, total);
        assert_eq!(brush_grab(&g, window, total, xl + 2.0), BrushGrab::Left);
        assert_eq!(brush_grab(&g, window, total, xr - 2.0), BrushGrab::Right);
        assert_eq!(
            brush_grab(&g, window, total, (xl + xr) / 2.0),
            BrushGrab::Inside
        );
        assert_eq!(brush_grab(&g, window, total, xr + 50.0), BrushGrab::Outside);

        let x_of = |ns: u64| g.overview_x(ns, total);
        let drag = |grab, from, to, min| brush_drag(&g, grab, window, total, from, to, min);
        // Edges resize.
        let w = drag(BrushGrab::Left, xl, x_of(100_000), 10);
        assert_eq!(w, (100_000, 500_000));
        let w = drag(BrushGrab::Right, xr, x_of(900_000), 10);
        assert_eq!(w, (250_000, 900_000));
        // An edge dragged past the other stops short of it.
        let w = drag(BrushGrab::Left, xl, x_of(800_000), 10);
        assert_eq!(w, (499_990, 500_000));
        // Inside moves, keeping the width, and stops at the ends.
        let w = drag(BrushGrab::Inside, x_of(300_000), x_of(400_000), 10);
        assert_eq!(w, (350_000, 600_000));
        let w = drag(BrushGrab::Inside, x_of(300_000), ov.x + ov.w + 500.0, 10);
        assert_eq!(w, (750_000, 1_000_000));
        // Outside selects a new window, in either direction.
        let w = drag(BrushGrab::Outside, x_of(900_000), x_of(700_000), 10);
        assert_eq!(w, (700_000, 900_000));
        let w = drag(BrushGrab::Outside, x_of(10_000), x_of(10_000), 5_000);
        assert_eq!(w, (10_000, 15_000));
    }

    #[test]
    fn picking_finds_spans_and_near_instants() {
        let mut layout = Layout::default();
        let mut r = Row::default();
        for (a, b) in [(0u64, 100u64), (200, 201), (500, 900)] {
            r.push(a, b, 0, 0);
        }
        layout.rows = vec![r.clone(), Row::default(), Row::default(), r];
        layout.total_ticks = 1000;
        let g = geom(&[]);
        let cam = Camera::range(0, 1000, f64::from(g.graph.w));
        let y0 = g.row_top(0).unwrap() + 2.0;
        let x_of = |t: u64| g.graph.x + cam.x_of(t) as f32;
        assert_eq!(
            pick_span(&layout, &g, &cam, x_of(50), y0, 4.0),
            Some(BarRef { row: 0, index: 0 })
        );
        // The 1 ns instant at 200 is hit from 3 px away, not from 30.
        assert_eq!(
            pick_span(&layout, &g, &cam, x_of(200) + 3.0, y0, 4.0),
            Some(BarRef { row: 0, index: 1 })
        );
        assert_eq!(pick_span(&layout, &g, &cam, x_of(230), y0, 4.0), None);
        let y3 = g.row_top(3).unwrap() + 2.0;
        assert_eq!(
            pick_span(&layout, &g, &cam, x_of(600), y3, 4.0),
            Some(BarRef { row: 3, index: 2 })
        );
        // Headers are not spans.
        assert_eq!(
            pick_span(&layout, &g, &cam, x_of(50), g.graph.y + 1.0, 4.0),
            None
        );
    }

    /// The nearest-span search (two neighbours of one binary search) agrees with a scan
    /// of every span within the slop, on random rows with dense sub-pixel spans and gaps.
    #[test]
    fn nearest_span_matches_a_scan() {
        let mut seed = 99u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for round in 0..30 {
            let mut r = Row::default();
            let mut t = next(50);
            for _ in 0..2000 {
                let w = 1 + next(if round % 2 == 0 { 5 } else { 400 });
                r.push(t, t + w, 0, 0);
                t += w + next(300);
            }
            let end = t;
            let span = 1 + next(end);
            let start = next(end - span + 1);
            let cam = Camera::range(start, start + span, 1000.0);
            for _ in 0..200 {
                let gx = next(1000) as f64 + 0.5;
                let slop = 4.0;
                let range = r.range_between(
                    cam.tick_at(gx - slop),
                    cam.tick_at(gx + slop).saturating_add(1),
                );
                let want = range
                    .map(|i| {
                        let (a, b) = (cam.x_of(r.x0[i]), cam.x_of(r.x1[i]));
                        ((a - gx).max(gx - b).max(0.0), i)
                    })
                    .filter(|&(d, _)| d <= slop)
                    .min_by(|a, b| a.0.total_cmp(&b.0));
                let got = nearest(&r, &cam, gx, slop);
                match (want, got) {
                    (None, None) => {}
                    (Some((dw, _)), Some(g)) => {
                        let (a, b) = (cam.x_of(r.x0[g]), cam.x_of(r.x1[g]));
                        let dg = (a - gx).max(gx - b).max(0.0);
                        assert!(
                            (dg - dw).abs() < 1e-9,
                            "round {round} at {gx}: {dg} vs {dw}"
                        );
                    }
                    other => panic!("round {round} at {gx}: {other:?}"),
                }
            }
        }
    }
}
