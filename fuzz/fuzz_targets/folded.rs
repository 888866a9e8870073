//! Folded stacks (`a;b;c 12`, and differential `a;b 3 5`) through the folded parser.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    let _ = scorch::import::folded::parse(FILE, data);
});
