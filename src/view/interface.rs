//! The view interface: what every view answers and what the window and export ask of it.
//!
//! A view is one way of looking at a [`Document`]; see [`View`]. The types here are all a
//! view module needs to implement it; [`super::VIEWS`] lists the views the window offers.

use super::draw::{BarSource, Frame, LabelFit, Measure};
use super::input::{Action, Wheel};
use super::shell::Heading;
use crate::color::ColorMode;
use crate::geometry::{Orientation, Style};
use crate::model::Document;

/// The image a view draws: its size in physical pixels and the device pixels per logical
/// pixel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    /// Width, physical pixels.
    pub width_px: u32,
    /// Height, physical pixels.
    pub height_px: u32,
    /// Device pixels per logical pixel.
    pub scale: f32,
}

impl Viewport {
    /// One pixel: what a view draws into before it is given a size.
    pub const UNIT: Viewport = Viewport {
        width_px: 1,
        height_px: 1,
        scale: 1.0,
    };

    /// `width` × `height` logical pixels at `scale` (sizes rounded to whole pixels; a
    /// scale that is not a positive number counts as 1).
    pub fn logical(width: u32, height: u32, scale: f32) -> Viewport {
        let scale = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
        Viewport {
            width_px: ((width as f32) * scale).round().max(1.0) as u32,
            height_px: ((height as f32) * scale).round().max(1.0) as u32,
            scale,
        }
    }

    /// This viewport `factor` times larger in every direction (a screenshot at a higher
    /// resolution than the window).
    pub fn scaled(self, factor: f32) -> Viewport {
        if factor == 1.0 {
            return self;
        }
        Viewport {
            width_px: (self.width_px as f32 * factor).round().max(1.0) as u32,
            height_px: (self.height_px as f32 * factor).round().max(1.0) as u32,
            scale: self.scale * factor,
        }
    }
}

/// Who a frame is drawn for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Purpose {
    /// The window: hover outlines, the cursor line, tooltips.
    Window,
    /// A screenshot of the window, `factor` times its resolution: what the window shows
    /// minus what follows the pointer.
    Screenshot {
        /// Resolution factor.
        factor: f32,
    },
    /// `scorch render`: the title band and the content.
    Export,
}

impl Purpose {
    /// The resolution factor over the view's viewport.
    pub fn factor(self) -> f32 {
        match self {
            Purpose::Screenshot { factor } => factor,
            _ => 1.0,
        }
    }

    /// Whether pointer feedback (hover, cursor line) is drawn.
    pub fn pointer(self) -> bool {
        self == Purpose::Window
    }

    /// Whether it is one of the window's frames (window subtitle, status line).
    pub fn windowed(self) -> bool {
        self != Purpose::Export
    }
}

/// Which view: its name, as the window and the key help show it. Each view module
/// defines its own (`ViewKind::FLAME_GRAPH` in [`super::flame`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ViewKind(pub &'static str);

/// What handling an input asks of the window besides a redraw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Reply {
    /// The view ignored the input.
    #[default]
    Ignored,
    /// The view changed (redraw).
    Done,
    /// Copy this text to the clipboard.
    Copy(String),
    /// Show this message on the status line.
    Say(String),
    /// Switch to the view of this kind (its memo says what to show).
    Open(ViewKind),
    /// Apply this transform to the document (the window keeps the stack and undoes it).
    Transform(crate::model::transform::Transform),
}

/// What a view can carry over to another view of the same or a re-loaded document (a
/// preview replaced by the whole file keeps the user's place).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ViewMemo {
    /// Colors.
    pub color: Option<ColorMode>,
    /// Flame or icicle.
    pub orientation: Option<Orientation>,
    /// The focused call path (frame names from the root).
    pub focus_path: Option<Vec<String>>,
    /// The click-zoomed call path, when the camera still shows exactly that bar.
    pub zoom_path: Option<Vec<String>>,
    /// The visible part of the view's root as fractions `(left, right)`; `None` when all
    /// of it is in view.
    pub fraction: Option<(f64, f64)>,
    /// The visible time window in absolute nanoseconds (a timeline's).
    pub time_window: Option<(f64, f64)>,
    /// Vertical scroll, physical pixels.
    pub scroll_px: f32,
    /// Which part of long names labels keep.
    pub fit: Option<LabelFit>,
    /// The function the user picked (the table's selected row, the flame graph's zoomed
    /// bar): a sandwich opens on it.
    pub function: Option<String>,
}

/// One way of looking at a document.
///
/// A view owns everything about how its document is shown: layout and level of detail,
/// camera, scroll and zoom history ([`super::state::ViewState`], the one source of truth
/// for them), colors, search result, hover and selection. The window calls the input
/// methods and redraws; [`super::compose`] asks for the heading and the draw data.
///
/// Required: what the view is, its size, its title band and its content. Everything
/// else has a default that does nothing, so a simple view implements only what it uses.
pub trait View: AsAny + Send {
    /// Which view this is.
    fn kind(&self) -> ViewKind;
    /// The document shown.
    fn document(&self) -> Document;
    /// The image size; a view has none until the window or export gives it one.
    fn viewport(&self) -> Option<Viewport>;
    /// The window (or image) is now `vp`: lay the geometry out again, keeping the visible
    /// range.
    fn set_viewport(&mut self, vp: Viewport);
    /// Logical sizes (fonts, title band, status line).
    fn style(&self) -> Style;
    /// Title, subtitle and legend of the title band.
    fn heading(&self, purpose: Purpose) -> Heading;
    /// Fills `frame` with the content (the title band and overlays are the shell's).
    fn draw<'a>(&'a self, frame: &mut Frame<'a>, m: &mut dyn Measure, purpose: Purpose);

    /// Top of the content area (the F12 box sits under it).
    fn content_top(&self) -> f32 {
        (self.style().title_height * self.viewport().map_or(1.0, |v| v.scale)).round()
    }
    /// Advances animations to `now_s`; true while one runs.
    fn tick(&mut self, _now_s: f64) -> bool {
        false
    }
    /// The pointer is at `at` (`None`: it left): updates the hover. True when that
    /// changes what is drawn.
    fn pointer(&mut self, _at: Option<(f32, f32)>) -> bool {
        false
    }
    /// The left button went down at `(x, y)`.
    fn press(&mut self, _x: f32, _y: f32) {}
    /// The pointer moved by `(dx, dy)` to `(x, y)` with the button held, past the click
    /// threshold.
    fn drag(&mut self, _x: f32, _y: f32, _dx: f32, _dy: f32) {}
    /// The left button went down with Shift held (a range selection where the view has
    /// one); by default a plain press.
    fn press_shifted(&mut self, x: f32, y: f32) {
        self.press(x, y);
    }
    /// The button came up at `(x, y)`; `click` when it did not move past the threshold.
    fn release(&mut self, _x: f32, _y: f32, _click: bool, _now_s: f64) {}
    /// A second click at `(x, y)` soon after the first, at the same place (after the
    /// second click's [`release`](Self::release)).
    fn double_click(&mut self, _x: f32, _y: f32, _now_s: f64) -> Reply {
        Reply::Ignored
    }
    /// A wheel movement with the pointer at `at`.
    fn wheel(&mut self, _at: Option<(f32, f32)>, _w: Wheel) {}
    /// A pinch: zoom by `factor` around the pointer.
    fn pinch(&mut self, _at: Option<(f32, f32)>, _factor: f64) {}
    /// A key's action.
    fn act(&mut self, _action: Action, _now_s: f64) -> Reply {
        Reply::Ignored
    }
    /// A right click: the menu items for what is under the pointer (none: no menu).
    fn open_menu(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Item `item` of the menu [`open_menu`](Self::open_menu) gave was chosen.
    fn menu_action(&mut self, _item: usize, _now_s: f64) -> Reply {
        Reply::Ignored
    }

    /// Runs `query` (empty: clears the search).
    fn search(&mut self, _query: &str) {}
    /// The result for the status line, while a search is active.
    fn search_summary(&self) -> Option<String> {
        None
    }
    /// Goes to the next (or previous) match.
    fn next_match(&mut self, _backwards: bool, _now_s: f64) {}

    /// The status line's left side: where the view is, or what can be done.
    fn status_hint(&self) -> String {
        String::new()
    }
    /// Tooltip lines for what is under the pointer (none: no tooltip).
    fn tooltip(&self) -> Vec<String> {
        Vec::new()
    }
    /// A note on what the numbers cover (a preview's), shown in the subtitle.
    fn set_note(&mut self, _note: Option<&'static str>) {}
    /// Draw labels in bars (tests that sample bar colors turn them off).
    fn set_labels(&mut self, _on: bool) {}

    /// The bars this view draws from, to upload once (and again when the key changes).
    fn bar_sources(&self) -> Vec<BarSource<'_>> {
        Vec::new()
    }
    /// Rows shown and rows in all, for an export's report.
    fn rows_shown(&self) -> (usize, usize) {
        (0, 0)
    }

    /// What to carry over to a replacement view.
    fn memo(&self) -> ViewMemo {
        ViewMemo::default()
    }
    /// Takes over what `memo` carries from the view this one replaces.
    fn restore(&mut self, _memo: &ViewMemo, _now_s: f64) {}
    /// The colors' name on the toolbar's button (`None`: no colors to choose).
    fn color_label(&self) -> Option<&'static str> {
        self.memo().color.map(|c| c.name())
    }
    /// The time range of samples the view selects, in the samples' relative nanoseconds
    /// (`Some(None)`: all of them), for a view that chooses one (a timeline of samples);
    /// `None`: the view shows what its document selects. Switching views carries it: the
    /// aggregated views then count only the samples inside it.
    fn sample_range(&self) -> Option<Option<(u64, u64)>> {
        None
    }
}

/// A view as [`std::any::Any`], for callers that know its type (tests, benchmarks; see
/// `<dyn View>::downcast_ref`).
pub trait AsAny {
    /// `self` as `Any`.
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<T: std::any::Any> AsAny for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl dyn View {
    /// The view as a `T`, when it is one.
    pub fn downcast_ref<T: View + 'static>(&self) -> Option<&T> {
        AsAny::as_any(self).downcast_ref()
    }
}

/// How a view starts.
#[derive(Clone, Debug, Default)]
pub struct ViewOptions {
    /// Flame graph or icicle.
    pub orientation: Orientation,
    /// Colors (`None`: the document's usual ones).
    pub color: Option<ColorMode>,
    /// Title (`None`: the file name).
    pub title: Option<String>,
    /// Logical sizes (the window's have a status line).
    pub style: Style,
    /// Which part of a long name a cut label keeps.
    pub fit: LabelFit,
    /// The view a document opens in, when that view shows it (`None`: the first that
    /// does; see [`super::default_view`]).
    pub kind: Option<ViewKind>,
}

/// [`ViewEntry::shows`] of the views that show call trees: profiles, and traces made
/// from samples (their samples aggregated).
pub fn shows_profiles(doc: &Document) -> bool {
    match doc {
        Document::Profile(_) => true,
        Document::Trace(t) => t.sampled.is_some(),
    }
}

/// The call tree a view of call trees opens on (see [`shows_profiles`]).
pub fn profile_of(doc: &Document) -> std::sync::Arc<crate::model::Profile> {
    doc.as_profile()
        .expect("views of call trees open on documents that have one")
}

/// A view the window can switch to: its kind, which documents it shows, how it opens.
#[derive(Clone, Copy)]
pub struct ViewEntry {
    /// Its name.
    pub kind: ViewKind,
    /// Whether it can show a document.
    pub shows: fn(&Document) -> bool,
    /// Opens it on a document.
    pub open: fn(&Document, &ViewOptions) -> Box<dyn View>,
}

impl std::fmt::Debug for ViewEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ViewEntry").field(&self.kind).finish()
    }
}
