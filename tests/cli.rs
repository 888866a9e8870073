//! The `scorch` binary, driven as a user drives it: output, files written, error messages
//! and exit codes.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn scorch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scorch"))
        .args(args)
        .current_dir(common::root())
        .output()
        .unwrap()
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

/// A path named `name` in a directory of its own under the temp directory, removed with
/// what it holds when dropped (kept after a failed test, to look at).
struct Temp {
    dir: PathBuf,
    path: PathBuf,
}

impl std::ops::Deref for Temp {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Temp {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn temp(name: &str) -> Temp {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("scorch-cli-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    Temp { dir, path }
}

#[test]
fn info_describes_the_demo_profile() {
    let o = scorch(&["info", "data/demo.folded"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("format:   folded stacks"), "{out}");
    assert!(
        out.contains("total:    13,332 samples = 13332 ticks"),
        "{out}"
    );
    assert!(out.contains("depth:    16"), "{out}");
    assert!(out.contains("warnings: none"), "{out}");
}

#[test]
fn info_on_flamebearer_and_diff() {
    let o = scorch(&["info", "data/demo-pyroscope.json"]);
    let (out, _) = text(&o);
    assert!(out.contains("Pyroscope flamebearer JSON (single)"), "{out}");
    assert!(out.contains("samples at 100 Hz"), "{out}");
    assert!(out.contains("matches the stated total 310"), "{out}");
    assert!(out.contains("profiler: gospy"), "{out}");
    let o = scorch(&["info", "data/demo-diff.folded"]);
    let (out, _) = text(&o);
    assert!(out.contains("differential folded stacks"), "{out}");
    assert!(
        out.contains("diff:     before 13,332 samples, after 12,887 samples"),
        "{out}"
    );
}

#[test]
fn reads_stdin_and_gzip() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scorch"))
        .args(["info", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"a;b 2\na;c 3\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    let (out, _) = text(&o);
    assert!(out.contains("file:     <stdin>"), "{out}");
    assert!(out.contains("total:    5 samples"), "{out}");

    // Gzip is recognised by content, whatever the name says.
    let gz = temp("demo.txt");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&std::fs::read(common::root().join("data/demo.folded")).unwrap())
        .unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let o = scorch(&["info", gz.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("folded stacks (gzip)"), "{out}");
}

#[test]
fn errors_name_the_file_and_position_and_exit_nonzero() {
    let o = scorch(&["info", "no/such/file.folded"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.starts_with("scorch: no/such/file.folded: cannot read"),
        "{err}"
    );

    let bad = temp("bad.json");
    std::fs::write(
        &bad,
        "{\"flamebearer\": {\"names\": [\"a\"],\n \"levels\": [[0, 1, 0, 0]], \"numTicks\": 1,\n}",
    )
    .unwrap();
    let o = scorch(&["info", bad.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("bad.json: line 3, column 1"), "{err}");

    let perf = temp("perf.txt");
    std::fs::write(
        &perf,
        "java 12345 [001] 1234.567890: cycles:\n\n\t7f1c2b3a4d5e func (/lib/x.so)\n",
    )
    .unwrap();
    let o = scorch(&["info", perf.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("perf.txt: no stack samples found"), "{err}");
    assert!(err.contains("(line 3: expected an event line"), "{err}");

    let o = scorch(&[
        "render",
        "data/demo.folded",
        "-o",
        "/dev/null",
        "--color",
        "diff",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.contains("--color diff needs a differential profile"),
        "{err}"
    );
}

#[test]
fn bad_lines_are_reported_once_with_a_count() {
    let f = temp("damaged.folded");
    std::fs::write(&f, "a;b 1\nthis line is broken\na;c 2\nalso broken\n").unwrap();
    let o = scorch(&["info", f.to_str().unwrap()]);
    let (out, _) = text(&o);
    assert!(o.status.success());
    assert!(
        out.contains("skipped 2 invalid lines (first: line 2:"),
        "{out}"
    );
}

#[test]
fn no_adapter_is_said_plainly() {
    // Metal never exists on Linux: no adapter at all.
    if !cfg!(target_os = "linux") {
        return;
    }
    let out = temp("none.png");
    let o = Command::new(env!("CARGO_BIN_EXE_scorch"))
        .args(["render", "data/demo.folded", "-o", out.to_str().unwrap()])
        .env("WGPU_BACKEND", "metal")
        .current_dir(common::root())
        .output()
        .unwrap();
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("no GPU adapter found (tried Metal)"), "{err}");
    assert!(err.contains("mesa-vulkan-drivers"), "{err}");
    assert!(!out.exists());
}

#[test]
fn render_writes_the_png_the_profile_needs() {
    if common::gpu().is_none() {
        return;
    }
    let out = temp("demo.png");
    let o = scorch(&["render", "data/demo.folded", "-o", out.to_str().unwrap()]);
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(stdout.starts_with("wrote "), "{stdout}");
    let img = scorch::export::decode_png(&std::fs::read(&out).unwrap()).unwrap();
    // 17 rows: 30 title + 2 × 8 margin + 17 × 18.
    assert_eq!((img.width, img.height), (1200, 352));

    let out2 = temp("demo2x.png");
    let o = scorch(&[
        "render",
        "data/demo-diff.folded",
        "-o",
        out2.to_str().unwrap(),
        "--width",
        "600",
        "--height",
        "200",
        "--scale",
        "2",
        "--view",
        "icicle",
        "--colorblind",
        "--title",
        "after vs before",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
    let img = scorch::export::decode_png(&std::fs::read(&out2).unwrap()).unwrap();
    assert_eq!((img.width, img.height), (1200, 400));
    let (_, err) = text(&o);
    assert!(err.contains("rows did not fit"), "{err}");
}

#[test]
fn a_thousands_deep_stack_renders() {
    if common::gpu().is_none() {
        return;
    }
    let deep: Vec<String> = (0..5000).map(|i| format!("frame{i}")).collect();
    let f = temp("deep.folded");
    std::fs::write(&f, format!("{} 10\nshallow 5\n", deep.join(";"))).unwrap();
    let out = temp("deep.png");
    let o = scorch(&[
        "render",
        f.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--view",
        "icicle",
    ]);
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let img = scorch::export::decode_png(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(img.height, scorch::export::MAX_DEFAULT_HEIGHT_PX);
    assert!(err.contains("rows did not fit"), "{err}");
}

/// Issue 14, failures 1 and 4: cutting the label of a name with a newline followed by
/// multibyte characters panicked in `render`; a 2 MB name is drawn without being shaped
/// whole.
#[test]
fn render_panic_when_a_label_is_truncated() {
    if common::gpu().is_none() {
        return;
    }
    let chrome = |name: &str| {
        format!(
            r#"{{"traceEvents":[
            {{"name":"{name}","ph":"X","ts":0,"dur":100,"pid":1,"tid":1}},
            {{"name":"root","ph":"X","ts":0,"dur":300,"pid":1,"tid":1}}]}}"#
        )
    };
    let long = "y".repeat(2_000_000);
    let inputs = [
        (
            chrome(&format!("x\\ny{}", "中".repeat(400))),
            "json",
            "timeline",
        ),
        (chrome(&long), "json", "timeline"),
        (format!("root;{long} 2\nroot 1\n"), "folded", "flamegraph"),
    ];
    for (i, (input, ext, view)) in inputs.iter().enumerate() {
        let f = temp(&format!("label{i}.{ext}"));
        std::fs::write(&f, input).unwrap();
        let out = temp(&format!("label{i}.png"));
        let o = scorch(&[
            "render",
            f.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--view",
            view,
        ]);
        let (_, err) = text(&o);
        assert!(o.status.success(), "{i}: {err}");
        assert!(std::fs::metadata(&out).unwrap().len() > 0);
    }
}

/// Issue 14, failure 10: "the profile is empty" named no file and no reason.
#[test]
fn the_profile_is_empty_names_no_file_and_no_reason() {
    let f = temp("zero.perf");
    std::fs::write(
        &f,
        "prog 1234 100.000001: 0 cycles:\n\t4d6 main (/bin/prog)\n\n\
         prog 1234 100.000002: 0 cycles:\n\t4d6 main (/bin/prog)\n",
    )
    .unwrap();
    let o = scorch(&["info", f.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    let want = format!(
        "scorch: {}: the profile is empty: every one of its 2 cycles samples has a weight of 0\n",
        f.display()
    );
    assert_eq!(err, want);
}

#[test]
fn info_reads_a_tidb_trace_and_render_explains_why_not() {
    let o = scorch(&["info", "data/demo-tidb-trace.json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("format:   TiDB trace JSON"), "{out}");
    assert!(out.contains("spans:    5 (1 roots)"), "{out}");
    assert!(out.contains("track:    TiKV (3 spans)"), "{out}");
    assert!(out.contains("rows:     6 (1 spans pushed down"), "{out}");
}

#[test]
fn render_draws_traces_as_timelines() {
    if common::gpu().is_none() {
        return;
    }
    let out = temp("tidb.png");
    let o = scorch(&[
        "render",
        "data/demo-tidb-trace.json",
        "-o",
        out.to_str().unwrap(),
        "--width",
        "900",
        "--start",
        "100us",
        "--end",
        "0.5ms",
    ]);
    let (stdout, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(stdout.contains("900×"), "{stdout}");
    let img = scorch::export::decode_png(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(img.width, 900);
    // Bands per track, explicitly.
    let o = scorch(&[
        "render",
        "data/demo-tidb-trace.json",
        "-o",
        out.to_str().unwrap(),
        "--view",
        "timeline",
        "--bands",
        "tracks",
        "--color",
        "name",
    ]);
    assert!(o.status.success(), "{}", text(&o).1);
}

#[test]
fn timeline_options_are_checked() {
    let out = temp("bad.png");
    let o = out.to_str().unwrap();
    let err = |args: &[&str]| {
        let r = scorch(args);
        assert!(!r.status.success(), "{args:?} should fail");
        text(&r).1
    };
    let e = err(&[
        "render",
        "data/demo-tidb-trace.json",
        "-o",
        o,
        "--view",
        "icicle",
    ]);
    assert!(
        e.contains("is a trace") && e.contains("--view timeline"),
        "{e}"
    );
    let e = err(&["render", "data/demo.folded", "-o", o, "--view", "timeline"]);
    assert!(e.contains("needs a trace"), "{e}");
    let e = err(&["render", "data/demo.folded", "-o", o, "--start", "1ms"]);
    assert!(e.contains("apply to traces"), "{e}");
    let e = err(&[
        "render",
        "data/demo-tidb-trace.json",
        "-o",
        o,
        "--start",
        "2 fortnights",
    ]);
    assert!(e.contains("unknown time unit"), "{e}");
    let e = err(&[
        "render",
        "data/demo-tidb-trace.json",
        "-o",
        o,
        "--start",
        "5s",
    ]);
    assert!(e.contains("past the trace's end"), "{e}");
}

#[test]
fn gen_is_deterministic_and_its_output_loads() {
    let (a, b) = (temp("w1a.folded"), temp("w1b.folded"));
    let (c, p) = (temp("w1c.folded"), temp("w1.perf"));
    for (path, fmt, limit) in [
        (&a, "folded", "--size=300K"),
        (&b, "folded", "--size=300K"),
        (&c, "folded", "--spans=2000"),
        (&p, "perf", "--spans=2000"),
    ] {
        let o = scorch(&[
            "gen",
            "w1",
            "--format",
            fmt,
            "--seed",
            "9",
            limit,
            "-o",
            path.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o).1);
    }
    let (fa, fb) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(fa, fb);
    assert!(fa.len() >= 300_000 && fa.len() < 320_000, "{}", fa.len());
    let (out, err) = text(&scorch(&["info", a.to_str().unwrap()]));
    assert!(out.contains("format:   folded stacks"), "{out}{err}");
    assert!(out.contains("B resident per node"), "{out}");
    let (out, _) = text(&scorch(&["info", c.to_str().unwrap()]));
    let folded_total = out
        .lines()
        .find(|l| l.starts_with("total:"))
        .and_then(|l| l.rsplit_once(" = "))
        .unwrap()
        .1
        .to_string();
    let (out, err) = text(&scorch(&["info", p.to_str().unwrap()]));
    assert!(out.contains("format:   perf script text"), "{out}{err}");
    assert!(out.contains("warnings: none"), "{out}");
    // The perf variant holds the same samples (its periods are the folded counts, which
    // it states as cycles).
    assert!(
        out.contains(&format!("cycles = {folded_total}")),
        "{out}\n{folded_total}"
    );
    // Chrome JSON to stdout.
    let o = scorch(&["gen", "w6", "--spans", "100"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["traceEvents"].as_array().unwrap().len() >= 100);
    let o = scorch(&["gen", "w1", "--size", "lots"]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("not a size"), "{}", text(&o).1);
    let o = scorch(&["gen", "w5", "--format", "perf", "--spans", "10"]);
    assert!(text(&o).1.contains("Chrome JSON"), "{}", text(&o).1);
}

#[test]
fn info_reads_a_chrome_trace() {
    let f = temp("chrome.json");
    std::fs::write(
        &f,
        r#"{"traceEvents":[
  {"ph":"M","name":"process_name","pid":1,"args":{"name":"Browser"}},
  {"ph":"M","name":"thread_name","pid":1,"tid":2,"args":{"name":"Main"}},
  {"ph":"B","name":"task","ts":10,"pid":1,"tid":2},
  {"ph":"X","name":"work","ts":11,"dur":3.5,"pid":1,"tid":2,"args":{"n":1}},
  {"ph":"E","ts":20,"pid":1,"tid":2},
  {"ph":"X","name":"io","ts":12,"dur":1,"pid":1,"tid":3},
  {"ph":"C","name":"mem","ts":12,"pid":1,"args":{"v":1}},
  {"ph":"X","name":"late","ts":30,"dur":1,"pid":1,"tid":3},"#,
    )
    .unwrap();
    let o = scorch(&["info", f.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("format:   Chrome Trace Event JSON"), "{out}");
    assert!(out.contains("spans:    4 (3 roots)"), "{out}");
    assert!(
        out.contains("track:    Browser 1 / Main 2 (2 spans)"),
        "{out}"
    );
    assert!(
        out.contains("track:    Browser 1 / Thread 3 (2 spans)"),
        "{out}"
    );
    assert!(out.contains("time:     21.0 µs"), "{out}");
    assert!(
        out.contains("warning:  the traceEvents array is not closed"),
        "{out}"
    );
    assert!(
        out.contains("warning:  1 counter event (ph 'C') skipped"),
        "{out}"
    );

    let bad = temp("bad-chrome.json");
    std::fs::write(
        &bad,
        "[{\"ph\":\"X\",\"ts\":1,\"dur\":1},\n{\"ph\":\"X\",\"ts\":[]}]",
    )
    .unwrap();
    let o = scorch(&["info", bad.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        err.contains("bad-chrome.json: traceEvents[1] (line 2, column 1)"),
        "{err}"
    );
    assert!(err.contains("expected number ts"), "{err}");

    // And it is drawn as a timeline.
    if common::gpu().is_some() {
        let png = temp("chrome.png");
        let o = scorch(&["render", f.to_str().unwrap(), "-o", png.to_str().unwrap()]);
        assert!(o.status.success(), "{}", text(&o).1);
        assert!(text(&o).0.contains("wrote"), "{}", text(&o).0);
    }
}

#[test]
fn pprof_from_gen_loads_and_sample_type_picks_a_value() {
    let (pb, folded) = (temp("w1.pb"), temp("w1-for-pb.folded"));
    for (path, fmt) in [(&pb, "pprof"), (&folded, "folded")] {
        let o = scorch(&[
            "gen",
            "w1",
            "--format",
            fmt,
            "--seed",
            "4",
            "--spans=1500",
            "-o",
            path.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o).1);
    }
    let ticks = |out: &str| {
        let line = out.lines().find(|l| l.starts_with("total:")).unwrap();
        line.rsplit_once(" = ").unwrap().1.to_string()
    };
    let (out, err) = text(&scorch(&["info", pb.to_str().unwrap()]));
    assert!(out.contains("format:   pprof protobuf"), "{out}{err}");
    assert!(
        out.contains("values:   samples/count, cpu/nanoseconds (shown)"),
        "{out}"
    );
    assert!(out.contains("units:    nanoseconds"), "{out}");
    let (folded_out, _) = text(&scorch(&["info", folded.to_str().unwrap()]));
    let o = scorch(&["info", pb.to_str().unwrap(), "--sample-type", "samples"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("samples/count (shown)"), "{out}");
    assert!(out.contains("units:    samples at 100 Hz"), "{out}");
    assert_eq!(ticks(&out), ticks(&folded_out));
    let o = scorch(&["info", pb.to_str().unwrap(), "--sample-type", "alloc_space"]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains(
            "no sample type \"alloc_space\"; the profile has samples/count, cpu/nanoseconds"
        ),
        "{err}"
    );
    let o = scorch(&["info", "data/demo.folded", "--sample-type", "cpu"]);
    assert!(!o.status.success());
    assert!(
        text(&o)
            .1
            .contains("--sample-type applies to pprof profiles"),
        "{}",
        text(&o).1
    );
}

#[test]
fn top_lists_functions_for_scripts_and_applies_transforms() {
    let o = scorch(&["top", "-n", "3", "data/demo.folded"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[0],
        "values in samples; total 13332; 3 functions shown; total counts recursion once"
    );
    assert_eq!(lines[1], "self  self%  total  total%  nodes  function");
    assert!(lines[2].ends_with("app::search::score"), "{out}");
    assert_eq!(lines.len(), 5);
    // CSV for scripts: a header and exact values; sorted by total, the root frame first.
    let o = scorch(&[
        "top",
        "--format",
        "csv",
        "--sort",
        "total",
        "data/demo.folded",
    ]);
    let (out, _) = text(&o);
    let mut rows = out.lines();
    assert_eq!(rows.next(), Some("self,self%,total,total%,nodes,function"));
    let first: Vec<&str> = rows.next().unwrap().split(',').collect();
    assert_eq!(first[2], "13332", "{out}");
    // Transforms apply in order before the table is made.
    let o = scorch(&[
        "top",
        "--format",
        "tsv",
        "--transform",
        "focus:app::config::load",
        "data/demo.folded",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let load = out
        .lines()
        .find(|l| l.ends_with("\tapp::config::load"))
        .unwrap();
    assert!(load.starts_with("110\t"), "{load}");
    assert!(load.contains("\t100.00%\t"), "{load}");
    // Bad specs and unknown names are errors that say what was expected.
    let o = scorch(&["top", "--transform", "squash:x", "data/demo.folded"]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(err.contains("unknown transform \"squash\""), "{err}");
    let o = scorch(&["top", "--transform", "merge:nowhere", "data/demo.folded"]);
    let (_, err) = text(&o);
    assert!(
        err.contains("data/demo.folded: --transform: nowhere: no function of that name"),
        "{err}"
    );
    // A trace has no function table.
    let o = scorch(&["top", "data/demo-tidb-trace.json"]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(err.contains("trace of timed spans"), "{err}");
}

#[test]
fn a_screenshot_whose_source_is_gone_says_what_it_showed() {
    use scorch::view::shot::{ShotState, encode_rgb_png};
    let state = ShotState {
        version: scorch::view::shot::VERSION,
        source: "/nonexistent/dir/gone.folded".into(),
        source_bytes: Some(1234),
        view: "table".into(),
        transforms: vec!["merge:g".into()],
        search: "serde".into(),
        ..ShotState::default()
    };
    let png = temp("gone-shot.png");
    std::fs::write(
        &png,
        encode_rgb_png(1, 1, &[0, 0, 0], Some(&state)).unwrap(),
    )
    .unwrap();
    let o = scorch(&[png.to_str().unwrap()]);
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(
        err.contains("the profile this screenshot shows is gone"),
        "{err}"
    );
    assert!(
        err.contains("source: /nonexistent/dir/gone.folded (1234 bytes)"),
        "{err}"
    );
    assert!(err.contains("view: table"), "{err}");
    assert!(err.contains("transforms: merge:g"), "{err}");
    assert!(err.contains("search: serde"), "{err}");
}

#[test]
fn diff_and_top_base_compare_two_files_of_any_formats() {
    let (a, b) = (temp("before.folded"), temp("after.txt"));
    std::fs::write(&a, "main;f 3\nmain;g 2\n").unwrap();
    std::fs::write(&b, "main;f 1\nmain;h 5\n").unwrap();
    let top = scorch(&[
        "top",
        "--base",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "tsv",
    ]);
    let (out, err) = text(&top);
    assert!(top.status.success(), "{err}");
    let line = |f: &str| {
        out.lines()
            .find(|l| l.ends_with(&format!("\t{f}")))
            .unwrap_or_else(|| panic!("{f} in {out}"))
            .to_string()
    };
    assert!(line("g").contains("removed"), "{out}");
    assert!(line("h").contains("new"), "{out}");
    let png = temp("diff.png");
    let o = scorch(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        png.to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    if o.status.success() {
        assert!(out.starts_with("wrote "), "{out}");
        assert!(png.exists());
    } else {
        // Without a device, the error says so (CI has one: lavapipe).
        assert!(err.contains("adapter") || err.contains("device"), "{err}");
    }
    // Errors name the file.
    let o = scorch(&[
        "diff",
        a.to_str().unwrap(),
        "missing.folded",
        "-o",
        png.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert!(
        !o.status.success() && err.contains("missing.folded"),
        "{err}"
    );
    let o = scorch(&["diff", a.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("BEFORE AFTER"), "{}", text(&o).1);
}

/// Issue 14, failure 6: `yes | scorch info -` read standard input until memory ran out.
/// It stops at `--max-input` with a message naming `<stdin>` and the limit.
#[test]
fn plain_input_without_an_end_is_read_until_memory_runs_out() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scorch"))
        .args(["info", "-", "--max-input", "2M"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let line = b"y\n".repeat(32 << 10);
    // Writes until scorch stops reading (a broken pipe); a scorch that never stopped
    // would take this loop past 64 MiB, where it gives up.
    let mut written = 0usize;
    while written < 64 << 20 && stdin.write_all(&line).is_ok() {
        written += line.len();
    }
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(written < 64 << 20, "scorch read on past its limit");
    assert!(
        err.contains("<stdin>: the input exceeds the limit of 2 MiB"),
        "{err}"
    );
    assert!(err.contains("--max-input"), "{err}");
    // Sizes are checked.
    let o = scorch(&["info", "data/demo.folded", "--max-input", "lots"]);
    assert!(!o.status.success());
    assert!(text(&o).1.contains("not a size"), "{}", text(&o).1);
    // A small file is read, not mapped: the limit holds for it too, in every command.
    for cmd in ["info", "top"] {
        let o = scorch(&[cmd, "data/demo.folded", "--max-input", "1K"]);
        let (_, err) = text(&o);
        assert!(!o.status.success());
        assert!(
            err.contains("data/demo.folded: the input exceeds the limit of 1 KiB"),
            "{err}"
        );
    }
}
