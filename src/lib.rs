//! scorch: a native, GPU-rendered viewer for performance profiles.
//!
//! The data flow, top to bottom (each stage is a module; everything above `render` is
//! plain Rust without wgpu or winit, tested and benchmarked without a GPU):
//!
//! ```text
//! bytes (file | stdin | .gz)     import   decode (gzip, UTF-16), detect the format from the
//!                                          content, parse; errors name file and position
//!   -> Profile                   model    interned Names + an aggregated CallTree
//!                                          (+ what a tick is, provenance, warnings)
//!   -> Layout                    layout   rows of bars, per row sorted columns x0/x1/name/node,
//!                                          non-overlapping: binary search finds anything
//!   -> Camera + FrameGeometry    view     which ticks and rows are visible, where they land;
//!                                          exact on a 10^12-tick axis, snapped to pixels
//!   -> Lod                       lod      per row, tiers merging neighbours under a few px: a frame
//!                                          draws at most about one bar per pixel, whatever the size
//!   -> bar under the pointer     pick     row from y, bar from one binary search
//!   -> GPU scene                 render   per-row instance ranges uploaded once; names hashed
//!                                          (MurmurHash3) by a compute shader
//!   -> frame                     render   per visible row: two binary searches, one draw;
//!                                          colors computed in WGSL; glyphon labels
//!   -> PNG                       export   offscreen, tiled past the texture limit
//!   -> window                    app      winit: input -> ViewState transitions -> frames
//! ```
//!
//! `generator` writes the synthetic workloads of `TARGETS.md` (for benchmarks and
//! `scorch gen`).
//!
//! `color` holds the CPU reference of everything the shaders compute (palette, hash keys,
//! diff gradient, heat ramp), so tests can compare rendered pixels with it.

pub mod app;
pub mod color;
pub mod export;
pub mod geometry;
// `gen` is a reserved keyword in edition 2024, so the module has a longer name.
#[path = "gen.rs"]
pub mod generator;
pub mod import;
pub mod layout;
pub mod lod;
pub mod model;
pub mod pick;
pub mod render;
pub mod summary;
pub mod view;
