//! A loaded document: what one input holds, before any view looks at it.
//!
//! A document is either a call tree of aggregated stacks ([`Profile`]) or a set of timed
//! spans ([`Trace`]). Either may come from time-ordered samples ([`Sampled`]): then the
//! other is one conversion away (the samples aggregated for the flame graph, table and
//! sandwich; in time order for the timeline), and [`Document::as_profile`] and
//! [`Document::as_trace`] give it.
//! Views ([`crate::view`]) share it through an [`Arc`]: switching views, or opening a second
//! view of the same input, never copies or re-imports it.

use super::samples::{Samples, Selection};
use super::spans::{SpanSet, SpanTree};
use super::timeorder::{BYTES_PER_SPAN, ConvertOptions, SpanSampling, convert_into, span_count};
use super::tree::TotalOverflow;
use super::{Profile, SourceFormat};
use std::sync::Arc;

/// Where a document came from when its input holds time-ordered samples: the samples,
/// which of them are shown, and the input's own spans (a Chrome trace's events) the time
/// order is drawn beside.
#[derive(Clone, Debug)]
pub struct Sampled {
    /// Every sample of the input.
    pub samples: Arc<Samples>,
    /// The event shown, and the time range the aggregated views count.
    pub selection: Selection,
    /// The gap rule of the time order (`--max-gap`; `None`: from the median interval).
    pub max_gap_ns: Option<u64>,
    /// The input's own spans, when it has any besides the samples.
    pub base: Option<Arc<SpanSet>>,
}

impl Sampled {
    /// All samples of the first event, nothing beside them.
    pub fn new(samples: Arc<Samples>) -> Sampled {
        Sampled {
            samples,
            selection: Selection::default(),
            max_gap_ns: None,
            base: None,
        }
    }

    /// The selected samples aggregated into a call tree (which remembers them).
    pub fn profile(&self) -> Result<Profile, TotalOverflow> {
        let mut p = self.samples.aggregate(self.selection)?;
        p.meta.sampled = Some(self.clone());
        Ok(p)
    }

    /// The event's samples in time order beside the input's own spans, linked.
    pub fn trace(&self) -> Trace {
        let mut set = self.base.as_deref().cloned().unwrap_or_default();
        let sampling = convert_into(
            &self.samples,
            ConvertOptions {
                event: self.selection.event,
                max_gap_ns: self.max_gap_ns,
            },
            &mut set,
        );
        let meta = self.samples.meta();
        let mut t = Trace::link(set, meta.source.clone(), meta.format, meta.gzipped);
        t.sampled = Some(self.clone());
        t.sampling = Some(sampling);
        t
    }

    /// How many spans the time order ([`Sampled::trace`]) holds, the input's own
    /// included, and about how much memory they take ([`BYTES_PER_SPAN`] each), counted
    /// without making them.
    pub fn time_order_size(&self) -> (u64, u64) {
        let opts = ConvertOptions {
            event: self.selection.event,
            max_gap_ns: self.max_gap_ns,
        };
        let own = self.base.as_ref().map_or(0, |b| b.len() as u64);
        let n = span_count(&self.samples, opts) + own;
        (n, n.saturating_mul(BYTES_PER_SPAN))
    }

    /// Whether the time order fits in `available` bytes of memory; why not, in words for
    /// the user, when it does not. A big recording's time order is hundreds of millions of
    /// spans: made anyway, it would exhaust the memory instead of saying so.
    pub fn check_time_order(&self, available: u64) -> Result<(), String> {
        let (spans, bytes) = self.time_order_size();
        if bytes <= available {
            return Ok(());
        }
        let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
        Err(format!(
            "its {spans} spans would take about {:.1} GiB and {:.1} GiB is free: open fewer \
             threads (--tid, --pid)",
            gib(bytes),
            gib(available)
        ))
    }

    /// The time order beside the input's own spans ([`Sampled::trace`]) when it fits in
    /// `available` bytes; else the input's own spans alone, with a note saying why, the
    /// samples kept for the aggregated views (a Chrome trace with more samples than the
    /// memory can hold in time order still opens).
    pub fn trace_within(mut self, available: u64) -> Trace {
        let Err(why) = self.check_time_order(available) else {
            return self.trace();
        };
        let mut set = self
            .base
            .take()
            .map(|b| Arc::try_unwrap(b).unwrap_or_else(|b| (*b).clone()))
            .unwrap_or_default();
        set.warnings
            .notes
            .push(format!("samples not drawn in time order: {why}"));
        let meta = self.samples.meta();
        let mut t = Trace::link(set, meta.source.clone(), meta.format, meta.gzipped);
        t.sampled = Some(self);
        t
    }

    /// The same samples with another selection.
    pub fn with_selection(&self, selection: Selection) -> Sampled {
        Sampled {
            selection,
            ..self.clone()
        }
    }
}

/// A trace, linked: its spans and their tree, and where it came from.
#[derive(Debug)]
pub struct Trace {
    /// The spans.
    pub spans: SpanSet,
    /// Their parent/child links (orphans made roots, cycles broken).
    pub tree: SpanTree,
    /// The input's name as given (a path, or `<stdin>`).
    pub source: String,
    /// The detected format.
    pub format: SourceFormat,
    /// True when the input was gzip-compressed.
    pub gzipped: bool,
    /// The samples its sampled tracks were made from.
    pub sampled: Option<Sampled>,
    /// What sampling says about those tracks' spans (counts, interval, CPU time).
    pub sampling: Option<SpanSampling>,
}

impl Trace {
    /// Links `spans` into their tree.
    pub fn link(spans: SpanSet, source: String, format: SourceFormat, gzipped: bool) -> Trace {
        let tree = SpanTree::build(&spans);
        Trace {
            spans,
            tree,
            source,
            format,
            gzipped,
            sampled: None,
            sampling: None,
        }
    }
}

/// One loaded input.
#[derive(Clone, Debug)]
pub enum Document {
    /// Aggregated stacks: a call tree.
    Profile(Arc<Profile>),
    /// Timed spans.
    Trace(Arc<Trace>),
}

impl Document {
    /// The input's name as given.
    pub fn source(&self) -> &str {
        match self {
            Document::Profile(p) => &p.meta.source,
            Document::Trace(t) => &t.source,
        }
    }

    /// The detected format.
    pub fn format(&self) -> SourceFormat {
        match self {
            Document::Profile(p) => p.meta.format,
            Document::Trace(t) => t.format,
        }
    }

    /// What did not stop the import, one line each.
    pub fn warnings(&self) -> Vec<String> {
        match self {
            Document::Profile(p) => p.meta.warnings.lines(),
            Document::Trace(t) => t.spans.warnings.lines(),
        }
    }

    /// The samples it was made from, when it was.
    pub fn sampled(&self) -> Option<&Sampled> {
        match self {
            Document::Profile(p) => p.meta.sampled.as_ref(),
            Document::Trace(t) => t.sampled.as_ref(),
        }
    }

    /// The call tree it is or stands for: a profile as it is, a sampled trace's samples
    /// aggregated; `None` for a trace of spans only.
    pub fn as_profile(&self) -> Option<Arc<Profile>> {
        match self {
            Document::Profile(p) => Some(p.clone()),
            Document::Trace(t) => t
                .sampled
                .as_ref()
                .and_then(|s| s.profile().ok())
                .map(Arc::new),
        }
    }

    /// The trace it is or stands for: a trace as it is, a sampled profile's samples in
    /// time order; `None` for a profile without samples.
    pub fn as_trace(&self) -> Option<Arc<Trace>> {
        match self {
            Document::Trace(t) => Some(t.clone()),
            Document::Profile(p) => p.meta.sampled.as_ref().map(|s| Arc::new(s.trace())),
        }
    }

    /// The same samples with only the range `[from, to)` (the samples' relative
    /// nanoseconds; `None`: all) counted by the aggregated views, as a profile; `None`
    /// when the document has no samples or already selects that range.
    pub fn with_sample_range(
        &self,
        range: Option<(u64, u64)>,
    ) -> Option<Result<Document, TotalOverflow>> {
        let s = self.sampled()?;
        if s.selection.range == range {
            return None;
        }
        let sel = Selection {
            range,
            ..s.selection
        };
        Some(
            s.with_selection(sel)
                .profile()
                .map(|p| Document::Profile(Arc::new(p))),
        )
    }

    /// The file name of the source (or the source itself, `<stdin>`), for titles.
    pub fn file_name(&self) -> String {
        file_name(self.source())
    }
}

/// A profile's title: its file's name, or for a comparison `before → after` (`3 runs →
/// 3 runs` for many).
pub fn profile_title(p: &Profile) -> String {
    match &p.meta.comparison {
        Some(c) => {
            let side = |v: &[String]| match v {
                [one] => file_name(one),
                many => format!("{} runs", many.len()),
            };
            format!("{} → {}", side(&c.before), side(&c.after))
        }
        None => file_name(&p.meta.source),
    }
}

/// The file name of `source`, or `source` itself when it has none (`<stdin>`).
pub fn file_name(source: &str) -> String {
    std::path::Path::new(source)
        .file_name()
        .map_or_else(|| source.to_string(), |s| s.to_string_lossy().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::samples::ThreadInfo;
    use crate::model::spans::{RawSpan, Track};
    use crate::model::{Names, ValueFormat, Warnings};

    /// A Chrome-like input: one span of its own, and a thread's samples `a;b`, `a;b`, `a`.
    fn chrome_like() -> Sampled {
        let mut s = Samples::new("t.json", SourceFormat::ChromeTrace);
        let t = s.add_thread(ThreadInfo::default());
        let e = s.event("cpu", ValueFormat::default());
        let st = s.stream(t, e);
        let (a, b) = (s.intern("a"), s.intern("b"));
        let ab = s.stacks.path([a, b]);
        let just_a = s.stacks.path([a]);
        for (i, stack) in [ab, ab, just_a].into_iter().enumerate() {
            s.push(st, i as u64 * 1_000_000, stack, 1);
        }
        let own = RawSpan {
            id: 1,
            parent_id: None,
            start_ns: 0,
            dur_ns: 5_000_000,
            name: "Task".into(),
            track: 0,
        };
        let tracks = vec![Track {
            name: "main".into(),
        }];
        let set = SpanSet::from_ids(Names::new(), vec![own], tracks, Warnings::default());
        let mut sampled = Sampled::new(Arc::new(s.finish()));
        sampled.base = Some(Arc::new(set));
        sampled
    }

    #[test]
    fn a_time_order_too_big_leaves_the_inputs_own_spans_and_says_why() {
        let s = chrome_like();
        // The span of its own, then a over three samples and b over two.
        assert_eq!(s.time_order_size(), (3, 3 * BYTES_PER_SPAN));
        let whole = s.clone().trace_within(3 * BYTES_PER_SPAN);
        assert_eq!(whole.spans.len(), 3);
        assert!(whole.sampling.is_some() && whole.spans.warnings.notes.is_empty());
        let cut = s.trace_within(3 * BYTES_PER_SPAN - 1);
        assert_eq!(cut.spans.len(), 1);
        assert_eq!(cut.spans.names.get(cut.spans.name[0]), "Task");
        assert!(cut.sampling.is_none());
        let note = cut.spans.warnings.notes.join("\n");
        assert!(
            note.starts_with("samples not drawn in time order: its 3 spans would take"),
            "{note}"
        );
        // The samples stay for the aggregated views.
        let doc = Document::Trace(Arc::new(cut));
        assert_eq!(doc.as_profile().unwrap().tree.grand_total(), 3);
    }
}
