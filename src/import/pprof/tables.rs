//! Pass 1: everything but the samples: sample types, mappings, locations with their
//! lines, functions, the string table, the period; ids mapped to indices; units.

use super::wire::{Fields, Pb, PbError, err};
use crate::model::{Unit, ValueFormat};
use std::ops::Range;

// ---------------------------------------------------------------------------------------
// Pass 1: everything but the samples.

/// A `ValueType` as string indices.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RawValueType {
    pub(super) type_: u64,
    pub(super) unit: u64,
    pub(super) at: usize,
}

pub(super) struct RawMapping {
    pub(super) id: u64,
    pub(super) filename: u64,
    pub(super) at: usize,
}

pub(super) struct RawFunction {
    pub(super) id: u64,
    pub(super) name: u64,
    pub(super) system_name: u64,
    pub(super) at: usize,
}

pub(super) struct RawLocation {
    pub(super) id: u64,
    pub(super) mapping_id: u64,
    pub(super) address: u64,
    /// Range in [`Tables::line_functions`].
    pub(super) lines: Range<u32>,
    pub(super) at: usize,
}

/// What pass 1 collects.
#[derive(Default)]
pub(super) struct Tables {
    pub(super) sample_types: Vec<RawValueType>,
    pub(super) period_type: Option<RawValueType>,
    pub(super) period: u64,
    pub(super) default_sample_type: u64,
    pub(super) strings: Vec<Range<usize>>,
    pub(super) mappings: Vec<RawMapping>,
    pub(super) functions: Vec<RawFunction>,
    pub(super) locations: Vec<RawLocation>,
    /// `Line.function_id` of every location's lines, in file order (innermost first).
    pub(super) line_functions: Vec<u64>,
    /// Sample messages seen.
    pub(super) samples: u64,
    /// Where a sample field starts, the first at or after each 64 KiB of the input:
    /// where the samples pass may cut the input into parts.
    pub(super) sample_marks: Vec<usize>,
    /// Where the top-level fields stop: the input's length, or the start of a field the
    /// data ends inside (a cut-off file), with what was wrong there.
    pub(super) end: usize,
    pub(super) cut: Option<PbError>,
}

pub(super) fn value_type(data: &[u8], r: Range<usize>, at: usize) -> Pb<RawValueType> {
    let mut v = RawValueType {
        at,
        ..RawValueType::default()
    };
    let mut f = Fields::new(data, r, "ValueType");
    while let Some(x) = f.next()? {
        match x.number {
            1 => v.type_ = x.varint("ValueType.type")?,
            2 => v.unit = x.varint("ValueType.unit")?,
            _ => {}
        }
    }
    Ok(v)
}

/// The spacing of [`Tables::sample_marks`].
const MARK_STEP: usize = 1 << 16;

pub(super) fn read_tables(data: &[u8]) -> Pb<Tables> {
    let mut t = Tables {
        end: data.len(),
        ..Tables::default()
    };
    let mut top = Fields::new(data, 0..data.len(), "Profile");
    let mut next_mark = MARK_STEP;
    loop {
        let field_start = top.pos;
        let x = match top.next() {
            Ok(Some(x)) => x,
            Ok(None) => break,
            // A cut-off file: keep the whole fields before the cut.
            Err(e) if e.cut => {
                t.end = field_start;
                t.cut = Some(e);
                break;
            }
            Err(e) => return Err(e),
        };
        match x.number {
            1 => t
                .sample_types
                .push(value_type(data, x.bytes("Profile.sample_type")?, x.at)?),
            2 => {
                x.bytes("Profile.sample")?;
                t.samples += 1;
                if field_start >= next_mark {
                    t.sample_marks.push(field_start);
                    next_mark = field_start + MARK_STEP;
                }
            }
            3 => {
                let mut m = RawMapping {
                    id: 0,
                    filename: 0,
                    at: x.at,
                };
                let mut f = Fields::new(data, x.bytes("Profile.mapping")?, "Mapping");
                while let Some(y) = f.next()? {
                    match y.number {
                        1 => m.id = y.varint("Mapping.id")?,
                        5 => m.filename = y.varint("Mapping.filename")?,
                        _ => {}
                    }
                }
                t.mappings.push(m);
            }
            4 => {
                let first_line = t.line_functions.len();
                let mut l = RawLocation {
                    id: 0,
                    mapping_id: 0,
                    address: 0,
                    lines: 0..0,
                    at: x.at,
                };
                let mut f = Fields::new(data, x.bytes("Profile.location")?, "Location");
                while let Some(y) = f.next()? {
                    match y.number {
                        1 => l.id = y.varint("Location.id")?,
                        2 => l.mapping_id = y.varint("Location.mapping_id")?,
                        3 => l.address = y.varint("Location.address")?,
                        4 => {
                            let mut function_id = 0;
                            let mut g = Fields::new(data, y.bytes("Location.line")?, "Line");
                            while let Some(z) = g.next()? {
                                if z.number == 1 {
                                    function_id = z.varint("Line.function_id")?;
                                }
                            }
                            t.line_functions.push(function_id);
                        }
                        _ => {}
                    }
                }
                let (s, e) = (first_line, t.line_functions.len());
                let (Ok(s), Ok(e)) = (u32::try_from(s), u32::try_from(e)) else {
                    return err(x.at, "more than 4 G lines in locations".to_string());
                };
                l.lines = s..e;
                t.locations.push(l);
            }
            5 => {
                let mut func = RawFunction {
                    id: 0,
                    name: 0,
                    system_name: 0,
                    at: x.at,
                };
                let mut f = Fields::new(data, x.bytes("Profile.function")?, "Function");
                while let Some(y) = f.next()? {
                    match y.number {
                        1 => func.id = y.varint("Function.id")?,
                        2 => func.name = y.varint("Function.name")?,
                        3 => func.system_name = y.varint("Function.system_name")?,
                        _ => {}
                    }
                }
                t.functions.push(func);
            }
            6 => t.strings.push(x.bytes("Profile.string_table")?),
            11 => {
                t.period_type = Some(value_type(data, x.bytes("Profile.period_type")?, x.at)?);
            }
            12 => t.period = x.varint("Profile.period")?,
            14 => t.default_sample_type = x.varint("Profile.default_sample_type")?,
            _ => {}
        }
    }
    Ok(t)
}

/// Maps the ids of a table (locations, functions, mappings) to indices in it.
pub(super) enum IdMap {
    /// `index[id]`, `u32::MAX` where no entry has the id: ids are small (every writer
    /// numbers them 1, 2, 3 …).
    Dense(Vec<u32>),
    /// Large or scattered ids.
    Sparse(hashbrown::HashMap<u64, u32, foldhash::fast::FixedState>),
}

pub(super) const NONE: u32 = u32::MAX;

impl IdMap {
    /// Indexes `ids` (with their byte offsets); `what` names the message in errors.
    pub(super) fn build(
        ids: impl ExactSizeIterator<Item = (u64, usize)> + Clone,
        what: &str,
    ) -> Pb<IdMap> {
        let n = ids.len();
        if u32::try_from(n).is_err() {
            return err(0, format!("more than 4 G {what} entries"));
        }
        let max = ids.clone().map(|(id, _)| id).max().unwrap_or(0);
        // A dense table is at most a few times larger than the entries themselves, which
        // the input had to hold: no allocation beyond what the file's size justifies.
        let mut map = if max <= 4 * n as u64 + 1024 {
            IdMap::Dense(vec![NONE; max as usize + 1])
        } else {
            IdMap::Sparse(hashbrown::HashMap::with_hasher(
                foldhash::fast::FixedState::with_seed(0x9_9f0f),
            ))
        };
        let at_of = |i: u32| ids.clone().nth(i as usize).map_or(0, |(_, at)| at);
        for (i, (id, at)) in ids.clone().enumerate() {
            // profile.proto reserves id 0 ("no mapping/function"), so nothing can refer
            // to such an entry; .NET's pprof writer emits one anyway. Go ignores it too.
            if id == 0 {
                continue;
            }
            let i = i as u32;
            let prev = match &mut map {
                IdMap::Dense(v) => std::mem::replace(&mut v[id as usize], i),
                IdMap::Sparse(m) => m.insert(id, i).unwrap_or(NONE),
            };
            if prev != NONE {
                let first = at_of(prev);
                return err(
                    at,
                    format!("{what} id {id} was already used by the {what} at byte {first}"),
                );
            }
        }
        Ok(map)
    }

    #[inline(always)]
    pub(super) fn get(&self, id: u64) -> Option<u32> {
        let i = match self {
            IdMap::Dense(v) => *v.get(usize::try_from(id).ok()?)?,
            IdMap::Sparse(m) => *m.get(&id)?,
        };
        (i != NONE).then_some(i)
    }
}

/// The string table, with index checks.
pub(super) struct Strings<'a> {
    pub(super) data: &'a [u8],
    pub(super) ranges: &'a [Range<usize>],
}

impl<'a> Strings<'a> {
    pub(super) fn get(&self, idx: u64, at: usize, what: &str) -> Pb<&'a [u8]> {
        match usize::try_from(idx).ok().and_then(|i| self.ranges.get(i)) {
            Some(r) => Ok(&self.data[r.clone()]),
            None => err(
                at,
                format!(
                    "{what} is string {idx}, past the end of the string table ({} strings)",
                    self.ranges.len()
                ),
            ),
        }
    }

    pub(super) fn text(&self, idx: u64, at: usize, what: &str) -> Pb<String> {
        self.get(idx, at, what)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

/// What one pprof unit is in scorch's units, and the factor from the file's integers to
/// ticks (1000 for microseconds shown as nanoseconds).
pub(super) fn value_format(
    type_: &str,
    unit: &str,
    period: Option<(&str, &str, u64)>,
) -> (ValueFormat, u64) {
    let (unit, scale) = match unit {
        "nanoseconds" | "ns" => (time_unit(type_), 1),
        "microseconds" | "us" => (time_unit(type_), 1_000),
        "milliseconds" | "ms" => (time_unit(type_), 1_000_000),
        "seconds" | "s" => (time_unit(type_), 1_000_000_000),
        "bytes" | "B" => (Unit::Bytes, 1),
        "kilobytes" | "KB" => (Unit::Bytes, 1 << 10),
        "megabytes" | "MB" => (Unit::Bytes, 1 << 20),
        "gigabytes" | "GB" => (Unit::Bytes, 1 << 30),
        "" | "count" | "samples" | "objects" | "goroutines" => (count_unit(type_, unit), 1),
        other => (Unit::Other(other.to_string()), 1),
    };
    // A count of CPU samples at a known period is time: a Go CPU profile's `samples`
    // value with `period_type cpu/nanoseconds` and `period 10000000` is 100 Hz. Other
    // counts stay counts, whatever the period: .NET's `alloc-samples/count` beside a
    // `cpu/nanoseconds` period of 1 is allocations, not nanoseconds.
    let cpu_samples = matches!(type_, "samples" | "sample");
    let sample_rate_hz = match (&unit, period) {
        (Unit::Samples, Some((_, "nanoseconds", p)))
            if cpu_samples && p > 0 && 1_000_000_000 % p == 0 =>
        {
            u32::try_from(1_000_000_000 / p).ok()
        }
        _ => None,
    };
    (
        ValueFormat {
            unit,
            sample_rate_hz,
            ticks_per_unit: 1,
        },
        scale,
    )
}

pub(super) fn time_unit(type_: &str) -> Unit {
    // Go's block and mutex profiles: `delay/nanoseconds` (Pyroscope's lock_nanoseconds).
    if type_ == "delay" {
        Unit::LockNanoseconds
    } else {
        Unit::Nanoseconds
    }
}

pub(super) fn count_unit(type_: &str, unit: &str) -> Unit {
    match (type_, unit) {
        (_, "objects") => Unit::Objects,
        (_, "goroutines") => Unit::Goroutines,
        ("alloc_objects" | "inuse_objects" | "objects", _) => Unit::Objects,
        ("goroutine" | "goroutines", _) => Unit::Goroutines,
        ("contentions" | "lock_count", _) => Unit::LockSamples,
        ("exception" | "exceptions", _) => Unit::Exceptions,
        _ => Unit::Samples,
    }
}

/// The index of the sample type to show: `wanted` (a name, `type/unit`, or an index), else
/// the default one, else the last (what `go tool pprof` does).
pub(super) fn choose_type(
    names: &[(String, String)],
    default: &str,
    wanted: Option<&str>,
) -> Option<usize> {
    match wanted {
        Some(w) => {
            let w = w.trim();
            names
                .iter()
                .position(|(t, u)| t == w || format!("{t}/{u}") == w)
                .or_else(|| w.parse::<usize>().ok().filter(|&i| i < names.len()))
        }
        None => names
            .iter()
            .position(|(t, _)| !default.is_empty() && t == default)
            .or(names.len().checked_sub(1)),
    }
}
