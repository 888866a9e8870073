//! Interned frame and span names.
//!
//! Every name is stored once, in one contiguous string arena, and referred to everywhere
//! else by a [`NameId`] (a `u32`). Layout rows, GPU instances and search all work on ids,
//! so a profile with 100 M bars but 20 k distinct functions keeps 20 k strings.
//!
//! The lookup table is a `hashbrown::HashTable` over the arena: per name its place in the
//! arena, its length, its hash and its id (24 bytes), so no string is stored twice, a
//! lookup reads the arena once (not an offsets array first: with a million distinct
//! names, criterion's `names/intern` took 342 ns a lookup, now 167, mostly cache
//! misses), and growing the table rehashes nothing. The hasher is `foldhash` with a fixed
//! seed: interning is deterministic from run to run, so ids (and therefore draw order
//! ties and test dumps) never depend on a random seed.

use hashbrown::HashTable;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

/// Index of an interned name.
pub type NameId = u32;

/// An append-only string interner.
pub struct Names {
    /// Which interner this is: no other one (a clone included) has it, so an id read
    /// with it means one string for good (text measures are cached by it).
    uid: u64,
    /// All names, concatenated.
    arena: String,
    /// `starts[i]..starts[i + 1]` is name `i` in `arena`; `starts.len() == len() + 1`.
    starts: Vec<usize>,
    table: HashTable<Entry>,
    hasher: foldhash::fast::FixedState,
}

/// A name as the lookup table holds it: where it lies in the arena and its hash, so that a
/// lookup reads the arena once (not the offsets first) and growing the table rehashes
/// nothing.
#[derive(Clone, Copy)]
struct Entry {
    /// The name's hash (the table's, kept for growing it).
    hash: u64,
    /// Where it starts in the arena.
    start: usize,
    /// Its length; `u32::MAX` for 4 GiB or more (then read from `starts`).
    len: u32,
    id: NameId,
}

static NEXT_UID: AtomicU64 = AtomicU64::new(1);

fn fresh_uid() -> u64 {
    NEXT_UID.fetch_add(1, Ordering::Relaxed)
}

impl Clone for Names {
    /// A copy with its own [`Names::uid`]: the two may intern different names later.
    fn clone(&self) -> Self {
        Self {
            uid: fresh_uid(),
            arena: self.arena.clone(),
            starts: self.starts.clone(),
            table: self.table.clone(),
            hasher: self.hasher.clone(),
        }
    }
}

impl Default for Names {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Names")
            .field("len", &self.len())
            .field("arena_bytes", &self.arena.len())
            .finish()
    }
}

impl Names {
    /// An empty interner.
    pub fn new() -> Self {
        Self {
            uid: fresh_uid(),
            arena: String::new(),
            starts: vec![0],
            table: HashTable::new(),
            hasher: foldhash::fast::FixedState::with_seed(0x5c0_4c4),
        }
    }

    /// This interner's identity: ids of interners with the same uid name the same
    /// strings (names are only ever added).
    pub fn uid(&self) -> u64 {
        self.uid
    }

    /// Number of distinct names.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// True when no name was interned.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total bytes of all distinct names.
    pub fn arena_bytes(&self) -> usize {
        self.arena.len()
    }

    /// The name with id `id`.
    ///
    /// # Panics
    /// If `id` was not returned by this interner.
    pub fn get(&self, id: NameId) -> &str {
        let i = id as usize;
        &self.arena[self.starts[i]..self.starts[i + 1]]
    }

    /// The id of `name` if it was interned.
    pub fn find(&self, name: &str) -> Option<NameId> {
        let hash = self.hasher.hash_one(name);
        let (arena, starts) = (self.arena.as_bytes(), &self.starts[..]);
        self.table
            .find(hash, |e| matches(arena, starts, e, hash, name))
            .map(|e| e.id)
    }

    /// Interns `name`, returning its id (the existing one if it was seen before).
    pub fn intern(&mut self, name: &str) -> NameId {
        let hash = self.hasher.hash_one(name);
        let (arena, starts) = (self.arena.as_bytes(), &self.starts[..]);
        if let Some(e) = self
            .table
            .find(hash, |e| matches(arena, starts, e, hash, name))
        {
            return e.id;
        }
        let id = NameId::try_from(self.starts.len() - 1).expect("more than 4 G distinct names");
        // A name of 4 GiB or more says so; its length is then read from `starts`.
        let len = u32::try_from(name.len()).unwrap_or(u32::MAX);
        let start = self.arena.len();
        self.arena.push_str(name);
        self.starts.push(self.arena.len());
        let entry = Entry {
            hash,
            start,
            len,
            id,
        };
        self.table.insert_unique(hash, entry, |e| e.hash);
        id
    }

    /// Interns raw bytes from a file: valid UTF-8 is taken as is, anything else is decoded
    /// lossily (invalid sequences become U+FFFD) so a damaged name still shows up.
    pub fn intern_bytes(&mut self, name: &[u8]) -> NameId {
        match std::str::from_utf8(name) {
            Ok(s) => self.intern(s),
            Err(_) => self.intern(&String::from_utf8_lossy(name)),
        }
    }

    /// Iterates over `(id, name)` in id order.
    pub fn iter(&self) -> impl Iterator<Item = (NameId, &str)> {
        (0..self.len()).map(|i| (i as NameId, self.get(i as NameId)))
    }

    /// Bytes held by the interner (arena, offsets and table), for memory reports.
    pub fn heap_bytes(&self) -> usize {
        self.arena.capacity()
            + self.starts.capacity() * std::mem::size_of::<usize>()
            + self.table.capacity() * (std::mem::size_of::<Entry>() + 1)
    }
}

/// Whether `e` is `name` (whose hash is `hash`).
#[inline]
fn matches(arena: &[u8], starts: &[usize], e: &Entry, hash: u64, name: &str) -> bool {
    if e.hash != hash {
        return false;
    }
    let len = if e.len == u32::MAX {
        starts[e.id as usize + 1] - e.start
    } else {
        e.len as usize
    };
    len == name.len() && &arena[e.start..e.start + len] == name.as_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_idempotent_and_ordered() {
        let mut n = Names::new();
        let a = n.intern("main");
        let b = n.intern("work");
        assert_eq!(n.intern("main"), a);
        assert_eq!((a, b), (0, 1));
        assert_eq!(n.get(b), "work");
        assert_eq!(n.find("work"), Some(1));
        assert_eq!(n.find("nope"), None);
        assert_eq!(n.len(), 2);
    }

    #[test]
    fn many_names_survive_table_growth() {
        let mut n = Names::new();
        for i in 0..10_000 {
            assert_eq!(n.intern(&format!("fn_{i}")), i);
        }
        for i in 0..10_000 {
            assert_eq!(n.find(&format!("fn_{i}")), Some(i));
            assert_eq!(n.get(i), format!("fn_{i}"));
        }
    }

    #[test]
    fn empty_and_invalid_utf8_names() {
        let mut n = Names::new();
        let e = n.intern("");
        assert_eq!(n.get(e), "");
        let bad = n.intern_bytes(b"caf\xe9");
        assert_eq!(n.get(bad), "caf\u{fffd}");
    }
}
