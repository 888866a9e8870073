//! End to end: the real `scorch` window under Xvfb, driven by xdotool as a user drives it,
//! checked through the screenshots it writes (Ctrl+S).
//!
//! Skipped when Xvfb or xdotool is missing or no GPU adapter exists, unless
//! `SCORCH_REQUIRE_E2E=1` (set by `.ci/run`, which installs them).

mod common;

use scorch::color::{PALETTE, package_name, palette_index, pyroscope_key};
use scorch::export::decode_png;
use scorch::layout::flame_layout;
use scorch::pick::BarRef;
use scorch::view::{Camera, FrameGeometry, Orientation};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process stopped when dropped: with SIGTERM first (Xvfb then removes its
/// lock and socket files; a SIGKILLed Xvfb leaves them behind), SIGKILL as a fallback.
struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        for _ in 0..50 {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn xdo(display: &str, args: &[&str]) -> String {
    let o = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", display)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn wait_for(what: &str, timeout: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn screenshot(display: &str, dir: &Path, name: &str, n: usize) -> scorch::render::RgbaImage {
    xdo(display, &["key", "ctrl+s"]);
    let path = dir.join(format!("{name}.scorch-{n}.png"));
    wait_for(
        &format!("{}", path.display()),
        Duration::from_secs(30),
        || std::fs::metadata(&path).is_ok_and(|m| m.len() > 0),
    );
    // The file is written in one call; give the writer a moment to close it.
    std::thread::sleep(Duration::from_millis(300));
    decode_png(&std::fs::read(&path).unwrap()).unwrap()
}

fn differs(a: &scorch::render::RgbaImage, b: &scorch::render::RgbaImage) -> usize {
    a.pixels
        .chunks_exact(4)
        .zip(b.pixels.chunks_exact(4))
        .filter(|(p, q)| p != q)
        .count()
}

#[test]
fn window_zoom_click_search_and_screenshots() {
    let required = std::env::var_os("SCORCH_REQUIRE_E2E").is_some_and(|v| v == "1");
    if !have("Xvfb") || !have("xdotool") {
        assert!(
            !required,
            "SCORCH_REQUIRE_E2E=1 but Xvfb or xdotool is missing"
        );
        eprintln!("e2e skipped: Xvfb and xdotool are needed");
        return;
    }
    if common::gpu().is_none() {
        return;
    }

    let dir: PathBuf = std::env::temp_dir().join(format!("scorch-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A display of our own: Xvfb picks a free number and writes it to stdout once it
    // accepts connections (-displayfd), so neither a guessed number nor a stale lock from
    // another run can get in the way.
    let mut xvfb = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1400x900x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = xvfb.stdout.take().unwrap();
    let _xvfb = Killed(xvfb);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line);
        let _ = tx.send(line);
    });
    let xvfb_log = || std::fs::read_to_string(dir.join("xvfb.log")).unwrap_or_default();
    let n = rx
        .recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("Xvfb reported no display:\n{}", xvfb_log()));
    let display = format!(":{}", n.trim());
    assert!(display.len() > 1, "Xvfb did not start:\n{}", xvfb_log());
    // The number is written once the socket exists, which can be before the server
    // answers: wait until a real client connection succeeds.
    wait_for("the X server to answer", Duration::from_secs(30), || {
        Command::new("xdotool")
            .arg("getdisplaygeometry")
            .env("DISPLAY", &display)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    });

    // A corpus file when the corpus is there, the demo otherwise, copied so that
    // screenshots land in a directory of our own.
    let corpus = common::root()
        .join("../shared/corpus/jonhoo_inferno/tests/data/flamegraph/unsorted-input/perf-vertx-stacks-01-collapsed-all-unsorted.txt");
    let src = if corpus.exists() {
        corpus
    } else {
        common::root().join("data/demo.folded")
    };
    let name = "profile.folded";
    let file = dir.join(name);
    std::fs::copy(&src, &file).unwrap();

    let log = dir.join("scorch.log");
    // The ASCII part of the title "scorch — NAME" (xdotool's regex is locale-bound).
    let title = name.replace('.', "\\.");
    // Start scorch; if it cannot reach the server and exits, try again (twice), keeping
    // every attempt's log for the failure message.
    let mut attempts = Vec::new();
    let _app = loop {
        let mut app = Killed(
            Command::new(env!("CARGO_BIN_EXE_scorch"))
                .arg(&file)
                .args(["--size", "1200x800"])
                .env("DISPLAY", &display)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .unwrap(),
        );
        let t = Instant::now();
        let mut exited = None;
        while t.elapsed() < Duration::from_secs(60) {
            if let Ok(Some(status)) = app.0.try_wait() {
                exited = Some(status);
                break;
            }
            if !xdo(&display, &["search", "--name", &title]).is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        match exited {
            None => {
                assert!(
                    !xdo(&display, &["search", "--name", &title]).is_empty(),
                    "timed out waiting for the window"
                );
                break app;
            }
            Some(status) => {
                attempts.push(format!(
                    "{status}: {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                ));
                assert!(
                    attempts.len() < 3,
                    "scorch exited before its window appeared, 3 times:\n{}\nXvfb on {display}:\n{}",
                    attempts.join("\n"),
                    xvfb_log()
                );
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    };
    wait_for("the profile to load", Duration::from_secs(60), || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("loaded"))
    });
    let win = xdo(&display, &["search", "--name", &title]);
    let win = win.lines().next().unwrap().to_string();
    xdo(&display, &["windowfocus", "--sync", &win]);
    std::thread::sleep(Duration::from_millis(500));

    // The same geometry the window uses, to aim at a bar.
    let p = scorch::import::load_path(&file).unwrap();
    let layout = flame_layout(&p.tree);
    let g = FrameGeometry::with_physical_size(
        1200,
        800,
        1.0,
        layout.rows.len(),
        Orientation::Flame,
        scorch::app::window_style(),
    );
    let cam = Camera::fit(layout.total_ticks, f64::from(g.graph.w));
    // A mid-sized bar, visible without scrolling: 10–60 % of the width.
    let target = (1..layout.rows.len())
        .filter(|&r| g.visible_rows().contains(&r))
        .flat_map(|r| (0..layout.rows[r].len()).map(move |i| BarRef { row: r, index: i }))
        .find(|b| {
            let row = &layout.rows[b.row];
            let w = (row.x1[b.index] - row.x0[b.index]) as f64 / layout.total_ticks as f64;
            (0.1..0.6).contains(&w)
        })
        .expect("a mid-sized bar");
    let row = &layout.rows[target.row];
    let cx =
        g.graph.x as f64 + (cam.x_of(row.x0[target.index]) + cam.x_of(row.x1[target.index])) / 2.0;
    let cy = g.row_top(target.row) + g.bar_height_px / 2.0;
    let tname = p.names.get(row.name[target.index]);
    let tcolor = PALETTE[palette_index(&pyroscope_key(package_name(None, tname)))];

    let full = screenshot(&display, &dir, name, 1);
    assert_eq!(
        (full.width, full.height),
        (1200, 800),
        "screenshots are at the window's resolution"
    );

    // Wheel: zooms around the pointer.
    xdo(
        &display,
        &[
            "mousemove",
            "--window",
            &win,
            &format!("{cx:.0}"),
            &format!("{cy:.0}"),
        ],
    );
    xdo(&display, &["click", "4", "click", "4", "click", "4"]);
    std::thread::sleep(Duration::from_millis(400));
    let wheeled = screenshot(&display, &dir, name, 2);
    assert!(
        differs(&full, &wheeled) > 10_000,
        "the wheel changed the view"
    );

    // Reset, then click the bar: after the animation it spans the graph's width.
    xdo(&display, &["key", "0"]);
    std::thread::sleep(Duration::from_millis(300));
    xdo(
        &display,
        &[
            "mousemove",
            "--window",
            &win,
            &format!("{cx:.0}"),
            &format!("{cy:.0}"),
        ],
    );
    xdo(&display, &["click", "1"]);
    std::thread::sleep(Duration::from_millis(800));
    let zoomed = screenshot(&display, &dir, name, 3);
    let y = cy as u32;
    let (gx, gw) = (g.graph.x as u32, g.graph.w as u32);
    let mut off = 0;
    // The right quarter: the label (long Java names) can reach past the middle.
    for x in (gx + gw * 3 / 4)..(gx + gw - 2) {
        let px = zoomed.pixel(x, y);
        if (0..3).map(|c| px[c].abs_diff(tcolor[c])).max().unwrap() > 2 {
            off += 1;
        }
    }
    assert_eq!(
        off, 0,
        "after the click, {tname} fills the right of its row ({off} pixels differ)"
    );
    let left = zoomed.pixel(gx + 1, y);
    assert!(
        (0..3).all(|c| left[c].abs_diff(tcolor[c]) <= 2) || left[0] < 100,
        "bar or its label at the left edge"
    );

    // Search: non-matching bars turn grey.
    xdo(&display, &["key", "slash"]);
    xdo(&display, &["type", "--delay", "30", "zzz-no-such-function"]);
    xdo(&display, &["key", "Return"]);
    std::thread::sleep(Duration::from_millis(400));
    let searched = screenshot(&display, &dir, name, 4);
    let grey = searched.pixel(gx + gw - 10, y);
    assert!(
        (0..3).all(|c| grey[c].abs_diff(222) <= 3),
        "no match: the bar is grey, got {grey:?}"
    );
    assert!(differs(&zoomed, &searched) > 1000);

    // Nothing was overwritten: four distinct files.
    for i in 1..=4 {
        assert!(dir.join(format!("{name}.scorch-{i}.png")).exists());
    }
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("screenshot saved to"), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}
