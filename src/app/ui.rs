//! What the window draws besides bars: the title band, status line, search field,
//! tooltip, context menu and frame-time overlay, as [`Overlay`]s of one [`FrameSpec`];
//! plus the terminal progress bar and the clipboard.

use super::{App, MENU_ITEMS};
use crate::color::ColorMode;
use crate::export;
use crate::import::Progress;
use crate::model::units::format_percent;
use crate::render::frame::{FrameSpec, MUTED_COLOR, Overlay, TITLE_COLOR, diff_change, outline};
use crate::render::text::TextLayer;
use crate::view::{Camera, FrameGeometry, Orientation};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

pub use crate::render::GpuTimer;

/// Width and row height of the context menu at `scale`.
pub fn menu_size(scale: f32) -> (f32, f32) {
    ((170.0 * scale).round(), (24.0 * scale).round())
}

/// Copies `text` to the system clipboard.
pub fn copy_to_clipboard(text: &str) -> Result<(), String> {
    let mut cb = arboard::Clipboard::new().map_err(|e| e.to_string())?;
    cb.set_text(text.to_string()).map_err(|e| e.to_string())
}

/// Draws a progress bar on stderr while a load runs, once it has taken half a second.
pub fn terminal_progress(label: &str, progress: &Progress, done: &AtomicBool) {
    let start = Instant::now();
    let mut shown = false;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if start.elapsed() < Duration::from_millis(500) {
            continue;
        }
        let f = progress.fraction().unwrap_or(0.0).clamp(0.0, 1.0);
        let width = 30;
        let filled = (f * width as f64).round() as usize;
        let mb = progress.done.load(Ordering::Relaxed) as f64 / 1048576.0;
        eprint!(
            "\rscorch: loading {label} [{}{}] {:>3.0}% {mb:.0} MiB",
            "#".repeat(filled),
            " ".repeat(width - filled),
            f * 100.0
        );
        let _ = std::io::stderr().flush();
        shown = true;
    }
    if shown {
        eprintln!();
    }
}

fn orientation_name(o: Orientation) -> &'static str {
    match o {
        Orientation::Flame => "flame graph",
        Orientation::Icicle => "icicle",
    }
}

impl App {
    fn push_text(
        spec: &mut FrameSpec,
        text: &str,
        size: f32,
        x: f32,
        y: f32,
        color: [u8; 3],
        clip: [f32; 4],
    ) {
        spec.overlays.push(Overlay::Text {
            text: text.to_string(),
            size,
            x,
            y,
            color,
            clip,
        });
    }

    fn measure(&mut self, text: &str, size: f32) -> f32 {
        match &mut self.gfx {
            Some(g) => g.renderer.text().measure(text, size).width,
            None => text.chars().count() as f32 * size * 0.6,
        }
    }

    /// The frame to draw: the profile as export draws it, plus the window's overlays.
    /// `for_screenshot` leaves out what only makes sense under a pointer (tooltip, menu,
    /// hover outline, frame times).
    pub(super) fn build_spec(
        &mut self,
        g: FrameGeometry,
        cam: Camera,
        for_screenshot: bool,
    ) -> FrameSpec {
        let s = g.scale;
        let small = (g.style.label_font * s).round();
        let line = TextLayer::line_height(small);
        let pad = (8.0 * s).round();
        let color = self
            .doc
            .as_ref()
            .map_or(ColorMode::Package, |d| d.view.color);
        let title = self.doc.as_ref().map_or_else(
            || {
                self.loading
                    .as_ref()
                    .map_or("scorch".to_string(), |l| l.name.clone())
            },
            |d| d.name.clone(),
        );
        let mut spec = FrameSpec::new(g, cam, color, title);
        let (w, h) = (g.width_px as f32, g.height_px as f32);

        let Some(d) = &self.doc else {
            // Nothing loaded yet: progress or the error, centered.
            let msg = if let Some(l) = &self.loading {
                match l.progress.fraction() {
                    Some(f) if f >= 1.0 => format!(
                        "Laying out {} and uploading it to the GPU… ({:.1} s)",
                        l.name,
                        l.started.elapsed().as_secs_f64()
                    ),
                    Some(f) => format!(
                        "Loading {}… {:.0}% ({:.1} s)",
                        l.name,
                        f * 100.0,
                        l.started.elapsed().as_secs_f64()
                    ),
                    None => format!(
                        "Loading {}… ({:.1} s)",
                        l.name,
                        l.started.elapsed().as_secs_f64()
                    ),
                }
            } else if let Some(e) = &self.load_error {
                format!("Could not load: {e}")
            } else {
                "Drop a profile onto this window to open it".to_string()
            };
            let tw = self.measure(&msg, small).min(w - 2.0 * pad);
            Self::push_text(
                &mut spec,
                &msg,
                small,
                ((w - tw) / 2.0).max(pad),
                h / 2.0,
                TITLE_COLOR,
                [pad, 0.0, w - pad, h],
            );
            if let Some(f) = self.loading.as_ref().and_then(|l| l.progress.fraction()) {
                let bw = (300.0 * s).round().min(w - 2.0 * pad);
                let x = ((w - bw) / 2.0).round();
                let y = (h / 2.0 + line + pad).round();
                spec.overlays.push(Overlay::Rect {
                    rect: [x, y, bw, (6.0 * s).round()],
                    color: [220, 220, 220, 255],
                });
                spec.overlays.push(Overlay::Rect {
                    rect: [x, y, (bw * f as f32).round(), (6.0 * s).round()],
                    color: [104, 151, 202, 255],
                });
            }
            return spec;
        };

        let v = &d.view;
        spec.subtitle = format!(
            "{} · {} colors · {}",
            orientation_name(v.orientation),
            color.name(),
            export::subtitle(&d.profile)
        );
        if let Some(note) = self.preview_counts_note() {
            spec.subtitle = format!("{} · {note}", spec.subtitle);
        }
        spec.search_active = d.search.is_some();
        if let Some(z) = v.zoomed
            && v.focus.is_none()
        {
            spec.faded_rows = z.row;
        }
        if let Some(f) = v.focus {
            let levels = f.bar.row;
            spec.header_label = format!(
                "{} … ({levels} level{} collapsed above; click here or press 0 to reset)",
                d.profile.names.get(d.layout.rows[0].name[0]),
                if levels == 1 { "" } else { "s" }
            );
        }
        if !for_screenshot {
            spec.hover = self.hover;
            spec.hover_ticks = self.hovered_run().map(|run| (run.x0, run.x1));
        }

        // Status line: the zoom path on the left, search or messages on the right.
        let path_bar = v.zoomed.or(v.focus.map(|f| f.bar));
        let left = match path_bar {
            Some(b) => {
                let node = d.layout.rows[b.row].node[b.index];
                let names: Vec<&str> = d.profile.tree.path(node).iter().map(|&n| d.profile.names.get(d.profile.tree.name(n))).collect();
                let keep = names.len().min(6);
                let mut p = String::from("zoom: total");
                if names.len() > keep {
                    p.push_str(" › …");
                }
                for n in &names[names.len() - keep..] {
                    p.push_str(" › ");
                    p.push_str(n);
                }
                p
            }
            None => "click: zoom · wheel: zoom · drag: pan · right-click: menu · / search · I flip · C colors · Ctrl+S screenshot".to_string(),
        };
        let mut right = String::new();
        if let Some((m, _)) = &self.message {
            right = m.clone();
        } else if let Some(sr) = &d.search {
            right = format!("/{}: {}", sr.query, sr.summary());
        }
        if let Some(l) = self.loading.as_ref().filter(|_| self.preview.is_none()) {
            right = format!(
                "loading {}… {}",
                l.name,
                l.progress
                    .fraction()
                    .map(|f| format!("{:.0}%", f * 100.0))
                    .unwrap_or_default()
            );
        }
        self.push_status(&mut spec.overlays, g.status, s, &left, &right);

        if for_screenshot {
            return spec;
        }

        // Tooltip for the hovered bar.
        if let (Some(hb), Some(c), None) = (self.hover, self.cursor, &self.menu) {
            let lines = self.tooltip_lines(hb);
            self.push_tooltip(&mut spec.overlays, &lines, c, w, g.status.y, s);
        }

        // Context menu.
        if let Some(m) = &self.menu {
            let (mw, mh) = menu_size(s);
            let menu_h = mh * MENU_ITEMS.len() as f32;
            let (x, y) = (
                m.x.min(w - mw).max(0.0).round(),
                m.y.min(g.status.y - menu_h).max(0.0).round(),
            );
            spec.overlays.push(Overlay::Rect {
                rect: [x, y, mw, mh * MENU_ITEMS.len() as f32],
                color: [250, 250, 250, 250],
            });
            for (i, item) in MENU_ITEMS.iter().enumerate() {
                let iy = y + i as f32 * mh;
                if m.hovered == Some(i) {
                    spec.overlays.push(Overlay::Rect {
                        rect: [x, iy, mw, mh],
                        color: [104, 151, 202, 255],
                    });
                }
                let c = if m.hovered == Some(i) {
                    [255, 255, 255]
                } else {
                    TITLE_COLOR
                };
                Self::push_text(
                    &mut spec,
                    item,
                    small,
                    x + pad,
                    (iy + (mh - line) / 2.0).round(),
                    c,
                    [x, iy, x + mw, iy + mh],
                );
            }
            let b = s.round().max(1.0);
            let mh3 = mh * MENU_ITEMS.len() as f32;
            for r in outline([x, y, mw, mh3], b) {
                spec.overlays.push(Overlay::Rect {
                    rect: r,
                    color: [150, 150, 150, 255],
                });
            }
        }

        // Frame times (F12).
        if self.show_times {
            self.push_frame_times(&mut spec.overlays, w, g.graph.y, s);
        }
        spec
    }

    /// The status line: `left` (or the search field while it is open) and `right`.
    pub(super) fn push_status(
        &mut self,
        out: &mut Vec<Overlay>,
        st: crate::view::RectPx,
        s: f32,
        left: &str,
        right: &str,
    ) {
        let small = (crate::view::Style::default().label_font * s).round();
        let line = TextLayer::line_height(small);
        let pad = (8.0 * s).round();
        let w = st.w;
        let status_top = (st.y + (st.h - line) / 2.0).round();
        // Over a preview the status line turns amber and says what is shown.
        let preview = self.preview_status(!right.is_empty());
        let right = match &preview {
            Some(p) if right.is_empty() => p.clone(),
            Some(p) => format!("{right} · {p}"),
            None => right.to_string(),
        };
        let right = right.as_str();
        out.push(Overlay::Rect {
            rect: [st.x, st.y, st.w, st.h],
            color: if preview.is_some() {
                [255, 224, 138, 255]
            } else {
                [244, 244, 244, 255]
            },
        });
        out.push(Overlay::Rect {
            rect: [st.x, st.y, st.w, s.round().max(1.0)],
            color: [218, 218, 218, 255],
        });
        let right_w = if right.is_empty() {
            0.0
        } else {
            self.measure(right, small)
        };
        let right_x = (w - pad - right_w).max(pad);
        out.push(Overlay::Text {
            text: right.to_string(),
            size: small,
            x: right_x,
            y: status_top,
            color: TITLE_COLOR,
            clip: [pad, st.y, w - pad, st.y + st.h],
        });
        let left_clip = [pad, st.y, (right_x - 2.0 * pad).max(pad), st.y + st.h];
        let (text, color) = if self.search_open {
            let field = format!("Search (regex or text): {}▏", self.search_text);
            let fw = self.measure(&field, small) + pad;
            out.push(Overlay::Rect {
                rect: [
                    pad / 2.0,
                    st.y + s.round(),
                    fw.min(left_clip[2]),
                    st.h - s.round(),
                ],
                color: [255, 250, 205, 255],
            });
            (field, TITLE_COLOR)
        } else {
            (left.to_string(), MUTED_COLOR)
        };
        out.push(Overlay::Text {
            text,
            size: small,
            x: pad,
            y: status_top,
            color,
            clip: left_clip,
        });
    }

    /// A tooltip with `lines` next to the pointer at `cursor`, kept inside the image
    /// (`w` wide) and above `bottom`.
    pub(super) fn push_tooltip(
        &mut self,
        out: &mut Vec<Overlay>,
        lines: &[String],
        cursor: (f32, f32),
        w: f32,
        bottom: f32,
        s: f32,
    ) {
        if lines.is_empty() {
            return;
        }
        let small = (crate::view::Style::default().label_font * s).round();
        let line = TextLayer::line_height(small);
        let pad = (8.0 * s).round();
        let (cx, cy) = cursor;
        let widths: Vec<f32> = lines.iter().map(|l| self.measure(l, small)).collect();
        let tw = widths
            .iter()
            .copied()
            .fold(0.0, f32::max)
            .min(w - 2.0 * pad)
            + 2.0 * pad;
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
        out.push(Overlay::Rect {
            rect: [x, y, tw, th],
            color: [255, 255, 255, 245],
        });
        let b = s.round().max(1.0);
        for r in outline([x, y, tw, th], b) {
            out.push(Overlay::Rect {
                rect: r,
                color: [160, 160, 160, 255],
            });
        }
        for (i, l) in lines.iter().enumerate() {
            out.push(Overlay::Text {
                text: l.clone(),
                size: small,
                x: x + pad,
                y: y + pad / 2.0 + i as f32 * line,
                color: if i == 0 { TITLE_COLOR } else { [60, 60, 60] },
                clip: [x, y, x + tw - pad / 2.0, y + th],
            });
        }
    }

    /// The F12 frame-time box at the top right, `top` being the graph's top edge.
    pub(super) fn push_frame_times(&mut self, out: &mut Vec<Overlay>, w: f32, top: f32, s: f32) {
        let small = (crate::view::Style::default().label_font * s).round();
        let line = TextLayer::line_height(small);
        let pad = (8.0 * s).round();
        let stats = |v: &std::collections::VecDeque<f32>| {
            let mut s: Vec<f32> = v.iter().copied().collect();
            s.sort_by(f32::total_cmp);
            (
                s.get(s.len() / 2).copied().unwrap_or(0.0),
                s.last().copied().unwrap_or(0.0),
                s.len(),
            )
        };
        let (p50, max, frames) = stats(&self.cpu_ms);
        let (enc50, enc_max, _) = stats(&self.encode_ms);
        let gpu = match (
            self.gpu_ms,
            self.gfx.as_ref().is_some_and(|g| g.timer.is_some()),
        ) {
            (Some(ms), _) => format!("GPU {ms:.2} ms"),
            (None, true) => "GPU …".to_string(),
            (None, false) => "GPU n/a (no timestamp queries)".to_string(),
        };
        let text = format!(
            "CPU {p50:.2} ms p50, {max:.2} max (encode {enc50:.2}, {enc_max:.2} max; rest: submit+present) · {gpu} · {frames} frames"
        );
        let tw = self.measure(&text, small) + 2.0 * pad;
        let x = (w - tw - pad).max(0.0).round();
        let y = (top + pad).round();
        out.push(Overlay::Rect {
            rect: [x, y, tw, line + pad],
            color: [20, 20, 20, 220],
        });
        out.push(Overlay::Text {
            text,
            size: small,
            x: x + pad,
            y: y + pad / 2.0,
            color: [255, 255, 255],
            clip: [x, y, x + tw, y + line + pad],
        });
    }

    /// Tooltip text for `bar`: name, total and self with units and shares, or for a diff
    /// the two sides and the change.
    fn tooltip_lines(&self, bar: crate::pick::BarRef) -> Vec<String> {
        let Some(d) = &self.doc else {
            return Vec::new();
        };
        let p = &d.profile;
        let t = &p.tree;
        let n = d.layout.rows[bar.row].node[bar.index];
        let mut name = p.names.get(t.name(n)).to_string();
        if name.chars().count() > 160 {
            name = name.chars().take(160).collect::<String>() + "…";
        }
        let total = t.total(n);
        let grand = t.grand_total().max(1);
        let view_root = d
            .view
            .zoomed
            .or(d.view.focus.map(|f| f.bar))
            .map(|b| t.total(d.layout.rows[b.row].node[b.index]))
            .unwrap_or(grand)
            .max(1);
        let v = &p.values;
        let mut lines = Vec::new();
        if let Some(run) = self.hovered_run() {
            let span: u64 = run.x1 - run.x0;
            lines.push(format!(
                "{} bars merged at this zoom, mostly {} — click to zoom in",
                run.count,
                p.names.get(run.name)
            ));
            lines.push(format!(
                "run: {} · {} of all",
                p.values.format(span),
                format_percent(span as f64 / t.grand_total().max(1) as f64)
            ));
            lines.push("under the pointer:".to_string());
        }
        lines.push(name);
        if let Some((lt, rt)) = p.meta.diff_ticks.filter(|_| p.is_diff()) {
            let l = t.left_total(n);
            let r = total - l;
            lines.push(format!(
                "before: {} ({} of before)",
                v.format_long(l),
                format_percent(l as f64 / lt.max(1) as f64)
            ));
            lines.push(format!(
                "after: {} ({} of after)",
                v.format_long(r),
                format_percent(r as f64 / rt.max(1) as f64)
            ));
            lines.push(format!("change: {}", diff_change(l, r, lt, rt)));
            let ls = t.left_self(n);
            let rs = t.self_ticks(n) - ls;
            lines.push(format!(
                "self: before {}, after {}",
                v.format(ls),
                v.format(rs)
            ));
        } else {
            let mut tl = format!(
                "total: {} · {} of all",
                v.format_long(total),
                format_percent(total as f64 / grand as f64)
            );
            if view_root != grand {
                tl.push_str(&format!(
                    " · {} of view",
                    format_percent(total as f64 / view_root as f64)
                ));
            }
            lines.push(tl);
            let st = t.self_ticks(n);
            lines.push(format!(
                "self: {} · {} of all",
                v.format_long(st),
                format_percent(st as f64 / grand as f64)
            ));
        }
        lines.push(format!(
            "depth {} · click to zoom · right-click for more",
            bar.row
        ));
        if let Some(note) = self.preview_counts_note() {
            lines.push(note.to_string());
        }
        lines
    }
}
