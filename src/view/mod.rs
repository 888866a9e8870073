//! Views: ways of looking at a loaded [`Document`], behind one interface.
//!
//! A [`View`] owns everything about how a document is shown: its layout and level of
//! detail, its camera, scroll and zoom history ([`state::ViewState`], the one source of
//! truth for them), its colors, search result, hover and selection. It answers the window
//! (pointer, wheel, keys as [`input::Action`]s, menu, search), says what to write
//! (title, subtitle, status hint, tooltip) and fills a [`draw::Frame`] with what to draw.
//! The window holds the document and the active view; [`compose`] wraps a view's content
//! in the frame shell ([`shell`]) for the window, its screenshots and `scorch render`
//! alike, so every picture of a view is drawn by the same code.
//!
//! Views today: [`flame::FlameView`] (flame graph and icicle of a call tree) and
//! [`timeline::TimelineView`] (a trace's spans on a time axis). [`export`] sets either up
//! for one image from command-line options.

pub mod draw;
pub mod export;
pub mod flame;
pub mod input;
pub mod open;
pub mod search;
pub mod shell;
pub mod state;
pub mod timeline;

use crate::color::ColorMode;
use crate::geometry::{Orientation, RectPx, Style};
use crate::model::Document;
use draw::{BarSource, Frame, Measure};
use input::{Action, Wheel};
pub use open::default_view;
use shell::{Chrome, Heading};

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

/// Which view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewKind {
    /// A call tree as a flame graph or icicle.
    FlameGraph,
    /// Spans on a time axis.
    Timeline,
}

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
}

/// One way of looking at a document. See the module documentation.
pub trait View: Send {
    /// Which view this is.
    fn kind(&self) -> ViewKind;
    /// The view itself, for callers that know its type (tests, benchmarks).
    fn as_any(&self) -> &dyn std::any::Any;
    /// The document shown.
    fn document(&self) -> Document;
    /// The image size; a view has none until the window or export gives it one.
    fn viewport(&self) -> Option<Viewport>;
    /// The window (or image) is now `vp`: lay the geometry out again, keeping the visible
    /// range.
    fn set_viewport(&mut self, vp: Viewport);
    /// Logical sizes (fonts, title band, status line).
    fn style(&self) -> Style;
    /// Top of the content area (the F12 box sits under it).
    fn content_top(&self) -> f32;
    /// Advances animations to `now_s`; true while one runs.
    fn tick(&mut self, now_s: f64) -> bool;

    /// The pointer is at `at` (`None`: it left): updates the hover. True when that
    /// changes what is drawn.
    fn pointer(&mut self, at: Option<(f32, f32)>) -> bool;
    /// The left button went down at `(x, y)`.
    fn press(&mut self, x: f32, y: f32);
    /// The pointer moved by `(dx, dy)` to `(x, y)` with the button held, past the click
    /// threshold.
    fn drag(&mut self, x: f32, y: f32, dx: f32, dy: f32);
    /// The button came up at `(x, y)`; `click` when it did not move past the threshold.
    fn release(&mut self, x: f32, y: f32, click: bool, now_s: f64);
    /// A wheel movement with the pointer at `at`.
    fn wheel(&mut self, at: Option<(f32, f32)>, w: Wheel);
    /// A pinch: zoom by `factor` around the pointer.
    fn pinch(&mut self, at: Option<(f32, f32)>, factor: f64);
    /// A key's action.
    fn act(&mut self, action: Action, now_s: f64) -> Reply;
    /// A right click: the menu items for what is under the pointer (none: no menu).
    fn open_menu(&mut self) -> Vec<String> {
        Vec::new()
    }
    /// Item `item` of the menu [`open_menu`](Self::open_menu) gave was chosen.
    fn menu_action(&mut self, _item: usize, _now_s: f64) -> Reply {
        Reply::Ignored
    }

    /// Runs `query` (empty: clears the search).
    fn search(&mut self, query: &str);
    /// The result for the status line, while a search is active.
    fn search_summary(&self) -> Option<String>;
    /// Goes to the next (or previous) match.
    fn next_match(&mut self, backwards: bool, now_s: f64);

    /// Title, subtitle and legend of the title band.
    fn heading(&self, purpose: Purpose) -> Heading;
    /// The status line's left side: where the view is, or what can be done.
    fn status_hint(&self) -> String;
    /// Tooltip lines for what is under the pointer (none: no tooltip).
    fn tooltip(&self) -> Vec<String>;
    /// A note on what the numbers cover (a preview's), shown in the subtitle.
    fn set_note(&mut self, note: Option<&'static str>);
    /// Draw labels in bars (tests that sample bar colors turn them off).
    fn set_labels(&mut self, on: bool);

    /// The bars this view draws from, to upload once (and again when the key changes).
    fn bar_sources(&self) -> Vec<BarSource<'_>>;
    /// Fills `frame` with the content (the title band and overlays are the shell's).
    fn draw<'a>(&'a self, frame: &mut Frame<'a>, m: &mut dyn Measure, purpose: Purpose);
    /// Rows shown and rows in all, for an export's report.
    fn rows_shown(&self) -> (usize, usize);

    /// What to carry over to a replacement view.
    fn memo(&self) -> ViewMemo;
    /// Takes over what `memo` carries from the view this one replaces.
    fn restore(&mut self, memo: &ViewMemo, now_s: f64);
}

/// The whole frame of `view` for `purpose`: the title band, the view's content, and for
/// a window the `chrome` overlays (status line, tooltip, menu, frame times).
pub fn compose<'a>(
    view: &'a dyn View,
    purpose: Purpose,
    chrome: Option<&Chrome>,
    m: &mut dyn Measure,
) -> Frame<'a> {
    let vp = view
        .viewport()
        .unwrap_or(Viewport {
            width_px: 1,
            height_px: 1,
            scale: 1.0,
        })
        .scaled(purpose.factor());
    let style = view.style();
    let mut frame = Frame::new(vp.width_px, vp.height_px, vp.scale);
    let band = RectPx {
        x: 0.0,
        y: 0.0,
        w: vp.width_px as f32,
        h: (style.title_height * vp.scale).round(),
    };
    shell::title_band(&mut frame, band, &style, &view.heading(purpose), m);
    view.draw(&mut frame, m, purpose);
    if let Some(c) = chrome {
        let status = shell::status_rect(
            vp.width_px as f32,
            vp.height_px as f32,
            vp.scale,
            style.status_height,
        );
        shell::overlays(&mut frame, status, view.content_top(), c, m);
    }
    frame
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
}
