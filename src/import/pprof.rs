//! pprof profiles: the protobuf `Profile` message of google/pprof's `profile.proto`, as Go's
//! `runtime/pprof`, `go tool pprof`, Pyroscope, async-profiler, pprof-rs, py-spy and
//! others write it (gzip is undone by [`super::decode`] before this module sees the bytes).
//!
//! # Decoding
//! The wire format is read by hand: a varint reader and a loop over `(tag, value)` pairs
//! per message, no generated code and no build step. Every length is checked against the
//! bytes left in the enclosing message before it is used; nothing is preallocated from a
//! count in the file, so a hostile length or count costs an error, not memory (and the
//! call tree may grow to at most four nodes per input byte, which stops a small file whose
//! many-line locations repeat along its stacks from asking for billions). Repeated
//! integers are accepted packed (what every writer emits) and unpacked (what proto2-era
//! writers and `protoc --encode` emit). Unknown fields are skipped by their wire type;
//! groups (wire types 3 and 4), which `profile.proto` never uses, are an error.
//!
//! Two passes over the top-level fields, because writers put `string_table` (and often
//! `location` and `function`) after the samples:
//! 1. everything but the samples: sample types, mappings, locations (with their `Line`
//!    entries), functions, the string table, `default_sample_type`, the period. The
//!    references between them are checked here (a location naming a missing function is
//!    an error with the location's byte offset);
//! 2. the samples, in file order, straight into a [`CallTreeBuilder`].
//!
//! # Semantics (as `go tool pprof` reads a profile)
//! - The value shown is `default_sample_type` when set and present, else the **last**
//!   sample type (`cpu/nanoseconds` of a Go CPU profile, `inuse_space/bytes` of a heap
//!   profile); [`PprofOptions::sample_type`] picks another by name or index.
//! - `Sample.location_id[0]` is the leaf. Within a `Location`, `line[0]` is the innermost
//!   (inlined) function and the last line the caller it was inlined into, so a stack is
//!   built root first by walking the locations backwards and each location's lines
//!   backwards.
//! - A frame is named by its function's `name`, else its `system_name`; a location with no
//!   line (an unsymbolized address) becomes `0x<address>`, followed by the file name of its
//!   mapping in parentheses when it has one (`0x4a2f10 (libc.so.6)`). Invalid UTF-8 is
//!   replaced with U+FFFD.
//! - Samples whose chosen value is 0 add nothing and create no node. Samples that cannot be
//!   placed (a missing location, the wrong number of values) or carry a negative value (the
//!   base side of a `pprof -diff_base` profile) are skipped, counted, and reported once in
//!   a note with the byte offset of the first. Labels are ignored.
//! - Units: `nanoseconds` (and micro-, milli-, seconds, converted to nanoseconds), `bytes`
//!   (kilo-, mega-, gigabytes converted to bytes), and `count`, which becomes the quantity
//!   its type names (samples, objects, goroutines, lock samples, exceptions). A `samples`
//!   value whose `period_type` is CPU nanoseconds gets a sample rate, so it reads as time.
//!
//! # Speed
//! The sample pass allocates nothing per sample: location ids go into a reused buffer and
//! are mapped to dense location indices (a direct table when the ids are small, as every
//! writer makes them, a hash map otherwise). A location's frames are resolved once, on its
//! first use, into one flat array of interned names. Consecutive samples usually share
//! their root-side locations: the nodes of the common prefix of location indices are taken
//! from the previous sample without hashing, and below the first node a sample creates,
//! children are appended without a lookup.
//!
//! Byte offsets in messages count from the start of the protobuf data (after gzip
//! decompression).

use super::{ImportError, Progress};
use crate::model::{
    CallTree, CallTreeBuilder, ChildOrder, NO_PARENT, NameId, Names, NodeId, Profile, ProfileMeta,
    SampleTypes, SourceFormat, Unit, ValueFormat, Warnings,
};
use std::ops::Range;

/// Choices the caller can make.
#[derive(Clone, Copy, Debug, Default)]
pub struct PprofOptions<'a> {
    /// The sample type to show, by name (`alloc_space`), `type/unit`
    /// (`alloc_space/bytes`) or index (`2`); `None` for the profile's default.
    pub sample_type: Option<&'a str>,
}

/// Parses a pprof profile (uncompressed protobuf) with the default sample type.
pub fn parse(file: &str, data: &[u8]) -> Result<Profile, ImportError> {
    parse_with(file, data, PprofOptions::default(), None)
}

/// [`parse`] with options, storing the bytes consumed into `progress`.
pub fn parse_with(
    file: &str,
    data: &[u8],
    options: PprofOptions<'_>,
    progress: Option<&Progress>,
) -> Result<Profile, ImportError> {
    import(file, data, options, progress).map(|d| d.profile)
}

/// [`parse_with`], returning the counts of skipped samples alongside the profile.
pub fn parse_counted(
    file: &str,
    data: &[u8],
    options: PprofOptions<'_>,
    progress: Option<&Progress>,
) -> Result<PprofImport, ImportError> {
    import(file, data, options, progress)
}

/// A profile and the samples left out of it.
#[derive(Debug)]
pub struct PprofImport {
    /// The profile (its warnings describe the skipped samples too).
    pub profile: Profile,
    /// Samples left out of the tree, counted by reason.
    pub skipped: SkippedSamples,
}

/// Samples left out of the tree, by reason.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkippedSamples {
    /// Samples naming a location id that no `Location` has.
    pub missing_location: u64,
    /// Samples whose number of values differs from the number of sample types.
    pub wrong_values: u64,
    /// Samples whose chosen value is negative.
    pub negative: u64,
    /// The first skipped sample of each kind: where, and why.
    first: [Option<String>; 3],
}

impl SkippedSamples {
    fn note(&mut self, kind: usize, why: impl FnOnce() -> String) {
        let count = match kind {
            0 => &mut self.missing_location,
            1 => &mut self.wrong_values,
            _ => &mut self.negative,
        };
        *count += 1;
        if self.first[kind].is_none() {
            self.first[kind] = Some(why());
        }
    }

    fn notes(&self, warnings: &mut Warnings) {
        let what = [
            "that refer to a location that does not exist",
            "whose number of values differs from the number of sample types",
            "with a negative value (the base side of a diff profile?)",
        ];
        let counts = [self.missing_location, self.wrong_values, self.negative];
        for (k, (&n, what)) in counts.iter().zip(what).enumerate() {
            if n > 0 {
                let first = self.first[k].as_deref().unwrap_or("");
                let s = if n == 1 { "" } else { "s" };
                warnings
                    .notes
                    .push(format!("skipped {n} sample{s} {what} (first: {first})"));
            }
        }
    }
}

/// A wire-level or reference error at an absolute byte offset.
struct PbError {
    at: usize,
    message: String,
    /// The data ends inside the field (a truncated varint, or a length past the end).
    cut: bool,
}

type Pb<T> = Result<T, PbError>;

fn err<T>(at: usize, message: String) -> Pb<T> {
    Err(PbError {
        at,
        message,
        cut: false,
    })
}

// ---------------------------------------------------------------------------------------
// Wire format.

/// Reads a varint at `*i`; `None` when `b` ends inside it or it runs past ten bytes.
#[inline(always)]
fn varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut j = *i;
    let mut v = 0u64;
    let mut shift = 0u32;
    while j < b.len() {
        let byte = b[j];
        j += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            *i = j;
            return Some(v);
        }
        shift += 7;
        if shift >= 70 {
            return None;
        }
    }
    None
}

/// The error for a varint [`varint`] could not read at `start` of `b` (`base` is `b`'s
/// offset in the input).
fn varint_error(b: &[u8], start: usize, base: usize, what: &str) -> PbError {
    let run = b[start.min(b.len())..]
        .iter()
        .take_while(|&&x| x >= 0x80)
        .count();
    let cut = start + run >= b.len();
    let message = if cut {
        format!("truncated varint ({what}): the data ends inside it")
    } else {
        format!("varint longer than 10 bytes ({what})")
    };
    PbError {
        at: base + start,
        message,
        cut,
    }
}

/// A field's value.
#[derive(Clone, Copy, Debug)]
enum Value {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 2: the absolute byte range of the payload.
    Bytes(usize, usize),
    /// Wire types 1 and 5 (no `profile.proto` field uses them; skipped).
    Fixed,
}

/// One field of a message.
#[derive(Clone, Copy, Debug)]
struct Field {
    number: u64,
    /// Absolute offset of the field's tag.
    at: usize,
    value: Value,
}

impl Field {
    fn bytes(&self, what: &str) -> Pb<Range<usize>> {
        match self.value {
            Value::Bytes(s, e) => Ok(s..e),
            _ => err(
                self.at,
                format!("{what} must be length-delimited (wire type 2), found another wire type"),
            ),
        }
    }

    fn varint(&self, what: &str) -> Pb<u64> {
        match self.value {
            Value::Varint(v) => Ok(v),
            _ => err(
                self.at,
                format!("{what} must be a varint (wire type 0), found another wire type"),
            ),
        }
    }
}

/// The fields of one message, `data[range]`.
struct Fields<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
    /// What the message is, for errors (`Location`).
    message: &'static str,
}

impl<'a> Fields<'a> {
    fn new(data: &'a [u8], range: Range<usize>, message: &'static str) -> Self {
        Fields {
            data,
            pos: range.start,
            end: range.end,
            message,
        }
    }

    #[inline(always)]
    fn next(&mut self) -> Pb<Option<Field>> {
        if self.pos >= self.end {
            return Ok(None);
        }
        let b = &self.data[..self.end];
        let at = self.pos;
        let Some(tag) = varint(b, &mut self.pos) else {
            return Err(varint_error(
                b,
                at,
                0,
                &format!("a field tag of {}", self.message),
            ));
        };
        let number = tag >> 3;
        if number == 0 {
            return err(at, format!("field number 0 in {}", self.message));
        }
        let value = match tag & 7 {
            0 => {
                let s = self.pos;
                match varint(b, &mut self.pos) {
                    Some(v) => Value::Varint(v),
                    None => {
                        return Err(varint_error(
                            b,
                            s,
                            0,
                            &format!("field {number} of {}", self.message),
                        ));
                    }
                }
            }
            2 => {
                let s = self.pos;
                let Some(len) = varint(b, &mut self.pos) else {
                    return Err(varint_error(
                        b,
                        s,
                        0,
                        &format!("the length of field {number} of {}", self.message),
                    ));
                };
                let left = self.end - self.pos;
                if len > left as u64 {
                    return Err(PbError {
                        at: s,
                        message: format!(
                            "length {len} of field {number} of {} exceeds the remaining {left} \
                             bytes",
                            self.message
                        ),
                        cut: true,
                    });
                }
                let start = self.pos;
                self.pos += len as usize;
                Value::Bytes(start, self.pos)
            }
            1 | 5 => {
                let n = if tag & 7 == 1 { 8 } else { 4 };
                if self.end - self.pos < n {
                    return err(
                        at,
                        format!(
                            "truncated fixed-width field {number} of {}: {n} bytes needed, {} left",
                            self.message,
                            self.end - self.pos
                        ),
                    );
                }
                self.pos += n;
                Value::Fixed
            }
            w => {
                return err(
                    at,
                    format!(
                        "field {number} of {} has wire type {w}, which profile.proto never uses \
                         (expected 0, 1, 2 or 5)",
                        self.message
                    ),
                );
            }
        };
        Ok(Some(Field { number, at, value }))
    }
}

/// Calls `f` with each integer of a repeated scalar field: packed (a length-delimited run
/// of varints) or one unpacked varint.
#[inline(always)]
fn for_each_int(
    data: &[u8],
    field: &Field,
    what: &str,
    mut f: impl FnMut(u64) -> Pb<()>,
) -> Pb<()> {
    match field.value {
        Value::Varint(v) => f(v),
        Value::Bytes(s, e) => {
            let b = &data[..e];
            let mut i = s;
            while i < e {
                let at = i;
                let Some(v) = varint(b, &mut i) else {
                    return Err(varint_error(b, at, 0, what));
                };
                f(v)?;
            }
            Ok(())
        }
        Value::Fixed => err(
            field.at,
            format!("{what} must be varints, found a fixed-width value"),
        ),
    }
}

// ---------------------------------------------------------------------------------------
// Pass 1: everything but the samples.

/// A `ValueType` as string indices.
#[derive(Clone, Copy, Debug, Default)]
struct RawValueType {
    type_: u64,
    unit: u64,
    at: usize,
}

struct RawMapping {
    id: u64,
    filename: u64,
    at: usize,
}

struct RawFunction {
    id: u64,
    name: u64,
    system_name: u64,
    at: usize,
}

struct RawLocation {
    id: u64,
    mapping_id: u64,
    address: u64,
    /// Range in [`Tables::line_functions`].
    lines: Range<u32>,
    at: usize,
}

/// What pass 1 collects.
#[derive(Default)]
struct Tables {
    sample_types: Vec<RawValueType>,
    period_type: Option<RawValueType>,
    period: u64,
    default_sample_type: u64,
    strings: Vec<Range<usize>>,
    mappings: Vec<RawMapping>,
    functions: Vec<RawFunction>,
    locations: Vec<RawLocation>,
    /// `Line.function_id` of every location's lines, in file order (innermost first).
    line_functions: Vec<u64>,
    /// Sample messages seen.
    samples: u64,
    /// Where the top-level fields stop: the input's length, or the start of a field the
    /// data ends inside (a cut-off file), with what was wrong there.
    end: usize,
    cut: Option<PbError>,
}

fn value_type(data: &[u8], r: Range<usize>, at: usize) -> Pb<RawValueType> {
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

fn read_tables(data: &[u8]) -> Pb<Tables> {
    let mut t = Tables {
        end: data.len(),
        ..Tables::default()
    };
    let mut top = Fields::new(data, 0..data.len(), "Profile");
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
enum IdMap {
    /// `index[id]`, `u32::MAX` where no entry has the id: ids are small (every writer
    /// numbers them 1, 2, 3 …).
    Dense(Vec<u32>),
    /// Large or scattered ids.
    Sparse(hashbrown::HashMap<u64, u32, foldhash::fast::FixedState>),
}

const NONE: u32 = u32::MAX;

impl IdMap {
    /// Indexes `ids` (with their byte offsets); `what` names the message in errors.
    fn build(ids: impl ExactSizeIterator<Item = (u64, usize)> + Clone, what: &str) -> Pb<IdMap> {
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
    fn get(&self, id: u64) -> Option<u32> {
        let i = match self {
            IdMap::Dense(v) => *v.get(usize::try_from(id).ok()?)?,
            IdMap::Sparse(m) => *m.get(&id)?,
        };
        (i != NONE).then_some(i)
    }
}

/// The string table, with index checks.
struct Strings<'a> {
    data: &'a [u8],
    ranges: &'a [Range<usize>],
}

impl<'a> Strings<'a> {
    fn get(&self, idx: u64, at: usize, what: &str) -> Pb<&'a [u8]> {
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

    fn text(&self, idx: u64, at: usize, what: &str) -> Pb<String> {
        self.get(idx, at, what)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }
}

/// What one pprof unit is in scorch's units, and the factor from the file's integers to
/// ticks (1000 for microseconds shown as nanoseconds).
fn value_format(type_: &str, unit: &str, period: Option<(&str, &str, u64)>) -> (ValueFormat, u64) {
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
    // value with `period_type cpu/nanoseconds` and `period 10000000` is 100 Hz.
    let sample_rate_hz = match (&unit, period) {
        (Unit::Samples, Some((_, "nanoseconds", p))) if p > 0 && 1_000_000_000 % p == 0 => {
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

fn time_unit(type_: &str) -> Unit {
    // Go's block and mutex profiles: `delay/nanoseconds` (Pyroscope's lock_nanoseconds).
    if type_ == "delay" {
        Unit::LockNanoseconds
    } else {
        Unit::Nanoseconds
    }
}

fn count_unit(type_: &str, unit: &str) -> Unit {
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
fn choose_type(names: &[(String, String)], default: &str, wanted: Option<&str>) -> Option<usize> {
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

// ---------------------------------------------------------------------------------------
// Pass 2 and the whole import.

fn import(
    file: &str,
    data: &[u8],
    options: PprofOptions<'_>,
    progress: Option<&Progress>,
) -> Result<PprofImport, ImportError> {
    let plain = |e: PbError| ImportError::Invalid {
        file: file.to_string(),
        location: format!("byte {}", e.at),
        message: e.message,
    };
    let t = read_tables(data).map_err(plain)?;
    // In a cut-off file, say so in every error: it is the likely cause.
    let cut_note = t.cut.as_ref().map(|c| {
        format!(
            "the data is cut off: at byte {}, {}; only the {} bytes before it were read",
            c.at, c.message, t.end
        )
    });
    let invalid = |e: PbError| {
        let mut e = plain(e);
        if let (ImportError::Invalid { message, .. }, Some(note)) = (&mut e, &cut_note) {
            message.push_str(" (");
            message.push_str(note);
            message.push(')');
        }
        e
    };
    let strings = Strings {
        data,
        ranges: &t.strings,
    };

    // Sample types and units.
    let mut type_names = Vec::with_capacity(t.sample_types.len().min(64));
    for v in &t.sample_types {
        let ty = strings
            .text(v.type_, v.at, "the sample type's name")
            .map_err(invalid)?;
        let unit = strings
            .text(v.unit, v.at, "the sample type's unit")
            .map_err(invalid)?;
        type_names.push((ty, unit));
    }
    if type_names.is_empty() {
        let mut detail = "the pprof profile declares no sample types".to_string();
        if let Some(note) = &cut_note {
            detail = format!("{detail} ({note})");
        }
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail,
        });
    }
    let default = strings
        .text(
            t.default_sample_type,
            0,
            "default_sample_type (of the Profile)",
        )
        .map_err(invalid)?;
    let listed = || {
        type_names
            .iter()
            .map(|(t, u)| format!("{t}/{u}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(chosen) = choose_type(&type_names, &default, options.sample_type) else {
        return Err(ImportError::Invalid {
            file: file.to_string(),
            location: "sample types".to_string(),
            message: format!(
                "no sample type {:?}; the profile has {} (give a name, type/unit or index)",
                options.sample_type.unwrap_or(""),
                listed()
            ),
        });
    };
    let period = match t.period_type {
        Some(p) => {
            let ty = strings
                .text(p.type_, p.at, "the period type's name")
                .map_err(invalid)?;
            let unit = strings
                .text(p.unit, p.at, "the period type's unit")
                .map_err(invalid)?;
            Some((ty, unit, t.period))
        }
        None => None,
    };
    let period_ref = period
        .as_ref()
        .map(|(a, b, p)| (a.as_str(), b.as_str(), *p));
    let (values, scale) = value_format(&type_names[chosen].0, &type_names[chosen].1, period_ref);

    // References: every location's mapping and functions must exist, and every name is a
    // string.
    // Pyroscope's .NET profiler once wrote every function with id 0, one function per
    // location, in the same order; Pyroscope repairs such files by giving function i
    // location i's id (`FixFunctionIDForBrokenDotnet`), and so does scorch.
    let dotnet_fix = !t.functions.is_empty()
        && t.functions.len() == t.locations.len()
        && t.functions.iter().all(|f| f.id == 0);
    let function_id = |i: usize| {
        if dotnet_fix {
            t.locations[i].id
        } else {
            t.functions[i].id
        }
    };
    let functions = IdMap::build(
        t.functions
            .iter()
            .enumerate()
            .map(|(i, f)| (function_id(i), f.at)),
        "function",
    )
    .map_err(invalid)?;
    let mappings =
        IdMap::build(t.mappings.iter().map(|m| (m.id, m.at)), "mapping").map_err(invalid)?;
    let locations =
        IdMap::build(t.locations.iter().map(|l| (l.id, l.at)), "location").map_err(invalid)?;
    for f in &t.functions {
        strings
            .get(f.name, f.at, &format!("the name of function {}", f.id))
            .map_err(invalid)?;
        strings
            .get(
                f.system_name,
                f.at,
                &format!("the system name of function {}", f.id),
            )
            .map_err(invalid)?;
    }
    for m in &t.mappings {
        strings
            .get(
                m.filename,
                m.at,
                &format!("the file name of mapping {}", m.id),
            )
            .map_err(invalid)?;
    }
    // Line function ids become function indices (NONE for "no function").
    let mut line_function = Vec::with_capacity(t.line_functions.len());
    let mut location_mapping = Vec::with_capacity(t.locations.len());
    for l in &t.locations {
        for &fid in &t.line_functions[l.lines.start as usize..l.lines.end as usize] {
            let idx = if fid == 0 {
                NONE
            } else {
                functions.get(fid).ok_or_else(|| {
                    invalid(PbError {
                        at: l.at,
                        message: format!(
                            "location {} refers to function {fid}, which does not exist",
                            l.id
                        ),
                        cut: false,
                    })
                })?
            };
            line_function.push(idx);
        }
        let m = if l.mapping_id == 0 {
            NONE
        } else {
            mappings.get(l.mapping_id).ok_or_else(|| {
                invalid(PbError {
                    at: l.at,
                    message: format!(
                        "location {} refers to mapping {}, which does not exist",
                        l.id, l.mapping_id
                    ),
                    cut: false,
                })
            })?
        };
        location_mapping.push(m);
    }

    let ctx = FrameContext {
        tables: &t,
        strings: &strings,
        line_function: &line_function,
        location_mapping: &location_mapping,
        locations: &locations,
        data,
        n_types: type_names.len() as u64,
    };
    let mut pass = samples_pass(&ctx, chosen, scale, progress).map_err(invalid)?;
    let (mut chosen, mut values) = (chosen, values);
    let mut fallback_note = None;
    // A default type that is 0 everywhere (the lock time of a profile without contention)
    // would show nothing: show the first type that has values instead, and say so.
    if pass.tree.grand_total() == 0
        && options.sample_type.is_none()
        && let Some(other) = pass.positive.iter().position(|&v| v > 0)
    {
        let (ty, unit) = &type_names[chosen];
        fallback_note = Some(format!(
            "the default sample type {ty}/{unit} is 0 in every sample; showing {}/{}",
            type_names[other].0, type_names[other].1
        ));
        let (v, scale) = value_format(&type_names[other].0, &type_names[other].1, period_ref);
        pass = samples_pass(&ctx, other, scale, progress).map_err(invalid)?;
        (chosen, values) = (other, v);
    }
    let SamplePass {
        names,
        tree,
        skipped,
        ..
    } = pass;
    let mut warnings = Warnings::default();
    if dotnet_fix {
        warnings.notes.push(
            "every function has id 0 (a bug of an old .NET profiler): function i was given \
             location i's id, as Pyroscope does"
                .to_string(),
        );
    }
    warnings.notes.extend(fallback_note);
    if let Some(note) = &cut_note {
        warnings.notes.push(format!(
            "{note}: loaded the {} samples before the cut",
            t.samples
        ));
    }
    skipped.notes(&mut warnings);
    if tree.grand_total() == 0 {
        let (ty, unit) = &type_names[chosen];
        let mut detail = format!(
            "no sample has a positive {ty}/{unit} value ({} samples; sample types: {})",
            t.samples,
            listed()
        );
        for n in &warnings.notes {
            detail.push_str("; ");
            detail.push_str(n);
        }
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail,
        });
    }
    Ok(PprofImport {
        profile: Profile {
            names,
            tree,
            values,
            meta: ProfileMeta {
                source: file.to_string(),
                format: SourceFormat::Pprof,
                gzipped: false,
                spy_name: None,
                app_name: None,
                stated_total: None,
                diff_ticks: None,
                sample_types: Some(SampleTypes {
                    names: type_names.iter().map(|(t, u)| format!("{t}/{u}")).collect(),
                    chosen,
                }),
                warnings,
            },
        },
        skipped,
    })
}

/// Not resolved yet.
const UNRESOLVED: u32 = u32::MAX;

/// What resolving a location's frames reads.
struct FrameContext<'a> {
    tables: &'a Tables,
    strings: &'a Strings<'a>,
    /// Per line (as `Tables::line_functions`), the function's index or [`NONE`].
    line_function: &'a [u32],
    /// Per location, its mapping's index or [`NONE`].
    location_mapping: &'a [u32],
    /// Location ids to indices.
    locations: &'a IdMap,
    /// The whole input.
    data: &'a [u8],
    /// Sample types declared.
    n_types: u64,
}

/// What the samples pass built.
struct SamplePass {
    names: Names,
    tree: CallTree,
    skipped: SkippedSamples,
    /// Per sample type, the sum of its positive values (saturating), for choosing another
    /// type when the chosen one is 0 everywhere.
    positive: Vec<u64>,
}

/// Pass 2: every sample, in file order, into a call tree of sample type `chosen` (its
/// values multiplied by `scale`).
fn samples_pass(
    ctx: &FrameContext<'_>,
    chosen: usize,
    scale: u64,
    progress: Option<&Progress>,
) -> Pb<SamplePass> {
    let data = ctx.data;
    let mut names = Names::new();
    let mut b = CallTreeBuilder::new(&mut names, false);
    let mut frames = Frames {
        function_name: vec![UNRESOLVED; ctx.tables.functions.len()],
        location_frames: vec![(UNRESOLVED, 0); ctx.tables.locations.len()],
        flat: Vec::new(),
    };
    // Per location, the parent it was last placed under and the node it led to: samples
    // of real profiles come in no useful order, but a location mostly recurs under the
    // same caller, and this skips hashing its frames again.
    let mut memo: Vec<(NodeId, NodeId)> = vec![(NO_PARENT, 0); ctx.tables.locations.len()];
    // Locations with many lines, repeated along a stack, multiply: a small file could ask
    // for billions of nodes. Real profiles make well under one node per input byte (W1 of
    // TARGETS.md, the densest, makes 0.14), so four per byte only stops such bombs.
    let node_limit = data.len().saturating_mul(4).saturating_add(1 << 20);
    let mut skipped = SkippedSamples::default();
    let mut positive = vec![0u64; ctx.n_types as usize];
    let mut ids: Vec<u64> = Vec::new();
    let mut path: Vec<u32> = Vec::new();
    let mut prev_path: Vec<u32> = Vec::new();
    let mut prev_nodes: Vec<NodeId> = Vec::new();
    let n_types = ctx.n_types;
    let mut next_report = 1usize << 20;
    let overflow = |at: usize| PbError {
        at,
        message: "the sum of the sample values exceeds 2^64".to_string(),
        cut: false,
    };
    let mut top = Fields::new(data, 0..ctx.tables.end, "Profile");
    while let Some(x) = top.next()? {
        if x.number != 2 {
            continue;
        }
        let Value::Bytes(s, e) = x.value else {
            continue; // checked in pass 1
        };
        if s >= next_report {
            Progress::set_done_opt(progress, s as u64);
            next_report = s + (1 << 20);
        }
        ids.clear();
        let mut n_values = 0u64;
        let mut value = 0u64;
        let mut f = Fields::new(data, s..e, "Sample");
        while let Some(y) = f.next()? {
            match y.number {
                1 => for_each_int(data, &y, "Sample.location_id", |id| {
                    ids.push(id);
                    Ok(())
                })?,
                2 => for_each_int(data, &y, "Sample.value", |v| {
                    if n_values == chosen as u64 {
                        value = v;
                    }
                    if let Some(sum) = positive.get_mut(n_values as usize)
                        && (v as i64) > 0
                    {
                        *sum = sum.saturating_add(v);
                    }
                    n_values += 1;
                    Ok(())
                })?,
                _ => {}
            }
        }
        if n_values != n_types {
            skipped.note(1, || {
                format!(
                    "the sample at byte {} has {n_values} values for {n_types} sample types",
                    x.at
                )
            });
            continue;
        }
        // int64 on the wire: a negative value is a huge u64.
        if (value as i64) < 0 {
            skipped.note(2, || {
                format!("the sample at byte {} has the value {}", x.at, value as i64)
            });
            continue;
        }
        if value == 0 {
            continue;
        }
        let ticks = value.checked_mul(scale).ok_or_else(|| overflow(x.at))?;
        path.clear();
        let mut missing = None;
        for &id in ids.iter().rev() {
            match ctx.locations.get(id) {
                Some(i) => path.push(i),
                None => {
                    missing = Some(id);
                    break;
                }
            }
        }
        if let Some(id) = missing {
            skipped.note(0, || {
                format!("the sample at byte {} refers to location {id}", x.at)
            });
            continue;
        }
        // The nodes of the locations shared with the previous sample are reused.
        let common = path
            .iter()
            .zip(&prev_path)
            .take_while(|(a, b)| a == b)
            .count();
        prev_nodes.truncate(common);
        let mut node = if common == 0 {
            0
        } else {
            prev_nodes[common - 1]
        };
        let mut fresh = false;
        for &loc in &path[common..] {
            // The same location under the same parent as last time: the same node.
            let (memo_parent, memo_node) = memo[loc as usize];
            if memo_parent == node {
                node = memo_node;
                prev_nodes.push(node);
                continue;
            }
            let parent = node;
            let (start, len) = frames.of_location(loc, ctx, &mut names)?;
            for &name in &frames.flat[start as usize..(start + len) as usize] {
                node = if fresh {
                    b.push_child(node, name)
                } else {
                    let before = b.len();
                    let n = b.child(node, name);
                    fresh = b.len() > before;
                    n
                };
            }
            memo[loc as usize] = (parent, node);
            prev_nodes.push(node);
            if b.len() > node_limit {
                return err(
                    x.at,
                    format!(
                        "the samples expand to more than {node_limit} call-tree nodes (4 per \
                         input byte): locations with many inline lines repeated along deep stacks"
                    ),
                );
            }
        }
        std::mem::swap(&mut prev_path, &mut path);
        b.add_self(node, ticks).map_err(|_| overflow(x.at))?;
    }
    let tree = b
        .finish(&names, ChildOrder::ByName)
        .map_err(|_| overflow(data.len()))?;
    Ok(SamplePass {
        names,
        tree,
        skipped,
        positive,
    })
}

/// Frame names per location, resolved on first use.
struct Frames {
    /// Per function, its interned name; [`UNRESOLVED`] until needed (and for functions
    /// without a name, which take their location's address instead).
    function_name: Vec<NameId>,
    /// Per location, `(start, len)` of its frames in `flat`, root side first.
    location_frames: Vec<(u32, u32)>,
    flat: Vec<NameId>,
}

impl Frames {
    /// `(start, len)` in `flat` of location `loc`'s frames, outermost caller first.
    fn of_location(
        &mut self,
        loc: u32,
        ctx: &FrameContext<'_>,
        names: &mut Names,
    ) -> Pb<(u32, u32)> {
        let cached = self.location_frames[loc as usize];
        if cached.0 != UNRESOLVED {
            return Ok(cached);
        }
        let l = &ctx.tables.locations[loc as usize];
        let start = self.flat.len();
        let lines = l.lines.start as usize..l.lines.end as usize;
        let mut address_name = None;
        for line in lines.rev() {
            let fi = ctx.line_function[line];
            let name = match self.function_name(fi, ctx, names)? {
                Some(n) => n,
                None => *address_name.get_or_insert(address(l, loc, ctx, names)?),
            };
            self.flat.push(name);
        }
        if self.flat.len() == start {
            let name = address(l, loc, ctx, names)?;
            self.flat.push(name);
        }
        let (Ok(s), Ok(n)) = (u32::try_from(start), u32::try_from(self.flat.len() - start)) else {
            return err(l.at, "more than 4 G frames in locations".to_string());
        };
        self.location_frames[loc as usize] = (s, n);
        Ok((s, n))
    }

    /// The interned name of function `fi`, `None` when it has none (or `fi` is [`NONE`]).
    fn function_name(
        &mut self,
        fi: u32,
        ctx: &FrameContext<'_>,
        names: &mut Names,
    ) -> Pb<Option<NameId>> {
        if fi == NONE {
            return Ok(None);
        }
        let cached = self.function_name[fi as usize];
        if cached != UNRESOLVED {
            return Ok(Some(cached));
        }
        let f = &ctx.tables.functions[fi as usize];
        let mut name = ctx.strings.get(f.name, f.at, "the function's name")?;
        if name.is_empty() {
            name = ctx
                .strings
                .get(f.system_name, f.at, "the function's system name")?;
        }
        if name.is_empty() {
            return Ok(None);
        }
        let id = names.intern_bytes(name);
        self.function_name[fi as usize] = id;
        Ok(Some(id))
    }
}

/// `0x<address>`, with the mapping's file name when the location has a mapping.
fn address(l: &RawLocation, loc: u32, ctx: &FrameContext<'_>, names: &mut Names) -> Pb<NameId> {
    let mi = ctx.location_mapping[loc as usize];
    let file = if mi == NONE {
        &[][..]
    } else {
        let m = &ctx.tables.mappings[mi as usize];
        ctx.strings
            .get(m.filename, m.at, "the mapping's file name")?
    };
    let base = file.rsplit(|&c| c == b'/').next().unwrap_or(file);
    let name = if base.is_empty() {
        format!("0x{:x}", l.address)
    } else {
        format!("0x{:x} ({})", l.address, String::from_utf8_lossy(base))
    };
    Ok(names.intern(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny protobuf encoder for hand-built profiles.
    fn put_varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    fn put_int(out: &mut Vec<u8>, field: u64, v: u64) {
        put_varint(out, field << 3);
        put_varint(out, v);
    }

    fn put_bytes(out: &mut Vec<u8>, field: u64, b: &[u8]) {
        put_varint(out, (field << 3) | 2);
        put_varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }

    /// Repeated integers, packed or one field each.
    fn put_ints(out: &mut Vec<u8>, field: u64, vs: &[u64], packed: bool) {
        if packed {
            let mut p = Vec::new();
            for &v in vs {
                put_varint(&mut p, v);
            }
            put_bytes(out, field, &p);
        } else {
            for &v in vs {
                put_int(out, field, v);
            }
        }
    }

    /// Builds a `Profile` message; the string table is written last (as Go does) unless
    /// [`Self::strings_now`] wrote it first.
    #[derive(Default)]
    struct Pb {
        out: Vec<u8>,
        strings: Vec<String>,
        strings_written: bool,
    }

    impl Pb {
        fn new() -> Self {
            Pb {
                strings: vec![String::new()],
                ..Pb::default()
            }
        }

        fn s(&mut self, x: &str) -> u64 {
            match self.strings.iter().position(|y| y == x) {
                Some(i) => i as u64,
                None => {
                    assert!(!self.strings_written, "string {x:?} after the table");
                    self.strings.push(x.to_string());
                    self.strings.len() as u64 - 1
                }
            }
        }

        fn sample_type(&mut self, ty: &str, unit: &str) -> &mut Self {
            let mut m = Vec::new();
            put_int(&mut m, 1, self.s(ty));
            put_int(&mut m, 2, self.s(unit));
            put_bytes(&mut self.out, 1, &m);
            self
        }

        fn function(&mut self, id: u64, name: &str) -> &mut Self {
            let mut m = Vec::new();
            put_int(&mut m, 1, id);
            put_int(&mut m, 2, self.s(name));
            put_bytes(&mut self.out, 5, &m);
            self
        }

        fn mapping(&mut self, id: u64, file: &str) -> &mut Self {
            let mut m = Vec::new();
            put_int(&mut m, 1, id);
            put_int(&mut m, 5, self.s(file));
            put_bytes(&mut self.out, 3, &m);
            self
        }

        /// A location whose lines call `functions`, innermost first.
        fn location(
            &mut self,
            id: u64,
            mapping: u64,
            address: u64,
            functions: &[u64],
        ) -> &mut Self {
            let mut m = Vec::new();
            put_int(&mut m, 1, id);
            if mapping != 0 {
                put_int(&mut m, 2, mapping);
            }
            put_int(&mut m, 3, address);
            for &f in functions {
                let mut line = Vec::new();
                put_int(&mut line, 1, f);
                put_int(&mut line, 2, 10 + f);
                put_bytes(&mut m, 4, &line);
            }
            put_bytes(&mut self.out, 4, &m);
            self
        }

        /// A sample of `locations` (leaf first) with `values`.
        fn sample(&mut self, locations: &[u64], values: &[i64], packed: bool) -> &mut Self {
            let mut m = Vec::new();
            put_ints(&mut m, 1, locations, packed);
            let v: Vec<u64> = values.iter().map(|&v| v as u64).collect();
            put_ints(&mut m, 2, &v, packed);
            put_bytes(&mut self.out, 2, &m);
            self
        }

        fn int(&mut self, field: u64, v: u64) -> &mut Self {
            put_int(&mut self.out, field, v);
            self
        }

        fn default_type(&mut self, ty: &str) -> &mut Self {
            let i = self.s(ty);
            self.int(14, i)
        }

        fn strings_now(&mut self) -> &mut Self {
            for s in &self.strings {
                put_bytes(&mut self.out, 6, s.as_bytes());
            }
            self.strings_written = true;
            self
        }

        fn bytes(&mut self) -> Vec<u8> {
            if !self.strings_written {
                self.strings_now();
            }
            self.out.clone()
        }
    }

    /// main → work → {leaf, other}: functions 1..=4, locations 1..=4 one function each.
    fn basic(packed: bool) -> Vec<u8> {
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .sample_type("cpu", "nanoseconds")
            .sample(&[3, 2, 1], &[2, 20], packed)
            .sample(&[4, 2, 1], &[1, 10], packed)
            .sample(&[3, 2, 1], &[3, 30], packed)
            .sample(&[2, 1], &[1, 5], packed);
        for (id, name) in [(1, "main"), (2, "work"), (3, "leaf"), (4, "other")] {
            p.function(id, name).location(id, 0, 0x1000 * id, &[id]);
        }
        p.bytes()
    }

    /// Sorted `a;b;c self` lines of a profile.
    fn stacks(p: &Profile) -> Vec<String> {
        let mut v = Vec::new();
        for n in 1..p.tree.len() as NodeId {
            let s = p.tree.self_ticks(n);
            if s > 0 {
                let path: Vec<&str> = p
                    .tree
                    .path(n)
                    .iter()
                    .map(|&x| p.names.get(p.tree.name(x)))
                    .collect();
                v.push(format!("{} {s}", path.join(";")));
            }
        }
        v.sort();
        v
    }

    fn load(data: &[u8]) -> PprofImport {
        import("t.pb", data, PprofOptions::default(), None).unwrap()
    }

    fn load_err(data: &[u8]) -> String {
        match import("t.pb", data, PprofOptions::default(), None) {
            Ok(_) => panic!("loaded"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn packed_and_unpacked_repeated_fields_give_the_same_tree() {
        let packed = load(&basic(true)).profile;
        let unpacked = load(&basic(false)).profile;
        let want = ["main;work 5", "main;work;leaf 50", "main;work;other 10"];
        assert_eq!(stacks(&packed), want);
        assert_eq!(stacks(&unpacked), want);
        assert_eq!(packed.tree.grand_total(), 65);
        assert_eq!(packed.meta.format, SourceFormat::Pprof);
        assert!(
            packed.meta.warnings.is_empty(),
            "{:?}",
            packed.meta.warnings
        );
    }

    #[test]
    fn through_the_import_layer_raw_and_gzip() {
        use std::io::Write;
        let raw = basic(true);
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&raw).unwrap();
        let gz = z.finish().unwrap();
        for (bytes, gzipped) in [(raw, false), (gz, true)] {
            let p = super::super::load_bytes("t.pb.gz", &bytes, super::super::Limits::default())
                .unwrap();
            assert_eq!(p.meta.format, SourceFormat::Pprof);
            assert_eq!(p.meta.gzipped, gzipped);
            assert_eq!(p.tree.grand_total(), 65);
        }
    }

    #[test]
    fn inline_frames_run_from_the_caller_to_the_innermost() {
        // Location 2 holds `inlined` (line[0], innermost) inlined into `outer` (the
        // last line); the sample is leaf-first: location 2 called from location 1.
        let mut p = Pb::new();
        p.sample_type("cpu", "nanoseconds")
            .function(1, "main")
            .function(2, "outer")
            .function(3, "inlined")
            .function(4, "deepest")
            .location(1, 0, 0x10, &[1])
            .location(2, 0, 0x20, &[4, 3, 2])
            .sample(&[2, 1], &[7], true);
        let d = load(&p.bytes());
        assert_eq!(stacks(&d.profile), ["main;outer;inlined;deepest 7"]);
    }

    #[test]
    fn unsymbolized_addresses_are_named_by_address_and_mapping() {
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .mapping(1, "/usr/lib/x86_64-linux-gnu/libc.so.6")
            .function(1, "main")
            .location(1, 0, 0x400, &[1])
            .location(2, 1, 0x7f12_3400, &[])
            .location(3, 0, 0xdead, &[])
            // A line without a function (id 0) is unsymbolized too.
            .location(4, 1, 0xbeef, &[0])
            .sample(&[2, 1], &[1], true)
            .sample(&[3, 1], &[2], true)
            .sample(&[4, 1], &[4], true);
        let d = load(&p.bytes());
        assert_eq!(
            stacks(&d.profile),
            [
                "main;0x7f123400 (libc.so.6) 1",
                "main;0xbeef (libc.so.6) 4",
                "main;0xdead 2"
            ]
        );
    }

    #[test]
    fn a_string_index_past_the_table_is_an_error_at_the_function() {
        let mut p = Pb::new();
        p.sample_type("samples", "count");
        let at = p.out.len();
        let mut f = Vec::new();
        put_int(&mut f, 1, 1);
        put_int(&mut f, 2, 99);
        put_bytes(&mut p.out, 5, &f);
        p.location(1, 0, 0, &[1]).sample(&[1], &[1], true);
        let e = load_err(&p.bytes());
        assert!(e.starts_with(&format!("t.pb: byte {at}: ")), "{e}");
        assert!(
            e.contains("string 99, past the end of the string table (3 strings)"),
            "{e}"
        );
    }

    #[test]
    fn a_location_naming_a_missing_function_is_an_error_at_the_location() {
        let mut p = Pb::new();
        p.sample_type("samples", "count").function(1, "main");
        let at = p.out.len();
        p.location(12, 0, 0, &[99]).sample(&[12], &[1], true);
        let e = load_err(&p.bytes());
        assert_eq!(
            e,
            format!("t.pb: byte {at}: location 12 refers to function 99, which does not exist")
        );
    }

    #[test]
    fn a_huge_length_inside_a_message_is_an_error() {
        let mut p = Pb::new();
        p.sample_type("samples", "count").function(1, "main");
        // A location whose line claims 4 000 000 000 bytes.
        let mut loc = Vec::new();
        put_int(&mut loc, 1, 1);
        let len_at = loc.len() + 1;
        put_varint(&mut loc, (4 << 3) | 2);
        put_varint(&mut loc, 4_000_000_000);
        loc.extend_from_slice(&[8, 1]);
        let body_at = p.out.len() + 2;
        put_bytes(&mut p.out, 4, &loc);
        let e = load_err(&p.bytes());
        let want = format!(
            "t.pb: byte {}: length 4000000000 of field 4 of Location exceeds the remaining 2 bytes",
            body_at + len_at
        );
        assert_eq!(e, want);
    }

    #[test]
    fn truncated_varints_and_bad_wire_types_are_errors() {
        // A sample whose value varint is cut at the end of its message.
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .function(1, "main")
            .location(1, 0, 0, &[1]);
        put_bytes(&mut p.out, 2, &[8, 1, 16, 0x80]);
        let e = load_err(&p.bytes());
        assert!(e.contains("truncated varint (field 2 of Sample)"), "{e}");
        // Wire type 3 (a group) at the top level.
        let e = load_err(&[0x0b, 0x00]);
        assert!(
            e.contains("byte 0: field 1 of Profile has wire type 3"),
            "{e}"
        );
    }

    #[test]
    fn a_cut_off_file_keeps_the_samples_before_the_cut() {
        // String table first (as some writers do), then the samples.
        let mut p = Pb::new();
        p.s("samples");
        p.s("count");
        p.s("main");
        p.strings_now()
            .sample_type("samples", "count")
            .function(1, "main")
            .location(1, 0, 0, &[1])
            .sample(&[1], &[3], true)
            .sample(&[1], &[4], true);
        let whole = p.bytes();
        let cut = &whole[..whole.len() - 2];
        let d = load(cut);
        assert_eq!(d.profile.tree.grand_total(), 3);
        let notes = d.profile.meta.warnings.notes.join("; ");
        assert!(
            notes.contains("the data is cut off: at byte")
                && notes.contains("exceeds the remaining"),
            "{notes}"
        );
        assert!(
            notes.contains("loaded the 1 samples before the cut"),
            "{notes}"
        );
        // Go writes the string table last: cut anywhere, the names are gone, and the
        // error says why.
        let go = basic(true);
        let e = load_err(&go[..go.len() - 3]);
        assert!(e.contains("the data is cut off"), "{e}");
        // Cut inside a varint at the top level.
        let e = load_err(&[0x0a, 0x80]);
        assert!(e.contains("truncated varint"), "{e}");
    }

    #[test]
    fn samples_naming_missing_locations_are_skipped_and_counted() {
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .function(1, "main")
            .location(1, 0, 0, &[1])
            .sample(&[1], &[5], true);
        let first_bad = p.out.len();
        p.sample(&[7, 1], &[1], true)
            .sample(&[1, 8], &[2], true)
            .sample(&[1], &[1, 2], true)
            .sample(&[1], &[-4], true);
        let d = load(&p.bytes());
        assert_eq!(d.profile.tree.grand_total(), 5);
        assert_eq!(
            (
                d.skipped.missing_location,
                d.skipped.wrong_values,
                d.skipped.negative
            ),
            (2, 1, 1)
        );
        let notes = d.profile.meta.warnings.lines().join("\n");
        assert!(
            notes.contains(&format!(
                "skipped 2 samples that refer to a location that does not exist (first: the \
                 sample at byte {first_bad} refers to location 7)"
            )),
            "{notes}"
        );
        assert!(notes.contains("has 2 values for 1 sample types"), "{notes}");
        assert!(notes.contains("has the value -4"), "{notes}");
    }

    #[test]
    fn the_sample_type_is_the_default_else_the_last_else_the_one_asked_for() {
        let heap = |default: Option<&str>| {
            let mut p = Pb::new();
            p.sample_type("alloc_objects", "count")
                .sample_type("alloc_space", "bytes")
                .sample_type("inuse_objects", "count")
                .sample_type("inuse_space", "bytes")
                .function(1, "main")
                .location(1, 0, 0, &[1])
                .sample(&[1], &[1, 100, 2, 300], true);
            if let Some(d) = default {
                p.default_type(d);
            }
            p.bytes()
        };
        let chosen = |data: &[u8], want: Option<&str>| {
            let opts = PprofOptions { sample_type: want };
            import("h.pb", data, opts, None).map(|d| {
                let p = d.profile;
                (p.tree.grand_total(), p.meta.sample_types.unwrap().chosen)
            })
        };
        assert_eq!(chosen(&heap(None), None).unwrap(), (300, 3));
        assert_eq!(chosen(&heap(Some("alloc_space")), None).unwrap(), (100, 1));
        // A default that names no type falls back to the last.
        assert_eq!(chosen(&heap(Some("nope")), None).unwrap(), (300, 3));
        let data = heap(Some("alloc_space"));
        assert_eq!(chosen(&data, Some("inuse_objects")).unwrap(), (2, 2));
        assert_eq!(chosen(&data, Some("alloc_objects/count")).unwrap(), (1, 0));
        assert_eq!(chosen(&data, Some("2")).unwrap(), (2, 2));
        let e = chosen(&data, Some("cpu")).unwrap_err().to_string();
        assert!(
            e.contains(
                "no sample type \"cpu\"; the profile has alloc_objects/count, alloc_space/bytes, \
                 inuse_objects/count, inuse_space/bytes"
            ),
            "{e}"
        );
        let p = load(&data).profile;
        assert_eq!(
            p.meta.sample_types.unwrap().names,
            [
                "alloc_objects/count",
                "alloc_space/bytes",
                "inuse_objects/count",
                "inuse_space/bytes"
            ]
        );
    }

    #[test]
    fn a_default_type_that_is_zero_everywhere_falls_back_to_one_with_values() {
        let mut p = Pb::new();
        p.sample_type("cpu", "nanoseconds")
            .sample_type("lock-time", "nanoseconds")
            .function(1, "main")
            .location(1, 0, 0, &[1])
            .sample(&[1], &[1_000, 0], true);
        let d = load(&p.bytes());
        assert_eq!(d.profile.tree.grand_total(), 1_000);
        assert_eq!(d.profile.meta.sample_types.unwrap().chosen, 0);
        let notes = d.profile.meta.warnings.notes.join("; ");
        assert!(
            notes.contains("lock-time/nanoseconds is 0 in every sample"),
            "{notes}"
        );
        // Asked for by name, an all-zero type is an error, not a silent switch.
        let opts = PprofOptions {
            sample_type: Some("lock-time"),
        };
        let e = import("t.pb", &p.bytes(), opts, None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("no sample has a positive lock-time/nanoseconds value"),
            "{e}"
        );
    }

    #[test]
    fn units_become_scorch_units() {
        let one = |ty: &str, unit: &str, value: i64, period: Option<(&str, &str, u64)>| {
            let mut p = Pb::new();
            p.sample_type(ty, unit);
            if let Some((pt, pu, n)) = period {
                let mut m = Vec::new();
                put_int(&mut m, 1, p.s(pt));
                put_int(&mut m, 2, p.s(pu));
                put_bytes(&mut p.out, 11, &m);
                p.int(12, n);
            }
            p.function(1, "main")
                .location(1, 0, 0, &[1])
                .sample(&[1], &[value], true);
            let prof = load(&p.bytes()).profile;
            (
                prof.values.format(prof.tree.grand_total()),
                prof.values.unit,
            )
        };
        assert_eq!(
            one("cpu", "nanoseconds", 1_200_000_000, None),
            ("1.20 s".to_string(), Unit::Nanoseconds)
        );
        assert_eq!(
            one("wall", "microseconds", 1_500, None),
            ("1.50 ms".to_string(), Unit::Nanoseconds)
        );
        assert_eq!(
            one("inuse_space", "bytes", 340 << 20, None),
            ("340 MiB".to_string(), Unit::Bytes)
        );
        assert_eq!(
            one("inuse_objects", "count", 75_489, None),
            ("75.5 K objects".to_string(), Unit::Objects)
        );
        assert_eq!(
            one("delay", "nanoseconds", 850, None),
            ("850 ns".to_string(), Unit::LockNanoseconds)
        );
        assert_eq!(
            one("goroutine", "count", 12, None),
            ("12 goroutines".to_string(), Unit::Goroutines)
        );
        assert_eq!(
            one("widgets", "furlongs", 3, None),
            (
                "3 furlongs".to_string(),
                Unit::Other("furlongs".to_string())
            )
        );
        // A Go CPU profile's sample count at a 10 ms period reads as time.
        assert_eq!(
            one(
                "samples",
                "count",
                771,
                Some(("cpu", "nanoseconds", 10_000_000))
            ),
            ("7.71 s".to_string(), Unit::Samples)
        );
        assert_eq!(
            one("samples", "count", 771, None),
            ("771 samples".to_string(), Unit::Samples)
        );
    }

    #[test]
    fn invalid_utf8_names_are_replaced_not_refused() {
        let mut p = Pb::new();
        p.sample_type("samples", "count");
        p.strings.push("caf\u{e9}".to_string());
        let mut out = p.out.clone();
        let mut f = Vec::new();
        put_int(&mut f, 1, 1);
        put_int(&mut f, 2, 3);
        put_bytes(&mut out, 5, &f);
        p.out = out;
        p.location(1, 0, 0, &[1]).sample(&[1], &[1], true);
        // Rewrite string 3 as Latin-1 bytes.
        let mut data = p.out.clone();
        for (i, s) in p.strings.iter().enumerate() {
            let b: Vec<u8> = if i == 3 {
                b"caf\xe9".to_vec()
            } else {
                s.as_bytes().to_vec()
            };
            put_bytes(&mut data, 6, &b);
        }
        let d = load(&data);
        assert_eq!(stacks(&d.profile), ["caf\u{fffd} 1"]);
    }

    #[test]
    fn sparse_ids_and_broken_dotnet_function_ids() {
        // Ids far apart use the hash map.
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .function(1 << 40, "main")
            .function(7, "work")
            .location(1 << 50, 0, 0, &[1 << 40])
            .location(3, 0, 0, &[7])
            .sample(&[3, 1 << 50], &[2], true);
        assert_eq!(stacks(&load(&p.bytes()).profile), ["main;work 2"]);
        // Every function id 0, one function per location: function i is location i's.
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .function(0, "main")
            .function(0, "work")
            .location(5, 0, 0, &[5])
            .location(6, 0, 0, &[6])
            .sample(&[6, 5], &[1], true);
        let d = load(&p.bytes());
        assert_eq!(stacks(&d.profile), ["main;work 1"]);
        assert!(d.profile.meta.warnings.notes[0].contains("every function has id 0"));
        // A repeated id is an error naming both.
        let mut p = Pb::new();
        p.sample_type("samples", "count").function(1, "a");
        let second = p.out.len();
        p.function(1, "b")
            .location(1, 0, 0, &[1])
            .sample(&[1], &[1], true);
        let e = load_err(&p.bytes());
        assert!(
            e.starts_with(&format!(
                "t.pb: byte {second}: function id 1 was already used by the function at byte "
            )),
            "{e}"
        );
    }

    #[test]
    fn nothing_to_show_is_an_error() {
        let mut p = Pb::new();
        p.function(1, "main").location(1, 0, 0, &[1]);
        let e = load_err(&p.bytes());
        assert!(e.contains("declares no sample types"), "{e}");
        let mut p = Pb::new();
        p.sample_type("samples", "count");
        let e = load_err(&p.bytes());
        assert!(
            e.contains("no sample has a positive samples/count value (0 samples"),
            "{e}"
        );
    }

    #[test]
    fn an_empty_stack_counts_at_the_root() {
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .function(1, "main")
            .location(1, 0, 0, &[1])
            .sample(&[], &[2], true)
            .sample(&[1], &[3], true);
        let d = load(&p.bytes()).profile;
        assert_eq!((d.tree.grand_total(), d.tree.self_ticks(0)), (5, 2));
    }

    #[test]
    fn damaged_bytes_give_errors_or_profiles_never_panics() {
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .sample_type("cpu", "nanoseconds")
            .mapping(1, "/lib/libx.so")
            .function(1, "main")
            .function(2, "work")
            .location(1, 0, 0x10, &[1])
            .location(2, 1, 0x20, &[2, 1])
            .location(3, 1, 0x30, &[])
            .sample(&[3, 2, 1], &[1, 10], true)
            .sample(&[2, 1], &[2, 20], false)
            .default_type("cpu");
        let good = p.bytes();
        // Every truncation.
        for n in 0..good.len() {
            let _ = import("t.pb", &good[..n], PprofOptions::default(), None);
        }
        // Random byte changes (a fixed LCG, so failures reproduce).
        let mut x = 0x5eed_u64;
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        for _ in 0..5000 {
            let mut bad = good.clone();
            for _ in 0..1 + next() % 4 {
                let i = next() % bad.len();
                bad[i] = next() as u8;
            }
            let _ = import("t.pb", &bad, PprofOptions::default(), None);
        }
    }

    #[test]
    fn a_frame_bomb_is_refused() {
        // One location of 20 000 inline lines, 300 times along one stack: 6 M nodes from
        // a 100 KB file.
        let mut p = Pb::new();
        p.sample_type("samples", "count").function(1, "f");
        let lines = vec![1u64; 20_000];
        p.location(1, 0, 0, &lines).sample(&[1; 300], &[1], true);
        let e = load_err(&p.bytes());
        assert!(e.contains("call-tree nodes (4 per input byte)"), "{e}");
    }
}
