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
use crate::model::transform::Transform;
use crate::view::input::{self, Action, DRAG_THRESHOLD_PX, Key, Mods, SearchEdit, WheelDelta};
use crate::view::shell::{Chrome, MenuShown, Status, menu_item_at, status_rect};
use crate::view::{
    Reply, VIEWS, View, ViewEntry, ViewKind, ViewMemo, ViewOptions, Viewport, views_for,
};

mod tools;
mod transforms;

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
    /// Load the comparison shown again another way.
    Compare(CompareStep),
}

/// What to do with the comparison shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareStep {
    /// Swap "before" and "after".
    Swap,
    /// Show "before" alone.
    Before,
    /// Show "after" alone.
    After,
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
    /// to it): kept for the first and the newest [`UNDO_DOCS`](transforms::UNDO_DOCS),
    /// made again from an earlier one when undo needs it.
    transforms: Vec<(Transform, Option<Document>)>,
    /// The key help is shown.
    help_open: bool,
    /// Where and when the last click was (to tell a double click).
    last_click: Option<((f32, f32), f64)>,
    /// The view moved (wheel, pinch, drag, a key's action) since the last frame: that
    /// frame's labels get a deadline ([`crate::view::labels`]).
    moved: bool,
    /// Views open off the window's thread ([`Session::take_open_job`]); off: at once.
    background_opens: bool,
    /// The last view requested.
    next_open: u64,
    /// The view being made, shown when it arrives ([`Session::opened`]).
    pending: Option<Pending>,
    /// Its work, until the window takes it.
    job: Option<OpenJob>,
}

/// The work of opening a view: made on another thread by the window (a big document's
/// layout, level-of-detail tiers and time order take seconds), handed back to
/// [`Session::opened`] with its [`OpenJob::id`].
pub struct OpenJob {
    /// Which request (a later one supersedes it).
    pub id: u64,
    /// What is opened, for the log.
    pub kind: ViewKind,
    make: Box<dyn FnOnce() -> Result<Made, String> + Send>,
}

impl OpenJob {
    /// Makes the view (or says why it cannot be shown).
    pub fn run(self) -> Result<Made, String> {
        (self.make)()
    }
}

/// What a view job made: the view, the transforms it applied on the way (each with the
/// document it was applied to, stacked for undo when the view is shown), the memo it
/// takes over when not the one asked with, and what to say once it is shown.
pub struct Made {
    /// The view.
    pub view: Box<dyn View>,
    applied: Vec<(Transform, Document)>,
    memo: Option<ViewMemo>,
    say: Option<String>,
}

impl Made {
    /// A view alone.
    fn view(view: Box<dyn View>) -> Made {
        Made {
            view,
            applied: Vec::new(),
            memo: None,
            say: None,
        }
    }
}

/// The view of `kind` (else the first of `views` that shows `doc`) opened on `doc`; a
/// timeline of samples whose time order would not fit in the memory is refused.
fn make_view(
    views: &'static [ViewEntry],
    kind: ViewKind,
    doc: &Document,
    opts: &ViewOptions,
) -> Result<Box<dyn View>, String> {
    let shown = views_for(views, doc);
    let entry = shown
        .iter()
        .find(|e| e.kind == kind)
        .or(shown.first())
        .ok_or_else(|| "no view shows this document".to_string())?;
    time_order_fits(entry.kind, doc, crate::import::limits::available_memory())
        .map_err(|why| format!("no timeline: {why}"))?;
    Ok((entry.open)(doc, opts))
}

/// A view requested and not yet shown.
struct Pending {
    id: u64,
    kind: ViewKind,
    /// Its document, when known before the view is made: what the next command applies
    /// to (else the document shown).
    doc: Option<Document>,
    /// What it takes over from the view shown.
    memo: ViewMemo,
    /// What the status line says meanwhile.
    note: String,
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
            moved: false,
            background_opens: false,
            next_open: 0,
            pending: None,
            job: None,
        }
    }

    /// Views open off the window's thread from now on: a new view is a job
    /// ([`Session::take_open_job`]) whose view [`Session::opened`] shows, the view shown
    /// staying live meanwhile.
    pub fn open_in_background(&mut self) {
        self.background_opens = true;
    }

    /// The work of the view requested last, once (the window runs it on another thread).
    pub fn take_open_job(&mut self) -> Option<OpenJob> {
        self.job.take()
    }

    /// Whether a view is being opened, and which.
    pub fn opening(&self) -> Option<ViewKind> {
        self.pending.as_ref().map(|p| p.kind)
    }

    /// The view of job `id` (or why it could not be made), shown in place of the current
    /// one, taking over the place the current one had when it was asked for; nothing
    /// when a later request or a new document superseded it. True when it was shown.
    pub fn opened(&mut self, id: u64, made: Result<Made, String>, now_s: f64) -> bool {
        let Some(p) = self.pending.take_if(|p| p.id == id) else {
            return false;
        };
        self.finish_open(p.memo, made, now_s)
    }

    /// Shows what a view job made (its transforms stacked), or says why there is
    /// nothing to show.
    fn finish_open(&mut self, memo: ViewMemo, made: Result<Made, String>, now_s: f64) -> bool {
        self.redraw = true;
        match made {
            Ok(m) => {
                self.stack_transforms(m.applied);
                self.replace_with(m.view, Some(m.memo.unwrap_or(memo)), now_s);
                if let Some(msg) = m.say {
                    self.say(msg, now_s);
                }
                true
            }
            Err(why) => {
                self.say(why, now_s);
                false
            }
        }
    }

    /// Whether commands that change the document may run: not while the document a
    /// view is being made of is itself being made (a transform, an undo made again, the
    /// next event's time order); the status line then says to wait.
    fn document_ready(&mut self, now_s: f64) -> bool {
        match &self.pending {
            Some(p) if p.doc.is_none() => {
                let msg = format!("wait: {}", p.note);
                self.say(msg, now_s);
                false
            }
            _ => true,
        }
    }

    /// Forgets the view being opened (a new document replaces everything).
    fn cancel_open(&mut self) {
        self.pending = None;
        self.job = None;
    }

    /// Shows the view `make` makes (opened as `kind` on `doc`), with `memo` carried over:
    /// at once, or as a job when views open in the background.
    fn request_view(
        &mut self,
        kind: ViewKind,
        doc: Option<Document>,
        memo: ViewMemo,
        note: String,
        make: impl FnOnce() -> Result<Made, String> + Send + 'static,
        now_s: f64,
    ) {
        if !self.background_opens {
            self.finish_open(memo, make(), now_s);
            return;
        }
        self.next_open += 1;
        let id = self.next_open;
        self.job = Some(OpenJob {
            id,
            kind,
            make: Box::new(make),
        });
        self.pending = Some(Pending {
            id,
            kind,
            doc,
            memo,
            note,
        });
        self.redraw = true;
    }

    /// The active view.
    pub fn view(&self) -> Option<&(dyn View + 'static)> {
        self.view.as_deref()
    }

    /// The active view, to change.
    pub fn view_mut(&mut self) -> Option<&mut (dyn View + 'static)> {
        self.view.as_deref_mut()
    }

    /// The document shown, or the one a view is being opened on (what commands apply
    /// to).
    pub fn document(&self) -> Option<Document> {
        match self.pending.as_ref().and_then(|p| p.doc.clone()) {
            Some(doc) => Some(doc),
            None => self.view.as_ref().map(|v| v.document()),
        }
    }

    /// Takes the view out (a new load replaces it).
    pub fn take_view(&mut self) -> Option<Box<dyn View>> {
        self.clear_interaction();
        self.cancel_open();
        self.view.take()
    }

    /// Shows `view` (opened with `opts`) in place of whatever was shown: what pointed
    /// into the old document (hover, drag, menu, search field) goes.
    pub fn show(&mut self, mut view: Box<dyn View>, opts: ViewOptions) {
        self.view_opts = opts;
        self.clear_interaction();
        self.cancel_open();
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
        self.cancel_open();
        let memo: Option<ViewMemo> = self.view.as_ref().map(|v| v.memo());
        // Transforms were made of the preview: apply them again to the whole document.
        let ts: Vec<Transform> = self.transforms.drain(..).map(|(t, _)| t).collect();
        self.replace_with(view, memo, now_s);
        if ts.is_empty() {
            return;
        }
        if let Some(v) = &self.view {
            let (doc, kind, memo) = (v.document(), v.kind(), v.memo());
            self.open_transformed(doc, ts, kind, memo, now_s);
        }
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
        if !self.document_ready(now_s) {
            return false;
        }
        let (Some(current), Some(doc)) = (&self.view, self.document()) else {
            return false;
        };
        let Some(entry) = views_for(self.views, &doc).get(n).copied() else {
            self.say(format!("no view {} for this document", n + 1), now_s);
            return false;
        };
        match &self.pending {
            Some(p) if p.kind == entry.kind => return false,
            // Back to the view shown, on its own document: nothing to make.
            Some(_) if entry.kind == current.kind() && same_document(&doc, &current.document()) => {
                self.cancel_open();
                self.redraw = true;
                return true;
            }
            Some(_) => {}
            None if entry.kind == current.kind() => return false,
            None => {}
        }
        let mut memo = current.memo();
        // The view chosen decides which way up it is (flame graph, icicle).
        memo.orientation = None;
        // A range selected on the timeline: the other views count its samples only.
        match current
            .sample_range()
            .and_then(|r| doc.with_sample_range(r))
        {
            Some(Ok(d)) => self.open_reselected(entry, &d, memo, now_s),
            Some(Err(e)) => {
                self.say(format!("the range cannot be shown: {e}"), now_s);
                return false;
            }
            None => self.open_entry(entry, &doc, memo, now_s),
        }
        true
    }

    /// A sampled input with several events: the current view again on the next event's
    /// samples (the same time range, colors and place). False when there is no other.
    pub fn next_event(&mut self, now_s: f64) -> bool {
        if !self.document_ready(now_s) {
            return false;
        }
        let Some(current) = &self.view else {
            return false;
        };
        let Some(doc) = self.document() else {
            return false;
        };
        let Some(s) = doc.sampled().filter(|s| s.samples.events.len() > 1) else {
            self.say("this input has one event", now_s);
            return false;
        };
        let n = s.samples.events.len() as u32;
        let range = current.sample_range().unwrap_or(s.selection.range);
        let sel = crate::model::samples::Selection {
            event: (s.selection.event + 1) % n,
            range,
        };
        let name = s.samples.events[sel.event as usize].name.clone();
        let new = s.with_selection(sel);
        let kind = self.opening().unwrap_or(current.kind());
        let memo = current.memo();
        let Some(entry) = self.views.iter().find(|e| e.kind == kind) else {
            return false;
        };
        if kind == crate::view::timeline::ENTRY.kind {
            // The time order (and the count that checks it fits) is made with the view.
            let opts = self.opts_for(&memo);
            let open = entry.open;
            let label = name.clone();
            self.request_view(
                kind,
                None,
                memo,
                format!("opening the timeline of {name}…"),
                move || {
                    new.check_time_order(crate::import::limits::available_memory())
                        .map_err(|why| format!("no timeline of {label}: {why}"))?;
                    Ok(Made::view(open(
                        &Document::Trace(std::sync::Arc::new(new.trace())),
                        &opts,
                    )))
                },
                now_s,
            );
        } else {
            // Its call tree, and the transforms applied again to it, made with the view.
            let ts: Vec<Transform> = self.transforms.drain(..).map(|(t, _)| t).collect();
            let memo = if ts.is_empty() {
                memo
            } else {
                transforms::cleared(memo)
            };
            let (views, opts) = (self.views, self.opts_for(&memo));
            let label = name.clone();
            self.request_view(
                kind,
                None,
                memo,
                format!("opening the {} view of {name}…", kind.0),
                move || {
                    let p = new
                        .profile()
                        .map_err(|e| format!("{label} cannot be shown: {e}"))?;
                    let doc = Document::Profile(std::sync::Arc::new(p));
                    let (out, applied, _) = transforms::apply_all(doc.clone(), ts);
                    Ok(Made {
                        view: make_view(views, kind, &out.unwrap_or(doc), &opts)?,
                        applied,
                        memo: None,
                        say: None,
                    })
                },
                now_s,
            );
        }
        self.say(format!("event {name}"), now_s);
        true
    }

    /// [`Session::open_entry`] on other samples of the same input (another range or
    /// event): the transforms applied are applied again to them, where the view shows
    /// call trees.
    fn open_reselected(&mut self, entry: &ViewEntry, doc: &Document, memo: ViewMemo, now_s: f64) {
        let ts: Vec<Transform> = self.transforms.drain(..).map(|(t, _)| t).collect();
        if ts.is_empty() {
            self.open_entry(entry, doc, memo, now_s);
        } else {
            self.open_transformed(doc.clone(), ts, entry.kind, memo, now_s);
        }
    }

    /// How a view opens that takes over `memo`.
    fn opts_for(&self, memo: &ViewMemo) -> ViewOptions {
        let mut opts = self.view_opts.clone();
        opts.color = memo.color.or(opts.color);
        opts.orientation = crate::geometry::Orientation::Flame;
        opts
    }

    /// Opens `entry` on `doc` in place of the current view, taking over `memo` (a
    /// timeline of samples whose time order would not fit in the memory is refused, the
    /// reason said).
    fn open_entry(&mut self, entry: &ViewEntry, doc: &Document, memo: ViewMemo, now_s: f64) {
        let (views, opts, kind) = (self.views, self.opts_for(&memo), entry.kind);
        let d = doc.clone();
        self.request_view(
            kind,
            Some(doc.clone()),
            memo,
            format!("opening the {} view…", kind.0),
            move || Ok(Made::view(make_view(views, kind, &d, &opts)?)),
            now_s,
        );
    }

    /// A comparison's keys: the window loads it again (sides swapped, or a side alone).
    fn compare_step(&mut self, action: Action, now_s: f64) -> Effect {
        let is_comparison = self.view.as_ref().is_some_and(|v| match v.document() {
            Document::Profile(p) => p.meta.comparison.is_some(),
            Document::Trace(_) => false,
        });
        if !is_comparison {
            self.say(
                "not a comparison: drop a base file with Shift held, or run scorch diff BEFORE AFTER",
                now_s,
            );
            return Effect::None;
        }
        Effect::Compare(match action {
            Action::SwapSides => CompareStep::Swap,
            Action::ShowBefore => CompareStep::Before,
            _ => CompareStep::After,
        })
    }

    /// The modifier keys held.
    pub fn mods(&self) -> Mods {
        self.mods
    }

    /// Hands `a` to the view and does what it answers.
    fn act(&mut self, a: Action, now_s: f64) -> Effect {
        match &mut self.view {
            Some(v) => {
                self.moved = true;
                let reply = v.act(a, now_s);
                self.after(reply, now_s)
            }
            None => Effect::None,
        }
    }

    /// Opens the search field (and closes the menu).
    fn open_search(&mut self) {
        self.search_open = true;
        self.menu = None;
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

    /// True once after the view moved (wheel, pinch, drag, a key's action): the frame
    /// drawn now shows motion, and places its labels under a deadline.
    pub fn take_moved(&mut self) -> bool {
        std::mem::take(&mut self.moved)
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
                self.moved = true;
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
            if self.mods.shift {
                v.press_shifted(x, y);
            } else {
                v.press(x, y);
            }
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
            self.moved = true;
        }
        self.menu = None;
        self.update_hover();
        self.redraw = true;
    }

    /// A pinch gesture by `delta` (positive: zoom in).
    pub fn pinch(&mut self, delta: f64) {
        if let Some(v) = &mut self.view {
            v.pinch(self.cursor, 1.0 + delta);
            self.moved = true;
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
                self.open_search();
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
            Action::NextEvent => {
                self.next_event(now_s);
                Effect::None
            }
            Action::SwapSides | Action::ShowBefore | Action::ShowAfter => {
                self.compare_step(action, now_s)
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
        // The view shown stays live while the next one is made.
        if let Some(p) = &self.pending {
            let note = p.note.clone();
            right = if right.is_empty() {
                note
            } else {
                format!("{note} · {right}")
            };
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

/// Refuses the timeline of a sampled profile whose time order would not fit in
/// `available` bytes (the reason, for the status line).
fn time_order_fits(kind: ViewKind, doc: &Document, available: u64) -> Result<(), String> {
    match doc {
        Document::Profile(_) if kind == crate::view::timeline::ENTRY.kind => doc
            .sampled()
            .map_or(Ok(()), |s| s.check_time_order(available)),
        _ => Ok(()),
    }
}

/// Whether `a` and `b` are the same document (not merely equal ones).
fn same_document(a: &Document, b: &Document) -> bool {
    match (a, b) {
        (Document::Profile(a), Document::Profile(b)) => std::sync::Arc::ptr_eq(a, b),
        (Document::Trace(a), Document::Trace(b)) => std::sync::Arc::ptr_eq(a, b),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
