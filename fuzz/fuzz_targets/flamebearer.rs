//! Pyroscope flamebearer JSON (single and diff) through its parser.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    let _ = scorch::import::flamebearer::parse(FILE, data);
});
