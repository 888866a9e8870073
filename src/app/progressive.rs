//! Progressive loading: a preview on screen within about a second, then the whole input.
//!
//! The loader thread ([`load`]) first asks [`import::preview`] for a quick partial import
//! of a big input (slices sampled across a folded or perf file, the head of a Chrome
//! trace, a gzip prefix), lays it out and uploads it like any document, and sends it as a
//! [`LoadStep::Preview`]; then it loads the whole input as before and sends
//! [`LoadStep::Full`]. The steps arrive in that order, each at most once; a preview that
//! fails is skipped silently (the full load reports the input's problems).
//!
//! The window shows the preview as an ordinary document (zoom, hover, search, screenshot
//! all work), with the status line turned amber and saying what the preview is made of
//! and how far the full load is. When the full document arrives it replaces the preview
//! ([`App::show_full_profile`], [`App::show_full_trace`]), keeping what the user did:
//! - a view the user has not touched starts fitted to the whole document, as any load;
//! - orientation and colors are kept;
//! - a focused or click-zoomed flame-graph bar maps to the bar of the same call path
//!   (frame names from the root) in the full tree; a free wheel zoom or pan keeps its
//!   range as fractions of the view's root (the whole profile or the focused node): the
//!   preview's proportions approximate the full profile's, so about the same frames stay
//!   in view. A timeline keeps its time range (absolute time: the preview's and the
//!   full trace's origins may differ);
//! - vertical scroll is kept; the search runs again on the full document (the search
//!   field stays open); hover, menu and timeline selection are dropped (they name bars
//!   of the preview); the Backspace history starts afresh.
//!
//! While a load runs, the window redraws ten times a second for the progress display, but
//! over a preview only every two seconds (and on input): on llvmpipe a frame of a 150 k-bar
//! preview costs 40-50 ms of CPU (more on a busy machine), so four frames a second took
//! a fifth of a core from the loader and made the full load 10-60 % slower on the 2-core
//! machine. The window title carries the progress too.

use super::{App, Doc, Loaded, SceneMaker, Source, timeline::TraceDoc};
use crate::export::TraceView;
use crate::import::preview::{PreviewExtent, PreviewOptions};
use crate::import::{self, Progress};
use crate::layout::Layout;
use crate::model::Profile;
use crate::pick::BarRef;
use crate::render::Scene;
use crate::view::state::{ANIMATION_S, ViewState};
use std::path::PathBuf;
use std::time::Instant;

/// What a loader reports, in this order: at most one preview, then the whole input.
pub enum LoadStep {
    /// A partial document to show until the full one arrives.
    Preview(Loaded, PreviewExtent),
    /// The whole input, or why it could not be loaded.
    Full(Result<Loaded, String>),
}

/// Loads `source`, sending a preview first when `preview` allows one and the input has
/// one, then the full result. Scenes are built here (off the UI thread) once `maker`
/// holds the device.
pub fn load(
    source: &Source,
    progress: &Progress,
    maker: &SceneMaker,
    preview: Option<&PreviewOptions>,
    send: &mut dyn FnMut(LoadStep),
) {
    let started = Instant::now();
    let result = match source {
        Source::Path(p) => import::load_any_path_progressive(p, Some(progress), preview, |pv| {
            let t = Instant::now();
            match super::prepare(pv.imported, maker.get()) {
                Ok(loaded) => {
                    eprintln!(
                        "scorch: {} laid out in {:.0} ms",
                        pv.extent.describe(),
                        t.elapsed().as_secs_f64() * 1000.0
                    );
                    send(LoadStep::Preview(loaded, pv.extent));
                }
                Err(e) => eprintln!("scorch: no preview: {e}"),
            }
        }),
        Source::Demo => import::load_bytes_with(
            "demo.folded",
            super::DEMO_PROFILE,
            import::Limits::default(),
            Some(progress),
        )
        .map(|p| import::Imported::Profile(Box::new(p))),
    };
    if result.is_ok() {
        eprintln!(
            "scorch: whole input read and parsed {:.0} ms after the load started",
            started.elapsed().as_secs_f64() * 1000.0
        );
    }
    // With the device up, tiers and uploads happen here, not on the UI thread (seconds
    // for millions of bars).
    let result = result
        .map_err(|e| e.to_string())
        .and_then(|imported| super::prepare(imported, maker.get()));
    send(LoadStep::Full(result));
}

/// A preview on screen.
pub(super) struct ShownPreview {
    /// The load it belongs to.
    pub(super) id: u64,
    /// What it was made of.
    pub(super) extent: PreviewExtent,
    /// Set when the full load failed: the preview is all there is.
    pub(super) failed: bool,
}

/// The view root's tick range and the camera's visible range in it, as fractions
/// `(left, right)` of the root; `None` when the whole root is in view.
fn visible_fraction(v: &ViewState) -> Option<(f64, f64)> {
    let cam = v.target_camera();
    let (lo, hi) = v.bounds();
    let span = (hi - lo) as f64;
    let left = (cam.start as f64 + cam.start_frac - lo as f64) / span;
    let right = left + v.graph_w / cam.px_per_tick / span;
    let whole = left <= 1e-9 && right >= 1.0 - 1e-9;
    (!whole).then_some((left.clamp(0.0, 1.0), right.clamp(0.0, 1.0)))
}

/// The bar in `layout` (of `tree`) showing the call path of `bar` in `old` (of
/// `old_tree`): the same frame names from the root; `None` when the path is not in the
/// new tree.
fn same_path_bar(old: &Doc, bar: BarRef, profile: &Profile, layout: &Layout) -> Option<BarRef> {
    let op = &old.profile;
    let node = *old.layout.rows.get(bar.row)?.node.get(bar.index)?;
    let path = op.tree.path(node);
    let mut n = 0;
    for &o in &path {
        let name = op.names.get(op.tree.name(o));
        n = *profile
            .tree
            .children(n)
            .iter()
            .find(|&&c| profile.names.get(profile.tree.name(c)) == name)?;
    }
    // A flame layout puts a node of depth d in row d.
    let row = layout.rows.get(path.len())?;
    let index = row.node.iter().position(|&x| x == n)?;
    Some(BarRef {
        row: path.len(),
        index,
    })
}

/// Carries the user's view of the preview `old` over to `view`, the new view of the
/// full `profile` and `layout` (the rules are in the module documentation).
pub(super) fn carry_flame_view(
    old: &Doc,
    profile: &Profile,
    layout: &Layout,
    view: &mut ViewState,
    now_s: f64,
) {
    let ov = &old.view;
    view.orientation = ov.orientation;
    view.color = ov.color;
    let frac = visible_fraction(ov);
    if ov.focus.is_none() && ov.zoomed.is_none() && frac.is_none() && ov.scroll_px == 0.0 {
        return;
    }
    if let Some(f) = ov.focus
        && let Some(b) = same_path_bar(old, f.bar, profile, layout)
    {
        view.focus_on(layout, b, now_s);
    }
    // A click zoom still in place (the camera shows that bar) maps to the same bar;
    // anything else maps by fraction.
    let zoomed = ov.zoomed.filter(|z| {
        let r = &old.layout.rows[z.row];
        let (lo, hi) = ov.bounds();
        let span = (hi - lo) as f64;
        let bar = (
            (r.x0[z.index] - lo) as f64 / span,
            (r.x1[z.index] - lo) as f64 / span,
        );
        frac.is_some_and(|(a, b)| (a - bar.0).abs() < 1e-6 && (b - bar.1).abs() < 1e-6)
    });
    match zoomed.and_then(|z| same_path_bar(old, z, profile, layout)) {
        Some(b) => view.zoom_to_bar(layout, b, now_s),
        None => {
            if let Some((a, b)) = visible_fraction(ov) {
                let (lo, hi) = view.bounds();
                let span = (hi - lo) as f64;
                let x0 = lo + (a * span) as u64;
                let x1 = lo + (b * span).ceil() as u64;
                view.show_ticks(x0, x1.max(x0 + 1));
            }
        }
    }
    // Land at once: the user is looking at this place already.
    view.tick(now_s + 2.0 * ANIMATION_S);
    view.scroll_by(ov.scroll_px);
}

/// Carries the user's view of the preview trace `old` over to `new` (the rules are in the
/// module documentation).
pub(super) fn carry_trace_view(old: &TraceDoc, new: &mut TraceDoc) {
    new.color = old.color;
    new.view.color = old.view.color;
    new.scroll_px = old.scroll_px;
    let ov = &old.view;
    if visible_fraction(ov).is_none() {
        return;
    }
    let cam = ov.target_camera();
    let left = cam.start as f64 + cam.start_frac;
    let right = left + ov.graph_w / cam.px_per_tick;
    // Both in the full trace's ticks: ticks are nanoseconds after each trace's origin.
    let shift = old.trace.spans.origin_ns as f64 - new.trace.spans.origin_ns as f64;
    let x0 = (left + shift).max(0.0) as u64;
    let x1 = (right + shift).max(0.0).ceil() as u64;
    new.view.show_ticks(x0, x1.max(x0 + 1));
}

/// How far the full load is, for the preview's status: reading (with a percentage when
/// the importer reports one), or laying out and uploading (which reports none).
fn full_load_stage(l: &super::Loading) -> String {
    match l.progress.fraction() {
        Some(f) if f >= 1.0 => "whole file read, laying it out".to_string(),
        // Floored: "100 %" only once the reading is done.
        Some(f) => format!("loading the whole file {:.0} %", (f * 100.0).floor()),
        None => "loading the whole file…".to_string(),
    }
}

impl App {
    /// Shows a preview that arrived for load `id`.
    pub(super) fn show_preview(&mut self, id: u64, loaded: Loaded, extent: PreviewExtent) {
        let Some(loading) = self.loading.as_ref().filter(|l| l.id == id) else {
            return;
        };
        let name = loading.name.clone();
        self.first_draw_note = Some(("preview", loading.started));
        eprintln!(
            "scorch: {} shown {:.0} ms after the load started",
            extent.describe(),
            loading.started.elapsed().as_secs_f64() * 1000.0
        );
        match loaded {
            Loaded::Profile(b) => {
                let (profile, layout, scene) = *b;
                let path = PathBuf::from(&profile.meta.source);
                self.set_doc(profile, layout, scene, Some(path), name);
            }
            Loaded::Trace(b) => {
                let (trace, scene) = *b;
                let path = PathBuf::from(&trace.source);
                self.set_trace(trace, scene, Some(path), name);
            }
        }
        self.preview = Some(ShownPreview {
            id,
            extent,
            failed: false,
        });
        self.redraw();
    }

    /// The preview shown for load `id`, taken (the full document replaces it).
    fn take_preview(&mut self, id: u64) -> bool {
        self.preview.take_if(|p| p.id == id).is_some()
    }

    /// Shows the full profile of load `id`, in place of its preview if one is shown.
    pub(super) fn show_full_profile(
        &mut self,
        id: u64,
        profile: Profile,
        layout: Layout,
        scene: Option<Scene>,
        path: Option<PathBuf>,
        name: String,
    ) {
        if !self.take_preview(id) {
            self.set_doc(profile, layout, scene, path, name);
            return;
        }
        self.plain_title(&name);
        let old = self.doc.take();
        let (search_open, search_text) = (self.search_open, std::mem::take(&mut self.search_text));
        self.set_doc(profile, layout, scene, path, name);
        let now = self.now_s();
        if let (Some(old), Some(d)) = (&old, &mut self.doc) {
            carry_flame_view(old, &d.profile, &d.layout, &mut d.view, now);
        }
        drop(old);
        self.search_open = search_open;
        self.search_text = search_text;
        if !self.search_text.is_empty() {
            self.run_search();
        }
        self.update_hover();
    }

    /// Shows the full trace of load `id`, in place of its preview if one is shown.
    pub(super) fn show_full_trace(
        &mut self,
        id: u64,
        trace: TraceView,
        scene: Option<crate::render::timeline::TimelineScene>,
        path: Option<PathBuf>,
        name: String,
    ) {
        if !self.take_preview(id) {
            self.set_trace(trace, scene, path, name);
            return;
        }
        self.plain_title(&name);
        let old = self.tdoc.take();
        let (search_open, search_text) = (self.search_open, std::mem::take(&mut self.search_text));
        self.set_trace(trace, scene, path, name);
        if let (Some(old), Some(d)) = (&old, &mut self.tdoc) {
            carry_trace_view(old, d);
        }
        drop(old);
        self.search_open = search_open;
        self.search_text = search_text;
        if !self.search_text.is_empty() {
            self.run_search();
        }
        self.update_hover();
    }

    fn plain_title(&self, name: &str) {
        if let Some(w) = &self.window {
            w.set_title(&format!("scorch — {name}"));
        }
    }

    /// The full load of `id` failed: with its preview on screen, keep showing it and say
    /// so; returns false when no preview is shown (the caller shows the error).
    pub(super) fn full_load_failed(&mut self, id: u64, error: &str, name: &str) -> bool {
        match &mut self.preview {
            Some(p) if p.id == id => {
                p.failed = true;
                if let Some(w) = &self.window {
                    w.set_title(&format!("scorch — {name} (preview only)"));
                }
                self.say(format!(
                    "could not load the whole file, showing the preview: {error}"
                ));
                true
            }
            _ => false,
        }
    }

    /// A new load starts: a preview of an earlier load goes (it would otherwise stay on
    /// screen looking complete).
    pub(super) fn drop_preview(&mut self) {
        if self.preview.take().is_some() {
            self.doc = None;
            self.tdoc = None;
            if let Some(gfx) = &mut self.gfx {
                gfx.scene = None;
                gfx.tscene = None;
            }
        }
    }

    /// What the status line says while a preview is shown: what it is made of and how far
    /// the full load is. `short` for when the status line carries something else too.
    pub(super) fn preview_status(&self, short: bool) -> Option<String> {
        let p = self.preview.as_ref()?;
        if p.failed {
            return Some(if short {
                "PREVIEW only".to_string()
            } else {
                format!(
                    "PREVIEW only ({}): the whole file failed to load",
                    p.extent.describe()
                )
            });
        }
        let l = self.loading.as_ref()?;
        let stage = full_load_stage(l);
        // Whole seconds: the display is refreshed every two seconds.
        let secs = l.started.elapsed().as_secs_f64();
        Some(if short {
            format!("PREVIEW · {stage} ({secs:.0} s)")
        } else {
            format!(
                "PREVIEW {} · {stage} ({secs:.0} s)",
                p.extent
                    .describe()
                    .trim_start_matches("preview")
                    .trim_start_matches(':')
                    .trim_start()
            )
        })
    }

    /// Keeps the window title's progress current while a preview is shown (the title
    /// changes without drawing a frame); the plain title comes back with the full document.
    pub(super) fn show_preview_progress(&self) {
        let (Some(w), Some(l)) = (&self.window, &self.loading) else {
            return;
        };
        if self.preview.as_ref().is_some_and(|p| p.id == l.id) {
            w.set_title(&format!(
                "scorch — {} (preview; {})",
                l.name,
                full_load_stage(l)
            ));
        }
    }

    /// The title band's note on what a preview's numbers cover.
    pub(super) fn preview_counts_note(&self) -> Option<&'static str> {
        let p = self.preview.as_ref()?;
        Some(if self.tdoc.is_some() {
            "preview: the first part of the trace only"
        } else if p.extent.is_sampled() {
            "preview: counts of the sampled lines only, shares approximate the whole file"
        } else {
            "preview: counts of the file's first part only"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::color::ColorMode;
    use crate::layout::flame_layout;
    use crate::view::Orientation;
    use crate::view::state::ZoomSpeed;
    use std::sync::Arc;

    fn folded(lines: usize) -> String {
        let mut s = String::new();
        for i in 0..lines {
            s.push_str(&format!("main;f{};g{} 1\n", i % 7, i % 11));
        }
        s
    }

    fn small_opts() -> PreviewOptions {
        PreviewOptions {
            min_bytes: 10_000,
            min_gzip_bytes: 10_000,
            slices: 4,
            max_sampled_bytes: 1 << 20,
            head_bytes: 64 << 10,
        }
    }

    fn run(source: &Source, preview: Option<&PreviewOptions>) -> Vec<LoadStep> {
        let maker: SceneMaker = Arc::new(std::sync::OnceLock::new());
        let mut steps = Vec::new();
        load(source, &Progress::default(), &maker, preview, &mut |s| {
            steps.push(s)
        });
        steps
    }

    fn total(l: &Loaded) -> u64 {
        match l {
            Loaded::Profile(b) => b.0.tree.grand_total(),
            Loaded::Trace(b) => b.0.spans.len() as u64,
        }
    }

    #[test]
    fn loader_sends_the_preview_then_the_whole_file() {
        let dir = std::env::temp_dir().join(format!("scorch-progressive-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.folded");
        std::fs::write(&big, folded(20_000)).unwrap();
        let steps = run(&Source::Path(big.clone()), Some(&small_opts()));
        match &steps[..] {
            [
                LoadStep::Preview(p, PreviewExtent::Sampled { .. }),
                LoadStep::Full(Ok(f)),
            ] => {
                assert!(total(p) > 0 && total(p) < total(f));
                assert_eq!(total(f), 20_000);
            }
            _ => panic!("expected a preview then the full profile"),
        }
        // Without previews, and for small files: the full load only.
        for (path, opts) in [
            (big.clone(), None),
            (dir.join("small.folded"), Some(small_opts())),
        ] {
            if !path.exists() {
                std::fs::write(&path, "a;b 1\n").unwrap();
            }
            let steps = run(&Source::Path(path), opts.as_ref());
            assert!(matches!(&steps[..], [LoadStep::Full(Ok(_))]));
        }
        // A file that cannot be read: the error, no preview.
        let steps = run(&Source::Path(dir.join("missing")), Some(&small_opts()));
        assert!(matches!(&steps[..], [LoadStep::Full(Err(e))] if e.contains("missing")));
        // A Chrome trace: its head as a trace, then the whole trace.
        let mut json = String::from("[\n");
        for i in 0..3000 {
            json.push_str(&format!(
                "{{\"ph\":\"X\",\"name\":\"e{}\",\"ts\":{},\"dur\":5,\"pid\":1,\"tid\":1}},\n",
                i % 5,
                i * 10
            ));
        }
        let trace = dir.join("t.json");
        std::fs::write(&trace, json).unwrap();
        let mut o = small_opts();
        o.head_bytes = 20_000;
        let steps = run(&Source::Path(trace), Some(&o));
        match &steps[..] {
            [
                LoadStep::Preview(p @ Loaded::Trace(_), PreviewExtent::Head { .. }),
                LoadStep::Full(Ok(f @ Loaded::Trace(_))),
            ] => assert!(total(p) < total(f) && total(f) == 3000),
            _ => panic!("expected a trace preview then the full trace"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn doc(text: &str) -> Doc {
        let profile = crate::import::folded::parse("t", text.as_bytes()).unwrap();
        let layout = flame_layout(&profile.tree);
        let view = ViewState::new(
            &layout,
            1000.0,
            500.0,
            20.0,
            Orientation::Flame,
            ColorMode::Package,
        );
        Doc {
            profile,
            layout,
            path: None,
            name: "t".into(),
            view,
            search: None,
            search_cursor: None,
        }
    }

    fn bar_named(d: &Doc, row: usize, name: &str) -> BarRef {
        let r = &d.layout.rows[row];
        let index = (0..r.len())
            .find(|&i| d.profile.names.get(r.name[i]) == name)
            .unwrap();
        BarRef { row, index }
    }

    fn visible(v: &ViewState) -> (u64, u64) {
        let c = v.target_camera();
        (
            c.start,
            (c.start as f64 + v.graph_w / c.px_per_tick).round() as u64,
        )
    }

    #[test]
    fn an_untouched_view_fits_the_full_profile() {
        let mut old = doc("main;a 2\nmain;b 1\n");
        old.view.toggle_orientation();
        let mut full = doc("main;a 20\nmain;b 10\nmain;c 5\n");
        let fresh = full.view.clone();
        carry_flame_view(&old, &full.profile, &full.layout, &mut full.view, 0.0);
        assert_eq!(full.view.orientation, Orientation::Icicle);
        assert_eq!(visible(&full.view), visible(&fresh));
        assert!(full.view.zoomed.is_none() && full.view.focus.is_none());
    }

    #[test]
    fn a_zoomed_or_focused_bar_maps_by_call_path() {
        let mut old = doc("main;a;x 2\nmain;b;y 1\n");
        let mut full = doc("main;a;x 20\nmain;b;y 10\nmain;aa 50\n");
        let b = bar_named(&old, 3, "y");
        old.view.zoom_to_bar(&old.layout, b, 0.0);
        old.view.tick(1.0);
        carry_flame_view(&old, &full.profile, &full.layout, &mut full.view, 5.0);
        let want = bar_named(&full, 3, "y");
        assert_eq!(full.view.zoomed, Some(want));
        let r = &full.layout.rows[3];
        assert_eq!(visible(&full.view), (r.x0[want.index], r.x1[want.index]));
        assert!(!full.view.is_animating());

        let mut old = doc("main;a;x 2\nmain;b;y 1\n");
        let mut full = doc("main;a;x 20\nmain;b;y 10\nmain;aa 50\n");
        let a = bar_named(&old, 2, "a");
        old.view.focus_on(&old.layout, a, 0.0);
        old.view.tick(1.0);
        carry_flame_view(&old, &full.profile, &full.layout, &mut full.view, 5.0);
        let f = full.view.focus.expect("focus kept");
        assert_eq!(f.bar, bar_named(&full, 2, "a"));
        // A path the full tree lacks (impossible for a real preview): dropped, not a panic.
        let mut old = doc("main;q 1\nmain;b 1\n");
        let mut full = doc("main;a 1\nmain;b 1\n");
        let q = bar_named(&old, 2, "q");
        old.view.focus_on(&old.layout, q, 0.0);
        carry_flame_view(&old, &full.profile, &full.layout, &mut full.view, 5.0);
        assert!(full.view.focus.is_none());
    }

    #[test]
    fn a_wheel_zoom_keeps_its_range_as_fractions_of_the_root() {
        let mut old = doc("main;a 50\nmain;b 50\n");
        old.view.wheel_zoom(500.0, 3.0, ZoomSpeed::Fast);
        old.view.scroll_by(7.0);
        let (a, b) = visible(&old.view);
        let mut full = doc("main;a 5000\nmain;b 5000\n");
        carry_flame_view(&old, &full.profile, &full.layout, &mut full.view, 0.0);
        let (c, d) = visible(&full.view);
        let t_old = old.layout.total_ticks as f64;
        let t_new = full.layout.total_ticks as f64;
        assert!(
            (c as f64 / t_new - a as f64 / t_old).abs() < 0.01,
            "{a}..{b} → {c}..{d}"
        );
        assert!(
            (d as f64 / t_new - b as f64 / t_old).abs() < 0.01,
            "{a}..{b} → {c}..{d}"
        );
        assert_eq!(
            full.view.scroll_px,
            old.view.scroll_px.min(full.view.max_scroll())
        );
    }
}
