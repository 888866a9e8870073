//! The aggregated call tree: one node per distinct call path.
//!
//! Nodes live in parallel columns indexed by [`NodeId`]; node 0 is the root (named
//! `total`, as in Pyroscope). A node's parent always has a smaller id than the node, which
//! lets every whole-tree computation run as a plain loop over ids instead of a recursive
//! walk: totals are summed leaf-to-root by iterating ids downwards, depths root-to-leaf by
//! iterating upwards. Stacks thousands of frames deep cost nothing extra.
//!
//! Children are stored in CSR form (`child_start`/`child_list`) once the tree is built, in
//! a defined order: by name for aggregated inputs (as flamegraph.pl and Pyroscope sort), or
//! in file order for inputs that already fix the order (flamebearer).
//!
//! For differential profiles each node also carries its left ("before") share; the right
//! share is `total - left`, so a diff tree costs two extra columns, not four.

use super::names::{NameId, Names};
use hashbrown::HashTable;
use std::hash::BuildHasher;
use std::ops::Range;

/// Index of a node in a [`CallTree`].
pub type NodeId = u32;

/// Parent of the root.
pub const NO_PARENT: NodeId = NodeId::MAX;

/// Order of each node's children.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildOrder {
    /// Sorted by name, byte-wise (flamegraph.pl and Pyroscope order).
    ByName,
    /// The order in which children were first added.
    Insertion,
}

/// Left ("before") columns of a differential tree.
#[derive(Clone, Debug, Default)]
pub struct DiffColumns {
    /// Left total per node (ticks).
    pub left_total: Vec<u64>,
    /// Left self per node (ticks).
    pub left_self: Vec<u64>,
}

/// An aggregated call tree. Build one with [`CallTreeBuilder`].
#[derive(Clone, Debug)]
pub struct CallTree {
    name: Vec<NameId>,
    parent: Vec<NodeId>,
    total: Vec<u64>,
    /// Self ticks as the input stated them, kept only where they are not each node's
    /// total less its children's (stated totals that do not add up); `None` everywhere
    /// else, and [`self_ticks`](Self::self_ticks) derives them: 8 bytes a node fewer.
    stated_self: Option<Vec<u64>>,
    diff: Option<DiffColumns>,
    child_start: Vec<u32>,
    child_list: Vec<NodeId>,
    max_depth: u32,
    /// The largest self value (found while the selves were at hand).
    max_self: u64,
    /// Per depth, the nodes with a nonzero total: the bars of a flame graph's rows.
    level_bars: Vec<usize>,
    /// Whether depths never decrease with the node id (a level-ordered tree).
    level_ordered: bool,
}

/// The tree's totals overflowed `u64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the sum of the sample counts exceeds 2^64 ticks")]
pub struct TotalOverflow;

impl CallTree {
    /// Number of nodes, the root included.
    pub fn len(&self) -> usize {
        self.name.len()
    }

    /// Never true: a tree always has its root.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    /// The root node.
    pub fn root(&self) -> NodeId {
        0
    }

    /// Name of node `n`.
    pub fn name(&self, n: NodeId) -> NameId {
        self.name[n as usize]
    }

    /// Parent of node `n` ([`NO_PARENT`] for the root).
    pub fn parent(&self, n: NodeId) -> NodeId {
        self.parent[n as usize]
    }

    /// Depth of node `n` (the root is 0), counted up its parents: O(depth). The tree
    /// keeps no depth column (4 bytes a node); passes over the whole tree track depths
    /// as they walk it.
    pub fn depth(&self, mut n: NodeId) -> u32 {
        let mut d = 0;
        while n != 0 && n != NO_PARENT {
            n = self.parent[n as usize];
            d += 1;
        }
        d
    }

    /// Per depth (the root's first), the nodes with a nonzero total: the bars of each
    /// row of a flame graph (nodes under a zero-total one, which stated totals allow,
    /// are counted but get none).
    pub fn level_bars(&self) -> &[usize] {
        &self.level_bars
    }

    /// Whether every node is at least as deep as the node before it (in id order), as
    /// the rows of a flamebearer file make a tree.
    pub fn is_level_ordered(&self) -> bool {
        self.level_ordered
    }

    /// Deepest node's depth.
    pub fn max_depth(&self) -> u32 {
        self.max_depth
    }

    /// Total ticks of node `n` (itself and everything it called; left + right for diffs).
    pub fn total(&self, n: NodeId) -> u64 {
        self.total[n as usize]
    }

    /// Self ticks of node `n` (left + right for diffs): its total less its children's
    /// (a read of each child's total), or as stated where those differ.
    pub fn self_ticks(&self, n: NodeId) -> u64 {
        match &self.stated_self {
            Some(s) => s[n as usize],
            None => {
                let kids: u64 = self.children(n).iter().map(|&c| self.total(c)).sum();
                self.total(n) - kids
            }
        }
    }

    /// Children of `n`, in the tree's child order.
    pub fn children(&self, n: NodeId) -> &[NodeId] {
        let i = n as usize;
        &self.child_list[self.child_start[i] as usize..self.child_start[i + 1] as usize]
    }

    /// The left columns, for differential trees.
    pub fn diff(&self) -> Option<&DiffColumns> {
        self.diff.as_ref()
    }

    /// Left total of node `n` (0 for non-diff trees).
    pub fn left_total(&self, n: NodeId) -> u64 {
        self.diff.as_ref().map_or(0, |d| d.left_total[n as usize])
    }

    /// Left self of node `n` (0 for non-diff trees).
    pub fn left_self(&self, n: NodeId) -> u64 {
        self.diff.as_ref().map_or(0, |d| d.left_self[n as usize])
    }

    /// Sum of all samples: the root's total.
    pub fn grand_total(&self) -> u64 {
        self.total[0]
    }

    /// Largest self value of any node (Pyroscope's `maxSelf`, the heat scale).
    pub fn max_self(&self) -> u64 {
        self.max_self
    }

    /// Heap bytes held by the columns, for memory reports.
    pub fn heap_bytes(&self) -> usize {
        let d = self.diff.as_ref().map_or(0, |d| {
            (d.left_total.capacity() + d.left_self.capacity()) * std::mem::size_of::<u64>()
        });
        self.name.capacity() * 4
            + self.parent.capacity() * 4
            + self.total.capacity() * 8
            + self.stated_self.as_ref().map_or(0, |s| s.capacity() * 8)
            + self.child_start.capacity() * 4
            + self.child_list.capacity() * 4
            + d
    }

    /// The names on the path from the root (excluded) to `n` (included), root side first.
    pub fn path(&self, mut n: NodeId) -> Vec<NodeId> {
        let mut out = Vec::new();
        while n != 0 && n != NO_PARENT {
            out.push(n);
            n = self.parent(n);
        }
        out.reverse();
        out
    }
}

fn key_hash(hasher: &foldhash::fast::FixedState, parent: NodeId, name: NameId) -> u64 {
    hasher.hash_one((u64::from(parent) << 32) | u64::from(name))
}

/// Builds a [`CallTree`] by adding samples along call paths.
///
/// Self values are added at the node a sample ends in; totals are derived once in
/// [`finish`](Self::finish), so adding a sample costs one addition whatever its depth.
///
/// Finding a child: most nodes have a handful of children, so each node keeps its
/// children in a linked list (newest first) that [`child`](Self::child) walks; a node
/// whose children outgrow [`LIST_MAX`] gets them indexed in a hash table keyed by
/// (parent, name) instead. Creating a node then costs a few appends to columns the
/// builder writes in order, not an insert at a random place in a table of every node
/// (on a 200 MB profile with 1.8 M nodes that table outgrows the caches).
pub struct CallTreeBuilder {
    name: Vec<NameId>,
    parent: Vec<NodeId>,
    self_ticks: Vec<u64>,
    left_self: Option<Vec<u64>>,
    /// Exact totals given by an importer that already knows them (flamebearer); when
    /// present, `finish` checks them instead of deriving them.
    preset_total: Option<(Vec<u64>, Option<Vec<u64>>)>,
    /// Newest child of each node ([`NO_PARENT`] when none).
    first_child: Vec<NodeId>,
    /// The next older sibling of each node ([`NO_PARENT`] at the end of the list).
    next_sibling: Vec<NodeId>,
    /// Children of each node, saturating: above [`LIST_MAX`] they are in `index`.
    kids: Vec<u8>,
    /// The children of nodes with more than [`LIST_MAX`] children, by (parent, name).
    index: HashTable<NodeId>,
    hasher: foldhash::fast::FixedState,
}

/// Children a node keeps in its list only; past this many they are hashed too.
pub const LIST_MAX: u8 = 8;

impl CallTreeBuilder {
    /// A builder holding only the root, named `total`. `diff` makes a differential tree.
    pub fn new(names: &mut Names, diff: bool) -> Self {
        let root_name = names.intern("total");
        Self {
            name: vec![root_name],
            parent: vec![NO_PARENT],
            self_ticks: vec![0],
            left_self: diff.then(|| vec![0]),
            preset_total: None,
            first_child: vec![NO_PARENT],
            next_sibling: vec![NO_PARENT],
            kids: vec![0],
            index: HashTable::new(),
            hasher: foldhash::fast::FixedState::with_seed(0x7_4ee),
        }
    }

    /// Gives the root another name (an input whose root bar is not called `total`).
    pub fn rename_root(&mut self, name: NameId) {
        self.name[0] = name;
    }

    /// True for a differential builder.
    pub fn is_diff(&self) -> bool {
        self.left_self.is_some()
    }

    /// Nodes so far, the root included.
    pub fn len(&self) -> usize {
        self.name.len()
    }

    /// Never true: the root always exists.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }

    /// Parent of node `n` (the root's is [`NO_PARENT`]).
    pub fn parent_of(&self, n: NodeId) -> NodeId {
        self.parent[n as usize]
    }

    /// Name of node `n`.
    pub fn name_of(&self, n: NodeId) -> NameId {
        self.name[n as usize]
    }

    /// Self ticks added to node `n` so far (both sides for diffs).
    pub fn self_of(&self, n: NodeId) -> u64 {
        self.self_ticks[n as usize]
    }

    /// Left self ticks of node `n` (0 for non-diff builders).
    pub fn left_self_of(&self, n: NodeId) -> u64 {
        self.left_self.as_ref().map_or(0, |l| l[n as usize])
    }

    fn key_hash(&self, parent: NodeId, name: NameId) -> u64 {
        key_hash(&self.hasher, parent, name)
    }

    /// The child of `parent` named `name`, created if it does not exist yet.
    pub fn child(&mut self, parent: NodeId, name: NameId) -> NodeId {
        match self.find_child(parent, name) {
            Some(c) => c,
            None => self.push_child(parent, name),
        }
    }

    /// The child of `parent` named `name` while placing one path from the root: once a
    /// node of the path has been created (`*fresh`), its children cannot exist yet and are
    /// appended without the lookup; `*fresh` becomes true when this call creates the node.
    #[inline]
    pub fn path_child(&mut self, parent: NodeId, name: NameId, fresh: &mut bool) -> NodeId {
        if *fresh {
            return self.push_child(parent, name);
        }
        let before = self.len();
        let id = self.child(parent, name);
        *fresh = self.len() > before;
        id
    }

    /// Appends a new child of `parent` without looking for an existing one with that name.
    /// Importers whose input already lists each node once (flamebearer) use this: sibling
    /// names may repeat there and must stay separate bars.
    pub fn push_child(&mut self, parent: NodeId, name: NameId) -> NodeId {
        let id = NodeId::try_from(self.name.len())
            .ok()
            .filter(|&id| id != NO_PARENT)
            .expect("more than 4 G call tree nodes");
        let p = parent as usize;
        self.name.push(name);
        self.parent.push(parent);
        self.self_ticks.push(0);
        if let Some(l) = &mut self.left_self {
            l.push(0);
        }
        self.first_child.push(NO_PARENT);
        self.next_sibling.push(self.first_child[p]);
        self.kids.push(0);
        self.first_child[p] = id;
        self.count_child(p, id);
        id
    }

    /// The child of `parent` named `name`, if there is one.
    #[inline]
    fn find_child(&self, parent: NodeId, name: NameId) -> Option<NodeId> {
        let p = parent as usize;
        if self.kids[p] > LIST_MAX {
            let hash = self.key_hash(parent, name);
            let (names, parents) = (&self.name, &self.parent);
            return self
                .index
                .find(hash, |&id| {
                    names[id as usize] == name && parents[id as usize] == parent
                })
                .copied();
        }
        let mut c = self.first_child[p];
        while c != NO_PARENT {
            if self.name[c as usize] == name {
                return Some(c);
            }
            c = self.next_sibling[c as usize];
        }
        None
    }

    /// Adds every node and self value of `from` (a tree built with [`child`](Self::child):
    /// siblings have distinct names, whose `from_names` names are numbered from 0) into
    /// this one, `from`'s name `i` being this tree's `name_of(i)` (called once per distinct name, in the order of first use; distinct
    /// names must stay distinct). O(nodes of `from`).
    ///
    /// A node whose parent is new here is new too (nothing here can have it as a child
    /// yet), so only the children of found nodes are looked up among their parent's
    /// children, on a walk down `from` from the root through the found nodes. The
    /// new nodes keep `from`'s order and are then appended column by column, their child
    /// lists and counts copied with the ids mapped; only those whose parent already
    /// existed are linked into its list one by one. Another thread's part of a sorted
    /// input shares a path or two with this one, so nearly all its nodes are new: this
    /// costs a few sequential column copies, not a push into seven columns per node.
    pub fn merge_from(
        &mut self,
        from: &CallTreeBuilder,
        from_names: usize,
        mut name_of: impl FnMut(NameId) -> NameId,
    ) -> Result<(), TotalOverflow> {
        let n1 = self.len();
        let m = from.len();
        assert!(n1 + m < NO_PARENT as usize, "more than 4 G call tree nodes");
        let base = n1 as NodeId;
        // Names in the order of their first use by a node of `from` (the order a node
        // by node merge meets them), up to the last name used.
        let mut name_map: Vec<NameId> = vec![NameId::MAX; from_names];
        let mut unmapped = from_names;
        for &on in &from.name[1..] {
            if unmapped == 0 {
                break;
            }
            let slot = &mut name_map[on as usize];
            if *slot == NameId::MAX {
                *slot = name_of(on);
                unmapped -= 1;
            }
        }
        // Where each of `from`'s nodes goes: an id below `base` is a node found here,
        // from `base` on a new one (ids given in `from`'s order). Only the children of
        // found nodes can be found (a child of a new node is new), and those are few: a
        // walk down `from`'s child lists from the root through found nodes looks them up
        // (2 % of the nodes of the second part of the 1 GB W1 pprof), where a pass over
        // every node, each waiting on its parent's place, took 1.3 s on one core.
        let mut node_map: Vec<NodeId> = vec![NO_PARENT; m];
        node_map[0] = 0;
        // New nodes whose parent existed (by `from`'s id here): linked into its child list
        // at the end.
        let mut linked: Vec<NodeId> = Vec::new();
        let mut stack: Vec<NodeId> = vec![0];
        while let Some(f) = stack.pop() {
            let here = node_map[f as usize];
            let mut c = from.first_child[f as usize];
            while c != NO_PARENT {
                let n = c as usize;
                match self.find_child(here, name_map[from.name[n] as usize]) {
                    Some(found) => {
                        let s = from.self_ticks[n];
                        if s > 0 {
                            if self.is_diff() {
                                let l = from.left_self_of(c);
                                self.add_self_diff(found, l, s - l)?;
                            } else {
                                self.add_self(found, s)?;
                            }
                        }
                        node_map[n] = found;
                        stack.push(c);
                    }
                    None => linked.push(c),
                }
                c = from.next_sibling[n];
            }
        }
        // The new nodes numbered in `from`'s order, as runs of consecutive ids of `from`.
        let mut runs: Vec<Range<usize>> = Vec::new();
        let mut next = base;
        for (n, slot) in node_map.iter_mut().enumerate().skip(1) {
            if *slot != NO_PARENT {
                continue;
            }
            *slot = next;
            next += 1;
            match runs.last_mut() {
                Some(r) if r.end == n => r.end = n + 1,
                _ => runs.push(n..n + 1),
            }
        }
        // In id order, so that linking them walks the columns forwards (the order of
        // siblings in a builder's list does not show in the tree).
        linked.sort_unstable();
        for l in &mut linked {
            *l = node_map[*l as usize];
        }
        // The new nodes' columns, in id order, run by run: copies and lookups in
        // `node_map` and `name_map`, half of the columns on another thread.
        let added = (next - base) as usize;
        let map_link = |c: NodeId| {
            if c == NO_PARENT {
                NO_PARENT
            } else {
                node_map[c as usize]
            }
        };
        let Self {
            name,
            parent,
            self_ticks,
            left_self,
            first_child,
            next_sibling,
            kids,
            ..
        } = self;
        let runs = &runs;
        let mut one = || {
            name.reserve(added);
            parent.reserve(added);
            first_child.reserve(added);
            for r in runs.iter().cloned() {
                name.extend(from.name[r.clone()].iter().map(|&o| name_map[o as usize]));
                parent.extend(from.parent[r.clone()].iter().map(|&o| node_map[o as usize]));
                first_child.extend(from.first_child[r].iter().map(|&c| map_link(c)));
            }
        };
        // A new node under a new parent: its older siblings in `from` are new as well.
        // Under an existing parent: set when it is linked below.
        let mut other = || {
            self_ticks.reserve(added);
            kids.reserve(added);
            next_sibling.reserve(added);
            for r in runs.iter().cloned() {
                self_ticks.extend_from_slice(&from.self_ticks[r.clone()]);
                kids.extend_from_slice(&from.kids[r.clone()]);
                next_sibling.extend(from.next_sibling[r.clone()].iter().map(|&c| map_link(c)));
                // A differential tree takes a plain one's values as the right side's.
                if let Some(l) = left_self.as_mut() {
                    match &from.left_self {
                        Some(fl) => l.extend_from_slice(&fl[r]),
                        None => l.resize(l.len() + r.len(), 0),
                    }
                }
            }
        };
        if crate::par::two_threads_for(added) {
            crate::par::both(one, other);
        } else {
            one();
            other();
        }
        // Children of new nodes that `from` indexed (more than LIST_MAX siblings) are
        // indexed here too, under their new ids.
        for r in runs.iter().cloned() {
            for n in r {
                let p = from.parent[n] as usize;
                if from.kids[p] > LIST_MAX && node_map[p] >= base {
                    self.insert_indexed(node_map[n]);
                }
            }
        }
        for id in linked {
            let i = id as usize;
            let p = self.parent[i] as usize;
            self.next_sibling[i] = self.first_child[p];
            self.first_child[p] = id;
            self.count_child(p, id);
        }
        Ok(())
    }

    /// Counts the new child `id` of `p` (already first in its list), indexing it, or the
    /// whole list when it just outgrew [`LIST_MAX`].
    fn count_child(&mut self, p: usize, id: NodeId) {
        let k = self.kids[p];
        if k > LIST_MAX {
            self.insert_indexed(id);
        } else {
            self.kids[p] = k + 1;
            if k + 1 > LIST_MAX {
                // The list just outgrew itself: index every child, this one included.
                let mut c = id;
                while c != NO_PARENT {
                    self.insert_indexed(c);
                    c = self.next_sibling[c as usize];
                }
            }
        }
    }

    /// Adds node `id` to the (parent, name) index.
    fn insert_indexed(&mut self, id: NodeId) {
        let (names, parents, hasher) = (&self.name, &self.parent, &self.hasher);
        let i = id as usize;
        let hash = key_hash(hasher, parents[i], names[i]);
        self.index.insert_unique(hash, id, |&other| {
            let o = other as usize;
            key_hash(hasher, parents[o], names[o])
        });
    }

    /// Adds `ticks` of self time to `node` (right side, for diffs).
    pub fn add_self(&mut self, node: NodeId, ticks: u64) -> Result<(), TotalOverflow> {
        let s = &mut self.self_ticks[node as usize];
        *s = s.checked_add(ticks).ok_or(TotalOverflow)?;
        Ok(())
    }

    /// Adds `left` and `right` self ticks to `node` of a differential tree.
    ///
    /// # Panics
    /// If the builder is not differential.
    pub fn add_self_diff(
        &mut self,
        node: NodeId,
        left: u64,
        right: u64,
    ) -> Result<(), TotalOverflow> {
        let l = &mut self.left_self.as_mut().expect("diff builder")[node as usize];
        let both = left.checked_add(right).ok_or(TotalOverflow)?;
        *l = l.checked_add(left).ok_or(TotalOverflow)?;
        let s = &mut self.self_ticks[node as usize];
        *s = s.checked_add(both).ok_or(TotalOverflow)?;
        Ok(())
    }

    /// Multiplies every self value by `factor` (used when a fractional count raises the
    /// fixed-point precision mid-file).
    pub fn rescale(&mut self, factor: u64) -> Result<(), TotalOverflow> {
        for v in self.self_ticks.iter_mut() {
            *v = v.checked_mul(factor).ok_or(TotalOverflow)?;
        }
        if let Some(l) = &mut self.left_self {
            for v in l.iter_mut() {
                *v = v.checked_mul(factor).ok_or(TotalOverflow)?;
            }
        }
        Ok(())
    }

    /// Sets self values of a node whose totals the input states (flamebearer), and records
    /// the stated totals. `left` is `(left_total, left_self)` for diffs.
    pub fn set_stated(&mut self, node: NodeId, total: u64, self_: u64, left: Option<(u64, u64)>) {
        let n = node as usize;
        let diff = self.left_self.is_some();
        let preset = self
            .preset_total
            .get_or_insert_with(|| (Vec::new(), diff.then(Vec::new)));
        if preset.0.len() <= n {
            preset.0.resize(n + 1, 0);
            if let Some(l) = &mut preset.1 {
                l.resize(n + 1, 0);
            }
        }
        preset.0[n] = total;
        self.self_ticks[n] = self_;
        if let (Some((lt, ls)), Some(l), Some(pl)) = (left, &mut self.left_self, &mut preset.1) {
            l[n] = ls;
            pl[n] = lt;
        }
    }

    /// Finishes the tree: derives totals (or takes the stated ones), the child lists in
    /// `order`, and the number of bars at each depth.
    pub fn finish(self, names: &Names, order: ChildOrder) -> Result<CallTree, TotalOverflow> {
        let Self {
            name,
            parent,
            self_ticks,
            left_self,
            preset_total,
            first_child,
            next_sibling,
            ..
        } = self;
        let n = name.len();
        // The child lists, and the totals (from self values) with the depths, read
        // different columns: a large tree computes them on two threads, then sorts the
        // lists on both. (Timed alone on the 139 M-node W1 pprof: lists 3.5 s, totals
        // 2.3, depths 1.6, sorts 1.1; one thread used to do all but the totals.) Derived
        // totals are summed in the self column itself, which the tree then no longer needs
        // (a node's self is its total less its children's): no second column of the
        // tree's length.
        let two = crate::par::two_threads_for(n);
        // (total, left total, the selves as stated where the input states totals, the
        // largest self)
        type Totals = (Vec<u64>, Option<Vec<u64>>, Option<Vec<u64>>, u64);
        let totals = || -> Result<Totals, TotalOverflow> {
            let max_self = self_ticks.iter().copied().max().unwrap_or(0);
            match preset_total {
                Some((mut t, l)) => {
                    t.resize(n, 0);
                    let l = l.map(|mut l| {
                        l.resize(n, 0);
                        l
                    });
                    Ok((t, l, Some(self_ticks), max_self))
                }
                None => {
                    // Children have larger ids than their parent: one downward pass sums
                    // totals.
                    let mut total = self_ticks;
                    let mut left_total = left_self.clone();
                    for i in (1..n).rev() {
                        let p = parent[i] as usize;
                        total[p] = total[p].checked_add(total[i]).ok_or(TotalOverflow)?;
                        if let Some(l) = &mut left_total {
                            l[p] = l[p].checked_add(l[i]).ok_or(TotalOverflow)?;
                        }
                    }
                    Ok((total, left_total, None, max_self))
                }
            }
        };
        let lists = || child_lists(&parent, next_sibling);
        let totals_depths = || (totals(), depths(&parent, first_child));
        let ((child_start, mut child_list), (totals, (depth, max_depth))) = if two {
            crate::par::both(lists, totals_depths)
        } else {
            (lists(), totals_depths())
        };
        let (total, left_total, stated_self, max_self) = totals?;
        if order == ChildOrder::ByName {
            sort_by_name(&name, names, &child_start, &mut child_list, two);
        }
        let (level_bars, level_ordered) = levels(&depth, &total, max_depth, two);
        drop(depth);
        // Stated totals that add up (each node's self and its children's totals) leave
        // nothing to keep: the selves derive from them as everywhere else.
        let stated_self = stated_self.filter(|s| {
            (0..n).any(|i| {
                let kids = &child_list[child_start[i] as usize..child_start[i + 1] as usize];
                let sum = kids
                    .iter()
                    .try_fold(s[i], |acc, &c| acc.checked_add(total[c as usize]));
                sum != Some(total[i])
            })
        });
        // Growth slack (and the recycled columns' longer capacity) would only count in
        // memory reports: shrinking in place costs no copy.
        let (mut name, mut parent, mut total, mut child_list) = (name, parent, total, child_list);
        name.shrink_to_fit();
        parent.shrink_to_fit();
        total.shrink_to_fit();
        child_list.shrink_to_fit();
        let stated_self = stated_self.map(|mut s| {
            s.shrink_to_fit();
            s
        });
        let left_self = left_self.map(|mut l| {
            l.shrink_to_fit();
            l
        });
        Ok(CallTree {
            name,
            parent,
            total,
            stated_self,
            diff: left_self.map(|left_self| DiffColumns {
                left_total: left_total.unwrap_or_default(),
                left_self,
            }),
            child_start,
            child_list,
            max_depth,
            max_self,
            level_bars,
            level_ordered,
        })
    }
}

/// Per depth, the nodes with a nonzero total, and whether depths never decrease with the
/// id; the two halves of a large tree on two threads.
fn levels(depth: &[u32], total: &[u64], max_depth: u32, two: bool) -> (Vec<usize>, bool) {
    let count = |nodes: Range<usize>| {
        let mut lens = vec![0usize; max_depth as usize + 1];
        // (first, last) depth of the run, while it never decreases.
        let mut run: Option<(u32, u32)> = None;
        let mut ordered = true;
        for i in nodes {
            let d = depth[i];
            match &mut run {
                None => run = Some((d, d)),
                Some((_, last)) if *last <= d => *last = d,
                Some(_) => ordered = false,
            }
            if total[i] > 0 {
                lens[d as usize] += 1;
            }
        }
        (lens, ordered.then_some(run))
    };
    let n = depth.len();
    if !two {
        let (lens, run) = count(0..n);
        return (lens, run.is_some());
    }
    let ((mut lens, a), (more, b)) = crate::par::both(|| count(0..n / 2), || count(n / 2..n));
    for (x, y) in lens.iter_mut().zip(more) {
        *x += y;
    }
    let ordered = match (a, b) {
        (Some(Some((_, last))), Some(Some((first, _)))) => last <= first,
        (Some(_), Some(_)) => true,
        _ => false,
    };
    (lens, ordered)
}

/// Depths, and the deepest, of the tree with column `parent`. The builder's first-child
/// links are not needed any more: their column (already in memory, as long as the tree)
/// becomes the depth column, instead of a fresh allocation whose every page would fault
/// in once more.
fn depths(parent: &[NodeId], first_child: Vec<NodeId>) -> (Vec<u32>, u32) {
    let mut depth = first_child;
    let mut max_depth = 0;
    depth[0] = 0;
    for i in 1..parent.len() {
        let d = depth[parent[i] as usize] + 1;
        depth[i] = d;
        max_depth = max_depth.max(d);
    }
    (depth, max_depth)
}

/// CSR child lists (`child_start`, `child_list`) of the tree with column `parent`,
/// children in id (= insertion) order: count, prefix-sum to each node's end, then fill
/// backwards (each slot taken moves the node's end down to its start). The builder's
/// next-sibling column becomes the list, as [`depths`] takes the first-child one.
fn child_lists(parent: &[NodeId], next_sibling: Vec<NodeId>) -> (Vec<u32>, Vec<NodeId>) {
    let n = parent.len();
    let mut child_start = vec![0u32; n + 1];
    for &p in &parent[1..] {
        child_start[p as usize] += 1;
    }
    let mut end = 0;
    for c in child_start.iter_mut() {
        end += *c;
        *c = end;
    }
    let mut child_list = next_sibling;
    child_list.truncate(n.saturating_sub(1));
    for i in (1..n).rev() {
        let p = parent[i] as usize;
        child_start[p] -= 1;
        child_list[child_start[p] as usize] = i as NodeId;
    }
    (child_start, child_list)
}

/// Every child list ordered by its names' byte-wise order: by each name's rank among all
/// names (a string comparison per pair of names, once), not a string comparison per pair
/// of siblings; a big tree's lists on two threads.
fn sort_by_name(
    name: &[NameId],
    names: &Names,
    child_start: &[u32],
    child_list: &mut [NodeId],
    two: bool,
) {
    let rank = name_ranks(names);
    crate::par::each_list(child_start, child_list, two, |_, l| {
        if l.len() > 1 {
            l.sort_by_key(|&c| rank[name[c as usize] as usize]);
        }
    });
}

/// The rank of every name of `names` in byte-wise order (ranks of equal strings would be
/// equal, but interned names are distinct).
fn name_ranks(names: &Names) -> Vec<u32> {
    let mut order: Vec<NameId> = (0..names.len() as NameId).collect();
    order.sort_unstable_by(|&a, &b| names.get(a).cmp(names.get(b)));
    let mut rank = vec![0u32; names.len()];
    for (r, &id) in order.iter().enumerate() {
        rank[id as usize] = r as u32;
    }
    rank
}

impl CallTree {
    /// Node `n`'s call path as folded text, `root;…;n` (the root itself not included).
    pub fn path_text(&self, names: &Names, n: NodeId) -> String {
        let path: Vec<&str> = self
            .path(n)
            .iter()
            .map(|&x| names.get(self.name(x)))
            .collect();
        path.join(";")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(stacks: &[(&str, u64)]) -> (Names, CallTree) {
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, false);
        for (stack, v) in stacks {
            let mut cur = 0;
            for f in stack.split(';') {
                let id = names.intern(f);
                cur = b.child(cur, id);
            }
            b.add_self(cur, *v).unwrap();
        }
        let t = b.finish(&names, ChildOrder::ByName).unwrap();
        (names, t)
    }

    #[test]
    fn aggregates_totals_and_self() {
        let (names, t) = build(&[("a;b;c", 1), ("a;b;c", 1), ("a;b;d", 4), ("a;b", 5)]);
        assert_eq!(t.grand_total(), 11);
        let a = t.children(0)[0];
        assert_eq!(names.get(t.name(a)), "a");
        assert_eq!(t.total(a), 11);
        assert_eq!(t.self_ticks(a), 0);
        let b = t.children(a)[0];
        assert_eq!((t.total(b), t.self_ticks(b)), (11, 5));
        let kids: Vec<_> = t
            .children(b)
            .iter()
            .map(|&k| names.get(t.name(k)))
            .collect();
        assert_eq!(kids, ["c", "d"]);
        assert_eq!(t.max_depth(), 3);
        assert_eq!(t.len(), 5);
    }

    #[test]
    fn children_sorted_by_name_not_insertion() {
        let (names, t) = build(&[("z", 1), ("m", 1), ("a", 1)]);
        let kids: Vec<_> = t
            .children(0)
            .iter()
            .map(|&k| names.get(t.name(k)))
            .collect();
        assert_eq!(kids, ["a", "m", "z"]);
    }

    /// A tree big enough to be finished on two threads (child lists beside totals and
    /// depths, then sorted on both): every list sorted by name and holding exactly the
    /// node's children, every depth one more than its parent's.
    #[test]
    fn a_big_trees_children_sorted_by_name() {
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, false);
        let mut rng = crate::testing::Lcg::new(5);
        let ids: Vec<NameId> = (0..500)
            .map(|i| names.intern(&format!("n{}", (i * 7919) % 500)))
            .collect();
        while b.len() < 150_000 {
            let mut cur = 0;
            for _ in 0..1 + rng.next_usize() % 9 {
                // Wide near the root (one node with hundreds of children), narrow below.
                cur = b.child(cur, ids[rng.next_usize() % if cur == 0 { 500 } else { 40 }]);
            }
            b.add_self(cur, 1).unwrap();
        }
        let t = b.finish(&names, ChildOrder::ByName).unwrap();
        assert!(t.len() >= 1 << 16, "big enough to sort on two threads");
        let mut seen = vec![0u32; t.len()];
        for n in 0..t.len() as NodeId {
            let kids = t.children(n);
            for w in kids.windows(2) {
                assert!(
                    names.get(t.name(w[0])) < names.get(t.name(w[1])),
                    "node {n}"
                );
            }
            for &k in kids {
                assert_eq!(t.parent(k), n);
                assert_eq!(t.depth(k), t.depth(n) + 1, "node {k}");
                seen[k as usize] += 1;
            }
        }
        assert_eq!(t.depth(0), 0);
        assert_eq!(
            t.max_depth(),
            (0..t.len() as NodeId).map(|n| t.depth(n)).max().unwrap()
        );
        assert_eq!(seen[0], 0);
        assert!(
            seen[1..].iter().all(|&c| c == 1),
            "every node in its parent's list once"
        );
    }

    #[test]
    fn deep_stack_needs_no_recursion() {
        let deep: String = (0..20_000)
            .map(|i| format!("f{i}"))
            .collect::<Vec<_>>()
            .join(";");
        let (_, t) = build(&[(&deep, 7)]);
        assert_eq!(t.max_depth(), 20_000);
        assert_eq!(t.total(1), 7);
        assert_eq!(t.path(t.len() as NodeId - 1).len(), 20_000);
    }

    /// Lookups find the same nodes whether a parent keeps its children in its list or,
    /// past `LIST_MAX` children, in the index; creation order is the id order either way.
    #[test]
    fn child_lookup_across_the_list_limit() {
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, false);
        let ids: Vec<NameId> = (0..40).map(|i| names.intern(&format!("f{i}"))).collect();
        let mut made = Vec::new();
        for (k, &n) in ids.iter().enumerate() {
            let c = b.child(0, n);
            assert_eq!(c as usize, k + 1, "a new child takes the next id");
            made.push(c);
            // Every child so far is found again, none is created twice.
            for (j, &m) in ids[..=k].iter().enumerate() {
                assert_eq!(b.child(0, m), made[j]);
            }
            assert_eq!(b.len(), k + 2);
        }
        // Grandchildren under a child with a long list, and a repeated name via push_child.
        let g = b.child(made[3], ids[0]);
        assert_eq!(b.child(made[3], ids[0]), g);
        let dup = b.push_child(0, ids[5]);
        assert_ne!(dup, made[5]);
        b.add_self(g, 2).unwrap();
        b.add_self(dup, 1).unwrap();
        let t = b.finish(&names, ChildOrder::Insertion).unwrap();
        assert_eq!(t.children(0).len(), 41);
        assert_eq!(t.grand_total(), 3);
        assert_eq!(t.parent(g), made[3]);
    }

    #[test]
    fn overflow_is_an_error() {
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, false);
        let x = names.intern("x");
        let y = names.intern("y");
        let nx = b.child(0, x);
        let ny = b.child(0, y);
        b.add_self(nx, u64::MAX).unwrap();
        b.add_self(ny, 1).unwrap();
        assert!(b.finish(&names, ChildOrder::ByName).is_err());
    }

    #[test]
    fn diff_columns() {
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, true);
        let a = names.intern("a");
        let na = b.child(0, a);
        b.add_self_diff(na, 3, 5).unwrap();
        let t = b.finish(&names, ChildOrder::ByName).unwrap();
        assert_eq!(t.total(na), 8);
        assert_eq!(t.left_total(na), 3);
        assert_eq!(t.left_total(0), 3);
        assert_eq!(t.left_self(na), 3);
    }

    /// A call path's frames and its (left, right) self ticks.
    type Path = (Vec<String>, u64, u64);
    /// A node as (path, total, self, left total, left self).
    type NodeRow = (String, u64, u64, u64, u64);

    /// Random call paths over `alphabet` names (short ones, so that siblings outgrow
    /// [`LIST_MAX`] at the root and a few levels down), in file order or sorted.
    fn random_paths(rng: &mut crate::generator::Rng, count: usize, alphabet: u64) -> Vec<Path> {
        let mut paths: Vec<Path> = (0..count)
            .map(|_| {
                let depth = 1 + rng.below(6) as usize;
                let frames = (0..depth)
                    .map(|d| format!("f{}", rng.below(alphabet / (d as u64 + 1) + 1)))
                    .collect();
                (frames, rng.below(4), rng.below(5))
            })
            .collect();
        if rng.below(2) == 0 {
            paths.sort();
        }
        paths
    }

    /// A builder (with its own names) of `paths`, each adding `(left, right)` self ticks
    /// (a differential tree when `diff`).
    fn built(paths: &[Path], diff: bool) -> (Names, CallTreeBuilder) {
        let mut names = Names::new();
        let mut b = CallTreeBuilder::new(&mut names, diff);
        add_paths(&mut b, &mut names, paths, diff);
        (names, b)
    }

    fn add_paths(b: &mut CallTreeBuilder, names: &mut Names, paths: &[Path], diff: bool) {
        for (frames, left, right) in paths {
            let mut cur = 0;
            for f in frames {
                cur = b.child(cur, names.intern(f));
            }
            if diff {
                b.add_self_diff(cur, *left, *right).unwrap();
            } else {
                b.add_self(cur, left + right).unwrap();
            }
        }
    }

    /// Every node of a finished tree as (path, total, self, left total, left self),
    /// sorted: two trees of the same samples give the same list whatever their ids.
    fn node_list(names: &Names, t: &CallTree) -> Vec<NodeRow> {
        let mut v: Vec<_> = (0..t.len() as NodeId)
            .map(|n| {
                let path: Vec<&str> = t.path(n).iter().map(|&p| names.get(t.name(p))).collect();
                let (lt, ls) = t
                    .diff()
                    .map_or((0, 0), |_| (t.left_total(n), t.left_self(n)));
                (path.join(";"), t.total(n), t.self_ticks(n), lt, ls)
            })
            .collect();
        v.sort();
        v
    }

    /// The node list of one builder given the paths of `parts` in turn: what merging
    /// builders of the same paths must give.
    fn tree_of_all(parts: &[&[Path]], diff: bool) -> Vec<NodeRow> {
        let (mut names, mut b) = built(parts[0], diff);
        for part in &parts[1..] {
            add_paths(&mut b, &mut names, part, diff);
        }
        node_list(&names, &b.finish(&names, ChildOrder::ByName).unwrap())
    }

    /// Merges a builder of `paths` into `into` (names in `names`): the nodes of that
    /// builder added, and those found (its root included).
    fn merge_built(
        into: &mut CallTreeBuilder,
        names: &mut Names,
        paths: &[Path],
        diff: bool,
    ) -> (usize, usize) {
        let (from_names, from) = built(paths, diff);
        let before = into.len();
        into.merge_from(&from, from_names.len(), |n| names.intern(from_names.get(n)))
            .unwrap();
        let added = into.len() - before;
        (added, from.len() - added)
    }

    #[test]
    fn merged_trees_are_the_tree_of_all_paths() {
        let mut rng = crate::generator::Rng(11);
        let mut merged_nodes = 0;
        let mut found_nodes = 0;
        for case in 0..200 {
            let diff = case % 3 == 0;
            let alphabet = [3, 12, 40][case % 3];
            let counts = [rng.below(300), rng.below(300), rng.below(100)];
            let first = random_paths(&mut rng, counts[0] as usize, alphabet);
            let second = random_paths(&mut rng, counts[1] as usize, alphabet);
            let third = random_paths(&mut rng, counts[2] as usize, alphabet);
            let want = tree_of_all(&[&first, &second, &third], diff);
            // Two builders merged, then more paths added by lookups in the merged one
            // (which must find the merged nodes, not add them again).
            let (mut names, mut into) = built(&first, diff);
            let (added, found) = merge_built(&mut into, &mut names, &second, diff);
            merged_nodes += added;
            found_nodes += found;
            add_paths(&mut into, &mut names, &third, diff);
            let got = node_list(&names, &into.finish(&names, ChildOrder::ByName).unwrap());
            assert_eq!(got, want, "case {case}");
        }
        // Both kinds of node were met many times: new ones and ones found.
        assert!(
            merged_nodes > 5000 && found_nodes > 5000,
            "{merged_nodes} {found_nodes}"
        );
    }

    #[test]
    fn a_merge_into_a_parent_with_a_long_child_list() {
        // The root has more than LIST_MAX children on both sides, a child of the root
        // outgrows its list only with the merged children, and a new subtree under a new
        // node has more than LIST_MAX children of its own.
        let mut names = Names::new();
        let mut into = CallTreeBuilder::new(&mut names, false);
        for i in 0..12 {
            let n = into.child(0, names.intern(&format!("r{i}")));
            into.add_self(n, 1).unwrap();
        }
        let r0 = into.child(0, names.intern("r0"));
        for i in 0..5 {
            into.child(r0, names.intern(&format!("k{i}")));
        }
        let mut from_names = Names::new();
        let mut from = CallTreeBuilder::new(&mut from_names, false);
        for i in (6..20).rev() {
            let n = from.child(0, from_names.intern(&format!("r{i}")));
            from.add_self(n, 10).unwrap();
        }
        let f0 = from.child(0, from_names.intern("r0"));
        for i in 3..11 {
            from.child(f0, from_names.intern(&format!("k{i}")));
        }
        let fresh = from.child(0, from_names.intern("new"));
        for i in 0..20 {
            let n = from.child(fresh, from_names.intern(&format!("g{i}")));
            from.add_self(n, 1).unwrap();
        }
        let before = into.len();
        into.merge_from(&from, from_names.len(), |n| names.intern(from_names.get(n)))
            .unwrap();
        // `from` has 14 + 1 + 8 + 1 + 20 nodes below its root; r6..r11, r0, k3 and k4
        // were found.
        assert_eq!(into.len() - before, 44 - 9);
        // Lookups see every merged child exactly once.
        let len = into.len();
        for i in 0..20 {
            into.child(0, names.intern(&format!("r{i}")));
        }
        for i in 0..11 {
            into.child(r0, names.intern(&format!("k{i}")));
        }
        let new = into.child(0, names.intern("new"));
        for i in 0..20 {
            into.child(new, names.intern(&format!("g{i}")));
        }
        assert_eq!(into.len(), len, "a merged node was not found");
        assert!(into.kids[r0 as usize] > LIST_MAX && into.kids[new as usize] > LIST_MAX);
        let t = into.finish(&names, ChildOrder::ByName).unwrap();
        assert_eq!(t.children(0).len(), 21);
        assert_eq!(t.children(r0).len(), 11);
        assert_eq!(t.grand_total(), 12 + 14 * 10 + 20);
        let r7 = t
            .children(0)
            .iter()
            .find(|&&c| names.get(t.name(c)) == "r7");
        assert_eq!(t.self_ticks(*r7.unwrap()), 11);
    }

    #[test]
    fn merges_of_a_plain_tree_into_a_diff_one_and_of_a_bare_root() {
        let mut rng = crate::generator::Rng(3);
        let first = random_paths(&mut rng, 200, 12);
        let second = random_paths(&mut rng, 200, 12);
        let (mut names, mut into) = built(&first, true);
        merge_built(&mut into, &mut names, &second, false);
        // The plain tree's values are the right side's: what the diff tree's builder
        // gives for those paths with nothing on the left.
        let right_only: Vec<_> = second
            .iter()
            .map(|(f, l, r)| (f.clone(), 0, l + r))
            .collect();
        let want = tree_of_all(&[&first, &right_only], true);
        let got = node_list(&names, &into.finish(&names, ChildOrder::ByName).unwrap());
        assert_eq!(got, want);
        // A tree of only its root adds nothing.
        let (mut names, mut into) = built(&first, false);
        let len = into.len();
        let mut bare_names = Names::new();
        let bare = CallTreeBuilder::new(&mut bare_names, false);
        into.merge_from(&bare, bare_names.len(), |n| names.intern(bare_names.get(n)))
            .unwrap();
        assert_eq!(into.len(), len);
    }

    #[test]
    fn a_large_merge_copies_its_columns_on_two_threads_alike() {
        // Past 64 Ki new nodes the columns are filled on two threads.
        let mut rng = crate::generator::Rng(17);
        let first = random_paths(&mut rng, 2_000, 400);
        let second: Vec<_> = (0..70_000u64)
            .map(|i| {
                let frames = vec![
                    format!("f{}", i % 64),
                    format!("h{i}"),
                    format!("k{}", i % 7),
                ];
                (frames, i % 3, 1 + i % 5)
            })
            .collect();
        let want = tree_of_all(&[&first, &second], true);
        let (mut names, mut into) = built(&first, true);
        let (added, _) = merge_built(&mut into, &mut names, &second, true);
        assert!(added > 1 << 16, "{added} new nodes");
        let got = node_list(&names, &into.finish(&names, ChildOrder::ByName).unwrap());
        assert_eq!(got, want);
    }

    /// The tree keeps no self or depth column: selves (its total less its children's)
    /// equal what the paths added at each node, depths counted up the parents equal the
    /// paths' lengths, and the bars per depth count the nodes with a nonzero total, on
    /// random trees, plain and differential.
    #[test]
    fn selves_depths_and_levels_derive_from_the_shape() {
        let mut rng = crate::generator::Rng(17);
        for round in 0..40 {
            let diff = round % 2 == 1;
            let count = 1 + rng.below(300) as usize;
            let paths = random_paths(&mut rng, count, 40);
            let (names, b) = built(&paths, diff);
            let t = b.finish(&names, ChildOrder::ByName).unwrap();
            assert!(t.stated_self.is_none());
            let mut added: std::collections::HashMap<String, (u64, usize)> = Default::default();
            for (frames, l, r) in &paths {
                let e = added.entry(frames.join(";")).or_insert((0, frames.len()));
                e.0 += l + r;
            }
            let mut levels = vec![0usize; t.max_depth() as usize + 1];
            for n in 0..t.len() as NodeId {
                let path = t.path_text(&names, n);
                let (own, depth) = added.get(&path).copied().unwrap_or((0, t.path(n).len()));
                assert_eq!(t.self_ticks(n), own, "round {round} {path}");
                assert_eq!(t.depth(n) as usize, depth, "round {round} {path}");
                if t.total(n) > 0 {
                    levels[depth] += 1;
                }
            }
            assert_eq!(t.level_bars(), levels, "round {round}");
            assert_eq!(t.max_self(), added.values().map(|v| v.0).max().unwrap_or(0));
        }
    }

    /// Bars per depth and level order, counted in two halves on two threads, are those
    /// counted in one pass, and level order is what its definition says, on depth
    /// columns in level order, nearly so, and at random, with zero totals among them.
    #[test]
    fn levels_in_two_halves_are_the_levels_of_one_pass() {
        let mut rng = crate::generator::Rng(5);
        let mut unordered = 0;
        for round in 0..300 {
            let n = rng.below(40) as usize;
            let mut depth: Vec<u32> = (0..n).map(|_| rng.below(6) as u32).collect();
            if round % 3 != 0 {
                depth.sort_unstable();
                if round % 3 == 2 && n > 1 {
                    let i = rng.below(n as u64 - 1) as usize;
                    depth.swap(i, i + 1);
                }
            }
            let total: Vec<u64> = (0..n).map(|_| rng.below(3)).collect();
            let max_depth = depth.iter().copied().max().unwrap_or(0);
            let one = levels(&depth, &total, max_depth, false);
            assert_eq!(levels(&depth, &total, max_depth, true), one, "{depth:?}");
            let mut want = vec![0usize; max_depth as usize + 1];
            for (&d, &t) in depth.iter().zip(&total) {
                want[d as usize] += usize::from(t > 0);
            }
            let ordered = depth.windows(2).all(|w| w[0] <= w[1]);
            assert_eq!(one, (want, ordered), "{depth:?}");
            unordered += usize::from(!ordered);
        }
        assert!(unordered > 50, "{unordered} unordered columns");
    }

    /// Stated totals (flamebearer) keep their selves only where those differ from each
    /// total less its children's; where they add up the column is dropped and the
    /// selves read the same.
    #[test]
    fn stated_selves_are_kept_only_where_the_totals_do_not_add_up() {
        for (root_self, kept) in [(2, false), (3, true)] {
            let mut names = Names::new();
            let mut b = CallTreeBuilder::new(&mut names, false);
            let (a, c) = (names.intern("a"), names.intern("c"));
            let na = b.child(0, a);
            let nc = b.child(na, c);
            b.set_stated(0, 10, root_self, None);
            b.set_stated(na, 8, 5, None);
            b.set_stated(nc, 3, 3, None);
            let t = b.finish(&names, ChildOrder::Insertion).unwrap();
            assert_eq!(t.stated_self.is_some(), kept);
            assert_eq!(
                [t.self_ticks(0), t.self_ticks(na), t.self_ticks(nc)],
                [root_self, 5, 3]
            );
            assert_eq!(t.max_self(), 5);
        }
    }
}
