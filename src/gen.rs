//! Deterministic synthetic inputs: the workloads W1–W7 of `TARGETS.md`, for benchmarks
//! and the `scorch gen` command.
//!
//! | id | default output | shape |
//! |---|---|---|
//! | W1 | folded, 1 GB | mean depth 30 (max 60), 20 000 distinct 40-byte names |
//! | W2 | folded, 500 MB | mean depth 400, max 800, and 1 % of stacks 1 000 deep |
//! | W3 | folded, 500 MB | W1's shape with 300-byte C++/Rust template names |
//! | W4 | folded, 500 MB | depth 2–8, 200 000 distinct short names |
//! | W5 | Chrome JSON, 100 M spans | 50 rows (threads) of back-to-back 1–16 µs `X` spans |
//! | W6 | Chrome JSON, 450 MB | 8 threads of nested spans, half `X`, half `B`/`E` pairs |
//! | W7 | Chrome JSON, 100 M spans | 1 000 threads × 100 k nested `X` spans |
//!
//! W1–W4 can also be written as `perf script` text (`GenFormat::Perf`): the same stacks,
//! leaf first, one sample block each, the root frame as the command and the count as
//! the period, so inferno-collapse-perf and scorch fold them back to the same stacks.
//! Or as an uncompressed pprof protobuf (`GenFormat::Pprof`), shaped like a Go CPU
//! profile: sample types `samples/count` and `cpu/nanoseconds` at a 10 ms period, one
//! function and one location per distinct frame, one sample per stack line (location ids
//! leaf first, packed); the samples stream out as they are made, and the functions,
//! locations and string table (of the frames used) follow them, as Go writes them after
//! the samples too.
//!
//! Everything is streamed: the output is written as it is generated, with memory
//! bounded by the name table and one stack, so a 10 GB file costs no more RAM than a
//! 10 MB one. Stack lines come out in a random-walk order in which consecutive stacks
//! share a prefix (as sorted `stackcollapse` output does), not sorted, which would need
//! the whole output in memory. The same seed gives the same bytes on every machine
//! (SplitMix64, no floating point in what is written).
//!
//! Chrome JSON is compact, one event per line inside a `traceEvents` array, with
//! timestamps in microseconds with three decimals (exact nanoseconds).

use std::io::{self, Write};

/// A workload of `TARGETS.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// Typical folded profile.
    W1,
    /// Deep stacks.
    W2,
    /// Long template names.
    W3,
    /// Flat, many distinct frames.
    W4,
    /// Huge timeline: 100 M spans in 50 rows.
    W5,
    /// Chrome JSON with `X` and `B`/`E` events.
    W6,
    /// Many threads.
    W7,
}

impl Workload {
    /// Parses `w1`..`w7` (any case).
    pub fn parse(s: &str) -> Option<Workload> {
        Some(match s.to_ascii_lowercase().as_str() {
            "w1" => Workload::W1,
            "w2" => Workload::W2,
            "w3" => Workload::W3,
            "w4" => Workload::W4,
            "w5" => Workload::W5,
            "w6" => Workload::W6,
            "w7" => Workload::W7,
            _ => return None,
        })
    }

    /// True for the aggregated-stack workloads (W1–W4).
    pub fn is_stacks(self) -> bool {
        matches!(
            self,
            Workload::W1 | Workload::W2 | Workload::W3 | Workload::W4
        )
    }

    /// The size `TARGETS.md` gives the workload.
    pub fn default_limit(self) -> Limit {
        match self {
            Workload::W1 => Limit::Bytes(1_000_000_000),
            Workload::W2 | Workload::W3 | Workload::W4 => Limit::Bytes(500_000_000),
            Workload::W5 | Workload::W7 => Limit::Spans(100_000_000),
            Workload::W6 => Limit::Bytes(450_000_000),
        }
    }
}

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GenFormat {
    /// Folded stacks (W1–W4).
    Folded,
    /// `perf script` text (W1–W4).
    Perf,
    /// Chrome Trace Event JSON (W5–W7).
    Chrome,
    /// pprof protobuf, uncompressed (W1–W4).
    Pprof,
}

/// When to stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Stop after the line or event that reaches this many bytes.
    Bytes(u64),
    /// This many stack lines/samples (W1–W4) or spans (W5–W7).
    Spans(u64),
}

/// What to generate.
#[derive(Clone, Copy, Debug)]
pub struct GenOptions {
    /// The workload.
    pub workload: Workload,
    /// The format [default: folded for W1–W4, Chrome JSON for W5–W7].
    pub format: Option<GenFormat>,
    /// Seed of the random generator.
    pub seed: u64,
    /// Size [default: the workload's].
    pub limit: Option<Limit>,
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenReport {
    /// Bytes written.
    pub bytes: u64,
    /// Stack lines/samples (W1–W4) or spans (W5–W7) written.
    pub items: u64,
}

/// Parses a byte size: `123`, `64K`, `500M`, `1G`, `2T` (powers of 1000), `KiB`, `MiB`,
/// `GiB` (powers of 1024); a `B` suffix and a decimal fraction (`1.5G`) are accepted.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let t = t.strip_suffix(['B', 'b']).unwrap_or(t);
    let (num, mult): (&str, f64) = if let Some(n) = t.strip_suffix("Ki").or(t.strip_suffix("ki")) {
        (n, 1024.0)
    } else if let Some(n) = t.strip_suffix("Mi").or(t.strip_suffix("mi")) {
        (n, 1024.0 * 1024.0)
    } else if let Some(n) = t.strip_suffix("Gi").or(t.strip_suffix("gi")) {
        (n, 1024.0 * 1024.0 * 1024.0)
    } else if let Some(n) = t.strip_suffix(['K', 'k']) {
        (n, 1e3)
    } else if let Some(n) = t.strip_suffix(['M', 'm']) {
        (n, 1e6)
    } else if let Some(n) = t.strip_suffix(['G', 'g']) {
        (n, 1e9)
    } else if let Some(n) = t.strip_suffix(['T', 't']) {
        (n, 1e12)
    } else {
        (t, 1.0)
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("not a size: {s:?} (expected e.g. 200M, 1G, 4096)"))?;
    if !(v.is_finite() && v >= 0.0) || v * mult > 1e18 {
        return Err(format!("size out of range: {s:?}"));
    }
    Ok((v * mult).round() as u64)
}

/// SplitMix64: tiny, fast and the same everywhere (the seeded generator of the
/// workloads and of the crate's randomized tests).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Counts the bytes passed through.
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes the workload to `out` (buffer it: many small writes are made).
pub fn generate<W: Write>(opts: &GenOptions, out: W) -> io::Result<GenReport> {
    let format = opts.format.unwrap_or(if opts.workload.is_stacks() {
        GenFormat::Folded
    } else {
        GenFormat::Chrome
    });
    let limit = opts.limit.unwrap_or(opts.workload.default_limit());
    let mut out = Counting {
        inner: out,
        bytes: 0,
    };
    let mut rng = Rng(opts.seed ^ 0x5c04_c400_0000);
    let items = match (opts.workload.is_stacks(), format) {
        (true, GenFormat::Folded | GenFormat::Perf | GenFormat::Pprof) => {
            stacks(opts.workload, format, limit, &mut rng, &mut out)?
        }
        (false, GenFormat::Chrome) => chrome(opts.workload, limit, &mut rng, &mut out)?,
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{:?} is written as {}",
                    opts.workload,
                    if opts.workload.is_stacks() {
                        "folded stacks, perf script or pprof"
                    } else {
                        "Chrome JSON"
                    }
                ),
            ));
        }
    };
    out.flush()?;
    Ok(GenReport {
        bytes: out.bytes,
        items,
    })
}

fn reached(limit: Limit, bytes: u64, items: u64) -> bool {
    match limit {
        Limit::Bytes(b) => bytes >= b,
        Limit::Spans(n) => items >= n,
    }
}

/// The frame names of a stack workload.
fn frame_names(w: Workload) -> Vec<String> {
    match w {
        Workload::W1 | Workload::W2 => (0..20_000)
            .map(|i| {
                // Exactly 40 bytes.
                format!("module_{:04}::component::function_{i:06}", i % 997)
            })
            .collect(),
        Workload::W3 => (0..20_000)
            .map(|i| {
                let mut s = format!(
                    "std::collections::hash::map::HashMap<alloc::string::String, \
                     alloc::vec::Vec<core::option::Option<crate_{:03}::module_{:04}::Type_{i:06}<\
                     std::sync::Arc<tokio::sync::Mutex<Box<dyn core::any::Any + Send + Sync>>>>>>, \
                     std::hash::random::RandomState>::get_or_insert_with::<closure_{i:06}>",
                    i % 131,
                    i % 997
                );
                // Exactly 300 bytes.
                while s.len() < 300 {
                    s.push('_');
                }
                s.truncate(300);
                s
            })
            .collect(),
        _ => (0..200_000).map(|i| format!("f{i:x}")).collect(),
    }
}

/// Depth of the next stack, the root (command) frame included: at least 2, so every
/// perf sample has a frame.
fn stack_depth(w: Workload, rng: &mut Rng) -> usize {
    match w {
        Workload::W2 => {
            if rng.below(100) == 0 {
                1000
            } else {
                (rng.below(201) + rng.below(201) + rng.below(401)).max(2) as usize
            }
        }
        Workload::W4 => 2 + rng.below(7) as usize,
        _ => (rng.below(21) + rng.below(21) + rng.below(21)).max(2) as usize,
    }
}

/// Commands of the perf variant (the root frame).
const COMMANDS: [&str; 4] = ["server", "worker", "compactor", "gc"];

/// W1–W4: a random walk over a skewed tree of frames. Each stack keeps a prefix of the
/// previous one (long prefixes are likely, as in sorted profiles) and extends it.
fn stacks<W: Write>(
    w: Workload,
    format: GenFormat,
    limit: Limit,
    rng: &mut Rng,
    out: &mut Counting<W>,
) -> io::Result<u64> {
    let perf = format == GenFormat::Perf;
    let names = frame_names(w);
    let mut pprof = (format == GenFormat::Pprof).then(|| PprofWriter::new(names.len()));
    if let Some(p) = &mut pprof {
        p.header(out)?;
    }
    let n_names = names.len() as u64;
    // Per depth: the tree node (a path hash) and its name index.
    let mut nodes: Vec<u64> = Vec::new();
    let mut frame: Vec<usize> = Vec::new();
    let mut items = 0u64;
    let mut time_ns = 1_000_000_000u64;
    // Perf-only fields draw from their own stream, so both formats get the same stacks.
    let mut deco = Rng(rng.next());
    while !reached(limit, out.bytes, items) {
        let depth = stack_depth(w, rng);
        // Keep a prefix: usually most of the shared part.
        let shared = depth.min(nodes.len());
        let keep = if shared == 0 {
            0
        } else {
            shared - (rng.below(shared as u64 + 1) * rng.below(4) / 3) as usize
        };
        nodes.truncate(keep);
        frame.truncate(keep);
        // The root frame comes from a handful (one per command in perf).
        if nodes.is_empty() {
            let root = rng.below(COMMANDS.len() as u64);
            nodes.push(root);
            frame.push(root as usize);
        }
        while nodes.len() < depth {
            let parent = *nodes.last().expect("non-empty");
            let fanout = if nodes.len() < 8 { 3 } else { 12 };
            let node = parent
                .wrapping_mul(0x100_0000_01b3)
                .wrapping_add(1 + rng.below(fanout));
            nodes.push(node);
            frame.push(((node >> 7) % n_names) as usize);
        }
        let count = 1 + rng.below(50);
        if let Some(p) = &mut pprof {
            p.sample(out, &frame, count)?;
        } else if perf {
            time_ns += 1000 + deco.below(1_000_000);
            let cmd = COMMANDS[frame[0] % COMMANDS.len()];
            writeln!(
                out,
                "{cmd} {}/{} [{:03}] {}.{:06}: {count} cycles:",
                1000 + frame[0],
                1000 + frame[0] * 7 + (deco.below(4) as usize),
                deco.below(16),
                time_ns / 1_000_000_000,
                (time_ns / 1000) % 1_000_000
            )?;
            for d in (1..frame.len()).rev() {
                let f = frame[d];
                writeln!(
                    out,
                    "\t{:16x} {}+0x{:x} (/usr/lib/lib{}.so)",
                    0x7f00_0000_0000u64 + (f as u64) * 0x40 + (d as u64 & 7),
                    names[f],
                    (d * 13) & 0xfff,
                    f % 37
                )?;
            }
            out.write_all(b"\n")?;
        } else {
            out.write_all(COMMANDS[frame[0] % COMMANDS.len()].as_bytes())?;
            for &f in &frame[1..] {
                out.write_all(b";")?;
                out.write_all(names[f].as_bytes())?;
            }
            writeln!(out, " {count}")?;
        }
        items += 1;
    }
    if let Some(p) = pprof {
        p.finish(out, &names)?;
    }
    Ok(items)
}

/// The CPU sampling period of generated pprof profiles (Go's default, 100 Hz).
const PPROF_PERIOD_NS: u64 = 10_000_000;

/// Streams a pprof `Profile`: header, samples, then the tables of what was used.
///
/// String indices, function ids and location ids are one number per frame, given in
/// order of first use (the commands first): index `k` of the string table is the frame's
/// name, and function `k` and location `k` are that frame.
struct PprofWriter {
    /// Per frame name, its string index (0: not used yet).
    name_id: Vec<u32>,
    /// Frame names in order of first use, as indices into the workload's names.
    used: Vec<usize>,
    /// Strings before the frame names: "", the sample and period types, the commands.
    fixed: Vec<&'static str>,
    /// Sum of the sample counts, for `duration_nanos`.
    total_count: u64,
    /// Reused encoding buffers.
    message: Vec<u8>,
    packed: Vec<u8>,
}

/// Protobuf varint.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field.
fn put_field(out: &mut Vec<u8>, field: u64, payload: &[u8]) {
    put_varint(out, (field << 3) | 2);
    put_varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// A varint field.
fn put_int(out: &mut Vec<u8>, field: u64, v: u64) {
    put_varint(out, field << 3);
    put_varint(out, v);
}

impl PprofWriter {
    fn new(n_names: usize) -> Self {
        let mut fixed = vec!["", "samples", "count", "cpu", "nanoseconds"];
        fixed.extend(COMMANDS);
        PprofWriter {
            name_id: vec![0; n_names],
            total_count: 0,
            used: Vec::new(),
            fixed,
            message: Vec::new(),
            packed: Vec::new(),
        }
    }

    /// String index (and function and location id) of command `c`.
    fn command_id(c: usize) -> u64 {
        5 + c as u64
    }

    fn header<W: Write>(&mut self, out: &mut W) -> io::Result<()> {
        let mut m = Vec::new();
        for (ty, unit) in [(1, 2), (3, 4)] {
            let mut vt = Vec::new();
            put_int(&mut vt, 1, ty);
            put_int(&mut vt, 2, unit);
            put_field(&mut m, 1, &vt);
        }
        let mut period_type = Vec::new();
        put_int(&mut period_type, 1, 3);
        put_int(&mut period_type, 2, 4);
        put_field(&mut m, 11, &period_type);
        put_int(&mut m, 12, PPROF_PERIOD_NS);
        put_int(&mut m, 9, 1_700_000_000_000_000_000);
        out.write_all(&m)
    }

    /// One sample: `frame[0]` is the command, the rest index the names, root first.
    fn sample<W: Write>(&mut self, out: &mut W, frame: &[usize], count: u64) -> io::Result<()> {
        self.packed.clear();
        for &f in frame[1..].iter().rev() {
            if self.name_id[f] == 0 {
                self.used.push(f);
                self.name_id[f] = (self.fixed.len() + self.used.len() - 1) as u32;
            }
            put_varint(&mut self.packed, u64::from(self.name_id[f]));
        }
        put_varint(
            &mut self.packed,
            Self::command_id(frame[0] % COMMANDS.len()),
        );
        self.message.clear();
        put_field(&mut self.message, 1, &self.packed);
        self.total_count += count;
        self.packed.clear();
        put_varint(&mut self.packed, count);
        put_varint(&mut self.packed, count * PPROF_PERIOD_NS);
        put_field(&mut self.message, 2, &self.packed);
        let mut head = Vec::with_capacity(8);
        put_varint(&mut head, 2 << 3 | 2);
        put_varint(&mut head, self.message.len() as u64);
        out.write_all(&head)?;
        out.write_all(&self.message)
    }

    /// Functions, locations and the string table of the frames used.
    fn finish<W: Write>(self, out: &mut W, names: &[String]) -> io::Result<()> {
        let mut m = Vec::new();
        let ids = (0..COMMANDS.len())
            .map(Self::command_id)
            .chain((0..self.used.len()).map(|i| (self.fixed.len() + i) as u64));
        for id in ids {
            let mut f = Vec::new();
            put_int(&mut f, 1, id);
            put_int(&mut f, 2, id);
            put_field(&mut m, 5, &f);
            let mut line = Vec::new();
            put_int(&mut line, 1, id);
            let mut l = Vec::new();
            put_int(&mut l, 1, id);
            put_int(&mut l, 3, 0x40_0000 + id * 0x40);
            put_field(&mut l, 4, &line);
            put_field(&mut m, 4, &l);
            if m.len() > 1 << 16 {
                out.write_all(&m)?;
                m.clear();
            }
        }
        put_int(&mut m, 10, self.total_count * PPROF_PERIOD_NS);
        for s in &self.fixed {
            put_field(&mut m, 6, s.as_bytes());
        }
        for &f in &self.used {
            put_field(&mut m, 6, names[f].as_bytes());
            if m.len() > 1 << 16 {
                out.write_all(&m)?;
                m.clear();
            }
        }
        out.write_all(&m)
    }
}

/// Writes `ns` as microseconds with three decimals (exact).
fn write_us<W: Write>(out: &mut W, ns: u64) -> io::Result<()> {
    write!(out, "{}.{:03}", ns / 1000, ns % 1000)
}

/// One Chrome event line; `first` decides the separator.
#[allow(clippy::too_many_arguments)]
fn event<W: Write>(
    out: &mut W,
    first: &mut bool,
    name: &str,
    ph: u8,
    ts_ns: u64,
    dur_ns: Option<u64>,
    pid: u32,
    tid: u32,
) -> io::Result<()> {
    out.write_all(if *first { b"\n" } else { b",\n" })?;
    *first = false;
    write!(
        out,
        "{{\"name\":\"{name}\",\"ph\":\"{}\",\"ts\":",
        ph as char
    )?;
    write_us(out, ts_ns)?;
    if let Some(d) = dur_ns {
        out.write_all(b",\"dur\":")?;
        write_us(out, d)?;
    }
    write!(out, ",\"pid\":{pid},\"tid\":{tid}}}")
}

/// An open span of the nested generators.
struct Open {
    name: usize,
    start_ns: u64,
    begin_end: bool,
}

impl Open {
    /// Writes what closes this span at `end_ns`: an `E` event, or the whole `X` event.
    fn close<W: Write>(
        &self,
        out: &mut W,
        first: &mut bool,
        name: &str,
        end_ns: u64,
        tid: u32,
    ) -> io::Result<()> {
        if self.begin_end {
            event(out, first, name, b'E', end_ns, None, 1, tid)
        } else {
            let dur = end_ns - self.start_ns;
            event(out, first, name, b'X', self.start_ns, Some(dur), 1, tid)
        }
    }
}

/// W5–W7 as Chrome Trace Event JSON.
fn chrome<W: Write>(
    w: Workload,
    limit: Limit,
    rng: &mut Rng,
    out: &mut Counting<W>,
) -> io::Result<u64> {
    let names: Vec<String> = (0..2000)
        .map(|i| {
            format!(
                "{}::step_{i:04}",
                ["io", "db", "render", "net", "parse"][i % 5]
            )
        })
        .collect();
    out.write_all(b"{\"traceEvents\":[")?;
    let mut first = true;
    let mut items = 0u64;
    match w {
        Workload::W5 => {
            // 50 rows of back-to-back spans, all far narrower than a pixel at full view.
            let rows = 50u64;
            let mut cursor = vec![0u64; rows as usize];
            while !reached(limit, out.bytes, items) {
                let row = (items % rows) as usize;
                let dur = 1000 + rng.below(15_000);
                let name = &names[rng.below(names.len() as u64) as usize];
                event(
                    out,
                    &mut first,
                    name,
                    b'X',
                    cursor[row],
                    Some(dur),
                    1,
                    row as u32,
                )?;
                cursor[row] += dur + rng.below(500);
                items += 1;
            }
        }
        Workload::W6 | Workload::W7 => {
            let (threads, max_depth) = if w == Workload::W6 {
                (8usize, 24usize)
            } else {
                (1000, 6)
            };
            let mut stacks: Vec<Vec<Open>> = (0..threads).map(|_| Vec::new()).collect();
            let mut clock = vec![0u64; threads];
            let mut t = 0usize;
            while !reached(limit, out.bytes, items) {
                // Round-robin over threads, a few steps each.
                for _ in 0..4 {
                    let stack = &mut stacks[t];
                    clock[t] += 100 + rng.below(5000);
                    let push = stack.is_empty() || (stack.len() < max_depth && rng.below(2) == 0);
                    if push {
                        let begin_end = w == Workload::W6 && rng.below(2) == 0;
                        let name = rng.below(names.len() as u64) as usize;
                        if begin_end {
                            event(
                                out,
                                &mut first,
                                &names[name],
                                b'B',
                                clock[t],
                                None,
                                1,
                                t as u32,
                            )?;
                        }
                        stack.push(Open {
                            name,
                            start_ns: clock[t],
                            begin_end,
                        });
                    } else if let Some(o) = stack.pop() {
                        o.close(out, &mut first, &names[o.name], clock[t], t as u32)?;
                        items += 1;
                    }
                }
                t = (t + 1) % threads;
            }
            // Close what is still open, innermost first.
            for (t, stack) in stacks.iter_mut().enumerate() {
                while let Some(o) = stack.pop() {
                    clock[t] += 100;
                    o.close(out, &mut first, &names[o.name], clock[t], t as u32)?;
                    items += 1;
                }
            }
        }
        _ => unreachable!("stack workloads are not Chrome JSON"),
    }
    out.write_all(b"\n],\"displayTimeUnit\":\"ns\"}\n")?;
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{self, Limits};
    use crate::model::SourceFormat;

    fn gen_bytes(w: Workload, format: Option<GenFormat>, seed: u64, limit: Limit) -> Vec<u8> {
        let mut v = Vec::new();
        let r = generate(
            &GenOptions {
                workload: w,
                format,
                seed,
                limit: Some(limit),
            },
            &mut v,
        )
        .unwrap();
        assert_eq!(r.bytes, v.len() as u64);
        v
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1G"), Ok(1_000_000_000));
        assert_eq!(parse_size("500M"), Ok(500_000_000));
        assert_eq!(parse_size("200MB"), Ok(200_000_000));
        assert_eq!(parse_size("1.5k"), Ok(1500));
        assert_eq!(parse_size("2MiB"), Ok(2 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("-1M").is_err());
    }

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        for w in [
            Workload::W1,
            Workload::W2,
            Workload::W3,
            Workload::W4,
            Workload::W5,
            Workload::W6,
            Workload::W7,
        ] {
            let a = gen_bytes(w, None, 7, Limit::Bytes(1_000_000));
            let b = gen_bytes(w, None, 7, Limit::Bytes(1_000_000));
            let c = gen_bytes(w, None, 8, Limit::Bytes(1_000_000));
            assert_eq!(a, b, "{w:?}");
            assert_ne!(a, c, "{w:?}");
            // Size honoured: at least the limit, plus at most one item (a deep stack) or,
            // for W7, the end events of the spans still open on its 1 000 threads.
            assert!(
                a.len() >= 1_000_000 && a.len() < 1_300_000,
                "{w:?}: {}",
                a.len()
            );
        }
    }

    #[test]
    fn stack_workloads_parse_as_folded_and_perf_with_the_same_stacks() {
        for w in [Workload::W1, Workload::W2, Workload::W3, Workload::W4] {
            let folded = gen_bytes(w, Some(GenFormat::Folded), 3, Limit::Spans(300));
            let perf = gen_bytes(w, Some(GenFormat::Perf), 3, Limit::Spans(300));
            let f = import::load_bytes("w.folded", &folded, Limits::default()).unwrap();
            let p = import::load_bytes("w.perf", &perf, Limits::default()).unwrap();
            assert_eq!(f.meta.format, SourceFormat::Folded);
            assert_eq!(p.meta.format, SourceFormat::PerfScript);
            assert!(f.meta.warnings.is_empty() && p.meta.warnings.is_empty());
            assert_eq!(f.tree.grand_total(), p.tree.grand_total(), "{w:?}");
            assert_eq!(f.tree.len(), p.tree.len(), "{w:?}");
            assert_eq!(f.tree.max_depth(), p.tree.max_depth(), "{w:?}");
        }
        let w2 = gen_bytes(Workload::W2, None, 1, Limit::Spans(2000));
        let p = import::load_bytes("w2", &w2, Limits::default()).unwrap();
        assert!(p.tree.max_depth() >= 800, "{}", p.tree.max_depth());
    }

    #[test]
    fn stack_workloads_as_pprof_give_the_folded_tree() {
        for w in [Workload::W1, Workload::W2, Workload::W3, Workload::W4] {
            let folded = gen_bytes(w, Some(GenFormat::Folded), 5, Limit::Spans(400));
            let pprof = gen_bytes(w, Some(GenFormat::Pprof), 5, Limit::Spans(400));
            let f = import::load_bytes("w.folded", &folded, Limits::default()).unwrap();
            let cpu = import::load_bytes("w.pb", &pprof, Limits::default()).unwrap();
            assert_eq!(cpu.meta.format, SourceFormat::Pprof);
            assert!(cpu.meta.warnings.is_empty(), "{:?}", cpu.meta.warnings);
            // The default type is cpu/nanoseconds: 10 ms per sample.
            assert_eq!(cpu.tree.grand_total(), f.tree.grand_total() * 10_000_000);
            assert_eq!(cpu.values.unit, crate::model::Unit::Nanoseconds);
            let opts = import::ImportOptions {
                sample_type: Some("samples"),
                ..import::ImportOptions::default()
            };
            let Ok(import::Imported::Profile(n)) =
                import::load_any_bytes_with_options("w.pb", &pprof, opts)
            else {
                panic!("not a profile");
            };
            assert_eq!(n.tree.grand_total(), f.tree.grand_total(), "{w:?}");
            assert_eq!(n.tree.len(), f.tree.len(), "{w:?}");
            assert_eq!(n.tree.max_depth(), f.tree.max_depth(), "{w:?}");
            assert_eq!(n.names.len(), f.names.len(), "{w:?}");
            assert_eq!(n.values.sample_rate_hz, Some(100));
        }
        // Size honoured, deterministic.
        let a = gen_bytes(
            Workload::W1,
            Some(GenFormat::Pprof),
            9,
            Limit::Bytes(1_000_000),
        );
        let b = gen_bytes(
            Workload::W1,
            Some(GenFormat::Pprof),
            9,
            Limit::Bytes(1_000_000),
        );
        assert_eq!(a, b);
        assert!(a.len() >= 1_000_000 && a.len() < 2_500_000, "{}", a.len());
    }

    #[test]
    fn chrome_workloads_are_valid_json_with_balanced_events() {
        for (w, n) in [
            (Workload::W5, 5000u64),
            (Workload::W6, 5000),
            (Workload::W7, 5000),
        ] {
            let bytes = gen_bytes(w, None, 1, Limit::Spans(n));
            let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            let events = v["traceEvents"].as_array().unwrap();
            let spans = events
                .iter()
                .filter(|e| e["ph"] == "X" || e["ph"] == "B")
                .count();
            let ends = events.iter().filter(|e| e["ph"] == "E").count();
            let begins = events.iter().filter(|e| e["ph"] == "B").count();
            assert!(spans as u64 >= n, "{w:?}: {spans}");
            assert_eq!(begins, ends, "{w:?}");
            if w == Workload::W6 {
                assert!(begins > 0 && spans > begins);
            }
            // One event per line.
            assert_eq!(
                bytes.iter().filter(|&&b| b == b'\n').count(),
                events.len() + 2
            );
        }
    }
}
