//! Small helpers for the scoped threads the importers, the layout and the LOD use.

use std::thread::ScopedJoinHandle;

/// The result of a scoped thread; a panic in it is raised again here, with its own
/// payload (not wrapped in a second "thread panicked" message).
pub fn join<T>(handle: ScopedJoinHandle<'_, T>) -> T {
    match handle.join() {
        Ok(r) => r,
        Err(p) => std::panic::resume_unwind(p),
    }
}

/// `(a(), b())`, with `b` on a scoped thread of its own while `a` runs on this one (a
/// panic in `b` is raised again here, as [`join`] does).
pub fn both<A: Send, B: Send>(a: impl FnOnce() -> A, b: impl FnOnce() -> B + Send) -> (A, B) {
    std::thread::scope(|s| {
        let h = s.spawn(b);
        let a = a();
        (a, join(h))
    })
}

/// The threads this process may run at once (1 when that cannot be told).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Whether a pass over `n` items (call-tree nodes, spans) is split over two threads: at
/// least 64 Ki items, on a machine with two cores or more.
pub fn two_threads_for(n: usize) -> bool {
    n >= 1 << 16 && cores() > 1
}

/// Calls `f(p, list)` with each node `p`'s list `list[start[p]..start[p + 1]]` of a CSR
/// layout (`start` has one entry more than there are nodes, non-decreasing, its last the
/// list's length), each list once; on two threads when `two` (the lists cut between two
/// nodes at the middle of `list`).
pub fn each_list<T: Send>(
    start: &[u32],
    list: &mut [T],
    two: bool,
    f: impl Fn(usize, &mut [T]) + Sync,
) {
    let nodes = start.len().saturating_sub(1);
    let run = |from: usize, to: usize, part: &mut [T], at: usize| {
        for p in from..to {
            let (a, b) = (start[p] as usize - at, start[p + 1] as usize - at);
            f(p, &mut part[a..b]);
        }
    };
    if !two || nodes < 2 {
        run(0, nodes, list, 0);
        return;
    }
    let mid = start[..nodes]
        .partition_point(|&c| (c as usize) < list.len() / 2)
        .max(1);
    let at = start[mid] as usize;
    let (left, right) = list.split_at_mut(at);
    both(|| run(0, mid, left, 0), || run(mid, nodes, right, at));
}

/// Appends `f(s)` for each `s` of `src` to `dst`, in order; on two threads when
/// [`two_threads_for`] the length (each writing its half of the new slots). `f` gets the
/// item mutably so that it can move a box out of it (the caller drops what is left). A
/// copy of millions of records is mostly page faults on the fresh memory, which two
/// threads take twice as fast.
pub fn extend_mapped<S: Send, T: Send>(
    dst: &mut Vec<T>,
    src: &mut [S],
    f: impl Fn(&mut S) -> T + Sync,
) {
    if !two_threads_for(src.len()) {
        dst.extend(src.iter_mut().map(f));
        return;
    }
    let n = src.len();
    dst.reserve(n);
    let spare = &mut dst.spare_capacity_mut()[..n];
    let (d0, d1) = spare.split_at_mut(n / 2);
    let (s0, s1) = src.split_at_mut(n / 2);
    let fill = |d: &mut [std::mem::MaybeUninit<T>], s: &mut [S]| {
        for (d, s) in d.iter_mut().zip(s) {
            d.write(f(s));
        }
    };
    both(|| fill(d0, s0), || fill(d1, s1));
    // SAFETY: both halves returned (a panic in either is raised again by `both` before
    // this line), so each of the `n` slots after the old length was written once, and
    // `reserve` made room for them.
    unsafe { dst.set_len(dst.len() + n) };
}

/// The first `k` items of `rest`, which keeps the others: a slice dealt out to threads
/// piece by piece, each piece its own `&mut`.
pub fn front<'a, T>(rest: &mut &'a mut [T], k: usize) -> &'a mut [T] {
    let (head, tail) = std::mem::take(rest).split_at_mut(k);
    *rest = tail;
    head
}

/// `f(item)` for each of `items`, in their order, on as many scoped threads as there are
/// cores (at most one per item), each thread taking the next item not yet taken: for a
/// few big pieces of work of unequal size, such as a profile's threads. A panic in `f` is
/// raised again here.
pub fn map_each<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = cores();
    if threads < 2 || items.len() < 2 {
        return items.into_iter().map(f).collect();
    }
    let n = items.len();
    let slots: Vec<std::sync::Mutex<Option<T>>> = items
        .into_iter()
        .map(|t| std::sync::Mutex::new(Some(t)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(slot) = slots.get(i) else {
                return done;
            };
            let item = slot.lock().map_or(None, |mut t| t.take());
            done.extend(item.map(|t| (i, f(t))));
        }
    };
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads.min(n)).map(|_| s.spawn(work)).collect();
        let mine = work();
        for (i, r) in handles.into_iter().flat_map(join).chain(mine) {
            out[i] = Some(r);
        }
    });
    out.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_list_once_on_one_or_two_threads() {
        // Lists of lengths 0, 3, 0, 1, 5, 2, 0.
        let start = [0u32, 0, 3, 3, 4, 9, 11, 11];
        for two in [false, true] {
            let mut list: Vec<(usize, u32)> = (0..11).map(|i| (usize::MAX, i)).collect();
            super::each_list(&start, &mut list, two, |p, l| {
                for (i, e) in l.iter_mut().enumerate() {
                    assert_eq!(e.1, start[p] + i as u32, "node {p}'s own slots");
                    e.0 = p;
                }
            });
            let owners: Vec<usize> = list.iter().map(|e| e.0).collect();
            assert_eq!(owners, [1, 1, 1, 3, 4, 4, 4, 4, 4, 5, 5]);
        }
        let mut none: Vec<u8> = Vec::new();
        super::each_list(&[0], &mut none, true, |_, _| panic!("no nodes"));
        super::each_list(&[], &mut none, true, |_, _| panic!("no nodes"));
    }

    #[test]
    fn extend_mapped_appends_in_order_and_moves_boxes_out() {
        // Small (one thread) and large (two threads, where the machine has two cores).
        for n in [0usize, 5, (1 << 16) + 3] {
            let mut dst: Vec<Box<u64>> = vec![Box::new(7)];
            let mut src: Vec<Option<Box<u64>>> = (0..n as u64).map(|i| Some(Box::new(i))).collect();
            super::extend_mapped(&mut dst, &mut src, |s| s.take().expect("each item once"));
            assert_eq!(dst.len(), n + 1);
            assert_eq!(*dst[0], 7);
            assert!(dst[1..].iter().enumerate().all(|(i, b)| **b == i as u64));
            assert!(src.iter().all(Option::is_none));
        }
    }

    #[test]
    fn extend_mapped_raises_a_panic_with_its_message() {
        let mut dst: Vec<u32> = vec![1, 2];
        let mut src: Vec<u32> = (0..(1 << 17)).collect();
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            super::extend_mapped(&mut dst, &mut src, |&mut s| {
                assert!(s != 100_000, "item {s}");
                s
            });
        }));
        let msg = r.expect_err("the panic is raised again");
        assert_eq!(
            msg.downcast_ref::<String>().map(String::as_str),
            Some("item 100000")
        );
        // On two threads the new slots are counted only once both halves are written.
        if super::two_threads_for(src.len()) {
            assert_eq!(dst, [1, 2]);
        }
    }

    #[test]
    fn a_panic_in_a_thread_keeps_its_message() {
        let caught = std::panic::catch_unwind(|| {
            std::thread::scope(|s| super::join(s.spawn(|| -> u32 { panic!("in the thread") })))
        });
        let payload = caught.expect_err("the panic comes back");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"in the thread"));
        assert_eq!(std::thread::scope(|s| super::join(s.spawn(|| 7))), 7);
        assert_eq!(super::both(|| 1, || 2), (1, 2));
        let caught = std::panic::catch_unwind(|| super::both(|| 1, || -> u32 { panic!("in b") }));
        let payload = caught.expect_err("b's panic comes back");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"in b"));
    }

    #[test]
    fn map_each_keeps_order_and_moves_each_item_once() {
        for n in [0usize, 1, 2, 7, 100] {
            let items: Vec<Box<usize>> = (0..n).map(Box::new).collect();
            let calls = std::sync::atomic::AtomicUsize::new(0);
            let out = super::map_each(items, |b| {
                calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // Unequal work, so that the threads finish out of order.
                std::thread::sleep(std::time::Duration::from_micros((*b % 3) as u64 * 200));
                *b * 10
            });
            assert_eq!(out, (0..n).map(|i| i * 10).collect::<Vec<_>>());
            assert_eq!(calls.into_inner(), n);
        }
        let caught = std::panic::catch_unwind(|| {
            super::map_each(vec![1u32, 2, 3], |i| -> u32 {
                assert!(i != 2, "item {i}");
                i
            })
        });
        let payload = caught.expect_err("the panic comes back");
        assert_eq!(
            payload.downcast_ref::<String>().map(String::as_str),
            Some("item 2")
        );
    }
}
