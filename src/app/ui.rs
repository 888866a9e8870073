//! What the window does outside its frames: the terminal progress bar and the clipboard.

use crate::import::Progress;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Copies `text` to the system clipboard.
pub fn copy_to_clipboard(text: &str) -> Result<(), String> {
    let mut cb = arboard::Clipboard::new().map_err(|e| e.to_string())?;
    cb.set_text(text.to_string()).map_err(|e| e.to_string())
}

/// Draws a progress bar on stderr while a load runs, once it has taken half a second.
pub fn terminal_progress(label: &str, progress: &Progress, done: &AtomicBool) {
    let start = Instant::now();
    let mut shown = false;
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100));
        if start.elapsed() < Duration::from_millis(500) {
            continue;
        }
        let f = progress.fraction().unwrap_or(0.0).clamp(0.0, 1.0);
        let width = 30;
        let filled = (f * width as f64).round() as usize;
        let mb = progress.done.load(Ordering::Relaxed) as f64 / 1048576.0;
        eprint!(
            "\rscorch: loading {label} [{}{}] {:>3.0}% {mb:.0} MiB",
            "#".repeat(filled),
            " ".repeat(width - filled),
            f * 100.0
        );
        let _ = std::io::stderr().flush();
        shown = true;
    }
    if shown {
        eprintln!();
    }
}
