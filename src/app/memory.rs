//! Handing freed memory back to the system while the window runs.
//!
//! glibc's allocator keeps the pages of freed heap chunks resident: after a dropped file
//! replaces a document, an undo step is forgotten or the text caches turn over, the
//! process stays as big as it ever was, and memory seems to grow for the whole session
//! (the soak test saw 130 MiB of free heap kept after four minutes). `malloc_trim` gives
//! every arena's free pages back. It walks the free lists, so the window calls it between
//! bursts of input (`Trimmer`), never inside a frame.

use std::time::{Duration, Instant};

/// A trim waits for this much quiet (no events) ...
const QUIET: Duration = Duration::from_millis(250);
/// ... and comes at most this often ...
const EVERY: Duration = Duration::from_secs(2);
/// ... but input that never pauses gets one this long after the first event owed.
const AT_LATEST: Duration = Duration::from_secs(10);

/// Decides when the window hands freed memory back: after something happened, in a pause
/// of input (a trim takes 2 ms typically, up to 15 ms on a 400 MiB heap, so not between
/// two frames of a zoom), not more often than [`EVERY`], and within [`AT_LATEST`].
pub(super) struct Trimmer {
    last: Instant,
    /// The first and the latest event since the last trim.
    owed: Option<(Instant, Instant)>,
}

impl Trimmer {
    pub(super) fn new() -> Trimmer {
        Trimmer {
            last: Instant::now(),
            owed: None,
        }
    }

    /// Something happened at `now` that may have freed memory (an event was handled).
    pub(super) fn touch(&mut self, now: Instant) {
        self.owed = Some(self.owed.map_or((now, now), |(first, _)| (first, now)));
    }

    /// When the owed trim is due, if one is owed.
    fn due(&self) -> Option<Instant> {
        let (first, latest) = self.owed?;
        let paused = (latest + QUIET).max(self.last + EVERY);
        Some(paused.min((first + AT_LATEST).max(self.last + EVERY)))
    }

    /// Called when the event loop is about to wait: trims if due. Returns when to come
    /// back for a trim still owed, if any.
    pub(super) fn idle(&mut self, now: Instant) -> Option<Instant> {
        let due = self.due()?;
        if now < due {
            return Some(due);
        }
        release_free_memory();
        self.last = Instant::now().max(now);
        self.owed = None;
        None
    }
}

/// Returns free heap pages to the system (glibc); elsewhere the allocator does it itself.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes the allocator's own locks; any thread may call it.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trimmer_waits_for_a_pause_and_keeps_its_pace() {
        let mut t = Trimmer::new();
        let start = t.last;
        let ms = Duration::from_millis;
        // Nothing happened: nothing to do, no wake-up asked.
        assert_eq!(t.idle(start + EVERY * 3), None);
        // Input right after a trim: the next one waits for its turn.
        t.touch(start + ms(100));
        assert_eq!(t.idle(start + ms(200)), Some(start + EVERY));
        // Its turn, input has paused: it trims and asks for nothing more.
        assert_eq!(t.idle(start + EVERY), None);
        assert!(t.owed.is_none());
        assert_eq!(t.idle(start + EVERY * 10), None);
        // Input every 100 ms: the trim waits for a pause ...
        let base = start + EVERY * 10;
        t.last = base - EVERY;
        for i in 0..60 {
            let now = base + ms(100 * i);
            t.touch(now);
            assert_eq!(t.idle(now), Some(now + QUIET), "no pause at event {i}");
        }
        // ... a pause of QUIET after the last event is enough ...
        let now = base + ms(100 * 59) + QUIET;
        assert_eq!(t.idle(now), None);
        // ... and input that never pauses gets its trim AT_LATEST after it began.
        let base = now;
        for i in 1..=200 {
            let now = base + ms(100 * i);
            t.touch(now);
            if t.idle(now).is_none() {
                assert_eq!(ms(100 * i), AT_LATEST + ms(100), "trimmed after {i} events");
                return;
            }
        }
        panic!("never trimmed under unbroken input");
    }

    /// The measurement of [`freed_memory_goes_back_to_the_system`], in a process of its
    /// own (other tests allocating and freeing alongside would move the RSS).
    #[test]
    #[ignore = "run by freed_memory_goes_back_to_the_system in a process of its own"]
    fn trim_in_a_quiet_process() {
        if std::env::var_os("SCORCH_TRIM_CHILD").is_none() {
            return;
        }
        let rss = || {
            std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|s| {
                    s.lines()
                        .find_map(|l| l.strip_prefix("VmRSS:"))
                        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                })
        };
        // 8 Ki holes of 16 KB between small chunks that stay: free pages in the middle of
        // the heap, which free() alone never returns.
        let mut big = Vec::new();
        let mut kept = Vec::new();
        for i in 0..8 * 1024 {
            big.push(vec![i as u8; 16_000]);
            kept.push(vec![i as u8; 64]);
        }
        let full = rss().expect("VmRSS");
        drop(big);
        let freed = rss().unwrap();
        release_free_memory();
        let after = rss().unwrap();
        assert_eq!(kept.len(), 8 * 1024);
        // 125 MiB were freed: free() kept them, the trim gave most of them back (this
        // process keeps some pages of its own).
        assert!(
            freed + 32 * 1024 > full,
            "free() alone gave back {} KiB: nothing to show",
            full - freed
        );
        assert!(
            after + 80 * 1024 < full,
            "RSS {full} KiB before the trim, {after} KiB after"
        );
    }

    #[test]
    fn freed_memory_goes_back_to_the_system() {
        // Only glibc's allocator keeps freed pages; the call must be harmless everywhere.
        release_free_memory();
        if !cfg!(all(target_os = "linux", target_env = "gnu")) {
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "app::memory::tests::trim_in_a_quiet_process",
                "--exact",
                "--ignored",
                "--test-threads=1",
                "--nocapture",
            ])
            .env("SCORCH_TRIM_CHILD", "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{text}");
        assert!(
            text.contains("1 passed"),
            "the measurement did not run:\n{text}"
        );
    }
}
