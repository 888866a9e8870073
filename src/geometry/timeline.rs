//! A timeline's geometry: where the overview strip, the time axis, the bands of rows and
//! the details panel go, and which band or row lies under a point.
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
//! same [`Camera`](super::Camera) the flame graph uses, shared by the overview's window.

use super::{RectPx, Style};
use crate::layout::timeline::Band;

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

/// Two bands (3 and 2 rows) in a 1000 × 600 image, for the tests of geometry, picking
/// and the overview brush.
#[cfg(test)]
pub(crate) mod fixtures {
    use super::*;

    pub(crate) fn bands() -> Vec<Band> {
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

    pub(crate) fn geom(collapsed: &[bool]) -> TimelineGeometry {
        TimelineGeometry::new(
            1000,
            600,
            1.0,
            &bands(),
            collapsed,
            TimelineStyle::default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{bands, geom};
    use super::*;

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
}
