//! Input as data: which key or wheel movement means what, as a table.
//!
//! The window translates its toolkit's events into [`Key`], [`Mods`] and wheel deltas;
//! [`key_action`] and [`search_key`] map keys to [`Action`]s and [`SearchEdit`]s, and
//! [`wheel`] maps a wheel movement to what it does. The window performs window-level
//! actions itself (quit, screenshot, search field, frame times) and hands the rest to the
//! active view, which ignores those it has no use for. Nothing here knows a window, so
//! every binding is unit-tested.

use super::state::ZoomSpeed;
use crate::model::transform::TransformKind;

/// A key, as far as scorch tells keys apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// A key that types this text (`"a"`, `"A"`, `"/"`, `"+"`).
    Char(String),
    /// Escape.
    Escape,
    /// Enter / Return.
    Enter,
    /// Backspace.
    Backspace,
    /// Delete.
    Delete,
    /// Arrow left.
    Left,
    /// Arrow right.
    Right,
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// Home.
    Home,
    /// End.
    End,
    /// F12.
    F12,
    /// Anything else.
    Other,
}

/// Modifier keys held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mods {
    /// Control (or Command on macOS).
    pub ctrl: bool,
    /// Shift.
    pub shift: bool,
    /// Alt.
    pub alt: bool,
}

/// What a key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Close the window.
    Quit,
    /// Open the search field.
    OpenSearch,
    /// Save a screenshot.
    Screenshot,
    /// Show or hide frame times.
    ToggleFrameTimes,
    /// Escape: close the menu, clear the search, else the view's own step back (zoom out,
    /// unfocus, deselect).
    Escape,
    /// Back through the zoom history.
    Back,
    /// Zoom in around the middle.
    ZoomIn,
    /// Zoom out around the middle.
    ZoomOut,
    /// Pan to earlier ticks (the content moves right).
    PanLeft,
    /// Pan to later ticks.
    PanRight,
    /// Scroll to show what is above (three rows).
    ScrollUp,
    /// Scroll to show what is below.
    ScrollDown,
    /// A page up.
    PageUp,
    /// A page down.
    PageDown,
    /// To the top (flame graphs: to the root).
    Home,
    /// To the bottom (flame graphs: to the deepest frames).
    End,
    /// Show everything again.
    Reset,
    /// Flame graph ⇄ icicle.
    FlipOrientation,
    /// Next color mode.
    CycleColor,
    /// Next search match.
    NextMatch,
    /// Previous search match.
    PrevMatch,
    /// Zoom to the selected item (Enter, `F`).
    ZoomToSelection,
    /// Timeline: bands per track ⇄ one tree.
    ToggleBands,
    /// Timeline: collapse or expand every band.
    ToggleAllBands,
    /// Switch to the n-th view (from 0) of those that show the document (keys `1`–`9`).
    ShowView(u8),
    /// Apply a call-tree transform to the function under the pointer (else the selected
    /// one).
    Transform(TransformKind),
    /// Undo the last transform.
    Undo,
    /// Labels keep the head or the tail of long names.
    ToggleFit,
    /// Show or hide the key help.
    Help,
    /// A sampled input with several events (`cpu-clock`, `sched:sched_switch` …): show
    /// the next one.
    NextEvent,
    /// A comparison: swap its sides.
    SwapSides,
    /// A comparison: show its "before" side alone.
    ShowBefore,
    /// A comparison: show its "after" side alone.
    ShowAfter,
}

/// What a key does to the open search field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchEdit {
    /// Close it and clear the search.
    Cancel,
    /// Close it and jump to the first match (`backwards`: the last one).
    Submit {
        /// Shift held.
        backwards: bool,
    },
    /// Delete the last character.
    DeleteChar,
    /// Append text.
    Type(String),
    /// Nothing.
    Ignore,
}

/// The action bound to `key` with `mods` held, outside the search field.
pub fn key_action(key: &Key, mods: Mods) -> Option<Action> {
    use Action::*;
    Some(match key {
        Key::Escape => Escape,
        Key::Backspace => Back,
        Key::Delete => Transform(TransformKind::Drop),
        Key::Left => PanLeft,
        Key::Right => PanRight,
        Key::Up => ScrollUp,
        Key::Down => ScrollDown,
        Key::PageUp => PageUp,
        Key::PageDown => PageDown,
        Key::Home => Home,
        Key::End => End,
        Key::Enter => ZoomToSelection,
        Key::F12 => ToggleFrameTimes,
        Key::Other => return None,
        Key::Char(c) => match (c.as_str(), mods.ctrl) {
            ("f" | "F", true) => OpenSearch,
            ("s" | "S", true) => Screenshot,
            ("q" | "Q", true) => Quit,
            ("z" | "Z", true) => Undo,
            ("/", _) => OpenSearch,
            ("p" | "P", _) => Screenshot,
            ("+" | "=" | "w" | "W", _) => ZoomIn,
            ("-" | "_" | "s" | "S", _) => ZoomOut,
            ("0", _) => Reset,
            (d @ ("1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9"), false) => {
                ShowView(d.as_bytes()[0] - b'1')
            }
            ("a" | "A", _) => PanLeft,
            ("d" | "D", _) => PanRight,
            ("i" | "I", _) => FlipOrientation,
            ("c" | "C", _) => CycleColor,
            ("n", _) => NextMatch,
            ("N", _) => PrevMatch,
            ("f" | "F", false) => ZoomToSelection,
            ("t" | "T", _) => ToggleBands,
            ("x" | "X", _) => ToggleAllBands,
            ("m" | "M", _) => Transform(TransformKind::Merge),
            ("o" | "O", _) => Transform(TransformKind::Focus),
            ("b" | "B", _) => Transform(TransformKind::FocusSubtree),
            ("r" | "R", _) => Transform(TransformKind::CollapseRecursion),
            ("k" | "K", _) => Transform(TransformKind::CollapsePackage),
            ("u" | "U", _) => Undo,
            ("h" | "H", _) => ToggleFit,
            ("?", _) => Help,
            ("e" | "E", _) => NextEvent,
            ("v" | "V", _) => SwapSides,
            ("[", _) => ShowBefore,
            ("]", _) => ShowAfter,
            _ => return None,
        },
    })
}

/// Every key and mouse action, as the `?` help lists them: `(keys, what they do)`.
pub const HELP: &[(&str, &str)] = &[
    (
        "1 – 7, click a tab",
        "view: flame graph, icicle, left heavy, table, both, sandwich",
    ),
    (
        "",
        "7: a diff side by side, samples in time order (a trace: 1 is its timeline)",
    ),
    (
        "click",
        "zoom to a bar · select a row · sort by a column header",
    ),
    (
        "double click",
        "a table row: its sandwich · a span: zoom to it",
    ),
    ("drag", "pan (timeline overview: move or select a window)"),
    (
        "drag the time axis, Shift+drag",
        "samples: select a time range; the other views count only it",
    ),
    (
        "E, click Event",
        "samples: show the next event (cpu-clock, sched …)",
    ),
    (
        "Shift + drop a file",
        "compare: the dropped file is the base (before) of the one shown",
    ),
    (
        "V, [ and ], click Swap",
        "a comparison: swap its sides · before alone · after alone",
    ),
    (
        "wheel",
        "zoom at the pointer (Ctrl finer, Shift faster; Alt scrolls)",
    ),
    (
        "right click",
        "menu: focus, copy, transforms, sandwich, fit",
    ),
    (
        "Enter, F",
        "zoom to the selection · the table: open its sandwich",
    ),
    (
        "Backspace",
        "back through zooms (sandwich: previous function)",
    ),
    ("Escape", "close the menu · clear the search · zoom out"),
    ("W S, + -, A D, ← →", "zoom in and out, pan"),
    (
        "↑ ↓ PgUp PgDn Home End",
        "scroll · move the table's selection",
    ),
    ("0", "show everything"),
    (
        "/, Ctrl+F, click Search",
        "search (regex or text); n and N: next, previous",
    ),
    ("I", "flame graph ⇄ icicle"),
    ("C, click Colors", "next color mode"),
    (
        "H, click Fit",
        "labels keep the head or the tail of long names",
    ),
    (
        "m o b r k Del",
        "merge · focus on function · focus on subtree ·",
    ),
    (
        "",
        "collapse recursion · collapse package · drop (at the pointer)",
    ),
    ("U, Ctrl+Z, click a crumb", "undo transforms"),
    (
        "T, X",
        "timeline: bands per track ⇄ one tree, collapse all bands",
    ),
    ("P, Ctrl+S", "screenshot (PNG that remembers the view)"),
    ("F12", "frame times"),
    ("?", "this help"),
    ("Ctrl+Q", "quit"),
];

/// What `key` (typing `text`) does to the open search field.
pub fn search_key(key: &Key, text: Option<&str>, mods: Mods) -> SearchEdit {
    match key {
        Key::Escape => SearchEdit::Cancel,
        Key::Enter => SearchEdit::Submit {
            backwards: mods.shift,
        },
        Key::Backspace => SearchEdit::DeleteChar,
        _ if mods.ctrl => SearchEdit::Ignore,
        _ => match text {
            Some(t) if !t.is_empty() && !t.chars().any(char::is_control) => {
                SearchEdit::Type(t.to_string())
            }
            _ => SearchEdit::Ignore,
        },
    }
}

/// A wheel movement, in lines (a notch) or pixels (trackpads).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WheelDelta {
    /// Notches: horizontal, vertical (positive: away from the user).
    Lines(f32, f32),
    /// Pixels: horizontal, vertical.
    Pixels(f64, f64),
}

/// What a wheel movement does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wheel {
    /// Zoom by `steps` notches (positive: in) around the pointer, and pan by `pan_px`
    /// pixels (a horizontal wheel; positive: to later ticks).
    Zoom {
        /// Notches.
        steps: f64,
        /// Ctrl: finer, Shift: faster.
        speed: ZoomSpeed,
        /// Horizontal pan, pixels.
        pan_px: f64,
    },
    /// Alt: scroll rows by `rows` (positive: show what is above).
    Scroll {
        /// Rows.
        rows: f32,
    },
}

/// What `delta` does with `mods` held: a notch is one zoom step (pixels: 40 a step);
/// horizontal notches pan 40 px; Alt scrolls three rows a notch.
pub fn wheel(delta: WheelDelta, mods: Mods) -> Wheel {
    let (dx, dy) = match delta {
        WheelDelta::Lines(x, y) => (f64::from(x) * 40.0, f64::from(y)),
        WheelDelta::Pixels(x, y) => (x, y / 40.0),
    };
    if mods.alt {
        return Wheel::Scroll {
            rows: dy as f32 * 3.0,
        };
    }
    let speed = if mods.ctrl {
        ZoomSpeed::Fine
    } else if mods.shift {
        ZoomSpeed::Fast
    } else {
        ZoomSpeed::Normal
    };
    Wheel::Zoom {
        steps: dy,
        speed,
        pan_px: dx,
    }
}

/// A left-button press becomes a drag once the pointer moves this far (logical pixels are
/// not used: the window's physical pixels, as winit reports them).
pub const DRAG_THRESHOLD_PX: f32 = 3.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(s: &str) -> Key {
        Key::Char(s.to_string())
    }

    const NONE: Mods = Mods {
        ctrl: false,
        shift: false,
        alt: false,
    };
    const CTRL: Mods = Mods {
        ctrl: true,
        shift: false,
        alt: false,
    };

    #[test]
    fn the_key_table() {
        use Action::*;
        let table: &[(Key, Mods, Option<Action>)] = &[
            (ch("/"), NONE, Some(OpenSearch)),
            (ch("f"), CTRL, Some(OpenSearch)),
            (ch("f"), NONE, Some(ZoomToSelection)),
            (ch("F"), NONE, Some(ZoomToSelection)),
            (ch("s"), CTRL, Some(Screenshot)),
            (ch("s"), NONE, Some(ZoomOut)),
            (ch("S"), NONE, Some(ZoomOut)),
            (ch("p"), NONE, Some(Screenshot)),
            (ch("P"), CTRL, Some(Screenshot)),
            (ch("q"), CTRL, Some(Quit)),
            (ch("q"), NONE, None),
            (ch("+"), NONE, Some(ZoomIn)),
            (ch("="), NONE, Some(ZoomIn)),
            (ch("w"), NONE, Some(ZoomIn)),
            (ch("-"), NONE, Some(ZoomOut)),
            (ch("_"), NONE, Some(ZoomOut)),
            (ch("0"), NONE, Some(Reset)),
            (ch("1"), NONE, Some(ShowView(0))),
            (ch("9"), NONE, Some(ShowView(8))),
            (ch("2"), CTRL, None),
            (ch("a"), NONE, Some(PanLeft)),
            (ch("d"), NONE, Some(PanRight)),
            (ch("i"), NONE, Some(FlipOrientation)),
            (ch("I"), NONE, Some(FlipOrientation)),
            (ch("c"), NONE, Some(CycleColor)),
            (ch("n"), NONE, Some(NextMatch)),
            (ch("N"), NONE, Some(PrevMatch)),
            (ch("t"), NONE, Some(ToggleBands)),
            (ch("x"), NONE, Some(ToggleAllBands)),
            (ch("z"), NONE, None),
            (ch("z"), CTRL, Some(Undo)),
            (ch("u"), NONE, Some(Undo)),
            (ch("m"), NONE, Some(Transform(TransformKind::Merge))),
            (ch("o"), NONE, Some(Transform(TransformKind::Focus))),
            (ch("b"), NONE, Some(Transform(TransformKind::FocusSubtree))),
            (
                ch("r"),
                NONE,
                Some(Transform(TransformKind::CollapseRecursion)),
            ),
            (
                ch("k"),
                NONE,
                Some(Transform(TransformKind::CollapsePackage)),
            ),
            (Key::Delete, NONE, Some(Transform(TransformKind::Drop))),
            (ch("h"), NONE, Some(ToggleFit)),
            (ch("?"), NONE, Some(Help)),
            (Key::Escape, NONE, Some(Escape)),
            (Key::Backspace, NONE, Some(Back)),
            (Key::Left, NONE, Some(PanLeft)),
            (Key::Right, NONE, Some(PanRight)),
            (Key::Up, NONE, Some(ScrollUp)),
            (Key::Down, NONE, Some(ScrollDown)),
            (Key::PageUp, NONE, Some(PageUp)),
            (Key::PageDown, NONE, Some(PageDown)),
            (Key::Home, NONE, Some(Home)),
            (Key::End, NONE, Some(End)),
            (Key::Enter, NONE, Some(ZoomToSelection)),
            (Key::F12, NONE, Some(ToggleFrameTimes)),
            (Key::Other, NONE, None),
        ];
        for (k, m, want) in table {
            assert_eq!(key_action(k, *m), *want, "{k:?} with {m:?}");
        }
    }

    #[test]
    fn the_search_field_takes_typing() {
        assert_eq!(search_key(&Key::Escape, None, NONE), SearchEdit::Cancel);
        assert_eq!(
            search_key(&Key::Enter, None, NONE),
            SearchEdit::Submit { backwards: false }
        );
        let shift = Mods {
            shift: true,
            ..NONE
        };
        assert_eq!(
            search_key(&Key::Enter, None, shift),
            SearchEdit::Submit { backwards: true }
        );
        assert_eq!(
            search_key(&Key::Backspace, None, NONE),
            SearchEdit::DeleteChar
        );
        assert_eq!(
            search_key(&ch("n"), Some("n"), NONE),
            SearchEdit::Type("n".into()),
            "n types, it does not jump"
        );
        assert_eq!(search_key(&ch("f"), Some("f"), CTRL), SearchEdit::Ignore);
        assert_eq!(
            search_key(&Key::Other, Some("\t"), NONE),
            SearchEdit::Ignore
        );
    }

    #[test]
    fn the_wheel_zooms_pans_and_scrolls() {
        assert_eq!(
            wheel(WheelDelta::Lines(0.0, 2.0), NONE),
            Wheel::Zoom {
                steps: 2.0,
                speed: ZoomSpeed::Normal,
                pan_px: 0.0
            }
        );
        assert_eq!(
            wheel(WheelDelta::Lines(1.0, 0.0), CTRL),
            Wheel::Zoom {
                steps: 0.0,
                speed: ZoomSpeed::Fine,
                pan_px: 40.0
            }
        );
        let shift = Mods {
            shift: true,
            ..NONE
        };
        assert_eq!(
            wheel(WheelDelta::Pixels(0.0, 80.0), shift),
            Wheel::Zoom {
                steps: 2.0,
                speed: ZoomSpeed::Fast,
                pan_px: 0.0
            }
        );
        let alt = Mods { alt: true, ..NONE };
        assert_eq!(
            wheel(WheelDelta::Lines(0.0, -1.0), alt),
            Wheel::Scroll { rows: -3.0 }
        );
    }
}
