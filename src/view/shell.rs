//! The frame shell: what every frame has around a view's content, written once.
//!
//! - the title band: title, subtitle (truncated with an ellipsis to what is left), and for
//!   diff colors the legend at the right, with long captions when everything fits;
//! - in a window: the status line (a hint or the search field on the left, messages on
//!   the right; amber over a preview), the tooltip by the pointer, the context menu and
//!   the F12 frame-time box; before anything is loaded, a centred message with a progress
//!   bar.
//!
//! A view draws its content between the title band and these overlays (see
//! [`super::compose`]); exports get the title band only.

use super::draw::{
    Frame, MUTED_COLOR, Measure, Rect, TITLE_COLOR, Text, line_height, outline, rgba, rgba8,
};
use crate::color;
use crate::geometry::{RectPx, Style};

/// The title band's content.
#[derive(Clone, Debug, PartialEq)]
pub struct Heading {
    /// Drawn at the top left.
    pub title: String,
    /// Drawn after the title, muted.
    pub subtitle: String,
    /// The diff legend at the right (`Some(colorblind)`), for diff colors.
    pub legend: Option<bool>,
}

/// The status line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Status {
    /// Left: what can be done, or where the view is.
    pub left: String,
    /// Right: messages, search results, progress.
    pub right: String,
    /// The search field's text while it is open (it replaces `left`).
    pub search_field: Option<String>,
    /// Amber background: a preview is shown.
    pub amber: bool,
}

/// A context menu as drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct MenuShown {
    /// Its items.
    pub items: Vec<String>,
    /// Where it was opened (image pixels).
    pub at: (f32, f32),
    /// The item under the pointer.
    pub hovered: Option<usize>,
}

/// What a window draws over a view's frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Chrome {
    /// The status line.
    pub status: Status,
    /// Tooltip lines and the pointer they follow (the first line is the title).
    pub tooltip: Option<(Vec<String>, (f32, f32))>,
    /// The open context menu.
    pub menu: Option<MenuShown>,
    /// The F12 frame-time line.
    pub frame_times: Option<String>,
    /// The toolbar (drawn when the style has room for one).
    pub toolbar: Option<super::toolbar::Toolbar>,
    /// The key help panel, when open: `(keys, what they do)` lines.
    pub help: Option<&'static [(&'static str, &'static str)]>,
}

/// Font size of the shell's small text at `scale`.
fn small(scale: f32) -> f32 {
    (Style::default().label_font * scale).round()
}

/// The title band over `band` (whole image width) in `style`'s sizes.
pub fn title_band(
    frame: &mut Frame<'_>,
    band: RectPx,
    style: &Style,
    h: &Heading,
    m: &mut dyn Measure,
) {
    let scale = frame.scale;
    let title_size = (style.title_font * scale).round();
    let sub_size = (style.label_font * scale).round();
    let line_h = line_height(title_size);
    let title_top = (band.y + (band.h - line_h) / 2.0).round();
    let margin = (style.margin * scale).round();
    let spacing = (12.0 * scale).round();
    let title_w = m.width(&h.title, title_size);
    let sub_w = if h.subtitle.is_empty() {
        0.0
    } else {
        m.width(&h.subtitle, sub_size)
    };
    let mut title_right = frame.width_px as f32 - margin;
    if let Some(colorblind) = h.legend {
        let long = legend_width(m, style, scale, true);
        let fits_long = margin + title_w + spacing + sub_w + spacing + long <= title_right;
        let legend = Legend {
            band,
            style,
            colorblind,
            long: fits_long,
            text_top: title_top,
            title_line_h: line_h,
        };
        title_right = legend.draw(frame, m) - spacing;
    }
    let clip = [margin, band.y, title_right, band.y + band.h];
    frame.text.push(Text {
        text: h.title.clone().into(),
        size: title_size,
        x: margin,
        y: title_top,
        clip,
        color: TITLE_COLOR,
    });
    let sub_x = margin + title_w + spacing;
    if !h.subtitle.is_empty()
        && sub_x < title_right
        && let Some(sub) = m.fit(&h.subtitle, &h.subtitle, sub_size, title_right - sub_x)
    {
        let sub_top = (band.y + (band.h - line_height(sub_size)) / 2.0).round() + scale.round();
        frame.text.push(Text {
            text: sub.into(),
            size: sub_size,
            x: sub_x,
            y: sub_top,
            clip,
            color: MUTED_COLOR,
        });
    }
}

fn legend_captions(long: bool) -> (&'static str, &'static str) {
    if long {
        ("(shrank or removed) −100%", "+100% (grew or new)")
    } else {
        ("−100%", "+100%")
    }
}

fn legend_strip_width(scale: f32) -> f32 {
    (160.0 * scale).round()
}

/// Width of the diff legend with long or short captions.
fn legend_width(m: &mut dyn Measure, style: &Style, scale: f32, long: bool) -> f32 {
    let size = (style.label_font * scale).round();
    let (l, r) = legend_captions(long);
    m.width(l, size) + m.width(r, size) + legend_strip_width(scale) + 2.0 * (6.0 * scale).round()
}

/// The diff legend: a gradient strip from −100 % to +100 % between two captions.
struct Legend<'s> {
    band: RectPx,
    style: &'s Style,
    colorblind: bool,
    long: bool,
    text_top: f32,
    title_line_h: f32,
}

impl Legend<'_> {
    /// Draws it at the right of the band; returns its left edge.
    fn draw(&self, frame: &mut Frame<'_>, m: &mut dyn Measure) -> f32 {
        let s = frame.scale;
        let width = frame.width_px as f32;
        let size = (self.style.label_font * s).round();
        let line_h = line_height(size);
        let top = (self.text_top + (self.title_line_h - line_h) / 2.0).round();
        let margin = (self.style.margin * s).round();
        let strip_w = legend_strip_width(s);
        let strip_h = (10.0 * s).round();
        let space = (6.0 * s).round();
        let (left_caption, right_caption) = legend_captions(self.long);
        let right_w = m.width(right_caption, size);
        let left_w = m.width(left_caption, size);
        let right_x = width - margin - right_w;
        let strip_x1 = right_x - space;
        let strip_x0 = strip_x1 - strip_w;
        let left_x = strip_x0 - space - left_w;
        let clip = [0.0, self.band.y, width, self.band.y + self.band.h];
        for (text, x) in [(right_caption, right_x), (left_caption, left_x)] {
            frame.text.push(Text {
                text: text.to_string().into(),
                size,
                x,
                y: top,
                clip,
                color: MUTED_COLOR,
            });
        }
        let pal = color::diff_palette(self.colorblind);
        const STEPS: usize = 41;
        let strip_y = (self.band.y + (self.band.h - strip_h) / 2.0).round();
        for k in 0..STEPS {
            let pct = -100.0 + 200.0 * k as f64 / (STEPS - 1) as f64;
            let a = (strip_x0 + strip_w * k as f32 / STEPS as f32).round();
            let b = (strip_x0 + strip_w * (k + 1) as f32 / STEPS as f32).round();
            let c = color::to_u8(color::diff_color(pct, pal));
            frame
                .over
                .push(Rect::new([a, strip_y, b - a, strip_h], rgba(c, 1.0)));
        }
        left_x
    }
}

/// Width and row height of a context menu of `items` at `scale`: at least 170 logical
/// pixels, wider for long items (estimated from their length, so hit tests need no fonts).
pub fn menu_size(items: &[String], scale: f32) -> (f32, f32) {
    let longest = items.iter().map(|i| i.chars().count()).max().unwrap_or(0);
    let w = (longest as f32 * 0.62 * Style::default().label_font + 16.0).max(170.0);
    ((w * scale).round(), (24.0 * scale).round())
}

/// Where a menu of `items` opened at `at` is drawn: kept inside a `width`-wide image and
/// above `bottom` (the status line). Returns its left and top edges.
pub fn menu_origin(
    at: (f32, f32),
    items: &[String],
    scale: f32,
    width: f32,
    bottom: f32,
) -> (f32, f32) {
    let (mw, mh) = menu_size(items, scale);
    let menu_h = mh * items.len() as f32;
    (
        at.0.min(width - mw).max(0.0).round(),
        at.1.min(bottom - menu_h).max(0.0).round(),
    )
}

/// The menu item under `(x, y)`.
pub fn menu_item_at(
    menu: &MenuShown,
    scale: f32,
    width: f32,
    bottom: f32,
    x: f32,
    y: f32,
) -> Option<usize> {
    let (w, h) = menu_size(&menu.items, scale);
    let (mx, my) = menu_origin(menu.at, &menu.items, scale, width, bottom);
    if x < mx || x >= mx + w || y < my {
        return None;
    }
    let i = ((y - my) / h) as usize;
    (i < menu.items.len()).then_some(i)
}

/// The rectangle of the status line of a `width` × `height` image whose style has a
/// status line `status_height` logical pixels tall.
pub fn status_rect(width: f32, height: f32, scale: f32, status_height: f32) -> RectPx {
    let h = (status_height * scale).round();
    RectPx {
        x: 0.0,
        y: height - h,
        w: width,
        h,
    }
}

/// The window's overlays: status line, tooltip (unless a menu is open), menu, frame
/// times, in that order (each drawn over the ones before).
pub fn overlays(
    frame: &mut Frame<'_>,
    status: RectPx,
    graph_top: f32,
    c: &Chrome,
    m: &mut dyn Measure,
) {
    status_line(frame, status, &c.status, m);
    if let (Some((lines, at)), None) = (&c.tooltip, &c.menu) {
        tooltip(frame, lines, *at, status.y, m);
    }
    if let Some(menu) = &c.menu {
        draw_menu(frame, menu, status.y, m);
    }
    if let Some(t) = &c.frame_times {
        frame_times(frame, t, graph_top, m);
    }
    if let Some(lines) = c.help {
        let area = RectPx {
            x: 0.0,
            y: graph_top,
            w: frame.width_px as f32,
            h: (status.y - graph_top).max(1.0),
        };
        super::toolbar::help(frame, area, lines);
    }
}

/// The status line.
fn status_line(frame: &mut Frame<'_>, st: RectPx, status: &Status, m: &mut dyn Measure) {
    let s = frame.scale;
    let small = small(s);
    let line = line_height(small);
    let pad = (8.0 * s).round();
    let w = st.w;
    let top = (st.y + (st.h - line) / 2.0).round();
    frame.top.push(Rect::new(
        [st.x, st.y, st.w, st.h],
        rgba8(if status.amber {
            [255, 224, 138, 255]
        } else {
            [244, 244, 244, 255]
        }),
    ));
    frame.top.push(Rect::new(
        [st.x, st.y, st.w, s.round().max(1.0)],
        rgba8([218, 218, 218, 255]),
    ));
    let right = status.right.as_str();
    let right_w = if right.is_empty() {
        0.0
    } else {
        m.width(right, small)
    };
    let right_x = (w - pad - right_w).max(pad);
    frame.top_text.push(Text {
        text: right.to_string().into(),
        size: small,
        x: right_x,
        y: top,
        clip: [pad, st.y, w - pad, st.y + st.h],
        color: TITLE_COLOR,
    });
    let left_clip = [pad, st.y, (right_x - 2.0 * pad).max(pad), st.y + st.h];
    let (text, color) = match &status.search_field {
        Some(q) => {
            let field = format!("Search (regex or text): {q}▏");
            let fw = m.width(&field, small) + pad;
            frame.top.push(Rect::new(
                [
                    pad / 2.0,
                    st.y + s.round(),
                    fw.min(left_clip[2]),
                    st.h - s.round(),
                ],
                rgba8([255, 250, 205, 255]),
            ));
            (field, TITLE_COLOR)
        }
        None => (status.left.clone(), MUTED_COLOR),
    };
    frame.top_text.push(Text {
        text: text.into(),
        size: small,
        x: pad,
        y: top,
        clip: left_clip,
        color,
    });
}

/// A tooltip with `lines` next to the pointer at `cursor`, kept inside the image and
/// above `bottom`.
fn tooltip(
    frame: &mut Frame<'_>,
    lines: &[String],
    cursor: (f32, f32),
    bottom: f32,
    m: &mut dyn Measure,
) {
    if lines.is_empty() {
        return;
    }
    let s = frame.scale;
    let w = frame.width_px as f32;
    let small = small(s);
    let line = line_height(small);
    let pad = (8.0 * s).round();
    let (cx, cy) = cursor;
    let widest = lines.iter().map(|l| m.width(l, small)).fold(0.0, f32::max);
    let tw = widest.min(w - 2.0 * pad) + 2.0 * pad;
    let th = lines.len() as f32 * line + pad;
    let mut x = cx + (14.0 * s).round();
    let mut y = cy + (18.0 * s).round();
    if x + tw > w {
        x = (cx - tw - (8.0 * s).round()).max(0.0);
    }
    // Keep it above the status line, whose text would otherwise draw over it.
    if y + th > bottom {
        y = (cy - th - (8.0 * s).round()).max(0.0);
    }
    let (x, y) = (x.round(), y.round());
    frame
        .top
        .push(Rect::new([x, y, tw, th], rgba8([255, 255, 255, 245])));
    let b = s.round().max(1.0);
    for r in outline([x, y, tw, th], b) {
        frame.top.push(Rect::new(r, rgba8([160, 160, 160, 255])));
    }
    for (i, l) in lines.iter().enumerate() {
        frame.top_text.push(Text {
            text: l.clone().into(),
            size: small,
            x: x + pad,
            y: y + pad / 2.0 + i as f32 * line,
            clip: [x, y, x + tw - pad / 2.0, y + th],
            color: if i == 0 {
                TITLE_COLOR
            } else {
                super::draw::BODY_COLOR
            },
        });
    }
}

/// The context menu.
fn draw_menu(frame: &mut Frame<'_>, menu: &MenuShown, bottom: f32, _m: &mut dyn Measure) {
    let s = frame.scale;
    let small = small(s);
    let line = line_height(small);
    let pad = (8.0 * s).round();
    let (mw, mh) = menu_size(&menu.items, s);
    let n = menu.items.len();
    let (x, y) = menu_origin(menu.at, &menu.items, s, frame.width_px as f32, bottom);
    frame.top.push(Rect::new(
        [x, y, mw, mh * n as f32],
        rgba8([250, 250, 250, 250]),
    ));
    for (i, item) in menu.items.iter().enumerate() {
        let iy = y + i as f32 * mh;
        let hovered = menu.hovered == Some(i);
        if hovered {
            frame
                .top
                .push(Rect::new([x, iy, mw, mh], rgba8([104, 151, 202, 255])));
        }
        frame.top_text.push(Text {
            text: item.clone().into(),
            size: small,
            x: x + pad,
            y: (iy + (mh - line) / 2.0).round(),
            clip: [x, iy, x + mw, iy + mh],
            color: if hovered {
                [255, 255, 255]
            } else {
                TITLE_COLOR
            },
        });
    }
    let b = s.round().max(1.0);
    for r in outline([x, y, mw, mh * n as f32], b) {
        frame.top.push(Rect::new(r, rgba8([150, 150, 150, 255])));
    }
}

/// The F12 frame-time box at the top right, `top` being the graph's top edge.
fn frame_times(frame: &mut Frame<'_>, text: &str, top: f32, m: &mut dyn Measure) {
    let s = frame.scale;
    let w = frame.width_px as f32;
    let small = small(s);
    let line = line_height(small);
    let pad = (8.0 * s).round();
    let tw = m.width(text, small) + 2.0 * pad;
    let x = (w - tw - pad).max(0.0).round();
    let y = (top + pad).round();
    frame
        .top
        .push(Rect::new([x, y, tw, line + pad], rgba8([20, 20, 20, 220])));
    frame.top_text.push(Text {
        text: text.to_string().into(),
        size: small,
        x: x + pad,
        y: y + pad / 2.0,
        clip: [x, y, x + tw, y + line + pad],
        color: [255, 255, 255],
    });
}

/// A frame with nothing loaded: the title band and `message` in the middle, with a
/// progress bar under it when `progress` is known.
pub fn waiting(
    frame: &mut Frame<'_>,
    style: &Style,
    heading: &Heading,
    message: &str,
    progress: Option<f64>,
    m: &mut dyn Measure,
) {
    let s = frame.scale;
    let (w, h) = (frame.width_px as f32, frame.height_px as f32);
    let band = RectPx {
        x: 0.0,
        y: 0.0,
        w,
        h: (style.title_height * s).round(),
    };
    title_band(frame, band, style, heading, m);
    let small = (style.label_font * s).round();
    let line = line_height(small);
    let pad = (8.0 * s).round();
    let tw = m.width(message, small).min(w - 2.0 * pad);
    frame.top_text.push(Text {
        text: message.to_string().into(),
        size: small,
        x: ((w - tw) / 2.0).max(pad),
        y: h / 2.0,
        clip: [pad, 0.0, w - pad, h],
        color: TITLE_COLOR,
    });
    if let Some(f) = progress {
        let bw = (300.0 * s).round().min(w - 2.0 * pad);
        let x = ((w - bw) / 2.0).round();
        let y = (h / 2.0 + line + pad).round();
        frame.top.push(Rect::new(
            [x, y, bw, (6.0 * s).round()],
            rgba8([220, 220, 220, 255]),
        ));
        frame.top.push(Rect::new(
            [x, y, (bw * f as f32).round(), (6.0 * s).round()],
            rgba8([104, 151, 202, 255]),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::draw::FixedMeasure;

    fn m() -> FixedMeasure {
        FixedMeasure { advance: 0.6 }
    }

    #[test]
    fn title_band_places_title_then_a_truncated_subtitle() {
        let mut f = Frame::new(300, 100, 1.0);
        let band = RectPx {
            x: 0.0,
            y: 0.0,
            w: 300.0,
            h: 30.0,
        };
        let h = Heading {
            title: "demo.folded".into(),
            subtitle: "total 1,234 samples · a very long subtitle that cannot fit".into(),
            legend: None,
        };
        title_band(&mut f, band, &Style::default(), &h, &mut m());
        assert_eq!(f.text.len(), 2);
        assert_eq!(f.text[0].text, "demo.folded");
        assert_eq!((f.text[0].x, f.text[0].color), (8.0, TITLE_COLOR));
        assert!(f.text[1].text.shown().ends_with('…'), "{}", f.text[1].text);
        assert!(f.text[1].x > 8.0 + 11.0 * 14.0 * 0.6);
        assert!(f.over.is_empty(), "no legend without diff colors");
    }

    #[test]
    fn the_diff_legend_takes_the_right_and_shortens_when_crowded() {
        let band = RectPx {
            x: 0.0,
            y: 0.0,
            w: 1200.0,
            h: 30.0,
        };
        let mut h = Heading {
            title: "diff".into(),
            subtitle: String::new(),
            legend: Some(false),
        };
        let mut wide = Frame::new(1200, 100, 1.0);
        title_band(&mut wide, band, &Style::default(), &h, &mut m());
        assert_eq!(wide.over.len(), 41, "41 gradient steps");
        assert!(
            wide.text
                .iter()
                .any(|t| t.text.shown().contains("grew or new"))
        );
        h.subtitle = "x".repeat(150);
        let mut crowded = Frame::new(1200, 100, 1.0);
        title_band(&mut crowded, band, &Style::default(), &h, &mut m());
        assert!(crowded.text.iter().any(|t| t.text == "+100%"));
        // The strip's ends are the palette's ends.
        let good = rgba(color::DIFF_DEFAULT.good, 1.0);
        assert!(
            wide.over[0]
                .color
                .iter()
                .zip(good)
                .all(|(a, b)| (a - b).abs() < 0.01)
        );
    }

    #[test]
    fn menus_stay_inside_and_items_are_hit_by_row() {
        let menu = MenuShown {
            items: vec!["a".into(), "b".into(), "c".into()],
            at: (990.0, 790.0),
            hovered: None,
        };
        let (w, h) = menu_size(&menu.items, 1.0);
        let (x, y) = menu_origin(menu.at, &menu.items, 1.0, 1000.0, 778.0);
        assert_eq!((x, y), (1000.0 - w, 778.0 - 3.0 * h));
        assert_eq!(
            menu_item_at(&menu, 1.0, 1000.0, 778.0, x + 5.0, y + 1.0),
            Some(0)
        );
        assert_eq!(
            menu_item_at(&menu, 1.0, 1000.0, 778.0, x + 5.0, y + 2.0 * h + 1.0),
            Some(2)
        );
        assert_eq!(
            menu_item_at(&menu, 1.0, 1000.0, 778.0, x - 1.0, y + 1.0),
            None
        );
        assert_eq!(
            menu_item_at(&menu, 1.0, 1000.0, 778.0, x + 5.0, y + 3.0 * h),
            None
        );
    }

    #[test]
    fn overlays_stack_status_tooltip_menu_and_times() {
        let mut f = Frame::new(800, 600, 1.0);
        let st = status_rect(800.0, 600.0, 1.0, 22.0);
        assert_eq!((st.y, st.h), (578.0, 22.0));
        let mut c = Chrome {
            status: Status {
                left: "hint".into(),
                right: "3 matches".into(),
                search_field: None,
                amber: true,
            },
            tooltip: Some((vec!["main".into(), "total: 5".into()], (100.0, 100.0))),
            menu: None,
            frame_times: Some("CPU 1 ms".into()),
            ..Chrome::default()
        };
        overlays(&mut f, st, 38.0, &c, &mut m());
        assert_eq!(f.top[0].color, rgba8([255, 224, 138, 255]), "amber status");
        let texts: Vec<&str> = f.top_text.iter().map(|t| t.text.source()).collect();
        assert_eq!(texts, ["3 matches", "hint", "main", "total: 5", "CPU 1 ms"]);
        // A tooltip near the bottom flips above the pointer.
        c.tooltip = Some((vec!["x".into()], (100.0, 570.0)));
        c.frame_times = None;
        let mut g = Frame::new(800, 600, 1.0);
        overlays(&mut g, st, 38.0, &c, &mut m());
        let tip = g.top_text.iter().find(|t| t.text == "x").unwrap();
        assert!(tip.y < 570.0);
        // An open menu hides the tooltip; the search field replaces the hint.
        c.menu = Some(MenuShown {
            items: vec!["Copy name".into()],
            at: (10.0, 10.0),
            hovered: Some(0),
        });
        c.status.search_field = Some("ma".into());
        let mut h = Frame::new(800, 600, 1.0);
        overlays(&mut h, st, 38.0, &c, &mut m());
        let texts: Vec<&str> = h.top_text.iter().map(|t| t.text.source()).collect();
        assert_eq!(
            texts,
            ["3 matches", "Search (regex or text): ma▏", "Copy name"]
        );
    }
}
