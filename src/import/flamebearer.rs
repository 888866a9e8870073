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
    crate::import::chrome::scan::array_cuts(text, start, usize::MAX).map(|(end, _)| end)
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
    let text_rows = match &levels {
        Levels::Text(t, offset) => Some(LevelText::new(file, text, t, *offset)),
        Levels::Parsed(_) => None,
    };
    let parsed_rows = match &levels {
        Levels::Parsed(rows) => rows.iter(),
        Levels::Text(..) => [].iter(),
    };
    let mut linker: Option<Linker> = None;
    // Links row `li` under the rows before it; a buffer for another row.
    let mut link = |li: usize, row: Row| -> Result<Row, ImportError> {
        match &mut linker {
            None if row.bars.is_empty() => Err(no_bars()),
            None => {
                let l =
                    Linker::start(&f, row, &name_ids, &mut b).map_err(|(l, m)| invalid(l, m))?;
                Ok(linker.insert(l).spare())
            }
            Some(l) => {
                l.row(&f, li, row, &name_ids, &mut b)
                    .map_err(|(l, m)| invalid(l, m))?;
                Ok(l.spare())
            }
        }
    };
    let pipelined = matches!(levels, Levels::Text(t, _) if t.len() >= pipeline_min())
        && crate::par::cores() > 1;
    let mut rows = Rows {
        f: &f,
        text: text_rows,
        parsed: parsed_rows,
        invalid: &invalid,
    };
    let read = if pipelined {
        read_pipelined(&mut rows, &mut link)
    } else {
        (|| -> Result<(), ImportError> {
            let mut row = Row::default();
            let mut li = 0usize;
            while rows.decode(li, &mut row)? {
                row = link(li, row)?;
                li += 1;
            }
            Ok(())
        })()
    };
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

/// `levels` text of at least this size is decoded on another thread while rows are
/// linked ([`read_pipelined`]).
const PIPELINE_MIN_BYTES: usize = 8 << 20;

#[cfg(test)]
thread_local! {
    /// The size from which a test's levels are read pipelined (0: all of them).
    static PIPELINE_MIN: std::cell::Cell<usize> = const { std::cell::Cell::new(PIPELINE_MIN_BYTES) };
}

fn pipeline_min() -> usize {
    #[cfg(test)]
    return PIPELINE_MIN.with(std::cell::Cell::get);
    #[cfg(not(test))]
    PIPELINE_MIN_BYTES
}

/// The levels, row by row: from the text (a lifted array) or as serde parsed them.
struct Rows<'r, 'a> {
    f: &'r Flat<'a>,
    text: Option<LevelText<'r>>,
    parsed: std::slice::Iter<'r, Vec<Num>>,
    invalid: &'r (dyn Fn(String, String) -> ImportError + Sync),
}

impl Rows<'_, '_> {
    /// Level `li`'s numbers decoded into `row` (cleared first), each bar checked on its
    /// own; false past the last level.
    fn decode(&mut self, li: usize, row: &mut Row) -> Result<bool, ImportError> {
        let (f, invalid) = (self.f, self.invalid);
        row.clear();
        let mut dec = RowDecoder::new(f, li);
        let more = match &mut self.text {
            Some(t) => match t.fast_row(|v| dec.push(v, row).map_err(|(l, m)| invalid(l, m)))? {
                RowRead::End => false,
                RowRead::Done => true,
                RowRead::Slow(start) => {
                    // Read again by serde, from the row's start.
                    row.clear();
                    dec = RowDecoder::new(f, li);
                    t.slow_row(start, |v| dec.push(v, row).map_err(|(l, m)| invalid(l, m)))?;
                    true
                }
            },
            None => match self.parsed.next() {
                Some(nums) => {
                    for n in nums {
                        dec.push(n.0, row).map_err(|(l, m)| invalid(l, m))?;
                    }
                    true
                }
                None => false,
            },
        };
        if more {
            dec.finish().map_err(|(l, m)| invalid(l, m))?;
        }
        Ok(more)
    }
}

/// The rows decoded on another thread while this one links them (`link` gives back a
/// buffer, which returns to the decoder): row `li + 1`'s numbers are read while row `li`
/// is linked, one decoded row waiting at most. Errors come in file order: a row's
/// decoding error arrives after every row before it was linked, and a linking error stops
/// the decoder.
fn read_pipelined(
    rows: &mut Rows<'_, '_>,
    link: &mut impl FnMut(usize, Row) -> Result<Row, ImportError>,
) -> Result<(), ImportError> {
    std::thread::scope(|s| {
        // Made in here, so that returning drops the receiver (a decoder waiting to send
        // stops) before the scope waits for the decoder.
        let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Option<Row>, ImportError>>(1);
        let (back, spares) = std::sync::mpsc::channel::<Row>();
        s.spawn(move || {
            let mut li = 0usize;
            loop {
                let mut row = spares.try_recv().unwrap_or_default();
                let msg = match rows.decode(li, &mut row) {
                    Ok(true) => Ok(Some(row)),
                    Ok(false) => Ok(None),
                    Err(e) => Err(e),
                };
                let last = !matches!(msg, Ok(Some(_)));
                if tx.send(msg).is_err() || last {
                    return;
                }
                li += 1;
            }
        });
        let mut li = 0usize;
        // A decoder that stopped without a word panicked: the scope raises it again.
        while let Ok(msg) = rx.recv() {
            let Some(row) = msg? else {
                return Ok(());
            };
            let _ = back.send(link(li, row)?);
            li += 1;
        }
        Ok(())
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
mod tests;
