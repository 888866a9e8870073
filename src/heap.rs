//! Where a load's large blocks come from.
//!
//! glibc's `malloc` serves each block above its mmap threshold (32 MiB at most) with a
//! mapping of its own and unmaps it when it is freed: the next large block faults in
//! fresh zeroed pages again, one page at a time, and while a thread unmaps hundreds of
//! MB, the others' new mappings wait for it. A Chrome trace's import frees its event
//! records (a quarter of a GB for 300 MB of JSON) and its per-track lists just before the
//! span set, the span tree and the layout allocate theirs: it paid for those pages twice.
//!
//! Within [`keep_large_blocks`], large blocks come from the heap instead, and freed blocks
//! stay there: later blocks reuse their pages, already faulted in. [`release`] gives the
//! heap's free pages back when a load is done. (glibc serves a thread other than the main
//! one from an arena of its own, whose heaps hold blocks up to 64 MiB: larger ones there
//! are still mapped.) With other allocators or systems both do nothing.

use std::sync::Mutex;

/// How many [`keep_large_blocks`] scopes are open (the policy is the process's).
static OPEN: Mutex<usize> = Mutex::new(0);

fn open_scopes() -> std::sync::MutexGuard<'static, usize> {
    OPEN.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` with large blocks allocated on the heap rather than mapped one by one; blocks
/// freed in it (and after it) stay on the heap for what is allocated next, until
/// [`release`]. Scopes may nest and overlap on several threads.
pub fn keep_large_blocks<T>(f: impl FnOnce() -> T) -> T {
    struct Close;
    impl Drop for Close {
        fn drop(&mut self) {
            let mut open = open_scopes();
            *open -= 1;
            if *open == 0 {
                sys::map_large_blocks(true);
            }
        }
    }
    {
        let mut open = open_scopes();
        if *open == 0 {
            sys::map_large_blocks(false);
        }
        *open += 1;
    }
    let _close = Close;
    f()
}

/// Gives the heap's free pages back to the system (a load is done: what it freed and
/// nothing reused is not kept resident), and lets freed blocks at the heap's top go back
/// again as they are freed. While a scope is open (another load), does nothing.
pub fn release() {
    let open = open_scopes();
    if *open == 0 {
        sys::trim();
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod sys {
    use std::ffi::c_int;

    unsafe extern "C" {
        fn mallopt(param: c_int, value: c_int) -> c_int;
        fn malloc_trim(pad: usize) -> c_int;
    }

    // glibc's <malloc.h>.
    const M_TRIM_THRESHOLD: c_int = -1;
    const M_MMAP_THRESHOLD: c_int = -3;
    const M_MMAP_MAX: c_int = -4;

    /// glibc's default: at most this many mapped blocks at once.
    const MMAP_MAX: c_int = 65536;
    /// The thresholds glibc's own adjustment settles at once a large mapped block has
    /// been freed (which every large load does): 32 MiB, and twice that for trimming.
    const MMAP_THRESHOLD: c_int = 32 << 20;
    const TRIM_THRESHOLD: c_int = 64 << 20;

    pub(super) fn map_large_blocks(map: bool) {
        // SAFETY: `mallopt` only sets malloc's parameters (under malloc's own lock); any
        // value is valid for these, and a block allocated under one setting is freed
        // correctly under another (each block records whether it is mapped).
        unsafe {
            if map {
                mallopt(M_MMAP_MAX, MMAP_MAX);
                mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            } else {
                // Freed blocks at the heap's top stay there too, until `trim`.
                mallopt(M_TRIM_THRESHOLD, c_int::MAX);
                mallopt(M_MMAP_MAX, 0);
            }
        }
    }

    pub(super) fn trim() {
        // SAFETY: as for `mallopt` above; `malloc_trim` gives free heap pages back under
        // malloc's locks and touches no block in use.
        unsafe {
            mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD);
            malloc_trim(0);
        }
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod sys {
    pub(super) fn map_large_blocks(_map: bool) {}
    pub(super) fn trim() {}
}
