//! `scorch info`: what a file holds, as summary structs that print themselves.
//!
//! [`ProfileSummary`] and [`TraceSummary`] gather everything once (laying the document
//! out as the window would, to report rows, memory and timings) and [`Display`] them as
//! aligned `key:     value` lines. Building and printing are separate so both are tested
//! without a terminal.

use crate::layout::flame_layout;
use crate::layout::timeline::{TraceMemory, track_layout};
use crate::lod::Lod;
use crate::model::units::format_duration_ns;
use crate::model::{Profile, SampleTypes, SourceFormat, Trace};
use crate::view::draw::{INSTANCE_BYTES, NAME_GPU_BYTES, scene_gpu_bytes};
use crate::view::timeline::default_band_mode;
use std::fmt::{self, Display};
use std::time::{Duration, Instant};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A format line: `folded stacks (gzip)`.
fn format_line(format: SourceFormat, gzipped: bool) -> String {
    format!(
        "{}{}",
        format.describe(),
        if gzipped { " (gzip)" } else { "" }
    )
}

/// Bytes of the CPU-side data of a loaded profile, by part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfileMemory {
    /// The call tree.
    pub tree: usize,
    /// The flame layout (also the pick index).
    pub layout: usize,
    /// The level-of-detail tiers.
    pub lod: usize,
    /// The interned names.
    pub names: usize,
}

/// What `scorch info` says of a profile.
#[derive(Clone, Debug)]
pub struct ProfileSummary {
    /// The input's name.
    pub source: String,
    /// Its format.
    pub format: SourceFormat,
    /// Gzip-compressed.
    pub gzipped: bool,
    /// `samples at 100 Hz (fixed point: …)`.
    pub units: String,
    /// pprof's sample types and the one shown.
    pub sample_types: Option<SampleTypes>,
    /// The grand total in the profile's units.
    pub total_long: String,
    /// The grand total in ticks.
    pub total: u64,
    /// The total the file states.
    pub stated_total: Option<u64>,
    /// Before and after totals of a diff, in units.
    pub diff: Option<(String, String)>,
    /// Call-tree nodes, root included.
    pub nodes: usize,
    /// Bars of the flame layout.
    pub bars: usize,
    /// Frames in the deepest stack.
    pub depth: u32,
    /// Distinct names.
    pub names: usize,
    /// Pyroscope's `spyName`.
    pub profiler: Option<String>,
    /// The application name.
    pub app: Option<String>,
    /// Resident bytes by part.
    pub memory: ProfileMemory,
    /// Bars of all LOD tiers.
    pub lod_bars: usize,
    /// Reading and parsing.
    pub load: Duration,
    /// The flame layout.
    pub layout_time: Duration,
    /// The LOD tiers.
    pub lod_time: Duration,
    /// What did not stop the import.
    pub warnings: Vec<String>,
    /// Comment lines skipped.
    pub comment_lines: u64,
}

impl ProfileSummary {
    /// Summarises `profile`, read and parsed in `load`, laying it out to measure it.
    pub fn of(profile: &Profile, load: Duration) -> ProfileSummary {
        let t0 = Instant::now();
        let layout = flame_layout(&profile.tree);
        let layout_time = t0.elapsed();
        let lod = Lod::build(&layout);
        let lod_time = t0.elapsed() - layout_time;
        let t = &profile.tree;
        let v = &profile.values;
        let m = &profile.meta;
        let rate = v
            .sample_rate_hz
            .map(|hz| format!(" at {hz} Hz"))
            .unwrap_or_default();
        let fixed = if v.ticks_per_unit > 1 {
            format!(" (fixed point: {} ticks per unit)", v.ticks_per_unit)
        } else {
            String::new()
        };
        ProfileSummary {
            source: m.source.clone(),
            format: m.format,
            gzipped: m.gzipped,
            units: format!("{}{rate}{fixed}", v.unit.name()),
            sample_types: m.sample_types.clone(),
            total_long: v.format_long(t.grand_total()),
            total: t.grand_total(),
            stated_total: m.stated_total,
            diff: m
                .diff_ticks
                .map(|(l, r)| (v.format_long(l), v.format_long(r))),
            nodes: t.len(),
            bars: layout.bar_count(),
            depth: t.max_depth(),
            names: profile.names.len(),
            profiler: m.spy_name.clone(),
            app: m.app_name.clone(),
            memory: ProfileMemory {
                tree: t.heap_bytes(),
                layout: layout.heap_bytes(),
                lod: lod.heap_bytes(),
                names: profile.names.heap_bytes(),
            },
            lod_bars: lod.bar_count(),
            load,
            layout_time,
            lod_time,
            warnings: m.warnings.lines(),
            comment_lines: m.warnings.comment_lines,
        }
    }
}

impl Display for ProfileSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "file:     {}", self.source)?;
        writeln!(f, "format:   {}", format_line(self.format, self.gzipped))?;
        writeln!(f, "units:    {}", self.units)?;
        if let Some(st) = &self.sample_types {
            let listed: Vec<String> = st
                .names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    if i == st.chosen {
                        format!("{n} (shown)")
                    } else {
                        n.clone()
                    }
                })
                .collect();
            writeln!(
                f,
                "values:   {}{}",
                listed.join(", "),
                if st.names.len() > 1 {
                    "; pick one with --sample-type"
                } else {
                    ""
                }
            )?;
        }
        let stated = match self.stated_total {
            Some(s) if s == self.total => format!(" (matches the stated total {s})"),
            Some(s) => format!(" (the file states {s})"),
            None => String::new(),
        };
        writeln!(
            f,
            "total:    {} = {} ticks{stated}",
            self.total_long, self.total
        )?;
        if let Some((l, r)) = &self.diff {
            writeln!(f, "diff:     before {l}, after {r}")?;
        }
        writeln!(
            f,
            "nodes:    {} call tree nodes (root included), {} bars",
            self.nodes, self.bars
        )?;
        writeln!(f, "depth:    {} frames in the deepest stack", self.depth)?;
        writeln!(f, "names:    {} distinct", self.names)?;
        if let Some(s) = &self.profiler {
            writeln!(f, "profiler: {s}")?;
        }
        if let Some(a) = &self.app {
            writeln!(f, "app:      {a}")?;
        }
        let m = &self.memory;
        let kib = |b: usize| b / 1024;
        writeln!(
            f,
            "memory:   {} KiB (tree {} KiB, layout {} KiB, LOD {} KiB, names {} KiB)",
            kib(m.tree + m.layout + m.lod + m.names),
            kib(m.tree),
            kib(m.layout),
            kib(m.lod),
            kib(m.names)
        )?;
        // What the CPU keeps per node once loaded: tree + layout + LOD (names are shared).
        let nodes = self.nodes.max(1) as f64;
        writeln!(
            f,
            "per node: {:.1} B resident per node (tree {:.1} + layout {:.1} + LOD {:.1}; names excluded)",
            (m.tree + m.layout + m.lod) as f64 / nodes,
            m.tree as f64 / nodes,
            m.layout as f64 / nodes,
            m.lod as f64 / nodes
        )?;
        let bars = self.bars.max(1) as f64;
        let gpu = scene_gpu_bytes(self.bars, self.lod_bars, self.names);
        writeln!(
            f,
            "per bar:  {:.1} B layout + LOD (the pick index is the layout's columns); GPU {:.1} B uploaded ({INSTANCE_BYTES} B per bar and per LOD tier bar, {} tier bars; {NAME_GPU_BYTES} B per name)",
            (m.layout + m.lod) as f64 / bars,
            gpu as f64 / bars,
            self.lod_bars
        )?;
        writeln!(
            f,
            "time:     read+parse {:.1} ms, layout {:.1} ms, LOD {:.1} ms",
            ms(self.load),
            ms(self.layout_time),
            ms(self.lod_time)
        )?;
        if self.warnings.is_empty() {
            writeln!(f, "warnings: none")?;
        }
        for w in &self.warnings {
            writeln!(f, "warning:  {w}")?;
        }
        if self.comment_lines > 0 {
            writeln!(f, "comments: {} comment lines skipped", self.comment_lines)?;
        }
        Ok(())
    }
}

/// What `scorch info` says of a trace.
#[derive(Clone, Debug)]
pub struct TraceSummary {
    /// The input's name.
    pub source: String,
    /// Its format.
    pub format: SourceFormat,
    /// Gzip-compressed.
    pub gzipped: bool,
    /// Spans.
    pub spans: usize,
    /// Spans without a parent.
    pub roots: usize,
    /// Each track's label and span count.
    pub tracks: Vec<(String, usize)>,
    /// From the first start to the last end.
    pub duration_ns: u64,
    /// The trace's origin on its own clock.
    pub origin_ns: u64,
    /// Rows of the usual band layout.
    pub rows: usize,
    /// Spans pushed down by overlapping siblings.
    pub connectors: usize,
    /// Bytes of the input file (0 for standard input).
    pub file_bytes: u64,
    /// Reading and parsing.
    pub load: Duration,
    /// Linking spans into their tree.
    pub link: Duration,
    /// The band layout.
    pub layout_time: Duration,
    /// The LOD tiers.
    pub lod_time: Duration,
    /// Resident bytes by part.
    pub memory: TraceMemory,
    /// Bars of all LOD tiers.
    pub lod_bars: usize,
    /// Distinct span names (each has hashes and a search flag on the GPU).
    pub names: usize,
    /// What did not stop the import.
    pub warnings: Vec<String>,
}

impl TraceSummary {
    /// Summarises `trace` (read and parsed in `load`, linked in `link`), laying it out in
    /// its usual bands to measure it.
    pub fn of(trace: &Trace, load: Duration, link: Duration) -> TraceSummary {
        let s = &trace.spans;
        let t0 = Instant::now();
        let tracks = track_layout(s, &trace.tree, default_band_mode(trace));
        let layout_time = t0.elapsed();
        let lod = Lod::build(&tracks.layout);
        let lod_time = t0.elapsed() - layout_time;
        let mut per_track = vec![0usize; s.tracks.len()];
        for &tr in &s.track {
            if let Some(c) = per_track.get_mut(tr as usize) {
                *c += 1;
            }
        }
        let (start, end) = s.time_range();
        let mut warnings = s.warnings.lines();
        if trace.tree.cycles_broken > 0 {
            warnings.push(format!("{} parent cycles broken", trace.tree.cycles_broken));
        }
        TraceSummary {
            source: trace.source.clone(),
            format: trace.format,
            gzipped: trace.gzipped,
            spans: s.len(),
            roots: trace.tree.roots.len(),
            tracks: per_track
                .iter()
                .enumerate()
                .map(|(i, &n)| (s.track_label(i as u32), n))
                .collect(),
            duration_ns: end - start,
            origin_ns: s.origin_ns,
            rows: tracks.layout.rows.len(),
            connectors: tracks.connectors.len(),
            file_bytes: std::fs::metadata(&trace.source).map_or(0, |m| m.len()),
            load,
            link,
            layout_time,
            lod_time,
            memory: TraceMemory::of(s, &trace.tree, &tracks, lod.heap_bytes()),
            lod_bars: lod.bar_count(),
            names: s.names.len(),
            warnings,
        }
    }
}

impl Display for TraceSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "file:     {}", self.source)?;
        writeln!(f, "format:   {}", format_line(self.format, self.gzipped))?;
        writeln!(f, "spans:    {} ({} roots)", self.spans, self.roots)?;
        for (label, n) in &self.tracks {
            writeln!(f, "track:    {label} ({n} spans)")?;
        }
        writeln!(
            f,
            "time:     {} from the first start to the last end (origin {} ns)",
            format_duration_ns(self.duration_ns as f64),
            self.origin_ns
        )?;
        writeln!(
            f,
            "rows:     {} ({} spans pushed down by overlapping siblings)",
            self.rows, self.connectors
        )?;
        // Load speed: read + parse over the file's bytes (the uncompressed size when
        // gzipped is not known here, so the rate is over what was read).
        let rate = if self.file_bytes > 0 {
            format!(
                " ({:.0} MB/s)",
                self.file_bytes as f64 / 1e6 / self.load.as_secs_f64().max(1e-9)
            )
        } else {
            String::new()
        };
        writeln!(
            f,
            "timing:   read+parse {:.0} ms{rate}, link {:.0} ms, layout {:.0} ms, lod {:.0} ms, total {:.0} ms",
            ms(self.load),
            ms(self.link),
            ms(self.layout_time),
            ms(self.lod_time),
            ms(self.load + self.link + self.layout_time + self.lod_time)
        )?;
        let m = &self.memory;
        let per = |b: usize| b as f64 / self.spans.max(1) as f64;
        writeln!(
            f,
            "memory:   {:.1} B/span resident ({:.1} MiB): spans {:.1}, attrs {:.1}, tree {:.1}, layout {:.1} (rows {:.1}), lod {:.1}",
            per(m.total()),
            m.total() as f64 / (1 << 20) as f64,
            per(m.spans),
            per(m.attrs),
            per(m.tree),
            per(m.layout),
            per(m.rows),
            per(m.lod),
        )?;
        // What the GPU holds: one instance per span and per tier bar (all tiers uploaded),
        // the names' hashes and search flags, the uniform block.
        let gpu = scene_gpu_bytes(self.spans, self.lod_bars, self.names) as usize;
        writeln!(
            f,
            "gpu:      {:.1} B/span uploaded ({:.1} MiB: {INSTANCE_BYTES} B per span and per LOD tier bar, {} tier bars; {NAME_GPU_BYTES} B per name)",
            per(gpu),
            gpu as f64 / (1 << 20) as f64,
            self.lod_bars
        )?;
        if self.warnings.is_empty() {
            writeln!(f, "warnings: none")?;
        }
        for w in &self.warnings {
            writeln!(f, "warning:  {w}")?;
        }
        Ok(())
    }
}

/// What `scorch info` says of time-ordered samples: per event and thread, the time range,
/// the median sampling interval and the counters present.
#[derive(Clone, Debug)]
pub struct SamplesSummary {
    /// `(event, samples, threads, unit, shown)` per event.
    pub events: Vec<(String, usize, usize, String, bool)>,
    /// `(thread, event, samples)` per stream of the shown event.
    pub threads: Vec<(String, usize)>,
    /// From the first sample to the last, nanoseconds (0 for untimed inputs).
    pub span_ns: Option<u64>,
    /// Median sampling interval of the shown event.
    pub interval_ns: u64,
    /// The samples replay exact spans (speedscope's evented profiles): no interval.
    pub exact: bool,
    /// Counters present in the shown event, with their sum over its samples.
    pub counters: Vec<(&'static str, String)>,
    /// Blocked samples of the shown event that name the thread that woke them.
    pub wakers: usize,
    /// Per-sample bytes (without the stack table) and stacks.
    pub sample_bytes: usize,
    /// Stacks in the table.
    pub stacks: usize,
    /// Samples in all.
    pub total: usize,
    /// What did not stop the import.
    pub warnings: Vec<String>,
}

impl SamplesSummary {
    /// Summarises `sampled`.
    pub fn of(sampled: &crate::model::Sampled) -> SamplesSummary {
        let s = &sampled.samples;
        let shown = sampled.selection.event;
        let events = s
            .events
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let threads = s.streams_of(i as u32).count();
                (
                    e.name.clone(),
                    s.count_of(i as u32),
                    threads,
                    e.values.unit.name().to_string(),
                    i as u32 == shown,
                )
            })
            .collect();
        let threads = s
            .streams_of(shown)
            .map(|(_, st)| (s.threads[st.thread as usize].label(), st.len()))
            .collect();
        let (lo, mut hi) = s.time_range();
        if s.exact {
            // Exact spans end where the last sample's weight ends.
            let ends = s.streams.iter().filter_map(|st| {
                let last = st.len().checked_sub(1)?;
                Some(st.time[last].saturating_add(st.weight.get(last)))
            });
            hi = ends.max().unwrap_or(hi);
        }
        SamplesSummary {
            events,
            threads,
            span_ns: s.timed.then_some(hi - lo),
            interval_ns: if s.timed { s.median_interval(shown) } else { 0 },
            exact: s.exact,
            counters: s
                .counters_of(shown)
                .into_iter()
                .map(|c| {
                    let sum: u64 = s
                        .streams_of(shown)
                        .filter_map(|(_, st)| st.counter(c))
                        .flat_map(|v| v.iter().map(|&x| u64::from(x)))
                        .sum();
                    (c.name(), c.format(sum))
                })
                .collect(),
            wakers: s.streams_of(shown).map(|(_, st)| st.wakers.len()).sum(),
            sample_bytes: s.sample_bytes(),
            stacks: s.stacks.len(),
            total: s.len(),
            warnings: s.meta().warnings.lines(),
        }
    }
}

impl Display for SamplesSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, n, threads, unit, shown) in &self.events {
            writeln!(
                f,
                "event:    {} ({n} samples in {threads} thread{}, weights in {unit}){}",
                if name.is_empty() { "(unnamed)" } else { name },
                if *threads == 1 { "" } else { "s" },
                if *shown { ", shown" } else { "" }
            )?;
        }
        for (t, n) in &self.threads {
            writeln!(f, "thread:   {t} ({n} samples)")?;
        }
        match self.span_ns {
            Some(ns) if self.exact => writeln!(
                f,
                "sampled:  exact spans (evented input), {} from the first event to the last",
                format_duration_ns(ns as f64)
            )?,
            Some(ns) => writeln!(
                f,
                "sampled:  {} from the first sample to the last, median interval {}",
                format_duration_ns(ns as f64),
                format_duration_ns(self.interval_ns as f64)
            )?,
            None => writeln!(f, "sampled:  no timestamps (samples in file order)")?,
        }
        writeln!(
            f,
            "counters: {}",
            if self.counters.is_empty() {
                "none".to_string()
            } else {
                self.counters
                    .iter()
                    .map(|(n, v)| format!("{n} {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )?;
        if self.wakers > 0 {
            writeln!(
                f,
                "wakers:   {} blocked sample{} name the thread that woke {}",
                self.wakers,
                if self.wakers == 1 { "" } else { "s" },
                if self.wakers == 1 { "it" } else { "them" }
            )?;
        }
        writeln!(
            f,
            "samples:  {} in all, {:.1} B each beyond {} stacks",
            self.total,
            self.sample_bytes as f64 / self.total.max(1) as f64,
            self.stacks
        )?;
        for w in &self.warnings {
            writeln!(f, "warning:  {w}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Limits, load_bytes};

    #[test]
    fn a_profile_summary_lists_totals_depth_and_memory() {
        let p = load_bytes(
            "p.folded",
            b"# a comment\nmain;a;b 3\nmain;c 1\n",
            Limits::default(),
        )
        .unwrap();
        let s = ProfileSummary::of(&p, Duration::from_millis(2));
        // Names: the root's "total" and four frames.
        assert_eq!((s.nodes, s.bars, s.depth, s.names), (5, 5, 3, 5));
        let out = s.to_string();
        for want in [
            "file:     p.folded\n",
            "format:   folded stacks\n",
            "total:    4 samples = 4 ticks\n",
            "nodes:    5 call tree nodes (root included), 5 bars\n",
            "depth:    3 frames in the deepest stack\n",
            "names:    5 distinct\n",
            "time:     read+parse 2.0 ms",
            "warnings: none\n",
            "comments: 1 comment lines skipped\n",
        ] {
            assert!(out.contains(want), "{want:?} in\n{out}");
        }
        assert_eq!(out.matches("depth:").count(), 1, "the depth line once");
        assert!(out.contains("per node: "), "{out}");
    }

    #[test]
    fn a_trace_summary_lists_tracks_rows_and_warnings() {
        use crate::model::spans::{RawSpan, SpanSet, Track};
        use crate::model::{Names, Warnings};
        let raw = |id, parent_id, start_ns, dur_ns, track| RawSpan {
            id,
            parent_id,
            start_ns,
            dur_ns,
            name: format!("s{id}"),
            track,
        };
        let set = SpanSet::from_ids(
            Names::new(),
            vec![
                raw(1, None, 0, 100, 0),
                raw(2, Some(1), 10, 50, 0),
                raw(3, Some(1), 20, 50, 1),
            ],
            vec![Track::new("a"), Track::new("b")],
            Warnings::default(),
        );
        let t = Trace::link(set, "t.json".into(), SourceFormat::TiDBTrace, false);
        let s = TraceSummary::of(&t, Duration::ZERO, Duration::ZERO);
        assert_eq!((s.spans, s.roots), (3, 1));
        assert_eq!(s.tracks, [("a".to_string(), 2), ("b".to_string(), 1)]);
        let out = s.to_string();
        assert!(out.contains("spans:    3 (1 roots)\n"), "{out}");
        assert!(out.contains("track:    b (1 spans)\n"), "{out}");
        assert!(
            out.contains("time:     100 ns from the first start"),
            "{out}"
        );
        assert!(out.contains("rows:     3 (1 spans pushed down"), "{out}");
    }
}
