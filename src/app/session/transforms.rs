//! The session's transforms (a stack of the documents they replaced, for undo) and the
//! screenshot state it records and restores.

use super::{Made, Session, make_view};
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
    /// (a name the profile does not have) is said on the status line. The transform runs
    /// with the view's making (off the window's thread when views open as jobs).
    pub fn apply_transform(&mut self, t: Transform, now_s: f64) {
        if !self.document_ready(now_s) {
            return;
        }
        let (Some(current), Some(doc)) = (&self.view, self.document()) else {
            return;
        };
        let kind = self.opening().unwrap_or(current.kind());
        let memo = cleared(current.memo());
        let (views, opts) = (self.views, self.opts_for(&memo));
        let label = t.label();
        let note = format!("applying {label}…");
        self.request_view(
            kind,
            None,
            memo,
            note,
            move || {
                let (out, applied, failed) = apply_all(doc, vec![t]);
                let Some(out) = out else {
                    return Err(failed.first().map_or_else(
                        || "transforms apply to profiles".to_string(),
                        |(_, e)| e.to_string(),
                    ));
                };
                Ok(Made {
                    view: make_view(views, kind, &out, &opts)?,
                    applied,
                    memo: None,
                    say: Some(format!("{label} · U or Ctrl+Z: undo")),
                })
            },
            now_s,
        );
    }

    /// Stacks transforms applied (each with the document it was applied to), letting
    /// go of the documents beyond the first and the newest [`UNDO_DOCS`].
    pub(super) fn stack_transforms(&mut self, applied: Vec<(Transform, Document)>) {
        for (t, before) in applied {
            self.transforms.push((t, Some(before)));
            let n = self.transforms.len();
            if n > UNDO_DOCS + 1 {
                self.transforms[n - UNDO_DOCS - 1].1 = None;
            }
        }
    }

    /// Undoes transforms until `keep` are left (false: there were no more than that).
    pub fn undo_transforms(&mut self, keep: usize, now_s: f64) -> bool {
        if keep >= self.transforms.len() {
            return false;
        }
        if !self.document_ready(now_s) {
            return true;
        }
        if let Some(doc) = self.transforms[keep].1.take() {
            self.transforms.truncate(keep);
            self.show_transformed(doc, now_s);
            return true;
        }
        // Its own copy was let go: the nearest earlier kept document with the transforms
        // from there to `keep` applied again (they applied before, to the same input, so
        // they apply again), made with the view.
        let (from, base) = self.transforms[..keep]
            .iter()
            .enumerate()
            .rev()
            .find_map(|(j, (_, d))| d.clone().map(|d| (j, d)))
            .expect("the first transform keeps its document");
        let ts: Vec<Transform> = self.transforms[from..keep]
            .iter()
            .map(|(t, _)| t.clone())
            .collect();
        self.transforms.truncate(keep);
        let Some(current) = &self.view else {
            return true;
        };
        let kind = self.opening().unwrap_or(current.kind());
        let memo = cleared(current.memo());
        let (views, opts) = (self.views, self.opts_for(&memo));
        self.request_view(
            kind,
            None,
            memo,
            "undoing…".to_string(),
            move || {
                let (out, _, _) = apply_all(base.clone(), ts);
                let doc = out.unwrap_or(base);
                Ok(Made::view(make_view(views, kind, &doc, &opts)?))
            },
            now_s,
        );
        true
    }

    /// The transforms applied, in order.
    pub fn transforms(&self) -> impl Iterator<Item = &Transform> {
        self.transforms.iter().map(|(t, _)| t)
    }

    /// Shows `doc` (the document transformed, or as it was before) in the current view's
    /// kind, with its colors, fit and function; places in the old tree do not carry over.
    pub(super) fn show_transformed(&mut self, doc: Document, now_s: f64) {
        let Some(current) = &self.view else { return };
        let kind = self.opening().unwrap_or(current.kind());
        let memo = cleared(current.memo());
        let shown = views_for(self.views, &doc);
        if let Some(&entry) = shown.iter().find(|e| e.kind == kind).or(shown.first()) {
            self.open_entry(entry, &doc, memo, now_s);
        }
    }

    /// Shows `ts` applied to `doc` in a view of `kind` (else the first that shows the
    /// result), taking over `memo` (its places in the old tree let go); the transforms
    /// are stacked for undo once the view is shown. `doc` as it is where none applies.
    pub(super) fn open_transformed(
        &mut self,
        doc: Document,
        ts: Vec<Transform>,
        kind: ViewKind,
        memo: ViewMemo,
        now_s: f64,
    ) {
        let memo = cleared(memo);
        let (views, opts) = (self.views, self.opts_for(&memo));
        self.request_view(
            kind,
            None,
            memo,
            format!("opening the {} view…", kind.0),
            move || {
                let (out, applied, _) = apply_all(doc.clone(), ts);
                let doc = out.unwrap_or(doc);
                Ok(Made {
                    view: make_view(views, kind, &doc, &opts)?,
                    applied,
                    memo: None,
                    say: None,
                })
            },
            now_s,
        );
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
        if !self.document_ready(now_s) {
            return;
        }
        let mut problems = Vec::new();
        let mut ts = Vec::new();
        for spec in &state.transforms {
            match Transform::parse(spec) {
                Ok(t) => ts.push(t),
                Err(e) => problems.push(e),
            }
        }
        let (Some(current), Some(doc)) = (&self.view, self.document()) else {
            return;
        };
        let shown_kind = self.opening().unwrap_or(current.kind());
        let fallback = cleared(current.memo());
        let kind = self
            .views
            .iter()
            .find(|e| e.kind.0 == state.view)
            .map_or(shown_kind, |e| e.kind);
        let (views, opts) = (self.views, self.opts_for(&state.memo()));
        let fallback_opts = self.opts_for(&fallback);
        let wanted = state.view.clone();
        self.search_text = state.search.clone();
        self.request_view(
            kind,
            None,
            state.memo(),
            format!("restoring the {} view…", state.view),
            move || {
                let (out, applied, failed) = apply_all(doc.clone(), ts);
                problems.extend(
                    failed
                        .iter()
                        .map(|(t, _)| format!("transform {}", t.spec())),
                );
                let doc = out.unwrap_or(doc);
                let shown = views_for(views, &doc);
                let (view, memo) = match shown.iter().find(|e| e.kind.0 == wanted) {
                    Some(e) => (make_view(views, e.kind, &doc, &opts)?, None),
                    None => {
                        problems.push(format!("the {wanted} view"));
                        let view = make_view(views, shown_kind, &doc, &fallback_opts)?;
                        (view, Some(fallback))
                    }
                };
                let say = if problems.is_empty() {
                    "restored the view the screenshot recorded".to_string()
                } else {
                    format!("could not restore: {}", problems.join(", "))
                };
                Ok(Made {
                    view,
                    applied,
                    memo,
                    say: Some(say),
                })
            },
            now_s,
        );
    }
}

/// `memo` without its places in a call tree (a transformed tree has other nodes).
pub(super) fn cleared(mut memo: ViewMemo) -> ViewMemo {
    memo.focus_path = None;
    memo.zoom_path = None;
    memo.fraction = None;
    memo.time_window = None;
    memo.scroll_px = 0.0;
    memo
}

/// `ts` applied in order to `doc`, each to the result of those before: the result
/// (`None`: none applied), each one applied with the document it was applied to, and
/// those that could not be applied, with why.
pub(super) fn apply_all(doc: Document, ts: Vec<Transform>) -> Applied {
    let Document::Profile(mut p) = doc else {
        return (None, Vec::new(), Vec::new());
    };
    let spy = p.meta.spy_name.clone();
    let rule = crate::color::package_rule(spy.as_deref());
    let (mut applied, mut failed) = (Vec::new(), Vec::new());
    for t in ts {
        match transform::apply(&p, &t, &rule) {
            Ok(out) => {
                let before = std::mem::replace(&mut p, Arc::new(out));
                applied.push((t, Document::Profile(before)));
            }
            Err(e) => failed.push((t, e)),
        }
    }
    let out = (!applied.is_empty()).then_some(Document::Profile(p));
    (out, applied, failed)
}

/// What [`apply_all`] gives.
pub(super) type Applied = (
    Option<Document>,
    Vec<(Transform, Document)>,
    Vec<(Transform, transform::TransformError)>,
);
