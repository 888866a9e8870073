//! The interactive view state, as plain data with pure transitions.
//!
//! Everything the window does to the view goes through [`ViewState`]: wheel zoom around the
//! pointer, drag and key panning, click zoom (animated), focus, the zoom history, vertical
//! scrolling, orientation and color mode. None of it touches a window or the GPU, so every
//! rule is unit-tested: the tick under the pointer stays under the pointer (to the pixel),
//! the view never leaves the profile (or the focused node), one tick of a 10^12-tick
//! profile can fill the window, and Backspace retraces every zoom.
//!
//! Positions are a `u64` tick plus an `f64` fraction (see [`Camera`]); the animation
//! interpolates edges relative to its target, so it is exact at any depth too.

use crate::color::ColorMode;
use crate::geometry::{Camera, Orientation};
use crate::layout::Layout;
use crate::pick::BarRef;

/// Wheel zoom speed modifiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoomSpeed {
    /// Plain wheel: ×1.25 a notch.
    Normal,
    /// Ctrl: ×1.05 a notch.
    Fine,
    /// Shift: ×2 a notch.
    Fast,
}

impl ZoomSpeed {
    fn base(self) -> f64 {
        match self {
            ZoomSpeed::Normal => 1.25,
            ZoomSpeed::Fine => 1.05,
            ZoomSpeed::Fast => 2.0,
        }
    }
}

/// A node the view is focused on: its ancestors collapse into one line, and the camera
/// cannot leave its extent (Pyroscope's "collapse nodes above").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Focus {
    /// The focused bar.
    pub bar: BarRef,
    /// Its extent.
    pub x0: u64,
    /// Its end (exclusive).
    pub x1: u64,
}

/// What Backspace restores.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Saved {
    camera: Camera,
    zoomed: Option<BarRef>,
    focus: Option<Focus>,
    scroll_px: f32,
}

/// A camera animation between two states.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Anim {
    from: Camera,
    to: Camera,
    start_s: f64,
}

/// How long a click zoom animates.
pub const ANIMATION_S: f64 = 0.18;
/// The narrowest view: this many ticks across the graph.
pub const MIN_VISIBLE_TICKS: f64 = 1.0;

/// The view of one layout in one window.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewState {
    /// Horizontal view (the animation's current value while one runs).
    pub camera: Camera,
    /// Graph width in physical pixels.
    pub graph_w: f64,
    /// Graph height in physical pixels.
    pub graph_h: f32,
    /// Row pitch in physical pixels.
    pub row_pitch: f32,
    /// Rows in the layout.
    pub rows: usize,
    /// Axis length.
    pub total_ticks: u64,
    /// Vertical scroll in physical pixels (0 shows the root).
    pub scroll_px: f32,
    /// Flame (root at the bottom) or icicle.
    pub orientation: Orientation,
    /// Bar colors.
    pub color: ColorMode,
    /// The bar the last click zoomed to.
    pub zoomed: Option<BarRef>,
    /// The focused node, if any.
    pub focus: Option<Focus>,
    /// Height of the scrollable content in pixels, when the view states it (a
    /// timeline's bands); `None`: the layout's rows below the focus (flame graphs).
    pub content_px: Option<f32>,
    history: Vec<Saved>,
    anim: Option<Anim>,
}

/// The exact position under pixel `x` of `cam`: (whole tick, fraction).
pub fn pos_at(cam: &Camera, x: f64) -> (u64, f64) {
    let off = cam.start_frac + x / cam.px_per_tick;
    let whole = off.floor();
    let frac = off - whole;
    let start = if whole >= 0.0 {
        cam.start.saturating_add(whole as u64)
    } else {
        cam.start.saturating_sub((-whole) as u64)
    };
    (start, frac)
}

/// The camera with `px_per_tick` that puts position `pos` at pixel `x`.
pub fn placing(pos: (u64, f64), x: f64, px_per_tick: f64) -> Camera {
    let off = pos.1 - x / px_per_tick;
    let whole = off.floor();
    let (start, frac) = if whole >= 0.0 {
        (pos.0.saturating_add(whole as u64), off - whole)
    } else if ((-whole) as u64) > pos.0 {
        (0, 0.0)
    } else {
        (pos.0 - (-whole) as u64, off - whole)
    };
    Camera {
        start,
        start_frac: frac,
        px_per_tick,
    }
}

/// `a - b` in ticks, as f64 (both cameras' left edges).
fn edge_delta(a: &Camera, b: &Camera) -> f64 {
    let whole = i128::from(a.start) - i128::from(b.start);
    whole as f64 + (a.start_frac - b.start_frac)
}

fn ease_out(t: f64) -> f64 {
    1.0 - (1.0 - t).powi(3)
}

impl ViewState {
    /// A view fitting `layout` into a graph of `graph_w` × `graph_h` pixels.
    pub fn new(
        layout: &Layout,
        graph_w: f64,
        graph_h: f32,
        row_pitch: f32,
        orientation: Orientation,
        color: ColorMode,
    ) -> ViewState {
        let mut v = ViewState {
            camera: Camera::fit(layout.total_ticks, graph_w),
            graph_w: graph_w.max(1.0),
            graph_h,
            row_pitch,
            rows: layout.rows.len(),
            total_ticks: layout.total_ticks.max(1),
            scroll_px: 0.0,
            orientation,
            color,
            zoomed: None,
            focus: None,
            content_px: None,
            history: Vec::new(),
            anim: None,
        };
        v.clamp();
        v
    }

    /// The tick range the camera may show.
    pub fn bounds(&self) -> (u64, u64) {
        match self.focus {
            Some(f) => (f.x0, f.x1.max(f.x0 + 1)),
            None => (0, self.total_ticks),
        }
    }

    fn clamp_camera(&self, mut c: Camera) -> Camera {
        let (lo, hi) = self.bounds();
        let span = (hi - lo) as f64;
        let min_ppt = self.graph_w / span;
        let max_ppt = (self.graph_w / MIN_VISIBLE_TICKS).max(min_ppt);
        if !c.px_per_tick.is_finite() || c.px_per_tick <= 0.0 {
            c.px_per_tick = min_ppt;
        }
        c.px_per_tick = c.px_per_tick.clamp(min_ppt, max_ppt);
        let visible = self.graph_w / c.px_per_tick;
        // Left edge not before lo.
        if c.start < lo {
            c.start = lo;
            c.start_frac = 0.0;
        }
        // Right edge not after hi: left <= hi - visible.
        let left_max_whole = (hi as f64 - visible).floor();
        let left_max = (
            left_max_whole.max(lo as f64) as u64,
            (hi as f64 - visible) - left_max_whole,
        );
        let over = i128::from(c.start) > i128::from(left_max.0)
            || (c.start == left_max.0 && c.start_frac > left_max.1);
        if over {
            if (hi as f64 - visible) <= lo as f64 {
                c.start = lo;
                c.start_frac = 0.0;
            } else {
                c.start = left_max.0;
                c.start_frac = left_max.1.clamp(0.0, 0.999_999_999);
            }
        }
        c
    }

    fn clamp(&mut self) {
        self.camera = self.clamp_camera(self.camera);
        self.scroll_px = self.scroll_px.clamp(0.0, self.max_scroll());
    }

    /// Content height beyond the graph, in pixels (what vertical scrolling can reveal).
    pub fn max_scroll(&self) -> f32 {
        if let Some(c) = self.content_px {
            return (c - self.graph_h).max(0.0);
        }
        let first = self.focus.map_or(0, |f| f.bar.row);
        let header = usize::from(self.focus.is_some());
        let content = (self.rows - first.min(self.rows) + header) as f32 * self.row_pitch;
        (content - self.graph_h).max(0.0)
    }

    fn save(&mut self) {
        self.save_camera(self.target_camera());
    }

    fn save_camera(&mut self, camera: Camera) {
        self.history.push(Saved {
            camera,
            zoomed: self.zoomed,
            focus: self.focus,
            scroll_px: self.scroll_px,
        });
        if self.history.len() > 256 {
            self.history.remove(0);
        }
    }

    /// Records `[x0, x1)` as the view Backspace returns to: the state before a change
    /// made directly with [`show_ticks`](Self::show_ticks) (the timeline's overview
    /// brush moves the camera while the pointer drags).
    pub fn remember_ticks(&mut self, x0: u64, x1: u64) {
        let camera = self.clamp_camera(Camera::range(x0, x1.max(x0 + 1), self.graph_w));
        self.save_camera(camera);
    }

    /// The camera the view is heading to (the current one when not animating).
    pub fn target_camera(&self) -> Camera {
        self.anim.map_or(self.camera, |a| a.to)
    }

    /// Number of Backspace steps available.
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    /// The window was resized: keep the visible tick range, stretched to the new width.
    pub fn resize(&mut self, graph_w: f64, graph_h: f32, row_pitch: f32) {
        let graph_w = graph_w.max(1.0);
        let scale = graph_w / self.graph_w;
        self.camera.px_per_tick *= scale;
        if let Some(a) = &mut self.anim {
            a.from.px_per_tick *= scale;
            a.to.px_per_tick *= scale;
        }
        self.graph_w = graph_w;
        self.graph_h = graph_h;
        self.row_pitch = row_pitch;
        self.clamp();
    }

    /// Zooms by `steps` wheel notches (positive: in) around pixel `x` of the graph; the
    /// position under `x` stays under `x`.
    pub fn wheel_zoom(&mut self, x: f64, steps: f64, speed: ZoomSpeed) {
        self.anim = None;
        let factor = speed.base().powf(steps);
        self.zoom_around(x, factor);
    }

    /// Zooms by `factor` around pixel `x` (pinch gestures and keys use this).
    pub fn zoom_around(&mut self, x: f64, factor: f64) {
        self.anim = None;
        if !factor.is_finite() || factor <= 0.0 {
            return;
        }
        let x = x.clamp(0.0, self.graph_w);
        let pos = pos_at(&self.camera, x);
        // Limit the zoom first, then place: the point under `x` stays put at the limits too.
        let (lo, hi) = self.bounds();
        let min_ppt = self.graph_w / (hi - lo) as f64;
        let max_ppt = (self.graph_w / MIN_VISIBLE_TICKS).max(min_ppt);
        let ppt = (self.camera.px_per_tick * factor).clamp(min_ppt, max_ppt);
        let cam = placing(pos, x, ppt);
        self.camera = self.clamp_camera(cam);
    }

    /// Shows `[x0, x1)` at once (no animation), clamped to the bounds: the timeline's
    /// overview brush drives the camera with this.
    pub fn show_ticks(&mut self, x0: u64, x1: u64) {
        self.anim = None;
        self.camera = self.clamp_camera(Camera::range(x0, x1.max(x0 + 1), self.graph_w));
    }

    /// Shows the part `[a, b)` of the bounds (fractions of them) at once, exactly: a
    /// place carried over from another view or a screenshot.
    pub fn show_fraction(&mut self, a: f64, b: f64) {
        let (lo, hi) = self.bounds();
        let span = (hi - lo) as f64;
        if !(a.is_finite() && b.is_finite() && b > a && span > 0.0) {
            return;
        }
        self.anim = None;
        let off = a.clamp(0.0, 1.0) * span;
        let pos = (lo + off.floor() as u64, off - off.floor());
        let ppt = self.graph_w / ((b - a) * span);
        self.camera = self.clamp_camera(placing(pos, 0.0, ppt));
    }

    /// Pans by `dx` pixels: content moves right for positive `dx` (a drag to the right).
    pub fn pan_px(&mut self, dx: f64) {
        self.anim = None;
        let pos = pos_at(&self.camera, -dx);
        self.camera = self.clamp_camera(placing(pos, 0.0, self.camera.px_per_tick));
    }

    /// Scrolls the graph vertically by `dy` pixels (positive: towards the leaves).
    pub fn scroll_by(&mut self, dy: f32) {
        self.scroll_px = (self.scroll_px + dy).clamp(0.0, self.max_scroll());
    }

    /// Zooms so that `bar` fills the width, animated from now (`now_s` in seconds).
    pub fn zoom_to_bar(&mut self, layout: &Layout, bar: BarRef, now_s: f64) {
        let row = &layout.rows[bar.row];
        self.save();
        let to = self.clamp_camera(Camera::range(
            row.x0[bar.index],
            row.x1[bar.index],
            self.graph_w,
        ));
        self.animate_to(to, now_s);
        self.zoomed = Some(bar);
    }

    /// Zooms so that ticks `[x0, x1)` fill the width (a merged run of tiny bars), animated.
    pub fn zoom_to_ticks(&mut self, x0: u64, x1: u64, now_s: f64) {
        self.save();
        let to = self.clamp_camera(Camera::range(x0, x1.max(x0 + 1), self.graph_w));
        self.animate_to(to, now_s);
        self.zoomed = None;
    }

    /// A click on `bar`: zoom to it, or, if it is the bar already zoomed to, back out to
    /// the whole (focused) profile.
    pub fn click(&mut self, layout: &Layout, bar: BarRef, now_s: f64) {
        if self.zoomed == Some(bar) {
            self.zoom_out(now_s);
        } else {
            self.zoom_to_bar(layout, bar, now_s);
        }
    }

    /// Shows the whole profile (or the whole focused node) again, animated.
    pub fn zoom_out(&mut self, now_s: f64) {
        self.save();
        let (lo, hi) = self.bounds();
        let to = self.clamp_camera(Camera::range(lo, hi, self.graph_w));
        self.animate_to(to, now_s);
        self.zoomed = None;
    }

    /// Focuses on `bar`: its ancestors collapse into one line and the view stays inside it.
    pub fn focus_on(&mut self, layout: &Layout, bar: BarRef, now_s: f64) {
        self.save();
        let row = &layout.rows[bar.row];
        self.focus = Some(Focus {
            bar,
            x0: row.x0[bar.index],
            x1: row.x1[bar.index],
        });
        self.zoomed = None;
        self.scroll_px = 0.0;
        let (lo, hi) = self.bounds();
        let to = self.clamp_camera(Camera::range(lo, hi, self.graph_w));
        self.animate_to(to, now_s);
    }

    /// Forgets zoom and focus and shows everything (recorded in the history).
    pub fn reset(&mut self) {
        self.save();
        self.anim = None;
        self.focus = None;
        self.zoomed = None;
        self.scroll_px = 0.0;
        self.camera = self.clamp_camera(Camera::fit(self.total_ticks, self.graph_w));
    }

    /// Backspace: returns to the state before the last zoom, focus or reset. Returns false
    /// when there is nothing to go back to.
    pub fn back(&mut self, now_s: f64) -> bool {
        let Some(s) = self.history.pop() else {
            return false;
        };
        self.focus = s.focus;
        self.zoomed = s.zoomed;
        self.scroll_px = s.scroll_px;
        let to = self.clamp_camera(s.camera);
        self.animate_to(to, now_s);
        true
    }

    fn animate_to(&mut self, to: Camera, now_s: f64) {
        self.anim = Some(Anim {
            from: self.camera,
            to,
            start_s: now_s,
        });
        self.tick(now_s);
    }

    /// Advances the animation to `now_s`; returns true while it is still running.
    pub fn tick(&mut self, now_s: f64) -> bool {
        let Some(a) = self.anim else {
            return false;
        };
        let t = ((now_s - a.start_s) / ANIMATION_S).clamp(0.0, 1.0);
        if t >= 1.0 - 1e-9 {
            self.camera = a.to;
            self.anim = None;
            return false;
        }
        let e = ease_out(t);
        // Interpolate both edges relative to the target's left edge (exact at any depth).
        let from_w = self.graph_w / a.from.px_per_tick;
        let to_w = self.graph_w / a.to.px_per_tick;
        let left = edge_delta(&a.from, &a.to) * (1.0 - e);
        let right = (edge_delta(&a.from, &a.to) + from_w) * (1.0 - e) + to_w * e;
        let width = (right - left).max(MIN_VISIBLE_TICKS * 0.5);
        let ppt = self.graph_w / width;
        self.camera = placing((a.to.start, a.to.start_frac), -left * ppt, ppt);
        true
    }

    /// True while an animation runs (the window keeps drawing frames).
    pub fn is_animating(&self) -> bool {
        self.anim.is_some()
    }

    /// Flips between flame graph and icicle.
    pub fn toggle_orientation(&mut self) {
        self.orientation = match self.orientation {
            Orientation::Flame => Orientation::Icicle,
            Orientation::Icicle => Orientation::Flame,
        };
    }

    /// The content is `content_px` tall (a timeline's bands) in a graph `graph_h` tall:
    /// the scroll stays within it.
    pub fn set_content_height(&mut self, content_px: f32) {
        self.content_px = Some(content_px);
        self.scroll_px = self.scroll_px.clamp(0.0, self.max_scroll());
    }

    /// Next color mode (diff only for differential profiles).
    pub fn cycle_color(&mut self, diff_available: bool) {
        self.color = match self.color {
            ColorMode::Package => ColorMode::Name,
            ColorMode::Name => ColorMode::Value,
            ColorMode::Value if diff_available => ColorMode::Diff,
            ColorMode::Value | ColorMode::Diff | ColorMode::Track | ColorMode::Category => {
                ColorMode::Package
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Limits, load_bytes};
    use crate::layout::flame_layout;

    fn layout(text: &str) -> Layout {
        flame_layout(
            &load_bytes("t", text.as_bytes(), Limits::default())
                .unwrap()
                .tree,
        )
    }

    fn view(l: &Layout) -> ViewState {
        ViewState::new(
            l,
            1000.0,
            400.0,
            18.0,
            Orientation::Icicle,
            ColorMode::Package,
        )
    }

    #[test]
    fn wheel_zoom_keeps_the_point_under_the_cursor() {
        let l = layout("a 600\nb 400\n");
        let mut v = view(&l);
        for (x, steps) in [
            (333.0, 1.0),
            (333.0, 3.0),
            (712.5, 2.0),
            (10.0, -1.0),
            (500.0, 0.5),
        ] {
            let before = pos_at(&v.camera, x);
            v.wheel_zoom(x, steps, ZoomSpeed::Normal);
            let after = pos_at(&v.camera, x);
            let moved_px =
                ((after.0 as f64 - before.0 as f64) + (after.1 - before.1)) * v.camera.px_per_tick;
            assert!(moved_px.abs() < 1e-6, "moved {moved_px} px at x={x}");
        }
        // Ctrl is finer than plain is finer than Shift.
        let mut f = view(&l);
        let mut n = view(&l);
        let mut s = view(&l);
        f.wheel_zoom(500.0, 1.0, ZoomSpeed::Fine);
        n.wheel_zoom(500.0, 1.0, ZoomSpeed::Normal);
        s.wheel_zoom(500.0, 1.0, ZoomSpeed::Fast);
        assert!(
            f.camera.px_per_tick < n.camera.px_per_tick
                && n.camera.px_per_tick < s.camera.px_per_tick
        );
    }

    #[test]
    fn the_view_never_leaves_the_profile() {
        let l = layout("a 600\nb 400\n");
        let mut v = view(&l);
        v.wheel_zoom(500.0, -10.0, ZoomSpeed::Fast);
        assert_eq!(
            v.camera,
            Camera::fit(1000, 1000.0),
            "cannot zoom out past the whole"
        );
        v.pan_px(300.0);
        assert_eq!(
            (v.camera.start, v.camera.start_frac),
            (0, 0.0),
            "cannot pan before tick 0"
        );
        v.wheel_zoom(900.0, 4.0, ZoomSpeed::Normal);
        v.pan_px(-1e9);
        let right = pos_at(&v.camera, v.graph_w);
        assert_eq!(
            right.0 as f64 + right.1,
            1000.0,
            "right edge stops at the end"
        );
    }

    #[test]
    fn deep_zoom_to_one_tick_of_a_trillion_stays_exact() {
        // b is the middle tick of a 2 × 10^12-tick axis.
        let l = layout("pad 999999999990\nt;a 1\nt;b 1\nt;c 1\nz 999999999990\n");
        let mut v = view(&l);
        let b = BarRef { row: 2, index: 1 };
        let x = v.camera.x_of(999_999_999_991) + 0.5 * v.camera.px_per_tick;
        for _ in 0..200 {
            v.wheel_zoom(x, 1.0, ZoomSpeed::Fast);
            // The middle of b stays under the pointer all the way down.
            let pos = pos_at(&v.camera, x);
            assert_eq!(pos.0, 999_999_999_991);
            assert!((pos.1 - 0.5).abs() < 1e-6, "{pos:?}");
        }
        assert_eq!(
            v.camera.px_per_tick, 1000.0,
            "one tick fills the 1000 px graph"
        );
        // Exactly one tick visible, and it is b's.
        let (s, e) = v.camera.visible_ticks(v.graph_w);
        assert!(e - s <= 2, "{s}..{e}");
        assert_eq!(l.rows[2].bar_at(pos_at(&v.camera, 500.0).0), Some(b.index));
        // Click zoom lands exactly on the bar's edges after the animation.
        let mut w = view(&l);
        w.zoom_to_bar(&l, b, 0.0);
        w.tick(1.0);
        assert_eq!(w.camera.start, 999_999_999_991);
        assert_eq!(w.camera.start_frac, 0.0);
        assert_eq!(w.camera.x_of(999_999_999_992), 1000.0);
    }

    #[test]
    fn click_zoom_animates_and_history_goes_back() {
        let l = layout("a;x 300\na;y 100\nb 600\n");
        let mut v = view(&l);
        let fit = v.camera;
        let a = BarRef { row: 1, index: 0 };
        v.click(&l, a, 10.0);
        assert!(v.is_animating());
        v.tick(10.0 + ANIMATION_S / 2.0);
        let mid = v.camera;
        assert!(
            mid.px_per_tick > fit.px_per_tick && mid.px_per_tick < 2.5,
            "{mid:?}"
        );
        assert!(!v.tick(10.0 + ANIMATION_S));
        assert_eq!(v.camera, Camera::range(0, 400, 1000.0));
        assert_eq!(v.zoomed, Some(a));
        let x = BarRef { row: 2, index: 0 };
        v.click(&l, x, 11.0);
        v.tick(12.0);
        assert_eq!(v.camera, Camera::range(0, 300, 1000.0));
        // Clicking the zoomed bar again zooms out.
        v.click(&l, x, 13.0);
        v.tick(14.0);
        assert_eq!(v.camera, fit);
        assert_eq!(v.zoomed, None);
        // Backspace retraces: zoomed on x, then on a, then the start.
        assert!(v.back(15.0));
        v.tick(16.0);
        assert_eq!(v.camera, Camera::range(0, 300, 1000.0));
        assert!(v.back(17.0));
        v.tick(18.0);
        assert_eq!(v.camera, Camera::range(0, 400, 1000.0));
        assert!(v.back(19.0));
        v.tick(20.0);
        assert_eq!(v.camera, fit);
        assert!(!v.back(21.0));
    }

    /// A window set directly (the overview brush) goes back to the one remembered.
    #[test]
    fn brushed_windows_are_remembered() {
        let l = layout("a 600\nb 400\n");
        let mut v = view(&l);
        v.show_ticks(100, 300);
        v.remember_ticks(100, 300);
        v.show_ticks(500, 900);
        assert_eq!(v.camera, Camera::range(500, 900, 1000.0));
        assert!(v.back(0.0));
        v.tick(1.0);
        assert_eq!(v.camera, Camera::range(100, 300, 1000.0));
    }

    #[test]
    fn zooming_into_a_merged_run() {
        let l = layout("a 600\nb 400\n");
        let mut v = view(&l);
        v.zoom_to_ticks(100, 300, 0.0);
        v.tick(1.0);
        assert_eq!(v.camera, Camera::range(100, 300, 1000.0));
        assert_eq!(v.zoomed, None);
        assert!(v.back(2.0));
    }

    #[test]
    fn focus_confines_the_view_and_reset_forgets_it() {
        let l = layout("a;x 300\na;y 100\nb 600\n");
        let mut v = view(&l);
        let a = BarRef { row: 1, index: 0 };
        v.focus_on(&l, a, 0.0);
        v.tick(1.0);
        assert_eq!(v.bounds(), (0, 400));
        assert_eq!(v.camera, Camera::range(0, 400, 1000.0));
        v.wheel_zoom(500.0, -5.0, ZoomSpeed::Fast);
        assert_eq!(
            v.camera,
            Camera::range(0, 400, 1000.0),
            "cannot zoom out of the focus"
        );
        v.pan_px(-1e6);
        let right = pos_at(&v.camera, 1000.0);
        assert_eq!(right.0, 400);
        v.reset();
        assert_eq!(v.focus, None);
        assert_eq!(v.camera, Camera::fit(1000, 1000.0));
        assert!(v.back(2.0), "reset is undoable");
        v.tick(3.0);
        assert!(v.focus.is_some());
    }

    #[test]
    fn vertical_scroll_is_clamped_to_the_content() {
        let deep: String = (0..100)
            .map(|i| format!("f{i}"))
            .collect::<Vec<_>>()
            .join(";");
        let l = layout(&format!("{deep} 1\n"));
        let mut v = view(&l);
        v.scroll_by(-50.0);
        assert_eq!(v.scroll_px, 0.0);
        v.scroll_by(1e9);
        assert_eq!(v.scroll_px, 101.0 * 18.0 - 400.0);
    }

    #[test]
    fn resize_keeps_the_visible_range() {
        let l = layout("a 600\nb 400\n");
        let mut v = view(&l);
        v.wheel_zoom(250.0, 3.0, ZoomSpeed::Normal);
        let (s0, e0) = (pos_at(&v.camera, 0.0), pos_at(&v.camera, 1000.0));
        v.resize(500.0, 300.0, 18.0);
        let (s1, e1) = (pos_at(&v.camera, 0.0), pos_at(&v.camera, 500.0));
        assert_eq!(s0.0, s1.0);
        assert!((s0.1 - s1.1).abs() < 1e-9);
        assert!(((e0.0 as f64 + e0.1) - (e1.0 as f64 + e1.1)).abs() < 1e-6);
    }

    #[test]
    fn color_and_orientation_cycle() {
        let l = layout("a 1\n");
        let mut v = view(&l);
        v.toggle_orientation();
        assert_eq!(v.orientation, Orientation::Flame);
        let mut seen = vec![v.color];
        for _ in 0..3 {
            v.cycle_color(false);
            seen.push(v.color);
        }
        assert_eq!(
            seen,
            [
                ColorMode::Package,
                ColorMode::Name,
                ColorMode::Value,
                ColorMode::Package
            ]
        );
        v.cycle_color(true);
        v.cycle_color(true);
        v.cycle_color(true);
        assert_eq!(v.color, ColorMode::Diff);
    }
}
