//! Call-tree transforms (Firefox Profiler's): merge a function, focus on a function or a
//! subtree, collapse recursion or a package, drop a function. Each makes a new profile
//! in one pass over the nodes in id order (a parent's id is smaller than its children's,
//! so a node's parent is placed before it): O(nodes), no recursion. They stack: apply them
//! in order with [`apply_all`].

use super::Profile;
use super::names::NameId;
use super::tree::{CallTree, CallTreeBuilder, ChildOrder, NodeId, TotalOverflow};

/// One transform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transform {
    /// Remove the function's frames; their self time goes to the caller.
    Merge(String),
    /// Only the stacks through the function, re-rooted at its outermost frame, merged.
    Focus(String),
    /// Only the subtree at this call path (names from the root's child down), re-rooted.
    FocusSubtree(Vec<String>),
    /// Inner frames of the function (with anything between them and the outermost one)
    /// fold into the outermost: `f;g;f;h` becomes `f;h` (and `f;g` keeps g's own time).
    CollapseRecursion(String),
    /// Runs of consecutive frames of one package become one frame named by the package.
    CollapsePackage(String),
    /// Remove every stack through the function.
    Drop(String),
}

/// The kinds as the CLI spells them, in the order the context menu lists them.
pub const KINDS: [&str; 6] = [
    "merge",
    "focus",
    "focus-subtree",
    "collapse-recursion",
    "collapse-package",
    "drop",
];

impl Transform {
    /// `KIND:NAME` as the CLI takes it (`focus-subtree:a;b;c` names a call path).
    pub fn parse(spec: &str) -> Result<Transform, String> {
        let (kind, name) = spec.split_once(':').ok_or_else(|| {
            format!(
                "expected KIND:NAME, one of {} followed by ':' and a function name, found {spec:?}",
                KINDS.join(", ")
            )
        })?;
        if name.is_empty() {
            return Err(format!("{spec:?}: the name after '{kind}:' is empty"));
        }
        let n = name.to_string();
        Ok(match kind {
            "merge" => Transform::Merge(n),
            "focus" => Transform::Focus(n),
            "focus-subtree" => Transform::FocusSubtree(name.split(';').map(String::from).collect()),
            "collapse-recursion" => Transform::CollapseRecursion(n),
            "collapse-package" => Transform::CollapsePackage(n),
            "drop" => Transform::Drop(n),
            _ => {
                return Err(format!(
                    "unknown transform {kind:?} (expected one of {})",
                    KINDS.join(", ")
                ));
            }
        })
    }

    /// `KIND:NAME`, the inverse of [`Transform::parse`].
    pub fn spec(&self) -> String {
        let (kind, name) = self.parts();
        format!("{kind}:{name}")
    }

    /// A short label for a breadcrumb: `merge foo`, `focus a › b`.
    pub fn label(&self) -> String {
        let (kind, name) = self.parts();
        format!("{} {}", kind.replace('-', " "), name.replace(';', " › "))
    }

    /// [`Transform::label`] with a name longer than `max` characters cut to its end
    /// (`drop …spawn_unchecked_::{{closure}}`): the end of a long name tells most.
    pub fn short_label(&self, max: usize) -> String {
        let (kind, name) = self.parts();
        let name = name.replace(';', " › ");
        let chars = name.chars().count();
        if chars <= max {
            return self.label();
        }
        let tail: String = name.chars().skip(chars + 1 - max).collect();
        format!("{} …{tail}", kind.replace('-', " "))
    }

    fn parts(&self) -> (&'static str, String) {
        match self {
            Transform::Merge(n) => ("merge", n.clone()),
            Transform::Focus(n) => ("focus", n.clone()),
            Transform::FocusSubtree(p) => ("focus-subtree", p.join(";")),
            Transform::CollapseRecursion(n) => ("collapse-recursion", n.clone()),
            Transform::CollapsePackage(n) => ("collapse-package", n.clone()),
            Transform::Drop(n) => ("drop", n.clone()),
        }
    }
}

/// A transform without its argument: what a menu item or a key asks for, made into a
/// [`Transform`] for the bar or row it is used on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransformKind {
    /// [`Transform::Merge`].
    Merge,
    /// [`Transform::Focus`].
    Focus,
    /// [`Transform::FocusSubtree`].
    FocusSubtree,
    /// [`Transform::CollapseRecursion`].
    CollapseRecursion,
    /// [`Transform::CollapsePackage`].
    CollapsePackage,
    /// [`Transform::Drop`].
    Drop,
}

impl TransformKind {
    /// Every kind, in the order of [`KINDS`] (and of the context menus).
    pub const ALL: [TransformKind; 6] = [
        TransformKind::Merge,
        TransformKind::Focus,
        TransformKind::FocusSubtree,
        TransformKind::CollapseRecursion,
        TransformKind::CollapsePackage,
        TransformKind::Drop,
    ];

    /// The context menu's text, with the key that does the same.
    pub fn menu_label(self) -> &'static str {
        match self {
            TransformKind::Merge => "Merge function  (m)",
            TransformKind::Focus => "Focus on function  (o)",
            TransformKind::FocusSubtree => "Focus on subtree  (b)",
            TransformKind::CollapseRecursion => "Collapse recursion  (r)",
            TransformKind::CollapsePackage => "Collapse package  (k)",
            TransformKind::Drop => "Drop function  (Del)",
        }
    }

    /// The transform of this kind for the function at the end of `path`, its call path
    /// from the root's child down. `package` is the rule the colors use. `None` for an
    /// empty path.
    pub fn make(self, path: &[String], package: &dyn Fn(&str) -> &str) -> Option<Transform> {
        let f = path.last()?.clone();
        Some(match self {
            TransformKind::Merge => Transform::Merge(f),
            TransformKind::Focus => Transform::Focus(f),
            TransformKind::FocusSubtree => Transform::FocusSubtree(path.to_vec()),
            TransformKind::CollapseRecursion => Transform::CollapseRecursion(f),
            TransformKind::CollapsePackage => Transform::CollapsePackage(package(&f).to_string()),
            TransformKind::Drop => Transform::Drop(f),
        })
    }
}

/// Every `KIND:NAME` of `specs`, in order; the first bad one is the error.
pub fn parse_all(specs: &[String]) -> Result<Vec<Transform>, String> {
    specs.iter().map(|s| Transform::parse(s)).collect()
}

/// Why a transform could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransformError {
    /// The name (or package) occurs nowhere in the profile.
    #[error("{0}: no function of that name in this profile")]
    NoSuchFunction(String),
    /// The call path does not exist.
    #[error("focus-subtree {0}: no such call path from the root")]
    NoSuchPath(String),
    /// Sums overflowed.
    #[error(transparent)]
    Overflow(#[from] TotalOverflow),
}

/// The node is left out.
const DROPPED: NodeId = NodeId::MAX;
/// The node is above the focus: its own time is left out, its subtree may be kept.
const ABOVE: NodeId = NodeId::MAX - 1;

/// `t` applied to `profile`. `package` is the package rule the colors use (for
/// [`Transform::CollapsePackage`]).
pub fn apply(
    profile: &Profile,
    t: &Transform,
    package: &dyn Fn(&str) -> &str,
) -> Result<Profile, TransformError> {
    let tree = &profile.tree;
    let mut names = profile.names.clone();
    let find = |n: &String| {
        profile
            .names
            .find(n)
            .ok_or_else(|| TransformError::NoSuchFunction(n.clone()))
    };
    let diff = tree.diff().is_some();
    let mut b = CallTreeBuilder::new(&mut names, diff);
    b.rename_root(tree.name(tree.root()));
    let mut map: Vec<NodeId> = vec![0; tree.len()];
    match t {
        Transform::Merge(f) => {
            let f = find(f)?;
            place(tree, &mut map, |n, mp| {
                if tree.name(n) == f {
                    mp
                } else {
                    b.child(mp, tree.name(n))
                }
            });
        }
        Transform::Drop(f) => {
            let f = find(f)?;
            // Stacks through f go, and with them the callers left with no time below
            // them: a node lives when it is not under f and has self time or a living
            // child (children have larger ids, so one pass from the end decides).
            let n_nodes = tree.len();
            let mut under = vec![false; n_nodes];
            for n in 1..n_nodes as NodeId {
                under[n as usize] = tree.name(n) == f || under[tree.parent(n) as usize];
            }
            let mut live = vec![false; n_nodes];
            for n in (1..n_nodes as NodeId).rev() {
                let i = n as usize;
                if !under[i] && (live[i] || tree.self_ticks(n) > 0) {
                    live[i] = true;
                    live[tree.parent(n) as usize] = true;
                }
            }
            place(tree, &mut map, |n, mp| {
                if live[n as usize] {
                    b.child(mp, tree.name(n))
                } else {
                    DROPPED
                }
            });
        }
        Transform::Focus(f) => {
            let f = find(f)?;
            map[0] = ABOVE;
            place(tree, &mut map, |n, mp| match mp {
                ABOVE if tree.name(n) == f => b.child(0, f),
                ABOVE => ABOVE,
                _ => b.child(mp, tree.name(n)),
            });
        }
        Transform::FocusSubtree(path) => {
            let ids: Vec<NameId> = path
                .iter()
                .map(|n| {
                    profile
                        .names
                        .find(n)
                        .ok_or_else(|| TransformError::NoSuchPath(path.join(";")))
                })
                .collect::<Result<_, _>>()?;
            map[0] = ABOVE;
            let k = ids.len() as u32;
            let mut found = false;
            // Depths of the nodes still above the subtree: the path's first frames, at
            // most one node a depth (siblings have distinct names). The tree keeps no
            // depth column, and counting up the parents of each node would cost the
            // path's length a node.
            let mut above: std::collections::HashMap<NodeId, u32> = [(0, 0)].into();
            place(tree, &mut map, |n, mp| {
                if mp != ABOVE {
                    return b.child(mp, tree.name(n));
                }
                let d = above[&tree.parent(n)] + 1;
                if d > k || tree.name(n) != ids[d as usize - 1] {
                    DROPPED
                } else if d == k {
                    found = true;
                    b.child(0, tree.name(n))
                } else {
                    above.insert(n, d);
                    ABOVE
                }
            });
            if !found {
                return Err(TransformError::NoSuchPath(path.join(";")));
            }
        }
        Transform::CollapseRecursion(f) => {
            let f = find(f)?;
            // The placed node of the outermost f at or above each node.
            let mut outer: Vec<NodeId> = vec![DROPPED; tree.len()];
            for n in 1..tree.len() as NodeId {
                let (i, p) = (n as usize, tree.parent(n) as usize);
                let is_f = tree.name(n) == f;
                map[i] = if is_f && outer[p] != DROPPED {
                    outer[p]
                } else {
                    b.child(map[p], tree.name(n))
                };
                outer[i] = match outer[p] {
                    DROPPED if is_f => map[i],
                    o => o,
                };
            }
        }
        Transform::CollapsePackage(pkg) => {
            let in_pkg: Vec<bool> = (0..profile.names.len() as NameId)
                .map(|id| package(profile.names.get(id)) == pkg.as_str())
                .collect();
            if !in_pkg.iter().any(|&x| x) {
                return Err(TransformError::NoSuchFunction(pkg.clone()));
            }
            let frame = names.intern(pkg);
            place(tree, &mut map, |n, mp| {
                let p = tree.parent(n);
                match in_pkg[tree.name(n) as usize] {
                    true if p != 0 && in_pkg[tree.name(p) as usize] => mp,
                    true => b.child(mp, frame),
                    false => b.child(mp, tree.name(n)),
                }
            });
        }
    }
    add_self(tree, &map, &mut b)?;
    let tree = b.finish(&names, ChildOrder::ByName)?;
    without_empty(profile.derived(names, tree))
}

/// `p` without nodes that hold no time (a caller whose only callee was folded into an
/// outer frame); `p` itself when it has none.
fn without_empty(p: Profile) -> Result<Profile, TransformError> {
    let tree = &p.tree;
    if (1..tree.len() as NodeId).all(|n| tree.total(n) > 0) {
        return Ok(p);
    }
    let diff = tree.diff().is_some();
    let mut names = p.names.clone();
    let mut b = CallTreeBuilder::new(&mut names, diff);
    b.rename_root(tree.name(tree.root()));
    let mut map: Vec<NodeId> = vec![0; tree.len()];
    // Totals include the subtree, so below an empty node everything is empty.
    place(tree, &mut map, |n, mp| {
        if tree.total(n) > 0 {
            b.child(mp, tree.name(n))
        } else {
            DROPPED
        }
    });
    add_self(tree, &map, &mut b)?;
    let out = b.finish(&names, ChildOrder::ByName)?;
    Ok(p.derived(names, out))
}

/// Adds each node's self time to the node it went to (`map`), both sides of a diff.
fn add_self(tree: &CallTree, map: &[NodeId], b: &mut CallTreeBuilder) -> Result<(), TotalOverflow> {
    let diff = tree.diff().is_some();
    for n in 0..tree.len() as NodeId {
        let to = map[n as usize];
        if to == DROPPED || to == ABOVE {
            continue;
        }
        if diff {
            let l = tree.left_self(n);
            b.add_self_diff(to, l, tree.self_ticks(n) - l)?;
        } else {
            b.add_self(to, tree.self_ticks(n))?;
        }
    }
    Ok(())
}

/// Places every node below the root in id order: `to(n, where n's parent went)` says
/// where `n` goes; below a dropped node everything is dropped.
fn place(tree: &CallTree, map: &mut [NodeId], mut to: impl FnMut(NodeId, NodeId) -> NodeId) {
    for n in 1..tree.len() as NodeId {
        let mp = map[tree.parent(n) as usize];
        map[n as usize] = if mp == DROPPED { DROPPED } else { to(n, mp) };
    }
}

/// `transforms` applied in order; the profile itself when there are none.
pub fn apply_all(
    profile: &Profile,
    transforms: &[Transform],
    package: &dyn Fn(&str) -> &str,
) -> Result<Profile, TransformError> {
    let mut out = profile.clone();
    for t in transforms {
        out = apply(&out, t, package)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Lcg;
    use std::collections::BTreeMap;

    const FRAMES: [&str; 6] = ["a.x", "a.y", "b.z", "c", "f", "g"];

    fn pkg(s: &str) -> &str {
        s.split('.').next().unwrap_or(s)
    }

    /// Random stacks over a few names, so every transform finds recursion and runs.
    fn random_stacks(seed: u64, n: usize) -> Vec<(Vec<&'static str>, u64)> {
        let mut rng = Lcg::new(seed);
        (0..n)
            .map(|_| {
                let depth = 1 + rng.next_usize() % 10;
                let frames = (0..depth)
                    .map(|_| FRAMES[rng.next_usize() % FRAMES.len()])
                    .collect();
                (frames, 1 + rng.next_u64() % 40)
            })
            .collect()
    }

    fn profile_of(stacks: &[(Vec<&str>, u64)]) -> Profile {
        let text: String = stacks
            .iter()
            .map(|(s, v)| format!("{} {v}\n", s.join(";")))
            .collect();
        crate::import::folded::parse("t.txt", text.as_bytes()).unwrap()
    }

    /// Folded lines of the stacks after `t`, computed on the stacks themselves.
    fn reference(stacks: &[(Vec<&str>, u64)], t: &Transform) -> Vec<String> {
        let mut acc: BTreeMap<String, u64> = BTreeMap::new();
        for (frames, v) in stacks {
            let out: Option<Vec<&str>> = match t {
                Transform::Merge(f) => Some(frames.iter().copied().filter(|x| x != f).collect()),
                Transform::Drop(f) => (!frames.contains(&f.as_str())).then(|| frames.clone()),
                Transform::Focus(f) => frames
                    .iter()
                    .position(|x| x == f)
                    .map(|i| frames[i..].to_vec()),
                Transform::FocusSubtree(path) => (frames.len() >= path.len()
                    && frames.iter().zip(path).all(|(a, b)| a == b))
                .then(|| frames[path.len() - 1..].to_vec()),
                Transform::CollapseRecursion(f) => Some(match frames.iter().position(|x| x == f) {
                    Some(i) => {
                        let j = frames.iter().rposition(|x| x == f).unwrap();
                        let mut v = frames[..=i].to_vec();
                        v.extend(&frames[j + 1..]);
                        v
                    }
                    None => frames.clone(),
                }),
                Transform::CollapsePackage(p) => {
                    let mut v: Vec<&str> = Vec::new();
                    let mut prev_in = false;
                    for &x in frames {
                        let inside = pkg(x) == p;
                        if !(inside && prev_in) {
                            v.push(if inside { p.as_str() } else { x });
                        }
                        prev_in = inside;
                    }
                    Some(v)
                }
            };
            if let Some(out) = out.filter(|o| !o.is_empty()) {
                *acc.entry(out.join(";")).or_default() += v;
            }
        }
        acc.into_iter().map(|(k, v)| format!("{k} {v}")).collect()
    }

    fn all_transforms() -> Vec<Transform> {
        vec![
            Transform::Merge("f".into()),
            Transform::Merge("a.x".into()),
            Transform::Drop("g".into()),
            Transform::Focus("f".into()),
            Transform::Focus("c".into()),
            Transform::FocusSubtree(vec!["c".into()]),
            Transform::FocusSubtree(vec!["f".into(), "g".into()]),
            Transform::CollapseRecursion("f".into()),
            Transform::CollapseRecursion("a.y".into()),
            Transform::CollapsePackage("a".into()),
            Transform::CollapsePackage("c".into()),
        ]
    }

    #[test]
    fn each_transform_matches_the_reference_on_random_trees() {
        for seed in 1..8 {
            let stacks = random_stacks(seed, 300);
            let p = profile_of(&stacks);
            for t in all_transforms() {
                let out = apply(&p, &t, &pkg).unwrap();
                assert_eq!(
                    out.folded_lines(),
                    reference(&stacks, &t),
                    "seed {seed} {t:?}"
                );
                // No empty nodes: a caller whose every stack was dropped goes too.
                let t_out = &out.tree;
                for n in 1..t_out.len() as NodeId {
                    assert!(t_out.total(n) > 0, "seed {seed} {t:?}: node {n} is empty");
                }
                // Totals kept where nothing is removed.
                if matches!(
                    t,
                    Transform::Merge(_)
                        | Transform::CollapseRecursion(_)
                        | Transform::CollapsePackage(_)
                ) {
                    assert_eq!(out.tree.grand_total(), p.tree.grand_total(), "{t:?}");
                }
            }
        }
    }

    #[test]
    fn transforms_stack_in_order() {
        let stacks = random_stacks(3, 300);
        let p = profile_of(&stacks);
        let ts = [
            Transform::Focus("f".into()),
            Transform::Merge("g".into()),
            Transform::CollapsePackage("a".into()),
        ];
        let all = apply_all(&p, &ts, &pkg).unwrap();
        let mut step = p.clone();
        let mut lines: Vec<(Vec<String>, u64)> = stacks
            .iter()
            .map(|(s, v)| (s.iter().map(|x| x.to_string()).collect(), *v))
            .collect();
        for t in &ts {
            step = apply(&step, t, &pkg).unwrap();
            let borrowed: Vec<(Vec<&str>, u64)> = lines
                .iter()
                .map(|(s, v)| (s.iter().map(String::as_str).collect(), *v))
                .collect();
            lines = reference(&borrowed, t)
                .into_iter()
                .map(|l| {
                    let (s, v) = l.rsplit_once(' ').unwrap();
                    (s.split(';').map(String::from).collect(), v.parse().unwrap())
                })
                .collect();
        }
        assert_eq!(all.folded_lines(), step.folded_lines());
        let want: Vec<String> = lines
            .iter()
            .map(|(s, v)| format!("{} {v}", s.join(";")))
            .collect();
        assert_eq!(all.folded_lines(), want);
        assert_eq!(
            apply_all(&p, &[], &pkg).unwrap().folded_lines(),
            p.folded_lines()
        );
    }

    #[test]
    fn diff_sides_are_kept() {
        let p = crate::import::folded::parse("d.txt", b"a;f;b 2 3\nf;c 1 4\nd 5 0\n").unwrap();
        let out = apply(&p, &Transform::Merge("f".into()), &pkg).unwrap();
        assert!(out.is_diff());
        assert_eq!(out.tree.grand_total(), p.tree.grand_total());
        assert_eq!(out.tree.left_total(0), p.tree.left_total(0));
        let focus = apply(&p, &Transform::Focus("f".into()), &pkg).unwrap();
        assert_eq!(
            (focus.tree.left_total(0), focus.tree.grand_total()),
            (3, 10)
        );
    }

    #[test]
    fn specs_parse_and_errors_name_the_problem() {
        for t in all_transforms() {
            assert_eq!(Transform::parse(&t.spec()).unwrap(), t);
        }
        assert_eq!(
            Transform::FocusSubtree(vec!["a".into(), "b".into()]).label(),
            "focus subtree a › b"
        );
        let long = Transform::CollapseRecursion("std::thread::Builder::spawn_unchecked_".into());
        assert_eq!(long.short_label(99), long.label());
        assert_eq!(long.short_label(12), "collapse recursion …_unchecked_");
        assert_eq!(
            long.short_label(12).chars().count(),
            "collapse recursion …".len() - 2 + 11
        );
        assert!(Transform::parse("merge").unwrap_err().contains("KIND:NAME"));
        assert!(
            Transform::parse("squash:f")
                .unwrap_err()
                .contains("unknown transform")
        );
        assert!(Transform::parse("drop:").unwrap_err().contains("empty"));
        let p = profile_of(&random_stacks(1, 20));
        let e = apply(&p, &Transform::Merge("nope".into()), &pkg).unwrap_err();
        assert_eq!(
            e.to_string(),
            "nope: no function of that name in this profile"
        );
        let e = apply(&p, &Transform::FocusSubtree(vec!["zz".into()]), &pkg).unwrap_err();
        assert!(e.to_string().contains("no such call path"), "{e}");
        let e = apply(&p, &Transform::CollapsePackage("q".into()), &pkg).unwrap_err();
        assert!(e.to_string().starts_with("q:"), "{e}");
    }

    #[test]
    fn deep_trees_need_no_recursion() {
        // One stack 50 000 frames deep, alternating f and g: collapse and focus in one pass.
        let frames: Vec<&str> = (0..50_000)
            .map(|i| if i % 2 == 0 { "f" } else { "g" })
            .collect();
        let p = profile_of(&[(frames.clone(), 7)]);
        let out = apply(&p, &Transform::CollapseRecursion("f".into()), &pkg).unwrap();
        assert_eq!(out.folded_lines(), ["f;g 7"]);
        let out = apply(&p, &Transform::Merge("g".into()), &pkg).unwrap();
        assert_eq!(out.tree.len(), 50_001 - 25_000);
        // The subtree 40 000 frames down: its node and the 10 000 below it.
        let path: Vec<String> = frames[..40_000].iter().map(|f| f.to_string()).collect();
        let out = apply(&p, &Transform::FocusSubtree(path), &pkg).unwrap();
        assert_eq!((out.tree.len(), out.tree.max_depth()), (10_002, 10_001));
        assert_eq!(out.tree.grand_total(), 7);
    }
}
