//! A thread's sample table in two steps: its columns read into plain vectors
//! ([`read_columns`], which touches only the document, so that a profile's threads are
//! read on all cores at once), then joined to the profile ([`Reader::join_samples`], one
//! thread after another: stacks resolved into the shared stack table, damaged samples
//! counted in file order). A 1 GB gecko profile's eight threads took 5 s on one core
//! read in one step.

use super::{Col, Cpu, MAX_MS, NS_PER_MS, Reader, Stacks, Table, ThreadBuf, index};
use crate::import::ImportError;
use crate::import::json_tree::J;
use crate::model::samples::EMPTY_STACK;

/// A plain sample's stack in [`Columns::stack`]: its index in the stack table, or this
/// for none (`null`).
const NO_STACK: u32 = u32::MAX;

/// A thread's samples as its table gives them, before their stacks are resolved.
pub(super) struct Columns<'a> {
    /// `{thread}.samples`.
    path: String,
    weight_type: &'a str,
    /// Whether the table has a `threadCPUDelta` column.
    has_cpu: bool,
    /// The table and its stack and weight columns, to read an odd sample again.
    table: Table<'a>,
    stack_col: Col<'a>,
    weight_col: Col<'a>,
    scale: Option<f64>,
    /// Per sample: ms on the profile's clock (NaN when the time is not a usable number),
    /// stack index (or [`NO_STACK`]), weight, and CPU ns (empty without CPU deltas; 0 for
    /// none). An odd sample has a placeholder stack and weight.
    time: Vec<f64>,
    stack: Vec<u32>,
    weight: Vec<u64>,
    cpu: Vec<u64>,
    /// The rows of samples with a usable time whose stack or weight is not plain (not an
    /// index, an index past 32 bits, a weight that is not a count), in table order: read
    /// again when joined, where their stacks are resolved before their weights are judged.
    odd: Vec<usize>,
}

/// Sample `i`'s stack in table `t` (`None`: no stack), or why it is not an index.
fn stack_at(t: &Table<'_>, col: Col<'_>, i: usize) -> Result<Option<usize>, String> {
    match t.get(col, i).unwrap_or(J::Null) {
        s if s.is_null() => Ok(None),
        s => index(s)
            .map(Some)
            .ok_or_else(|| format!("stack {s} is not an index")),
    }
}

/// Sample `i`'s weight in table `t` (1 without one), in nanoseconds when `scale` says so,
/// or why it is not a count.
fn weight_at(t: &Table<'_>, col: Col<'_>, i: usize, scale: Option<f64>) -> Result<u64, String> {
    match t.get(col, i) {
        None => Ok(1),
        Some(w) if w.is_null() => Ok(1),
        Some(w) => w
            .as_f64()
            .filter(|w| w.is_finite() && *w >= 0.0)
            .map(|w| (w * scale.unwrap_or(1.0)).round() as u64)
            .ok_or_else(|| format!("weight {w} is not a count")),
    }
}

/// Nanoseconds per weight unit of samples weighed as `weight_type` (`None`: plain counts).
pub(super) fn weight_scale(weight_type: &str) -> Option<f64> {
    (weight_type == "tracing-ms").then_some(NS_PER_MS)
}

/// Reads the columns of thread `th`'s sample table (`None` without one); `(shift, cpu)`:
/// the process's clock offset (ms) and CPU delta unit; `head`: reading a head for a
/// preview. Errors are those of a table of the wrong shape; damaged samples are kept for
/// [`Reader::join_samples`].
pub(super) fn read_columns<'a>(
    r: &Reader<'_>,
    th: J<'a>,
    path: &str,
    (shift, cpu): (f64, Cpu),
) -> Result<Option<Columns<'a>>, ImportError> {
    let (v, path) = (th.get("samples"), format!("{path}.samples"));
    if v.is_null() {
        return Ok(None);
    }
    let t = Table::open(r, v, &path, "stack")?;
    let stack = t.col("stack");
    let (time, deltas) = match t.col("time") {
        Col::Absent => (t.col("timeDeltas"), true),
        c => (c, false),
    };
    if stack.is_absent() || (time.is_absent() && !r.head) {
        return Err(r.invalid(
            &path,
            "expected `stack` and `time` (or `timeDeltas`) columns",
        ));
    }
    let weight = match t.col("weight") {
        Col::Absent => t.col("duration"),
        c => c,
    };
    let weight_type = v.get("weightType").as_str().unwrap_or("samples");
    let scale = weight_scale(weight_type);
    let cpu_col = t.col("threadCPUDelta");
    let cpu_ns = match (cpu_col, cpu) {
        (Col::Absent, _) => None,
        (_, Cpu::Ns(k)) => Some(k),
        _ => None,
    };
    let mut c = Columns {
        path,
        weight_type,
        has_cpu: !cpu_col.is_absent(),
        table: t,
        stack_col: stack,
        weight_col: weight,
        scale,
        time: Vec::with_capacity(t.len),
        stack: Vec::with_capacity(t.len),
        weight: Vec::with_capacity(t.len),
        cpu: Vec::with_capacity(if cpu_ns.is_some() { t.len } else { 0 }),
        odd: Vec::new(),
    };
    let mut clock = 0.0;
    for i in 0..t.len {
        let tv = t.get(time, i).and_then(J::as_f64);
        let ms = match tv {
            Some(d) if deltas => {
                clock += d;
                Some(clock)
            }
            None if r.head => Some(clock),
            Some(t) => {
                clock = t;
                Some(t)
            }
            None => None,
        };
        let ms = ms
            .filter(|m| m.is_finite() && m.abs() < MAX_MS)
            .map_or(f64::NAN, |m| m + shift);
        if let Some(k) = cpu_ns {
            let d = t
                .get(cpu_col, i)
                .and_then(J::as_f64)
                .filter(|d| d.is_finite() && *d > 0.0);
            c.cpu.push(d.map_or(0, |d| (d * k).round() as u64));
        }
        let plain = match (stack_at(&t, stack, i), weight_at(&t, weight, i, scale)) {
            (Ok(None), Ok(w)) => Some((NO_STACK, w)),
            (Ok(Some(s)), Ok(w)) => u32::try_from(s)
                .ok()
                .filter(|&s| s != NO_STACK)
                .map(|s| (s, w)),
            _ => None,
        };
        let (s, w) = plain.unwrap_or_else(|| {
            if !ms.is_nan() {
                c.odd.push(i);
            }
            (NO_STACK, 0)
        });
        c.time.push(ms);
        c.stack.push(s);
        c.weight.push(w);
    }
    Ok(Some(c))
}

impl Reader<'_> {
    /// Joins the columns `c` read by [`read_columns`] to thread buffer `buf`: the event,
    /// each sample's stack resolved through `stacks`, damaged samples counted (in table
    /// order, each by the first thing wrong with it: its time, its stack, its weight).
    pub(super) fn join_samples(
        &mut self,
        buf: &mut ThreadBuf,
        c: Columns<'_>,
        stacks: &mut Stacks<'_>,
        cpu: Cpu,
    ) {
        buf.event = self.event(c.weight_type);
        if c.has_cpu && !matches!(cpu, Cpu::Ns(_)) && !self.cpu_noted {
            self.cpu_noted = true;
            self.note(match cpu {
                Cpu::Other => {
                    "threadCPUDelta is in CPU cycles (or a unit not known here): no CPU time"
                }
                _ => "threadCPUDelta without meta.sampleUnits (its unit is unknown): no CPU time",
            });
        }
        let Columns {
            path,
            table,
            stack_col,
            weight_col,
            scale,
            mut time,
            mut stack,
            mut weight,
            mut cpu,
            odd,
            ..
        } = c;
        let mut odd = odd.into_iter().peekable();
        let mut kept = 0;
        for i in 0..time.len() {
            let ms = time[i];
            let sample = if ms.is_nan() {
                Err("its time is not a usable number".to_string())
            } else if odd.next_if_eq(&i).is_some() {
                stack_at(&table, stack_col, i)
                    .and_then(|s| match s {
                        None => Ok(EMPTY_STACK),
                        Some(s) => stacks.resolve(&mut self.out, s),
                    })
                    .and_then(|st| weight_at(&table, weight_col, i, scale).map(|w| (st, w)))
            } else {
                match stack[i] {
                    NO_STACK => Ok(EMPTY_STACK),
                    s => stacks.resolve(&mut self.out, s as usize),
                }
                .map(|st| (st, weight[i]))
            };
            match sample {
                Ok((st, w)) => {
                    time[kept] = ms;
                    stack[kept] = st;
                    weight[kept] = w;
                    if let Some(&d) = cpu.get(i) {
                        cpu[kept] = d;
                    }
                    kept += 1;
                }
                Err(why) => self
                    .bad_samples
                    .hit(|| format!("{path}, sample {i}: {why}")),
            }
        }
        time.truncate(kept);
        stack.truncate(kept);
        weight.truncate(kept);
        cpu.truncate(kept);
        // A thread's first CPU delta has no sample before it to be a delta from.
        if let Some(first) = cpu.first_mut() {
            *first = 0;
        }
        buf.time = time;
        buf.stack = stack;
        buf.weight = weight;
        buf.cpu = cpu;
    }
}
