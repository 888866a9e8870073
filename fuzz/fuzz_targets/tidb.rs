//! TiDB trace JSON through the TiDB parser.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    let _ = scorch::import::tidb::parse(FILE, data);
});
