//! Interned frame and span names.
//!
//! Every name is stored once, in one contiguous string arena, and referred to everywhere
//! else by a [`NameId`] (a `u32`). Layout rows, GPU instances and search all work on ids,
//! so a profile with 100 M bars but 20 k distinct functions keeps 20 k strings.
//!
//! The lookup table is a `hashbrown::HashTable` of 24-byte entries: per name its 128-bit
//! hash, its length and its id, so no string is stored twice and growing the table
//! rehashes nothing.
//!
//! [`Names::intern`] takes two names to be the same when their 128-bit hashes and lengths
//! are, without reading the arena: on a 200 MB folded file of 20 k distinct names and
//! 1.9 M lookups (`scorch gen w1`), comparing the bytes as well (a read of the arena per
//! lookup, mostly a cache miss) was a quarter of the parse. The hash is XXH3-128, seeded
//! once per process from the standard library's random hasher keys: the chance that any
//! two of a million distinct names share a hash is about 10^-27, and without the seed no
//! file can be made to collide on purpose (the same argument lets rustc trust 128-bit
//! fingerprints). Debug builds compare the bytes too and panic on a collision;
//! [`Names::find`] always compares them. Ids are given in order of first interning, so
//! they never depend on the seed.

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
}

/// A name as the lookup table holds it: its hash (the low half is the table's hash, kept
/// for growing it), length and id.
#[derive(Clone, Copy)]
struct Entry {
    lo: u64,
    hi: u64,
    /// Its length; `u32::MAX` for 4 GiB or more.
    len: u32,
    id: NameId,
}

/// The 128-bit hash of `name`, as (low, high) halves.
#[inline]
fn hash128(name: &str) -> (u64, u64) {
    let h = xxhash_rust::xxh3::xxh3_128_with_seed(name.as_bytes(), process_seed());
    (h as u64, (h >> 64) as u64)
}

/// The hash's seed: drawn once per process (see the module's notes).
fn process_seed() -> u64 {
    static SEED: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *SEED.get_or_init(|| std::collections::hash_map::RandomState::new().hash_one(0x5c0_4c4u64))
}

/// `name`'s length as an entry holds it.
#[inline]
fn entry_len(name: &str) -> u32 {
    u32::try_from(name.len()).unwrap_or(u32::MAX)
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

    /// The id of `name` if it was interned (its bytes compared, not only its hash).
    pub fn find(&self, name: &str) -> Option<NameId> {
        let (lo, hi) = hash128(name);
        self.table
            .find(lo, |e| e.lo == lo && e.hi == hi && self.get(e.id) == name)
            .map(|e| e.id)
    }

    /// Interns `name`, returning its id (the existing one if it was seen before). A name
    /// whose 128-bit hash and length are an interned name's is that name (see the module's
    /// notes).
    pub fn intern(&mut self, name: &str) -> NameId {
        let (lo, hi) = hash128(name);
        let len = entry_len(name);
        if let Some(e) = self
            .table
            .find(lo, |e| e.lo == lo && e.hi == hi && e.len == len)
        {
            debug_assert_eq!(self.get(e.id), name, "two names with one 128-bit hash");
            return e.id;
        }
        let id = NameId::try_from(self.starts.len() - 1).expect("more than 4 G distinct names");
        self.arena.push_str(name);
        self.starts.push(self.arena.len());
        let entry = Entry { lo, hi, len, id };
        self.table.insert_unique(lo, entry, |e| e.lo);
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

    /// Names of one length that differ in a single byte, anywhere in them, are told apart
    /// by the hash alone (the arena is not read), and a clone keeps the ids.
    #[test]
    fn names_differing_in_one_byte_get_their_own_ids() {
        let base = "module_0637::component::function_014595::{{closure}}#0123456789";
        let mut n = Names::new();
        let first = n.intern(base);
        let mut variants = Vec::new();
        for at in 0..base.len() {
            let mut v = base.as_bytes().to_vec();
            v[at] = if v[at] == b'x' { b'y' } else { b'x' };
            variants.push(String::from_utf8(v).unwrap());
        }
        // Longer and shorter by a byte, and a name of two that are both interned.
        variants.push(format!("{base}!"));
        variants.push(base[..base.len() - 1].to_string());
        variants.push(format!("{base}{base}"));
        let ids: Vec<NameId> = variants.iter().map(|v| n.intern(v)).collect();
        assert_eq!(n.len(), variants.len() + 1);
        for (i, (v, &id)) in variants.iter().zip(&ids).enumerate() {
            assert_eq!(id as usize, i + 1);
            assert_eq!(n.get(id), v);
            assert_eq!(n.find(v), Some(id));
        }
        let mut c = n.clone();
        assert_eq!(c.intern(base), first);
        for (v, &id) in variants.iter().zip(&ids) {
            assert_eq!(c.intern(v), id);
        }
        assert_eq!(c.intern("new"), ids.len() as NameId + 1);
        assert_eq!(n.find("new"), None);
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
