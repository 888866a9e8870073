//! Both (Pyroscope's view of that name): the table of functions at the left and the flame
//! graph at the right, linked. Selecting a row lights every bar of its function in the
//! flame graph (as a search match is lit) and gives its share on the status line; the
//! search filters the rows and lights the bars while no row is selected.
//!
//! Each side is a whole view ([`TableView`], [`FlameView`]) given its part of the
//! viewport; the flame graph draws into a frame of its own width that lands beside the
//! table ([`Frame::append_shifted`]), and gets pointer positions moved the same way.

use super::draw::{BarSource, Frame, Measure, Rect, rgba};
use super::flame::FlameView;
use super::input::{Action, Wheel};
use super::interface::{
    Purpose, Reply, View, ViewEntry, ViewKind, ViewMemo, ViewOptions, Viewport, profile_of,
    shows_profiles,
};
use super::shell::Heading;
use super::table::TableView;
use crate::geometry::Style;
use crate::model::{Document, NameId, Profile};
use std::sync::Arc;

impl ViewKind {
    /// The table and the flame graph side by side.
    pub const BOTH: ViewKind = ViewKind("both");
}

/// Both in the window's list of views: it shows profiles.
pub const ENTRY: ViewEntry = ViewEntry {
    kind: ViewKind::BOTH,
    shows: shows_profiles,
    open: |doc, opts| {
        let p = profile_of(doc);
        Box::new(BothView::new(p, opts))
    },
};

/// Which side the pointer is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Table,
    Flame,
}

/// The table beside the flame graph.
pub struct BothView {
    profile: Arc<Profile>,
    table: TableView,
    flame: FlameView,
    style: Style,
    vp: Option<Viewport>,
    pointer: Option<(f32, f32)>,
    /// The side a press started on (a drag stays there).
    pressed: Option<Side>,
    /// The function lit in the flame graph (the table's selection).
    lit: Option<NameId>,
    query: String,
}

impl BothView {
    /// The table and flame graph of `profile`.
    pub fn new(profile: Arc<Profile>, opts: &ViewOptions) -> BothView {
        BothView {
            table: TableView::new(profile.clone(), opts),
            flame: FlameView::new(profile.clone(), opts),
            profile,
            style: opts.style,
            vp: None,
            pointer: None,
            pressed: None,
            lit: None,
            query: String::new(),
        }
    }

    /// Use the color-blind diff palette.
    pub fn set_colorblind(&mut self, on: bool) {
        self.table.set_colorblind(on);
        self.flame.set_colorblind(on);
    }

    /// The table side.
    pub fn table(&self) -> &TableView {
        &self.table
    }

    /// The flame graph side.
    pub fn flame(&self) -> &FlameView {
        &self.flame
    }

    /// Where the flame graph starts, physical pixels: 45 % of the width for the table,
    /// at least 320 logical pixels of it while the flame graph keeps as much.
    pub fn split(&self, vp: Viewport) -> f32 {
        let w = vp.width_px as f32;
        let min = 320.0 * vp.scale;
        (w * 0.45).max(min.min(w / 2.0)).round()
    }

    fn side_at(&self, x: f32) -> Side {
        match self.vp {
            Some(vp) if x >= self.split(vp) => Side::Flame,
            _ => Side::Table,
        }
    }

    fn pointed(&self) -> Side {
        self.pointer.map_or(Side::Flame, |(x, _)| self.side_at(x))
    }

    /// `at` in the flame graph's own pixels.
    fn in_flame(&self, at: (f32, f32)) -> (f32, f32) {
        let dx = self.vp.map_or(0.0, |vp| self.split(vp));
        (at.0 - dx, at.1)
    }

    /// Lights the table's selected function in the flame graph (or the search, without
    /// one) when that changed.
    fn sync_highlight(&mut self) {
        let sel = self.table.selected();
        if sel == self.lit {
            return;
        }
        self.lit = sel;
        match sel {
            Some(f) => self.flame.highlight(Some(f)),
            None => self.flame.search(&self.query),
        }
    }
}

impl View for BothView {
    fn kind(&self) -> ViewKind {
        ViewKind::BOTH
    }

    fn document(&self) -> Document {
        Document::Profile(self.profile.clone())
    }

    fn viewport(&self) -> Option<Viewport> {
        self.vp
    }

    fn set_viewport(&mut self, vp: Viewport) {
        self.vp = Some(vp);
        let split = self.split(vp) as u32;
        self.table.set_viewport(Viewport {
            width_px: split.max(1),
            ..vp
        });
        self.flame.set_viewport(Viewport {
            width_px: vp.width_px.saturating_sub(split).max(1),
            ..vp
        });
    }

    fn style(&self) -> Style {
        self.style
    }

    fn heading(&self, purpose: Purpose) -> Heading {
        let flame = self.flame.heading(purpose);
        let functions = self.table.function_count();
        Heading {
            subtitle: format!(
                "table and flame graph · {functions} functions · {}",
                flame.subtitle
            ),
            ..flame
        }
    }

    fn draw<'a>(&'a self, frame: &mut Frame<'a>, m: &mut dyn Measure, purpose: Purpose) {
        let vp = self.vp.unwrap_or(Viewport::UNIT).scaled(purpose.factor());
        let split = self.split(vp);
        self.table.draw(frame, m, purpose);
        let mut right = Frame::new(
            vp.width_px.saturating_sub(split as u32),
            vp.height_px,
            vp.scale,
        );
        self.flame.draw(&mut right, m, purpose);
        frame.append_shifted(right, split);
        let top = self.content_top() * purpose.factor();
        frame.over.push(Rect::new(
            [
                split - vp.scale.round(),
                top,
                vp.scale.round(),
                vp.height_px as f32 - top,
            ],
            rgba([200, 200, 200], 1.0),
        ));
    }

    fn tick(&mut self, now_s: f64) -> bool {
        self.flame.tick(now_s)
    }

    fn pointer(&mut self, at: Option<(f32, f32)>) -> bool {
        self.pointer = at;
        let side = at.map(|(x, _)| self.side_at(x));
        let t = self.table.pointer(at.filter(|_| side == Some(Side::Table)));
        let f_at = at
            .filter(|_| side == Some(Side::Flame))
            .map(|a| self.in_flame(a));
        let f = self.flame.pointer(f_at);
        t || f
    }

    fn press(&mut self, x: f32, y: f32) {
        let side = self.side_at(x);
        self.pressed = Some(side);
        match side {
            Side::Table => self.table.press(x, y),
            Side::Flame => {
                let (fx, fy) = self.in_flame((x, y));
                self.flame.press(fx, fy);
            }
        }
    }

    fn drag(&mut self, x: f32, y: f32, dx: f32, dy: f32) {
        match self.pressed.unwrap_or_else(|| self.side_at(x)) {
            Side::Table => self.table.drag(x, y, dx, dy),
            Side::Flame => {
                let (fx, fy) = self.in_flame((x, y));
                self.flame.drag(fx, fy, dx, dy);
            }
        }
    }

    fn release(&mut self, x: f32, y: f32, click: bool, now_s: f64) {
        match self.pressed.take().unwrap_or_else(|| self.side_at(x)) {
            Side::Table => self.table.release(x, y, click, now_s),
            Side::Flame => {
                let (fx, fy) = self.in_flame((x, y));
                self.flame.release(fx, fy, click, now_s);
            }
        }
        self.sync_highlight();
    }

    fn double_click(&mut self, x: f32, y: f32, now_s: f64) -> Reply {
        match self.side_at(x) {
            Side::Table => self.table.double_click(x, y, now_s),
            Side::Flame => Reply::Ignored,
        }
    }

    fn wheel(&mut self, at: Option<(f32, f32)>, w: Wheel) {
        match at.map(|(x, _)| self.side_at(x)) {
            Some(Side::Table) => self.table.wheel(at, w),
            _ => {
                let f_at = at.map(|a| self.in_flame(a));
                self.flame.wheel(f_at, w);
            }
        }
    }

    fn pinch(&mut self, at: Option<(f32, f32)>, factor: f64) {
        let f_at = at.map(|a| self.in_flame(a));
        self.flame.pinch(f_at, factor);
    }

    fn act(&mut self, action: Action, now_s: f64) -> Reply {
        // The selection keys move the table's selection; the rest is the flame graph's,
        // but a transform is of the bar under the pointer, else of the selected row.
        let table_first = matches!(
            action,
            Action::ScrollUp
                | Action::ScrollDown
                | Action::PageUp
                | Action::PageDown
                | Action::Home
                | Action::End
        ) || (matches!(action, Action::Transform(_))
            && self.flame.hovered_name().is_none())
            || (matches!(action, Action::ZoomToSelection | Action::Escape)
                && self.table.selected().is_some());
        let reply = if table_first {
            self.table.act(action, now_s)
        } else {
            self.flame.act(action, now_s)
        };
        self.sync_highlight();
        reply
    }

    fn open_menu(&mut self) -> Vec<String> {
        match self.pointed() {
            Side::Table => self.table.open_menu(),
            Side::Flame => self.flame.open_menu(),
        }
    }

    fn menu_action(&mut self, item: usize, now_s: f64) -> Reply {
        let reply = match self.pointed() {
            Side::Table => self.table.menu_action(item, now_s),
            Side::Flame => self.flame.menu_action(item, now_s),
        };
        self.sync_highlight();
        reply
    }

    fn search(&mut self, query: &str) {
        self.query = query.to_string();
        self.table.search(query);
        if self.lit.is_none() {
            self.flame.search(query);
        }
        self.sync_highlight();
    }

    fn search_summary(&self) -> Option<String> {
        self.table.search_summary()
    }

    fn next_match(&mut self, backwards: bool, now_s: f64) {
        self.flame.next_match(backwards, now_s);
    }

    fn status_hint(&self) -> String {
        match (self.table.selected(), self.pointed()) {
            (Some(_), _) | (None, Side::Table) => self.table.status_hint(),
            (None, Side::Flame) => self.flame.status_hint(),
        }
    }

    fn tooltip(&self) -> Vec<String> {
        match self.pointed() {
            Side::Table => self.table.tooltip(),
            Side::Flame => self.flame.tooltip(),
        }
    }

    fn set_note(&mut self, note: Option<&'static str>) {
        self.table.set_note(note);
        self.flame.set_note(note);
    }

    fn set_labels(&mut self, on: bool) {
        self.flame.set_labels(on);
    }

    fn bar_sources(&self) -> Vec<BarSource<'_>> {
        self.flame.bar_sources()
    }

    fn rows_shown(&self) -> (usize, usize) {
        self.flame.rows_shown()
    }

    fn memo(&self) -> ViewMemo {
        let mut m = self.flame.memo();
        if let Some(f) = self.table.selected() {
            m.function = Some(self.profile.names.get(f).to_string());
        }
        m
    }

    fn restore(&mut self, memo: &ViewMemo, now_s: f64) {
        self.flame.restore(memo, now_s);
        self.table.restore(memo, now_s);
        self.sync_highlight();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::draw::FixedMeasure;

    const TEXT: &str = "main;a;f 3\nmain;b;f 2\nmain;c 4\n";

    fn both() -> BothView {
        let p = crate::import::folded::parse("t", TEXT.as_bytes()).unwrap();
        let mut v = BothView::new(Arc::new(p), &ViewOptions::default());
        v.set_viewport(Viewport {
            width_px: 1000,
            height_px: 500,
            scale: 1.0,
        });
        v
    }

    #[test]
    fn a_selected_row_lights_its_bars_in_the_flame_graph() {
        let mut v = both();
        // The table's rows by self: c (4), f (5 self)... select with the keys.
        v.act(Action::Home, 0.0);
        let f = v.table().selected().unwrap();
        let name = v.profile.names.get(f).to_string();
        let flags = v.flame.search_summary().expect("lit");
        assert!(flags.contains(&name), "{flags}");
        let mut frame = Frame::new(1000, 500, 1.0);
        v.draw(
            &mut frame,
            &mut FixedMeasure { advance: 0.6 },
            Purpose::Window,
        );
        let lit = frame.bars[0].search.as_ref().expect("the bars are lit");
        for (id, n) in v.profile.names.iter() {
            assert_eq!(lit.flags[id as usize], n == name, "{n}");
        }
        // The flame graph is drawn right of the split; the table left of it.
        let split = v.split(v.viewport().unwrap());
        assert!(frame.bars[0].clip.x >= split);
        assert!(frame.text.iter().any(|t| t.x < split && t.text == name));
        // Escape deselects: the light goes.
        v.act(Action::Escape, 0.0);
        assert!(v.table().selected().is_none());
        assert!(v.flame.search_summary().is_none());
    }

    #[test]
    fn the_pointer_reaches_each_side_in_its_own_pixels() {
        let mut v = both();
        let split = v.split(v.viewport().unwrap());
        let g = v.flame().geometry(1.0);
        // The root bar, in the flame graph's own coordinates, moved right by the split.
        let root_y = g.row_top(0) + 2.0;
        v.pointer(Some((split + g.graph.x + 5.0, root_y)));
        assert_eq!(v.tooltip()[0], "total");
        let tg = v.table().geometry(1.0);
        v.pointer(Some((tg.left + 20.0, tg.row_top(0) + 2.0)));
        let first = v.table().shown_rows().next().unwrap().name;
        assert_eq!(v.tooltip()[0], v.profile.names.get(first));
        // A click on a row selects it and lights it; a double click opens its sandwich.
        v.press(tg.left + 20.0, tg.row_top(0) + 2.0);
        v.release(tg.left + 20.0, tg.row_top(0) + 2.0, true, 0.0);
        assert_eq!(v.table().selected(), Some(first));
        assert!(v.flame.search_summary().is_some());
        assert_eq!(
            v.double_click(tg.left + 20.0, tg.row_top(0) + 2.0, 0.0),
            Reply::Open(ViewKind::SANDWICH)
        );
    }
}
