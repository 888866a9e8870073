//! Names measured ahead of the frames that draw them, on a thread of their own.
//!
//! A window frame shapes new text for at most [`crate::render::LABEL_SHAPING`]; a zoom
//! that brings thousands of labels into view at once leaves most of them for later
//! frames, which the next zoom step does not give them: the labels of a trace appear
//! only when the wheel stops. The names of a trace are known from the start, and their
//! measures depend only on the font and the size, so the first time a window frame asks
//! for the names of an interner at a size, [`Ahead::start`] copies the names (up to
//! [`AHEAD_MAX`]) and shapes them on a thread with a font system of its own (the same
//! bundled font: the same measures, checked by a test), sending them back in batches;
//! each frame takes what has arrived ([`Ahead::take`]) before it measures anything: the
//! names' measures and their runs (what drawing them needs) go into the interner's name
//! table, which keeps its job and runs while it is kept (views side by side draw two
//! interners; each has its own). Exports and screenshots have no shaping limit and
//! start no thread.

use super::text::{drawable, font_system, is_plain, shape};
use crate::model::Names;
use crate::model::names::NameId;
use glyphon::Buffer;
use std::borrow::Cow;
use std::sync::mpsc;

/// Most names measured ahead per interner and size (the first ones, in id order):
/// with the names frames measure themselves this stays within the name table's bound,
/// and the runs kept for them within a few MiB per table.
const AHEAD_MAX: usize = 8192;
/// Most bytes of names copied for the thread.
const AHEAD_BYTES: usize = 4 << 20;
/// Names per batch sent back.
const BATCH: usize = 128;
/// Most batches a frame takes (a frame's share of the inserts stays well under 0.1 ms).
const BATCHES_PER_FRAME: usize = 4;

/// A batch of shaped names: id, text, and the shaped text (the frame takes its measure
/// and its run from it).
type Batch = Vec<(NameId, Box<str>, Buffer)>;

/// One interner's names at one size, being measured.
pub(super) struct Ahead {
    rx: mpsc::Receiver<Batch>,
}

impl Ahead {
    /// Starts measuring the names of `names` at `size` that are drawn as they are and
    /// are not plain (those are measured by summed advances, without shaping); `None`
    /// when there is none, or the thread cannot be started.
    pub(super) fn start(names: &Names, size: f32) -> Option<Ahead> {
        let mut todo: Vec<(NameId, Box<str>)> = Vec::new();
        let mut bytes = 0;
        for (id, text) in names.iter() {
            if todo.len() >= AHEAD_MAX || bytes + text.len() > AHEAD_BYTES {
                break;
            }
            if is_plain(text) || !matches!(drawable(text, false), (Cow::Borrowed(_), false)) {
                continue;
            }
            bytes += text.len();
            todo.push((id, text.into()));
        }
        if todo.is_empty() {
            return None;
        }
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("scorch-names".into())
            .spawn(move || {
                let mut fs = font_system();
                let mut todo = todo.into_iter().peekable();
                while todo.peek().is_some() {
                    let batch: Batch = todo
                        .by_ref()
                        .take(BATCH)
                        .map(|(id, text)| {
                            let b = shape(&mut fs, &text, size);
                            (id, text, b)
                        })
                        .collect();
                    // The shaper went away or started another job: stop.
                    if tx.send(batch).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Ahead { rx })
    }

    /// The measures that have arrived, at most a few batches; `None` once every batch
    /// has been taken.
    pub(super) fn take(&self) -> Option<Batch> {
        let mut out: Batch = Vec::new();
        for _ in 0..BATCHES_PER_FRAME {
            match self.rx.try_recv() {
                Ok(batch) => out.extend(batch),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) if out.is_empty() => return None,
                Err(mpsc::TryRecvError::Disconnected) => break,
            }
        }
        Some(out)
    }
}
