//! The table view: one row per function (Pyroscope's table, speedscope's sandwich list),
//! self and total in the profile's units and as shares of the whole, and the number of
//! call-tree nodes each appears in; a differential profile shows before, after and the
//! change, tinted with the diff gradient. Total counts recursion once
//! ([`crate::model::functions`]).
//!
//! A click on a header sorts by that column (again: the other direction); the search
//! filters the rows; only the rows in view are drawn, so 200 000 functions cost what 50
//! do. Up/Down, PageUp/PageDown, Home/End move the selection; a selected row's shares
//! are on the status line. The right-click menu copies the name or the whole table (as
//! shown: filtered and sorted) as TSV.

use super::draw::{
    BODY_COLOR, Frame, MUTED_COLOR, Measure, Rect, TITLE_COLOR, Text, line_height, rgba,
};
use super::input::{Action, Wheel};
use super::interface::{
    Purpose, Reply, View, ViewEntry, ViewKind, ViewMemo, ViewOptions, Viewport, profile_of,
    shows_profiles,
};
use super::search::match_names;
use super::shell::Heading;
use super::top::{Top, TopFormat};
use crate::color::{self, diff_shares, relative_change};
use crate::geometry::Style;
use crate::model::functions::{FunctionStats, SortKey, function_table, sort_functions};
use crate::model::samples::CounterKind;
use crate::model::transform::TransformKind;
use crate::model::{Document, NameId, Profile};
use std::sync::Arc;

impl ViewKind {
    /// One row per function.
    pub const TABLE: ViewKind = ViewKind("table");
}

/// The transforms a row offers: those of a function (a row has no call path).
const ROW_TRANSFORMS: [TransformKind; 5] = [
    TransformKind::Merge,
    TransformKind::Focus,
    TransformKind::CollapseRecursion,
    TransformKind::CollapsePackage,
    TransformKind::Drop,
];

/// The table in the window's list of views: it shows profiles.
pub const ENTRY: ViewEntry = ViewEntry {
    kind: ViewKind::TABLE,
    shows: shows_profiles,
    open: |doc, opts| {
        let p = profile_of(doc);
        Box::new(TableView::new(p, opts))
    },
};

/// A column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Column {
    /// Self, in the profile's units.
    SelfTicks,
    /// Self as a share of the whole.
    SelfShare,
    /// Total, recursion counted once.
    Total,
    /// Total as a share of the whole.
    TotalShare,
    /// Call-tree nodes with this name.
    Nodes,
    /// Diff: the left total.
    Before,
    /// Diff: the right total.
    After,
    /// Diff: the relative change of the total's share.
    Change,
    /// A counter of the samples (CPU time, allocations, switches), summed over the
    /// samples whose stack holds the function.
    Counter(CounterKind),
    /// The function's name.
    Name,
}

impl Column {
    fn title(self) -> &'static str {
        match self {
            Column::SelfTicks => "Self",
            Column::SelfShare => "Self %",
            Column::Total => "Total",
            Column::TotalShare => "Total %",
            Column::Nodes => "Nodes",
            Column::Before => "Before",
            Column::After => "After",
            Column::Change => "Change",
            Column::Counter(k) => k.short_name(),
            Column::Name => "Function",
        }
    }

    /// Logical width for values of up to `chars` characters (the name takes what is
    /// left).
    fn width(self, chars: usize) -> f32 {
        match self {
            Column::SelfShare | Column::TotalShare | Column::Nodes => 70.0,
            Column::Change => 84.0,
            Column::Counter(_) => 90.0,
            Column::Name => 0.0,
            // DejaVu Sans digits are 0.64 em wide; 12 px labels, 8 px of padding.
            _ => (chars as f32 * 12.0 * 0.64 + 8.0).max(90.0).ceil(),
        }
    }

    fn sort_key(self) -> SortKey {
        match self {
            Column::SelfTicks | Column::SelfShare => SortKey::SelfTicks,
            Column::Total | Column::TotalShare => SortKey::Total,
            Column::Nodes => SortKey::Nodes,
            Column::Before => SortKey::Before,
            Column::After => SortKey::After,
            Column::Change => SortKey::Change,
            // Sorted by the table itself (see `resort`); ties by name.
            Column::Counter(_) | Column::Name => SortKey::Name,
        }
    }

    /// The columns of a table of `diff` or single profiles.
    pub fn all(diff: bool) -> &'static [Column] {
        if diff {
            &[
                Column::Before,
                Column::After,
                Column::Change,
                Column::Nodes,
                Column::Name,
            ]
        } else {
            &[
                Column::SelfTicks,
                Column::SelfShare,
                Column::Total,
                Column::TotalShare,
                Column::Nodes,
                Column::Name,
            ]
        }
    }
}

/// Where things are, in physical pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TableGeometry {
    /// Left edge of the first column.
    pub left: f32,
    /// Right edge of the name column.
    pub right: f32,
    /// Top of the header row.
    pub header_top: f32,
    /// Height of a row (the header's too).
    pub row_h: f32,
    /// How many rows fit below the header.
    pub rows_fit: usize,
    /// Device pixels per logical pixel.
    pub scale: f32,
}

impl TableGeometry {
    /// Top of body row `i` counted from the first visible one.
    pub fn row_top(&self, i: usize) -> f32 {
        self.header_top + self.row_h * (i + 1) as f32
    }
}

/// One row per function.
pub struct TableView {
    profile: Arc<Profile>,
    /// Every function, in the current order.
    rows: Vec<FunctionStats>,
    /// Indices into `rows` that the search leaves (all without one).
    shown: Vec<u32>,
    sort: Column,
    descending: bool,
    query: String,
    /// The selected function.
    selected: Option<NameId>,
    /// First shown row in view.
    first: usize,
    vp: Option<Viewport>,
    style: Style,
    title: String,
    note: Option<&'static str>,
    pointer: Option<(f32, f32)>,
    menu_row: Option<usize>,
    colorblind: bool,
    /// The samples' counters per function (by name id), when the profile was made from
    /// samples that carry any.
    counters: Vec<(CounterKind, Vec<u64>)>,
}

impl TableView {
    /// The table of `profile`, sorted by self (by the change, for a diff).
    pub fn new(profile: Arc<Profile>, opts: &ViewOptions) -> TableView {
        let rows = function_table(&profile.tree);
        let title = opts
            .title
            .clone()
            .unwrap_or_else(|| crate::model::document::profile_title(&profile));
        let sort = if profile.is_diff() {
            Column::Change
        } else {
            Column::SelfTicks
        };
        let counters = profile
            .meta
            .sampled
            .as_ref()
            .map(|s| s.samples.function_counters(s.selection, &profile.names))
            .unwrap_or_default();
        let mut t = TableView {
            counters,
            shown: (0..rows.len() as u32).collect(),
            rows,
            profile,
            sort,
            descending: true,
            query: String::new(),
            selected: None,
            first: 0,
            vp: None,
            style: opts.style,
            title,
            note: None,
            pointer: None,
            menu_row: None,
            colorblind: false,
        };
        t.resort();
        t
    }

    /// Use the color-blind diff palette.
    pub fn set_colorblind(&mut self, on: bool) {
        self.colorblind = on;
    }

    /// The functions as shown: filtered and sorted.
    pub fn shown_rows(&self) -> impl Iterator<Item = &FunctionStats> {
        self.shown.iter().map(|&i| &self.rows[i as usize])
    }

    /// How many functions the profile has (rows before any filter).
    pub fn function_count(&self) -> usize {
        self.rows.len()
    }

    /// The sort column and direction.
    pub fn sorted_by(&self) -> (Column, bool) {
        (self.sort, self.descending)
    }

    /// The selected function.
    pub fn selected(&self) -> Option<NameId> {
        self.selected
    }

    /// Sorts by `col`: a new column starts largest first (names A to Z), the same one
    /// turns around.
    pub fn sort_by(&mut self, col: Column) {
        if col == self.sort {
            self.descending = !self.descending;
        } else {
            self.sort = col;
            self.descending = col != Column::Name;
        }
        self.resort();
    }

    fn resort(&mut self) {
        let p = &*self.profile;
        let key = self.sort.sort_key();
        // A counter's column sorts after names A to Z, so ties read in name order.
        let by_counter = matches!(self.sort, Column::Counter(_));
        sort_functions(
            &mut self.rows,
            &p.names,
            key,
            self.descending && !by_counter,
            p.diff_ticks(),
        );
        if let Column::Counter(k) = self.sort {
            // Stable after the sort by name: ties stay in name order.
            let v = self
                .counters
                .iter()
                .find(|(c, _)| *c == k)
                .map(|(_, v)| v.as_slice());
            let of =
                |r: &FunctionStats| v.map_or(0, |v| v.get(r.name as usize).copied().unwrap_or(0));
            if self.descending {
                self.rows.sort_by_key(|r| std::cmp::Reverse(of(r)));
            } else {
                self.rows.sort_by_key(of);
            }
        }
        self.filter();
    }

    fn filter(&mut self) {
        self.shown = if self.query.is_empty() {
            (0..self.rows.len() as u32).collect()
        } else {
            let flags = match_names(&self.profile.names, &self.query).name_matches;
            (0..self.rows.len() as u32)
                .filter(|&i| flags[self.rows[i as usize].name as usize])
                .collect()
        };
        self.first = self.first.min(self.max_first());
        self.reveal_selected();
    }

    /// The geometry of the current viewport (scaled by `factor` for a screenshot).
    pub fn geometry(&self, factor: f32) -> TableGeometry {
        let vp = self.vp.unwrap_or(Viewport::UNIT).scaled(factor);
        let s = vp.scale;
        let margin = (self.style.margin * s).round();
        let header_top = (self.style.title_height * s).round();
        let row_h = (self.style.row_pitch * s).round().max(1.0);
        let bottom = vp.height_px as f32 - (self.style.status_height * s).round();
        let rows_fit = ((bottom - header_top - row_h) / row_h).floor().max(0.0) as usize;
        TableGeometry {
            left: margin,
            right: vp.width_px as f32 - margin,
            header_top,
            row_h,
            rows_fit,
            scale: s,
        }
    }

    /// The height (logical) that shows the header and every row.
    pub fn needed_height(rows: usize, style: &Style) -> f32 {
        style.title_height + style.row_pitch * (rows + 1) as f32 + style.margin
    }

    fn max_first(&self) -> usize {
        self.shown
            .len()
            .saturating_sub(self.geometry(1.0).rows_fit.max(1))
    }

    fn scroll_to(&mut self, first: isize) {
        self.first = first.clamp(0, self.max_first() as isize) as usize;
    }

    /// Position in `shown` of the selected function.
    /// The transform of `kind` for the function of the shown row `pos`.
    fn transform_of(&self, kind: TransformKind, pos: usize) -> Reply {
        let name = self
            .profile
            .names
            .get(self.rows[self.shown[pos] as usize].name);
        let rule = color::package_rule(self.profile.meta.spy_name.as_deref());
        match kind.make(&[name.to_string()], &rule) {
            Some(t) if ROW_TRANSFORMS.contains(&kind) => Reply::Transform(t),
            _ => Reply::Say(
                "a table row is a function, not a call path: focus on a subtree from a flame graph"
                    .into(),
            ),
        }
    }

    fn selected_pos(&self) -> Option<usize> {
        let sel = self.selected?;
        self.shown
            .iter()
            .position(|&i| self.rows[i as usize].name == sel)
    }

    fn reveal_selected(&mut self) {
        let Some(pos) = self.selected_pos() else {
            return;
        };
        let fit = self.geometry(1.0).rows_fit.max(1);
        if pos < self.first {
            self.first = pos;
        } else if pos >= self.first + fit {
            self.first = pos + 1 - fit;
        }
    }

    /// Selects the shown row at `pos` (clamped) and scrolls it into view.
    fn select_pos(&mut self, pos: isize) {
        if self.shown.is_empty() {
            return;
        }
        let pos = pos.clamp(0, self.shown.len() as isize - 1) as usize;
        self.selected = Some(self.rows[self.shown[pos] as usize].name);
        self.reveal_selected();
    }

    /// Counter `k` per function, when the samples carry it.
    pub fn counter_values(&self, k: CounterKind) -> Option<&[u64]> {
        self.counters
            .iter()
            .find(|(c, _)| *c == k)
            .map(|(_, v)| v.as_slice())
    }

    /// The column under `x`, and its left and right edges.
    fn column_at(&self, g: &TableGeometry, x: f32) -> Option<(Column, f32, f32)> {
        self.columns(g)
            .into_iter()
            .find(|&(_, a, b)| x >= a && x < b)
    }

    /// Each column with its left and right edges.
    pub fn columns(&self, g: &TableGeometry) -> Vec<(Column, f32, f32)> {
        let mut x = g.left;
        // Every value is at most the grand total: its text is the longest.
        let p = &*self.profile;
        let chars = p.values.format(p.tree.grand_total()).chars().count();
        let width = |c: Column| (c.width(chars) * g.scale * self.style.label_font / 12.0).round();
        // A narrow table (beside the flame graph) gives up the node count, then the
        // shares and the two sides of a diff, before names get too short to read.
        let mut cols = Column::all(p.is_diff()).to_vec();
        // The samples' counters before the node count.
        let at = cols.len() - 2;
        for (k, _) in self.counters.iter().rev() {
            cols.insert(at, Column::Counter(*k));
        }
        let min_name = (180.0 * g.scale).round();
        let counters: Vec<Column> = self
            .counters
            .iter()
            .map(|(k, _)| Column::Counter(*k))
            .collect();
        for drop in counters.into_iter().rev().chain([
            Column::Nodes,
            Column::SelfShare,
            Column::TotalShare,
            Column::Before,
            Column::After,
        ]) {
            let fixed: f32 = cols
                .iter()
                .filter(|&&c| c != Column::Name)
                .map(|&c| width(c))
                .sum();
            if g.right - g.left - fixed >= min_name {
                break;
            }
            cols.retain(|&c| c != drop);
        }
        cols.into_iter()
            .map(|c| {
                let w = if c == Column::Name {
                    (g.right - x).max(0.0)
                } else {
                    width(c)
                };
                let out = (c, x, x + w);
                x += w;
                out
            })
            .collect()
    }

    /// The shown row under `(x, y)`, as a position in `shown`.
    fn row_at(&self, g: &TableGeometry, x: f32, y: f32) -> Option<usize> {
        if x < g.left || x >= g.right || y < g.row_top(0) {
            return None;
        }
        let i = ((y - g.row_top(0)) / g.row_h) as usize;
        let pos = self.first + i;
        (i < g.rows_fit && pos < self.shown.len()).then_some(pos)
    }

    fn hovered(&self) -> Option<usize> {
        let (x, y) = self.pointer?;
        self.row_at(&self.geometry(1.0), x, y)
    }

    /// The text of cell `col` of `r`.
    fn cell(&self, r: &FunctionStats, col: Column) -> String {
        let p = &*self.profile;
        let v = &p.values;
        let share = |x: u64, of: u64| {
            crate::model::units::format_percent(if of == 0 { 0.0 } else { x as f64 / of as f64 })
        };
        let grand = p.tree.grand_total();
        let (lt, rt) = p.diff_ticks().unwrap_or((0, 0));
        match col {
            Column::SelfTicks => v.format(r.self_ticks),
            Column::SelfShare => share(r.self_ticks, grand),
            Column::Total => v.format(r.total),
            Column::TotalShare => share(r.total, grand),
            Column::Nodes => r.nodes.to_string(),
            Column::Before => v.format(r.left_total),
            Column::After => v.format(r.total - r.left_total),
            Column::Change => {
                let after = r.total - r.left_total;
                if r.left_total == 0 && after > 0 {
                    "new".to_string()
                } else if after == 0 && r.left_total > 0 {
                    "removed".to_string()
                } else {
                    let (a, b) = diff_shares(r.left_total, after, lt, rt);
                    format!("{:+.2}%", relative_change(a, b))
                }
            }
            Column::Counter(k) => self
                .counter_values(k)
                .and_then(|v| v.get(r.name as usize))
                .map_or_else(|| "–".to_string(), |&x| k.format(x)),
            Column::Name => p.names.get(r.name).to_string(),
        }
    }

    /// The diff gradient's color for `r` (the flame graph's color of its bars).
    fn change_color(&self, r: &FunctionStats) -> [f32; 3] {
        let (lt, rt) = self.profile.diff_ticks().unwrap_or((0, 0));
        let pct = color::bar_diff_percent(r.left_total, r.total - r.left_total, lt, rt);
        color::diff_color(pct, color::diff_palette(self.colorblind))
    }

    /// The package color the flame graph gives the function.
    fn swatch(&self, name: NameId) -> [f32; 3] {
        let p = &*self.profile;
        let pkg = color::package_name(p.meta.spy_name.as_deref(), p.names.get(name));
        color::palette_color(color::palette_index(&color::pyroscope_key(pkg)))
    }

    fn draw_header(
        &self,
        frame: &mut Frame<'_>,
        g: &TableGeometry,
        m: &mut dyn Measure,
        size: f32,
        pad: f32,
    ) {
        let y = g.header_top;
        frame.under.push(Rect::new(
            [g.left, y, g.right - g.left, g.row_h],
            rgba([238, 238, 238], 1.0),
        ));
        let top = (y + (g.row_h - line_height(size)) / 2.0).round();
        for (col, a, b) in self.columns(g) {
            let arrow = match (col == self.sort, self.descending) {
                (false, _) => "",
                (true, true) => " ▼",
                (true, false) => " ▲",
            };
            let text = format!("{}{arrow}", col.title());
            // Numbers are right-aligned, and so are their headers.
            let x = match col {
                Column::Name => a + pad,
                _ => b - pad - m.width(&text, size),
            };
            frame.text.push(Text {
                text: text.into(),
                size,
                x,
                y: top,
                clip: [a, y, b, y + g.row_h],
                color: TITLE_COLOR,
            });
        }
    }
}

impl View for TableView {
    fn kind(&self) -> ViewKind {
        ViewKind::TABLE
    }

    fn document(&self) -> Document {
        Document::Profile(self.profile.clone())
    }

    fn viewport(&self) -> Option<Viewport> {
        self.vp
    }

    fn set_viewport(&mut self, vp: Viewport) {
        self.vp = Some(vp);
        self.first = self.first.min(self.max_first());
        self.reveal_selected();
    }

    fn style(&self) -> Style {
        self.style
    }

    fn content_top(&self) -> f32 {
        self.geometry(1.0).header_top
    }

    fn heading(&self, purpose: Purpose) -> Heading {
        let p = &*self.profile;
        let mut subtitle = format!(
            "table · {} functions · total {}",
            self.function_count(),
            p.values.format_long(p.tree.grand_total())
        );
        if let Some(n) = super::flame::selection_note(p) {
            subtitle = format!("{subtitle} · {n}");
        }
        if !self.query.is_empty() {
            subtitle = format!("{subtitle} · {} shown", self.shown.len());
        }
        if purpose.windowed()
            && let Some(note) = self.note
        {
            subtitle = format!("{subtitle} · {note}");
        }
        Heading {
            title: self.title.clone(),
            subtitle,
            legend: p.is_diff().then_some(self.colorblind),
        }
    }

    fn draw<'a>(&'a self, frame: &mut Frame<'a>, m: &mut dyn Measure, purpose: Purpose) {
        let g = self.geometry(purpose.factor());
        let size = (self.style.label_font * g.scale).round();
        let pad = (self.style.label_pad * g.scale).round();
        self.draw_header(frame, &g, m, size, pad);
        let cols = self.columns(&g);
        let hovered = purpose.pointer().then(|| self.hovered()).flatten();
        let diff = self.profile.is_diff();
        for i in 0..g.rows_fit {
            let pos = self.first + i;
            let Some(&ri) = self.shown.get(pos) else {
                break;
            };
            let r = &self.rows[ri as usize];
            let top = g.row_top(i);
            let band = [g.left, top, g.right - g.left, g.row_h];
            if Some(r.name) == self.selected {
                frame
                    .under
                    .push(Rect::new(band, rgba([200, 220, 250], 1.0)));
            } else if Some(pos) == hovered {
                frame
                    .under
                    .push(Rect::new(band, rgba([235, 242, 252], 1.0)));
            } else if pos % 2 == 1 {
                frame
                    .under
                    .push(Rect::new(band, rgba([248, 248, 248], 1.0)));
            }
            let text_top = (top + (g.row_h - line_height(size)) / 2.0).round();
            for &(col, a, b) in &cols {
                let text = self.cell(r, col);
                let inner = b - a - 2.0 * pad;
                match col {
                    Column::Name => {
                        // The flame graph's color of the function, then its name.
                        let sw = (g.row_h * 0.5).round();
                        let sy = (top + (g.row_h - sw) / 2.0).round();
                        frame.under.push(Rect::new(
                            [a + pad, sy, sw, sw],
                            rgba_f(self.swatch(r.name)),
                        ));
                        let x = a + 2.0 * pad + sw;
                        if let Some(fit) = m.fit(&text, &text, size, b - x - pad) {
                            frame.labels += 1;
                            frame.text.push(Text {
                                text: fit.into(),
                                size,
                                x,
                                y: text_top,
                                clip: [x, top, b, top + g.row_h],
                                color: TITLE_COLOR,
                            });
                        }
                    }
                    _ => {
                        let mut ink = BODY_COLOR;
                        if col == Column::Change && diff {
                            let c = self.change_color(r);
                            frame.under.push(Rect::new(
                                [a + 1.0, top + 1.0, b - a - 2.0, g.row_h - 2.0],
                                rgba_f(c),
                            ));
                            ink = color::label_color(c);
                        }
                        let w = m.width(&text, size);
                        if w <= inner {
                            frame.text.push(Text {
                                text: text.into(),
                                size,
                                x: b - pad - w,
                                y: text_top,
                                clip: [a, top, b, top + g.row_h],
                                color: ink,
                            });
                        }
                    }
                }
            }
        }
        if self.shown.is_empty() {
            let msg = if self.query.is_empty() {
                "no functions".to_string()
            } else {
                format!("no function matches /{}", self.query)
            };
            frame.text.push(Text {
                text: msg.into(),
                size,
                x: g.left + pad,
                y: g.row_top(0),
                clip: [g.left, g.row_top(0), g.right, g.row_top(1)],
                color: MUTED_COLOR,
            });
        }
    }

    fn pointer(&mut self, at: Option<(f32, f32)>) -> bool {
        let before = self.hovered();
        self.pointer = at;
        before != self.hovered()
    }

    fn release(&mut self, x: f32, y: f32, click: bool, _now_s: f64) {
        if !click {
            return;
        }
        let g = self.geometry(1.0);
        if y >= g.header_top && y < g.header_top + g.row_h {
            if let Some((col, _, _)) = self.column_at(&g, x) {
                self.sort_by(col);
            }
        } else if let Some(pos) = self.row_at(&g, x, y) {
            self.select_pos(pos as isize);
        }
    }

    fn double_click(&mut self, x: f32, y: f32, _now_s: f64) -> Reply {
        let g = self.geometry(1.0);
        match self.row_at(&g, x, y) {
            Some(pos) => {
                self.select_pos(pos as isize);
                Reply::Open(ViewKind::SANDWICH)
            }
            None => Reply::Ignored,
        }
    }

    fn wheel(&mut self, _at: Option<(f32, f32)>, w: Wheel) {
        let rows = match w {
            // A notch away from the user shows earlier rows, three a notch.
            Wheel::Zoom { steps, .. } => -steps * 3.0,
            Wheel::Scroll { rows } => -f64::from(rows),
        };
        self.scroll_to(self.first as isize + rows.round() as isize);
    }

    fn act(&mut self, action: Action, _now_s: f64) -> Reply {
        let page = self.geometry(1.0).rows_fit.max(1) as isize;
        let pos = self.selected_pos().map(|p| p as isize);
        let here = pos.unwrap_or(self.first as isize - 1);
        match action {
            Action::ScrollDown => self.select_pos(here + 1),
            Action::ScrollUp => self.select_pos(pos.map_or(self.first as isize, |p| p - 1)),
            Action::PageDown => self.select_pos(here + page),
            Action::PageUp => self.select_pos(pos.unwrap_or(self.first as isize) - page),
            Action::Home => self.select_pos(0),
            Action::End => self.select_pos(self.shown.len() as isize - 1),
            Action::Escape if self.selected.is_some() => self.selected = None,
            Action::ZoomToSelection if self.selected.is_some() => {
                return Reply::Open(ViewKind::SANDWICH);
            }
            Action::Transform(kind) => {
                return match self.hovered().or(self.selected_pos()) {
                    Some(pos) => self.transform_of(kind, pos),
                    None => Reply::Say("select a row to transform its function".into()),
                };
            }
            _ => return Reply::Ignored,
        }
        Reply::Done
    }

    fn open_menu(&mut self) -> Vec<String> {
        self.menu_row = self.hovered();
        if self.menu_row.is_some() {
            let mut items: Vec<String> = vec![
                "Copy name".into(),
                "Copy table as TSV".into(),
                "Sandwich of this function".into(),
            ];
            items.extend(ROW_TRANSFORMS.iter().map(|k| k.menu_label().to_string()));
            items
        } else {
            Vec::new()
        }
    }

    fn menu_action(&mut self, item: usize, _now_s: f64) -> Reply {
        let Some(pos) = self.menu_row.take() else {
            return Reply::Ignored;
        };
        let r = &self.rows[self.shown[pos] as usize];
        match item {
            0 => Reply::Copy(self.profile.names.get(r.name).to_string()),
            2 => {
                self.selected = Some(r.name);
                Reply::Open(ViewKind::SANDWICH)
            }
            i if i >= 3 => match ROW_TRANSFORMS.get(i - 3) {
                Some(&kind) => self.transform_of(kind, pos),
                None => Reply::Ignored,
            },
            _ => {
                let rows: Vec<FunctionStats> = self.shown_rows().cloned().collect();
                Reply::Copy(Top::of_rows(&self.profile, rows, TopFormat::Tsv).to_string())
            }
        }
    }

    fn search(&mut self, query: &str) {
        self.query = query.to_string();
        self.first = 0;
        self.filter();
    }

    fn search_summary(&self) -> Option<String> {
        (!self.query.is_empty()).then(|| {
            format!(
                "/{}: {} of {} functions",
                self.query,
                self.shown.len(),
                self.rows.len()
            )
        })
    }

    fn status_hint(&self) -> String {
        let Some(pos) = self.selected_pos() else {
            return "click a header: sort · click a row or ↑↓: select · double click or Enter: sandwich · /: filter · right click: copy, transforms"
                .to_string();
        };
        let r = &self.rows[self.shown[pos] as usize];
        let p = &*self.profile;
        format!(
            "{}: self {} ({}), total {} ({})",
            p.names.get(r.name),
            self.cell(r, Column::SelfTicks),
            self.cell(r, Column::SelfShare),
            self.cell(r, Column::Total),
            self.cell(r, Column::TotalShare)
        )
    }

    fn tooltip(&self) -> Vec<String> {
        let Some(pos) = self.hovered() else {
            return Vec::new();
        };
        let r = &self.rows[self.shown[pos] as usize];
        let mut name = self.profile.names.get(r.name).to_string();
        if name.chars().count() > 160 {
            name = name.chars().take(160).collect::<String>() + "…";
        }
        let mut lines = vec![name];
        if self.profile.is_diff() {
            lines.push(format!(
                "before {} · after {} · change {}",
                self.cell(r, Column::Before),
                self.cell(r, Column::After),
                self.cell(r, Column::Change)
            ));
        } else {
            lines.push(format!(
                "self {} ({}) · total {} ({})",
                self.cell(r, Column::SelfTicks),
                self.cell(r, Column::SelfShare),
                self.cell(r, Column::Total),
                self.cell(r, Column::TotalShare)
            ));
        }
        lines.push(format!("in {} call-tree nodes", r.nodes));
        lines
    }

    fn set_note(&mut self, note: Option<&'static str>) {
        self.note = note;
    }

    fn rows_shown(&self) -> (usize, usize) {
        let fit = self.geometry(1.0).rows_fit;
        (fit.min(self.shown.len()), self.shown.len())
    }

    fn memo(&self) -> ViewMemo {
        ViewMemo {
            function: self.selected.map(|f| self.profile.names.get(f).to_string()),
            ..ViewMemo::default()
        }
    }

    fn restore(&mut self, memo: &ViewMemo, _now_s: f64) {
        // Only a function with a row: a transform can leave a name with no frames.
        if let Some(f) = memo
            .function
            .as_deref()
            .and_then(|f| self.profile.names.find(f))
            .filter(|&f| self.rows.iter().any(|r| r.name == f))
        {
            self.selected = Some(f);
            self.reveal_selected();
        }
    }
}

fn rgba_f(c: [f32; 3]) -> [f32; 4] {
    [c[0], c[1], c[2], 1.0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::draw::FixedMeasure;

    /// A table of folded `text` in an 800 × 400 window with a status line.
    fn table(text: &str) -> TableView {
        let p = crate::import::folded::parse("t", text.as_bytes()).unwrap();
        let opts = ViewOptions {
            style: Style {
                status_height: 24.0,
                ..Style::default()
            },
            ..ViewOptions::default()
        };
        let mut t = TableView::new(Arc::new(p), &opts);
        t.set_viewport(Viewport {
            width_px: 800,
            height_px: 400,
            scale: 1.0,
        });
        t
    }

    fn names(t: &TableView) -> Vec<String> {
        t.shown_rows()
            .map(|r| t.profile.names.get(r.name).to_string())
            .collect()
    }

    fn texts(t: &TableView) -> Vec<String> {
        let mut m = FixedMeasure { advance: 0.6 };
        let mut f = Frame::new(800, 400, 1.0);
        t.draw(&mut f, &mut m, Purpose::Window);
        f.text.iter().map(|x| x.text.to_string()).collect()
    }

    const TEXT: &str = "main;work;leaf 6\nmain;work 2\nmain;idle 1\nmain;work;work 3\n";

    #[test]
    fn header_clicks_sort_and_turn_around() {
        let mut t = table(TEXT);
        assert_eq!(
            names(&t),
            ["leaf", "work", "idle", "main"],
            "self, largest first"
        );
        let g = t.geometry(1.0);
        let header_y = g.header_top + 2.0;
        let cols = t.columns(&g);
        let x_of = |c: Column| cols.iter().find(|x| x.0 == c).map(|x| x.1 + 5.0).unwrap();
        t.release(x_of(Column::Total), header_y, true, 0.0);
        assert_eq!(t.sorted_by(), (Column::Total, true));
        assert_eq!(names(&t), ["main", "work", "leaf", "idle"]);
        t.release(x_of(Column::Total), header_y, true, 0.0);
        assert_eq!(
            names(&t),
            ["idle", "leaf", "work", "main"],
            "again: ascending"
        );
        t.release(x_of(Column::Name), header_y, true, 0.0);
        assert_eq!(names(&t), ["idle", "leaf", "main", "work"], "names A to Z");
        // A drag is not a click.
        t.release(x_of(Column::Nodes), header_y, false, 0.0);
        assert_eq!(t.sorted_by().0, Column::Name);
        // The header shows the sort.
        assert!(texts(&t).contains(&"Function ▲".to_string()));
    }

    #[test]
    fn cells_hold_values_shares_and_nodes() {
        let t = table(TEXT);
        let r = t
            .shown_rows()
            .find(|r| t.profile.names.get(r.name) == "work")
            .unwrap();
        assert_eq!(t.cell(r, Column::SelfTicks), "5 samples");
        assert_eq!(t.cell(r, Column::Total), "11 samples");
        assert_eq!(t.cell(r, Column::TotalShare), "91.67%");
        assert_eq!(t.cell(r, Column::Nodes), "2");
        let drawn = texts(&t);
        assert!(drawn.contains(&"11 samples".to_string()), "{drawn:?}");
    }

    #[test]
    fn only_rows_in_view_are_drawn_and_keys_move_the_selection() {
        let mut text = String::new();
        for i in 0..200_000 {
            text.push_str(&format!("main;f{i} {}\n", 1 + i % 7));
        }
        let mut t = table(&text);
        let g = t.geometry(1.0);
        let fit = g.rows_fit;
        assert!(fit > 10 && fit < 30, "{fit}");
        let mut m = FixedMeasure { advance: 0.6 };
        let mut f = Frame::new(800, 400, 1.0);
        t.draw(&mut f, &mut m, Purpose::Window);
        // A header of six cells and six cells a row in view, nothing else.
        assert!(f.text.len() <= 6 * (fit + 1), "{}", f.text.len());
        // Keys: Down selects the first row, End the last, PageUp goes a page back.
        t.act(Action::ScrollDown, 0.0);
        assert_eq!(t.selected_pos(), Some(0));
        t.act(Action::End, 0.0);
        assert_eq!(t.selected_pos(), Some(200_000));
        assert_eq!(t.first, 200_001 - fit, "scrolled to show it");
        t.act(Action::PageUp, 0.0);
        assert_eq!(t.selected_pos(), Some(200_000 - fit));
        t.act(Action::Home, 0.0);
        assert_eq!((t.selected_pos(), t.first), (Some(0), 0));
        t.act(Action::ScrollUp, 0.0);
        assert_eq!(t.selected_pos(), Some(0), "stays at the top");
        // The wheel scrolls without moving the selection.
        t.wheel(None, Wheel::Scroll { rows: -10.0 });
        assert_eq!(t.first, 10);
        t.wheel(
            None,
            Wheel::Zoom {
                steps: 1.0,
                speed: crate::view::state::ZoomSpeed::Normal,
                pan_px: 0.0,
            },
        );
        assert_eq!(t.first, 7);
        assert_eq!(t.selected_pos(), Some(0));
    }

    #[test]
    fn clicks_select_and_the_status_line_says_the_share() {
        let mut t = table(TEXT);
        let g = t.geometry(1.0);
        t.pointer(Some((g.left + 50.0, g.row_top(1) + 2.0)));
        assert_eq!(t.tooltip()[0], "work");
        t.release(g.left + 50.0, g.row_top(1) + 2.0, true, 0.0);
        assert_eq!(t.selected(), t.profile.names.find("work"));
        assert_eq!(
            t.status_hint(),
            "work: self 5 samples (41.67%), total 11 samples (91.67%)"
        );
        // The menu copies the name or the table as shown.
        assert_eq!(t.open_menu().len(), 8);
        assert_eq!(t.menu_action(0, 0.0), Reply::Copy("work".into()));
        // A transform from the menu (its fourth item: merge) and from a key.
        t.open_menu();
        assert_eq!(
            t.menu_action(3, 0.0),
            Reply::Transform(crate::model::transform::Transform::Merge("work".into()))
        );
        assert_eq!(
            t.act(Action::Transform(TransformKind::Drop), 0.0),
            Reply::Transform(crate::model::transform::Transform::Drop("work".into()))
        );
        // A double click on a row opens its sandwich.
        assert_eq!(
            t.double_click(g.left + 50.0, g.row_top(1) + 2.0, 0.0),
            Reply::Open(ViewKind::SANDWICH)
        );
        t.search("^(work|idle)$");
        t.pointer(Some((g.left + 50.0, g.row_top(0) + 2.0)));
        t.open_menu();
        let Reply::Copy(tsv) = t.menu_action(1, 0.0) else {
            panic!("a copy")
        };
        assert_eq!(
            tsv,
            "self\tself%\ttotal\ttotal%\tnodes\tfunction\n\
             5\t41.67%\t11\t91.67%\t2\twork\n\
             1\t8.33%\t1\t8.33%\t1\tidle\n"
        );
    }

    #[test]
    fn the_search_filters_rows() {
        let mut t = table(TEXT);
        t.search("l");
        assert_eq!(names(&t), ["leaf", "idle"]);
        assert_eq!(t.search_summary().unwrap(), "/l: 2 of 4 functions");
        t.search("nothing here");
        assert!(names(&t).is_empty());
        assert!(
            texts(&t)
                .iter()
                .any(|x| x == "no function matches /nothing here")
        );
        t.search("");
        assert_eq!(names(&t).len(), 4);
    }

    #[test]
    fn diffs_show_before_after_and_a_tinted_change() {
        let t = table("a;b 10 20\na;c 10 0\na;d 0 5\na 80 75\n");
        assert_eq!(t.sorted_by(), (Column::Change, true));
        assert_eq!(names(&t), ["b", "c", "d", "a"]);
        let cells: Vec<String> = t.shown_rows().map(|r| t.cell(r, Column::Change)).collect();
        assert_eq!(cells, ["+100.00%", "removed", "new", "+0.00%"]);
        let mut m = FixedMeasure { advance: 0.6 };
        let mut f = Frame::new(800, 400, 1.0);
        t.draw(&mut f, &mut m, Purpose::Export);
        let red = color::diff_color(100.0, color::diff_palette(false));
        assert!(
            f.under.iter().any(|r| r.color == rgba_f(red)),
            "b's change is drawn in the gradient's red"
        );
        assert_eq!(t.heading(Purpose::Export).legend, Some(false));
    }
}
