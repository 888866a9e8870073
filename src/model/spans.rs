//! Timed spans with parents: traces (TiDB, Chrome, Jaeger, OTLP) as opposed to aggregated
//! stacks.
//!
//! [`SpanSet`] holds spans as parallel columns (start and duration in nanoseconds relative
//! to the earliest span, parent, name, track). [`SpanTree::build`] links them in O(n)
//! with a hash map from span id to index: spans whose parent is unknown become roots
//! (counted), parent cycles are broken (counted) by making the span that closes the cycle a
//! root, children are sorted by start (ties: longer first, as in the TiDB Dashboard), and
//! each span gets the latest end time over itself and all its descendants. Every pass is a
//! loop over ids or an explicit stack: a chain of a million nested spans costs no call
//! stack.
//!
//! Side tables that only some spans or formats fill, so a million bare spans pay nothing
//! for them: [`SpanAttrs`] (key/value pairs of the spans that have any: Chrome `args`,
//! Jaeger tags, OTLP attributes), `category` (empty, or one interned name per span) and
//! `track_info` ([`TrackInfo`] per track: thread/process/async/service, pid, tid, sort
//! index). `Track` itself keeps only its name so every existing `Track { name }` still
//! builds; the metadata sits beside it in `track_info`.

use super::names::{NameId, Names};
use super::{NO_PARENT, Warnings};

/// Where a span ran: a process/thread, a service, a TiDB node type.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Track {
    /// Display name.
    pub name: String,
}

impl Track {
    /// A track called `name`.
    pub fn new(name: impl Into<String>) -> Track {
        Track { name: name.into() }
    }
}

/// What a track stands for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TrackKind {
    /// Not stated (TiDB node types, tests).
    #[default]
    Other,
    /// One thread of a process (Chrome `pid`/`tid`).
    Thread,
    /// A whole process (process-scoped events).
    Process,
    /// A process's asynchronous spans (Chrome `b`/`e`, `S`/`F`), which may overlap freely.
    Async,
    /// A service (Jaeger process, OTLP resource `service.name`).
    Service,
}

/// Metadata of a track, beside [`SpanSet::tracks`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrackInfo {
    /// What the track is.
    pub kind: TrackKind,
    /// The group it is drawn under, e.g. the process (`"Browser 1234"`); empty for none.
    pub group: String,
    /// Process id, when the format has one.
    pub pid: Option<i64>,
    /// Thread id, when the format has one.
    pub tid: Option<i64>,
    /// Order among tracks (Chrome `process_sort_index`/`thread_sort_index`; lower first).
    pub sort_index: i64,
}

/// Key/value attributes of the spans that have any, as a compact side table: one
/// `(span, first pair)` entry per such span, sorted by span; pairs of an interned key and
/// a value range in one text arena. A pair costs 16 bytes plus its value's bytes, and no
/// allocation of its own. Values are text: strings as they are, other JSON values as
/// their JSON.
#[derive(Clone, Debug, Default)]
pub struct SpanAttrs {
    index: Vec<(u32, u32)>,
    pairs: Vec<AttrPair>,
    keys: Names,
    text: String,
    unsorted: bool,
}

/// One attribute: an interned key and where its value is in the arena.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrPair {
    /// Key, in [`SpanAttrs::keys`].
    pub key: NameId,
    /// Value: byte offset in the arena.
    pub start: u64,
    /// Value: length in bytes.
    pub len: u32,
}

impl AttrPair {
    /// Appends `value` to the arena `text`, interns `key` in `keys`, and returns the pair.
    pub fn store(keys: &mut Names, text: &mut String, key: &str, value: &str) -> AttrPair {
        let start = text.len() as u64;
        text.push_str(value);
        AttrPair {
            key: keys.intern(key),
            start,
            len: value.len() as u32,
        }
    }
}

impl SpanAttrs {
    /// An empty table whose keys and value text start as given (importers that read
    /// values straight into an arena hand it over here).
    pub fn from_parts(keys: Names, text: String) -> SpanAttrs {
        SpanAttrs {
            keys,
            text,
            ..SpanAttrs::default()
        }
    }

    /// The interned keys.
    pub fn keys(&self) -> &Names {
        &self.keys
    }

    /// Starts the attributes of `span`: pairs pushed with [`SpanAttrs::push_pair`] until
    /// the next `begin` belong to it. Spans may come in any order; [`SpanAttrs::finish`]
    /// sorts them.
    pub fn begin(&mut self, span: u32) {
        if let Some(&(last, first)) = self.index.last() {
            if first as usize == self.pairs.len() {
                // The previous span got no pairs: reuse its entry.
                self.index.pop();
                if self.index.last().is_some_and(|&(l, _)| l >= span) {
                    self.unsorted = true;
                }
            } else if last >= span {
                self.unsorted = true;
            }
        }
        self.index.push((span, self.pairs.len() as u32));
    }

    /// Adds a pair to the span last [`begin`](SpanAttrs::begin)-ed.
    pub fn push_pair(&mut self, pair: AttrPair) {
        self.pairs.push(pair);
    }

    /// Appends `value` to the arena and returns its pair for `key`.
    pub fn intern_pair(&mut self, key: &str, value: &str) -> AttrPair {
        AttrPair::store(&mut self.keys, &mut self.text, key, value)
    }

    /// Adds `pairs` to `span` (nothing when `pairs` is empty).
    pub fn push<K: AsRef<str>, V: AsRef<str>>(
        &mut self,
        span: u32,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) {
        self.begin(span);
        for (k, v) in pairs {
            let p = self.intern_pair(k.as_ref(), v.as_ref());
            self.push_pair(p);
        }
    }

    /// Drops a trailing empty entry and sorts by span, merging entries of the same span
    /// (in push order).
    pub fn finish(&mut self) {
        if self
            .index
            .last()
            .is_some_and(|&(_, f)| f as usize == self.pairs.len())
        {
            self.index.pop();
        }
        if !self.unsorted {
            self.shrink_to_fit();
            return;
        }
        let mut order: Vec<usize> = (0..self.index.len()).collect();
        order.sort_by_key(|&k| self.index[k].0);
        let mut index = Vec::with_capacity(self.index.len());
        let mut pairs = Vec::with_capacity(self.pairs.len());
        for k in order {
            let span = self.index[k].0;
            if index.last().is_none_or(|&(s, _)| s != span) {
                index.push((span, pairs.len() as u32));
            }
            pairs.extend_from_slice(&self.pairs[self.range(k)]);
        }
        self.index = index;
        self.pairs = pairs;
        self.unsorted = false;
        self.shrink_to_fit();
    }

    fn shrink_to_fit(&mut self) {
        self.index.shrink_to_fit();
        self.pairs.shrink_to_fit();
        self.text.shrink_to_fit();
    }

    fn range(&self, k: usize) -> std::ops::Range<usize> {
        let end = self
            .index
            .get(k + 1)
            .map_or(self.pairs.len(), |&(_, f)| f as usize);
        self.index[k].1 as usize..end
    }

    /// The pairs of `span` (empty when it has none).
    pub fn pairs_of(&self, span: u32) -> &[AttrPair] {
        debug_assert!(!self.unsorted, "SpanAttrs::finish not called");
        match self.index.binary_search_by_key(&span, |&(s, _)| s) {
            Ok(k) => &self.pairs[self.range(k)],
            Err(_) => &[],
        }
    }

    /// The value text of a pair.
    pub fn value(&self, p: &AttrPair) -> &str {
        let start = p.start as usize;
        self.text.get(start..start + p.len as usize).unwrap_or("")
    }

    /// The attributes of `span` as `(key, value)`, in file order.
    pub fn get(&self, span: u32) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.pairs_of(span)
            .iter()
            .map(|p| (self.keys.get(p.key), self.value(p)))
    }

    /// [`SpanAttrs::get`] as owned pairs (for tooltips and tests).
    pub fn owned(&self, span: u32) -> Vec<(String, String)> {
        self.get(span)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Number of spans with attributes.
    pub fn spans_with_attrs(&self) -> usize {
        self.index.len()
    }

    /// Number of pairs over all spans.
    pub fn pair_count(&self) -> usize {
        self.pairs.len()
    }

    /// True when no span has attributes.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Bytes held (index, pairs, arena, keys), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.index.capacity() * 8
            + self.pairs.capacity() * std::mem::size_of::<AttrPair>()
            + self.text.capacity()
            + self.keys.heap_bytes()
    }

    /// The same attributes for renumbered spans: `map[old]` is the new index, or
    /// `u32::MAX` for a span that was dropped.
    pub fn remap(mut self, map: &[u32]) -> SpanAttrs {
        let mut out = SpanAttrs::from_parts(
            std::mem::take(&mut self.keys),
            std::mem::take(&mut self.text),
        );
        for k in 0..self.index.len() {
            let Some(&new) = map.get(self.index[k].0 as usize) else {
                continue;
            };
            if new != u32::MAX {
                out.begin(new);
                for &p in &self.pairs[self.range(k)] {
                    out.push_pair(p);
                }
            }
        }
        out.finish();
        out
    }

    /// Appends `other`'s attributes (not [`finish`](SpanAttrs::finish)ed), its span `s`
    /// becoming span `s + offset`: the same table as if its pairs had been pushed here
    /// after this one's (a trace read in parts is joined so).
    pub fn append(&mut self, other: &SpanAttrs, offset: u32) {
        let keys: Vec<NameId> = other
            .keys
            .iter()
            .map(|(_, k)| self.keys.intern(k))
            .collect();
        let base = self.text.len() as u64;
        self.text.push_str(&other.text);
        for k in 0..other.index.len() {
            self.begin(other.index[k].0 + offset);
            for p in &other.pairs[other.range(k)] {
                self.push_pair(AttrPair {
                    key: keys[p.key as usize],
                    start: p.start + base,
                    len: p.len,
                });
            }
        }
        self.unsorted |= other.unsorted;
    }
}

/// Timed spans, as columns.
#[derive(Clone, Debug, Default)]
pub struct SpanSet {
    /// Interned span names.
    pub names: Names,
    /// Start, nanoseconds after `origin_ns`.
    pub start_ns: Vec<u64>,
    /// Duration in nanoseconds.
    pub dur_ns: Vec<u64>,
    /// Index of the parent span ([`NO_PARENT`] for roots).
    pub parent: Vec<u32>,
    /// Name of each span.
    pub name: Vec<NameId>,
    /// Track of each span (index into `tracks`).
    pub track: Vec<u32>,
    /// The tracks.
    pub tracks: Vec<Track>,
    /// Metadata of each track (parallel to `tracks`), or empty when the format has none.
    pub track_info: Vec<TrackInfo>,
    /// Category of each span (Chrome `cat`), or empty when the format has none.
    pub category: Vec<NameId>,
    /// Key/value attributes of the spans that have any.
    pub attrs: SpanAttrs,
    /// Trace-level facts stated by the file (Chrome `displayTimeUnit`, trace ids …).
    pub meta: Vec<(String, String)>,
    /// Absolute time (Unix nanoseconds, or the format's own clock) of relative 0.
    pub origin_ns: u64,
    /// Damage found while importing or linking.
    pub warnings: Warnings,
}

impl SpanSet {
    /// Number of spans.
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    /// True without spans.
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    /// End of span `i` (relative).
    pub fn end_ns(&self, i: usize) -> u64 {
        self.start_ns[i].saturating_add(self.dur_ns[i])
    }

    /// Metadata of track `t` (the default when the format stated none).
    pub fn track_info(&self, t: u32) -> TrackInfo {
        self.track_info.get(t as usize).cloned().unwrap_or_default()
    }

    /// Track `t`'s name as bands, tooltips and `scorch info` show it: under its group
    /// (process) as Perfetto groups threads, `"Browser 12 / CrRendererMain"`, unless the
    /// name already starts with the group; `"spans"` for a track the set does not have.
    pub fn track_label(&self, t: u32) -> String {
        let Some(track) = self.tracks.get(t as usize) else {
            return "spans".to_string();
        };
        let group = self.track_info(t).group;
        if group.is_empty() || track.name.starts_with(&group) {
            track.name.clone()
        } else {
            format!("{group} / {}", track.name)
        }
    }

    /// Category name of span `i`, when the format has categories.
    pub fn category_of(&self, i: usize) -> Option<&str> {
        self.category.get(i).map(|&c| self.names.get(c))
    }

    /// Heap bytes of the span columns, names, categories and tracks (not the
    /// attributes: [`SpanAttrs::heap_bytes`]), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.start_ns.capacity() * 8
            + self.dur_ns.capacity() * 8
            + (self.parent.capacity()
                + self.name.capacity()
                + self.track.capacity()
                + self.category.capacity())
                * 4
            + self.names.heap_bytes()
            + self
                .tracks
                .iter()
                .map(|t| t.name.capacity() + std::mem::size_of::<Track>())
                .sum::<usize>()
            + self.track_info.capacity() * std::mem::size_of::<TrackInfo>()
    }

    /// `(first start, last end)` over all spans, relative.
    pub fn time_range(&self) -> (u64, u64) {
        let start = self.start_ns.iter().copied().min().unwrap_or(0);
        let end = (0..self.len()).map(|i| self.end_ns(i)).max().unwrap_or(0);
        (start, end)
    }

    /// Builds a set from spans given by id with parent ids (0 or an unknown id: none),
    /// absolute start times and durations; `ids` must be unique (later duplicates are
    /// dropped and counted). Links parents by id, counting orphans.
    pub fn from_ids(
        names: Names,
        spans: Vec<RawSpan>,
        tracks: Vec<Track>,
        warnings: Warnings,
    ) -> SpanSet {
        Self::from_ids_with(names, spans, tracks, warnings, SpanAttrs::default())
    }

    /// [`SpanSet::from_ids`] with attributes, given by position in `spans` (they follow
    /// their span when duplicates are dropped).
    pub fn from_ids_with(
        mut names: Names,
        spans: Vec<RawSpan>,
        tracks: Vec<Track>,
        warnings: Warnings,
        attrs: SpanAttrs,
    ) -> SpanSet {
        let ids: Vec<u64> = spans.iter().map(|s| s.id).collect();
        let parent_ids: Vec<Option<u64>> = spans.iter().map(|s| s.parent_id).collect();
        let resolved = super::span_ids::resolve(&ids, &parent_ids);
        drop((ids, parent_ids));
        let kept = resolved.kept.as_deref();
        let is_kept = |i: usize| kept.is_none_or(|k| k[i]);
        let mut cols = Columns::with_capacity(spans.len() - resolved.duplicates as usize);
        for (i, s) in spans.into_iter().enumerate() {
            if is_kept(i) {
                cols.push(s.start_ns, s.dur_ns, names.intern(&s.name), s.track);
            }
        }
        Self::assemble(names, cols, resolved, tracks, warnings, attrs)
    }

    /// [`SpanSet::from_ids`] of spans given as columns, their names already in `names`
    /// (interned in the spans' order, and nothing else in it); the same set as
    /// `from_ids` makes of them (when spans are dropped for a repeated id, the kept
    /// spans' names are interned again into a table of their own, in their order).
    pub fn from_id_columns(
        names: Names,
        spans: IdColumns,
        tracks: Vec<Track>,
        warnings: Warnings,
    ) -> SpanSet {
        Self::from_id_columns_with(names, spans, tracks, warnings, SpanAttrs::default())
    }

    /// [`SpanSet::from_id_columns`] with attributes, given by position in `spans` (they
    /// follow their span when duplicates are dropped).
    pub fn from_id_columns_with(
        names: Names,
        spans: IdColumns,
        tracks: Vec<Track>,
        warnings: Warnings,
        attrs: SpanAttrs,
    ) -> SpanSet {
        let resolved = super::span_ids::resolve(&spans.id, &spans.parent_id);
        let IdColumns {
            start_ns,
            dur_ns,
            name,
            track,
            ..
        } = spans;
        let (names, cols) = match resolved.kept.as_deref() {
            None => (
                names,
                Columns {
                    start_ns,
                    dur_ns,
                    name,
                    track,
                },
            ),
            // Names interned again in the kept spans' order, as `from_ids` interns them.
            Some(kept) => {
                let mut fresh = Names::new();
                let mut cols = Columns::with_capacity(kept.len());
                for (i, _) in kept.iter().enumerate().filter(|&(_, &k)| k) {
                    let id = fresh.intern(names.get(name[i]));
                    cols.push(start_ns[i], dur_ns[i], id, track[i]);
                }
                (fresh, cols)
            }
        };
        Self::assemble(names, cols, resolved, tracks, warnings, attrs)
    }

    /// The set of the kept spans `cols` (absolute starts), with their ids resolved.
    fn assemble(
        names: Names,
        mut cols: Columns,
        resolved: super::span_ids::Resolved,
        tracks: Vec<Track>,
        mut warnings: Warnings,
        attrs: SpanAttrs,
    ) -> SpanSet {
        let duplicates = resolved.duplicates;
        if duplicates > 0 {
            warnings.notes.push(format!(
                "{duplicates} spans with an id seen before were dropped"
            ));
        }
        let orphans = resolved.orphans;
        if orphans > 0 {
            warnings.notes.push(format!(
                "{orphans} span{} whose parent is not in the trace became root{}",
                if orphans == 1 { "" } else { "s" },
                if orphans == 1 { "" } else { "s" }
            ));
        }
        let origin_ns = cols.start_ns.iter().copied().min().unwrap_or(0);
        for s in &mut cols.start_ns {
            *s -= origin_ns;
        }
        // Attributes follow their span when duplicates are dropped.
        let attrs = match &resolved.kept {
            Some(kept) => {
                let position: Vec<u32> = if attrs.is_empty() {
                    Vec::new()
                } else {
                    let mut next = 0u32;
                    kept.iter()
                        .map(|&k| {
                            next += u32::from(k);
                            if k { next - 1 } else { u32::MAX }
                        })
                        .collect()
                };
                attrs.remap(&position)
            }
            None => {
                let mut a = attrs;
                a.finish();
                a
            }
        };
        SpanSet {
            origin_ns,
            tracks,
            start_ns: cols.start_ns,
            dur_ns: cols.dur_ns,
            parent: resolved.parent,
            name: cols.name,
            track: cols.track,
            names,
            warnings,
            attrs,
            ..SpanSet::default()
        }
    }

    /// Keeps the tracks whose metadata `keep` accepts (a track without metadata is asked
    /// about the default) and the spans on them, in order; a span whose parent was on a
    /// track left out becomes a root. Returns how many spans were left out.
    pub fn retain_tracks(&mut self, keep: impl Fn(&TrackInfo) -> bool) -> usize {
        let mut track_map = Vec::with_capacity(self.tracks.len());
        let (mut tracks, mut infos) = (Vec::new(), Vec::new());
        let old_infos = std::mem::take(&mut self.track_info);
        for (t, track) in std::mem::take(&mut self.tracks).into_iter().enumerate() {
            let info = old_infos.get(t).cloned().unwrap_or_default();
            if keep(&info) {
                track_map.push(tracks.len() as u32);
                tracks.push(track);
                infos.push(info);
            } else {
                track_map.push(u32::MAX);
            }
        }
        if old_infos.is_empty() {
            infos.clear();
        }
        self.tracks = tracks;
        self.track_info = infos;
        let n = self.len();
        let new_track = |t: u32| track_map.get(t as usize).copied().unwrap_or(u32::MAX);
        let mut span_map = vec![u32::MAX; n];
        let mut kept = 0usize;
        for (m, &t) in span_map.iter_mut().zip(&self.track) {
            if new_track(t) != u32::MAX {
                *m = kept as u32;
                kept += 1;
            }
        }
        if kept == n {
            return 0;
        }
        let mut kept = 0usize;
        for i in 0..n {
            let t = new_track(self.track[i]);
            if t == u32::MAX {
                continue;
            }
            // A parent left out (or none) makes a root.
            let p = self.parent[i];
            self.parent[kept] = span_map.get(p as usize).copied().unwrap_or(NO_PARENT);
            self.start_ns[kept] = self.start_ns[i];
            self.dur_ns[kept] = self.dur_ns[i];
            self.name[kept] = self.name[i];
            self.track[kept] = t;
            if let Some(&c) = self.category.get(i) {
                self.category[kept] = c;
            }
            kept += 1;
        }
        for v in [&mut self.start_ns, &mut self.dur_ns] {
            v.truncate(kept);
            v.shrink_to_fit();
        }
        for v in [&mut self.parent, &mut self.name, &mut self.track] {
            v.truncate(kept);
            v.shrink_to_fit();
        }
        if !self.category.is_empty() {
            self.category.truncate(kept);
        }
        if !self.attrs.is_empty() {
            self.attrs = std::mem::take(&mut self.attrs).remap(&span_map);
        }
        n - kept
    }
}

/// A span as an importer reads it, before linking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawSpan {
    /// The format's span id.
    pub id: u64,
    /// The parent's id; `None` for a root.
    pub parent_id: Option<u64>,
    /// Absolute start in nanoseconds.
    pub start_ns: u64,
    /// Duration in nanoseconds.
    pub dur_ns: u64,
    /// Name (TiDB `event`, Jaeger `operationName`, …).
    pub name: String,
    /// Track index.
    pub track: u32,
}

/// Spans given by id, as columns ([`SpanSet::from_id_columns`]): what [`RawSpan`]s say,
/// with names interned.
#[derive(Clone, Debug, Default)]
pub struct IdColumns {
    pub id: Vec<u64>,
    pub parent_id: Vec<Option<u64>>,
    /// Absolute starts in nanoseconds.
    pub start_ns: Vec<u64>,
    pub dur_ns: Vec<u64>,
    pub name: Vec<NameId>,
    pub track: Vec<u32>,
}

impl IdColumns {
    /// Appends a span.
    pub fn push(&mut self, s: IdSpan) {
        self.id.push(s.id);
        self.parent_id.push(s.parent_id);
        self.start_ns.push(s.start_ns);
        self.dur_ns.push(s.dur_ns);
        self.name.push(s.name);
        self.track.push(s.track);
    }

    /// Number of spans.
    pub fn len(&self) -> usize {
        self.id.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.id.is_empty()
    }
}

/// One span of [`IdColumns`].
#[derive(Clone, Copy, Debug)]
pub struct IdSpan {
    pub id: u64,
    pub parent_id: Option<u64>,
    pub start_ns: u64,
    pub dur_ns: u64,
    pub name: NameId,
    pub track: u32,
}

/// The kept spans' columns a set is assembled from.
struct Columns {
    start_ns: Vec<u64>,
    dur_ns: Vec<u64>,
    name: Vec<NameId>,
    track: Vec<u32>,
}

impl Columns {
    fn with_capacity(n: usize) -> Columns {
        Columns {
            start_ns: Vec::with_capacity(n),
            dur_ns: Vec::with_capacity(n),
            name: Vec::with_capacity(n),
            track: Vec::with_capacity(n),
        }
    }

    fn push(&mut self, start_ns: u64, dur_ns: u64, name: NameId, track: u32) {
        self.start_ns.push(start_ns);
        self.dur_ns.push(dur_ns);
        self.name.push(name);
        self.track.push(track);
    }
}

/// The linked spans: children, roots and end times over subtrees.
///
/// Parents are the set's own ([`SpanSet::parent`]) unless links had to be changed (cycles
/// broken, or [`SpanTree::build_with_parents`]): only then does the tree hold a copy, so
/// a million spans do not pay 4 bytes each for a duplicate. Read them with
/// [`SpanTree::parent_of`] or [`SpanTree::parents`].
#[derive(Clone, Debug, Default)]
pub struct SpanTree {
    /// Parent of each span when they differ from the set's; empty otherwise.
    own_parent: Vec<u32>,
    /// Roots, sorted like siblings.
    pub roots: Vec<u32>,
    child_start: Vec<u32>,
    child_list: Vec<u32>,
    /// Latest end over each span and all its descendants (relative ns), as they are
    /// drawn: a zero-duration span reaches one nanosecond past its start.
    pub max_end_ns: Vec<u64>,
    /// Parent links removed to break cycles.
    pub cycles_broken: u64,
}

impl SpanTree {
    /// Parent of span `i` in this tree ([`NO_PARENT`] for roots); `set` is the one the
    /// tree was built from.
    pub fn parent_of(&self, set: &SpanSet, i: usize) -> u32 {
        self.parents(set)[i]
    }

    /// Parents of all spans in this tree (`set` is the one the tree was built from).
    pub fn parents<'a>(&'a self, set: &'a SpanSet) -> &'a [u32] {
        if self.own_parent.is_empty() {
            &set.parent
        } else {
            &self.own_parent
        }
    }

    /// True when the tree's parents are the set's own.
    pub fn has_set_parents(&self) -> bool {
        self.own_parent.is_empty()
    }

    /// Children of span `i`, sorted by start, longer first on ties.
    pub fn children(&self, i: u32) -> &[u32] {
        let i = i as usize;
        &self.child_list[self.child_start[i] as usize..self.child_start[i + 1] as usize]
    }

    /// Heap bytes held, for memory reports.
    pub fn heap_bytes(&self) -> usize {
        (self.own_parent.capacity()
            + self.roots.capacity()
            + self.child_start.capacity()
            + self.child_list.capacity())
            * 4
            + self.max_end_ns.capacity() * 8
    }

    /// Links `set` into a tree.
    pub fn build(set: &SpanSet) -> SpanTree {
        let n = set.len();
        let parent = &set.parent;
        if parents_first(parent) {
            // Every walk up goes to lower indices: no cycles.
            return Self::link(set, Vec::new(), 0);
        }
        // Links cut to break cycles; the set's parents are copied only if there are any.
        let mut cuts: Vec<u32> = Vec::new();

        // Break cycles: walk up from every span; meeting a span still on the current walk
        // closes a cycle, broken by cutting the link that closed it.
        const NEW: u8 = 0;
        const ON_PATH: u8 = 1;
        const DONE: u8 = 2;
        let mut state = vec![NEW; n];
        let mut path: Vec<u32> = Vec::new();
        let mut cycles_broken = 0;
        for start in 0..n {
            if state[start] != NEW {
                continue;
            }
            let mut cur = start as u32;
            loop {
                state[cur as usize] = ON_PATH;
                path.push(cur);
                let p = parent[cur as usize];
                if p == NO_PARENT || state[p as usize] == DONE {
                    break;
                }
                if state[p as usize] == ON_PATH {
                    cuts.push(cur);
                    cycles_broken += 1;
                    break;
                }
                cur = p;
            }
            for &v in &path {
                state[v as usize] = DONE;
            }
            path.clear();
        }
        drop(state);
        let own_parent = if cuts.is_empty() {
            Vec::new()
        } else {
            let mut own = set.parent.clone();
            for c in cuts {
                own[c as usize] = NO_PARENT;
            }
            own
        };
        Self::link(set, own_parent, cycles_broken)
    }

    /// Links `set` with the given parents instead of its own, which must already be
    /// acyclic (e.g. a built tree's parents with some links cut: the timeline cuts links
    /// that cross tracks so each track is a forest of its own).
    pub fn build_with_parents(set: &SpanSet, parent: Vec<u32>) -> SpanTree {
        let own = if parent == set.parent {
            Vec::new()
        } else {
            parent
        };
        Self::link(set, own, 0)
    }

    /// Links with `own_parent` (empty: the set's parents).
    fn link(set: &SpanSet, own_parent: Vec<u32>, cycles_broken: u64) -> SpanTree {
        let n = set.len();
        let parent: &[u32] = if own_parent.is_empty() {
            &set.parent
        } else {
            &own_parent
        };
        // Children in CSR form, sorted by start (ties: longer first).
        let key = |i: u32| {
            (
                set.start_ns[i as usize],
                std::cmp::Reverse(set.dur_ns[i as usize]),
                i,
            )
        };
        let mut child_start = vec![0u32; n + 1];
        for &p in parent {
            if p != NO_PARENT {
                child_start[p as usize + 1] += 1;
            }
        }
        for i in 0..n {
            child_start[i + 1] += child_start[i];
        }
        let mut fill = child_start.clone();
        let mut child_list = vec![0u32; child_start[n] as usize];
        let mut roots = Vec::new();
        for (i, &p) in parent.iter().enumerate() {
            if p == NO_PARENT {
                roots.push(i as u32);
            } else {
                child_list[fill[p as usize] as usize] = i as u32;
                fill[p as usize] += 1;
            }
        }
        drop(fill);
        // Importers mostly emit spans in this order already, or nearly (see
        // `sort_nearly_sorted`). Keys are unique (they end with the index).
        crate::par::each_list(
            &child_start,
            &mut child_list,
            crate::par::two_threads_for(n),
            |_, kids| sort_nearly_sorted(kids, key),
        );
        sort_nearly_sorted(&mut roots, key);
        roots.shrink_to_fit();

        // Latest end over subtrees: a post-order by explicit stack. A zero-duration span
        // is drawn one nanosecond wide, so it reaches that far: one at the very end of its
        // parent must keep the next tree off its row.
        let mut max_end_ns: Vec<u64> = (0..n)
            .map(|i| set.end_ns(i).max(set.start_ns[i].saturating_add(1)))
            .collect();
        // When every parent precedes its children (importers mostly emit them so), index
        // order backwards is a post-order, and reads memory in sequence.
        let order: Vec<u32> = if parents_first(parent) {
            (0..n as u32).collect()
        } else {
            let mut order = Vec::with_capacity(n);
            let mut stack: Vec<u32> = roots.clone();
            while let Some(v) = stack.pop() {
                order.push(v);
                let (a, b) = (
                    child_start[v as usize] as usize,
                    child_start[v as usize + 1] as usize,
                );
                stack.extend_from_slice(&child_list[a..b]);
            }
            order
        };
        for &v in order.iter().rev() {
            let p = parent[v as usize];
            if p != NO_PARENT {
                max_end_ns[p as usize] = max_end_ns[p as usize].max(max_end_ns[v as usize]);
            }
        }
        SpanTree {
            own_parent,
            roots,
            child_start,
            child_list,
            max_end_ns,
            cycles_broken,
        }
    }
}

/// Sorts `v` by `key` (unique keys, so any sort gives the same order). Importers mostly
/// emit spans in order already, or nearly: spans that start together come in file order,
/// not longest first. Such a list is put in order by insertion, in one pass and a few
/// moves; past a budget of moves (a list far from sorted) it is sorted outright.
fn sort_nearly_sorted<K: Ord>(v: &mut [u32], key: impl Fn(u32) -> K) {
    let budget = v.len().saturating_mul(2) + 64;
    let mut moves = 0usize;
    for i in 1..v.len() {
        let x = v[i];
        let kx = key(x);
        if key(v[i - 1]) <= kx {
            continue;
        }
        let mut j = i;
        while j > 0 && key(v[j - 1]) > kx {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
        moves += i - j;
        if moves > budget {
            v.sort_unstable_by_key(|&c| key(c));
            return;
        }
    }
}

/// Whether every span's parent has a lower index than the span.
fn parents_first(parent: &[u32]) -> bool {
    parent
        .iter()
        .enumerate()
        .all(|(i, &p)| p == NO_PARENT || (p as usize) < i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(id: u64, parent: u64, start: u64, dur: u64, name: &str) -> RawSpan {
        RawSpan {
            id,
            parent_id: (parent != 0).then_some(parent),
            start_ns: start,
            dur_ns: dur,
            name: name.into(),
            track: 0,
        }
    }

    #[test]
    fn retain_tracks_keeps_the_spans_of_the_tracks_kept_and_their_links() {
        // Tracks 0 (pid 1), 1 (pid 2), 2 (pid 1); span 0's parent (3) comes after it, span
        // 4's parent (1) is on a track left out.
        let mut names = Names::new();
        let n: Vec<NameId> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|s| names.intern(s))
            .collect();
        let mut attrs = SpanAttrs::default();
        attrs.push(1, [("k", "on b")]);
        attrs.push(3, [("k", "on d")]);
        attrs.finish();
        let mut set = SpanSet {
            names,
            start_ns: vec![10, 20, 30, 40, 50],
            dur_ns: vec![1, 2, 3, 4, 5],
            parent: vec![3, NO_PARENT, 0, NO_PARENT, 1],
            name: n.clone(),
            track: vec![0, 1, 2, 0, 2],
            tracks: ["t0", "t1", "t2"].map(Track::new).to_vec(),
            track_info: [1, 2, 1]
                .map(|pid| TrackInfo {
                    pid: Some(pid),
                    ..TrackInfo::default()
                })
                .to_vec(),
            category: n.clone(),
            attrs,
            ..SpanSet::default()
        };
        assert_eq!(set.retain_tracks(|t| t.pid == Some(1)), 1);
        assert_eq!(set.start_ns, [10, 30, 40, 50]);
        assert_eq!(set.dur_ns, [1, 3, 4, 5]);
        assert_eq!(set.name, [n[0], n[2], n[3], n[4]]);
        assert_eq!(set.category, [n[0], n[2], n[3], n[4]]);
        assert_eq!(set.track, [0, 1, 0, 1]);
        assert_eq!(set.parent, [2, 0, NO_PARENT, NO_PARENT]);
        assert_eq!(set.tracks.len(), 2);
        assert_eq!(set.tracks[1].name, "t2");
        assert_eq!(set.track_info.len(), 2);
        let got: Vec<_> = (0..4).map(|i| set.attrs.owned(i)).collect();
        assert_eq!(got[0], []);
        assert_eq!(got[2], [("k".to_string(), "on d".to_string())]);
        assert_eq!(set.attrs.spans_with_attrs(), 1);
        // Keeping everything changes nothing.
        let before = set.clone();
        assert_eq!(set.retain_tracks(|_| true), 0);
        assert_eq!((set.parent, set.track), (before.parent, before.track));
    }

    #[test]
    fn links_sorts_and_finds_max_end() {
        // c1 starts first; c2 ties c3's start but is longer, so it sorts first.
        let set = SpanSet::from_ids(
            Names::new(),
            vec![
                raw(1, 0, 100, 100, "p"),
                raw(4, 1, 150, 10, "c3"),
                raw(3, 1, 150, 80, "c2"),
                raw(2, 1, 110, 20, "c1"),
                raw(5, 3, 200, 50, "d"),
                raw(6, 42, 120, 5, "orphan"),
            ],
            vec![Track { name: "t".into() }],
            Warnings::default(),
        );
        assert_eq!(set.origin_ns, 100);
        let t = SpanTree::build(&set);
        let names = |v: &[u32]| {
            v.iter()
                .map(|&i| set.names.get(set.name[i as usize]).to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(t.children(0)), ["c1", "c2", "c3"]);
        assert_eq!(names(&t.roots), ["p", "orphan"]);
        // d ends at 250 (relative 150), past its parent c2 and past p.
        assert_eq!(t.max_end_ns[0], 150);
        assert_eq!(t.max_end_ns[2], 150);
        assert!(
            set.warnings
                .notes
                .iter()
                .any(|n| n.contains("1 span whose parent"))
        );
    }

    #[test]
    fn max_end_with_children_before_parents() {
        // The same tree listed children first: the post-order walk, not index order.
        let set = SpanSet::from_ids(
            Names::new(),
            vec![
                raw(5, 3, 200, 50, "d"),
                raw(3, 1, 150, 80, "c2"),
                raw(2, 1, 110, 20, "c1"),
                raw(1, 0, 100, 100, "p"),
            ],
            vec![Track { name: "t".into() }],
            Warnings::default(),
        );
        let t = SpanTree::build(&set);
        assert_eq!(t.max_end_ns, [150, 150, 30, 150]);
    }

    #[test]
    fn cycles_are_broken_and_counted() {
        let set = SpanSet::from_ids(
            Names::new(),
            vec![
                raw(1, 3, 0, 10, "a"),
                raw(2, 1, 1, 5, "b"),
                raw(3, 2, 2, 3, "c"),
                raw(4, 0, 0, 1, "r"),
            ],
            vec![],
            Warnings::default(),
        );
        let t = SpanTree::build(&set);
        assert_eq!(t.cycles_broken, 1);
        assert_eq!(t.roots.len(), 2);
        // Every span is reachable from a root exactly once.
        let mut seen = vec![0; set.len()];
        let mut stack = t.roots.clone();
        while let Some(v) = stack.pop() {
            seen[v as usize] += 1;
            stack.extend_from_slice(t.children(v));
        }
        assert!(seen.iter().all(|&s| s == 1), "{seen:?}");
    }

    #[test]
    fn attrs_follow_their_spans() {
        let mut a = SpanAttrs::default();
        a.push(3, [("c", "3")]);
        a.push(1, [("a", "1"), ("b", "2")]);
        a.push(2, [("", ""); 0]);
        a.push(3, [("d", "4")]);
        a.finish();
        fn get(a: &SpanAttrs, s: u32) -> Vec<(&str, &str)> {
            a.get(s).collect()
        }
        assert_eq!(get(&a, 1), [("a", "1"), ("b", "2")]);
        assert_eq!(get(&a, 2), []);
        assert_eq!(get(&a, 3), [("c", "3"), ("d", "4")]);
        assert_eq!((a.spans_with_attrs(), a.pair_count()), (2, 4));
        // Keys are stored once.
        a.push(4, [("a", "5")]);
        a.finish();
        assert_eq!(a.keys().len(), 4);

        // A dropped duplicate takes its attributes with it; later spans keep theirs.
        let mut a = SpanAttrs::default();
        a.push(0, [("k", "first")]);
        a.push(1, [("k", "dup")]);
        a.push(2, [("k", "third")]);
        let set = SpanSet::from_ids_with(
            Names::new(),
            vec![
                raw(7, 0, 0, 1, "a"),
                raw(7, 0, 0, 1, "b"),
                raw(8, 7, 0, 1, "c"),
            ],
            vec![Track::new("t")],
            Warnings::default(),
            a,
        );
        assert_eq!(set.len(), 2);
        assert_eq!(get(&set.attrs, 0), [("k", "first")]);
        assert_eq!(get(&set.attrs, 1), [("k", "third")]);
        assert_eq!(set.track_info(0), TrackInfo::default());
    }

    #[test]
    fn a_million_deep_chain() {
        let spans: Vec<RawSpan> = (1..=1_000_000u64)
            .map(|i| raw(i, i - 1, i, 2_000_000 - 2 * i, "f"))
            .collect();
        let set = SpanSet::from_ids(Names::new(), spans, vec![], Warnings::default());
        let t = SpanTree::build(&set);
        assert_eq!(t.roots.len(), 1);
        assert_eq!(t.max_end_ns[0], set.end_ns(0));
    }

    #[test]
    fn nearly_sorted_lists_sort_like_any_sort() {
        // Sorted, a few swaps, runs of ties in the wrong order, reversed, random: the
        // insertion path, the budget running out halfway, and the outright sort.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for n in [0usize, 1, 2, 7, 100, 5000] {
            let sorted: Vec<u32> = (0..n as u32).collect();
            let mut cases = vec![sorted.clone(), sorted.iter().rev().copied().collect()];
            let mut swapped = sorted.clone();
            for _ in 0..n / 20 {
                let i = next() as usize % n;
                let j = (i + 1 + next() as usize % 4).min(n - 1);
                swapped.swap(i, j);
            }
            cases.push(swapped);
            let mut random = sorted.clone();
            for i in (1..n).rev() {
                random.swap(i, next() as usize % (i + 1));
            }
            cases.push(random);
            // Half sorted, then reversed: the budget runs out in the middle.
            let mut half = sorted.clone();
            half[n / 2..].reverse();
            cases.push(half);
            for v in cases {
                // Ascending and descending keys: each case is nearly sorted by one of
                // them and far from sorted by the other.
                let mut up = v.clone();
                sort_nearly_sorted(&mut up, |x| x);
                assert_eq!(up, sorted, "n = {n}");
                let mut down = v;
                sort_nearly_sorted(&mut down, |x| u32::MAX - x);
                assert!(down.iter().rev().eq(sorted.iter()), "n = {n}");
            }
        }
    }
}
