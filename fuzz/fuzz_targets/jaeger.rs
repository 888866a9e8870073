//! Jaeger JSON traces through the Jaeger parser, whole and as a preview's head (the
//! input taken as the start of a longer document).
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    let _ = scorch::import::jaeger::parse(FILE, data);
    let _ = scorch::import::jaeger::parse_head(FILE, data);
});
