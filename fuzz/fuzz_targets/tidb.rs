//! TiDB trace JSON through the TiDB parser (read in place, or by serde where that reader
//! does not take the document) and through the preview's reading of a document's head.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    let _ = scorch::import::tidb::parse(FILE, data);
    let _ = scorch::import::tidb::parse_head(data);
});
