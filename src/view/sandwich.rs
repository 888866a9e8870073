//! The sandwich view (speedscope, Pyroscope): one function in the middle, its callers
//! above (every path from a root to it, merged, drawn as a flame graph ending in the
//! function) and its callees below (what it calls, merged over all its occurrences, an
//! icicle), both as wide as the function's total with recursion counted once
//! ([`crate::model::functions::sandwich`]).
//!
//! Each half is a [`FlameView`] of its own laid out in its part of the frame: hover,
//! wheel zoom, drag, search and labels work in both. A click on a function in either half
//! makes it the centre; Backspace goes back to the previous one. The function comes from
//! the view the window switches from (the table's selected row, the flame graph's zoomed
//! bar, a menu's "Sandwich of this function"), else the one with the most self time.

use super::draw::{Frame, Measure, Rect, rgba};
use super::flame::FlameView;
use super::input::{Action, Wheel};
use super::interface::{
    Purpose, Reply, View, ViewEntry, ViewKind, ViewMemo, ViewOptions, Viewport, profile_of,
    shows_profiles,
};
use super::shell::Heading;
use crate::geometry::{Orientation, Style};
use crate::model::functions::{SandwichHalf, function_table, sandwich};
use crate::model::transform::Transform;
use crate::model::{Document, NameId, Profile};
use std::sync::Arc;

impl ViewKind {
    /// One function with its callers and callees.
    pub const SANDWICH: ViewKind = ViewKind("sandwich");
}

/// The sandwich in the window's list of views: it shows profiles.
pub const ENTRY: ViewEntry = ViewEntry {
    kind: ViewKind::SANDWICH,
    shows: shows_profiles,
    open: |doc, opts| {
        let p = profile_of(doc);
        Box::new(SandwichView::new(p, None, opts))
    },
};

/// Which half the pointer is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Half {
    Callers,
    Callees,
}

/// A function between its callers and its callees.
pub struct SandwichView {
    profile: Arc<Profile>,
    function: NameId,
    /// Functions centred before, for Backspace.
    history: Vec<NameId>,
    callers: FlameView,
    callees: FlameView,
    opts: ViewOptions,
    vp: Option<Viewport>,
    pointer: Option<(f32, f32)>,
    query: String,
    note: Option<&'static str>,
}

impl SandwichView {
    /// The sandwich of `function` (`None`: the function with the most self time).
    pub fn new(profile: Arc<Profile>, function: Option<NameId>, opts: &ViewOptions) -> Self {
        let function = function.unwrap_or_else(|| heaviest_self(&profile));
        let (callers, callees) = halves(&profile, function, opts);
        SandwichView {
            profile,
            function,
            history: Vec::new(),
            callers,
            callees,
            opts: opts.clone(),
            vp: None,
            pointer: None,
            query: String::new(),
            note: None,
        }
    }

    /// The function in the middle.
    pub fn function(&self) -> NameId {
        self.function
    }

    /// The callers' half.
    pub fn callers(&self) -> &FlameView {
        &self.callers
    }

    /// The callees' half.
    pub fn callees(&self) -> &FlameView {
        &self.callees
    }

    /// Puts `f` in the middle (remembering the current one when `remember`).
    pub fn centre(&mut self, f: NameId, remember: bool) {
        if f == self.function {
            return;
        }
        if remember {
            self.history.push(self.function);
        }
        self.function = f;
        let (a, b) = halves(&self.profile, f, &self.opts);
        self.callers = a;
        self.callees = b;
        if let Some(vp) = self.vp {
            self.place(vp);
        }
        if !self.query.is_empty() {
            self.callers.search(&self.query);
            self.callees.search(&self.query);
        }
    }

    /// The boundary between the halves, physical pixels, for viewport `vp`.
    fn middle(&self, vp: Viewport) -> f32 {
        let s = self.opts.style;
        let top = (s.title_height * vp.scale).round();
        let bottom = vp.height_px as f32 - (s.status_height * vp.scale).round();
        (top + (bottom - top) / 2.0).round()
    }

    /// Gives each half its part of `vp`: the callers from the title band to the middle,
    /// the callees from the middle to the status line.
    fn place(&mut self, vp: Viewport) {
        let mid = self.middle(vp);
        self.callers.set_viewport(Viewport {
            width_px: vp.width_px,
            height_px: mid as u32,
            scale: vp.scale,
        });
        self.callees.set_viewport(vp);
        self.callees.set_title_height(mid / vp.scale);
    }

    fn half_at(&self, y: f32) -> Half {
        match self.vp {
            Some(vp) if y < self.middle(vp) => Half::Callers,
            _ => Half::Callees,
        }
    }

    fn half_mut(&mut self, h: Half) -> &mut FlameView {
        match h {
            Half::Callers => &mut self.callers,
            Half::Callees => &mut self.callees,
        }
    }

    /// The half under the pointer (the callees without one).
    fn pointed(&self) -> Half {
        self.pointer.map_or(Half::Callees, |(_, y)| self.half_at(y))
    }

    fn name(&self, f: NameId) -> &str {
        self.profile.names.get(f)
    }
}

/// The function with the most self time (the table's first row).
fn heaviest_self(p: &Profile) -> NameId {
    function_table(&p.tree)
        .iter()
        .max_by_key(|r| (r.self_ticks, std::cmp::Reverse(r.name)))
        .map_or(p.tree.name(p.tree.root()), |r| r.name)
}

/// A half's reply, except a focus on a call path: a half's paths start at the function or
/// end in it, they are not paths of the profile.
fn whole_profile_paths_only(reply: Reply) -> Reply {
    match reply {
        Reply::Transform(Transform::FocusSubtree(_)) => Reply::Say(
            "focus on a subtree from the flame graph: the sandwich's call paths are not the profile's"
                .into(),
        ),
        r => r,
    }
}

/// The two halves of `f`'s sandwich as flame views.
fn halves(p: &Profile, f: NameId, opts: &ViewOptions) -> (FlameView, FlameView) {
    let half = |h: SandwichHalf, orientation: Orientation, status: bool| {
        let profile = sandwich(p, f, h)
            .ok()
            .flatten()
            .unwrap_or_else(|| empty_profile(p, f));
        let style = Style {
            status_height: if status {
                opts.style.status_height
            } else {
                0.0
            },
            ..opts.style
        };
        FlameView::new(
            Arc::new(profile),
            &ViewOptions {
                orientation,
                style,
                ..opts.clone()
            },
        )
    };
    (
        half(SandwichHalf::Callers, Orientation::Flame, false),
        half(SandwichHalf::Callees, Orientation::Icicle, true),
    )
}

/// A profile of only `f` (a function that does not occur, or whose sums overflow).
fn empty_profile(p: &Profile, f: NameId) -> Profile {
    let mut names = p.names.clone();
    let mut b = crate::model::CallTreeBuilder::new(&mut names, false);
    b.rename_root(f);
    let tree = b
        .finish(&names, crate::model::ChildOrder::ByName)
        .expect("an empty tree has no sums to overflow");
    p.derived(names, tree)
}

impl View for SandwichView {
    fn kind(&self) -> ViewKind {
        ViewKind::SANDWICH
    }

    fn document(&self) -> Document {
        Document::Profile(self.profile.clone())
    }

    fn viewport(&self) -> Option<Viewport> {
        self.vp
    }

    fn set_viewport(&mut self, vp: Viewport) {
        self.vp = Some(vp);
        self.place(vp);
    }

    fn style(&self) -> Style {
        self.opts.style
    }

    fn content_top(&self) -> f32 {
        self.callers.content_top()
    }

    fn heading(&self, purpose: Purpose) -> Heading {
        let total = self.callees.heading(Purpose::Export).subtitle;
        let mut subtitle = format!("sandwich of {} · {total}", self.name(self.function));
        if purpose.windowed()
            && let Some(note) = self.note
        {
            subtitle = format!("{subtitle} · {note}");
        }
        Heading {
            title: self
                .opts
                .title
                .clone()
                .unwrap_or_else(|| crate::model::document::profile_title(&self.profile)),
            subtitle,
            legend: self.callees.heading(purpose).legend,
        }
    }

    fn draw<'a>(&'a self, frame: &mut Frame<'a>, m: &mut dyn Measure, purpose: Purpose) {
        self.callers.draw(frame, m, purpose);
        self.callees.draw(frame, m, purpose);
        let vp = self.vp.unwrap_or(Viewport::UNIT).scaled(purpose.factor());
        let mid = self.middle(vp);
        frame.over.push(Rect::new(
            [
                0.0,
                mid - vp.scale.round(),
                vp.width_px as f32,
                vp.scale.round(),
            ],
            rgba([170, 170, 170], 1.0),
        ));
    }

    fn tick(&mut self, now_s: f64) -> bool {
        let a = self.callers.tick(now_s);
        let b = self.callees.tick(now_s);
        a || b
    }

    fn pointer(&mut self, at: Option<(f32, f32)>) -> bool {
        self.pointer = at;
        let (a, b) = match at.map(|(_, y)| self.half_at(y)) {
            Some(Half::Callers) => (at, None),
            Some(Half::Callees) => (None, at),
            None => (None, None),
        };
        let ca = self.callers.pointer(a);
        let cb = self.callees.pointer(b);
        ca || cb
    }

    fn drag(&mut self, x: f32, y: f32, dx: f32, dy: f32) {
        let h = self.half_at(y);
        self.half_mut(h).drag(x, y, dx, dy);
    }

    fn release(&mut self, x: f32, y: f32, click: bool, now_s: f64) {
        let h = self.half_at(y);
        let hovered = match h {
            Half::Callers => self.callers.hovered_name(),
            Half::Callees => self.callees.hovered_name(),
        };
        match hovered {
            // A click on a function makes it the centre.
            Some(f) if click && f != self.function => self.centre(f, true),
            _ => self.half_mut(h).release(x, y, click, now_s),
        }
        self.pointer(self.pointer);
    }

    fn wheel(&mut self, at: Option<(f32, f32)>, w: Wheel) {
        let h = at.map_or(Half::Callees, |(_, y)| self.half_at(y));
        self.half_mut(h).wheel(at, w);
    }

    fn pinch(&mut self, at: Option<(f32, f32)>, factor: f64) {
        let h = at.map_or(Half::Callees, |(_, y)| self.half_at(y));
        self.half_mut(h).pinch(at, factor);
    }

    fn act(&mut self, action: Action, now_s: f64) -> Reply {
        if action == Action::Back
            && let Some(f) = self.history.pop()
        {
            self.centre(f, false);
            return Reply::Done;
        }
        if action == Action::ToggleFit {
            self.callers.act(action, now_s);
            return self.callees.act(action, now_s);
        }
        let h = self.pointed();
        let reply = self.half_mut(h).act(action, now_s);
        whole_profile_paths_only(reply)
    }

    fn open_menu(&mut self) -> Vec<String> {
        let h = self.pointed();
        self.half_mut(h).open_menu()
    }

    fn menu_action(&mut self, item: usize, now_s: f64) -> Reply {
        let h = self.pointed();
        let reply = self.half_mut(h).menu_action(item, now_s);
        whole_profile_paths_only(reply)
    }

    fn search(&mut self, query: &str) {
        self.query = query.to_string();
        self.callers.search(query);
        self.callees.search(query);
    }

    fn search_summary(&self) -> Option<String> {
        let a = self.callers.search_summary()?;
        let b = self.callees.search_summary()?;
        let strip = |s: &str| {
            s.split_once(": ")
                .map_or(s.to_string(), |x| x.1.to_string())
        };
        Some(format!(
            "/{}: callers {}, callees {}",
            self.query,
            strip(&a),
            strip(&b)
        ))
    }

    fn next_match(&mut self, backwards: bool, now_s: f64) {
        let h = self.pointed();
        self.half_mut(h).next_match(backwards, now_s);
    }

    fn status_hint(&self) -> String {
        let back = if self.history.is_empty() {
            ""
        } else {
            " · Backspace: previous function"
        };
        format!(
            "callers above, callees below {} · click a function: centre it · wheel: zoom{back}",
            self.name(self.function)
        )
    }

    fn tooltip(&self) -> Vec<String> {
        match self.pointed() {
            Half::Callers => self.callers.tooltip(),
            Half::Callees => self.callees.tooltip(),
        }
    }

    fn set_note(&mut self, note: Option<&'static str>) {
        self.note = note;
    }

    fn set_labels(&mut self, on: bool) {
        self.callers.set_labels(on);
        self.callees.set_labels(on);
    }

    fn bar_sources(&self) -> Vec<super::draw::BarSource<'_>> {
        let mut out = self.callers.bar_sources();
        out.extend(self.callees.bar_sources());
        out
    }

    fn rows_shown(&self) -> (usize, usize) {
        let (a, b) = self.callers.rows_shown();
        let (c, d) = self.callees.rows_shown();
        (a + c, b + d)
    }

    fn memo(&self) -> ViewMemo {
        let half = self.callees.memo();
        ViewMemo {
            color: half.color,
            fit: half.fit,
            function: Some(self.name(self.function).to_string()),
            ..ViewMemo::default()
        }
    }

    fn restore(&mut self, memo: &ViewMemo, _now_s: f64) {
        // Only a function with frames: a transform can leave a name with none.
        let t = &self.profile.tree;
        if let Some(f) = memo
            .function
            .as_deref()
            .and_then(|f| self.profile.names.find(f))
            .filter(|&f| (0..t.len() as crate::model::NodeId).any(|n| t.name(n) == f))
        {
            self.centre(f, false);
        }
        let colors = ViewMemo {
            color: memo.color,
            fit: memo.fit,
            ..ViewMemo::default()
        };
        self.callers.restore(&colors, 0.0);
        self.callees.restore(&colors, 0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::draw::FixedMeasure;

    const TEXT: &str = "main;a;f;x 3\nmain;b;f;y 2\nmain;b;f 1\nmain;c 4\n";

    fn sandwich_of(f: Option<&str>) -> SandwichView {
        let p = crate::import::folded::parse("t", TEXT.as_bytes()).unwrap();
        let f = f.map(|f| p.names.find(f).unwrap());
        let mut v = SandwichView::new(Arc::new(p), f, &ViewOptions::default());
        v.set_viewport(Viewport {
            width_px: 1000,
            height_px: 600,
            scale: 1.0,
        });
        v
    }

    /// The labels a half draws.
    fn labels(v: &FlameView) -> Vec<String> {
        let mut m = FixedMeasure { advance: 0.6 };
        let mut f = Frame::new(1000, 600, 1.0);
        v.draw(&mut f, &mut m, Purpose::Export);
        f.text.iter().map(|t| t.text.to_string()).collect()
    }

    #[test]
    fn halves_meet_at_the_function_and_split_the_frame() {
        let v = sandwich_of(Some("f"));
        let name = |fv: &FlameView| fv.document();
        let (Document::Profile(callers), Document::Profile(callees)) =
            (name(&v.callers), name(&v.callees))
        else {
            panic!("profiles")
        };
        // Both halves are rooted at f and as wide as its total (6).
        assert_eq!(callers.names.get(callers.tree.name(0)), "f");
        assert_eq!(callees.names.get(callees.tree.name(0)), "f");
        assert_eq!(
            (callers.tree.grand_total(), callees.tree.grand_total()),
            (6, 6)
        );
        assert_eq!(callers.folded_lines(), ["a;main 3", "b;main 3"]);
        assert_eq!(callees.folded_lines(), ["x 3", "y 2"]);
        // Callers above the middle, callees below it.
        let mid = v.middle(v.vp.unwrap());
        let cg = v.callers.geometry(1.0);
        let eg = v.callees.geometry(1.0);
        assert!(cg.graph.y + cg.graph.h <= mid + 1.0, "{cg:?} vs {mid}");
        assert!(eg.graph.y >= mid - 1.0, "{eg:?} vs {mid}");
        assert_eq!(v.callers.state().orientation, Orientation::Flame);
        assert_eq!(v.callees.state().orientation, Orientation::Icicle);
        // The frame draws both, and the heading names the function.
        assert!(labels(&v.callees).iter().any(|t| t.starts_with("x (50%")));
        assert!(
            v.heading(Purpose::Export)
                .subtitle
                .starts_with("sandwich of f ·")
        );
        // Without a function: the one with the most self time (c, 4).
        assert_eq!(
            sandwich_of(None)
                .profile
                .names
                .get(sandwich_of(None).function()),
            "c"
        );
    }

    #[test]
    fn a_click_centres_a_function_and_backspace_goes_back() {
        let mut v = sandwich_of(Some("f"));
        // The callees half: below f, its self time (1), then x (3) and y (2).
        let g = v.callees.geometry(1.0);
        let at = (g.graph.x + g.graph.w * 0.4, g.row_top(1) + 2.0);
        v.pointer(Some(at));
        assert_eq!(v.tooltip()[0], "x");
        v.release(at.0, at.1, true, 0.0);
        assert_eq!(v.profile.names.get(v.function()), "x");
        assert!(v.status_hint().contains("Backspace"));
        // In the callers half of x: f, x's only caller, right above x.
        let g = v.callers.geometry(1.0);
        let at = (g.graph.x + g.graph.w * 0.4, g.row_top(1) + 2.0);
        v.pointer(Some(at));
        assert_eq!(v.tooltip()[0], "f");
        v.release(at.0, at.1, true, 1.0);
        assert_eq!(v.profile.names.get(v.function()), "f");
        assert_eq!(v.act(Action::Back, 2.0), Reply::Done);
        assert_eq!(v.profile.names.get(v.function()), "x");
        v.act(Action::Back, 3.0);
        assert_eq!(v.profile.names.get(v.function()), "f");
        // A click on the function itself zooms as in a flame graph, no re-centring.
        let g = v.callees.geometry(1.0);
        v.pointer(Some((g.graph.x + 10.0, g.row_top(0) + 2.0)));
        v.release(g.graph.x + 10.0, g.row_top(0) + 2.0, true, 4.0);
        assert_eq!(v.profile.names.get(v.function()), "f");
    }

    #[test]
    fn search_runs_in_both_halves_and_memo_names_the_function() {
        let mut v = sandwich_of(Some("f"));
        v.search("main|y");
        let s = v.search_summary().unwrap();
        assert!(s.starts_with("/main|y: callers 2 matches"), "{s}");
        assert!(s.contains("callees 1 match"), "{s}");
        assert_eq!(v.memo().function.as_deref(), Some("f"));
        let mut w = sandwich_of(Some("c"));
        w.restore(&v.memo(), 0.0);
        assert_eq!(w.profile.names.get(w.function()), "f");
        // The bars of both halves are uploaded.
        assert_eq!(v.bar_sources().len(), 2);
    }
}
