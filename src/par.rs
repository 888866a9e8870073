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

#[cfg(test)]
mod tests {
    #[test]
    fn a_panic_in_a_thread_keeps_its_message() {
        let caught = std::panic::catch_unwind(|| {
            std::thread::scope(|s| super::join(s.spawn(|| -> u32 { panic!("in the thread") })))
        });
        let payload = caught.expect_err("the panic comes back");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"in the thread"));
        assert_eq!(std::thread::scope(|s| super::join(s.spawn(|| 7))), 7);
    }
}
