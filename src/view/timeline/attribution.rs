//! What a timeline of samples says beyond time: each span's counter sums (CPU time,
//! allocations, faults, context switches) in its tooltip and details, colors by them, a
//! span shaded darker where it ran on the CPU and lighter where it waited, and arrows from
//! a woken thread to the thread that woke it (btrace's "wakeup by"), which a click
//! follows.

use super::TimelineView;
use super::paint::Sight;
use crate::color;
use crate::model::samples::CounterKind;
use crate::model::units::format_duration_ns;
use crate::view::draw::{BarSource, Frame, Rect, RowDraw, rgba, single_bars};

/// Arrows drawn per frame at most.
const MAX_WAKES: usize = 5_000;
/// Pointer distance within which an arrow is hovered (logical pixels).
const WAKE_SLOP_PX: f32 = 4.0;

/// A color mode of sampled spans beyond the shader's own ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrColor {
    /// The share of a span's time its samples ran on the CPU.
    CpuShare,
    /// A counter's sum over the span's samples (allocations, faults, switches).
    Counter(CounterKind),
}

impl AttrColor {
    /// Its name in the heading and the toolbar.
    pub fn name(self) -> &'static str {
        match self {
            AttrColor::CpuShare => "CPU share",
            AttrColor::Counter(k) => k.name(),
        }
    }
}

/// A thread woken by another: drawn as an arrow at `at` from the waker's band to the
/// woken one's.
#[derive(Clone, Debug)]
pub(super) struct Wake {
    /// When (ticks).
    pub(super) at: u64,
    /// The band of the woken thread.
    pub(super) woken: usize,
    /// The band of the waking thread, when it has one in this timeline.
    pub(super) waker: Option<usize>,
    /// The waking thread, as its label reads.
    pub(super) waker_label: String,
}

/// The colors modes `trace`'s samples allow, in the order `C` cycles through them.
pub(super) fn attr_modes(trace: &crate::model::Trace) -> Vec<AttrColor> {
    {
        let Some(sm) = trace.sampling.as_ref() else {
            return Vec::new();
        };
        let mut v = Vec::new();
        for (k, _) in &sm.counters {
            v.push(match k {
                CounterKind::CpuNs => AttrColor::CpuShare,
                k => AttrColor::Counter(*k),
            });
        }
        v
    }
}

impl TimelineView {
    /// Span `s`'s value in color mode `a` (0 for spans without samples).
    pub(super) fn attr_value(&self, a: AttrColor, s: usize) -> f32 {
        let Some(sm) = self.trace.sampling.as_ref() else {
            return 0.0;
        };
        match a {
            AttrColor::CpuShare => sm.cpu_of(s).map_or(0.0, |c| {
                (c as f64 / self.trace.spans.dur_ns[s].max(1) as f64).min(1.0) as f32
            }),
            AttrColor::Counter(k) => sm.counter_of(s, k).unwrap_or(0) as f32,
        }
    }

    /// The largest value of mode `a` over the spans (the top of its heat scale).
    pub(super) fn attr_max(&self, a: AttrColor) -> f32 {
        match a {
            AttrColor::CpuShare => 1.0,
            AttrColor::Counter(k) => self
                .trace
                .sampling
                .as_ref()
                .and_then(|sm| sm.counters.iter().find(|(c, _)| *c == k))
                .and_then(|(_, v)| v.iter().max())
                .map_or(1.0, |&m| m.max(1) as f32),
        }
    }

    /// The color mode the shader draws with: the value heat for the counters' modes
    /// (their values are what [`TimelineView::attr_sources`] uploads).
    pub(super) fn shader_color(&self) -> color::ColorMode {
        match self.attr {
            Some(_) => color::ColorMode::Value,
            None => self.state.color,
        }
    }

    /// The bars with mode `a`'s values as their heat (a scene of its own).
    pub(super) fn attr_sources(&self, a: AttrColor) -> Vec<BarSource<'_>> {
        let spans = &self.trace.spans;
        let of = move |s: u32| -> [f32; 3] {
            let track = color::track_palette_index(spans.track[s as usize]);
            [self.attr_value(a, s as usize), track as f32, track as f32]
        };
        // A merged run shows its hottest span.
        self.scene_source(
            Box::new(of),
            |a, b| [a[0].max(b[0]), a[1], a[2]],
            self.attr_max(a),
        )
    }

    /// The color span `s` is drawn in under attribute mode `a` (for labels).
    pub(super) fn attr_color(&self, a: AttrColor, s: usize) -> [f32; 3] {
        color::heat_color(
            f64::from(self.attr_value(a, s)),
            f64::from(self.attr_max(a)),
        )
    }

    /// The lines of span `i`'s counters: `CPU 8.1 ms (66 % of its time)`, then the other
    /// counters on one line, then who woke it.
    pub fn counter_lines(&self, i: usize) -> Vec<String> {
        let Some(sm) = self.trace.sampling.as_ref() else {
            return Vec::new();
        };
        let mut lines = Vec::new();
        let mut others = Vec::new();
        for (k, v) in sm.counters_of(i) {
            if k == CounterKind::CpuNs {
                let dur = self.trace.spans.dur_ns[i].max(1);
                lines.push(format!(
                    "CPU {} ({:.0} % of its time) · waited {}",
                    format_duration_ns(v as f64),
                    100.0 * (v as f64 / dur as f64).min(1.0),
                    format_duration_ns(dur.saturating_sub(v) as f64)
                ));
            } else {
                others.push(format!("{} {}", k.name(), k.format(v)));
            }
        }
        if !others.is_empty() {
            lines.push(others.join(" · "));
        }
        lines.extend(self.waker_line(i));
        lines
    }

    /// `woken by python3 30445 at 12.3 ms` for a span of a woken thread that ends where
    /// a wake arrives (several: the first and how many).
    fn waker_line(&self, i: usize) -> Option<String> {
        let spans = &self.trace.spans;
        let (a, b) = (spans.start_ns[i], spans.end_ns(i));
        let band = self.band_of_track(spans.track[i])?;
        let lo = self.wakes.partition_point(|w| w.at < a);
        let mut hits = self.wakes[lo..]
            .iter()
            .take_while(|w| w.at <= b)
            .filter(|w| w.woken == band);
        let first = hits.next()?;
        let more = hits.count();
        Some(format!(
            "woken by {} at {}{}",
            first.waker_label,
            format_duration_ns(first.at as f64),
            if more > 0 {
                format!(" and {more} more time{}", if more == 1 { "" } else { "s" })
            } else {
                String::new()
            }
        ))
    }

    /// The band showing track `t` (bands per track only).
    fn band_of_track(&self, t: u32) -> Option<usize> {
        self.tracks.bands.iter().position(|b| b.track == Some(t))
    }

    /// The wakes of the samples shown, by time, for the current bands (none when the
    /// whole trace is one tree: arrows join threads' bands).
    pub(super) fn collect_wakes(&self) -> Vec<Wake> {
        let (Some(sm), Some(sampled)) = (self.trace.sampling.as_ref(), self.trace.sampled.as_ref())
        else {
            return Vec::new();
        };
        let samples = &sampled.samples;
        let shift = samples.origin_ns.saturating_sub(self.trace.spans.origin_ns);
        // The band of each thread that has one.
        let mut band_of_thread = vec![None; samples.threads.len()];
        for &(track, stream) in &sm.tracks {
            let th = samples.streams[stream as usize].thread as usize;
            band_of_thread[th] = self.band_of_track(track);
        }
        let mut out = Vec::new();
        for &(track, stream) in &sm.tracks {
            let Some(woken) = self.band_of_track(track) else {
                continue;
            };
            for w in &samples.streams[stream as usize].wakers {
                out.push(Wake {
                    at: w.time + shift,
                    woken,
                    waker: band_of_thread.get(w.thread as usize).copied().flatten(),
                    waker_label: samples
                        .threads
                        .get(w.thread as usize)
                        .map_or_else(|| "another thread".into(), |t| t.label()),
                });
            }
        }
        out.sort_by_key(|w| w.at);
        out
    }

    /// The arrow's screen segment: its x, the waker's end and the woken end (`None` when
    /// off screen).
    fn wake_segment(&self, sight: &Sight<'_>, w: &Wake) -> Option<(f32, f32, f32)> {
        let (g, cam) = (sight.g, &sight.cam);
        let x = g.graph.x + cam.x_of(w.at) as f32;
        if x < g.graph.x || x > g.graph.x + g.graph.w {
            return None;
        }
        let to = g.header_top(w.woken) + g.header_px / 2.0;
        let from = match w.waker {
            Some(b) => g.header_top(b) + g.header_px / 2.0,
            // No band for the waker: a short stub above the woken band.
            None => to - 2.5 * g.header_px,
        };
        Some((x, from, to))
    }

    /// The wake arrow under `(x, y)`.
    pub(super) fn wake_at(&self, x: f32, y: f32) -> Option<usize> {
        if self.wakes.is_empty() {
            return None;
        }
        let g = self.geometry(1.0);
        if !g.graph.contains(x, y) {
            return None;
        }
        let sight = Sight {
            g: &g,
            cam: self.state.camera,
        };
        let slop = WAKE_SLOP_PX * g.scale;
        let t0 = self.tick_at_x(x - slop);
        let t1 = self.tick_at_x(x + slop);
        let lo = self.wakes.partition_point(|w| w.at < t0);
        (lo..self.wakes.len())
            .take_while(|&k| self.wakes[k].at <= t1)
            .find(|&k| {
                self.wake_segment(&sight, &self.wakes[k])
                    .is_some_and(|(wx, a, b)| {
                        (wx - x).abs() <= slop && y >= a.min(b) - slop && y <= a.max(b) + slop
                    })
            })
    }

    /// The tooltip of wake `k`.
    pub(super) fn wake_tooltip(&self, k: usize) -> Vec<String> {
        let w = &self.wakes[k];
        let woken = &self.tracks.bands[w.woken].name;
        vec![
            format!("{woken} woken by {}", w.waker_label),
            format!(
                "at {}{}",
                format_duration_ns(w.at as f64),
                if w.waker.is_some() {
                    " · click: go to the waking thread"
                } else {
                    " · the waking thread has no samples of this event"
                }
            ),
        ]
    }

    /// Follows wake `k`: the waker's band scrolled into view (expanded) and the time
    /// centred.
    pub(super) fn follow_wake(&mut self, k: usize, now_s: f64) {
        let Some(w) = self.wakes.get(k).cloned() else {
            return;
        };
        let g = self.geometry(1.0);
        let (a, b) = self.state.camera.visible_ticks(f64::from(g.graph.w));
        let half = (b - a) / 2;
        let start = w.at.saturating_sub(half);
        self.state.zoom_to_ticks(start, start + (b - a), now_s);
        if let Some(band) = w.waker {
            self.collapsed[band] = false;
            self.sync();
            let g = self.geometry(1.0);
            let top = g.header_top(band);
            self.state.scroll_by(top - g.graph.y);
        }
    }

    /// The arrows of the wakes in view.
    pub(super) fn draw_wakes(&self, frame: &mut Frame<'_>, sight: &Sight<'_>) {
        if self.wakes.is_empty() {
            return;
        }
        let (g, cam) = (sight.g, &sight.cam);
        let line = g.scale.round().max(1.0);
        let (t0, t1) = cam.visible_ticks(f64::from(g.graph.w));
        let lo = self.wakes.partition_point(|w| w.at < t0);
        let col = rgba([120, 40, 160], 0.9);
        let hot = rgba([200, 40, 120], 1.0);
        let (top, bottom) = (g.graph.y, g.graph.y + g.graph.h);
        for (k, w) in self.wakes[lo..]
            .iter()
            .enumerate()
            .take_while(|(_, w)| w.at <= t1)
            .take(MAX_WAKES)
        {
            let Some((x, from, to)) = self.wake_segment(sight, w) else {
                continue;
            };
            let c = if self.hover_wake == Some(lo + k) {
                hot
            } else {
                col
            };
            let (a, b) = (from.min(to).max(top), from.max(to).min(bottom));
            if b > a {
                frame
                    .over
                    .push(Rect::new([x - line / 2.0, a, line, b - a], c));
            }
            // The head, its tip on the woken band's header, widening back along the
            // shaft.
            if to >= top && to <= bottom {
                let dir = if to >= from { -1.0 } else { 1.0 };
                let head = 6.0 * g.scale;
                for s in 0..head as i32 {
                    let s = s as f32;
                    let w2 = (s * 0.7).max(line / 2.0);
                    frame.over.push(Rect::new(
                        [x - w2, to + dir * s - line / 2.0, 2.0 * w2, line],
                        c,
                    ));
                }
            }
            // The tail: a dot at the waker.
            if from >= top && from <= bottom {
                let r = 2.0 * g.scale;
                frame
                    .over
                    .push(Rect::new([x - r, from - r, 2.0 * r, 2.0 * r], c));
            }
        }
    }

    /// Spans whose samples carry CPU time: each sample's stretch is veiled by how much of
    /// it the thread waited (off the CPU), so a span is darker where it ran and lighter
    /// where it waited. Only where a sample's stretch is at least two pixels wide.
    pub(super) fn draw_cpu(&self, frame: &mut Frame<'_>, sight: &Sight<'_>, rows: &[RowDraw]) {
        let (Some(sm), Some(sampled)) = (self.trace.sampling.as_ref(), self.trace.sampled.as_ref())
        else {
            return;
        };
        if !sm.counters.iter().any(|(k, _)| *k == CounterKind::CpuNs) {
            return;
        }
        let samples = &sampled.samples;
        let shift = samples.origin_ns.saturating_sub(self.trace.spans.origin_ns);
        let (g, cam) = (sight.g, &sight.cam);
        let (gx, gr) = (g.graph.x, g.graph.x + g.graph.w);
        let bg = frame.background;
        let veil = |a: f32| {
            [
                f32::from(bg[0]) / 255.0,
                f32::from(bg[1]) / 255.0,
                f32::from(bg[2]) / 255.0,
                a,
            ]
        };
        let spans = &self.trace.spans;
        let mut budget = 200_000usize;
        for d in rows {
            let row = &self.tracks.layout.rows[d.row];
            for i in single_bars(Some(&self.lod), d) {
                let s = row.node[i] as usize;
                if sm.samples_of(s).is_none() {
                    continue;
                }
                let Some(stream) = sm.stream_of_track(spans.track[s]) else {
                    continue;
                };
                let st = &samples.streams[stream as usize];
                let Some(cpu) = st.counter(CounterKind::CpuNs) else {
                    continue;
                };
                let (a, b) = (row.x0[i], row.x1[i]);
                let x0 = (gx + cam.x_of(a) as f32).max(gx);
                let x1 = (gx + cam.x_of(b) as f32 - g.gap_px).min(gr);
                if x1 <= x0 {
                    continue;
                }
                // The span's samples, each lasting to the next one (within the span).
                let r = st.range(a.saturating_sub(shift), b.saturating_sub(shift));
                for j in r {
                    if budget == 0 {
                        return;
                    }
                    budget -= 1;
                    let t = st.time[j] + shift;
                    let next = st.time.get(j + 1).map_or(b, |&n| (n + shift).min(b));
                    // A sample's CPU time is what the thread used since the previous
                    // sample: the stretch to the next sample is the next one's.
                    let (c, dt) = match st.time.get(j + 1) {
                        Some(&n) => (cpu[j + 1], n - st.time[j]),
                        None if j > 0 => (cpu[j], st.time[j] - st.time[j - 1]),
                        None => (cpu[j], sm.interval_ns),
                    };
                    let share = if dt == 0 {
                        1.0
                    } else {
                        (f64::from(c) / dt as f64).min(1.0)
                    };
                    let sx0 = (gx + cam.x_of(t) as f32).max(x0);
                    let sx1 = (gx + cam.x_of(next) as f32).min(x1);
                    if sx1 - sx0 < 2.0 || share >= 0.95 {
                        continue;
                    }
                    let alpha = 0.65 * (1.0 - share as f32);
                    frame.over.push(Rect::new(
                        [sx0, d.top, sx1 - sx0, g.bar_height_px],
                        veil(alpha),
                    ));
                }
            }
        }
    }
}
