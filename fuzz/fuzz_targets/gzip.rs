//! gzip input through the whole load: the bytes as they are (damaged, truncated or
//! concatenated gzip streams) and, when they are not gzip, compressed first.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch::import::{decode::GZIP_MAGIC, load_any_bytes};
use scorch_fuzz::{FILE, limits};
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    if data.starts_with(&GZIP_MAGIC) {
        let _ = load_any_bytes(FILE, data, limits());
    } else {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(data).expect("writing to memory");
        let gz = gz.finish().expect("writing to memory");
        let _ = load_any_bytes(FILE, &gz, limits());
        // Cut short: the stream ends in the middle.
        let _ = load_any_bytes(FILE, &gz[..gz.len() * 2 / 3], limits());
    }
});
