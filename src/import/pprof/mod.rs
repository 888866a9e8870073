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

mod samples;
mod tables;
mod wire;

use super::{ImportError, Progress};
use crate::model::{Profile, ProfileMeta, SampleTypes, SourceFormat, ValueFormat, Warnings};
use samples::{FrameContext, Parallel, SamplePass, samples_pass};
use tables::{IdMap, NONE, RawLocation, Strings, Tables, choose_type, read_tables, value_format};
use wire::PbError;

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

/// A quick profile of a big plain pprof input for the window to show while the whole loads:
/// the tables read whole, then `slices` runs of 64 KiB of samples from across the input
/// (the samples' proportions, not their totals). `None` where the profile cannot be read
/// or has fewer runs of samples (the full load reports why).
pub fn preview(file: &str, data: &[u8], slices: usize) -> Option<(Profile, u64)> {
    let par = Parallel {
        slices: Some(slices),
        ..Parallel::cores()
    };
    let p = import_in(file, data, PprofOptions::default(), None, par).ok()?;
    let read = p.sampled_bytes;
    Some((p.profile, read))
}

/// A profile and the samples left out of it.
#[derive(Debug)]
pub struct PprofImport {
    /// The profile (its warnings describe the skipped samples too).
    pub profile: Profile,
    /// Samples left out of the tree, counted by reason.
    pub skipped: SkippedSamples,
    /// Bytes of the input's top-level fields the samples were read from (all of them but
    /// for a [`preview`]).
    pub sampled_bytes: u64,
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
    pub(super) fn note(&mut self, kind: usize, why: impl FnOnce() -> String) {
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

    /// Adds the skips of a later part of the samples: counts add, and a kind's first
    /// skip stays the earlier part's when it has one.
    pub(super) fn absorb(&mut self, later: SkippedSamples) {
        self.missing_location += later.missing_location;
        self.wrong_values += later.wrong_values;
        self.negative += later.negative;
        for (mine, theirs) in self.first.iter_mut().zip(later.first) {
            if mine.is_none() {
                *mine = theirs;
            }
        }
    }

    pub(super) fn notes(&self, warnings: &mut Warnings) {
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

/// Reads a profile: the tables (pass 1), then the samples (pass 2).
fn import(
    file: &str,
    data: &[u8],
    options: PprofOptions<'_>,
    progress: Option<&Progress>,
) -> Result<PprofImport, ImportError> {
    import_in(file, data, options, progress, Parallel::cores())
}

/// [`import`], its samples read in parts as `par` allows.
fn import_in(
    file: &str,
    data: &[u8],
    options: PprofOptions<'_>,
    progress: Option<&Progress>,
    par: Parallel,
) -> Result<PprofImport, ImportError> {
    let t = read_tables(data).map_err(|e| plain_error(file, e))?;
    let im = Importer::new(file, data, &t);
    let types = im.sample_types(options.sample_type)?;
    let refs = im.references()?;
    let ctx = FrameContext {
        tables: &t,
        strings: &im.strings,
        line_function: &refs.line_function,
        location_mapping: &refs.location_mapping,
        locations: &refs.locations,
        data,
        n_types: types.names.len() as u64,
    };
    let (mut chosen, mut values) = (types.chosen, types.values.clone());
    let mut pass =
        samples_pass(&ctx, chosen, types.scale, progress, par).map_err(|e| im.invalid(e))?;
    let mut fallback_note = None;
    // A default type that is 0 everywhere (the lock time of a profile without contention)
    // would show nothing: show the first type that has values instead, and say so.
    if pass.tree.grand_total() == 0
        && options.sample_type.is_none()
        && let Some(other) = pass.positive.iter().position(|&v| v > 0)
    {
        let (ty, unit) = &types.names[chosen];
        let (oty, ounit) = &types.names[other];
        fallback_note = Some(format!(
            "the default sample type {ty}/{unit} is 0 in every sample; showing {oty}/{ounit}"
        ));
        let (v, scale) = value_format(oty, ounit, types.period());
        // The samples are read again: their progress too.
        Progress::set_done_opt(progress, 0);
        pass = samples_pass(&ctx, other, scale, progress, par).map_err(|e| im.invalid(e))?;
        (chosen, values) = (other, v);
    }
    let mut warnings = Warnings::default();
    if refs.dotnet_fix {
        warnings.notes.push(
            "every function has id 0 (a bug of an old .NET profiler): function i was given \
             location i's id, as Pyroscope does"
                .to_string(),
        );
    }
    warnings.notes.extend(fallback_note);
    if let Some(note) = &im.cut_note {
        warnings.notes.push(format!(
            "{note}: loaded the {} samples before the cut",
            t.samples
        ));
    }
    pass.skipped.notes(&mut warnings);
    im.finish(pass, &types, chosen, values, warnings)
}

/// An error at a byte offset, as the import reports it.
fn plain_error(file: &str, e: PbError) -> ImportError {
    ImportError::Invalid {
        file: file.to_string(),
        location: format!("byte {}", e.at),
        message: e.message,
    }
}

/// The sample types, by name and unit, and the one shown.
struct Types {
    names: Vec<(String, String)>,
    chosen: usize,
    /// The period type's name and unit, and the period.
    period: Option<(String, String, u64)>,
    values: ValueFormat,
    /// Ticks per unit of the chosen value.
    scale: u64,
}

impl Types {
    fn period(&self) -> Option<(&str, &str, u64)> {
        self.period
            .as_ref()
            .map(|(a, b, p)| (a.as_str(), b.as_str(), *p))
    }

    /// `type/unit, …` of every sample type.
    fn listed(&self) -> String {
        self.names
            .iter()
            .map(|(t, u)| format!("{t}/{u}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The tables' references turned into indices.
struct References {
    /// Per line: its function's index, or `NONE`.
    line_function: Vec<u32>,
    /// Per location: its mapping's index, or `NONE`.
    location_mapping: Vec<u32>,
    /// Location ids to indices.
    locations: IdMap,
    /// The function ids were repaired (an old .NET profiler's bug).
    dotnet_fix: bool,
}

/// One import after pass 1: the tables, their strings, and how errors are worded.
struct Importer<'a> {
    file: &'a str,
    t: &'a Tables,
    strings: Strings<'a>,
    /// In a cut-off file, said in every error: it is the likely cause.
    cut_note: Option<String>,
}

impl<'a> Importer<'a> {
    fn new(file: &'a str, data: &'a [u8], t: &'a Tables) -> Importer<'a> {
        let cut_note = t.cut.as_ref().map(|c| {
            format!(
                "the data is cut off: at byte {}, {}; only the {} bytes before it were read",
                c.at, c.message, t.end
            )
        });
        Importer {
            file,
            t,
            strings: Strings {
                data,
                ranges: &t.strings,
            },
            cut_note,
        }
    }

    /// `e` as an import error, with the cut note.
    fn invalid(&self, e: PbError) -> ImportError {
        let mut e = plain_error(self.file, e);
        if let (ImportError::Invalid { message, .. }, Some(note)) = (&mut e, &self.cut_note) {
            message.push_str(" (");
            message.push_str(note);
            message.push(')');
        }
        e
    }

    /// The sample types and units, the one to show (`wanted`, else the default, else the
    /// last), and its value format.
    fn sample_types(&self, wanted: Option<&str>) -> Result<Types, ImportError> {
        let (t, strings) = (self.t, &self.strings);
        let text = |idx, at, what| strings.text(idx, at, what).map_err(|e| self.invalid(e));
        let mut names = Vec::with_capacity(t.sample_types.len().min(64));
        for v in &t.sample_types {
            let ty = text(v.type_, v.at, "the sample type's name")?;
            let unit = text(v.unit, v.at, "the sample type's unit")?;
            names.push((ty, unit));
        }
        if names.is_empty() {
            let mut detail = "the pprof profile declares no sample types".to_string();
            if let Some(note) = &self.cut_note {
                detail = format!("{detail} ({note})");
            }
            return Err(ImportError::NoSamples {
                file: self.file.to_string(),
                detail,
            });
        }
        let default = text(
            t.default_sample_type,
            0,
            "default_sample_type (of the Profile)",
        )?;
        let period = match t.period_type {
            Some(p) => Some((
                text(p.type_, p.at, "the period type's name")?,
                text(p.unit, p.at, "the period type's unit")?,
                t.period,
            )),
            None => None,
        };
        let mut types = Types {
            names,
            chosen: 0,
            period,
            values: ValueFormat::default(),
            scale: 1,
        };
        let Some(chosen) = choose_type(&types.names, &default, wanted) else {
            return Err(ImportError::Invalid {
                file: self.file.to_string(),
                location: "sample types".to_string(),
                message: format!(
                    "no sample type {:?}; the profile has {} (give a name, type/unit or index)",
                    wanted.unwrap_or(""),
                    types.listed()
                ),
            });
        };
        let (ty, unit) = &types.names[chosen];
        (types.values, types.scale) = value_format(ty, unit, types.period());
        types.chosen = chosen;
        Ok(types)
    }

    /// Checks the references: every location's mapping and functions must exist, and
    /// every name is a string. Pyroscope's .NET profiler once wrote every function with
    /// id 0, one function per location, in the same order; Pyroscope repairs such files
    /// by giving function i location i's id (`FixFunctionIDForBrokenDotnet`), and so does
    /// scorch.
    fn references(&self) -> Result<References, ImportError> {
        let (t, strings) = (self.t, &self.strings);
        let invalid = |e| self.invalid(e);
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
            let what = format!("the name of function {}", f.id);
            strings.get(f.name, f.at, &what).map_err(invalid)?;
            let what = format!("the system name of function {}", f.id);
            strings.get(f.system_name, f.at, &what).map_err(invalid)?;
        }
        for m in &t.mappings {
            let what = format!("the file name of mapping {}", m.id);
            strings.get(m.filename, m.at, &what).map_err(invalid)?;
        }
        let missing = |l: &RawLocation, what: String| {
            invalid(PbError {
                at: l.at,
                message: format!("location {} refers to {what}, which does not exist", l.id),
                cut: false,
            })
        };
        // Line function ids become function indices (NONE for "no function").
        let mut line_function = Vec::with_capacity(t.line_functions.len());
        let mut location_mapping = Vec::with_capacity(t.locations.len());
        for l in &t.locations {
            for &fid in &t.line_functions[l.lines.start as usize..l.lines.end as usize] {
                line_function.push(match fid {
                    0 => NONE,
                    _ => functions
                        .get(fid)
                        .ok_or_else(|| missing(l, format!("function {fid}")))?,
                });
            }
            location_mapping.push(match l.mapping_id {
                0 => NONE,
                id => mappings
                    .get(id)
                    .ok_or_else(|| missing(l, format!("mapping {id}")))?,
            });
        }
        Ok(References {
            line_function,
            location_mapping,
            locations,
            dotnet_fix,
        })
    }

    /// The profile from the sample pass, or why there is none to show.
    fn finish(
        &self,
        pass: SamplePass,
        types: &Types,
        chosen: usize,
        values: ValueFormat,
        warnings: Warnings,
    ) -> Result<PprofImport, ImportError> {
        let SamplePass {
            names,
            tree,
            skipped,
            read,
            ..
        } = pass;
        if tree.grand_total() == 0 {
            let (ty, unit) = &types.names[chosen];
            let mut detail = format!(
                "no sample has a positive {ty}/{unit} value ({} samples; sample types: {})",
                self.t.samples,
                types.listed()
            );
            for n in &warnings.notes {
                detail.push_str("; ");
                detail.push_str(n);
            }
            return Err(ImportError::NoSamples {
                file: self.file.to_string(),
                detail,
            });
        }
        Ok(PprofImport {
            profile: Profile {
                names,
                tree,
                values,
                meta: ProfileMeta {
                    sample_types: Some(SampleTypes {
                        names: types
                            .names
                            .iter()
                            .map(|(t, u)| format!("{t}/{u}"))
                            .collect(),
                        chosen,
                    }),
                    ..ProfileMeta::new(self.file, SourceFormat::Pprof, warnings)
                },
            },
            skipped,
            sampled_bytes: read,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Unit;

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

    fn load(data: &[u8]) -> PprofImport {
        import("t.pb", data, PprofOptions::default(), None).unwrap()
    }

    fn load_result(data: &[u8]) -> Result<PprofImport, ImportError> {
        let par = Parallel {
            threads: 1,
            min_bytes: usize::MAX,
            slices: None,
        };
        import_in("t.pb", data, PprofOptions::default(), None, par)
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
        assert_eq!(packed.folded_lines(), want);
        assert_eq!(unpacked.folded_lines(), want);
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
        assert_eq!(d.profile.folded_lines(), ["main;outer;inlined;deepest 7"]);
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
            d.profile.folded_lines(),
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
            "t.pb: byte {}: length 4000000000 of field 4 of Location exceeds the remaining 2 bytes \
             and the 2 GiB a protobuf message can hold: the data is damaged",
            body_at + len_at
        );
        assert_eq!(e, want);
    }

    /// Issue 14, failure 10: a field length of 2^62 at the top level made the file
    /// "unrecognised format: binary data"; it is a pprof file with damage at a byte.
    #[test]
    fn a_pprof_with_a_field_length_of_2_62_is_unrecognised_binary_data() {
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .function(1, "main")
            .location(1, 0, 0, &[1])
            .sample(&[1], &[3], true);
        let good = p.bytes();
        // The first field's length, then a later one's, claims 2^62 bytes.
        let mut first = vec![0x0a];
        put_varint(&mut first, 1 << 62);
        first.extend_from_slice(&good[2..]);
        let mut later = good.clone();
        let at = later.len();
        later.push(0x12);
        put_varint(&mut later, 1 << 62);
        later.extend_from_slice(&[8, 1, 16, 1]);
        for (bytes, at) in [(first, 1), (later, at + 1)] {
            assert_eq!(
                crate::import::detect::detect(&bytes, Some("x.pb")),
                Ok(crate::model::SourceFormat::Pprof)
            );
            let e = crate::import::load_any_bytes("x.pb", &bytes, Default::default())
                .unwrap_err()
                .to_string();
            let want = format!(
                "x.pb: byte {at}: length 4611686018427387904 of field {} of Profile exceeds",
                if at == 1 { 1 } else { 2 }
            );
            assert!(e.starts_with(&want), "{e}");
            assert!(e.ends_with("the data is damaged"), "{e}");
        }
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
        // A W1-like profile cut or damaged anywhere reads in parts as in one pass: the
        // same profile or the same error with its byte, never a panic.
        let mut rng = crate::testing::Lcg::new(8);
        let mut q = Pb::new();
        q.sample_type("samples", "count")
            .function(1, "a")
            .function(2, "b");
        q.location(1, 0, 0, &[1]).location(2, 0, 0, &[1, 2]);
        for i in 0..20_000u64 {
            q.sample(&[1 + i % 2, 1, 2 - i % 2], &[1 + (i % 3) as i64], true);
        }
        let data = q.bytes();
        let parts = |d: &[u8]| {
            let par = Parallel {
                threads: 3,
                min_bytes: 0,
                slices: None,
            };
            import_in("t.pb", d, PprofOptions::default(), None, par).map(|x| dump(&x))
        };
        let one = |d: &[u8]| load_result(d).map(|x| dump(&x));
        for _ in 0..60 {
            let mut d = data.clone();
            let cut = (rng.next_u64() as usize) % d.len();
            if rng.next_u64().is_multiple_of(2) {
                d.truncate(cut);
            } else {
                d[cut] = rng.next_u64() as u8;
            }
            match (one(&d), parts(&d)) {
                (Ok(a), Ok(b)) => assert_eq!(a, b),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{a:?} against {b:?}"),
            }
        }
        // Go writes the string table last: cut anywhere, the names are gone, and the
        // error says why.
        let go = basic(true);
        let e = load_err(&go[..go.len() - 3]);
        assert!(e.contains("the data is cut off"), "{e}");
        // Cut inside a varint at the top level.
        let e = load_err(&[0x0a, 0x80]);
        assert!(e.contains("truncated varint"), "{e}");
    }

    /// A profile's tree as paths with their self values, and its notes.
    fn dump(d: &PprofImport) -> (Vec<(String, u64)>, u64, Vec<String>, SkippedSamples) {
        let p = &d.profile;
        let mut v: Vec<(String, u64)> = (1..p.tree.len() as crate::model::NodeId)
            .filter(|&n| p.tree.self_ticks(n) > 0)
            .map(|n| (p.tree.path_text(&p.names, n), p.tree.self_ticks(n)))
            .collect();
        v.sort();
        let notes = p.meta.warnings.lines();
        (v, p.tree.grand_total(), notes, d.skipped.clone())
    }

    fn in_parts(data: &[u8], threads: usize) -> PprofImport {
        let par = Parallel {
            threads,
            min_bytes: 0,
            slices: None,
        };
        import_in("t.pb", data, PprofOptions::default(), None, par).unwrap()
    }

    #[test]
    fn samples_read_in_parts_make_the_profile_one_pass_makes() {
        // Random stacks over 300 functions, one location each (some with two inline
        // lines): 400 KB, so the samples are cut at their 64 KiB marks.
        let mut rng = crate::testing::Lcg::new(5);
        let mut p = Pb::new();
        p.sample_type("cpu", "nanoseconds");
        for f in 1..=300u64 {
            p.function(f, &format!("f{f}"));
        }
        for l in 1..=300u64 {
            match l % 7 {
                0 => p.location(l, 0, 0, &[l, 1 + l % 300]),
                _ => p.location(l, 0, 0, &[l]),
            };
        }
        for _ in 0..40_000 {
            let depth = 1 + rng.next_u64() % 12;
            let stack: Vec<u64> = (0..depth).map(|_| 1 + rng.next_u64() % 300).collect();
            p.sample(&stack, &[1 + (rng.next_u64() % 1000) as i64], true);
        }
        let data = p.bytes();
        let one = in_parts(&data, 1);
        assert!(one.profile.tree.len() > 100_000);
        for threads in [2, 3, 8] {
            assert_eq!(
                dump(&in_parts(&data, threads)),
                dump(&one),
                "{threads} parts"
            );
        }

        // Skipped samples in every part: counted over all, the first of each kind named.
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .function(1, "main")
            .function(2, "work")
            .location(1, 0, 0, &[1])
            .location(2, 0, 0, &[2]);
        let mut firsts = Vec::new();
        for i in 0..30_000u64 {
            let at = p.out.len();
            match i % 1000 {
                7 => {
                    firsts.push(at);
                    p.sample(&[9, 1], &[1], true)
                }
                8 => p.sample(&[1], &[1, 2], true),
                _ => p.sample(&[2 - i % 2, 1], &[(i % 5) as i64 + 1], true),
            };
        }
        let data = p.bytes();
        let one = in_parts(&data, 1);
        assert_eq!(one.skipped.missing_location, 30);
        assert_eq!(one.skipped.wrong_values, 30);
        let notes = one.profile.meta.warnings.lines().join("\n");
        assert!(
            notes.contains(&format!("(first: the sample at byte {} refers", firsts[0])),
            "{notes}"
        );
        for threads in [2, 5] {
            assert_eq!(
                dump(&in_parts(&data, threads)),
                dump(&one),
                "{threads} parts"
            );
        }
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

    /// Issue 14, failure 9: two `i64::MAX` samples total 2^64 - 2 exactly, and print so.
    #[test]
    fn a_total_of_two_i64_max_samples_printed_through_floating_point() {
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .function(1, "main")
            .location(1, 0, 0, &[1])
            .sample(&[1], &[i64::MAX], true)
            .sample(&[1], &[i64::MAX], true);
        let prof = load(&p.bytes()).profile;
        let total = prof.tree.grand_total();
        assert_eq!(total, 2 * i64::MAX as u64);
        assert_eq!(
            prof.values.format_long(total),
            "18,446,744,073,709,551,614 samples"
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
        assert_eq!(d.profile.folded_lines(), ["caf\u{fffd} 1"]);
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
        assert_eq!(load(&p.bytes()).profile.folded_lines(), ["main;work 2"]);
        // Every function id 0, one function per location: function i is location i's.
        let mut p = Pb::new();
        p.sample_type("samples", "count")
            .function(0, "main")
            .function(0, "work")
            .location(5, 0, 0, &[5])
            .location(6, 0, 0, &[6])
            .sample(&[6, 5], &[1], true);
        let d = load(&p.bytes());
        assert_eq!(d.profile.folded_lines(), ["main;work 1"]);
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
        let mut rng = crate::testing::Lcg::new(0x5eed_u64);
        let mut next = move || rng.next_usize();
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
