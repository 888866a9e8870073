//! Where a load's large blocks come from (`scorch::heap`), checked on the process's main
//! thread (no test harness: glibc serves other threads from arenas of their own) with no
//! other thread allocating while it counts glibc's mapped blocks and the resident pages.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod glibc {
    /// glibc's `struct mallinfo2` (<malloc.h>).
    #[repr(C)]
    pub struct MallInfo2 {
        pub arena: usize,
        pub ordblks: usize,
        pub smblks: usize,
        pub hblks: usize,
        pub hblkhd: usize,
        pub usmblks: usize,
        pub fsmblks: usize,
        pub uordblks: usize,
        pub fordblks: usize,
        pub keepcost: usize,
    }

    unsafe extern "C" {
        fn mallinfo2() -> MallInfo2;
    }

    /// Bytes in blocks mapped one by one.
    pub fn mapped_bytes() -> usize {
        // SAFETY: `mallinfo2` only reads malloc's statistics.
        unsafe { mallinfo2() }.hblkhd
    }

    /// This process's resident bytes.
    pub fn resident_bytes() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
        let pages: usize = statm
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse().ok())
            .expect("resident pages in /proc/self/statm");
        pages * 4096
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn main() {
    use glibc::mapped_bytes;
    use scorch::heap::keep_large_blocks;
    const BIG: usize = 256 << 20;
    let big = || {
        let mut v: Vec<u8> = Vec::with_capacity(BIG);
        v.resize(BIG, 1);
        std::hint::black_box(v)
    };
    let before = mapped_bytes();

    // Within a scope (nested scopes: the policy holds until the outer one ends), a large
    // block comes from the heap.
    let (inside, nested) = keep_large_blocks(|| {
        let nested = keep_large_blocks(|| 7);
        let v = big();
        let inside = mapped_bytes();
        drop(v);
        (inside, nested)
    });
    assert_eq!(nested, 7);
    assert!(
        inside < before + BIG,
        "a {BIG}-byte block was mapped within the scope ({before} -> {inside} mapped bytes)"
    );

    // Freed, it stays on the heap and the next large block reuses it, until released.
    let v = big();
    let reused = mapped_bytes();
    drop(v);
    assert!(
        reused < before + BIG,
        "the freed block was not reused ({before} -> {reused} mapped bytes)"
    );
    release_gives_back(BIG / 2, "the release gave back too little");

    // Released, a large block is mapped again (as glibc does by default).
    let v = big();
    let after = mapped_bytes();
    drop(v);
    assert!(
        after >= before + BIG,
        "a {BIG}-byte block was not mapped after the release ({before} -> {after} mapped bytes)"
    );

    // A panic in a scope closes it: the release after it is not held back. (No panic
    // message: printing a backtrace would allocate into the freed block.)
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(|| {
        keep_large_blocks(|| {
            drop(big());
            panic!("a panic inside the scope (expected by the test)")
        })
    });
    let _ = std::panic::take_hook();
    assert!(r.is_err());
    release_gives_back(BIG / 2, "the scope a panic left stayed open");
    println!("heap: large blocks on the heap within a scope, reused, released: ok");
}

/// Calls `release` and checks that at least `bytes` stopped being resident.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn release_gives_back(bytes: usize, failure: &str) {
    let held = glibc::resident_bytes();
    scorch::heap::release();
    let released = glibc::resident_bytes();
    assert!(
        released + bytes <= held,
        "{failure} ({held} -> {released} resident bytes)"
    );
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn main() {
    // Elsewhere the policy does nothing; a scope still runs its closure.
    assert_eq!(scorch::heap::keep_large_blocks(|| 7), 7);
    scorch::heap::release();
}
