//! A JSON document held compactly, for readers that look around a document freely (the
//! Firefox Profiler's tables, where a column is read while another is looked up).
//!
//! `serde_json::Value` takes 10–12 bytes of memory per byte of a column table's JSON:
//! 32 bytes per number, a `String` per string, a `BTreeMap` per object. Here:
//! - an array of numbers (and nulls) is a `Vec<f64>`, 8 bytes per number, null a NaN (JSON
//!   has no NaN); an array that holds anything else, or an integer that an `f64` would
//!   round (beyond 2⁵³), is a list of nodes as before;
//! - strings and object keys borrow the input unless they hold escapes;
//! - an object is its members in file order; [`J::get`] answers as `Value` does, with the
//!   last of repeated keys.
//!
//! A number read from a number array is an `f64`, so `as_u64` and `as_i64` take any
//! integral float within 2⁵³ (`3.0` reads as 3, which `Value` would refuse); otherwise
//! every accessor answers as `Value`'s does. Nesting is limited by `serde_json`'s recursion limit (128), so dropping
//! a tree recurses at most that deep.

use super::chrome::scan::{skip_string, skip_value, skip_ws};
use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// Largest integer every `f64` holds exactly.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// A number as written: integers exactly, else a float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    U(u64),
    I(i64),
    F(f64),
}

impl Num {
    /// `i`, non-negative ones as `U` (as serde_json keeps them).
    fn from_i64(i: i64) -> Num {
        if i >= 0 { Num::U(i as u64) } else { Num::I(i) }
    }

    /// The number as an `f64`, when one holds it exactly.
    fn exact_f64(self) -> Option<f64> {
        match self {
            Num::U(u) if u <= 1 << 53 => Some(u as f64),
            Num::I(i) if i.unsigned_abs() <= 1 << 53 => Some(i as f64),
            Num::F(f) => Some(f),
            _ => None,
        }
    }
}

/// One node of a document.
#[derive(Clone, Debug, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    Num(Num),
    Str(Cow<'a, str>),
    /// An array of numbers and nulls (NaN).
    Nums(Vec<f64>),
    /// An array of such arrays (gecko's table rows): row `i` is `nums[ends[i-1]..ends[i]]`.
    Rows {
        nums: Vec<f64>,
        ends: Vec<usize>,
    },
    Arr(Vec<Json<'a>>),
    Obj(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl<'a> Json<'a> {
    /// Reads a whole document; strings without escapes borrow `text`.
    pub fn from_slice(text: &'a [u8]) -> Result<Json<'a>, serde_json::Error> {
        serde_json::from_slice(text)
    }

    /// [`from_slice`](Self::from_slice), the elements of the root's `threads` and
    /// `processes` arrays (and of those of a root `profile`) read on all cores: the root
    /// is outlined on this thread, each such element kept as its text and handed, as soon
    /// as its end is found, to the other threads, which read the elements while the
    /// outline goes on (the outline of a 1 GB gecko profile took 1.3 s on one core before
    /// any element was read), then this one reads with them. The same tree as
    /// `from_slice`; under `min_bytes`, or on one core, it is `from_slice`; a document the
    /// outline does not expect, or an element that does not read, is read again by
    /// `from_slice`, for its error (serde checks the text whole, so a syntax error is
    /// reported where the file has it).
    pub fn from_slice_parallel(
        text: &'a [u8],
        min_bytes: usize,
    ) -> Result<Json<'a>, serde_json::Error> {
        let threads = crate::par::cores();
        if text.len() < min_bytes || threads < 2 {
            return Self::from_slice(text);
        }
        use std::sync::mpsc::Receiver;
        use std::sync::{Arc, Mutex};
        let failed = std::sync::atomic::AtomicBool::new(false);
        let (outline, results) = std::thread::scope(|s| {
            // Made inside the scope: a reader that stops early drops its end before the
            // scope waits for the others.
            type Units<'a> = Arc<Mutex<Receiver<(usize, &'a [u8])>>>;
            let (send, receive) = std::sync::mpsc::channel();
            let receive: Units<'a> = Arc::new(Mutex::new(receive));
            let failed = &failed;
            let work = move |receive: Units<'a>| {
                let mut read = Vec::new();
                loop {
                    let next = match receive.lock() {
                        Ok(r) => r.recv(),
                        Err(_) => return read,
                    };
                    let Ok((i, unit)) = next else {
                        return read;
                    };
                    if failed.load(std::sync::atomic::Ordering::Relaxed) {
                        continue;
                    }
                    match Self::from_slice(unit) {
                        Ok(j) => read.push((i, j)),
                        Err(_) => failed.store(true, std::sync::atomic::Ordering::Relaxed),
                    }
                }
            };
            let others: Vec<_> = (1..threads)
                .map(|_| {
                    let receive = receive.clone();
                    s.spawn(move || work(receive))
                })
                .collect();
            let mut found = 0;
            let outline = outline(text, &mut |unit| {
                // The readers outlive the outline: a send does not fail.
                let _ = send.send((found, unit));
                found += 1;
            });
            drop(send);
            let mut all = work(receive);
            for h in others {
                all.extend(crate::par::join(h));
            }
            (outline, all)
        });
        // Anything the outline does not expect (or damage) is read in one, for its error.
        let Some(outline) = outline else {
            return Self::from_slice(text);
        };
        if failed.into_inner() {
            return Self::from_slice(text);
        }
        let mut parsed: Vec<Option<Json<'a>>> = vec![None; results.len()];
        for (i, j) in results {
            parsed[i] = Some(j);
        }
        let mut parsed = parsed.into_iter().map(|j| j.unwrap_or(Json::Null));
        Ok(outline.assemble(&mut parsed))
    }

    /// The same document owning its strings.
    pub fn into_owned(self) -> Json<'static> {
        let own = |s: Cow<'a, str>| Cow::Owned(s.into_owned());
        match self {
            Json::Null => Json::Null,
            Json::Bool(b) => Json::Bool(b),
            Json::Num(n) => Json::Num(n),
            Json::Str(s) => Json::Str(own(s)),
            Json::Nums(v) => Json::Nums(v),
            Json::Rows { nums, ends } => Json::Rows { nums, ends },
            Json::Arr(v) => Json::Arr(v.into_iter().map(Json::into_owned).collect()),
            Json::Obj(m) => Json::Obj(
                m.into_iter()
                    .map(|(k, v)| (own(k), v.into_owned()))
                    .collect(),
            ),
        }
    }

    /// Member `key` of an object (the last of repeated keys).
    pub fn member(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Obj(m) => m.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Element `i` of an array of nodes (`None` for a number array's numbers).
    pub fn element(&self, i: usize) -> Option<&Json<'a>> {
        match self {
            Json::Arr(v) => v.get(i),
            _ => None,
        }
    }

    /// A view of this node.
    pub fn view(&self) -> J<'_> {
        J::Node(self)
    }
}

/// A view of a value in a [`Json`] document: a node, or a number of a number array.
#[derive(Clone, Copy, Debug)]
pub enum J<'r> {
    /// Absent, or `null`.
    Null,
    /// A number of a number array.
    F(f64),
    /// A row of [`Json::Rows`].
    Row(&'r [f64]),
    Node(&'r Json<'r>),
}

/// An array's elements.
#[derive(Clone, Copy, Debug)]
pub enum Arr<'r> {
    Nums(&'r [f64]),
    Rows(&'r [f64], &'r [usize]),
    Items(&'r [Json<'r>]),
}

impl<'r> Arr<'r> {
    pub fn len(self) -> usize {
        match self {
            Arr::Nums(v) => v.len(),
            Arr::Rows(_, ends) => ends.len(),
            Arr::Items(v) => v.len(),
        }
    }

    /// Element `i`, `None` past the end.
    pub fn get(self, i: usize) -> Option<J<'r>> {
        match self {
            Arr::Nums(v) => v.get(i).map(|&f| num(f)),
            Arr::Rows(nums, ends) => {
                let end = *ends.get(i)?;
                let start = if i == 0 { 0 } else { ends[i - 1] };
                Some(J::Row(&nums[start..end]))
            }
            Arr::Items(v) => v.get(i).map(J::Node),
        }
    }

    pub fn iter(self) -> impl Iterator<Item = J<'r>> {
        (0..self.len()).filter_map(move |i| self.get(i))
    }
}

/// A number-array element: null where it is NaN.
fn num(f: f64) -> J<'static> {
    if f.is_nan() { J::Null } else { J::F(f) }
}

/// An integral `f64` within 2⁵³ as `T`.
fn integral<T: TryFrom<i64>>(f: f64) -> Option<T> {
    (f.fract() == 0.0 && f.abs() <= EXACT)
        .then(|| T::try_from(f as i64).ok())
        .flatten()
}

impl<'r> J<'r> {
    /// Member `key` of an object (the last of repeated keys); null when absent or when this
    /// is not an object.
    pub fn get(self, key: &str) -> J<'r> {
        match self.object() {
            Some(m) => m
                .iter()
                .rev()
                .find(|(k, _)| k == key)
                .map_or(J::Null, |(_, v)| J::Node(v)),
            None => J::Null,
        }
    }

    /// Element `i` of an array; null when absent.
    pub fn at(self, i: usize) -> J<'r> {
        self.array().and_then(|a| a.get(i)).unwrap_or(J::Null)
    }

    /// True when `key` is a member (even a null one).
    pub fn has(self, key: &str) -> bool {
        self.object()
            .is_some_and(|m| m.iter().any(|(k, _)| k == key))
    }

    pub fn is_null(self) -> bool {
        matches!(self, J::Null | J::Node(Json::Null))
    }

    pub fn is_object(self) -> bool {
        self.object().is_some()
    }

    pub fn object(self) -> Option<&'r [(Cow<'r, str>, Json<'r>)]> {
        match self {
            J::Node(Json::Obj(m)) => Some(m),
            _ => None,
        }
    }

    pub fn array(self) -> Option<Arr<'r>> {
        match self {
            J::Node(Json::Nums(v)) => Some(Arr::Nums(v)),
            J::Row(v) => Some(Arr::Nums(v)),
            J::Node(Json::Rows { nums, ends }) => Some(Arr::Rows(nums, ends)),
            J::Node(Json::Arr(v)) => Some(Arr::Items(v)),
            _ => None,
        }
    }

    pub fn as_str(self) -> Option<&'r str> {
        match self {
            J::Node(Json::Str(s)) => Some(s),
            _ => None,
        }
    }

    pub fn as_f64(self) -> Option<f64> {
        match self {
            J::F(f) => Some(f),
            J::Node(Json::Num(Num::U(u))) => Some(*u as f64),
            J::Node(Json::Num(Num::I(i))) => Some(*i as f64),
            J::Node(Json::Num(Num::F(f))) => Some(*f),
            _ => None,
        }
    }

    /// A float's value (from a number array or a node).
    fn float(self) -> Option<f64> {
        match self {
            J::F(f) => Some(f),
            J::Node(Json::Num(Num::F(f))) => Some(*f),
            _ => None,
        }
    }

    pub fn as_u64(self) -> Option<u64> {
        match self {
            J::Node(Json::Num(Num::U(u))) => Some(*u),
            _ => self.as_i64().and_then(|i| u64::try_from(i).ok()),
        }
    }

    pub fn as_i64(self) -> Option<i64> {
        match self {
            J::Node(Json::Num(Num::U(u))) => i64::try_from(*u).ok(),
            J::Node(Json::Num(Num::I(i))) => Some(*i),
            _ => self.float().and_then(integral),
        }
    }

    /// What the value is, for messages.
    pub fn kind(self) -> &'static str {
        match self {
            J::Null | J::Node(Json::Null) => "nothing",
            J::F(_) | J::Node(Json::Num(_)) => "a number",
            J::Node(Json::Bool(_)) => "a boolean",
            J::Node(Json::Str(_)) => "a string",
            J::Row(_) | J::Node(Json::Nums(_) | Json::Rows { .. } | Json::Arr(_)) => "an array",
            J::Node(Json::Obj(_)) => "an object",
        }
    }
}

impl fmt::Display for J<'_> {
    /// As JSON, short values as `Value` writes them (messages quote cells).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            J::Null => f.write_str("null"),
            J::F(x) => write_f64(f, x),
            J::Row(v) => write!(f, "[… {} numbers]", v.len()),
            J::Node(n) => write_node(f, n),
        }
    }
}

fn write_f64(f: &mut fmt::Formatter<'_>, x: f64) -> fmt::Result {
    match serde_json::Number::from_f64(x) {
        Some(n) => write!(f, "{n}"),
        None => f.write_str("null"),
    }
}

fn write_node(f: &mut fmt::Formatter<'_>, n: &Json<'_>) -> fmt::Result {
    match n {
        Json::Null => f.write_str("null"),
        Json::Bool(b) => write!(f, "{b}"),
        Json::Num(Num::U(u)) => write!(f, "{u}"),
        Json::Num(Num::I(i)) => write!(f, "{i}"),
        Json::Num(Num::F(x)) => write_f64(f, *x),
        Json::Str(s) => write!(f, "{}", serde_json::Value::from(s.as_ref())),
        // Containers only appear in messages as the cell that was not a number.
        Json::Nums(v) => write!(f, "[… {} numbers]", v.len()),
        Json::Rows { ends, .. } => write!(f, "[… {} arrays]", ends.len()),
        Json::Arr(v) => write!(f, "[… {} elements]", v.len()),
        Json::Obj(m) => write!(f, "{{… {} members}}", m.len()),
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Json<'de>, E> {
        Ok(Json::Num(Num::U(u)))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Json<'de>, E> {
        Ok(Json::Num(Num::from_i64(i)))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Json<'de>, E> {
        Ok(Json::Num(Num::F(f)))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(s.to_string())))
    }

    fn visit_string<E>(self, s: String) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut b = SeqBuilder::default();
        while seq.next_element_seed(Element(&mut b))?.is_some() {}
        Ok(b.finish())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut members = Vec::new();
        while let Some(k) = map.next_key_seed(KeySeed)? {
            members.push((k, map.next_value::<Json<'de>>()?));
        }
        members.shrink_to_fit();
        Ok(Json::Obj(members))
    }
}

/// A document's root read with the elements of its `threads` and `processes` arrays (and
/// those of a root `profile`'s) kept as their text, for [`Json::from_slice_parallel`].
struct Outline<'a> {
    /// The object's members in file order.
    members: Vec<(Cow<'a, str>, Member<'a>)>,
}

enum Member<'a> {
    Node(Json<'a>),
    /// An array whose elements (this many) are read on all cores.
    Units(usize),
    /// A root `profile` object, read as a root.
    Profile(Outline<'a>),
}

impl<'a> Outline<'a> {
    /// The tree, the elements read (`read`, in the order the outline found them) in place.
    fn assemble(self, read: &mut impl Iterator<Item = Json<'a>>) -> Json<'a> {
        let mut out = Vec::with_capacity(self.members.len());
        for (k, m) in self.members {
            let v = match m {
                Member::Node(j) => j,
                Member::Units(u) => {
                    // Pushed as `from_slice` pushes elements: the same node kinds.
                    let mut b = SeqBuilder::default();
                    for j in read.by_ref().take(u) {
                        b.push(j);
                    }
                    b.finish()
                }
                Member::Profile(p) => p.assemble(read),
            };
            out.push((k, v));
        }
        Json::Obj(out)
    }
}

/// The outline of the object at `text[at..]`, and its end: members read whole, but the
/// elements of `threads` and `processes` kept as their texts, and a `profile` object
/// outlined in turn (`nested`: not below one already).
fn outline_object<'a>(
    text: &'a [u8],
    at: usize,
    nested: bool,
    found: &mut dyn FnMut(&'a [u8]),
) -> Option<(Outline<'a>, usize)> {
    if text.get(at) != Some(&b'{') {
        return None;
    }
    let mut members = Vec::new();
    let mut i = skip_ws(text, at + 1);
    if text.get(i) == Some(&b'}') {
        return Some((Outline { members }, i + 1));
    }
    loop {
        if text.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = skip_string(text, i + 1)?;
        let key = KeySeed
            .deserialize(&mut serde_json::Deserializer::from_slice(&text[i..key_end]))
            .ok()?;
        i = skip_ws(text, key_end);
        if text.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(text, i + 1);
        let member = match (key.as_ref(), text.get(i)) {
            ("threads" | "processes", Some(b'[')) => {
                let mut units = 0;
                i = skip_ws(text, i + 1);
                if text.get(i) == Some(&b']') {
                    i += 1;
                } else {
                    loop {
                        let end = skip_value(text, i)?;
                        found(&text[i..end]);
                        units += 1;
                        i = skip_ws(text, end);
                        match text.get(i)? {
                            b',' => i = skip_ws(text, i + 1),
                            b']' => {
                                i += 1;
                                break;
                            }
                            _ => return None,
                        }
                    }
                }
                Member::Units(units)
            }
            ("profile", Some(b'{')) if !nested => {
                let (o, end) = outline_object(text, i, true, found)?;
                i = end;
                Member::Profile(o)
            }
            _ => {
                let end = skip_value(text, i)?;
                let node = Json::from_slice(&text[i..end]).ok()?;
                i = end;
                Member::Node(node)
            }
        };
        members.push((key, member));
        i = skip_ws(text, i);
        match text.get(i)? {
            b',' => i = skip_ws(text, i + 1),
            b'}' => return Some((Outline { members }, i + 1)),
            _ => return None,
        }
    }
}

/// A document's outline, when it is one object and nothing after it.
/// `found` gets each element to read on all cores as soon as its end is found, in the
/// order of the outline's [`Outline::assemble`].
fn outline<'a>(text: &'a [u8], found: &mut dyn FnMut(&'a [u8])) -> Option<Outline<'a>> {
    let at = skip_ws(text, 0);
    let (o, end) = outline_object(text, at, false, found)?;
    (skip_ws(text, end) == text.len()).then_some(o)
}

/// An element of an array being read, pushed into its builder; a row of numbers (a
/// gecko table's row) goes straight into the builder's columns, with no node of its own
/// (a `Vec` made, copied and freed per row took a fifth of a gecko profile's parse).
struct Element<'b, 'a>(&'b mut SeqBuilder<'a>);

impl<'de> DeserializeSeed<'de> for Element<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Element<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.push(Json::Null);
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        self.0.push(Json::Null);
        Ok(())
    }

    fn visit_bool<E>(self, b: bool) -> Result<(), E> {
        self.0.push(Json::Bool(b));
        Ok(())
    }

    fn visit_u64<E>(self, u: u64) -> Result<(), E> {
        self.0.push(Json::Num(Num::U(u)));
        Ok(())
    }

    fn visit_i64<E>(self, i: i64) -> Result<(), E> {
        self.0.push(Json::Num(Num::from_i64(i)));
        Ok(())
    }

    fn visit_f64<E>(self, f: f64) -> Result<(), E> {
        self.0.push(Json::Num(Num::F(f)));
        Ok(())
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<(), E> {
        self.0.push(Json::Str(Cow::Borrowed(s)));
        Ok(())
    }

    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.0.push(Json::Str(Cow::Owned(s.to_string())));
        Ok(())
    }

    fn visit_string<E>(self, s: String) -> Result<(), E> {
        self.0.push(Json::Str(Cow::Owned(s)));
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(), A::Error> {
        let node = NodeVisitor.visit_map(map)?;
        self.0.push(node);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let b = self.0;
        if b.items.is_some() || b.rows == Some(false) {
            let node = NodeVisitor.visit_seq(seq)?;
            b.push(node);
            return Ok(());
        }
        // A row: its numbers and nulls straight into the columns, until one that is
        // neither; then this element is a node of its own, as `push` would make it.
        let start = b.nums.len();
        let other = loop {
            match seq.next_element::<Json<'de>>()? {
                None => {
                    b.ends.push(b.nums.len());
                    b.rows = Some(true);
                    return Ok(());
                }
                Some(Json::Null) => b.nums.push(f64::NAN),
                Some(Json::Num(n)) => match n.exact_f64() {
                    Some(f) => b.nums.push(f),
                    None => break Json::Num(n),
                },
                Some(other) => break other,
            }
        };
        let mut own = SeqBuilder::default();
        for f in b.nums.drain(start..) {
            own.push(if f.is_nan() {
                Json::Null
            } else {
                Json::Num(Num::F(f))
            });
        }
        own.push(other);
        while seq.next_element_seed(Element(&mut own))?.is_some() {}
        b.push(own.finish());
        Ok(())
    }
}

/// An array being read: numbers and nulls into a number array, or number arrays into
/// rows, until the first element that fits neither; then a list of nodes.
#[derive(Default)]
struct SeqBuilder<'a> {
    nums: Vec<f64>,
    ends: Vec<usize>,
    /// `None` before the first element; `Some(true)` for rows.
    rows: Option<bool>,
    items: Option<Vec<Json<'a>>>,
}

impl<'a> SeqBuilder<'a> {
    fn push(&mut self, e: Json<'a>) {
        if let Some(items) = &mut self.items {
            items.push(e);
            return;
        }
        let fits = match (&e, self.rows) {
            (Json::Null, None | Some(false)) => {
                self.nums.push(f64::NAN);
                Some(false)
            }
            (Json::Num(n), None | Some(false)) => {
                n.exact_f64().map(|f| self.nums.push(f)).map(|_| false)
            }
            (Json::Nums(row), None | Some(true)) => {
                self.nums.extend_from_slice(row);
                self.ends.push(self.nums.len());
                Some(true)
            }
            _ => None,
        };
        if fits.is_some() {
            self.rows = fits;
            return;
        }
        let (nums, ends) = (
            std::mem::take(&mut self.nums),
            std::mem::take(&mut self.ends),
        );
        let mut items: Vec<Json<'a>> = Vec::with_capacity(nums.len().max(ends.len()) + 1);
        if self.rows == Some(true) {
            let mut start = 0;
            for &end in &ends {
                items.push(Json::Nums(nums[start..end].to_vec()));
                start = end;
            }
        } else {
            items.extend(nums.iter().map(|&f| {
                if f.is_nan() {
                    Json::Null
                } else {
                    Json::Num(Num::F(f))
                }
            }));
        }
        items.push(e);
        self.items = Some(items);
    }

    /// Drops the last element when it is a number (which a cut may have shortened).
    fn drop_last_number(&mut self) {
        match &mut self.items {
            Some(items) => {
                if matches!(items.last(), Some(Json::Num(_))) {
                    items.pop();
                }
            }
            None if self.rows == Some(false) && self.nums.last().is_some_and(|f| !f.is_nan()) => {
                self.nums.pop();
            }
            None => {}
        }
    }

    fn finish(mut self) -> Json<'a> {
        if let Some(mut items) = self.items {
            items.shrink_to_fit();
            return Json::Arr(items);
        }
        self.nums.shrink_to_fit();
        if self.rows == Some(true) {
            self.ends.shrink_to_fit();
            return Json::Rows {
                nums: self.nums,
                ends: self.ends,
            };
        }
        Json::Nums(self.nums)
    }
}

impl<'a> Json<'a> {
    /// As much of the document starting `head` as is complete: the containers open where
    /// it stops closed there, a member whose value was cut left out, and a last number
    /// that the cut may have shortened dropped. `None` when not even the outermost value
    /// began (or the head is not JSON from its start).
    pub fn from_head(head: &'a [u8]) -> Option<Json<'a>> {
        let mut b = HeadBuilder::default();
        let mut de = serde_json::Deserializer::from_slice(head);
        // The error where the head stops is expected; what was read before it stays.
        let cut = HeadSeed(&mut b).deserialize(&mut de).is_err();
        if cut {
            match b.open.last_mut() {
                Some(Open::Arr(a)) => a.drop_last_number(),
                Some(Open::Obj(m, _)) => {
                    if matches!(m.last(), Some((_, Json::Num(_)))) {
                        m.pop();
                    }
                }
                None => {}
            }
        }
        while !b.open.is_empty() {
            b.close();
        }
        b.root
    }
}

/// A container open while a head is read.
enum Open<'a> {
    Arr(SeqBuilder<'a>),
    /// Members so far, and the key whose value is being read.
    Obj(Vec<(Cow<'a, str>, Json<'a>)>, Option<Cow<'a, str>>),
}

/// A tree built outside serde's calls, so that what was read survives an error.
#[derive(Default)]
struct HeadBuilder<'a> {
    open: Vec<Open<'a>>,
    root: Option<Json<'a>>,
}

impl<'a> HeadBuilder<'a> {
    fn put(&mut self, v: Json<'a>) {
        match self.open.last_mut() {
            Some(Open::Arr(a)) => a.push(v),
            Some(Open::Obj(m, key)) => {
                if let Some(k) = key.take() {
                    m.push((k, v));
                }
            }
            None => self.root = Some(v),
        }
    }

    fn close(&mut self) {
        let node = match self.open.pop() {
            Some(Open::Arr(a)) => a.finish(),
            Some(Open::Obj(mut m, _)) => {
                m.shrink_to_fit();
                Json::Obj(m)
            }
            None => return,
        };
        self.put(node);
    }
}

/// Reads one value into a [`HeadBuilder`].
struct HeadSeed<'b, 'a>(&'b mut HeadBuilder<'a>);

impl<'de> DeserializeSeed<'de> for HeadSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for HeadSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.0.put(Json::Null);
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        self.0.put(Json::Null);
        Ok(())
    }

    fn visit_bool<E>(self, b: bool) -> Result<(), E> {
        self.0.put(Json::Bool(b));
        Ok(())
    }

    fn visit_u64<E>(self, u: u64) -> Result<(), E> {
        self.0.put(Json::Num(Num::U(u)));
        Ok(())
    }

    fn visit_i64<E>(self, i: i64) -> Result<(), E> {
        self.0.put(Json::Num(Num::from_i64(i)));
        Ok(())
    }

    fn visit_f64<E>(self, f: f64) -> Result<(), E> {
        self.0.put(Json::Num(Num::F(f)));
        Ok(())
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<(), E> {
        self.0.put(Json::Str(Cow::Borrowed(s)));
        Ok(())
    }

    fn visit_str<E>(self, s: &str) -> Result<(), E> {
        self.0.put(Json::Str(Cow::Owned(s.to_string())));
        Ok(())
    }

    fn visit_string<E>(self, s: String) -> Result<(), E> {
        self.0.put(Json::Str(Cow::Owned(s)));
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.open.push(Open::Arr(SeqBuilder::default()));
        while seq.next_element_seed(HeadSeed(self.0))?.is_some() {}
        self.0.close();
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.open.push(Open::Obj(Vec::new(), None));
        while let Some(k) = map.next_key_seed(KeySeed)? {
            if let Some(Open::Obj(_, key)) = self.0.open.last_mut() {
                *key = Some(k);
            }
            map.next_value_seed(HeadSeed(self.0))?;
        }
        self.0.close();
        Ok(())
    }
}

/// An object key, borrowed when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_string()))
    }

    fn visit_string<E>(self, s: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// Every path through `v` answers in the tree as in `Value`.
    fn same(text: &str) {
        let tree = Json::from_slice(text.as_bytes()).unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        let mut work = vec![(tree.view(), &value)];
        while let Some((j, v)) = work.pop() {
            assert_eq!(j.is_null(), v.is_null(), "{v}");
            assert_eq!(j.as_str(), v.as_str(), "{v}");
            assert_eq!(j.as_f64(), v.as_f64(), "{v}");
            if v.as_u64().is_some() || !v.is_f64() {
                assert_eq!(j.as_u64(), v.as_u64(), "{v}");
                assert_eq!(j.as_i64(), v.as_i64(), "{v}");
            }
            assert_eq!(j.is_object(), v.is_object(), "{v}");
            if let Some(m) = v.as_object() {
                for (k, x) in m {
                    assert!(j.has(k));
                    work.push((j.get(k), x));
                }
                assert!(j.get("no such key").is_null());
            }
            if let Some(a) = v.as_array() {
                let arr = j.array().unwrap();
                assert_eq!(arr.len(), a.len());
                for (i, x) in a.iter().enumerate() {
                    work.push((j.at(i), x));
                }
                assert!(arr.get(a.len()).is_none());
            }
            if !v.is_array() && !v.is_object() {
                let shown = j.to_string();
                let back: Value = serde_json::from_str(&shown).unwrap();
                assert_eq!(back.as_f64().or(v.as_f64()), v.as_f64(), "{shown} for {v}");
                assert_eq!(back.as_str(), v.as_str());
            }
        }
    }

    /// Read on all cores, a document is the tree read in one: threads and processes of
    /// every kind, a `profile` wrapper, escaped keys, white space anywhere; damaged, the
    /// same error.
    #[test]
    fn a_document_read_on_all_cores_is_the_one_read_in_one() {
        let docs = [
            r#"{"meta": {"v": 1}, "threads": [{"a": [[1, 2], [3]]}, {"b": "x"}, "str", 3, [1, [2]], null], "processes": [{"threads": [{"c": 1}]}], "z": []}"#,
            r#" { "profile" : { "meta" : {} , "threads" : [ {"s": {"data": [[1,2.5,null]]}} , { } ] } , "x\"y" : [ "\u00e9", {"threads": [1]} ] } "#,
            r#"{"threads": [], "processes": [[]], "profile": 3, "t\u0068reads": [{"k": 1}, {"k": 2}]}"#,
            r#"{"threads": [{"q": "a]}\"[{"}, {"r": ["]", "}"]}], "threads": [{"dup": true}, 7]}"#,
            r#"{"profile": {"profile": {"threads": [{"a": 1}, {"b": 2}]}, "threads": [1, 2]}}"#,
        ];
        let mut rng = crate::generator::Rng(3);
        for doc in docs {
            // Compared as printed: a null in a number array is a NaN, unequal to itself.
            let whole = format!("{:?}", Json::from_slice(doc.as_bytes()).unwrap());
            let all = format!(
                "{:?}",
                Json::from_slice_parallel(doc.as_bytes(), 0).unwrap()
            );
            assert_eq!(all, whole, "{doc}");
            for _ in 0..400 {
                let mut t = doc.as_bytes().to_vec();
                crate::testing::damage(&mut rng, &mut t, b"{}[]\",: 0a");
                let one = Json::from_slice(&t)
                    .map(|j| format!("{j:?}"))
                    .map_err(|e| e.to_string());
                let all = Json::from_slice_parallel(&t, 0)
                    .map(|j| format!("{j:?}"))
                    .map_err(|e| e.to_string());
                assert_eq!(all, one, "{}", String::from_utf8_lossy(&t));
            }
        }
        // Under the size: read in one (no outline at all).
        assert!(Json::from_slice_parallel(b"{\"threads\": [1, 2]}", 1 << 20).is_ok());
    }

    #[test]
    fn answers_as_value_does() {
        same(r#"{"a": [1, 2.5, null, -3], "b": {"c": "x\"y", "d": [true, "s", 1]}}"#);
        same(r#"[[0, null], [], [null], [1e300, -0.0], {"k": {}}, "é\u00e9"]"#);
        same(r#"[[0, null], [], [null], [1e300, -0.0]]"#);
        same(r#"{"rows": [[1, 2], [3]], "then": [[1], 2], "odd": [[1], ["s"]], "e": [[]]}"#);
        same(r#"{"big": [18446744073709551615, 1], "neg": [-9223372036854775808]}"#);
        same(r#"[9007199254740993, 2]"#);
        // Rows broken by an element that is not a number, at any place in the row.
        same(r#"[[1, 2], [3, "x", 4], [5]]"#);
        same(r#"[[1, 2], [3, 18446744073709551615, 6], [7]]"#);
        same(r#"[[null, 1], [2, {"a": [[1], [2]]}], [3, [4, 5]], 6]"#);
        same(r#"[["s", 1], [2]]"#);
        same(r#"[[1, "s"], [2]]"#);
        same(r#"[[1, 2], [3, "x", [4, 5]], []]"#);
        same("3");
        same(r#""s""#);
    }

    #[test]
    fn number_arrays_are_compact_and_repeated_keys_answer_the_last() {
        let t =
            Json::from_slice(br#"{"n": [1, null, 2.5], "m": [1, "x"], "k": 1, "k": 2}"#).unwrap();
        let v = t.view();
        assert!(matches!(v.get("n"), J::Node(Json::Nums(n)) if n.len() == 3));
        assert!(matches!(v.get("m"), J::Node(Json::Arr(_))));
        let t = Json::from_slice(br#"[[1, 2], [null, "x", 3]]"#).unwrap();
        let Json::Arr(items) = &t else {
            panic!("{t:?}")
        };
        assert_eq!(items[0], Json::Nums(vec![1.0, 2.0]));
        assert!(matches!(&items[1], Json::Arr(a) if a.len() == 3 && a[0] == Json::Null));
        let t = Json::from_slice(b"[[1, 2], [], [null]]").unwrap();
        assert!(matches!(&t, Json::Rows { nums, ends } if nums.len() == 3 && ends == &[2, 2, 3]));
        assert_eq!(t.view().at(0).at(1).as_u64(), Some(2));
        assert!(t.view().at(1).array().is_some_and(|a| a.len() == 0));
        assert!(t.view().at(2).at(0).is_null() && t.view().at(3).is_null());
        assert_eq!(v.get("k").as_u64(), Some(2));
        // Integral floats read as integers here (Value would refuse 3.0).
        assert_eq!(v.get("n").at(2).as_u64(), None);
        let t = Json::from_slice(b"[3.0, -2.0, 0.5]").unwrap();
        assert_eq!(t.view().at(0).as_u64(), Some(3));
        assert_eq!(t.view().at(1).as_i64(), Some(-2));
        assert_eq!(t.view().at(1).as_u64(), None);
    }

    #[test]
    fn strings_borrow_the_input_unless_escaped() {
        let t = Json::from_slice(br#"{"plain": "abc", "esc\n": "a\tb"}"#).unwrap();
        let Json::Obj(m) = &t else { panic!() };
        assert!(matches!(&m[0].0, Cow::Borrowed("plain")));
        assert!(matches!(&m[0].1, Json::Str(Cow::Borrowed("abc"))));
        assert!(matches!(&m[1].0, Cow::Owned(k) if k == "esc\n"));
        assert!(matches!(&m[1].1, Json::Str(Cow::Owned(s)) if s == "a\tb"));
        let owned = t.clone().into_owned();
        assert_eq!(owned, t);
    }

    /// `a` and `b` hold the same values (whatever their layout).
    fn eq(a: J<'_>, b: J<'_>) -> bool {
        prefix(a, b, true)
    }

    /// `a` is `b` cut short: members and elements equal up to the last, which is itself
    /// `b`'s cut short (all equal when `whole`).
    fn prefix(a: J<'_>, b: J<'_>, whole: bool) -> bool {
        if let (Some(ma), Some(mb)) = (a.object(), b.object()) {
            let n = ma.len();
            return (if whole { n == mb.len() } else { n <= mb.len() })
                && ma
                    .iter()
                    .zip(mb)
                    .enumerate()
                    .all(|(i, ((ka, va), (kb, vb)))| {
                        ka == kb && prefix(va.view(), vb.view(), whole || i + 1 < n)
                    });
        }
        if let (Some(xa), Some(xb)) = (a.array(), b.array()) {
            let n = xa.len();
            return (if whole { n == xb.len() } else { n <= xb.len() })
                && (0..n)
                    .all(|i| prefix(xa.get(i).unwrap(), xb.get(i).unwrap(), whole || i + 1 < n));
        }
        a.kind() == b.kind() && a.to_string() == b.to_string()
    }

    #[test]
    fn a_head_reads_as_the_document_cut_short() {
        let doc = r#"{"meta": {"v": 3, "name": "a\"b"}, "rows": [[1, 2], [3, -4.5]],
            "nums": [10, null, 12345, 6.25], "mixed": [1, "x", {"k": [true, false]}],
            "empty": {}, "last": "end"}"#;
        let full = Json::from_slice(doc.as_bytes()).unwrap();
        assert!(eq(
            Json::from_head(doc.as_bytes()).unwrap().view(),
            full.view()
        ));
        for cut in 0..doc.len() {
            let head = Json::from_head(&doc.as_bytes()[..cut]);
            match head {
                None => assert_eq!(cut, 0, "nothing read from {:?}", &doc[..cut]),
                Some(h) => assert!(
                    prefix(h.view(), full.view(), false),
                    "{:?} read as {h:?}",
                    &doc[..cut]
                ),
            }
        }
        // A number the cut may have shortened is left out, in an array and as a member.
        let cut = Json::from_head(br#"{"a": [1, 123"#).unwrap();
        assert!(matches!(cut.view().get("a"), J::Node(Json::Nums(v)) if v == &[1.0]));
        let cut = Json::from_head(br#"{"a": 1, "b": 12"#).unwrap();
        assert!(cut.view().has("a") && !cut.view().has("b"));
    }

    #[test]
    fn errors_and_depth_are_serde_jsons() {
        let e = Json::from_slice(b"{\"a\": [1, }").unwrap_err();
        assert_eq!((e.line(), e.column()), (1, 11));
        let deep = "[".repeat(10_000);
        assert!(Json::from_slice(deep.as_bytes()).is_err());
    }
}
