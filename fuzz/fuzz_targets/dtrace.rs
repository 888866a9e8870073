//! DTrace aggregated stacks (`ustack()` output) through the DTrace parser.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    let _ = scorch::import::dtrace::parse(FILE, data);
});
