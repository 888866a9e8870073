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

pub mod both;
pub mod draw;
pub mod export;
pub mod flame;
pub mod input;
pub mod interface;
pub mod labels;
pub mod sandwich;
pub mod search;
pub mod shell;
pub mod shot;
pub mod sides;
pub mod state;
pub mod table;
pub mod timeline;
pub mod toolbar;
pub mod top;

pub use interface::{Purpose, Reply, View, ViewEntry, ViewKind, ViewMemo, ViewOptions, Viewport};

use crate::geometry::{self, RectPx};
use crate::model::Document;
use draw::{Frame, Measure};
use shell::Chrome;

/// The views the window offers, in the order of their keys (`1`, `2`, …, counting only
/// those that show the document). The first that shows a document is the one it opens in.
pub static VIEWS: &[ViewEntry] = &[
    flame::ENTRY,
    flame::ICICLE_ENTRY,
    flame::LEFT_HEAVY_ENTRY,
    table::ENTRY,
    both::ENTRY,
    sandwich::ENTRY,
    sides::ENTRY,
    timeline::ENTRY,
];

/// The views of `views` that show `doc`.
pub fn views_for<'v>(views: &'v [ViewEntry], doc: &Document) -> Vec<&'v ViewEntry> {
    views.iter().filter(|e| (e.shows)(doc)).collect()
}

/// A view of `doc` as it opens: the one `opts.kind` asks for if it shows `doc`, else the
/// first of [`VIEWS`] that does (a call tree as a flame graph, a trace as a timeline).
pub fn default_view(doc: &Document, opts: &ViewOptions) -> Box<dyn View> {
    let shown = views_for(VIEWS, doc);
    // A trace opens as a timeline even when its samples could be aggregated.
    let natural =
        |e: &&&ViewEntry| matches!(doc, Document::Trace(_)) == (e.kind == ViewKind::TIMELINE);
    let entry = shown
        .iter()
        .find(|e| Some(e.kind) == opts.kind)
        .or(shown.iter().find(natural))
        .or(shown.first())
        .expect("some view shows every kind of document");
    (entry.open)(doc, opts)
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
        .unwrap_or(Viewport::UNIT)
        .scaled(purpose.factor());
    let style = view.style();
    let mut frame = Frame::new(vp.width_px, vp.height_px, vp.scale);
    let (band, bar) = title_and_toolbar(vp, &style);
    shell::title_band(&mut frame, band, &style, &view.heading(purpose), m);
    view.draw(&mut frame, m, purpose);
    if let Some(c) = chrome {
        if let Some(tb) = &c.toolbar
            && bar.h > 0.0
        {
            toolbar::draw(&mut frame, bar, tb);
        }
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

/// The title band and, under it, the toolbar (zero height without one) of a `vp` image in
/// `style`'s sizes: together they are `style.title_height` tall.
pub fn title_and_toolbar(vp: Viewport, style: &geometry::Style) -> (RectPx, RectPx) {
    let all = (style.title_height * vp.scale).round();
    let bar_h = (style.toolbar_height * vp.scale).round().min(all);
    let w = vp.width_px as f32;
    (
        RectPx {
            x: 0.0,
            y: 0.0,
            w,
            h: all - bar_h,
        },
        RectPx {
            x: 0.0,
            y: all - bar_h,
            w,
            h: bar_h,
        },
    )
}
