//! pprof protobuf (uncompressed) through the pprof parser.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    let _ = scorch::import::pprof::parse(FILE, data);
});
