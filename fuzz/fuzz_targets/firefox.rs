//! Firefox profiler JSON (Gecko, processed, DevTools) through its parser and its head
//! reader (previews), and the samples aggregated.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    if let Ok((s, _spans)) = scorch::import::firefox::parse(FILE, data) {
        let _ = scorch_fuzz::aggregate(s);
    }
    if let Some((s, _spans)) = scorch::import::firefox::parse_head(FILE, data) {
        let _ = scorch_fuzz::aggregate(s);
    }
});
