//! The session's toolbar: its buttons for the current view, what the pointer is on, and
//! what a click on a button does.

use super::{Effect, Session};
use crate::view::input::Action;
use crate::view::title_and_toolbar;
use crate::view::toolbar::{self, Tool, ToolItem, Toolbar};
use crate::view::views_for;

impl Session {
    /// The toolbar's rectangle (`None` when the style has none).
    pub fn toolbar_rect(&self) -> Option<crate::geometry::RectPx> {
        let (vp, v) = (self.viewport?, self.view.as_ref()?);
        let (_, bar) = title_and_toolbar(vp, &v.style());
        (bar.h > 0.0).then_some(bar)
    }

    /// The toolbar's buttons for the current view, and the one under the pointer.
    pub fn toolbar(&self) -> Option<Toolbar> {
        let items = self.tool_items()?;
        let hovered = self.cursor.and_then(|(x, y)| self.tool_in(&items, x, y));
        Some(Toolbar { items, hovered })
    }

    /// The buttons, left group then right group.
    fn tool_items(&self) -> Option<Vec<ToolItem>> {
        let v = self.view.as_ref()?;
        let doc = v.document();
        let kind = v.kind();
        // Under 1000 logical pixels the right-hand buttons drop their captions so the
        // tabs keep their room.
        let compact = self
            .viewport
            .is_some_and(|vp| (vp.width_px as f32) < 1000.0 * vp.scale);
        let caption = |long: &str, short: &str| {
            if compact {
                short.to_string()
            } else {
                format!("{long}{short}")
            }
        };
        let button = |tool, label, active| ToolItem {
            tool,
            label,
            active,
        };
        let mut items: Vec<ToolItem> = views_for(self.views, &doc)
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let label = format!("{} {}", i + 1, capitalized(e.kind.0));
                button(Tool::Tab(i), label, e.kind == kind)
            })
            .collect();
        if !self.transforms.is_empty() {
            let n = self.transforms.len();
            items.push(button(Tool::Crumb(0), "All ›".into(), false));
            for (i, (t, _)) in self.transforms.iter().enumerate() {
                let last = i + 1 == n;
                let label = t.short_label(32);
                let label = if last { label } else { format!("{label} ›") };
                items.push(button(Tool::Crumb(i + 1), label, last));
            }
        }
        let search = if self.search_text.is_empty() {
            "Search (/)".to_string()
        } else {
            format!("Search: {}", self.search_text)
        };
        items.push(button(Tool::Search, search, self.search_open));
        if let Some(s) = doc.sampled().filter(|s| s.samples.events.len() > 1)
            && let Some(e) = s.samples.events.get(s.selection.event as usize)
        {
            items.push(button(Tool::Event, caption("Event: ", &e.name), false));
        }
        if let crate::model::Document::Profile(p) = &doc
            && p.meta.comparison.is_some()
        {
            items.push(button(Tool::Swap, caption("Swap ", "⇄"), false));
            items.push(button(Tool::Before, "Before".into(), false));
            items.push(button(Tool::After, "After".into(), false));
        }
        let memo = v.memo();
        if let Some(c) = v.color_label() {
            items.push(button(Tool::Color, caption("Colors: ", c), false));
        }
        if let Some(f) = memo.fit {
            items.push(button(Tool::Fit, caption("Fit: ", f.name()), false));
        }
        items.push(button(Tool::Screenshot, caption("Save ", "PNG"), false));
        items.push(button(Tool::Help, "?".into(), self.help_open));
        Some(items)
    }

    /// The button of `items` at `(x, y)`.
    fn tool_in(&self, items: &[ToolItem], x: f32, y: f32) -> Option<Tool> {
        let (bar, vp) = (self.toolbar_rect()?, self.viewport?);
        toolbar::item_at(items, bar, vp.scale, x, y)
    }

    /// The toolbar button at `(x, y)`, if the pointer is on one (the buttons are only
    /// made when it is over the toolbar).
    pub(super) fn tool_at(&self, x: f32, y: f32) -> Option<Tool> {
        if !self.on_toolbar(x, y) {
            return None;
        }
        self.tool_in(&self.tool_items()?, x, y)
    }

    /// Whether `(x, y)` is on the toolbar (buttons or not).
    pub(super) fn on_toolbar(&self, x: f32, y: f32) -> bool {
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
                self.open_search();
                Effect::None
            }
            Tool::Help => {
                self.help_open = !self.help_open;
                Effect::None
            }
            Tool::Screenshot => Effect::Screenshot,
            Tool::Event => {
                self.next_event(now_s);
                Effect::None
            }
            Tool::Swap => self.compare_step(Action::SwapSides, now_s),
            Tool::Before => self.compare_step(Action::ShowBefore, now_s),
            Tool::After => self.compare_step(Action::ShowAfter, now_s),
            Tool::Color => self.act(Action::CycleColor, now_s),
            Tool::Fit => self.act(Action::ToggleFit, now_s),
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
