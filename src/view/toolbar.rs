//! The window's toolbar and key help: one row of buttons under the title band, and the
//! panel the `?` button opens.
//!
//! The toolbar holds the view tabs (those that show the document, numbered as their keys),
//! the transforms applied as a breadcrumb (a click on one goes back to it), and at the right
//! the search field, the color mode, the label fit, a screenshot button and `?`. Button widths come from the
//! character count, not from shaping, so the window's hit test ([`item_at`]) needs no
//! fonts and agrees with what [`draw`] draws.

use super::draw::{Frame, MUTED_COLOR, Rect, TITLE_COLOR, Text, line_height, outline, rgba8};
use crate::geometry::RectPx;

/// What a toolbar button does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Switch to the n-th view of those that show the document.
    Tab(usize),
    /// Go back to the n-th step of the transform breadcrumb (0: no transforms).
    Crumb(usize),
    /// Open the search field.
    Search,
    /// Next color mode.
    Color,
    /// Next event of a sampled input.
    Event,
    /// A comparison: swap its sides.
    Swap,
    /// A comparison: its "before" side alone.
    Before,
    /// A comparison: its "after" side alone.
    After,
    /// Switch which part of long names labels keep.
    Fit,
    /// Save a screenshot.
    Screenshot,
    /// Show or hide the key help.
    Help,
}

/// One button.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolItem {
    /// What it does.
    pub tool: Tool,
    /// Its text.
    pub label: String,
    /// Drawn as selected (the current view, the last transform).
    pub active: bool,
}

/// The toolbar's buttons, left group then right group (see [`Tool`]), and the one under
/// the pointer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Toolbar {
    /// Buttons.
    pub items: Vec<ToolItem>,
    /// The button under the pointer.
    pub hovered: Option<Tool>,
}

/// Whether `tool` sits in the right-hand group.
fn right_group(tool: Tool) -> bool {
    matches!(
        tool,
        Tool::Search
            | Tool::Event
            | Tool::Swap
            | Tool::Before
            | Tool::After
            | Tool::Color
            | Tool::Fit
            | Tool::Screenshot
            | Tool::Help
    )
}

/// Font size of the toolbar's text at `scale`.
fn font(scale: f32) -> f32 {
    (12.0 * scale).round()
}

/// A button's width: a generous estimate of its text's width plus padding (the UI font's
/// glyphs average about 0.55 em over words).
fn button_width(item: &ToolItem, scale: f32) -> f32 {
    let chars = item.label.chars().count() as f32;
    (chars * 0.58 * font(scale) + 2.0 * (8.0 * scale).round()).round()
}

/// The rectangle of each button in a toolbar `bar` (whole image width), in item order.
/// The left group runs from the left margin, the right group ends at the right margin;
/// a left-group button that would overlap the right group is cut to fit, or given no
/// width when less than 60 logical pixels are left.
pub fn layout(items: &[ToolItem], bar: RectPx, scale: f32) -> Vec<RectPx> {
    let gap = (4.0 * scale).round();
    let margin = (8.0 * scale).round();
    let inset = (3.0 * scale).round();
    let (y, h) = (bar.y + inset, (bar.h - 2.0 * inset).max(1.0));
    let mut rects = vec![
        RectPx {
            x: 0.0,
            y,
            w: 0.0,
            h
        };
        items.len()
    ];
    // The search field is 160 logical pixels wide when the tabs leave room, down to 80.
    let tabs: f32 = items
        .iter()
        .filter(|it| matches!(it.tool, Tool::Tab(_)))
        .map(|it| button_width(it, scale) + gap)
        .sum();
    let others: f32 = items
        .iter()
        .filter(|it| right_group(it.tool) && it.tool != Tool::Search)
        .map(|it| button_width(it, scale) + gap)
        .sum();
    let room = bar.w - 2.0 * margin - tabs - others - 3.0 * gap;
    let search_w = room.clamp(80.0 * scale, 160.0 * scale).round();
    let mut right = bar.x + bar.w - margin;
    for (i, it) in items.iter().enumerate().rev() {
        if right_group(it.tool) {
            let w = if it.tool == Tool::Search {
                search_w
            } else {
                button_width(it, scale)
            };
            right -= w;
            rects[i].x = right;
            rects[i].w = w;
            right -= gap;
        }
    }
    let mut x = bar.x + margin;
    for (i, it) in items.iter().enumerate() {
        if right_group(it.tool) {
            continue;
        }
        // A space between the tabs and the breadcrumb.
        if matches!(it.tool, Tool::Crumb(0)) {
            x += 3.0 * gap;
        }
        // A button that does not fit takes what is left, if that is enough to read a
        // little of it (its text is clipped).
        let full = button_width(it, scale);
        let w = full.min(right - x);
        rects[i].x = x.min(right);
        if w == full || w >= 60.0 * scale {
            rects[i].w = w;
        }
        x += w.max(0.0) + gap;
    }
    rects
}

/// The button of `items` at `(x, y)` in a toolbar drawn over `bar`.
pub fn item_at(items: &[ToolItem], bar: RectPx, scale: f32, x: f32, y: f32) -> Option<Tool> {
    if !bar.contains(x, y) {
        return None;
    }
    layout(items, bar, scale)
        .iter()
        .zip(items)
        .find(|(r, _)| r.w > 0.0 && r.contains(x, y))
        .map(|(_, it)| it.tool)
}

/// Draws the toolbar over `bar`.
pub fn draw(frame: &mut Frame<'_>, bar: RectPx, tb: &Toolbar) {
    let s = frame.scale;
    let size = font(s);
    let line = line_height(size);
    let b = s.round().max(1.0);
    frame.top.push(Rect::new(
        [bar.x, bar.y, bar.w, bar.h],
        rgba8([246, 246, 246, 255]),
    ));
    frame.top.push(Rect::new(
        [bar.x, bar.y + bar.h - b, bar.w, b],
        rgba8([218, 218, 218, 255]),
    ));
    let pad = (8.0 * s).round();
    for (r, it) in layout(&tb.items, bar, s).iter().zip(&tb.items) {
        if r.w <= 0.0 {
            continue;
        }
        let hovered = tb.hovered == Some(it.tool);
        let crumb = matches!(it.tool, Tool::Crumb(_));
        let fill = match (it.active, hovered) {
            (true, _) if !crumb => [104, 151, 202, 255],
            (_, true) => [226, 234, 244, 255],
            _ if it.tool == Tool::Search => [255, 255, 255, 255],
            _ => [246, 246, 246, 255],
        };
        frame.top.push(Rect::new([r.x, r.y, r.w, r.h], rgba8(fill)));
        if !crumb || it.active {
            for o in outline([r.x, r.y, r.w, r.h], b) {
                frame.top.push(Rect::new(o, rgba8([196, 196, 196, 255])));
            }
        }
        let color = match (it.active, crumb) {
            (true, false) => [255, 255, 255],
            (false, true) => MUTED_COLOR,
            _ => TITLE_COLOR,
        };
        frame.top_text.push(Text {
            text: it.label.clone().into(),
            size,
            x: r.x + pad,
            y: (r.y + (r.h - line) / 2.0).round(),
            clip: [r.x, r.y, r.x + r.w - b, r.y + r.h],
            color,
        });
    }
}

/// The key help: a panel in the middle of `area` listing `(keys, what they do)`, the
/// keys in a column of their own.
pub fn help(frame: &mut Frame<'_>, area: RectPx, lines: &[(&str, &str)]) {
    let s = frame.scale;
    let size = font(s);
    let line = line_height(size);
    let pad = (12.0 * s).round();
    let key_w = (190.0 * s).round();
    let w = ((720.0 * s).round()).min(area.w - 2.0 * pad).max(1.0);
    let h = ((lines.len() + 2) as f32 * line + 2.0 * pad).min(area.h);
    let x = (area.x + (area.w - w) / 2.0).round();
    let y = (area.y + (area.h - h) / 2.0).max(area.y).round();
    frame
        .top
        .push(Rect::new([x, y, w, h], rgba8([255, 255, 255, 255])));
    for o in outline([x, y, w, h], s.round().max(1.0)) {
        frame.top.push(Rect::new(o, rgba8([150, 150, 150, 255])));
    }
    let clip = [x, y, x + w - pad / 2.0, y + h];
    frame.top_text.push(Text {
        text: "Keys and mouse (? or Escape closes this)"
            .to_string()
            .into(),
        size,
        x: x + pad,
        y: y + pad,
        clip,
        color: TITLE_COLOR,
    });
    for (i, (keys, what)) in lines.iter().enumerate() {
        let ly = y + pad + (i + 2) as f32 * line;
        frame.top_text.push(Text {
            text: keys.to_string().into(),
            size,
            x: x + pad,
            y: ly,
            clip: [x, y, x + pad + key_w - pad / 2.0, y + h],
            color: TITLE_COLOR,
        });
        frame.top_text.push(Text {
            text: what.to_string().into(),
            size,
            x: x + pad + key_w,
            y: ly,
            clip,
            color: super::draw::BODY_COLOR,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(tool: Tool, label: &str) -> ToolItem {
        ToolItem {
            tool,
            label: label.to_string(),
            active: false,
        }
    }

    #[test]
    fn buttons_do_not_overlap_and_hit_tests_find_them() {
        let tb = Toolbar {
            items: vec![
                item(Tool::Tab(0), "1 Flame graph"),
                item(Tool::Tab(1), "2 Icicle"),
                item(Tool::Crumb(0), "All"),
                item(Tool::Crumb(1), "merge foo"),
                item(Tool::Search, "Search"),
                item(Tool::Color, "Colors: package"),
                item(Tool::Fit, "Fit: head"),
                item(Tool::Help, "?"),
            ],
            hovered: None,
        };
        let bar = RectPx {
            x: 0.0,
            y: 30.0,
            w: 1000.0,
            h: 26.0,
        };
        let rects = layout(&tb.items, bar, 1.0);
        let mut sorted: Vec<_> = rects.iter().filter(|r| r.w > 0.0).collect();
        assert_eq!(sorted.len(), tb.items.len());
        sorted.sort_by(|a, b| a.x.total_cmp(&b.x));
        for w in sorted.windows(2) {
            assert!(w[0].x + w[0].w <= w[1].x, "{w:?}");
        }
        assert!(
            rects[7].x + rects[7].w <= 1000.0 - 8.0 + 0.5,
            "? at the right"
        );
        for (r, it) in rects.iter().zip(&tb.items) {
            let (cx, cy) = (r.x + r.w / 2.0, r.y + r.h / 2.0);
            assert_eq!(item_at(&tb.items, bar, 1.0, cx, cy), Some(it.tool));
        }
        assert_eq!(
            item_at(&tb.items, bar, 1.0, 500.0, 10.0),
            None,
            "above the bar"
        );
        // Too narrow: left-group buttons that would run into the right group are cut or
        // go.
        let narrow = RectPx { w: 500.0, ..bar };
        let rects = layout(&tb.items, narrow, 1.0);
        let right_left = rects[4].x;
        for r in &rects[..4] {
            assert!(r.w == 0.0 || r.x + r.w <= right_left, "{r:?}");
        }
    }
}
