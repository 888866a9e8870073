//! Comparing profiles: any two, whatever their formats, as one differential call tree;
//! and many runs against many, with a test per call path.
//!
//! Stacks are matched by their path of frame names, as inferno-diff-folded matches folded
//! lines: each side's tree is walked from the root and every node added under the same
//! path of (normalized) names in one differential builder, the first side as "before"
//! (left), the second as "after". Names are normalized as [`CompareOptions`] asks:
//! addresses (`0x7f3a…`) made `0x...` (`--strip-hex`, inferno's rule), and by default the
//! suffixes that differ between two recordings of the same program removed (inferno's
//! `_[k]`/`_[j]`/`_[i]`/`_[w]` annotations, a `-PID` or `-PID/TID` after the command).
//! `--normalize` scales "before" to "after"'s total, each stack's count rounded down, as
//! inferno does.
//!
//! Many runs ([`compare_runs`]): both sides are pooled into one tree, and per call path
//! each run's share of its own total is a sample; Welch's t-test compares the two sides'
//! shares and the Benjamini–Hochberg procedure holds the false-discovery rate across
//! paths. A path whose change is not significant is drawn grey.

use super::stats::{benjamini_hochberg, welch};
use super::tree::{CallTreeBuilder, ChildOrder, TotalOverflow};
use super::{NameId, Names, NodeId, Profile, ProfileMeta, Warnings};
use std::borrow::Cow;
/// Hash maps keyed by ids: a fast fixed hasher (the keys are not attacker-chosen).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
use std::sync::Arc;

/// How names are matched, and whether "before" is scaled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompareOptions {
    /// Scale "before" to "after"'s total (inferno-diff-folded `--normalize`).
    pub normalize: bool,
    /// `0x` and hex digits become `0x...` (inferno-diff-folded `--strip-hex`).
    pub strip_hex: bool,
    /// Keep annotation and pid/tid suffixes (by default they are ignored).
    pub keep_suffixes: bool,
}

/// What a differential profile made by comparing says about where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The "before" inputs (one, or the base runs).
    pub before: Vec<String>,
    /// The "after" inputs.
    pub after: Vec<String>,
    /// How they were matched.
    pub options: CompareOptions,
    /// Many runs against many: the test of each call path.
    pub runs: Option<RunStats>,
}

/// The per-path tests of a many-run comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct RunStats {
    /// The false-discovery rate held.
    pub alpha: f64,
    /// Runs per side.
    pub runs: (usize, usize),
    /// Per node of the tree (by id): its test, when it has one (not the root).
    pub nodes: Vec<Option<PathTest>>,
}

/// The test of one call path across runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PathTest {
    /// Mean share of the path in the "before" runs.
    pub share_before: f64,
    /// Mean share in the "after" runs.
    pub share_after: f64,
    /// Relative change of the mean share (`0.1`: 10 % more); infinite for a new path.
    pub change: f64,
    /// The standard error of `change`.
    pub se: f64,
    /// Welch's degrees of freedom.
    pub df: f64,
    /// Welch's two-sided p-value.
    pub p: f64,
    /// Benjamini–Hochberg adjusted p-value.
    pub q: f64,
    /// `q ≤ alpha`.
    pub significant: bool,
}

impl PathTest {
    /// The 95 % confidence interval of `change`.
    pub fn ci95(&self) -> (f64, f64) {
        if !self.change.is_finite() {
            return (self.change, self.change);
        }
        let h = super::stats::half_width_95(self.se, self.df);
        (self.change - h, self.change + h)
    }
}

impl RunStats {
    /// The test of node `n`, when it has one.
    pub fn of(&self, n: NodeId) -> Option<&PathTest> {
        self.nodes.get(n as usize).and_then(Option::as_ref)
    }
}

/// The many-run test of node `n` of `p`, when `p` is a many-run comparison.
pub fn path_test(p: &Profile, n: NodeId) -> Option<&PathTest> {
    p.meta.comparison.as_ref()?.runs.as_ref()?.of(n)
}

/// `name` as the comparison matches it (`first`: a root's child, where perf's command
/// and pid sit).
pub fn match_key(name: &str, first: bool, opts: CompareOptions) -> Cow<'_, str> {
    let mut s: Cow<'_, str> = Cow::Borrowed(name);
    if opts.strip_hex && s.contains("0x") {
        s = Cow::Owned(strip_hex(&s));
    }
    if !opts.keep_suffixes {
        let t = strip_suffixes(&s, first);
        if t.len() != s.len() {
            s = Cow::Owned(t.to_string());
        }
    }
    s
}

/// `0x` followed by hex digits becomes `0x...` (inferno's `--strip-hex`).
pub fn strip_hex(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut copied = 0;
    while i + 1 < b.len() {
        if b[i] == b'0' && b[i + 1] == b'x' {
            let mut j = i + 2;
            while j < b.len() && b[j].is_ascii_hexdigit() {
                j += 1;
            }
            if j > i + 2 {
                out.push_str(&s[copied..i]);
                out.push_str("0x...");
                copied = j;
                i = j;
                continue;
            }
        }
        i += 1;
    }
    out.push_str(&s[copied..]);
    out
}

/// Without inferno's annotation suffix (`_[k]` kernel, `_[j]` JIT, `_[i]` inlined, `_[w]`
/// waker) and, for a first frame, a `-PID` or `-PID/TID` suffix (`java-4711/4712`).
fn strip_suffixes(s: &str, first: bool) -> &str {
    let mut s = s;
    for a in ["_[k]", "_[j]", "_[i]", "_[w]"] {
        if let Some(t) = s.strip_suffix(a) {
            s = t;
            break;
        }
    }
    if first && let Some(dash) = s.rfind('-') {
        let tail = &s[dash + 1..];
        let (pid, tid) = tail.split_once('/').unwrap_or((tail, ""));
        let digits = |x: &str| !x.is_empty() && x.bytes().all(|b| b.is_ascii_digit());
        // A pid is at least three digits (`worker-2` stays a name).
        if dash > 0
            && digits(pid)
            && (pid.len() >= 3 || digits(tid))
            && (tid.is_empty() || digits(tid))
        {
            s = &s[..dash];
        }
    }
    s
}

/// Adds one side of a comparison: every node of `p` under its matched path, each self
/// value through `scale`. Returns the builder's node of each of `p`'s nodes (the finished
/// tree keeps the builder's ids).
fn add_side(
    b: &mut CallTreeBuilder,
    names: &mut Names,
    p: &Profile,
    opts: CompareOptions,
    left: bool,
    scale: impl Fn(u64) -> u64,
) -> Result<Vec<NodeId>, TotalOverflow> {
    let mut map = vec![0 as NodeId; p.tree.len()];
    let t = &p.tree;
    // Our name id of each of the side's names, for first frames and for the others.
    let mut ids: [HashMap<NameId, NameId>; 2] = Default::default();
    let mut stack: Vec<(NodeId, NodeId)> = vec![(0, 0)];
    while let Some((n, to)) = stack.pop() {
        let s = scale(t.self_ticks(n));
        if s > 0 {
            if left {
                b.add_self_diff(to, s, 0)?;
            } else {
                b.add_self_diff(to, 0, s)?;
            }
        }
        let first = n == 0;
        for &c in t.children(n) {
            let name = t.name(c);
            let id = *ids[usize::from(first)]
                .entry(name)
                .or_insert_with(|| names.intern(&match_key(p.names.get(name), first, opts)));
            let nc = b.child(to, id);
            map[c as usize] = nc;
            stack.push((c, nc));
        }
    }
    Ok(map)
}

/// A note when the two sides count different things.
fn unit_note(before: &Profile, after: &Profile, warnings: &mut Warnings) {
    let (a, b) = (&before.values.unit, &after.values.unit);
    if a != b {
        warnings.notes.push(format!(
            "the two sides count different units ({} before, {} after): bars compare \
             each side's shares",
            a.name(),
            b.name()
        ));
    }
}

/// The difference of `before` and `after`: one tree whose nodes hold both sides.
pub fn diff_profiles(
    before: &Profile,
    after: &Profile,
    opts: CompareOptions,
) -> Result<Profile, TotalOverflow> {
    let mut names = Names::new();
    let mut b = CallTreeBuilder::new(&mut names, true);
    // One tick for both sides: a side with fractional counts has more ticks per unit
    // (a power of ten); the other is scaled up to it.
    let (bu, au) = (
        before.values.ticks_per_unit.max(1),
        after.values.ticks_per_unit.max(1),
    );
    let unit = bu.max(au);
    let (bm, am) = (unit / bu, unit / au);
    let up = |v: u64, m: u64| v.checked_mul(m).ok_or(TotalOverflow);
    let (bt, at) = (
        up(before.tree.grand_total(), bm)?,
        up(after.tree.grand_total(), am)?,
    );
    if opts.normalize && bt > 0 {
        add_side(&mut b, &mut names, before, opts, true, |v| {
            (u128::from(v) * u128::from(bm) * u128::from(at) / u128::from(bt)) as u64
        })?;
    } else {
        add_side(&mut b, &mut names, before, opts, true, |v| {
            v.saturating_mul(bm)
        })?;
    }
    add_side(&mut b, &mut names, after, opts, false, |v| {
        v.saturating_mul(am)
    })?;
    let tree = b.finish(&names, ChildOrder::ByName)?;
    let mut warnings = Warnings::default();
    unit_note(before, after, &mut warnings);
    let mut values = after.values.clone();
    values.ticks_per_unit = unit;
    Ok(Profile {
        names,
        tree,
        values,
        meta: ProfileMeta {
            comparison: Some(Arc::new(Comparison {
                before: vec![before.meta.source.clone()],
                after: vec![after.meta.source.clone()],
                options: opts,
                runs: None,
            })),
            ..ProfileMeta::new(&after.meta.source, after.meta.format, warnings)
        },
    })
}

/// Many runs against many: the pooled difference of `base` and `vs` (each side's runs
/// summed), with a Welch test per call path on the runs' shares and the
/// Benjamini–Hochberg correction at false-discovery rate `alpha`.
pub fn compare_runs(
    base: &[Profile],
    vs: &[Profile],
    opts: CompareOptions,
    alpha: f64,
) -> Result<Profile, TotalOverflow> {
    let mut names = Names::new();
    let mut b = CallTreeBuilder::new(&mut names, true);
    let side_opts = CompareOptions {
        normalize: false,
        ..opts
    };
    let mut maps: Vec<Vec<NodeId>> = Vec::with_capacity(base.len() + vs.len());
    for p in base {
        maps.push(add_side(&mut b, &mut names, p, side_opts, true, |v| v)?);
    }
    for p in vs {
        maps.push(add_side(&mut b, &mut names, p, side_opts, false, |v| v)?);
    }
    let tree = b.finish(&names, ChildOrder::ByName)?;
    let mut diff = Profile {
        names,
        tree,
        values: vs
            .first()
            .or(base.first())
            .map(|p| p.values.clone())
            .unwrap_or_default(),
        meta: ProfileMeta::new(
            vs.first().map_or("", |p| p.meta.source.as_str()),
            vs.first()
                .map_or(super::SourceFormat::Folded, |p| p.meta.format),
            Warnings::default(),
        ),
    };
    if let (Some(a), Some(b)) = (base.first(), vs.first()) {
        unit_note(a, b, &mut diff.meta.warnings);
    }
    let n = diff.tree.len();
    // Each run's share of its own total on every node of the pooled tree (two of a run's
    // nodes on one pooled node, names matched alike, add up).
    let shares = |runs: &[Profile], maps: &[Vec<NodeId>]| -> Vec<Vec<f64>> {
        runs.iter()
            .zip(maps)
            .map(|(r, map)| {
                let mut t = vec![0u64; n];
                for c in 1..r.tree.len() {
                    t[map[c] as usize] += r.tree.total(c as NodeId);
                }
                let total = r.tree.grand_total().max(1) as f64;
                t[0] = r.tree.grand_total();
                t.iter().map(|&v| v as f64 / total).collect()
            })
            .collect()
    };
    let (sa, sb) = (
        shares(base, &maps[..base.len()]),
        shares(vs, &maps[base.len()..]),
    );
    drop(maps);
    let mut tests: Vec<Option<PathTest>> = vec![None; n];
    let mut ps: Vec<(usize, f64)> = Vec::new();
    let (mut xa, mut xb) = (Vec::new(), Vec::new());
    for (node, test) in tests.iter_mut().enumerate().skip(1) {
        xa.clear();
        xb.clear();
        xa.extend(sa.iter().map(|r| r[node]));
        xb.extend(sb.iter().map(|r| r[node]));
        let Some(w) = welch(&xa, &xb) else { continue };
        let rel = |d: f64| {
            if w.mean_a > 0.0 {
                d / w.mean_a
            } else if d == 0.0 {
                0.0
            } else {
                f64::INFINITY.copysign(d)
            }
        };
        *test = Some(PathTest {
            share_before: w.mean_a,
            share_after: w.mean_b,
            change: rel(w.diff),
            se: if w.mean_a > 0.0 { w.se / w.mean_a } else { 0.0 },
            df: w.df,
            p: w.p,
            q: 1.0,
            significant: false,
        });
        ps.push((node, w.p));
    }
    let q = benjamini_hochberg(&ps.iter().map(|&(_, p)| p).collect::<Vec<_>>());
    for (&(node, _), q) in ps.iter().zip(q) {
        if let Some(t) = &mut tests[node] {
            t.q = q;
            t.significant = q <= alpha;
        }
    }
    diff.meta.comparison = Some(Arc::new(Comparison {
        before: base.iter().map(|p| p.meta.source.clone()).collect(),
        after: vs.iter().map(|p| p.meta.source.clone()).collect(),
        options: side_opts,
        runs: Some(RunStats {
            alpha,
            runs: (base.len(), vs.len()),
            nodes: tests,
        }),
    }));
    Ok(diff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::{Limits, load_bytes};

    fn folded(name: &str, text: &str) -> Profile {
        load_bytes(name, text.as_bytes(), Limits::default()).unwrap()
    }

    /// `path before after` lines of a diff, sorted.
    fn lines(p: &Profile) -> Vec<String> {
        let mut v = Vec::new();
        for n in 1..p.tree.len() as NodeId {
            let (s, l) = (p.tree.self_ticks(n), p.tree.left_self(n));
            if s > 0 {
                v.push(format!("{} {l} {}", p.tree.path_text(&p.names, n), s - l));
            }
        }
        v.sort();
        v
    }

    #[test]
    fn paths_on_one_side_only_keep_their_side() {
        let a = folded("a", "main;f 3\nmain;g 2\n");
        let b = folded("b", "main;f 1\nmain;h 5\n");
        let d = diff_profiles(&a, &b, CompareOptions::default()).unwrap();
        assert_eq!(lines(&d), ["main;f 3 1", "main;g 2 0", "main;h 0 5"]);
        assert_eq!(d.diff_totals(), Some((5, 6)));
        let c = d.meta.comparison.as_ref().unwrap();
        assert_eq!((c.before[0].as_str(), c.after[0].as_str()), ("a", "b"));
    }

    #[test]
    fn one_side_empty() {
        let a = folded("a", "main;f 3\n");
        let mut empty = a.clone();
        empty.tree = crate::model::tree::CallTreeBuilder::new(&mut empty.names, false)
            .finish(&empty.names, ChildOrder::ByName)
            .unwrap();
        let d = diff_profiles(&empty, &a, CompareOptions::default()).unwrap();
        assert_eq!(lines(&d), ["main;f 0 3"]);
        let d = diff_profiles(&a, &empty, CompareOptions::default()).unwrap();
        assert_eq!(lines(&d), ["main;f 3 0"]);
        // Normalizing against an empty side scales to nothing.
        let n = CompareOptions {
            normalize: true,
            ..Default::default()
        };
        assert_eq!(
            lines(&diff_profiles(&a, &empty, n).unwrap()),
            Vec::<String>::new()
        );
    }

    #[test]
    fn names_are_matched_without_addresses_and_suffixes() {
        assert_eq!(strip_hex("0x234f2abc;a0xZ 0x"), "0x...;a0xZ 0x");
        assert_eq!(strip_hex("f+0x1a (0xFF)"), "f+0x... (0x...)");
        let o = CompareOptions::default();
        assert_eq!(match_key("vfs_read_[k]", false, o), "vfs_read");
        assert_eq!(match_key("java-4711", true, o), "java");
        assert_eq!(match_key("java-4711/4712", true, o), "java");
        assert_eq!(match_key("worker-2", true, o), "worker-2");
        assert_eq!(match_key("java-4711", false, o), "java-4711");
        let keep = CompareOptions {
            keep_suffixes: true,
            ..o
        };
        assert_eq!(match_key("vfs_read_[k]", false, keep), "vfs_read_[k]");
        let a = folded("a", "java-100;f_[j] 3\n");
        let b = folded("b", "java-200;f_[j] 4\n");
        assert_eq!(lines(&diff_profiles(&a, &b, o).unwrap()), ["java;f 3 4"]);
    }
}
