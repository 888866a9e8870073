//! Chrome trace event JSON through the Chrome parser, with its CPU samples.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    let _ = scorch::import::chrome::parse_with_samples(FILE, data);
});
