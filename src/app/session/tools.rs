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
    pub(super) fn tool_at(&self, x: f32, y: f32) -> Option<Tool> {
        let (bar, vp) = (self.toolbar_rect()?, self.viewport?);
        toolbar::item_at(&self.toolbar()?, bar, vp.scale, x, y)
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
}

/// `name` with its first letter in capitals (a tab's label).
fn capitalized(name: &str) -> String {
    let mut c = name.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}
