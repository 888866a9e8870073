//! What every importer of time-ordered samples shares after parsing: the `--pid`/`--tid`
//! filters, the choice of event (`--event`, else the one with the most samples), the gap
//! rule (`--max-gap`), and the "no samples" error.

use super::ImportError;
use crate::model::Sampled;
use crate::model::samples::{Samples, Selection};
use std::sync::Arc;

/// Options of inputs with time-ordered samples.
#[derive(Clone, Copy, Debug, Default)]
pub struct SampleOptions<'a> {
    /// The event to show (`cpu-clock`, `sched:sched_switch`); `None`: the first event of
    /// the input (perf's own default, and inferno's).
    pub event: Option<&'a str>,
    /// Keep only these process ids (empty: all).
    pub pids: &'a [i64],
    /// Keep only these thread ids (empty: all).
    pub tids: &'a [i64],
    /// The time order's gap rule, nanoseconds.
    pub max_gap_ns: Option<u64>,
}

impl SampleOptions<'_> {
    /// True when `--pid` or `--tid` asks for some processes or threads only.
    pub fn filters(&self) -> bool {
        !self.pids.is_empty() || !self.tids.is_empty()
    }

    /// True for a thread the filters keep (a filter asks for an id the thread must have).
    pub fn keeps(&self, pid: Option<i64>, tid: Option<i64>) -> bool {
        (self.pids.is_empty() || pid.is_some_and(|p| self.pids.contains(&p)))
            && (self.tids.is_empty() || tid.is_some_and(|t| self.tids.contains(&t)))
    }

    /// The filters as given: `--pid 1,2 --tid 3`.
    pub fn filter_text(&self) -> String {
        let list = |v: &[i64]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        match (self.pids.is_empty(), self.tids.is_empty()) {
            (false, false) => format!("--pid {} --tid {}", list(self.pids), list(self.tids)),
            (false, true) => format!("--pid {}", list(self.pids)),
            _ => format!("--tid {}", list(self.tids)),
        }
    }
}

/// Samples after the filters, and which of them to show.
#[derive(Debug)]
pub struct Chosen {
    /// The samples.
    pub samples: Samples,
    /// The event shown.
    pub selection: Selection,
    /// The gap rule.
    pub max_gap_ns: Option<u64>,
}

impl Chosen {
    /// The document link these samples make.
    pub fn sampled(self) -> Sampled {
        Sampled {
            samples: Arc::new(self.samples),
            selection: self.selection,
            max_gap_ns: self.max_gap_ns,
            base: None,
        }
    }
}

/// Applies the filters and picks the event; fails when nothing is left.
pub fn choose(
    file: &str,
    mut samples: Samples,
    opts: &SampleOptions<'_>,
) -> Result<Chosen, ImportError> {
    let before = samples.len();
    if opts.filters() {
        let keep: Vec<bool> = samples
            .threads
            .iter()
            .map(|t| opts.keeps(t.pid, t.tid))
            .collect();
        samples.streams.retain(|s| keep[s.thread as usize]);
        if samples.is_empty() {
            return Err(ImportError::NoSamples {
                file: file.to_string(),
                detail: format!(
                    "none of its {before} samples is of the processes or threads asked for \
                     ({})",
                    opts.filter_text()
                ),
            });
        }
        let dropped = before - samples.len();
        if dropped > 0 {
            samples.meta_mut().warnings.notes.push(format!(
                "{dropped} samples of other threads left out ({})",
                opts.filter_text()
            ));
        }
    }
    if samples.is_empty() {
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail: "the input holds no samples".to_string(),
        });
    }
    let event = match opts.event {
        Some(name) => match samples.events.iter().position(|e| e.name == name) {
            Some(i) if samples.count_of(i as u32) > 0 => i as u32,
            _ => {
                return Err(ImportError::NoSamples {
                    file: file.to_string(),
                    detail: format!(
                        "no samples of event '{name}'; it has {}",
                        events_text(&samples)
                    ),
                });
            }
        },
        None => (0..samples.events.len() as u32)
            .find(|&e| samples.count_of(e) > 0)
            .unwrap_or(0),
    };
    Ok(Chosen {
        samples,
        selection: Selection { event, range: None },
        max_gap_ns: opts.max_gap_ns,
    })
}

/// `cpu-clock (561 samples), page-faults (12 samples)`.
pub fn events_text(samples: &Samples) -> String {
    samples
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{} ({} samples)", e.name, samples.count_of(i as u32)))
        .collect::<Vec<_>>()
        .join(", ")
}
