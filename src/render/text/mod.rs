//! Text with glyphon: labels inside bars, the title line, legend captions.
//!
//! The font is DejaVu Sans, bundled in `data/fonts/` and loaded into an empty font
//! database: no system font scan at startup, and every machine renders the same glyphs, so
//! golden images are stable across machines.
//!
//! Fitting a label into a bar needs its width: [`TextLayer::measure`] shapes a string once
//! and caches the x extent of every glyph, so truncating a long name to
//! `prefix…` is a search over cached positions, and only the final string is shaped again
//! for drawing. A frame is `clear`, `push`…, `prepare`, `render` (glyphon's phases), and
//! `trim` now and then. The layer is also the [`crate::view::draw::Measure`] views fit
//! their labels with.

use super::ahead::{Ahead, TAKE_PER_FRAME};
use super::glyphs::{GlyphQuads, Part, Run};
use crate::geometry::{ceil_i32, floor_i32};
use crate::model::Names;
use crate::model::names::NameId;
use crate::view::draw::{
    Cut as LabelCut, Label, LabelFit, Measure as MeasureText, NameFit, NameLabel, line_height,
};
use clock::LabelClock;
use glyphon::{Attrs, Buffer, Family, FontSystem, Metrics, Shaping, SwashCache, Wrap};
use std::borrow::Cow;
use std::collections::HashMap;

/// The text caches' maps: looked up several times per label per frame, so with a fast
/// hash rather than the default SipHash.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Shaped labels kept by [`TextLayer`], per generation (see [`Generations`]).
const SHAPED_CAP: usize = 2048;
/// Measured strings kept (each keeps its glyph ends), per generation.
const MEASURED_CAP: usize = 8192;
/// Cut labels remembered with the text they were cut from, per generation.
const CUTS_CAP: usize = 8192;
/// Longest text (bytes) whose cuts are drawn from its own run: a longer one's cut is
/// shaped by itself (a 20 MB name's run would be its first 8192 characters).
const CUT_SOURCE_MAX: usize = 512;

/// A cache of strings at font sizes in two generations: new entries and hits go into the
/// current one; once it holds `cap` entries it becomes the previous one and the older
/// previous one is dropped. What the last frames used stays (a frame never finds the
/// cache emptied under it and every label to shape again), and memory stays within
/// twice `cap` entries however long the window zooms.
struct Generations<V> {
    cap: usize,
    len: usize,
    current: FastMap<u32, FastMap<String, V>>,
    previous: FastMap<u32, FastMap<String, V>>,
}

impl<V: Clone> Generations<V> {
    fn new(cap: usize) -> Self {
        Generations {
            cap,
            len: 0,
            current: FastMap::default(),
            previous: FastMap::default(),
        }
    }

    /// The entry of `text` at `size` (moved into the current generation).
    fn get(&mut self, size: f32, text: &str) -> Option<V> {
        self.get_with(size, text, V::clone)
    }

    /// What `f` reads from the entry of `text` at `size` (moved into the current
    /// generation), without cloning it.
    fn get_with<R>(&mut self, size: f32, text: &str, f: impl Fn(&V) -> R) -> Option<R> {
        let size = size.to_bits();
        if let Some(v) = self.current.get(&size).and_then(|m| m.get(text)) {
            return Some(f(v));
        }
        let (k, v) = self.previous.get_mut(&size)?.remove_entry(text)?;
        let r = f(&v);
        self.put(size, k, v);
        Some(r)
    }

    fn insert(&mut self, size: f32, text: &str, v: V) {
        self.put(size.to_bits(), text.to_string(), v);
    }

    fn put(&mut self, size: u32, text: String, v: V) {
        if self.len >= self.cap {
            self.previous = std::mem::take(&mut self.current);
            self.len = 0;
        }
        if self
            .current
            .entry(size)
            .or_default()
            .insert(text, v)
            .is_none()
        {
            self.len += 1;
        }
    }

    /// Every string held.
    #[cfg(test)]
    fn keys(&self) -> impl Iterator<Item = &String> {
        self.current
            .values()
            .chain(self.previous.values())
            .flat_map(|m| m.keys())
    }
}

/// The bundled font.
pub const FONT_BYTES: &[u8] = include_bytes!("../../../data/fonts/DejaVuSans.ttf");
/// Its family name.
pub const FONT_FAMILY: &str = "DejaVu Sans";
/// The ellipsis appended to truncated labels.
pub use crate::view::draw::ELLIPSIS;
/// [`ELLIPSIS`], the one character.
const ELLIPSIS_CHAR: char = '…';
const _: () = assert!(ELLIPSIS.len() == ELLIPSIS_CHAR.len_utf8());

/// The most characters of one text that are measured, shaped or drawn: more than fit
/// across the widest texture a GPU offers (16 384 px) at the narrowest glyph of the
/// smallest label size (2 px), so a 20 MB frame name costs what a long one does. A longer
/// text is drawn as its first (or, cut at the start, its last) characters and an
/// ellipsis.
pub const MAX_TEXT_CHARS: usize = 8192;

/// Characters drawn escaped: control characters and the line and paragraph separators,
/// which would break a label over lines or draw as nothing.
fn escaped(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// `text` as it is drawn: control characters escaped as Rust writes them (a newline as
/// `\n`, a tab as `\t`, others as `\u{1b}`), and at most [`MAX_TEXT_CHARS`] characters,
/// the first ones (the last ones with `from_end`); the flag says whether some were left
/// out.
pub fn drawable(text: &str, from_end: bool) -> (Cow<'_, str>, bool) {
    // Printable ASCII (most names) is drawn as it is, found without decoding characters.
    if text.len() <= MAX_TEXT_CHARS
        && (text.bytes().all(|b| (0x20..0x7f).contains(&b)) || !text.chars().any(escaped))
    {
        return (Cow::Borrowed(text), false);
    }
    let mut out: Vec<char> = Vec::with_capacity(text.len().min(MAX_TEXT_CHARS));
    let mut capped = false;
    let chars: Box<dyn Iterator<Item = char>> = if from_end {
        Box::new(text.chars().rev())
    } else {
        Box::new(text.chars())
    };
    for c in chars {
        let start = out.len();
        if escaped(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
        if out.len() > MAX_TEXT_CHARS {
            out.truncate(start);
            capped = true;
            break;
        }
        if from_end {
            out[start..].reverse();
        }
    }
    if from_end {
        out.reverse();
    }
    (Cow::Owned(out.into_iter().collect()), capped)
}

/// The largest char boundary of `text` at or before `i`.
fn floor_boundary(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Where each glyph of a shaped string ends.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Measure {
    /// Total advance width in pixels.
    pub width: f32,
    /// For each glyph in order: the x of its right edge and the byte offset where it ends.
    pub ends: Vec<(f32, usize)>,
}

impl Measure {
    /// The longest prefix (a byte offset on a glyph boundary) whose width is at most `w`.
    pub fn prefix_fitting(&self, w: f32) -> usize {
        let i = self.glyphs_before(|x| x <= w);
        if i == 0 { 0 } else { self.ends[i - 1].1 }
    }

    /// How many glyphs, from the first, have a right edge `x` with `keep(x)` (`keep`
    /// holds for a prefix of the glyphs: their edges only grow). A label's name is a
    /// few cache lines of glyph ends, read in order: a scan runs ahead of the memory,
    /// where a binary search waits for each line in turn.
    fn glyphs_before(&self, keep: impl Fn(f32) -> bool) -> usize {
        if self.ends.len() <= 64 {
            self.ends.iter().take_while(|e| keep(e.0)).count()
        } else {
            self.ends.partition_point(|e| keep(e.0))
        }
    }

    /// Where the longest suffix (starting on a glyph boundary) whose width is at most
    /// `w` starts, as a byte offset; the text's length when no glyph fits.
    pub fn suffix_start_fitting(&self, w: f32) -> usize {
        if self.width <= w {
            return 0;
        }
        let from = self.width - w;
        let i = self.glyphs_before(|x| x < from);
        self.ends
            .get(i)
            .map_or_else(|| self.ends.last().map_or(0, |e| e.1), |e| e.1)
    }
}

struct Item {
    run: Arc<Run>,
    part: Part,
    left: f32,
    top: f32,
    bounds: [i32; 4],
    color: u32,
}

/// Where a text's items go: its origin, clip bounds (left, top, right, bottom) and
/// color (0xAARRGGBB).
#[derive(Clone, Copy)]
struct Place {
    left: f32,
    top: f32,
    bounds: [i32; 4],
    color: u32,
}

impl Place {
    /// An item drawing `part` of `run` with its origin at `left`.
    fn item(&self, run: Arc<Run>, part: Part, left: f32) -> Item {
        Item {
            run,
            part,
            left,
            top: self.top,
            bounds: self.bounds,
            color: self.color,
        }
    }
}

/// A label [`Shaper::cut`] made, drawn from the run of the text it was cut from: the
/// glyphs it keeps where they are in that run, and the ellipsis before or after them.
#[derive(Clone, Debug)]
struct Cut {
    /// The text cut (as [`drawable`] made it).
    source: Arc<str>,
    /// `prefix…` (else `…suffix`).
    head: bool,
    /// The byte offset of the cut in `source`.
    at: usize,
}

/// Tables of [`NameMeasures`] a shaper keeps.
const NAME_TABLES: usize = 4;
/// Runs a name table keeps by id, besides those shaped ahead: labels of names found
/// past it are drawn through the caches of strings.
const NAME_RUNS_CAP: usize = 8192;

/// A name's measure in a [`NameMeasures`], and the run its labels are drawn from.
struct NameEntry {
    /// Its glyph ends.
    m: Arc<Measure>,
    /// Whether from shaping (else an estimate, shaped when a frame has the time, as
    /// [`Shaper::measure`] does).
    exact: bool,
    /// Its glyphs (of the layer's glyph table), once shaped for drawing.
    run: Option<Arc<Run>>,
}

/// Measures of names by id, for one interner ([`Names::uid`]) at one size: a label loop
/// finds a name's width and cut without hashing or comparing its text. Names drawn other
/// than as they are (escaped or capped, see [`drawable`]) are not kept.
#[derive(Default)]
struct NameMeasures {
    /// The interner's uid and the size's bits.
    key: (u64, u32),
    /// Each name's measure and run.
    by_id: FastMap<NameId, NameEntry>,
    /// Runs kept in `by_id` (at most [`NAME_RUNS_CAP`]).
    runs_kept: usize,
    /// Whether its names were sent to be shaped ahead ([`Ahead`]).
    ahead_started: bool,
    /// The thread shaping them, until every batch has been taken.
    ahead: Option<Ahead>,
    /// The runs of the names shaped ahead, by text: their labels are drawn without
    /// shaping them in the frame (see [`TextLayer::run`]). Emptied with the glyph table.
    runs: FastMap<Box<str>, Arc<Run>>,
}

/// Which plane of a [`crate::view::draw::Frame`] a piece of text belongs to: labels and
/// titles are drawn under overlay rectangles (tooltips, menus), overlay text above them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// Bar labels, title, legend.
    Base = 0,
    /// Text of overlays drawn over everything.
    Overlay = 1,
}

/// Measuring text with the bundled font, without a GPU: the [`MeasureText`] that views
/// fit their labels with.
pub struct Shaper {
    font_system: FontSystem,
    /// Per size: each string's measure, and whether it came from shaping (`false`: an
    /// estimate from summed advances, made when a frame had no time to shape).
    measures: Generations<(Arc<Measure>, bool)>,
    /// Advance of each [`PLAIN`] character by size.
    advances: FastMap<(char, u32), f32>,
    /// The advances of ASCII characters at the two sizes asked last (NaN: not looked up
    /// yet), the most recent first: a duration label adds half a dozen of them, found
    /// here without hashing.
    ascii: [AsciiAdvances; 2],
    /// How long this frame may spend shaping new strings (`None`: no limit); see
    /// [`TextLayer::begin_frame`].
    budget: Option<Duration>,
    /// Time this frame spent shaping so far (counted only under a budget).
    spent: Duration,
    /// Strings this frame measured approximately or left undrawn for lack of time.
    deferred: usize,
    /// Labels cut by [`MeasureText::cut`], by the text drawn.
    cuts: Generations<Cut>,
    /// Measures of names by id (see [`MeasureText::name_width`]).
    /// The most recent last, at most [`NAME_TABLES`]: views side by side draw the names
    /// of two interners, or at two sizes, in one frame.
    names: Vec<NameMeasures>,
    /// The ellipsis's width at the last size asked (a single glyph: its summed advance
    /// is its shaped width, so never an estimate).
    ellipsis: Option<(u32, f32)>,
}

/// Advances of the ASCII characters at one size.
struct AsciiAdvances {
    size: u32,
    advance: [f32; 128],
}

impl AsciiAdvances {
    fn new(size: u32) -> AsciiAdvances {
        AsciiAdvances {
            size,
            advance: [f32::NAN; 128],
        }
    }
}

/// Shaping, caching and drawing of text.
pub struct TextLayer {
    shaper: Shaper,
    swash: SwashCache,
    quads: GlyphQuads,
    /// Shaped strings kept across frames: a window redrawn for a hover change reshapes
    /// nothing.
    shaped: Generations<Arc<Run>>,
    /// Runs of single characters by character and size: the digits and units numbers
    /// are drawn with, and the ellipsis, found without hashing a string.
    chars: FastMap<(char, u32), Arc<Run>>,
    /// The runs of ASCII characters of `chars` at the size asked last, found without
    /// hashing (the digits of every duration label).
    ascii_runs: (u32, Vec<Option<Arc<Run>>>),
    /// The ellipsis's run at the size asked last (every cut label draws one).
    ellipsis: Option<(u32, Arc<Run>)>,
    /// The glyph table's epoch the runs of `shaped` and `chars` belong to.
    epoch: u64,
    items: [Vec<Item>; 2],
    /// The label deadline of a frame drawn while the view moves
    /// ([`TextLayer::limit_labels`]).
    clock: LabelClock,
}

/// Font system with only the bundled font.
pub fn font_system() -> FontSystem {
    let mut db = glyphon::fontdb::Database::new();
    db.load_font_data(FONT_BYTES.to_vec());
    db.set_sans_serif_family(FONT_FAMILY);
    FontSystem::new_with_locale_and_db("en-US".to_string(), db)
}

fn attrs() -> Attrs<'static> {
    Attrs::new().family(Family::Name(FONT_FAMILY))
}

/// Characters whose advances add up to exactly the width shaping gives a string of them
/// in the bundled font (no kerning pairs or ligatures among them; `plain_sums_equal_shaping`
/// checks every pair).
pub const PLAIN: &str = "0123456789 .,:%()+-×/µnsmhdaiMB";

/// The ASCII characters of [`PLAIN`], as a bit set.
const PLAIN_ASCII: u128 = {
    let b = PLAIN.as_bytes();
    let mut set = 0u128;
    let mut i = 0;
    while i < b.len() {
        if b[i] < 128 {
            set |= 1 << b[i];
        }
        i += 1;
    }
    set
};

fn is_plain_char(c: char) -> bool {
    match c {
        c if (c as u32) < 128 => PLAIN_ASCII & (1 << c as u32) != 0,
        'µ' | '×' => true,
        _ => false,
    }
}

pub(super) fn is_plain(text: &str) -> bool {
    !text.is_empty() && text.chars().all(is_plain_char)
}

pub(super) fn shape(fs: &mut FontSystem, text: &str, size: f32) -> Buffer {
    let mut b = Buffer::new(fs, Metrics::new(size, line_height(size)));
    b.set_wrap(Wrap::None);
    b.set_size(None, None);
    b.set_text(text, &attrs(), Shaping::Advanced, None);
    b.shape_until_scroll(fs, false);
    b
}

/// Glyph extents of `text` from shaping it.
fn measure_shaped(fs: &mut FontSystem, text: &str, size: f32) -> Measure {
    measure_of(&shape(fs, text, size))
}

/// Glyph extents of a shaped text.
pub(super) fn measure_of(b: &Buffer) -> Measure {
    let mut m = Measure::default();
    for run in b.layout_runs() {
        m.width = m.width.max(run.line_w);
        for g in run.glyphs {
            m.ends.push((g.x + g.w, g.end));
        }
    }
    m.ends.sort_by_key(|e| e.1);
    // Keep x monotonic for the prefix search (ligatures can reorder slightly).
    let mut max_x = 0.0f32;
    for e in &mut m.ends {
        max_x = max_x.max(e.0);
        e.0 = max_x;
    }
    m
}

impl Default for Shaper {
    fn default() -> Self {
        Shaper::new()
    }
}

impl Shaper {
    /// A shaper with the bundled font and empty caches.
    pub fn new() -> Shaper {
        Shaper {
            font_system: font_system(),
            measures: Generations::new(MEASURED_CAP),
            advances: FastMap::default(),
            ascii: [AsciiAdvances::new(0), AsciiAdvances::new(0)],
            budget: None,
            spent: Duration::ZERO,
            deferred: 0,
            cuts: Generations::new(CUTS_CAP),
            ellipsis: None,
            names: Vec::new(),
        }
    }

    /// Whether this frame may still shape a new string; counts one deferred otherwise.
    /// Only time spent shaping counts against the budget, not the rest of the frame:
    /// a frame that lays out thousands of cached labels still shapes its few new ones.
    fn may_shape(&mut self) -> bool {
        let ok = self.deferred == 0 && self.budget.is_none_or(|b| self.spent < b);
        if !ok {
            self.deferred += 1;
        }
        ok
    }

    /// Runs `shape`, adding the time it takes to this frame's shaping when under a
    /// budget.
    fn timed<T>(&mut self, shape: impl FnOnce(&mut FontSystem) -> T) -> T {
        if self.budget.is_none() {
            return shape(&mut self.font_system);
        }
        let t = Instant::now();
        let out = shape(&mut self.font_system);
        self.spent += t.elapsed();
        out
    }

    /// Advance of the [`PLAIN`] character `c` at `size` (cached).
    fn advance(&mut self, c: char, size: f32) -> f32 {
        let bits = size.to_bits();
        let k = c as usize;
        if k < 128 {
            if self.ascii[0].size != bits {
                self.ascii.swap(0, 1);
                if self.ascii[0].size != bits {
                    self.ascii[0] = AsciiAdvances::new(bits);
                }
            }
            let a = self.ascii[0].advance[k];
            if !a.is_nan() {
                return a;
            }
            let a = self.advance_of(c, size);
            self.ascii[0].advance[k] = a;
            return a;
        }
        self.advance_of(c, size)
    }

    /// [`Shaper::advance`] from the map of all advances (shaped once per character and
    /// size).
    fn advance_of(&mut self, c: char, size: f32) -> f32 {
        let key = (c, size.to_bits());
        if let Some(&a) = self.advances.get(&key) {
            return a;
        }
        let mut buf = [0u8; 4];
        let a = self.timed(|fs| measure_shaped(fs, c.encode_utf8(&mut buf), size).width);
        self.advances.insert(key, a);
        a
    }

    /// `text` measured by adding per-character advances (exact for [`PLAIN`] text, a
    /// close estimate for other text, whose kerning it leaves out).
    fn summed(&mut self, text: &str, size: f32) -> Measure {
        let mut m = Measure::default();
        let mut x = 0.0f32;
        for (i, c) in text.char_indices() {
            x += self.advance(c, size);
            m.ends.push((x, i + c.len_utf8()));
        }
        m.width = x;
        m
    }

    /// Whether the name `id` of `names` has its measure in [`Shaper::names`] at `size`
    /// (measured now if need be). Otherwise: the estimate a frame out of time made of
    /// it (what measuring its text gives for the rest of the frame), or `None` for a
    /// name drawn other than as it is, measured by its text.
    fn name_known(
        &mut self,
        names: &Names,
        id: NameId,
        size: f32,
    ) -> Result<(), Option<Arc<Measure>>> {
        self.use_names(names, size);
        match self.name_table().by_id.get(&id) {
            Some(e) if e.exact => return Ok(()),
            Some(e) => {
                let m = e.m.clone();
                if !self.may_shape() {
                    return Err(Some(m));
                }
            }
            None => {}
        }
        let text = names.get(id);
        if !matches!(drawable(text, false), (Cow::Borrowed(_), false)) {
            return Err(None);
        }
        let before = self.deferred;
        let m = self.measure(text, size);
        // Out of time: an estimate, measured again once a frame has the time.
        let exact = self.deferred == before;
        let table = self.name_table();
        if table.by_id.len() >= 2 * MEASURED_CAP {
            table.by_id.clear();
            table.runs_kept = 0;
        }
        let run = table.by_id.remove(&id).and_then(|e| e.run);
        table.by_id.insert(
            id,
            NameEntry {
                m: m.clone(),
                exact,
                run,
            },
        );
        if exact { Ok(()) } else { Err(Some(m)) }
    }

    /// The measure of the name `id` of `names` at `size` ([`Shaper::name_known`]):
    /// `None` for a name drawn other than as it is, measured by its text.
    fn name_measure(&mut self, names: &Names, id: NameId, size: f32) -> Option<Arc<Measure>> {
        match self.name_known(names, id, size) {
            Ok(()) => self.name_table().by_id.get(&id).map(|e| e.m.clone()),
            Err(m) => m,
        }
    }

    /// The run kept for the name `id` of the interner `names` at `size`.
    fn name_run(&self, names: u64, size: f32, id: NameId) -> Option<Arc<Run>> {
        let key = (names, size.to_bits());
        let t = self.names.iter().rev().find(|t| t.key == key)?;
        t.by_id.get(&id)?.run.clone()
    }

    /// Keeps `run` for the name `id` of `names` at `size`, where its table and measure
    /// are (and the table keeps fewer than [`NAME_RUNS_CAP`]).
    fn keep_name_run(&mut self, names: u64, size: f32, id: NameId, run: &Arc<Run>) {
        let key = (names, size.to_bits());
        if let Some(t) = self.names.iter_mut().rev().find(|t| t.key == key)
            && t.runs_kept < NAME_RUNS_CAP
            && let Some(e) = t.by_id.get_mut(&id)
            && e.run.is_none()
        {
            e.run = Some(run.clone());
            t.runs_kept += 1;
        }
    }

    /// Makes the name table of `names` at `size` the current one ([`Shaper::name_table`]),
    /// a new one if need be; in a window frame, a new table has its names shaped ahead
    /// on a thread ([`Ahead`]).
    fn use_names(&mut self, names: &Names, size: f32) {
        let key = (names.uid(), size.to_bits());
        // The table of every label of a loop after its first.
        if self
            .names
            .last()
            .is_some_and(|t| t.key == key && (t.ahead_started || self.budget.is_none()))
        {
            return;
        }
        match self.names.iter().rposition(|t| t.key == key) {
            Some(i) if i + 1 == self.names.len() => {}
            Some(i) => {
                let t = self.names.remove(i);
                self.names.push(t);
            }
            None => {
                if self.names.len() >= NAME_TABLES {
                    self.names.remove(0);
                }
                self.names.push(NameMeasures {
                    key,
                    ..NameMeasures::default()
                });
            }
        }
        // Only window frames, which have a shaping limit: an export shapes every name
        // it draws anyway. A table dropped for newer ones takes its job and runs along.
        let window = self.budget.is_some();
        let table = self.name_table();
        if window && !table.ahead_started {
            table.ahead_started = true;
            table.ahead = Ahead::start(names, size);
        }
    }

    /// The name measures [`Shaper::name_known`] chose last.
    fn name_table(&mut self) -> &mut NameMeasures {
        if self.names.is_empty() {
            self.names.push(NameMeasures::default());
        }
        let last = self.names.len() - 1;
        &mut self.names[last]
    }

    /// The label [`MeasureText::cut`] makes of `shown` (as [`drawable`] made it) cut at
    /// the byte offset `at` (the end of the prefix kept, or the start of the suffix);
    /// `None` when nothing is kept.
    fn cut_at(&mut self, part: LabelFit, shown: &str, at: usize, size: f32) -> Option<String> {
        // Glyph ends are char boundaries of a text of one line, which `drawable` makes;
        // rounding down keeps a slice valid whatever shaping reports.
        let at = floor_boundary(shown, at);
        let label = match part {
            LabelFit::Head if at == 0 => return None,
            LabelFit::Head => format!("{}{ELLIPSIS}", &shown[..at]),
            LabelFit::Tail if at >= shown.len() => return None,
            LabelFit::Tail => format!("{ELLIPSIS}{}", &shown[at..]),
        };
        // Remembered with its source, so drawing it shapes nothing new (see
        // `TextLayer::push_on`).
        if shown.len() <= CUT_SOURCE_MAX && self.cuts.get_with(size, &label, |_| ()).is_none() {
            let cut = Cut {
                source: Arc::from(shown),
                head: part == LabelFit::Head,
                at,
            };
            self.cuts.insert(size, &label, cut);
        }
        Some(label)
    }

    /// Width of [`ELLIPSIS`] at `size`.
    fn ellipsis_width(&mut self, size: f32) -> f32 {
        match self.ellipsis {
            Some((s, w)) if s == size.to_bits() => w,
            _ => {
                let w = self.measure(ELLIPSIS, size).width;
                self.ellipsis = Some((size.to_bits(), w));
                w
            }
        }
    }

    /// Width of `text` at `size` as [`Shaper::measure`] gives it, read from the cache
    /// without taking its measure.
    fn measured_width(&mut self, text: &str, size: f32) -> f32 {
        if is_plain(text) {
            return text.chars().map(|c| self.advance(c, size)).sum();
        }
        match self
            .measures
            .get_with(size, text, |(m, exact)| (m.width, *exact))
        {
            Some((w, true)) => w,
            Some((w, false)) if !self.may_shape() => w,
            _ => self.measure(text, size).width,
        }
    }

    /// Glyph extents of `text` at `size` pixels (cached).
    ///
    /// Numbers (durations, shares, counts) are most of the distinct strings a frame
    /// measures, and new ones appear at every zoom step: those made only of [`PLAIN`]
    /// characters are measured by adding cached per-character advances (exactly what
    /// shaping gives for them, checked by a test) instead of being shaped.
    ///
    /// `text` is measured as given: [`drawable`] is the caller's (the [`MeasureText`]
    /// methods call it).
    pub fn measure(&mut self, text: &str, size: f32) -> Arc<Measure> {
        if is_plain(text) {
            return Arc::new(self.summed(text, size));
        }
        // Looked up by `&str`: no key allocated on the hit path.
        let known = self.measures.get(size, text);
        if let Some((m, exact)) = &known
            && (*exact || !self.may_shape())
        {
            return m.clone();
        }
        // Out of time this frame: an estimate, kept until a frame has the time.
        let (m, exact) = if known.is_none() && !self.may_shape() {
            (Arc::new(self.summed(text, size)), false)
        } else {
            (
                Arc::new(self.timed(|fs| measure_shaped(fs, text, size))),
                true,
            )
        };
        self.measures.insert(size, text, (m.clone(), exact));
        m
    }
}

impl TextLayer {
    /// Creates the glyph atlas and pipeline for targets of `format`. Colors are treated as
    /// sRGB values in a linear texture, as browsers do ("web" color mode).
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> TextLayer {
        TextLayer {
            shaper: Shaper::new(),
            swash: SwashCache::new(),
            quads: GlyphQuads::new(device, format),
            shaped: Generations::new(SHAPED_CAP),
            chars: FastMap::default(),
            ascii_runs: (0, vec![None; 128]),
            ellipsis: None,
            epoch: 0,
            items: [Vec::new(), Vec::new()],
            clock: LabelClock::default(),
        }
    }

    /// Glyph extents of `text` at `size` pixels (cached; see [`Shaper::measure`]).
    pub fn measure(&mut self, text: &str, size: f32) -> Arc<Measure> {
        self.shaper.measure(text, size)
    }

    /// Starts a window frame that may spend about `shaping` on shaping new strings (the
    /// time spent shaping, not the time since this call; `None`: no limit, for
    /// screenshots and exports, which must show every label).
    /// Past that, new labels are left out and new names measured by summed advances
    /// until a later frame has the time: zooming never waits on text, and
    /// [`deferred`](Self::deferred) tells the window to draw again. The limit lasts
    /// until [`end_frame`](Self::end_frame).
    pub fn begin_frame(&mut self, shaping: Option<Duration>) {
        self.shaper.budget = shaping;
        self.shaper.spent = Duration::ZERO;
        self.shaper.deferred = 0;
        self.clock.begin();
        self.take_ahead();
    }

    /// Gives the frame begun with [`begin_frame`](Self::begin_frame) `budget` from now
    /// up to its submit (`None`: no limit, as for screenshots, exports and a window at
    /// rest): its label loops place the widest bars' labels first, while the time spent
    /// plus what drawing the texts placed and the renderer's other work took in recent
    /// frames stays within it ([`crate::view::labels`]), and
    /// [`labels_left`](Self::labels_left) tells the window to draw again when the view
    /// rests. Until [`end_frame`](Self::end_frame).
    pub fn limit_labels(&mut self, budget: Option<Duration>) {
        self.clock.limit(budget);
    }

    /// Until when this frame's work after its labels, before the renderer encodes it
    /// (the rows' pages the window fetches: [`crate::render::bars::PageBudget::frame`]),
    /// may run and the frame still end within the budget of
    /// [`limit_labels`](Self::limit_labels): the budget's end less what the texts placed
    /// and the renderer's other work took in recent frames. `None` without a limit.
    pub fn work_until(&self) -> Option<std::time::Instant> {
        self.clock.work_until()
    }

    /// Bars the current (or last) frame left without their labels for lack of time.
    pub fn labels_left(&self) -> usize {
        self.clock.left()
    }

    /// A frame's renderer took `drawing` to draw its `texts` texts (pushing their items,
    /// preparing their glyph quads) and was done at `done` (its commands encoded). Of
    /// a frame whose labels were timed, kept as running averages: the cost of a text
    /// (over frames of many texts) and the time from the label loops' last look at the
    /// clock to `done` less the drawing, what a timed label loop expects each text it
    /// places and the rest of the frame to take ([`MeasureText::labels_in_time`]).
    pub fn note_drawing(&mut self, drawing: Duration, texts: usize, done: Instant) {
        self.clock.note_drawing(drawing, texts, done);
    }

    /// Takes the names shaped ahead that have arrived, for every name table whose
    /// names are being shaped: their measures and runs into the table; for at most
    /// [`TAKE_PER_FRAME`] (what is left waits for the next frame).
    fn take_ahead(&mut self) {
        let started = std::time::Instant::now();
        for t in 0..self.shaper.names.len() {
            loop {
                if started.elapsed() >= TAKE_PER_FRAME {
                    return;
                }
                let Some(job) = &mut self.shaper.names[t].ahead else {
                    break;
                };
                let (id, text, m, run) = match job.next(&mut self.quads) {
                    Ok(Some(shaped)) => shaped,
                    Ok(None) => break,
                    Err(_) => {
                        self.shaper.names[t].ahead = None;
                        break;
                    }
                };
                let (m, run) = (Arc::new(m), Arc::new(run));
                self.check_epoch();
                let table = &mut self.shaper.names[t];
                table.by_id.insert(
                    id,
                    NameEntry {
                        m,
                        exact: true,
                        run: Some(run.clone()),
                    },
                );
                table.runs.insert(text, run);
            }
        }
    }

    /// After the glyph table was forgotten, forgets the runs made before (they name
    /// other glyphs).
    fn check_epoch(&mut self) {
        if self.quads.epoch() != self.epoch {
            self.epoch = self.quads.epoch();
            self.shaped = Generations::new(SHAPED_CAP);
            self.chars.clear();
            self.ascii_runs.1.fill(None);
            self.ellipsis = None;
            for t in &mut self.shaper.names {
                t.runs.clear();
                t.runs_kept = 0;
                for e in t.by_id.values_mut() {
                    e.run = None;
                }
            }
        }
    }

    /// Ends the frame's shaping limit.
    pub fn end_frame(&mut self) {
        self.shaper.budget = None;
        self.clock.end();
    }

    /// Whether names are being shaped ahead on a thread ([`Ahead`]) and not all taken yet.
    pub fn shaping_ahead(&self) -> bool {
        self.shaper.names.iter().any(|t| t.ahead.is_some())
    }

    /// Strings the current (or last) frame left for later frames.
    pub fn deferred(&self) -> usize {
        self.shaper.deferred
    }

    /// Forgets the previous frame's text.
    pub fn clear(&mut self) {
        self.items[0].clear();
        self.items[1].clear();
    }

    /// Adds `label` at `size` pixels with its top-left at (`left`, `top`), clipped to
    /// `clip` = (left, top, right, bottom), in target pixels, on `layer`; its text as
    /// [`drawable`] makes it, with an ellipsis after a text cut there. A name is drawn
    /// from the run kept for it by id (whole, or the part its cut keeps).
    #[allow(clippy::too_many_arguments)]
    pub fn push_on(
        &mut self,
        layer: Layer,
        label: &Label<'_>,
        size: f32,
        left: f32,
        top: f32,
        clip: [f32; 4],
        color: [u8; 3],
    ) {
        let at = Place {
            left,
            top,
            bounds: [
                floor_i32(clip[0]),
                floor_i32(clip[1]),
                ceil_i32(clip[2]),
                ceil_i32(clip[3]),
            ],
            color: 0xff00_0000
                | (u32::from(color[0]) << 16)
                | (u32::from(color[1]) << 8)
                | u32::from(color[2]),
        };
        if let Some(n) = label.name_label()
            && self.push_name(layer, n, label.source(), size, at)
        {
            return;
        }
        self.push_text(layer, &label.shown(), size, at);
    }

    /// Draws the name label `n`, of text `source`, from the name's run, shaped now if
    /// it is new (and kept by id); false when it is not drawn so (a name drawn other
    /// than as it is, a number, a cut the run cannot show). A label this frame has no
    /// time to shape is left out, as a string would be.
    fn push_name(
        &mut self,
        layer: Layer,
        n: NameLabel,
        source: &str,
        size: f32,
        at: Place,
    ) -> bool {
        let run = match self.shaper.name_run(n.names, size, n.id) {
            Some(run) => run,
            None => {
                let drawn_as_is = matches!(drawable(source, false), (Cow::Borrowed(_), false));
                if !drawn_as_is || is_plain(source) || source.len() > CUT_SOURCE_MAX {
                    return false;
                }
                let Some(run) = self.run(source, size) else {
                    return true;
                };
                self.shaper.keep_name_run(n.names, size, n.id, &run);
                run
            }
        };
        match n.cut {
            None => {
                self.items[layer as usize].push(at.item(run, Part::ALL, at.left));
                true
            }
            Some(c) => self.push_cut(layer, run, source, c.fit == LabelFit::Head, c.at, size, at),
        }
    }

    /// Adds `text` (see [`TextLayer::push_on`]).
    fn push_text(&mut self, layer: Layer, text: &str, size: f32, at: Place) {
        let text = match drawable(text, false) {
            (shown, false) => shown,
            (shown, true) => Cow::Owned(format!("{shown}{ELLIPSIS}")),
        };
        let text = text.as_ref();
        // Numbers (most of a frame's new strings) are drawn a character at a time, each
        // character shaped once: their glyphs land where shaping the whole string puts
        // them (PLAIN characters have no kerning among them), and no zoom step shapes.
        if text.len() > 1 && is_plain(text) {
            let mut x = at.left;
            for c in text.chars() {
                if let Some(run) = self.char_run(c, size) {
                    self.items[layer as usize].push(at.item(run, Part::ALL, x));
                }
                x += self.shaper.advance(c, size);
            }
            return;
        }
        // A label cut to fit: its text's run up to the cut, and the ellipsis.
        if let Some(cut) = self.shaper.cuts.get(size, text)
            && let Some(source) = self.run(&cut.source, size)
            && self.push_cut(
                layer,
                source,
                &cut.source,
                cut.head,
                cut.at as u32,
                size,
                at,
            )
        {
            return;
        }
        if let Some(run) = self.run(text, size) {
            self.items[layer as usize].push(at.item(run, Part::ALL, at.left));
        }
    }

    /// Draws `source` (shaped as `run`) cut at byte `cut`: the part before it and an
    /// ellipsis (`head`), or an ellipsis and the part from it; false when the run cannot
    /// show it so (glyphs out of text order; a last glyph that stands for more than one
    /// character), for the cut string to be shaped instead.
    #[allow(clippy::too_many_arguments)]
    fn push_cut(
        &mut self,
        layer: Layer,
        run: Arc<Run>,
        source: &str,
        head: bool,
        cut: u32,
        size: f32,
        at: Place,
    ) -> bool {
        if !run.ltr {
            return false;
        }
        let ellipsis = match &self.ellipsis {
            Some((s, run)) if *s == size.to_bits() => run.clone(),
            _ => {
                let Some(run) = self.char_run(ELLIPSIS_CHAR, size) else {
                    return false;
                };
                self.ellipsis = Some((size.to_bits(), run.clone()));
                run
            }
        };
        if head {
            // The ellipsis follows the last glyph kept at that glyph's own advance:
            // in the name, its advance is kerned with the next letter, which the
            // cut leaves out.
            let last = run.ending_at(cut).and_then(|g| {
                let mut cs = source.get(g.start as usize..cut as usize)?.chars();
                match (cs.next(), cs.next()) {
                    (Some(c), None) => Some(g.pen + self.shaper.advance(c, size)),
                    _ => None,
                }
            });
            let Some(x) = last else {
                return false;
            };
            let part = Part {
                from: 0,
                to: cut,
                dx: 0.0,
            };
            let items = &mut self.items[layer as usize];
            items.push(at.item(run, part, at.left));
            items.push(at.item(ellipsis, Part::ALL, at.left + x));
        } else {
            let part = Part {
                from: cut,
                to: u32::MAX,
                dx: ellipsis.right_of(u32::MAX) - run.left_of(cut),
            };
            let items = &mut self.items[layer as usize];
            items.push(at.item(ellipsis, Part::ALL, at.left));
            items.push(at.item(run, part, at.left));
        }
        true
    }

    /// `text` shaped at `size` (cached), or `None` when this frame is out of time.
    fn run(&mut self, text: &str, size: f32) -> Option<Arc<Run>> {
        // A name shaped ahead (the tables of the newest interners first), looked up
        // first: most labels are names, and a miss in `shaped` costs two lookups.
        let bits = size.to_bits();
        if let Some(r) = self
            .shaper
            .names
            .iter()
            .rev()
            .filter(|t| t.key.1 == bits && !t.runs.is_empty())
            .find_map(|t| t.runs.get(text))
        {
            return Some(r.clone());
        }
        if let Some(r) = self.shaped.get(size, text) {
            return Some(r);
        }
        if !self.shaper.may_shape() {
            return None;
        }
        let b = self.shaper.timed(|fs| shape(fs, text, size));
        let run = Arc::new(self.quads.run_of(&b));
        self.check_epoch();
        // A run keeps 32 bytes per glyph: a frame draws a few thousand labels at most.
        self.shaped.insert(size, text, run.clone());
        Some(run)
    }

    /// The run of the character `c` at `size` (cached in `chars`: only for the few
    /// characters of numbers and the ellipsis), or `None` when this frame is out of time.
    fn char_run(&mut self, c: char, size: f32) -> Option<Arc<Run>> {
        let bits = size.to_bits();
        let k = c as usize;
        if k < 128 {
            if self.ascii_runs.0 != bits {
                self.ascii_runs.0 = bits;
                self.ascii_runs.1.fill(None);
            }
            if let Some(r) = &self.ascii_runs.1[k] {
                return Some(r.clone());
            }
        }
        let key = (c, bits);
        let run = match self.chars.get(&key) {
            Some(r) => r.clone(),
            None => {
                let mut buf = [0u8; 4];
                let run = self.run(c.encode_utf8(&mut buf), size)?;
                self.chars.insert(key, run.clone());
                run
            }
        };
        // `run` may have emptied the tables (a new glyph epoch): the size is set again.
        if k < 128 {
            self.ascii_runs.0 = bits;
            self.ascii_runs.1[k] = Some(run.clone());
        }
        Some(run)
    }

    /// Number of text items queued for this frame.
    pub fn len(&self) -> usize {
        self.items[0].len() + self.items[1].len()
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Rasterises new glyphs and uploads the queued text's glyph quads for a target of
    /// `width`×`height`.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        width: u32,
        height: u32,
    ) -> Result<(), glyphon::PrepareError> {
        // A full atlas is emptied (and grown while it can be) and the frame placed again;
        // a frame whose glyphs do not fit the largest atlas is an error.
        let mut tries = 0;
        'frame: loop {
            self.quads.begin(width, height);
            for layer in 0..2 {
                for i in &self.items[layer] {
                    let placed = self.quads.push(
                        &mut self.shaper.font_system,
                        &mut self.swash,
                        queue,
                        &i.run,
                        i.part,
                        i.left,
                        i.top,
                        i.bounds,
                        i.color,
                    );
                    if placed.is_err() {
                        tries += 1;
                        if !self.quads.grow(device) && tries > 1 {
                            return Err(glyphon::PrepareError::AtlasFull);
                        }
                        continue 'frame;
                    }
                }
                self.quads.end_layer(layer);
            }
            break;
        }
        self.quads.upload(device, queue);
        Ok(())
    }

    /// Draws the prepared text of `layer`.
    pub fn render(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        layer: Layer,
    ) -> Result<(), glyphon::RenderError> {
        self.quads.render(pass, layer as usize);
        Ok(())
    }

    /// Glyph quads of the last prepared frame.
    pub fn quads(&self) -> usize {
        self.quads.len()
    }

    /// Glyphs known, and the atlas's side in pixels.
    pub fn atlas(&self) -> (usize, u32) {
        (self.quads.glyphs(), self.quads.atlas_size())
    }

    /// Kept for the frame's rhythm: the atlas is emptied when full instead.
    pub fn trim(&mut self) {}
}

impl MeasureText for Shaper {
    fn width(&mut self, text: &str, size: f32) -> f32 {
        // Numbers: summed advances, nothing allocated (a frame measures thousands).
        if is_plain(text) {
            return text.chars().map(|c| self.advance(c, size)).sum();
        }
        let (shown, capped) = drawable(text, false);
        let ellipsis = if capped {
            self.ellipsis_width(size)
        } else {
            0.0
        };
        self.measured_width(&shown, size) + ellipsis
    }

    fn cut(&mut self, part: LabelFit, text: &str, size: f32, max_w: f32) -> Option<String> {
        let (shown, _) = drawable(text, part == LabelFit::Tail);
        let m = self.measure(&shown, size);
        let room = max_w - self.ellipsis_width(size);
        let at = match part {
            LabelFit::Head => m.prefix_fitting(room),
            LabelFit::Tail => m.suffix_start_fitting(room),
        };
        self.cut_at(part, &shown, at, size)
    }

    fn names_ahead(&mut self, names: &Names, size: f32) {
        self.use_names(names, size);
    }

    fn name_width(&mut self, names: &Names, id: NameId, size: f32) -> f32 {
        match self.name_known(names, id, size) {
            Ok(()) => self.name_table().by_id.get(&id).map_or(0.0, |e| e.m.width),
            Err(Some(estimate)) => estimate.width,
            Err(None) => self.width(names.get(id), size),
        }
    }

    fn name_cut<'n>(
        &mut self,
        part: LabelFit,
        names: &'n Names,
        id: NameId,
        size: f32,
        max_w: f32,
    ) -> Option<Label<'n>> {
        let Some(m) = self.name_measure(names, id, size) else {
            return self.cut(part, names.get(id), size, max_w).map(Label::from);
        };
        self.cut_name(part, names, id, &m, size, max_w)
    }

    fn name_fit<'n>(
        &mut self,
        part: LabelFit,
        names: &'n Names,
        id: NameId,
        size: f32,
        max_w: f32,
    ) -> NameFit<'n> {
        // A name measured by shaping, with the ellipsis measured at this size: one
        // lookup, nothing cloned.
        self.use_names(names, size);
        let ellipsis = self.ellipsis.filter(|e| e.0 == size.to_bits()).map(|e| e.1);
        if let Some(e) = self.name_table().by_id.get(&id)
            && e.exact
        {
            if e.m.width <= max_w {
                return NameFit::Whole(e.m.width);
            }
            if let Some(ell) = ellipsis {
                return cut_of(part, names, id, &e.m, max_w - ell)
                    .map_or(NameFit::Nothing, NameFit::Cut);
            }
        }
        let cut = match self.name_measure(names, id, size) {
            Some(m) if m.width <= max_w => return NameFit::Whole(m.width),
            Some(m) => self.cut_name(part, names, id, &m, size, max_w),
            None => {
                let text = names.get(id);
                let w = self.width(text, size);
                if w <= max_w {
                    return NameFit::Whole(w);
                }
                self.cut(part, text, size, max_w).map(Label::from)
            }
        };
        cut.map_or(NameFit::Nothing, NameFit::Cut)
    }
}

impl Shaper {
    /// [`MeasureText::name_cut`] of the name `id` of `names`, measured `m`.
    fn cut_name<'n>(
        &mut self,
        part: LabelFit,
        names: &'n Names,
        id: NameId,
        m: &Measure,
        size: f32,
        max_w: f32,
    ) -> Option<Label<'n>> {
        let room = max_w - self.ellipsis_width(size);
        cut_of(part, names, id, m, room)
    }
}

/// The label of the name `id` of `names`, measured `m`, cut to `room` pixels (the
/// ellipsis's width taken off), as [`Shaper::cut_at`] cuts it, without the string: the
/// label borrows the name.
fn cut_of<'n>(
    part: LabelFit,
    names: &'n Names,
    id: NameId,
    m: &Measure,
    room: f32,
) -> Option<Label<'n>> {
    let at = match part {
        LabelFit::Head => m.prefix_fitting(room),
        LabelFit::Tail => m.suffix_start_fitting(room),
    };
    let text = names.get(id);
    let at = floor_boundary(text, at);
    match part {
        LabelFit::Head if at == 0 => None,
        LabelFit::Tail if at >= text.len() => None,
        _ => Some(Label::name_cut(
            names,
            id,
            LabelCut {
                fit: part,
                at: at as u32,
            },
        )),
    }
}

impl MeasureText for TextLayer {
    fn width(&mut self, text: &str, size: f32) -> f32 {
        self.shaper.width(text, size)
    }

    fn cut(&mut self, part: LabelFit, text: &str, size: f32, max_w: f32) -> Option<String> {
        self.shaper.cut(part, text, size, max_w)
    }

    fn names_ahead(&mut self, names: &Names, size: f32) {
        self.shaper.names_ahead(names, size);
    }

    fn labels_timed(&self) -> bool {
        self.clock.timed()
    }

    fn labels_in_time(&mut self, texts: usize) -> bool {
        self.clock.in_time(texts)
    }

    fn leave_labels(&mut self, n: usize) {
        self.clock.leave(n);
    }

    fn name_width(&mut self, names: &Names, id: NameId, size: f32) -> f32 {
        self.shaper.name_width(names, id, size)
    }

    fn name_cut<'n>(
        &mut self,
        part: LabelFit,
        names: &'n Names,
        id: NameId,
        size: f32,
        max_w: f32,
    ) -> Option<Label<'n>> {
        self.shaper.name_cut(part, names, id, size, max_w)
    }

    fn name_fit<'n>(
        &mut self,
        part: LabelFit,
        names: &'n Names,
        id: NameId,
        size: f32,
        max_w: f32,
    ) -> NameFit<'n> {
        self.shaper.name_fit(part, names, id, size, max_w)
    }
}

mod clock;
#[cfg(test)]
mod tests;
