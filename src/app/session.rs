//! What the window does, without the window: the document's view, the search field, the
//! context menu, the status line's message, and every input in between.
//!
//! The winit handler ([`super::App`]) translates its events into [`Key`]s, [`Mods`] and
//! pointer positions and hands them to a [`Session`]; the session applies the key table
//! ([`crate::view::input`]), performs what belongs to the window (search field, menu,
//! Escape's order, frame-time toggle) and passes everything else to the active
//! [`View`]. What needs the platform (quit, a screenshot, the clipboard) comes back as an
//! [`Effect`]. No winit, no GPU: the tests below drive a session as a user drives the
//! window.

use crate::model::Document;
use crate::model::transform::{self, Transform};
use crate::view::input::{self, Action, DRAG_THRESHOLD_PX, Key, Mods, SearchEdit, WheelDelta};
use crate::view::shell::{Chrome, MenuShown, Status, menu_item_at, status_rect};
use crate::view::shot::ShotState;
use crate::view::toolbar::{self, Tool, ToolItem, Toolbar};
use crate::view::{
    Reply, VIEWS, View, ViewEntry, ViewMemo, ViewOptions, Viewport, title_and_toolbar, views_for,
};
use std::sync::Arc;

/// Two clicks this close in time (seconds) and place (pixels) are a double click.
const DOUBLE_CLICK_S: f64 = 0.4;
const DOUBLE_CLICK_PX: f32 = 5.0;

/// What the window must do after an input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Nothing beyond a redraw (if one was asked for).
    None,
    /// Close the window.
    Quit,
    /// Save a screenshot.
    Screenshot,
    /// Copy this text to the clipboard.
    Copy(String),
}

/// A left-button press and how far it moved.
#[derive(Clone, Copy, Debug)]
struct Press {
    start: (f32, f32),
    last: (f32, f32),
    moved: bool,
}

/// The window's state around its view.
pub struct Session {
    view: Option<Box<dyn View>>,
    /// How views open (window style, title, first colors): kept to switch views.
    view_opts: ViewOptions,
    /// The views the window can switch to.
    views: &'static [ViewEntry],
    viewport: Option<Viewport>,
    cursor: Option<(f32, f32)>,
    mods: Mods,
    press: Option<Press>,
    menu: Option<MenuShown>,
    search_open: bool,
    search_text: String,
    message: Option<(String, f64)>,
    show_times: bool,
    redraw: bool,
    /// The transforms applied, each with the document it was applied to (undo returns
    /// to it).
    transforms: Vec<(Transform, Document)>,
    /// The key help is shown.
    help_open: bool,
    /// Where and when the last click was (to tell a double click).
    last_click: Option<((f32, f32), f64)>,
}

/// How long a status message stays.
pub const MESSAGE_S: f64 = 6.0;

impl Default for Session {
    fn default() -> Self {
        Session::new()
    }
}

impl Session {
    /// A session with nothing loaded, offering [`VIEWS`].
    pub fn new() -> Session {
        Session::with_views(VIEWS)
    }

    /// A session offering `views`.
    pub fn with_views(views: &'static [ViewEntry]) -> Session {
        Session {
            view: None,
            view_opts: ViewOptions::default(),
            views,
            viewport: None,
            cursor: None,
            mods: Mods::default(),
            press: None,
            menu: None,
            search_open: false,
            search_text: String::new(),
            message: None,
            show_times: false,
            redraw: false,
            transforms: Vec::new(),
            help_open: false,
            last_click: None,
        }
    }

    /// The active view.
    pub fn view(&self) -> Option<&(dyn View + 'static)> {
        self.view.as_deref()
    }

    /// The active view, to change.
    pub fn view_mut(&mut self) -> Option<&mut (dyn View + 'static)> {
        self.view.as_deref_mut()
    }

    /// The document shown.
    pub fn document(&self) -> Option<Document> {
        self.view.as_ref().map(|v| v.document())
    }

    /// Takes the view out (a new load replaces it).
    pub fn take_view(&mut self) -> Option<Box<dyn View>> {
        self.clear_interaction();
        self.view.take()
    }

    /// Shows `view` (opened with `opts`) in place of whatever was shown: what pointed
    /// into the old document (hover, drag, menu, search field) goes.
    pub fn show(&mut self, mut view: Box<dyn View>, opts: ViewOptions) {
        self.view_opts = opts;
        self.clear_interaction();
        self.transforms.clear();
        if let Some(vp) = self.viewport {
            view.set_viewport(vp);
        }
        view.pointer(self.cursor);
        self.view = Some(view);
        self.redraw = true;
    }

    /// Shows `view` in place of a view of a partial document (a preview): it takes over
    /// the old view's place (see [`ViewMemo`]), the search field stays and the search
    /// runs again.
    pub fn replace(&mut self, view: Box<dyn View>, now_s: f64) {
        let memo: Option<ViewMemo> = self.view.as_ref().map(|v| v.memo());
        if !self.transforms.is_empty() {
            // They were made of the preview; apply them again to the whole document.
            let ts: Vec<Transform> = self.transforms.drain(..).map(|(t, _)| t).collect();
            self.replace_with(view, memo, now_s);
            for t in ts {
                self.apply_transform(t, now_s);
            }
            return;
        }
        self.replace_with(view, memo, now_s);
    }

    /// [`Session::replace`] with what to carry over given.
    fn replace_with(&mut self, mut view: Box<dyn View>, memo: Option<ViewMemo>, now_s: f64) {
        self.menu = None;
        self.press = None;
        if let Some(vp) = self.viewport {
            view.set_viewport(vp);
        }
        if let Some(m) = memo {
            view.restore(&m, now_s);
        }
        if !self.search_text.is_empty() {
            view.search(&self.search_text);
        }
        view.pointer(self.cursor);
        self.view = Some(view);
        self.redraw = true;
    }

    /// Switches to the `n`-th view (from 0) of those that show the document: it opens on
    /// the same document, takes over what the current view carries (colors, place) and
    /// runs the same search. False when there is no such view or it is the current one.
    pub fn switch_view(&mut self, n: usize, now_s: f64) -> bool {
        let Some(current) = &self.view else {
            return false;
        };
        let doc = current.document();
        let Some(entry) = views_for(self.views, &doc).get(n).copied() else {
            self.say(format!("no view {} for this document", n + 1), now_s);
            return false;
        };
        if entry.kind == current.kind() {
            return false;
        }
        let mut memo = current.memo();
        // The view chosen decides which way up it is (flame graph, icicle).
        memo.orientation = None;
        let mut opts = self.view_opts.clone();
        opts.color = memo.color.or(opts.color);
        opts.orientation = crate::geometry::Orientation::Flame;
        let view = (entry.open)(&doc, &opts);
        self.replace_with(view, Some(memo), now_s);
        true
    }

    /// Applies `t` to the document and shows the result in the same view; an error
    /// (a name the profile does not have) is said on the status line.
    pub fn apply_transform(&mut self, t: Transform, now_s: f64) {
        let Some(Document::Profile(p)) = self.document() else {
            self.say("transforms apply to profiles", now_s);
            return;
        };
        let result = {
            let rule = crate::color::package_rule(p.meta.spy_name.as_deref());
            transform::apply(&p, &t, &rule)
        };
        match result {
            Ok(out) => {
                let label = t.label();
                self.transforms.push((t, Document::Profile(p)));
                self.show_transformed(Document::Profile(Arc::new(out)), now_s);
                self.say(format!("{label} · U or Ctrl+Z: undo"), now_s);
            }
            Err(e) => self.say(e.to_string(), now_s),
        }
    }

    /// Undoes transforms until `keep` are left (false: there were no more than that).
    pub fn undo_transforms(&mut self, keep: usize, now_s: f64) -> bool {
        if keep >= self.transforms.len() {
            return false;
        }
        let (_, doc) = self.transforms.swap_remove(keep);
        self.transforms.truncate(keep);
        self.show_transformed(doc, now_s);
        true
    }

    /// The transforms applied, in order.
    pub fn transforms(&self) -> impl Iterator<Item = &Transform> {
        self.transforms.iter().map(|(t, _)| t)
    }

    /// Shows `doc` (the document transformed, or as it was before) in the current view's
    /// kind, with its colors, fit and function; places in the old tree do not carry over.
    fn show_transformed(&mut self, doc: Document, now_s: f64) {
        let Some(current) = &self.view else { return };
        let kind = current.kind();
        let mut memo = current.memo();
        memo.focus_path = None;
        memo.zoom_path = None;
        memo.fraction = None;
        memo.time_window = None;
        memo.scroll_px = 0.0;
        let shown = views_for(self.views, &doc);
        let Some(entry) = shown.iter().find(|e| e.kind == kind).or(shown.first()) else {
            return;
        };
        let mut opts = self.view_opts.clone();
        opts.color = memo.color.or(opts.color);
        let view = (entry.open)(&doc, &opts);
        self.replace_with(view, Some(memo), now_s);
    }

    /// What a screenshot of the window records (see [`ShotState`]): `source` is the file
    /// shown (`None`: the bundled demo).
    pub fn shot_state(&self, source: Option<&std::path::Path>) -> Option<ShotState> {
        let v = self.view.as_ref()?;
        Some(ShotState::new(
            source,
            v.kind().0,
            &v.memo(),
            self.transforms().map(Transform::spec).collect(),
            &self.search_text,
        ))
    }

    /// Shows the document as `state` recorded it: its transforms applied in order, its
    /// view, place, colors, function and search. What cannot be restored (a transform of
    /// a function the file no longer has, a view it has no longer) is said on the status
    /// line and the rest is restored.
    pub fn restore_shot(&mut self, state: &ShotState, now_s: f64) {
        let mut problems = Vec::new();
        for spec in &state.transforms {
            match Transform::parse(spec) {
                Ok(t) => {
                    let before = self.transforms.len();
                    self.apply_transform(t, now_s);
                    if self.transforms.len() == before {
                        problems.push(format!("transform {spec}"));
                    }
                }
                Err(e) => problems.push(e),
            }
        }
        let Some(doc) = self.document() else { return };
        let shown = views_for(self.views, &doc);
        let Some(entry) = shown.iter().find(|e| e.kind.0 == state.view).copied() else {
            problems.push(format!("the {} view", state.view));
            self.say(format!("could not restore: {}", problems.join(", ")), now_s);
            return;
        };
        let mut opts = self.view_opts.clone();
        opts.orientation = crate::geometry::Orientation::Flame;
        let view = (entry.open)(&doc, &opts);
        self.search_text = state.search.clone();
        self.replace_with(view, Some(state.memo()), now_s);
        self.message = None;
        if problems.is_empty() {
            self.say("restored the view the screenshot recorded", now_s);
        } else {
            self.say(format!("could not restore: {}", problems.join(", ")), now_s);
        }
    }

    /// The toolbar's rectangle (`None` when the style has none).
    pub fn toolbar_rect(&self) -> Option<crate::geometry::RectPx> {
        let (vp, v) = (self.viewport?, self.view.as_ref()?);
        let (_, bar) = title_and_toolbar(vp, &v.style());
        (bar.h > 0.0).then_some(bar)
    }

    /// The toolbar's buttons for the current view.
    pub fn toolbar(&self) -> Option<Toolbar> {
        let v = self.view.as_ref()?;
        let doc = v.document();
        let kind = v.kind();
        // Under 1000 logical pixels the right-hand buttons drop their captions so the
        // tabs keep their room.
        let compact = self
            .viewport
            .is_some_and(|vp| (vp.width_px as f32) < 1000.0 * vp.scale);
        let mut items: Vec<ToolItem> = views_for(self.views, &doc)
            .iter()
            .enumerate()
            .map(|(i, e)| ToolItem {
                tool: Tool::Tab(i),
                label: format!("{} {}", i + 1, capitalized(e.kind.0)),
                active: e.kind == kind,
            })
            .collect();
        if !self.transforms.is_empty() {
            let n = self.transforms.len();
            items.push(ToolItem {
                tool: Tool::Crumb(0),
                label: "All ›".into(),
                active: false,
            });
            for (i, (t, _)) in self.transforms.iter().enumerate() {
                let last = i + 1 == n;
                items.push(ToolItem {
                    tool: Tool::Crumb(i + 1),
                    label: if last {
                        t.short_label(32)
                    } else {
                        format!("{} ›", t.short_label(32))
                    },
                    active: last,
                });
            }
        }
        let memo = v.memo();
        items.push(ToolItem {
            tool: Tool::Search,
            label: if self.search_text.is_empty() {
                "Search (/)".into()
            } else {
                format!("Search: {}", self.search_text)
            },
            active: self.search_open,
        });
        if let Some(c) = memo.color {
            items.push(ToolItem {
                tool: Tool::Color,
                label: if compact {
                    c.name().to_string()
                } else {
                    format!("Colors: {}", c.name())
                },
                active: false,
            });
        }
        if let Some(f) = memo.fit {
            items.push(ToolItem {
                tool: Tool::Fit,
                label: if compact {
                    f.name().to_string()
                } else {
                    format!("Fit: {}", f.name())
                },
                active: false,
            });
        }
        items.push(ToolItem {
            tool: Tool::Screenshot,
            label: if compact { "PNG" } else { "Save PNG" }.into(),
            active: false,
        });
        items.push(ToolItem {
            tool: Tool::Help,
            label: "?".into(),
            active: self.help_open,
        });
        let hovered = match (self.cursor, self.toolbar_rect(), self.viewport) {
            (Some((x, y)), Some(bar), Some(vp)) => {
                let tb = Toolbar {
                    items: items.clone(),
                    hovered: None,
                };
                toolbar::item_at(&tb, bar, vp.scale, x, y)
            }
            _ => None,
        };
        Some(Toolbar { items, hovered })
    }

    /// The toolbar button at `(x, y)`, if the pointer is on one.
    fn tool_at(&self, x: f32, y: f32) -> Option<Tool> {
        let (bar, vp) = (self.toolbar_rect()?, self.viewport?);
        toolbar::item_at(&self.toolbar()?, bar, vp.scale, x, y)
    }

    /// Whether `(x, y)` is on the toolbar (buttons or not).
    fn on_toolbar(&self, x: f32, y: f32) -> bool {
        self.toolbar_rect().is_some_and(|b| b.contains(x, y))
    }

    /// A click on toolbar button `tool`.
    pub fn use_tool(&mut self, tool: Tool, now_s: f64) -> Effect {
        self.redraw = true;
        match tool {
            Tool::Tab(n) => {
                self.switch_view(n, now_s);
                Effect::None
            }
            Tool::Crumb(keep) => {
                self.undo_transforms(keep, now_s);
                Effect::None
            }
            Tool::Search => {
                self.search_open = true;
                self.menu = None;
                Effect::None
            }
            Tool::Help => {
                self.help_open = !self.help_open;
                Effect::None
            }
            Tool::Screenshot => Effect::Screenshot,
            Tool::Color => self.act(Action::CycleColor, now_s),
            Tool::Fit => self.act(Action::ToggleFit, now_s),
        }
    }

    /// Hands `a` to the view and does what it answers.
    fn act(&mut self, a: Action, now_s: f64) -> Effect {
        match &mut self.view {
            Some(v) => {
                let reply = v.act(a, now_s);
                self.after(reply, now_s)
            }
            None => Effect::None,
        }
    }

    /// Forgets what pointed into the document being replaced.
    fn clear_interaction(&mut self) {
        self.press = None;
        self.menu = None;
        self.search_open = false;
        self.search_text.clear();
    }

    /// The window is now `vp`.
    pub fn resize(&mut self, vp: Viewport) {
        self.viewport = Some(vp);
        if let Some(v) = &mut self.view {
            v.set_viewport(vp);
        }
        self.redraw = true;
    }

    /// The window size.
    pub fn viewport(&self) -> Option<Viewport> {
        self.viewport
    }

    /// True once when something changed that needs a new frame.
    pub fn take_redraw(&mut self) -> bool {
        std::mem::take(&mut self.redraw)
    }

    /// Asks for a redraw.
    pub fn redraw(&mut self) {
        self.redraw = true;
    }

    /// Shows `msg` on the status line for a while (and on the terminal).
    pub fn say(&mut self, msg: impl Into<String>, now_s: f64) {
        let msg = msg.into();
        eprintln!("scorch: {msg}");
        self.message = Some((msg, now_s));
        self.redraw = true;
    }

    /// The status message, while it lasts; `false` once it expired (and it is dropped).
    pub fn message_alive(&mut self, now_s: f64) -> bool {
        match &self.message {
            Some((_, t)) if now_s - t < MESSAGE_S => true,
            Some(_) => {
                self.message = None;
                self.redraw = true;
                false
            }
            None => false,
        }
    }

    /// Whether the F12 frame times are shown.
    pub fn show_times(&self) -> bool {
        self.show_times
    }

    /// Advances animations; true while one runs.
    pub fn tick(&mut self, now_s: f64) -> bool {
        self.view.as_mut().is_some_and(|v| v.tick(now_s))
    }

    /// Modifier keys changed.
    pub fn modifiers(&mut self, mods: Mods) {
        self.mods = mods;
    }

    /// The pointer moved to `(x, y)`.
    pub fn pointer_moved(&mut self, x: f32, y: f32) {
        let tool_before = self.cursor.and_then(|(x, y)| self.tool_at(x, y));
        self.cursor = Some((x, y));
        if self.tool_at(x, y) != tool_before {
            self.redraw = true;
        }
        if self.menu.is_some() {
            let item = self.menu_item_at(x, y);
            if let Some(m) = &mut self.menu
                && m.hovered != item
            {
                m.hovered = item;
                self.redraw = true;
            }
        }
        if let Some(mut p) = self.press {
            let (dx, dy) = (x - p.last.0, y - p.last.1);
            if !p.moved
                && ((x - p.start.0).abs() > DRAG_THRESHOLD_PX
                    || (y - p.start.1).abs() > DRAG_THRESHOLD_PX)
            {
                p.moved = true;
            }
            if p.moved
                && let Some(v) = &mut self.view
            {
                v.drag(x, y, dx, dy);
                self.redraw = true;
            }
            p.last = (x, y);
            self.press = Some(p);
        }
        self.update_hover();
    }

    /// The pointer left the window.
    pub fn pointer_left(&mut self) {
        self.cursor = None;
        self.update_hover();
    }

    fn update_hover(&mut self) {
        if let Some(v) = &mut self.view
            && v.pointer(self.cursor)
        {
            self.redraw = true;
        }
    }

    fn menu_item_at(&self, x: f32, y: f32) -> Option<usize> {
        let (m, vp, v) = (self.menu.as_ref()?, self.viewport?, self.view.as_ref()?);
        let st = status_rect(
            vp.width_px as f32,
            vp.height_px as f32,
            vp.scale,
            v.style().status_height,
        );
        menu_item_at(m, vp.scale, vp.width_px as f32, st.y, x, y)
    }

    /// The left button went down.
    pub fn left_pressed(&mut self, now_s: f64) -> Effect {
        let Some((x, y)) = self.cursor else {
            return Effect::None;
        };
        if self.menu.is_some() {
            let effect = match self.menu_item_at(x, y) {
                Some(i) => self.menu_action(i, now_s),
                None => Effect::None,
            };
            self.menu = None;
            self.redraw = true;
            return effect;
        }
        if self.on_toolbar(x, y) {
            return match self.tool_at(x, y) {
                Some(t) => self.use_tool(t, now_s),
                None => Effect::None,
            };
        }
        if self.help_open {
            // A click anywhere else closes the help.
            self.help_open = false;
            self.redraw = true;
            return Effect::None;
        }
        self.press = Some(Press {
            start: (x, y),
            last: (x, y),
            moved: false,
        });
        if let Some(v) = &mut self.view {
            v.press(x, y);
        }
        Effect::None
    }

    /// The left button came up; a second click soon after the first at the same place
    /// is also a double click.
    pub fn left_released(&mut self, now_s: f64) -> Effect {
        let Some((x, y)) = self.cursor else {
            return Effect::None;
        };
        let Some(p) = self.press.take() else {
            return Effect::None;
        };
        let click = !p.moved;
        let double = click
            && self.last_click.is_some_and(|((lx, ly), t)| {
                now_s - t <= DOUBLE_CLICK_S
                    && (x - lx).abs() <= DOUBLE_CLICK_PX
                    && (y - ly).abs() <= DOUBLE_CLICK_PX
            });
        self.last_click = (click && !double).then_some(((x, y), now_s));
        let mut effect = Effect::None;
        if let Some(v) = &mut self.view {
            v.release(x, y, click, now_s);
            if double {
                let reply = v.double_click(x, y, now_s);
                effect = self.after(reply, now_s);
            }
        }
        self.update_hover();
        self.redraw = true;
        effect
    }

    /// The right button went down: the view's menu for what is under the pointer.
    pub fn right_pressed(&mut self) {
        let Some(at) = self.cursor else { return };
        let items = self
            .view
            .as_mut()
            .map(|v| v.open_menu())
            .unwrap_or_default();
        self.menu = (!items.is_empty()).then_some(MenuShown {
            items,
            at,
            hovered: None,
        });
        self.redraw = true;
    }

    fn menu_action(&mut self, item: usize, now_s: f64) -> Effect {
        let Some(v) = &mut self.view else {
            return Effect::None;
        };
        let reply = v.menu_action(item, now_s);
        self.after(reply, now_s)
    }

    fn after(&mut self, reply: Reply, now_s: f64) -> Effect {
        match reply {
            Reply::Copy(text) => Effect::Copy(text),
            Reply::Say(msg) => {
                self.say(msg, now_s);
                Effect::None
            }
            Reply::Open(kind) => {
                let doc = self.view.as_ref().map(|v| v.document());
                let n = doc.and_then(|d| {
                    views_for(self.views, &d)
                        .iter()
                        .position(|e| e.kind == kind)
                });
                match n {
                    Some(n) => {
                        self.switch_view(n, now_s);
                    }
                    None => self.say(format!("no {} view here", kind.0), now_s),
                }
                Effect::None
            }
            Reply::Transform(t) => {
                self.apply_transform(t, now_s);
                Effect::None
            }
            Reply::Done | Reply::Ignored => Effect::None,
        }
    }

    /// A wheel movement.
    pub fn wheel(&mut self, delta: WheelDelta) {
        let w = input::wheel(delta, self.mods);
        if let Some(v) = &mut self.view {
            v.wheel(self.cursor, w);
        }
        self.menu = None;
        self.update_hover();
        self.redraw = true;
    }

    /// A pinch gesture by `delta` (positive: zoom in).
    pub fn pinch(&mut self, delta: f64) {
        if let Some(v) = &mut self.view {
            v.pinch(self.cursor, 1.0 + delta);
        }
        self.update_hover();
        self.redraw = true;
    }

    /// A key went down (typing `text`).
    pub fn key(&mut self, key: &Key, text: Option<&str>, now_s: f64) -> Effect {
        self.redraw = true;
        if self.search_open {
            self.search_key(key, text, now_s);
            return Effect::None;
        }
        let Some(action) = input::key_action(key, self.mods) else {
            return Effect::None;
        };
        let effect = match action {
            Action::Quit => Effect::Quit,
            Action::Screenshot => Effect::Screenshot,
            Action::OpenSearch => {
                self.search_open = true;
                self.menu = None;
                Effect::None
            }
            Action::ToggleFrameTimes => {
                self.show_times = !self.show_times;
                Effect::None
            }
            Action::Help => {
                self.help_open = !self.help_open;
                Effect::None
            }
            Action::Escape if self.help_open => {
                self.help_open = false;
                Effect::None
            }
            Action::Undo => {
                let n = self.transforms.len();
                if !self.undo_transforms(n.saturating_sub(1), now_s) {
                    self.say("no transform to undo", now_s);
                }
                Effect::None
            }
            Action::Escape if self.view.is_none() => Effect::Quit,
            Action::Escape if self.menu.is_some() => {
                self.menu = None;
                Effect::None
            }
            Action::Escape if !self.search_text.is_empty() => {
                self.set_search(String::new());
                Effect::None
            }
            Action::ShowView(n) => {
                self.switch_view(usize::from(n), now_s);
                Effect::None
            }
            a => self.act(a, now_s),
        };
        self.update_hover();
        effect
    }

    fn search_key(&mut self, key: &Key, text: Option<&str>, now_s: f64) {
        match input::search_key(key, text, self.mods) {
            SearchEdit::Cancel => {
                self.search_open = false;
                self.set_search(String::new());
            }
            SearchEdit::Submit { backwards } => {
                self.search_open = false;
                if let Some(v) = &mut self.view {
                    v.next_match(backwards, now_s);
                }
            }
            SearchEdit::DeleteChar => {
                let mut q = std::mem::take(&mut self.search_text);
                q.pop();
                self.set_search(q);
            }
            SearchEdit::Type(t) => {
                let q = format!("{}{t}", self.search_text);
                self.set_search(q);
            }
            SearchEdit::Ignore => {}
        }
        self.update_hover();
    }

    /// Runs `query` on the view (empty: clears the search).
    fn set_search(&mut self, query: String) {
        self.search_text = query;
        if let Some(v) = &mut self.view {
            v.search(&self.search_text);
        }
        self.redraw = true;
    }

    /// The search query.
    pub fn query(&self) -> &str {
        &self.search_text
    }

    /// What the window draws around the view: `hint_right` is the status line's right
    /// side when nothing else claims it (a load's progress), `preview` what a preview is
    /// made of (turns the line amber), `times` the F12 line; a screenshot leaves out
    /// what follows the pointer.
    pub fn chrome(
        &self,
        loading: Option<&str>,
        preview: Option<(&str, &str)>,
        times: Option<String>,
        for_screenshot: bool,
    ) -> Chrome {
        let v = self.view.as_ref();
        let left = v.map(|v| v.status_hint()).unwrap_or_default();
        let mut right = match (&self.message, v.and_then(|v| v.search_summary())) {
            (Some((m, _)), _) => m.clone(),
            (None, Some(s)) => s,
            (None, None) => String::new(),
        };
        if let Some(l) = loading.filter(|_| preview.is_none()) {
            right = l.to_string();
        }
        // Over a preview the status line turns amber and says what is shown.
        let right = match preview {
            Some((long, _)) if right.is_empty() => long.to_string(),
            Some((_, short)) => format!("{right} · {short}"),
            None => right,
        };
        let pointer = !for_screenshot;
        Chrome {
            status: Status {
                left,
                right,
                search_field: self.search_open.then(|| self.search_text.clone()),
                amber: preview.is_some(),
            },
            tooltip: match (v, self.cursor) {
                (Some(v), Some(at)) if pointer => {
                    let lines = v.tooltip();
                    (!lines.is_empty()).then_some((lines, at))
                }
                _ => None,
            },
            menu: self.menu.clone().filter(|_| pointer),
            frame_times: times.filter(|_| pointer && self.show_times),
            toolbar: self.toolbar().map(|mut t| {
                if !pointer {
                    t.hovered = None;
                }
                t
            }),
            help: self.help_open.then_some(input::HELP),
        }
    }
}

/// `name` with its first letter in capitals (a tab's label).
fn capitalized(name: &str) -> String {
    let mut c = name.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Orientation;
    use crate::import::{Limits, load_bytes};
    use crate::view::draw::FixedMeasure;
    use crate::view::{Purpose, ViewOptions, compose, default_view};
    use std::sync::Arc;

    const NOW: f64 = 100.0;

    fn ch(s: &str) -> Key {
        Key::Char(s.to_string())
    }

    /// A session showing `text` (folded stacks) in an 800 × 600 window, as a flame graph.
    fn session(text: &str) -> Session {
        session_with(VIEWS, text)
    }

    /// [`session`] offering `views`.
    fn session_with(views: &'static [ViewEntry], text: &str) -> Session {
        let p = load_bytes("t.folded", text.as_bytes(), Limits::default()).unwrap();
        let doc = Document::Profile(Arc::new(p));
        let mut s = Session::with_views(views);
        s.resize(Viewport {
            width_px: 800,
            height_px: 600,
            scale: 1.0,
        });
        let opts = ViewOptions {
            style: crate::app::window_style(),
            ..ViewOptions::default()
        };
        s.show(default_view(&doc, &opts), opts);
        s
    }

    /// The flame view the session shows.
    fn flame(s: &Session) -> &crate::view::flame::FlameView {
        s.view()
            .and_then(|v| v.downcast_ref())
            .expect("a flame graph")
    }

    fn type_text(s: &mut Session, t: &str) {
        for c in t.chars() {
            let c = c.to_string();
            s.key(&ch(&c), Some(&c), NOW);
        }
    }

    /// The status line's texts as drawn.
    fn status(s: &Session) -> Chrome {
        s.chrome(None, None, None, false)
    }

    #[test]
    fn searching_types_into_the_field_and_enter_jumps_to_the_first_match() {
        let mut s = session("main;work 6\nmain;idle 4\n");
        s.key(&ch("/"), Some("/"), NOW);
        type_text(&mut s, "work");
        let c = status(&s);
        assert_eq!(c.status.search_field.as_deref(), Some("work"));
        assert!(c.status.right.contains("1 match, 60% of total"), "{c:?}");
        // `n` typed in the field is text, not a jump.
        assert_eq!(s.query(), "work");
        s.key(&Key::Enter, None, NOW);
        assert_eq!(
            status(&s).status.search_field,
            None,
            "Enter closes the field"
        );
        let f = flame(&s);
        assert!(f.state().zoomed.is_some(), "jumped to the match");
        // Escape first clears the search, then zooms out.
        s.key(&Key::Escape, None, NOW + 1.0);
        assert_eq!(s.query(), "");
        assert!(flame(&s).state().zoomed.is_some());
        s.key(&Key::Escape, None, NOW + 2.0);
        assert!(flame(&s).state().zoomed.is_none());
    }

    #[test]
    fn key_3_opens_left_heavy_on_the_clicked_path() {
        // a (1) sorts before b (3) by name; left heavy puts b first.
        let mut s = session("main;a 1\nmain;b 3\n");
        let g = flame(&s).geometry(1.0);
        // Click a (the left quarter of row 2) in the flame graph.
        s.pointer_moved(g.graph.x + g.graph.w * 0.1, g.row_top(2) + 2.0);
        assert_eq!(s.view().unwrap().tooltip()[0], "a");
        s.left_pressed(NOW);
        s.left_released(NOW);
        s.tick(NOW + 1.0);
        s.key(&ch("3"), Some("3"), NOW + 2.0);
        assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::LEFT_HEAVY);
        let v = flame(&s);
        let st = v.state();
        // Still zoomed on main;a, which left heavy places after b: ticks 3..4.
        assert!(st.zoomed.is_some());
        assert_eq!(st.camera.start, 3);
        s.key(&ch("1"), Some("1"), NOW + 3.0);
        assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::FLAME_GRAPH);
        assert_eq!(flame(&s).state().camera.start, 0, "a is first again");
        // Key 2 is the icicle, on the same path; I turns it back into the flame graph.
        s.key(&ch("2"), Some("2"), NOW + 4.0);
        assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::ICICLE);
        assert_eq!(flame(&s).state().orientation, Orientation::Icicle);
        assert!(flame(&s).state().zoomed.is_some());
        s.key(&ch("i"), Some("i"), NOW + 5.0);
        assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::FLAME_GRAPH);
        // Left heavy from the icicle opens the right way up.
        s.key(&ch("2"), Some("2"), NOW + 6.0);
        s.key(&ch("3"), Some("3"), NOW + 7.0);
        assert_eq!(flame(&s).state().orientation, Orientation::Flame);
    }

    #[test]
    fn the_table_and_the_flame_graph_open_a_sandwich_on_their_function() {
        let mut s = session("main;a;f 1\nmain;b;f 3\nmain;c 2\n");
        // The table (key 4): select the second row, Enter opens its sandwich.
        s.key(&ch("4"), Some("4"), NOW);
        assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::TABLE);
        s.key(&Key::Down, None, NOW);
        s.key(&Key::Down, None, NOW);
        let sel = s.view().unwrap().memo().function.unwrap();
        s.key(&Key::Enter, None, NOW);
        let v = s.view().unwrap();
        assert_eq!(v.kind(), crate::view::ViewKind::SANDWICH);
        assert_eq!(v.memo().function.as_deref(), Some(sel.as_str()));
        // The flame graph's menu on c: "Sandwich of this function".
        s.key(&ch("1"), Some("1"), NOW);
        let g = flame(&s).geometry(1.0);
        s.pointer_moved(g.graph.x + g.graph.w * 0.9, g.row_top(2) + 2.0);
        assert_eq!(s.view().unwrap().tooltip()[0], "c");
        s.right_pressed();
        let menu = status(&s).menu.expect("a menu");
        assert_eq!(menu.items[4], "Sandwich of this function");
        let v = s.view_mut().unwrap();
        v.open_menu();
        let r = v.menu_action(4, NOW);
        assert_eq!(r, Reply::Open(crate::view::ViewKind::SANDWICH));
        s.after(r, NOW);
        let v = s.view().unwrap();
        assert_eq!(v.kind(), crate::view::ViewKind::SANDWICH);
        assert_eq!(v.memo().function.as_deref(), Some("c"));
    }

    /// Clicks the toolbar button whose label starts with `label`.
    fn click_tool(s: &mut Session, label: &str, now_s: f64) {
        let tb = s.toolbar().unwrap();
        let bar = s.toolbar_rect().unwrap();
        let rects = toolbar::layout(&tb.items, bar, 1.0);
        let i = tb
            .items
            .iter()
            .position(|it| it.label.starts_with(label))
            .unwrap_or_else(|| panic!("no {label:?} in {:?}", tb.items));
        let r = rects[i];
        assert!(r.w > 0.0, "{label} is drawn: {rects:?} {:?}", tb.items);
        s.pointer_moved(r.x + r.w / 2.0, r.y + r.h / 2.0);
        assert_eq!(s.toolbar().unwrap().hovered, Some(tb.items[i].tool));
        s.left_pressed(now_s);
        s.left_released(now_s);
    }

    #[test]
    fn the_toolbar_switches_views_colors_fit_search_and_help() {
        let mut s = session("main;a;f 1\nmain;b;f 3\nmain;c 2\n");
        // At 800 px every tab is drawn, the buttons at the right without captions.
        let tb = s.toolbar().unwrap();
        let rects = toolbar::layout(&tb.items, s.toolbar_rect().unwrap(), 1.0);
        assert!(rects.iter().all(|r| r.w > 0.0), "{rects:?} {:?}", tb.items);
        assert!(tb.items.iter().any(|i| i.label == "package"));
        s.resize(Viewport {
            width_px: 1280,
            height_px: 800,
            scale: 1.0,
        });
        let tabs: Vec<String> = s
            .toolbar()
            .unwrap()
            .items
            .iter()
            .filter(|i| matches!(i.tool, Tool::Tab(_)))
            .map(|i| i.label.clone())
            .collect();
        assert_eq!(
            tabs,
            [
                "1 Flame graph",
                "2 Icicle",
                "3 Left heavy",
                "4 Table",
                "5 Both",
                "6 Sandwich"
            ]
        );
        click_tool(&mut s, "4 Table", NOW);
        assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::TABLE);
        let active: Vec<String> = s
            .toolbar()
            .unwrap()
            .items
            .into_iter()
            .filter(|i| i.active)
            .map(|i| i.label)
            .collect();
        assert_eq!(active, ["4 Table"]);
        click_tool(&mut s, "2 Icicle", NOW);
        assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::ICICLE);
        click_tool(&mut s, "Colors: package", NOW);
        assert_ne!(
            s.view().unwrap().memo().color,
            Some(crate::color::ColorMode::Package)
        );
        click_tool(&mut s, "Fit: head", NOW);
        assert_eq!(
            s.view().unwrap().memo().fit,
            Some(crate::view::draw::LabelFit::Tail)
        );
        let tb = s.toolbar().unwrap();
        let shot = tb.items.iter().position(|i| i.label == "Save PNG").unwrap();
        let bar = s.toolbar_rect().unwrap();
        let r = toolbar::layout(&tb.items, bar, 1.0)[shot];
        s.pointer_moved(r.x + r.w / 2.0, r.y + r.h / 2.0);
        assert_eq!(s.left_pressed(NOW), Effect::Screenshot);
        s.left_released(NOW);
        click_tool(&mut s, "Search", NOW);
        type_text(&mut s, "f");
        assert_eq!(s.query(), "f");
        s.key(&Key::Enter, None, NOW);
        assert!(
            s.toolbar()
                .unwrap()
                .items
                .iter()
                .any(|i| i.label == "Search: f")
        );
        // ? opens the help (it lists the transform keys); a click elsewhere closes it.
        click_tool(&mut s, "?", NOW);
        let help = status(&s).help.expect("help shown");
        assert!(help.iter().any(|(k, _)| k.contains("Del")));
        s.pointer_moved(400.0, 300.0);
        s.left_pressed(NOW);
        assert!(status(&s).help.is_none());
        s.key(&ch("?"), Some("?"), NOW);
        assert!(status(&s).help.is_some());
        s.key(&Key::Escape, None, NOW);
        assert!(status(&s).help.is_none());
        assert_eq!(s.query(), "f", "Escape closed the help only");
    }

    #[test]
    fn transforms_stack_show_as_a_breadcrumb_and_undo() {
        let mut s = session("main;a;f 1\nmain;b;f 3\nmain;c 2\n");
        // The window's default width: the tabs and the breadcrumb fit beside the search.
        s.resize(Viewport {
            width_px: 1280,
            height_px: 800,
            scale: 1.0,
        });
        let names = |s: &Session| -> Vec<String> {
            let Some(Document::Profile(p)) = s.document() else {
                panic!("a profile")
            };
            let t = &p.tree;
            let mut v: Vec<String> = (0..t.len())
                .map(|n| p.names.get(t.name(n as crate::model::NodeId)).to_string())
                .collect();
            v.sort();
            v.dedup();
            v
        };
        // m on the bar of b merges b: f moves up under main.
        let g = flame(&s).geometry(1.0);
        s.pointer_moved(g.graph.x + g.graph.w * 0.3, g.row_top(2) + 2.0);
        assert_eq!(s.view().unwrap().tooltip()[0], "b");
        s.key(&ch("m"), Some("m"), NOW);
        assert!(!names(&s).contains(&"b".to_string()));
        assert_eq!(s.transforms().count(), 1);
        // The table's key on its selected row: drop c.
        s.key(&ch("4"), Some("4"), NOW);
        s.pointer_moved(400.0, 590.0);
        type_text(&mut s, "/c");
        s.key(&Key::Enter, None, NOW);
        s.key(&Key::Down, None, NOW);
        s.key(&Key::Delete, None, NOW);
        assert!(!names(&s).contains(&"c".to_string()));
        assert_eq!(
            s.view().unwrap().kind(),
            crate::view::ViewKind::TABLE,
            "same view"
        );
        // The dropped function's name is still interned, but it has no row to select.
        assert_eq!(s.view().unwrap().memo().function, None);
        let crumbs: Vec<String> = s
            .toolbar()
            .unwrap()
            .items
            .into_iter()
            .filter(|i| matches!(i.tool, Tool::Crumb(_)))
            .map(|i| i.label)
            .collect();
        assert_eq!(crumbs, ["All ›", "merge b ›", "drop c"]);
        // U undoes the last; a click on "All" undoes the rest.
        s.key(&ch("u"), Some("u"), NOW);
        assert!(names(&s).contains(&"c".to_string()));
        assert!(!names(&s).contains(&"b".to_string()));
        click_tool(&mut s, "All", NOW);
        assert!(names(&s).contains(&"b".to_string()));
        assert_eq!(s.transforms().count(), 0);
        // Ctrl+Z with nothing to undo says so.
        s.modifiers(Mods {
            ctrl: true,
            ..Mods::default()
        });
        s.key(&ch("z"), Some("z"), NOW);
        assert_eq!(status(&s).status.right, "no transform to undo");
        // An unknown name is an error on the status line, not a change.
        s.apply_transform(Transform::Merge("nope".into()), NOW);
        assert!(status(&s).status.right.contains("nope"));
        assert_eq!(s.transforms().count(), 0);
    }

    #[test]
    fn a_screenshot_state_reopens_the_same_view() {
        let text = "main;a;f 1\nmain;b;f 3\nmain;c;g 2\nmain;c;h 2\n";
        let mut s = session(text);
        // Both, c's function merged away, a search, a zoom on the flame side.
        s.key(&ch("5"), Some("5"), NOW);
        s.apply_transform(Transform::Merge("c".into()), NOW);
        type_text(&mut s, "/h");
        s.key(&Key::Enter, None, NOW);
        s.key(&ch("w"), Some("w"), NOW);
        s.tick(NOW + 1.0);
        let state = s.shot_state(None).unwrap();
        assert_eq!(state.view, "both");
        assert_eq!(state.transforms, ["merge:c"]);
        assert_eq!(state.search, "h");
        assert!(state.fraction.is_some(), "{state:?}");
        // A new window on the same file restores all of it.
        let mut t = session(text);
        t.restore_shot(&state, NOW);
        assert_eq!(t.view().unwrap().kind(), crate::view::ViewKind::BOTH);
        assert_eq!(
            t.transforms().cloned().collect::<Vec<_>>(),
            [Transform::Merge("c".into())]
        );
        assert_eq!(t.query(), "h");
        let (a, b) = (s.view().unwrap().memo(), t.view().unwrap().memo());
        assert_eq!(a.color, b.color);
        assert_eq!(a.function, b.function);
        let ((a0, a1), (b0, b1)) = (a.fraction.unwrap(), b.fraction.unwrap());
        assert!(
            (a0 - b0).abs() < 1e-3 && (a1 - b1).abs() < 1e-3,
            "{a:?} {b:?}"
        );
        assert_eq!(
            status(&t).status.right,
            "restored the view the screenshot recorded"
        );
        // A state naming a function the file lacks restores the rest and says so.
        let mut odd = state.clone();
        odd.transforms.push("drop:nothere".into());
        let mut u = session(text);
        u.restore_shot(&odd, NOW);
        assert_eq!(u.view().unwrap().kind(), crate::view::ViewKind::BOTH);
        assert!(
            status(&u)
                .status
                .right
                .contains("could not restore: transform drop:nothere")
        );
    }

    #[test]
    fn a_double_click_on_a_table_row_opens_its_sandwich() {
        let mut s = session("main;a;f 1\nmain;b;f 3\nmain;c 2\n");
        s.key(&ch("4"), Some("4"), NOW);
        let t: &crate::view::table::TableView = s.view().unwrap().downcast_ref().unwrap();
        let g = t.geometry(1.0);
        let at = (g.left + 30.0, g.row_top(1) + 3.0);
        let name = {
            s.pointer_moved(at.0, at.1);
            s.view().unwrap().tooltip()[0].clone()
        };
        s.left_pressed(NOW);
        s.left_released(NOW);
        assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::TABLE);
        s.left_pressed(NOW + 0.2);
        s.left_released(NOW + 0.2);
        let v = s.view().unwrap();
        assert_eq!(v.kind(), crate::view::ViewKind::SANDWICH);
        assert_eq!(v.memo().function, Some(name));
        // Two clicks far apart in time are two clicks.
        s.key(&ch("4"), Some("4"), NOW + 1.0);
        s.left_pressed(NOW + 2.0);
        s.left_released(NOW + 2.0);
        s.left_pressed(NOW + 3.0);
        s.left_released(NOW + 3.0);
        assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::TABLE);
    }

    #[test]
    fn a_click_zooms_and_a_drag_pans_without_clicking() {
        let mut s = session("main;a 3\nmain;b 1\n");
        let g = flame(&s).geometry(1.0);
        // Row 1 (main) is the whole width; row 2 holds a (3/4) and b (1/4).
        let y = g.row_top(2) + 2.0;
        let x = g.graph.x + g.graph.w * 0.9;
        s.pointer_moved(x, y);
        assert!(!s.view().unwrap().tooltip().is_empty(), "hovering b");
        assert_eq!(s.view().unwrap().tooltip()[0], "b");
        s.left_pressed(NOW);
        s.left_released(NOW);
        s.tick(NOW + 1.0);
        let st = flame(&s).state();
        assert!(st.zoomed.is_some());
        assert_eq!(st.camera.start, 3, "b starts at tick 3");
        // A drag moves the camera and does not click.
        let before = flame(&s).state().camera;
        s.pointer_moved(x, y);
        s.left_pressed(NOW + 2.0);
        s.pointer_moved(x - 2.0, y);
        assert_eq!(flame(&s).state().camera, before, "under the threshold");
        s.pointer_moved(x - 100.0, y);
        s.left_released(NOW + 2.0);
        assert_eq!(flame(&s).state().zoomed, st_zoomed(&s), "still zoomed on b");
        assert_eq!(
            flame(&s).state().camera,
            before,
            "clamped: b fills the view"
        );
    }

    fn st_zoomed(s: &Session) -> Option<crate::pick::BarRef> {
        flame(s).state().zoomed
    }

    #[test]
    fn the_menu_opens_on_a_bar_and_copies_its_name() {
        let mut s = session("main;alpha 3\nmain;beta 1\n");
        let g = flame(&s).geometry(1.0);
        let (x, y) = (g.graph.x + 5.0, g.row_top(2) + 2.0);
        s.pointer_moved(x, y);
        s.right_pressed();
        let menu = status(&s).menu.expect("a menu");
        assert_eq!(
            menu.items,
            [
                "Focus on this",
                "Copy name",
                "Reset view",
                "Cut labels at the start (keep the end)",
                "Sandwich of this function",
                "Merge function  (m)",
                "Focus on function  (o)",
                "Focus on subtree  (b)",
                "Collapse recursion  (r)",
                "Collapse package  (k)",
                "Drop function  (Del)",
            ]
        );
        // Move onto the second item (the menu is kept above the status line) and click.
        let (_, h) = crate::view::shell::menu_size(&menu.items, 1.0);
        let (mx, my) = crate::view::shell::menu_origin((x, y), &menu.items, 1.0, 800.0, 578.0);
        s.pointer_moved(mx + 5.0, my + h * 1.5);
        assert_eq!(status(&s).menu.unwrap().hovered, Some(1));
        assert_eq!(s.left_pressed(NOW), Effect::Copy("alpha".into()));
        assert!(status(&s).menu.is_none(), "the menu closes");
        // Nowhere near a bar: no menu.
        s.pointer_moved(g.graph.x + 5.0, g.graph.y + 1.0);
        s.right_pressed();
        assert!(status(&s).menu.is_none());
    }

    #[test]
    fn window_keys_quit_screenshot_and_toggle_frame_times() {
        let mut s = session("a 1\n");
        let q = Key::Char("q".into());
        s.modifiers(Mods {
            ctrl: true,
            ..Mods::default()
        });
        assert_eq!(s.key(&q, Some("q"), NOW), Effect::Quit);
        assert_eq!(s.key(&ch("s"), Some("s"), NOW), Effect::Screenshot);
        s.modifiers(Mods::default());
        assert_eq!(s.key(&ch("p"), Some("p"), NOW), Effect::Screenshot);
        s.key(&Key::F12, None, NOW);
        assert!(s.show_times());
        let c = s.chrome(None, None, Some("CPU 1 ms".into()), false);
        assert_eq!(c.frame_times.as_deref(), Some("CPU 1 ms"));
        let c = s.chrome(None, None, Some("CPU 1 ms".into()), true);
        assert_eq!(c.frame_times, None, "screenshots leave it out");
        // Escape with nothing loaded quits.
        let mut empty = Session::new();
        assert_eq!(empty.key(&Key::Escape, None, NOW), Effect::Quit);
    }

    #[test]
    fn the_status_line_says_messages_search_and_preview_state() {
        let mut s = session("main;x 1\n");
        assert!(status(&s).status.left.starts_with("click: zoom"));
        s.say("copied", NOW);
        assert_eq!(status(&s).status.right, "copied");
        assert!(s.message_alive(NOW + 1.0));
        assert!(!s.message_alive(NOW + MESSAGE_S + 1.0));
        assert_eq!(status(&s).status.right, "");
        let c = s.chrome(Some("loading x… 40%"), None, None, false);
        assert_eq!(c.status.right, "loading x… 40%");
        let c = s.chrome(
            Some("loading"),
            Some(("PREVIEW long", "PREVIEW")),
            None,
            false,
        );
        assert!(c.status.amber);
        assert_eq!(c.status.right, "PREVIEW long");
    }

    /// A trivial view, as `ARCHITECTURE.md` says to add one: it writes the document's
    /// total and the search query in the middle of the frame.
    struct Totals {
        doc: Document,
        vp: Option<Viewport>,
        style: crate::geometry::Style,
        query: String,
    }

    impl View for Totals {
        fn kind(&self) -> crate::view::ViewKind {
            crate::view::ViewKind("totals")
        }
        fn document(&self) -> Document {
            self.doc.clone()
        }
        fn viewport(&self) -> Option<Viewport> {
            self.vp
        }
        fn set_viewport(&mut self, vp: Viewport) {
            self.vp = Some(vp);
        }
        fn style(&self) -> crate::geometry::Style {
            self.style
        }
        fn heading(&self, _: Purpose) -> crate::view::shell::Heading {
            crate::view::shell::Heading {
                title: "totals".into(),
                subtitle: String::new(),
                legend: None,
            }
        }
        fn search(&mut self, query: &str) {
            self.query = query.to_string();
        }
        fn draw<'a>(
            &'a self,
            f: &mut crate::view::draw::Frame<'a>,
            _: &mut dyn crate::view::draw::Measure,
            _: Purpose,
        ) {
            let Document::Profile(p) = &self.doc else {
                return;
            };
            f.text.push(crate::view::draw::Text {
                text: format!("{} samples, /{}", p.tree.grand_total(), self.query),
                size: 12.0,
                x: 100.0,
                y: 100.0,
                clip: [0.0, 0.0, 800.0, 600.0],
                color: [0, 0, 0],
            });
        }
    }

    static WITH_TOTALS: &[ViewEntry] = &[
        crate::view::flame::ENTRY,
        ViewEntry {
            kind: crate::view::ViewKind("totals"),
            shows: |d| matches!(d, Document::Profile(_)),
            open: |d, o| {
                Box::new(Totals {
                    doc: d.clone(),
                    vp: None,
                    style: o.style,
                    query: String::new(),
                })
            },
        },
    ];

    #[test]
    fn switching_views_keeps_the_document_and_its_search() {
        let mut s = session_with(WITH_TOTALS, "main;work 6\nmain;idle 4\n");
        let doc = s.document().unwrap();
        s.key(&ch("/"), Some("/"), NOW);
        type_text(&mut s, "idle");
        s.key(&Key::Enter, None, NOW);
        // Key 2: the second view that shows a profile.
        s.key(&ch("2"), Some("2"), NOW);
        let v = s.view().unwrap();
        assert_eq!(v.kind(), crate::view::ViewKind("totals"));
        assert!(
            matches!((v.document(), &doc), (Document::Profile(a), Document::Profile(b)) if Arc::ptr_eq(&a, b)),
            "the same document"
        );
        assert_eq!(v.viewport().map(|vp| vp.width_px), Some(800));
        let mut m = FixedMeasure { advance: 0.6 };
        let f = compose(v, Purpose::Window, None, &mut m);
        assert!(
            f.text.iter().any(|t| t.text == "10 samples, /idle"),
            "the search came along"
        );
        // Back to the flame graph: its search is the same query.
        s.key(&ch("1"), Some("1"), NOW);
        assert!(
            status(&s).status.right.contains("/idle: 1 match"),
            "{:?}",
            status(&s).status
        );
        // A view the document has none of: said, nothing changes.
        assert!(!s.switch_view(5, NOW));
        assert!(status(&s).status.right.contains("no view 6"));
    }

    #[test]
    fn a_screenshot_frame_is_the_window_frame_minus_the_pointer() {
        let mut s = session("main;a 3\nmain;b 1\n");
        let g = flame(&s).geometry(1.0);
        s.pointer_moved(g.graph.x + 5.0, g.row_top(2) + 2.0);
        let v = s.view().unwrap();
        let mut m = FixedMeasure { advance: 0.6 };
        let win = s.chrome(None, None, None, false);
        let shot = s.chrome(None, None, None, true);
        let a = compose(v, Purpose::Window, Some(&win), &mut m);
        let b = compose(v, Purpose::Screenshot { factor: 1.0 }, Some(&shot), &mut m);
        assert_eq!(a.text, b.text, "same labels and title");
        assert_eq!(a.bars[0].rows, b.bars[0].rows, "same bars");
        assert!(a.over.len() > b.over.len(), "the hover outline");
        assert!(a.top_text.len() > b.top_text.len(), "the tooltip");
        let c = compose(v, Purpose::Screenshot { factor: 2.0 }, Some(&shot), &mut m);
        assert_eq!((c.width_px, c.height_px), (1600, 1200));
    }
}
