//! The flame graph view of a call tree (root at the bottom, flamegraph.pl) and its
//! icicle (root at the top, Pyroscope, speedscope).
//!
//! The view lays the tree out once ([`crate::layout::flame_layout`], or heaviest child
//! first for left heavy) with its level-of-detail tiers, and
//! keeps the camera, scroll, zoom history, focus and colors in a [`ViewState`]. A click
//! zooms to a bar (animated; again or Esc zooms out), Backspace goes back, the menu
//! focuses on a bar (its ancestors collapse into one line, as Pyroscope's "collapse nodes
//! above"), the wheel zooms about the pointer, a drag pans. Hover and click resolve to the
//! exact bar by binary search, or to the merged run drawn at this zoom.
//!
//! Labels read `name (share, amount)`, or for a diff `name (change)`, cut to what fits.

use super::draw::{
    BarSource, BarValues, BarsLayer, Frame, Label, LabelFit, Measure, NameFit, Rect, SceneKey,
    TITLE_COLOR, Text, line_height, outline, rgba, row_draws,
};
use super::input::{Action, Wheel};
use super::interface::{
    Purpose, Reply, View, ViewEntry, ViewKind, ViewMemo, ViewOptions, Viewport, profile_of,
    shows_profiles,
};
use super::labels::{LabelArea, label_slots, place_labels};
use super::search::{SearchResult, search};
use super::shell::Heading;
use super::state::{ANIMATION_S, ViewState};
use crate::color::{self, ColorMode};
use crate::geometry::{Camera, FrameGeometry, Orientation, Style};
use crate::layout::{Layout, SiblingOrder, flame_layout_ordered};
use crate::lod::{Lod, MergedRun};
use crate::model::transform::TransformKind;
use crate::model::units::format_duration_ns;
use crate::model::units::format_percent;
use crate::model::{Document, NodeId, Profile};
use crate::pick::{BarRef, pick};
use std::sync::Arc;

/// The context menu's items.
const MENU: [&str; 3] = ["Focus on this", "Copy name", "Reset view"];
/// The menu item that opens the sandwich of the bar's function.
const SANDWICH_ITEM: &str = "Sandwich of this function";
/// The menu's fit item: it switches the labels' fit mode.
const FIT_ITEM: [&str; 2] = [
    "Cut labels at the end (keep the start)",
    "Cut labels at the start (keep the end)",
];

/// A call tree as a flame graph or icicle.
pub struct FlameView {
    profile: Arc<Profile>,
    layout: Layout,
    lod: Lod,
    key: SceneKey,
    /// Upload and draw only the tier each row uses at this zoom (an export).
    only_at: Option<f64>,
    state: ViewState,
    vp: Option<Viewport>,
    style: Style,
    title: String,
    colorblind: bool,
    labels: bool,
    note: Option<&'static str>,
    search: Option<SearchResult>,
    search_cursor: Option<usize>,
    pointer: Option<(f32, f32)>,
    hover: Option<BarRef>,
    hover_run: Option<MergedRun>,
    dragging: bool,
    menu_bar: Option<BarRef>,
    /// The largest self value, the heat scale (computed once: it is O(nodes)).
    max_self: u64,
    /// Children in the tree's order (the flame graph) or heaviest first (left heavy).
    order: SiblingOrder,
    /// Which part of a long name a cut label keeps.
    fit: LabelFit,
    /// The function the menu picked for a sandwich.
    picked: Option<crate::model::NameId>,
}

impl ViewKind {
    /// A call tree as a flame graph or icicle.
    pub const FLAME_GRAPH: ViewKind = ViewKind("flame graph");
    /// A call tree top down: the roots at the top, callees below.
    pub const ICICLE: ViewKind = ViewKind("icicle");
    /// A call tree with the heaviest child first at every level (speedscope's left heavy).
    pub const LEFT_HEAVY: ViewKind = ViewKind("left heavy");
}

/// The flame graph in the window's list of views: it shows profiles.
pub const ENTRY: ViewEntry = ViewEntry {
    kind: ViewKind::FLAME_GRAPH,
    shows: shows_profiles,
    open: |doc, opts| {
        let d = profile_of(doc);
        Box::new(FlameView::new(d, opts))
    },
};

/// The icicle in the window's list of views: the flame graph upside down (`I` turns
/// either into the other).
pub const ICICLE_ENTRY: ViewEntry = ViewEntry {
    kind: ViewKind::ICICLE,
    shows: shows_profiles,
    open: |doc, opts| {
        let opts = ViewOptions {
            orientation: Orientation::Icicle,
            ..opts.clone()
        };
        Box::new(FlameView::new(profile_of(doc), &opts))
    },
};

/// Left heavy in the window's list of views: profiles, heaviest child first.
pub const LEFT_HEAVY_ENTRY: ViewEntry = ViewEntry {
    kind: ViewKind::LEFT_HEAVY,
    shows: shows_profiles,
    open: |doc, opts| {
        Box::new(FlameView::ordered(
            profile_of(doc),
            opts,
            SiblingOrder::HeaviestFirst,
        ))
    },
};

/// The color a profile opens with: diff for differential profiles, package otherwise;
/// `requested` when it suits the profile.
pub fn default_color(profile: &Profile, requested: Option<ColorMode>) -> ColorMode {
    match requested {
        Some(ColorMode::Diff) if !profile.is_diff() => ColorMode::Package,
        Some(ColorMode::Track | ColorMode::Category) => ColorMode::Package,
        None if profile.is_diff() => ColorMode::Diff,
        None => ColorMode::Package,
        Some(m) => m,
    }
}

impl FlameView {
    /// A flame graph of `profile`, laid out with every level-of-detail tier (to zoom
    /// freely).
    pub fn new(profile: Arc<Profile>, opts: &ViewOptions) -> FlameView {
        Self::ordered(profile, opts, SiblingOrder::AsTree)
    }

    /// The view of a layout made with [`flame_layout_ordered`] in `order` (given to
    /// [`FlameView::with_layout`]): its kind and heading follow the order.
    pub fn laid_out_in(mut self, order: SiblingOrder) -> FlameView {
        self.order = order;
        self
    }

    /// A flame graph with each node's children in `order` (left heavy: heaviest first).
    pub fn ordered(profile: Arc<Profile>, opts: &ViewOptions, order: SiblingOrder) -> FlameView {
        let layout = flame_layout_ordered(&profile.tree, order);
        let lod = Lod::build(&layout);
        Self::with_layout(profile, layout, lod, None, opts).laid_out_in(order)
    }

    /// A view of `profile` with a layout and tiers made already; `only_at`: the tiers
    /// are only those of that zoom (an export's).
    pub fn with_layout(
        profile: Arc<Profile>,
        layout: Layout,
        lod: Lod,
        only_at: Option<f64>,
        opts: &ViewOptions,
    ) -> FlameView {
        let color = default_color(&profile, opts.color);
        let state = ViewState::new(&layout, 1.0, 0.0, 1.0, opts.orientation, color);
        let profile_max_self = profile.tree.max_self();
        let title = opts
            .title
            .clone()
            .unwrap_or_else(|| crate::model::document::profile_title(&profile));
        FlameView {
            profile,
            layout,
            lod,
            key: SceneKey::fresh(),
            only_at,
            state,
            vp: None,
            style: opts.style,
            title,
            colorblind: false,
            labels: true,
            note: None,
            search: None,
            search_cursor: None,
            pointer: None,
            hover: None,
            hover_run: None,
            dragging: false,
            menu_bar: None,
            max_self: profile_max_self,
            order: SiblingOrder::AsTree,
            fit: opts.fit,
            picked: None,
        }
    }

    /// The profile shown.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Its layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Its level-of-detail tiers.
    pub fn lod(&self) -> &Lod {
        &self.lod
    }

    /// The camera, scroll, zoom and colors.
    pub fn state(&self) -> &ViewState {
        &self.state
    }

    /// The camera, scroll, zoom and colors, to change directly (tests, benchmarks).
    pub fn state_mut(&mut self) -> &mut ViewState {
        &mut self.state
    }

    /// Use the color-blind diff palette.
    pub fn set_colorblind(&mut self, on: bool) {
        self.colorblind = on;
    }

    /// Shows every bar of function `f` as a search match does (`None`: the search or
    /// highlight is cleared).
    pub fn highlight(&mut self, f: Option<crate::model::NameId>) {
        self.search_cursor = None;
        self.search = f.map(|f| super::search::search_function(&self.profile, &self.layout, f));
    }

    /// The node of the bar under the pointer.
    pub fn hovered_node(&self) -> Option<NodeId> {
        self.hover.map(|b| self.node(b))
    }

    /// The function of the bar under the pointer.
    pub fn hovered_name(&self) -> Option<crate::model::NameId> {
        self.hover.map(|b| self.layout.rows[b.row].name[b.index])
    }

    /// Moves the graph's top to `logical` pixels below the frame's top (a view drawn
    /// in the lower part of a frame, as the sandwich's callees).
    pub fn set_title_height(&mut self, logical: f32) {
        self.style.title_height = logical;
        if let Some(vp) = self.vp {
            self.set_viewport(vp);
        }
    }

    /// The geometry of the current viewport (scaled by `factor` for a screenshot).
    pub fn geometry(&self, factor: f32) -> FrameGeometry {
        let vp = self.vp.unwrap_or(Viewport::UNIT).scaled(factor);
        let mut g = FrameGeometry::with_physical_size(
            vp.width_px,
            vp.height_px,
            vp.scale,
            self.layout.rows.len(),
            self.state.orientation,
            self.style,
        );
        g.scroll_px = self.state.scroll_px * factor;
        if let Some(f) = self.state.focus {
            g.first_row = f.bar.row;
            g.header = true;
        }
        g
    }

    /// The camera as drawn for `purpose`.
    pub fn camera(&self, purpose: Purpose) -> Camera {
        self.state.camera.scaled(purpose.factor())
    }

    fn graph_x(&self, at: Option<(f32, f32)>) -> f64 {
        at.map_or(0.0, |(x, _)| f64::from(x - self.geometry(1.0).graph.x))
    }

    fn node(&self, bar: BarRef) -> NodeId {
        self.layout.rows[bar.row].node[bar.index]
    }

    /// Re-picks the bar and merged run under the pointer.
    fn update_hover(&mut self) -> bool {
        let g = self.geometry(1.0);
        let new = match self.pointer {
            Some((x, y)) if !self.dragging => pick(&self.layout, &g, &self.state.camera, x, y),
            _ => None,
        };
        let run = match (self.pointer, new) {
            (Some((x, _)), Some(bar)) => {
                let cam = &self.state.camera;
                let tick = cam.tick_at(f64::from(x - g.graph.x));
                self.lod
                    .merged_run_at(&self.layout, bar.row, 1.0 / cam.px_per_tick, tick)
                    .and_then(|(k, j)| self.lod.run(&self.layout, bar.row, k, j))
            }
            _ => None,
        };
        let changed = new != self.hover || run != self.hover_run;
        self.hover = new;
        self.hover_run = run;
        changed
    }

    /// Scroll direction that moves towards the root.
    fn up_sign(&self) -> f32 {
        match self.state.orientation {
            Orientation::Flame => 1.0,
            Orientation::Icicle => -1.0,
        }
    }

    /// The frame names from the root to `bar`.
    /// The transform of `kind` for `bar`'s function (its call path, for a subtree).
    fn transform_of(&self, kind: TransformKind, bar: BarRef) -> Reply {
        let rule = color::package_rule(self.profile.meta.spy_name.as_deref());
        match kind.make(&self.path_names(bar), &rule) {
            Some(t) => Reply::Transform(t),
            None => Reply::Say("the root is not a function: nothing to transform".into()),
        }
    }

    fn path_names(&self, bar: BarRef) -> Vec<String> {
        let t = &self.profile.tree;
        t.path(self.node(bar))
            .iter()
            .map(|&n| self.profile.names.get(t.name(n)).to_string())
            .collect()
    }

    /// The bar showing the call path `names` (frame names from the root), if the tree
    /// has it.
    fn bar_of_path(&self, names: &[String]) -> Option<BarRef> {
        let t = &self.profile.tree;
        let mut n = t.root();
        for name in names {
            n = *t
                .children(n)
                .iter()
                .find(|&&c| self.profile.names.get(t.name(c)) == name)?;
        }
        // A flame layout puts a node of depth d in row d.
        let row = self.layout.rows.get(names.len())?;
        let index = row.node.iter().position(|&x| x == n)?;
        Some(BarRef {
            row: names.len(),
            index,
        })
    }

    /// The view root's visible part as fractions, `None` when all of it is in view.
    fn visible_fraction(&self) -> Option<(f64, f64)> {
        let v = &self.state;
        let cam = v.target_camera();
        let (lo, hi) = v.bounds();
        let span = (hi - lo) as f64;
        let left = (cam.start as f64 + cam.start_frac - lo as f64) / span;
        let right = left + v.graph_w / cam.px_per_tick / span;
        let whole = left <= 1e-9 && right >= 1.0 - 1e-9;
        (!whole).then_some((left.clamp(0.0, 1.0), right.clamp(0.0, 1.0)))
    }

    fn subtitle(&self) -> String {
        match self.order {
            SiblingOrder::AsTree => summary(&self.profile),
            SiblingOrder::HeaviestFirst => format!("left heavy · {}", summary(&self.profile)),
        }
    }

    /// Labels, the focus header and the hover outline of a frame.
    fn draw_labels<'a>(
        &'a self,
        frame: &mut Frame<'a>,
        g: &FrameGeometry,
        cam: &Camera,
        rows: &[super::draw::RowDraw],
        m: &mut dyn Measure,
    ) {
        let scale = g.scale;
        let label_size = (g.style.label_font * scale).round();
        let label_line = line_height(label_size);
        let pad = (g.style.label_pad * scale).round();
        let min_label = g.style.min_label_width * scale;
        let graph_right = g.graph.x + g.graph.w;
        let p = &*self.profile;
        let diff_pal = color::diff_palette(self.colorblind);
        let diff_ticks = p.diff_ticks();
        // The f32 the shader's heat scale holds, so labels contrast with what is drawn.
        let max_self = f64::from(self.max_self as f32);
        if !self.labels {
            return;
        }
        m.names_ahead(&p.names, label_size);
        let area = LabelArea {
            left: g.graph.x,
            right: graph_right,
            gap: g.gap_px,
            min_width: min_label,
        };
        let slots = label_slots(&self.layout, &self.lod, rows, cam, area, m.labels_timed());
        frame.text.reserve(slots.len());
        place_labels(&slots, frame, m, |slot, frame, m| {
            let d = &rows[slot.draw as usize];
            let row = &self.layout.rows[d.row];
            let i = slot.bar as usize;
            let (vx0, vx1) = (slot.x0, slot.x1);
            let n = row.node[i];
            let Some(text) = fit_bar_label(
                m,
                p,
                n,
                row.name[i],
                self.fit,
                label_size,
                vx1 - vx0 - 2.0 * pad,
            ) else {
                return;
            };
            let bg = match self.state.color {
                ColorMode::Package | ColorMode::Name | ColorMode::Track | ColorMode::Category => {
                    color::palette_color(7)
                }
                ColorMode::Value => color::heat_color(p.tree.self_ticks(n) as f64, max_self),
                ColorMode::Diff => {
                    let (lt, rt) = diff_ticks.unwrap_or((0, 0));
                    let l = p.tree.left_total(n);
                    let grey =
                        crate::model::compare::path_test(p, n).is_some_and(|t| !t.significant);
                    let pct = if grey {
                        0.0
                    } else {
                        color::bar_diff_percent(l, p.tree.total(n) - l, lt, rt)
                    };
                    color::diff_color(pct, diff_pal)
                }
            };
            let top = d.top;
            frame.text.push(Text {
                text,
                size: label_size,
                x: vx0 + pad,
                y: (top + (g.bar_height_px - label_line) / 2.0).round(),
                clip: [vx0, top, vx1, top + g.bar_height_px],
                color: color::label_color(bg),
            });
            frame.labels += 1;
        });
    }
}

/// The summary drawn after the title: totals in the profile's units (and its app name).
pub fn summary(profile: &Profile) -> String {
    let v = &profile.values;
    let mut parts = Vec::new();
    if let Some(app) = &profile.meta.app_name {
        parts.push(app.clone());
    }
    match profile.diff_ticks() {
        Some((l, r)) if profile.is_diff() => {
            parts.push(format!(
                "before {} · after {}",
                v.format_long(l),
                v.format_long(r)
            ));
        }
        _ => parts.push(format!(
            "total {}",
            v.format_long(profile.tree.grand_total())
        )),
    }
    parts.extend(selection_note(profile));
    parts.join(" · ")
}

/// Which samples a profile made from samples counts, when not simply all of its only
/// event: `cpu-clock samples from 1.2 s to 1.5 s (300 ms)`.
pub fn selection_note(profile: &Profile) -> Option<String> {
    let s = profile.meta.sampled.as_ref()?;
    let events = &s.samples.events;
    let event = (events.len() > 1)
        .then(|| events.get(s.selection.event as usize))
        .flatten()
        .map(|e| format!("{} samples", e.name));
    let range = s.selection.range.map(|(a, b)| {
        format!(
            "from {} to {} ({})",
            format_duration_ns(a as f64),
            format_duration_ns(b as f64),
            format_duration_ns(b.saturating_sub(a) as f64)
        )
    });
    match (event, range) {
        (None, None) => None,
        (Some(e), None) => Some(e),
        (None, Some(r)) => Some(format!("samples {r}")),
        (Some(e), Some(r)) => Some(format!("{e} {r}")),
    }
}

/// The sums of the samples' counters under node `n` (a profile aggregated from samples
/// that carry any): `CPU 8.1 ms (66 % of its time) · voluntary switches 3`.
pub fn counter_line(p: &Profile, n: NodeId) -> Option<String> {
    use crate::model::samples::CounterKind;
    let counters = p.meta.node_counters.as_ref()?;
    let parts: Vec<String> = counters
        .iter()
        .filter_map(|(k, v)| {
            let x = *v.get(n as usize)?;
            Some(match k {
                // Of the node's time, when the weights are time.
                CounterKind::CpuNs if p.values.unit == crate::model::units::Unit::Nanoseconds => {
                    let total =
                        p.tree.total(n).max(1) as f64 / p.values.ticks_per_unit.max(1) as f64;
                    format!(
                        "CPU {} ({:.0} % of its time)",
                        k.format(x),
                        100.0 * (x as f64 / total).min(1.0)
                    )
                }
                k => format!("{} {}", k.name(), k.format(x)),
            })
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// A diff bar's tooltip lines: both sides (each as a share of its side), the change as
/// an amount and relative to the share, the test across runs when there is one, and self.
pub fn diff_lines(p: &Profile, n: NodeId, lt: u64, rt: u64) -> Vec<String> {
    let (t, v) = (&p.tree, &p.values);
    let l = t.left_total(n);
    let r = t.total(n) - l;
    let mut lines = vec![
        format!(
            "before: {} ({} of before)",
            v.format_long(l),
            format_percent(l as f64 / lt.max(1) as f64)
        ),
        format!(
            "after: {} ({} of after)",
            v.format_long(r),
            format_percent(r as f64 / rt.max(1) as f64)
        ),
        format!(
            "change: {}{} · share {}",
            if r >= l { "+" } else { "−" },
            v.format_long(r.abs_diff(l)),
            color::diff_change(l, r, lt, rt)
        ),
    ];
    if let Some(test) = crate::model::compare::path_test(p, n) {
        let pct = |x: f64| {
            if x.is_finite() {
                format!("{:+.1} %", 100.0 * x)
            } else {
                "new".to_string()
            }
        };
        let runs = p
            .meta
            .comparison
            .as_ref()
            .and_then(|c| c.runs.as_ref())
            .map_or((0, 0), |r| r.runs);
        lines.push(format!(
            "{} vs {} runs: mean share {} → {} ({}, 95 % CI {} … {})",
            runs.0,
            runs.1,
            format_percent(test.share_before),
            format_percent(test.share_after),
            pct(test.change),
            pct(test.ci95().0),
            pct(test.ci95().1)
        ));
        lines.push(format!(
            "Welch p = {:.2e}, false-discovery q = {:.2e}: {}",
            test.p,
            test.q,
            if test.significant {
                "significant"
            } else {
                "not significant (drawn grey)"
            }
        ));
    }
    let ls = t.left_self(n);
    let rs = t.self_ticks(n) - ls;
    lines.push(format!(
        "self: before {}, after {}",
        v.format(ls),
        v.format(rs)
    ));
    lines
}

/// What [`Measure::fit_as`] shows of the bar label of `node` (named `name`) in `max_w`
/// pixels, keeping `keep` of a cut name: the label is formatted and measured only when
/// the name fits (the label is the name and more, never narrower), and the name is
/// measured and cut by id.
fn fit_bar_label<'a>(
    m: &mut dyn Measure,
    profile: &'a Profile,
    node: NodeId,
    name: crate::model::names::NameId,
    keep: LabelFit,
    size: f32,
    max_w: f32,
) -> Option<Label<'a>> {
    if max_w <= 0.0 {
        return None;
    }
    match m.name_fit(keep, &profile.names, name, size, max_w) {
        NameFit::Whole(_) => {}
        NameFit::Cut(label) => return Some(label),
        NameFit::Nothing => return None,
    }
    let full = bar_label(profile, node);
    if m.width(&full, size) <= max_w {
        return Some(full.into());
    }
    Some(Label::name(&profile.names, name))
}

/// The label of a bar: `name (share, amount)`, or for a diff `name (change)`.
pub fn bar_label(profile: &Profile, node: NodeId) -> String {
    let tree = &profile.tree;
    let name = profile.names.get(tree.name(node));
    let total = tree.total(node);
    match profile.diff_ticks() {
        Some((lt, rt)) if profile.is_diff() => {
            let l = tree.left_total(node);
            format!("{name} ({})", color::diff_change(l, total - l, lt, rt))
        }
        _ => {
            let share = total as f64 / tree.grand_total().max(1) as f64;
            format!(
                "{name} ({}, {})",
                format_percent(share),
                profile.values.format(total)
            )
        }
    }
}

fn orientation_name(o: Orientation) -> &'static str {
    match o {
        Orientation::Flame => "flame graph",
        Orientation::Icicle => "icicle",
    }
}

impl View for FlameView {
    fn kind(&self) -> ViewKind {
        match (self.order, self.state.orientation) {
            (SiblingOrder::HeaviestFirst, _) => ViewKind::LEFT_HEAVY,
            (SiblingOrder::AsTree, Orientation::Flame) => ViewKind::FLAME_GRAPH,
            (SiblingOrder::AsTree, Orientation::Icicle) => ViewKind::ICICLE,
        }
    }

    fn document(&self) -> Document {
        Document::Profile(self.profile.clone())
    }

    fn viewport(&self) -> Option<Viewport> {
        self.vp
    }

    fn set_viewport(&mut self, vp: Viewport) {
        let first = self.vp.is_none();
        self.vp = Some(vp);
        let g = self.geometry(1.0);
        if first {
            // Fitted to the first size it gets, as if made for it.
            self.state = ViewState::new(
                &self.layout,
                f64::from(g.graph.w),
                g.graph.h,
                g.row_pitch_px,
                self.state.orientation,
                self.state.color,
            );
        } else {
            self.state
                .resize(f64::from(g.graph.w), g.graph.h, g.row_pitch_px);
        }
        self.update_hover();
    }

    fn style(&self) -> Style {
        self.style
    }

    fn content_top(&self) -> f32 {
        self.geometry(1.0).graph.y
    }

    fn tick(&mut self, now_s: f64) -> bool {
        let running = self.state.tick(now_s);
        // The view may have moved under a still pointer.
        self.update_hover();
        running
    }

    fn pointer(&mut self, at: Option<(f32, f32)>) -> bool {
        self.pointer = at;
        self.update_hover()
    }

    fn drag(&mut self, _x: f32, _y: f32, dx: f32, dy: f32) {
        self.dragging = true;
        self.state.pan_px(f64::from(dx));
        self.state.scroll_by(self.up_sign() * dy);
        self.update_hover();
    }

    fn release(&mut self, x: f32, y: f32, click: bool, now_s: f64) {
        self.dragging = false;
        if click {
            let g = self.geometry(1.0);
            if g.is_header(y) {
                self.state.reset();
            } else if let Some(run) = self.hover_run {
                // A merged run: zoom into it rather than onto one sub-pixel bar of it.
                self.state.zoom_to_ticks(run.x0, run.x1, now_s);
            } else if let Some(bar) = pick(&self.layout, &g, &self.state.camera, x, y) {
                self.state.click(&self.layout, bar, now_s);
            }
        }
        self.update_hover();
    }

    fn wheel(&mut self, at: Option<(f32, f32)>, w: Wheel) {
        match w {
            Wheel::Scroll { rows } => {
                let pitch = self.state.row_pitch;
                self.state.scroll_by(self.up_sign() * rows * pitch);
            }
            Wheel::Zoom {
                steps,
                speed,
                pan_px,
            } => {
                let cx = self.graph_x(at);
                if steps != 0.0 {
                    self.state.wheel_zoom(cx, steps, speed);
                }
                if pan_px != 0.0 {
                    self.state.pan_px(-pan_px);
                }
            }
        }
        self.update_hover();
    }

    fn pinch(&mut self, at: Option<(f32, f32)>, factor: f64) {
        let cx = self.graph_x(at);
        self.state.zoom_around(cx, factor);
        self.update_hover();
    }

    fn act(&mut self, action: Action, now_s: f64) -> Reply {
        let w = f64::from(self.geometry(1.0).graph.w);
        let up = self.up_sign();
        let v = &mut self.state;
        match action {
            Action::Escape => {
                if v.zoomed.is_some() {
                    v.zoom_out(now_s);
                } else if v.focus.is_some() {
                    v.reset();
                }
            }
            Action::Back => {
                v.back(now_s);
            }
            Action::PanLeft => v.pan_px(w * 0.1),
            Action::PanRight => v.pan_px(-w * 0.1),
            Action::ScrollUp => v.scroll_by(up * v.row_pitch * 3.0),
            Action::ScrollDown => v.scroll_by(-up * v.row_pitch * 3.0),
            Action::PageUp => v.scroll_by(up * v.graph_h * 0.9),
            Action::PageDown => v.scroll_by(-up * v.graph_h * 0.9),
            Action::Home => v.scroll_by(-1e9),
            Action::End => v.scroll_by(1e9),
            Action::ZoomIn => v.zoom_around(w / 2.0, 1.5),
            Action::ZoomOut => v.zoom_around(w / 2.0, 1.0 / 1.5),
            Action::Reset => v.reset(),
            Action::FlipOrientation => v.toggle_orientation(),
            Action::CycleColor => {
                let diff = self.profile.is_diff();
                v.cycle_color(diff);
            }
            Action::NextMatch => self.next_match(false, now_s),
            Action::PrevMatch => self.next_match(true, now_s),
            Action::ToggleFit => self.fit = self.fit.other(),
            Action::Transform(kind) => {
                let bar = self.hover.or(v.zoomed).or(v.focus.map(|f| f.bar));
                return match bar {
                    Some(bar) => self.transform_of(kind, bar),
                    None => Reply::Say("point at a bar to transform its function".into()),
                };
            }
            _ => return Reply::Ignored,
        }
        self.update_hover();
        Reply::Done
    }

    fn open_menu(&mut self) -> Vec<String> {
        self.menu_bar = self.hover;
        match self.hover {
            Some(_) => {
                let mut items: Vec<String> = MENU.iter().map(|s| s.to_string()).collect();
                // The mode not in use.
                items.push(FIT_ITEM[usize::from(self.fit == LabelFit::Head)].to_string());
                items.push(SANDWICH_ITEM.to_string());
                items.extend(
                    TransformKind::ALL
                        .iter()
                        .map(|k| k.menu_label().to_string()),
                );
                items
            }
            None => Vec::new(),
        }
    }

    fn menu_action(&mut self, item: usize, now_s: f64) -> Reply {
        let Some(bar) = self.menu_bar.take() else {
            return Reply::Ignored;
        };
        match item {
            0 => self.state.focus_on(&self.layout, bar, now_s),
            1 => {
                let name = self
                    .profile
                    .names
                    .get(self.layout.rows[bar.row].name[bar.index]);
                return Reply::Copy(name.to_string());
            }
            2 => self.state.reset(),
            3 => self.fit = self.fit.other(),
            4 => {
                self.picked = Some(self.layout.rows[bar.row].name[bar.index]);
                return Reply::Open(ViewKind::SANDWICH);
            }
            i => {
                return match TransformKind::ALL.get(i - 5) {
                    Some(&kind) => self.transform_of(kind, bar),
                    None => Reply::Ignored,
                };
            }
        }
        self.update_hover();
        Reply::Done
    }

    fn search(&mut self, query: &str) {
        self.search_cursor = None;
        self.search = (!query.is_empty()).then(|| search(&self.profile, &self.layout, query));
    }

    fn search_summary(&self) -> Option<String> {
        self.search
            .as_ref()
            .map(|sr| format!("/{}: {}", sr.query, sr.summary()))
    }

    fn next_match(&mut self, backwards: bool, now_s: f64) {
        let Some(s) = &self.search else { return };
        let current = self.search_cursor.map(|i| s.bars[i]);
        if let Some(i) = s.next_from(&self.layout, current, backwards) {
            let bar = s.bars[i];
            self.search_cursor = Some(i);
            self.state.zoom_to_bar(&self.layout, bar, now_s);
        }
    }

    fn heading(&self, purpose: Purpose) -> Heading {
        let subtitle = if purpose.windowed() {
            let mut s = format!(
                "{} · {} colors · {}",
                orientation_name(self.state.orientation),
                self.state.color.name(),
                self.subtitle()
            );
            if let Some(note) = self.note {
                s = format!("{s} · {note}");
            }
            s
        } else {
            self.subtitle()
        };
        Heading {
            title: self.title.clone(),
            subtitle,
            legend: (self.state.color == ColorMode::Diff).then_some(self.colorblind),
        }
    }

    fn status_hint(&self) -> String {
        let v = &self.state;
        match v.zoomed.or(v.focus.map(|f| f.bar)) {
            Some(b) => {
                let names = self.path_names(b);
                let keep = names.len().min(6);
                let mut p = String::from("zoom: total");
                if names.len() > keep {
                    p.push_str(" › …");
                }
                for n in &names[names.len() - keep..] {
                    p.push_str(" › ");
                    p.push_str(n);
                }
                p
            }
            None => "click: zoom · wheel: zoom · drag: pan · right-click: menu and transforms · / search · U undo · Ctrl+S screenshot · ?: every key".to_string(),
        }
    }

    fn tooltip(&self) -> Vec<String> {
        let Some(bar) = self.hover else {
            return Vec::new();
        };
        let p = &*self.profile;
        let t = &p.tree;
        let n = self.node(bar);
        let mut name = p.names.get(t.name(n)).to_string();
        if name.chars().count() > 160 {
            name = name.chars().take(160).collect::<String>() + "…";
        }
        let total = t.total(n);
        let grand = t.grand_total().max(1);
        let view_root = self
            .state
            .zoomed
            .or(self.state.focus.map(|f| f.bar))
            .map(|b| t.total(self.node(b)))
            .unwrap_or(grand)
            .max(1);
        let v = &p.values;
        let mut lines = Vec::new();
        if let Some(run) = self.hover_run {
            let span: u64 = run.x1 - run.x0;
            lines.push(format!(
                "{} bars merged at this zoom, mostly {} — click to zoom in",
                run.count,
                p.names.get(run.name)
            ));
            lines.push(format!(
                "run: {} · {} of all",
                v.format(span),
                format_percent(span as f64 / t.grand_total().max(1) as f64)
            ));
            lines.push("under the pointer:".to_string());
        }
        lines.push(name);
        if let Some((lt, rt)) = p.diff_ticks().filter(|_| p.is_diff()) {
            lines.extend(diff_lines(p, n, lt, rt));
        } else {
            let mut tl = format!(
                "total: {} · {} of all",
                v.format_long(total),
                format_percent(total as f64 / grand as f64)
            );
            if view_root != grand {
                tl.push_str(&format!(
                    " · {} of view",
                    format_percent(total as f64 / view_root as f64)
                ));
            }
            lines.push(tl);
            let st = t.self_ticks(n);
            lines.push(format!(
                "self: {} · {} of all",
                v.format_long(st),
                format_percent(st as f64 / grand as f64)
            ));
        }
        lines.extend(counter_line(p, n));
        lines.push(format!(
            "depth {} · click to zoom · right-click for more",
            bar.row
        ));
        if let Some(note) = self.note {
            lines.push(note.to_string());
        }
        lines
    }

    fn set_note(&mut self, note: Option<&'static str>) {
        self.note = note;
    }

    fn set_labels(&mut self, on: bool) {
        self.labels = on;
    }

    fn bar_sources(&self) -> Vec<BarSource<'_>> {
        let tree = &self.profile.tree;
        let diff = self.profile.is_diff();
        let p = &*self.profile;
        let (lt, rt) = p.diff_ticks().unwrap_or((1, 1));
        // (self, left total, right total) of one node.
        let of = move |n: u32| -> [f32; 3] {
            let total = tree.total(n);
            if diff {
                let l = tree.left_total(n);
                let r = total - l;
                if crate::model::compare::path_test(p, n).is_some_and(|t| !t.significant) {
                    // Not significant across runs: both sides the same share (grey).
                    let same = r as f64 * lt as f64 / rt.max(1) as f64;
                    return [tree.self_ticks(n) as f32, same as f32, r as f32];
                }
                [tree.self_ticks(n) as f32, l as f32, r as f32]
            } else {
                [tree.self_ticks(n) as f32, total as f32, total as f32]
            }
        };
        vec![BarSource {
            key: self.key,
            layout: &self.layout,
            lod: &self.lod,
            names: &self.profile.names,
            spy: self.profile.meta.spy_name.as_deref(),
            values: BarValues {
                of: Box::new(of),
                merge: |acc, v| [acc[0] + v[0], acc[1] + v[1], acc[2] + v[2]],
                max_self: self.max_self as f32,
                diff_ticks: self.profile.diff_ticks(),
                read: BarValues::read_by(self.only_at, self.state.color),
                // `of` is [self, total, total] there, the layout a flame layout.
                nested: !diff,
            },
            only_at: self.only_at,
            noun: "bars",
        }]
    }

    fn draw<'a>(&'a self, frame: &mut Frame<'a>, m: &mut dyn Measure, purpose: Purpose) {
        let g = self.geometry(purpose.factor());
        let cam = self.camera(purpose);
        let v = &self.state;
        let faded_rows = match v.zoomed {
            Some(z) if v.focus.is_none() => z.row,
            _ => 0,
        };
        let rows = row_draws(
            &self.layout,
            Some(&self.lod),
            g.visible_rows().map(|r| (r, g.row_top(r))),
            &cam,
            f64::from(g.graph.w),
            faded_rows,
        );
        self.draw_labels(frame, &g, &cam, &rows, m);
        let scale = g.scale;
        let label_size = (g.style.label_font * scale).round();
        let label_line = line_height(label_size);
        let pad = (g.style.label_pad * scale).round();
        let graph_right = g.graph.x + g.graph.w;

        // Focus: the collapsed ancestors as one grey line.
        if let (Some(top), Some(f)) = (g.header_top(), v.focus) {
            frame.over.push(Rect::new(
                [g.graph.x, top, g.graph.w - g.gap_px, g.bar_height_px],
                rgba([200, 200, 200], 1.0),
            ));
            let levels = f.bar.row;
            frame.text.push(Text {
                text: format!(
                    "{} … ({levels} level{} collapsed above; click here or press 0 to reset)",
                    self.profile.names.get(self.layout.rows[0].name[0]),
                    if levels == 1 { "" } else { "s" }
                )
                .into(),
                size: label_size,
                x: g.graph.x + pad,
                y: (top + (g.bar_height_px - label_line) / 2.0).round(),
                clip: [g.graph.x, top, graph_right, top + g.bar_height_px],
                color: TITLE_COLOR,
            });
        }

        // The hovered bar (or merged run): an outline, clipped to the graph.
        if purpose.pointer()
            && let Some(h) = self.hover
            && let Some(row) = self.layout.rows.get(h.row)
            && h.index < row.len()
            && g.visible_rows().contains(&h.row)
        {
            let (t0, t1) = self
                .hover_run
                .map_or((row.x0[h.index], row.x1[h.index]), |r| (r.x0, r.x1));
            let x0 = (g.graph.x + cam.x_of(t0) as f32)
                .round()
                .max(g.graph.x - 1.0);
            let x1 = ((g.graph.x + cam.x_of(t1) as f32).round() - g.gap_px)
                .min(graph_right + 1.0)
                .max(x0 + 1.0);
            let top = g.row_top(h.row);
            let t = scale.round().max(1.0);
            for r in outline([x0, top, x1 - x0, g.bar_height_px], t) {
                frame.over.push(Rect::new(r, [0.1, 0.1, 0.1, 0.85]));
            }
        }

        frame.bars.push(BarsLayer {
            scene: self.key,
            clip: g.graph,
            camera: cam,
            bar_height: g.bar_height_px,
            gap: g.gap_px,
            color: v.color,
            colorblind: self.colorblind,
            search: self.search.as_ref().map(SearchResult::flags),
            rows,
            lod: &self.lod,
        });
    }

    fn rows_shown(&self) -> (usize, usize) {
        let g = self.geometry(1.0);
        let rows = self.layout.rows.len();
        let shown = (g.graph.h / g.row_pitch_px).floor() as usize;
        (shown.min(rows), rows)
    }

    fn memo(&self) -> ViewMemo {
        let v = &self.state;
        let frac = self.visible_fraction();
        // A click zoom still in place (the camera shows that bar) carries its path;
        // anything else carries fractions.
        let zoomed = v.zoomed.filter(|z| {
            let r = &self.layout.rows[z.row];
            let (lo, hi) = v.bounds();
            let span = (hi - lo) as f64;
            let bar = (
                (r.x0[z.index] - lo) as f64 / span,
                (r.x1[z.index] - lo) as f64 / span,
            );
            frac.is_some_and(|(a, b)| (a - bar.0).abs() < 1e-6 && (b - bar.1).abs() < 1e-6)
        });
        ViewMemo {
            color: Some(v.color),
            orientation: Some(v.orientation),
            focus_path: v.focus.map(|f| self.path_names(f.bar)),
            zoom_path: zoomed.map(|z| self.path_names(z)),
            fraction: frac,
            time_window: None,
            scroll_px: v.scroll_px,
            fit: Some(self.fit),
            // The menu's pick, else the zoomed or focused bar's function.
            function: self
                .picked
                .or_else(|| {
                    let b = v.zoomed.or(v.focus.map(|f| f.bar))?;
                    Some(self.layout.rows[b.row].name[b.index])
                })
                .map(|f| self.profile.names.get(f).to_string()),
        }
    }

    fn restore(&mut self, memo: &ViewMemo, now_s: f64) {
        if let Some(f) = memo.fit {
            self.fit = f;
        }
        if let Some(o) = memo.orientation {
            self.state.orientation = o;
        }
        if let Some(c) = memo.color {
            self.state.color = default_color(&self.profile, Some(c));
        }
        if memo.focus_path.is_none()
            && memo.zoom_path.is_none()
            && memo.fraction.is_none()
            && memo.scroll_px == 0.0
        {
            return;
        }
        if let Some(b) = memo.focus_path.as_ref().and_then(|p| self.bar_of_path(p)) {
            self.state.focus_on(&self.layout, b, now_s);
        }
        match memo.zoom_path.as_ref().and_then(|p| self.bar_of_path(p)) {
            Some(b) => self.state.zoom_to_bar(&self.layout, b, now_s),
            None => {
                if let Some((a, b)) = memo.fraction {
                    self.state.show_fraction(a, b);
                }
            }
        }
        // Land at once: the user is looking at this place already.
        self.state.tick(now_s + 2.0 * ANIMATION_S);
        self.state.scroll_by(memo.scroll_px);
        self.update_hover();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Orientation;
    use crate::view::draw::FixedMeasure;
    use crate::view::state::ZoomSpeed;

    /// A flame view of folded `text` in a 1000-pixel-wide window (graph 1000 × 500).
    fn view(text: &str) -> FlameView {
        let profile = crate::import::folded::parse("t", text.as_bytes()).unwrap();
        let mut v = FlameView::new(Arc::new(profile), &ViewOptions::default());
        v.set_viewport(Viewport {
            width_px: 1016,
            height_px: 562,
            scale: 1.0,
        });
        v
    }

    fn bar_named(v: &FlameView, row: usize, name: &str) -> BarRef {
        let r = &v.layout.rows[row];
        let index = (0..r.len())
            .find(|&i| v.profile.names.get(r.name[i]) == name)
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
        let mut old = view("main;a 2\nmain;b 1\n");
        old.state.toggle_orientation();
        let mut full = view("main;a 20\nmain;b 10\nmain;c 5\n");
        let fresh = full.state.clone();
        full.restore(&old.memo(), 0.0);
        assert_eq!(full.state.orientation, Orientation::Icicle);
        assert_eq!(visible(&full.state), visible(&fresh));
        assert!(full.state.zoomed.is_none() && full.state.focus.is_none());
    }

    #[test]
    fn left_heavy_and_the_flame_graph_keep_the_zoomed_call_path() {
        let text = "main;a;x 2\nmain;b;y 9\nmain;b;z 1\nmain;c 4\n";
        let mut flame = view(text);
        let profile = flame.profile.clone();
        let mut heavy = FlameView::ordered(
            profile,
            &ViewOptions::default(),
            SiblingOrder::HeaviestFirst,
        );
        heavy.set_viewport(flame.vp.unwrap());
        assert_eq!(heavy.kind(), ViewKind::LEFT_HEAVY);
        assert_eq!(flame.kind(), ViewKind::FLAME_GRAPH);
        // Heaviest first at every level: b (10), c (4), a (2); y before z.
        let names = |v: &FlameView, row: usize| -> Vec<String> {
            let r = &v.layout.rows[row];
            (0..r.len())
                .map(|i| v.profile.names.get(r.name[i]).to_string())
                .collect()
        };
        assert_eq!(names(&heavy, 2), ["b", "c", "a"]);
        assert_eq!(names(&heavy, 3), ["y", "z", "x"]);
        assert_eq!(names(&flame, 2), ["a", "b", "c"]);
        // Zoomed to main;a;x in the flame graph: left heavy opens on the same path, and
        // back again.
        let x = bar_named(&flame, 3, "x");
        flame.state.zoom_to_bar(&flame.layout, x, 0.0);
        flame.state.tick(1.0);
        heavy.restore(&flame.memo(), 5.0);
        let want = bar_named(&heavy, 3, "x");
        assert_eq!(heavy.state.zoomed, Some(want));
        let r = &heavy.layout.rows[3];
        assert_eq!(visible(&heavy.state), (r.x0[want.index], r.x1[want.index]));
        let mut back = view(text);
        back.restore(&heavy.memo(), 9.0);
        assert_eq!(back.state.zoomed, Some(bar_named(&back, 3, "x")));
        let mut m = FixedMeasure { advance: 0.6 };
        let frame = crate::view::compose(&heavy, Purpose::Window, None, &mut m);
        assert!(
            frame
                .text
                .iter()
                .any(|t| t.text.shown().contains("left heavy")),
            "the heading says which view this is"
        );
    }

    #[test]
    fn a_zoomed_or_focused_bar_maps_by_call_path() {
        let mut old = view("main;a;x 2\nmain;b;y 1\n");
        let mut full = view("main;a;x 20\nmain;b;y 10\nmain;aa 50\n");
        let b = bar_named(&old, 3, "y");
        old.state.zoom_to_bar(&old.layout, b, 0.0);
        old.state.tick(1.0);
        full.restore(&old.memo(), 5.0);
        let want = bar_named(&full, 3, "y");
        assert_eq!(full.state.zoomed, Some(want));
        let r = &full.layout.rows[3];
        assert_eq!(visible(&full.state), (r.x0[want.index], r.x1[want.index]));
        assert!(!full.state.is_animating());

        let mut old = view("main;a;x 2\nmain;b;y 1\n");
        let mut full = view("main;a;x 20\nmain;b;y 10\nmain;aa 50\n");
        let a = bar_named(&old, 2, "a");
        old.state.focus_on(&old.layout, a, 0.0);
        old.state.tick(1.0);
        full.restore(&old.memo(), 5.0);
        let f = full.state.focus.expect("focus kept");
        assert_eq!(f.bar, bar_named(&full, 2, "a"));
        // A path the full tree lacks (impossible for a real preview): dropped, not a panic.
        let mut old = view("main;q 1\nmain;b 1\n");
        let mut full = view("main;a 1\nmain;b 1\n");
        let q = bar_named(&old, 2, "q");
        old.state.focus_on(&old.layout, q, 0.0);
        full.restore(&old.memo(), 5.0);
        assert!(full.state.focus.is_none());
    }

    #[test]
    fn a_wheel_zoom_keeps_its_range_as_fractions_of_the_root() {
        let mut old = view("main;a 50\nmain;b 50\n");
        old.state.wheel_zoom(500.0, 3.0, ZoomSpeed::Fast);
        old.state.scroll_by(7.0);
        let (a, b) = visible(&old.state);
        let mut full = view("main;a 5000\nmain;b 5000\n");
        full.restore(&old.memo(), 0.0);
        let (c, d) = visible(&full.state);
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
            full.state.scroll_px,
            old.state.scroll_px.min(full.state.max_scroll())
        );
    }

    /// The draw data: one bar layer over the visible rows, a label per bar wide enough
    /// for one, the ancestors of a zoomed bar faded, and the hover outline only in the
    /// window.
    #[test]
    fn draw_data_has_bars_labels_fading_and_the_hover() {
        let mut v = view("main;alpha 3\nmain;beta 1\n");
        let mut m = FixedMeasure { advance: 0.6 };
        let mut f = Frame::new(1016, 562, 1.0);
        v.draw(&mut f, &mut m, Purpose::Export);
        assert_eq!(f.bars.len(), 1);
        let rows: Vec<usize> = f.bars[0].rows.iter().map(|r| r.row).collect();
        assert_eq!(rows, [0, 1, 2]);
        assert_eq!(f.labels, 4, "total, main, alpha, beta");
        assert!(
            f.text
                .iter()
                .any(|t| t.text.shown().starts_with("alpha (75%"))
        );
        assert!(f.over.is_empty(), "no hover in an export");
        let b = bar_named(&v, 2, "beta");
        v.state.zoom_to_bar(&v.layout, b, 0.0);
        v.state.tick(1.0);
        let g = v.geometry(1.0);
        v.pointer(Some((g.graph.x + 500.0, g.row_top(2) + 2.0)));
        let mut f = Frame::new(1016, 562, 1.0);
        v.draw(&mut f, &mut m, Purpose::Window);
        let alpha: Vec<f32> = f.bars[0].rows.iter().map(|r| r.alpha).collect();
        assert_eq!(alpha, [0.35, 0.35, 1.0], "the zoomed bar's ancestors fade");
        assert_eq!(f.over.len(), 4, "the hover outline");
        assert_eq!(v.tooltip()[0], "beta");
    }

    #[test]
    fn the_menu_switches_labels_to_keep_the_end_of_names() {
        let long = "com.example.service.RequestHandler.handleIncomingRequest";
        let mut v = view(&format!("main;{long} 10\nmain;other 30\n"));
        let labels = |v: &FlameView| {
            let mut m = FixedMeasure { advance: 0.6 };
            let mut f = Frame::new(1016, 562, 1.0);
            v.draw(&mut f, &mut m, Purpose::Export);
            f.text
                .iter()
                .map(|t| t.text.to_string())
                .collect::<Vec<_>>()
        };
        // The long name's bar is 250 px wide: its label is cut.
        let first = labels(&v);
        assert!(
            first
                .iter()
                .any(|t| t.starts_with("com.") && t.ends_with('…')),
            "{first:?}"
        );
        let g = v.geometry(1.0);
        v.pointer(Some((g.graph.x + 5.0, g.row_top(2) + 2.0)));
        let items = v.open_menu();
        assert_eq!(items[3], "Cut labels at the start (keep the end)");
        assert_eq!(v.menu_action(3, 0.0), Reply::Done);
        let cut: Vec<String> = labels(&v)
            .into_iter()
            .filter(|t| t.starts_with('…'))
            .collect();
        assert_eq!(cut.len(), 1, "{cut:?}");
        assert!(long.ends_with(&cut[0][3..]), "{cut:?}");
        // Another view of the document keeps the mode.
        assert_eq!(v.memo().fit, Some(LabelFit::Tail));
        let mut other = view("main;x 1\n");
        other.restore(&v.memo(), 1.0);
        assert_eq!(other.fit, LabelFit::Tail);
        v.pointer(Some((g.graph.x + 5.0, g.row_top(2) + 2.0)));
        assert_eq!(v.open_menu()[3], "Cut labels at the end (keep the start)");
    }
}
