//! Side by side (Pyroscope's comparison view): the two sides of a differential profile as
//! two flame graphs, "before" at the left and "after" at the right, each in its own units
//! and colors, zoomed and hovered in step: a click that zooms one side zooms the other to
//! the same call path, and the function under the pointer is lit on the other side. The
//! tooltip gives both sides and the change.
//!
//! Each side is a [`FlameView`] of a profile made from the diff's tree with one side's
//! values, node for node ([`side_profiles`]): a node id means the same call path on both.

use super::draw::{BarSource, Frame, Measure, Rect, rgba};
use super::flame::{FlameView, diff_lines};
use super::input::{Action, Wheel};
use super::interface::{
    Purpose, Reply, View, ViewEntry, ViewKind, ViewMemo, ViewOptions, Viewport, profile_of,
};
use super::shell::Heading;
use crate::geometry::Style;
use crate::model::tree::{CallTreeBuilder, ChildOrder, TotalOverflow};
use crate::model::{Document, NodeId, Profile};
use std::sync::Arc;

impl ViewKind {
    /// The two sides of a diff side by side.
    pub const SIDE_BY_SIDE: ViewKind = ViewKind("side by side");
}

/// Side by side in the window's list of views: it shows differential profiles.
pub const ENTRY: ViewEntry = ViewEntry {
    kind: ViewKind::SIDE_BY_SIDE,
    shows: |doc| matches!(doc, Document::Profile(p) if p.is_diff()),
    open: |doc, opts| {
        let p = profile_of(doc);
        Box::new(SideBySideView::new(p, opts))
    },
};

/// The "before" and "after" sides of `diff` as profiles of their own, with the same node
/// ids as `diff` (a side's missing paths are nodes of total 0).
pub fn side_profiles(diff: &Profile) -> Result<(Profile, Profile), TotalOverflow> {
    let t = &diff.tree;
    let side = |left: bool| -> Result<Profile, TotalOverflow> {
        let mut names = diff.names.clone();
        let mut b = CallTreeBuilder::new(&mut names, false);
        for n in 1..t.len() as NodeId {
            // Parents have smaller ids: each push gets id `n`.
            let id = b.push_child(t.parent(n), t.name(n));
            debug_assert_eq!(id, n);
        }
        for n in 0..t.len() as NodeId {
            let l = t.left_self(n);
            let v = if left { l } else { t.self_ticks(n) - l };
            if v > 0 {
                b.add_self(n, v)?;
            }
        }
        let tree = b.finish(&names, ChildOrder::ByName)?;
        let mut p = diff.derived(names, tree);
        p.meta.diff_ticks = None;
        p.meta.comparison = None;
        Ok(p)
    };
    Ok((side(true)?, side(false)?))
}

/// Which side the pointer is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Before,
    After,
}

/// The two sides of a diff, each a flame graph.
pub struct SideBySideView {
    diff: Arc<Profile>,
    sides: [FlameView; 2],
    style: Style,
    vp: Option<Viewport>,
    pointer: Option<(f32, f32)>,
    pressed: Option<Side>,
    query: String,
}

impl SideBySideView {
    /// The sides of `diff` (a differential profile).
    pub fn new(diff: Arc<Profile>, opts: &ViewOptions) -> SideBySideView {
        let (before, after) = side_profiles(&diff).unwrap_or_else(|_| {
            // The diff's totals fit: each side's, smaller, fit too.
            unreachable!("a side's totals are at most the diff's")
        });
        let mut o = opts.clone();
        o.color = None;
        let mut sides = [
            FlameView::new(Arc::new(before), &o),
            FlameView::new(Arc::new(after), &o),
        ];
        // Each side's own title line is the heading's: the flame graphs start under it.
        for s in &mut sides {
            s.set_title_height(opts.style.title_height + 16.0);
        }
        SideBySideView {
            diff,
            sides,
            style: opts.style,
            vp: None,
            pointer: None,
            pressed: None,
            query: String::new(),
        }
    }

    /// The flame graph of `before` (0) or `after` (1).
    pub fn side(&self, i: usize) -> &FlameView {
        &self.sides[i]
    }

    fn half(vp: Viewport) -> f32 {
        (vp.width_px as f32 / 2.0).round()
    }

    fn side_at(&self, x: f32) -> Side {
        match self.vp {
            Some(vp) if x >= Self::half(vp) => Side::After,
            _ => Side::Before,
        }
    }

    fn index(s: Side) -> usize {
        match s {
            Side::Before => 0,
            Side::After => 1,
        }
    }

    /// `at` in side `s`'s own pixels.
    fn local(&self, s: Side, at: (f32, f32)) -> (f32, f32) {
        match (s, self.vp) {
            (Side::After, Some(vp)) => (at.0 - Self::half(vp), at.1),
            _ => at,
        }
    }

    /// After side `from` changed its zoom: the other side shows the same call path.
    fn sync_zoom(&mut self, from: Side, now_s: f64) {
        let i = Self::index(from);
        let memo = self.sides[i].memo();
        let other = &mut self.sides[1 - i];
        if memo.zoom_path.is_none() && memo.fraction.is_none() && memo.focus_path.is_none() {
            other.act(Action::Reset, now_s);
        } else {
            other.restore(
                &ViewMemo {
                    color: None,
                    fit: None,
                    ..memo
                },
                now_s,
            );
        }
    }

    /// The function under the pointer lit on the other side (the search again when none).
    fn sync_hover(&mut self) {
        let side = self.pointer.map(|(x, _)| self.side_at(x));
        for (k, s) in [Side::Before, Side::After].into_iter().enumerate() {
            let lit = match side {
                Some(p) if p != s => self.sides[Self::index(p)].hovered_name(),
                _ => None,
            };
            match lit {
                Some(f) => self.sides[k].highlight(Some(f)),
                None => self.sides[k].search(&self.query),
            }
        }
    }
}

impl View for SideBySideView {
    fn kind(&self) -> ViewKind {
        ViewKind::SIDE_BY_SIDE
    }

    fn document(&self) -> Document {
        Document::Profile(self.diff.clone())
    }

    fn viewport(&self) -> Option<Viewport> {
        self.vp
    }

    fn set_viewport(&mut self, vp: Viewport) {
        self.vp = Some(vp);
        let half = Self::half(vp) as u32;
        self.sides[0].set_viewport(Viewport {
            width_px: half.max(1),
            ..vp
        });
        self.sides[1].set_viewport(Viewport {
            width_px: vp.width_px.saturating_sub(half).max(1),
            ..vp
        });
    }

    fn style(&self) -> Style {
        self.style
    }

    fn content_top(&self) -> f32 {
        self.sides[0].content_top()
    }

    fn heading(&self, purpose: Purpose) -> Heading {
        let d = &*self.diff;
        let (l, r) = d.diff_totals().unwrap_or((0, 0));
        let v = &d.values;
        let mut subtitle = format!(
            "side by side · before {} (left) · after {} (right)",
            v.format_long(l),
            v.format_long(r)
        );
        if let Some(c) = &d.meta.comparison
            && c.options.normalize
        {
            subtitle.push_str(" · before scaled to after's total");
        }
        Heading {
            title: self.sides[1].heading(purpose).title,
            subtitle,
            legend: None,
        }
    }

    fn draw<'a>(&'a self, frame: &mut Frame<'a>, m: &mut dyn Measure, purpose: Purpose) {
        let vp = self.vp.unwrap_or(Viewport::UNIT).scaled(purpose.factor());
        let half = Self::half(vp);
        let mut left = Frame::new(half as u32, vp.height_px, vp.scale);
        self.sides[0].draw(&mut left, m, purpose);
        frame.append_shifted(left, 0.0);
        let mut right = Frame::new(
            vp.width_px.saturating_sub(half as u32),
            vp.height_px,
            vp.scale,
        );
        self.sides[1].draw(&mut right, m, purpose);
        frame.append_shifted(right, half);
        let top = self.content_top() * purpose.factor();
        frame.over.push(Rect::new(
            [
                half - vp.scale.round(),
                top,
                vp.scale.round(),
                vp.height_px as f32 - top,
            ],
            rgba([200, 200, 200], 1.0),
        ));
        // Each side's name and total over its graph.
        let small = (11.0 * vp.scale).round();
        let y = top - (16.0 * vp.scale).round();
        let (l, r) = self.diff.diff_totals().unwrap_or((0, 0));
        for (i, (label, total)) in [("before", l), ("after", r)].into_iter().enumerate() {
            frame.text.push(super::draw::Text {
                text: format!("{label}: {}", self.diff.values.format_long(total)).into(),
                size: small,
                x: (i as f32 * half + 8.0 * vp.scale).round(),
                y,
                clip: [0.0, 0.0, vp.width_px as f32, vp.height_px as f32],
                color: super::draw::MUTED_COLOR,
            });
        }
    }

    fn tick(&mut self, now_s: f64) -> bool {
        let a = self.sides[0].tick(now_s);
        let b = self.sides[1].tick(now_s);
        a || b
    }

    fn pointer(&mut self, at: Option<(f32, f32)>) -> bool {
        self.pointer = at;
        let side = at.map(|(x, _)| self.side_at(x));
        let mut changed = false;
        for s in [Side::Before, Side::After] {
            let local = at.filter(|_| side == Some(s)).map(|a| self.local(s, a));
            changed |= self.sides[Self::index(s)].pointer(local);
        }
        if changed {
            self.sync_hover();
        }
        changed
    }

    fn press(&mut self, x: f32, y: f32) {
        let s = self.side_at(x);
        self.pressed = Some(s);
        let (lx, ly) = self.local(s, (x, y));
        self.sides[Self::index(s)].press(lx, ly);
    }

    fn drag(&mut self, x: f32, y: f32, dx: f32, dy: f32) {
        let s = self.pressed.unwrap_or_else(|| self.side_at(x));
        let (lx, ly) = self.local(s, (x, y));
        self.sides[Self::index(s)].drag(lx, ly, dx, dy);
    }

    fn release(&mut self, x: f32, y: f32, click: bool, now_s: f64) {
        let s = self.pressed.take().unwrap_or_else(|| self.side_at(x));
        let (lx, ly) = self.local(s, (x, y));
        self.sides[Self::index(s)].release(lx, ly, click, now_s);
        if click {
            self.sync_zoom(s, now_s);
        }
    }

    fn wheel(&mut self, at: Option<(f32, f32)>, w: Wheel) {
        let s = at.map_or(Side::After, |(x, _)| self.side_at(x));
        let local = at.map(|a| self.local(s, a));
        self.sides[Self::index(s)].wheel(local, w);
    }

    fn act(&mut self, action: Action, now_s: f64) -> Reply {
        let s = self.pointer.map_or(Side::After, |(x, _)| self.side_at(x));
        let reply = self.sides[Self::index(s)].act(action, now_s);
        if matches!(
            action,
            Action::Escape | Action::Back | Action::Reset | Action::ZoomToSelection
        ) {
            self.sync_zoom(s, now_s);
        }
        reply
    }

    fn search(&mut self, query: &str) {
        self.query = query.to_string();
        for s in &mut self.sides {
            s.search(query);
        }
    }

    fn search_summary(&self) -> Option<String> {
        // Not the lighting of the hovered function: only a search the user typed.
        if self.query.is_empty() {
            return None;
        }
        self.sides[1].search_summary()
    }

    fn next_match(&mut self, backwards: bool, now_s: f64) {
        self.sides[1].next_match(backwards, now_s);
        self.sync_zoom(Side::After, now_s);
    }

    fn status_hint(&self) -> String {
        "before at the left, after at the right, zoomed and hovered in step · click: zoom both · wheel: zoom a side · Escape: zoom out · 1: the diff".to_string()
    }

    fn tooltip(&self) -> Vec<String> {
        let Some((x, _)) = self.pointer else {
            return Vec::new();
        };
        let s = self.side_at(x);
        let Some(n) = self.sides[Self::index(s)].hovered_node() else {
            return Vec::new();
        };
        let d = &*self.diff;
        let mut lines = vec![d.names.get(d.tree.name(n)).to_string()];
        if let Some((lt, rt)) = d.diff_ticks() {
            lines.extend(diff_lines(d, n, lt, rt));
        }
        lines
    }

    fn set_note(&mut self, note: Option<&'static str>) {
        for s in &mut self.sides {
            s.set_note(note);
        }
    }

    fn set_labels(&mut self, on: bool) {
        for s in &mut self.sides {
            s.set_labels(on);
        }
    }

    fn bar_sources(&self) -> Vec<BarSource<'_>> {
        let mut v = self.sides[0].bar_sources();
        v.extend(self.sides[1].bar_sources());
        v
    }

    fn rows_shown(&self) -> (usize, usize) {
        let (a, b) = (self.sides[0].rows_shown(), self.sides[1].rows_shown());
        (a.0.max(b.0), a.1.max(b.1))
    }

    fn memo(&self) -> ViewMemo {
        ViewMemo {
            color: None,
            ..self.sides[1].memo()
        }
    }

    fn restore(&mut self, memo: &ViewMemo, now_s: f64) {
        let m = ViewMemo {
            color: None,
            ..memo.clone()
        };
        for s in &mut self.sides {
            s.restore(&m, now_s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::compare::{CompareOptions, diff_profiles};

    fn diff() -> Arc<Profile> {
        let load = |n, t: &str| crate::import::folded::parse(n, t.as_bytes()).unwrap();
        let a = load("a", "main;f;g 3\nmain;h 2\n");
        let b = load("b", "main;f;g 1\nmain;f;k 4\nmain;h 2\n");
        Arc::new(diff_profiles(&a, &b, CompareOptions::default()).unwrap())
    }

    #[test]
    fn the_sides_keep_the_diffs_node_ids() {
        let d = diff();
        let (before, after) = side_profiles(&d).unwrap();
        assert_eq!(before.tree.len(), d.tree.len());
        for n in 0..d.tree.len() as NodeId {
            assert_eq!(before.tree.name(n), d.tree.name(n));
            assert_eq!(before.tree.total(n), d.tree.left_total(n));
            assert_eq!(after.tree.total(n), d.tree.total(n) - d.tree.left_total(n));
        }
        assert_eq!(
            (before.tree.grand_total(), after.tree.grand_total()),
            (5, 7)
        );
    }

    #[test]
    fn a_click_zooms_both_sides_to_the_same_path() {
        let d = diff();
        let mut v = SideBySideView::new(d.clone(), &ViewOptions::default());
        v.set_viewport(Viewport::logical(1000, 400, 1.0));
        // Find `f` on the left side and click it.
        let left = &v.sides[0];
        let f = (1..d.tree.len() as NodeId)
            .find(|&n| d.names.get(d.tree.name(n)) == "f")
            .unwrap();
        let g = left.geometry(1.0);
        let layout = left.layout();
        let (row, idx) = layout
            .rows
            .iter()
            .enumerate()
            .find_map(|(r, row)| row.node.iter().position(|&n| n == f).map(|i| (r, i)))
            .unwrap();
        let cam = left.state().camera;
        let x =
            g.graph.x + cam.x_of((layout.rows[row].x0[idx] + layout.rows[row].x1[idx]) / 2) as f32;
        let y = g.row_top(row) + 2.0;
        v.pointer(Some((x, y)));
        assert_eq!(v.sides[0].hovered_node(), Some(f));
        // The tooltip gives both sides and the change.
        let tip = v.tooltip().join("\n");
        assert!(
            tip.contains("before: 3") && tip.contains("after: 5"),
            "{tip}"
        );
        v.press(x, y);
        v.release(x, y, true, 0.0);
        v.tick(10.0);
        let zoomed = |s: &FlameView| s.memo().zoom_path;
        assert_eq!(
            zoomed(&v.sides[0]),
            Some(vec!["main".to_string(), "f".to_string()])
        );
        assert_eq!(zoomed(&v.sides[1]), zoomed(&v.sides[0]));
        // Escape on one side zooms both out.
        v.act(Action::Reset, 20.0);
        v.tick(30.0);
        assert_eq!(zoomed(&v.sides[1]), None);
    }
}
