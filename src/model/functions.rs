//! Per-function totals (the table and `scorch top`) and the sandwich of one function.
//!
//! A function is an interned name. Its **self** is the self time of every node with that
//! name; its **total** is the total of every node with that name that has no ancestor of
//! the same name, so a function twice on one stack counts once (pprof's `cum`,
//! Pyroscope's table). The **sandwich** of a function is two call trees as wide as its
//! total: its callers (every distinct path from a root to it, merged, drawn inverted) and
//! its callees (what it calls, merged over all its occurrences). Both count only the
//! outermost occurrence of the function on each stack, so recursion is counted once there
//! too. Everything here is O(nodes), with explicit stacks: call trees thousands deep are
//! normal.

use super::Profile;
use super::names::{NameId, Names};
use super::tree::{CallTree, CallTreeBuilder, ChildOrder, NodeId, TotalOverflow};

/// One row of the function table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionStats {
    /// The function.
    pub name: NameId,
    /// Self ticks over all its nodes (both sides of a diff).
    pub self_ticks: u64,
    /// Total ticks, recursion counted once (both sides of a diff).
    pub total: u64,
    /// Call-tree nodes with this name.
    pub nodes: u32,
    /// Left ("before") self ticks of a diff; 0 otherwise.
    pub left_self: u64,
    /// Left total of a diff, recursion counted once; 0 otherwise.
    pub left_total: u64,
}

/// One row per function that appears in `tree` below its root, in order of first
/// appearance (a pre-order walk).
pub fn function_table(tree: &CallTree) -> Vec<FunctionStats> {
    let mut slot: Vec<u32> = Vec::new();
    let mut rows: Vec<FunctionStats> = Vec::new();
    // How many nodes of each name are on the current path (index: slot).
    let mut active: Vec<u32> = Vec::new();
    // (node, leaving): a node is pushed twice, to enter and to leave.
    let mut stack: Vec<(NodeId, bool)> = Vec::new();
    push_children(tree, tree.root(), &mut stack);
    while let Some((n, leaving)) = stack.pop() {
        let name = tree.name(n);
        let i = name as usize;
        if i >= slot.len() {
            slot.resize(i + 1, u32::MAX);
        }
        if slot[i] == u32::MAX {
            slot[i] = rows.len() as u32;
            rows.push(FunctionStats {
                name,
                ..FunctionStats::default()
            });
            active.push(0);
        }
        let s = slot[i] as usize;
        if leaving {
            active[s] -= 1;
            continue;
        }
        let row = &mut rows[s];
        row.self_ticks += tree.self_ticks(n);
        row.left_self += tree.left_self(n);
        row.nodes += 1;
        if active[s] == 0 {
            row.total += tree.total(n);
            row.left_total += tree.left_total(n);
        }
        active[s] += 1;
        stack.push((n, true));
        push_children(tree, n, &mut stack);
    }
    rows
}

fn push_children(tree: &CallTree, n: NodeId, stack: &mut Vec<(NodeId, bool)>) {
    stack.extend(tree.children(n).iter().rev().map(|&c| (c, false)));
}

/// How the table is sorted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// Self ticks.
    SelfTicks,
    /// Total ticks.
    Total,
    /// Call-tree nodes.
    Nodes,
    /// The name, byte-wise.
    Name,
    /// A diff's change of total share, by its absolute size (Pyroscope's diff table).
    Change,
    /// A diff's left ("before") total.
    Before,
    /// A diff's right ("after") total.
    After,
}

/// Sorts `rows` by `key` (largest first when `descending`); ties go by name, then by
/// name id, so the order is the same on every run.
pub fn sort_functions(
    rows: &mut [FunctionStats],
    names: &Names,
    key: SortKey,
    descending: bool,
    diff_ticks: Option<(u64, u64)>,
) {
    let change = |r: &FunctionStats| -> f64 {
        let (lt, rt) = diff_ticks.unwrap_or((0, 0));
        let share = |v: u64, t: u64| if t == 0 { 0.0 } else { v as f64 / t as f64 };
        (share(r.total - r.left_total, rt) - share(r.left_total, lt)).abs()
    };
    rows.sort_by(|a, b| {
        let by_key = match key {
            SortKey::SelfTicks => a.self_ticks.cmp(&b.self_ticks),
            SortKey::Total => a.total.cmp(&b.total),
            SortKey::Nodes => a.nodes.cmp(&b.nodes),
            SortKey::Name => names.get(a.name).cmp(names.get(b.name)),
            SortKey::Change => change(a).total_cmp(&change(b)),
            SortKey::Before => a.left_total.cmp(&b.left_total),
            SortKey::After => (a.total - a.left_total).cmp(&(b.total - b.left_total)),
        };
        let by_key = if descending { by_key.reverse() } else { by_key };
        by_key
            .then_with(|| names.get(a.name).cmp(names.get(b.name)))
            .then(a.name.cmp(&b.name))
    });
}

/// Which half of a sandwich.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SandwichHalf {
    /// The callers: paths from the roots to the function, merged, with the function as
    /// the root and its callers as children (drawn inverted, ending in the function).
    Callers,
    /// The callees: the function as the root, what it calls merged below.
    Callees,
}

/// One half of the sandwich of `name` in `profile`, as a profile of its own whose root
/// is the function (its total: the function's, recursion once). `None` when the function
/// does not occur.
pub fn sandwich(
    profile: &Profile,
    name: NameId,
    half: SandwichHalf,
) -> Result<Option<Profile>, TotalOverflow> {
    let tree = &profile.tree;
    let outer = outermost(tree, name);
    if outer.is_empty() {
        return Ok(None);
    }
    let mut names = profile.names.clone();
    let diff = tree.diff().is_some();
    let mut b = CallTreeBuilder::new(&mut names, diff);
    b.rename_root(name);
    let top = 0;
    let add = |b: &mut CallTreeBuilder, to: NodeId, left: u64, both: u64| {
        if diff {
            b.add_self_diff(to, left, both - left)
        } else {
            b.add_self(to, both)
        }
    };
    match half {
        SandwichHalf::Callers => {
            for &n in &outer {
                // Up from the function's parent to the root's child, one node each.
                let mut at = top;
                let mut p = tree.parent(n);
                while p != tree.root() {
                    at = b.child(at, tree.name(p));
                    p = tree.parent(p);
                }
                add(&mut b, at, tree.left_total(n), tree.total(n))?;
            }
        }
        SandwichHalf::Callees => {
            let mut stack: Vec<(NodeId, NodeId)> = Vec::new();
            for &n in &outer {
                add(&mut b, top, tree.left_self(n), tree.self_ticks(n))?;
                stack.extend(tree.children(n).iter().map(|&c| (c, top)));
                while let Some((c, parent)) = stack.pop() {
                    let to = b.child(parent, tree.name(c));
                    add(&mut b, to, tree.left_self(c), tree.self_ticks(c))?;
                    stack.extend(tree.children(c).iter().map(|&g| (g, to)));
                }
            }
        }
    }
    let tree = b.finish(&names, ChildOrder::ByName)?;
    Ok(Some(profile.derived(names, tree)))
}

/// The nodes named `name` without an ancestor of that name, in pre-order.
pub fn outermost(tree: &CallTree, name: NameId) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut stack: Vec<NodeId> = tree.children(tree.root()).iter().rev().copied().collect();
    while let Some(n) = stack.pop() {
        if tree.name(n) == name {
            out.push(n);
        } else {
            stack.extend(tree.children(n).iter().rev());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Lcg;

    /// A random profile whose stacks revisit a few names (recursion, direct and not).
    pub(crate) fn random_profile(seed: u64, stacks: usize, diff: bool) -> (Profile, String) {
        let mut rng = Lcg::new(seed);
        let mut text = String::new();
        for _ in 0..stacks {
            let depth = 1 + rng.next_usize() % 9;
            let frames: Vec<String> = (0..depth)
                .map(|_| format!("f{}", rng.next_u64() % 6))
                .collect();
            let v = 1 + rng.next_u64() % 50;
            if diff {
                let l = rng.next_u64() % 50;
                text.push_str(&format!("{} {l} {v}\n", frames.join(";")));
            } else {
                text.push_str(&format!("{} {v}\n", frames.join(";")));
            }
        }
        let p = crate::import::folded::parse("r.txt", text.as_bytes()).unwrap();
        (p, text)
    }

    /// (self, total, left self, left total) of `f` from the folded lines alone.
    fn brute(text: &str, f: &str, diff: bool) -> (u64, u64, u64, u64) {
        let (mut s, mut t, mut ls, mut lt) = (0, 0, 0, 0);
        for line in text.lines() {
            let mut parts = line.rsplitn(if diff { 3 } else { 2 }, ' ');
            let right: u64 = parts.next().unwrap().parse().unwrap();
            let left: u64 = if diff {
                parts.next().unwrap().parse().unwrap()
            } else {
                0
            };
            let stack: Vec<&str> = parts.next().unwrap().split(';').collect();
            let both = left + right;
            if stack.last() == Some(&f) {
                s += both;
                ls += left;
            }
            if stack.contains(&f) {
                t += both;
                lt += left;
            }
        }
        (s, t, ls, lt)
    }

    #[test]
    fn table_matches_a_walk_of_every_stack() {
        for (seed, diff) in [(1, false), (2, false), (3, true), (4, true)] {
            let (p, text) = random_profile(seed, 400, diff);
            let rows = function_table(&p.tree);
            assert_eq!(rows.len(), 6, "seed {seed}");
            for r in &rows {
                let f = p.names.get(r.name);
                let (s, t, ls, lt) = brute(&text, f, diff);
                assert_eq!((r.self_ticks, r.total), (s, t), "seed {seed} {f}");
                assert_eq!((r.left_self, r.left_total), (ls, lt), "seed {seed} {f}");
                let nodes = (1..p.tree.len() as NodeId)
                    .filter(|&n| p.tree.name(n) == r.name)
                    .count();
                assert_eq!(r.nodes as usize, nodes);
            }
            // Self times add up to the whole; no total exceeds it.
            let sum: u64 = rows.iter().map(|r| r.self_ticks).sum();
            assert_eq!(sum, p.tree.grand_total());
            assert!(rows.iter().all(|r| r.total <= p.tree.grand_total()));
        }
    }

    #[test]
    fn recursion_counts_once() {
        let p = crate::import::folded::parse("r.txt", b"a;b;a;b 5\na;c 2\n").unwrap();
        let rows = function_table(&p.tree);
        let get = |n: &str| rows.iter().find(|r| p.names.get(r.name) == n).unwrap();
        assert_eq!(
            (get("a").total, get("a").self_ticks, get("a").nodes),
            (7, 0, 2)
        );
        assert_eq!(
            (get("b").total, get("b").self_ticks, get("b").nodes),
            (5, 5, 2)
        );
        assert_eq!(get("c").total, 2);
    }

    #[test]
    fn sorting_is_stable_on_ties() {
        let p = crate::import::folded::parse("r.txt", b"x 3\nb 3\na 3\nc 9\n").unwrap();
        let mut rows = function_table(&p.tree);
        sort_functions(&mut rows, &p.names, SortKey::Total, true, None);
        let order: Vec<&str> = rows.iter().map(|r| p.names.get(r.name)).collect();
        assert_eq!(order, ["c", "a", "b", "x"]);
        sort_functions(&mut rows, &p.names, SortKey::Total, false, None);
        let order: Vec<&str> = rows.iter().map(|r| p.names.get(r.name)).collect();
        assert_eq!(order, ["a", "b", "x", "c"]);
    }

    /// Folded lines of a sandwich half by brute force: for each stack through `f`, cut at
    /// its first `f`: callers are the part before (reversed), callees the part from it.
    fn brute_sandwich(text: &str, f: &str, half: SandwichHalf) -> Vec<String> {
        let mut acc: std::collections::BTreeMap<String, u64> = Default::default();
        for line in text.lines() {
            let (stack, v) = line.rsplit_once(' ').unwrap();
            let v: u64 = v.parse().unwrap();
            let frames: Vec<&str> = stack.split(';').collect();
            let Some(i) = frames.iter().position(|&x| x == f) else {
                continue;
            };
            let path: Vec<&str> = match half {
                SandwichHalf::Callers => frames[..=i].iter().rev().copied().collect(),
                SandwichHalf::Callees => frames[i..].to_vec(),
            };
            *acc.entry(path.join(";")).or_default() += v;
        }
        let mut out: Vec<String> = acc.into_iter().map(|(k, v)| format!("{k} {v}")).collect();
        out.sort();
        out
    }

    #[test]
    fn sandwich_halves_match_brute_force() {
        for seed in 1..6 {
            let (p, text) = random_profile(seed, 300, false);
            let rows = function_table(&p.tree);
            for r in &rows {
                let f = p.names.get(r.name);
                for half in [SandwichHalf::Callers, SandwichHalf::Callees] {
                    let s = sandwich(&p, r.name, half).unwrap().unwrap();
                    assert_eq!(s.tree.grand_total(), r.total, "seed {seed} {f} {half:?}");
                    assert_eq!(s.names.get(s.tree.name(0)), f, "the function is the root");
                    // Below the root: every line but the function alone, without it.
                    let (mut own, mut below) = (0, Vec::new());
                    for l in brute_sandwich(&text, f, half) {
                        match l.strip_prefix(&format!("{f};")) {
                            Some(rest) => below.push(rest.to_string()),
                            None => own += l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap(),
                        }
                    }
                    below.sort();
                    assert_eq!(s.folded_lines(), below, "seed {seed} {f} {half:?}");
                    assert_eq!(s.tree.self_ticks(0), own, "seed {seed} {f} {half:?}");
                }
            }
        }
        let (p, _) = random_profile(1, 10, false);
        let mut names = p.names.clone();
        let missing = names.intern("nowhere");
        assert!(
            sandwich(&p, missing, SandwichHalf::Callers)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn sandwich_keeps_both_sides_of_a_diff() {
        let p = crate::import::folded::parse("d.txt", b"a;f;g 2 3\nb;f 1 0\nf;f;h 0 4\n").unwrap();
        let f = p.names.find("f").unwrap();
        let callees = sandwich(&p, f, SandwichHalf::Callees).unwrap().unwrap();
        // f's total: 2+3 + 1 + 4 (the inner f of f;f;h once).
        assert_eq!(callees.tree.grand_total(), 10);
        assert_eq!(callees.tree.left_total(0), 3);
        let callers = sandwich(&p, f, SandwichHalf::Callers).unwrap().unwrap();
        assert_eq!(callers.tree.grand_total(), 10);
        assert_eq!(callers.tree.left_total(0), 3);
    }
}
