//! Pyroscope flamebearer JSON.
//!
//! Three wrappers carry the same data:
//! - the render API response and Pyroscope's "export as JSON": `{flamebearer, metadata,
//!   timeline, groups?, leftTicks?, rightTicks?}` or `{version: 1, flamebearer, metadata}`;
//! - Grafana Pyroscope's query API (v2): `{flamegraph: {names, levels: [{values}], total,
//!   maxSelf, leftTicks?, rightTicks?}}`, where 64-bit integers arrive as JSON strings;
//! - a bare flamebearer object `{names, levels, numTicks, maxSelf}`.
//!
//! `levels[i]` is row `i` of the flame graph, one group of numbers per bar, offsets
//! delta-encoded against the end of the previous bar in the row:
//! - `single`: `[offset, total, self, name]`;
//! - `double` (diff): `[leftOffset, leftTotal, leftSelf, rightOffset, rightTotal,
//!   rightSelf, name]`, left and right offsets accumulating separately; a bar's position on
//!   the combined axis is `leftOffset + rightOffset` and its width `leftTotal + rightTotal`.
//!
//! The bars become a [`CallTree`](crate::model::CallTree) in file order (a bar's parent is
//! the bar of the row above that contains it). Positions are checked against the layout
//! scorch derives from the tree (self first, then children): they agree for everything
//! Pyroscope writes, and a file that disagrees is reported, not silently redrawn. Bars
//! outside their parent, past `numTicks`, with self larger than total, or naming a name
//! that does not exist are errors naming the level and bar.

use super::ImportError;
use crate::model::{
    CallTreeBuilder, ChildOrder, Names, NodeId, Profile, ProfileMeta, SourceFormat, Unit,
    ValueFormat, Warnings,
};
use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// A non-negative integer that may be written as a JSON number (integral) or a string of
/// digits (protobuf JSON's int64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Num(pub(crate) u64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Num;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a non-negative integer")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Num, E> {
                Ok(Num(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Num, E> {
                u64::try_from(v)
                    .map(Num)
                    .map_err(|_| E::custom(format!("expected a non-negative integer, found {v}")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Num, E> {
                if v >= 0.0 && v.fract() == 0.0 && v < 1.8e19 {
                    Ok(Num(v as u64))
                } else {
                    Err(E::custom(format!(
                        "expected a non-negative integer, found {v}"
                    )))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Num, E> {
                v.trim()
                    .parse::<u64>()
                    .map(Num)
                    .map_err(|_| E::custom(format!("expected an integer, found the string {v:?}")))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Body {
    #[serde(default)]
    names: Option<Vec<String>>,
    #[serde(default)]
    levels: Option<Vec<Vec<Num>>>,
    #[serde(default)]
    num_ticks: Option<Num>,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    units: Option<String>,
    #[serde(default)]
    sample_rate: Option<Num>,
    #[serde(default)]
    spy_name: Option<String>,
    #[serde(default)]
    left_ticks: Option<Num>,
    #[serde(default)]
    right_ticks: Option<Num>,
}

#[derive(Deserialize)]
struct V2Level {
    #[serde(default)]
    values: Vec<Num>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct V2Body {
    #[serde(default)]
    names: Vec<String>,
    #[serde(default)]
    levels: Vec<V2Level>,
    #[serde(default)]
    total: Option<Num>,
    #[serde(default)]
    left_ticks: Option<Num>,
    #[serde(default)]
    right_ticks: Option<Num>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    units: Option<String>,
    #[serde(default)]
    sample_rate: Option<Num>,
    #[serde(default)]
    spy_name: Option<String>,
    #[serde(default)]
    app_name: Option<String>,
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    #[serde(default)]
    flamebearer: Option<Body>,
    #[serde(default)]
    flamegraph: Option<V2Body>,
    #[serde(default)]
    metadata: Option<Metadata>,
    #[serde(default)]
    left_ticks: Option<Num>,
    #[serde(default)]
    right_ticks: Option<Num>,
    // A bare flamebearer object has its fields at the top level.
    #[serde(flatten)]
    bare: Body,
}

/// The decoded essentials, whichever wrapper they came in.
struct Flat {
    names: Vec<String>,
    levels: Vec<Vec<Num>>,
    num_ticks: Option<u64>,
    diff: bool,
    left_ticks: Option<u64>,
    right_ticks: Option<u64>,
    units: Option<String>,
    sample_rate: Option<u64>,
    spy_name: Option<String>,
    app_name: Option<String>,
    levels_path: &'static str,
}

fn flatten(file: &str, env: Envelope) -> Result<Flat, ImportError> {
    let meta = env.metadata.unwrap_or_default();
    if let Some(v2) = env.flamegraph {
        let diff = v2.left_ticks.is_some() || v2.right_ticks.is_some();
        return Ok(Flat {
            names: v2.names,
            levels: v2.levels.into_iter().map(|l| l.values).collect(),
            num_ticks: v2.total.map(|n| n.0),
            diff,
            left_ticks: v2.left_ticks.map(|n| n.0),
            right_ticks: v2.right_ticks.map(|n| n.0),
            units: meta.units,
            sample_rate: meta.sample_rate.map(|n| n.0),
            spy_name: meta.spy_name,
            app_name: meta.app_name.or(meta.name),
            levels_path: "flamegraph.levels",
        });
    }
    let (body, levels_path) = match env.flamebearer {
        Some(b) => (b, "flamebearer.levels"),
        None => (env.bare, "levels"),
    };
    let left_ticks = env.left_ticks.or(body.left_ticks).map(|n| n.0);
    let right_ticks = env.right_ticks.or(body.right_ticks).map(|n| n.0);
    let format = body.format.clone().or(meta.format.clone());
    let diff = match format.as_deref() {
        Some("double") => true,
        Some("single") => false,
        _ => left_ticks.is_some() || right_ticks.is_some(),
    };
    let (Some(names), Some(levels)) = (body.names, body.levels) else {
        return Err(ImportError::Invalid {
            file: file.to_string(),
            location: "top level".to_string(),
            message: "expected a flamebearer with `names` and `levels`".to_string(),
        });
    };
    Ok(Flat {
        names,
        levels,
        num_ticks: body.num_ticks.map(|n| n.0),
        diff,
        left_ticks,
        right_ticks,
        units: meta.units.or(body.units),
        sample_rate: meta.sample_rate.or(body.sample_rate).map(|n| n.0),
        spy_name: meta.spy_name.or(body.spy_name),
        app_name: meta.app_name.or(meta.name),
        levels_path,
    })
}

/// One decoded bar: absolute positions.
#[derive(Clone, Copy, Debug)]
struct Bar {
    x0: u64,
    x1: u64,
    self_: u64,
    left: Option<(u64, u64)>,
    name: u32,
}

/// Parses a flamebearer document.
pub fn parse(file: &str, text: &[u8]) -> Result<Profile, ImportError> {
    let env: Envelope = serde_json::from_slice(text).map_err(|e| ImportError::json(file, &e))?;
    let flat = flatten(file, env)?;
    build(file, flat)
}

fn build(file: &str, f: Flat) -> Result<Profile, ImportError> {
    let invalid = |location: String, message: String| ImportError::Invalid {
        file: file.to_string(),
        location,
        message,
    };
    if f.levels.is_empty() || f.levels[0].is_empty() {
        return Err(invalid(
            f.levels_path.to_string(),
            "no bars: expected at least the root bar in level 0".to_string(),
        ));
    }
    // Decode every row to absolute positions, checking each bar on its own.
    let rows = f
        .levels
        .iter()
        .enumerate()
        .map(|(li, level)| decode_level(&f, li, level).map_err(|(l, m)| invalid(l, m)))
        .collect::<Result<Vec<Vec<Bar>>, _>>()?;
    let mut names = Names::new();
    let name_ids: Vec<u32> = f.names.iter().map(|n| names.intern(n)).collect();
    let mut b = CallTreeBuilder::new(&mut names, f.diff);
    let mut warnings = Warnings::default();
    link_levels(&f, &rows, &name_ids, &mut b, &mut warnings).map_err(|(l, m)| invalid(l, m))?;
    let tree = b
        .finish(&names, ChildOrder::Insertion)
        .map_err(|e| invalid("levels".to_string(), e.to_string()))?;

    let diff_ticks = if f.diff {
        let l = f.left_ticks.unwrap_or_else(|| tree.left_total(0));
        let r = f
            .right_ticks
            .unwrap_or_else(|| tree.grand_total().saturating_sub(tree.left_total(0)));
        if l + r != tree.grand_total() {
            warnings.notes.push(format!(
                "leftTicks + rightTicks = {} but the root spans {} ticks",
                l + r,
                tree.grand_total()
            ));
        }
        Some((l, r))
    } else {
        None
    };
    if tree.grand_total() == 0 {
        return Err(invalid(
            f.levels_path.to_string(),
            "the profile is empty (numTicks is 0)".to_string(),
        ));
    }

    let unit = Unit::from_pyroscope(f.units.as_deref().unwrap_or("samples"));
    let sample_rate_hz = f
        .sample_rate
        .filter(|&r| r > 0 && r <= u64::from(u32::MAX))
        .map(|r| r as u32);
    Ok(Profile {
        names,
        tree,
        values: ValueFormat {
            unit,
            sample_rate_hz,
            ticks_per_unit: 1,
        },
        meta: ProfileMeta {
            // Without a spyName, Pyroscope's flame graph takes whole names as packages
            // (spyToRegex's default, as for its "unknown"); so does package_name here.
            spy_name: Some(
                f.spy_name
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "unknown".to_string()),
            ),
            app_name: f.app_name.filter(|s| !s.is_empty()),
            stated_total: f.num_ticks,
            diff_ticks,
            ..ProfileMeta::new(
                file,
                if f.diff {
                    SourceFormat::FlamebearerDiff
                } else {
                    SourceFormat::FlamebearerSingle
                },
                warnings,
            )
        },
    })
}

/// Where a bar is wrong and what is wrong with it.
type BarError = (String, String);

/// Level `li` of `f` decoded to absolute positions, each bar checked on its own.
fn decode_level(f: &Flat, li: usize, level: &[Num]) -> Result<Vec<Bar>, BarError> {
    let step = if f.diff { 7 } else { 4 };
    let fmt = if f.diff { "double" } else { "single" };
    let loc = |j: usize| {
        format!(
            "{}[{li}], bar {} (numbers {}..{})",
            f.levels_path,
            j / step,
            j,
            j + step
        )
    };
    if !level.len().is_multiple_of(step) {
        return Err((
            format!("{}[{li}]", f.levels_path),
            format!(
                "{} numbers is not a multiple of {step} ({fmt} format has {step} numbers per bar)",
                level.len()
            ),
        ));
    }
    let mut bars = Vec::with_capacity(level.len() / step);
    let (mut prev_end, mut prev_l_end, mut prev_r_end) = (0u64, 0u64, 0u64);
    for j in (0..level.len()).step_by(step) {
        let v = |k: usize| level[j + k].0;
        let overflow = || (loc(j), "offsets add up to more than 2^64 ticks".to_string());
        let bar = if f.diff {
            let l0 = prev_l_end.checked_add(v(0)).ok_or_else(overflow)?;
            let r0 = prev_r_end.checked_add(v(3)).ok_or_else(overflow)?;
            prev_l_end = l0.checked_add(v(1)).ok_or_else(overflow)?;
            prev_r_end = r0.checked_add(v(4)).ok_or_else(overflow)?;
            if v(2) > v(1) || v(5) > v(4) {
                return Err((
                    loc(j),
                    format!(
                        "self is larger than total (left {} > {} or right {} > {})",
                        v(2),
                        v(1),
                        v(5),
                        v(4)
                    ),
                ));
            }
            let x0 = l0.checked_add(r0).ok_or_else(overflow)?;
            let w = v(1).checked_add(v(4)).ok_or_else(overflow)?;
            Bar {
                x0,
                x1: x0.checked_add(w).ok_or_else(overflow)?,
                self_: v(2) + v(5),
                left: Some((v(1), v(2))),
                name: name_index(v(6), f.names.len()).ok_or_else(|| {
                    (
                        loc(j),
                        format!(
                            "name index {} is out of range ({} names)",
                            v(6),
                            f.names.len()
                        ),
                    )
                })?,
            }
        } else {
            let x0 = prev_end.checked_add(v(0)).ok_or_else(overflow)?;
            let x1 = x0.checked_add(v(1)).ok_or_else(overflow)?;
            prev_end = x1;
            if v(2) > v(1) {
                return Err((
                    loc(j),
                    format!("self ({}) is larger than total ({})", v(2), v(1)),
                ));
            }
            Bar {
                x0,
                x1,
                self_: v(2),
                left: None,
                name: name_index(v(3), f.names.len()).ok_or_else(|| {
                    (
                        loc(j),
                        format!(
                            "name index {} is out of range ({} names)",
                            v(3),
                            f.names.len()
                        ),
                    )
                })?,
            }
        };
        if let Some(nt) = f.num_ticks
            && bar.x1 > nt
        {
            return Err((
                loc(j),
                format!(
                    "bar spans ticks {}..{}, past numTicks = {nt}",
                    bar.x0, bar.x1
                ),
            ));
        }
        bars.push(bar);
    }
    Ok(bars)
}

/// Links the decoded rows into the call tree: each bar under the bar of the row above
/// that contains it (two pointers: both rows are sorted by position); counts what the
/// file's layout gets wrong into `warnings`.
fn link_levels(
    f: &Flat,
    rows: &[Vec<Bar>],
    name_ids: &[u32],
    b: &mut CallTreeBuilder,
    warnings: &mut Warnings,
) -> Result<(), BarError> {
    // Level 0: one bar from 0 spanning everything is the root; anything else hangs below a
    // synthetic root.
    let root_total = f
        .num_ticks
        .unwrap_or_else(|| rows[0].iter().map(|b| b.x1).max().unwrap_or(0));
    let single_root = rows[0].len() == 1 && rows[0][0].x0 == 0 && rows[0][0].x1 == root_total;
    let mut prev_ids: Vec<NodeId> = Vec::new();
    let first_row = if single_root {
        let r = rows[0][0];
        b.rename_root(name_ids[r.name as usize]);
        b.set_stated(0, r.x1 - r.x0, r.self_, r.left);
        prev_ids.push(0);
        1
    } else {
        let level0: u64 = rows[0].iter().map(|b| b.x1 - b.x0).sum();
        let left0 = f.diff.then(|| {
            let l: u64 = rows[0].iter().filter_map(|b| b.left.map(|l| l.0)).sum();
            (l, 0)
        });
        b.set_stated(0, root_total, root_total.saturating_sub(level0), left0);
        0
    };
    let mut prev_row: Vec<Bar> = if single_root {
        vec![rows[0][0]]
    } else {
        vec![Bar {
            x0: 0,
            x1: root_total,
            self_: root_total.saturating_sub(rows[0].iter().map(|b| b.x1 - b.x0).sum()),
            left: None,
            name: 0,
        }]
    };
    if !single_root {
        prev_ids.push(0);
    }

    let mut misplaced = 0u64;
    let mut self_mismatch = 0u64;
    for (li, row) in rows.iter().enumerate().skip(first_row) {
        let mut ids = Vec::with_capacity(row.len());
        // Two pointers: parents and children are both sorted by position.
        let mut p = 0usize;
        let mut cursor = prev_row.first().map_or(0, |b| b.x0 + b.self_);
        let mut child_sum = vec![0u64; prev_row.len()];
        for (j, bar) in row.iter().enumerate() {
            while p < prev_row.len()
                && (prev_row[p].x1 < bar.x1 || (prev_row[p].x1 == bar.x0 && bar.x0 < bar.x1))
            {
                p += 1;
                if p < prev_row.len() {
                    cursor = prev_row[p].x0 + prev_row[p].self_;
                }
            }
            if p >= prev_row.len() || bar.x0 < prev_row[p].x0 || bar.x1 > prev_row[p].x1 {
                return Err((
                    format!("{}[{li}], bar {j}", f.levels_path),
                    format!(
                        "bar at ticks {}..{} is not inside any bar of level {} (a bar must lie within its caller)",
                        bar.x0,
                        bar.x1,
                        li.saturating_sub(1)
                    ),
                ));
            }
            if bar.x0 != cursor {
                misplaced += 1;
            }
            cursor = bar.x1;
            child_sum[p] += bar.x1 - bar.x0;
            let id = b.push_child(prev_ids[p], name_ids[bar.name as usize]);
            b.set_stated(id, bar.x1 - bar.x0, bar.self_, bar.left);
            ids.push(id);
        }
        for (k, parent) in prev_row.iter().enumerate() {
            if parent.self_ + child_sum[k] != parent.x1 - parent.x0 {
                self_mismatch += 1;
            }
        }
        prev_row = row.clone();
        prev_ids = ids;
    }
    // The last row's bars have no children: their self must equal their total.
    self_mismatch += prev_row.iter().filter(|b| b.self_ != b.x1 - b.x0).count() as u64;

    if misplaced > 0 {
        warnings.notes.push(format!(
            "{misplaced} bar{} not placed where self-first layout puts {}; drawn self-first",
            if misplaced == 1 { " is" } else { "s are" },
            if misplaced == 1 { "it" } else { "them" }
        ));
    }
    if self_mismatch > 0 {
        warnings.notes.push(format!(
            "{self_mismatch} bar{} self + children ≠ total (kept the totals the file states)",
            if self_mismatch == 1 { "'s" } else { "s'" }
        ));
    }
    Ok(())
}

fn name_index(v: u64, n: usize) -> Option<u32> {
    (v < n as u64).then_some(v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIMPLE: &str = r#"{
      "flamebearer": {
        "names": ["total","runtime.main","main.slowFunction","main.work","main.main","main.fastFunction"],
        "levels": [[0,988,0,0],[0,988,0,1],[0,214,0,5,0,3,2,4,0,771,0,2],[0,214,214,3,2,1,1,5,0,771,771,3]],
        "numTicks": 988, "maxSelf": 771, "spyName": "gospy", "sampleRate": 100, "units": "samples", "format": "single"
      },
      "metadata": {"format": "single", "sampleRate": 100, "spyName": "gospy", "units": "samples"}
    }"#;

    #[test]
    fn render_api_single() {
        let p = parse("s.json", SIMPLE.as_bytes()).unwrap();
        assert_eq!(p.tree.grand_total(), 988);
        assert_eq!(p.meta.stated_total, Some(988));
        assert_eq!(p.tree.len(), 8);
        assert_eq!(p.tree.max_depth(), 3);
        assert_eq!(p.values.sample_rate_hz, Some(100));
        assert_eq!(p.meta.spy_name.as_deref(), Some("gospy"));
        assert!(p.meta.warnings.is_empty(), "{:?}", p.meta.warnings);
        // main.main has 2 self and one child (fastFunction, 1 tick).
        let rm = p.tree.children(0)[0];
        let mm = p.tree.children(rm)[1];
        assert_eq!(p.names.get(p.tree.name(mm)), "main.main");
        assert_eq!((p.tree.total(mm), p.tree.self_ticks(mm)), (3, 2));
    }

    /// A flamebearer without a spyName is colored by whole names, as Pyroscope's component
    /// draws it (checked on its canvas): not by the package rules guessed for folded stacks.
    #[test]
    fn no_spy_name_means_whole_names() {
        let bare = r#"{"names":["total","tokio::runtime::park"],"levels":[[0,4,0,0],[0,4,4,1]],"numTicks":4}"#;
        for file in [
            bare.to_string(),
            bare.replace(r#""numTicks":4"#, r#""numTicks":4,"spyName":"""#),
        ] {
            let p = parse("b.json", file.as_bytes()).unwrap();
            assert_eq!(p.meta.spy_name.as_deref(), Some("unknown"));
            let spy = p.meta.spy_name.as_deref();
            let name = "tokio::runtime::park";
            assert_eq!(crate::color::package_name(spy, name), name);
        }
    }

    #[test]
    fn v2_flamegraph_with_string_numbers() {
        let v2 = r#"{"flamegraph":{"names":["total","a","b"],
            "levels":[{"values":["0","10","0","0"]},{"values":["0","10","4","1"]},{"values":["4","6","6","2"]}],
            "total":"10","maxSelf":"6"}}"#;
        let p = parse("v2.json", v2.as_bytes()).unwrap();
        assert_eq!(p.tree.grand_total(), 10);
        assert_eq!(p.tree.max_depth(), 2);
    }

    #[test]
    fn exported_diff() {
        let d = r#"{"version":1,"leftTicks":3,"rightTicks":5,"flamebearer":{"names":["total","a","b"],
            "levels":[[0,3,0,0,5,0,0],[0,3,1,0,5,0,1],[0,2,2,0,5,5,2]],"numTicks":8,"maxSelf":5},
            "metadata":{"format":"double","units":"samples"}}"#;
        let p = parse("d.json", d.as_bytes()).unwrap();
        assert!(p.is_diff());
        assert_eq!(p.meta.diff_ticks, Some((3, 5)));
        let a = p.tree.children(0)[0];
        assert_eq!((p.tree.left_total(a), p.tree.total(a)), (3, 8));
        assert_eq!(p.tree.left_self(a), 1);
    }

    #[test]
    fn errors_name_level_and_bar() {
        let bad = r#"{"flamebearer":{"names":["f0","f1"],"levels":[[0,10,0,0],[12,50,1,1]],"numTicks":10}}"#;
        let e = parse("r.json", bad.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("flamebearer.levels[1], bar 0"), "{e}");
        assert!(e.contains("past numTicks"), "{e}");

        let bad_name = r#"{"flamebearer":{"names":["f0"],"levels":[[0,10,0,3]],"numTicks":10}}"#;
        let e = parse("n.json", bad_name.as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("name index 3 is out of range (1 names)"), "{e}");

        let ragged = r#"{"flamebearer":{"names":["f0"],"levels":[[0,10,0]],"numTicks":10}}"#;
        let e = parse("g.json", ragged.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("not a multiple of 4"), "{e}");

        let neg =
            "{\"flamebearer\":{\"names\":[\"f0\"],\n\"levels\":[[0,-10,0,0]],\"numTicks\":10}}";
        let e = parse("j.json", neg.as_bytes()).unwrap_err();
        assert!(matches!(e, ImportError::Json { line: 2, .. }), "{e}");
        assert!(e.to_string().contains("non-negative"), "{e}");

        let orphan = r#"{"flamebearer":{"names":["t","a","b"],"levels":[[0,10,0,0],[0,4,4,1],[5,2,2,2]],"numTicks":10}}"#;
        let e = parse("o.json", orphan.as_bytes()).unwrap_err().to_string();
        assert!(e.contains("not inside any bar of level 1"), "{e}");
    }

    #[test]
    fn truncated_json_reports_position() {
        let e = parse("t.json", &SIMPLE.as_bytes()[..200]).unwrap_err();
        assert!(matches!(e, ImportError::Json { .. }), "{e}");
    }
}
