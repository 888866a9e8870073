//! OpenTelemetry (OTLP) JSON traces through the OTLP parser, whole (on one thread, and in
//! parts on three: the same set or error) and as a preview's head (the input taken as the
//! start of a longer document).
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch_fuzz::FILE;

fuzz_target!(|data: &[u8]| {
    let one = scorch::import::otlp::parse(FILE, data);
    let parts = scorch::import::otlp::parse_with_threads(FILE, data, None, 3);
    assert_eq!(format!("{one:?}"), format!("{parts:?}"));
    let _ = scorch::import::otlp::parse_head(FILE, data);
});
