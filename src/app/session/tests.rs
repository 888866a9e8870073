//! The window driven as a user drives it, without a window.

use super::*;
use crate::geometry::Orientation;
use crate::import::{Limits, load_bytes};
use crate::view::draw::FixedMeasure;
use crate::view::toolbar::{self, Tool};
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
    session_on(views, Document::Profile(Arc::new(p)), 800, None)
}

/// A session showing `doc` in a window `width` × 600 px, in view `kind` (`None`: the
/// document's usual one).
fn session_on(
    views: &'static [ViewEntry],
    doc: Document,
    width: u32,
    kind: Option<crate::view::ViewKind>,
) -> Session {
    let mut s = Session::with_views(views);
    s.resize(Viewport {
        width_px: width,
        height_px: 600,
        scale: 1.0,
    });
    let opts = ViewOptions {
        style: crate::app::window_style(),
        kind,
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

/// Issue 14's soak: random keys stacked hundreds of transforms, each keeping the profile
/// it replaced, and memory grew without end. The stack keeps the first document and the
/// newest few; undoing past them makes each step again, equal to what it was.
#[test]
fn the_undo_stack_keeps_few_documents_and_undoes_every_step() {
    let text: String = (0..30)
        .map(|i| format!("main;f{i};g{i} {}\nmain;h;f{i} 1\n", i + 1))
        .collect();
    let mut s = session(&text);
    let folded = |s: &Session| -> Vec<String> {
        let Some(Document::Profile(p)) = s.document() else {
            panic!("a profile")
        };
        p.folded_lines()
    };
    let mut states = vec![folded(&s)];
    for i in 0..24 {
        s.apply_transform(Transform::Merge(format!("f{i}")), NOW);
        states.push(folded(&s));
        let kept = s.transforms.iter().filter(|(_, d)| d.is_some()).count();
        assert!(
            kept <= super::transforms::UNDO_DOCS + 1,
            "{kept} documents kept"
        );
    }
    assert_eq!(s.transforms().count(), 24);
    assert_ne!(states[0], states[24]);
    for k in (0..24).rev() {
        assert!(s.undo_transforms(k, NOW));
        assert_eq!(folded(&s), states[k], "after undoing to {k} transforms");
    }
    assert!(!s.undo_transforms(0, NOW));
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
            text: format!("{} samples, /{}", p.tree.grand_total(), self.query).into(),
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

/// A `perf script` of two threads and two events: thread 11 runs `a` for 10 ms then `b`
/// for 10 ms (cpu-clock every millisecond), and switches out twice.
fn perf_two_events() -> String {
    let mut out = String::new();
    for i in 0..20u64 {
        let f = if i < 10 { "a" } else { "b" };
        out.push_str(&format!(
            "py 10/11 [000] 1.{:06}: 1000000 cpu-clock:\n\t7f0000a1 {f} (/x)\n\t7f0000b2 main (/x)\n\n",
            i * 1000
        ));
        out.push_str(&format!(
            "py 10/12 [001] 1.{:06}: 1000000 cpu-clock:\n\t7f0000c3 c (/x)\n\t7f0000b2 main (/x)\n\n",
            i * 1000 + 500
        ));
    }
    for t in [5_000u64, 15_000] {
        out.push_str(&format!(
            "py 10/11 [000] 1.{t:06}: 1 sched:sched_switch:\n\tffffffff81000004 schedule (/k)\n\t7f0000a1 a (/x)\n\t7f0000b2 main (/x)\n\n"
        ));
    }
    out
}

/// A session on [`perf_two_events`] in its timeline (views: timeline, flame graph …).
fn sampled_session() -> Session {
    let p = load_bytes("t.perf", perf_two_events().as_bytes(), Limits::default()).unwrap();
    let doc = Document::Profile(Arc::new(p));
    let s = session_on(VIEWS, doc, 900, Some(crate::view::ViewKind::TIMELINE));
    assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::TIMELINE);
    s
}

/// Switches to the view of `kind`, as its number key does.
fn show_kind(s: &mut Session, kind: crate::view::ViewKind) {
    let doc = s.view().unwrap().document();
    let n = views_for(VIEWS, &doc)
        .iter()
        .position(|e| e.kind == kind)
        .expect("the view shows the document");
    let key = (n + 1).to_string();
    s.key(&ch(&key), Some(&key), NOW);
    assert_eq!(s.view().unwrap().kind(), kind);
}

fn timeline(s: &Session) -> &crate::view::timeline::TimelineView {
    s.view().and_then(|v| v.downcast_ref()).expect("a timeline")
}

/// The call tree's total and the names of its functions in the view shown.
fn shown_total(s: &Session) -> (u64, Vec<String>) {
    let p = s.view().unwrap().document().as_profile().unwrap();
    let names = (0..p.tree.len() as u32)
        .map(|n| p.names.get(p.tree.name(n)).to_string())
        .collect();
    (p.tree.grand_total(), names)
}

#[test]
fn dragging_the_time_axis_selects_a_range_the_flame_graph_counts() {
    let mut s = sampled_session();
    let g = timeline(&s).geometry(1.0);
    // Drag on the axis from the trace's start to a bit under half of it: thread 11's
    // first 10 samples (all `a`) and thread 12's first ones.
    let total = timeline(&s).tracks().layout.total_ticks;
    let cam = timeline(&s).state().camera;
    let x_of = |t: u64| g.graph.x + cam.x_of(t) as f32;
    let y = g.axis.y + g.axis.h / 2.0;
    s.pointer_moved(x_of(0), y);
    s.left_pressed(NOW);
    s.pointer_moved(x_of(total / 4), y);
    s.pointer_moved(x_of(9_900_000), y);
    s.left_released(NOW);
    let (a, b) = timeline(&s).range().expect("a range");
    assert!(a == 0 && (9_800_000..=10_000_000).contains(&b), "{a} {b}");
    let in_range = timeline(&s).samples_in_range().unwrap();
    // 10 samples of thread 11 (0 … 9 ms) and 10 of thread 12 (0.5 … 9.5 ms).
    assert_eq!(in_range, 20);
    let hint = s.view().unwrap().status_hint();
    assert!(
        hint.starts_with("range ") && hint.contains("20 samples"),
        "{hint}"
    );
    // The flame graph counts the range only: no `b`, and 20 samples of 1 ms.
    s.key(&ch("2"), Some("2"), NOW);
    assert_ne!(s.view().unwrap().kind(), crate::view::ViewKind::TIMELINE);
    let (total_ns, names) = shown_total(&s);
    assert_eq!(total_ns, 20_000_000);
    assert!(names.iter().any(|n| n == "a") && !names.iter().any(|n| n == "b"));
    let heading = s.view().unwrap().heading(Purpose::Window).subtitle;
    assert!(
        heading.contains("cpu-clock samples from 0 s to 9."),
        "{heading}"
    );
    // Back in the timeline the range is still there; Escape clears it, and the flame
    // graph counts everything again.
    show_kind(&mut s, crate::view::ViewKind::TIMELINE);
    assert!(timeline(&s).range().is_some());
    s.key(&Key::Escape, None, NOW);
    assert!(timeline(&s).range().is_none());
    s.key(&ch("2"), Some("2"), NOW);
    assert_eq!(shown_total(&s).0, 40_000_000);
}

#[test]
fn shift_drag_in_the_bands_selects_a_range_and_a_click_on_the_axis_clears_it() {
    let mut s = sampled_session();
    let g = timeline(&s).geometry(1.0);
    let cam = timeline(&s).state().camera;
    let x_of = |t: u64| g.graph.x + cam.x_of(t) as f32;
    let y = g.graph.y + 30.0;
    s.modifiers(Mods {
        shift: true,
        ..Mods::default()
    });
    s.pointer_moved(x_of(12_000_000), y);
    s.left_pressed(NOW);
    s.pointer_moved(x_of(16_000_000), y);
    s.left_released(NOW);
    s.modifiers(Mods::default());
    let (a, b) = timeline(&s).range().expect("a range");
    assert!((11_900_000..=12_100_000).contains(&a) && (15_900_000..=16_100_000).contains(&b));
    // A plain drag pans and leaves the range alone.
    s.pointer_moved(x_of(5_000_000), y);
    s.left_pressed(NOW);
    s.pointer_moved(x_of(6_000_000), y);
    s.left_released(NOW);
    assert_eq!(timeline(&s).range(), Some((a, b)));
    // A click on the axis clears it.
    let ay = g.axis.y + g.axis.h / 2.0;
    s.pointer_moved(x_of(1_000_000), ay);
    s.left_pressed(NOW);
    s.left_released(NOW);
    assert!(timeline(&s).range().is_none());
}

#[test]
fn the_event_button_and_key_show_the_next_event() {
    let mut s = sampled_session();
    let sel = |s: &Session| {
        s.view()
            .unwrap()
            .document()
            .sampled()
            .map(|x| x.selection.event)
    };
    assert_eq!(sel(&s), Some(0));
    // The toolbar names the event shown.
    let items = s.toolbar().unwrap().items;
    let ev = items
        .iter()
        .find(|i| i.tool == Tool::Event)
        .expect("an Event button");
    assert!(ev.label.contains("cpu-clock"), "{}", ev.label);
    s.key(&ch("e"), Some("e"), NOW);
    assert_eq!(sel(&s), Some(1));
    assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::TIMELINE);
    // Two sched_switch samples of one thread: one track, a few spans.
    assert_eq!(timeline(&s).trace().spans.tracks.len(), 1);
    s.key(&ch("2"), Some("2"), NOW);
    let (total, names) = shown_total(&s);
    assert_eq!(total, 2);
    assert!(names.iter().any(|n| n == "schedule"));
    // The button cycles back to the first event, in the same view.
    s.use_tool(Tool::Event, NOW);
    assert_eq!(sel(&s), Some(0));
    assert_eq!(shown_total(&s).0, 40_000_000);
}

#[test]
fn a_comparison_has_swap_and_side_buttons_and_keys() {
    let load = |n: &str, t: &str| load_bytes(n, t.as_bytes(), Limits::default()).unwrap();
    let d = crate::model::compare::diff_profiles(
        &load("a.folded", "main;f 3\n"),
        &load("b.folded", "main;f 1\nmain;g 2\n"),
        Default::default(),
    )
    .unwrap();
    let doc = Document::Profile(Arc::new(d));
    let mut s = session_on(VIEWS, doc, 1200, None);
    let items = s.toolbar().unwrap().items;
    for t in [Tool::Swap, Tool::Before, Tool::After] {
        assert!(items.iter().any(|i| i.tool == t), "{t:?}");
    }
    assert!(items.iter().any(|i| i.label.ends_with("Side by side")));
    assert_eq!(
        s.key(&ch("v"), Some("v"), NOW),
        Effect::Compare(CompareStep::Swap)
    );
    assert_eq!(
        s.key(&ch("["), Some("["), NOW),
        Effect::Compare(CompareStep::Before)
    );
    assert_eq!(
        s.use_tool(Tool::After, NOW),
        Effect::Compare(CompareStep::After)
    );
    // A profile that is not a comparison says how to make one.
    let mut plain = session("main;f 1\n");
    assert_eq!(plain.key(&ch("v"), Some("v"), NOW), Effect::None);
    assert!(status(&plain).status.right.contains("Shift"));
}

#[test]
fn only_moving_the_view_gives_the_next_frame_a_label_deadline() {
    let mut s = session("main;work 6\nmain;idle 4\n");
    assert!(!s.take_moved(), "opening a document is not motion");
    let g = flame(&s).geometry(1.0);
    let (x, y) = (g.graph.x + g.graph.w * 0.3, g.row_top(1) + 2.0);
    // Hovering redraws with every label.
    s.pointer_moved(x, y);
    assert!(!s.take_moved());
    s.wheel(WheelDelta::Lines(0.0, 1.0));
    assert!(s.take_moved(), "a wheel zoom moves the view");
    assert!(!s.take_moved(), "the frame after it is drawn at rest");
    // A drag pans; a press without a drag does not.
    s.left_pressed(NOW);
    assert!(!s.take_moved());
    s.pointer_moved(x + 40.0, y);
    assert!(s.take_moved(), "a drag moves the view");
    s.left_released(NOW);
    s.pinch(0.1);
    assert!(s.take_moved(), "a pinch moves the view");
    s.key(&ch("+"), Some("+"), NOW + 1.0);
    assert!(s.take_moved(), "a key's action moves the view");
    assert!(!s.take_moved());
}

/// A sampled profile's timeline is refused, with the numbers, when its time order would
/// not fit in the memory free; the other views stay open to it.
#[test]
fn a_time_order_too_big_for_the_memory_is_refused_with_its_size() {
    let p = load_bytes("t.perf", perf_two_events().as_bytes(), Limits::default()).unwrap();
    let doc = Document::Profile(Arc::new(p));
    let (spans, bytes) = doc.sampled().unwrap().time_order_size();
    // Thread 11: main over 20 samples, a, b; thread 12: main, c.
    assert_eq!(
        (spans, bytes),
        (5, 5 * crate::model::timeorder::BYTES_PER_SPAN)
    );
    let timeline = &crate::view::timeline::ENTRY;
    assert!(time_order_fits(timeline.kind, &doc, bytes).is_ok());
    let why = time_order_fits(timeline.kind, &doc, bytes - 1).unwrap_err();
    assert!(
        why.starts_with("its 5 spans would take") && why.contains("--tid"),
        "{why}"
    );
    assert!(time_order_fits(VIEWS[0].kind, &doc, 0).is_ok());
    // Opened, it is the time order the count said.
    let trace = doc.as_trace().unwrap();
    assert_eq!(trace.spans.len() as u64, spans);
}

/// A step of a scripted session.
type Step = Box<dyn Fn(&mut Session)>;

/// The step that presses key `k`.
fn press(k: &'static str) -> Step {
    Box::new(move |s: &mut Session| {
        s.key(&ch(k), Some(k), NOW);
    })
}

/// Runs the view job the session asked for, as the window's opener thread does, and
/// hands its view back: whether one was shown.
fn settle(s: &mut Session) -> bool {
    match s.take_open_job() {
        Some(job) => {
            let id = job.id;
            let made = job.run();
            s.opened(id, made, NOW)
        }
        None => false,
    }
}

/// What a user sees of a session: the view's kind, its document's total and functions,
/// the transforms applied, the zoomed bar, the status line.
fn seen(
    s: &Session,
) -> (
    crate::view::ViewKind,
    u64,
    Vec<String>,
    usize,
    String,
    String,
) {
    let v = s.view().unwrap();
    let (total, mut names) = match v.document() {
        Document::Profile(_) => shown_total(s),
        Document::Trace(t) => (t.spans.len() as u64, Vec::new()),
    };
    names.sort();
    names.dedup();
    let zoom = format!("{:?}", v.memo().zoom_path);
    (
        v.kind(),
        total,
        names,
        s.transforms().count(),
        zoom,
        status(s).status.right,
    )
}

/// The same inputs give the same window whether views open at once or as jobs whose
/// views arrive later: view switches, a zoom carried over, transforms and their undo,
/// the next event, a time range counted by the flame graph.
#[test]
fn views_opened_as_jobs_end_where_views_opened_at_once_do() {
    let steps: Vec<(&str, Step)> = vec![
        (
            "click a",
            Box::new(|s: &mut Session| {
                let g = flame(s).geometry(1.0);
                s.pointer_moved(g.graph.x + g.graph.w * 0.1, g.row_top(2) + 2.0);
                s.left_pressed(NOW);
                s.left_released(NOW);
                s.tick(NOW + 1.0);
            }),
        ),
        ("left heavy", press("3")),
        ("icicle", press("2")),
        ("merge the hovered bar", press("m")),
        ("table", press("4")),
        ("undo", press("u")),
        ("flame graph", press("1")),
        ("sandwich", press("6")),
    ];
    let text = "main;a;f 1\nmain;b;f 3\nmain;c 2\n";
    let (mut now, mut later) = (session(text), session(text));
    later.open_in_background();
    for (what, step) in &steps {
        step(&mut now);
        step(&mut later);
        assert!(now.take_open_job().is_none(), "{what}: at once, no job");
        let pending = later.opening();
        let shown = settle(&mut later);
        assert_eq!(pending.is_some(), shown, "{what}: a job and its view");
        assert_eq!(seen(&now), seen(&later), "after {what}");
    }
    // The next event and a time range of samples.
    let (mut now, mut later) = (sampled_session(), sampled_session());
    later.open_in_background();
    let steps: Vec<(&str, Step)> = vec![
        ("next event", press("e")),
        ("flame graph of it", press("2")),
        ("first event again", press("e")),
        (
            "back to the timeline",
            Box::new(|s: &mut Session| {
                let n = views_for(VIEWS, &s.document().unwrap())
                    .iter()
                    .position(|e| e.kind == crate::view::ViewKind::TIMELINE)
                    .unwrap();
                s.switch_view(n, NOW);
            }),
        ),
        (
            "a range of it in the flame graph",
            Box::new(|s: &mut Session| {
                let g = timeline(s).geometry(1.0);
                let total = timeline(s).tracks().layout.total_ticks;
                let cam = timeline(s).state().camera;
                let x_of = |t: u64| g.graph.x + cam.x_of(t) as f32;
                let y = g.axis.y + g.axis.h / 2.0;
                s.pointer_moved(x_of(0), y);
                s.left_pressed(NOW);
                s.pointer_moved(x_of(total * 4 / 10), y);
                s.left_released(NOW);
                s.key(&ch("2"), Some("2"), NOW);
            }),
        ),
    ];
    for (what, step) in &steps {
        step(&mut now);
        step(&mut later);
        settle(&mut later);
        assert_eq!(seen(&now), seen(&later), "after {what}");
    }
    assert_eq!(shown_total(&later).0, shown_total(&now).0);
}

/// While a view is made the one shown stays live (hover, status), the status line says
/// what is coming, a later request supersedes an earlier one, the shown view's own key
/// takes the request back, and a new document drops it.
#[test]
fn a_view_being_made_leaves_the_window_live_and_the_latest_request_wins() {
    let mut s = session("main;a 1\nmain;b 3\n");
    s.open_in_background();
    s.key(&ch("2"), Some("2"), NOW);
    assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::FLAME_GRAPH);
    assert_eq!(s.opening(), Some(crate::view::ViewKind::ICICLE));
    assert!(
        status(&s).status.right.contains("opening the icicle view…"),
        "{:?}",
        status(&s).status
    );
    // The flame graph still answers the pointer.
    let g = flame(&s).geometry(1.0);
    s.pointer_moved(g.graph.x + g.graph.w * 0.1, g.row_top(2) + 2.0);
    assert_eq!(s.view().unwrap().tooltip()[0], "a");
    let first = s.take_open_job().expect("the icicle's job");
    // Pressed again: nothing more to make.
    s.key(&ch("2"), Some("2"), NOW);
    assert!(s.take_open_job().is_none());
    // Left heavy supersedes the icicle: its view, when it comes, is not shown.
    s.key(&ch("3"), Some("3"), NOW);
    let second = s.take_open_job().expect("left heavy's job");
    let id = first.id;
    assert!(!s.opened(id, first.run(), NOW));
    assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::FLAME_GRAPH);
    let id = second.id;
    assert!(s.opened(id, second.run(), NOW));
    assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::LEFT_HEAVY);
    assert_eq!(s.opening(), None);
    assert!(!status(&s).status.right.contains("opening"));
    // The shown view's key while another is being made: back to it, nothing made.
    s.key(&ch("4"), Some("4"), NOW);
    assert_eq!(s.opening(), Some(crate::view::ViewKind::TABLE));
    s.key(&ch("3"), Some("3"), NOW);
    assert_eq!(s.opening(), None);
    assert!(s.take_open_job().is_none());
    // A transform while a view is made applies to the document it is made of; the
    // transform runs with the next view's making, and commands that change the document
    // wait for it (said on the status line).
    s.key(&ch("1"), Some("1"), NOW);
    let shown = s.view().unwrap().document();
    s.apply_transform(
        crate::model::transform::Transform::parse("drop:b").unwrap(),
        NOW,
    );
    assert_eq!(s.opening(), Some(crate::view::ViewKind::FLAME_GRAPH));
    assert!(
        status(&s).status.right.contains("applying"),
        "{:?}",
        status(&s).status
    );
    assert_eq!(s.transforms().count(), 0, "stacked once shown");
    s.key(&ch("4"), Some("4"), NOW);
    assert!(
        status(&s).status.right.contains("wait: applying"),
        "{:?}",
        status(&s).status
    );
    assert_eq!(s.opening(), Some(crate::view::ViewKind::FLAME_GRAPH));
    assert!(settle(&mut s));
    assert_eq!(s.transforms().count(), 1);
    assert!(!same_document(&s.view().unwrap().document(), &shown));
    assert_eq!(shown_total(&s).0, 1);
    s.key(&ch("4"), Some("4"), NOW);
    assert!(settle(&mut s));
    assert_eq!(s.view().unwrap().kind(), crate::view::ViewKind::TABLE);
    assert_eq!(shown_total(&s).0, 1);
    // Undone: the document before it, in the table.
    s.key(&ch("u"), Some("u"), NOW);
    assert!(settle(&mut s));
    assert!(same_document(&s.view().unwrap().document(), &shown));
    assert_eq!(s.transforms().count(), 0);
    // A new document drops the view being made.
    s.key(&ch("1"), Some("1"), NOW);
    let job = s.take_open_job().expect("a job");
    let p = load_bytes("u.folded", b"x;y 2\n", Limits::default()).unwrap();
    let doc = Document::Profile(Arc::new(p));
    let opts = ViewOptions {
        style: crate::app::window_style(),
        ..ViewOptions::default()
    };
    s.show(default_view(&doc, &opts), opts);
    let id = job.id;
    assert!(!s.opened(id, job.run(), NOW));
    assert_eq!(shown_total(&s).0, 2);
}

/// Transforms and undo (past the documents the undo stack keeps, so that undo makes
/// them again), the next event with a transform applied again to it, and a screenshot
/// state restored: the same whether views open at once or as jobs.
#[test]
fn transforms_undo_and_restores_as_jobs_end_where_they_do_at_once() {
    use crate::model::transform::Transform;
    let text: String = (0..8)
        .map(|i| format!("main;f{i};g{i} {}\n", i + 1))
        .collect();
    let (mut now, mut later) = (session(&text), session(&text));
    later.open_in_background();
    let both = |now: &mut Session, later: &mut Session, what: &str, step: &dyn Fn(&mut Session)| {
        step(now);
        step(later);
        settle(later);
        assert_eq!(seen(now), seen(later), "after {what}");
    };
    for i in 0..7 {
        let t = Transform::parse(&format!("drop:f{i}")).unwrap();
        both(&mut now, &mut later, &format!("drop f{i}"), &|s| {
            s.apply_transform(t.clone(), NOW)
        });
    }
    assert_eq!(shown_total(&later).0, 8);
    let state = later.shot_state(None).unwrap();
    for k in (0..7).rev() {
        both(&mut now, &mut later, &format!("undo to {k}"), &|s| {
            assert!(s.undo_transforms(k, NOW));
        });
        // f0 … f(k-1) still dropped: their 1 … k samples gone.
        assert_eq!(
            shown_total(&later).0,
            36 - (k * (k + 1) / 2) as u64,
            "undo to {k}"
        );
    }
    assert_eq!(shown_total(&later).0, 36);
    both(
        &mut now,
        &mut later,
        "a transform of a name not there",
        &|s| s.apply_transform(Transform::parse("drop:nothere").unwrap(), NOW),
    );
    both(&mut now, &mut later, "the screenshot's state", &|s| {
        s.restore_shot(&state, NOW)
    });
    assert_eq!(later.transforms().count(), 7);
    assert_eq!(shown_total(&later).0, 8);

    let (mut now, mut later) = (sampled_session(), sampled_session());
    later.open_in_background();
    both(&mut now, &mut later, "the flame graph", &press("2"));
    both(&mut now, &mut later, "drop a", &|s| {
        s.apply_transform(Transform::parse("drop:a").unwrap(), NOW)
    });
    both(
        &mut now,
        &mut later,
        "the next event, a dropped again",
        &|s| {
            s.key(&ch("e"), Some("e"), NOW);
        },
    );
    both(&mut now, &mut later, "the first event again", &|s| {
        s.key(&ch("e"), Some("e"), NOW);
    });
    assert_eq!(later.transforms().count(), 1);
    assert!(!shown_total(&later).1.iter().any(|n| n == "a"));
}
