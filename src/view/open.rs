//! Which view a document opens in.

use super::flame::FlameView;
use super::timeline::TimelineView;
use super::{View, ViewOptions};
use crate::model::Document;

/// A view of `doc` as it opens by default: a call tree as a flame graph (or icicle), a
/// trace as a timeline.
pub fn default_view(doc: &Document, opts: &ViewOptions) -> Box<dyn View> {
    match doc {
        Document::Profile(p) => Box::new(FlameView::new(p.clone(), opts)),
        Document::Trace(t) => Box::new(TimelineView::new(t.clone(), opts)),
    }
}
