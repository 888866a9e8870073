//! speedscope's own JSON format (`https://www.speedscope.app/file-format-schema.json`), as
//! time-ordered samples.
//!
//! A file has `shared.frames` (`{name, file?, line?, col?}`) and `profiles`, each of which
//! becomes a thread named after the profile. `activeProfileIndex` is a hint: that profile
//! is read first, so it is the first thread and its unit the event shown by default.
//!
//! - **sampled** profiles list `samples` (frame indices, root first) and `weights` in
//!   `unit`. They have no timestamps: each sample is placed at `startValue` plus the sum of
//!   the weights before it, as speedscope's Time Order lays them out, and
//!   [`Samples::timed`] is false. Weights of time units become nanoseconds, `bytes`
//!   bytes, `none` plain counts; fractions are rounded (reported once). A weight of 0 is
//!   skipped (speedscope ignores those samples too); a negative, non-numeric or huge
//!   weight, or a frame index that is not in `shared.frames`, makes the sample invalid:
//!   it is skipped and counted.
//! - **evented** profiles list `O`/`C` events (`frame`, `at`). They are turned into
//!   samples whose replay gives exactly their spans: at each distinct time, one sample
//!   with the frames open after that time's events, weighing the time until the next
//!   event ([`Samples::exact`]). A frame closed and opened again at the same instant gets
//!   a zero-weight sample of the frames below it in between, so it stays two spans.
//!   speedscope refuses an evented profile whose events go back in time, close a frame
//!   that is not the innermost open one (or none), or leave frames open at the end;
//!   those are errors here too, naming the event. Events of another `type` are skipped
//!   and counted, as speedscope ignores them.
//!
//! A frame without a name is `(anonymous file:line)` (the file's last path segment) or
//! `(anonymous)`, as speedscope's importers name anonymous functions. Two frames of the
//! same name are one function.
//!
//! Numbers are read leniently (anything that is not a number is kept as "not a number")
//! so that one bad value is reported with its JSON path rather than failing the whole
//! parse; stacks are stored flat (one `u32` per frame reference) and never walked
//! recursively, and nothing in the file sizes an allocation.

mod events;
pub mod head;
mod lift;

use super::ImportError;
use crate::model::samples::{EMPTY_STACK, Samples, StackId, ThreadInfo};
use crate::model::units::{Unit, ValueFormat};
use crate::model::{NameId, SourceFormat};
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::collections::HashSet;
use std::fmt;
use std::hash::BuildHasher;

/// The largest time or weight accepted, in nanoseconds (or bytes, or counts): 2^62,
/// about 146 years of nanoseconds, so sums of a few of them cannot overflow.
const MAX_VALUE: f64 = (1u64 << 62) as f64;

/// A frame index that is not a valid index (not a number, negative, fractional, huge).
const BAD_INDEX: u32 = u32::MAX;

/// Visitor methods for the JSON values a lenient visitor has no use for: each reads as
/// `$other` (arrays and objects are read through and dropped).
macro_rules! others_as {
    ($de:lifetime, $t:ty, $other:expr; $($kind:ident)*) => {
        $(others_as!(@$kind $de, $t, $other);)*
    };
    (@num $de:lifetime, $t:ty, $other:expr) => {
        fn visit_u64<E>(self, _: u64) -> Result<$t, E> {
            Ok($other)
        }
        fn visit_i64<E>(self, _: i64) -> Result<$t, E> {
            Ok($other)
        }
        fn visit_f64<E>(self, _: f64) -> Result<$t, E> {
            Ok($other)
        }
    };
    (@str $de:lifetime, $t:ty, $other:expr) => {
        fn visit_str<E>(self, _: &str) -> Result<$t, E> {
            Ok($other)
        }
    };
    (@scalar $de:lifetime, $t:ty, $other:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<$t, E> {
            Ok($other)
        }
        fn visit_unit<E>(self) -> Result<$t, E> {
            Ok($other)
        }
    };
    (@seq $de:lifetime, $t:ty, $other:expr) => {
        fn visit_seq<A: SeqAccess<$de>>(self, mut seq: A) -> Result<$t, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok($other)
        }
    };
    (@map $de:lifetime, $t:ty, $other:expr) => {
        fn visit_map<A: MapAccess<$de>>(self, mut map: A) -> Result<$t, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok($other)
        }
    };
}

/// A JSON number; anything else reads as NaN (reported later with its path).
#[derive(Clone, Copy, Debug)]
struct Num(f64);

impl Default for Num {
    fn default() -> Self {
        Num(f64::NAN)
    }
}

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Num;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Num, E> {
                Ok(Num(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Num, E> {
                Ok(Num(v))
            }
            others_as!('de, Num, Num::default(); str scalar seq map);
        }
        d.deserialize_any(V)
    }
}

/// A JSON value read loosely: a string, a number, or something else.
#[derive(Clone, Debug, Default)]
enum Loose {
    /// The key was absent.
    #[default]
    Missing,
    Str(String),
    Num(f64),
    /// `null` (py-spy writes `"activeProfileIndex": null`: read as missing there).
    Null,
    /// A boolean, an array or an object.
    Other,
}

impl Loose {
    fn as_str(&self) -> Option<&str> {
        match self {
            Loose::Str(s) => Some(s),
            _ => None,
        }
    }

    /// What it is, for messages.
    fn describe(&self) -> String {
        match self {
            Loose::Missing => "missing".to_string(),
            Loose::Str(s) => format!("{s:?}"),
            Loose::Num(n) => num(*n),
            Loose::Null => "null".to_string(),
            Loose::Other => "a value of another type".to_string(),
        }
    }
}

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Loose;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a number")
            }
            fn visit_u64<E>(self, v: u64) -> Result<Loose, E> {
                Ok(Loose::Num(v as f64))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Loose, E> {
                Ok(Loose::Num(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Loose, E> {
                Ok(Loose::Num(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Loose, E> {
                Ok(Loose::Str(v.to_string()))
            }
            fn visit_string<E>(self, v: String) -> Result<Loose, E> {
                Ok(Loose::Str(v))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Loose, E> {
                Ok(Loose::Other)
            }
            fn visit_unit<E>(self) -> Result<Loose, E> {
                Ok(Loose::Null)
            }
            others_as!('de, Loose, Loose::Other; seq map);
        }
        d.deserialize_any(V)
    }
}

/// The top-level object; `S` is what a profile's `samples` are read as ([`FlatStacks`],
/// or their raw text where a big file's stacks are read by hand: [`lift`]).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[serde(bound(deserialize = "S: Deserialize<'de>, E: Deserialize<'de>"))]
struct FileJson<S, E = Vec<Ev>> {
    #[serde(default)]
    shared: Option<Shared>,
    #[serde(default = "Option::default")]
    profiles: Option<Vec<ProfileJson<S, E>>>,
    #[serde(default)]
    name: Loose,
    #[serde(default)]
    active_profile_index: Loose,
}

#[derive(Deserialize, Default)]
struct Shared {
    #[serde(default)]
    frames: Vec<FrameJson>,
}

#[derive(Deserialize)]
struct FrameJson {
    #[serde(default)]
    name: Loose,
    #[serde(default)]
    file: Loose,
    #[serde(default)]
    line: Num,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[serde(bound(deserialize = "S: Deserialize<'de>, E: Deserialize<'de>"))]
struct ProfileJson<S, E = Vec<Ev>> {
    #[serde(default, rename = "type")]
    kind: Loose,
    #[serde(default)]
    name: Loose,
    #[serde(default)]
    unit: Loose,
    #[serde(default)]
    start_value: Num,
    #[serde(default = "Option::default")]
    samples: Option<S>,
    #[serde(default)]
    weights: Option<Vec<Num>>,
    #[serde(default = "Option::default")]
    events: Option<E>,
}

impl<S, E> ProfileJson<S, E> {
    /// The same profile with its samples and events read as `samples` and `events`.
    fn with_read<T, F>(self, samples: Option<T>, events: Option<F>) -> ProfileJson<T, F> {
        ProfileJson {
            kind: self.kind,
            name: self.name,
            unit: self.unit,
            start_value: self.start_value,
            samples,
            weights: self.weights,
            events,
        }
    }
}

/// A sampled profile's stacks: each distinct list of frame indices once, flat (every
/// index in one vector, and where each list ends), and each sample's list. A sample that
/// is not an array holds the list of one [`BAD_INDEX`]. Lists are told apart as they are
/// read (one hash and one comparison a sample, in parallel parts for a big file), so the
/// samples are placed by list, each list's frames walked once.
#[derive(Default)]
struct FlatStacks {
    frames: Vec<u32>,
    ends: Vec<usize>,
    /// Per sample, its list.
    lists: Vec<u32>,
    /// The lists by their frames: (hash, list).
    table: hashbrown::HashTable<(u64, u32)>,
    hasher: foldhash::fast::FixedState,
    /// More distinct lists than list numbers: the samples past them are not kept.
    overflow: bool,
}

impl FlatStacks {
    /// Samples.
    fn len(&self) -> usize {
        self.lists.len()
    }

    /// Distinct lists.
    fn distinct(&self) -> usize {
        self.ends.len()
    }

    fn list(&self, l: u32) -> &[u32] {
        list_of(&self.frames, &self.ends, l)
    }

    /// The frames of sample `i`.
    #[cfg(test)]
    fn get(&self, i: usize) -> &[u32] {
        self.list(self.lists[i])
    }

    /// The list of the frames pushed since `mark` (the end of the last list): a new one,
    /// or the same frames seen before (and the pushed copy dropped).
    fn intern(&mut self, mark: usize) -> Option<u32> {
        let h = self.hasher.hash_one(&self.frames[mark..]);
        let (frames, ends) = (&self.frames, &self.ends);
        let new = &frames[mark..];
        if let Some(&(_, l)) = self
            .table
            .find(h, |&(eh, l)| eh == h && list_of(frames, ends, l) == new)
        {
            self.frames.truncate(mark);
            return Some(l);
        }
        let Ok(l) = u32::try_from(self.ends.len()) else {
            self.overflow = true;
            self.frames.truncate(mark);
            return None;
        };
        self.ends.push(self.frames.len());
        self.table.insert_unique(h, (h, l), |e| e.0);
        Some(l)
    }

    /// Ends the sample whose frames were pushed since `mark`.
    fn end_sample(&mut self, mark: usize) {
        if let Some(l) = self.intern(mark) {
            self.lists.push(l);
        }
    }

    /// Appends `other`'s samples, its lists found among these or added.
    fn append(&mut self, other: &FlatStacks) {
        self.overflow |= other.overflow;
        let map: Vec<Option<u32>> = (0..other.distinct() as u32)
            .map(|l| {
                let mark = self.frames.len();
                self.frames.extend_from_slice(other.list(l));
                self.intern(mark)
            })
            .collect();
        self.lists
            .extend(other.lists.iter().filter_map(|&l| map[l as usize]));
    }
}

/// List `l` of `frames` cut at `ends`.
fn list_of<'f>(frames: &'f [u32], ends: &[usize], l: u32) -> &'f [u32] {
    let l = l as usize;
    let start = if l == 0 { 0 } else { ends[l - 1] };
    &frames[start..ends[l]]
}

impl<'de> Deserialize<'de> for FlatStacks {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = FlatStacks;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of stacks (arrays of frame indices)")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FlatStacks, A::Error> {
                let mut out = FlatStacks::default();
                loop {
                    let mark = out.frames.len();
                    let Some(is_array) = seq.next_element_seed(StackSeed(&mut out.frames))? else {
                        break;
                    };
                    if !is_array {
                        out.frames.push(BAD_INDEX);
                    }
                    out.end_sample(mark);
                }
                Ok(out)
            }
        }
        d.deserialize_seq(V)
    }
}

/// Appends one sample's frame indices; gives false when the sample is not an array.
struct StackSeed<'a>(&'a mut Vec<u32>);

impl<'de> DeserializeSeed<'de> for StackSeed<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StackSeed<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of frame indices")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while let Some(Num(x)) = seq.next_element::<Num>()? {
            self.0.push(index_of(x));
        }
        Ok(true)
    }
    others_as!('de, bool, false; num str scalar map);
}

/// A frame index from a JSON number, or [`BAD_INDEX`].
fn index_of(x: f64) -> u32 {
    if x >= 0.0 && x < f64::from(BAD_INDEX) && x.fract() == 0.0 {
        x as u32
    } else {
        BAD_INDEX
    }
}

/// An evented profile's event type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EvKind {
    Open,
    Close,
    /// Another string, or no `type`.
    Other,
    /// The event is not an object.
    NotObject,
}

impl<'de> Deserialize<'de> for EvKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = EvKind;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"O\" or \"C\"")
            }
            fn visit_str<E>(self, v: &str) -> Result<EvKind, E> {
                Ok(match v {
                    "O" => EvKind::Open,
                    "C" => EvKind::Close,
                    _ => EvKind::Other,
                })
            }
            others_as!('de, EvKind, EvKind::Other; num scalar seq map);
        }
        d.deserialize_any(V)
    }
}

/// One event, read loosely.
#[derive(Clone, Copy, Debug)]
struct Ev {
    kind: EvKind,
    frame: f64,
    at: f64,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum EvField {
    Type,
    Frame,
    At,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Ev {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const NOT_OBJECT: Ev = Ev {
            kind: EvKind::NotObject,
            frame: f64::NAN,
            at: f64::NAN,
        };
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ev;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an event {type, frame, at}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ev, A::Error> {
                let mut ev = Ev {
                    kind: EvKind::Other,
                    frame: f64::NAN,
                    at: f64::NAN,
                };
                while let Some(k) = map.next_key::<EvField>()? {
                    match k {
                        EvField::Type => ev.kind = map.next_value()?,
                        EvField::Frame => ev.frame = map.next_value::<Num>()?.0,
                        EvField::At => ev.at = map.next_value::<Num>()?.0,
                        EvField::Other => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(ev)
            }
            others_as!('de, Ev, NOT_OBJECT; num str scalar seq);
        }
        d.deserialize_any(V)
    }
}

/// A profile's unit: the event it feeds, what a weight is, nanoseconds (or bytes, or
/// counts) per unit.
struct UnitInfo {
    event: &'static str,
    unit: Unit,
    factor: f64,
    /// What a rounded weight is, for the note.
    what: &'static str,
}

fn unit_info(name: &str) -> Option<UnitInfo> {
    let time = |factor| UnitInfo {
        event: "time",
        unit: Unit::Nanoseconds,
        factor,
        what: "nanoseconds",
    };
    Some(match name {
        "nanoseconds" => time(1.0),
        "microseconds" => time(1e3),
        "milliseconds" => time(1e6),
        "seconds" => time(1e9),
        "bytes" => UnitInfo {
            event: "bytes",
            unit: Unit::Bytes,
            factor: 1.0,
            what: "bytes",
        },
        "none" => UnitInfo {
            event: "samples",
            unit: Unit::Samples,
            factor: 1.0,
            what: "counts",
        },
        _ => return None,
    })
}

/// Why an import failed, at a JSON path.
fn invalid(file: &str, location: String, message: impl fmt::Display) -> ImportError {
    ImportError::Invalid {
        file: file.to_string(),
        location,
        message: message.to_string(),
    }
}

/// Damage counted while reading (reported as notes at the end).
#[derive(Default)]
struct Tally {
    bad_samples: u64,
    first_bad: Option<String>,
    zero_weights: u64,
    rounded: u64,
    worst_rounding: f64,
    rounded_what: &'static str,
    other_events: u64,
    first_other_event: Option<String>,
}

impl Tally {
    fn bad(&mut self, why: impl FnOnce() -> String) {
        self.bad_samples += 1;
        if self.first_bad.is_none() {
            self.first_bad = Some(why());
        }
    }

    /// `x` (a value in nanoseconds, bytes or counts) rounded to an integer; a rounding
    /// that changes more than float noise is counted.
    fn round(&mut self, x: f64, what: &'static str) -> u64 {
        let r = x.round();
        let lost = (x - r).abs();
        if lost > 1e-6 * x.abs().max(1.0) {
            self.rounded += 1;
            self.rounded_what = what;
            self.worst_rounding = self.worst_rounding.max(lost);
        }
        r as u64
    }

    fn notes(self) -> Vec<String> {
        let mut out = Vec::new();
        if self.bad_samples > 0 {
            out.push(format!(
                "skipped {} invalid sample{} (first: {})",
                self.bad_samples,
                plural(self.bad_samples),
                self.first_bad.unwrap_or_default()
            ));
        }
        if self.zero_weights > 0 {
            out.push(format!(
                "{} sample{} of weight 0 skipped (speedscope ignores them too)",
                self.zero_weights,
                plural(self.zero_weights)
            ));
        }
        if self.rounded > 0 {
            out.push(format!(
                "{} value{} rounded to whole {} (by at most {:.3})",
                self.rounded,
                plural(self.rounded),
                self.rounded_what,
                self.worst_rounding
            ));
        }
        if self.other_events > 0 {
            out.push(format!(
                "{} event{} of a type other than \"O\" or \"C\" skipped (first: {})",
                self.other_events,
                plural(self.other_events),
                self.first_other_event.unwrap_or_default()
            ));
        }
        out
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Frame names, interned on first use.
struct FrameNames<'a> {
    frames: &'a [FrameJson],
    ids: Vec<NameId>,
}

impl FrameNames<'_> {
    fn get(&mut self, out: &mut Samples, i: u32) -> NameId {
        let slot = &mut self.ids[i as usize];
        if *slot == NameId::MAX {
            *slot = out.intern(&frame_name(&self.frames[i as usize]));
        }
        *slot
    }
}

/// A frame's name, or `(anonymous file:line)` / `(anonymous)` without one.
fn frame_name(f: &FrameJson) -> String {
    match &f.name {
        Loose::Str(s) if !s.is_empty() => return s.clone(),
        Loose::Num(n) => return num(*n),
        _ => {}
    }
    let file = f.file.as_str().unwrap_or("");
    if file.is_empty() {
        return "(anonymous)".to_string();
    }
    let base = file.rsplit('/').next().unwrap_or(file);
    if f.line.0.is_finite() {
        format!("(anonymous {base}:{})", num(f.line.0))
    } else {
        format!("(anonymous {base})")
    }
}

/// A number as JSON writes it: `4`, `2.5`, `1e300`.
fn num(x: f64) -> String {
    if x.is_finite() && (x == 0.0 || (1e-5..1e16).contains(&x.abs())) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `value` × `factor` when finite and within ±[`MAX_VALUE`].
fn scaled(value: f64, factor: f64) -> Option<f64> {
    let v = value * factor;
    (v.is_finite() && v.abs() <= MAX_VALUE).then_some(v)
}

/// Parses a speedscope file into time-ordered samples, one thread per profile.
pub fn parse(file: &str, text: &[u8]) -> Result<Samples, ImportError> {
    if text.len() >= lift::LIFT_MIN_BYTES
        && let Some(lifted) = lift::parse_lifted(file, text, lift::PART_MIN)
    {
        return lifted;
    }
    let json: FileJson<FlatStacks> =
        serde_json::from_slice(text).map_err(|e| ImportError::json(file, &e))?;
    read(file, json)
}

/// The samples of a file serde has read.
fn read(file: &str, json: FileJson<FlatStacks>) -> Result<Samples, ImportError> {
    let Some(profiles) = json.profiles else {
        return Err(invalid(
            file,
            "profiles".to_string(),
            "expected an array of profiles; the file has none",
        ));
    };
    if profiles.is_empty() {
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail: "its profiles array is empty".to_string(),
        });
    }
    let frames = json.shared.unwrap_or_default().frames;
    let mut out = Samples::new(file, SourceFormat::Speedscope);
    let mut notes = Vec::new();
    let group_name = json
        .name
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    out.meta_mut().app_name = group_name.clone().or_else(|| {
        profiles[0]
            .name
            .as_str()
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    });

    // The active profile first, then the others in file order.
    let active = match &json.active_profile_index {
        Loose::Missing | Loose::Null => 0,
        Loose::Num(x) if x.fract() == 0.0 && *x >= 0.0 && (*x as usize) < profiles.len() => {
            *x as usize
        }
        other => {
            notes.push(format!(
                "activeProfileIndex {} is not the index of one of its {} profiles; ignored",
                other.describe(),
                profiles.len()
            ));
            0
        }
    };
    let order: Vec<usize> = std::iter::once(active)
        .chain((0..profiles.len()).filter(|&i| i != active))
        .collect();

    // One clock for every profile: times below 0 are shifted up.
    let mut lowest = 0.0f64;
    for p in &profiles {
        let factor = p
            .unit
            .as_str()
            .and_then(unit_info)
            .map_or(1.0, |u| u.factor);
        let start = if p.start_value.0.is_nan() {
            0.0
        } else {
            p.start_value.0
        };
        if let Some(v) = scaled(start, factor) {
            lowest = lowest.min(v);
        }
        for e in p.events.iter().flatten() {
            if let Some(v) = scaled(e.at, factor) {
                lowest = lowest.min(v);
            }
        }
    }
    let bias = -lowest.round();

    let mut names = FrameNames {
        frames: &frames,
        ids: vec![NameId::MAX; frames.len()],
    };
    let mut tally = Tally::default();
    let (mut any_sampled, mut any_evented) = (false, false);
    let mut used_names = HashSet::new();
    for &i in &order {
        let p = &profiles[i];
        let at = format!("profiles[{i}]");
        let kind = p.kind.as_str().unwrap_or("");
        if kind != "sampled" && kind != "evented" {
            notes.push(format!(
                "{at}: type {} is neither \"sampled\" nor \"evented\"; profile skipped",
                p.kind.describe()
            ));
            continue;
        }
        let unit = match p.unit.as_str().and_then(unit_info) {
            Some(u) => u,
            None => {
                notes.push(format!(
                    "{at}.unit: {} is not one of none, nanoseconds, microseconds, \
                     milliseconds, seconds, bytes; values read as plain counts",
                    p.unit.describe()
                ));
                unit_info("none").expect("none is a unit")
            }
        };
        let thread = out.add_thread(ThreadInfo {
            name: thread_name(p, i, group_name.as_deref(), &mut used_names),
            ..ThreadInfo::default()
        });
        let event = out.event(
            unit.event,
            ValueFormat {
                unit: unit.unit.clone(),
                ..ValueFormat::default()
            },
        );
        let stream = out.stream(thread, event);
        let ctx = Ctx {
            file,
            at: &at,
            unit: &unit,
            bias,
            stream,
        };
        if kind == "sampled" {
            any_sampled = true;
            read_sampled(&ctx, p, &mut names, &mut out, &mut tally)?;
        } else {
            any_evented = true;
            read_evented(&ctx, p, &mut names, &mut out, &mut tally)?;
        }
    }
    if out.is_empty() {
        notes.extend(tally.notes());
        let mut detail =
            "none of its profiles has a sample or a span of nonzero length".to_string();
        if !notes.is_empty() {
            detail = format!("{detail} ({})", notes.join("; "));
        }
        return Err(ImportError::NoSamples {
            file: file.to_string(),
            detail,
        });
    }
    out.timed = !any_sampled;
    out.exact = any_evented && !any_sampled;
    notes.extend(tally.notes());
    out.meta_mut().warnings.notes.extend(notes);
    Ok(out.finish())
}

/// The thread name of profile `i`: its name, else the file's, else `profile i`; a name
/// already taken gets ` (2)`, ` (3)` … so every profile stays its own thread.
fn thread_name(
    p: &ProfileJson<FlatStacks>,
    i: usize,
    group: Option<&str>,
    used: &mut HashSet<String>,
) -> String {
    let base = p
        .name
        .as_str()
        .filter(|s| !s.is_empty())
        .or(group)
        .map_or_else(|| format!("profile {i}"), str::to_string);
    let mut name = base.clone();
    let mut n = 1;
    while used.contains(&name) {
        n += 1;
        name = format!("{base} ({n})");
    }
    used.insert(name.clone());
    name
}

/// What reading one profile needs besides the profile.
struct Ctx<'a> {
    file: &'a str,
    /// `profiles[i]`.
    at: &'a str,
    unit: &'a UnitInfo,
    /// Added to every time so none is negative.
    bias: f64,
    stream: usize,
}

/// A sampled profile's samples, placed one after another from `startValue`.
fn read_sampled(
    ctx: &Ctx<'_>,
    p: &ProfileJson<FlatStacks>,
    names: &mut FrameNames<'_>,
    out: &mut Samples,
    tally: &mut Tally,
) -> Result<(), ImportError> {
    let at = ctx.at;
    let (Some(stacks), Some(weights)) = (&p.samples, &p.weights) else {
        let missing = if p.samples.is_none() {
            "samples"
        } else {
            "weights"
        };
        return Err(invalid(
            ctx.file,
            at.to_string(),
            format!("a sampled profile needs `samples` and `weights`; `{missing}` is missing"),
        ));
    };
    if stacks.overflow {
        return Err(invalid(
            ctx.file,
            format!("{at}.samples"),
            "more than 2^32 distinct stacks",
        ));
    }
    if stacks.len() != weights.len() {
        return Err(invalid(
            ctx.file,
            format!("{at}.weights"),
            format!(
                "expected one weight per sample: {} samples, {} weights",
                stacks.len(),
                weights.len()
            ),
        ));
    }
    let start = if p.start_value.0.is_nan() {
        0.0
    } else {
        p.start_value.0
    };
    let Some(start_ns) = scaled(start, ctx.unit.factor) else {
        return Err(invalid(
            ctx.file,
            format!("{at}.startValue"),
            format!(
                "{} {} is out of range (at most 2^62 ns)",
                num(start),
                p.unit.as_str().unwrap_or("")
            ),
        ));
    };
    let mut time = tally.round(start_ns + ctx.bias, ctx.unit.what);
    let n_frames = names.frames.len();
    let mut path: Vec<NameId> = Vec::new();
    // The stack of each list whose frames were all good, once one of its samples was
    // placed (a bad list is reported at each of its samples).
    let mut by_list: Vec<StackId> = vec![EMPTY_STACK; stacks.distinct()];
    let mut placed: Vec<bool> = vec![false; stacks.distinct()];
    'samples: for (k, &Num(w)) in weights.iter().enumerate() {
        let Some(w_scaled) = scaled(w, ctx.unit.factor).filter(|&v| v >= 0.0) else {
            tally.bad(|| {
                format!("{at}.weights[{k}]: expected a weight of 0 to 2^62 ns, bytes or counts")
            });
            continue;
        };
        if w == 0.0 {
            tally.zero_weights += 1;
            continue;
        }
        let list = stacks.lists[k];
        let frames = stacks.list(list);
        let known = placed[list as usize].then(|| by_list[list as usize]);
        path.clear();
        for (j, &f) in frames
            .iter()
            .enumerate()
            .take(if known.is_some() { 0 } else { usize::MAX })
        {
            if f == BAD_INDEX || f as usize >= n_frames {
                tally.bad(|| {
                    if f == BAD_INDEX {
                        format!("{at}.samples[{k}][{j}]: expected a frame index")
                    } else {
                        format!(
                            "{at}.samples[{k}][{j}]: frame {f} is not in shared.frames \
                             ({n_frames} frames)"
                        )
                    }
                });
                continue 'samples;
            }
            path.push(names.get(out, f));
        }
        let ns = tally.round(w_scaled, ctx.unit.what);
        let Some(end) = time.checked_add(ns).filter(|&e| e <= 1 << 63) else {
            tally.bad(|| format!("{at}.weights[{k}]: the samples so far add up past 2^63 ns"));
            continue;
        };
        let stack = known.unwrap_or_else(|| {
            let stack = out.stacks.path(path.iter().copied());
            by_list[list as usize] = stack;
            placed[list as usize] = true;
            stack
        });
        out.push(ctx.stream, time, stack, ns);
        time = end;
    }
    Ok(())
}

/// An open frame of an evented profile.
struct OpenFrame {
    frame: u32,
    stack: StackId,
    event: usize,
}

/// An evented profile's spans as samples: one per distinct event time.
fn read_evented(
    ctx: &Ctx<'_>,
    p: &ProfileJson<FlatStacks>,
    names: &mut FrameNames<'_>,
    out: &mut Samples,
    tally: &mut Tally,
) -> Result<(), ImportError> {
    let at = ctx.at;
    let Some(events) = &p.events else {
        return Err(invalid(
            ctx.file,
            at.to_string(),
            "an evented profile needs `events`",
        ));
    };
    let n_frames = names.frames.len();
    let frame_text = |names: &FrameNames<'_>, f: u32| {
        format!("{f} ({:?})", frame_name(&names.frames[f as usize]))
    };
    let mut open: Vec<OpenFrame> = Vec::new();
    // The time of the events being applied, and the previous event's `at`.
    let mut group: Option<u64> = None;
    let mut prev_at = f64::NEG_INFINITY;
    // Over the current group: the fewest frames open, and the node its events closed at
    // that depth (to tell a frame closed and reopened in the same instant from one left
    // open).
    let mut min_depth = 0usize;
    let mut popped_at_min = EMPTY_STACK;
    let top = |open: &[OpenFrame]| open.last().map_or(EMPTY_STACK, |o| o.stack);
    for (k, e) in events.iter().enumerate() {
        let here = || format!("{at}.events[{k}]");
        match e.kind {
            EvKind::Open | EvKind::Close => {}
            EvKind::Other => {
                tally.other_events += 1;
                if tally.first_other_event.is_none() {
                    tally.first_other_event = Some(here());
                }
                continue;
            }
            EvKind::NotObject => {
                return Err(invalid(
                    ctx.file,
                    here(),
                    "expected an event object {\"type\": \"O\" or \"C\", \"frame\", \"at\"}",
                ));
            }
        }
        let f = index_of(e.frame);
        if f == BAD_INDEX || f as usize >= n_frames {
            return Err(invalid(
                ctx.file,
                here(),
                if e.frame.is_nan() {
                    "expected a frame index in \"frame\"".to_string()
                } else {
                    format!(
                        "frame {} is not in shared.frames ({n_frames} frames)",
                        num(e.frame)
                    )
                },
            ));
        }
        if e.at.is_nan() {
            return Err(invalid(ctx.file, here(), "expected a number in \"at\""));
        }
        if e.at < prev_at {
            return Err(invalid(
                ctx.file,
                here(),
                format!(
                    "at = {} is before the previous event's at = {} (events must be in \
                     time order)",
                    num(e.at),
                    num(prev_at)
                ),
            ));
        }
        prev_at = e.at;
        let Some(t) = scaled(e.at, ctx.unit.factor) else {
            return Err(invalid(
                ctx.file,
                here(),
                format!("at = {} is out of range (at most 2^62 ns)", num(e.at)),
            ));
        };
        let t = tally.round(t + ctx.bias, ctx.unit.what);
        if group != Some(t) {
            if let Some(g) = group {
                flush(out, ctx.stream, g, t - g, &open, min_depth, popped_at_min);
            }
            group = Some(t);
            min_depth = open.len();
            popped_at_min = EMPTY_STACK;
        }
        if e.kind == EvKind::Open {
            let name = names.get(out, f);
            let stack = out.stacks.child(top(&open), name);
            open.push(OpenFrame {
                frame: f,
                stack,
                event: k,
            });
        } else {
            let Some(o) = open.last() else {
                return Err(invalid(
                    ctx.file,
                    here(),
                    format!("closes frame {} but no frame is open", frame_text(names, f)),
                ));
            };
            if o.frame != f {
                return Err(invalid(
                    ctx.file,
                    here(),
                    format!(
                        "closes frame {} while frame {} (opened at events[{}]) is the \
                         innermost open frame",
                        frame_text(names, f),
                        frame_text(names, o.frame),
                        o.event
                    ),
                ));
            }
            let closed = open.pop().map_or(EMPTY_STACK, |o| o.stack);
            if open.len() < min_depth {
                min_depth = open.len();
                popped_at_min = closed;
            }
        }
    }
    if let Some(o) = open.last() {
        return Err(invalid(
            ctx.file,
            format!("{at}.events"),
            format!(
                "{} frame{} still open after the last event (the innermost, frame {}, \
                 opened at events[{}]); every \"O\" needs its \"C\"",
                open.len(),
                plural(open.len() as u64),
                frame_text(names, o.frame),
                o.event
            ),
        ));
    }
    Ok(())
}

/// The sample of the interval from `time` to `time + len`: the frames open after the
/// events at `time`. When the events at `time` closed the frame at depth `min_depth` and
/// opened the same path again (`popped_at_min` is the node they closed there), a
/// zero-weight sample of the `min_depth` frames left open comes first, so that the
/// reopened frames are new spans rather than a continuation of the closed ones.
fn flush(
    out: &mut Samples,
    stream: usize,
    time: u64,
    len: u64,
    open: &[OpenFrame],
    min_depth: usize,
    popped_at_min: StackId,
) {
    if popped_at_min != EMPTY_STACK
        && open
            .get(min_depth)
            .is_some_and(|o| o.stack == popped_at_min)
    {
        let kept = match min_depth {
            0 => EMPTY_STACK,
            d => open[d - 1].stack,
        };
        out.push(stream, time, kept, 0);
    }
    let now = open.last().map_or(EMPTY_STACK, |o| o.stack);
    out.push(stream, time, now, len);
}

#[cfg(test)]
mod tests;
