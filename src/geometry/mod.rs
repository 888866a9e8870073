//! Where things land on an image: the horizontal camera and the frame's rectangles.
//!
//! - [`Camera`] maps ticks to horizontal pixels. Its origin is a `u64` tick plus a
//!   fraction, so panning and zooming stay exact on a 10^12-tick axis (an `f64` origin
//!   would already round at 2^53 ticks); the GPU gets the same origin split into two
//!   `u32` halves.
//! - [`FrameGeometry`] fixes the image: its size in physical pixels, the title band, the
//!   graph rectangle, the row pitch, and the orientation (flame graph: root at the bottom;
//!   icicle: root at the top). Everything is snapped to whole device pixels so bars and
//!   separators stay crisp at any scale factor.
//! - [`timeline`]: the same for a timeline (overview strip, axis, bands of rows).
//!
//! All of it is plain data with pure functions below picking and the views: the window
//! and the PNG export share them, and tests exercise them without a GPU.

use crate::layout::Layout;

pub mod timeline;

/// Which way the rows grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Orientation {
    /// Root at the bottom, callees above (flamegraph.pl).
    #[default]
    Flame,
    /// Root at the top, callees below (Pyroscope, speedscope).
    Icicle,
}

/// Logical (scale 1) sizes of the frame's parts, in pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Style {
    /// Distance between the tops of two rows.
    pub row_pitch: f32,
    /// Margin around the graph.
    pub margin: f32,
    /// Height of the title band above the graph.
    pub title_height: f32,
    /// Label font size.
    pub label_font: f32,
    /// Title font size.
    pub title_font: f32,
    /// Space between a bar's left edge and its label.
    pub label_pad: f32,
    /// Narrowest bar that gets a label.
    pub min_label_width: f32,
    /// Height of the status line below the graph (0: none, as in exports).
    pub status_height: f32,
    /// Height of the window's toolbar, the lower part of `title_height` (0: none, as in
    /// exports).
    pub toolbar_height: f32,
}

impl Default for Style {
    fn default() -> Self {
        Self {
            row_pitch: 18.0,
            margin: 8.0,
            title_height: 30.0,
            label_font: 12.0,
            title_font: 14.0,
            label_pad: 4.0,
            min_label_width: 22.0,
            status_height: 0.0,
            toolbar_height: 0.0,
        }
    }
}

/// Horizontal mapping from ticks to pixels (relative to the graph's left edge).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Whole tick at the graph's left edge.
    pub start: u64,
    /// Fraction of a tick past `start` at the left edge, in `[0, 1)`.
    pub start_frac: f64,
    /// Pixels per tick.
    pub px_per_tick: f64,
}

impl Camera {
    /// The camera that shows `[0, total_ticks)` across `width_px`.
    pub fn fit(total_ticks: u64, width_px: f64) -> Camera {
        Camera {
            start: 0,
            start_frac: 0.0,
            px_per_tick: if total_ticks == 0 {
                1.0
            } else {
                width_px / total_ticks as f64
            },
        }
    }

    /// The camera that shows `[start, end)` across `width_px`.
    pub fn range(start: u64, end: u64, width_px: f64) -> Camera {
        Camera {
            start,
            start_frac: 0.0,
            px_per_tick: width_px / (end.saturating_sub(start).max(1)) as f64,
        }
    }

    /// Horizontal pixel of `tick`, relative to the graph's left edge.
    pub fn x_of(&self, tick: u64) -> f64 {
        let rel = if tick >= self.start {
            (tick - self.start) as f64
        } else {
            -((self.start - tick) as f64)
        };
        (rel - self.start_frac) * self.px_per_tick
    }

    /// The tick under pixel `x` (relative to the graph's left edge), clamped at 0.
    pub fn tick_at(&self, x: f64) -> u64 {
        let off = (self.start_frac + x / self.px_per_tick).floor();
        if off >= 0.0 {
            self.start.saturating_add(off.min(u64::MAX as f64) as u64)
        } else {
            self.start
                .saturating_sub((-off).min(u64::MAX as f64) as u64)
        }
    }

    /// Ticks `[start, end)` that are at least partly visible over `width_px`.
    pub fn visible_ticks(&self, width_px: f64) -> (u64, u64) {
        (self.tick_at(0.0), self.tick_at(width_px).saturating_add(1))
    }

    /// The same view on an image `factor` times wider (a screenshot at a higher
    /// resolution than the window).
    pub fn scaled(mut self, factor: f32) -> Camera {
        self.px_per_tick *= f64::from(factor);
        self
    }

    /// `start` as the `(low, high)` 32-bit halves the shader takes.
    pub fn start_split(&self) -> [u32; 2] {
        [self.start as u32, (self.start >> 32) as u32]
    }
}

/// A rectangle in physical pixels.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct RectPx {
    /// Left edge.
    pub x: f32,
    /// Top edge.
    pub y: f32,
    /// Width.
    pub w: f32,
    /// Height.
    pub h: f32,
}

impl RectPx {
    /// Whether the point lies inside.
    pub fn contains(&self, x: f32, y: f32) -> bool {
        x >= self.x && x < self.x + self.w && y >= self.y && y < self.y + self.h
    }
}

/// Where everything goes on an image of a given size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameGeometry {
    /// Image width in physical pixels.
    pub width_px: u32,
    /// Image height in physical pixels.
    pub height_px: u32,
    /// Device pixels per logical pixel.
    pub scale: f32,
    /// The title band.
    pub title: RectPx,
    /// The graph area.
    pub graph: RectPx,
    /// The status line below the graph (zero height when there is none).
    pub status: RectPx,
    /// Row pitch in physical pixels (a whole number).
    pub row_pitch_px: f32,
    /// Height of a bar (pitch minus the separator).
    pub bar_height_px: f32,
    /// Width of the separator between bars and rows (a whole number, at least 1).
    pub gap_px: f32,
    /// Number of rows in the layout.
    pub rows: usize,
    /// Which way rows grow.
    pub orientation: Orientation,
    /// Vertical scroll of the graph content, in physical pixels (0 shows the root).
    pub scroll_px: f32,
    /// Rows before this one are not drawn (a focused node's ancestors).
    pub first_row: usize,
    /// Whether a collapsed "ancestors" line takes the first row slot (focus).
    pub header: bool,
    /// The logical sizes this geometry was derived from.
    pub style: Style,
}

impl FrameGeometry {
    /// Logical height an image needs to show all `rows` without scrolling.
    pub fn needed_height(rows: usize, style: &Style) -> f32 {
        style.title_height + style.margin * 2.0 + rows as f32 * style.row_pitch
    }

    /// Geometry for an image `width` × `height` logical pixels at `scale`.
    pub fn new(
        width: u32,
        height: u32,
        scale: f32,
        rows: usize,
        orientation: Orientation,
        style: Style,
    ) -> FrameGeometry {
        let scale = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
        let width_px = ((width as f32) * scale).round().max(1.0) as u32;
        let height_px = ((height as f32) * scale).round().max(1.0) as u32;
        Self::with_physical_size(width_px, height_px, scale, rows, orientation, style)
    }

    /// Geometry for an image of `width_px` × `height_px` physical pixels (a window).
    pub fn with_physical_size(
        width_px: u32,
        height_px: u32,
        scale: f32,
        rows: usize,
        orientation: Orientation,
        style: Style,
    ) -> FrameGeometry {
        let px = |v: f32| (v * scale).round();
        let margin = px(style.margin);
        let title_h = px(style.title_height);
        let status_h = px(style.status_height);
        let gap = scale.round().max(1.0);
        let pitch = px(style.row_pitch).max(gap + 1.0);
        let graph = RectPx {
            x: margin,
            y: title_h + margin,
            w: (width_px as f32 - 2.0 * margin).max(1.0),
            h: (height_px as f32 - title_h - status_h - 2.0 * margin).max(0.0),
        };
        let status = RectPx {
            x: 0.0,
            y: height_px as f32 - status_h,
            w: width_px as f32,
            h: status_h,
        };
        FrameGeometry {
            width_px,
            height_px,
            scale,
            title: RectPx {
                x: 0.0,
                y: 0.0,
                w: width_px as f32,
                h: title_h,
            },
            graph,
            status,
            row_pitch_px: pitch,
            bar_height_px: pitch - gap,
            gap_px: gap,
            rows,
            orientation,
            scroll_px: 0.0,
            first_row: 0,
            header: false,
            style,
        }
    }

    /// Top edge of row slot `slot` (slot 0 is the header when there is one, else the
    /// first shown row).
    pub fn slot_top(&self, slot: usize) -> f32 {
        let offset = slot as f32 * self.row_pitch_px;
        match self.orientation {
            Orientation::Icicle => self.graph.y + offset - self.scroll_px,
            Orientation::Flame => {
                self.graph.y + self.graph.h - self.row_pitch_px - offset + self.scroll_px
            }
        }
    }

    fn slot_of(&self, row: usize) -> usize {
        row.saturating_sub(self.first_row) + usize::from(self.header)
    }

    /// Top edge of the collapsed-ancestors line, when focused.
    pub fn header_top(&self) -> Option<f32> {
        self.header.then(|| self.slot_top(0))
    }

    /// Top edge of row `row` (physical pixels, image space). For the flame orientation the
    /// root sits on the graph's bottom edge; for the icicle, on its top edge.
    pub fn row_top(&self, row: usize) -> f32 {
        self.slot_top(self.slot_of(row))
    }

    /// The row slot whose pitch band contains `y`, if inside the graph.
    fn slot_at(&self, y: f32) -> Option<usize> {
        if y < self.graph.y || y >= self.graph.y + self.graph.h {
            return None;
        }
        let s = match self.orientation {
            Orientation::Icicle => {
                ((y - self.graph.y + self.scroll_px) / self.row_pitch_px).floor()
            }
            // Bottom-up: the band [bottom - pitch, bottom) is slot 0.
            Orientation::Flame => {
                ((self.graph.y + self.graph.h + self.scroll_px - y) / self.row_pitch_px).ceil()
                    - 1.0
            }
        };
        (s >= 0.0).then_some(s as usize)
    }

    /// The layout row whose pitch band contains `y`, if it is inside the graph and the
    /// layout (the collapsed header line is not a row).
    pub fn row_at(&self, y: f32) -> Option<usize> {
        let s = self.slot_at(y)?;
        if self.header && s == 0 {
            return None;
        }
        let r = s - usize::from(self.header) + self.first_row;
        (r < self.rows).then_some(r)
    }

    /// Whether `y` is on the collapsed-ancestors line.
    pub fn is_header(&self, y: f32) -> bool {
        self.header && self.slot_at(y) == Some(0)
    }

    /// Rows that are at least partly inside the graph area.
    pub fn visible_rows(&self) -> std::ops::Range<usize> {
        let slots = (self.graph.h / self.row_pitch_px).ceil() as usize + 2;
        let first_slot = (self.scroll_px / self.row_pitch_px).floor().max(0.0) as usize;
        let header = usize::from(self.header);
        let lo = (first_slot.saturating_sub(1 + header) + self.first_row).min(self.rows);
        let hi = (first_slot + slots + self.first_row).min(self.rows);
        let mut out_lo = hi;
        let mut out_hi = lo;
        for r in lo.max(self.first_row)..hi {
            let top = self.row_top(r);
            if top + self.row_pitch_px > self.graph.y && top < self.graph.y + self.graph.h {
                out_lo = out_lo.min(r);
                out_hi = out_hi.max(r + 1);
            }
        }
        if out_lo >= out_hi {
            0..0
        } else {
            out_lo..out_hi
        }
    }

    /// The camera that fits the whole layout across the graph's width.
    pub fn fit_camera(&self, layout: &Layout) -> Camera {
        Camera::fit(layout.total_ticks, f64::from(self.graph.w))
    }
}

/// `x.floor() as i32`, without a call into the math library (which `floor` is on
/// x86-64 without SSE4.1): the text layer snaps every label's clip so.
pub fn floor_i32(x: f32) -> i32 {
    let t = x as i32;
    if (t as f32) > x {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// `x.ceil() as i32`, as [`floor_i32`].
pub fn ceil_i32(x: f32) -> i32 {
    let t = x as i32;
    if (t as f32) < x {
        t.saturating_add(1)
    } else {
        t
    }
}

/// `x.round()`, as [`floor_i32`]: the label loops round a few coordinates of every bar
/// they look at. The same value for every `x`, the sign of a zero included.
pub fn round_px(x: f32) -> f32 {
    if x.abs() < 8_388_608.0 {
        // Below 2^23 the fraction is exact; above, `x` is whole.
        let t = x as i32;
        let d = x - t as f32;
        let r = if d >= 0.5 {
            t + 1
        } else if d <= -0.5 {
            t - 1
        } else {
            t
        };
        (r as f32).copysign(x)
    } else {
        x.round()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `round_px`, `floor_i32` and `ceil_i32` are `round`, `floor` and `ceil` (then
    /// `as i32`) for every value: edges, halves, huge, negative, NaN, and a million
    /// random bit patterns.
    #[test]
    fn rounding_without_libm_is_the_same() {
        let mut v: Vec<f32> = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.49999997,
            -0.49999997,
            8_388_607.5,
            -8_388_607.5,
            8_388_608.0,
            16_777_217.0,
            3e9,
            -3e9,
            1e30,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            2_147_483_520.0,
            2_147_483_648.0,
            -2_147_483_648.0,
            -2_147_483_904.0,
            f32::NAN,
        ];
        let mut x = 0x2545_f491_u32;
        for _ in 0..1_000_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            v.push(f32::from_bits(x));
            v.push((x % 40_000) as f32 / 16.0 - 1000.0);
        }
        for x in v {
            let (a, b) = (round_px(x), x.round());
            assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{x}: {a} {b}"
            );
            assert_eq!(floor_i32(x), x.floor() as i32, "{x}");
            assert_eq!(ceil_i32(x), x.ceil() as i32, "{x}");
        }
    }

    #[test]
    fn camera_round_trip_at_deep_zoom() {
        // One tick spread over 1000 px, far out on a 10^12-tick axis.
        let start = 999_999_999_937u64;
        let cam = Camera {
            start,
            start_frac: 0.25,
            px_per_tick: 1000.0,
        };
        assert_eq!(cam.x_of(start + 1), 750.0);
        assert_eq!(cam.tick_at(0.0), start);
        assert_eq!(cam.tick_at(749.0), start);
        assert_eq!(cam.tick_at(750.0), start + 1);
        assert_eq!(cam.x_of(start - 2), -2250.0);
        assert_eq!(cam.visible_ticks(1000.0), (start, start + 2));
        assert_eq!(cam.start_split(), [start as u32, (start >> 32) as u32]);
    }

    #[test]
    fn fit_camera_maps_ends() {
        let cam = Camera::fit(988, 1184.0);
        assert!((cam.x_of(988) - 1184.0).abs() < 1e-9);
        assert_eq!(cam.tick_at(0.0), 0);
        assert_eq!(cam.tick_at(1183.9), 987);
    }

    #[test]
    fn rows_flame_and_icicle() {
        let style = Style::default();
        let h = FrameGeometry::needed_height(4, &style) as u32;
        let flame = FrameGeometry::new(400, h, 1.0, 4, Orientation::Flame, style);
        let icicle = FrameGeometry::new(400, h, 1.0, 4, Orientation::Icicle, style);
        // Exactly fits: root row touches the graph bottom (flame) or top (icicle).
        assert_eq!(
            flame.row_top(0) + flame.row_pitch_px,
            flame.graph.y + flame.graph.h
        );
        assert_eq!(icicle.row_top(0), icicle.graph.y);
        for g in [flame, icicle] {
            for r in 0..4 {
                let mid = g.row_top(r) + g.bar_height_px / 2.0;
                assert_eq!(g.row_at(mid), Some(r), "{:?} row {r}", g.orientation);
            }
            assert_eq!(g.visible_rows(), 0..4);
            assert_eq!(g.row_at(g.graph.y - 1.0), None);
        }
    }

    #[test]
    fn hidpi_snaps_to_whole_pixels() {
        let g = FrameGeometry::new(300, 200, 1.5, 3, Orientation::Icicle, Style::default());
        assert_eq!((g.width_px, g.height_px), (450, 300));
        assert_eq!(g.row_pitch_px, 27.0);
        assert_eq!(g.gap_px, 2.0);
        assert_eq!(g.row_pitch_px.fract(), 0.0);
        assert_eq!(g.graph.x.fract(), 0.0);
    }

    #[test]
    fn scrolled_flame_hides_lower_rows() {
        let mut g = FrameGeometry::new(300, 100, 1.0, 50, Orientation::Flame, Style::default());
        let vis = g.visible_rows();
        assert_eq!(vis.start, 0);
        assert!(vis.end < 50);
        g.scroll_px = 18.0 * 10.0;
        let vis = g.visible_rows();
        assert_eq!(vis.start, 10);
    }
}
