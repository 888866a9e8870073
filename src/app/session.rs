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
use crate::view::input::{self, Action, DRAG_THRESHOLD_PX, Key, Mods, SearchEdit, WheelDelta};
use crate::view::shell::{Chrome, MenuShown, Status, menu_item_at, status_rect};
use crate::view::{Reply, VIEWS, View, ViewEntry, ViewMemo, ViewOptions, Viewport, views_for};

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
    pub fn replace(&mut self, mut view: Box<dyn View>, now_s: f64) {
        let memo: Option<ViewMemo> = self.view.as_ref().map(|v| v.memo());
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
        let mut opts = self.view_opts.clone();
        opts.color = current.memo().color.or(opts.color);
        let view = (entry.open)(&doc, &opts);
        self.replace(view, now_s);
        true
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
        self.cursor = Some((x, y));
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

    /// The left button came up.
    pub fn left_released(&mut self, now_s: f64) {
        let Some((x, y)) = self.cursor else { return };
        let Some(p) = self.press.take() else { return };
        if let Some(v) = &mut self.view {
            v.release(x, y, !p.moved, now_s);
        }
        self.update_hover();
        self.redraw = true;
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
            a => match &mut self.view {
                Some(v) => {
                    let reply = v.act(a, now_s);
                    self.after(reply, now_s)
                }
                None => Effect::None,
            },
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
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
    fn key_2_opens_left_heavy_on_the_clicked_path() {
        // a (1) sorts before b (3) by name; left heavy puts b first.
        let mut s = session("main;a 1\nmain;b 3\n");
        let g = flame(&s).geometry(1.0);
        // Click a (the left quarter of row 2) in the flame graph.
        s.pointer_moved(g.graph.x + g.graph.w * 0.1, g.row_top(2) + 2.0);
        assert_eq!(s.view().unwrap().tooltip()[0], "a");
        s.left_pressed(NOW);
        s.left_released(NOW);
        s.tick(NOW + 1.0);
        s.key(&ch("2"), Some("2"), NOW + 2.0);
        assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::LEFT_HEAVY);
        let v = flame(&s);
        let st = v.state();
        // Still zoomed on main;a, which left heavy places after b: ticks 3..4.
        assert!(st.zoomed.is_some());
        assert_eq!(st.camera.start, 3);
        s.key(&ch("1"), Some("1"), NOW + 3.0);
        assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::FLAME_GRAPH);
        assert_eq!(flame(&s).state().camera.start, 0, "a is first again");
    }

    #[test]
    fn the_table_and_the_flame_graph_open_a_sandwich_on_their_function() {
        let mut s = session("main;a;f 1\nmain;b;f 3\nmain;c 2\n");
        // The table (key 3): select the second row, Enter opens its sandwich.
        s.key(&ch("3"), Some("3"), NOW);
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
                "Sandwich of this function"
            ]
        );
        // Move onto the second item (the menu is kept above the status line) and click.
        let (_, h) = crate::view::shell::menu_size(1.0);
        let (mx, my) = crate::view::shell::menu_origin((x, y), 5, 1.0, 800.0, 578.0);
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
