//! Pass 2: the samples, in file order, into a call tree; a location's frames resolved
//! once, on its first use.

use super::SkippedSamples;
use super::tables::{IdMap, NONE, RawLocation, Strings, Tables};
use super::wire::{Fields, Pb, PbError, Value, err, for_each_int};
use crate::import::Progress;
use crate::import::chunks::ChunkProgress;
use crate::model::{CallTree, CallTreeBuilder, ChildOrder, NO_PARENT, NameId, Names, NodeId};
use std::ops::Range;

pub(super) const UNRESOLVED: u32 = u32::MAX;

/// What resolving a location's frames reads.
pub(super) struct FrameContext<'a> {
    pub(super) tables: &'a Tables,
    pub(super) strings: &'a Strings<'a>,
    /// Per line (as `Tables::line_functions`), the function's index or [`NONE`].
    pub(super) line_function: &'a [u32],
    /// Per location, its mapping's index or [`NONE`].
    pub(super) location_mapping: &'a [u32],
    /// Location ids to indices.
    pub(super) locations: &'a IdMap,
    /// The whole input.
    pub(super) data: &'a [u8],
    /// Sample types declared.
    pub(super) n_types: u64,
}

/// What the samples pass built.
pub(super) struct SamplePass {
    pub(super) names: Names,
    pub(super) tree: CallTree,
    pub(super) skipped: SkippedSamples,
    /// Per sample type, the sum of its positive values (saturating), for choosing another
    /// type when the chosen one is 0 everywhere.
    pub(super) positive: Vec<u64>,
    /// Bytes of top-level fields read (all of them but for a preview).
    pub(super) read: u64,
}

/// How the samples pass may split its work.
#[derive(Clone, Copy, Debug)]
pub(super) struct Parallel {
    /// Parts at most (one per core).
    pub(super) threads: usize,
    /// Inputs smaller than this are read in one part.
    pub(super) min_bytes: usize,
    /// A preview: only this many runs of samples (64 KiB each, from across the input).
    pub(super) slices: Option<usize>,
}

impl Parallel {
    /// One part per core for inputs of 8 MiB or more (as folded stacks).
    pub(super) fn cores() -> Parallel {
        Parallel {
            threads: crate::par::cores(),
            min_bytes: crate::import::folded::PARALLEL_MIN_BYTES,
            slices: None,
        }
    }
}

/// Pass 2: every sample, in file order, into a call tree of sample type `chosen` (its
/// values multiplied by `scale`). A large input's samples are read in parts, one per core
/// (cut at sample fields that pass 1 marked), each into a call tree of its own with its
/// own names and location cache, and the trees joined in file order
/// ([`CallTreeBuilder::merge_from`]): the profile is the one a single pass makes.
pub(super) fn samples_pass(
    ctx: &FrameContext<'_>,
    chosen: usize,
    scale: u64,
    progress: Option<&Progress>,
    par: Parallel,
) -> Pb<SamplePass> {
    let end = ctx.tables.end;
    let marks = &ctx.tables.sample_marks;
    if let Some(n) = par.slices {
        // A preview: `n` runs of samples spread evenly over the input, each from one mark
        // to the next, in one part.
        let n = n.min(marks.len());
        let ranges: Vec<Range<usize>> = (0..n)
            .map(|i| {
                let k = i * marks.len() / n;
                marks[k]..marks.get(k + 1).copied().unwrap_or(end)
            })
            .collect();
        let part = part_pass(ctx, chosen, scale, &ranges, progress)?;
        return finish_parts(ctx, part);
    }
    let mut bounds = vec![0usize];
    if par.threads > 1 && ctx.data.len() >= par.min_bytes {
        for k in 1..par.threads {
            let target = end / par.threads * k;
            let i = marks.partition_point(|&m| m < target);
            if let Some(&m) = marks.get(i)
                && m > *bounds.last().expect("non-empty")
            {
                bounds.push(m);
            }
        }
    }
    bounds.push(end);
    let parts = crate::import::chunks::run(&bounds, |_, a, b| {
        part_pass(ctx, chosen, scale, std::slice::from_ref(&(a..b)), progress)
    });
    let mut parts = parts.into_iter();
    let mut first = parts.next().expect("one part at least")?;
    for part in parts {
        let part = part?;
        crate::import::folded::merge_nodes(&mut first.b, &mut first.names, &part.b, &part.names)
            .map_err(|_| overflow(part.first_at))?;
        first.skipped.absorb(part.skipped);
        first.read += part.read;
        for (sum, v) in first.sample.positive.iter_mut().zip(&part.sample.positive) {
            *sum = sum.saturating_add(*v);
        }
        if first.b.len() > first.node_limit {
            return node_limit_error(part.first_at, first.node_limit);
        }
    }
    finish_parts(ctx, first)
}

/// The call tree of the part all were joined into.
fn finish_parts(ctx: &FrameContext<'_>, joined: Part) -> Pb<SamplePass> {
    let Part {
        names,
        b,
        skipped,
        sample,
        read,
        ..
    } = joined;
    let tree = b
        .finish(&names, ChildOrder::ByName)
        .map_err(|_| overflow(ctx.data.len()))?;
    Ok(SamplePass {
        names,
        tree,
        skipped,
        positive: sample.positive,
        read: read as u64,
    })
}

/// One part's samples, in its own call tree and names.
struct Part {
    names: Names,
    b: CallTreeBuilder,
    skipped: SkippedSamples,
    sample: Sample,
    node_limit: usize,
    /// The part's first byte (where a limit crossed only by joining parts is reported).
    first_at: usize,
    /// Bytes of top-level fields read.
    read: usize,
}

/// The samples among the top-level fields in `ranges` (whole fields each), in order.
fn part_pass(
    ctx: &FrameContext<'_>,
    chosen: usize,
    scale: u64,
    ranges: &[Range<usize>],
    progress: Option<&Progress>,
) -> Pb<Part> {
    let data = ctx.data;
    let mut names = Names::new();
    let mut b = CallTreeBuilder::new(&mut names, false);
    let mut placer = Placer::new(ctx);
    let mut sample = Sample::new(ctx.n_types);
    let mut skipped = SkippedSamples::default();
    let n_types = ctx.n_types;
    let mut report = ChunkProgress::new(progress);
    let first_at = ranges.first().map_or(0, |r| r.start);
    let mut read = 0;
    for range in ranges {
        let mut top = Fields::new(data, range.clone(), "Profile");
        while let Some(x) = top.next()? {
            if x.number != 2 {
                continue;
            }
            let Value::Bytes(s, e) = x.value else {
                continue; // checked in pass 1
            };
            report.at(read + s - range.start);
            let (n_values, value) = sample.read(data, s..e, chosen)?;
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
            if let Some(id) = placer.path_of(ctx, &sample.ids) {
                skipped.note(0, || {
                    format!("the sample at byte {} refers to location {id}", x.at)
                });
                continue;
            }
            let node = placer.place(ctx, &mut b, &mut names, x.at)?;
            b.add_self(node, ticks).map_err(|_| overflow(x.at))?;
        }
        read += range.len();
    }
    Ok(Part {
        names,
        b,
        skipped,
        sample,
        node_limit: placer.node_limit,
        first_at,
        read,
    })
}

/// More call-tree nodes than `limit` (reported at byte `at`).
fn node_limit_error<T>(at: usize, limit: usize) -> Pb<T> {
    err(
        at,
        format!(
            "the samples expand to more than {limit} call-tree nodes (4 per input \
             byte): locations with many inline lines repeated along deep stacks"
        ),
    )
}

fn overflow(at: usize) -> PbError {
    PbError {
        at,
        message: "the sum of the sample values exceeds 2^64".to_string(),
        cut: false,
    }
}

/// A sample's location ids (reused: nothing is allocated per sample), and per sample type
/// the sum of its positive values over all samples (to find a type with values).
struct Sample {
    ids: Vec<u64>,
    positive: Vec<u64>,
}

impl Sample {
    fn new(n_types: u64) -> Sample {
        Sample {
            ids: Vec::new(),
            positive: vec![0u64; n_types as usize],
        }
    }

    /// Reads the `Sample` message in `range`: its location ids into `self.ids`; returns
    /// the number of values and value `chosen`.
    fn read(&mut self, data: &[u8], range: Range<usize>, chosen: usize) -> Pb<(u64, u64)> {
        self.ids.clear();
        let (ids, positive) = (&mut self.ids, &mut self.positive);
        let mut n_values = 0u64;
        let mut value = 0u64;
        let mut f = Fields::new(data, range, "Sample");
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
        Ok((n_values, value))
    }
}

/// Places samples' stacks in the call tree, reusing what the previous sample and the
/// locations' last placements found.
struct Placer {
    frames: Frames,
    /// Per location, the parent it was last placed under and the node it led to: samples
    /// of real profiles come in no useful order, but a location mostly recurs under the
    /// same caller, and this skips hashing its frames again.
    memo: Vec<(NodeId, NodeId)>,
    /// Locations with many lines, repeated along a stack, multiply: a small file could
    /// ask for billions of nodes. Real profiles make well under one node per input byte
    /// (W1 of TARGETS.md, the densest, makes 0.14), so four per byte only stops such
    /// bombs.
    node_limit: usize,
    /// This sample's location indices, root first.
    path: Vec<u32>,
    prev_path: Vec<u32>,
    prev_nodes: Vec<NodeId>,
}

impl Placer {
    fn new(ctx: &FrameContext<'_>) -> Placer {
        let locations = ctx.tables.locations.len();
        Placer {
            frames: Frames {
                function_name: vec![UNRESOLVED; ctx.tables.functions.len()],
                location_frames: vec![(UNRESOLVED, 0); locations],
                flat: Vec::new(),
            },
            memo: vec![(NO_PARENT, 0); locations],
            node_limit: ctx.data.len().saturating_mul(4).saturating_add(1 << 20),
            path: Vec::new(),
            prev_path: Vec::new(),
            prev_nodes: Vec::new(),
        }
    }

    /// The location indices of `ids` (leaf first) into the path, root first; the first id
    /// no location has, if any.
    fn path_of(&mut self, ctx: &FrameContext<'_>, ids: &[u64]) -> Option<u64> {
        self.path.clear();
        for &id in ids.iter().rev() {
            match ctx.locations.get(id) {
                Some(i) => self.path.push(i),
                None => return Some(id),
            }
        }
        None
    }

    /// The node of the path: the nodes of the locations shared with the previous sample
    /// are reused, a location placed under the same parent as last time leads to the same
    /// node, the rest is found or made frame by frame. `at`: the sample's byte offset.
    fn place(
        &mut self,
        ctx: &FrameContext<'_>,
        b: &mut CallTreeBuilder,
        names: &mut Names,
        at: usize,
    ) -> Pb<NodeId> {
        let common = self
            .path
            .iter()
            .zip(&self.prev_path)
            .take_while(|(a, b)| a == b)
            .count();
        self.prev_nodes.truncate(common);
        let mut node = if common == 0 {
            0
        } else {
            self.prev_nodes[common - 1]
        };
        let mut fresh = false;
        for &loc in &self.path[common..] {
            let (memo_parent, memo_node) = self.memo[loc as usize];
            if memo_parent == node {
                node = memo_node;
                self.prev_nodes.push(node);
                continue;
            }
            let parent = node;
            let (start, len) = self.frames.of_location(loc, ctx, names)?;
            for &name in &self.frames.flat[start as usize..(start + len) as usize] {
                node = b.path_child(node, name, &mut fresh);
            }
            self.memo[loc as usize] = (parent, node);
            self.prev_nodes.push(node);
            if b.len() > self.node_limit {
                return node_limit_error(at, self.node_limit);
            }
        }
        std::mem::swap(&mut self.prev_path, &mut self.path);
        Ok(node)
    }
}

/// Frame names per location, resolved on first use.
pub(super) struct Frames {
    /// Per function, its interned name; [`UNRESOLVED`] until needed (and for functions
    /// without a name, which take their location's address instead).
    pub(super) function_name: Vec<NameId>,
    /// Per location, `(start, len)` of its frames in `flat`, root side first.
    pub(super) location_frames: Vec<(u32, u32)>,
    pub(super) flat: Vec<NameId>,
}

impl Frames {
    /// `(start, len)` in `flat` of location `loc`'s frames, outermost caller first.
    pub(super) fn of_location(
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
    pub(super) fn function_name(
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
pub(super) fn address(
    l: &RawLocation,
    loc: u32,
    ctx: &FrameContext<'_>,
    names: &mut Names,
) -> Pb<NameId> {
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
