//! The session's transforms (a stack of the documents they replaced, for undo) and the
//! screenshot state it records and restores.

use super::Session;
use crate::model::Document;
use crate::model::transform::{self, Transform};
use crate::view::shot::ShotState;
use crate::view::{ViewKind, ViewMemo, views_for};
use std::sync::Arc;

/// Documents the undo stack keeps besides the first (the one before any transform): the
/// newest this many. A profile can be tens of megabytes and a session can stack hundreds
/// of transforms (the soak test's random keys did, and its memory grew without end); an
/// older step is made again by applying the transforms since the nearest kept document.
pub(super) const UNDO_DOCS: usize = 4;

impl Session {
    /// Applies `t` to the document and shows the result in the same view; an error
    /// (a name the profile does not have) is said on the status line.
    pub fn apply_transform(&mut self, t: Transform, now_s: f64) {
        let label = t.label();
        match self.push_transforms(vec![t]) {
            (Some(doc), _) => {
                self.show_transformed(doc, now_s);
                self.say(format!("{label} · U or Ctrl+Z: undo"), now_s);
            }
            (None, failed) => {
                let msg = failed.first().map_or_else(
                    || "transforms apply to profiles".to_string(),
                    |(_, e)| e.to_string(),
                );
                self.say(msg, now_s);
            }
        }
    }

    /// Applies `ts` in order to the document shown, each result stacked over the
    /// document it replaced (nothing is shown yet): the last result (`None`: none
    /// applied) and the transforms that could not be applied, with why.
    pub(super) fn push_transforms(
        &mut self,
        ts: Vec<Transform>,
    ) -> (
        Option<Document>,
        Vec<(Transform, transform::TransformError)>,
    ) {
        match self.document() {
            Some(doc) => self.push_transforms_onto(doc, ts),
            None => (None, Vec::new()),
        }
    }

    /// [`Session::push_transforms`] onto `doc` (the document about to be shown).
    pub(super) fn push_transforms_onto(
        &mut self,
        doc: Document,
        ts: Vec<Transform>,
    ) -> (
        Option<Document>,
        Vec<(Transform, transform::TransformError)>,
    ) {
        let Document::Profile(mut p) = doc else {
            return (None, Vec::new());
        };
        let spy = p.meta.spy_name.clone();
        let rule = crate::color::package_rule(spy.as_deref());
        let mut changed = false;
        let mut failed = Vec::new();
        for t in ts {
            match transform::apply(&p, &t, &rule) {
                Ok(out) => {
                    let before = std::mem::replace(&mut p, Arc::new(out));
                    self.transforms.push((t, Some(Document::Profile(before))));
                    let n = self.transforms.len();
                    if n > UNDO_DOCS + 1 {
                        self.transforms[n - UNDO_DOCS - 1].1 = None;
                    }
                    changed = true;
                }
                Err(e) => failed.push((t, e)),
            }
        }
        (changed.then_some(Document::Profile(p)), failed)
    }

    /// Undoes transforms until `keep` are left (false: there were no more than that).
    pub fn undo_transforms(&mut self, keep: usize, now_s: f64) -> bool {
        if keep >= self.transforms.len() {
            return false;
        }
        let doc = match self.transforms[keep].1.take() {
            Some(doc) => doc,
            None => self.replayed(keep),
        };
        self.transforms.truncate(keep);
        self.show_transformed(doc, now_s);
        true
    }

    /// The document before transform `k`, whose own copy was let go: the nearest earlier
    /// kept document with the transforms from there to `k` applied again (they applied
    /// before, to the same input, so they apply again).
    fn replayed(&self, k: usize) -> Document {
        let (from, doc) = self.transforms[..k]
            .iter()
            .enumerate()
            .rev()
            .find_map(|(j, (_, d))| d.clone().map(|d| (j, d)))
            .expect("the first transform keeps its document");
        let Document::Profile(mut p) = doc else {
            return doc;
        };
        let spy = p.meta.spy_name.clone();
        let rule = crate::color::package_rule(spy.as_deref());
        for (t, _) in &self.transforms[from..k] {
            match transform::apply(&p, t, &rule) {
                Ok(out) => p = Arc::new(out),
                Err(_) => break,
            }
        }
        Document::Profile(p)
    }

    /// The transforms applied, in order.
    pub fn transforms(&self) -> impl Iterator<Item = &Transform> {
        self.transforms.iter().map(|(t, _)| t)
    }

    /// Shows `doc` (the document transformed, or as it was before) in the current view's
    /// kind, with its colors, fit and function; places in the old tree do not carry over.
    pub(super) fn show_transformed(&mut self, doc: Document, now_s: f64) {
        let Some(current) = &self.view else { return };
        let (memo, kind) = (current.memo(), self.opening().unwrap_or(current.kind()));
        self.open_transformed(doc, kind, memo, now_s);
    }

    /// [`Session::show_transformed`] in a view of `kind` (else the first that shows
    /// `doc`), taking over `memo`.
    pub(super) fn open_transformed(
        &mut self,
        doc: Document,
        kind: ViewKind,
        mut memo: ViewMemo,
        now_s: f64,
    ) {
        memo.focus_path = None;
        memo.zoom_path = None;
        memo.fraction = None;
        memo.time_window = None;
        memo.scroll_px = 0.0;
        let shown = views_for(self.views, &doc);
        if let Some(&entry) = shown.iter().find(|e| e.kind == kind).or(shown.first()) {
            self.open_entry(entry, &doc, memo, now_s);
        }
    }

    /// What a screenshot of the window records (see [`ShotState`]): `source` is the file
    /// shown (`None`: the bundled demo).
    pub fn shot_state(&self, source: Option<&std::path::Path>) -> Option<ShotState> {
        let v = self.view.as_ref()?;
        Some(ShotState::new(
            source,
            v.kind().0,
            &v.memo(),
            self.transforms().map(Transform::spec).collect(),
            &self.search_text,
        ))
    }

    /// Shows the document as `state` recorded it: its transforms applied in order, its
    /// view, place, colors, function and search. What cannot be restored (a transform of
    /// a function the file no longer has, a view it has no longer) is said on the status
    /// line and the rest is restored.
    pub fn restore_shot(&mut self, state: &ShotState, now_s: f64) {
        let mut problems = Vec::new();
        let mut ts = Vec::new();
        for spec in &state.transforms {
            match Transform::parse(spec) {
                Ok(t) => ts.push(t),
                Err(e) => problems.push(e),
            }
        }
        let (transformed, failed) = self.push_transforms(ts);
        problems.extend(
            failed
                .iter()
                .map(|(t, _)| format!("transform {}", t.spec())),
        );
        let Some(doc) = transformed.or_else(|| self.document()) else {
            return;
        };
        let shown = views_for(self.views, &doc);
        let Some(entry) = shown.iter().find(|e| e.kind.0 == state.view).copied() else {
            problems.push(format!("the {} view", state.view));
            self.show_transformed(doc, now_s);
            self.say(format!("could not restore: {}", problems.join(", ")), now_s);
            return;
        };
        self.search_text = state.search.clone();
        self.open_entry(entry, &doc, state.memo(), now_s);
        if problems.is_empty() {
            self.say("restored the view the screenshot recorded", now_s);
        } else {
            self.say(format!("could not restore: {}", problems.join(", ")), now_s);
        }
    }
}
