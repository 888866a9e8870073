//! Setting a view up for one image (`scorch render`): options checked against the
//! document, the size fitted to the content, the camera on the asked range.
//!
//! The image is then drawn like a window frame ([`super::compose`] with
//! [`super::Purpose::Export`]); only the setup differs. A flame graph or timeline
//! export keeps just the level-of-detail tier its one zoom draws
//! ([`crate::lod::view_lod`]), not the pyramid a window keeps for zooming.

use super::both::BothView;
use super::draw::LabelFit;
use super::flame::FlameView;
use super::sandwich::SandwichView;
use super::table::TableView;
use super::timeline::{TimelineView, default_band_mode};
use super::{View, ViewOptions, Viewport};
use crate::color::ColorMode;
use crate::geometry::timeline::{TimelineGeometry, TimelineStyle};
use crate::geometry::{Camera, FrameGeometry, Orientation, Style};
use crate::layout::timeline::BandMode;
use crate::layout::{SiblingOrder, flame_layout_ordered};
use crate::lod::view_lod;
use crate::model::units::format_duration_ns;
use crate::model::{Document, NameId, Profile, Trace};
use std::sync::Arc;

/// Default image width in logical pixels (flamegraph.pl's default).
pub const DEFAULT_WIDTH: u32 = 1200;
/// Tallest default height, in physical pixels, when the content is taller than that.
pub const MAX_DEFAULT_HEIGHT_PX: u32 = 16384;

/// Which view an image shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportView {
    /// Flame graph, root at the bottom.
    FlameGraph,
    /// Icicle, root at the top.
    Icicle,
    /// Flame graph with the heaviest child first at every level.
    LeftHeavy,
    /// One row per function (profiles).
    Table,
    /// The table beside the flame graph (profiles).
    Both,
    /// One function between its callers and callees (profiles).
    Sandwich,
    /// Spans on a time axis (traces).
    Timeline,
    /// The two sides of a diff, side by side (differential profiles).
    SideBySide,
}

/// What to export.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// Width in logical pixels.
    pub width: u32,
    /// Height in logical pixels; `None` fits the content (up to the default cap).
    pub height: Option<u32>,
    /// Device pixels per logical pixel (2 for a HiDPI image).
    pub scale: f32,
    /// The view; `None`: a flame graph for a profile, a timeline for a trace.
    pub view: Option<ExportView>,
    /// Coloring; `None`: the document's usual colors.
    pub color: Option<ColorMode>,
    /// Color-blind diff palette.
    pub colorblind: bool,
    /// Title; `None` uses the input's file name.
    pub title: Option<String>,
    /// Timeline: window start, ns after the trace's start.
    pub start_ns: Option<u64>,
    /// Timeline: window end.
    pub end_ns: Option<u64>,
    /// Timeline: bands per track or one tree; `None`: the format's usual mode.
    pub bands: Option<BandMode>,
    /// Flame graphs: which part of a long name a cut label keeps.
    pub fit: LabelFit,
    /// Sandwich: the function (a regex or text, as the search takes it; of the
    /// functions it matches, the one with the largest total). `None`: the one with the
    /// most self time.
    pub function: Option<String>,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            width: DEFAULT_WIDTH,
            height: None,
            scale: 1.0,
            view: None,
            color: None,
            colorblind: false,
            title: None,
            start_ns: None,
            end_ns: None,
            bands: None,
            fit: LabelFit::Head,
            function: None,
        }
    }
}

/// Options that cannot work together or with this document.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct OptionsError(pub String);

fn refuse<T>(msg: impl Into<String>) -> Result<T, OptionsError> {
    Err(OptionsError(msg.into()))
}

/// Refuses the timeline's options for a profile.
fn no_trace_options(opts: &ExportOptions) -> Result<(), OptionsError> {
    if opts.start_ns.is_some() || opts.end_ns.is_some() || opts.bands.is_some() {
        return refuse("--start, --end and --bands apply to traces (--view timeline)");
    }
    Ok(())
}

/// Checks the size options.
fn check_size(opts: &ExportOptions) -> Result<(), OptionsError> {
    if opts.width == 0 || opts.height == Some(0) {
        return refuse("--width and --height must be at least 1");
    }
    if !(opts.scale.is_finite() && opts.scale > 0.0 && opts.scale <= 16.0) {
        return refuse(format!(
            "--scale must be between 0 and 16, not {}",
            opts.scale
        ));
    }
    Ok(())
}

/// The view of `doc` that `opts` ask for, set up for one image.
pub fn export_view(doc: &Document, opts: &ExportOptions) -> Result<Box<dyn View>, OptionsError> {
    // A document made from samples is drawn either way: in time order as a timeline, or
    // aggregated by the views of call trees.
    let converted;
    let doc = match (doc, opts.view) {
        (Document::Profile(_), Some(ExportView::Timeline)) if let Some(s) = doc.sampled() => {
            let free = crate::import::limits::available_memory();
            s.check_time_order(free)
                .map_err(|why| OptionsError(format!("no timeline: {why}")))?;
            converted = Document::Trace(doc.as_trace().expect("samples convert to spans"));
            &converted
        }
        (Document::Trace(_), Some(v)) if v != ExportView::Timeline && doc.sampled().is_some() => {
            converted = Document::Profile(doc.as_profile().expect("samples aggregate"));
            &converted
        }
        _ => doc,
    };
    Ok(match doc {
        Document::Profile(p) if opts.view == Some(ExportView::Table) => {
            Box::new(table_export(p.clone(), opts)?)
        }
        Document::Profile(p) if opts.view == Some(ExportView::Sandwich) => {
            Box::new(sandwich_export(p.clone(), opts)?)
        }
        Document::Profile(p) if opts.view == Some(ExportView::Both) => {
            Box::new(both_export(p.clone(), opts)?)
        }
        Document::Profile(p) if opts.view == Some(ExportView::SideBySide) => {
            Box::new(sides_export(p.clone(), opts)?)
        }
        Document::Profile(p) => Box::new(flame_export(p.clone(), opts)?),
        Document::Trace(t) => Box::new(timeline_export(t.clone(), opts)?),
    })
}

/// The height an image of content `needed` logical pixels tall gets.
fn fitted_height(opts: &ExportOptions, needed: f32) -> u32 {
    opts.height.unwrap_or_else(|| {
        let cap = (MAX_DEFAULT_HEIGHT_PX as f32 / opts.scale).floor() as u32;
        (needed.ceil() as u32).min(cap.max(1))
    })
}

/// The color mode `requested` for `profile`, checked.
pub fn profile_color(
    profile: &Profile,
    requested: Option<ColorMode>,
) -> Result<ColorMode, OptionsError> {
    match requested {
        Some(ColorMode::Diff) if !profile.is_diff() => refuse(format!(
            "--color diff needs a differential profile, and {} is not one (it is {})",
            profile.meta.source,
            profile.meta.format.describe()
        )),
        Some(m @ (ColorMode::Track | ColorMode::Category)) => refuse(format!(
            "--color {} colors a trace's spans, and {} is a profile",
            m.name(),
            profile.meta.source
        )),
        Some(m) => Ok(m),
        None if profile.is_diff() => Ok(ColorMode::Diff),
        None => Ok(ColorMode::Package),
    }
}

/// A flame graph or icicle of `profile` for one image.
pub fn flame_export(
    profile: Arc<Profile>,
    opts: &ExportOptions,
) -> Result<FlameView, OptionsError> {
    let orientation = match opts.view {
        Some(ExportView::Timeline) => {
            return refuse(format!(
                "--view timeline needs a trace with timed spans (Chrome trace, Jaeger, OTLP, TiDB); {} is {}, an aggregated profile: use --view flamegraph or icicle",
                profile.meta.source,
                profile.meta.format.describe()
            ));
        }
        Some(ExportView::Icicle) => Orientation::Icicle,
        Some(
            ExportView::FlameGraph
            | ExportView::LeftHeavy
            | ExportView::Table
            | ExportView::Both
            | ExportView::Sandwich
            | ExportView::SideBySide,
        )
        | None => Orientation::Flame,
    };
    let order = match opts.view {
        Some(ExportView::LeftHeavy) => SiblingOrder::HeaviestFirst,
        _ => SiblingOrder::AsTree,
    };
    no_trace_options(opts)?;
    check_size(opts)?;
    let color = profile_color(&profile, opts.color)?;
    let style = Style::default();
    let layout = flame_layout_ordered(&profile.tree, order);
    let rows = layout.rows.len();
    let height = fitted_height(opts, FrameGeometry::needed_height(rows, &style));
    let vp = Viewport::logical(opts.width, height, opts.scale);
    let g = FrameGeometry::with_physical_size(
        vp.width_px,
        vp.height_px,
        vp.scale,
        rows,
        orientation,
        style,
    );
    let camera = g.fit_camera(&layout);
    let ticks_per_px = 1.0 / camera.px_per_tick;
    let lod = view_lod(&layout, ticks_per_px);
    let view_opts = ViewOptions {
        orientation,
        color: Some(color),
        title: opts.title.clone(),
        style,
        fit: opts.fit,
        kind: None,
    };
    let mut view = FlameView::with_layout(profile, layout, lod, Some(ticks_per_px), &view_opts)
        .laid_out_in(order);
    view.set_viewport(vp);
    view.set_colorblind(opts.colorblind);
    view.state_mut().camera = camera;
    Ok(view)
}

/// The table of `profile`'s functions for one image: as many rows as the height holds
/// (by default all of them, up to the height cap).
pub fn table_export(
    profile: Arc<Profile>,
    opts: &ExportOptions,
) -> Result<TableView, OptionsError> {
    no_trace_options(opts)?;
    if opts.fit == LabelFit::Tail {
        return refuse("--fit applies to flame graphs");
    }
    check_size(opts)?;
    if let Some(c) = opts.color {
        return refuse(format!(
            "--color {} colors bars; the table has a fixed look",
            c.name()
        ));
    }
    let style = Style::default();
    let view_opts = ViewOptions {
        title: opts.title.clone(),
        style,
        ..ViewOptions::default()
    };
    let mut view = TableView::new(profile, &view_opts);
    let rows = view.shown_rows().count();
    let height = fitted_height(opts, TableView::needed_height(rows, &style));
    view.set_viewport(Viewport::logical(opts.width, height, opts.scale));
    view.set_colorblind(opts.colorblind);
    Ok(view)
}

/// The sandwich of one function of `profile` for one image: the callers above, the
/// callees below, each half as tall as the taller of them needs (up to the height cap).
pub fn sandwich_export(
    profile: Arc<Profile>,
    opts: &ExportOptions,
) -> Result<SandwichView, OptionsError> {
    let (view_opts, function) = function_view_options(&profile, opts)?;
    let style = view_opts.style;
    let mut view = SandwichView::new(profile, function, &view_opts);
    let rows = view
        .callers()
        .rows_shown()
        .1
        .max(view.callees().rows_shown().1);
    let half = FrameGeometry::needed_height(rows, &style) - style.title_height;
    let height = fitted_height(opts, style.title_height + 2.0 * half);
    view.set_viewport(Viewport::logical(opts.width, height, opts.scale));
    Ok(view)
}

/// The options of the views that draw one function's bars (sandwich, both), checked, and
/// the function `--function` names.
fn function_view_options(
    profile: &Profile,
    opts: &ExportOptions,
) -> Result<(ViewOptions, Option<NameId>), OptionsError> {
    no_trace_options(opts)?;
    check_size(opts)?;
    let color = profile_color(profile, opts.color)?;
    let function = function_option(profile, opts)?;
    let view_opts = ViewOptions {
        color: Some(color),
        title: opts.title.clone(),
        style: Style::default(),
        fit: opts.fit,
        ..ViewOptions::default()
    };
    Ok((view_opts, function))
}

/// The function `--function` names: of the functions its regex or text matches, the one
/// with the largest total (`None` without the option).
fn function_option(
    profile: &Profile,
    opts: &ExportOptions,
) -> Result<Option<NameId>, OptionsError> {
    let Some(q) = &opts.function else {
        return Ok(None);
    };
    let flags = super::search::match_names(&profile.names, q).name_matches;
    let best = crate::model::functions::function_table(&profile.tree)
        .into_iter()
        .filter(|r| flags[r.name as usize])
        .max_by_key(|r| (r.total, std::cmp::Reverse(r.name)));
    match best {
        Some(r) => Ok(Some(r.name)),
        None => refuse(format!(
            "--function {q:?}: no function of {} matches",
            profile.meta.source
        )),
    }
}

/// The table beside the flame graph of `profile` for one image, as tall as the flame
/// graph needs (at least 400 logical pixels); `--function` selects a row, and its bars
/// are lit.
pub fn both_export(profile: Arc<Profile>, opts: &ExportOptions) -> Result<BothView, OptionsError> {
    let (view_opts, function) = function_view_options(&profile, opts)?;
    let style = view_opts.style;
    let mut view = BothView::new(profile.clone(), &view_opts);
    let rows = view.flame().layout().rows.len();
    let height = fitted_height(opts, FrameGeometry::needed_height(rows, &style).max(400.0));
    view.set_viewport(Viewport::logical(opts.width, height, opts.scale));
    view.set_colorblind(opts.colorblind);
    if let Some(f) = function {
        let memo = crate::view::ViewMemo {
            function: Some(profile.names.get(f).to_string()),
            ..Default::default()
        };
        view.restore(&memo, 0.0);
    }
    Ok(view)
}

/// The two sides of the diff `profile` side by side for one image, as tall as the
/// taller side needs.
pub fn sides_export(
    profile: Arc<Profile>,
    opts: &ExportOptions,
) -> Result<crate::view::sides::SideBySideView, OptionsError> {
    if !profile.is_diff() {
        return refuse(format!(
            "--view side-by-side shows the two sides of a comparison; {} is not one",
            profile.meta.source
        ));
    }
    check_size(opts)?;
    let mut vo = ViewOptions {
        title: opts.title.clone(),
        ..ViewOptions::default()
    };
    vo.style.title_height = Style::default().title_height;
    let mut view = crate::view::sides::SideBySideView::new(profile, &vo);
    let rows = view
        .side(0)
        .layout()
        .rows
        .len()
        .max(view.side(1).layout().rows.len());
    let style = vo.style;
    let height = fitted_height(opts, FrameGeometry::needed_height(rows, &style) + 16.0);
    view.set_viewport(Viewport::logical(opts.width, height, opts.scale));
    Ok(view)
}

/// A timeline of `trace` for one image.
pub fn timeline_export(
    trace: Arc<Trace>,
    opts: &ExportOptions,
) -> Result<TimelineView, OptionsError> {
    if opts.fit == LabelFit::Tail {
        return refuse("--fit applies to flame graphs; a timeline's labels keep their start");
    }
    if let Some(
        v @ (ExportView::FlameGraph
        | ExportView::Icicle
        | ExportView::LeftHeavy
        | ExportView::Table
        | ExportView::Both
        | ExportView::Sandwich
        | ExportView::SideBySide),
    ) = opts.view
    {
        return refuse(format!(
            "{} is a trace ({}); it is drawn as a timeline, not a {}: use --view timeline",
            trace.source,
            trace.format.describe(),
            match v {
                ExportView::Icicle => "icicle",
                ExportView::LeftHeavy => "left heavy flame graph",
                ExportView::Table => "table of functions",
                ExportView::Both => "table and flame graph",
                ExportView::Sandwich => "sandwich",
                _ => "flame graph",
            }
        ));
    }
    check_size(opts)?;
    if opts.color == Some(ColorMode::Diff) {
        return refuse("--color diff needs a differential profile; a trace has none");
    }
    let mode = opts.bands.unwrap_or_else(|| default_band_mode(&trace));
    let style = Style::default();
    let view_opts = ViewOptions {
        orientation: Orientation::Icicle,
        color: opts.color,
        title: opts.title.clone(),
        style,
        ..ViewOptions::default()
    };
    let mut view = TimelineView::for_one_image(trace, mode, &view_opts);
    let total = view.tracks().layout.total_ticks.max(1);
    let start = opts.start_ns.unwrap_or(0);
    let end = opts.end_ns.unwrap_or(total);
    if start >= total {
        return refuse(format!(
            "--start {} is past the trace's end ({})",
            format_duration_ns(start as f64),
            format_duration_ns(total as f64)
        ));
    }
    if start >= end {
        return refuse(format!(
            "--start ({}) must be before --end ({})",
            format_duration_ns(start as f64),
            format_duration_ns(end as f64)
        ));
    }
    let tstyle = TimelineStyle::default();
    let height = fitted_height(
        opts,
        TimelineGeometry::needed_height(&view.tracks().bands, &tstyle),
    );
    view.set_viewport(Viewport::logical(opts.width, height, opts.scale));
    let w = view.geometry(1.0).graph.w;
    view.state_mut().camera = Camera::range(start, end, f64::from(w));
    view.keep_one_zoom();
    Ok(view)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Limits, load_bytes};

    fn profile(text: &str) -> Document {
        let p = load_bytes("p.folded", text.as_bytes(), Limits::default()).unwrap();
        Document::Profile(Arc::new(p))
    }

    fn err(doc: &Document, opts: ExportOptions) -> String {
        match export_view(doc, &opts) {
            Err(e) => e.0,
            Ok(_) => panic!("{opts:?} should be refused"),
        }
    }

    /// A timeline image of the whole trace keeps and uploads only the tier each row
    /// draws, with the bars of the whole pyramid's tier at that zoom; an image of a time
    /// range keeps every tier (its overview strip draws the whole trace at another zoom).
    #[test]
    fn a_whole_trace_image_keeps_the_tier_it_draws() {
        let mut text = String::from("[");
        let mut t = 0u64;
        for i in 0..20_000u64 {
            let d = 1 + (i * 7919) % 13;
            text.push_str(&format!(
                r#"{{"ph":"X","name":"s{}","ts":{t},"dur":{d},"pid":1,"tid":{}}},"#,
                i % 50,
                i % 3
            ));
            t += d + (i % 5);
        }
        text.push_str(r#"{"ph":"X","name":"all","ts":0,"dur":1,"pid":1,"tid":0}]"#);
        let imported =
            crate::import::load_any_bytes("t.json", text.as_bytes(), Limits::default()).unwrap();
        let doc: Document = imported.into();
        for (range, one) in [(None, true), (Some((1_000, 9_000)), false)] {
            let mut opts = ExportOptions::default();
            if let Some((a, b)) = range {
                opts.start_ns = Some(a * 1000);
                opts.end_ns = Some(b * 1000);
            }
            let view = export_view(&doc, &opts).unwrap();
            let sources = view.bar_sources();
            let src = &sources[0];
            assert_eq!(src.only_at.is_some(), one, "{range:?}");
            let Some(tpp) = src.only_at else { continue };
            let full = crate::lod::Lod::build(src.layout);
            let mut merged = 0;
            for r in 0..src.layout.rows.len() {
                let tier = |lod: &crate::lod::Lod| match lod.tier_for(r, tpp) {
                    crate::lod::TierRef::Row => None,
                    crate::lod::TierRef::Tier(k) => Some(lod.rows[r][k].clone()),
                };
                let kept = tier(src.lod);
                merged += usize::from(kept.is_some());
                assert_eq!(kept, tier(&full), "row {r}");
            }
            assert!(merged > 0, "the whole trace is drawn with merged runs");
        }
    }

    #[test]
    fn profile_options_are_checked() {
        let doc = profile("a;b 3\na 1\n");
        let o = ExportOptions::default;
        assert!(
            err(
                &doc,
                ExportOptions {
                    view: Some(ExportView::Timeline),
                    ..o()
                }
            )
            .contains("--view timeline needs a trace")
        );
        assert!(
            err(
                &doc,
                ExportOptions {
                    start_ns: Some(1),
                    ..o()
                }
            )
            .contains("apply to traces")
        );
        assert!(err(&doc, ExportOptions { width: 0, ..o() }).contains("at least 1"));
        assert!(err(&doc, ExportOptions { scale: 20.0, ..o() }).contains("between 0 and 16"));
        assert!(
            err(
                &doc,
                ExportOptions {
                    color: Some(ColorMode::Diff),
                    ..o()
                }
            )
            .contains("needs a differential profile")
        );
        assert!(
            err(
                &doc,
                ExportOptions {
                    color: Some(ColorMode::Track),
                    ..o()
                }
            )
            .contains("colors a trace's spans")
        );
    }

    #[test]
    fn a_profile_image_fits_its_rows_and_the_camera_the_whole() {
        let doc = profile("a;b;c 3\na 1\n");
        let v = export_view(&doc, &ExportOptions::default()).unwrap();
        let vp = v.viewport().unwrap();
        // Title band, two margins and four rows (root, a, b, c).
        assert_eq!(vp.height_px, (30.0 + 16.0 + 4.0 * 18.0) as u32);
        assert_eq!(vp.width_px, DEFAULT_WIDTH);
        assert_eq!(v.rows_shown(), (4, 4));
        let v = export_view(
            &doc,
            &ExportOptions {
                height: Some(60),
                scale: 2.0,
                ..ExportOptions::default()
            },
        )
        .unwrap();
        assert_eq!(v.viewport().unwrap().height_px, 120);
        assert!(v.rows_shown().0 < 4, "rows are cut");
    }
}
