//! The browser-peer harness (`scripts/peers.sh`) at 10 MB: speedscope in headless Chromium
//! against the scorch window (under Xvfb) and `scorch render`, on a folded file and a
//! Chrome trace. Checks that its table has a row per input with numbers on both sides and
//! nothing failed. The full run (up to 1 GB, all four formats) is not part of the tests.
//!
//! Skipped when node, Chromium, Xvfb, /usr/bin/time or the harness's npm packages
//! (`npm ci` in `scripts/peers`) are missing, or no GPU adapter exists, unless
//! `SCORCH_REQUIRE_PEERS=1` (set by `.ci/run`, which installs them).

mod common;

use std::path::Path;
use std::process::Command;

fn have(cmd: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {cmd}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The cells of the table's row for `format` at `size`.
fn row<'a>(table: &'a str, format: &str, size: &str) -> Vec<&'a str> {
    table
        .lines()
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split(" | ")
                .map(str::trim)
                .collect::<Vec<_>>()
        })
        .find(|cells| cells.len() > 2 && cells[0] == format && cells[1] == size)
        .unwrap_or_else(|| panic!("no row for {format} {size} in:\n{table}"))
}

#[test]
fn peers_harness_smoke_10mb() {
    let root = common::root();
    let required = std::env::var_os("SCORCH_REQUIRE_PEERS").is_some_and(|v| v == "1");
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let modules = root.join("scripts/peers/node_modules");
    let missing: Vec<&str> = [
        ("node", have("node")),
        ("chromium", Path::new(&chromium).exists()),
        ("Xvfb", have("Xvfb")),
        ("/usr/bin/time", Path::new("/usr/bin/time").exists()),
        (
            "scripts/peers/node_modules (npm ci)",
            modules.join("speedscope").is_dir() && modules.join("playwright-core").is_dir(),
        ),
    ]
    .into_iter()
    .filter_map(|(what, ok)| (!ok).then_some(what))
    .collect();
    if !missing.is_empty() {
        assert!(!required, "SCORCH_REQUIRE_PEERS=1 but missing: {missing:?}");
        eprintln!("peers skipped: missing {missing:?}");
        return;
    }
    if common::gpu().is_none() {
        return;
    }
    let work = std::env::temp_dir().join(format!("scorch-peers-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let out = Command::new("node")
        .arg(root.join("scripts/peers/peers.mjs"))
        .env("SIZES", "10M")
        .env("FORMATS", "folded chrome")
        .env("WORK", &work)
        .env("TIMEOUT", "120")
        .env("SCORCH", env!("CARGO_BIN_EXE_scorch"))
        .env("CHROMIUM", &chromium)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&work);
    let table = String::from_utf8_lossy(&out.stdout);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "harness failed: {}\n{table}\n{log}",
        out.status
    );
    eprintln!("{table}");
    for format in ["folded", "Chrome trace JSON"] {
        let cells = row(&table, format, "10M");
        assert_eq!(cells.len(), 14, "{cells:?}");
        assert_eq!(
            cells[13], "none",
            "{format}: something failed\n{table}\n{log}"
        );
        // speedscope's time and memory, the window's two times and memory, render's time
        // and memory: numbers above zero; the ratios present.
        for (i, what) in [
            (2, "speedscope first flame graph"),
            (3, "speedscope peak memory"),
            (4, "scorch window first picture"),
            (5, "scorch window whole picture"),
            (6, "scorch window peak memory"),
            (7, "scorch render"),
            (8, "scorch render peak RSS"),
        ] {
            let v: f64 = cells[i]
                .parse()
                .unwrap_or_else(|_| panic!("{format}: {what} is {:?}\n{table}", cells[i]));
            assert!(v > 0.0, "{format}: {what} is {v}\n{table}");
        }
        for ratio in &cells[9..13] {
            assert!(
                ratio.ends_with('×'),
                "{format}: a ratio is {ratio:?}\n{table}"
            );
        }
    }
}
