//! Pyroscope flamebearer JSON.
//!
//! Three wrappers carry the same data:
//! - the render API response and Pyroscope's "export as JSON": `{flamebearer, metadata,
//!   timeline, groups?, leftTicks?, rightTicks?}` or `{version: 1, flamebearer, metadata}`;
//! - Grafana Pyroscope's query API (v2): `{flamegraph: {names, levels: [{values}], total,
//!   maxSelf, leftTicks?, rightTicks?}}`, where 64-bit integers arrive as JSON strings;
//! - a bare flamebearer object `{names, levels, numTicks, maxSelf}`.
//!
//! `levels[i]` is row `i` of the flame graph, one group of numbers per bar, offsets
//! delta-encoded against the end of the previous bar in the row:
//! - `single`: `[offset, total, self, name]`;
//! - `double` (diff): `[leftOffset, leftTotal, leftSelf, rightOffset, rightTotal,
//!   rightSelf, name]`, left and right offsets accumulating separately; a bar's position on
//!   the combined axis is `leftOffset + rightOffset` and its width `leftTotal + rightTotal`.
//!
//! The bars become a [`CallTree`](crate::model::CallTree) in file order (a bar's parent is
//! the bar of the row above that contains it). Positions are checked against the layout
//! scorch derives from the tree (self first, then children): they agree for everything
//! Pyroscope writes, and a file that disagrees is reported, not silently redrawn. Bars
//! outside their parent, past `numTicks`, with self larger than total, or naming a name
//! that does not exist are errors naming the level and bar.

use super::ImportError;
use crate::model::{
    CallTreeBuilder, ChildOrder, Names, NodeId, Profile, ProfileMeta, SourceFormat, Unit,
    ValueFormat, Warnings,
};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};
use serde_json::value::RawValue;

use super::chrome::scan::{skip_string, skip_value, skip_ws};
use super::speedscope::head::find_key;
use super::text::line_col;

/// A non-negative integer that may be written as a JSON number (integral) or a string of
/// digits (protobuf JSON's int64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Num(pub(crate) u64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a non-negative integer")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                u64::try_from(v)
                    .map(Num)
                    .map_err(|_| E::custom(format!("expected a non-negative integer, found {v}")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                if v >= 0.0 && v.fract() == 0.0 && v < 1.8e19 {
                    Ok(Num(v as u64))
                } else {
                    Err(E::custom(format!(
                        "expected a non-negative integer, found {v}"
                    )))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                v.trim()
                    .parse::<u64>()
                    .map(Num)
                    .map_err(|_| E::custom(format!("expected an integer, found the string {v:?}")))
            }
        }
        d.deserialize_any(V)
    }
}

/// A flamebearer object; `L` is how its `levels` are read: kept as text
/// ([`RawValue`]) where serde reads the object itself, decoded by serde where it cannot
/// hand out text (a bare flamebearer's fields, flattened into the envelope).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
#[serde(bound(deserialize = "L: Deserialize<'de>"))]
struct Body<L> {
    #[serde(default)]
    names: Option<Vec<String>>,
    #[serde(default = "none")]
    levels: Option<L>,
    #[serde(default)]
    num_ticks: Option<Num>,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    units: Option<String>,
    #[serde(default)]
    sample_rate: Option<Num>,
    #[serde(default)]
    spy_name: Option<String>,
    #[serde(default)]
    left_ticks: Option<Num>,
    #[serde(default)]
    right_ticks: Option<Num>,
}

#[derive(Deserialize)]
struct V2Level {
    #[serde(default)]
    values: Vec<Num>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct V2Body {
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    levels: Vec<V2Level>,
    #[serde(default)]
    total: Option<Num>,
    #[serde(default)]
    left_ticks: Option<Num>,
    #[serde(default)]
    right_ticks: Option<Num>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    units: Option<String>,
    #[serde(default)]
    sample_rate: Option<Num>,
    #[serde(default)]
    spy_name: Option<String>,
    #[serde(default)]
    app_name: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

fn none<T>() -> Option<T> {
    None
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope<'a> {
    #[serde(default, borrow)]
    flamebearer: Option<Body<&'a RawValue>>,
    #[serde(default)]
    flamegraph: Option<V2Body>,
    #[serde(default)]
    metadata: Option<Metadata>,
    #[serde(default)]
    left_ticks: Option<Num>,
    #[serde(default)]
    right_ticks: Option<Num>,
    // A bare flamebearer object has its fields at the top level.
    #[serde(flatten)]
    bare: Body<Vec<Vec<Num>>>,
}

/// The rows of bars, as numbers.
enum Levels<'a> {
    /// The `levels` array's text and its byte offset in the file: read row by row by
    /// [`LevelText`] (a flamebearer object, as Pyroscope writes it).
    Text(&'a [u8], usize),
    /// Decoded by serde (a bare flamebearer, and Grafana's v2 `{values}` rows).
    Parsed(Vec<Vec<Num>>),
}

/// The decoded essentials, whichever wrapper they came in.
struct Flat<'a> {
    names: Vec<String>,
    levels: Levels<'a>,
    num_ticks: Option<u64>,
    diff: bool,
    left_ticks: Option<u64>,
    right_ticks: Option<u64>,
    units: Option<String>,
    sample_rate: Option<u64>,
    spy_name: Option<String>,
    app_name: Option<String>,
    levels_path: &'static str,
    /// Whether the levels were lifted out of the file before serde read the rest (so
    /// serde has not seen them).
    lifted: bool,
}

fn flatten<'a>(file: &str, text: &'a [u8], env: Envelope<'a>) -> Result<Flat<'a>, ImportError> {
    let meta = env.metadata.unwrap_or_default();
    if let Some(v2) = env.flamegraph {
        let diff = v2.left_ticks.is_some() || v2.right_ticks.is_some();
        return Ok(Flat {
            names: v2.names,
            levels: Levels::Parsed(v2.levels.into_iter().map(|l| l.values).collect()),
            num_ticks: v2.total.map(|n| n.0),
            diff,
            left_ticks: v2.left_ticks.map(|n| n.0),
            right_ticks: v2.right_ticks.map(|n| n.0),
            units: meta.units,
            sample_rate: meta.sample_rate.map(|n| n.0),
            spy_name: meta.spy_name,
            app_name: meta.app_name.or(meta.name),
            levels_path: "flamegraph.levels",
            lifted: false,
        });
    }
    let (body, levels_path) = match env.flamebearer {
        Some(b) => {
            // The text serde kept lies in `text` (it never copies a raw value read from
            // a slice): its offset is where row errors point.
            let levels = b.levels.map(|raw| {
                let t = raw.get().as_bytes();
                Levels::Text(
                    t,
                    (t.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize),
                )
            });
            (
                Body {
                    levels,
                    ..without_levels(b)
                },
                "flamebearer.levels",
            )
        }
        None => {
            let mut bare = env.bare;
            let levels = bare.levels.take().map(Levels::Parsed);
            (
                Body {
                    levels,
                    ..without_levels(bare)
                },
                "levels",
            )
        }
    };
    let left_ticks = env.left_ticks.or(body.left_ticks).map(|n| n.0);
    let right_ticks = env.right_ticks.or(body.right_ticks).map(|n| n.0);
    let format = body.format.clone().or(meta.format.clone());
    let diff = match format.as_deref() {
        Some("double") => true,
        Some("single") => false,
        _ => left_ticks.is_some() || right_ticks.is_some(),
    };
    let (Some(names), Some(levels)) = (body.names, body.levels) else {
        return Err(ImportError::Invalid {
            file: file.to_string(),
            location: "top level".to_string(),
            message: "expected a flamebearer with `names` and `levels`".to_string(),
        });
    };
    Ok(Flat {
        names,
        levels,
        num_ticks: body.num_ticks.map(|n| n.0),
        diff,
        left_ticks,
        right_ticks,
        units: meta.units.or(body.units),
        sample_rate: meta.sample_rate.or(body.sample_rate).map(|n| n.0),
        spy_name: meta.spy_name.or(body.spy_name),
        app_name: meta.app_name.or(meta.name),
        levels_path,
        lifted: false,
    })
}

/// `b`'s fields but its levels (taken apart from them).
fn without_levels<L, M>(b: Body<L>) -> Body<M> {
    Body {
        names: b.names,
        levels: None,
        num_ticks: b.num_ticks,
        format: b.format,
        units: b.units,
        sample_rate: b.sample_rate,
        spy_name: b.spy_name,
        left_ticks: b.left_ticks,
        right_ticks: b.right_ticks,
    }
}

/// One decoded bar: absolute positions (a diff profile's left side is kept beside, in
/// [`Row::left`]: 32 bytes a bar, where a deep level of a big file has millions).
#[derive(Clone, Copy, Debug)]
struct Bar {
    x0: u64,
    x1: u64,
    self_: u64,
    name: u32,
}

/// One decoded level.
#[derive(Default)]
struct Row {
    bars: Vec<Bar>,
    /// Per bar, its left total and self (diff profiles; empty otherwise).
    left: Vec<(u64, u64)>,
}

impl Row {
    fn clear(&mut self) {
        self.bars.clear();
        self.left.clear();
    }

    fn left(&self, j: usize) -> Option<(u64, u64)> {
        self.left.get(j).copied()
    }
}

/// Files of at least this size have their `levels` lifted out before serde reads the rest.
const LIFT_MIN_BYTES: usize = 1 << 16;

/// Parses a flamebearer document.
pub fn parse(file: &str, text: &[u8]) -> Result<Profile, ImportError> {
    if text.len() >= LIFT_MIN_BYTES
        && let Some(lifted) = parse_lifted(file, text)
    {
        return lifted;
    }
    parse_whole(file, text)
}

/// The document read by serde whole.
fn parse_whole(file: &str, text: &[u8]) -> Result<Profile, ImportError> {
    let env: Envelope = serde_json::from_slice(text).map_err(|e| ImportError::json(file, &e))?;
    let flat = flatten(file, text, env)?;
    build(file, text, flat)
}

/// A big flamebearer object read without serde going through its `levels`: nearly all
/// of the file is that one array of numbers, which serde would check digit by digit only
/// to hand it over as text. The first `"levels": [` key's array is found by its brackets
/// (memchr from bracket to bracket: a level is one long run of numbers), serde reads the
/// document with `[]` in its place (names, totals, metadata: the small rest), and the rows
/// are read from the file. `None` (the whole document goes to serde, as before) when that
/// array is not where serde then finds `flamebearer.levels` (another wrapper, a key of
/// that name elsewhere first), or when the rest does not read: serde's error then points
/// into the file itself.
fn parse_lifted(file: &str, text: &[u8]) -> Option<Result<Profile, ImportError>> {
    let start = find_key(text, b"\"levels\"", 0, b'[')?;
    let end = array_end(text, start)?;
    let mut rest = Vec::with_capacity(text.len() - (end - start) + 2);
    rest.extend_from_slice(&text[..start]);
    rest.extend_from_slice(b"[]");
    rest.extend_from_slice(&text[end..]);
    let env: Envelope = serde_json::from_slice(&rest).ok()?;
    let levels = env.flamebearer.as_ref()?.levels?;
    if levels.get().as_ptr() != rest[start..].as_ptr() {
        return None;
    }
    Some(flatten(file, &rest, env).and_then(|mut flat| {
        flat.levels = Levels::Text(&text[start..end], start);
        flat.lifted = true;
        build(file, text, flat)
    }))
}

/// The end (one past its `]`) of the array starting at `text[start]`.
fn array_end(text: &[u8], start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    loop {
        let k = i + memchr::memchr3(b'[', b']', b'"', text.get(i..)?)?;
        match text[k] {
            b'[' => {
                depth += 1;
                i = k + 1;
            }
            b']' => {
                depth = depth.checked_sub(1)?;
                i = k + 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => i = skip_string(text, k + 1)?,
        }
    }
}

/// The head of a big flamebearer file as a document of its own, for a preview: its names
/// and its first levels, as many whole ones as `budget` bytes of the file hold, closed
/// where the head stops (with the `numTicks` after the levels and the wrapper's
/// `metadata`, both found in the file's last 64 KiB, the metadata when the levels are
/// those of a `flamebearer` member of the top-level object). Levels
/// are rows from the root down, so this is the top of the flame graph, exact as far as it
/// goes. Also the bytes of the file it holds. `None` when the names do not come before
/// the levels, or not even the first level fits.
pub(crate) fn head_document(text: &[u8], budget: usize) -> Option<(Vec<u8>, usize)> {
    let head = &text[..text.len().min(budget)];
    let start = find_key(head, b"\"levels\"", 0, b'[')?;
    // The containers open where the levels start (the top-level object, and the
    // `flamebearer` object in a wrapper).
    let mut open = Vec::new();
    let mut i = 0;
    while let Some(k) = memchr::memchr3(b'{', b'[', b'"', head.get(i..start)?).map(|k| i + k) {
        match head[k] {
            b'"' => i = skip_string(head, k + 1)?,
            _ => {
                // Find the closer of this container in the prefix, or keep it open.
                match skip_value(&head[..start], k) {
                    Some(end) => i = end,
                    None => {
                        open.push(if head[k] == b'{' { b'}' } else { b']' });
                        i = k + 1;
                    }
                }
            }
        }
    }
    // The whole levels that fit.
    let mut end = None;
    let mut at = skip_ws(head, start + 1);
    while head.get(at) == Some(&b'[') {
        let Some(e) = array_end(head, at) else { break };
        end = Some(e);
        at = skip_ws(head, e);
        match head.get(at) {
            Some(b',') => at = skip_ws(head, at + 1),
            _ => break,
        }
    }
    let end = end?;
    let tail_from = text.len().saturating_sub(64 << 10).max(end);
    let mut doc = Vec::with_capacity(end + 4096);
    doc.extend_from_slice(&head[..end]);
    doc.push(b']');
    // The levels' own `numTicks` (written after them): the root's total where it is more
    // than level 0's bars (a synthetic root above them, as in the whole file).
    if let Some(k) = memchr::memmem::find(&text[tail_from..], b"\"numTicks\"") {
        let colon = skip_ws(text, tail_from + k + 10);
        let v = skip_ws(text, colon + 1);
        if text.get(colon) == Some(&b':')
            && let Some(v_end) = skip_value(text, v)
            && text[v..v_end].iter().all(u8::is_ascii_digit)
            && v_end > v
        {
            doc.extend_from_slice(b",\"numTicks\":");
            doc.extend_from_slice(&text[v..v_end]);
        }
    }
    let in_wrapper =
        open == [b'}', b'}'] && memchr::memmem::find(&head[..start], b"\"flamebearer\"").is_some();
    while let Some(c) = open.pop() {
        doc.push(c);
        if in_wrapper
            && open.len() == 1
            && let Some(m) = find_key(text, b"\"metadata\"", tail_from, b'{')
            && let Some(m_end) = skip_value(text, m)
        {
            doc.extend_from_slice(b",\"metadata\":");
            doc.extend_from_slice(&text[m..m_end]);
        }
    }
    Some((doc, end))
}

fn build(file: &str, text: &[u8], mut f: Flat) -> Result<Profile, ImportError> {
    let invalid = |location: String, message: String| ImportError::Invalid {
        file: file.to_string(),
        location,
        message,
    };
    let no_bars = || {
        invalid(
            f.levels_path.to_string(),
            "no bars: expected at least the root bar in level 0".to_string(),
        )
    };
    let mut names = Names::new();
    let name_ids: Vec<u32> = f.names.iter().map(|n| names.intern(n)).collect();
    let mut b = CallTreeBuilder::new(&mut names, f.diff);
    let mut warnings = Warnings::default();
    // Row by row: its numbers decoded to absolute positions as they are read (each bar
    // checked on its own), then its bars linked under the row above. Two rows of bars
    // are held, no row of numbers.
    let levels = std::mem::replace(&mut f.levels, Levels::Parsed(Vec::new()));
    let mut text_rows = match &levels {
        Levels::Text(t, offset) => Some(LevelText::new(file, text, t, *offset)),
        Levels::Parsed(_) => None,
    };
    let mut parsed_rows = match &levels {
        Levels::Parsed(rows) => rows.iter(),
        Levels::Text(..) => [].iter(),
    };
    let mut row = Row::default();
    let mut linker: Option<Linker> = None;
    let mut li = 0usize;
    let read = (|| -> Result<(), ImportError> {
        loop {
            if let Some(l) = &mut linker {
                row = l.spare();
            }
            row.clear();
            let mut dec = RowDecoder::new(&f, li);
            let mut push = |v: u64, row: &mut Row| dec.push(v, row).map_err(|(l, m)| invalid(l, m));
            let more = match &mut text_rows {
                Some(t) => match t.fast_row(|v| push(v, &mut row))? {
                    RowRead::End => false,
                    RowRead::Done => true,
                    RowRead::Slow(start) => {
                        // Read again by serde, from the row's start.
                        row.clear();
                        dec = RowDecoder::new(&f, li);
                        let mut push = |v: u64, row: &mut Row| {
                            dec.push(v, row).map_err(|(l, m)| invalid(l, m))
                        };
                        t.slow_row(start, |v| push(v, &mut row))?;
                        true
                    }
                },
                None => match parsed_rows.next() {
                    Some(nums) => {
                        for n in nums {
                            push(n.0, &mut row)?;
                        }
                        true
                    }
                    None => false,
                },
            };
            if !more {
                break;
            }
            dec.finish().map_err(|(l, m)| invalid(l, m))?;
            match &mut linker {
                None if row.bars.is_empty() => return Err(no_bars()),
                None => {
                    let l = Linker::start(&f, std::mem::take(&mut row), &name_ids, &mut b);
                    linker = Some(l.map_err(|(l, m)| invalid(l, m))?);
                }
                Some(l) => l
                    .row(&f, li, std::mem::take(&mut row), &name_ids, &mut b)
                    .map_err(|(l, m)| invalid(l, m))?,
            }
            li += 1;
        }
        Ok(())
    })();
    // Read whole, serde would have reported the first thing in the file that is not
    // JSON before anything in a row: when lifted rows fail, serde reads the file whole
    // (only then), and its error, if it has one, is the one reported.
    if read.is_err()
        && f.lifted
        && let Err(e) = serde_json::from_slice::<Envelope>(text)
    {
        return Err(ImportError::json(file, &e));
    }
    read?;
    drop(levels);
    linker.ok_or_else(no_bars)?.finish(&mut warnings);
    let tree = b
        .finish(&names, ChildOrder::Insertion)
        .map_err(|e| invalid("levels".to_string(), e.to_string()))?;

    let diff_ticks = if f.diff {
        let l = f.left_ticks.unwrap_or_else(|| tree.left_total(0));
        let r = f
            .right_ticks
            .unwrap_or_else(|| tree.grand_total().saturating_sub(tree.left_total(0)));
        if l + r != tree.grand_total() {
            warnings.notes.push(format!(
                "leftTicks + rightTicks = {} but the root spans {} ticks",
                l + r,
                tree.grand_total()
            ));
        }
        Some((l, r))
    } else {
        None
    };
    if tree.grand_total() == 0 {
        return Err(invalid(
            f.levels_path.to_string(),
            "the profile is empty (numTicks is 0)".to_string(),
        ));
    }

    let unit = Unit::from_pyroscope(f.units.as_deref().unwrap_or("samples"));
    let sample_rate_hz = f
        .sample_rate
        .filter(|&r| r > 0 && r <= u64::from(u32::MAX))
        .map(|r| r as u32);
    Ok(Profile {
        names,
        tree,
        values: ValueFormat {
            unit,
            sample_rate_hz,
            ticks_per_unit: 1,
        },
        meta: ProfileMeta {
            // Without a spyName, Pyroscope's flame graph takes whole names as packages
            // (spyToRegex's default, as for its "unknown"); so does package_name here.
            spy_name: Some(
                f.spy_name
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "unknown".to_string()),
            ),
            app_name: f.app_name.filter(|s| !s.is_empty()),
            stated_total: f.num_ticks,
            diff_ticks,
            ..ProfileMeta::new(
                file,
                if f.diff {
                    SourceFormat::FlamebearerDiff
                } else {
                    SourceFormat::FlamebearerSingle
                },
                warnings,
            )
        },
    })
}

/// Where a bar is wrong and what is wrong with it.
type BarError = (String, String);

/// Decodes the numbers of level `li`, as they come, into bars at absolute positions,
/// each checked on its own (offsets are delta-encoded against the end of the previous
/// bar of the row).
struct RowDecoder<'f> {
    f: &'f Flat<'f>,
    li: usize,
    step: usize,
    /// The numbers of the bar being read.
    group: [u64; 7],
    filled: usize,
    /// Numbers read in the row.
    count: usize,
    prev_end: u64,
    prev_l_end: u64,
    prev_r_end: u64,
}

impl<'f> RowDecoder<'f> {
    fn new(f: &'f Flat<'f>, li: usize) -> Self {
        RowDecoder {
            f,
            li,
            step: if f.diff { 7 } else { 4 },
            group: [0; 7],
            filled: 0,
            count: 0,
            prev_end: 0,
            prev_l_end: 0,
            prev_r_end: 0,
        }
    }

    /// The row's next number; a bar into `row` once its numbers are all read.
    #[inline]
    fn push(&mut self, v: u64, row: &mut Row) -> Result<(), BarError> {
        self.group[self.filled] = v;
        self.filled += 1;
        self.count += 1;
        if self.filled < self.step {
            return Ok(());
        }
        self.filled = 0;
        self.bar(row)
    }

    /// The row ended: a bar left unfinished is an error.
    fn finish(&self) -> Result<(), BarError> {
        if self.filled == 0 {
            return Ok(());
        }
        let (f, step) = (self.f, self.step);
        let fmt = if f.diff { "double" } else { "single" };
        Err((
            format!("{}[{}]", f.levels_path, self.li),
            format!(
                "{} numbers is not a multiple of {step} ({fmt} format has {step} numbers per bar)",
                self.count
            ),
        ))
    }

    fn bar(&mut self, row: &mut Row) -> Result<(), BarError> {
        let (f, li, step) = (self.f, self.li, self.step);
        let j = self.count - step;
        let loc = || {
            format!(
                "{}[{li}], bar {} (numbers {}..{})",
                f.levels_path,
                j / step,
                j,
                j + step
            )
        };
        let overflow = || (loc(), "offsets add up to more than 2^64 ticks".to_string());
        let v = self.group;
        let name_at = |k: usize| {
            name_index(v[k], f.names.len()).ok_or_else(|| {
                (
                    loc(),
                    format!(
                        "name index {} is out of range ({} names)",
                        v[k],
                        f.names.len()
                    ),
                )
            })
        };
        let bar = if f.diff {
            let l0 = self.prev_l_end.checked_add(v[0]).ok_or_else(overflow)?;
            let r0 = self.prev_r_end.checked_add(v[3]).ok_or_else(overflow)?;
            self.prev_l_end = l0.checked_add(v[1]).ok_or_else(overflow)?;
            self.prev_r_end = r0.checked_add(v[4]).ok_or_else(overflow)?;
            if v[2] > v[1] || v[5] > v[4] {
                return Err((
                    loc(),
                    format!(
                        "self is larger than total (left {} > {} or right {} > {})",
                        v[2], v[1], v[5], v[4]
                    ),
                ));
            }
            let x0 = l0.checked_add(r0).ok_or_else(overflow)?;
            let w = v[1].checked_add(v[4]).ok_or_else(overflow)?;
            row.left.push((v[1], v[2]));
            Bar {
                x0,
                x1: x0.checked_add(w).ok_or_else(overflow)?,
                self_: v[2] + v[5],
                name: name_at(6)?,
            }
        } else {
            let x0 = self.prev_end.checked_add(v[0]).ok_or_else(overflow)?;
            let x1 = x0.checked_add(v[1]).ok_or_else(overflow)?;
            self.prev_end = x1;
            if v[2] > v[1] {
                return Err((
                    loc(),
                    format!("self ({}) is larger than total ({})", v[2], v[1]),
                ));
            }
            Bar {
                x0,
                x1,
                self_: v[2],
                name: name_at(3)?,
            }
        };
        if let Some(nt) = f.num_ticks
            && bar.x1 > nt
        {
            return Err((
                loc(),
                format!(
                    "bar spans ticks {}..{}, past numTicks = {nt}",
                    bar.x0, bar.x1
                ),
            ));
        }
        row.bars.push(bar);
        Ok(())
    }
}

/// How a row read from text went.
enum RowRead {
    /// No more rows.
    End,
    /// A row, read whole.
    Done,
    /// A row with something other than plain integers, starting at this byte: nothing
    /// of it counts, it is to be read again by [`LevelText::slow_row`].
    Slow(usize),
}

/// Reads the rows of a `levels` array from its text (valid JSON: serde checked it, or
/// the rest of the document around it), one at a time: plain integers are read here, at
/// memory speed, where serde would build a `Vec` of numbers per row and a row per level;
/// a row with anything else (a string of digits, `1e3`, `-1`, a 20-digit number) is
/// handed to serde whole, so it reads or fails as it always did, at its place in the file.
struct LevelText<'a> {
    file: &'a str,
    /// The whole file, for line and column.
    whole: &'a [u8],
    text: &'a [u8],
    /// Where `text` starts in `whole`.
    offset: usize,
    /// The next byte to read.
    at: usize,
    /// Whether a comma came after the last row (so another row must follow).
    after_comma: bool,
}

impl<'a> LevelText<'a> {
    fn new(file: &'a str, whole: &'a [u8], text: &'a [u8], offset: usize) -> Self {
        // After the array's `[`.
        let at = skip_ws(text, 0) + 1;
        LevelText {
            file,
            whole,
            text,
            offset,
            at,
            after_comma: false,
        }
    }

    /// The next row's numbers, each to `each` as it is read.
    fn fast_row(
        &mut self,
        mut each: impl FnMut(u64) -> Result<(), ImportError>,
    ) -> Result<RowRead, ImportError> {
        let t = self.text;
        let row = skip_ws(t, self.at);
        match t.get(row) {
            Some(b'[') => {}
            // The array's `]`, unless a comma said another row follows.
            Some(b']') if !self.after_comma => return Ok(RowRead::End),
            _ => return Err(self.malformed(row)),
        }
        let mut i = skip_ws(t, row + 1);
        if t.get(i) != Some(&b']') {
            loop {
                let start = i;
                let mut v = 0u64;
                while let Some(d) = t.get(i).map(|c| c.wrapping_sub(b'0')).filter(|&d| d < 10) {
                    // Wraps past 19 digits: such a number goes to serde below.
                    v = v.wrapping_mul(10).wrapping_add(u64::from(d));
                    i += 1;
                }
                // 1..=19 digits always fit; longer ones, a leading zero, and anything not a
                // digit go to serde.
                let digits = i - start;
                if digits == 0 || digits > 19 || (t[start] == b'0' && digits > 1) {
                    return Ok(RowRead::Slow(row));
                }
                each(v)?;
                i = skip_ws(t, i);
                match t.get(i) {
                    Some(b',') => i = skip_ws(t, i + 1),
                    Some(b']') => break,
                    _ => return Ok(RowRead::Slow(row)),
                }
            }
        }
        self.after_row(i + 1)?;
        Ok(RowRead::Done)
    }

    /// The row starting at `start` read by serde, each number to `each`.
    fn slow_row(
        &mut self,
        start: usize,
        mut each: impl FnMut(u64) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        let t = self.text;
        let end = skip_value(t, start).unwrap_or(t.len());
        match serde_json::from_slice::<Vec<Num>>(&t[start..end]) {
            Ok(v) => {
                for n in v {
                    each(n.0)?;
                }
                self.after_row(end)?;
                Ok(())
            }
            Err(e) => {
                // serde's line and column are within the row: make them the file's.
                let (line, column) = line_col(self.whole, self.offset + start);
                let (line, column) = if e.line() <= 1 {
                    (line, column + e.column().saturating_sub(1))
                } else {
                    (line + e.line() - 1, e.column())
                };
                Err(ImportError::Json {
                    file: self.file.to_string(),
                    line,
                    column,
                    message: super::json_message(&e),
                })
            }
        }
    }

    /// Past the `,` after a row ending at `end`, or onto the array's closing `]`.
    fn after_row(&mut self, end: usize) -> Result<(), ImportError> {
        let j = skip_ws(self.text, end);
        (self.at, self.after_comma) = match self.text.get(j) {
            Some(b',') => (j + 1, true),
            Some(b']') => (j, false),
            _ => return Err(self.malformed(j)),
        };
        Ok(())
    }

    /// The error for text that is not JSON at `at` (a damaged file: the array's brackets
    /// matched, and serde read the document around it; [`build`] then asks serde what
    /// it finds first in the whole file).
    fn malformed(&self, at: usize) -> ImportError {
        let (line, column) = line_col(self.whole, self.offset + at);
        ImportError::Json {
            file: self.file.to_string(),
            line,
            column,
            message: "expected a level (an array of numbers) or the end of `levels`".to_string(),
        }
    }
}

/// Links decoded rows into the call tree as they come: each bar under the bar of the row
/// above that contains it (two pointers: both rows are sorted by position); counts what
/// the file's layout gets wrong.
struct Linker {
    prev_row: Row,
    prev_ids: Vec<NodeId>,
    /// Buffers of the row before the last, reused for the next (a deep level of a large
    /// file holds millions of bars: fresh buffers would fault in fresh pages every row).
    spare_row: Row,
    spare_ids: Vec<NodeId>,
    child_sum: Vec<u64>,
    misplaced: u64,
    self_mismatch: u64,
}

impl Linker {
    /// Level 0: one bar from 0 spanning everything is the root; anything else hangs below
    /// a synthetic root.
    fn start(
        f: &Flat,
        row0: Row,
        name_ids: &[u32],
        b: &mut CallTreeBuilder,
    ) -> Result<Linker, BarError> {
        let bars0 = &row0.bars;
        let root_total = f
            .num_ticks
            .unwrap_or_else(|| bars0.iter().map(|b| b.x1).max().unwrap_or(0));
        let single_root = bars0.len() == 1 && bars0[0].x0 == 0 && bars0[0].x1 == root_total;
        let mut linker = Linker {
            prev_row: Row::default(),
            prev_ids: vec![0],
            spare_row: Row::default(),
            spare_ids: Vec::new(),
            child_sum: Vec::new(),
            misplaced: 0,
            self_mismatch: 0,
        };
        if single_root {
            let r = bars0[0];
            b.rename_root(name_ids[r.name as usize]);
            b.set_stated(0, r.x1 - r.x0, r.self_, row0.left(0));
            linker.prev_row = row0;
            return Ok(linker);
        }
        let level0: u64 = bars0.iter().map(|b| b.x1 - b.x0).sum();
        let left0 = f.diff.then(|| (row0.left.iter().map(|l| l.0).sum(), 0));
        b.set_stated(0, root_total, root_total.saturating_sub(level0), left0);
        linker.prev_row.bars.push(Bar {
            x0: 0,
            x1: root_total,
            self_: root_total.saturating_sub(level0),
            name: 0,
        });
        linker.row(f, 0, row0, name_ids, b)?;
        Ok(linker)
    }

    /// A buffer for the next row.
    fn spare(&mut self) -> Row {
        std::mem::take(&mut self.spare_row)
    }

    /// Links row `li` under the last one.
    fn row(
        &mut self,
        f: &Flat,
        li: usize,
        row: Row,
        name_ids: &[u32],
        b: &mut CallTreeBuilder,
    ) -> Result<(), BarError> {
        let prev = &self.prev_row.bars;
        let mut ids = std::mem::take(&mut self.spare_ids);
        ids.clear();
        ids.reserve(row.bars.len());
        // Two pointers: parents and children are both sorted by position.
        let mut p = 0usize;
        let mut cursor = prev.first().map_or(0, |b| b.x0 + b.self_);
        let child_sum = &mut self.child_sum;
        child_sum.clear();
        child_sum.resize(prev.len(), 0);
        for (j, bar) in row.bars.iter().enumerate() {
            while p < prev.len()
                && (prev[p].x1 < bar.x1 || (prev[p].x1 == bar.x0 && bar.x0 < bar.x1))
            {
                p += 1;
                if p < prev.len() {
                    cursor = prev[p].x0 + prev[p].self_;
                }
            }
            if p >= prev.len() || bar.x0 < prev[p].x0 || bar.x1 > prev[p].x1 {
                return Err((
                    format!("{}[{li}], bar {j}", f.levels_path),
                    format!(
                        "bar at ticks {}..{} is not inside any bar of level {} (a bar must lie within its caller)",
                        bar.x0,
                        bar.x1,
                        li.saturating_sub(1)
                    ),
                ));
            }
            if bar.x0 != cursor {
                self.misplaced += 1;
            }
            cursor = bar.x1;
            // (Saturating: overlapping bars of a damaged file may add up past 2^64.)
            child_sum[p] = child_sum[p].saturating_add(bar.x1 - bar.x0);
            let id = b.push_child(self.prev_ids[p], name_ids[bar.name as usize]);
            b.set_stated(id, bar.x1 - bar.x0, bar.self_, row.left(j));
            ids.push(id);
        }
        for (k, parent) in prev.iter().enumerate() {
            if parent.self_.saturating_add(child_sum[k]) != parent.x1 - parent.x0 {
                self.self_mismatch += 1;
            }
        }
        self.spare_row = std::mem::replace(&mut self.prev_row, row);
        self.spare_ids = std::mem::replace(&mut self.prev_ids, ids);
        Ok(())
    }

    fn finish(self, warnings: &mut Warnings) {
        // The last row's bars have no children: their self must equal their total.
        let last = &self.prev_row.bars;
        let self_mismatch =
            self.self_mismatch + last.iter().filter(|b| b.self_ != b.x1 - b.x0).count() as u64;
        let misplaced = self.misplaced;
        if misplaced > 0 {
            warnings.notes.push(format!(
                "{misplaced} bar{} not placed where self-first layout puts {}; drawn self-first",
                if misplaced == 1 { " is" } else { "s are" },
                if misplaced == 1 { "it" } else { "them" }
            ));
        }
        if self_mismatch > 0 {
            warnings.notes.push(format!(
                "{self_mismatch} bar{} self + children ≠ total (kept the totals the file states)",
                if self_mismatch == 1 { "'s" } else { "s'" }
            ));
        }
    }
}

fn name_index(v: u64, n: usize) -> Option<u32> {
    (v < n as u64).then_some(v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIMPLE: &str = r#"{
      "flamebearer": {
        "names": ["total","runtime.main","main.slowFunction","main.work","main.main","main.fastFunction"],
        "levels": [[0,988,0,0],[0,988,0,1],[0,214,0,5,0,3,2,4,0,771,0,2],[0,214,214,3,2,1,1,5,0,771,771,3]],
        "numTicks": 988, "maxSelf": 771, "spyName": "gospy", "sampleRate": 100, "units": "samples", "format": "single"
      },
      "metadata": {"format": "single", "sampleRate": 100, "spyName": "gospy", "units": "samples"}
    }"#;

    #[test]
    fn render_api_single() {
        let p = parse("s.json", SIMPLE.as_bytes()).unwrap();
        assert_eq!(p.tree.grand_total(), 988);
        assert_eq!(p.meta.stated_total, Some(988));
        assert_eq!(p.tree.len(), 8);
        assert_eq!(p.tree.max_depth(), 3);
        assert_eq!(p.values.sample_rate_hz, Some(100));
        assert_eq!(p.meta.spy_name.as_deref(), Some("gospy"));
        assert!(p.meta.warnings.is_empty(), "{:?}", p.meta.warnings);
        // main.main has 2 self and one child (fastFunction, 1 tick).
        let rm = p.tree.children(0)[0];
        let mm = p.tree.children(rm)[1];
        assert_eq!(p.names.get(p.tree.name(mm)), "main.main");
        assert_eq!((p.tree.total(mm), p.tree.self_ticks(mm)), (3, 2));
    }

    /// A flamebearer without a spyName is colored by whole names, as Pyroscope's component
    /// draws it (checked on its canvas): not by the package rules guessed for folded stacks.
    #[test]
    fn no_spy_name_means_whole_names() {
        let bare = r#"{"names":["total","tokio::runtime::park"],"levels":[[0,4,0,0],[0,4,4,1]],"numTicks":4}"#;
        for file in [
            bare.to_string(),
            bare.replace(r#""numTicks":4"#, r#""numTicks":4,"spyName":"""#),
        ] {
            let p = parse("b.json", file.as_bytes()).unwrap();
            assert_eq!(p.meta.spy_name.as_deref(), Some("unknown"));
            let spy = p.meta.spy_name.as_deref();
            let name = "tokio::runtime::park";
            assert_eq!(crate::color::package_name(spy, name), name);
        }
    }

    #[test]
    fn v2_flamegraph_with_string_numbers() {
        let v2 = r#"{"flamegraph":{"names":["total","a","b"],
            "levels":[{"values":["0","10","0","0"]},{"values":["0","10","4","1"]},{"values":["4","6","6","2"]}],
            "total":"10","maxSelf":"6"}}"#;
        let p = parse("v2.json", v2.as_bytes()).unwrap();
        assert_eq!(p.tree.grand_total(), 10);
        assert_eq!(p.tree.max_depth(), 2);
    }

    #[test]
    fn exported_diff() {
        let d = r#"{"version":1,"leftTicks":3,"rightTicks":5,"flamebearer":{"names":["total","a","b"],
            "levels":[[0,3,0,0,5,0,0],[0,3,1,0,5,0,1],[0,2,2,0,5,5,2]],"numTicks":8,"maxSelf":5},
            "metadata":{"format":"double","units":"samples"}}"#;
        let p = parse("d.json", d.as_bytes()).unwrap();
        assert!(p.is_diff());
        assert_eq!(p.meta.diff_ticks, Some((3, 5)));
        let a = p.tree.children(0)[0];
        assert_eq!((p.tree.left_total(a), p.tree.total(a)), (3, 8));
        assert_eq!(p.tree.left_self(a), 1);
    }

    #[test]
    fn errors_name_level_and_bar() {
        let bad = r#"{"flamebearer":{"names":["f0","f1"],"levels":[[0,10,0,0],[12,50,1,1]],"numTicks":10}}"#;
        let e = parse("r.json", bad.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("flamebearer.levels[1], bar 0"), "{e}");
        assert!(e.contains("past numTicks"), "{e}");

        let bad_name = r#"{"flamebearer":{"names":["f0"],"levels":[[0,10,0,3]],"numTicks":10}}"#;
        let e = parse("n.json", bad_name.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("name index 3 is out of range (1 names)"), "{e}");

        let ragged = r#"{"flamebearer":{"names":["f0"],"levels":[[0,10,0]],"numTicks":10}}"#;
        let e = parse("g.json", ragged.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("not a multiple of 4"), "{e}");

        let neg =
            "{\"flamebearer\":{\"names\":[\"f0\"],\n\"levels\":[[0,-10,0,0]],\"numTicks\":10}}";
        let e = parse("j.json", neg.as_bytes()).unwrap_err();
        assert!(matches!(e, ImportError::Json { line: 2, .. }), "{e}");
        assert!(e.to_string().contains("non-negative"), "{e}");

        let orphan = r#"{"flamebearer":{"names":["t","a","b"],"levels":[[0,10,0,0],[0,4,4,1],[5,2,2,2]],"numTicks":10}}"#;
        let e = parse("o.json", orphan.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("not inside any bar of level 1"), "{e}");
    }

    #[test]
    fn truncated_json_reports_position() {
        let e = parse("t.json", &SIMPLE.as_bytes()[..200]).unwrap_err();
        assert!(matches!(e, ImportError::Json { .. }), "{e}");
    }

    use crate::generator::Rng;

    /// The tree, node by node, as comparable values.
    fn dump(p: &Profile) -> Vec<(String, u32, u64, u64, u64, u64)> {
        let t = &p.tree;
        (0..t.len() as NodeId)
            .map(|n| {
                let parent = if n == 0 { 0 } else { t.parent(n) };
                (
                    p.names.get(t.name(n)).to_string(),
                    parent,
                    t.total(n),
                    t.self_ticks(n),
                    t.left_total(n),
                    t.left_self(n),
                )
            })
            .collect()
    }

    /// What a parse gives, comparably: the tree and warnings, or the error's text.
    fn outcome(r: Result<Profile, ImportError>) -> Result<String, String> {
        r.map(|p| format!("{:?} {:?}", dump(&p), p.meta.warnings))
            .map_err(|e| e.to_string())
    }

    /// A random flamebearer document: levels of bars laid out self first (or, now and
    /// then, misplaced), in the single or double format, with white space between tokens
    /// and some rows holding numbers serde reads and plain digits do not (`"12"`, `12.0`).
    fn random_doc(rng: &mut Rng, diff: bool) -> String {
        let ws = |rng: &mut Rng| match rng.next() % 9 {
            0 => " ",
            1 => "\n  ",
            _ => "",
        };
        let names = 1 + rng.next() % 6;
        let mut levels: Vec<String> = Vec::new();
        // The current level's bars: (start, total, right total).
        let mut cur = vec![(0u64, 1000 + rng.next() % 1000, rng.next() % 500)];
        for _ in 0..1 + rng.next() % 6 {
            let mut nums: Vec<u64> = Vec::new();
            let mut next = Vec::new();
            let (mut end, mut l_end, mut r_end) = (0u64, 0u64, 0u64);
            for &(x, t, r) in &cur {
                let s = if rng.next().is_multiple_of(3) {
                    t
                } else {
                    t * (rng.next() % 50) / 100
                };
                let rs = r * (rng.next() % 50) / 100;
                if diff {
                    // Left and right: half of x each (only their sum is a position; the
                    // halves may run back, wrapping: such files fail, read either way).
                    let (lx, rx) = (x / 2, x - x / 2);
                    let (lo, ro) = (lx.wrapping_sub(l_end), rx.wrapping_sub(r_end));
                    nums.extend([lo, t - r, s.min(t - r), ro, r, rs.min(r)]);
                    l_end = lx + t - r;
                    r_end = rx + r;
                } else {
                    nums.extend([x - end, t, s]);
                    end = x + t;
                }
                nums.push(rng.next() % names);
                let mut c = x + s;
                while c < x + t && !rng.next().is_multiple_of(4) {
                    let w = 1 + rng.next() % (x + t - c);
                    next.push((c, w, w / 3));
                    c += w;
                }
            }
            let step = if diff { 7 } else { 4 };
            let slow = rng.next().is_multiple_of(6);
            let text: Vec<String> = nums
                .iter()
                .enumerate()
                .map(|(k, v)| match (slow, k % step == 1) {
                    (true, true) => format!("\"{v}\""),
                    _ if slow && k % 5 == 0 => format!("{v}.0"),
                    _ => v.to_string(),
                })
                .collect();
            levels.push(format!(
                "[{}{}]",
                ws(rng),
                text.join(&format!(",{}", ws(rng)))
            ));
            if next.is_empty() {
                break;
            }
            cur = next;
        }
        let names: Vec<String> = (0..names).map(|k| format!("\"f{k}\"")).collect();
        format!(
            r#"{{"version":1,{}"flamebearer":{{"names":[{}, "a \"levels\":[1] b"],{}"levels":{}[{}]{},"numTicks":{},"maxSelf":0}},"metadata":{{"format":"{}","units":"samples"}}}}"#,
            ws(rng),
            names.join(","),
            ws(rng),
            ws(rng),
            levels.join(&format!(",{}", ws(rng))),
            ws(rng),
            3000,
            if diff { "double" } else { "single" }
        )
    }

    /// Issue 15: the rows of a big flamebearer object are read from its text, not by
    /// serde; what that gives must be what serde's reading gave, tree, warnings and
    /// errors alike, for files as Pyroscope writes them and for damaged ones.
    #[test]
    fn lifted_levels_read_as_serde_reads_them() {
        let mut rng = Rng(11);
        let (mut lifted, mut slow_rows, mut damaged_errors) = (0, 0, 0);
        for case in 0..400 {
            let doc = random_doc(&mut rng, case % 3 == 0);
            let whole = outcome(parse_whole("f.json", doc.as_bytes()));
            let got = parse_lifted("f.json", doc.as_bytes()).expect("lifted");
            assert_eq!(outcome(got), whole, "case {case}: {doc}");
            lifted += 1;
            slow_rows += usize::from(doc.contains(".0") || doc.contains("\"1"));
            // Damage: a byte changed, removed or the file cut short.
            for d in 0..20 {
                let mut bad = doc.clone().into_bytes();
                let at = (rng.next() % bad.len() as u64) as usize;
                match d % 3 {
                    0 => bad[at] = b"[],0-\":x 9"[(rng.next() % 10) as usize],
                    1 => {
                        bad.remove(at);
                    }
                    _ => bad.truncate(at),
                }
                let whole = outcome(parse_whole("f.json", &bad));
                let got = match parse_lifted("f.json", &bad) {
                    Some(r) => outcome(r),
                    None => whole.clone(),
                };
                damaged_errors += usize::from(whole.is_err());
                assert_eq!(
                    got,
                    whole,
                    "case {case}, damage {d}: {}",
                    String::from_utf8_lossy(&bad)
                );
            }
        }
        assert!(
            lifted == 400 && slow_rows > 50 && damaged_errors > 2000,
            "{slow_rows} {damaged_errors}"
        );
    }

    /// The lifted array must be the one serde reads as `flamebearer.levels`: another key of
    /// that name first (in the metadata), a v2 `flamegraph`, or a bare flamebearer leave
    /// the document to serde whole.
    #[test]
    fn levels_lifted_only_where_serde_reads_them() {
        let other_first = SIMPLE.replace(
            r#""flamebearer": {"#,
            r#""extra": {"levels": [[1, 2]]}, "flamebearer": {"#,
        );
        assert!(parse_lifted("o.json", other_first.as_bytes()).is_none());
        assert_eq!(
            outcome(parse("o.json", other_first.as_bytes())),
            outcome(parse_whole("o.json", SIMPLE.as_bytes()))
        );
        let v2 = r#"{"flamegraph":{"names":["total","a"],"levels":[{"values":[0,10,0,0]},{"values":[0,10,10,1]}],"total":10}}"#;
        assert!(parse_lifted("v.json", v2.as_bytes()).is_none());
        let bare = r#"{"names":["total","a"],"levels":[[0,4,0,0],[0,4,4,1]],"numTicks":4}"#;
        assert!(parse_lifted("b.json", bare.as_bytes()).is_none());
        assert!(parse_lifted("s.json", SIMPLE.as_bytes()).is_some());
        // A row with a bad number fails at its place in the file, lifted or not.
        let neg = "{\"flamebearer\":{\"names\":[\"f0\"],\n\"levels\":[[0,10,0,0],\n  [0,-10,0,0]],\"numTicks\":10}}";
        let e = parse_lifted("j.json", neg.as_bytes()).unwrap().unwrap_err();
        assert!(
            matches!(
                e,
                ImportError::Json {
                    line: 3,
                    column: 8,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            parse_whole("j.json", neg.as_bytes())
                .unwrap_err()
                .to_string()
        );
        // Rows not separated as JSON separates them fail as serde fails them.
        for levels in [
            "[[0,10,10,0],]",
            "[[0,10,0,0] [0,10,10,1]]",
            "[[0,10,10,0],7]",
            "[,[0,10,10,0]]",
        ] {
            let doc = format!(
                r#"{{"flamebearer":{{"names":["a","b"],"levels":{levels},"numTicks":10}}}}"#
            );
            let e = parse_lifted("c.json", doc.as_bytes()).unwrap().unwrap_err();
            assert!(matches!(e, ImportError::Json { .. }), "{levels}: {e}");
            assert_eq!(
                e.to_string(),
                parse_whole("c.json", doc.as_bytes())
                    .unwrap_err()
                    .to_string()
            );
        }
    }

    /// Every node as its path of names from the root, with its total and self.
    fn paths(p: &Profile) -> Vec<(String, u64, u64)> {
        let t = &p.tree;
        let mut path: Vec<String> = vec![String::new(); t.len()];
        let mut out = Vec::new();
        for n in 0..t.len() as NodeId {
            let name = p.names.get(t.name(n));
            if n > 0 {
                path[n as usize] = format!("{};{name}", path[t.parent(n) as usize]);
            }
            out.push((path[n as usize].clone(), t.total(n), t.self_ticks(n)));
        }
        out.sort();
        out
    }

    /// Issue 15: a preview of a big flamebearer file is its head's whole levels, closed as
    /// a document of its own: the whole profile's top levels, node for node, with the
    /// metadata (units, diff or not) found at the end of the file.
    #[test]
    fn the_head_is_the_top_levels_of_the_whole() {
        let mut rng = Rng(5);
        let (mut heads, mut cut_levels, mut diffs) = (0, 0, 0);
        for case in 0..60 {
            let diff = case % 3 == 0;
            let doc = random_doc(&mut rng, diff).replace(
                r#""units":"samples""#,
                r#""units":"bytes","spyName":"rbspy""#,
            );
            // (The generator's diff rows may not add up: those files fail whole.)
            let Ok(whole) = parse_whole("w.json", doc.as_bytes()) else {
                continue;
            };
            let depth = whole.tree.max_depth();
            for budget in 0..=doc.len() {
                let Some((head, read)) = head_document(doc.as_bytes(), budget) else {
                    continue;
                };
                assert!(read <= budget);
                let p = parse("h.json", &head).unwrap_or_else(|e| {
                    panic!(
                        "case {case} at {budget}: {e}\n{}",
                        String::from_utf8_lossy(&head)
                    )
                });
                let d = p.tree.max_depth();
                let want: Vec<_> = paths(&whole)
                    .into_iter()
                    .filter(|(path, ..)| path.matches(';').count() <= d as usize)
                    .collect();
                assert_eq!(paths(&p), want, "case {case} at {budget}");
                assert_eq!(p.is_diff(), diff);
                diffs += usize::from(diff);
                assert_eq!(p.values.unit, whole.values.unit, "case {case} at {budget}");
                assert_eq!(p.meta.spy_name.as_deref(), Some("rbspy"));
                heads += 1;
                cut_levels += usize::from(d < depth);
            }
        }
        assert!(
            heads > 5000 && cut_levels > 1000 && diffs > 500,
            "{heads} {cut_levels} {diffs}"
        );
        // Names after the levels: the head has none to give.
        let late = r#"{"flamebearer":{"levels":[[0,10,0,0],[0,10,10,1]],"names":["a","b"]}}"#;
        assert!(
            head_document(late.as_bytes(), 30).is_none_or(|(d, _)| parse("l.json", &d).is_err())
        );
        // Damaged files: no panic, whatever the head.
        for _ in 0..3000 {
            let mut bad = random_doc(&mut rng, false).into_bytes();
            let at = (rng.next() % bad.len() as u64) as usize;
            bad[at] = b"[]{}\",0"[(rng.next() % 7) as usize];
            let budget = (rng.next() % bad.len() as u64) as usize;
            if let Some((d, _)) = head_document(&bad, budget) {
                let _ = parse("d.json", &d);
            }
        }
    }
}
