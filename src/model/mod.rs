//! The in-memory profile: interned names plus an aggregated call tree, and what is known
//! about where it came from and what its ticks mean.
//!
//! A [`Document`] is what one input holds: a profile or a linked trace.
//!
//! This module (like `import`, `layout`, `pick` and `view`) never touches the GPU.

pub mod compare;
pub mod document;
pub mod functions;
pub mod names;
pub mod samples;
pub(crate) mod span_ids;
pub mod spans;
pub mod stats;
pub mod timeorder;
pub mod transform;
pub mod tree;
pub mod units;

pub use document::{Document, Sampled, Trace};
pub use names::{NameId, Names};
pub use tree::{CallTree, CallTreeBuilder, ChildOrder, NO_PARENT, NodeId};
pub use units::{Unit, ValueFormat};

/// The file formats scorch recognises by content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceFormat {
    /// Brendan Gregg's folded/collapsed stacks, `a;b;c 123`.
    Folded,
    /// Differential folded stacks, `a;b;c 12 34` (flamegraph.pl `difffolded.pl` output).
    FoldedDiff,
    /// Pyroscope flamebearer JSON, `single` format (4 numbers per bar).
    FlamebearerSingle,
    /// Pyroscope flamebearer JSON, `double`/diff format (7 numbers per bar).
    FlamebearerDiff,
    /// `perf script` text output.
    PerfScript,
    /// DTrace aggregated stacks.
    DTrace,
    /// Chrome Trace Event Format JSON.
    ChromeTrace,
    /// speedscope's JSON format.
    Speedscope,
    /// pprof protobuf (raw or gzip-compressed).
    Pprof,
    /// Firefox Profiler (gecko or processed) JSON.
    FirefoxProfile,
    /// Jaeger JSON traces.
    Jaeger,
    /// OpenTelemetry OTLP/JSON traces.
    Otlp,
    /// Chrome DevTools `.cpuprofile` JSON.
    CpuProfile,
    /// TiDB trace JSON (`span_sets` of timed spans).
    TiDBTrace,
    /// V8's sampling heap profile JSON (`.heapprofile`: a tree of `selfSize`s).
    HeapProfile,
}

impl SourceFormat {
    /// A short human name, used in `scorch info` and error messages.
    pub fn describe(self) -> &'static str {
        match self {
            SourceFormat::Folded => "folded stacks",
            SourceFormat::FoldedDiff => "differential folded stacks",
            SourceFormat::FlamebearerSingle => "Pyroscope flamebearer JSON (single)",
            SourceFormat::FlamebearerDiff => "Pyroscope flamebearer JSON (double/diff)",
            SourceFormat::PerfScript => "perf script text",
            SourceFormat::DTrace => "DTrace stack aggregation",
            SourceFormat::ChromeTrace => "Chrome Trace Event JSON",
            SourceFormat::Speedscope => "speedscope JSON",
            SourceFormat::Pprof => "pprof protobuf",
            SourceFormat::FirefoxProfile => "Firefox Profiler JSON",
            SourceFormat::Jaeger => "Jaeger JSON",
            SourceFormat::Otlp => "OpenTelemetry OTLP/JSON",
            SourceFormat::CpuProfile => "Chrome .cpuprofile JSON",
            SourceFormat::TiDBTrace => "TiDB trace JSON",
            SourceFormat::HeapProfile => "V8 heap profile JSON",
        }
    }
}

/// Damage found while importing that did not stop the import.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Warnings {
    /// Lines that could not be parsed and were skipped.
    pub invalid_lines: u64,
    /// Where the first invalid line was and what was wrong with it.
    pub first_invalid: Option<String>,
    /// Lines recognised as comments (`#…`, `//…`) and skipped.
    pub comment_lines: u64,
    /// Other notes, each reported once (inconsistent totals, rounding …).
    pub notes: Vec<String>,
}

impl Warnings {
    /// Counts one skipped line; the first one's place and reason (`first()`) is kept.
    pub fn invalid_line(&mut self, first: impl FnOnce() -> String) {
        self.invalid_lines += 1;
        if self.first_invalid.is_none() {
            self.first_invalid = Some(first());
        }
    }

    /// Adds the line counts of a later part of the same input (a parallel chunk): the
    /// earlier first invalid line stays the first. Notes stay the caller's to merge.
    pub fn absorb_lines(&mut self, later: Warnings) {
        self.invalid_lines += later.invalid_lines;
        self.comment_lines += later.comment_lines;
        if self.first_invalid.is_none() {
            self.first_invalid = later.first_invalid;
        }
    }

    /// `N line(s) {what} ({first})` for an error about an input with nothing to show, or
    /// `None` when no line was skipped.
    pub fn invalid_detail(&self, what: &str) -> Option<String> {
        let first = self.first_invalid.as_deref()?;
        let n = self.invalid_lines;
        Some(format!(
            "{n} line{} {what} ({first})",
            if n == 1 { "" } else { "s" }
        ))
    }

    /// True when nothing was reported.
    pub fn is_empty(&self) -> bool {
        self.invalid_lines == 0 && self.notes.is_empty()
    }

    /// One line per warning, for printing.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.invalid_lines > 0 {
            let first = self.first_invalid.as_deref().unwrap_or("");
            out.push(format!(
                "skipped {} invalid line{} (first: {first})",
                self.invalid_lines,
                if self.invalid_lines == 1 { "" } else { "s" }
            ));
        }
        out.extend(self.notes.iter().cloned());
        out
    }
}

/// Where a profile came from.
#[derive(Clone, Debug)]
pub struct ProfileMeta {
    /// The input's name as given (a path, or `<stdin>`).
    pub source: String,
    /// The detected input format.
    pub format: SourceFormat,
    /// True when the input was gzip-compressed.
    pub gzipped: bool,
    /// Pyroscope's `spyName` (`gospy`, `pyspy`, …): it selects how the package part of a
    /// name is found for coloring.
    pub spy_name: Option<String>,
    /// Application or profile name stated by the file.
    pub app_name: Option<String>,
    /// The grand total the file states (flamebearer `numTicks`), when it states one.
    pub stated_total: Option<u64>,
    /// `(leftTicks, rightTicks)` of a differential profile.
    pub diff_ticks: Option<(u64, u64)>,
    /// The value types a multi-valued input offers (pprof's sample types) and which one
    /// the tree holds; `None` for single-valued inputs.
    pub sample_types: Option<SampleTypes>,
    /// What went wrong but did not stop the import.
    pub warnings: Warnings,
    /// The time-ordered samples the tree was aggregated from, when the input has them.
    pub sampled: Option<Sampled>,
    /// What was compared, when the profile is the difference of others.
    pub comparison: Option<std::sync::Arc<compare::Comparison>>,
    /// Per counter of the samples it was aggregated from, per node of its tree (by id):
    /// the sum over the samples under the node. A profile derived from it (a transform)
    /// has other nodes and none.
    pub node_counters: Option<std::sync::Arc<NodeCounters>>,
}

/// Per counter, a value per node of a call tree.
pub type NodeCounters = Vec<(samples::CounterKind, Vec<u64>)>;

impl ProfileMeta {
    /// What every importer states: the input's name, its format and the warnings; the
    /// optional facts unset (plain, not gzipped: the caller sets what it knows).
    pub fn new(source: &str, format: SourceFormat, warnings: Warnings) -> ProfileMeta {
        ProfileMeta {
            source: source.to_string(),
            format,
            gzipped: false,
            spy_name: None,
            app_name: None,
            stated_total: None,
            diff_ticks: None,
            sample_types: None,
            warnings,
            sampled: None,
            comparison: None,
            node_counters: None,
        }
    }
}

/// The values each sample of a multi-valued input carries (pprof's `sample_type`: a CPU
/// profile has `samples/count` and `cpu/nanoseconds`, a Go heap profile four).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SampleTypes {
    /// `type/unit` of each value, in file order (`inuse_space/bytes`).
    pub names: Vec<String>,
    /// Index of the value the tree holds.
    pub chosen: usize,
}

/// An imported profile: names, the aggregated call tree and what a tick means.
#[derive(Clone, Debug)]
pub struct Profile {
    /// Interned names (node names index into it).
    pub names: Names,
    /// The aggregated call tree.
    pub tree: CallTree,
    /// What a tick is.
    pub values: ValueFormat,
    /// Provenance and warnings.
    pub meta: ProfileMeta,
}

impl Profile {
    /// True for differential (before/after) profiles. (Profiles only; see
    /// [`spans::SpanSet`] for traces.)
    pub fn is_diff(&self) -> bool {
        self.tree.diff().is_some()
    }

    /// `(left, right)` grand totals of a differential profile.
    pub fn diff_totals(&self) -> Option<(u64, u64)> {
        self.tree.diff().map(|_| {
            let left = self.tree.left_total(0);
            (left, self.tree.grand_total() - left)
        })
    }

    /// `(leftTicks, rightTicks)` to compare shares with: as the file states them, else
    /// the tree's totals; `None` for non-differential profiles.
    pub fn diff_ticks(&self) -> Option<(u64, u64)> {
        self.meta.diff_ticks.or_else(|| self.diff_totals())
    }

    /// A profile made from this one (a transform, a sandwich half): `names` and `tree`
    /// are the new ones; the units and the source's facts are this one's, less the total
    /// the file stated (it no longer applies).
    pub fn derived(&self, names: Names, tree: CallTree) -> Profile {
        Profile {
            names,
            tree,
            values: self.values.clone(),
            meta: ProfileMeta {
                stated_total: None,
                node_counters: None,
                ..self.meta.clone()
            },
        }
    }
}

#[cfg(test)]
impl Profile {
    /// Sorted `a;b;c self` lines, one per node with self ticks (as inferno collapses).
    pub(crate) fn folded_lines(&self) -> Vec<String> {
        let mut v = Vec::new();
        for n in 1..self.tree.len() as NodeId {
            let s = self.tree.self_ticks(n);
            if s > 0 {
                v.push(format!("{} {s}", self.tree.path_text(&self.names, n)));
            }
        }
        v.sort();
        v
    }
}
