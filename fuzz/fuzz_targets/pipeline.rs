//! The whole way from bytes to the views, without a GPU: load whatever the input is, then
//! lay it out (flame graph or timeline), build its LOD tiers and pick over it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scorch::model::Document;
use scorch_fuzz::{FILE, exercise, limits};

fuzz_target!(|data: &[u8]| {
    if let Ok(imported) = scorch::import::load_any_bytes(FILE, data, limits()) {
        exercise(&Document::from(imported));
    }
});
