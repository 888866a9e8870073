//! Draw data: everything a frame draws, decided on the CPU before any GPU call.
//!
//! A view fills a [`Frame`] (through [`super::compose`], which adds the frame shell:
//! title band, status line, tooltip, menu): rectangles, positioned text, the per-row bar
//! ranges of its uploaded scenes, and the overview strip of a timeline. `render` executes
//! a frame into a pass and knows nothing of profiles, traces or views: the window, its
//! screenshots and `scorch render` draw the same `Frame` for the same view.
//!
//! A frame has fixed planes, drawn in this order (each one over the ones before):
//!
//! ```text
//! overview   a cached texture of the whole trace (timelines)
//! under      rectangles under the bars (axis background, grid lines, band headers)
//! bars       per visible row: which level-of-detail tier and which bars [lo, hi)
//! over       rectangles over the bars (outlines, connectors, legend strip)
//! text       labels, titles, axis marks
//! top        overlay rectangles (cursor line, details panel, status line, tooltip, menu)
//! top_text   overlay text
//! ```
//!
//! Positions are image pixels (physical); a renderer drawing one tile of a larger image
//! shifts and culls them. Text is measured with a [`Measure`] (the renderer's shaped
//! font; tests use a fixed-advance stand-in), so fitting a label into a bar is decided
//! here, not in the GPU code.
//!
//! The per-row ranges come from [`row_draws`]: per visible row the coarsest LOD tier
//! finer than a few pixels ([`crate::lod::FOLD_PX`]) and the bars inside the visible
//! ticks, by two binary searches; [`single_bars`] then lists the bars of a range that are
//! drawn alone (not merged) and may carry a label.

use crate::color::ColorMode;
use crate::geometry::{Camera, RectPx};
use crate::layout::Layout;
use crate::lod::{Lod, TierRef};
use crate::model::Names;
use crate::model::names::NameId;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// Page background.
pub const BACKGROUND: [u8; 3] = [255, 255, 255];
/// Title text color.
pub const TITLE_COLOR: [u8; 3] = [34, 34, 34];
/// Secondary text color.
pub const MUTED_COLOR: [u8; 3] = [102, 102, 102];
/// Text of overlays other than titles.
pub const BODY_COLOR: [u8; 3] = [60, 60, 60];

/// What a cut label shows in place of what it leaves out.
pub const ELLIPSIS: &str = "…";

/// Line height as a multiple of the font size.
const LINE_HEIGHT: f32 = 1.2;

/// Height of a line of text at `size` pixels (whole pixels).
pub fn line_height(size: f32) -> f32 {
    (size * LINE_HEIGHT).ceil()
}

/// Which part of a long name a cut label keeps (Pyroscope's fit mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LabelFit {
    /// The start: `com.example.Serv…`.
    #[default]
    Head,
    /// The end: `…Service.handle` (long package paths, Java and C++ names).
    Tail,
}

impl LabelFit {
    /// The CLI's spelling.
    pub fn name(self) -> &'static str {
        match self {
            LabelFit::Head => "head",
            LabelFit::Tail => "tail",
        }
    }

    /// The other one (the toolbar's and the menu's switch).
    pub fn other(self) -> LabelFit {
        match self {
            LabelFit::Head => LabelFit::Tail,
            LabelFit::Tail => LabelFit::Head,
        }
    }
}

/// Text measurement, by the font the frame will be drawn with.
pub trait Measure {
    /// Advance width of `text` at `size` pixels.
    fn width(&mut self, text: &str, size: f32) -> f32;
    /// The longest prefix of `text` (or suffix, for [`LabelFit::Tail`]) that fits in
    /// `max_w` pixels with an ellipsis, the ellipsis included; `None` when not one
    /// character fits.
    fn cut(&mut self, part: LabelFit, text: &str, size: f32, max_w: f32) -> Option<String>;

    /// The names of `names` are about to be drawn at `size`, in this frame and the
    /// next ones: a measurer may start measuring them ahead (the window's shapes them on
    /// a thread). Called by the label loops once a frame, before any label.
    fn names_ahead(&mut self, names: &Names, size: f32) {
        let _ = (names, size);
    }

    /// Whether this frame's labels have a deadline (a window frame while the view
    /// moves): the label loops then place the widest bars' labels first
    /// ([`super::labels`]).
    fn labels_timed(&self) -> bool {
        false
    }

    /// Whether a label loop may go on placing labels, told the `texts` it placed since
    /// it last asked: always, but in a frame whose labels are timed, while the time
    /// spent and the time drawing the texts placed will take end before the deadline.
    fn labels_in_time(&mut self, texts: usize) -> bool {
        let _ = texts;
        true
    }

    /// `n` bars were left without their labels for lack of time: the window draws the
    /// frame again once the view rests.
    fn leave_labels(&mut self, n: usize) {
        let _ = n;
    }

    /// [`Measure::width`] of the name `id` of `names` (a measurer may keep it by id,
    /// without hashing the string, for the label loops).
    fn name_width(&mut self, names: &Names, id: NameId, size: f32) -> f32 {
        self.width(names.get(id), size)
    }

    /// [`Measure::cut`] of the name `id` of `names`, as the label that shows it: a
    /// measurer that keeps names by id returns the name cut ([`Label::name_cut`]),
    /// which a text layer draws from the name's glyphs, without a string.
    fn name_cut<'n>(
        &mut self,
        part: LabelFit,
        names: &'n Names,
        id: NameId,
        size: f32,
        max_w: f32,
    ) -> Option<Label<'n>> {
        self.cut(part, names.get(id), size, max_w).map(Label::from)
    }

    /// How the name `id` of `names` fits in `max_w` pixels: whole, else cut as `part`
    /// says ([`Measure::name_cut`]), else not at all; what [`Measure::name_width`] and
    /// `name_cut` give, in one lookup for a measurer that keeps names by id.
    fn name_fit<'n>(
        &mut self,
        part: LabelFit,
        names: &'n Names,
        id: NameId,
        size: f32,
        max_w: f32,
    ) -> NameFit<'n> {
        let w = self.name_width(names, id, size);
        if w <= max_w {
            return NameFit::Whole(w);
        }
        self.name_cut(part, names, id, size, max_w)
            .map_or(NameFit::Nothing, NameFit::Cut)
    }

    /// The text to show in `max_w` pixels: `full` if it fits, else `short` if it fits,
    /// else the part of `short` that `keep` says (a prefix followed by an ellipsis, or an
    /// ellipsis followed by a suffix; at least one character), else nothing.
    fn fit_as(
        &mut self,
        keep: LabelFit,
        full: &str,
        short: &str,
        size: f32,
        max_w: f32,
    ) -> Option<String> {
        if max_w <= 0.0 {
            return None;
        }
        if !full.is_empty() && self.width(full, size) <= max_w {
            return Some(full.to_string());
        }
        if self.width(short, size) <= max_w {
            return Some(short.to_string());
        }
        self.cut(keep, short, size, max_w)
    }

    /// [`Measure::fit_as`] keeping the start of `short`.
    fn fit(&mut self, full: &str, short: &str, size: f32, max_w: f32) -> Option<String> {
        self.fit_as(LabelFit::Head, full, short, size, max_w)
    }

    /// [`Measure::fit_as`] keeping the end of `short`.
    fn fit_tail(&mut self, full: &str, short: &str, size: f32, max_w: f32) -> Option<String> {
        self.fit_as(LabelFit::Tail, full, short, size, max_w)
    }
}

/// `c` as the `[0, 1]` sRGB values with alpha `a` that rectangles carry.
pub fn rgba(c: [u8; 3], a: f32) -> [f32; 4] {
    [
        f32::from(c[0]) / 255.0,
        f32::from(c[1]) / 255.0,
        f32::from(c[2]) / 255.0,
        a,
    ]
}

/// An 8-bit sRGBA color as rectangles carry it.
pub fn rgba8(c: [u8; 4]) -> [f32; 4] {
    c.map(|v| f32::from(v) / 255.0)
}

/// A filled rectangle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left, top, width, height in image pixels.
    pub rect: [f32; 4],
    /// sRGB in `[0, 1]` with straight alpha.
    pub color: [f32; 4],
}

impl Rect {
    /// A rectangle of `color` (see [`rgba`]).
    pub fn new(rect: [f32; 4], color: [f32; 4]) -> Rect {
        Rect { rect, color }
    }
}

/// The four edges of `rect` = (left, top, width, height) as rectangles `t` thick.
pub fn outline(rect: [f32; 4], t: f32) -> [[f32; 4]; 4] {
    let [x, y, w, h] = rect;
    [
        [x, y, w, t],
        [x, y + h - t, w, t],
        [x, y, t, h],
        [x + w - t, y, t, h],
    ]
}

/// Which part of a name a cut [`Label`] keeps: the bytes before `at` and an ellipsis
/// ([`LabelFit::Head`]), or an ellipsis and the bytes from `at` ([`LabelFit::Tail`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cut {
    /// The part kept.
    pub fit: LabelFit,
    /// A char boundary of the name that keeps a character of it: `0 < at ≤ len` for a
    /// head, `at < len` for a tail (`…` and the whole name, as [`Measure::cut`] makes it
    /// when only the ellipsis is in excess).
    pub at: u32,
}

/// The interned name a [`Label`] shows, whole or cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NameLabel {
    /// Its interner's [`Names::uid`].
    pub names: u64,
    /// Its id there.
    pub id: NameId,
    /// The part shown; `None`: all of it.
    pub cut: Option<Cut>,
}

/// How a name fits a width ([`Measure::name_fit`]).
#[derive(Clone, Debug, PartialEq)]
pub enum NameFit<'n> {
    /// All of it, this wide.
    Whole(f32),
    /// Cut to fit.
    Cut(Label<'n>),
    /// Not one character of it.
    Nothing,
}

/// What a [`Text`] shows: a string, or an interned name, whole or cut to fit a bar. A
/// name is borrowed, not copied, and a text layer finds the glyphs it shaped for it by
/// its id: a label loop of thousands of names allocates, copies and hashes no string.
#[derive(Clone, Debug, PartialEq)]
pub struct Label<'a> {
    text: LabelText<'a>,
    name: Option<NameLabel>,
}

/// Longest text a [`Label`] keeps inline ([`Label::copied`]).
const SHORT: usize = 22;

/// A label's text: borrowed or owned, or short and copied inline (a duration, a
/// number: a frame of a thousand of them allocates and frees none).
#[derive(Clone, Debug)]
enum LabelText<'a> {
    Str(std::borrow::Cow<'a, str>),
    Short { len: u8, bytes: [u8; SHORT] },
}

impl LabelText<'_> {
    fn as_str(&self) -> &str {
        match self {
            LabelText::Str(s) => s,
            LabelText::Short { len, bytes } => {
                // Copied from a &str at a char boundary (`Label::copied`).
                std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default()
            }
        }
    }
}

impl PartialEq for LabelText<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl std::ops::Deref for LabelText<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl<'a> Label<'a> {
    /// The name `id` of `names`, whole.
    pub fn name(names: &'a Names, id: NameId) -> Label<'a> {
        Label {
            text: LabelText::Str(std::borrow::Cow::Borrowed(names.get(id))),
            name: Some(NameLabel {
                names: names.uid(),
                id,
                cut: None,
            }),
        }
    }

    /// The name `id` of `names` cut at `cut`, which must lie on a char boundary and
    /// keep a character of the name (else the label is the whole name).
    pub fn name_cut(names: &'a Names, id: NameId, cut: Cut) -> Label<'a> {
        let mut l = Label::name(names, id);
        let at = cut.at as usize;
        let keeps = match cut.fit {
            LabelFit::Head => at > 0 && at <= l.text.len(),
            LabelFit::Tail => at < l.text.len(),
        };
        if keeps && l.text.is_char_boundary(at) {
            l.name = l.name.map(|n| NameLabel {
                cut: Some(cut),
                ..n
            });
        }
        l
    }

    /// The text before any cut.
    pub fn source(&self) -> &str {
        &self.text
    }

    /// The name shown, if this is one.
    pub fn name_label(&self) -> Option<NameLabel> {
        self.name
    }

    /// The text as drawn: with its cut and ellipsis applied.
    pub fn shown(&self) -> std::borrow::Cow<'_, str> {
        match self.name.and_then(|n| n.cut) {
            None => std::borrow::Cow::Borrowed(&self.text),
            Some(Cut {
                fit: LabelFit::Head,
                at,
            }) => format!("{}{ELLIPSIS}", &self.text[..at as usize]).into(),
            Some(Cut {
                fit: LabelFit::Tail,
                at,
            }) => format!("{ELLIPSIS}{}", &self.text[at as usize..]).into(),
        }
    }
}

impl Label<'_> {
    /// `text` copied: inline when short (no allocation), else into a string.
    pub fn copied(text: &str) -> Label<'static> {
        if text.len() > SHORT {
            return Label::from(text.to_string());
        }
        let mut bytes = [0u8; SHORT];
        bytes[..text.len()].copy_from_slice(text.as_bytes());
        Label {
            text: LabelText::Short {
                len: text.len() as u8,
                bytes,
            },
            name: None,
        }
    }
}

impl From<String> for Label<'_> {
    fn from(text: String) -> Self {
        Label {
            text: LabelText::Str(text.into()),
            name: None,
        }
    }
}

impl<'a> From<&'a str> for Label<'a> {
    fn from(text: &'a str) -> Self {
        Label {
            text: LabelText::Str(text.into()),
            name: None,
        }
    }
}

impl PartialEq<str> for Label<'_> {
    fn eq(&self, other: &str) -> bool {
        self.shown() == other
    }
}

impl PartialEq<String> for Label<'_> {
    fn eq(&self, other: &String) -> bool {
        self.shown() == other.as_str()
    }
}

impl PartialEq<&str> for Label<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.shown() == *other
    }
}

impl std::fmt::Display for Label<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

/// A line of text with its top-left corner at (`x`, `y`), clipped to `clip`.
#[derive(Clone, Debug, PartialEq)]
pub struct Text<'a> {
    /// The text.
    pub text: Label<'a>,
    /// Font size in pixels.
    pub size: f32,
    /// Left edge.
    pub x: f32,
    /// Top edge.
    pub y: f32,
    /// Left, top, right, bottom.
    pub clip: [f32; 4],
    /// sRGB.
    pub color: [u8; 3],
}

/// Bytes of one bar instance on the GPU (`BarInstance` in `render::bars`, which asserts
/// it), for memory reports.
pub const INSTANCE_BYTES: usize = 16;

/// Bytes a scene holds on the GPU per interned name: its two palette hashes (8) and its
/// search flag (4).
pub const NAME_GPU_BYTES: usize = 12;

/// Bytes of one scene's uniform block (`BarGlobals`, which asserts it).
pub const GLOBALS_BYTES: usize = 544;

/// Every byte a scene of `bars` bars, `tier_bars` LOD tier bars and `names` names uploads:
/// the instances, the name hashes and search flags, and the uniform block. (Segment bases
/// travel with each draw as immediate data: nothing resident.)
pub fn scene_gpu_bytes(bars: usize, tier_bars: usize, names: usize) -> u64 {
    ((bars + tier_bars) * INSTANCE_BYTES + names.max(1) * NAME_GPU_BYTES + GLOBALS_BYTES) as u64
}

/// Identifies the bars a view uploaded to the GPU (one layout with its tiers and values).
/// A new layout gets a new key, so a renderer never draws stale instances.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SceneKey(pub u64);

static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

impl SceneKey {
    /// A key no other scene has.
    pub fn fresh() -> SceneKey {
        SceneKey(NEXT_KEY.fetch_add(1, Ordering::Relaxed))
    }
}

/// What a bar instance carries besides position and name (`Instance.values` in
/// `bars.wgsl`): flame graphs self, left and right totals; timelines the duration and
/// the track and category palette indices.
pub struct BarValues<'a> {
    /// The three values of the bar showing `node`.
    pub of: Box<dyn Fn(u32) -> [f32; 3] + Sync + 'a>,
    /// Combines the values of a merged run's bars (level of detail), in f64, where the
    /// integer-valued values of bars add exactly. It must be associative: a tier's values
    /// are combined from those of the finer tier below it.
    pub merge: fn([f64; 3], [f64; 3]) -> [f64; 3],
    /// The heat scale (largest first value).
    pub max_self: f32,
    /// Left and right grand totals of a diff.
    pub diff_ticks: Option<(u64, u64)>,
    /// Whether any frame drawn from these bars reads the values. A one-off image in a
    /// color mode of name hashes does not ([`crate::color::ColorMode::reads_values`]):
    /// its instances then carry only the merged-run bit, and `of` is never called (for
    /// a profile, a random read into the call tree per bar, most of an export's upload).
    pub read: bool,
    /// The layout is a flame layout (every bar's children are the next row's bars inside
    /// it) of a profile that is not a diff, and `of` gives `[self, total, total]`: a
    /// bar's total is its width and its self is its width less its children's, so
    /// [`BarValues::of_row`] reads the values from the rows in order instead of one
    /// random read into the call tree per bar (most of the upload of a big profile).
    pub nested: bool,
}

impl BarValues<'_> {
    /// The values of the bars of `layout`'s row `r` into `out` (cleared first): from the
    /// widths of row `r` and of the row after it where the values are
    /// [`nested`](BarValues::nested), else `of` of each bar's node.
    pub fn of_row(&self, layout: &Layout, r: usize, out: &mut Vec<[f32; 3]>) {
        self.of_bars(layout, r, 0..layout.rows[r].len(), out);
    }

    /// [`of_row`](Self::of_row) for the bars `bars` of row `r` only (a page of them).
    pub fn of_bars(&self, layout: &Layout, r: usize, bars: Range<usize>, out: &mut Vec<[f32; 3]>) {
        out.clear();
        let row = &layout.rows[r];
        if !self.nested {
            out.extend(row.node[bars].iter().map(|&n| (self.of)(n)));
            return;
        }
        let below = layout.rows.get(r + 1);
        let (bx0, bx1) = below.map_or((&[][..], &[][..]), |b| (&b.x0[..], &b.x1[..]));
        // The next row's bars before the first bar's start are earlier bars' children.
        let mut j = row
            .x0
            .get(bars.start)
            .map_or(0, |&x| bx0.partition_point(|&b| b < x));
        let (x0s, x1s) = (&row.x0[bars.clone()], &row.x1[bars]);
        out.extend(x0s.iter().zip(x1s).map(|(&x0, &x1)| {
            // The next row's bars up to this bar's end are its children (rows sorted, a
            // child inside its parent).
            let mut kids = 0u64;
            while j < bx0.len() && bx0[j] < x1 {
                kids += bx1[j] - bx0[j];
                j += 1;
            }
            let total = x1 - x0;
            [
                total.saturating_sub(kids) as f32,
                total as f32,
                total as f32,
            ]
        }));
    }

    /// [`BarValues::read`] for a view in `color` that draws one image at `only_at` ticks
    /// per pixel, or a window (`None`), whose color mode may change later.
    pub fn read_by(only_at: Option<f64>, color: ColorMode) -> bool {
        only_at.is_none() || color.reads_values()
    }
}

/// The widest view of a whole layout [`BarSource::defers`] allows for: a row's own bars
/// are left for later only where a view this wide (or narrower) of the whole layout
/// draws its finest tier instead.
pub const DEFER_WIDTH_PX: f64 = 16384.0;

/// The fewest bars of a row whose own bars [`BarSource::defers`] leaves for later (4 MiB
/// of instances): big rows are where a big profile's memory is, and a smaller row is
/// uploaded whole, so that the frames of all but big profiles never fetch pages.
pub const DEFER_MIN_BARS: usize = 1 << 18;

/// Everything the GPU needs to hold a layout's bars: what a view uploads once.
pub struct BarSource<'a> {
    /// Its identity.
    pub key: SceneKey,
    /// The bars.
    pub layout: &'a Layout,
    /// Their merged tiers.
    pub lod: &'a Lod,
    /// The names bars refer to (hashed once for the palette).
    pub names: &'a Names,
    /// Pyroscope's `spyName`: which part of a name is its package.
    pub spy: Option<&'a str>,
    /// Per-bar values.
    pub values: BarValues<'a>,
    /// Upload only the tier each row draws at this many ticks per pixel: a one-off frame
    /// (an export) needs nothing else. `None`: everything, to zoom freely.
    pub only_at: Option<f64>,
    /// What a bar is, for messages ("bars", "spans").
    pub noun: &'static str,
}

impl BarSource<'_> {
    /// Whether the list `tier` of row `row` is uploaded with the scene.
    pub fn wants(&self, row: usize, tier: TierRef) -> bool {
        match self.only_at {
            Some(tpp) => self.lod.tier_for(row, tpp) == tier,
            None => !(tier == TierRef::Row && self.defers(row)),
        }
    }

    /// Whether row `row`'s own bars are left out of a window's scene and uploaded a page
    /// at a time when a frame first draws them: rows of [`DEFER_MIN_BARS`] or more whose
    /// finest tier a view of the whole layout draws instead of them, however wide
    /// ([`DEFER_WIDTH_PX`]), so that only a zoomed-in view needs them. On a big profile
    /// most bars are in such rows (the 1 GB W1 pprof's own bars are 2.2 of its 3.4 GB of
    /// instances).
    pub fn defers(&self, row: usize) -> bool {
        let whole = self.layout.total_ticks as f64 / DEFER_WIDTH_PX;
        self.only_at.is_none()
            && self.layout.rows[row].len() >= DEFER_MIN_BARS
            && self
                .lod
                .tier(row, 0)
                .is_some_and(|t| crate::lod::folds_at(t.shift, whole))
    }

    /// "1234 bars", for messages.
    pub fn describe(&self) -> String {
        format!("{} {}", self.layout.bar_count(), self.noun)
    }

    /// Roughly what uploading costs on the device (instances, tiers and names), for the
    /// out-of-memory message.
    pub fn estimated_bytes(&self) -> u64 {
        let per = if self.only_at.is_some() { 32 } else { 48 };
        self.layout.bar_count() as u64 * per
    }
}

/// "1234 bars, 56 spans": what `sources` hold, for messages.
pub fn describe(sources: &[BarSource<'_>]) -> String {
    sources
        .iter()
        .map(BarSource::describe)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The search as the bar shader sees it: which names match.
#[derive(Clone, Copy, Debug)]
pub struct NameFlags<'a> {
    /// Changes whenever the flags do (uploads and cached pictures key on it).
    pub generation: u64,
    /// Per name id.
    pub flags: &'a [bool],
}

/// One row's draw: a range of a tier's bars at a height.
#[derive(Clone, Debug, PartialEq)]
pub struct RowDraw {
    /// Layout row.
    pub row: usize,
    /// Top edge in image pixels.
    pub top: f32,
    /// The row's bars or one of its tiers.
    pub tier: TierRef,
    /// Bars of that list to draw.
    pub range: Range<usize>,
    /// Opacity.
    pub alpha: f32,
}

/// Bars of one uploaded scene, drawn into a clip rectangle.
#[derive(Clone, Debug)]
pub struct BarsLayer<'a> {
    /// Which scene.
    pub scene: SceneKey,
    /// Bars are clipped to this (the graph area); its left edge is the camera's origin.
    pub clip: RectPx,
    /// Horizontal view.
    pub camera: Camera,
    /// Height of a bar.
    pub bar_height: f32,
    /// Separator between bars.
    pub gap: f32,
    /// Bar colors.
    pub color: ColorMode,
    /// The color-blind diff palette.
    pub colorblind: bool,
    /// A search: non-matching bars are drawn grey.
    pub search: Option<NameFlags<'a>>,
    /// The rows.
    pub rows: Vec<RowDraw>,
    /// The tiers the rows' draws were chosen from: a row whose own bars the window has
    /// not uploaded yet ([`BarSource::defers`]) draws its finest tier over the same bars
    /// meanwhile ([`crate::lod::Tier::covering`]).
    pub lod: &'a Lod,
}

/// The overview strip: every row of a layout squeezed into a rectangle, drawn once into a
/// texture and reused while its key holds.
#[derive(Clone, Debug)]
pub struct OverviewLayer<'a> {
    /// Where it is shown.
    pub rect: RectPx,
    /// The scene drawn.
    pub scene: SceneKey,
    /// Its layout and tiers (the draws are only computed when the texture is redrawn).
    pub layout: &'a Layout,
    /// Tiers of `layout`.
    pub lod: &'a Lod,
    /// Device pixels per logical pixel.
    pub scale: f32,
    /// Bar colors.
    pub color: ColorMode,
    /// A search.
    pub search: Option<NameFlags<'a>>,
}

/// What the overview texture depends on: when it changes, the texture is redrawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverviewKey {
    /// The scene.
    pub scene: SceneKey,
    /// Texture width.
    pub w: u32,
    /// Texture height.
    pub h: u32,
    /// [`ColorMode::shader_code`].
    pub color: u32,
    /// Search generation, when a search is active.
    pub search: Option<u64>,
}

/// Background of the overview texture.
pub const OVERVIEW_BACKGROUND: [u8; 3] = [250, 250, 250];

impl OverviewLayer<'_> {
    /// The texture's key at `w` × `h` pixels.
    pub fn key(&self, w: u32, h: u32) -> OverviewKey {
        OverviewKey {
            scene: self.scene,
            w,
            h,
            color: self.color.shader_code(),
            search: self.search.map(|s| s.generation),
        }
    }

    /// The bars of a `w` × `h` texture showing the whole layout: every row, at most 8
    /// logical pixels tall and at least one pixel, spread evenly when they do not fit.
    /// When more than [`OVERVIEW_ROWS_PER_PIXEL`] rows share a pixel row, only that many
    /// of them, evenly chosen (the first and the last included), are drawn: a million-deep
    /// trace costs a draw per row, and the driver memory with it, for pixels that later
    /// rows overwrite anyway.
    pub fn bars(&self, w: u32, h: u32) -> BarsLayer<'_> {
        let layout = self.layout;
        let total = layout.total_ticks.max(1);
        let cam = Camera::fit(total, f64::from(w));
        let rows = layout.rows.len().max(1);
        let row_h = (h as f32 / rows as f32).clamp(1.0, 8.0 * self.scale);
        let spread = if rows as f32 * row_h > h as f32 {
            h as f32 / rows as f32
        } else {
            row_h
        };
        let tpp = 1.0 / cam.px_per_tick;
        let n = layout.rows.len();
        let most = (h as usize).max(1) * OVERVIEW_ROWS_PER_PIXEL;
        let drawn = n.min(most);
        let rows = (0..drawn)
            .map(|i| {
                // Evenly chosen: row i·n/drawn, and the last row last.
                let r = if drawn == n {
                    i
                } else if i + 1 == drawn {
                    n - 1
                } else {
                    (i as u64 * n as u64 / drawn as u64) as usize
                };
                let tier = self.lod.tier_for(r, tpp);
                let len = match tier {
                    TierRef::Row => layout.rows[r].len(),
                    TierRef::Tier(k) => self.lod.rows[r][k].len(),
                };
                RowDraw {
                    row: r,
                    top: (r as f32 * spread).floor(),
                    tier,
                    range: 0..len,
                    alpha: 1.0,
                }
            })
            .collect();
        BarsLayer {
            scene: self.scene,
            clip: RectPx {
                x: 0.0,
                y: 0.0,
                w: w as f32,
                h: h as f32,
            },
            camera: cam,
            bar_height: row_h.round().max(1.0),
            gap: 0.0,
            color: self.color,
            colorblind: false,
            search: self.search,
            rows,
            lod: self.lod,
        }
    }
}

/// Rows of the overview drawn per pixel row at most ([`OverviewLayer::bars`]).
pub const OVERVIEW_ROWS_PER_PIXEL: usize = 4;

/// A whole frame, in image pixels.
#[derive(Clone, Debug)]
pub struct Frame<'a> {
    /// Image width.
    pub width_px: u32,
    /// Image height.
    pub height_px: u32,
    /// Device pixels per logical pixel.
    pub scale: f32,
    /// Cleared to this.
    pub background: [u8; 3],
    /// The cached overview strip.
    pub overview: Option<OverviewLayer<'a>>,
    /// Rectangles under the bars.
    pub under: Vec<Rect>,
    /// Bars, layer by layer.
    pub bars: Vec<BarsLayer<'a>>,
    /// Rectangles over the bars.
    pub over: Vec<Rect>,
    /// Text over those.
    pub text: Vec<Text<'a>>,
    /// Overlay rectangles.
    pub top: Vec<Rect>,
    /// Overlay text.
    pub top_text: Vec<Text<'a>>,
    /// Bar and span labels placed (for reports).
    pub labels: usize,
}

impl<'a> Frame<'a> {
    /// An empty frame of `width_px` × `height_px` at `scale`.
    pub fn new(width_px: u32, height_px: u32, scale: f32) -> Frame<'a> {
        Frame {
            width_px,
            height_px,
            scale,
            background: BACKGROUND,
            overview: None,
            under: Vec::new(),
            bars: Vec::new(),
            over: Vec::new(),
            text: Vec::new(),
            top: Vec::new(),
            top_text: Vec::new(),
            labels: 0,
        }
    }

    /// Adds what `part` draws, moved `dx` pixels to the right: a view drawn beside
    /// another (the table and flame graph side by side) draws into its own frame of its
    /// own width, then lands here.
    pub fn append_shifted(&mut self, part: Frame<'a>, dx: f32) {
        let shift_rects = |rs: Vec<Rect>| {
            rs.into_iter().map(move |mut r| {
                r.rect[0] += dx;
                r
            })
        };
        let shift_texts = |ts: Vec<Text<'a>>| {
            ts.into_iter().map(move |mut t| {
                t.x += dx;
                t.clip[0] += dx;
                t.clip[2] += dx;
                t
            })
        };
        self.under.extend(shift_rects(part.under));
        self.over.extend(shift_rects(part.over));
        self.top.extend(shift_rects(part.top));
        self.text.extend(shift_texts(part.text));
        self.top_text.extend(shift_texts(part.top_text));
        self.bars.extend(part.bars.into_iter().map(|mut b| {
            b.clip.x += dx;
            b
        }));
        if let Some(mut o) = part.overview {
            o.rect.x += dx;
            self.overview = Some(o);
        }
        self.labels += part.labels;
    }

    /// The number of bar instances the frame draws (without the overview).
    pub fn bar_count(&self) -> u64 {
        self.bars
            .iter()
            .flat_map(|b| &b.rows)
            .map(|r| r.range.len() as u64)
            .sum()
    }
}

/// The per-row draws of `layout` seen through `cam` over `width_px`: for each visible row
/// (`rows` gives each row's top edge), the coarsest tier of `lod` that merges only bars
/// narrower than a few pixels (the row itself without a `lod`), and the range of that
/// list inside the visible ticks. Rows above `faded_rows` are drawn at 35 % opacity (the
/// ancestors of a zoomed bar).
pub fn row_draws(
    layout: &Layout,
    lod: Option<&Lod>,
    rows: impl IntoIterator<Item = (usize, f32)>,
    cam: &Camera,
    width_px: f64,
    faded_rows: usize,
) -> Vec<RowDraw> {
    let (t0, t1) = cam.visible_ticks(width_px);
    let ticks_per_px = 1.0 / cam.px_per_tick;
    let mut out = Vec::new();
    for (r, top) in rows {
        let Some(row) = layout.rows.get(r) else {
            continue;
        };
        let tier = lod.map_or(TierRef::Row, |l| l.tier_for(r, ticks_per_px));
        let range = match tier {
            TierRef::Row => row.range_between(t0, t1),
            TierRef::Tier(k) => lod
                .and_then(|l| l.tier(r, k))
                .map_or(0..0, |t| t.range_between(row, t0, t1)),
        };
        out.push(RowDraw {
            row: r,
            top,
            tier,
            range,
            alpha: if r < faded_rows { 0.35 } else { 1.0 },
        });
    }
    out
}

/// The bars of `draw` that are drawn alone, as indices into their row: every bar of a
/// row draw, and the one-bar runs of a tier (a merged run has no single name to show).
pub fn single_bars<'l>(lod: Option<&'l Lod>, draw: &RowDraw) -> impl Iterator<Item = usize> + 'l {
    let tier = match draw.tier {
        TierRef::Row => None,
        TierRef::Tier(k) => lod.and_then(|l| l.tier(draw.row, k)),
    };
    let merged = matches!(draw.tier, TierRef::Tier(_));
    draw.range.clone().filter_map(move |j| match tier {
        None if merged => None,
        None => Some(j),
        Some(t) if t.count(j) == 1 => Some(t.first(j)),
        Some(_) => None,
    })
}

/// A fixed-advance [`Measure`] for tests: every character is `advance` × size wide.
#[derive(Clone, Copy, Debug)]
pub struct FixedMeasure {
    /// Width of a character per pixel of font size.
    pub advance: f32,
}

impl Measure for FixedMeasure {
    fn width(&mut self, text: &str, size: f32) -> f32 {
        text.chars().count() as f32 * size * self.advance
    }

    fn cut(&mut self, part: LabelFit, text: &str, size: f32, max_w: f32) -> Option<String> {
        let ell = self.width("…", size);
        let keep = ((max_w - ell) / (size * self.advance)).floor().max(0.0) as usize;
        let skip = text.chars().count().saturating_sub(keep);
        (keep > 0).then(|| match part {
            LabelFit::Head => text.chars().take(keep).collect::<String>() + "…",
            LabelFit::Tail => "…".to_string() + &text.chars().skip(skip).collect::<String>(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Row;

    #[test]
    fn copied_labels_show_their_text_short_or_long() {
        for text in [
            "",
            "1.23 µs",
            "exactly twenty-two b",
            "ÿ".repeat(11).as_str(),
            "a label longer than twenty-two bytes",
        ] {
            let l = Label::copied(text);
            assert_eq!(l.source(), text);
            assert_eq!(l, Label::from(text.to_string()));
            assert_eq!(l.to_string(), text);
            assert!(l.name_label().is_none());
        }
    }

    #[test]
    fn nested_values_read_from_the_rows_are_the_trees() {
        use crate::layout::{SiblingOrder, flame_layout_ordered};
        for seed in 0..20u64 {
            let mut rng = crate::testing::Lcg::new(seed);
            let mut text = String::new();
            for _ in 0..1 + rng.next_usize() % 300 {
                let depth = 1 + rng.next_usize() % 12;
                let frames: Vec<String> = (0..depth)
                    .map(|_| format!("f{}", rng.next_usize() % 5))
                    .collect();
                // Zero counts give nodes with no bar.
                text += &format!("{} {}\n", frames.join(";"), rng.next_usize() % 4);
            }
            text += "a 1\n";
            let p = crate::import::folded::parse("n.folded", text.as_bytes()).unwrap();
            let tree = &p.tree;
            for order in [SiblingOrder::AsTree, SiblingOrder::HeaviestFirst] {
                let layout = flame_layout_ordered(tree, order);
                let values = |nested| BarValues {
                    of: Box::new(|n: u32| {
                        let t = tree.total(n) as f32;
                        [tree.self_ticks(n) as f32, t, t]
                    }),
                    merge: |a, b| [a[0] + b[0], a[1] + b[1], a[2] + b[2]],
                    max_self: 1.0,
                    diff_ticks: None,
                    read: true,
                    nested,
                };
                let (by_tree, by_rows) = (values(false), values(true));
                let (mut a, mut b) = (Vec::new(), Vec::new());
                for r in 0..layout.rows.len() {
                    by_tree.of_row(&layout, r, &mut a);
                    by_rows.of_row(&layout, r, &mut b);
                    assert_eq!(a, b, "seed {seed} {order:?} row {r}");
                    assert_eq!(a.len(), layout.rows[r].len());
                }
            }
        }
    }

    /// A row of `n` bars each `w` ticks wide, back to back.
    fn row(n: u64, w: u64) -> Row {
        let mut r = Row::default();
        for i in 0..n {
            r.push(i * w, (i + 1) * w, 0, i as u32);
        }
        r
    }

    fn layout(rows: Vec<Row>) -> Layout {
        let total = rows
            .iter()
            .filter_map(|r| r.x1.last().copied())
            .max()
            .unwrap_or(0);
        Layout {
            rows,
            total_ticks: total,
        }
    }

    #[test]
    fn ranges_cover_exactly_the_visible_bars() {
        let l = layout(vec![row(100, 10), row(50, 20)]);
        // 1000 ticks over 100 px: show ticks [200, 500).
        let cam = Camera::range(200, 500, 100.0);
        let d = row_draws(&l, None, [(0, 10.0), (1, 30.0)], &cam, 100.0, 0);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].range, 20..51, "bars 20..=50 touch [200, 501)");
        assert_eq!(d[0].top, 10.0);
        assert_eq!(d[1].range, 10..26);
        assert!(d.iter().all(|r| r.tier == TierRef::Row && r.alpha == 1.0));
        // A row past the layout is skipped; faded rows are the shallow ones.
        let d = row_draws(&l, None, [(0, 0.0), (1, 1.0), (7, 2.0)], &cam, 100.0, 1);
        assert_eq!(d.iter().map(|r| r.row).collect::<Vec<_>>(), [0, 1]);
        assert_eq!((d[0].alpha, d[1].alpha), (0.35, 1.0));
    }

    #[test]
    fn zoomed_out_rows_draw_a_merged_tier_and_zoomed_in_rows_the_bars() {
        let l = layout(vec![row(10_000, 1)]);
        let lod = Lod::build(&l);
        // 10 000 one-tick bars over 100 px: 100 ticks a pixel, a coarse tier.
        let far = Camera::fit(10_000, 100.0);
        let d = row_draws(&l, Some(&lod), [(0, 0.0)], &far, 100.0, 0);
        let TierRef::Tier(k) = d[0].tier else {
            panic!("a tier at full view: {d:?}");
        };
        let t = lod.tier(0, k).unwrap();
        assert_eq!(d[0].range, 0..t.len(), "the whole tier is visible");
        assert!(t.len() <= 2 * 100 + 2, "about a bar per pixel: {}", t.len());
        // Merged runs carry no label.
        assert_eq!(single_bars(Some(&lod), &d[0]).count(), 0);
        // 20 px a tick: the row itself, 6 bars visible, each drawn alone.
        let near = Camera::range(5_000, 5_005, 100.0);
        let d = row_draws(&l, Some(&lod), [(0, 0.0)], &near, 100.0, 0);
        assert_eq!(d[0].tier, TierRef::Row);
        assert_eq!(d[0].range, 5_000..5_006);
        let singles: Vec<usize> = single_bars(Some(&lod), &d[0]).collect();
        assert_eq!(singles, (5_000..5_006).collect::<Vec<_>>());
    }

    #[test]
    fn a_tier_lists_its_one_bar_runs_as_row_bars() {
        // Wide bars among runs of tiny ones: at 8 ticks a pixel the tiny ones merge and
        // the wide ones stay alone, named by their row index.
        let mut r = Row::default();
        let mut x = 0;
        for i in 0..40u32 {
            let w = if i % 10 == 0 { 400 } else { 1 };
            r.push(x, x + w, 0, i);
            x += w;
        }
        let l = layout(vec![r]);
        let lod = Lod::build(&l);
        let cam = Camera::fit(l.total_ticks, l.total_ticks as f64 / 8.0);
        let d = row_draws(&l, Some(&lod), [(0, 0.0)], &cam, cam.x_of(l.total_ticks), 0);
        assert!(matches!(d[0].tier, TierRef::Tier(_)), "{d:?}");
        let singles: Vec<usize> = single_bars(Some(&lod), &d[0]).collect();
        assert_eq!(singles, [0, 10, 20, 30]);
    }

    #[test]
    fn the_overview_squeezes_every_row() {
        let l = layout((0..100).map(|_| row(1000, 3)).collect());
        let lod = Lod::build(&l);
        let o = OverviewLayer {
            rect: RectPx::default(),
            scene: SceneKey(9),
            layout: &l,
            lod: &lod,
            scale: 1.0,
            color: ColorMode::Name,
            search: None,
        };
        // 100 rows into 50 px: each 1 px, spread half a pixel apart.
        let b = o.bars(400, 50);
        assert_eq!(b.rows.len(), 100);
        assert_eq!(b.bar_height, 1.0);
        assert_eq!(b.rows[99].top, 49.0);
        assert!(b.rows.iter().all(|r| matches!(r.tier, TierRef::Tier(_))));
        // 2 rows into 50 px: 8 px each, one under the other.
        let l2 = layout(vec![row(10, 3), row(10, 3)]);
        let lod2 = Lod::build(&l2);
        let o2 = OverviewLayer {
            layout: &l2,
            lod: &lod2,
            ..o.clone()
        };
        let b = o2.bars(400, 50);
        assert_eq!((b.bar_height, b.rows[1].top), (8.0, 8.0));
        assert_eq!(b.rows[1].range, 0..10);
        assert_ne!(o.key(400, 50), o.key(400, 51));
    }

    /// Issue 14, failure 2: a million-deep trace took 2.8 GB and 20 s to render (and
    /// segfaulted under a 4 GB limit) although almost all its rows are outside the image:
    /// the overview strip drew every row, a draw call (and driver memory) each. It draws
    /// at most a few rows per pixel row, evenly chosen, the first and the last included.
    #[test]
    fn segfault_rendering_a_million_deep_trace() {
        let l = layout((0..10_000).map(|_| row(10, 1)).collect());
        let lod = Lod::build(&l);
        let o = OverviewLayer {
            rect: RectPx::default(),
            scene: SceneKey(9),
            layout: &l,
            lod: &lod,
            scale: 1.0,
            color: ColorMode::Name,
            search: None,
        };
        let b = o.bars(400, 40);
        assert_eq!(b.rows.len(), 40 * OVERVIEW_ROWS_PER_PIXEL);
        assert_eq!(b.rows[0].row, 0);
        assert_eq!(b.rows.last().unwrap().row, 9_999);
        assert_eq!(b.rows.last().unwrap().top, 39.0);
        assert!(
            b.rows
                .windows(2)
                .all(|w| w[0].row < w[1].row && w[0].top <= w[1].top)
        );
        // Every pixel row still gets its rows.
        for p in 0..40 {
            let n = b.rows.iter().filter(|r| r.top == p as f32).count();
            assert!(
                (1..=OVERVIEW_ROWS_PER_PIXEL + 1).contains(&n),
                "pixel {p}: {n}"
            );
        }
    }

    #[test]
    fn fixed_measure_fits_like_the_font_does() {
        let mut m = FixedMeasure { advance: 0.5 };
        assert_eq!(m.width("abcd", 10.0), 20.0);
        assert_eq!(
            m.fit("abcd (1%)", "abcd", 10.0, 45.0).as_deref(),
            Some("abcd (1%)")
        );
        assert_eq!(
            m.fit("abcd (1%)", "abcd", 10.0, 20.0).as_deref(),
            Some("abcd")
        );
        assert_eq!(
            m.fit("abcd (1%)", "abcd", 10.0, 16.0).as_deref(),
            Some("ab…")
        );
        assert_eq!(m.fit("abcd (1%)", "abcd", 10.0, 5.0), None);
        assert_eq!(
            m.fit_tail("abcd (1%)", "abcd", 10.0, 16.0).as_deref(),
            Some("…cd")
        );
        assert_eq!(
            m.fit_as(LabelFit::Tail, "abcd (1%)", "abcd", 10.0, 20.0)
                .as_deref(),
            Some("abcd")
        );
        assert_eq!(m.fit_tail("abcd (1%)", "abcd", 10.0, 5.0), None);
    }
}
