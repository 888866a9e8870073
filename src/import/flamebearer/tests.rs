//! Unit tests of the flamebearer importer.

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
    let bare =
        r#"{"names":["total","tokio::runtime::park"],"levels":[[0,4,0,0],[0,4,4,1]],"numTicks":4}"#;
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
    let bad =
        r#"{"flamebearer":{"names":["f0","f1"],"levels":[[0,10,0,0],[12,50,1,1]],"numTicks":10}}"#;
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

    let neg = "{\"flamebearer\":{\"names\":[\"f0\"],\n\"levels\":[[0,-10,0,0]],\"numTicks\":10}}";
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

use crate::generator::Rng;

/// The tree, node by node, as comparable values.
fn dump(p: &Profile) -> Vec<(String, u32, u64, u64, u64, u64)> {
    let t = &p.tree;
    (0..t.len() as NodeId)
        .map(|n| {
            let parent = if n == 0 { 0 } else { t.parent(n) };
            (
                p.names.get(t.name(n)).to_string(),
                parent,
                t.total(n),
                t.self_ticks(n),
                t.left_total(n),
                t.left_self(n),
            )
        })
        .collect()
}

/// What a parse gives, comparably: the tree and warnings, or the error's text.
fn outcome(r: Result<Profile, ImportError>) -> Result<String, String> {
    r.map(|p| format!("{:?} {:?}", dump(&p), p.meta.warnings))
        .map_err(|e| e.to_string())
}

/// A random flamebearer document: levels of bars laid out self first (or, now and
/// then, misplaced), in the single or double format, with white space between tokens
/// and some rows holding numbers serde reads and plain digits do not (`"12"`, `12.0`).
fn random_doc(rng: &mut Rng, diff: bool) -> String {
    let ws = |rng: &mut Rng| match rng.next() % 9 {
        0 => " ",
        1 => "\n  ",
        _ => "",
    };
    let names = 1 + rng.next() % 6;
    let mut levels: Vec<String> = Vec::new();
    // The current level's bars: (start, total, right total).
    let mut cur = vec![(0u64, 1000 + rng.next() % 1000, rng.next() % 500)];
    for _ in 0..1 + rng.next() % 6 {
        let mut nums: Vec<u64> = Vec::new();
        let mut next = Vec::new();
        let (mut end, mut l_end, mut r_end) = (0u64, 0u64, 0u64);
        for &(x, t, r) in &cur {
            let s = if rng.next().is_multiple_of(3) {
                t
            } else {
                t * (rng.next() % 50) / 100
            };
            let rs = r * (rng.next() % 50) / 100;
            if diff {
                // Left and right: half of x each (only their sum is a position; the
                // halves may run back, wrapping: such files fail, read either way).
                let (lx, rx) = (x / 2, x - x / 2);
                let (lo, ro) = (lx.wrapping_sub(l_end), rx.wrapping_sub(r_end));
                nums.extend([lo, t - r, s.min(t - r), ro, r, rs.min(r)]);
                l_end = lx + t - r;
                r_end = rx + r;
            } else {
                nums.extend([x - end, t, s]);
                end = x + t;
            }
            nums.push(rng.next() % names);
            let mut c = x + s;
            while c < x + t && !rng.next().is_multiple_of(4) {
                let w = 1 + rng.next() % (x + t - c);
                next.push((c, w, w / 3));
                c += w;
            }
        }
        let step = if diff { 7 } else { 4 };
        let slow = rng.next().is_multiple_of(6);
        let text: Vec<String> = nums
            .iter()
            .enumerate()
            .map(|(k, v)| match (slow, k % step == 1) {
                (true, true) => format!("\"{v}\""),
                _ if slow && k % 5 == 0 => format!("{v}.0"),
                _ => v.to_string(),
            })
            .collect();
        levels.push(format!(
            "[{}{}]",
            ws(rng),
            text.join(&format!(",{}", ws(rng)))
        ));
        if next.is_empty() {
            break;
        }
        cur = next;
    }
    let names: Vec<String> = (0..names).map(|k| format!("\"f{k}\"")).collect();
    format!(
        r#"{{"version":1,{}"flamebearer":{{"names":[{}, "a \"levels\":[1] b"],{}"levels":{}[{}]{},"numTicks":{},"maxSelf":0}},"metadata":{{"format":"{}","units":"samples"}}}}"#,
        ws(rng),
        names.join(","),
        ws(rng),
        ws(rng),
        levels.join(&format!(",{}", ws(rng))),
        ws(rng),
        3000,
        if diff { "double" } else { "single" }
    )
}

/// Issue 15: the rows of a big flamebearer object are read from its text, not by
/// serde; what that gives must be what serde's reading gave, tree, warnings and
/// errors alike, for files as Pyroscope writes them and for damaged ones.
#[test]
fn lifted_levels_read_as_serde_reads_them() {
    let mut rng = Rng(11);
    let (mut lifted, mut slow_rows, mut damaged_errors) = (0, 0, 0);
    for case in 0..400 {
        // Every other document's rows are decoded on another thread while linked.
        PIPELINE_MIN.with(|m| m.set(if case % 2 == 0 { 0 } else { PIPELINE_MIN_BYTES }));
        let doc = random_doc(&mut rng, case % 3 == 0);
        let whole = outcome(parse_whole("f.json", doc.as_bytes()));
        let got = parse_lifted("f.json", doc.as_bytes()).expect("lifted");
        assert_eq!(outcome(got), whole, "case {case}: {doc}");
        lifted += 1;
        slow_rows += usize::from(doc.contains(".0") || doc.contains("\"1"));
        // Damage: a byte changed, removed or the file cut short.
        for d in 0..20 {
            let mut bad = doc.clone().into_bytes();
            let at = (rng.next() % bad.len() as u64) as usize;
            match d % 3 {
                0 => bad[at] = b"[],0-\":x 9"[(rng.next() % 10) as usize],
                1 => {
                    bad.remove(at);
                }
                _ => bad.truncate(at),
            }
            let whole = outcome(parse_whole("f.json", &bad));
            let got = match parse_lifted("f.json", &bad) {
                Some(r) => outcome(r),
                None => whole.clone(),
            };
            damaged_errors += usize::from(whole.is_err());
            assert_eq!(
                got,
                whole,
                "case {case}, damage {d}: {}",
                String::from_utf8_lossy(&bad)
            );
        }
    }
    assert!(
        lifted == 400 && slow_rows > 50 && damaged_errors > 2000,
        "{slow_rows} {damaged_errors}"
    );
}

/// The lifted array must be the one serde reads as `flamebearer.levels`: another key of
/// that name first (in the metadata), a v2 `flamegraph`, or a bare flamebearer leave
/// the document to serde whole.
#[test]
fn levels_lifted_only_where_serde_reads_them() {
    let other_first = SIMPLE.replace(
        r#""flamebearer": {"#,
        r#""extra": {"levels": [[1, 2]]}, "flamebearer": {"#,
    );
    assert!(parse_lifted("o.json", other_first.as_bytes()).is_none());
    assert_eq!(
        outcome(parse("o.json", other_first.as_bytes())),
        outcome(parse_whole("o.json", SIMPLE.as_bytes()))
    );
    let v2 = r#"{"flamegraph":{"names":["total","a"],"levels":[{"values":[0,10,0,0]},{"values":[0,10,10,1]}],"total":10}}"#;
    assert!(parse_lifted("v.json", v2.as_bytes()).is_none());
    let bare = r#"{"names":["total","a"],"levels":[[0,4,0,0],[0,4,4,1]],"numTicks":4}"#;
    assert!(parse_lifted("b.json", bare.as_bytes()).is_none());
    assert!(parse_lifted("s.json", SIMPLE.as_bytes()).is_some());
    // A row with a bad number fails at its place in the file, lifted or not.
    let neg = "{\"flamebearer\":{\"names\":[\"f0\"],\n\"levels\":[[0,10,0,0],\n  [0,-10,0,0]],\"numTicks\":10}}";
    let e = parse_lifted("j.json", neg.as_bytes()).unwrap().unwrap_err();
    assert!(
        matches!(
            e,
            ImportError::Json {
                line: 3,
                column: 8,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        parse_whole("j.json", neg.as_bytes())
            .unwrap_err()
            .to_string()
    );
    // Rows not separated as JSON separates them fail as serde fails them.
    for levels in [
        "[[0,10,10,0],]",
        "[[0,10,0,0] [0,10,10,1]]",
        "[[0,10,10,0],7]",
        "[,[0,10,10,0]]",
    ] {
        let doc =
            format!(r#"{{"flamebearer":{{"names":["a","b"],"levels":{levels},"numTicks":10}}}}"#);
        let e = parse_lifted("c.json", doc.as_bytes()).unwrap().unwrap_err();
        assert!(matches!(e, ImportError::Json { .. }), "{levels}: {e}");
        assert_eq!(
            e.to_string(),
            parse_whole("c.json", doc.as_bytes())
                .unwrap_err()
                .to_string()
        );
    }
}

/// Every node as its path of names from the root, with its total and self.
fn paths(p: &Profile) -> Vec<(String, u64, u64)> {
    let t = &p.tree;
    let mut path: Vec<String> = vec![String::new(); t.len()];
    let mut out = Vec::new();
    for n in 0..t.len() as NodeId {
        let name = p.names.get(t.name(n));
        if n > 0 {
            path[n as usize] = format!("{};{name}", path[t.parent(n) as usize]);
        }
        out.push((path[n as usize].clone(), t.total(n), t.self_ticks(n)));
    }
    out.sort();
    out
}

/// Issue 15: a preview of a big flamebearer file is its head's whole levels, closed as
/// a document of its own: the whole profile's top levels, node for node, with the
/// metadata (units, diff or not) found at the end of the file.
#[test]
fn the_head_is_the_top_levels_of_the_whole() {
    let mut rng = Rng(5);
    let (mut heads, mut cut_levels, mut diffs) = (0, 0, 0);
    for case in 0..60 {
        let diff = case % 3 == 0;
        let doc = random_doc(&mut rng, diff).replace(
            r#""units":"samples""#,
            r#""units":"bytes","spyName":"rbspy""#,
        );
        // (The generator's diff rows may not add up: those files fail whole.)
        let Ok(whole) = parse_whole("w.json", doc.as_bytes()) else {
            continue;
        };
        let depth = whole.tree.max_depth();
        for budget in 0..=doc.len() {
            let Some((head, read)) = head_document(doc.as_bytes(), budget) else {
                continue;
            };
            assert!(read <= budget);
            let p = parse("h.json", &head).unwrap_or_else(|e| {
                panic!(
                    "case {case} at {budget}: {e}\n{}",
                    String::from_utf8_lossy(&head)
                )
            });
            let d = p.tree.max_depth();
            let want: Vec<_> = paths(&whole)
                .into_iter()
                .filter(|(path, ..)| path.matches(';').count() <= d as usize)
                .collect();
            assert_eq!(paths(&p), want, "case {case} at {budget}");
            assert_eq!(p.is_diff(), diff);
            diffs += usize::from(diff);
            assert_eq!(p.values.unit, whole.values.unit, "case {case} at {budget}");
            assert_eq!(p.meta.spy_name.as_deref(), Some("rbspy"));
            heads += 1;
            cut_levels += usize::from(d < depth);
        }
    }
    assert!(
        heads > 5000 && cut_levels > 1000 && diffs > 500,
        "{heads} {cut_levels} {diffs}"
    );
    // Names after the levels: the head has none to give.
    let late = r#"{"flamebearer":{"levels":[[0,10,0,0],[0,10,10,1]],"names":["a","b"]}}"#;
    assert!(head_document(late.as_bytes(), 30).is_none_or(|(d, _)| parse("l.json", &d).is_err()));
    // Damaged files: no panic, whatever the head.
    for _ in 0..3000 {
        let mut bad = random_doc(&mut rng, false).into_bytes();
        let at = (rng.next() % bad.len() as u64) as usize;
        bad[at] = b"[]{}\",0"[(rng.next() % 7) as usize];
        let budget = (rng.next() % bad.len() as u64) as usize;
        if let Some((d, _)) = head_document(&bad, budget) {
            let _ = parse("d.json", &d);
        }
    }
}

/// A bar outside every bar of the row above is an error naming its row and bar, read
/// pipelined or not.
#[test]
fn a_linking_error_names_its_row_pipelined_or_not() {
    let bad = SIMPLE.replace(
        "[0,214,214,3,2,1,1,5,0,771,771,3]",
        "[200,214,214,3,2,1,1,5,0,300,300,3]",
    );
    for min in [0, PIPELINE_MIN_BYTES] {
        PIPELINE_MIN.with(|m| m.set(min));
        let e = parse_lifted("f.json", bad.as_bytes())
            .expect("lifted")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("flamebearer.levels[3], bar 0") && e.contains("inside any bar of level 2"),
            "{min}: {e}"
        );
    }
}
