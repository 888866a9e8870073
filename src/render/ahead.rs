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
//! each frame takes what has arrived ([`Ahead::next`]), for at most [`TAKE_PER_FRAME`],
//! before it measures anything: the names' measures and their runs (what drawing them
//! needs; the thread makes them, the frame only numbers their glyphs in its glyph table)
//! go into the interner's name table, which keeps its job and runs while it is kept
//! (views side by side draw two interners; each has its own). Exports and screenshots
//! have no shaping limit and start no thread.

use super::glyphs::{FastMap, GlyphQuads, KeyTable, Run, keyed_run_of};
use super::text::{Measure, drawable, font_system, is_plain, measure_of, shape};
use crate::model::Names;
use crate::model::names::NameId;
use glyphon::CacheKey;
use std::borrow::Cow;
use std::sync::mpsc;

/// Most names measured ahead per interner and size (the first ones, in id order):
/// with the names frames measure themselves this stays within the name table's bound,
/// and the runs kept for them within a few MiB per table.
const AHEAD_MAX: usize = 8192;
/// Most bytes of names copied for the thread.
const AHEAD_BYTES: usize = 4 << 20;
/// Names per batch sent back.
const BATCH: usize = 32;
/// The time a frame spends at most taking names in (their measures and runs into the
/// name table). Taking four batches of 128 shaped texts at once (their measures and runs
/// made on the render thread, about 2 µs a name on two cores shared with llvmpipe) made
/// the first zoom steps of a big trace 1.1 ms slower each; now the thread sends measures
/// and runs ready but for their glyphs' numbers in the glyph table.
pub(super) const TAKE_PER_FRAME: std::time::Duration = std::time::Duration::from_micros(150);

/// A name measured ahead: id, text, measure, and its run with its glyphs numbered by
/// their keys' positions in the job's list of keys.
pub(super) type Shaped = (NameId, Box<str>, Measure, Run);

/// Names measured ahead, and the glyph keys their runs name first.
struct Batch {
    names: Vec<Shaped>,
    new_keys: Vec<CacheKey>,
}

/// One interner's names at one size, being measured.
pub(super) struct Ahead {
    rx: mpsc::Receiver<Batch>,
    /// Arrived and not taken yet (a frame takes what its time allows).
    arrived: std::collections::VecDeque<Shaped>,
    /// Every glyph key the job's runs name, in the order they were first named.
    keys: Vec<CacheKey>,
    /// Where those keys are in the glyph table.
    table: KeyTable,
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
                let mut index: FastMap<CacheKey, u32> = FastMap::default();
                let mut keys: Vec<CacheKey> = Vec::new();
                let mut todo = todo.into_iter().peekable();
                while todo.peek().is_some() {
                    let sent = keys.len();
                    let names = todo
                        .by_ref()
                        .take(BATCH)
                        .map(|(id, text)| {
                            let b = shape(&mut fs, &text, size);
                            let run = keyed_run_of(&b, &mut keys, &mut index);
                            (id, text, measure_of(&b), run)
                        })
                        .collect();
                    let batch = Batch {
                        names,
                        new_keys: keys[sent..].to_vec(),
                    };
                    // The shaper went away or started another job: stop.
                    if tx.send(batch).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Ahead {
            rx,
            arrived: std::collections::VecDeque::new(),
            keys: Vec::new(),
            table: KeyTable::default(),
        })
    }

    /// The next name that has arrived, its run's glyphs numbered in `quads`' glyph table:
    /// `Ok(None)` when none has yet, `Err(Done)` once every name has been taken.
    pub(super) fn next(&mut self, quads: &mut GlyphQuads) -> Result<Option<Shaped>, Done> {
        if self.arrived.is_empty() {
            match self.rx.try_recv() {
                Ok(batch) => {
                    self.keys.extend(batch.new_keys);
                    self.arrived.extend(batch.names);
                }
                Err(mpsc::TryRecvError::Empty) => return Ok(None),
                Err(mpsc::TryRecvError::Disconnected) => return Err(Done),
            }
        }
        Ok(self.arrived.pop_front().map(|(id, text, m, run)| {
            let run = quads.map_keyed(run, &self.keys, &mut self.table);
            (id, text, m, run)
        }))
    }
}

/// Every name of an [`Ahead`] job has been taken.
#[derive(Debug)]
pub(super) struct Done;
