//! Content detection, then the whole load (decode, detect, parse) of any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    let _ = scorch::import::detect::detect(data, Some(FILE));
    let _ = scorch::import::detect::detect(data, None);
    let _ = scorch::import::load_any_bytes(FILE, data, scorch_fuzz::limits());
});
