//! A loaded document: what one input holds, before any view looks at it.
//!
//! A document is either a call tree of aggregated stacks ([`Profile`]) or a set of timed
//! spans ([`Trace`]); the time-ordered samples of later importers will be a third kind.
//! Views ([`crate::view`]) share it through an [`Arc`]: switching views, or opening a second
//! view of the same input, never copies or re-imports it.

use super::spans::{SpanSet, SpanTree};
use super::{Profile, SourceFormat};
use std::sync::Arc;

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

    /// The file name of the source (or the source itself, `<stdin>`), for titles.
    pub fn file_name(&self) -> String {
        file_name(self.source())
    }
}

/// The file name of `source`, or `source` itself when it has none (`<stdin>`).
pub fn file_name(source: &str) -> String {
    std::path::Path::new(source)
        .file_name()
        .map_or_else(|| source.to_string(), |s| s.to_string_lossy().to_string())
}
